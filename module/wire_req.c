// SPDX-License-Identifier: GPL-2.0
/*
 * wire_req.c - the requester's side of the wire: a send WQE whose
 * destination no krwq device in the sender's namespace holds, cut into
 * RoCEv2 packets by a run of the send queue (req.c) under the QP's
 * s_lock, and queued on the run's list, which the run's caller sends
 * (tx.c) once it has released the lock.
 */
#include <kunit/visibility.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_pack.h>

#include "krwq.h"
#include "resp.h"
#include "sq.h"
#include "tx.h"
#include "wire.h"

/**
 * krwq_wire_reaches() - whether a send of @dev's to @route goes on the wire.
 * @dev: the sending device.
 * @route: where the address vector leads (krwq_fabric_route()).
 *
 * Context: any.
 * Return: true when no krwq device in the sender's namespace holds the
 * address, the device has the wire, and the address is a RoCE v2 one (v1
 * is no IP packet).
 */
bool krwq_wire_reaches(const struct krwq_dev *dev,
		       const struct krwq_route *route)
{
	return route->dest == KRWQ_NO_DEST && dev->wire &&
	       (route->net_type == RDMA_NETWORK_IPV4 ||
		route->net_type == RDMA_NETWORK_IPV6);
}

/*
 * Builds the next packet of a run of @sqp's send queue (tx.c) and queues
 * it on the run's list: it takes the next PSN whatever becomes of it, and
 * its copy counts against the run's interrupts-off section.  Return: as
 * krwq_tx_build().
 */
static int krwq_wire_packet(struct krwq_qp *sqp, struct krwq_wire_pkt *pkt,
			    struct krwq_sge_cursor *src, u32 len,
			    const struct krwq_tx_cb *to)
{
	pkt->psn = sqp->wire_psn;
	sqp->wire_psn = krwq_psn_add(sqp->wire_psn, 1);
	sqp->run->section += len;
	return krwq_tx_build(sqp->dev, pkt, src, len, to, sqp->run->tx);
}

/**
 * krwq_wire_send_ud() - put a UD send WQE on the wire: one packet, queued
 * on the run's list, which the run's caller sends (req.c).
 * @sqp: the sender; the caller holds its s_lock, in a run (sqp->run).
 * @w: the WQE, whose route krwq_wire_reaches().
 *
 * A datagram that cannot be sent is dropped and counted, in ud_dropped
 * (no memory) or wire_tx_dropped (no route, or the IP stack refused it);
 * the sender is not told, as on a network.
 *
 * Return: IB_WC_SUCCESS, or IB_WC_LOC_PROT_ERR when the payload's regions
 * do not check out.
 */
enum ib_wc_status krwq_wire_send_ud(struct krwq_qp *sqp, struct krwq_swqe *w)
{
	struct krwq_wire_pkt pkt = {
		.opcode = w->opcode == IB_WR_SEND_WITH_IMM ?
			  IB_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE :
			  IB_OPCODE_UD_SEND_ONLY,
		.se = w->send_flags & IB_SEND_SOLICITED,
		.pkey = IB_DEFAULT_PKEY_FULL,
		.dqpn = w->remote_qpn,
		/* a Q_Key with the high bit set means the sender's own */
		.qkey = (int)w->remote_qkey < 0 ? sqp->attr.qkey :
			w->remote_qkey,
		.sqpn = sqp->ibqp.qp_num,
		.imm = w->imm_data,
	};
	struct krwq_sge_cursor src;
	struct krwq_tx_cb to;
	int ret;

	if (!krwq_src_get(sqp, w, 0))
		return IB_WC_LOC_PROT_ERR;
	krwq_src_cursor(sqp, w, &src);
	krwq_tx_to(&to, sqp, &w->route, rdma_ah_read_grh(&w->ah),
		   w->remote_qpn);
	ret = krwq_wire_packet(sqp, &pkt, &src, w->length, &to);
	krwq_src_put(sqp, w);
	if (ret == -ENOMEM)
		krwq_count(sqp->dev, KRWQ_STAT_UD_DROPPED, 1);
	return ret == -EFAULT ? IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
}

/*
 * The opcode of a SEND's or RDMA WRITE's packet in transport @class
 * (IB_OPCODE_RC or IB_OPCODE_UC): the first, a middle one, the last, or
 * the only one of its message.
 */
