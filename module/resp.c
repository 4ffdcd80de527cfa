// SPDX-License-Identifier: GPL-2.0
/*
 * resp.c - the responder side of delivery within the host: everything
 * that runs under a destination QP's r_lock while a send of this host's
 * executes.  The wire's deliveries are wire_resp.c's; both take and
 * complete receive WQEs through recv.c.
 *
 * The requester (req.c) executes a send WQE by calling
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
 * req.c's run of the send queue uses krwq_run_let_irqs_in() between
 * WQEs.
 */
#include <linux/ip.h>
#include <net/checksum.h>
#include <rdma/ib_hdrs.h>
#include <rdma/ib_mad.h>

#include "krwq.h"
#include "krwq_core.h"
#include "recv.h"
#include "resp.h"
#include "trace.h"

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
 * invalidation completes only once the copies through its region end);
 * softirqs raised meanwhile run when the caller enables them again.  A
 * caller that itself holds interrupts off gains nothing from this, and
 * the lock stays held.
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
		/* read with no lock by a RESET's wait (krwq_modify_qp()) */
		WRITE_ONCE(dqp->r_busy, dqp->r_busy + 1);
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
	WRITE_ONCE(dqp->r_busy, dqp->r_busy - 1);
	if (dqp->r_busy)
		return;
	if (dqp->r_busy_waiters) {
		/*
		 * r_busy before the wait queue is looked at; pairs with the
		 * barrier in wait_var_event()'s prepare_to_wait_event()
		 */
		smp_mb();
		wake_up_var(&dqp->r_busy);
	}
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
 * regions was invalidated meanwhile: the invalidation completes only once
 * the copy lets go of it (krwq_mr_invalidate()), and a 16 MiB message
 * would hold it back for the whole of it.
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

/*
 * @dqp was reset while the run let its locks go in the middle of a
 * delivery that had taken receive WQE @t: a QP's own WQE went with its
 * ring; an SRQ's survives the reset and goes back to the consumer,
 * flushed.  Either way the sender was never answered (o->lost).
 */
static void krwq_dest_reset_under(struct krwq_qp *dqp,
				  const struct krwq_taken *t,
				  struct krwq_outcome *o)
	__must_hold(&dqp->r_lock)
{
	if (dqp->srq)
		krwq_rq_flush_complete(dqp, t->wr_id);
	o->lost = true;
}

/*
 * The remote invalidation of region @rkey by a SEND_WITH_INV into @dqp,
 * its payload placed and the sender's regions let go.  A copy elsewhere
 * that still holds the region stops at its next window, but it may need a
 * lock of this run's first (sqp's s_lock, which a modify_qp may hold
 * while it waits for dqp's r_lock): so the run lets its locks go
 * (krwq_run_window()) until the region is free, and never waits with
 * them held.  The caller does not hold interrupts off itself
 * (krwq_exec_send()), so the locks do go.
 * Return: 0; -EINVAL if @rkey names no fast-registration region of the
 * receiver's; -ECANCELED if @dqp was reset meanwhile.
 */
static int krwq_run_invalidate(struct krwq_qp *sqp, struct krwq_qp *dqp,
			       u32 rkey)
	__must_hold(&sqp->s_lock) __must_hold(&dqp->r_lock)
{
	int ret;

	for (;;) {
		ret = krwq_mr_invalidate(dqp->dev, dqp->ibqp.pd, rkey);
		if (ret != -EBUSY)
			return ret;
		krwq_inv_wait_counted(sqp);
		ret = krwq_run_window(sqp, dqp);
		if (ret)
			return ret;
		cpu_relax();
	}
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
		krwq_dest_reset_under(dqp, t, o);
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

	/*
	 * A remote invalidation may wait for a copy elsewhere to let go of
	 * its region, with this run's locks let go meanwhile
	 * (krwq_run_invalidate()), which a caller holding interrupts off
	 * does not allow: send_work executes the SEND instead.
	 */
	if (w->opcode == IB_WR_SEND_WITH_INV &&
	    irqs_disabled_flags(*sqp->run->flags)) {
		o->again = true;
		return;
	}
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
	/*
	 * remote invalidation: a fast-registration region of the receiver's.
	 * The payload is placed: the sender's own regions go first, so that
	 * the wait holds none that another such wait could be waiting for.
	 */
	if (w->opcode == IB_WR_SEND_WITH_INV) {
		int ret;

		krwq_src_put(sqp, w);
		ret = krwq_run_invalidate(sqp, dqp, w->rkey);
		if (ret == -ECANCELED) {
			krwq_dest_reset_under(dqp, &t, o);
			return;
		}
		if (ret) {
			krwq_dest_error(dqp, t.wr_id, IB_WC_LOC_PROT_ERR);
			o->status = IB_WC_REM_INV_REQ_ERR;
			return;
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
	if (w->opcode == IB_WR_SEND_WITH_INV)
		return;		/* its regions went above */
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

