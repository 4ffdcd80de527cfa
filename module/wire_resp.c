// SPDX-License-Identifier: GPL-2.0
/*
 * wire_resp.c - the responder's side of the wire: packets that came in
 * (net.c) delivered into a destination QP, under its r_lock, through the
 * same receive side as the host's deliveries (recv.c).  UD datagrams; UC
 * messages in packets, a lost one dropping its message; RC requests in
 * PSN order, acknowledged, with RNR and sequence NAKs, duplicates
 * answered again, READ responses and atomic results.  What it answers
 * goes out through tx.c once r_lock is released.
 */
#include <kunit/visibility.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_pack.h>

#include "krwq.h"
#include "krwq_core.h"
#include "recv.h"
#include "resp.h"
#include "tx.h"
#include "wire.h"

/**
 * krwq_resp_wire_ud() - deliver a UD datagram that came from the wire into
 * @dqp, as krwq_exec_ud() delivers one from the fabric: the receive WQE
 * through the core, the network header in its first 40 bytes; one @dqp
 * refuses is dropped.
 * @dqp: the QP the packet's BTH names, held by the caller.
 * @pkt: the packet's transport headers, checked (net.c).
 * @hdr: the 40 bytes the receive starts with, from the packet's IP header.
 * @type: which header @hdr holds.
 * @payload: pkt->payload_len bytes.
 *
 * Context: softirq; takes dqp->r_lock and holds it throughout, so its
 * scratch (dqp->w_sge, w_mrs) is its own.
 */
void krwq_resp_wire_ud(struct krwq_qp *dqp, const struct krwq_wire_pkt *pkt,
		       const union rdma_network_hdr *hdr,
		       enum rdma_network_type type, const void *payload)
{
	u32 len = pkt->payload_len, need = len + KRWQ_UD_GRH_BYTES;
	enum krwq_take_outcome taken;
	struct krwq_sge_cursor dst;
	union ib_gid sgid, dgid;
	struct ib_wc wc = {};
	struct krwq_taken t;
	unsigned long flags;
	int ret;

	spin_lock_irqsave(&dqp->r_lock, flags);
	if (!krwq_qp_is_ud(dqp) || pkt->qkey != dqp->attr.qkey ||
	    !krwq_can_receive(dqp))
		goto drop;
	taken = krwq_take(dqp->w_sge, dqp, &t, dqp->srq ? 0 : need);
	if (taken == KRWQ_TAKE_TOO_SMALL || taken == KRWQ_TAKE_MALFORMED)
		goto out;
	if (taken != KRWQ_TAKE_TAKEN)
		goto drop;
	if (!krwq_dest_fits(dqp->w_sge, dqp, &t, need))
		goto out;
	if (!krwq_get_mrs(dqp->dev, krwq_dest_pd(dqp), dqp->w_sge, t.num_sge,
			  IB_ACCESS_LOCAL_WRITE, dqp->w_mrs)) {
		krwq_dest_error(dqp, t.wr_id, IB_WC_LOC_PROT_ERR);
		goto out;
	}
	krwq_cursor_init(&dst, dqp->w_sge, t.num_sge, dqp->w_mrs);
	ret = krwq_write(&dst, hdr, KRWQ_UD_GRH_BYTES);
	if (!ret)
		ret = krwq_write(&dst, payload, len);
	krwq_put_mrs(dqp->w_mrs, t.num_sge);
	if (ret) {	/* the lengths were checked: a revoked region */
		krwq_dest_error(dqp, t.wr_id, IB_WC_LOC_PROT_ERR);
		goto out;
	}
	wc.wr_id = t.wr_id;
	wc.opcode = IB_WC_RECV;
	wc.byte_len = need;
	wc.src_qp = pkt->sqpn;
	wc.port_num = 1;
	wc.wc_flags = IB_WC_GRH;
	if (!dqp->ibqp.uobject) {
		wc.wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
		wc.network_hdr_type = type;
		if (!ib_get_gids_from_rdma_hdr(hdr, type, &sgid, &dgid))
			krwq_port_wc_vlan(dqp->dev, &wc, &dgid);
	}
	if (pkt->opcode == IB_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = pkt->imm;
	}
	krwq_dest_complete(dqp, &wc, pkt->se);
out:
	spin_unlock_irqrestore(&dqp->r_lock, flags);
	return;
drop:
	krwq_count(dqp->dev, KRWQ_STAT_UD_DROPPED, 1);
	goto out;
}

/* --- UC from the wire ---------------------------------------------------- */

/* The low five bits of a packet's opcode: what it is, whatever the class. */
static u8 krwq_wire_op(const struct krwq_wire_pkt *pkt)
{
	return pkt->opcode & KRWQ_WIRE_OP_MASK;
}

static bool krwq_wire_op_first(u8 op)
{
	switch (op) {
	case IB_OPCODE_SEND_FIRST:
	case IB_OPCODE_SEND_ONLY:
	case IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE:
	case IB_OPCODE_SEND_ONLY_WITH_INVALIDATE:
	case IB_OPCODE_RDMA_WRITE_FIRST:
	case IB_OPCODE_RDMA_WRITE_ONLY:
	case IB_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE:
		return true;
	default:
		return false;
	}
}

static bool krwq_wire_op_last(u8 op)
{
	switch (op) {
	case IB_OPCODE_SEND_LAST:
	case IB_OPCODE_SEND_LAST_WITH_IMMEDIATE:
	case IB_OPCODE_SEND_ONLY:
	case IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE:
	case IB_OPCODE_SEND_LAST_WITH_INVALIDATE:
	case IB_OPCODE_SEND_ONLY_WITH_INVALIDATE:
	case IB_OPCODE_RDMA_WRITE_LAST:
	case IB_OPCODE_RDMA_WRITE_LAST_WITH_IMMEDIATE:
	case IB_OPCODE_RDMA_WRITE_ONLY:
	case IB_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE:
		return true;
	default:
		return false;
	}
}