static u8 krwq_wire_opcode(u8 class, enum ib_wr_opcode op, bool first,
			   bool last)
{
	bool write = op == IB_WR_RDMA_WRITE || op == IB_WR_RDMA_WRITE_WITH_IMM;
	bool imm = op == IB_WR_SEND_WITH_IMM || op == IB_WR_RDMA_WRITE_WITH_IMM;
	bool inv = op == IB_WR_SEND_WITH_INV;
	u8 code;

	if (first && last)
		code = write ? (imm ? IB_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE :
				      IB_OPCODE_RDMA_WRITE_ONLY) :
		       imm ? IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE :
		       inv ? IB_OPCODE_SEND_ONLY_WITH_INVALIDATE :
			     IB_OPCODE_SEND_ONLY;
	else if (first)
		code = write ? IB_OPCODE_RDMA_WRITE_FIRST : IB_OPCODE_SEND_FIRST;
	else if (last)
		code = write ? (imm ? IB_OPCODE_RDMA_WRITE_LAST_WITH_IMMEDIATE :
				      IB_OPCODE_RDMA_WRITE_LAST) :
		       imm ? IB_OPCODE_SEND_LAST_WITH_IMMEDIATE :
		       inv ? IB_OPCODE_SEND_LAST_WITH_INVALIDATE :
			     IB_OPCODE_SEND_LAST;
	else
		code = write ? IB_OPCODE_RDMA_WRITE_MIDDLE :
			       IB_OPCODE_SEND_MIDDLE;
	return class | code;
}

/* How many packets of @sqp's path MTU a SEND, WRITE or READ of @w's takes. */
static u32 krwq_wire_packets(struct krwq_qp *sqp, const struct krwq_swqe *w)
{
	return max_t(u32, 1, DIV_ROUND_UP(w->length, krwq_path_mtu_bytes(sqp)));
}

/* How many PSNs the WQE @w of @sqp's takes: its packets, or its answer's. */
static u32 krwq_wire_psns(struct krwq_qp *sqp, const struct krwq_swqe *w)
{
	return krwq_is_atomic(w->opcode) ? 1 : krwq_wire_packets(sqp, w);
}

/*
 * A SEND or RDMA WRITE WQE of connected @sqp's, in @class, cut into
 * packets of the path MTU, each with the next PSN, from packet @skip on
 * (a resend from where the responder stopped); the last asks for an
 * acknowledgment.  A long message lets interrupts in between packets
 * (and UC's packets built so far go out then).  Once its regions check
 * out, the message keeps its PSNs whatever becomes of its packets: the
 * next PSN is the one after its last.  Return: 0, -ENOMEM (the rest of
 * the message is not built, as if lost on the way), or -EFAULT (the
 * payload's regions do not check out).
 */
static int krwq_wire_send_msg(struct krwq_qp *sqp, struct krwq_swqe *w,
			      u8 class, u32 skip)
	__must_hold(&sqp->s_lock)
{
	u32 mtu = krwq_path_mtu_bytes(sqp);
	struct krwq_sge_cursor src;
	struct krwq_tx_cb to;
	u32 off = min_t(u64, (u64)skip * mtu, w->length);
	u32 end = krwq_psn_add(sqp->wire_psn, krwq_wire_packets(sqp, w));
	int ret = 0;

	if (!krwq_src_get(sqp, w, 0))
		return -EFAULT;
	krwq_src_cursor(sqp, w, &src);
	if (off && krwq_write(&src, NULL, off)) {
		krwq_src_put(sqp, w);
		return -EFAULT;
	}
	sqp->wire_psn = krwq_psn_add(sqp->wire_psn, skip);
	krwq_tx_to_peer(&to, sqp);
	do {
		u32 n = min(mtu, w->length - off);
		bool last = off + n == w->length;
		struct krwq_wire_pkt pkt = {
			.opcode = krwq_wire_opcode(class, w->opcode, !off, last),
			.se = last && (w->send_flags & IB_SEND_SOLICITED),
			.ack_req = last,
			.pkey = IB_DEFAULT_PKEY_FULL,
			.dqpn = sqp->attr.dest_qp_num,
			.va = w->remote_addr,
			.rkey = w->rkey,
			.dma_len = w->length,
			.imm = w->imm_data,
			.inv_rkey = w->rkey,
		};

		if (sqp->run->section + n > KRWQ_IRQOFF_BYTES &&
		    krwq_run_can_unlock(sqp)) {
			/* not while earlier runs' packets wait or go out */
			bool now = class == IB_OPCODE_UC &&
				   krwq_sq_tx_idle(sqp);

			krwq_run_unlock(sqp);
			/*
			 * UC's packets built so far go out meanwhile; RC's
			 * wait for the message's end, since an answer to
			 * them (an RNR or sequence NAK) would find nothing
			 * waiting for it yet
			 */
			if (now)
				krwq_tx_xmit(sqp->dev, sqp->run->tx,
					     *sqp->run->flags);
			krwq_run_relock(sqp);
		}
		ret = krwq_wire_packet(sqp, &pkt, &src, n, &to);
		if (ret)
			break;
		off += n;
	} while (off < w->length);
	krwq_src_put(sqp, w);
	sqp->wire_psn = end;
	if (ret == -ENOMEM)
		krwq_count(sqp->dev, KRWQ_STAT_WIRE_TX_DROPPED, 1);
	return ret;
}

