// SPDX-License-Identifier: GPL-2.0
/*
 * rc_wire_suite.c - the KUnit suites "krwq_rc_req" and "krwq_rc_resp"
 * (module krwq_kunit_rc): an RC QP on the wire whose peer the test plays,
 * so that a packet comes exactly where a case puts it.  The QP is
 * connected to a peer address where no QP answers.
 *  - krwq_rc_req: its requester (module/req.c, module/wire_req.c) sends
 *    a SEND, or several behind one another, and its completer
 *    (module/comp.c) takes the answers the test makes by hand
 *    (krwq_wire_answer());
 *  - krwq_rc_resp: its responder (module/wire_resp.c) takes requests the
 *    test makes by hand (krwq_resp_wire_rc()): duplicates and packets out
 *    of sequence.  Its answers go to the peer address and vanish; the
 *    device's counters tell how many went.
 * The guest gives the device and the addresses (scripts/guest/wire.sh):
 *   rc_dev=NAME    a netdev-bound krwq device with the wire;
 *   rc_src=IP      the IPv4 address its netdev holds;
 *   rc_peer=IP     an IPv4 address its netdev reaches (ARP answers for it).
 * Without them every case is skipped.
 */
#include <kunit/test.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_pack.h>
#include <rdma/ib_verbs.h>

#include "../module/krwq.h"
#include "../module/resp.h"
#include "../module/sq.h"
#include "../module/wire.h"
#include "counter.h"
#include "qp_state.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

static char *rc_dev = "";
module_param(rc_dev, charp, 0444);
MODULE_PARM_DESC(rc_dev, "a netdev-bound krwq device with the wire");

static char *rc_src = "";
module_param(rc_src, charp, 0444);
MODULE_PARM_DESC(rc_src, "the IPv4 address rc_dev's netdev holds");

static char *rc_peer = "";
module_param(rc_peer, charp, 0444);
MODULE_PARM_DESC(rc_peer, "an IPv4 address rc_dev's netdev reaches, where no QP answers");

#define RW_LEN		4096	/* four packets at the path MTU of 1024 */
#define RW_PEER_QPN	0xabcde	/* no QP of the peer's has it */
#define RW_SQ_PSN	100
#define RW_SEND_LEN	16	/* a SEND's payload */
#define RW_READ_LEN	2048	/* a READ's: two responses */
#define RW_MTU		1024	/* the path MTU (rw_connect()) */
#define RW_ATOMIC_ORIG	0x0123456789abcdefULL	/* what the peer answers */

struct rw {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_mr *mr;	/* over target, for the peer's READs and atomics */
	struct scatterlist sg;
	bool mapped;	/* sg */
	u8 *buf;	/* the receive WQEs' */
	u8 *target;	/* one page */
	union ib_gid src, peer;	/* IPv4-mapped */
};

static int rw_gid(const char *ip, union ib_gid *gid)
{
	__be32 a;

	if (!in4_pton(ip, -1, (u8 *)&a, -1, NULL))
		return -EINVAL;
	ipv6_addr_set_v4mapped(a, (struct in6_addr *)gid->raw);
	return 0;
}

static int rw_init(struct kunit *t)
{
	struct ib_cq_init_attr cq_attr = { .cqe = 8 };
	struct ib_device *d;
	struct rw *v;

	v = kunit_kzalloc(t, sizeof(*v), GFP_KERNEL);
	if (!v)
		return -ENOMEM;
	t->priv = v;
	if (!*rc_dev || rw_gid(rc_src, &v->src) || rw_gid(rc_peer, &v->peer))
		return 0;
	d = ib_device_get_by_name(rc_dev, RDMA_DRIVER_UNKNOWN);
	/* only a device of krwq.ko may be looked into as one */
	if (d && (!d->ops.owner || strcmp(module_name(d->ops.owner), "krwq") ||
		  !to_kdev(d)->wire)) {
		ib_device_put(d);
		d = NULL;
	}
	if (!d)
		return 0;
	v->dev = d;
	v->buf = kunit_kzalloc(t, RW_LEN, GFP_KERNEL);
	v->target = kunit_kzalloc(t, PAGE_SIZE, GFP_KERNEL);
	v->pd = ib_alloc_pd(d, 0);
	if (!v->buf || !v->target || IS_ERR(v->pd))
		return -ENOMEM;
	v->cq = ib_create_cq(d, NULL, NULL, v, &cq_attr);
	return PTR_ERR_OR_ZERO(v->cq);
}

static void rw_exit(struct kunit *t)
{
	struct rw *v = t->priv;

	if (!v || !v->dev)
		return;
	if (!IS_ERR_OR_NULL(v->qp))
		ib_destroy_qp(v->qp);
	if (v->mapped)
		ib_dma_unmap_sg(v->dev, &v->sg, 1, DMA_BIDIRECTIONAL);
	if (!IS_ERR_OR_NULL(v->mr))
		ib_dereg_mr(v->mr);
	if (!IS_ERR_OR_NULL(v->cq))
		ib_destroy_cq(v->cq);
	if (!IS_ERR_OR_NULL(v->pd))
		ib_dealloc_pd(v->pd);
	ib_device_put(v->dev);
}

/* INIT, RTR and RTS for @qp, to RW_PEER_QPN at rc_peer. */
static int rw_connect(struct rw *v, struct ib_qp *qp)
{
	const struct ib_gid_attr *sgid;
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT, .port_num = 1,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE |
				   IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC,
	};
	int ret;

	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	sgid = rdma_find_gid_by_port(v->dev, &v->src,
				     IB_GID_TYPE_ROCE_UDP_ENCAP, 1, NULL);
	if (IS_ERR(sgid))
		return PTR_ERR(sgid);
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = RW_PEER_QPN;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&a.ah_attr, 1);
	rdma_ah_set_grh(&a.ah_attr, &v->peer, 0, sgid->index, 64, 0);
	ret = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	rdma_put_gid_attr(sgid);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = RW_SQ_PSN;
	/*
	 * about 1 s: no case answers that late, so no ACK timeout resends
	 * under a case's feet on a slow (TCG, KASAN) guest
	 */
	a.timeout = 18;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_SQ_PSN |
			    IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
			    IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC);
}

/*
 * v->mr: a fast-registration region over v->target for the peer's READs,
 * WRITEs and atomics, registered by a REG_MR on @qp (a local WQE: no packet).
 */
static void rw_register(struct kunit *t, struct ib_qp *qp)
{
	struct rw *v = t->priv;
	struct ib_reg_wr wr = {
		.wr = { .wr_id = 9, .opcode = IB_WR_REG_MR },
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ |
			  IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC,
	};
	const struct ib_send_wr *bad;
	struct ib_wc wc;

	v->mr = ib_alloc_mr(v->pd, IB_MR_TYPE_MEM_REG, 1);
	KUNIT_ASSERT_FALSE(t, IS_ERR(v->mr));
	sg_init_one(&v->sg, v->target, PAGE_SIZE);
	v->mapped = ib_dma_map_sg(v->dev, &v->sg, 1, DMA_BIDIRECTIONAL) == 1;
	KUNIT_ASSERT_TRUE(t, v->mapped);
	KUNIT_ASSERT_EQ(t, ib_map_mr_sg(v->mr, &v->sg, 1, NULL, PAGE_SIZE), 1);
	wr.mr = v->mr;
	wr.key = v->mr->rkey;
	KUNIT_ASSERT_EQ(t, ib_post_send(qp, &wr.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 1);
	KUNIT_ASSERT_EQ(t, wc.status, IB_WC_SUCCESS);
}

/* The packets rc_dev has sent, or tried to. */
static u64 rw_packets(struct rw *v)
{
	return krwq_test_counter(v->dev, "wire_tx_packets") +
	       krwq_test_counter(v->dev, "wire_tx_dropped");
}

/* One SGE over v->buf, all RW_LEN bytes, through the local DMA lkey. */
static struct ib_sge rw_buf_sge(struct rw *v)
{
	return (struct ib_sge){
		.addr = (uintptr_t)v->buf, .length = RW_LEN,
		.lkey = v->pd->local_dma_lkey,
	};
}

/*
 * An RC QP of rc_dev's in RTS, connected to RW_PEER_QPN at rc_peer: it
 * sends from PSN RW_SQ_PSN and expects PSN 0, with v->mr registered and
 * two receive WQEs posted (wr_id 1 and 2, RW_LEN bytes each, into v->buf).
 */
static struct krwq_qp *rw_qp(struct kunit *t)
{
	struct rw *v = t->priv;
	struct ib_qp_init_attr init = {
		.send_cq = v->cq, .recv_cq = v->cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_ALL_WR, .qp_type = IB_QPT_RC,
	};
	struct ib_sge sge = rw_buf_sge(v);
	struct ib_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 };
	const struct ib_recv_wr *bad;
	struct krwq_qp *qp;

	if (!*rc_dev)
		kunit_skip(t, "no rc_dev given");
	KUNIT_ASSERT_NOT_NULL_MSG(t, v->dev,
				  "rc_dev=%s is no krwq device with the wire, or rc_src=%s or rc_peer=%s is no IPv4 address",
				  rc_dev, rc_src, rc_peer);
	v->qp = ib_create_qp(v->pd, &init);
	KUNIT_ASSERT_FALSE(t, IS_ERR(v->qp));
	KUNIT_ASSERT_EQ(t, rw_connect(v, v->qp), 0);
	qp = to_kqp(v->qp);
	KUNIT_ASSERT_TRUE_MSG(t, qp->route.dest == KRWQ_NO_DEST,
			      "rc_peer=%s is reached without the wire", rc_peer);
	rw_register(t, v->qp);
	for (rwr.wr_id = 1; rwr.wr_id <= 2; rwr.wr_id++)
		KUNIT_ASSERT_EQ(t, ib_post_recv(v->qp, &rwr, &bad), 0);
	return qp;
}

/* rw_qp(), which has just sent a SEND of RW_LEN bytes (wr_id 7). */
static struct krwq_qp *rw_sent(struct kunit *t)
{
	struct krwq_qp *qp = rw_qp(t);
	struct rw *v = t->priv;
	struct ib_sge sge = rw_buf_sge(v);
	struct ib_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND,
	};
	const struct ib_send_wr *bad;

	KUNIT_ASSERT_EQ(t, ib_post_send(v->qp, &wr, &bad), 0);
	/* the post's run sent it, in four packets */
	KUNIT_ASSERT_EQ(t, qp->wire_req.await, KRWQ_WIRE_AWAIT_ANSWER);
	KUNIT_EXPECT_EQ(t, qp->wire_req.first_psn, RW_SQ_PSN);
	KUNIT_EXPECT_EQ(t, qp->wire_req.last_psn, RW_SQ_PSN + 3);
	return qp;
}

/* An acknowledgment from the peer, with AETH @syndrome, of @psn. */
static void rw_answer(struct krwq_qp *qp, u8 syndrome, u32 psn)
{
	struct krwq_wire_pkt pkt = {
		.opcode = IB_OPCODE_RC_ACKNOWLEDGE,
		.pkey = IB_DEFAULT_PKEY_FULL,
		.dqpn = qp->ibqp.qp_num,
		.psn = psn,
		.syndrome = syndrome,
	};

	krwq_wire_answer(qp, &pkt, &qp->attr.ah_attr.grh.dgid,
			 &qp->route.sgid, NULL);
}

