// SPDX-License-Identifier: GPL-2.0
/*
 * send_rnr.c - krwq_verbs cases: SEND and receive, RDMA WRITE and READ,
 * RNR retries, a send meeting a peer that is not (yet) connected to it,
 * or not there at all, the flushes of the move to ERR on the send side,
 * the completions of a destroyed QP, and the GSI QP krwq0 does not have.
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <rdma/ib_verbs.h>

#include "env.h"

/**
 * kv_send_recv() - a SEND from a lands whole in b's receive.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * Both completions say what happened: status, opcode, wr_id, length,
 * source QP and QP.
 */
void kv_send_recv(struct kunit *t)
{
	struct kv_env *v = t->priv;
	struct ib_wc wc;
	int i;

	for (i = 0; i < KV_BUF; i++)
		v->abuf[i] = i * 7;
	KUNIT_ASSERT_EQ(t, kv_post_recv(v, v->b, 1, v->bbuf, KV_BUF), 0);
	KUNIT_ASSERT_EQ(t, kv_send(v, v->a, 2, v->abuf, 3000), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 1ull);
	KUNIT_EXPECT_EQ(t, wc.byte_len, 3000u);
	KUNIT_EXPECT_EQ(t, wc.src_qp, v->a->qp_num);
	KUNIT_EXPECT_PTR_EQ(t, wc.qp, v->b);
	KUNIT_EXPECT_EQ(t, memcmp(v->abuf, v->bbuf, 3000), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_SEND);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 2ull);
}

/**
 * kv_post_with_irqs_off() - post_recv and post_send with interrupts off.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * Kernel consumers may post from atomic context: nothing may sleep.
 */
void kv_post_with_irqs_off(struct kunit *t)
{
	struct kv_env *v = t->priv;
	unsigned long flags;
	struct ib_wc wc[2];
	int r1, r2;

	local_irq_save(flags);
	r1 = kv_post_recv(v, v->b, 1, v->bbuf, 64);
	r2 = kv_send(v, v->a, 2, v->abuf, 64);
	local_irq_restore(flags);
	KUNIT_EXPECT_EQ(t, r1, 0);
	KUNIT_EXPECT_EQ(t, r2, 0);
	KUNIT_EXPECT_EQ(t, kv_poll(v->rcq, wc, 1), 1);
	KUNIT_EXPECT_EQ(t, kv_poll(v->scq, wc + 1, 1), 1);
}

/**
 * kv_rdma_write_read() - RDMA WRITE and READ through the PD's global rkey.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * Each moves exactly its bytes; a wrong rkey fails with REM_ACCESS_ERR.
 */
void kv_rdma_write_read(struct kunit *t)
{
	struct kv_env *v = t->priv;
	struct ib_sge sge = {
		.addr = (uintptr_t)v->abuf, .length = 512,
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_RDMA_WRITE },
		.remote_addr = (uintptr_t)v->bbuf,
		.rkey = v->pd->unsafe_global_rkey,
	};
	const struct ib_send_wr *bad;
	struct ib_wc wc;

	memset(v->abuf, 0x5a, 512);
	KUNIT_ASSERT_EQ(t, ib_post_send(v->a, &wr.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_RDMA_WRITE);
	KUNIT_EXPECT_EQ(t, v->bbuf[0], 0x5a);
	KUNIT_EXPECT_EQ(t, v->bbuf[511], 0x5a);
	KUNIT_EXPECT_EQ(t, v->bbuf[512], 0);

	memset(v->bbuf, 0xa5, 512);
	wr.wr.opcode = IB_WR_RDMA_READ;
	KUNIT_ASSERT_EQ(t, ib_post_send(v->a, &wr.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_RDMA_READ);
	KUNIT_EXPECT_EQ(t, wc.byte_len, 512u);
	KUNIT_EXPECT_EQ(t, v->abuf[0], 0xa5);

	/* a wrong rkey: remote access error, and both sides go to ERR */
	wr.rkey ^= 0x80;
	KUNIT_ASSERT_EQ(t, ib_post_send(v->a, &wr.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_ACCESS_ERR);
}

/**
 * kv_rnr_retry_exceeded() - with rnr_retry 1 and no receive posted, the
 * send fails with RNR_RETRY_EXC_ERR.
 * @t: the running case; its priv is the fixture (struct kv_env).
 */
void kv_rnr_retry_exceeded(struct kunit *t)
{
	struct kv_env *v = t->priv;
	struct ib_wc wc;
	struct ib_qp *c, *d;

	c = kv_new_qp(v, IB_QPT_RC, false);
	d = kv_new_qp(v, IB_QPT_RC, false);
	KUNIT_ASSERT_FALSE(t, IS_ERR(c) || IS_ERR(d));
	KUNIT_ASSERT_EQ(t, kv_connect(c, d->qp_num, 1), 0);
	KUNIT_ASSERT_EQ(t, kv_connect(d, c->qp_num, 1), 0);
	KUNIT_ASSERT_EQ(t, kv_send(v, c, 9, v->abuf, 16), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_RNR_RETRY_EXC_ERR);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 9ull);
	kv_free_qp(v, c);
	kv_free_qp(v, d);
}

/**
 * kv_rnr_waits_for_receive() - a sender with rnr_retry 7 waits for a late
 * receive.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * With rnr_retry 7 the sender waits for ever: a late receive completes it.
 */
void kv_rnr_waits_for_receive(struct kunit *t)
{
	struct kv_env *v = t->priv;
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(t, kv_send(v, v->a, 3, v->abuf, 16), 0);
	msleep(30);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->scq, 1, &wc), 0);
	KUNIT_ASSERT_EQ(t, kv_post_recv(v, v->b, 4, v->bbuf, 64), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 4ull);
}