/**
 * krwq_wire_send_uc() - put a UC send WQE on the wire: its message cut
 * into packets of the path MTU (the port's, if smaller), each with the
 * next PSN, queued on the run's list, which the run's caller sends.
 * @sqp: the sender; the caller holds its s_lock, in a run (sqp->run).
 * @w: the WQE, a SEND, SEND with immediate, or RDMA WRITE with or without
 *     immediate; the QP's route krwq_wire_reaches().
 *
 * A long message lets interrupts in between packets, and the packets
 * queued so far go out then (krwq_run_unlock()), unless earlier runs'
 * packets still wait to go (krwq_sq_tx_idle()).  UC has no
 * acknowledgments: a packet that cannot be sent is counted in
 * wire_tx_dropped, the rest of its message is not sent, and the receiver
 * drops the message; the sender is not told, as on a network.
 *
 * Return: IB_WC_SUCCESS; IB_WC_LOC_PROT_ERR when the payload's regions do
 * not check out; IB_WC_LOC_QP_OP_ERR for a SEND with invalidate, which
 * UC cannot carry on the wire.
 */
enum ib_wc_status krwq_wire_send_uc(struct krwq_qp *sqp, struct krwq_swqe *w)
{
	if (w->opcode == IB_WR_SEND_WITH_INV)
		return IB_WC_LOC_QP_OP_ERR;
	return krwq_wire_send_msg(sqp, w, IB_OPCODE_UC, 0) == -EFAULT ?
	       IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
}

/*
 * An RDMA READ or atomic request: one packet, whose PSN is the first of
 * as many as the answer has packets (a READ's responses, of the path
 * MTU; an atomic's one acknowledgment).
 */
static int krwq_wire_send_request(struct krwq_qp *sqp, struct krwq_swqe *w)
{
	bool read = w->opcode == IB_WR_RDMA_READ;
	u32 answers = krwq_wire_psns(sqp, w);
	struct krwq_wire_pkt pkt = {
		.opcode = read ? IB_OPCODE_RC_RDMA_READ_REQUEST :
			  w->opcode == IB_WR_ATOMIC_CMP_AND_SWP ?
			  IB_OPCODE_RC_COMPARE_SWAP : IB_OPCODE_RC_FETCH_ADD,
		.ack_req = true,
		.pkey = IB_DEFAULT_PKEY_FULL,
		.dqpn = sqp->attr.dest_qp_num,
		.va = w->remote_addr,
		.rkey = w->rkey,
		.dma_len = w->length,
		/* compare and swap: swap_add swaps; fetch and add: it adds */
		.swap_add = w->opcode == IB_WR_ATOMIC_CMP_AND_SWP ?
			    w->atomic.swap : w->atomic.compare_add,
		.compare = w->atomic.compare_add,
	};
	struct krwq_tx_cb to;
	int ret;

	krwq_tx_to_peer(&to, sqp);
	ret = krwq_wire_packet(sqp, &pkt, NULL, 0, &to);
	/* the answer's PSNs are the request's */
	sqp->wire_psn = krwq_psn_add(sqp->wire_psn, answers - 1);
	return ret;
}

