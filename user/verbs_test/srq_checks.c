// SPDX-License-Identifier: GPL-2.0
/*
 * srq_checks.c - the shared receive queue through ibv_post_srq_recv and
 * ibv_modify_srq: exact capacity and where bad_wr points, too many SGEs,
 * the limit event (once, then re-armed), resize keeping the posted WRs in
 * order and refusing sizes below them, and what happens to the SRQ when
 * one of its QPs fails (moved to ERR, or taking a WR with a bad lkey).
 *
 * An SRQ is never flushed, so what is posted is verified by sends from a
 * connected QP that consume the receives: their wr_ids must come back in
 * posting order, and once all are taken a send must find none (RNR).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "checks.h"
#include "vt.h"

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
		if (!recv_slot(r, NULL, s1, wr_tag(0x51, i), &b))
			goto out;
	sg[0] = sge_at(&b, 0, SLOT);
	list[0] = (struct ibv_recv_wr){ .wr_id = wr_tag(0x51, 999), .sg_list = sg,
					.num_sge = 1 };
	bad = NULL;
	ret = ibv_post_srq_recv(s1, list, &bad);
	expect_post_error(r, ret, ENOMEM, bad, list, 1, 0,
			  "the receive after the SRQ's max_wr");
	report(r);

	/* a list that overflows midway; sends then take what fit, in order */
	s2 = srq_new(r, 20, 1);
	pc.srq = s2;
	if (!s2 || !srq_attr(r, s2, &a) || !pair_new(r, &p2, &pc))
		goto out;
	w = a.max_wr;
	for (i = 0; i < w - 2; i++)
		if (!recv_slot(r, NULL, s2, wr_tag(0x52, i), &b))
			goto out;
	for (i = 0; i < 5; i++) {
		ids[i] = wr_tag(0x52, 100 + i);
		sg[i] = sge_at(&b, i * SLOT, SLOT);
	}
	link_wrs(list, 5, ids, sg);
	bad = NULL;
	ret = ibv_post_srq_recv(s2, list, &bad);
	expect_post_error(r, ret, ENOMEM, bad, list, 5, 2,
			  "an SRQ list of 5 with room for 2");
	for (i = 0; i < w - 2 && !r->failures; i++)
		deliver(r, &p2, wr_tag(0x52, i));
	for (i = 0; i < 2 && !r->failures; i++)
		deliver(r, &p2, ids[i]);
	if (!r->failures)
		expect_rnr(r, &p2, "a send once the WRs that fit are taken");
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
		ids[i] = wr_tag(0x53, i);
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
	if (recv_slot(r, NULL, s3, wr_tag(0x53, 7), &b) && deliver(r, &p3, ids[0]))
		deliver(r, &p3, wr_tag(0x53, 7));
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
		if (!recv_slot(r, NULL, srq, wr_tag(0x11, i), &p.buf[1]))
			goto out;
	if (!set_limit(r, srq, 10) || !srq_attr(r, srq, &a))
		goto out;
	if (a.srq_limit != 10) {
		fail(r, "query_srq reports srq_limit %u after arming 10", a.srq_limit);
		goto out;
	}
	/* 20 -> 10 posted: not below the limit yet */
	for (; next < 10; next++)
		if (!deliver(r, &p, wr_tag(0x11, next)))
			goto out;
	limit_events(r, srq, 0, "with 10 WRs left and limit 10");
	report(r);

	/* 9 left: the event, once; 8 left: nothing more */
	if (!deliver(r, &p, wr_tag(0x11, next++)))
		goto out;
	if (limit_events(r, srq, 1, "with 9 WRs left and limit 10") &&
	    deliver(r, &p, wr_tag(0x11, next++)))
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
		if (!deliver(r, &p, wr_tag(0x11, next++)))
			goto out;
	if (limit_events(r, srq, 0, "re-armed at 5 with 5 WRs left") &&
	    deliver(r, &p, wr_tag(0x11, next++)))
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
		if (!recv_slot(r, NULL, s2, wr_tag(0x2e, i), &p2.buf[1]))
			goto out;
	for (i = 0; i < k; i++)
		if (!deliver(r, &p2, wr_tag(0x2e, i)))
			goto out;
	for (i = w; i < w + k; i++)
		if (!recv_slot(r, NULL, s2, wr_tag(0x2e, i), &p2.buf[1]))
			goto out;
	if (!resize(r, s2, 4 * w, 0) || !srq_attr(r, s2, &a))
		goto out;
	if (a.max_wr < 4 * w) {
		fail(r, "max_wr %u after resizing to %u", a.max_wr, 4 * w);
		goto out;
	}
	n = w + k + 2 * w;
	for (i = w + k; i < n; i++)
		if (!recv_slot(r, NULL, s2, wr_tag(0x2e, i), &p2.buf[1]))
			goto out;
	for (i = k; i < n && !r->failures; i++)
		deliver(r, &p2, wr_tag(0x2e, i));
	if (!r->failures)
		expect_rnr(r, &p2, "a send once the resized SRQ is empty");
	report(r);

	/* smaller than what is posted: refused, nothing lost */
	s3 = srq_new(r, 16, 1);
	pc.srq = s3;
	if (!s3 || !srq_attr(r, s3, &a) || !pair_new(r, &p3, &pc))
		goto out;
	w = a.max_wr;
	for (i = 0; i < 10; i++)
		if (!recv_slot(r, NULL, s3, wr_tag(0x3e, i), &p3.buf[1]))
			goto out;
	resize(r, s3, 5, EINVAL);
	if (srq_attr(r, s3, &a) && a.max_wr != w)
		fail(r, "max_wr %u after the refused resize, want %u", a.max_wr, w);
	for (i = 0; i < 10 && !r->failures; i++)
		deliver(r, &p3, wr_tag(0x3e, i));
	if (!r->failures)
		expect_rnr(r, &p3, "a send once the 10 WRs are taken");
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
		if (!recv_slot(r, NULL, srq, wr_tag(0x5f, i), &p1.buf[1]))
			goto out;
	if (!qp_move(r, p1.qp[1], IBV_QPS_ERR))
		goto out;
	if (async_wait(IBV_EVENT_QP_LAST_WQE_REACHED, p1.qp[1], 1, TIMEOUT_MS) != 1)
		fail(r, "no IBV_EVENT_QP_LAST_WQE_REACHED for the QP moved to ERR");
	cq_quiet(r, p1.rcq[1], QUIET_MS, "a QP on an SRQ moved to ERR");
	for (i = 0; i < 4; i++)
		if (!deliver(r, &p2, wr_tag(0x5f, i)))
			break;
	report(r);
