// SPDX-License-Identifier: GPL-2.0
/*
 * atomics_inline.c - krwq_verbs cases: inline data, atomics (results,
 * checks, two QPs adding at once), the RDMA READ and atomic resources a
 * QP is given, and the send queue slots unsignaled WRs hold.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/scatterlist.h>
#include <rdma/ib_verbs.h>

#include "env.h"

/* What query_qp says of a QP's max_inline_data; -1 if it fails. */
static noinline int kv_max_inline(struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	if (ib_query_qp(qp, &attr, IB_QP_CAP, &init))
		return -1;
	return attr.cap.max_inline_data;
}

/**
 * kv_inline() - inline data is copied when it is posted.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * Inline data is copied when it is posted: a send waiting for its peer's
 * receive (RNR) delivers what the buffer held then, whatever its lkey.
 */
void kv_inline(struct kunit *t)
{
	struct kv_env *v = t->priv;
	struct ib_qp_init_attr init = {
		.send_cq = v->scq, .recv_cq = v->rcq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 2,
			 .max_recv_sge = 1, .max_inline_data = 600 },
		.sq_sig_type = IB_SIGNAL_ALL_WR, .qp_type = IB_QPT_RC,
	};
	u8 *data = kunit_kzalloc(t, 256, GFP_KERNEL);
	struct ib_sge sge[2] = {
		{ .addr = (uintptr_t)data, .length = 100, .lkey = 0xdead00 },
		{ .addr = (uintptr_t)data + 100, .length = 156, .lkey = 0xbeef00 },
	};
	struct ib_send_wr wr = {
		.wr_id = 21, .sg_list = sge, .num_sge = 2, .opcode = IB_WR_SEND,
		.send_flags = IB_SEND_INLINE,
	};
	const struct ib_send_wr *bad;
	struct ib_qp *c, *d;
	struct ib_wc wc;
	int i;

	KUNIT_ASSERT_NOT_NULL(t, data);
	init.cap.max_inline_data = 256;
	c = ib_create_qp(v->pd, &init);
	KUNIT_ASSERT_FALSE(t, IS_ERR(c));
	KUNIT_EXPECT_GE(t, init.cap.max_inline_data, 256u);
	KUNIT_EXPECT_GE(t, kv_max_inline(c), 256);
	d = kv_new_qp(v, IB_QPT_RC, false);
	KUNIT_ASSERT_FALSE(t, IS_ERR(d));
	if (kv_connect(c, d->qp_num, 7) || kv_connect(d, c->qp_num, 7)) {
		ib_destroy_qp(c);
		KUNIT_FAIL(t, "connect");
		return;
	}
	for (i = 0; i < 256; i++)
		data[i] = i;
	KUNIT_EXPECT_EQ(t, ib_post_send(c, &wr, &bad), 0);
	memset(data, 0xee, 256);	/* after the post: not what is sent */
	KUNIT_EXPECT_EQ(t, kv_post_recv(v, d, 22, v->bbuf, 300), 0);
	KUNIT_EXPECT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.byte_len, 256u);
	for (i = 0; i < 256; i++)
		if (v->bbuf[i] != (u8)i)
			break;
	KUNIT_EXPECT_EQ(t, i, 256);
	KUNIT_EXPECT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);

	/* more than max_inline_data, or an inline READ: refused at post */
	sge[1].length = 157;
	KUNIT_EXPECT_EQ(t, ib_post_send(c, &wr, &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(t, bad, (const struct ib_send_wr *)&wr);
	sge[1].length = 156;
	wr.opcode = IB_WR_RDMA_READ;
	KUNIT_EXPECT_EQ(t, ib_post_send(c, &wr, &bad), -EINVAL);
	ib_destroy_qp(c);
	kv_free_qp(v, d);
}

/**
 * kv_inline_over_limit() - a QP asking for more inline data than the
 * device has is refused.
 * @t: the running case; its priv is the fixture (struct kv_env).
 */
void kv_inline_over_limit(struct kunit *t)
{
	struct kv_env *v = t->priv;
	struct ib_qp_init_attr init = {
		.send_cq = v->scq, .recv_cq = v->rcq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1, .max_inline_data = 513 },
		.sq_sig_type = IB_SIGNAL_ALL_WR, .qp_type = IB_QPT_RC,
	};
	struct ib_qp *qp = ib_create_qp(v->pd, &init);

	KUNIT_EXPECT_TRUE(t, IS_ERR(qp));
	if (!IS_ERR(qp))
		ib_destroy_qp(qp);
}

