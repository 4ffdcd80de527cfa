// SPDX-License-Identifier: GPL-2.0
/*
 * recv.c - a destination QP's receive side, which both deliveries use,
 * the host's (resp.c) and the wire's (wire_resp.c): taking a receive WQE
 * through the C++ core, holding the regions of its scatter list,
 * completing it (in error, dropped, or flushed), and the QP's move to ERR
 * from the responder's side.  Everything here runs under the
 * destination's r_lock, except the flush sink, which runs under the
 * ring's own locks.
 */
#include "krwq.h"
#include "krwq_core.h"
#include "recv.h"
#include "trace.h"

/* --- the QP's receive side -------------------------------------------- */

/**
 * krwq_qp_event() - raise an asynchronous event on a QP.  The consumer's
 * handler runs from event_work, so it may post or modify freely.
 * @qp: the QP.
 * @type: IB_EVENT_*.
 */
static void krwq_qp_event(struct krwq_qp *qp, enum ib_event_type type)
{
	set_bit(type, &qp->events);
	queue_work(krwq_wq, &qp->event_work);
}

/**
 * krwq_qp_fail() - a responder-side error: have the QP moved to ERR by its
 * err_work (the caller may not take its s_lock).
 * @qp: the destination QP; the caller holds its r_lock.
 */
void krwq_qp_fail(struct krwq_qp *qp)
{
	lockdep_assert_held(&qp->r_lock);
	if (!qp->err_pending) {
		qp->err_pending = true;
		queue_work(krwq_wq, &qp->err_work);
	}
}

/*
 * A user-mapped ring (ABI 2) is posted to without a system call: the
 * kernel first sees a WQE of it when it takes or flushes the WQE, and
 * counts it as posted then, so that rx_posted covers what rx_taken and
 * rx_flushed do.  Kernel-owned rings count at the post (rq_post.h).
 */
static void krwq_count_mapped_post(struct krwq_qp *qp, struct krwq_rq *rq)
{
	if (rq->wq)
		krwq_count(qp->dev, KRWQ_STAT_RX_POSTED, 1);
}

/**
 * krwq_rq_flush_complete() - complete a receive WR as flushed.
 * @qp: the QP whose receive it was.
 * @wr_id: the WR.
 *
 * An overflow of the CQ is the CQ's to report (its IB_EVENT_CQ_ERR, and
 * cq_overflows); the QP is in ERR or RESET already, with nothing further
 * to move it to.
 */
void krwq_rq_flush_complete(struct krwq_qp *qp, u64 wr_id)
{
	struct ib_wc wc = {
		.wr_id = wr_id,
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = IB_WC_RECV,
		.qp = &qp->ibqp,
	};

	trace_krwq_flush(qp, wr_id);
	krwq_cq_enter(krwq_recv_cq(qp), &wc, false);
}

/**
 * krwq_rq_flushed() - the core's flush sink for a QP's receive ring.
 * @ctx: the struct krwq_qp.
 * @wr_id: the flushed receive WR, never taken.
 *
 * Runs with the ring locks held; enters an IB_WC_WR_FLUSH_ERR completion
 * and counts it in rx_flushed (and, from a mapped ring, in rx_posted).
 */
void krwq_rq_flushed(void *ctx, unsigned long long wr_id)
{
	struct krwq_qp *qp = ctx;

	krwq_count(qp->dev, KRWQ_STAT_RX_FLUSHED, 1);
	krwq_count_mapped_post(qp, &qp->rq);
	krwq_rq_flush_complete(qp, wr_id);
}

/**
 * krwq_qp_recv_flush_locked() - the receive side of a move to ERR: flush
 * the receive queue in posting order, or, on an SRQ, report the last WQE.
 * @qp: the QP, in ERR; the caller holds qp->r_lock.
 *
 * Called by krwq_qp_error_locked() (sq.c), or by the last delivery that
 * was part done when the QP went to ERR (krwq_run_dest_done()).
 */
