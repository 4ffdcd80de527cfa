// SPDX-License-Identifier: GPL-2.0
/*
 * rq_checks.c - receive queue semantics seen through ibv_post_recv and
 * ibv_post_srq_recv: exact capacity and where bad_wr points, too many
 * SGEs, posting in RESET, ERR and on a QP that uses an SRQ, flushing in
 * posting order, reuse after RESET, and destroy.
 *
 * What is posted is verified by what comes out: flush completions
 * (IBV_WC_WR_FLUSH_ERR, in order), or sends from a connected QP.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "vt.h"

void t_rq_capacity(struct run *r)
{
	struct ibv_recv_wr list[6], one, *bad;
	struct ibv_qp *qa = NULL, *qb = NULL;
	uint64_t *ida = NULL, *idb = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_sge sg[6];
	struct ibv_qp_cap cap;
	struct buf b = {};
	struct qp_cfg qc = { .recv_wr = 37 };
	uint32_t wa, wb, i;
	int ret;

	cq = cq_new(r, 1024, NULL);
	if (!cq || !buf_new(r, &b, 65536, ACC_ALL))
		goto out;
	qc.scq = qc.rcq = cq;
	qa = qp_new(r, &qc);
	qb = qp_new(r, &qc);
	if (!qa || !qb || !qp_caps(r, qa, &cap))
		goto out;
	wa = cap.max_recv_wr;
	if (!qp_caps(r, qb, &cap))
		goto out;
	wb = cap.max_recv_wr;
	if (wa < 37 || wb < 37 || wa > 500 || wb > 500) {
		fail(r, "max_recv_wr read back as %u and %u for 37 asked", wa, wb);
		goto out;
	}
	ida = calloc(wa + 1, sizeof(*ida));
	idb = calloc(wb + 6, sizeof(*idb));
	if (!ida || !idb || !qp_to_init(r, qa) || !qp_to_init(r, qb))
		goto out;

	/* QP a: max_recv_wr single posts fit, the next does not */
	for (i = 0; i < wa; i++) {
		ida[i] = wr_tag(0xca, i);
		if (!recv_slot(r, qa, NULL, ida[i], &b)) {
			fail(r, "receive %u of max_recv_wr %u rejected", i + 1, wa);
			goto out;
		}
	}
	sg[0] = sge_at(&b, 0, SLOT);
	one = (struct ibv_recv_wr){ .wr_id = wr_tag(0xca, 999), .sg_list = sg,
				    .num_sge = 1 };
	bad = NULL;
	ret = ibv_post_recv(qa, &one, &bad);
	expect_post_error(r, ret, ENOMEM, bad, &one, 1, 0,
			  "the receive after max_recv_wr");
	report(r);

	/* QP b: wb - 3 fit, then a list of 6 of which 3 fit */
	for (i = 0; i < wb - 3; i++) {
		idb[i] = wr_tag(0xcb, i);
		if (!recv_slot(r, qb, NULL, idb[i], &b))
			goto out;
	}
	for (i = 0; i < 6; i++) {
		idb[wb - 3 + i] = wr_tag(0xcb, 1000 + i);
		sg[i] = sge_at(&b, i * SLOT, SLOT);
	}
	link_wrs(list, 6, &idb[wb - 3], sg);
	bad = NULL;
	ret = ibv_post_recv(qb, list, &bad);
	expect_post_error(r, ret, ENOMEM, bad, list, 6, 3,
			  "a list of 6 with room for 3");
	report(r);

	/* both flush exactly what fit, in posting order */
	if (qp_move(r, qa, IBV_QPS_ERR))
		expect_flushed(r, cq, qa, ida, wa);
	if (qp_move(r, qb, IBV_QPS_ERR))
		expect_flushed(r, cq, qb, idb, wb);
	report(r);
out:
	if (qa)
		ibv_destroy_qp(qa);
	if (qb)
		ibv_destroy_qp(qb);
	if (cq)
		ibv_destroy_cq(cq);
	buf_free(&b);
	free(ida);
	free(idb);
}