/*
 * A PSN sequence error NAK has the SEND going again from its third
 * packet, and the ACK of its last PSN comes before it went: the
 * responder had the whole message by then (a duplicate of the missing
 * packet filled the gap).  That ACK completes the SEND; the ACK of an
 * earlier PSN, which the responder sends before a NAK and which may come
 * after it, does not.  Before, any answer that came while the SEND was
 * not waiting for one was dropped: the SEND went again, and a peer gone
 * meanwhile (a pingpong that had its last message) left it to fail with
 * RETRY_EXC_ERR.  Both answers come with bottom halves off on this CPU,
 * so send_work, which the NAK queued here, has not run in between.
 */
static void rw_late_ack_after_nak(struct kunit *t)
{
	struct krwq_qp *qp = rw_sent(t);
	struct rw *v = t->priv;
	int before, after;
	struct ib_wc wc;

	local_bh_disable();
	rw_answer(qp, KRWQ_AETH_NAK | KRWQ_NAK_PSN_SEQ_ERR, RW_SQ_PSN + 2);
	rw_answer(qp, KRWQ_AETH_ACK | KRWQ_AETH_CREDITS_UNLIMITED,
		  RW_SQ_PSN + 1);
	before = ib_poll_cq(v->cq, 1, &wc);
	rw_answer(qp, KRWQ_AETH_ACK | KRWQ_AETH_CREDITS_UNLIMITED,
		  RW_SQ_PSN + 3);
	after = ib_poll_cq(v->cq, 1, &wc);
	local_bh_enable();
	KUNIT_EXPECT_EQ(t, before, 0);
	KUNIT_ASSERT_EQ(t, after, 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 7);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_SEND);
	KUNIT_EXPECT_EQ(t, qp->wire_req.first_psn, RW_SQ_PSN + 4);
	KUNIT_EXPECT_FALSE(t, qp->wire_req.sent);
	/* send_work finds nothing to send: no completion comes twice */
	msleep(20);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 0);
}

/* The atomic acknowledgment of @psn from the peer, with the value before. */
static void rw_atomic_ack(struct krwq_qp *qp, u32 psn)
{
	struct krwq_wire_pkt pkt = {
		.opcode = IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE,
		.pkey = IB_DEFAULT_PKEY_FULL,
		.dqpn = qp->ibqp.qp_num,
		.psn = psn,
		.syndrome = KRWQ_AETH_ACK | KRWQ_AETH_CREDITS_UNLIMITED,
		.orig = RW_ATOMIC_ORIG,
	};

	krwq_wire_answer(qp, &pkt, &qp->attr.ah_attr.grh.dgid,
			 &qp->route.sgid, NULL);
}

/*
 * rw_qp(), which has just sent a FETCH_ADD (wr_id 7, PSN RW_SQ_PSN) whose
 * result goes to v->buf's first 8 bytes, zeroed; *@packets is the
 * packets sent before.  No send_work of the QP's still runs.
 */
static struct krwq_qp *rw_sent_atomic(struct kunit *t, u64 *packets)
{
	struct krwq_qp *qp = rw_qp(t);
	struct rw *v = t->priv;
	struct ib_sge sge = {
		.addr = (uintptr_t)v->buf, .length = sizeof(u64),
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_atomic_wr wr = {
		.wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_ATOMIC_FETCH_AND_ADD },
		.remote_addr = 0x1000, .compare_add = 1, .rkey = 0x100,
	};
	const struct ib_send_wr *bad;

	memset(v->buf, 0, sizeof(u64));
	*packets = rw_packets(v);
	KUNIT_ASSERT_EQ(t, ib_post_send(v->qp, &wr.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, qp->wire_req.await, KRWQ_WIRE_AWAIT_ANSWER);
	KUNIT_EXPECT_EQ(t, rw_packets(v), *packets + 1);
	flush_work(&qp->send_work);
	return qp;
}

/*
 * @qp's local ACK timeout, about a second away (rw_connect()), run now.
 * With bottom halves off, the send_work it queues on this CPU waits until
 * they are on again.  Return: false if the timeout was not pending.
 */
static bool rw_time_out(struct krwq_qp *qp)
{
	if (!del_timer(&qp->sq_timer))
		return false;
	qp->sq_timer.function(&qp->sq_timer);
	return true;
}

/*
 * Plays a run of @qp's send queue under way (@running) or over: req.c's
 * sq_running, under s_lock.  While it is set no run of send_work's takes
 * the queue.
 */
static void rw_mark_run(struct krwq_qp *qp, bool running)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->s_lock, flags);
	WRITE_ONCE(qp->sq_running, running);
	spin_unlock_irqrestore(&qp->s_lock, flags);
}

/* The completion of rw_sent_atomic()'s FETCH_ADD, its result in place. */
static void rw_expect_atomic_done(struct kunit *t)
{
	struct rw *v = t->priv;
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 7);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_FETCH_ADD);
	KUNIT_EXPECT_EQ(t, *(u64 *)v->buf, RW_ATOMIC_ORIG);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 0);
}

/*
 * The atomic acknowledgment of an atomic whose local ACK timeout has it
 * about to go again completes it, its result in place: the responder
 * executed it once and answers every resend from the result it kept, so
 * this is the answer a resend would bring.  Dropped, as it was, an atomic
 * whose answers each came just after its timeout (a round trip near the
 * timeout, as on a loaded host) went again and again until
 * RETRY_EXC_ERR.  An atomic acknowledgment of another PSN is still
 * dropped.  The answers come after the timeout with bottom halves off,
 * so the resend the timeout queued has not run.
 */
static void rw_late_atomic_ack_after_timeout(struct kunit *t)
{
	struct rw *v = t->priv;
	u64 before, dropped;
	bool timed, done;
	unsigned long flags;
	struct krwq_qp *qp;
	struct ib_wc wc;
	int stray;
	u8 await;

	qp = rw_sent_atomic(t, &before);
	dropped = krwq_test_counter(v->dev, "wire_rx_dropped");
	local_bh_disable();
	timed = rw_time_out(qp);
	await = qp->wire_req.await;
	rw_atomic_ack(qp, RW_SQ_PSN + 1);
	stray = ib_poll_cq(v->cq, 1, &wc);
	rw_atomic_ack(qp, RW_SQ_PSN);
	/* completed before send_work could run */
	spin_lock_irqsave(&qp->s_lock, flags);
	done = qp->sq_tail == qp->sq_head;
	spin_unlock_irqrestore(&qp->s_lock, flags);
	local_bh_enable();
	KUNIT_ASSERT_TRUE_MSG(t, timed, "the local ACK timeout was not pending");
	KUNIT_EXPECT_EQ(t, await, KRWQ_WIRE_AWAIT_NONE);
	KUNIT_EXPECT_EQ(t, stray, 0);
	KUNIT_EXPECT_GE(t, krwq_test_counter(v->dev, "wire_rx_dropped"),
			dropped + 1);
	KUNIT_EXPECT_TRUE(t, done);
	rw_expect_atomic_done(t);
	KUNIT_EXPECT_EQ(t, qp->wire_req.first_psn, RW_SQ_PSN + 1);
	KUNIT_EXPECT_EQ(t, qp->ack_tries, 0);
	KUNIT_EXPECT_FALSE(t, qp->wire_req.timed_out);
	/* send_work finds nothing to send: no resend */
	flush_work(&qp->send_work);
	KUNIT_EXPECT_EQ(t, rw_packets(v), before + 1);
}

/*
 * The same while a run of the send queue is about to send the atomic
 * again: the result is written at once, and the run completes the WQE
 * instead of sending it (wire_req.answered), as rw_ack_during_resend_run
 * for a SEND's ACK.
 */
static void rw_late_atomic_ack_during_resend_run(struct kunit *t)
{
	struct rw *v = t->priv;
	unsigned long flags;
	bool timed, answered;
	struct krwq_qp *qp;
	struct ib_wc wc;
	u64 before;
	int polled;

	qp = rw_sent_atomic(t, &before);
	local_bh_disable();
	timed = rw_time_out(qp);
	rw_mark_run(qp, true);
	rw_atomic_ack(qp, RW_SQ_PSN);
	polled = ib_poll_cq(v->cq, 1, &wc);
	spin_lock_irqsave(&qp->s_lock, flags);
	answered = qp->wire_req.answered;
	spin_unlock_irqrestore(&qp->s_lock, flags);
	rw_mark_run(qp, false);
	local_bh_enable();
	KUNIT_ASSERT_TRUE_MSG(t, timed, "the local ACK timeout was not pending");
	KUNIT_EXPECT_EQ(t, polled, 0);
	KUNIT_EXPECT_TRUE(t, answered);
	KUNIT_EXPECT_EQ(t, *(u64 *)v->buf, RW_ATOMIC_ORIG);

	/* send_work's run, now free to go */
	flush_work(&qp->send_work);
	rw_expect_atomic_done(t);
	KUNIT_EXPECT_EQ(t, rw_packets(v), before + 1);
	KUNIT_EXPECT_FALSE(t, qp->wire_req.answered);
}

/*
 * The same while the SEND waits out an RNR NAK (of its first packet,
 * whose duplicate, come after a receive was posted, started the message
 * the responder then completed): the ACK of its last PSN completes it
 * without the wait and the resend.
 */
static void rw_late_ack_in_rnr_wait(struct kunit *t)
{
	struct krwq_qp *qp = rw_sent(t);
	struct rw *v = t->priv;
	struct ib_wc wc;
	int polled;

	local_bh_disable();
	/* timer value 31: 491 ms */
	rw_answer(qp, KRWQ_AETH_RNR_NAK | 31, RW_SQ_PSN);
	rw_answer(qp, KRWQ_AETH_ACK | KRWQ_AETH_CREDITS_UNLIMITED,
		  RW_SQ_PSN + 3);
	polled = ib_poll_cq(v->cq, 1, &wc);
	local_bh_enable();
	KUNIT_ASSERT_EQ(t, polled, 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 7);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_FALSE(t, timer_pending(&qp->sq_timer));
	KUNIT_EXPECT_EQ(t, qp->rnr_tries, 0);
}

/*
 * The ACK of the SEND's last PSN comes, after a PSN sequence error NAK,
 * while a run holds the send queue (sq_running) and has let s_lock go,
 * as a run does every KRWQ_IRQOFF_BYTES of a long message.  The test
 * plays that run: it holds the queue across the ACK, with bottom halves
 * off so that send_work, which the NAK queued on this CPU (krwq_wq is
 * per-CPU), waits; then it lets send_work run the queue.  The ACK is kept
 * (wire_req.answered), and the run that reaches the SEND completes it
 * with it: SUCCESS, once, and not one packet sent again for a message
 * the responder already has.  (An ACK that comes while the run is
 * building the SEND's own packets again is taken after they went; no
 * case here times an ACK into that window.)
 */
