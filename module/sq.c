// SPDX-License-Identifier: GPL-2.0
/*
 * sq.c - the send queue's ends, shared by the requester (req.c), which
 * runs it, and the completer (comp.c), which takes the wire's answers to
 * it: a send WQE's completion, the flush of what is queued, the QP's
 * move to ERR, and the timeouts both arm on sq_timer.  What touches the
 * queue runs under the QP's s_lock.
 */
#include <linux/jiffies.h>

#include "krwq.h"
#include "recv.h"
#include "resp.h"
#include "sq.h"

/* IB's RNR NAK timer field in microseconds (encoding 0 is the longest). */
static const u32 krwq_rnr_usecs[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/**
 * krwq_rnr_jiffies() - the wait an RNR NAK's timer field names, in jiffies.
 * @code: the field (its five bits; 0 is the longest, 655.36 ms).
 *
 * Context: any.
 * Return: the wait, rounded up.
 */
unsigned long krwq_rnr_jiffies(u8 code)
{
	return usecs_to_jiffies(krwq_rnr_usecs[code & 31]);
}

static enum ib_wc_opcode krwq_wc_opcode(enum ib_wr_opcode op)
{
	switch (op) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	default:
		return IB_WC_SEND;
	}
}

/**
 * krwq_sq_complete() - complete the send WQE just executed or answered,
 * if it is signaled or failed; a completion that does not fit its CQ
 * moves the QP to ERR.
 * @qp: the QP; the caller holds qp->s_lock, and has moved sq_tail past @w.
 * @w: the WQE.
 * @status: how it ended.
 *
 * A completion frees the send queue slots of every WQE up to it: an
 * unsignaled WQE holds its slot until then (IB 10.8.3.1).
 *
 * Context: any; takes the send CQ's lock, and, when the completion does
 * not fit, what krwq_qp_error_locked() takes.
 */
void krwq_sq_complete(struct krwq_qp *qp, struct krwq_swqe *w,
		      enum ib_wc_status status)
{
	struct ib_wc wc = {
		.wr_id = w->wr_id,
		.status = status,
		.opcode = krwq_wc_opcode(w->opcode),
		.byte_len = krwq_is_rd_atomic(w->opcode) ? w->length : 0,
		.qp = &qp->ibqp,
	};

	lockdep_assert_held(&qp->s_lock);
	if (status == IB_WC_SUCCESS && !qp->sq_sig_all &&
	    !(w->send_flags & IB_SEND_SIGNALED))
		return;
	qp->sq_free = qp->sq_tail;
	if (!krwq_cq_enter(krwq_send_cq(qp), &wc, false))
		krwq_qp_error_locked(qp);
}

/**
 * krwq_sq_flush_locked() - complete every queued send WR as flushed.
 * @qp: the QP, in ERR; the caller holds qp->s_lock.
 *
 * While a run of the send queue is under way (it may be executing the WQE
 * at sq_tail with interrupts let in), the flush is left to its end.  While
 * a delivery into @qp is part done (r_busy), the WRs posted since the move
 * to ERR (from sq_err_head on) are left to the end of that delivery
 * (krwq_run_dest_done() queues send_work): a drain's marker WR is one of
 * them, and nothing the delivery completes may follow it.  The WRs queued
 * before the move are flushed at once, which leaves the marker room.
 *
 * Context: any; takes qp->r_lock, then the send CQ's lock.
 */
void krwq_sq_flush_locked(struct krwq_qp *qp)
{
	struct ib_wc wc = { .status = IB_WC_WR_FLUSH_ERR, .qp = &qp->ibqp };
	u32 end;
	bool busy;

	lockdep_assert_held(&qp->s_lock);
	if (qp->sq_running)
		return;
	spin_lock(&qp->r_lock);
	busy = qp->r_busy;
	qp->sq_flush_deferred = busy;
	spin_unlock(&qp->r_lock);
	end = busy ? qp->sq_err_head : qp->sq_head;
	qp->sq_waiting = false;
	krwq_wire_req_idle(&qp->wire_req);
	qp->rnr_tries = 0;
	qp->ack_tries = 0;
	qp->sq_inv_counted = false;
	for (; qp->sq_tail != end;
	     qp->sq_tail = krwq_sq_next(qp, qp->sq_tail)) {
		struct krwq_swqe *w = krwq_sq_entry(qp, qp->sq_tail);

		wc.wr_id = w->wr_id;
		wc.opcode = krwq_wc_opcode(w->opcode);
		krwq_cq_enter(krwq_send_cq(qp), &wc, false);
	}
	qp->sq_free = qp->sq_tail;	/* every flushed slot is free again */
}

/**
 * krwq_qp_error_locked() - move a QP to ERR: flush its send queue, then
 * its receive queue in posting order (or report the last WQE for a QP on
 * an SRQ); a receive part done first completes, then the receive flush,
 * then the send WRs posted in ERR meanwhile (krwq_sq_flush_locked()).
 * @qp: the QP; the caller holds qp->s_lock.
 *
 * Context: any; takes qp->r_lock, and the CQs' locks.
 */
void krwq_qp_error_locked(struct krwq_qp *qp)
{
	lockdep_assert_held(&qp->s_lock);
	if (qp->state == IB_QPS_ERR)
		return;
	qp->sq_err_head = qp->sq_head;
	krwq_sq_flush_locked(qp);
	/* a receive being delivered finishes first: r_lock */
	spin_lock(&qp->r_lock);
	WRITE_ONCE(qp->state, IB_QPS_ERR);
	/* one part done, with interrupts let in, completes before the flush */
	if (qp->r_busy)
		qp->r_flush_deferred = true;
	else
		krwq_qp_recv_flush_locked(qp);
	if (qp->rq_mmap) {
		qp->uflush_ms = KRWQ_UFLUSH_MS;
		queue_delayed_work(system_unbound_wq, &qp->uflush_work,
				   msecs_to_jiffies(KRWQ_UFLUSH_MS));
	}
	spin_unlock(&qp->r_lock);
}

/**
 * krwq_ack_timeout_jiffies() - the local ACK timeout IB encodes in a QP's
 * timeout attribute, 4.096 us * 2^@timeout, in jiffies.
 * @timeout: the attribute.  Zero is IB's "no timeout": the requester
 *           never gives up, and krwq then tries again every 67 ms (the
 *           period of timeout 14, the usual setting).
 *
 * Context: any.
 * Return: the timeout, rounded up, plus the tick a timer may fire early
 * within.
 */
unsigned long krwq_ack_timeout_jiffies(u8 timeout)
{
	u64 ns = 4096ULL << (timeout ? timeout : 14);

	/* rounded up, plus the tick a timer may fire early within */
	return nsecs_to_jiffies64(ns + TICK_NSEC - 1) + 1;
}

/**
 * krwq_sq_wait() - the WQE at sq_tail went on the wire: the send queue
 * waits for its answer (krwq_wire_answer()), or out an RNR NAK, until
 * sq_timer fires (krwq_sq_timer()).
 * @qp: the RC QP; the caller holds qp->s_lock.
 * @what: what it waits for.
 * @delay: for how long, in jiffies.
 *
 * Context: any.
 */
void krwq_sq_wait(struct krwq_qp *qp, enum krwq_wire_await what,
		  unsigned long delay)
{
	lockdep_assert_held(&qp->s_lock);
	qp->wire_req.await = what;
	qp->sq_waiting = true;
	mod_timer(&qp->sq_timer, jiffies + delay);
}