void t_rq_sge(struct run *r)
{
	struct qp_cfg qc = { .recv_wr = 16, .recv_sge = 2 };
	struct ibv_recv_wr list[4], *bad = NULL;
	uint64_t ids[4] = { wr_tag(0x5e, 0), wr_tag(0x5e, 1), wr_tag(0x5e, 2), wr_tag(0x5e, 3) };
	struct ibv_sge sg[64];
	struct ibv_qp *q = NULL;
	struct ibv_cq *cq;
	struct ibv_qp_cap cap;
	struct buf b = {};
	uint32_t s, i;
	int ret;

	cq = cq_new(r, 256, NULL);
	if (!cq || !buf_new(r, &b, 65536, ACC_ALL))
		goto out;
	qc.scq = qc.rcq = cq;
	q = qp_new(r, &qc);
	if (!q || !qp_caps(r, q, &cap) || !qp_to_init(r, q))
		goto out;
	s = cap.max_recv_sge;
	if (s < 2 || s >= 63) {
		fail(r, "max_recv_sge read back as %u for 2 asked", s);
		goto out;
	}
	for (i = 0; i <= s; i++)
		sg[i] = sge_at(&b, i * SLOT, SLOT);
	link_wrs(list, 4, ids, NULL);
	list[0].sg_list = sg;
	list[0].num_sge = 1;
	list[1].sg_list = sg;
	list[1].num_sge = s;
	list[2].sg_list = sg;
	list[2].num_sge = s + 1;
	list[3].sg_list = sg;
	list[3].num_sge = 1;
	ret = ibv_post_recv(q, list, &bad);
	expect_post_error(r, ret, EINVAL, bad, list, 4, 2,
			  "WR 2 with max_recv_sge + 1 SGEs");
	report(r);

	if (qp_move(r, q, IBV_QPS_ERR))
		expect_flushed(r, cq, q, ids, 2);
	report(r);
out:
	if (q)
		ibv_destroy_qp(q);
	if (cq)
		ibv_destroy_cq(cq);
	buf_free(&b);
}

/*
 * Posts @n receives @base, @base + 1, ... and one more that must not fit.
 * Return: false (the run failed) unless exactly @n fitted.
 */
static bool fill_to_capacity(struct run *r, struct ibv_qp *q, struct buf *b,
			     uint64_t base, int n)
{
	struct ibv_recv_wr wr, *bad = NULL;
	struct ibv_sge sg;
	int i, ret;

	for (i = 0; i < n; i++)
		if (!recv_slot(r, q, NULL, base + i, b))
			return false;
	sg = sge_at(b, 0, SLOT);
	wr = (struct ibv_recv_wr){ .wr_id = base + n, .sg_list = &sg,
				   .num_sge = 1 };
	ret = ibv_post_recv(q, &wr, &bad);
	if (ret != ENOMEM)
		return fail(r, "post %d of a full RQ: %s, want ENOMEM", n + 1,
			    ret ? strerror(ret) : "success");
	return true;
}