static void rw_ack_during_resend_run(struct kunit *t)
{
	struct krwq_qp *qp = rw_sent(t);
	struct rw *v = t->priv;
	unsigned long flags;
	u64 sent_before;
	bool answered;
	int polled;
	struct ib_wc wc;

	/* answers make no packet of the requester's (and this may sleep) */
	sent_before = krwq_test_counter(v->dev, "wire_tx_packets");
	local_bh_disable();
	rw_answer(qp, KRWQ_AETH_NAK | KRWQ_NAK_PSN_SEQ_ERR, RW_SQ_PSN + 2);
	rw_mark_run(qp, true);
	rw_answer(qp, KRWQ_AETH_ACK | KRWQ_AETH_CREDITS_UNLIMITED,
		  RW_SQ_PSN + 3);
	polled = ib_poll_cq(v->cq, 1, &wc);
	spin_lock_irqsave(&qp->s_lock, flags);
	answered = qp->wire_req.answered;
	spin_unlock_irqrestore(&qp->s_lock, flags);
	rw_mark_run(qp, false);
	local_bh_enable();
	KUNIT_EXPECT_EQ(t, polled, 0);
	KUNIT_EXPECT_TRUE(t, answered);

	/* send_work's run, now free to go */
	flush_work(&qp->send_work);
	KUNIT_ASSERT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 7);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, krwq_test_counter(v->dev, "wire_tx_packets"),
			sent_before);
	KUNIT_EXPECT_EQ(t, qp->wire_req.first_psn, RW_SQ_PSN + 4);
	KUNIT_EXPECT_FALSE(t, qp->wire_req.answered);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 0);
}

/*
 * PSN sequence error NAKs of the SEND that each name a later PSN than the
 * one before: each says the responder took more of the message, so each
 * resend is progress, and its tries start again (retry_cnt bounds the
 * tries in a row that got no further).  Counted all against retry_cnt, a
 * long message through a lossy link failed with RETRY_EXC_ERR while its
 * peer was there and taking it: 128 packets (an NVMe-oF transfer of
 * 128 KiB at the path MTU of 1024) through 3% loss see about four NAKs,
 * and retry_cnt is 7.  A NAK of the same PSN again is no progress, and
 * is counted.  The case sets retry_cnt to 1 (one try without progress)
 * and a longer timeout by hand: the QP is in RTS, where a modify cannot
 * change them.
 */
static void rw_naks_with_progress_not_counted(struct kunit *t)
{
	struct krwq_qp *qp = rw_sent(t);
	struct rw *v = t->priv;
	unsigned long flags;
	struct ib_wc wc = {};
	u32 psn;

	spin_lock_irqsave(&qp->s_lock, flags);
	qp->attr.retry_cnt = 1;
	/* about 17 s: no timeout of its own between the NAKs, however slow */
	qp->attr.timeout = 22;
	spin_unlock_irqrestore(&qp->s_lock, flags);
	for (psn = RW_SQ_PSN + 1; psn <= RW_SQ_PSN + 3; psn++) {
		rw_answer(qp, KRWQ_AETH_NAK | KRWQ_NAK_PSN_SEQ_ERR, psn);
		/* the resend, from @psn */
		flush_work(&qp->send_work);
		KUNIT_ASSERT_EQ_MSG(t, ib_poll_cq(v->cq, 1, &wc), 0,
				    "completed (status %d) at the NAK of PSN +%u",
				    wc.status, psn - RW_SQ_PSN);
		KUNIT_EXPECT_EQ(t, qp->wire_req.await, KRWQ_WIRE_AWAIT_ANSWER);
		KUNIT_EXPECT_EQ(t, qp->ack_tries, 1);
	}
	rw_answer(qp, KRWQ_AETH_NAK | KRWQ_NAK_PSN_SEQ_ERR, RW_SQ_PSN + 3);
	flush_work(&qp->send_work);
	KUNIT_ASSERT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 7);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_RETRY_EXC_ERR);
}

/*
 * A response of an RDMA READ from the peer, the @len bytes at @payload
 * (all but a middle one with an ACK's AETH, as the peer sends them).
 * It allocates nothing, so bottom halves may be off.
 */
static void rw_read_resp_of(struct krwq_qp *qp, u8 op, u32 psn,
			    const u8 *payload, u32 len)
{
	struct krwq_wire_pkt pkt = {
		.opcode = op,
		.pkey = IB_DEFAULT_PKEY_FULL,
		.dqpn = qp->ibqp.qp_num,
		.psn = psn,
		.syndrome = KRWQ_AETH_ACK | KRWQ_AETH_CREDITS_UNLIMITED,
		.payload_len = len,
	};

	krwq_wire_answer(qp, &pkt, &qp->attr.ah_attr.grh.dgid,
			 &qp->route.sgid, payload);
}

/* rw_read_resp_of() with @len bytes of @fill. */
static void rw_read_resp(struct kunit *t, struct krwq_qp *qp, u8 op,
			 u32 psn, u32 len, u8 fill)
{
	u8 *payload = kunit_kzalloc(t, len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(t, payload);
	memset(payload, fill, len);
	rw_read_resp_of(qp, op, psn, payload, len);
}

/*
 * rw_qp(), which has just sent an RDMA READ of RW_READ_LEN bytes into
 * v->buf, zeroed (wr_id 8, PSNs RW_SQ_PSN and RW_SQ_PSN + 1 for its two
 * responses); *@packets is the packets sent before.  No send_work of the
 * QP's still runs.
 */
static struct krwq_qp *rw_sent_read(struct kunit *t, u64 *packets)
{
	struct krwq_qp *qp = rw_qp(t);
	struct rw *v = t->priv;
	struct ib_sge sge = {
		.addr = (uintptr_t)v->buf, .length = RW_READ_LEN,
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 8, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_RDMA_READ },
		.remote_addr = 0x10000, .rkey = 0x1234,
	};
	const struct ib_send_wr *bad;

	memset(v->buf, 0, RW_READ_LEN);
	*packets = rw_packets(v);
	KUNIT_ASSERT_EQ(t, ib_post_send(v->qp, &wr.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, qp->wire_req.await, KRWQ_WIRE_AWAIT_ANSWER);
	KUNIT_EXPECT_EQ(t, qp->wire_req.last_psn, RW_SQ_PSN + 1);
	KUNIT_EXPECT_EQ(t, rw_packets(v), *packets + 1);
	flush_work(&qp->send_work);
	return qp;
}

/*
 * The responses of a READ whose local ACK timeout has it about to go
 * again are taken, each when it is the one expected next: its data lands,
 * and the last completes the READ, with no resend.  Dropped, as they
 * were, a READ whose responses came just after its timeout (a round trip
 * near the timeout, as on a loaded host) went again and again until
 * RETRY_EXC_ERR, as atomics did.  A response past the one expected (the
 * last before the first) is still dropped, and so is the one expected
 * when it would end the READ without being its last.  They come after
 * the timeout with bottom halves off, so the resend the timeout queued
 * has not run.
 */
static void rw_late_read_resp_after_timeout(struct kunit *t)
{
	struct rw *v = t->priv;
	u8 *first = kunit_kzalloc(t, RW_READ_LEN, GFP_KERNEL);
	u8 *last = kunit_kzalloc(t, RW_MTU, GFP_KERNEL);
	u64 before, dropped;
	bool timed, done;
	unsigned long flags;
	struct krwq_qp *qp;
	struct ib_wc wc;
	u32 off;
	u8 await;

	KUNIT_ASSERT_NOT_NULL(t, first);
	KUNIT_ASSERT_NOT_NULL(t, last);
	memset(first, 'a', RW_READ_LEN);
	memset(last, 'b', RW_MTU);
	qp = rw_sent_read(t, &before);
	dropped = krwq_test_counter(v->dev, "wire_rx_dropped");
	local_bh_disable();
	timed = rw_time_out(qp);
	await = qp->wire_req.await;
	rw_read_resp_of(qp, IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST,
			RW_SQ_PSN + 1, last, RW_MTU);
	rw_read_resp_of(qp, IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST, RW_SQ_PSN,
			first, RW_READ_LEN);
	rw_read_resp_of(qp, IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST, RW_SQ_PSN,
			first, RW_MTU);
	spin_lock_irqsave(&qp->s_lock, flags);
	off = qp->wire_req.read_off;
	spin_unlock_irqrestore(&qp->s_lock, flags);
	rw_read_resp_of(qp, IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST,
			RW_SQ_PSN + 1, last, RW_MTU);
	/* completed before send_work could run */
	spin_lock_irqsave(&qp->s_lock, flags);
	done = qp->sq_tail == qp->sq_head;
	spin_unlock_irqrestore(&qp->s_lock, flags);
	local_bh_enable();
	KUNIT_ASSERT_TRUE_MSG(t, timed, "the local ACK timeout was not pending");
	KUNIT_EXPECT_EQ(t, await, KRWQ_WIRE_AWAIT_NONE);
	KUNIT_EXPECT_GE(t, krwq_test_counter(v->dev, "wire_rx_dropped"),
			dropped + 2);
	KUNIT_EXPECT_EQ(t, off, RW_MTU);
	KUNIT_EXPECT_TRUE(t, done);
	KUNIT_ASSERT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 8);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_RDMA_READ);
	KUNIT_EXPECT_EQ(t, v->buf[0], 'a');
	KUNIT_EXPECT_EQ(t, v->buf[RW_MTU - 1], 'a');
	KUNIT_EXPECT_EQ(t, v->buf[RW_MTU], 'b');
	KUNIT_EXPECT_EQ(t, v->buf[RW_READ_LEN - 1], 'b');
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 0);
	KUNIT_EXPECT_EQ(t, qp->wire_req.first_psn, RW_SQ_PSN + 2);
	KUNIT_EXPECT_FALSE(t, qp->wire_req.timed_out);
	/* send_work finds nothing to send: no resend */
	flush_work(&qp->send_work);
	KUNIT_EXPECT_EQ(t, rw_packets(v), before + 1);
}

/*
 * A READ response that is not the last but fills the READ to its end
 * breaks the protocol (a last response carries at least a byte): the
 * READ fails with BAD_RESP_ERR.  Taken, as it was, it left the READ
 * waiting for a last response with nothing left to carry, and the
 * resend after its timeout asked for no bytes.
 */
static void rw_read_resp_filling_not_last_fails(struct kunit *t)
{
	struct rw *v = t->priv;
	struct krwq_qp *qp;
	struct ib_wc wc;
	u64 before;

	qp = rw_sent_read(t, &before);
	rw_read_resp(t, qp, IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST, RW_SQ_PSN,
		     RW_READ_LEN, 'a');
	KUNIT_ASSERT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 8);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_BAD_RESP_ERR);
}

/*
 * A READ's response that comes while a run of the send queue is about to
 * send the READ again is dropped: the head is the run's while it is
 * under way (sq_running).  Its data does not land, and the resend asks
 * for the whole READ.
 */
static void rw_late_read_resp_during_resend_run(struct kunit *t)
{
	struct rw *v = t->priv;
	u8 *first = kunit_kzalloc(t, RW_MTU, GFP_KERNEL);
	unsigned long flags;
	struct krwq_qp *qp;
	u64 before;
	bool timed;
	u32 off;

	KUNIT_ASSERT_NOT_NULL(t, first);
	memset(first, 'a', RW_MTU);
	qp = rw_sent_read(t, &before);
	local_bh_disable();
	timed = rw_time_out(qp);
	rw_mark_run(qp, true);
	rw_read_resp_of(qp, IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST, RW_SQ_PSN,
			first, RW_MTU);
	spin_lock_irqsave(&qp->s_lock, flags);
	off = qp->wire_req.read_off;
	spin_unlock_irqrestore(&qp->s_lock, flags);
	rw_mark_run(qp, false);
	local_bh_enable();
	KUNIT_ASSERT_TRUE_MSG(t, timed, "the local ACK timeout was not pending");
	KUNIT_EXPECT_EQ(t, off, 0);
	KUNIT_EXPECT_EQ(t, v->buf[0], 0);
	/* send_work's run, now free to go: the whole READ again */
	flush_work(&qp->send_work);
	KUNIT_EXPECT_EQ(t, rw_packets(v), before + 2);
	KUNIT_EXPECT_EQ(t, qp->wire_req.await, KRWQ_WIRE_AWAIT_ANSWER);
	KUNIT_EXPECT_EQ(t, qp->wire_req.next_resp, RW_SQ_PSN);
}

