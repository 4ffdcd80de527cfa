// SPDX-License-Identifier: GPL-2.0
/*
 * receive.c - krwq_verbs cases: the receive queue through the verbs: its
 * capacity, RESET and ERR, a receive too small; SRQs: limit, resize,
 * modify_srq's mask, a bad lkey's WQE counted as consumed (which no verb
 * shows: the ring's cached count); and the ERR re-flush budget, a device
 * helper called directly (exported to KUnit by EXPORT_SYMBOL_IF_KUNIT).
 */
#include <kunit/test.h>
#include <linux/err.h>
#include <linux/jiffies.h>
#include <linux/minmax.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "../../module/krwq.h"
#include "../../module/uflush.h"
#include "env.h"

/**
 * kv_recv_capacity() - a receive queue takes max_recv_wr WRs and refuses
 * the next with -ENOMEM.
 * @t: the running case; its priv is the fixture (struct kv_env).
 */
void kv_recv_capacity(struct kunit *t)
{
	struct kv_env *v = t->priv;
	int i;

	for (i = 0; i < KV_DEPTH; i++)
		KUNIT_EXPECT_EQ(t, kv_post_recv(v, v->b, i, v->bbuf, 8), 0);
	KUNIT_EXPECT_EQ(t, kv_post_recv(v, v->b, i, v->bbuf, 8), -ENOMEM);
}

/**
 * kv_recv_in_reset() - post_recv to a QP in RESET is refused with -EINVAL.
 * @t: the running case; its priv is the fixture (struct kv_env).
 */
void kv_recv_in_reset(struct kunit *t)
{
	struct kv_env *v = t->priv;
	struct ib_qp_attr a = { .qp_state = IB_QPS_RESET };

	KUNIT_ASSERT_EQ(t, ib_modify_qp(v->b, &a, IB_QP_STATE), 0);
	KUNIT_EXPECT_EQ(t, kv_post_recv(v, v->b, 1, v->bbuf, 8), -EINVAL);
}

/**
 * kv_flush_on_error() - the move to ERR flushes the posted receives in
 * order; a receive posted in ERR completes flushed at once.
 * @t: the running case; its priv is the fixture (struct kv_env).
 */
void kv_flush_on_error(struct kunit *t)
{
	struct kv_env *v = t->priv;
	struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };
	struct ib_wc wc;
	int i;

	for (i = 0; i < 5; i++)
		KUNIT_ASSERT_EQ(t, kv_post_recv(v, v->b, 100 + i, v->bbuf, 8), 0);
	KUNIT_ASSERT_EQ(t, ib_modify_qp(v->b, &a, IB_QP_STATE), 0);
	for (i = 0; i < 5; i++) {
		KUNIT_ASSERT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_WR_FLUSH_ERR);
		KUNIT_EXPECT_EQ(t, wc.wr_id, 100ull + i);
		KUNIT_EXPECT_PTR_EQ(t, wc.qp, v->b);
	}
	/* posting in ERR completes at once */
	KUNIT_EXPECT_EQ(t, kv_post_recv(v, v->b, 200, v->bbuf, 8), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 200ull);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_WR_FLUSH_ERR);
}

/**
 * kv_too_small() - a SEND longer than its receive fails at both ends.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * The receive completes with LOC_LEN_ERR, the send with REM_INV_REQ_ERR,
 * and both QPs go to ERR.
 */
void kv_too_small(struct kunit *t)
{
	struct kv_env *v = t->priv;
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(t, kv_post_recv(v, v->b, 1, v->bbuf, 100), 0);
	KUNIT_ASSERT_EQ(t, kv_send(v, v->a, 2, v->abuf, 200), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_LOC_LEN_ERR);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_INV_REQ_ERR);
	KUNIT_EXPECT_EQ(t, kv_wait_state(v->a, IB_QPS_ERR), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(t, kv_wait_state(v->b, IB_QPS_ERR), IB_QPS_ERR);
}

/**
 * kv_srq_limit_and_resize() - an SRQ's limit and resize.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * A resize below what is posted is refused, one above keeps the limit and
 * the posted WQEs, in order; consuming below the limit raises
 * IB_EVENT_SRQ_LIMIT_REACHED once and disarms the limit.
 */