void t_rq_reset(struct run *r)
{
	struct qp_cfg qc = { .recv_wr = 16 };
	uint64_t ids[16];
	struct ibv_recv_wr wr, *bad = NULL;
	struct ibv_qp *q = NULL;
	struct ibv_cq *cq;
	struct ibv_sge sg;
	struct buf b = {};
	int ret, st, i, round;

	cq = cq_new(r, 256, NULL);
	if (!cq || !buf_new(r, &b, 4096, ACC_ALL))
		goto out;
	qc.scq = qc.rcq = cq;
	q = qp_new(r, &qc);
	if (!q)
		goto out;
	st = qp_state(q);
	if (st != IBV_QPS_RESET) {
		fail(r, "a new QP is in %s, not RESET", state_str(st));
		goto out;
	}
	/*
	 * With ABI 2 the kernel publishes a RESET ring as full, so the
	 * provider refuses the post itself (ENOMEM); with ABI 1 the kernel
	 * does (EINVAL).  Nothing posted in RESET is kept: after INIT the
	 * ring takes its whole capacity, and ERR flushes only that.  Then
	 * the same once more after ERR -> RESET.
	 */
	for (round = 0; round < 2; round++) {
		sg = sge_at(&b, 0, SLOT);
		wr = (struct ibv_recv_wr){ .wr_id = wr_tag(0x7e, 1),
					   .sg_list = &sg, .num_sge = 1 };
		ret = ibv_post_recv(q, &wr, &bad);
		if (!ret)
			fail(r, "post_recv in RESET succeeded (round %d)", round);
		else if (bad != &wr)
			fail(r, "post_recv in RESET: bad_wr is not the WR");
		if (round == 0) {
			report(r);	/* the first check: a new QP */
			if (r->failures)
				goto out;
		}
		for (i = 0; i < 16; i++)
			ids[i] = wr_tag(0x7e, 16 + 32 * round + i);
		if (r->failures || !qp_to_init(r, q) ||
		    !fill_to_capacity(r, q, &b, ids[0], 16) ||
		    !qp_move(r, q, IBV_QPS_ERR) ||
		    !expect_flushed(r, cq, q, ids, 16) ||
		    !qp_move(r, q, IBV_QPS_RESET))
			break;
	}
	report(r);
out:
	if (q)
		ibv_destroy_qp(q);
	if (cq)
		ibv_destroy_cq(cq);
	buf_free(&b);
}

void t_rq_on_srq(struct run *r)
{
	struct ibv_recv_wr wr, *bad = NULL;
	struct ibv_srq *srq = NULL;
	struct ibv_qp *q = NULL;
	struct ibv_cq *cq;
	struct ibv_sge sg;
	struct buf b = {};
	struct qp_cfg qc = {};
	int ret, maps;

	cq = cq_new(r, 256, NULL);
	srq = srq_new(r, 16, 1);
	if (!cq || !srq || !buf_new(r, &b, 4096, ACC_ALL))
		goto out;
	qc.scq = qc.rcq = cq;
	qc.srq = srq;
	maps = uverbs_mappings();
	q = qp_new(r, &qc);
	if (!q || !qp_to_init(r, q))
		goto out;
	if (env.abi >= 2) {
		/*
		 * rdma-core's ipathverbs dereferences the (absent) ring of
		 * such a QP in ibv_post_recv, so it is not called here; the
		 * kernel's part is to map no receive ring for the QP.
		 */
		if (uverbs_mappings() != maps)
			fail(r, "creating a QP on an SRQ mapped %d ring(s)",
			     uverbs_mappings() - maps);
		report(r);
		goto out;
	}
	sg = sge_at(&b, 0, SLOT);
	wr = (struct ibv_recv_wr){ .wr_id = wr_tag(0x52, 1), .sg_list = &sg,
				   .num_sge = 1 };
	ret = ibv_post_recv(q, &wr, &bad);
	if (!ret)
		fail(r, "post_recv on a QP that uses an SRQ succeeded");
	else if (bad != &wr)
		fail(r, "post_recv failed (%s) but bad_wr is %s", strerror(ret),
		     bad_str(bad, &wr, 1));
	report(r);
out:
	if (q)
		ibv_destroy_qp(q);
	if (srq)
		ibv_destroy_srq(srq);
	if (cq)
		ibv_destroy_cq(cq);
	buf_free(&b);
}