/*
 * The request krwq_wire_read_rest() builds for the READ at sq_tail: an
 * RDMA READ request with PSN @psn for @len bytes from @va under @rkey.
 */
static void rw_expect_read_rest(struct kunit *t, struct krwq_qp *qp, u32 psn,
				u64 va, u32 rkey, u32 len)
{
	struct krwq_wire_pkt pkt = {};
	struct sk_buff_head out;
	struct sk_buff *skb;
	unsigned long flags;
	int hlen;

	__skb_queue_head_init(&out);
	spin_lock_irqsave(&qp->s_lock, flags);
	krwq_wire_read_rest(qp, krwq_sq_entry(qp, qp->sq_tail), &out);
	spin_unlock_irqrestore(&qp->s_lock, flags);
	skb = __skb_dequeue(&out);
	KUNIT_ASSERT_NOT_NULL(t, skb);
	KUNIT_EXPECT_TRUE(t, skb_queue_empty(&out));
	__skb_queue_purge(&out);
	hlen = krwq_wire_parse(&pkt, skb->data, skb->len);
	kfree_skb(skb);
	KUNIT_ASSERT_GT(t, hlen, 0);
	KUNIT_EXPECT_EQ(t, pkt.opcode, IB_OPCODE_RC_RDMA_READ_REQUEST);
	KUNIT_EXPECT_EQ(t, pkt.psn, psn);
	KUNIT_EXPECT_EQ(t, pkt.va, va);
	KUNIT_EXPECT_EQ(t, pkt.rkey, rkey);
	KUNIT_EXPECT_EQ(t, pkt.dma_len, len);
}

/*
 * An RDMA READ of three responses whose local ACK timeout runs out after
 * the first came: the resend asks for the rest only (a READ request from
 * the response expected next, for the bytes still missing), and each
 * response that then comes is progress, so the READ's tries start again.
 * Before, the resend asked for the whole READ again: its responses came
 * again from the first, and a long READ through a lossy link (an
 * NVMe-oF target's READ of a 128 KiB write, 128 responses) had its
 * peer send it over and over.
 */
static void rw_read_resend_asks_for_rest(struct kunit *t)
{
	struct krwq_qp *qp = rw_qp(t);
	struct rw *v = t->priv;
	struct ib_sge sge = {
		.addr = (uintptr_t)v->buf, .length = 3 * RW_MTU,
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 8, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_RDMA_READ },
		.remote_addr = 0x10000,
		.rkey = 0x1234,
	};
	const struct ib_send_wr *bad;
	struct ib_wc wc = {};
	int ms;

	memset(v->buf, 0, 3 * RW_MTU);
	KUNIT_ASSERT_EQ(t, ib_post_send(v->qp, &wr.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, qp->wire_req.await, KRWQ_WIRE_AWAIT_ANSWER);
	KUNIT_EXPECT_EQ(t, qp->wire_req.last_psn, RW_SQ_PSN + 2);
	rw_read_resp(t, qp, IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST, RW_SQ_PSN,
		     RW_MTU, 'a');
	KUNIT_ASSERT_EQ(t, qp->wire_req.read_off, RW_MTU);
	/* the resend asks for the last two responses' bytes, and no more */
	rw_expect_read_rest(t, qp, RW_SQ_PSN + 1, wr.remote_addr + RW_MTU,
			    wr.rkey, 2 * RW_MTU);
	/* the timeout (18: about 1.07 s) runs out and the READ goes again */
	for (ms = 0; ms < 10000 && !READ_ONCE(qp->ack_tries); ms += 50)
		msleep(50);
	flush_work(&qp->send_work);
	KUNIT_ASSERT_GE(t, qp->ack_tries, 1);
	KUNIT_EXPECT_EQ(t, qp->wire_req.read_off, RW_MTU);
	KUNIT_EXPECT_EQ(t, qp->wire_req.next_resp, RW_SQ_PSN + 1);
	rw_read_resp(t, qp, IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE,
		     RW_SQ_PSN + 1, RW_MTU, 'b');
	KUNIT_EXPECT_EQ(t, qp->ack_tries, 0);
	rw_read_resp(t, qp, IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST,
		     RW_SQ_PSN + 2, RW_MTU, 'c');
	KUNIT_ASSERT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 8);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_RDMA_READ);
	KUNIT_EXPECT_EQ(t, v->buf[0], 'a');
	KUNIT_EXPECT_EQ(t, v->buf[RW_MTU], 'b');
	KUNIT_EXPECT_EQ(t, v->buf[3 * RW_MTU - 1], 'c');
}

/* --- the window: SENDs behind the head -------------------------------- */

/*
 * rw_qp(), which has just posted three SENDs of RW_LEN bytes in one list
 * (wr_id 7, 8 and 9: four packets each, PSNs RW_SQ_PSN to RW_SQ_PSN + 11);
 * *@packets is the packets sent before.
 */
static struct krwq_qp *rw_sent_three(struct kunit *t, u64 *packets)
{
	struct krwq_qp *qp = rw_qp(t);
	struct rw *v = t->priv;
	struct ib_sge sge = rw_buf_sge(v);
	struct ib_send_wr wr[3];
	const struct ib_send_wr *bad;
	int i;

	for (i = 0; i < 3; i++)
		wr[i] = (struct ib_send_wr){
			.wr_id = 7 + i, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_SEND, .next = i < 2 ? &wr[i + 1] : NULL,
		};
	*packets = rw_packets(v);
	KUNIT_ASSERT_EQ(t, ib_post_send(v->qp, wr, &bad), 0);
	return qp;
}

/* The next @n send completions are wr_id @first on, in order, SUCCESS. */
static void rw_expect_sends(struct kunit *t, u64 first, int n)
{
	struct rw *v = t->priv;
	struct ib_wc wc;
	int i;

	for (i = 0; i < n; i++) {
		KUNIT_ASSERT_EQ_MSG(t, ib_poll_cq(v->cq, 1, &wc), 1,
				    "completion %d of %d missing", i + 1, n);
		KUNIT_EXPECT_EQ(t, wc.wr_id, first + i);
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_SEND);
	}
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 0);
}

/*
 * Three SENDs posted together all go out at once, the second and third
 * ahead of the first's answer, each with the PSNs after the one before;
 * an ACK of the second's last PSN completes the first two, in order, and
 * the third is then the one awaited.  With one message in flight, only
 * the first went, and the rest waited a round trip each.
 */
static void rw_window_sends_ahead(struct kunit *t)
{
	struct rw *v = t->priv;
	struct krwq_qp *qp;
	u64 before;

	qp = rw_sent_three(t, &before);
	KUNIT_EXPECT_EQ(t, rw_packets(v), before + 12);
	KUNIT_EXPECT_EQ(t, qp->wire_req.await, KRWQ_WIRE_AWAIT_ANSWER);
	KUNIT_EXPECT_EQ(t, qp->wire_req.ahead, 2);
	KUNIT_EXPECT_EQ(t, qp->wire_req.first_psn, RW_SQ_PSN);
	KUNIT_EXPECT_EQ(t, qp->wire_req.last_psn, RW_SQ_PSN + 3);
	KUNIT_EXPECT_EQ(t, qp->wire_psn, RW_SQ_PSN + 12);

	rw_answer(qp, KRWQ_AETH_ACK | KRWQ_AETH_CREDITS_UNLIMITED,
		  RW_SQ_PSN + 7);
	rw_expect_sends(t, 7, 2);
	KUNIT_EXPECT_EQ(t, qp->wire_req.ahead, 0);
	KUNIT_EXPECT_EQ(t, qp->wire_req.first_psn, RW_SQ_PSN + 8);
	KUNIT_EXPECT_EQ(t, qp->wire_req.last_psn, RW_SQ_PSN + 11);
	KUNIT_EXPECT_EQ(t, qp->wire_req.await, KRWQ_WIRE_AWAIT_ANSWER);

	rw_answer(qp, KRWQ_AETH_ACK | KRWQ_AETH_CREDITS_UNLIMITED,
		  RW_SQ_PSN + 11);
	rw_expect_sends(t, 9, 1);
	KUNIT_EXPECT_EQ(t, qp->wire_req.await, KRWQ_WIRE_AWAIT_NONE);
	/* no packet went again */
	KUNIT_EXPECT_EQ(t, rw_packets(v), before + 12);
}

/*
 * A PSN sequence error NAK of the second SEND's third packet says the
 * responder had the first SEND whole: it completes.  The second goes
 * again from the NAKed packet, and the third behind it with the PSNs it
 * had (go-back-N): six packets.  An ACK of the last PSN completes both.
 */
static void rw_window_nak_goes_back(struct kunit *t)
{
	struct rw *v = t->priv;
	struct krwq_qp *qp;
	u64 before;

	qp = rw_sent_three(t, &before);
	local_bh_disable();
	rw_answer(qp, KRWQ_AETH_NAK | KRWQ_NAK_PSN_SEQ_ERR, RW_SQ_PSN + 6);
	local_bh_enable();
	rw_expect_sends(t, 7, 1);
	flush_work(&qp->send_work);	/* the resend */
	KUNIT_EXPECT_EQ(t, rw_packets(v), before + 12 + 6);
	KUNIT_EXPECT_EQ(t, qp->wire_req.first_psn, RW_SQ_PSN + 4);
	KUNIT_EXPECT_EQ(t, qp->wire_req.last_psn, RW_SQ_PSN + 7);
	KUNIT_EXPECT_EQ(t, qp->wire_req.ahead, 1);
	KUNIT_EXPECT_EQ(t, qp->wire_psn, RW_SQ_PSN + 12);
	KUNIT_EXPECT_EQ(t, qp->ack_tries, 1);

	rw_answer(qp, KRWQ_AETH_ACK | KRWQ_AETH_CREDITS_UNLIMITED,
		  RW_SQ_PSN + 11);
	rw_expect_sends(t, 8, 2);
	KUNIT_EXPECT_EQ(t, qp->wire_req.await, KRWQ_WIRE_AWAIT_NONE);
}

/*
 * An RNR NAK of the second SEND's first packet says the responder had the
 * first whole: it completes.  The second waits out the RNR timer as the
 * head, and the third counts as not sent: both go again after the wait.
 */