/**
 * krwq_wire_send_rc() - put an RC send WQE on the wire, from the first PSN
 * it was given (a resend keeps its PSNs; after a PSN sequence error NAK a
 * SEND's or WRITE's starts at the PSN it named, and a READ's that had
 * responses asks for the rest, from the response expected next), and say
 * which PSN's answer completes it (qp->wire_req).
 * @sqp: the sender; the caller holds its s_lock, in a run (sqp->run).
 * @w: the WQE at sq_tail; the QP's route krwq_wire_reaches().
 *
 * A SEND (with immediate or invalidate) or an RDMA WRITE goes in packets
 * of the path MTU, the last asking for an acknowledgment; an RDMA READ or
 * an atomic in one request packet.  The caller then waits for the answer
 * (req.c), and the WQEs behind it may go ahead with the PSNs after its
 * last (krwq_wire_send_ahead()).  A packet that cannot be built for want
 * of memory is as one lost on the way: the answer does not come, and the
 * WQE is sent again.
 *
 * Return: IB_WC_SUCCESS, or IB_WC_LOC_PROT_ERR when the payload's regions
 * do not check out.
 */
enum ib_wc_status krwq_wire_send_rc(struct krwq_qp *sqp, struct krwq_swqe *w)
{
	struct krwq_wire_req *req = &sqp->wire_req;
	u32 skip = 0;
	int ret;

	/* a READ that timed out after responses came: only the rest */
	if (w->opcode == IB_WR_RDMA_READ && req->sent && req->read_off) {
		krwq_wire_read_rest(sqp, w, sqp->run->tx);
		req->read_gap = false;
		req->resume = false;
		/* what goes behind it (again) takes the PSNs after its own */
		sqp->wire_psn = krwq_psn_add(req->last_psn, 1);
		return IB_WC_SUCCESS;
	}
	if (req->resume && !krwq_is_rd_atomic(w->opcode))
		skip = krwq_psn_diff(req->resume_psn, req->first_psn);
	req->resume = false;
	sqp->wire_psn = req->first_psn;
	if (krwq_is_rd_atomic(w->opcode))
		ret = krwq_wire_send_request(sqp, w);
	else
		ret = krwq_wire_send_msg(sqp, w, IB_OPCODE_RC, skip);
	if (ret == -EFAULT)
		return IB_WC_LOC_PROT_ERR;
	req->last_psn = krwq_psn_add(sqp->wire_psn, KRWQ_PSN_MASK);
	/* its first send: no NAK has said the responder took any of it */
	if (!req->sent)
		req->taken_psn = req->first_psn;
	req->sent = true;
	req->next_resp = req->first_psn;
	req->read_off = 0;
	req->read_gap = false;
	return IB_WC_SUCCESS;
}

/**
 * krwq_wire_may_send_ahead() - whether @w may go on the wire behind the
 * WQEs of RC @sqp's that await their answer (struct krwq_wire_req).
 * @sqp: the requester; the caller holds its s_lock.
 * @w: the WQE after those sent, not the head.
 *
 * Return: true while the head awaits its answer and nothing ahead failed
 * to go, an RDMA READ or atomic stays within the initiator depth
 * (max_rd_atomic) with those in flight, a fenced WQE has no READ or
 * atomic in flight before it, and @w's PSNs end within
 * KRWQ_WIRE_WINDOW_PSNS of the head's first; for a REG_MR or LOCAL_INV
 * (executed, no PSN), while the head awaits its answer, nothing ahead
 * failed to go, and it is not fenced.
 */
bool krwq_wire_may_send_ahead(struct krwq_qp *sqp, struct krwq_swqe *w)
{
	const struct krwq_wire_req *req = &sqp->wire_req;
	const struct krwq_swqe *head = krwq_sq_entry(sqp, sqp->sq_tail);
	u32 rd_atomic = req->rd_atomic_ahead +
			krwq_is_rd_atomic(head->opcode);
	s32 used = krwq_psn_diff(sqp->wire_psn, req->first_psn);

	lockdep_assert_held(&sqp->s_lock);
	if (req->await != KRWQ_WIRE_AWAIT_ANSWER || req->ahead_blocked)
		return false;
	if (krwq_is_rd_atomic(w->opcode) &&
	    rd_atomic >= sqp->attr.max_rd_atomic)
		return false;
	if ((w->send_flags & IB_SEND_FENCE) && rd_atomic)
		return false;
	/*
	 * executed now, it takes no PSN (req.c's krwq_exec_local_ahead());
	 * fenced, it waits for every WQE before it, whose resends may still
	 * read through the region it changes
	 */
	if (w->opcode == IB_WR_REG_MR || w->opcode == IB_WR_LOCAL_INV)
		return !(w->send_flags & IB_SEND_FENCE);
	/* none in flight before the head's first PSN */
	return used >= 0 &&
	       (u32)used + krwq_wire_psns(sqp, w) <= KRWQ_WIRE_WINDOW_PSNS;
}