void t_rq_flush(struct run *r)
{
	struct pair_cfg pc = { .recv_wr = 16 };
	struct ibv_recv_wr one, *bad = NULL;
	struct ibv_qp_cap cap;
	uint64_t *ids = NULL;
	struct ibv_sge sg;
	struct pair p;
	uint32_t w, k, i;
	int ret, st;

	if (!pair_new(r, &p, &pc) || !qp_caps(r, p.qp[1], &cap))
		goto out;
	w = cap.max_recv_wr;
	if (w < 16 || w > 500) {
		fail(r, "max_recv_wr read back as %u for 16 asked", w);
		goto out;
	}
	ids = calloc(2 * w, sizeof(*ids));
	if (!ids)
		goto out;
	for (i = 0; i < 2 * w; i++)
		ids[i] = wr_tag(0xf1, i);
	/* fill, let sends take k, refill: a full ring whose tail wrapped */
	k = w / 2 + 3;
	for (i = 0; i < w; i++)
		if (!recv_slot(r, p.qp[1], NULL, ids[i], &p.buf[1]))
			goto out;
	for (i = 0; i < k; i++)
		if (!deliver(r, &p, ids[i]))
			goto out;
	for (i = w; i < w + k; i++)
		if (!recv_slot(r, p.qp[1], NULL, ids[i], &p.buf[1]))
			goto out;
	sg = sge_at(&p.buf[1], 0, SLOT);
	one = (struct ibv_recv_wr){ .wr_id = wr_tag(0xf1, 9999), .sg_list = &sg,
				    .num_sge = 1 };
	ret = ibv_post_recv(p.qp[1], &one, &bad);
	expect_post_error(r, ret, ENOMEM, bad, &one, 1, 0,
			  "a post to the full, wrapped receive queue");

	if (qp_move(r, p.qp[1], IBV_QPS_ERR))
		expect_flushed(r, p.rcq[1], p.qp[1], &ids[k], w);
	st = qp_state(p.qp[1]);
	if (st != IBV_QPS_ERR)
		fail(r, "query_qp reports %s after the move to ERR", state_str(st));
	report(r);
out:
	pair_free(&p);
	free(ids);
}

void t_rq_post_in_err(struct run *r)
{
	uint64_t ids[3] = { wr_tag(0xe1, 0), wr_tag(0xe1, 1), wr_tag(0xe1, 2) };
	struct qp_cfg qc = { .recv_wr = 16 };
	struct ibv_recv_wr list[3], *bad = NULL;
	struct ibv_sge sg[3];
	struct ibv_qp *q = NULL;
	struct ibv_cq *cq;
	struct buf b = {};
	int ret, i;

	cq = cq_new(r, 256, NULL);
	if (!cq || !buf_new(r, &b, 4096, ACC_ALL))
		goto out;
	qc.scq = qc.rcq = cq;
	q = qp_new(r, &qc);
	if (!q || !qp_to_init(r, q) || !qp_move(r, q, IBV_QPS_ERR) ||
	    !cq_quiet(r, cq, 50, "a QP with nothing posted moved to ERR"))
		goto out;
	for (i = 0; i < 3; i++)
		sg[i] = sge_at(&b, i * SLOT, SLOT);
	link_wrs(list, 3, ids, sg);
	ret = ibv_post_recv(q, list, &bad);
	if (ret) {
		fail(r, "post_recv in ERR failed: %s (bad_wr %s)", strerror(ret),
		     bad_str(bad, list, 3));
		goto out;
	}
	if (!expect_flushed(r, cq, q, ids, 3))
		goto out;
	/* and nothing of them stayed queued for later */
	if (qp_move(r, q, IBV_QPS_RESET) && qp_to_init(r, q) &&
	    qp_move(r, q, IBV_QPS_ERR))
		cq_quiet(r, cq, QUIET_MS, "RESET, INIT, ERR after posting in ERR");
	report(r);
out:
	if (q)
		ibv_destroy_qp(q);
	if (cq)
		ibv_destroy_cq(cq);
	buf_free(&b);
}