void kv_srq_limit_and_resize(struct kunit *t)
{
	struct kv_env *v = t->priv;
	struct ib_srq_attr sa = { .srq_limit = 3 };
	struct ib_sge sge = {
		.addr = (uintptr_t)v->bbuf, .length = 64,
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };
	const struct ib_recv_wr *bad;
	struct ib_wc wc;
	struct ib_qp *s;
	int i;

	s = kv_new_qp(v, IB_QPT_RC, true);
	KUNIT_ASSERT_FALSE(t, IS_ERR(s));
	KUNIT_ASSERT_EQ(t, kv_connect(s, v->a->qp_num, 7), 0);
	for (i = 0; i < 6; i++) {
		wr.wr_id = i;
		KUNIT_ASSERT_EQ(t, ib_post_srq_recv(v->srq, &wr, &bad), 0);
	}
	KUNIT_EXPECT_EQ(t, ib_modify_srq(v->srq, &sa, IB_SRQ_LIMIT), 0);
	sa.max_wr = 5;	/* smaller than what is posted */
	KUNIT_EXPECT_EQ(t, ib_modify_srq(v->srq, &sa, IB_SRQ_MAX_WR), -EINVAL);
	sa.max_wr = 64;
	KUNIT_EXPECT_EQ(t, ib_modify_srq(v->srq, &sa, IB_SRQ_MAX_WR), 0);
	KUNIT_EXPECT_EQ(t, ib_query_srq(v->srq, &sa), 0);
	KUNIT_EXPECT_EQ(t, sa.max_wr, 64u);
	KUNIT_EXPECT_EQ(t, sa.srq_limit, 3u);

	/* re-aim a at s, and consume four of the six: 2 < 3 fires once */
	{
		struct ib_qp_attr a = { .qp_state = IB_QPS_RESET };

		KUNIT_ASSERT_EQ(t, ib_modify_qp(v->a, &a, IB_QP_STATE), 0);
		KUNIT_ASSERT_EQ(t, kv_connect(v->a, s->qp_num, 7), 0);
	}
	for (i = 0; i < 4; i++) {
		KUNIT_ASSERT_EQ(t, kv_send(v, v->a, 50 + i, v->abuf, 32), 0);
		KUNIT_ASSERT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
		KUNIT_EXPECT_EQ(t, wc.wr_id, (u64)i);	/* in order after resize */
		KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	}
	KUNIT_EXPECT_EQ(t, kv_wait_event(v, IB_EVENT_SRQ_LIMIT_REACHED, 1), 1);
	KUNIT_EXPECT_EQ(t, ib_query_srq(v->srq, &sa), 0);
	KUNIT_EXPECT_EQ(t, sa.srq_limit, 0u);
	kv_free_qp(v, s);
}

/**
 * kv_srq_modify_mask() - modify_srq acts on IB_SRQ_MAX_WR and IB_SRQ_LIMIT
 * only.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * modify_srq acts on IB_SRQ_MAX_WR and IB_SRQ_LIMIT only: an empty mask
 * changes nothing, and a mask with any other bit fails with -EINVAL and
 * changes nothing either.
 */
void kv_srq_modify_mask(struct kunit *t)
{
	static const u32 unknown[] = {
		BIT(2), IB_SRQ_LIMIT | BIT(2), IB_SRQ_MAX_WR | BIT(7),
		IB_SRQ_MAX_WR | IB_SRQ_LIMIT | BIT(31),
	};
	struct kv_env *v = t->priv;
	struct ib_srq_attr sa = { .srq_limit = 5 };
	int i;

	KUNIT_ASSERT_EQ(t, ib_modify_srq(v->srq, &sa, IB_SRQ_LIMIT), 0);
	sa.max_wr = 2 * KV_DEPTH;
	sa.srq_limit = 2;
	KUNIT_EXPECT_EQ(t, ib_modify_srq(v->srq, &sa, 0), 0);
	KUNIT_EXPECT_EQ(t, ib_query_srq(v->srq, &sa), 0);
	KUNIT_EXPECT_EQ(t, sa.max_wr, (u32)KV_DEPTH);
	KUNIT_EXPECT_EQ(t, sa.srq_limit, 5u);
	sa.srq_limit = 5;	/* the next checks start from 5 whatever happened */
	KUNIT_ASSERT_EQ(t, ib_modify_srq(v->srq, &sa, IB_SRQ_LIMIT), 0);
	for (i = 0; i < ARRAY_SIZE(unknown); i++) {
		sa.max_wr = 2 * KV_DEPTH;
		sa.srq_limit = 2;
		KUNIT_EXPECT_EQ(t, ib_modify_srq(v->srq, &sa,
						 (enum ib_srq_attr_mask)unknown[i]),
				-EINVAL);
		KUNIT_EXPECT_EQ(t, ib_query_srq(v->srq, &sa), 0);
		KUNIT_EXPECT_EQ(t, sa.max_wr, (u32)KV_DEPTH);
		KUNIT_EXPECT_EQ(t, sa.srq_limit, 5u);
	}
}

/* RESET, then connect @a and @b to each other again (a: rnr_retry 1) */
static int kv_reconnect(struct ib_qp *a, struct ib_qp *b)
{
	struct ib_qp_attr r = { .qp_state = IB_QPS_RESET };

	if (ib_modify_qp(a, &r, IB_QP_STATE) || ib_modify_qp(b, &r, IB_QP_STATE))
		return -EIO;
	if (kv_connect(a, b->qp_num, 1) || kv_connect(b, a->qp_num, 7))
		return -EIO;
	return 0;
}

