// SPDX-License-Identifier: GPL-2.0
/*
 * resp.c - the responder side of loopback delivery: everything that runs
 * under a destination QP's r_lock.
 *
 * The requester (send.c) executes a send WQE by calling
 * krwq_exec_connected() or krwq_exec_ud() with its s_lock held; they find
 * the destination QP, take its r_lock, check that it may receive, take a
 * receive WQE through the C++ core, copy the payload (or run the RDMA or
 * atomic operation against the destination's memory) and complete the
 * receive, all before the r_lock is dropped.  What the responder cannot do
 * under r_lock (go to ERR, raise an event) is handed to work items.
 *
 * Letting interrupts in (a long copy drops both the sender's s_lock and
 * the destination's r_lock for a moment) lives here too: its state is
 * the destination's (r_busy, r_gen, r_flush_deferred, under r_lock), and
 * send.c's run of the send queue uses krwq_run_let_irqs_in() between
 * WQEs.
 */
#include <kunit/visibility.h>
#include <linux/ip.h>
#include <net/checksum.h>
#include <rdma/ib_hdrs.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_pack.h>

#include "krwq.h"
#include "krwq_core.h"
#include "resp.h"
#include "tx.h"
#include "wire.h"
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
static void krwq_qp_fail(struct krwq_qp *qp)
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

/*
 * Completes receive WR @wr_id of @qp as flushed; an overflow is moot, the
 * QP being in ERR or reset already.
 */
static void krwq_rq_flush_complete(struct krwq_qp *qp, u64 wr_id)
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
 * Called by krwq_qp_error_locked() (send.c), or by the last delivery that
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
	if (qp->srq)
		krwq_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
	else
		krwq_rq_set_state(&qp->rq, KRWQ_RQ_FLUSH, &qp->rq_sink);
}

/* --- regions of a scatter list ----------------------------------------- */

static void krwq_put_mrs(struct krwq_mr **mrs, u32 n)
{
	while (n--)
		if (mrs[n])
			krwq_mr_put(mrs[n]);
}

/*
 * Looks up the region of every entry with @access; a zero-length entry
 * needs none.  Return: false (nothing held) if any key does not check out.
 */