void krwq_qp_recv_flush_locked(struct krwq_qp *qp)
{
	lockdep_assert_held(&qp->r_lock);
	/* a UC message's WQE (wire_rx.held) was taken before those left */
	if (qp->wire_rx.held) {
		qp->wire_rx.held = false;
		krwq_rq_flush_complete(qp, qp->wire_rx.t.wr_id);
	}
	qp->wire_rx.msg = KRWQ_WIRE_MSG_NONE;
	qp->wire_rx.inv_wait = false;
	if (qp->srq)
		krwq_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
	else
		krwq_rq_set_state(&qp->rq, KRWQ_RQ_FLUSH, &qp->rq_sink);
}

/* --- regions of a scatter list ----------------------------------------- */

/**
 * krwq_put_mrs() - let go of the regions krwq_get_mrs() held.
 * @mrs: the regions, NULL for an entry that needed none.
 * @n: how many.
 */
void krwq_put_mrs(struct krwq_mr **mrs, u32 n)
{
	while (n--)
		if (mrs[n])
			krwq_mr_put(mrs[n]);
}

/**
 * krwq_get_mrs() - hold the region of every entry of a scatter list.
 * @dev: the device.
 * @pd: the PD the keys must belong to.
 * @sge: the entries; a zero-length one needs no region.
 * @n: how many.
 * @access: what each region must allow.
 * @mrs: filled with the regions held (NULL where none is needed).
 *
 * Return: false (nothing held) if any key does not check out.
 */
bool krwq_get_mrs(struct krwq_dev *dev, struct ib_pd *pd,
		  const struct ib_sge *sge, u32 n, int access,
		  struct krwq_mr **mrs)
{
	u32 i;

	for (i = 0; i < n; i++) {
		mrs[i] = NULL;
		if (!sge[i].length)
			continue;
		mrs[i] = krwq_mr_get(dev, pd, sge[i].lkey, access, sge[i].addr,
				     sge[i].length);
		if (!mrs[i]) {
			krwq_put_mrs(mrs, i);
			return false;
		}
	}
	return true;
}

/* --- the responder side ------------------------------------------------ */

/* The ring a destination QP takes receive WQEs from. */
static struct krwq_rq *krwq_dest_ring(struct krwq_qp *dqp)
{
	return dqp->srq ? &dqp->srq->rq : &dqp->rq;
}

/**
 * krwq_can_receive() - whether a destination QP's state lets it receive;
 * the first arrival in RTR raises COMM_EST.
 * @dqp: the destination; the caller holds its r_lock until the receive
 *       is complete.
 *
 * Return: true when it may receive.
 */
bool krwq_can_receive(struct krwq_qp *dqp)
{
	lockdep_assert_held(&dqp->r_lock);
	if (!(krwq_state_ops(dqp->state) & KRWQ_RECEIVE))
		return false;
	/* the first arrival in RTR establishes the connection */
	if (dqp->state == IB_QPS_RTR && !krwq_qp_is_ud(dqp) &&
	    !atomic_xchg(&dqp->comm_est_sent, 1))
		krwq_qp_event(dqp, IB_EVENT_COMM_EST);
	return true;
}

/**
 * krwq_dest_error() - a responder-side error: the receive WQE taken
 * completes in error, and the QP goes to ERR (krwq_qp_fail()).
 * @dqp: the destination; the caller holds its r_lock.
 * @wr_id: the WQE's.
 * @status: its completion's.
 */
void krwq_dest_error(struct krwq_qp *dqp, u64 wr_id, enum ib_wc_status status)
{
	struct ib_wc wc = {
		.wr_id = wr_id,
		.status = status,
		.opcode = IB_WC_RECV,
		.qp = &dqp->ibqp,
	};

	krwq_cq_enter(krwq_recv_cq(dqp), &wc, false);
	krwq_qp_fail(dqp);
}