/**
 * kv_srq_bad_lkey_counted() - a receive WQE with a bad lkey is consumed
 * and counted as consumed.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * A receive WQE with a bad lkey is consumed, and counted as consumed: the
 * SRQ's cached count must never exceed what is really posted.  rdmavt
 * 6.1 advances the tail but skips count-- when init_sge() fails, and
 * reloads the count only once it falls below 16, so 16 bad-lkey takes
 * out of 32 posted leave its count at 32 with 16 posted; after the 16
 * good ones it says 16 with none, and the next send is given the
 * never-posted slot at the tail instead of an RNR NAK.
 */
void kv_srq_bad_lkey_counted(struct kunit *t)
{
	struct kv_env *v = t->priv;
	struct krwq_rq *ring = &to_ksrq(v->srq)->rq;
	struct ib_srq_attr sa = { .max_wr = 4 * KV_DEPTH };
	u32 lkey = v->pd->local_dma_lkey, count;
	struct ib_qp *s;
	struct ib_wc wc;
	int i;

	/* room for 32: the first take loads the count with all of them */
	KUNIT_ASSERT_EQ(t, ib_modify_srq(v->srq, &sa, IB_SRQ_MAX_WR), 0);
	s = kv_new_qp(v, IB_QPT_RC, true);
	KUNIT_ASSERT_FALSE(t, IS_ERR(s));
	KUNIT_ASSERT_EQ(t, kv_reconnect(v->a, s), 0);
	for (i = 0; i < 2 * KV_DEPTH; i++)
		KUNIT_ASSERT_EQ(t, kv_post_srq(v, v->srq, i,
					       i < KV_DEPTH ? ~lkey : lkey), 0);
	for (i = 0; i < KV_DEPTH; i++) {
		KUNIT_ASSERT_EQ(t, kv_send(v, v->a, 100 + i, v->abuf, 32), 0);
		KUNIT_ASSERT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
		KUNIT_EXPECT_EQ(t, wc.wr_id, (u64)i);
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_LOC_PROT_ERR);
		KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_OP_ERR);
		/* both went to ERR: start them again, the SRQ keeps its WRs */
		KUNIT_ASSERT_EQ(t, kv_wait_state(s, IB_QPS_ERR), IB_QPS_ERR);
		KUNIT_ASSERT_EQ(t, kv_wait_state(v->a, IB_QPS_ERR), IB_QPS_ERR);
		KUNIT_ASSERT_EQ(t, kv_reconnect(v->a, s), 0);
		count = READ_ONCE(ring->kwq->count);
		KUNIT_EXPECT_LE(t, count, (u32)(2 * KV_DEPTH - 1 - i));
	}
	for (i = KV_DEPTH; i < 2 * KV_DEPTH; i++) {
		KUNIT_ASSERT_EQ(t, kv_send(v, v->a, 100 + i, v->abuf, 32), 0);
		KUNIT_ASSERT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
		KUNIT_EXPECT_EQ(t, wc.wr_id, (u64)i);
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
		KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	}
	count = READ_ONCE(ring->kwq->count);
	KUNIT_EXPECT_EQ(t, count, 0u);
	/* nothing is posted: RNR NAKs until rnr_retry runs out */
	KUNIT_ASSERT_EQ(t, kv_send(v, v->a, 999, v->abuf, 32), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_RNR_RETRY_EXC_ERR);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->rcq, 1, &wc), 0);
	kv_free_qp(v, s);
}

/**
 * kv_uflush_budget_shared() - two workers share a device's ERR re-flush
 * budget.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * The ERR re-flush budget of a device, asked by two workers at the same
 * time (each grants, then each spends): between them they may not be
 * granted more than the device had, and what they did not use returns.
 */
void kv_uflush_budget_shared(struct kunit *t)
{
	const u32 full = KRWQ_UFLUSH_RATE / 10;	/* a full bucket */
	struct krwq_dev *d = kunit_kzalloc(t, sizeof(*d), GFP_KERNEL);
	unsigned long start;
	u32 a, b, accrued;

	KUNIT_ASSERT_NOT_NULL(t, d);
	spin_lock_init(&d->uflush_lock);
	start = jiffies;
	d->uflush_stamp = start;
	d->uflush_tokens = full;
	a = krwq_uflush_budget(d, full);	/* worker 1 */
	b = krwq_uflush_budget(d, full);	/* worker 2, before 1 spent */
	accrued = min_t(u64, full,
			(u64)(jiffies - start) * KRWQ_UFLUSH_RATE / HZ);
	KUNIT_EXPECT_EQ(t, a, full);
	KUNIT_EXPECT_LE(t, a + b, full + accrued);
	/* worker 1 flushed 100, worker 2 nothing: the rest comes back */
	krwq_uflush_spend(d, a, 100);
	krwq_uflush_spend(d, b, 0);
	KUNIT_EXPECT_LE(t, d->uflush_tokens, full);
	KUNIT_EXPECT_GE(t, krwq_uflush_budget(d, full), full - 100);
}
