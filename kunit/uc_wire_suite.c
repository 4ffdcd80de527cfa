// SPDX-License-Identifier: GPL-2.0
/*
 * uc_wire_suite.c - the KUnit suite "krwq_uc_wire": a UC responder fed
 * packets as the wire brings them (krwq_resp_wire_uc(), module/resp.c),
 * one at a time, in order, out of order and missing, on krwq0.  What the
 * wire's sockets and headers add around it is checked by the guest's
 * wire.sh against rdma_rxe; here the packets are made by hand, so loss
 * and reordering happen exactly where a case puts them.
 */
#include <kunit/test.h>
#include <linux/slab.h>
#include <rdma/ib_pack.h>
#include <rdma/ib_verbs.h>

#include "../module/krwq.h"
#include "../module/resp.h"
#include "../module/wire.h"
#include "counter.h"

#define UW_BUF		4096
#define UW_DEPTH	8
#define UW_PEER_QPN	0x123	/* the peer QP the packets come from */

struct uw {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_srq *srq;
	struct ib_qp *qp;
	u8 *buf, *data;
};

static int uw_init(struct kunit *t)
{
	struct ib_cq_init_attr cq_attr = { .cqe = 4 * UW_DEPTH };
	struct ib_srq_init_attr srq_attr = {
		.attr = { .max_wr = UW_DEPTH, .max_sge = 1 },
	};
	struct uw *v;
	int i;

	v = kunit_kzalloc(t, sizeof(*v), GFP_KERNEL);
	if (!v)
		return -ENOMEM;
	t->priv = v;
	v->dev = ib_device_get_by_name("krwq0", RDMA_DRIVER_QIB);
	if (!v->dev)
		return -ENODEV;
	v->buf = kunit_kzalloc(t, UW_BUF, GFP_KERNEL);
	v->data = kunit_kzalloc(t, UW_BUF, GFP_KERNEL);
	v->pd = ib_alloc_pd(v->dev, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (!v->buf || !v->data || IS_ERR(v->pd))
		return -ENOMEM;
	for (i = 0; i < UW_BUF; i++)
		v->data[i] = i * 7 + 1;
	v->cq = ib_create_cq(v->dev, NULL, NULL, v, &cq_attr);
	if (IS_ERR(v->cq))
		return PTR_ERR(v->cq);
	v->srq = ib_create_srq(v->pd, &srq_attr);
	return PTR_ERR_OR_ZERO(v->srq);
}

static void uw_exit(struct kunit *t)
{
	struct uw *v = t->priv;

	if (!v || !v->dev)
		return;
	if (!IS_ERR_OR_NULL(v->qp))
		ib_destroy_qp(v->qp);
	if (!IS_ERR_OR_NULL(v->srq))
		ib_destroy_srq(v->srq);
	if (!IS_ERR_OR_NULL(v->cq))
		ib_destroy_cq(v->cq);
	if (!IS_ERR_OR_NULL(v->pd))
		ib_dealloc_pd(v->pd);
	ib_device_put(v->dev);
}

/* A UC QP in RTR, expecting PSN 0 from UW_PEER_QPN, on the SRQ if @srq. */
static struct ib_qp *uw_qp(struct kunit *t, bool srq)
{
	struct uw *v = t->priv;
	struct ib_qp_init_attr init = {
		.send_cq = v->cq, .recv_cq = v->cq,
		.srq = srq ? v->srq : NULL,
		.cap = { .max_send_wr = UW_DEPTH, .max_recv_wr = UW_DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_UC,
	};
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT, .port_num = 1,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE,
	};

	v->qp = ib_create_qp(v->pd, &init);
	KUNIT_ASSERT_FALSE(t, IS_ERR(v->qp));
	KUNIT_ASSERT_EQ(t, ib_modify_qp(v->qp, &a, IB_QP_STATE |
					IB_QP_PKEY_INDEX | IB_QP_PORT |
					IB_QP_ACCESS_FLAGS), 0);
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = UW_PEER_QPN;
	a.rq_psn = 0;
	a.ah_attr.type = RDMA_AH_ATTR_TYPE_IB;
	rdma_ah_set_dlid(&a.ah_attr, 1);
	rdma_ah_set_port_num(&a.ah_attr, 1);
	KUNIT_ASSERT_EQ(t, ib_modify_qp(v->qp, &a, IB_QP_STATE | IB_QP_AV |
					IB_QP_PATH_MTU | IB_QP_DEST_QPN |
					IB_QP_RQ_PSN), 0);
	return v->qp;
}

static void uw_recv(struct kunit *t, u64 wr_id, u32 len)
{
	struct uw *v = t->priv;
	struct ib_sge sge = {
		.addr = (uintptr_t)v->buf, .length = len,
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	const struct ib_recv_wr *bad;

	if (v->qp->srq)
		KUNIT_ASSERT_EQ(t, ib_post_srq_recv(v->srq, &wr, &bad), 0);
	else
		KUNIT_ASSERT_EQ(t, ib_post_recv(v->qp, &wr, &bad), 0);
}

/*
 * One packet of UC @op (IB_OPCODE_SEND_FIRST ...) with PSN @psn, carrying
 * @len bytes of v->data from @off, from the QP's peer address to its own
 * (on krwq0 both are the zero GID); a WRITE's RETH points at v->buf.
 */
static void uw_feed(struct kunit *t, u8 op, u32 psn, u32 off, u32 len)
{
	struct uw *v = t->priv;
	struct krwq_qp *qp = to_kqp(v->qp);
	struct krwq_wire_pkt pkt = {
		.opcode = IB_OPCODE_UC | op,
		.dqpn = v->qp->qp_num,
		.psn = psn,
		.va = (uintptr_t)v->buf,
		.rkey = v->pd->unsafe_global_rkey,
		.dma_len = 1500,
		.imm = cpu_to_be32(0xabcd),
		.payload_len = len,
	};

	krwq_resp_wire_uc(qp, &pkt, &qp->attr.ah_attr.grh.dgid,
			  &qp->route.sgid, v->data + off);
}

static u64 uw_counter(struct uw *v, const char *name)
{
	return krwq_test_counter(v->dev, name);
}

/* A SEND in three packets fills one receive WQE and completes it. */
static void uw_send_in_packets(struct kunit *t)
{
	struct uw *v = t->priv;
	struct ib_wc wc;

	uw_qp(t, false);
	uw_recv(t, 1, UW_BUF);
	uw_feed(t, IB_OPCODE_SEND_FIRST, 0, 0, 1024);
	uw_feed(t, IB_OPCODE_SEND_MIDDLE, 1, 1024, 1024);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 0);
	uw_feed(t, IB_OPCODE_SEND_LAST_WITH_IMMEDIATE, 2, 2048, 100);
	KUNIT_ASSERT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 1ull);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(t, wc.byte_len, 2148u);
	KUNIT_EXPECT_TRUE(t, wc.wc_flags & IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(t, be32_to_cpu(wc.ex.imm_data), 0xabcdu);
	KUNIT_EXPECT_EQ(t, wc.src_qp, (u32)UW_PEER_QPN);
	KUNIT_EXPECT_EQ(t, memcmp(v->buf, v->data, 2148), 0);
}

/*
 * A missing packet drops its message and nothing else: the receive WQE
 * the message had taken fills with the next SEND, as an HCA reuses it,
 * and the next WQE stays posted (it is flushed at ERR, after).
 */
static void uw_loss_drops_message(struct kunit *t)
{
	struct uw *v = t->priv;
	u64 dropped = uw_counter(v, "rx_dropped");
	struct ib_wc wc[2];

	uw_qp(t, false);
	uw_recv(t, 1, UW_BUF);
	uw_recv(t, 2, UW_BUF);
	uw_feed(t, IB_OPCODE_SEND_FIRST, 0, 0, 1024);
	/* PSN 1 lost */
	uw_feed(t, IB_OPCODE_SEND_LAST, 2, 2048, 10);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->cq, 1, wc), 0);
	KUNIT_EXPECT_EQ(t, uw_counter(v, "rx_dropped"), dropped + 1);
	/* the next message's first packet lost: its others are dropped too */
	uw_feed(t, IB_OPCODE_SEND_MIDDLE, 4, 1024, 1024);
	uw_feed(t, IB_OPCODE_SEND_LAST, 5, 2048, 10);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->cq, 1, wc), 0);
	uw_feed(t, IB_OPCODE_SEND_FIRST, 6, 100, 1024);
	uw_feed(t, IB_OPCODE_SEND_LAST, 7, 1124, 20);
	KUNIT_ASSERT_EQ(t, ib_poll_cq(v->cq, 1, wc), 1);
	KUNIT_EXPECT_EQ(t, wc[0].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc[0].wr_id, 1ull);
	KUNIT_EXPECT_EQ(t, wc[0].byte_len, 1044u);
	KUNIT_EXPECT_EQ(t, memcmp(v->buf, v->data + 100, 1044), 0);
	/* a first packet while a message is in progress drops that one */
	uw_feed(t, IB_OPCODE_SEND_FIRST, 8, 0, 1024);
	uw_feed(t, IB_OPCODE_SEND_ONLY, 9, 300, 30);
	KUNIT_ASSERT_EQ(t, ib_poll_cq(v->cq, 1, wc), 1);
	KUNIT_EXPECT_EQ(t, wc[0].wr_id, 2ull);
	KUNIT_EXPECT_EQ(t, wc[0].byte_len, 30u);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->cq, 1, wc), 0);
}

