// SPDX-License-Identifier: GPL-2.0
/*
 * ud_uc.c - krwq_verbs cases: UD (datagrams, Q_Keys, the GRH, too long
 * for the receive, a QPN beyond 24 bits, on an SRQ) and UC (what the
 * responder cannot take is dropped, with no acknowledgment).
 */
#include <kunit/test.h>
#include <linux/bits.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_pack.h>
#include <rdma/ib_verbs.h>

#include "../qp_state.h"
#include "env.h"

/*
 * @wr: a signaled UD SEND, @wr_id, of @len bytes from v->abuf through
 * @sge, with Q_Key KV_QKEY; kv_ud_pair() aims it.
 */
static void kv_ud_wr(struct kv_env *v, struct ib_ud_wr *wr,
		     struct ib_sge *sge, u64 wr_id, u32 len)
{
	*sge = (struct ib_sge) {
		.addr = (uintptr_t)v->abuf, .length = len,
		.lkey = v->pd->local_dma_lkey,
	};
	*wr = (struct ib_ud_wr) {
		.wr = { .wr_id = wr_id, .sg_list = sge, .num_sge = 1,
			.opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED },
		.remote_qkey = KV_QKEY,
	};
}

/*
 * Two UD QPs in RTS (kv_exit() frees them), *@u2 on the fixture's SRQ if
 * @srq, and an address handle for this port, with @wr aimed from *@u1 at
 * *@u2.  Return: the address handle, for rdma_destroy_ah().
 */
static struct ib_ah *kv_ud_pair(struct kunit *t, struct ib_ud_wr *wr,
				struct ib_qp **u1, struct ib_qp **u2, bool srq)
{
	struct kv_env *v = t->priv;
	struct rdma_ah_attr ah_attr = { .type = RDMA_AH_ATTR_TYPE_IB };
	struct ib_ah *ah;

	rdma_ah_set_dlid(&ah_attr, KV_LID);
	rdma_ah_set_port_num(&ah_attr, 1);
	*u1 = kv_new_qp(v, IB_QPT_UD, false);
	*u2 = kv_new_qp(v, IB_QPT_UD, srq);
	KUNIT_ASSERT_FALSE(t, IS_ERR(*u1) || IS_ERR(*u2));
	KUNIT_ASSERT_EQ(t, kv_connect(*u1, 0, 0), 0);
	KUNIT_ASSERT_EQ(t, kv_connect(*u2, 0, 0), 0);
	ah = rdma_create_ah(v->pd, &ah_attr, 0);
	KUNIT_ASSERT_FALSE(t, IS_ERR(ah));
	wr->ah = ah;
	wr->remote_qpn = (*u2)->qp_num;
	return ah;
}

/**
 * kv_ud() - UD sends and receives.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * A datagram lands after the receive's 40 bytes of GRH room; one with a
 * wrong Q_Key is dropped without a trace on the receiver; with a GRH, its
 * PayLen counts what follows it on the wire.
 */