/**
 * krwq_dest_dropped() - a message dropped at a UD or UC responder, whose
 * QP stays as it is: the WQE taken for it completes with @status, and
 * the drop is counted in rx_dropped.
 * @dqp: the destination; the caller holds its r_lock.
 * @wr_id: the WQE's.
 * @status: its completion's.
 */
void krwq_dest_dropped(struct krwq_qp *dqp, u64 wr_id,
		       enum ib_wc_status status)
{
	struct ib_wc wc = {
		.wr_id = wr_id,
		.status = status,
		.opcode = IB_WC_RECV,
		.qp = &dqp->ibqp,
	};

	krwq_count(dqp->dev, KRWQ_STAT_RX_DROPPED, 1);
	krwq_cq_enter(krwq_recv_cq(dqp), &wc, false);
}

/**
 * krwq_dest_fits() - whether a message fits the receive WQE taken.
 * @sge: the WQE's scatter list.
 * @dqp: the destination; the caller holds its r_lock.
 * @t: the WQE taken.
 * @need: the message's bytes.
 *
 * UD and UC on an SRQ: leaving a WQE too short for its message would
 * stall every QP of the SRQ behind it, so it completes in error
 * (LOC_LEN_ERR), counted as a drop; the QP itself stays as it is.
 *
 * Return: true when it fits.
 */
bool krwq_dest_fits(const struct ib_sge *sge, struct krwq_qp *dqp,
		    struct krwq_taken *t, u32 need)
{
	if (krwq_sge_total(sge, t->num_sge) >= need)
		return true;
	krwq_dest_dropped(dqp, t->wr_id, IB_WC_LOC_LEN_ERR);
	return false;
}

/**
 * krwq_dest_complete() - complete a receive WQE of a destination QP; a
 * full CQ moves the QP to ERR.
 * @dqp: the destination; the caller holds its r_lock.
 * @wc: the completion (its qp is set here).
 * @solicited: the message asked for a solicited event.
 */
void krwq_dest_complete(struct krwq_qp *dqp, struct ib_wc *wc, bool solicited)
{
	wc->qp = &dqp->ibqp;
	if (!krwq_cq_enter(krwq_recv_cq(dqp), wc, solicited))
		krwq_qp_fail(dqp);
}

/**
 * krwq_take() - take a receive WQE of a destination QP, through the core.
 * @sge: where its scatter list goes (KRWQ_MAX_SGE entries: a sender's
 *       r_sge, or dqp->w_sge for the wire).
 * @dqp: the destination; the caller holds its r_lock.
 * @t: the WQE taken.
 * @need: a WQE that holds fewer bytes is left where it is (UD and UC drop
 *        what does not fit); 0 for any.
 *
 * Counts the take (and, from a mapped ring, the post), and raises the
 * SRQ's limit event when the take crossed it.
 *
 * Return: the core's outcome; a KRWQ_TAKE_MALFORMED WQE is already
 * completed in error.
 */
enum krwq_take_outcome krwq_take(struct ib_sge *sge, struct krwq_qp *dqp,
				 struct krwq_taken *t, u32 need)
{
	enum krwq_take_outcome ret;

	t->sg_list = sge;
	ret = krwq_rq_take_fitting(krwq_dest_ring(dqp), t, need);
	trace_krwq_take(dqp, ret, t);
	if (ret == KRWQ_TAKE_TOO_SMALL) {
		krwq_count(dqp->dev, KRWQ_STAT_RX_DROPPED, 1);
		return ret;
	}
	if (ret != KRWQ_TAKE_EMPTY) {
		krwq_count(dqp->dev, KRWQ_STAT_RX_TAKEN, 1);
		krwq_count_mapped_post(dqp, krwq_dest_ring(dqp));
	}
	if (t->flags & KRWQ_TAKEN_LIMIT_REACHED)
		krwq_srq_limit_event(dqp->srq);
	if (ret == KRWQ_TAKE_MALFORMED)
		krwq_dest_error(dqp, t->wr_id, IB_WC_LOC_QP_OP_ERR);
	return ret;
}