void t_rq_reuse(struct run *r)
{
	uint64_t stale[6], fresh[2] = { wr_tag(0x7a, 201), wr_tag(0x7a, 202) };
	struct pair_cfg pc = { .recv_wr = 16 };
	struct ibv_sge sg;
	struct ibv_wc wc;
	struct pair p;
	size_t off;
	int i, st;

	if (!pair_new(r, &p, &pc))
		goto out;
	for (i = 0; i < 8; i++)
		if (!recv_slot(r, p.qp[1], NULL, wr_tag(0x7a, 100 + i), &p.buf[1]))
			goto out;
	if (!deliver(r, &p, wr_tag(0x7a, 100)) || !deliver(r, &p, wr_tag(0x7a, 101)))
		goto out;
	for (i = 0; i < 6; i++)
		stale[i] = wr_tag(0x7a, 102 + i);
	if (!qp_move(r, p.qp[1], IBV_QPS_ERR) ||
	    !expect_flushed(r, p.rcq[1], p.qp[1], stale, 6) ||
	    !qp_move(r, p.qp[0], IBV_QPS_ERR) ||
	    !qp_move(r, p.qp[0], IBV_QPS_RESET) ||
	    !qp_move(r, p.qp[1], IBV_QPS_RESET))
		goto out;
	st = qp_state(p.qp[1]);
	if (st != IBV_QPS_RESET) {
		fail(r, "query_qp reports %s after the move to RESET", state_str(st));
		goto out;
	}
	if (!cq_quiet(r, p.rcq[1], 50, "the move to RESET"))
		goto out;

	/* INIT, post three new receives, RTR, RTS: one send takes the first */
	memset(p.buf[1].p, 0, p.buf[1].len);
	if (!qp_to_init(r, p.qp[0]) || !qp_to_init(r, p.qp[1]) ||
	    !recv_slot(r, p.qp[1], NULL, wr_tag(0x7a, 200), &p.buf[1]) ||
	    !recv_slot(r, p.qp[1], NULL, fresh[0], &p.buf[1]) ||
	    !recv_slot(r, p.qp[1], NULL, fresh[1], &p.buf[1]))
		goto out;
	for (i = 0; i < 2; i++)
		if (!qp_to_rtr(r, p.qp[i], p.qp[!i]->qp_num, p.min_rnr_timer))
			goto out;
	for (i = 0; i < 2; i++)
		if (!qp_to_rts(r, p.qp[i], p.rnr_retry))
			goto out;
	fill(p.buf[0].p + 4096, 24, 0x7a);
	sg = sge_at(&p.buf[0], 4096, 24);
	if (!pair_send(r, &p, wr_tag(0x7a, 1), IBV_WR_SEND, &sg, 1, 0) ||
	    !cq_get(r, p.scq[0], &wc, "the send after reset") ||
	    !wc_is(r, &wc, wr_tag(0x7a, 1), IBV_WC_SUCCESS, IBV_WC_SEND,
		   p.qp[0]->qp_num, "the send after reset") ||
	    !cq_get(r, p.rcq[1], &wc, "the receive after reset") ||
	    !wc_is(r, &wc, wr_tag(0x7a, 200), IBV_WC_SUCCESS, IBV_WC_RECV,
		   p.qp[1]->qp_num, "the receive after reset"))
		goto out;
	off = (wr_tag(0x7a, 200) % 1024) * SLOT;
	if (wc.byte_len != 24)
		fail(r, "byte_len %u, want 24", wc.byte_len);
	else if (memcmp(p.buf[1].p + off, p.buf[0].p + 4096, 24))
		fail(r, "the payload is not in the buffer of wr_id 0x%llx",
		     (unsigned long long)wr_tag(0x7a, 200));
	report(r);

	if (qp_move(r, p.qp[1], IBV_QPS_ERR))
		expect_flushed(r, p.rcq[1], p.qp[1], fresh, 2);
	report(r);
out:
	pair_free(&p);
}

void t_rq_destroy(struct run *r)
{
	struct qp_cfg qc = { .recv_wr = 16 };
	struct ibv_qp *q = NULL;
	struct ibv_cq *cq;
	struct buf b = {};
	int i, ret;

	cq = cq_new(r, 256, NULL);
	if (!cq || !buf_new(r, &b, 4096, ACC_ALL))
		goto out;
	qc.scq = qc.rcq = cq;
	q = qp_new(r, &qc);
	if (!q || !qp_to_init(r, q))
		goto out;
	for (i = 0; i < 5; i++)
		if (!recv_slot(r, q, NULL, wr_tag(0xde, i), &b))
			goto out;
	ret = ibv_destroy_qp(q);
	q = NULL;
	if (ret)
		fail(r, "destroy_qp with 5 receives posted: %s", strerror(ret));
	else
		cq_quiet(r, cq, QUIET_MS, "destroy_qp with 5 receives posted");
	report(r);
out:
	if (q)
		ibv_destroy_qp(q);
	if (cq)
		ibv_destroy_cq(cq);
	buf_free(&b);
}