static int kv_atomic(struct kv_env *v, struct ib_qp *qp, enum ib_wr_opcode op,
		     u64 remote, u32 rkey, u64 cmp_add, u64 swap, u64 *result)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)result, .length = 8,
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_atomic_wr wr = {
		.wr = { .wr_id = 30, .sg_list = &sge, .num_sge = 1,
			.opcode = op, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = remote, .rkey = rkey,
		.compare_add = cmp_add, .swap = swap,
	};
	const struct ib_send_wr *bad;

	return ib_post_send(qp, &wr.wr, &bad);
}

/* An RC QP posting FETCH_ADD 1 to a target many times, polling its CQ. */
struct kv_adder {
	struct kv_env *v;
	struct ib_qp *qp;
	struct ib_cq *cq;
	u64 target;
	u32 rkey;
	u64 *result;
	int done;
	struct completion finished;
};

static int kv_adder_fn(void *arg)
{
	struct kv_adder *a = arg;
	struct ib_wc wc;
	int i;

	for (i = 0; i < 500; i++) {
		if (kv_atomic(a->v, a->qp, IB_WR_ATOMIC_FETCH_AND_ADD,
			      a->target, a->rkey, 1, 0, a->result) ||
		    kv_poll(a->cq, &wc, 1) != 1 || wc.status != IB_WC_SUCCESS)
			break;
	}
	a->done = i;
	complete(&a->finished);
	return 0;
}

/**
 * kv_atomics() - compare-and-swap and fetch-and-add.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * Their results and completions, a result buffer that is not 8 bytes,
 * a misaligned target and a region without remote atomic access (two
 * QPs adding at once: kv_atomics_concurrent()).
 */
void kv_atomics(struct kunit *t)
{
	struct kv_env *v = t->priv;
	u64 *target = kunit_kzalloc(t, PAGE_SIZE, GFP_KERNEL);
	u64 *res = kunit_kzalloc(t, 2 * sizeof(u64), GFP_KERNEL);
	struct scatterlist sg;
	struct ib_qp *c, *d;
	struct ib_mr *mr;
	struct ib_wc wc;

	KUNIT_EXPECT_EQ(t, v->dev->attrs.atomic_cap, IB_ATOMIC_HCA);
	KUNIT_ASSERT_TRUE(t, target && res);
	mr = kv_fr_mr(v, target, PAGE_SIZE, 1, &sg);
	KUNIT_ASSERT_FALSE(t, IS_ERR(mr));
	KUNIT_ASSERT_EQ(t, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE), 1);
	KUNIT_ASSERT_EQ(t, kv_pair(v, &c, &d), 0);
	KUNIT_ASSERT_EQ(t, kv_reg(d, mr, IB_ACCESS_REMOTE_ATOMIC |
				  IB_ACCESS_LOCAL_WRITE, 1), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_ASSERT_EQ(t, wc.status, IB_WC_SUCCESS);

	target[1] = 40;
	KUNIT_ASSERT_EQ(t, kv_atomic(v, c, IB_WR_ATOMIC_CMP_AND_SWP,
				     mr->iova + 8, mr->rkey, 40, 77, res), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_COMP_SWAP);
	KUNIT_EXPECT_EQ(t, *res, 40ull);
	KUNIT_EXPECT_EQ(t, target[1], 77ull);
	/* compare fails: no swap, the value returned */
	KUNIT_ASSERT_EQ(t, kv_atomic(v, c, IB_WR_ATOMIC_CMP_AND_SWP,
				     mr->iova + 8, mr->rkey, 40, 99, res), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, *res, 77ull);
	KUNIT_EXPECT_EQ(t, target[1], 77ull);
	KUNIT_ASSERT_EQ(t, kv_atomic(v, c, IB_WR_ATOMIC_FETCH_AND_ADD,
				     mr->iova + 8, mr->rkey, 5, 0, res), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_FETCH_ADD);
	KUNIT_EXPECT_EQ(t, *res, 77ull);
	KUNIT_EXPECT_EQ(t, target[1], 82ull);
	/* a result buffer that is not 8 bytes: refused at post */
	{
		struct ib_sge four = {
			.addr = (uintptr_t)res, .length = 4,
			.lkey = v->pd->local_dma_lkey,
		};
		struct ib_atomic_wr aw = {
			.wr = { .sg_list = &four, .num_sge = 1,
				.opcode = IB_WR_ATOMIC_FETCH_AND_ADD },
			.remote_addr = mr->iova, .rkey = mr->rkey,
		};
		const struct ib_send_wr *bad;

		KUNIT_EXPECT_EQ(t, ib_post_send(c, &aw.wr, &bad), -EINVAL);
	}

	kv_free_qp(v, c);
	kv_free_qp(v, d);

	/* misaligned, and a region without remote atomic access */
	KUNIT_ASSERT_EQ(t, kv_pair(v, &c, &d), 0);
	KUNIT_ASSERT_EQ(t, kv_atomic(v, c, IB_WR_ATOMIC_FETCH_AND_ADD,
				     mr->iova + 4, mr->rkey, 1, 0, res), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_INV_REQ_ERR);
	kv_free_qp(v, c);
	kv_free_qp(v, d);
	KUNIT_ASSERT_EQ(t, kv_pair(v, &c, &d), 0);
	KUNIT_ASSERT_EQ(t, kv_atomic(v, c, IB_WR_ATOMIC_FETCH_AND_ADD,
				     (uintptr_t)v->bbuf, v->pd->unsafe_global_rkey,
				     1, 0, res), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_ACCESS_ERR);
	kv_free_qp(v, c);
	kv_free_qp(v, d);
	kv_fr_free(v, mr, &sg);
}