static bool krwq_wire_op_send(u8 op)
{
	return op <= IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE ||
	       op == IB_OPCODE_SEND_LAST_WITH_INVALIDATE ||
	       op == IB_OPCODE_SEND_ONLY_WITH_INVALIDATE;
}

/*
 * The message in progress is dropped (a packet of it was lost, or came
 * out of order): what it wrote stays written, its receive WQE stays held
 * for the next SEND, and what is left of it is dropped up to its last
 * packet.
 */
static void krwq_wire_abandon(struct krwq_qp *dqp)
{
	struct krwq_wire_rx *rx = &dqp->wire_rx;

	if (rx->msg == KRWQ_WIRE_MSG_SEND || rx->msg == KRWQ_WIRE_MSG_WRITE)
		krwq_count(dqp->dev, KRWQ_STAT_RX_DROPPED, 1);
	rx->msg = KRWQ_WIRE_MSG_DROP;
}

/*
 * The receive WQE a SEND or a WRITE with immediate completes: the one
 * held, or one taken now (for @need bytes, unless an SRQ's), which is
 * then held in wire_rx.t.  Return: as krwq_take(), KRWQ_TAKE_TAKEN for
 * the one already held.
 */
static enum krwq_take_outcome krwq_wire_take_rwqe(struct krwq_qp *dqp,
						  u32 need)
{
	struct krwq_wire_rx *rx = &dqp->wire_rx;
	enum krwq_take_outcome taken;

	if (rx->held)
		return KRWQ_TAKE_TAKEN;
	taken = krwq_take(dqp->w_sge, dqp, &rx->t, dqp->srq ? 0 : need);
	rx->held = taken == KRWQ_TAKE_TAKEN;
	return taken;
}

/*
 * UC's take (krwq_wire_take_rwqe()).  Return: true when wire_rx.t holds
 * a receive WQE; else the message is dropped (none posted, counted, or
 * one malformed, completed in error).
 */
static bool krwq_wire_hold_rwqe(struct krwq_qp *dqp, u32 need)
{
	enum krwq_take_outcome taken = krwq_wire_take_rwqe(dqp, need);

	if (taken == KRWQ_TAKE_EMPTY)
		krwq_count(dqp->dev, KRWQ_STAT_RX_DROPPED, 1);
	return taken == KRWQ_TAKE_TAKEN;
}

/*
 * Ends the SEND in progress with its last packet: the held WQE completes
 * with what the message carried.
 */
static void krwq_wire_complete(struct krwq_qp *dqp,
			       const struct krwq_wire_pkt *pkt,
			       enum ib_wc_opcode opcode, u32 byte_len)
{
	struct krwq_wire_rx *rx = &dqp->wire_rx;
	struct ib_wc wc = {
		.wr_id = rx->t.wr_id,
		.opcode = opcode,
		.byte_len = byte_len,
		.src_qp = dqp->attr.dest_qp_num,
		.port_num = 1,
	};

	if (krwq_wire_headers(pkt->opcode) & KRWQ_HDR_IMMDT) {
		wc.wc_flags = IB_WC_WITH_IMM;
		wc.ex.imm_data = pkt->imm;
	} else if (krwq_wire_headers(pkt->opcode) & KRWQ_HDR_IETH) {
		wc.wc_flags = IB_WC_WITH_INVALIDATE;
		wc.ex.invalidate_rkey = pkt->inv_rkey;
	}
	rx->held = false;
	krwq_dest_complete(dqp, &wc, pkt->se);
}

/*
 * One packet of a SEND into the held WQE, after what came before.
 * Return: false when the message is dropped: too long for the WQE
 * (which stays held, or, an SRQ's, completes LOC_LEN_ERR), or a region
 * of it gone (it completes LOC_PROT_ERR and the QP goes to ERR).
 */
static bool krwq_wire_send_data(struct krwq_qp *dqp, const void *payload,
				u32 len)
{
	struct krwq_wire_rx *rx = &dqp->wire_rx;
	struct krwq_sge_cursor dst;
	int ret;

	if ((u64)rx->off + len > krwq_sge_total(dqp->w_sge, rx->t.num_sge)) {
		if (dqp->srq) {
			rx->held = false;
			krwq_dest_dropped(dqp, rx->t.wr_id, IB_WC_LOC_LEN_ERR);
		} else {
			krwq_count(dqp->dev, KRWQ_STAT_RX_DROPPED, 1);
		}
		return false;
	}
	if (!len)
		return true;
	if (!krwq_get_mrs(dqp->dev, krwq_dest_pd(dqp), dqp->w_sge,
			  rx->t.num_sge, IB_ACCESS_LOCAL_WRITE, dqp->w_mrs)) {
		rx->held = false;
		krwq_dest_error(dqp, rx->t.wr_id, IB_WC_LOC_PROT_ERR);
		return false;
	}
	krwq_cursor_init(&dst, dqp->w_sge, rx->t.num_sge, dqp->w_mrs);
	ret = krwq_write(&dst, NULL, rx->off);
	if (!ret)
		ret = krwq_write(&dst, payload, len);
	krwq_put_mrs(dqp->w_mrs, rx->t.num_sge);
	if (ret) {	/* the length was checked: a region revoked */
		rx->held = false;
		krwq_dest_error(dqp, rx->t.wr_id, IB_WC_LOC_PROT_ERR);
		return false;
	}
	rx->off += len;
	return true;
}

/*
 * One packet of an RDMA WRITE, at the next address the RETH's region
 * allows.  Return: false when the message is dropped (UC drops a write
 * the responder may not make, or one longer than its RETH said).
 */
