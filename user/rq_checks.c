// SPDX-License-Identifier: GPL-2.0
/*
 * rq_checks.c - receive queue semantics seen through ibv_post_recv and
 * ibv_post_srq_recv: exact capacity and where bad_wr points, too many
 * SGEs, posting in RESET, ERR and on a QP that uses an SRQ, flushing in
 * posting order, reuse after RESET, destroy, and the SRQ's limit event,
 * resize and behaviour when one of its QPs fails.
 *
 * What is posted is verified by what comes out: flush completions
 * (IBV_WC_WR_FLUSH_ERR, in order) for a QP's own receive queue, and
 * sends from a connected QP that consume the receives for an SRQ.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"
#include "vt.h"

/* A recognisable wr_id that uses all 64 bits. */
static uint64_t id(uint32_t tag, uint32_t i)
{
	return 0xfe00000000000000ull | (uint64_t)tag << 32 | i;
}

/* Where bad_wr points, in words. */
static const char *bad_str(const struct ibv_recv_wr *bad,
			   const struct ibv_recv_wr *list, int n)
{
	static char s[48];
	int i;

	if (!bad)
		return "NULL";
	for (i = 0; i < n; i++)
		if (bad == &list[i]) {
			snprintf(s, sizeof(s), "WR %d of the list", i);
			return s;
		}
	return "a pointer outside the list";
}

/* Link list[0..n) and give them wr_ids and one SGE each (or none). */
static void link_wrs(struct ibv_recv_wr *list, int n, const uint64_t *ids,
		     struct ibv_sge *sg)
{
	int i;

	for (i = 0; i < n; i++) {
		list[i] = (struct ibv_recv_wr){
			.wr_id = ids[i],
			.sg_list = sg ? &sg[i] : NULL,
			.num_sge = sg ? 1 : 0,
			.next = i + 1 < n ? &list[i + 1] : NULL,
		};
	}
}