/**
 * kv_rd_atomic_resources() - RDMA READ and atomics need the QPs' resources
 * for them.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * RDMA READ and atomics need the QPs' resources for them: a requester
 * whose max_rd_atomic is 0 may not post them (EINVAL, the WR refused and
 * the QP unchanged), and a responder whose max_dest_rd_atomic is 0
 * answers them as an invalid request, as an HCA NAKs one.
 */
void kv_rd_atomic_resources(struct kunit *t)
{
	struct kv_env *v = t->priv;
	struct ib_sge sge = {
		.addr = (uintptr_t)v->abuf, .length = 8,
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_rdma_wr rd = {
		.wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_RDMA_READ },
		.remote_addr = (uintptr_t)v->bbuf,
		.rkey = v->pd->unsafe_global_rkey,
	};
	struct ib_atomic_wr fa = {
		.wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_ATOMIC_FETCH_AND_ADD },
		.remote_addr = (uintptr_t)v->bbuf,
		.rkey = v->pd->unsafe_global_rkey, .compare_add = 1,
	};
	const struct ib_send_wr *bad;
	struct ib_qp *c, *d;
	struct ib_wc wc;

	/* no initiator depth: refused at post */
	c = kv_new_qp(v, IB_QPT_RC, false);
	d = kv_new_qp(v, IB_QPT_RC, false);
	KUNIT_ASSERT_FALSE(t, IS_ERR(c) || IS_ERR(d));
	KUNIT_ASSERT_EQ(t, kv_connect_rd(c, KV_LID, d->qp_num, 7, 14, 7, 0), 0);
	KUNIT_ASSERT_EQ(t, kv_connect_rd(d, KV_LID, c->qp_num, 7, 14, 7, 1), 0);
	KUNIT_EXPECT_EQ(t, ib_post_send(c, &rd.wr, &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(t, bad, &rd.wr);
	KUNIT_EXPECT_EQ(t, ib_post_send(c, &fa.wr, &bad), -EINVAL);
	KUNIT_EXPECT_EQ(t, kv_poll(v->scq, &wc, 1), 0);
	/* the QP is as it was: a WRITE goes */
	rd.wr.opcode = IB_WR_RDMA_WRITE;
	KUNIT_ASSERT_EQ(t, ib_post_send(c, &rd.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	kv_free_qp(v, c);
	kv_free_qp(v, d);

	/* no responder resources: an invalid request, for both kinds */
	for (int i = 0; i < 2; i++) {
		struct ib_send_wr *wr = i ? &fa.wr : &rd.wr;

		rd.wr.opcode = IB_WR_RDMA_READ;
		c = kv_new_qp(v, IB_QPT_RC, false);
		d = kv_new_qp(v, IB_QPT_RC, false);
		KUNIT_ASSERT_FALSE(t, IS_ERR(c) || IS_ERR(d));
		KUNIT_ASSERT_EQ(t, kv_connect_rd(c, KV_LID, d->qp_num, 7, 14, 7,
						 1), 0);
		KUNIT_ASSERT_EQ(t, kv_connect_rd(d, KV_LID, c->qp_num, 7, 14, 7,
						 0), 0);
		KUNIT_ASSERT_EQ(t, ib_post_send(c, wr, &bad), 0);
		KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
		KUNIT_EXPECT_EQ(t, wc.wr_id, wr->wr_id);
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_INV_REQ_ERR);
		kv_free_qp(v, c);
		kv_free_qp(v, d);
	}
}

/**
 * kv_atomics_concurrent() - two QPs adding to one target at once lose no
 * addition.
 * @t: the running case; its priv is the fixture (struct kv_env).
 */
void kv_atomics_concurrent(struct kunit *t)
{
	struct kv_env *v = t->priv;
	struct ib_cq_init_attr cq_attr = { .cqe = 16 };
	u64 *target = kunit_kzalloc(t, PAGE_SIZE, GFP_KERNEL);
	u64 *res = kunit_kzalloc(t, 2 * sizeof(u64), GFP_KERNEL);
	struct kv_adder add[2] = {};
	struct scatterlist sg;
	struct ib_qp *d;
	struct ib_mr *mr;
	struct ib_wc wc;
	int i;

	KUNIT_ASSERT_TRUE(t, target && res);
	mr = kv_fr_mr(v, target, PAGE_SIZE, 1, &sg);
	KUNIT_ASSERT_FALSE(t, IS_ERR(mr));
	KUNIT_ASSERT_EQ(t, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE), 1);
	d = kv_new_qp(v, IB_QPT_RC, false);
	KUNIT_ASSERT_FALSE(t, IS_ERR(d));
	KUNIT_ASSERT_EQ(t, kv_connect(d, v->a->qp_num, 7), 0);
	KUNIT_ASSERT_EQ(t, kv_reg(d, mr, IB_ACCESS_REMOTE_ATOMIC |
				  IB_ACCESS_LOCAL_WRITE, 1), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_ASSERT_EQ(t, wc.status, IB_WC_SUCCESS);
	kv_free_qp(v, d);

	/* two QPs adding at once lose nothing */
	target[2] = 0;
	for (i = 0; i < 2; i++) {
		add[i].v = v;
		add[i].cq = ib_create_cq(v->dev, NULL, NULL, NULL, &cq_attr);
		KUNIT_ASSERT_FALSE(t, IS_ERR(add[i].cq));
		add[i].target = mr->iova + 16;
		add[i].rkey = mr->rkey;
		add[i].result = &res[i];
		init_completion(&add[i].finished);
	}
	for (i = 0; i < 2; i++) {
		struct ib_qp_init_attr qa = {
			.send_cq = add[i].cq, .recv_cq = add[i].cq,
			.cap = { .max_send_wr = 4, .max_recv_wr = 1,
				 .max_send_sge = 1, .max_recv_sge = 1 },
			.sq_sig_type = IB_SIGNAL_ALL_WR, .qp_type = IB_QPT_RC,
		};
		struct ib_qp *peer = kv_new_qp(v, IB_QPT_RC, false);

		add[i].qp = ib_create_qp(v->pd, &qa);
		KUNIT_ASSERT_FALSE(t, IS_ERR(add[i].qp) || IS_ERR(peer));
		KUNIT_ASSERT_EQ(t, kv_connect(add[i].qp, peer->qp_num, 7), 0);
		KUNIT_ASSERT_EQ(t, kv_connect(peer, add[i].qp->qp_num, 7), 0);
	}
	for (i = 0; i < 2; i++)
		if (IS_ERR(kthread_run(kv_adder_fn, &add[i], "kv_adder%d", i)))
			complete(&add[i].finished);
	for (i = 0; i < 2; i++)
		wait_for_completion(&add[i].finished);
	KUNIT_EXPECT_EQ(t, add[0].done, 500);
	KUNIT_EXPECT_EQ(t, add[1].done, 500);
	KUNIT_EXPECT_EQ(t, target[2], (u64)(add[0].done + add[1].done));
	for (i = 0; i < 2; i++) {
		ib_destroy_qp(add[i].qp);
		ib_destroy_cq(add[i].cq);
	}

	kv_fr_free(v, mr, &sg);
}

/**
 * kv_unsignaled_hold_slots() - an unsignaled WR keeps its send queue slot.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * An unsignaled WR keeps its send queue slot until a later signaled WR
 * completes (or the QP is flushed), as the verbs specification and every
 * HCA have it: a list longer than the queue is refused part way.
 */
void kv_unsignaled_hold_slots(struct kunit *t)
{
	struct kv_env *v = t->priv;
	struct ib_qp_init_attr init = {
		.send_cq = v->scq, .recv_cq = v->rcq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR, .qp_type = IB_QPT_RC,
	};
	struct ib_sge sge = {
		.addr = (uintptr_t)v->abuf, .length = 8,
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_rdma_wr *wrs = kunit_kcalloc(t, 40, sizeof(*wrs), GFP_KERNEL);
	const struct ib_send_wr *bad;
	struct ib_qp *c, *d;
	struct ib_wc wc;
	int i;

	KUNIT_ASSERT_NOT_NULL(t, wrs);
	for (i = 0; i < 40; i++) {
		wrs[i].wr.wr_id = i;
		wrs[i].wr.sg_list = &sge;
		wrs[i].wr.num_sge = 1;
		wrs[i].wr.opcode = IB_WR_RDMA_WRITE;
		wrs[i].wr.next = i < 39 ? &wrs[i + 1].wr : NULL;
		wrs[i].remote_addr = (uintptr_t)v->bbuf;
		wrs[i].rkey = v->pd->unsafe_global_rkey;
	}
	c = ib_create_qp(v->pd, &init);
	KUNIT_ASSERT_FALSE(t, IS_ERR(c));
	d = kv_new_qp(v, IB_QPT_RC, false);
	if (IS_ERR(d) || kv_connect(c, d->qp_num, 7) ||
	    kv_connect(d, c->qp_num, 7)) {
		ib_destroy_qp(c);
		KUNIT_FAIL(t, "cannot connect");
		return;
	}
	/* 40 unsignaled WRs in one list: the 17th does not fit */
	KUNIT_EXPECT_EQ(t, ib_post_send(c, &wrs[0].wr, &bad), -ENOMEM);
	KUNIT_EXPECT_PTR_EQ(t, bad, (const struct ib_send_wr *)&wrs[16].wr);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->scq, 1, &wc), 0);
	/* the flush of the move to ERR frees them all */
	{
		struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };

		KUNIT_ASSERT_EQ(t, ib_modify_qp(c, &a, IB_QP_STATE), 0);
		a.qp_state = IB_QPS_RESET;
		KUNIT_ASSERT_EQ(t, ib_modify_qp(c, &a, IB_QP_STATE), 0);
	}
	KUNIT_ASSERT_EQ(t, kv_connect(c, d->qp_num, 7), 0);
	/*
	 * One at a time, executed at once: still, sixteen unsignaled WRs
	 * fill the queue until a signaled one completes
	 */
	for (i = 0; i < 40; i++)
		wrs[i].wr.next = NULL;
	for (i = 0; i < 16; i++)
		KUNIT_EXPECT_EQ(t, ib_post_send(c, &wrs[i].wr, &bad), 0);
	KUNIT_EXPECT_EQ(t, ib_post_send(c, &wrs[16].wr, &bad), -ENOMEM);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->scq, 1, &wc), 0);
	{
		struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };

		KUNIT_ASSERT_EQ(t, ib_modify_qp(c, &a, IB_QP_STATE), 0);
		a.qp_state = IB_QPS_RESET;
		KUNIT_ASSERT_EQ(t, ib_modify_qp(c, &a, IB_QP_STATE), 0);
	}
	while (ib_poll_cq(v->scq, 1, &wc) > 0)
		;	/* the flushed ones */
	KUNIT_ASSERT_EQ(t, kv_connect(c, d->qp_num, 7), 0);
	for (i = 0; i < 15; i++)
		KUNIT_EXPECT_EQ(t, ib_post_send(c, &wrs[i].wr, &bad), 0);
	wrs[15].wr.send_flags = IB_SEND_SIGNALED;
	KUNIT_EXPECT_EQ(t, ib_post_send(c, &wrs[15].wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 15ull);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	/* its completion freed all sixteen */
	for (i = 16; i < 32; i++)
		KUNIT_EXPECT_EQ(t, ib_post_send(c, &wrs[i].wr, &bad), 0);
	KUNIT_EXPECT_EQ(t, ib_post_send(c, &wrs[32].wr, &bad), -ENOMEM);
	ib_destroy_qp(c);
	kv_free_qp(v, d);
}