void kv_ud(struct kunit *t)
{
	struct kv_env *v = t->priv;
	struct ib_qp *u1, *u2;
	struct ib_ah *ah;
	struct ib_sge sge;
	struct ib_ud_wr wr;
	const struct ib_send_wr *bad;
	struct ib_wc wc;

	kv_ud_wr(v, &wr, &sge, 7, 100);
	ah = kv_ud_pair(t, &wr, &u1, &u2, false);
	memset(v->abuf, 0x3c, 100);
	KUNIT_ASSERT_EQ(t, kv_post_recv(v, u2, 8, v->bbuf, 140), 0);
	KUNIT_ASSERT_EQ(t, ib_post_send(u1, &wr.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.byte_len, 140u);
	KUNIT_EXPECT_EQ(t, wc.src_qp, u1->qp_num);
	KUNIT_EXPECT_EQ(t, v->bbuf[40], 0x3c);
	KUNIT_EXPECT_EQ(t, v->bbuf[139], 0x3c);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);

	/* a wrong Q_Key is dropped without a trace on the receiver */
	wr.remote_qkey = 0x22222222;
	KUNIT_ASSERT_EQ(t, kv_post_recv(v, u2, 9, v->bbuf, 140), 0);
	KUNIT_ASSERT_EQ(t, ib_post_send(u1, &wr.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->rcq, 1, &wc), 0);
	rdma_destroy_ah(ah, 0);

	/*
	 * with a GRH: its PayLen counts what follows it on the wire, BTH,
	 * DETH, the payload padded to 4 bytes, and the ICRC
	 */
	{
		struct rdma_ah_attr ah_attr = { .type = RDMA_AH_ATTR_TYPE_IB };
		union rdma_network_hdr *h = (void *)v->bbuf;
		union ib_gid gid;

		KUNIT_ASSERT_EQ(t, rdma_query_gid(v->dev, 1, 0, &gid), 0);
		rdma_ah_set_dlid(&ah_attr, KV_LID);
		rdma_ah_set_port_num(&ah_attr, 1);
		rdma_ah_set_grh(&ah_attr, &gid, 0, 0, 1, 0);
		ah = rdma_create_ah(v->pd, &ah_attr, 0);
		KUNIT_ASSERT_FALSE(t, IS_ERR(ah));
		wr.ah = ah;
		wr.remote_qkey = KV_QKEY;
		/* into receive 9, which the wrong Q_Key left posted */
		sge.length = 99;
		KUNIT_ASSERT_EQ(t, ib_post_send(u1, &wr.wr, &bad), 0);
		KUNIT_ASSERT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
		KUNIT_EXPECT_EQ(t, wc.wr_id, 9ull);
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
		KUNIT_EXPECT_TRUE(t, wc.wc_flags & IB_WC_GRH);
		KUNIT_EXPECT_EQ(t, be16_to_cpu(h->ibgrh.paylen),
				IB_BTH_BYTES + IB_DETH_BYTES + 100 + IB_ICRC_BYTES);
		KUNIT_EXPECT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
		rdma_destroy_ah(ah, 0);
	}
	kv_free_qp(v, u1);
	kv_free_qp(v, u2);
}

/* The QP's state once the deferred work has had its chance. */
static int kv_state_settled(struct ib_qp *qp)
{
	msleep(50);
	return krwq_test_qp_state(qp);
}

/**
 * kv_ud_too_long_dropped() - a datagram longer than its receive WQE is
 * dropped and counted.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * A datagram longer than the receive WQE is dropped and counted; the WQE
 * stays, the receiver stays in RTS, and a datagram that fits lands in it
 * (as hfi1 does; rxe moves the QP to ERR, which lets any sender that
 * knows a QP number and Q_Key flush another process's receives).
 */