/*
 * A move to ERR completes the WQE a message in progress holds, flushed,
 * before the WQEs posted after it.
 */
static void uw_err_flushes_held_first(struct kunit *t)
{
	struct uw *v = t->priv;
	struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };
	struct ib_wc wc[3];

	uw_qp(t, false);
	uw_recv(t, 1, UW_BUF);
	uw_recv(t, 2, UW_BUF);
	uw_feed(t, IB_OPCODE_SEND_FIRST, 0, 0, 1024);
	KUNIT_ASSERT_EQ(t, ib_modify_qp(v->qp, &a, IB_QP_STATE), 0);
	KUNIT_ASSERT_EQ(t, ib_poll_cq(v->cq, 3, wc), 2);
	KUNIT_EXPECT_EQ(t, wc[0].wr_id, 1ull);
	KUNIT_EXPECT_EQ(t, wc[0].status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(t, wc[1].wr_id, 2ull);
	KUNIT_EXPECT_EQ(t, wc[1].status, IB_WC_WR_FLUSH_ERR);
	/* in ERR nothing is delivered */
	uw_feed(t, IB_OPCODE_SEND_LAST, 1, 0, 10);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->cq, 1, wc), 0);
}

/*
 * A RESET discards a QP's own ring, but an SRQ's WQE held by a message in
 * progress is the SRQ's: it completes flushed, not lost.
 */