/**
 * kv_destroy_drops_completions() - a destroyed QP's completions are gone.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * Completions of a destroyed QP are gone: polling them must not see it.
 */
void kv_destroy_drops_completions(struct kunit *t)
{
	struct kv_env *v = t->priv;
	struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(t, kv_post_recv(v, v->b, 1, v->bbuf, 8), 0);
	KUNIT_ASSERT_EQ(t, kv_post_recv(v, v->a, 2, v->abuf, 8), 0);
	KUNIT_ASSERT_EQ(t, ib_modify_qp(v->b, &a, IB_QP_STATE), 0);
	KUNIT_ASSERT_EQ(t, ib_modify_qp(v->a, &a, IB_QP_STATE), 0);
	ib_destroy_qp(v->b);
	v->b = NULL;
	KUNIT_ASSERT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 2ull);
	KUNIT_EXPECT_PTR_EQ(t, wc.qp, v->a);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->rcq, 1, &wc), 0);
}

/**
 * kv_foreign_sender_refused() - an RC QP not connected back to a sender
 * does not receive from it.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * An RC QP not connected back to the sender does not receive from it: the
 * sender hears nothing, retries retry_cnt times after its ACK timeout and
 * then fails with IB_WC_RETRY_EXC_ERR.
 */
void kv_foreign_sender_refused(struct kunit *t)
{
	struct kv_env *v = t->priv;
	u64 timeouts = kv_counter(v, "ack_timeouts");
	struct ib_wc wc;
	struct ib_qp *c;

	c = kv_new_qp(v, IB_QPT_RC, false);
	KUNIT_ASSERT_FALSE(t, IS_ERR(c));
	KUNIT_ASSERT_EQ(t, kv_connect_retry(c, v->b->qp_num, 7, 1, 3), 0);
	KUNIT_ASSERT_EQ(t, kv_post_recv(v, v->b, 1, v->bbuf, 64), 0);
	KUNIT_ASSERT_EQ(t, kv_send(v, c, 2, v->abuf, 64), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_RETRY_EXC_ERR);
	KUNIT_EXPECT_EQ(t, kv_counter(v, "ack_timeouts"), timeouts + 3);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->rcq, 1, &wc), 0);
	/* b still works with its real peer */
	KUNIT_ASSERT_EQ(t, kv_send(v, v->a, 3, v->abuf, 64), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 1ull);
	kv_free_qp(v, c);
}

/**
 * kv_send_waits_for_peer_to_connect() - a send that reaches its peer
 * before the peer is in RTR lands once it is.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * A send that reaches its peer before the peer is in RTR is retried after
 * the ACK timeout and lands once the peer has connected, as on an HCA.
 */
void kv_send_waits_for_peer_to_connect(struct kunit *t)
{
	struct ib_qp_attr init = {
		.qp_state = IB_QPS_INIT, .port_num = 1,
	};
	struct kv_env *v = t->priv;
	struct ib_qp *c, *d;
	struct ib_wc wc;

	c = kv_new_qp(v, IB_QPT_RC, false);
	d = kv_new_qp(v, IB_QPT_RC, false);
	KUNIT_ASSERT_FALSE(t, IS_ERR(c) || IS_ERR(d));
	KUNIT_ASSERT_EQ(t, ib_modify_qp(d, &init, IB_QP_STATE | IB_QP_PKEY_INDEX |
					IB_QP_PORT | IB_QP_ACCESS_FLAGS), 0);
	KUNIT_ASSERT_EQ(t, kv_post_recv(v, d, 1, v->bbuf, 64), 0);
	/* timeout 0: retry every 67 ms for ever, so a slow guest cannot fail it */
	KUNIT_ASSERT_EQ(t, kv_connect_retry(c, d->qp_num, 7, 0, 0), 0);
	memset(v->abuf, 0x5a, 64);
	KUNIT_ASSERT_EQ(t, kv_send(v, c, 2, v->abuf, 64), 0);
	/* d is in INIT: nothing can have arrived */
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->scq, 1, &wc), 0);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->rcq, 1, &wc), 0);
	/* INIT -> INIT -> RTR -> RTS, the receive still posted */
	KUNIT_ASSERT_EQ(t, kv_connect(d, c->qp_num, 7), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 2ull);
	KUNIT_ASSERT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 1ull);
	KUNIT_EXPECT_EQ(t, wc.byte_len, 64u);
	KUNIT_EXPECT_EQ(t, v->bbuf[63], 0x5a);
	kv_free_qp(v, c);
	kv_free_qp(v, d);
}