out:
	pair_free(&p1);
	pair_free(&p2);
	if (srq)
		ibv_destroy_srq(srq);
}

/*
 * A WR with a bad lkey on an SRQ: the QP that takes it completes it with
 * IBV_WC_LOC_PROT_ERR; another QP then takes the WRs posted after it, in
 * order, and after them nothing (the ring's stale slots stay unused).
 */
void t_srq_bad_lkey(struct run *r)
{
	struct ibv_srq *srq;
	struct pair p1 = {}, p2 = {};
	struct pair_cfg pc = {};
	struct ibv_sge sg;
	struct ibv_wc wc;
	int i;

	srq = srq_new(r, 64, 1);
	pc.srq = srq;
	if (!srq || !pair_new(r, &p1, &pc) || !pair_new(r, &p2, &pc))
		goto out;
	/* leave old entries in the ring's slots: 40 posted and taken */
	for (i = 0; i < 40; i++)
		if (!recv_slot(r, NULL, srq, wr_tag(0xb1, i), &p2.buf[1]))
			goto out;
	for (i = 0; i < 40; i++)
		if (!deliver(r, &p2, wr_tag(0xb1, i)))
			goto out;
	sg = sge_at(&p1.buf[1], 0, SLOT);
	sg.lkey ^= 0x5a;
	if (!recv_post(r, NULL, srq, wr_tag(0xb2, 0), &sg, 1))
		goto out;
	for (i = 1; i <= 20; i++)
		if (!recv_slot(r, NULL, srq, wr_tag(0xb2, i), &p2.buf[1]))
			goto out;

	sg = sge_at(&p1.buf[0], 0, 32);
	if (!pair_send(r, &p1, 0xb3, IBV_WR_SEND, &sg, 1, 0))
		goto out;
	if (cq_get(r, p1.scq[0], &wc, "the send into a bad lkey") &&
	    (wc.wr_id != 0xb3 || wc.status == IBV_WC_SUCCESS))
		fail(r, "the send into a bad lkey: %s; want an error", wc_str(&wc));
	if (cq_get(r, p1.rcq[1], &wc, "the SRQ WR with a bad lkey"))
		wc_is(r, &wc, wr_tag(0xb2, 0), IBV_WC_LOC_PROT_ERR, -1,
		      p1.qp[1]->qp_num, "the SRQ WR with a bad lkey");
	for (i = 1; i <= 20; i++)
		if (!deliver(r, &p2, wr_tag(0xb2, i)))
			break;
	/* the SRQ is empty now: the next send finds no receive */
	if (i > 20)
		expect_rnr(r, &p2, "a send to the emptied SRQ");
	report(r);
out:
	pair_free(&p1);
	pair_free(&p2);
	if (srq)
		ibv_destroy_srq(srq);
}