static void rw_window_rnr_goes_back(struct kunit *t)
{
	struct krwq_qp *qp;
	u64 before;

	qp = rw_sent_three(t, &before);
	/* timer value 31: 491 ms, longer than the case */
	rw_answer(qp, KRWQ_AETH_RNR_NAK | 31, RW_SQ_PSN + 4);
	rw_expect_sends(t, 7, 1);
	KUNIT_EXPECT_EQ(t, qp->wire_req.await, KRWQ_WIRE_AWAIT_RNR);
	KUNIT_EXPECT_EQ(t, qp->wire_req.ahead, 0);
	KUNIT_EXPECT_EQ(t, qp->wire_req.first_psn, RW_SQ_PSN + 4);
	KUNIT_EXPECT_EQ(t, qp->wire_req.last_psn, RW_SQ_PSN + 7);
	/* the wait (rnr_retry is 7: for ever, so no try is counted) */
	KUNIT_EXPECT_TRUE(t, timer_pending(&qp->sq_timer));
}

/*
 * The four responses, of RW_MTU bytes each, of a READ of RW_LEN bytes
 * whose request had PSN @psn: @fill, plus the response's index.
 */
static void rw_read_resps(struct kunit *t, struct krwq_qp *qp, u32 psn,
			  u8 fill)
{
	u32 i;

	for (i = 0; i < 4; i++)
		rw_read_resp(t, qp, i == 0 ? IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST :
			     i == 3 ? IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST :
			     IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE,
			     psn + i, RW_MTU, fill + i);
}

/*
 * An RDMA READ of RW_LEN bytes into v->buf (four responses), wr_id @id,
 * from the peer's @va.
 */
static struct ib_rdma_wr rw_read_wr(struct ib_sge *sge, u64 id, u64 va)
{
	return (struct ib_rdma_wr){
		.wr = { .wr_id = id, .sg_list = sge, .num_sge = 1,
			.opcode = IB_WR_RDMA_READ },
		.remote_addr = va, .rkey = 0x1234,
	};
}

/*
 * A SEND, an RDMA READ and a SEND go out together, the READ's request
 * taking the PSNs of its four responses.  The READ's first response says
 * the peer had the first SEND: it completes, and the READ is the head;
 * its last response completes it, its data in place, and the ACK of the
 * second SEND's last PSN completes that one.
 */
static void rw_window_read_behind_send(struct kunit *t)
{
	struct krwq_qp *qp = rw_qp(t);
	struct rw *v = t->priv;
	struct ib_sge sge = rw_buf_sge(v);
	struct ib_rdma_wr rd = rw_read_wr(&sge, 8, 0x1000);
	struct ib_send_wr s1 = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND, .next = &rd.wr,
	};
	struct ib_send_wr s2 = {
		.wr_id = 9, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND,
	};
	const struct ib_send_wr *bad;
	u64 before = rw_packets(v);
	struct ib_wc wc;

	rd.wr.next = &s2;
	KUNIT_ASSERT_EQ(t, ib_post_send(v->qp, &s1, &bad), 0);
	KUNIT_EXPECT_EQ(t, rw_packets(v), before + 4 + 1 + 4);
	KUNIT_EXPECT_EQ(t, qp->wire_req.ahead, 2);
	KUNIT_EXPECT_EQ(t, qp->wire_req.rd_atomic_ahead, 1);
	KUNIT_EXPECT_EQ(t, qp->wire_psn, RW_SQ_PSN + 12);

	rw_read_resps(t, qp, RW_SQ_PSN + 4, 'a');
	KUNIT_ASSERT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 7);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_SEND);
	KUNIT_ASSERT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 8);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_RDMA_READ);
	KUNIT_EXPECT_EQ(t, v->buf[0], 'a');
	KUNIT_EXPECT_EQ(t, v->buf[RW_LEN - 1], 'd');
	KUNIT_EXPECT_EQ(t, qp->wire_req.first_psn, RW_SQ_PSN + 8);
	KUNIT_EXPECT_EQ(t, qp->wire_req.rd_atomic_ahead, 0);

	rw_answer(qp, KRWQ_AETH_ACK | KRWQ_AETH_CREDITS_UNLIMITED,
		  RW_SQ_PSN + 11);
	rw_expect_sends(t, 9, 1);
	KUNIT_EXPECT_EQ(t, rw_packets(v), before + 9);
}

/*
 * A SEND, a LOCAL_INV and a SEND go out together: the LOCAL_INV is
 * executed at once, ahead of the first SEND's answer, as a RoCE NIC does,
 * and the second SEND goes behind it.  The ACK of the second SEND's last
 * PSN completes all three, in order.  Before, a local WQE waited for
 * every answer before it, so a ULP that registers a region for each I/O
 * (NVMe-oF's host) had one I/O in flight on the wire at any depth.  The
 * LOCAL_INV's slot is left marked as executed by an earlier WQE, as a
 * reused slot is: once, that skipped a REG_MR, and the peer's WRITEs into
 * the region it should have registered were refused.
 */
static void rw_window_local_goes_ahead(struct kunit *t)
{
	struct krwq_qp *qp = rw_qp(t);
	struct rw *v = t->priv;
	struct ib_sge sge = rw_buf_sge(v);
	struct ib_send_wr s2 = {
		.wr_id = 9, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND,
	};
	struct ib_send_wr inv = {
		.wr_id = 8, .opcode = IB_WR_LOCAL_INV, .next = &s2,
		.ex.invalidate_rkey = v->mr->rkey,
	};
	struct ib_send_wr s1 = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND, .next = &inv,
	};
	const struct ib_send_wr *bad;
	u64 before = rw_packets(v);
	struct ib_wc wc;
	u64 i;

	/*
	 * the LOCAL_INV's slot as an earlier local WQE that went ahead left
	 * it: the new one is executed all the same
	 */
	krwq_sq_entry(qp, krwq_sq_next(qp, qp->sq_head))->local_done = true;
	KUNIT_ASSERT_EQ(t, ib_post_send(v->qp, &s1, &bad), 0);
	KUNIT_EXPECT_EQ(t, rw_packets(v), before + 8);
	KUNIT_EXPECT_EQ(t, qp->wire_req.ahead, 2);
	KUNIT_EXPECT_EQ(t, qp->wire_psn, RW_SQ_PSN + 8);
	KUNIT_EXPECT_FALSE(t, READ_ONCE(to_kmr(v->mr)->valid));
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 0);

	rw_answer(qp, KRWQ_AETH_ACK | KRWQ_AETH_CREDITS_UNLIMITED,
		  RW_SQ_PSN + 7);
	for (i = 7; i <= 9; i++) {
		KUNIT_ASSERT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 1);
		KUNIT_EXPECT_EQ(t, wc.wr_id, i);
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(t, wc.opcode,
				i == 8 ? IB_WC_LOCAL_INV : IB_WC_SEND);
	}
	KUNIT_EXPECT_EQ(t, qp->wire_req.await, KRWQ_WIRE_AWAIT_NONE);
	KUNIT_EXPECT_EQ(t, rw_packets(v), before + 8);
}

/*
 * A fenced LOCAL_INV does not go ahead: it waits for every WQE before it
 * (a resend of the SEND could still read through the region it ends),
 * and is executed once the SEND's ACK has come.
 */
static void rw_window_fenced_local_waits(struct kunit *t)
{
	struct krwq_qp *qp = rw_qp(t);
	struct rw *v = t->priv;
	struct ib_sge sge = rw_buf_sge(v);
	struct ib_send_wr inv = {
		.wr_id = 8, .opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_FENCE,
		.ex.invalidate_rkey = v->mr->rkey,
	};
	struct ib_send_wr s1 = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND, .next = &inv,
	};
	const struct ib_send_wr *bad;
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(t, ib_post_send(v->qp, &s1, &bad), 0);
	KUNIT_EXPECT_EQ(t, qp->wire_req.ahead, 0);
	KUNIT_EXPECT_TRUE(t, READ_ONCE(to_kmr(v->mr)->valid));

	rw_answer(qp, KRWQ_AETH_ACK | KRWQ_AETH_CREDITS_UNLIMITED,
		  RW_SQ_PSN + 3);
	flush_work(&qp->send_work);
	KUNIT_ASSERT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 7);
	KUNIT_ASSERT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 8);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_FALSE(t, READ_ONCE(to_kmr(v->mr)->valid));
}

/*
 * A go-back across local WQEs that went ahead does not execute them
 * again.  A SEND, a LOCAL_INV of v->mr, a REG_MR of it under a new key
 * and a SEND go out together, both local WQEs executed at once.  The
 * region is then marked invalid by hand, and a PSN sequence error NAK of
 * the first SEND's third packet sends both SENDs again from there.  Had
 * the go-back executed the REG_MR again the region would be valid, and a
 * LOCAL_INV run again under the old key would fail; neither happens, and
 * the ACK of the last PSN completes all four, in order, each once.
 */
static void rw_window_local_once_across_go_back(struct kunit *t)
{
	struct krwq_qp *qp = rw_qp(t);
	struct rw *v = t->priv;
	struct ib_sge sge = rw_buf_sge(v);
	struct ib_send_wr s2 = {
		.wr_id = 10, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND,
	};
	struct ib_reg_wr reg = {
		.wr = { .wr_id = 9, .opcode = IB_WR_REG_MR, .next = &s2 },
		.mr = v->mr,
		.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ,
	};
	/* the key as registered: the REG_MR's is set below */
	struct ib_send_wr inv = {
		.wr_id = 8, .opcode = IB_WR_LOCAL_INV, .next = &reg.wr,
		.ex.invalidate_rkey = v->mr->rkey,
	};
	struct ib_send_wr s1 = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND, .next = &inv,
	};
	static const enum ib_wc_opcode ops[] = {
		IB_WC_SEND, IB_WC_LOCAL_INV, IB_WC_REG_MR, IB_WC_SEND,
	};
	struct krwq_mr *mr = to_kmr(v->mr);
	const struct ib_send_wr *bad;
	u64 before = rw_packets(v);
	struct ib_wc wc;
	int i;

	ib_update_fast_reg_key(v->mr, ib_inc_rkey(v->mr->rkey) & 0xff);
	reg.key = v->mr->rkey;
	KUNIT_ASSERT_EQ(t, ib_post_send(v->qp, &s1, &bad), 0);
	KUNIT_EXPECT_EQ(t, rw_packets(v), before + 8);
	KUNIT_EXPECT_EQ(t, qp->wire_req.ahead, 3);
	KUNIT_EXPECT_TRUE(t, READ_ONCE(mr->valid));
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 0);

	WRITE_ONCE(mr->valid, false);	/* the mark */
	local_bh_disable();
	rw_answer(qp, KRWQ_AETH_NAK | KRWQ_NAK_PSN_SEQ_ERR, RW_SQ_PSN + 2);
	local_bh_enable();
	flush_work(&qp->send_work);	/* the resend */
	KUNIT_EXPECT_EQ(t, rw_packets(v), before + 8 + 6);
	KUNIT_EXPECT_EQ(t, qp->wire_req.first_psn, RW_SQ_PSN);
	KUNIT_EXPECT_EQ(t, qp->wire_req.ahead, 3);
	KUNIT_EXPECT_EQ(t, qp->ack_tries, 1);
	KUNIT_EXPECT_FALSE(t, READ_ONCE(mr->valid));
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 0);

	rw_answer(qp, KRWQ_AETH_ACK | KRWQ_AETH_CREDITS_UNLIMITED,
		  RW_SQ_PSN + 7);
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		KUNIT_ASSERT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 1);
		KUNIT_EXPECT_EQ(t, wc.wr_id, 7 + i);
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(t, wc.opcode, ops[i]);
	}
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 0);
	KUNIT_EXPECT_EQ(t, qp->wire_req.await, KRWQ_WIRE_AWAIT_NONE);
	KUNIT_EXPECT_FALSE(t, READ_ONCE(mr->valid));
	KUNIT_EXPECT_EQ(t, rw_packets(v), before + 8 + 6);
}