/* Checks that a post returned @want with bad_wr at list[@at]. */
static void expect_post_error(struct run *r, int ret, int want,
			      const struct ibv_recv_wr *bad,
			      const struct ibv_recv_wr *list, int n, int at,
			      const char *what)
{
	if (ret != want)
		fail(r, "%s: post returned %d (%s), want %s", what, ret,
		     ret ? strerror(ret) : "success", strerror(want));
	else if (bad != &list[at])
		fail(r, "%s: bad_wr is %s, want WR %d of the list", what,
		     bad_str(bad, list, n), at);
}

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
		ida[i] = id(0xca, i);
		if (!recv_slot(r, qa, NULL, ida[i], &b)) {
			fail(r, "receive %u of max_recv_wr %u rejected", i + 1, wa);
			goto out;
		}
	}
	sg[0] = sge_at(&b, 0, SLOT);
	one = (struct ibv_recv_wr){ .wr_id = id(0xca, 999), .sg_list = sg,
				    .num_sge = 1 };
	bad = NULL;
	ret = ibv_post_recv(qa, &one, &bad);
	expect_post_error(r, ret, ENOMEM, bad, &one, 1, 0,
			  "the receive after max_recv_wr");
	report(r);

	/* QP b: wb - 3 fit, then a list of 6 of which 3 fit */
	for (i = 0; i < wb - 3; i++) {
		idb[i] = id(0xcb, i);
		if (!recv_slot(r, qb, NULL, idb[i], &b))
			goto out;
	}
	for (i = 0; i < 6; i++) {
		idb[wb - 3 + i] = id(0xcb, 1000 + i);
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
	uint64_t ids[4] = { id(0x5e, 0), id(0x5e, 1), id(0x5e, 2), id(0x5e, 3) };
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

void t_rq_reset(struct run *r)
{
	struct qp_cfg qc = { .recv_wr = 16 };
	uint64_t later = id(0x7e, 2);
	struct ibv_recv_wr wr, *bad = NULL;
	struct ibv_qp *q = NULL;
	struct ibv_cq *cq;
	struct ibv_sge sg;
	struct buf b = {};
	int ret, st;

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
	sg = sge_at(&b, 0, SLOT);
	wr = (struct ibv_recv_wr){ .wr_id = id(0x7e, 1), .sg_list = &sg,
				   .num_sge = 1 };
	ret = ibv_post_recv(q, &wr, &bad);
	if (!ret)
		fail(r, "post_recv in RESET succeeded");
	/* it must not be queued either: only the later WR flushes */
	if (qp_to_init(r, q) && recv_slot(r, q, NULL, later, &b) &&
	    qp_move(r, q, IBV_QPS_ERR))
		expect_flushed(r, cq, q, &later, 1);
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
	int ret;

	cq = cq_new(r, 256, NULL);
	srq = srq_new(r, 16, 1);
	if (!cq || !srq || !buf_new(r, &b, 4096, ACC_ALL))
		goto out;
	qc.scq = qc.rcq = cq;
	qc.srq = srq;
	q = qp_new(r, &qc);
	if (!q || !qp_to_init(r, q))
		goto out;
	sg = sge_at(&b, 0, SLOT);
	wr = (struct ibv_recv_wr){ .wr_id = id(0x52, 1), .sg_list = &sg,
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
		ids[i] = id(0xf1, i);
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
	one = (struct ibv_recv_wr){ .wr_id = id(0xf1, 9999), .sg_list = &sg,
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
	uint64_t ids[3] = { id(0xe1, 0), id(0xe1, 1), id(0xe1, 2) };
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
	uint64_t stale[6], fresh[2] = { id(0x7a, 201), id(0x7a, 202) };
	struct pair_cfg pc = { .recv_wr = 16 };
	struct ibv_sge sg;
	struct ibv_wc wc;
	struct pair p;
	size_t off;
	int i, st;

	if (!pair_new(r, &p, &pc))
		goto out;
	for (i = 0; i < 8; i++)
		if (!recv_slot(r, p.qp[1], NULL, id(0x7a, 100 + i), &p.buf[1]))
			goto out;
	if (!deliver(r, &p, id(0x7a, 100)) || !deliver(r, &p, id(0x7a, 101)))
		goto out;
	for (i = 0; i < 6; i++)
		stale[i] = id(0x7a, 102 + i);
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
	    !recv_slot(r, p.qp[1], NULL, id(0x7a, 200), &p.buf[1]) ||
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
	if (!pair_send(r, &p, id(0x7a, 1), IBV_WR_SEND, &sg, 1, 0) ||
	    !cq_get(r, p.scq[0], &wc, "the send after reset") ||
	    !wc_is(r, &wc, id(0x7a, 1), IBV_WC_SUCCESS, IBV_WC_SEND,
		   p.qp[0]->qp_num, "the send after reset") ||
	    !cq_get(r, p.rcq[1], &wc, "the receive after reset") ||
	    !wc_is(r, &wc, id(0x7a, 200), IBV_WC_SUCCESS, IBV_WC_RECV,
		   p.qp[1]->qp_num, "the receive after reset"))
		goto out;
	off = (id(0x7a, 200) % 1024) * SLOT;
	if (wc.byte_len != 24)
		fail(r, "byte_len %u, want 24", wc.byte_len);
	else if (memcmp(p.buf[1].p + off, p.buf[0].p + 4096, 24))
		fail(r, "the payload is not in the buffer of wr_id 0x%llx",
		     (unsigned long long)id(0x7a, 200));
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
		if (!recv_slot(r, q, NULL, id(0xde, i), &b))
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

/* --- SRQ --- */

void t_srq_capacity(struct run *r)
{
	struct ibv_srq *s1 = NULL, *s2 = NULL, *s3 = NULL;
	struct pair p2 = {}, p3 = {};
	struct pair_cfg pc = {};
	struct ibv_recv_wr list[5], *bad;
	struct ibv_srq_attr a;
	struct ibv_sge sg[64];
	uint64_t ids[5];
	struct buf b = {};
	uint32_t w, i, s;
	int ret;

	s1 = srq_new(r, 20, 1);
	if (!s1 || !buf_new(r, &b, 65536, ACC_ALL) || !srq_attr(r, s1, &a))
		goto out;
	w = a.max_wr;
	if (w < 20 || w > 500) {
		fail(r, "SRQ max_wr read back as %u for 20 asked", w);
		goto out;
	}
	for (i = 0; i < w; i++)
		if (!recv_slot(r, NULL, s1, id(0x51, i), &b))
			goto out;
	sg[0] = sge_at(&b, 0, SLOT);
	list[0] = (struct ibv_recv_wr){ .wr_id = id(0x51, 999), .sg_list = sg,
					.num_sge = 1 };
	bad = NULL;
	ret = ibv_post_srq_recv(s1, list, &bad);
	expect_post_error(r, ret, ENOMEM, bad, list, 1, 0,
			  "the receive after the SRQ's max_wr");

	/* a list that overflows midway; sends then take what fit, in order */
	s2 = srq_new(r, 20, 1);
	pc.srq = s2;
	if (!s2 || !srq_attr(r, s2, &a) || !pair_new(r, &p2, &pc))
		goto out;
	w = a.max_wr;
	for (i = 0; i < w - 2; i++)
		if (!recv_slot(r, NULL, s2, id(0x52, i), &b))
			goto out;
	for (i = 0; i < 5; i++) {
		ids[i] = id(0x52, 100 + i);
		sg[i] = sge_at(&b, i * SLOT, SLOT);
	}
	link_wrs(list, 5, ids, sg);
	bad = NULL;
	ret = ibv_post_srq_recv(s2, list, &bad);
	expect_post_error(r, ret, ENOMEM, bad, list, 5, 2,
			  "an SRQ list of 5 with room for 2");
	for (i = 0; i < w - 2 && !r->failures; i++)
		deliver(r, &p2, id(0x52, i));
	for (i = 0; i < 2 && !r->failures; i++)
		deliver(r, &p2, ids[i]);
	report(r);

	/* num_sge over max_sge */
	s3 = srq_new(r, 16, 2);
	pc.srq = s3;
	if (!s3 || !srq_attr(r, s3, &a) || !pair_new(r, &p3, &pc))
		goto out;
	s = a.max_sge;
	if (s < 2 || s >= 63) {
		fail(r, "SRQ max_sge read back as %u for 2 asked", s);
		goto out;
	}
	for (i = 0; i <= s; i++)
		sg[i] = sge_at(&b, i * SLOT, 8);
	for (i = 0; i < 3; i++)
		ids[i] = id(0x53, i);
	link_wrs(list, 3, ids, NULL);
	for (i = 0; i < 3; i++) {
		list[i].sg_list = sg;
		list[i].num_sge = i == 1 ? s + 1 : 1;
	}
	bad = NULL;
	ret = ibv_post_srq_recv(s3, list, &bad);
	expect_post_error(r, ret, EINVAL, bad, list, 3, 1,
			  "SRQ WR 1 with max_sge + 1 SGEs");
	/* WR 0 is posted, WRs 1 and 2 are not: the next one comes second */
	if (recv_slot(r, NULL, s3, id(0x53, 7), &b) && deliver(r, &p3, ids[0]))
		deliver(r, &p3, id(0x53, 7));
	report(r);
out:
	pair_free(&p2);
	pair_free(&p3);
	if (s1)
		ibv_destroy_srq(s1);
	if (s2)
		ibv_destroy_srq(s2);
	if (s3)
		ibv_destroy_srq(s3);
	buf_free(&b);
}

/* The SRQ limit event for @srq: @want 1 within TIMEOUT_MS, 0 within QUIET_MS. */
static bool limit_events(struct run *r, struct ibv_srq *srq, int want,
			 const char *when)
{
	int n = async_wait(IBV_EVENT_SRQ_LIMIT_REACHED, srq, 1,
			   want ? TIMEOUT_MS : QUIET_MS);

	if (n != want)
		return fail(r, "%s: %s", when,
			    want ? "no IBV_EVENT_SRQ_LIMIT_REACHED" :
				   "an unexpected IBV_EVENT_SRQ_LIMIT_REACHED");
	return true;
}

static bool set_limit(struct run *r, struct ibv_srq *srq, uint32_t limit)
{
	struct ibv_srq_attr a = { .srq_limit = limit };
	int ret = ibv_modify_srq(srq, &a, IBV_SRQ_LIMIT);

	if (ret)
		return fail(r, "modify_srq(srq_limit %u): %s", limit, strerror(ret));
	return true;
}

void t_srq_limit(struct run *r)
{
	struct ibv_srq *srq;
	struct pair_cfg pc = {};
	struct ibv_srq_attr a;
	struct pair p = {};
	uint32_t i, next = 0;

	srq = srq_new(r, 64, 1);
	pc.srq = srq;
	if (!srq || !pair_new(r, &p, &pc))
		goto out;
	for (i = 0; i < 20; i++)
		if (!recv_slot(r, NULL, srq, id(0x11, i), &p.buf[1]))
			goto out;
	if (!set_limit(r, srq, 10) || !srq_attr(r, srq, &a))
		goto out;
	if (a.srq_limit != 10) {
		fail(r, "query_srq reports srq_limit %u after arming 10", a.srq_limit);
		goto out;
	}
	/* 20 -> 10 posted: not below the limit yet */
	for (; next < 10; next++)
		if (!deliver(r, &p, id(0x11, next)))
			goto out;
	limit_events(r, srq, 0, "with 10 WRs left and limit 10");
	report(r);

	/* 9 left: the event, once; 8 left: nothing more */
	if (!deliver(r, &p, id(0x11, next++)))
		goto out;
	if (limit_events(r, srq, 1, "with 9 WRs left and limit 10") &&
	    deliver(r, &p, id(0x11, next++)))
		limit_events(r, srq, 0, "a second take below the limit");
	report(r);

	if (srq_attr(r, srq, &a) && a.srq_limit != 0)
		fail(r, "query_srq reports srq_limit %u after the event, want 0",
		     a.srq_limit);
	report(r);

	/* re-arm at 5 with 8 left: 5 left is quiet, 4 left fires */
	if (!set_limit(r, srq, 5))
		goto out;
	for (i = 0; i < 3; i++)
		if (!deliver(r, &p, id(0x11, next++)))
			goto out;
	if (limit_events(r, srq, 0, "re-armed at 5 with 5 WRs left") &&
	    deliver(r, &p, id(0x11, next++)))
		limit_events(r, srq, 1, "re-armed at 5 with 4 WRs left");
	report(r);
out:
	pair_free(&p);
	if (srq)
		ibv_destroy_srq(srq);
}

static bool resize(struct run *r, struct ibv_srq *srq, uint32_t max_wr, int want)
{
	struct ibv_srq_attr a = { .max_wr = max_wr };
	int ret = ibv_modify_srq(srq, &a, IBV_SRQ_MAX_WR);

	if (ret != want)
		return fail(r, "modify_srq(max_wr %u) returned %s, want %s", max_wr,
			    ret ? strerror(ret) : "success",
			    want ? strerror(want) : "success");
	return true;
}

void t_srq_modify(struct run *r)
{
	struct ibv_srq *s1 = NULL, *s2 = NULL, *s3 = NULL;
	struct pair p2 = {}, p3 = {};
	struct pair_cfg pc = {};
	struct ibv_srq_attr a;
	uint32_t w, i, k, n;
	int ret;

	/* a limit above max_wr is refused and changes nothing */
	s1 = srq_new(r, 16, 1);
	if (!s1 || !srq_attr(r, s1, &a) || !set_limit(r, s1, 4))
		goto out;
	w = a.max_wr;
	a = (struct ibv_srq_attr){ .srq_limit = w + 1 };
	ret = ibv_modify_srq(s1, &a, IBV_SRQ_LIMIT);
	if (ret != EINVAL)
		fail(r, "modify_srq(srq_limit %u > max_wr %u) returned %s, want EINVAL",
		     w + 1, w, ret ? strerror(ret) : "success");
	if (srq_attr(r, s1, &a) && (a.srq_limit != 4 || a.max_wr != w))
		fail(r, "after the refused limit: srq_limit %u max_wr %u, want 4 and %u",
		     a.srq_limit, a.max_wr, w);
	report(r);

	/*
	 * Resize a full SRQ whose ring has wrapped, post more, and let sends
	 * take everything: all of it comes back in posting order.
	 */
	s2 = srq_new(r, 16, 1);
	pc.srq = s2;
	if (!s2 || !srq_attr(r, s2, &a) || !pair_new(r, &p2, &pc))
		goto out;
	w = a.max_wr;
	if (w < 16 || w > 200) {
		fail(r, "SRQ max_wr read back as %u for 16 asked", w);
		goto out;
	}
	k = w / 2;
	for (i = 0; i < w; i++)
		if (!recv_slot(r, NULL, s2, id(0x2e, i), &p2.buf[1]))
			goto out;
	for (i = 0; i < k; i++)
		if (!deliver(r, &p2, id(0x2e, i)))
			goto out;
	for (i = w; i < w + k; i++)
		if (!recv_slot(r, NULL, s2, id(0x2e, i), &p2.buf[1]))
			goto out;
	if (!resize(r, s2, 4 * w, 0) || !srq_attr(r, s2, &a))
		goto out;
	if (a.max_wr < 4 * w) {
		fail(r, "max_wr %u after resizing to %u", a.max_wr, 4 * w);
		goto out;
	}
	n = w + k + 2 * w;
	for (i = w + k; i < n; i++)
		if (!recv_slot(r, NULL, s2, id(0x2e, i), &p2.buf[1]))
			goto out;
	for (i = k; i < n; i++)
		if (!deliver(r, &p2, id(0x2e, i)))
			break;
	report(r);

	/* smaller than what is posted: refused, nothing lost */
	s3 = srq_new(r, 16, 1);
	pc.srq = s3;
	if (!s3 || !srq_attr(r, s3, &a) || !pair_new(r, &p3, &pc))
		goto out;
	w = a.max_wr;
	for (i = 0; i < 10; i++)
		if (!recv_slot(r, NULL, s3, id(0x3e, i), &p3.buf[1]))
			goto out;
	resize(r, s3, 5, EINVAL);
	if (srq_attr(r, s3, &a) && a.max_wr != w)
		fail(r, "max_wr %u after the refused resize, want %u", a.max_wr, w);
	for (i = 0; i < 10 && !r->failures; i++)
		deliver(r, &p3, id(0x3e, i));
	report(r);
out:
	pair_free(&p2);
	pair_free(&p3);
	if (s1)
		ibv_destroy_srq(s1);
	if (s2)
		ibv_destroy_srq(s2);
	if (s3)
		ibv_destroy_srq(s3);
}

void t_srq_qp_error(struct run *r)
{
	struct ibv_srq *srq;
	struct pair p1 = {}, p2 = {};
	struct pair_cfg pc = {};
	int i;

	srq = srq_new(r, 32, 1);
	pc.srq = srq;
	if (!srq || !pair_new(r, &p1, &pc) || !pair_new(r, &p2, &pc))
		goto out;
	for (i = 0; i < 4; i++)
		if (!recv_slot(r, NULL, srq, id(0x5f, i), &p1.buf[1]))
			goto out;
	if (!qp_move(r, p1.qp[1], IBV_QPS_ERR))
		goto out;
	if (async_wait(IBV_EVENT_QP_LAST_WQE_REACHED, p1.qp[1], 1, TIMEOUT_MS) != 1)
		fail(r, "no IBV_EVENT_QP_LAST_WQE_REACHED for the QP moved to ERR");
	cq_quiet(r, p1.rcq[1], QUIET_MS, "a QP on an SRQ moved to ERR");
	for (i = 0; i < 4 && !r->failures; i++)
		deliver(r, &p2, id(0x5f, i));
	report(r);
out:
	pair_free(&p1);
	pair_free(&p2);
	if (srq)
		ibv_destroy_srq(srq);
}