static bool krwq_wire_write_data(struct krwq_qp *dqp, const void *payload,
				 u32 len)
{
	struct krwq_wire_rx *rx = &dqp->wire_rx;
	struct ib_sge sge = {
		.addr = rx->va + rx->off, .length = len, .lkey = rx->rkey,
	};
	struct krwq_sge_cursor dst;
	struct krwq_mr *mr = NULL;
	int ret;

	if ((u64)rx->off + len > rx->len)
		goto drop;
	if (!len)
		return true;
	if (dqp->attr.qp_access_flags & IB_ACCESS_REMOTE_WRITE)
		mr = krwq_mr_get(dqp->dev, dqp->ibqp.pd, rx->rkey,
				 IB_ACCESS_REMOTE_WRITE, sge.addr, len);
	if (!mr)
		goto drop;
	krwq_cursor_init(&dst, &sge, 1, &mr);
	ret = krwq_write(&dst, payload, len);
	krwq_mr_put(mr);
	if (ret)
		goto drop;
	rx->off += len;
	return true;
drop:
	krwq_count(dqp->dev, KRWQ_STAT_RX_DROPPED, 1);
	return false;
}

/* The first packet of a message: what the message is, and where it goes. */
static bool krwq_wire_start(struct krwq_qp *dqp,
			    const struct krwq_wire_pkt *pkt, u8 op)
{
	struct krwq_wire_rx *rx = &dqp->wire_rx;

	rx->off = 0;
	if (krwq_wire_op_send(op)) {
		rx->msg = KRWQ_WIRE_MSG_SEND;
		return krwq_wire_hold_rwqe(dqp, pkt->payload_len);
	}
	rx->msg = KRWQ_WIRE_MSG_WRITE;
	rx->va = pkt->va;
	rx->rkey = pkt->rkey;
	rx->len = pkt->dma_len;
	return true;
}

/* One UC packet, in order or not, into @dqp (r_lock held, may receive). */
static void krwq_wire_uc_packet(struct krwq_qp *dqp,
				const struct krwq_wire_pkt *pkt,
				const void *payload)
{
	struct krwq_wire_rx *rx = &dqp->wire_rx;
	u8 op = krwq_wire_op(pkt);
	bool first = krwq_wire_op_first(op), last = krwq_wire_op_last(op);
	bool ok;

	/*
	 * UC has no retries: a PSN other than the expected one means
	 * packets were lost, and the message they belonged to is dropped;
	 * the expected PSN follows the packet's, whatever it was
	 */
	if (pkt->psn != rx->epsn ||
	    (first && (rx->msg == KRWQ_WIRE_MSG_SEND ||
		       rx->msg == KRWQ_WIRE_MSG_WRITE)))
		krwq_wire_abandon(dqp);
	rx->epsn = krwq_psn_add(pkt->psn, 1);
	if (first) {
		ok = krwq_wire_start(dqp, pkt, op);
	} else if (rx->msg == KRWQ_WIRE_MSG_SEND || rx->msg == KRWQ_WIRE_MSG_WRITE) {
		ok = krwq_wire_op_send(op) == (rx->msg == KRWQ_WIRE_MSG_SEND);
		if (!ok)
			krwq_wire_abandon(dqp);
	} else {
		/* the rest of a message being dropped, or a stray packet */
		if (rx->msg == KRWQ_WIRE_MSG_NONE)
			krwq_count(dqp->dev, KRWQ_STAT_WIRE_RX_DROPPED, 1);
		ok = false;
	}
	if (ok && rx->msg == KRWQ_WIRE_MSG_SEND)
		ok = krwq_wire_send_data(dqp, payload, pkt->payload_len);
	else if (ok)
		ok = krwq_wire_write_data(dqp, payload, pkt->payload_len);
	if (ok && last && rx->msg == KRWQ_WIRE_MSG_SEND) {
		krwq_wire_complete(dqp, pkt, IB_WC_RECV, rx->off);
	} else if (ok && last && rx->off != rx->len) {
		/* a WRITE shorter than its RETH said */
		krwq_count(dqp->dev, KRWQ_STAT_RX_DROPPED, 1);
	} else if (ok && last && (krwq_wire_headers(pkt->opcode) & KRWQ_HDR_IMMDT)) {
		if (krwq_wire_hold_rwqe(dqp, 0))
			krwq_wire_complete(dqp, pkt, IB_WC_RECV_RDMA_WITH_IMM,
					   rx->len);
	}
	if (last)
		rx->msg = KRWQ_WIRE_MSG_NONE;
	else if (!ok)
		rx->msg = KRWQ_WIRE_MSG_DROP;
}

/**
 * krwq_wire_from_peer() - whether a packet for connected @dqp comes from
 * its peer's address to its own: the path's destination GID and the
 * source GID it resolved to.
 * @dqp: the QP; the caller holds its s_lock or r_lock (either keeps its
 *       path as it is).
 * @sgid: the packet's IP source, as a GID.
 * @dgid: its IP destination, as a GID.
 *
 * Return: true when both match.
 */
bool krwq_wire_from_peer(struct krwq_qp *dqp, const union ib_gid *sgid,
			 const union ib_gid *dgid)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(&dqp->attr.ah_attr);

	return grh && !memcmp(sgid, &grh->dgid, sizeof(*sgid)) &&
	       !memcmp(dgid, &dqp->route.sgid, sizeof(*dgid));
}