/*
 * A LOCAL_INV that went ahead behind an RDMA READ, the last WQE sent, is
 * done once the READ is: the READ's last response completes both, and
 * the requester is idle.  It awaits no answer of its own, which would
 * never come: left as the head, it would have completed only at the
 * local ACK timeout, a whole timeout late.
 */
static void rw_window_local_after_read(struct kunit *t)
{
	struct krwq_qp *qp = rw_qp(t);
	struct rw *v = t->priv;
	struct ib_sge sge = rw_buf_sge(v);
	struct ib_rdma_wr rd = rw_read_wr(&sge, 8, 0x1000);
	struct ib_send_wr inv = {
		.wr_id = 9, .opcode = IB_WR_LOCAL_INV,
		.ex.invalidate_rkey = v->mr->rkey,
	};
	const struct ib_send_wr *bad;
	struct ib_wc wc;

	rd.wr.next = &inv;
	KUNIT_ASSERT_EQ(t, ib_post_send(v->qp, &rd.wr, &bad), 0);
	KUNIT_EXPECT_EQ(t, qp->wire_req.ahead, 1);
	KUNIT_EXPECT_FALSE(t, READ_ONCE(to_kmr(v->mr)->valid));

	rw_read_resps(t, qp, RW_SQ_PSN, 'a');
	KUNIT_ASSERT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 8);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_RDMA_READ);
	KUNIT_ASSERT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 9);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_LOCAL_INV);
	KUNIT_EXPECT_EQ(t, qp->wire_req.await, KRWQ_WIRE_AWAIT_NONE);
	KUNIT_EXPECT_EQ(t, qp->sq_tail, qp->sq_head);
	KUNIT_EXPECT_FALSE(t, timer_pending(&qp->sq_timer));
	KUNIT_EXPECT_EQ(t, qp->wire_psn, RW_SQ_PSN + 4);
}

/*
 * RDMA READs go ahead up to the initiator depth, max_rd_atomic, counting
 * the head's: with 2, two of three go out at once, and the third once the
 * first is done.  (Set by hand: a modify in RTS cannot change it.)
 */
static void rw_window_reads_within_depth(struct kunit *t)
{
	struct krwq_qp *qp = rw_qp(t);
	struct rw *v = t->priv;
	struct ib_sge sge = rw_buf_sge(v);
	struct ib_rdma_wr rd[3];
	const struct ib_send_wr *bad;
	unsigned long flags;
	u64 before = rw_packets(v);
	u32 i;

	for (i = 0; i < 3; i++) {
		rd[i] = rw_read_wr(&sge, 7 + i, 0x1000);
		rd[i].wr.next = i < 2 ? &rd[i + 1].wr : NULL;
	}
	spin_lock_irqsave(&qp->s_lock, flags);
	qp->attr.max_rd_atomic = 2;
	spin_unlock_irqrestore(&qp->s_lock, flags);
	KUNIT_ASSERT_EQ(t, ib_post_send(v->qp, &rd[0].wr, &bad), 0);
	KUNIT_EXPECT_EQ(t, rw_packets(v), before + 2);
	KUNIT_EXPECT_EQ(t, qp->wire_req.ahead, 1);

	rw_read_resps(t, qp, RW_SQ_PSN, 'a');
	flush_work(&qp->send_work);	/* room: the third goes */
	KUNIT_EXPECT_EQ(t, rw_packets(v), before + 3);
	KUNIT_EXPECT_EQ(t, qp->wire_req.first_psn, RW_SQ_PSN + 4);
	KUNIT_EXPECT_EQ(t, qp->wire_req.ahead, 1);
	KUNIT_EXPECT_EQ(t, qp->wire_psn, RW_SQ_PSN + 12);
}

/*
 * The ACK of a SEND sent behind a READ comes before the READ's responses
 * (a long READ's later responses leave the peer's device after an ACK
 * built meanwhile): the ACK is kept, so that once the responses came and
 * the READ is done the SEND completes too, without waiting out its
 * timeout.  The READ's responses may only be late: no rest is asked for.
 */
static void rw_window_ack_past_read(struct kunit *t)
{
	struct krwq_qp *qp = rw_qp(t);
	struct rw *v = t->priv;
	struct ib_sge sge = rw_buf_sge(v);
	struct ib_rdma_wr rd = rw_read_wr(&sge, 7, 0x1000);
	struct ib_send_wr s1 = {
		.wr_id = 8, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND,
	};
	const struct ib_send_wr *bad;
	u64 before = rw_packets(v);
	struct ib_wc wc;

	rd.wr.next = &s1;
	KUNIT_ASSERT_EQ(t, ib_post_send(v->qp, &rd.wr, &bad), 0);
	KUNIT_EXPECT_EQ(t, rw_packets(v), before + 1 + 4);
	KUNIT_EXPECT_EQ(t, qp->wire_req.ahead, 1);

	rw_answer(qp, KRWQ_AETH_ACK | KRWQ_AETH_CREDITS_UNLIMITED,
		  RW_SQ_PSN + 7);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 0);
	KUNIT_EXPECT_TRUE(t, qp->wire_req.acked_past);
	KUNIT_EXPECT_EQ(t, rw_packets(v), before + 1 + 4);

	rw_read_resps(t, qp, RW_SQ_PSN, 'x');
	KUNIT_ASSERT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 7);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_RDMA_READ);
	rw_expect_sends(t, 8, 1);
	KUNIT_EXPECT_EQ(t, qp->wire_req.await, KRWQ_WIRE_AWAIT_NONE);
	KUNIT_EXPECT_FALSE(t, qp->wire_req.acked_past);
}

/*
 * A remote access error NAK of the SEND behind a READ comes before the
 * READ's responses: it is kept, and once the READ is done the SEND takes
 * it, failing with the responder's error (the QP then goes to ERR).
 * Dropped, it would have left the SEND to its retries, and then to
 * RETRY_EXC_ERR, from a responder in ERR that answers nothing more.
 */
static void rw_window_nak_past_read(struct kunit *t)
{
	struct krwq_qp *qp = rw_qp(t);
	struct rw *v = t->priv;
	struct ib_sge sge = rw_buf_sge(v);
	struct ib_rdma_wr rd = rw_read_wr(&sge, 7, 0x1000);
	struct ib_send_wr s1 = {
		.wr_id = 8, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND,
	};
	const struct ib_send_wr *bad;
	struct ib_wc wc;

	rd.wr.next = &s1;
	KUNIT_ASSERT_EQ(t, ib_post_send(v->qp, &rd.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, qp->wire_req.ahead, 1);
	rw_answer(qp, KRWQ_AETH_NAK | KRWQ_NAK_REM_ACCESS, RW_SQ_PSN + 4);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 0);
	KUNIT_EXPECT_TRUE(t, qp->wire_req.nak_past);

	rw_read_resps(t, qp, RW_SQ_PSN, 'y');
	KUNIT_ASSERT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 7);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(t, ib_poll_cq(v->cq, 1, &wc), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 8);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_EQ(t, krwq_test_qp_state(v->qp), IB_QPS_ERR);
}

/*
 * A READ's response comes while a run that sends behind it has let
 * s_lock go, holding the regions of the WQE it builds in s_mrs (the test
 * plays that run with a marker there, never dereferenced).  The response
 * lands through the completer's own regions: the run's stay as they were.
 * Through s_mrs, the run would have put and used regions not its own.
 */
static void rw_read_resp_leaves_run_regions(struct kunit *t)
{
	struct krwq_qp *qp = rw_qp(t);
	struct rw *v = t->priv;
	struct ib_sge sge = {
		.addr = (uintptr_t)v->buf, .length = RW_MTU,
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_rdma_wr rd = rw_read_wr(&sge, 8, 0x1000);
	struct krwq_mr *marker = (struct krwq_mr *)v->target;
	const struct ib_send_wr *bad;
	struct krwq_mr *seen;
	unsigned long flags;
	struct ib_wc wc;
	int polled;

	KUNIT_ASSERT_EQ(t, ib_post_send(v->qp, &rd.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, qp->wire_req.await, KRWQ_WIRE_AWAIT_ANSWER);
	/* with sq_running set, no run of send_work's takes the queue */
	spin_lock_irqsave(&qp->s_lock, flags);
	WRITE_ONCE(qp->sq_running, true);
	qp->s_mrs[0] = marker;
	spin_unlock_irqrestore(&qp->s_lock, flags);
	rw_read_resp(t, qp, IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, RW_SQ_PSN,
		     RW_MTU, 'r');
	spin_lock_irqsave(&qp->s_lock, flags);
	seen = qp->s_mrs[0];
	qp->s_mrs[0] = NULL;
	WRITE_ONCE(qp->sq_running, false);
	spin_unlock_irqrestore(&qp->s_lock, flags);
	KUNIT_EXPECT_PTR_EQ(t, seen, marker);
	polled = ib_poll_cq(v->cq, 1, &wc);
	KUNIT_ASSERT_EQ(t, polled, 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 8);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, v->buf[RW_MTU - 1], 'r');
}

/*
 * While another caller sends the QP's packets (wire_tx_busy: the test
 * plays that caller), a post's packets join the QP's queue behind them
 * and do not go out of turn; the next caller that finds the queue free
 * sends them, then its own.  Sent at once instead, a post's packets could
 * leave before those of the run before it, still on their way out on
 * the other CPU, and the responder would take the earlier PSNs for lost.
 */
static void rw_packets_leave_in_order(struct kunit *t)
{
	struct krwq_qp *qp = rw_qp(t);
	struct rw *v = t->priv;
	struct ib_sge sge = rw_buf_sge(v);
	struct ib_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND,
	};
	const struct ib_send_wr *bad;
	u64 before = rw_packets(v);
	unsigned long flags;
	u32 queued;

	spin_lock_irqsave(&qp->s_lock, flags);
	qp->wire_tx_busy = true;
	spin_unlock_irqrestore(&qp->s_lock, flags);
	KUNIT_ASSERT_EQ(t, ib_post_send(v->qp, &wr, &bad), 0);
	spin_lock_irqsave(&qp->s_lock, flags);
	queued = skb_queue_len(&qp->wire_txq);
	qp->wire_tx_busy = false;
	spin_unlock_irqrestore(&qp->s_lock, flags);
	KUNIT_EXPECT_EQ(t, queued, 4);
	KUNIT_EXPECT_EQ(t, rw_packets(v), before);

	wr.wr_id = 8;
	KUNIT_ASSERT_EQ(t, ib_post_send(v->qp, &wr, &bad), 0);
	KUNIT_EXPECT_EQ(t, rw_packets(v), before + 8);
	KUNIT_EXPECT_TRUE(t, skb_queue_empty(&qp->wire_txq));
}

static int rw_vbuf_init(struct kunit_resource *res, void *len)
{
	res->data = vzalloc((uintptr_t)len);
	return res->data ? 0 : -ENOMEM;
}

static void rw_vbuf_free(struct kunit_resource *res)
{
	vfree(res->data);
}