static bool krwq_get_mrs(struct krwq_dev *dev, struct ib_pd *pd,
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

static u64 krwq_sge_total(const struct ib_sge *sge, u32 n)
{
	u64 total = 0;

	while (n--)
		total += sge[n].length;
	return total;
}

static void krwq_cursor_init(struct krwq_sge_cursor *c,
			     const struct ib_sge *sge, u32 n,
			     struct krwq_mr **mrs)
{
	static const struct ib_sge none;

	c->sge = n ? sge : &none;
	c->left = n ? n - 1 : 0;
	c->mrs = mrs;
	c->off = 0;
	c->held = mrs;
	c->nheld = n;
}

/**
 * krwq_src_get() - hold the regions of a send WQE's payload.
 * @sqp: the sender, in a run (its s_lock held).
 * @w: the WQE.
 * @access: what the regions must allow besides local access (0 for a
 *          send's payload).
 *
 * The regions of its SGEs (checked for @access) go into sqp->s_mrs; an
 * inline payload, in the send queue itself, needs none.
 *
 * Return: false (nothing held) if a key does not check out.
 */
bool krwq_src_get(struct krwq_qp *sqp, struct krwq_swqe *w, int access)
{
	if (w->send_flags & IB_SEND_INLINE)
		return true;
	return krwq_get_mrs(sqp->dev, sqp->ibqp.pd, w->sg_list, w->num_sge,
			    access, sqp->s_mrs);
}

/**
 * krwq_src_put() - release what krwq_src_get() held.
 * @sqp: the sender.
 * @w: the WQE.
 */
void krwq_src_put(struct krwq_qp *sqp, struct krwq_swqe *w)
{
	if (!(w->send_flags & IB_SEND_INLINE))
		krwq_put_mrs(sqp->s_mrs, w->num_sge);
}

/**
 * krwq_src_cursor() - a cursor over a send WQE's payload.
 * @sqp: the sender, whose regions krwq_src_get() holds.
 * @w: the WQE.
 * @c: set up at the payload's first byte.
 */
void krwq_src_cursor(struct krwq_qp *sqp, struct krwq_swqe *w,
		     struct krwq_sge_cursor *c)
{
	if (!(w->send_flags & IB_SEND_INLINE)) {
		krwq_cursor_init(c, w->sg_list, w->num_sge, sqp->s_mrs);
		return;
	}
	sqp->inline_sge = (struct ib_sge) {
		.addr = (uintptr_t)w->sg_list, .length = w->length,
	};
	sqp->s_mrs[0] = &sqp->dev->local_dma_mr;
	krwq_cursor_init(c, &sqp->inline_sge, 1, sqp->s_mrs);
}

/* --- letting interrupts in ---------------------------------------------- */

/**
 * krwq_run_let_irqs_in() - drop the run's s_lock and take it again, so
 * that interrupts it holds off come in.
 * @sqp: the sender, whose run (sqp->run) is under way; the caller holds
 *       its s_lock and nothing else.
 *
 * Meanwhile the run keeps the send queue (sq_running).
 *
 * Only hard interrupts come in.  Bottom halves are disabled before the
 * first window (and with them preemption) and stay so until the run's
 * caller has released s_lock (run->bh_off), so that nothing else runs on
 * this CPU meanwhile that could wait for what the run holds (an
 * invalidation spins until the copies through its region end); softirqs
 * raised meanwhile run when the caller enables them again.  A caller that
 * itself holds interrupts off gains nothing from this, and the lock stays
 * held.
 */
void krwq_run_let_irqs_in(struct krwq_qp *sqp)
	__must_hold(&sqp->s_lock)
{
	if (!krwq_run_can_unlock(sqp))
		return;
	krwq_run_unlock(sqp);
	krwq_run_relock(sqp);
}

/**
 * krwq_run_can_unlock() - whether the run may drop its s_lock to let
 * interrupts in: not when its caller holds interrupts off itself.  Either
 * way a new interrupts-off section starts (run->section is 0).
 * @sqp: as for krwq_run_let_irqs_in().
 *
 * Return: true when krwq_run_unlock() may be called.
 */
bool krwq_run_can_unlock(struct krwq_qp *sqp)
{
	lockdep_assert_held(&sqp->s_lock);
	sqp->run->section = 0;
	return !irqs_disabled_flags(*sqp->run->flags);
}

/**
 * krwq_run_unlock() - the first half of krwq_run_let_irqs_in(), for a
 * caller with something to do meanwhile (the wire sends the packets the
 * run built so far): s_lock released, interrupts on, bottom halves off.
 * The caller, holding no krwq lock, takes it again with krwq_run_relock().
 * @sqp: as for krwq_run_let_irqs_in(), and krwq_run_can_unlock() said so.
 */
void krwq_run_unlock(struct krwq_qp *sqp)
	__releases(&sqp->s_lock)
{
	struct krwq_run *run = sqp->run;

	if (!*run->bh_off) {
		local_bh_disable();
		*run->bh_off = true;
	}
	spin_unlock_irqrestore(&sqp->s_lock, *run->flags);
}

/**
 * krwq_run_relock() - the second half: take the run's s_lock again.
 * @sqp: the sender, whose run krwq_run_unlock() unlocked.
 */
void krwq_run_relock(struct krwq_qp *sqp)
	__acquires(&sqp->s_lock)
{
	spin_lock_irqsave(&sqp->s_lock, *sqp->run->flags);
}

/*
 * krwq_run_let_irqs_in() in the middle of a delivery into @dqp: its
 * r_lock is dropped too (first, and taken again last), and its receive
 * flush waits meanwhile (r_busy, until krwq_run_dest_done()).  Nothing is
 * dropped for a caller that holds interrupts off itself.
 * Return: 0, or -ECANCELED if @dqp was reset meanwhile: the delivery is
 * abandoned (krwq_fill_rwqe() says what becomes of its WQE).
 */
static int krwq_run_window(struct krwq_qp *sqp, struct krwq_qp *dqp)
	__must_hold(&sqp->s_lock) __must_hold(&dqp->r_lock)
{
	struct krwq_run *run = sqp->run;
	u32 gen = dqp->r_gen;

	lockdep_assert_held(&dqp->r_lock);
	if (irqs_disabled_flags(*run->flags)) {
		run->section = 0;
		return 0;
	}
	if (!run->busy_dqp) {
		run->busy_dqp = dqp;
		dqp->r_busy++;
	}
	spin_unlock(&dqp->r_lock);
	krwq_run_let_irqs_in(sqp);
	spin_lock(&dqp->r_lock);
	return dqp->r_gen != gen ? -ECANCELED : 0;
}

/*
 * A delivery into @dqp ends (the caller holds dqp->r_lock, and the
 * delivery's completion is entered): if the run let interrupts in during
 * it and @dqp went to ERR meanwhile, the receive flush the move left to
 * the last such delivery happens now, and the send queue's flush (which
 * needs dqp->s_lock, not to be taken here) goes to send_work.
 */
static void krwq_run_dest_done(struct krwq_qp *sqp, struct krwq_qp *dqp)
	__must_hold(&dqp->r_lock)
{
	struct krwq_run *run = sqp->run;

	lockdep_assert_held(&dqp->r_lock);
	if (run->busy_dqp != dqp)
		return;
	run->busy_dqp = NULL;
	if (--dqp->r_busy)
		return;
	if (dqp->sq_flush_deferred) {
		dqp->sq_flush_deferred = false;
		queue_work(krwq_wq, &dqp->send_work);
	}
	if (!dqp->r_flush_deferred)
		return;
	dqp->r_flush_deferred = false;
	krwq_qp_recv_flush_locked(dqp);
}

/*
 * krwq_copy() for a delivery into @dqp (whose r_lock the caller holds,
 * with sqp's s_lock), in pieces that keep each interrupts-off section
 * within KRWQ_IRQOFF_BYTES.  Between pieces the copy stops if one of its
 * regions was invalidated meanwhile: the invalidation spins until the
 * copy lets go of it (krwq_mr_invalidate()), and a 16 MiB message would
 * keep it spinning, maybe with interrupts off, for the whole of it.
 * Return: 0; -EINVAL if a list ran out first; -ECANCELED if @dqp was reset
 * while interrupts were let in; -EACCES if a region of @dst, -EPERM if one
 * of @src was invalidated part way (what came before stays copied).
 */
static int krwq_run_copy(struct krwq_qp *sqp, struct krwq_qp *dqp,
			 struct krwq_sge_cursor *dst,
			 struct krwq_sge_cursor *src, u32 len)
{
	struct krwq_run *run = sqp->run;

	/*
	 * A datagram (at most an MTU) is copied whole: with its WQE taken
	 * and the r_lock dropped, another sender could complete the next
	 * WQE of the same ring first.  The run let interrupts in before it
	 * if it would not have fitted (krwq_sq_run()).
	 */
	if (krwq_qp_is_ud(dqp)) {
		run->section += len;
		return krwq_copy(dst, src, len);
	}
	while (len) {
		u32 n;
		int ret;

		if (run->section >= KRWQ_IRQOFF_BYTES) {
			ret = krwq_run_window(sqp, dqp);
			if (ret)
				return ret;
			if (krwq_cursor_revoked(dst))
				return -EACCES;
			if (krwq_cursor_revoked(src))
				return -EPERM;
		}
		n = min(len, KRWQ_IRQOFF_BYTES - run->section);
		ret = krwq_copy(dst, src, n);
		if (ret)
			return ret;
		run->section += n;
		len -= n;
	}
	return 0;
}

/* --- the responder side ------------------------------------------------ */

/* The ring a destination QP takes receive WQEs from. */
static struct krwq_rq *krwq_dest_ring(struct krwq_qp *dqp)
{
	return dqp->srq ? &dqp->srq->rq : &dqp->rq;
}

/* The PD receive buffers are checked against: the SRQ's, if any. */
static struct ib_pd *krwq_dest_pd(struct krwq_qp *dqp)
{
	return dqp->srq ? dqp->srq->ibsrq.pd : dqp->ibqp.pd;
}

/* The caller holds dqp->r_lock until the receive is complete. */
static bool krwq_can_receive(struct krwq_qp *dqp)
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

/* A responder-side error: the WQE completes in error, the QP goes to ERR. */
static void krwq_dest_error(struct krwq_qp *dqp, u64 wr_id,
			    enum ib_wc_status status)
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

/*
 * A message dropped at a UD or UC responder, whose QP stays as it is: the
 * WQE taken for it completes with @status, and the drop is counted.
 */
static void krwq_dest_dropped(struct krwq_qp *dqp, u64 wr_id,
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

/*
 * UD and UC on an SRQ: a message too long for the WQE taken.  Leaving the
 * WQE would stall every QP of the SRQ behind it, so it completes in error
 * (LOC_LEN_ERR), counted as a drop; the QP itself stays as it is.
 */
static bool krwq_dest_fits(const struct ib_sge *sge, struct krwq_qp *dqp,
			   struct krwq_taken *t, u32 need)
{
	if (krwq_sge_total(sge, t->num_sge) >= need)
		return true;
	krwq_dest_dropped(dqp, t->wr_id, IB_WC_LOC_LEN_ERR);
	return false;
}

static void krwq_dest_complete(struct krwq_qp *dqp, struct ib_wc *wc,
			       bool solicited)
{
	wc->qp = &dqp->ibqp;
	if (!krwq_cq_enter(krwq_recv_cq(dqp), wc, solicited))
		krwq_qp_fail(dqp);
}

/*
 * Takes a receive WQE of @dqp into @sge (KRWQ_MAX_SGE entries: a sender's
 * r_sge, or dqp->w_sge for the wire); one that holds fewer than @need
 * bytes is left where it is (UD and UC drop what does not fit).
 * Return: the core's outcome; a KRWQ_TAKE_MALFORMED WQE is already
 * completed in error.
 */
static enum krwq_take_outcome krwq_take(struct ib_sge *sge,
					struct krwq_qp *dqp,
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

/*
 * Puts @len bytes from @src into a receive WQE already taken into
 * sqp->r_sge, after @skip bytes (a UD GRH, written from @grh if given).
 * On failure the WQE completes in error and o->status says what the
 * sender sees, or, if @dqp was reset meanwhile, o->lost is set and the
 * WQE is gone without a completion (a QP's own, discarded with its ring)
 * or completes flushed (an SRQ's, which a reset does not discard).
 * Return: true on success.
 */
static bool krwq_fill_rwqe(struct krwq_qp *sqp, struct krwq_qp *dqp,
			   struct krwq_taken *t, struct krwq_sge_cursor *src,
			   u32 len, const void *grh, u32 skip,
			   struct krwq_outcome *o)
{
	enum ib_wc_status *status = &o->status;
	bool *lost = &o->lost;
	struct krwq_sge_cursor dst;
	int ret;

	if (!krwq_get_mrs(dqp->dev, krwq_dest_pd(dqp), sqp->r_sge, t->num_sge,
			  IB_ACCESS_LOCAL_WRITE, sqp->r_mrs)) {
		krwq_dest_error(dqp, t->wr_id, IB_WC_LOC_PROT_ERR);
		*status = IB_WC_REM_OP_ERR;
		return false;
	}
	if ((u64)len + skip > krwq_sge_total(sqp->r_sge, t->num_sge)) {
		krwq_put_mrs(sqp->r_mrs, t->num_sge);
		krwq_dest_error(dqp, t->wr_id, IB_WC_LOC_LEN_ERR);
		*status = IB_WC_REM_INV_REQ_ERR;
		return false;
	}
	krwq_cursor_init(&dst, sqp->r_sge, t->num_sge, sqp->r_mrs);
	ret = krwq_write(&dst, grh, skip);
	if (!ret)
		ret = krwq_run_copy(sqp, dqp, &dst, src, len);
	krwq_put_mrs(sqp->r_mrs, t->num_sge);
	if (!ret)
		krwq_count(dqp->dev, KRWQ_STAT_LOOPBACK_BYTES, len);
	if (ret == -ECANCELED) {
		/*
		 * reset meanwhile: a QP's own WQE went with its ring; an
		 * SRQ's survives the reset, and goes back to the consumer
		 */
		if (dqp->srq)
			krwq_rq_flush_complete(dqp, t->wr_id);
		*lost = true;
	} else if (ret == -EACCES) {	/* the receive buffer's region */
		krwq_dest_error(dqp, t->wr_id, IB_WC_LOC_PROT_ERR);
		*status = IB_WC_REM_OP_ERR;
	} else if (ret == -EPERM) {
		/*
		 * the sender's: the message stops short; the WQE it had taken
		 * completes as aborted (krwq's choice: an HCA would leave it
		 * for the flush that follows), so none is lost
		 */
		krwq_dest_error(dqp, t->wr_id, IB_WC_REM_ABORT_ERR);
		*status = IB_WC_LOC_PROT_ERR;
	} else if (WARN_ON_ONCE(ret)) {	/* lengths were checked above */
		krwq_dest_error(dqp, t->wr_id, IB_WC_LOC_LEN_ERR);
		*status = IB_WC_REM_INV_REQ_ERR;
	}
	return !ret;
}

/* --- RC and UC --------------------------------------------------------- */

static void krwq_exec_send(struct krwq_qp *sqp, struct krwq_qp *dqp,
			   struct krwq_swqe *w, struct krwq_outcome *o)
{
	enum krwq_take_outcome taken;
	struct krwq_sge_cursor src;
	struct krwq_taken t;
	struct ib_wc wc = {};
	bool uc;

	if (!krwq_src_get(sqp, w, 0)) {
		o->status = IB_WC_LOC_PROT_ERR;
		return;
	}
	/*
	 * UC drops a message too long for the receive and keeps the WQE,
	 * unless it is an SRQ's (krwq_dest_fits())
	 */
	uc = sqp->ibqp.qp_type == IB_QPT_UC;
	taken = krwq_take(sqp->r_sge, dqp, &t, uc && !dqp->srq ? w->length : 0);
	if (taken == KRWQ_TAKE_EMPTY) {
		/* UC drops the message; RC is told to come back later */
		o->rnr = sqp->ibqp.qp_type == IB_QPT_RC;
		o->min_rnr_timer = dqp->attr.min_rnr_timer;
		goto out;
	}
	if (taken == KRWQ_TAKE_TOO_SMALL)
		goto out;
	if (taken == KRWQ_TAKE_MALFORMED) {
		o->status = IB_WC_REM_OP_ERR;
		goto out;
	}
	if (uc && !krwq_dest_fits(sqp->r_sge, dqp, &t, w->length))
		goto out;
	krwq_src_cursor(sqp, w, &src);
	if (!krwq_fill_rwqe(sqp, dqp, &t, &src, w->length, NULL, 0, o))
		goto out;
	/* remote invalidation: a fast-registration region of the receiver's */
	if (w->opcode == IB_WR_SEND_WITH_INV) {
		if (krwq_mr_invalidate(dqp->dev, dqp->ibqp.pd, w->rkey,
				       w->send_flags & IB_SEND_INLINE ?
				       NULL : sqp->s_mrs, w->num_sge)) {
			krwq_dest_error(dqp, t.wr_id, IB_WC_LOC_PROT_ERR);
			o->status = IB_WC_REM_INV_REQ_ERR;
			goto out;
		}
		wc.wc_flags = IB_WC_WITH_INVALIDATE;
		wc.ex.invalidate_rkey = w->rkey;
	}

	wc.wr_id = t.wr_id;
	wc.opcode = IB_WC_RECV;
	wc.byte_len = w->length;
	wc.src_qp = sqp->ibqp.qp_num;
	wc.slid = sqp->dev->lid;
	wc.sl = rdma_ah_get_sl(&sqp->attr.ah_attr);
	if (w->opcode == IB_WR_SEND_WITH_IMM) {
		wc.wc_flags = IB_WC_WITH_IMM;
		wc.ex.imm_data = w->imm_data;
	}
	krwq_dest_complete(dqp, &wc, w->send_flags & IB_SEND_SOLICITED);
out:
	krwq_src_put(sqp, w);
}

/* RDMA WRITE and READ: the peer's memory through its rkey. */
static void krwq_exec_rdma(struct krwq_qp *sqp, struct krwq_qp *dqp,
			   struct krwq_swqe *w, struct krwq_outcome *o)
{
	bool read = w->opcode == IB_WR_RDMA_READ;
	int remote = read ? IB_ACCESS_REMOTE_READ : IB_ACCESS_REMOTE_WRITE;
	struct ib_sge rsge = {
		.addr = w->remote_addr, .length = w->length, .lkey = w->rkey,
	};
	enum krwq_take_outcome taken;
	struct krwq_sge_cursor local, peer;
	struct krwq_mr *rmr = NULL;
	struct krwq_taken t;
	struct ib_wc wc = {};
	int ret;

	if (!krwq_src_get(sqp, w, read ? IB_ACCESS_LOCAL_WRITE : 0)) {
		o->status = IB_WC_LOC_PROT_ERR;
		return;
	}
	if (w->length && (dqp->attr.qp_access_flags & remote))
		rmr = krwq_mr_get(dqp->dev, dqp->ibqp.pd, w->rkey, remote,
				  w->remote_addr, w->length);
	/* UC: a write the responder may not make is dropped there */
	if (w->length && !rmr && sqp->ibqp.qp_type == IB_QPT_UC) {
		krwq_count(dqp->dev, KRWQ_STAT_RX_DROPPED, 1);
		goto out;
	}
	if (w->opcode == IB_WR_RDMA_WRITE_WITH_IMM) {
		taken = krwq_take(sqp->r_sge, dqp, &t, 0);
		if (taken != KRWQ_TAKE_TAKEN) {
			o->rnr = taken == KRWQ_TAKE_EMPTY &&
				 sqp->ibqp.qp_type == IB_QPT_RC;
			o->min_rnr_timer = dqp->attr.min_rnr_timer;
			if (taken == KRWQ_TAKE_MALFORMED)
				o->status = IB_WC_REM_OP_ERR;
			goto out;
		}
	}
	if (w->length) {
		if (!rmr) {
			o->status = IB_WC_REM_ACCESS_ERR;
			if (w->opcode == IB_WR_RDMA_WRITE_WITH_IMM)
				krwq_dest_error(dqp, t.wr_id, IB_WC_LOC_PROT_ERR);
			else
				krwq_qp_fail(dqp);
			goto out;
		}
		krwq_src_cursor(sqp, w, &local);
		krwq_cursor_init(&peer, &rsge, 1, &rmr);
		ret = read ? krwq_run_copy(sqp, dqp, &local, &peer, w->length) :
			     krwq_run_copy(sqp, dqp, &peer, &local, w->length);
		krwq_mr_put(rmr);
		rmr = NULL;
		if (!ret)
			krwq_count(dqp->dev, KRWQ_STAT_LOOPBACK_BYTES, w->length);
		if (ret == -ECANCELED) {
			/* the responder was reset meanwhile (krwq_fill_rwqe()) */
			if (w->opcode == IB_WR_RDMA_WRITE_WITH_IMM && dqp->srq)
				krwq_rq_flush_complete(dqp, t.wr_id);
			o->lost = true;
			goto out;
		}
		if (ret == -EACCES || ret == -EPERM) {
			/* invalidated part way: the responder's region, or ours */
			bool theirs = (ret == -EACCES) != read;
			bool imm = w->opcode == IB_WR_RDMA_WRITE_WITH_IMM;

			if (theirs && sqp->ibqp.qp_type == IB_QPT_UC) {
				/* as a bad rkey up front: dropped there */
				if (imm)
					krwq_dest_dropped(dqp, t.wr_id,
							  IB_WC_LOC_PROT_ERR);
				else
					krwq_count(dqp->dev,
						   KRWQ_STAT_RX_DROPPED, 1);
				goto out;
			}
			o->status = theirs ? IB_WC_REM_ACCESS_ERR :
					     IB_WC_LOC_PROT_ERR;
			if (imm)
				krwq_dest_error(dqp, t.wr_id,
						theirs ? IB_WC_LOC_PROT_ERR :
							 IB_WC_REM_ABORT_ERR);
			else if (theirs)
				krwq_qp_fail(dqp);
			goto out;
		}
		if (WARN_ON_ONCE(ret)) {	/* the lengths were checked */
			o->status = IB_WC_LOC_LEN_ERR;
			/* a WQE taken completes, whatever happened */
			if (w->opcode == IB_WR_RDMA_WRITE_WITH_IMM)
				krwq_dest_error(dqp, t.wr_id,
						IB_WC_LOC_LEN_ERR);
			goto out;
		}
	}
	if (w->opcode == IB_WR_RDMA_WRITE_WITH_IMM) {
		wc.wr_id = t.wr_id;
		wc.opcode = IB_WC_RECV_RDMA_WITH_IMM;
		wc.byte_len = w->length;
		wc.wc_flags = IB_WC_WITH_IMM;
		wc.ex.imm_data = w->imm_data;
		wc.src_qp = sqp->ibqp.qp_num;
		wc.slid = sqp->dev->lid;
		krwq_dest_complete(dqp, &wc, w->send_flags & IB_SEND_SOLICITED);
	}
out:
	if (rmr)
		krwq_mr_put(rmr);	/* looked up, never copied through */
	krwq_src_put(sqp, w);
}

/*
 * Compare-and-swap and fetch-and-add on 8 aligned bytes of the peer's
 * memory; the value before lands in the sender's 8-byte buffer.
 */
static void krwq_exec_atomic(struct krwq_qp *sqp, struct krwq_qp *dqp,
			     struct krwq_swqe *w, struct krwq_outcome *o)
{
	struct krwq_sge_cursor local;
	struct krwq_mr *rmr = NULL;
	u64 orig;
	int ret;

	if (!krwq_get_mrs(sqp->dev, sqp->ibqp.pd, w->sg_list, w->num_sge,
			  IB_ACCESS_LOCAL_WRITE, sqp->s_mrs)) {
		o->status = IB_WC_LOC_PROT_ERR;
		return;
	}
	/* a misaligned target is an invalid request (IB 9.4.5) */
	if (!IS_ALIGNED(w->remote_addr, sizeof(u64))) {
		o->status = IB_WC_REM_INV_REQ_ERR;
		krwq_qp_fail(dqp);
		goto out;
	}
	if (dqp->attr.qp_access_flags & IB_ACCESS_REMOTE_ATOMIC)
		rmr = krwq_mr_get(dqp->dev, dqp->ibqp.pd, w->rkey,
				  IB_ACCESS_REMOTE_ATOMIC, w->remote_addr,
				  sizeof(u64));
	if (!rmr) {
		o->status = IB_WC_REM_ACCESS_ERR;
		krwq_qp_fail(dqp);
		goto out;
	}
	ret = krwq_mr_atomic(rmr, w->remote_addr,
			     w->opcode == IB_WR_ATOMIC_CMP_AND_SWP,
			     w->atomic.compare_add, w->atomic.swap, &orig);
	krwq_mr_put(rmr);
	if (ret) {
		o->status = IB_WC_REM_INV_REQ_ERR;
		krwq_qp_fail(dqp);
		goto out;
	}
	krwq_cursor_init(&local, w->sg_list, w->num_sge, sqp->s_mrs);
	if (WARN_ON_ONCE(krwq_write(&local, &orig, sizeof(orig))))
		o->status = IB_WC_LOC_LEN_ERR;	/* the length was checked */
out:
	krwq_put_mrs(sqp->s_mrs, w->num_sge);
}

/*
 * A READ or an atomic to a responder without responder resources
 * (max_dest_rd_atomic 0): an invalid request, as an HCA NAKs it; the
 * responder goes to ERR, as for its other invalid requests.
 */
static void krwq_exec_no_resources(struct krwq_qp *dqp, struct krwq_outcome *o)
{
	o->status = IB_WC_REM_INV_REQ_ERR;
	krwq_qp_fail(dqp);
}

/*
 * QP @qpn of the device fabric id @dest names, with a reference, when both
 * the sender's port and the destination's carry traffic; else NULL, as
 * for a destination that does not exist.  The destination's port is
 * looked at only once its QP is held: that keeps its netdev held too.
 */
static struct krwq_qp *krwq_dest_qp_get(struct krwq_qp *sqp, u32 dest,
					u32 qpn)
{
	struct krwq_dev *ddev;
	struct krwq_qp *dqp = NULL;

	if (!krwq_port_active(sqp->dev))
		return NULL;
	rcu_read_lock();
	ddev = krwq_fabric_dev_rcu(dest);
	if (ddev)
		dqp = krwq_qp_get(ddev, qpn);
	rcu_read_unlock();
	if (dqp && !krwq_port_active(dqp->dev)) {
		krwq_qp_put(dqp);
		dqp = NULL;
	}
	return dqp;
}

/*
 * Only the QP this one is connected to, and that is connected back to it,
 * receives: its path leads to the sender's device and its destination QP
 * is the sender.  The caller found @dqp through the sender's path and
 * holds dqp->r_lock, under which the destination's attributes are written.
 */
static bool krwq_is_peer(struct krwq_qp *sqp, struct krwq_qp *dqp)
{
	lockdep_assert_held(&dqp->r_lock);
	return dqp->ibqp.qp_type == sqp->ibqp.qp_type &&
	       dqp->attr.dest_qp_num == sqp->ibqp.qp_num &&
	       dqp->route.dest == sqp->dev->fabric_id;
}

/**
 * krwq_exec_connected() - execute an RC or UC send WQE against the QP the
 * sender is connected to, under that QP's r_lock.
 * @sqp: the sender; the caller holds its s_lock, in a run (sqp->run).
 * @w: the WQE at sq_tail.
 * @o: what it came to, for the sender.
 */
void krwq_exec_connected(struct krwq_qp *sqp, struct krwq_swqe *w,
			 struct krwq_outcome *o)
{
	struct krwq_qp *dqp;
	bool answered = false;

	dqp = krwq_dest_qp_get(sqp, sqp->route.dest, sqp->attr.dest_qp_num);
	if (dqp) {
		spin_lock(&dqp->r_lock);
		if (krwq_is_peer(sqp, dqp) && krwq_can_receive(dqp)) {
			if (krwq_is_send(w->opcode))
				krwq_exec_send(sqp, dqp, w, o);
			else if (krwq_is_rd_atomic(w->opcode) &&
				 !dqp->attr.max_dest_rd_atomic)
				krwq_exec_no_resources(dqp, o);
			else if (krwq_is_atomic(w->opcode))
				krwq_exec_atomic(sqp, dqp, w, o);
			else
				krwq_exec_rdma(sqp, dqp, w, o);
			/* a responder reset mid-message never answered */
			answered = !o->lost;
		}
		krwq_run_dest_done(sqp, dqp);
		spin_unlock(&dqp->r_lock);
		krwq_qp_put(dqp);
	}
	if (sqp->ibqp.qp_type == IB_QPT_RC) {
		/* nobody answers: RC waits for its ACK timer and retries */
		o->no_ack = !answered;
	} else if (!answered || o->status == IB_WC_REM_OP_ERR ||
		   o->status == IB_WC_REM_INV_REQ_ERR ||
		   o->status == IB_WC_REM_ACCESS_ERR) {
		/*
		 * UC has no acknowledgments: a lost message or the
		 * responder's error stays on the responder's side
		 */
		o->status = IB_WC_SUCCESS;
	}
}

/* --- UD ---------------------------------------------------------------- */

/*
 * The 40 bytes a UD receive starts with: an IB GRH (InfiniBand mode and
 * RoCE v1), an IPv6 header (RoCE v2 over IPv6), or an IPv4 header in the
 * last 20 (RoCE v2 over IPv4), as the network would have carried them.
 */
static void krwq_make_net_hdr(const struct krwq_swqe *w,
			      union rdma_network_hdr *hdr)
{
	const struct ib_global_route *g = rdma_ah_read_grh(&w->ah);
	/* what follows the GRH or UDP header: the payload padded to 4 bytes */
	u32 roce_len = IB_BTH_BYTES + IB_DETH_BYTES +
		       (w->opcode == IB_WR_SEND_WITH_IMM ? 4 : 0) +
		       ALIGN(w->length, 4) + IB_ICRC_BYTES;
	struct ib_grh *grh = &hdr->ibgrh;
	struct iphdr *ip = &hdr->roce4grh;

	memset(hdr, 0, sizeof(*hdr));
	if (w->route.net_type == RDMA_NETWORK_IPV4) {
		ip->version = 4;
		ip->ihl = 5;
		ip->tos = g->traffic_class;
		ip->tot_len = htons(sizeof(*ip) + IB_UDP_BYTES + roce_len);
		ip->frag_off = htons(IP_DF);
		ip->ttl = g->hop_limit;
		ip->protocol = IPPROTO_UDP;
		/* the addresses are the IPv4-mapped GIDs' last four bytes */
		memcpy(&ip->saddr, &w->route.sgid.raw[12], sizeof(ip->saddr));
		memcpy(&ip->daddr, &g->dgid.raw[12], sizeof(ip->daddr));
		ip->check = ip_fast_csum(ip, ip->ihl);
		return;
	}
	grh->version_tclass_flow = cpu_to_be32((6U << 28) |
					       ((u32)g->traffic_class << 20) |
					       (g->flow_label & 0xfffff));
	if (w->route.net_type == RDMA_NETWORK_IPV6) {
		grh->paylen = cpu_to_be16(IB_UDP_BYTES + roce_len);
		grh->next_hdr = IPPROTO_UDP;
	} else {
		grh->paylen = cpu_to_be16(roce_len);
		grh->next_hdr = IB_GRH_NEXT_HDR;
	}
	grh->hop_limit = g->hop_limit;
	grh->sgid = w->route.sgid;
	grh->dgid = g->dgid;
}

/**
 * krwq_exec_ud() - deliver a UD send WQE to the QP its address vector and
 * QP number name, under that QP's r_lock; a datagram to nobody, or one
 * the destination refuses, is dropped.
 * @sqp: the sender; the caller holds its s_lock, in a run (sqp->run).
 * @w: the WQE at sq_tail.
 * @o: what it came to, for the sender.
 */
void krwq_exec_ud(struct krwq_qp *sqp, struct krwq_swqe *w,
		  struct krwq_outcome *o)
{
	bool has_grh = rdma_ah_get_ah_flags(&w->ah) & IB_AH_GRH;
	union rdma_network_hdr hdr;
	struct krwq_sge_cursor src;
	enum krwq_take_outcome taken;
	struct krwq_qp *dqp;
	struct krwq_taken t;
	struct ib_wc wc = {};
	u32 qkey, need;

	/* a datagram to nowhere is dropped */
	dqp = krwq_dest_qp_get(sqp, w->route.dest, w->remote_qpn);
	if (!dqp) {
		krwq_count(sqp->dev, KRWQ_STAT_UD_DROPPED, 1);
		return;
	}
	spin_lock(&dqp->r_lock);
	/* a Q_Key with the high bit set means the sender's own (IB 10.2.5) */
	qkey = (int)w->remote_qkey < 0 ? sqp->attr.qkey : w->remote_qkey;
	if (!krwq_qp_is_ud(dqp) || qkey != dqp->attr.qkey ||
	    !krwq_can_receive(dqp))
		goto drop;
	if (!krwq_src_get(sqp, w, 0)) {
		o->status = IB_WC_LOC_PROT_ERR;
		goto out;
	}
	/*
	 * too long for the receive: dropped, the WQE kept (or completed in
	 * error on an SRQ), the QP in RTS
	 */
	need = w->length + KRWQ_UD_GRH_BYTES;
	taken = krwq_take(sqp->r_sge, dqp, &t, dqp->srq ? 0 : need);
	if (taken != KRWQ_TAKE_TAKEN) {
		krwq_src_put(sqp, w);
		if (taken == KRWQ_TAKE_TOO_SMALL)
			goto out;
		goto drop;
	}
	if (!krwq_dest_fits(sqp->r_sge, dqp, &t, need))
		goto out_mrs;
	if (has_grh)
		krwq_make_net_hdr(w, &hdr);
	krwq_src_cursor(sqp, w, &src);
	if (!krwq_fill_rwqe(sqp, dqp, &t, &src, w->length,
			    has_grh ? &hdr : NULL, KRWQ_UD_GRH_BYTES, o)) {
		o->status = IB_WC_SUCCESS;	/* the sender never knows */
		goto out_mrs;
	}
	wc.wr_id = t.wr_id;
	wc.opcode = IB_WC_RECV;
	wc.byte_len = w->length + KRWQ_UD_GRH_BYTES;
	wc.src_qp = sqp->ibqp.qp_num;
	wc.slid = sqp->dev->lid;
	wc.sl = rdma_ah_get_sl(&w->ah);
	wc.port_num = 1;
	wc.wc_flags = has_grh ? IB_WC_GRH : 0;
	/* kernel consumers (the CM among them) learn the header's kind */
	if (has_grh && !dqp->ibqp.uobject) {
		wc.wc_flags |= IB_WC_WITH_NETWORK_HDR_TYPE;
		wc.network_hdr_type = w->route.net_type;
		krwq_port_wc_vlan(dqp->dev, &wc,
				  &rdma_ah_read_grh(&w->ah)->dgid);
	}
	if (w->opcode == IB_WR_SEND_WITH_IMM) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = w->imm_data;
	}
	krwq_dest_complete(dqp, &wc, w->send_flags & IB_SEND_SOLICITED);
out_mrs:
	krwq_src_put(sqp, w);
out:
	krwq_run_dest_done(sqp, dqp);
	spin_unlock(&dqp->r_lock);
	krwq_qp_put(dqp);
	return;
drop:
	krwq_count(dqp->dev, KRWQ_STAT_UD_DROPPED, 1);
	goto out;
}

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
	memset(rx->atomics, 0, sizeof(rx->atomics));
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
	if (!code && (hdrs & KRWQ_HDR_IETH) &&
	    krwq_mr_invalidate(dqp->dev, dqp->ibqp.pd, pkt->inv_rkey, NULL, 0)) {
		rx->held = false;
		krwq_dest_error(dqp, rx->t.wr_id, IB_WC_LOC_PROT_ERR);
		code = KRWQ_NAK_INVALID_REQ;
	}
	if (code) {
		krwq_wire_fatal(dqp, code, pkt->psn, out);
		return;
	}
	rx->epsn = krwq_psn_add(pkt->psn, 1);
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
	u32 batched = 0;

	__skb_queue_head_init(&batch);
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
			krwq_tx_xmit(dqp->dev, &batch, 0);
			batched = 0;
		}
	}
	krwq_tx_xmit(dqp->dev, &batch, 0);
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
	rx->atomic_next = (rx->atomic_next + 1) % ARRAY_SIZE(rx->atomics);
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
		for (i = 0; i < ARRAY_SIZE(rx->atomics); i++)
			if (rx->atomics[i].valid && rx->atomics[i].psn == pkt->psn)
				krwq_wire_atomic_ack(dqp, pkt->psn,
						     rx->atomics[i].orig, out);
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