/**
 * krwq_resp_wire_uc() - deliver one UC packet that came from the wire into
 * @dqp, the QP its BTH names, packet by packet: a SEND fills one receive
 * WQE over its packets and completes it with its last; an RDMA WRITE
 * writes each packet where its RETH points.  A packet out of sequence
 * drops the message it belongs to (UC has no retries): the receive WQE it
 * had taken stays for the next SEND, as an HCA reuses it.
 * @dqp: the QP, held by the caller.
 * @pkt: the packet's transport headers, checked (net.c).
 * @sgid: the packet's IP source, as a GID.
 * @dgid: its IP destination, as a GID.
 * @payload: pkt->payload_len bytes.
 *
 * A packet from anyone but the QP's peer, or for a QP that is not UC or
 * cannot receive (before RTR, in ERR), is dropped and counted in
 * wire_rx_dropped.
 *
 * Context: softirq; takes dqp->r_lock and holds it throughout, so the
 * scratch (dqp->w_sge, w_mrs, wire_rx) is its own.
 */
void krwq_resp_wire_uc(struct krwq_qp *dqp, const struct krwq_wire_pkt *pkt,
		       const union ib_gid *sgid, const union ib_gid *dgid,
		       const void *payload)
{
	unsigned long flags;

	spin_lock_irqsave(&dqp->r_lock, flags);
	if (dqp->ibqp.qp_type == IB_QPT_UC &&
	    krwq_wire_from_peer(dqp, sgid, dgid) && krwq_can_receive(dqp))
		krwq_wire_uc_packet(dqp, pkt, payload);
	else
		krwq_count(dqp->dev, KRWQ_STAT_WIRE_RX_DROPPED, 1);
	spin_unlock_irqrestore(&dqp->r_lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(krwq_resp_wire_uc);

/**
 * krwq_resp_wire_reset() - a RESET ends the UC message in progress: the
 * receive WQE it held goes with the QP's ring, or, an SRQ's, which a
 * reset does not discard, completes flushed.
 * @qp: the QP; the caller holds its r_lock.
 */
void krwq_resp_wire_reset(struct krwq_qp *qp)
{
	struct krwq_wire_rx *rx = &qp->wire_rx;

	lockdep_assert_held(&qp->r_lock);
	if (rx->held && qp->srq)
		krwq_rq_flush_complete(qp, rx->t.wr_id);
	rx->held = false;
	rx->msg = KRWQ_WIRE_MSG_NONE;
	rx->msn = 0;
	rx->nak_sent = false;
	rx->inv_wait = false;
	if (rx->atomics)
		memset(rx->atomics, 0, KRWQ_MAX_RD_ATOM * sizeof(*rx->atomics));
}

/* --- RC from the wire ------------------------------------------------------ */

/*
 * Builds an answer of responder @dqp's (an acknowledgment, a READ
 * response) onto @out, which its caller sends once r_lock is released.
 */
static int krwq_wire_answer_pkt(struct krwq_qp *dqp, struct krwq_wire_pkt *pkt,
				struct krwq_sge_cursor *src, u32 len,
				struct sk_buff_head *out)
{
	struct krwq_tx_cb to;
	int ret;

	pkt->pkey = IB_DEFAULT_PKEY_FULL;
	pkt->dqpn = dqp->attr.dest_qp_num;
	pkt->msn = dqp->wire_rx.msn;
	krwq_tx_to_peer(&to, dqp);
	ret = krwq_tx_build(dqp->dev, pkt, src, len, &to, out);
	if (ret == -ENOMEM)
		krwq_count(dqp->dev, KRWQ_STAT_WIRE_TX_DROPPED, 1);
	return ret;
}

/* An acknowledgment of @psn with AETH @syndrome (an ACK or a NAK). */
static void krwq_wire_ack(struct krwq_qp *dqp, u8 syndrome, u32 psn,
			  struct sk_buff_head *out)
{
	struct krwq_wire_pkt pkt = {
		.opcode = IB_OPCODE_RC_ACKNOWLEDGE,
		.psn = psn,
		.syndrome = syndrome,
	};

	krwq_wire_answer_pkt(dqp, &pkt, NULL, 0, out);
}

/*
 * A request the responder cannot carry out: NAK it with @code, and the
 * responder goes to ERR (IB 9.9.3: an invalid request, a remote access
 * or a remote operational error ends the connection at both ends).
 */
static void krwq_wire_fatal(struct krwq_qp *dqp, u8 code, u32 psn,
			    struct sk_buff_head *out)
{
	krwq_wire_ack(dqp, KRWQ_AETH_NAK | code, psn, out);
	dqp->wire_rx.msg = KRWQ_WIRE_MSG_NONE;
	krwq_qp_fail(dqp);
}

/* No receive WQE for a SEND (or a WRITE's immediate): come back later. */
static void krwq_wire_rnr(struct krwq_qp *dqp, u32 psn,
			  struct sk_buff_head *out)
{
	krwq_wire_ack(dqp, KRWQ_AETH_RNR_NAK | dqp->attr.min_rnr_timer, psn,
		      out);
}

/*
 * A SEND's packet into the held WQE, or a WRITE's at its address.
 * Return: 0, or the NAK code the message fails with (the WQE completes in
 * error where one is held).
 */
static int krwq_wire_rc_data(struct krwq_qp *dqp,
			     const struct krwq_wire_pkt *pkt,
			     const void *payload, bool send)
{
	struct krwq_wire_rx *rx = &dqp->wire_rx;
	u32 len = pkt->payload_len;

	if (send) {
		if ((u64)rx->off + len >
		    krwq_sge_total(dqp->w_sge, rx->t.num_sge)) {
			rx->held = false;
			krwq_dest_error(dqp, rx->t.wr_id, IB_WC_LOC_LEN_ERR);
			return KRWQ_NAK_INVALID_REQ;
		}
		/* the WQE completes LOC_PROT_ERR if a region is gone */
		return krwq_wire_send_data(dqp, payload, len) ?
		       0 : KRWQ_NAK_REM_OP_ERR;
	}
	if ((u64)rx->off + len > rx->len)
		return KRWQ_NAK_INVALID_REQ;
	if (!krwq_wire_write_data(dqp, payload, len))
		return KRWQ_NAK_REM_ACCESS;
	return 0;
}

/*
 * The end of a SEND or RDMA WRITE packet with the expected PSN, its
 * payload placed (@code 0) or refused (@code, a NAK): a SEND_WITH_INV's
 * invalidation, then the PSN moves on, a last packet completes its
 * message, and the packet is acknowledged if it asks.  An invalidation
 * whose region a copy still holds (it lets go at its next window, maybe
 * only after taking a lock whose holder waits for this r_lock) is not
 * waited for here: the packet stays unanswered, its PSN expected, and
 * inv_work looks again a tick later.
 */
static void krwq_wire_rc_msg_end(struct krwq_qp *dqp,
				 const struct krwq_wire_pkt *pkt, int code,
				 struct sk_buff_head *out)
	__must_hold(&dqp->r_lock)
{
	struct krwq_wire_rx *rx = &dqp->wire_rx;
	u8 op = krwq_wire_op(pkt);
	bool last = krwq_wire_op_last(op), send = krwq_wire_op_send(op);
	u32 hdrs = krwq_wire_headers(pkt->opcode);

	if (!code && (hdrs & KRWQ_HDR_IETH)) {
		int inv = krwq_mr_invalidate(dqp->dev, dqp->ibqp.pd,
					     pkt->inv_rkey);

		if (inv == -EBUSY) {
			if (!rx->inv_wait) {
				krwq_count(dqp->dev, KRWQ_STAT_INV_WAITS, 1);
				rx->inv.opcode = pkt->opcode;
				rx->inv.se = pkt->se;
				rx->inv.ack_req = false;
				rx->inv.psn = pkt->psn;
				rx->inv.rkey = pkt->inv_rkey;
			}
			/* a retry of the packet may ask for the ACK */
			rx->inv.ack_req |= pkt->ack_req;
			rx->inv_wait = true;
			queue_delayed_work(krwq_wq, &dqp->inv_work, 1);
			return;
		}
		rx->inv_wait = false;
		if (inv) {
			rx->held = false;
			krwq_dest_error(dqp, rx->t.wr_id, IB_WC_LOC_PROT_ERR);
			code = KRWQ_NAK_INVALID_REQ;
		}
	}
	if (code) {
		krwq_wire_fatal(dqp, code, pkt->psn, out);
		return;
	}
	rx->epsn = krwq_psn_add(pkt->psn, 1);
	rx->nak_sent = false;	/* one sent while inv_work waited named the old */
	if (last) {
		rx->msg = KRWQ_WIRE_MSG_NONE;
		rx->msn = krwq_psn_add(rx->msn, 1);
		if (send)
			krwq_wire_complete(dqp, pkt, IB_WC_RECV, rx->off);
		else if (hdrs & KRWQ_HDR_IMMDT)
			krwq_wire_complete(dqp, pkt, IB_WC_RECV_RDMA_WITH_IMM,
					   rx->len);
	}
	if (pkt->ack_req)
		krwq_wire_ack(dqp, KRWQ_AETH_ACK | KRWQ_AETH_CREDITS_UNLIMITED,
			      pkt->psn, out);
}

/*
 * The packet of a SEND or RDMA WRITE with the expected PSN.  A first
 * packet comes between messages, the others within one of their kind; a
 * SEND takes a receive WQE at its first packet and a WRITE with
 * immediate at its last, and without one the responder asks the
 * requester to come back (RNR NAK) with its state kept.
 */
static void krwq_wire_rc_msg(struct krwq_qp *dqp,
			     const struct krwq_wire_pkt *pkt, u8 op,
			     const void *payload, struct sk_buff_head *out)
{
	struct krwq_wire_rx *rx = &dqp->wire_rx;
	bool first = krwq_wire_op_first(op), last = krwq_wire_op_last(op);
	bool send = krwq_wire_op_send(op);
	u32 hdrs = krwq_wire_headers(pkt->opcode);
	int code;

	/*
	 * The last packet of a SEND_WITH_INV again, its payload in place and
	 * its region found still in use (krwq_wire_rc_msg_end()): only the
	 * invalidation and what follows it are left.  Its PSN names that
	 * packet.
	 */
	if (rx->inv_wait) {
		if (!last || !(hdrs & KRWQ_HDR_IETH))
			krwq_wire_fatal(dqp, KRWQ_NAK_INVALID_REQ, pkt->psn, out);
		else
			krwq_wire_rc_msg_end(dqp, pkt, 0, out);
		return;
	}
	if (first ? rx->msg != KRWQ_WIRE_MSG_NONE :
		    rx->msg != (send ? KRWQ_WIRE_MSG_SEND : KRWQ_WIRE_MSG_WRITE)) {
		krwq_wire_fatal(dqp, KRWQ_NAK_INVALID_REQ, pkt->psn, out);
		return;
	}
	if (first && !send) {
		rx->va = pkt->va;
		rx->rkey = pkt->rkey;
		rx->len = pkt->dma_len;
	}
	/* the receive WQE, before anything is written */
	if ((first && send) || (last && (hdrs & KRWQ_HDR_IMMDT) && !send)) {
		enum krwq_take_outcome taken = krwq_wire_take_rwqe(dqp, 0);

		if (taken == KRWQ_TAKE_EMPTY) {
			krwq_wire_rnr(dqp, pkt->psn, out);
			return;
		}
		if (taken != KRWQ_TAKE_TAKEN) {	/* completed in error */
			krwq_wire_fatal(dqp, KRWQ_NAK_REM_OP_ERR, pkt->psn, out);
			return;
		}
	}
	if (first) {
		rx->off = 0;
		rx->msg = send ? KRWQ_WIRE_MSG_SEND : KRWQ_WIRE_MSG_WRITE;
	}
	code = krwq_wire_rc_data(dqp, pkt, payload, send);
	if (!code && last && !send && rx->off != rx->len)
		code = KRWQ_NAK_INVALID_REQ;	/* shorter than its RETH */
	if (code && !send && rx->held && last && (hdrs & KRWQ_HDR_IMMDT)) {
		rx->held = false;
		krwq_dest_error(dqp, rx->t.wr_id, IB_WC_LOC_PROT_ERR);
	}
	krwq_wire_rc_msg_end(dqp, pkt, code, out);
}

/**
 * krwq_wire_inv_work() - a SEND_WITH_INV from the wire whose region was
 * still in a copy (wire_rx.inv_wait): look again, a tick at a time, and
 * once the region is free, complete the receive and acknowledge the
 * message as its last packet would have, so that no requester has to
 * send it again (one with no ACK timeout never would).
 * @work: qp->inv_work.
 *
 * Context: process context; takes the QP's r_lock.
 */
void krwq_wire_inv_work(struct work_struct *work)
{
	struct krwq_qp *dqp = container_of(to_delayed_work(work),
					   struct krwq_qp, inv_work);
	struct krwq_wire_rx *rx = &dqp->wire_rx;
	struct sk_buff_head out;
	unsigned long flags;

	__skb_queue_head_init(&out);
	spin_lock_irqsave(&dqp->r_lock, flags);
	if (rx->inv_wait && !dqp->err_pending && krwq_can_receive(dqp)) {
		struct krwq_wire_pkt pkt = {
			.opcode = rx->inv.opcode,
			.se = rx->inv.se,
			.ack_req = rx->inv.ack_req,
			.pkey = IB_DEFAULT_PKEY_FULL,
			.dqpn = dqp->ibqp.qp_num,
			.psn = rx->inv.psn,
			.inv_rkey = rx->inv.rkey,
		};

		krwq_wire_rc_msg_end(dqp, &pkt, 0, &out);
	}
	spin_unlock_irqrestore(&dqp->r_lock, flags);
	local_bh_disable();	/* as from the socket's softirq */
	krwq_tx_xmit(dqp->dev, &out, flags);
	local_bh_enable();
}

/**
 * struct krwq_wire_read - an RDMA READ's responses to send, taken down
 * under the responder's r_lock and built once it is released.
 * @mr: the region read, held; NULL for a READ of 0 bytes.
 * @rkey: its R_Key.
 * @va: where the READ starts.
 * @len: its length.
 * @psn: the PSN of its first response.
 * @mtu: the path MTU the responses are cut at.
 * @msn: the MSN their AETHs carry.
 * @dqpn: the requester's QP.
 * @to: where the responses go.
 */
struct krwq_wire_read {
	struct krwq_mr *mr;
	u32 rkey;
	u64 va;
	u32 len, psn, mtu, msn, dqpn;
	struct krwq_tx_cb to;
};

/*
 * An RDMA READ request: its responses, of the path MTU, from the request's
 * PSN on, the first and last with an AETH, are sent once r_lock is
 * released (krwq_wire_read_send(), from @job).  @fresh: the expected PSN,
 * which the responses then move past; else a duplicate (its responses
 * were lost), read again as it asks, nothing else changed.  Return: true
 * when @job holds responses to send.
 */
static bool krwq_wire_rc_read(struct krwq_qp *dqp,
			      const struct krwq_wire_pkt *pkt, bool fresh,
			      struct sk_buff_head *out, struct krwq_wire_read *job)
{
	struct krwq_wire_rx *rx = &dqp->wire_rx;
	u32 mtu = krwq_path_mtu_bytes(dqp);
	struct krwq_mr *mr = NULL;
	u32 n;

	if ((fresh && rx->msg != KRWQ_WIRE_MSG_NONE) ||
	    !dqp->attr.max_dest_rd_atomic || pkt->dma_len > KRWQ_MAX_MSG_SIZE) {
		krwq_wire_fatal(dqp, KRWQ_NAK_INVALID_REQ, pkt->psn, out);
		return false;
	}
	if (pkt->dma_len && (dqp->attr.qp_access_flags & IB_ACCESS_REMOTE_READ))
		mr = krwq_mr_get(dqp->dev, dqp->ibqp.pd, pkt->rkey,
				 IB_ACCESS_REMOTE_READ, pkt->va, pkt->dma_len);
	if (pkt->dma_len && !mr) {
		krwq_wire_fatal(dqp, KRWQ_NAK_REM_ACCESS, pkt->psn, out);
		return false;
	}
	n = max_t(u32, 1, DIV_ROUND_UP(pkt->dma_len, mtu));
	if (fresh) {
		rx->epsn = krwq_psn_add(pkt->psn, n);
		rx->msn = krwq_psn_add(rx->msn, 1);
	}
	*job = (struct krwq_wire_read) {
		.mr = mr, .rkey = pkt->rkey, .va = pkt->va, .len = pkt->dma_len,
		.psn = pkt->psn,
		.mtu = mtu, .msn = rx->msn, .dqpn = dqp->attr.dest_qp_num,
	};
	krwq_tx_to_peer(&job->to, dqp);
	return true;
}

/* Responses go out in batches of this many bytes, each sent as built. */
#define KRWQ_WIRE_READ_BATCH	SZ_16K

/*
 * Sends one batch of READ responses.  The first goes from the caller's
 * context, so that a short READ is answered at once, unless packets left
 * to dev->tx_work before it are still waiting there (it would overtake
 * them).  The rest go to tx_work: the caller is the socket's softirq,
 * and what it sends to a peer on this host (a veth's backlog) is taken
 * in only once it returns, so a long READ sent from there would overrun
 * that backlog.
 */
static void krwq_wire_read_out(struct krwq_dev *dev,
			       struct sk_buff_head *batch, bool *first,
			       unsigned long irq)
{
	if (*first && skb_queue_empty_lockless(&dev->tx_q))
		krwq_tx_xmit(dev, batch, irq);
	else
		krwq_tx_defer(dev, batch);
	*first = false;
}

/*
 * Builds and sends an RDMA READ's responses (krwq_wire_rc_read()), with no
 * krwq lock held, a batch at a time; drops the region's hold.  A region
 * revoked part way stops them: the requester asks again, and is refused.
 */
static void krwq_wire_read_send(struct krwq_qp *dqp,
				struct krwq_wire_read *job)
{
	u32 n = max_t(u32, 1, DIV_ROUND_UP(job->len, job->mtu)), i, off = 0;
	struct ib_sge rsge = {
		.addr = job->va, .length = job->len,
		.lkey = job->rkey,
	};
	struct krwq_sge_cursor src;
	struct sk_buff_head batch;
	bool first = true;
	unsigned long irq;
	u32 batched = 0;

	__skb_queue_head_init(&batch);
	/* no lock held: the first batch goes out now unless irqs are off */
	local_save_flags(irq);
	krwq_cursor_init(&src, &rsge, 1, &job->mr);
	for (i = 0; i < n; i++) {
		u32 len = min(job->mtu, job->len - off);
		struct krwq_wire_pkt resp = {
			.opcode = n == 1 ? IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY :
				  !i ? IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST :
				  i == n - 1 ? IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST :
				  IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE,
			.pkey = IB_DEFAULT_PKEY_FULL,
			.dqpn = job->dqpn,
			.psn = krwq_psn_add(job->psn, i),
			.syndrome = KRWQ_AETH_ACK | KRWQ_AETH_CREDITS_UNLIMITED,
			.msn = job->msn,
		};
		int ret = krwq_tx_build(dqp->dev, &resp, &src, len, &job->to,
					&batch);

		if (ret == -ENOMEM)
			krwq_count(dqp->dev, KRWQ_STAT_WIRE_TX_DROPPED, 1);
		if (ret)
			break;
		off += len;
		batched += len;
		if (batched >= KRWQ_WIRE_READ_BATCH) {
			krwq_wire_read_out(dqp->dev, &batch, &first, irq);
			batched = 0;
		}
	}
	if (!skb_queue_empty(&batch))
		krwq_wire_read_out(dqp->dev, &batch, &first, irq);
	if (job->mr)
		krwq_mr_put(job->mr);
}

/* An atomic acknowledgment of @psn, carrying the value before. */
static void krwq_wire_atomic_ack(struct krwq_qp *dqp, u32 psn, u64 orig,
				 struct sk_buff_head *out)
{
	struct krwq_wire_pkt pkt = {
		.opcode = IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE,
		.psn = psn,
		.syndrome = KRWQ_AETH_ACK | KRWQ_AETH_CREDITS_UNLIMITED,
		.orig = orig,
	};

	krwq_wire_answer_pkt(dqp, &pkt, NULL, 0, out);
}

/*
 * A compare-and-swap or fetch-and-add with the expected PSN, on 8 aligned
 * bytes of the responder's memory; its result is kept for a duplicate.
 */
static void krwq_wire_rc_atomic(struct krwq_qp *dqp,
				const struct krwq_wire_pkt *pkt,
				struct sk_buff_head *out)
{
	struct krwq_wire_rx *rx = &dqp->wire_rx;
	bool cmp_swap = krwq_wire_op(pkt) == IB_OPCODE_COMPARE_SWAP;
	struct krwq_mr *mr = NULL;
	u64 orig;
	int ret;

	if (rx->msg != KRWQ_WIRE_MSG_NONE || !dqp->attr.max_dest_rd_atomic ||
	    !IS_ALIGNED(pkt->va, sizeof(u64))) {
		krwq_wire_fatal(dqp, KRWQ_NAK_INVALID_REQ, pkt->psn, out);
		return;
	}
	if (dqp->attr.qp_access_flags & IB_ACCESS_REMOTE_ATOMIC)
		mr = krwq_mr_get(dqp->dev, dqp->ibqp.pd, pkt->rkey,
				 IB_ACCESS_REMOTE_ATOMIC, pkt->va, sizeof(u64));
	if (!mr) {
		krwq_wire_fatal(dqp, KRWQ_NAK_REM_ACCESS, pkt->psn, out);
		return;
	}
	ret = krwq_mr_atomic(mr, pkt->va, cmp_swap,
			     cmp_swap ? pkt->compare : pkt->swap_add,
			     pkt->swap_add, &orig);
	krwq_mr_put(mr);
	if (ret) {
		krwq_wire_fatal(dqp, KRWQ_NAK_INVALID_REQ, pkt->psn, out);
		return;
	}
	rx->atomics[rx->atomic_next].psn = pkt->psn;
	rx->atomics[rx->atomic_next].orig = orig;
	rx->atomics[rx->atomic_next].valid = true;
	rx->atomic_next = (rx->atomic_next + 1) % KRWQ_MAX_RD_ATOM;
	rx->epsn = krwq_psn_add(pkt->psn, 1);
	rx->msn = krwq_psn_add(rx->msn, 1);
	krwq_wire_atomic_ack(dqp, pkt->psn, orig, out);
}

/*
 * A packet before the expected PSN: the requester sends again what it
 * sent, its answer lost.  A SEND's or WRITE's packet is not delivered
 * twice: the one that asks is acknowledged again, up to the last PSN
 * taken.  A READ is read again; an atomic's saved result is sent again,
 * never a second operation (one too old to be kept gets no answer).
 */
static bool krwq_wire_rc_duplicate(struct krwq_qp *dqp,
				   const struct krwq_wire_pkt *pkt, u8 op,
				   struct sk_buff_head *out,
				   struct krwq_wire_read *job)
{
	struct krwq_wire_rx *rx = &dqp->wire_rx;
	unsigned int i;

	if (op == IB_OPCODE_RDMA_READ_REQUEST)
		return krwq_wire_rc_read(dqp, pkt, false, out, job);
	if (op == IB_OPCODE_COMPARE_SWAP || op == IB_OPCODE_FETCH_ADD) {
		/*
		 * newest first: a PSN 2^24 back may still be in a slot, and
		 * the newest result with that PSN is the one asked for
		 */
		for (i = 1; i <= KRWQ_MAX_RD_ATOM; i++) {
			const struct krwq_wire_atomic *a =
				&rx->atomics[(rx->atomic_next + KRWQ_MAX_RD_ATOM - i) %
					     KRWQ_MAX_RD_ATOM];

			if (a->valid && a->psn == pkt->psn) {
				krwq_wire_atomic_ack(dqp, pkt->psn, a->orig, out);
				break;
			}
		}
		return false;
	}
	if (pkt->ack_req)
		krwq_wire_ack(dqp, KRWQ_AETH_ACK | KRWQ_AETH_CREDITS_UNLIMITED,
			      krwq_psn_add(rx->epsn, KRWQ_PSN_MASK), out);
	return false;
}

/*
 * One RC request packet into @dqp (r_lock held, may receive).  Return:
 * true when @job holds READ responses to send once r_lock is released.
 */
static bool krwq_wire_rc_packet(struct krwq_qp *dqp,
				const struct krwq_wire_pkt *pkt,
				const void *payload, struct sk_buff_head *out,
				struct krwq_wire_read *job)
{
	struct krwq_wire_rx *rx = &dqp->wire_rx;
	s32 ahead = krwq_psn_diff(pkt->psn, rx->epsn);
	u8 op = krwq_wire_op(pkt);

	if (ahead > 0) {
		/*
		 * packets before it were lost: ask for them, once.  The NAK
		 * acknowledges every PSN before the expected one; an ACK of
		 * them goes first, so that a requester that resends from the
		 * first WQE it has not seen acknowledged (rxe does) finds
		 * that WQE to be the one the NAK names
		 */
		if (!rx->nak_sent) {
			krwq_wire_ack(dqp, KRWQ_AETH_ACK |
				      KRWQ_AETH_CREDITS_UNLIMITED,
				      krwq_psn_add(rx->epsn, KRWQ_PSN_MASK), out);
			krwq_wire_ack(dqp, KRWQ_AETH_NAK | KRWQ_NAK_PSN_SEQ_ERR,
				      rx->epsn, out);
		}
		rx->nak_sent = true;
		return false;
	}
	if (ahead < 0)
		return krwq_wire_rc_duplicate(dqp, pkt, op, out, job);
	rx->nak_sent = false;
	if (op == IB_OPCODE_RDMA_READ_REQUEST)
		return krwq_wire_rc_read(dqp, pkt, true, out, job);
	if (op == IB_OPCODE_COMPARE_SWAP || op == IB_OPCODE_FETCH_ADD)
		krwq_wire_rc_atomic(dqp, pkt, out);
	else
		krwq_wire_rc_msg(dqp, pkt, op, payload, out);
	return false;
}

/**
 * krwq_resp_wire_rc() - one RC request packet from the wire for responder
 * @dqp, in PSN order: SEND and RDMA WRITE packets are delivered as UC's
 * are (krwq_resp_wire_uc()) and acknowledged when they ask; an RDMA READ
 * is answered with its responses and an atomic with its result.  A packet
 * past the expected PSN gets one PSN sequence error NAK; one before it is
 * a duplicate (krwq_wire_rc_duplicate()).  No receive WQE for a SEND: an
 * RNR NAK with the QP's min_rnr_timer.  A request the responder cannot
 * carry out is NAKed (invalid request, remote access or operational
 * error) and the responder goes to ERR.
 * @dqp: the QP its BTH names, held by the caller.
 * @pkt: the packet's transport headers, checked (net.c).
 * @sgid: the packet's IP source, as a GID.
 * @dgid: its IP destination, as a GID.
 * @payload: pkt->payload_len bytes.
 *
 * Answers are built under r_lock and sent once it is released; a READ's
 * responses are built after, a batch at a time, with no lock held.  A
 * READ longer than KRWQ_MAX_MSG_SIZE is an invalid request.  A packet
 * from anyone but the QP's peer, or for a QP that cannot receive, is
 * dropped and counted in wire_rx_dropped.
 *
 * Context: softirq; takes dqp->r_lock.
 */
void krwq_resp_wire_rc(struct krwq_qp *dqp, const struct krwq_wire_pkt *pkt,
		       const union ib_gid *sgid, const union ib_gid *dgid,
		       const void *payload)
{
	struct krwq_wire_read job;
	struct sk_buff_head out;
	unsigned long flags;
	bool read = false;

	__skb_queue_head_init(&out);
	spin_lock_irqsave(&dqp->r_lock, flags);
	if (dqp->ibqp.qp_type == IB_QPT_RC && !dqp->err_pending &&
	    krwq_wire_from_peer(dqp, sgid, dgid) && krwq_can_receive(dqp))
		read = krwq_wire_rc_packet(dqp, pkt, payload, &out, &job);
	else
		krwq_count(dqp->dev, KRWQ_STAT_WIRE_RX_DROPPED, 1);
	spin_unlock_irqrestore(&dqp->r_lock, flags);
	krwq_tx_xmit(dqp->dev, &out, flags);
	if (read)
		krwq_wire_read_send(dqp, &job);
}
EXPORT_SYMBOL_IF_KUNIT(krwq_resp_wire_rc);