void kv_ud_too_long_dropped(struct kunit *t)
{
	struct kv_env *v = t->priv;
	u64 dropped = kv_counter(v, "rx_dropped");
	struct ib_sge sge;
	struct ib_ud_wr wr;
	const struct ib_send_wr *bad;
	struct ib_qp *u1, *u2;
	struct ib_ah *ah;
	struct ib_wc wc;

	kv_ud_wr(v, &wr, &sge, 7, 200);
	ah = kv_ud_pair(t, &wr, &u1, &u2, false);
	KUNIT_ASSERT_EQ(t, kv_post_recv(v, u2, 8, v->bbuf, 140), 0);
	KUNIT_ASSERT_EQ(t, ib_post_send(u1, &wr.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, kv_state_settled(u2), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->rcq, 1, &wc), 0);
	KUNIT_EXPECT_EQ(t, kv_counter(v, "rx_dropped"), dropped + 1);
	sge.length = 100;
	KUNIT_ASSERT_EQ(t, ib_post_send(u1, &wr.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 8ull);
	KUNIT_EXPECT_EQ(t, wc.byte_len, 140u);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	rdma_destroy_ah(ah, 0);
	kv_free_qp(v, u1);
	kv_free_qp(v, u2);
}

/**
 * kv_ud_qpn_over_24_bits() - a UD WR naming a destination QPN wider than
 * 24 bits is refused at post.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * A destination QPN is 24 bits on the wire: a UD WR naming one wider is
 * refused at post (EINVAL, bad_wr at it), and nothing is queued.
 */
void kv_ud_qpn_over_24_bits(struct kunit *t)
{
	struct kv_env *v = t->priv;
	struct ib_sge sge;
	struct ib_ud_wr wr;
	const struct ib_send_wr *bad;
	struct ib_qp *u1, *u2;
	struct ib_ah *ah;
	struct ib_wc wc;

	kv_ud_wr(v, &wr, &sge, 9, 16);
	ah = kv_ud_pair(t, &wr, &u1, &u2, false);
	wr.remote_qpn |= BIT(24);
	KUNIT_ASSERT_EQ(t, kv_post_recv(v, u2, 8, v->bbuf, 140), 0);
	KUNIT_EXPECT_EQ(t, ib_post_send(u1, &wr.wr, &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(t, bad, &wr.wr);
	KUNIT_EXPECT_EQ(t, kv_poll(v->scq, &wc, 1), 0);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->rcq, 1, &wc), 0);
	/* the QP is as it was: the 24-bit QPN goes */
	wr.remote_qpn = u2->qp_num;
	KUNIT_ASSERT_EQ(t, ib_post_send(u1, &wr.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 8ull);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	rdma_destroy_ah(ah, 0);
	kv_free_qp(v, u1);
	kv_free_qp(v, u2);
}

/**
 * kv_ud_too_long_srq() - on an SRQ, a WQE too small for a datagram
 * completes with LOC_LEN_ERR.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * On an SRQ a WQE too small for a datagram is not left at the head, where
 * it would stall every QP of the SRQ: it completes with LOC_LEN_ERR, the
 * QP stays in RTS, and the next datagram takes the next WQE.
 */
void kv_ud_too_long_srq(struct kunit *t)
{
	struct kv_env *v = t->priv;
	struct ib_sge sge;
	struct ib_ud_wr wr;
	const struct ib_send_wr *bad;
	struct ib_qp *u1, *u2;
	struct ib_ah *ah;
	struct ib_wc wc;

	kv_ud_wr(v, &wr, &sge, 7, 100);
	ah = kv_ud_pair(t, &wr, &u1, &u2, true);
	KUNIT_EXPECT_EQ(t, kv_post_srq(v, v->srq, 40, v->pd->local_dma_lkey), 0);
	KUNIT_EXPECT_EQ(t, ib_post_send(u1, &wr.wr, &bad), 0);
	KUNIT_EXPECT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 40ull);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_LOC_LEN_ERR);
	KUNIT_EXPECT_EQ(t, kv_state_settled(u2), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(t, kv_post_srq(v, v->srq, 41, v->pd->local_dma_lkey), 0);
	sge.length = 16;
	KUNIT_EXPECT_EQ(t, ib_post_send(u1, &wr.wr, &bad), 0);
	KUNIT_EXPECT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 41ull);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.byte_len, 56u);
	rdma_destroy_ah(ah, 0);
	kv_free_qp(v, u1);
	kv_free_qp(v, u2);
}

/**
 * kv_uc_drops() - a UC message the responder cannot take is dropped there.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * UC has no acknowledgments: a message the responder cannot take (a bad
 * rkey, a receive too small) is dropped there, the QP stays in RTS, the
 * receive WQE stays for the next message that fits.
 */
void kv_uc_drops(struct kunit *t)
{
	struct kv_env *v = t->priv;
	u64 dropped = kv_counter(v, "rx_dropped");
	struct ib_qp *c, *d;
	struct ib_wc wc;

	c = kv_new_qp(v, IB_QPT_UC, false);
	d = kv_new_qp(v, IB_QPT_UC, false);
	KUNIT_ASSERT_FALSE(t, IS_ERR(c) || IS_ERR(d));
	KUNIT_ASSERT_EQ(t, kv_connect(c, d->qp_num, 0), 0);
	KUNIT_ASSERT_EQ(t, kv_connect(d, c->qp_num, 0), 0);
	KUNIT_ASSERT_EQ(t, kv_write(v, c, v->abuf, 8, (uintptr_t)v->bbuf,
				    v->pd->unsafe_global_rkey ^ 0x80), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, kv_state_settled(d), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(t, kv_counter(v, "rx_dropped"), dropped + 1);

	KUNIT_ASSERT_EQ(t, kv_post_recv(v, d, 12, v->bbuf, 64), 0);
	KUNIT_ASSERT_EQ(t, kv_send(v, c, 13, v->abuf, 100), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, kv_state_settled(d), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->rcq, 1, &wc), 0);
	KUNIT_EXPECT_EQ(t, kv_counter(v, "rx_dropped"), dropped + 2);
	KUNIT_ASSERT_EQ(t, kv_send(v, c, 14, v->abuf, 32), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 12ull);
	KUNIT_EXPECT_EQ(t, wc.byte_len, 32u);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	kv_free_qp(v, c);
	kv_free_qp(v, d);
}
