// SPDX-License-Identifier: GPL-2.0
/*
 * wire_req.c - the requester's side of the wire: a send WQE whose
 * destination no krwq device in the sender's namespace holds, cut into
 * RoCEv2 packets by a run of the send queue (send.c) under the QP's
 * s_lock, and queued on the run's list, which the run's caller sends
 * (tx.c) once it has released the lock.
 */
#include <rdma/ib_mad.h>
#include <rdma/ib_pack.h>

#include "krwq.h"
#include "resp.h"
#include "tx.h"
#include "wire.h"

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
 * on the run's list for krwq_tx_xmit(), which routes it.
 * @sqp: the sender; the caller holds its s_lock, in a run (sqp->run).
 * @w: the WQE, whose route krwq_net_reaches().
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
 * The UC opcode of a send WQE's packet: the first, a middle one, the last,
 * or the only one of its message.
 */
static u8 krwq_wire_uc_opcode(enum ib_wr_opcode op, bool first, bool last)
{
	bool write = op == IB_WR_RDMA_WRITE || op == IB_WR_RDMA_WRITE_WITH_IMM;
	bool imm = op == IB_WR_SEND_WITH_IMM || op == IB_WR_RDMA_WRITE_WITH_IMM;
	u8 code;

	if (first && last)
		code = write ? (imm ? IB_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE :
				      IB_OPCODE_RDMA_WRITE_ONLY) :
			       (imm ? IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE :
				      IB_OPCODE_SEND_ONLY);
	else if (first)
		code = write ? IB_OPCODE_RDMA_WRITE_FIRST : IB_OPCODE_SEND_FIRST;
	else if (last)
		code = write ? (imm ? IB_OPCODE_RDMA_WRITE_LAST_WITH_IMMEDIATE :
				      IB_OPCODE_RDMA_WRITE_LAST) :
			       (imm ? IB_OPCODE_SEND_LAST_WITH_IMMEDIATE :
				      IB_OPCODE_SEND_LAST);
	else
		code = write ? IB_OPCODE_RDMA_WRITE_MIDDLE :
			       IB_OPCODE_SEND_MIDDLE;
	return IB_OPCODE_UC | code;
}

/**
 * krwq_wire_send_uc() - put a UC send WQE on the wire: its message cut
 * into packets of the path MTU (the port's, if smaller), each with the
 * next PSN, queued on the run's list for krwq_tx_xmit().
 * @sqp: the sender; the caller holds its s_lock, in a run (sqp->run).
 * @w: the WQE, a SEND, SEND with immediate, or RDMA WRITE with or without
 *     immediate; the QP's route krwq_net_reaches().
 *
 * A long message lets interrupts in between packets, and the packets
 * queued so far go out then (krwq_run_unlock_for_irqs()).  UC has no
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
	u32 mtu = min_t(u32, ib_mtu_enum_to_int(sqp->attr.path_mtu),
			krwq_port_mtu_bytes(sqp->dev));
	struct krwq_sge_cursor src;
	struct krwq_tx_cb to;
	u32 off = 0;
	int ret = 0;

	if (w->opcode == IB_WR_SEND_WITH_INV)
		return IB_WC_LOC_QP_OP_ERR;
	if (!krwq_src_get(sqp, w, 0))
		return IB_WC_LOC_PROT_ERR;
	krwq_src_cursor(sqp, w, &src);
	krwq_tx_to(&to, sqp, &sqp->route,
		   rdma_ah_read_grh(&sqp->attr.ah_attr),
		   sqp->attr.dest_qp_num);
	do {
		u32 n = min(mtu, w->length - off);
		bool last = off + n == w->length;
		struct krwq_wire_pkt pkt = {
			.opcode = krwq_wire_uc_opcode(w->opcode, !off, last),
			.se = last && (w->send_flags & IB_SEND_SOLICITED),
			.pkey = IB_DEFAULT_PKEY_FULL,
			.dqpn = sqp->attr.dest_qp_num,
			.va = w->remote_addr,
			.rkey = w->rkey,
			.dma_len = w->length,
			.imm = w->imm_data,
		};

		if (sqp->run->section + n > KRWQ_IRQOFF_BYTES &&
		    krwq_run_unlock_for_irqs(sqp)) {
			/* the packets built so far go out meanwhile */
			krwq_tx_xmit(sqp->dev, sqp->run->tx, *sqp->run->flags);
			krwq_run_relock(sqp);
		}
		ret = krwq_wire_packet(sqp, &pkt, &src, n, &to);
		if (ret)
			break;
		off += n;
	} while (off < w->length);
	krwq_src_put(sqp, w);
	if (ret == -ENOMEM)
		krwq_count(sqp->dev, KRWQ_STAT_WIRE_TX_DROPPED, 1);
	return ret == -EFAULT ? IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
}