/**
 * kv_waiting_send_flushed() - a send waiting for its ACK timeout is
 * flushed by the move to ERR.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * A send waiting for its ACK timeout is not lost when the QP goes to ERR:
 * it completes flushed, and timeout 0 (IB's "never") never fails it.
 */
void kv_waiting_send_flushed(struct kunit *t)
{
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	struct kv_env *v = t->priv;
	struct ib_wc wc;
	struct ib_qp *c;

	c = kv_new_qp(v, IB_QPT_RC, false);
	KUNIT_ASSERT_FALSE(t, IS_ERR(c));
	KUNIT_ASSERT_EQ(t, kv_connect_retry(c, v->b->qp_num, 7, 0, 0), 0);
	KUNIT_ASSERT_EQ(t, kv_send(v, c, 9, v->abuf, 64), 0);
	msleep(200);	/* three of timeout 0's retries */
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->scq, 1, &wc), 0);
	KUNIT_ASSERT_EQ(t, ib_modify_qp(c, &err, IB_QP_STATE), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 9ull);
	kv_free_qp(v, c);
}

/**
 * kv_error_flushes_any_opcode() - a UD QP refuses an RDMA WRITE, but
 * flushes one posted in ERR.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * ib_drain_sq() posts an RDMA WRITE into ERR, whatever the QP type.
 */
void kv_error_flushes_any_opcode(struct kunit *t)
{
	struct kv_env *v = t->priv;
	struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 77, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED },
	};
	const struct ib_send_wr *bad;
	struct ib_wc wc;
	struct ib_qp *u;

	u = kv_new_qp(v, IB_QPT_UD, false);
	KUNIT_ASSERT_FALSE(t, IS_ERR(u));
	KUNIT_ASSERT_EQ(t, kv_connect(u, 0, 0), 0);
	KUNIT_EXPECT_EQ(t, ib_post_send(u, &wr.wr, &bad), -EINVAL);
	KUNIT_ASSERT_EQ(t, ib_modify_qp(u, &a, IB_QP_STATE), 0);
	KUNIT_EXPECT_EQ(t, ib_post_send(u, &wr.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 77ull);
	kv_free_qp(v, u);
}

/**
 * kv_unreachable_lid() - a LID no krwq device holds is an unreachable
 * peer.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * An address no krwq device holds behaves like an unreachable peer: an RC
 * send is retried on its ACK timeout, then fails; a datagram is dropped
 * and counted, and its sender completes it successfully.
 */
void kv_unreachable_lid(struct kunit *t)
{
	struct kv_env *v = t->priv;
	struct rdma_ah_attr ah_attr = { .type = RDMA_AH_ATTR_TYPE_IB };
	u64 timeouts = kv_counter(v, "ack_timeouts");
	u64 dropped = kv_counter(v, "ud_dropped");
	struct ib_sge sge = {
		.addr = (uintptr_t)v->abuf, .length = 64,
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_ud_wr wr = {
		.wr = { .wr_id = 5, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED },
		.remote_qkey = KV_QKEY,
	};
	const struct ib_send_wr *bad;
	struct ib_qp *c, *u;
	struct ib_ah *ah;
	struct ib_wc wc;

	c = kv_new_qp(v, IB_QPT_RC, false);
	KUNIT_ASSERT_FALSE(t, IS_ERR(c));
	KUNIT_ASSERT_EQ(t, kv_connect_to(c, 200, v->b->qp_num, 7, 1, 2), 0);
	KUNIT_ASSERT_EQ(t, kv_send(v, c, 4, v->abuf, 64), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_RETRY_EXC_ERR);
	KUNIT_EXPECT_EQ(t, kv_counter(v, "ack_timeouts"), timeouts + 2);

	u = kv_new_qp(v, IB_QPT_UD, false);
	KUNIT_ASSERT_FALSE(t, IS_ERR(u));
	KUNIT_ASSERT_EQ(t, kv_connect(u, 0, 0), 0);
	rdma_ah_set_dlid(&ah_attr, 200);
	rdma_ah_set_port_num(&ah_attr, 1);
	ah = rdma_create_ah(v->pd, &ah_attr, 0);
	KUNIT_ASSERT_FALSE(t, IS_ERR(ah));
	wr.ah = ah;
	wr.remote_qpn = u->qp_num;
	KUNIT_EXPECT_EQ(t, ib_post_send(u, &wr.wr, &bad), 0);
	KUNIT_EXPECT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, kv_counter(v, "ud_dropped"), dropped + 1);
	rdma_destroy_ah(ah, 0);
	kv_free_qp(v, u);
	kv_free_qp(v, c);
}

/**
 * kv_gsi_only_with_mads() - krwq0 has no GSI QP.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * The MAD layer's QP1 exists only where the port has MADs (RoCE).
 */
void kv_gsi_only_with_mads(struct kunit *t)
{
	struct kv_env *v = t->priv;
	struct ib_qp *qp = kv_qp(v, IB_QPT_GSI, false);

	KUNIT_EXPECT_TRUE(t, IS_ERR(qp));
	if (!IS_ERR(qp))
		ib_destroy_qp(qp);
}