static void uw_reset_returns_srq_wqe(struct kunit *t)
{
	struct uw *v = t->priv;
	struct ib_qp_attr a = { .qp_state = IB_QPS_RESET };
	struct ib_wc wc;

	uw_qp(t, true);
	uw_recv(t, 5, UW_BUF);
	uw_feed(t, IB_OPCODE_SEND_FIRST, 0, 0, 1024);
	KUNIT_ASSERT_EQ(t, ib_modify_qp(v->qp, &a, IB_QP_STATE), 0);
	KUNIT_ASSERT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 5ull);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_WR_FLUSH_ERR);
}

/*
 * An RDMA WRITE in two packets lands where its RETH points, and its
 * immediate completes a receive WQE; one with a packet missing writes
 * no completion.
 */
static void uw_write_in_packets(struct kunit *t)
{
	struct uw *v = t->priv;
	u64 dropped = uw_counter(v, "rx_dropped");
	struct ib_wc wc;

	uw_qp(t, false);
	uw_recv(t, 3, 16);
	uw_feed(t, IB_OPCODE_RDMA_WRITE_FIRST, 0, 0, 1024);
	uw_feed(t, IB_OPCODE_RDMA_WRITE_LAST_WITH_IMMEDIATE, 1, 1024, 476);
	KUNIT_ASSERT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 3ull);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_RECV_RDMA_WITH_IMM);
	KUNIT_EXPECT_EQ(t, wc.byte_len, 1500u);
	KUNIT_EXPECT_EQ(t, memcmp(v->buf, v->data, 1500), 0);
	/* its last packet lost: the next WRITE's first drops it */
	uw_recv(t, 4, 16);
	uw_feed(t, IB_OPCODE_RDMA_WRITE_FIRST, 2, 0, 1024);
	uw_feed(t, IB_OPCODE_RDMA_WRITE_FIRST, 4, 0, 1024);
	KUNIT_EXPECT_EQ(t, uw_counter(v, "rx_dropped"), dropped + 1);
	/* and one longer than its RETH is dropped at the packet past it */
	uw_feed(t, IB_OPCODE_RDMA_WRITE_MIDDLE, 5, 0, 1024);
	KUNIT_EXPECT_EQ(t, uw_counter(v, "rx_dropped"), dropped + 2);
	uw_feed(t, IB_OPCODE_RDMA_WRITE_LAST_WITH_IMMEDIATE, 6, 0, 10);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 0);
}

/* Packets not from the QP's peer, or outside any message, are dropped. */
static void uw_strays_dropped(struct kunit *t)
{
	struct uw *v = t->priv;
	u64 dropped = uw_counter(v, "wire_rx_dropped");
	struct krwq_qp *qp;
	struct krwq_wire_pkt pkt = {
		.opcode = IB_OPCODE_UC_SEND_ONLY, .payload_len = 4,
	};
	union ib_gid other = { .raw = { 0xfe, 0x80, [15] = 9 } };
	struct ib_wc wc;

	uw_qp(t, false);
	qp = to_kqp(v->qp);
	uw_recv(t, 1, UW_BUF);
	krwq_resp_wire_uc(qp, &pkt, &other, &qp->route.sgid, v->data);
	KUNIT_EXPECT_EQ(t, uw_counter(v, "wire_rx_dropped"), dropped + 1);
	uw_feed(t, IB_OPCODE_SEND_MIDDLE, 0, 0, 1024);
	KUNIT_EXPECT_EQ(t, uw_counter(v, "wire_rx_dropped"), dropped + 2);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 0);
	/* the WQE is still there for a message that is whole */
	uw_feed(t, IB_OPCODE_SEND_ONLY, 1, 0, 8);
	KUNIT_ASSERT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 1ull);
}

static struct kunit_case krwq_uc_wire_cases[] = {
	KUNIT_CASE(uw_send_in_packets),
	KUNIT_CASE(uw_loss_drops_message),
	KUNIT_CASE(uw_err_flushes_held_first),
	KUNIT_CASE(uw_reset_returns_srq_wqe),
	KUNIT_CASE(uw_write_in_packets),
	KUNIT_CASE(uw_strays_dropped),
	{}
};

static struct kunit_suite krwq_uc_wire_suite = {
	.name = "krwq_uc_wire",
	.init = uw_init,
	.exit = uw_exit,
	.test_cases = krwq_uc_wire_cases,
};

kunit_test_suite(krwq_uc_wire_suite);