/**
 * krwq_wire_send_ahead() - put a WQE on the wire behind the WQEs of RC
 * @sqp's that await their answer, with the PSNs after theirs.
 * @sqp: the requester; the caller holds its s_lock, in a run (sqp->run).
 * @w: a WQE krwq_wire_may_send_ahead() allowed.
 *
 * A SEND or WRITE goes in packets, an RDMA READ or atomic as its request
 * (as the head's do, krwq_wire_send_rc()), queued on the run's list, and
 * its last PSN is kept in @w->wire_last_psn.  A packet that cannot be
 * built for want of memory is as one lost on the way.  If a SEND's or
 * WRITE's regions do not check out, it takes no PSN and nothing more
 * goes ahead (wire_req.ahead_blocked): it fails in its turn as the head.
 * (A READ's or atomic's regions are checked as its answer lands.)
 *
 * Return: true when it went and counts as sent ahead (wire_req.ahead):
 * the head it went behind still awaits its answer.  The run lets s_lock
 * go as it copies, and answers come meanwhile: one that completed the
 * last WQE before @w, or sends the head again (a NAK, an RNR NAK, the
 * timeout), leaves @w to go as the head or behind it again.
 */
bool krwq_wire_send_ahead(struct krwq_qp *sqp, struct krwq_swqe *w)
{
	struct krwq_wire_req *req = &sqp->wire_req;
	u32 first = sqp->wire_psn;

	if (krwq_is_rd_atomic(w->opcode)) {
		krwq_wire_send_request(sqp, w);
	} else if (krwq_wire_send_msg(sqp, w, IB_OPCODE_RC, 0) == -EFAULT) {
		sqp->wire_psn = first;
		if (req->await == KRWQ_WIRE_AWAIT_ANSWER)
			req->ahead_blocked = true;
		return false;
	}
	w->wire_last_psn = krwq_psn_add(sqp->wire_psn, KRWQ_PSN_MASK);
	if (req->await != KRWQ_WIRE_AWAIT_ANSWER)
		return false;
	req->ahead++;
	req->rd_atomic_ahead += krwq_is_rd_atomic(w->opcode);
	return true;
}

/**
 * krwq_wire_read_rest() - ask again for what is left of the RDMA READ at
 * sq_tail, from the response expected next: a response came past it, so
 * that one was lost or is late, or the READ timed out after responses
 * came.  The responder takes the request as a
 * duplicate and reads again from its address; the responses before it,
 * already in place, are not asked for again.
 * @sqp: the requester; the caller holds its s_lock.
 * @w: the READ at sq_tail.
 * @out: the caller's, sent with krwq_tx_xmit() once s_lock is released.
 */
void krwq_wire_read_rest(struct krwq_qp *sqp, struct krwq_swqe *w,
			 struct sk_buff_head *out)
{
	struct krwq_wire_req *req = &sqp->wire_req;
	struct krwq_wire_pkt pkt = {
		.opcode = IB_OPCODE_RC_RDMA_READ_REQUEST,
		.ack_req = true,
		.pkey = IB_DEFAULT_PKEY_FULL,
		.dqpn = sqp->attr.dest_qp_num,
		.psn = req->next_resp,
		.va = w->remote_addr + req->read_off,
		.rkey = w->rkey,
		.dma_len = w->length - req->read_off,
	};
	struct krwq_tx_cb to;

	krwq_tx_to_peer(&to, sqp);
	if (krwq_tx_build(sqp->dev, &pkt, NULL, 0, &to, out) == -ENOMEM)
		krwq_count(sqp->dev, KRWQ_STAT_WIRE_TX_DROPPED, 1);
}
EXPORT_SYMBOL_IF_KUNIT(krwq_wire_read_rest);