/*
 * A buffer of @len bytes, zeroed, freed after the case's exit has
 * destroyed the QP that may still read it.
 */
static void *rw_vbuf(struct kunit *t, size_t len)
{
	return kunit_alloc_resource(t, rw_vbuf_init, rw_vbuf_free, GFP_KERNEL,
				    (void *)(uintptr_t)len);
}

/* The PSN in the BTH of a packet built and not yet sent. */
static u32 rw_unsent_psn(const struct sk_buff *skb)
{
	const struct krwq_bth *bth = (const void *)skb->data;

	return be32_to_cpu(bth->apsn) & KRWQ_PSN_MASK;
}

/*
 * One call sends at most KRWQ_SQ_XMIT_BUDGET packets, and the QP's
 * send_work sends the rest, in order: a poster whose queue the other CPU
 * keeps filling returns.  The test posts one SEND of
 * KRWQ_SQ_XMIT_BUDGET + 44 packets with preemption off, so that the work
 * item, queued on this CPU, cannot run before the queue is looked at: the
 * last 44 packets wait there.  Without the bound, the poster sends them
 * all.
 */
static void rw_xmit_budget_hands_off(struct kunit *t)
{
	const u32 extra = 44, total = KRWQ_SQ_XMIT_BUDGET + extra;
	struct krwq_qp *qp = rw_qp(t);
	struct rw *v = t->priv;
	u8 *payload = rw_vbuf(t, total * RW_MTU);
	struct ib_sge sge = {
		.addr = (uintptr_t)payload, .length = total * RW_MTU,
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND,
	};
	const struct ib_send_wr *bad;
	u64 before = rw_packets(v);
	u32 left, first_left = 0;
	unsigned long flags;
	bool handed_off;
	int ret;

	KUNIT_ASSERT_NOT_NULL(t, payload);
	/* nothing here may sleep: rw_packets() does, so it waits */
	preempt_disable();
	ret = ib_post_send(v->qp, &wr, &bad);
	spin_lock_irqsave(&qp->s_lock, flags);
	left = skb_queue_len(&qp->wire_txq);
	if (left)
		first_left = rw_unsent_psn(skb_peek(&qp->wire_txq));
	spin_unlock_irqrestore(&qp->s_lock, flags);
	handed_off = work_pending(&qp->send_work);
	preempt_enable();
	KUNIT_ASSERT_EQ(t, ret, 0);
	KUNIT_EXPECT_EQ(t, left, extra);
	KUNIT_EXPECT_EQ(t, first_left, RW_SQ_PSN + KRWQ_SQ_XMIT_BUDGET);
	KUNIT_EXPECT_TRUE(t, handed_off);

	flush_work(&qp->send_work);
	KUNIT_EXPECT_EQ(t, rw_packets(v), before + total);
	KUNIT_EXPECT_TRUE(t, skb_queue_empty(&qp->wire_txq));
	KUNIT_EXPECT_FALSE(t, qp->wire_tx_busy);
}

/*
 * A post with interrupts off leaves its packets in the QP's queue for
 * send_work, which sends them in turn.  Left to the device's tx_work
 * instead, as they were, they could be passed by the packets of a later
 * post with interrupts on, sent at once.
 */
static void rw_irqs_off_post_leaves_to_send_work(struct kunit *t)
{
	struct krwq_qp *qp = rw_qp(t);
	struct rw *v = t->priv;
	struct ib_sge sge = rw_buf_sge(v);
	struct ib_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND,
	};
	const struct ib_send_wr *bad;
	u64 before = rw_packets(v);
	unsigned long flags;
	bool handed_off;
	u32 left;
	int ret;

	local_irq_save(flags);
	ret = ib_post_send(v->qp, &wr, &bad);
	spin_lock(&qp->s_lock);
	left = skb_queue_len(&qp->wire_txq);
	spin_unlock(&qp->s_lock);
	handed_off = work_pending(&qp->send_work);
	local_irq_restore(flags);
	KUNIT_ASSERT_EQ(t, ret, 0);
	KUNIT_EXPECT_EQ(t, left, 4);
	KUNIT_EXPECT_TRUE(t, handed_off);

	flush_work(&qp->send_work);
	KUNIT_EXPECT_EQ(t, rw_packets(v), before + 4);
	KUNIT_EXPECT_TRUE(t, skb_queue_empty(&qp->wire_txq));
}

/*
 * A move to RESET drops the QP's packets still waiting to go out (here
 * behind another caller's, which the test plays): they belong to the
 * connection that was, and would still reach its peer after the move.
 */
static void rw_reset_drops_unsent(struct kunit *t)
{
	struct krwq_qp *qp = rw_qp(t);
	struct rw *v = t->priv;
	struct ib_sge sge = rw_buf_sge(v);
	struct ib_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND,
	};
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };
	const struct ib_send_wr *bad;
	u64 before = rw_packets(v);
	unsigned long flags;
	u32 queued;

	spin_lock_irqsave(&qp->s_lock, flags);
	qp->wire_tx_busy = true;
	spin_unlock_irqrestore(&qp->s_lock, flags);
	KUNIT_ASSERT_EQ(t, ib_post_send(v->qp, &wr, &bad), 0);
	spin_lock_irqsave(&qp->s_lock, flags);
	queued = skb_queue_len(&qp->wire_txq);
	spin_unlock_irqrestore(&qp->s_lock, flags);
	KUNIT_EXPECT_EQ(t, ib_modify_qp(v->qp, &attr, IB_QP_STATE), 0);
	spin_lock_irqsave(&qp->s_lock, flags);
	qp->wire_tx_busy = false;
	spin_unlock_irqrestore(&qp->s_lock, flags);
	KUNIT_EXPECT_EQ(t, queued, 4);
	KUNIT_EXPECT_TRUE(t, skb_queue_empty(&qp->wire_txq));
	KUNIT_EXPECT_EQ(t, rw_packets(v), before);
}

/*
 * An ACK of all three SENDs comes while a run holds the send queue and
 * has let s_lock go, as a run sending behind the head does every
 * KRWQ_IRQOFF_BYTES (the test plays that run, as in
 * rw_ack_during_resend_run()).  The run builds what lies past the WQEs
 * sent, so the ACK is taken at once: all three complete, in order, and
 * no packet goes again.  Dropped, it would have left them to the local
 * ACK timeout and a resend.
 */
static void rw_window_ack_during_run(struct kunit *t)
{
	struct rw *v = t->priv;
	struct krwq_qp *qp;
	u64 before;

	qp = rw_sent_three(t, &before);
	local_bh_disable();
	rw_mark_run(qp, true);
	rw_answer(qp, KRWQ_AETH_ACK | KRWQ_AETH_CREDITS_UNLIMITED,
		  RW_SQ_PSN + 11);
	rw_mark_run(qp, false);
	local_bh_enable();
	rw_expect_sends(t, 7, 3);
	KUNIT_EXPECT_EQ(t, qp->wire_req.await, KRWQ_WIRE_AWAIT_NONE);
	KUNIT_EXPECT_FALSE(t, timer_pending(&qp->sq_timer));
	KUNIT_EXPECT_EQ(t, rw_packets(v), before + 12);
}

/* --- the responder ------------------------------------------------------ */

/*
 * Packet @pkt from the peer, as the socket's softirq brings it to the
 * responder, with @pkt->payload_len bytes at @payload: the rest of its
 * BTH (asking for an acknowledgment) and its RETH's address, v->mr's,
 * are filled in here.
 */
static void rw_deliver(struct rw *v, struct krwq_wire_pkt *pkt,
		       const void *payload)
{
	struct krwq_qp *qp = to_kqp(v->qp);

	pkt->opcode |= IB_OPCODE_RC;
	pkt->ack_req = true;
	pkt->pkey = IB_DEFAULT_PKEY_FULL;
	pkt->dqpn = v->qp->qp_num;
	pkt->va = v->mr->iova;
	pkt->rkey = v->mr->rkey;
	local_bh_disable();
	krwq_resp_wire_rc(qp, pkt, &qp->attr.ah_attr.grh.dgid,
			  &qp->route.sgid, payload);
	local_bh_enable();
}

/*
 * A request from the peer: RC @op (IB_OPCODE_SEND_ONLY, ...) with PSN
 * @psn.  A SEND carries RW_SEND_LEN bytes; a READ asks for RW_READ_LEN
 * bytes of v->target, and a FETCH_ADD adds @add to its first eight,
 * through v->mr.
 */
static void rw_request(struct rw *v, u8 op, u32 psn, u64 add)
{
	struct krwq_wire_pkt pkt = {
		.opcode = op,
		.psn = psn,
		.dma_len = op == IB_OPCODE_RDMA_READ_REQUEST ? RW_READ_LEN : 8,
		.swap_add = add,
		.payload_len = op == IB_OPCODE_SEND_ONLY ? RW_SEND_LEN : 0,
	};
	static const u8 payload[RW_SEND_LEN] = "sixteen bytes...";

	rw_deliver(v, &pkt, payload);
}

/* The packets rc_dev has sent, or tried to: the responder's answers. */
static u64 rw_answers(struct rw *v)
{
	return krwq_test_counter(v->dev, "wire_tx_packets") +
	       krwq_test_counter(v->dev, "wire_tx_dropped");
}

/* The receive completion that came, if one did: its wr_id; else 0. */
static u64 rw_received(struct kunit *t)
{
	struct rw *v = t->priv;
	struct ib_wc wc;

	if (ib_poll_cq(v->cq, 1, &wc) != 1)
		return 0;
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(t, wc.byte_len, RW_SEND_LEN);
	return wc.wr_id;
}

/*
 * A SEND that comes again (its ACK was lost) is acknowledged again but
 * not delivered again: the next SEND takes the next receive WQE.
 */
static void rr_duplicate_send_once(struct kunit *t)
{
	struct krwq_qp *qp = rw_qp(t);
	struct rw *v = t->priv;
	u64 answers = rw_answers(v);

	rw_request(v, IB_OPCODE_SEND_ONLY, 0, 0);
	KUNIT_EXPECT_EQ(t, rw_received(t), 1);
	KUNIT_EXPECT_EQ(t, qp->wire_rx.epsn, 1);
	KUNIT_EXPECT_EQ(t, rw_answers(v), answers + 1);
	KUNIT_EXPECT_EQ(t, memcmp(v->buf, "sixteen bytes...", RW_SEND_LEN), 0);
	rw_request(v, IB_OPCODE_SEND_ONLY, 0, 0);
	KUNIT_EXPECT_EQ(t, rw_received(t), 0);
	KUNIT_EXPECT_EQ(t, qp->wire_rx.epsn, 1);
	KUNIT_EXPECT_EQ(t, rw_answers(v), answers + 2);
	rw_request(v, IB_OPCODE_SEND_ONLY, 1, 0);
	KUNIT_EXPECT_EQ(t, rw_received(t), 2);
	KUNIT_EXPECT_EQ(t, qp->wire_rx.epsn, 2);
}

/*
 * Packets past the expected PSN (those before them were lost): the first
 * gets an ACK of what came before and a PSN sequence error NAK, the next
 * nothing, and neither is delivered; the lost ones, once resent, are.
 */
static void rr_out_of_sequence_naks_once(struct kunit *t)
{
	struct krwq_qp *qp = rw_qp(t);
	struct rw *v = t->priv;
	u64 answers = rw_answers(v);

	rw_request(v, IB_OPCODE_SEND_ONLY, 2, 0);
	KUNIT_EXPECT_EQ(t, rw_received(t), 0);
	KUNIT_EXPECT_EQ(t, qp->wire_rx.epsn, 0);
	KUNIT_EXPECT_EQ(t, rw_answers(v), answers + 2);
	rw_request(v, IB_OPCODE_SEND_ONLY, 3, 0);
	KUNIT_EXPECT_EQ(t, rw_received(t), 0);
	KUNIT_EXPECT_EQ(t, rw_answers(v), answers + 2);
	rw_request(v, IB_OPCODE_SEND_ONLY, 0, 0);
	KUNIT_EXPECT_EQ(t, rw_received(t), 1);
	rw_request(v, IB_OPCODE_SEND_ONLY, 1, 0);
	KUNIT_EXPECT_EQ(t, rw_received(t), 2);
	KUNIT_EXPECT_EQ(t, qp->wire_rx.epsn, 2);
	KUNIT_EXPECT_EQ(t, rw_answers(v), answers + 4);
}

/*
 * An atomic that comes again gets its saved result again, and is not
 * carried out twice.
 */
static void rr_duplicate_atomic_replayed(struct kunit *t)
{
	struct krwq_qp *qp = rw_qp(t);
	struct rw *v = t->priv;
	u64 *word = (u64 *)v->target, answers = rw_answers(v);

	*word = 5;
	rw_request(v, IB_OPCODE_FETCH_ADD, 0, 3);
	KUNIT_EXPECT_EQ(t, *word, 8);
	KUNIT_EXPECT_EQ(t, qp->wire_rx.epsn, 1);
	KUNIT_EXPECT_EQ(t, rw_answers(v), answers + 1);
	rw_request(v, IB_OPCODE_FETCH_ADD, 0, 3);
	KUNIT_EXPECT_EQ(t, *word, 8);
	KUNIT_EXPECT_EQ(t, qp->wire_rx.epsn, 1);
	KUNIT_EXPECT_EQ(t, rw_answers(v), answers + 2);
}

/*
 * A READ that comes again is read again, all its responses sent again,
 * and the PSN expected stays past the first one's responses.
 */
static void rr_duplicate_read_read_again(struct kunit *t)
{
	struct krwq_qp *qp = rw_qp(t);
	struct rw *v = t->priv;
	u64 answers = rw_answers(v);

	rw_request(v, IB_OPCODE_RDMA_READ_REQUEST, 0, 0);
	KUNIT_EXPECT_EQ(t, qp->wire_rx.epsn, 2);
	KUNIT_EXPECT_EQ(t, rw_answers(v), answers + 2);
	rw_request(v, IB_OPCODE_RDMA_READ_REQUEST, 0, 0);
	KUNIT_EXPECT_EQ(t, qp->wire_rx.epsn, 2);
	KUNIT_EXPECT_EQ(t, rw_answers(v), answers + 4);
	rw_request(v, IB_OPCODE_SEND_ONLY, 2, 0);
	KUNIT_EXPECT_EQ(t, rw_received(t), 1);
	KUNIT_EXPECT_EQ(t, qp->wire_rx.epsn, 3);
}

/*
 * A packet of an RDMA WRITE from the peer into v->target: RC @op
 * (IB_OPCODE_RDMA_WRITE_FIRST, ...) with PSN @psn and RW_MTU bytes of
 * @fill; a FIRST names @len bytes at the start of v->target.
 */
static void rw_write(struct rw *v, u8 op, u32 psn, u32 len, u8 fill)
{
	struct krwq_wire_pkt pkt = {
		.opcode = op,
		.psn = psn,
		.dma_len = len,
		.payload_len = RW_MTU,
	};
	static u8 payload[RW_MTU];

	memset(payload, fill, sizeof(payload));
	rw_deliver(v, &pkt, payload);
}

/* @n bytes of v->target from @off all hold @fill. */
static bool rw_target_is(struct rw *v, u32 off, u32 n, u8 fill)
{
	return !memchr_inv(v->target + off, fill, n);
}

/*
 * rw_qp(), into which the first two packets of a WRITE of @len bytes have
 * come: RW_MTU bytes of 'a', then of 'b'.
 */
static struct krwq_qp *rw_write_begun(struct kunit *t, u32 len)
{
	struct krwq_qp *qp = rw_qp(t);
	struct rw *v = t->priv;

	rw_write(v, IB_OPCODE_RDMA_WRITE_FIRST, 0, len, 'a');
	rw_write(v, IB_OPCODE_RDMA_WRITE_MIDDLE, 1, 0, 'b');
	KUNIT_EXPECT_EQ(t, qp->wire_rx.epsn, 2);
	return qp;
}

/*
 * A WRITE that the requester resumes from the middle (its ACK timeout
 * came before the ACK of the first two packets): the packets before the
 * expected PSN are acknowledged again but not written again, and those
 * from it on carry on the message where it stands.
 */
static void rr_write_resumed_mid_message(struct kunit *t)
{
	struct krwq_qp *qp = rw_write_begun(t, 4 * RW_MTU);
	struct rw *v = t->priv;
	u64 answers = rw_answers(v);

	rw_write(v, IB_OPCODE_RDMA_WRITE_MIDDLE, 1, 0, 'x');
	KUNIT_EXPECT_EQ(t, qp->wire_rx.epsn, 2);
	KUNIT_EXPECT_TRUE(t, rw_target_is(v, RW_MTU, RW_MTU, 'b'));
	rw_write(v, IB_OPCODE_RDMA_WRITE_MIDDLE, 2, 0, 'c');
	rw_write(v, IB_OPCODE_RDMA_WRITE_LAST, 3, 0, 'd');
	KUNIT_EXPECT_EQ(t, qp->wire_rx.epsn, 4);
	KUNIT_EXPECT_EQ(t, qp->wire_rx.msg, KRWQ_WIRE_MSG_NONE);
	KUNIT_EXPECT_EQ(t, rw_answers(v), answers + 3);
	KUNIT_EXPECT_TRUE(t, rw_target_is(v, 0, RW_MTU, 'a'));
	KUNIT_EXPECT_TRUE(t, rw_target_is(v, RW_MTU, RW_MTU, 'b'));
	KUNIT_EXPECT_TRUE(t, rw_target_is(v, 2 * RW_MTU, RW_MTU, 'c'));
	KUNIT_EXPECT_TRUE(t, rw_target_is(v, 3 * RW_MTU, RW_MTU, 'd'));
	KUNIT_EXPECT_FALSE(t, qp->err_pending);
	KUNIT_EXPECT_EQ(t, krwq_test_qp_state(v->qp), IB_QPS_RTS);
}

/*
 * A WRITE whose last packet goes past the length its RETH named, as the
 * end of a stream rdma_rxe's requester on 6.1 sends after a resend goes
 * wrong (its PSNs one further on than the first time; docs/wire.md).
 * That packet is an invalid request: NAKed, nothing of it written, and
 * the responder goes to ERR, as rxe's own responder does.
 */
static void rr_write_past_its_length_refused(struct kunit *t)
{
	struct krwq_qp *qp = rw_write_begun(t, 2 * RW_MTU);
	struct rw *v = t->priv;
	u64 answers = rw_answers(v);

	rw_write(v, IB_OPCODE_RDMA_WRITE_LAST, 2, 0, 'c');
	KUNIT_EXPECT_EQ(t, rw_answers(v), answers + 1);
	KUNIT_EXPECT_EQ(t, qp->wire_rx.epsn, 2);
	KUNIT_EXPECT_TRUE(t, rw_target_is(v, 2 * RW_MTU, RW_MTU, 0));
	KUNIT_EXPECT_TRUE(t, qp->err_pending);
	flush_work(&qp->err_work);	/* which moves the QP to ERR */
	KUNIT_EXPECT_EQ(t, krwq_test_qp_state(v->qp), IB_QPS_ERR);
}

static struct kunit_case krwq_rc_req_cases[] = {
	KUNIT_CASE(rw_late_ack_after_nak),
	KUNIT_CASE(rw_late_atomic_ack_after_timeout),
	KUNIT_CASE(rw_late_atomic_ack_during_resend_run),
	KUNIT_CASE(rw_late_read_resp_after_timeout),
	KUNIT_CASE(rw_late_read_resp_during_resend_run),
	KUNIT_CASE(rw_read_resp_filling_not_last_fails),
	KUNIT_CASE(rw_late_ack_in_rnr_wait),
	KUNIT_CASE(rw_ack_during_resend_run),
	KUNIT_CASE(rw_naks_with_progress_not_counted),
	KUNIT_CASE(rw_read_resend_asks_for_rest),
	KUNIT_CASE(rw_window_sends_ahead),
	KUNIT_CASE(rw_window_nak_goes_back),
	KUNIT_CASE(rw_window_rnr_goes_back),
	KUNIT_CASE(rw_window_read_behind_send),
	KUNIT_CASE(rw_window_reads_within_depth),
	KUNIT_CASE(rw_window_local_goes_ahead),
	KUNIT_CASE(rw_window_local_after_read),
	KUNIT_CASE(rw_window_fenced_local_waits),
	KUNIT_CASE(rw_window_local_once_across_go_back),
	KUNIT_CASE(rw_window_ack_past_read),
	KUNIT_CASE(rw_window_nak_past_read),
	KUNIT_CASE(rw_read_resp_leaves_run_regions),
	KUNIT_CASE(rw_packets_leave_in_order),
	KUNIT_CASE(rw_xmit_budget_hands_off),
	KUNIT_CASE(rw_irqs_off_post_leaves_to_send_work),
	KUNIT_CASE(rw_reset_drops_unsent),
	KUNIT_CASE(rw_window_ack_during_run),
	{}
};

static struct kunit_suite krwq_rc_req_suite = {
	.name = "krwq_rc_req",
	.init = rw_init,
	.exit = rw_exit,
	.test_cases = krwq_rc_req_cases,
};

static struct kunit_case krwq_rc_resp_cases[] = {
	KUNIT_CASE(rr_duplicate_send_once),
	KUNIT_CASE(rr_out_of_sequence_naks_once),
	KUNIT_CASE(rr_duplicate_atomic_replayed),
	KUNIT_CASE(rr_duplicate_read_read_again),
	KUNIT_CASE(rr_write_resumed_mid_message),
	KUNIT_CASE(rr_write_past_its_length_refused),
	{}
};

static struct kunit_suite krwq_rc_resp_suite = {
	.name = "krwq_rc_resp",
	.init = rw_init,
	.exit = rw_exit,
	.test_cases = krwq_rc_resp_cases,
};

static struct kunit_suite *krwq_rc_wire_suites[] = {
	&krwq_rc_req_suite, &krwq_rc_resp_suite,
};

/* Run from init, after the parameters are parsed (see cm_suite.c). */
static int __init rw_module_init(void)
{
	return __kunit_test_suites_init(krwq_rc_wire_suites,
					ARRAY_SIZE(krwq_rc_wire_suites));
}
module_init(rw_module_init);

static void __exit rw_module_exit(void)
{
	__kunit_test_suites_exit(krwq_rc_wire_suites,
				 ARRAY_SIZE(krwq_rc_wire_suites));
}
module_exit(rw_module_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("krwq: an RC QP on the wire, its peer played by hand (KUnit)");
