// SPDX-License-Identifier: GPL-2.0
/*
 * req.c - the requester: post_send, and the runs of the send queue that
 * execute its WQEs, through the fabric or onto the wire, with their
 * retries.  What ends a WQE (its completion, the flush, the move to ERR)
 * is sq.c's; the wire's answers to an RC send are the completer's
 * (comp.c).
 *
 * Sends are delivered in the context that posts them: post_send queues
 * the WRs and runs the send queue under the sender's s_lock until it is
 * empty or must wait to retry.  A send to a QP of this device is handed
 * to the responder side (resp.c), which takes a receive WQE through the
 * C++ core's take (the destination's r_lock and ring locks, never its
 * s_lock), copies the payload and completes the receive; this file then
 * completes the send.  Doing it in place costs no context switch and no
 * queueing, which is where a loopback's latency would otherwise go; the
 * only deferred work is the retry of an RC send that must wait
 * (sq_timer -> send_work), what is past one run's budget or one call's
 * share of wire packets (send_work too), and a destination's move to ERR
 * after a responder-side error (its err_work).
 *
 * An RC send waits for one of two reasons, each with its own counter as
 * in IB: an RNR NAK (a destination with no receive WQE; rnr_retry, the
 * responder's min_rnr_timer) or no acknowledgment at all (no destination
 * QP, or one not connected back or not able to receive; retry_cnt, the
 * local ACK timeout 4.096 us * 2^timeout).  Failing such a send at once
 * would end a connection whose peer is merely still connecting, or still
 * tearing down, where an HCA or rxe would have retried first.
 */
#include <linux/jiffies.h>

#include "krwq.h"
#include "resp.h"
#include "req.h"
#include "sq.h"
#include "tx.h"
#include "wire.h"
#include "trace.h"

/*
 * How much one run of the send queue may do before the rest is handed to
 * send_work: it bounds the time a poster spends in post_send.
 */
#define KRWQ_SQ_BUDGET_WRS	64
#define KRWQ_SQ_BUDGET_BYTES	SZ_1M

/* Executed on the send queue without reaching a peer. */
static bool krwq_is_local(enum ib_wr_opcode op)
{
	return op == IB_WR_REG_MR || op == IB_WR_LOCAL_INV;
}

static bool krwq_opcode_ok(struct krwq_qp *qp, enum ib_wr_opcode op)
{
	enum ib_qp_type type = qp->ibqp.qp_type;

	switch (op) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		return true;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_SEND_WITH_INV:
		return type == IB_QPT_RC || type == IB_QPT_UC;
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		/*
		 * only with an initiator depth: one READ or atomic at a time
		 * is in flight on the fabric, but none is allowed at 0
		 */
		return type == IB_QPT_RC && qp->attr.max_rd_atomic;
	case IB_WR_REG_MR:
	case IB_WR_LOCAL_INV:
		/* fast-registration regions are the kernel's */
		return !qp->ibqp.uobject;
	default:
		return false;
	}
}

/* Bytes of the payload an inline WR carries, or more than allowed. */
static u64 krwq_wr_bytes(const struct ib_send_wr *wr)
{
	u64 total = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++)
		total += wr->sg_list[i].length;
	return total;
}

/*
 * The most WRs one post_send may queue: as many as the queue holds.  A long
 * list lets interrupts in on its way (krwq_post_send()), and another
 * thread's post may run the queue and free slots meanwhile; without this
 * bound the list could go on past the WRs krwq_stage_user_inline() read in
 * advance.  It also makes a list longer than the queue fail at the same WR
 * however busy the queue is.
 */
static u32 krwq_sq_post_limit(const struct krwq_qp *qp)
{
	return qp->sq_slots - 1;
}

/*
 * A user QP's inline payloads live in its process's memory, which may only
 * be read where a fault may sleep: before s_lock.  Copies the payload of
 * every inline WR among the first krwq_sq_post_limit() WRs of @wr into one
 * buffer, in order; krwq_post_send() queues no WR past those.  Return: the
 * buffer (kvfree() it; NULL if there is no inline WR), or an
 * ERR_PTR(-ENOMEM).  *@fault is set to the first WR whose payload could not
 * be read, if any (the WRs before it are still posted, from the buffer).
 */
static u8 *krwq_stage_user_inline(struct krwq_qp *qp,
				  const struct ib_send_wr *wr,
				  const struct ib_send_wr **fault)
{
	const struct ib_send_wr *w;
	u64 total = 0;
	u8 *buf, *p;
	u32 n;
	int i;

	*fault = NULL;
	for (w = wr, n = 0; w && n < krwq_sq_post_limit(qp);
	     w = w->next, n++) {
		if (!(w->send_flags & IB_SEND_INLINE) || w->num_sge < 0 ||
		    w->num_sge > qp->max_send_sge)
			continue;
		total += min_t(u64, krwq_wr_bytes(w), KRWQ_MAX_INLINE + 1);
	}
	if (!total)
		return NULL;
	buf = kvmalloc(total, GFP_KERNEL_ACCOUNT);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	for (w = wr, p = buf, n = 0; w && n < krwq_sq_post_limit(qp);
	     w = w->next, n++) {
		if (!(w->send_flags & IB_SEND_INLINE) || w->num_sge < 0 ||
		    w->num_sge > qp->max_send_sge ||
		    krwq_wr_bytes(w) > qp->max_inline)
			continue;	/* krwq_sq_fill() refuses it */
		for (i = 0; i < w->num_sge; i++) {
			const struct ib_sge *sge = &w->sg_list[i];

			if (copy_from_user(p, u64_to_user_ptr(sge->addr),
					   sge->length)) {
				*fault = w;
				return buf;
			}
			p += sge->length;
		}
	}
	return buf;
}

/*
 * Checks one WR and copies it into the send queue slot @w; an inline WR's
 * payload is copied too, from kernel memory, or from *@staged (a user
 * QP's, see krwq_stage_user_inline()), which then moves past it.
 */
static int krwq_sq_fill(struct krwq_qp *qp, const struct ib_send_wr *wr,
			struct krwq_swqe *w, const u8 **staged)
{
	bool inl = wr->send_flags & IB_SEND_INLINE;
	u64 total;
	int i;

	/* in ERR a WR is only flushed: ib_drain_sq() posts any opcode */
	if (krwq_state_ops(qp->state) & KRWQ_FLUSH_SEND) {
		memset(w, 0, sizeof(*w));
		w->wr_id = wr->wr_id;
		w->opcode = wr->opcode;
		return 0;
	}
	if (wr->num_sge < 0 || wr->num_sge > qp->max_send_sge ||
	    !krwq_opcode_ok(qp, wr->opcode))
		return -EINVAL;
	total = krwq_wr_bytes(wr);
	if (total > KRWQ_MAX_MSG_SIZE ||
	    (krwq_qp_is_ud(qp) && total > krwq_port_mtu_bytes(qp->dev)))
		return -EINVAL;
	/* a datagram needs an address, and a QPN fits the BTH's 24 bits */
	if (krwq_qp_is_ud(qp) &&
	    (!ud_wr(wr)->ah || ud_wr(wr)->remote_qpn & ~KRWQ_QPN_MASK))
		return -EINVAL;
	/* inline: a payload, never a place to write or a local operation */
	if (inl && (total > qp->max_inline || krwq_is_rd_atomic(wr->opcode) ||
		    krwq_is_local(wr->opcode)))
		return -EINVAL;
	/* an atomic's result goes into one 8-byte buffer */
	if (krwq_is_atomic(wr->opcode) && (wr->num_sge != 1 || total != 8))
		return -EINVAL;
	if (wr->opcode == IB_WR_REG_MR &&
	    reg_wr(wr)->mr->device != qp->ibqp.device)
		return -EINVAL;

	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->send_flags = wr->send_flags;
	w->imm_data = wr->ex.imm_data;
	w->num_sge = wr->num_sge;
	w->length = total;
	/* not the slot's earlier WQE's: this one has not been executed */
	w->local_done = false;
	if (inl && qp->ibqp.uobject) {
		if (total) {
			memcpy(w->sg_list, *staged, total);
			*staged += total;
		}
	} else if (inl) {
		u8 *p = (u8 *)w->sg_list;

		for (i = 0; i < wr->num_sge; i++) {
			memcpy(p, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			p += wr->sg_list[i].length;
		}
	} else {
		memcpy(w->sg_list, wr->sg_list,
		       wr->num_sge * sizeof(*wr->sg_list));
	}
	if (wr->opcode == IB_WR_REG_MR) {
		w->reg.mr = to_kmr(reg_wr(wr)->mr);
		w->reg.key = reg_wr(wr)->key;
		w->reg.access = reg_wr(wr)->access;
	} else if (wr->opcode == IB_WR_LOCAL_INV ||
		   wr->opcode == IB_WR_SEND_WITH_INV) {
		w->rkey = wr->ex.invalidate_rkey;
	} else if (krwq_is_atomic(wr->opcode)) {
		w->remote_addr = atomic_wr(wr)->remote_addr;
		w->rkey = atomic_wr(wr)->rkey;
		w->atomic.compare_add = atomic_wr(wr)->compare_add;
		w->atomic.swap = atomic_wr(wr)->swap;
	} else if (krwq_qp_is_ud(qp)) {
		struct krwq_ah *ah = to_kah(ud_wr(wr)->ah);

		w->remote_qpn = ud_wr(wr)->remote_qpn;
		w->remote_qkey = ud_wr(wr)->remote_qkey;
		w->ah = ah->attr;
		w->route = ah->route;
	} else if (!krwq_is_send(wr->opcode)) {
		w->remote_addr = rdma_wr(wr)->remote_addr;
		w->rkey = rdma_wr(wr)->rkey;
	}
	return 0;
}

/* --- local operations ------------------------------------------------- */

/*
 * IB_WR_REG_MR and IB_WR_LOCAL_INV, in send queue order (on the wire, an
 * unfenced one behind a head awaiting its answer is executed at once:
 * krwq_exec_local_ahead()).  A LOCAL_INV whose region a copy still holds
 * (on another CPU, or on this one under the interrupt that posted it)
 * stays at the head of the queue, and is tried again a tick later:
 * waiting here, under s_lock, could wait for ever.  So is a REG_MR of a
 * region invalid but still held, which a flushed LOCAL_INV can leave.
 */

/* A REG_MR's or LOCAL_INV's work.  Return: 0, -EBUSY, or another errno. */
static int krwq_local_op(struct krwq_qp *qp, struct krwq_swqe *w)
{
	if (w->opcode == IB_WR_REG_MR)
		return krwq_mr_fast_reg(w->reg.mr, qp->ibqp.pd, w->reg.key,
					w->reg.access);
	return krwq_mr_invalidate(qp->dev, qp->ibqp.pd, w->rkey);
}

static void krwq_exec_local(struct krwq_qp *qp, struct krwq_swqe *w,
			    struct krwq_outcome *o)
{
	int ret;

	if (w->local_done)	/* executed ahead (krwq_exec_local_ahead()) */
		return;
	ret = krwq_local_op(qp, w);
	if (ret == -EBUSY) {
		if (w->opcode == IB_WR_LOCAL_INV)
			krwq_inv_wait_counted(qp);
		o->inv_busy = true;
	} else if (ret) {
		o->status = IB_WC_LOC_PROT_ERR;
	}
}

/*
 * A REG_MR or LOCAL_INV behind the WQEs of RC @qp's on the wire that
 * await their answer, as a RoCE NIC runs one: executed now (once: after
 * a go-back it is only counted again), so that the WQEs behind it may go
 * ahead too.  It takes no PSN: its last is that of the WQE before it, so
 * the answer that completes that one completes it (comp.c).  One that
 * cannot be executed now (a region in a copy, or an error) stops the
 * WQEs going ahead, and is executed, or fails, in its turn as the head.
 * Return: whether it counts as sent ahead.
 */
static bool krwq_exec_local_ahead(struct krwq_qp *qp, struct krwq_swqe *w)
{
	struct krwq_wire_req *req = &qp->wire_req;

	if (!w->local_done) {
		if (krwq_local_op(qp, w)) {
			req->ahead_blocked = true;
			return false;
		}
		w->local_done = true;
	}
	w->wire_last_psn = krwq_psn_add(qp->wire_psn, KRWQ_PSN_MASK);
	req->ahead++;
	return true;
}

/* --- running the send queue -------------------------------------------- */

/*
 * A UD send WQE: into a QP of a krwq device through the fabric, or, to an
 * address none here holds, onto the wire (net.c).
 */
static void krwq_send_ud(struct krwq_qp *qp, struct krwq_swqe *w,
			 struct krwq_outcome *o)
{
	if (krwq_wire_reaches(qp->dev, &w->route)) {
		o->status = krwq_wire_send_ud(qp, w);
		return;
	}
	krwq_count(qp->dev, KRWQ_STAT_LOCAL_MSGS, 1);
	krwq_exec_ud(qp, w, o);
}

/*
 * An RC send WQE to a peer on the wire (wire_req.c): sent, and again
 * after its answer did not come (counted against retry_cnt, unless the
 * local ACK timeout is 0: for ever; from where a NAK or a READ's
 * responses left off) or after an RNR wait; its completion waits for the
 * answer (krwq_wire_answer()).
 */
static void krwq_send_rc_wire(struct krwq_qp *qp, struct krwq_swqe *w,
			      struct krwq_outcome *o)
{
	struct krwq_wire_req *req = &qp->wire_req;

	/* its ACK came while this run had s_lock let go: done */
	if (req->answered)
		goto answered;
	if (req->timed_out) {
		req->timed_out = false;
		if (qp->attr.timeout && qp->ack_tries >= qp->attr.retry_cnt) {
			krwq_wire_req_idle(req);
			o->status = IB_WC_RETRY_EXC_ERR;
			return;
		}
		qp->ack_tries++;
		krwq_count(qp->dev, KRWQ_STAT_ACK_TIMEOUTS, 1);
	}
	o->status = krwq_wire_send_rc(qp, w);
	/* or while it built the message again (whatever became of that) */
	if (req->answered)
		goto answered;
	if (o->status != IB_WC_SUCCESS) {
		krwq_wire_req_idle(req);
		return;
	}
	o->awaits = true;
	return;
answered:
	krwq_wire_req_idle(req);
	req->first_psn = krwq_psn_add(req->last_psn, 1);
	o->status = IB_WC_SUCCESS;
}

/*
 * An RC or UC send WQE, to its peer through the fabric, or, to a peer no
 * krwq device here holds, onto the wire (wire_req.c).
 */
static void krwq_send_connected(struct krwq_qp *qp, struct krwq_swqe *w,
				struct krwq_outcome *o)
{
	if (krwq_wire_reaches(qp->dev, &qp->route)) {
		if (qp->ibqp.qp_type == IB_QPT_RC)
			krwq_send_rc_wire(qp, w, o);
		else
			o->status = krwq_wire_send_uc(qp, w);
		return;
	}
	krwq_count(qp->dev, KRWQ_STAT_LOCAL_MSGS, 1);
	krwq_exec_connected(qp, w, o);
}

/*
 * The WQE at sq_tail got an RNR NAK or no answer: arm sq_timer to try it
 * again, counting the try against rnr_retry or retry_cnt.  Return: false
 * when those are used up and the WQE fails.
 */
static bool krwq_sq_retry_later(struct krwq_qp *qp,
				const struct krwq_outcome *o)
{
	unsigned long delay;

	if (o->rnr) {
		/* rnr_retry 7 means retry for ever, uncounted */
		if (qp->attr.rnr_retry != 7) {
			if (qp->rnr_tries >= qp->attr.rnr_retry)
				return false;
			qp->rnr_tries++;
		}
		krwq_count(qp->dev, KRWQ_STAT_RNR_RETRIES, 1);
		delay = krwq_rnr_jiffies(o->min_rnr_timer);
	} else {
		if (qp->attr.timeout) {
			if (qp->ack_tries >= qp->attr.retry_cnt)
				return false;
			qp->ack_tries++;
		}
		krwq_count(qp->dev, KRWQ_STAT_ACK_TIMEOUTS, 1);
		delay = krwq_ack_timeout_jiffies(qp->attr.timeout);
	}
	qp->sq_waiting = true;
	mod_timer(&qp->sq_timer, jiffies + delay);
	return true;
}

/**
 * krwq_sq_run() - execute queued send WRs, oldest first.
 * @qp: the QP; the caller holds qp->s_lock, taken with
 *      spin_lock_irqsave(&qp->s_lock, *@flags), and nothing else.
 * @flags: what that spin_lock_irqsave() saved.
 * @bh_off: the caller's, false: set if the run disabled bottom halves
 *          (krwq_run_let_irqs_in()); the caller then enables them once
 *          it has released s_lock.
 * @tx: the caller's, empty: packets for the wire, which the caller sends
 *      with krwq_sq_xmit(), which releases s_lock.
 *
 * An RC send on the wire awaits its answer while the WQEs behind it go
 * ahead, within the window (krwq_wire_may_send_ahead()).
 * Stops when the queue is empty, the QP leaves RTS, an RC send must wait
 * for its answer with nothing more to go ahead, or to be retried (an RNR
 * NAK or no answer; sq_timer resumes it), a local
 * WQE finds its region still in a copy (sq_timer resumes it a tick
 * later), or the budget of one run is spent (send_work carries on).
 * Only one run at a
 * time: a second caller leaves its WRs to the run under way.
 *
 * Every KRWQ_IRQOFF_BYTES copied the run drops its locks and takes them
 * again, so s_lock may be released and re-taken within; the run keeps the
 * send queue meanwhile (qp->sq_running) and a RESET waits for it, having
 * asked it to end at its next WQE (qp->sq_stop).  Flushes asked for while
 * it runs (a move to ERR) happen at its end, after the completion of the
 * WQE it was executing.
 */
static void krwq_sq_run(struct krwq_qp *qp, unsigned long *flags,
			bool *bh_off, struct sk_buff_head *tx)
{
	struct krwq_run run = { .flags = flags, .bh_off = bh_off, .tx = tx };
	u32 wrs = 0, bytes = 0;

	lockdep_assert_held(&qp->s_lock);
	if (qp->sq_running || qp->sq_stop)
		return;
	WRITE_ONCE(qp->sq_running, true);
	qp->run = &run;
	for (;;) {
		struct krwq_outcome o = { .status = IB_WC_SUCCESS };
		bool ahead = qp->sq_waiting;
		struct krwq_swqe *w;
		u32 idx;

		if (qp->sq_tail == qp->sq_head || qp->sq_stop ||
		    !(krwq_state_ops(qp->state) & KRWQ_RUN_SEND))
			break;
		/* waiting: only RC on the wire sends ahead of its head */
		idx = ahead ? krwq_sq_ahead(qp) : qp->sq_tail;
		if (idx == qp->sq_head)
			break;
		w = krwq_sq_entry(qp, idx);
		if (ahead && !krwq_wire_may_send_ahead(qp, w))
			break;

		if (wrs >= KRWQ_SQ_BUDGET_WRS || bytes >= KRWQ_SQ_BUDGET_BYTES) {
			queue_work(krwq_wq, &qp->send_work);
			break;
		}
		/*
		 * interrupts in before a WQE whose start would not fit the
		 * section (a datagram is copied whole, krwq_run_copy())
		 */
		if (run.section &&
		    run.section + KRWQ_WQE_COST +
		    min_t(u32, w->length, KRWQ_IRQOFF_BYTES) > KRWQ_IRQOFF_BYTES) {
			krwq_run_let_irqs_in(qp);
			continue;	/* the QP may have left RTS */
		}
		wrs++;
		bytes += w->length;
		run.section += KRWQ_WQE_COST;

		if (ahead) {
			if (krwq_is_local(w->opcode) ?
			    krwq_exec_local_ahead(qp, w) :
			    krwq_wire_send_ahead(qp, w))
				trace_krwq_deliver(qp, w, IB_WC_SUCCESS, false,
						   false);
			continue;
		}
		if (krwq_is_local(w->opcode))
			krwq_exec_local(qp, w, &o);
		else if (krwq_qp_is_ud(qp))
			krwq_send_ud(qp, w, &o);
		else
			krwq_send_connected(qp, w, &o);
		/* not executed: send_work tries it again, now or a tick on */
		if (o.again) {
			queue_work(krwq_wq, &qp->send_work);
			break;
		}
		if (o.inv_busy) {
			qp->sq_waiting = true;
			mod_timer(&qp->sq_timer, jiffies + 1);
			break;
		}
		trace_krwq_deliver(qp, w, o.status, o.rnr, o.no_ack);
		if (o.awaits) {
			/* what is behind it may go ahead (the loop's top) */
			krwq_sq_wait(qp, KRWQ_WIRE_AWAIT_ANSWER,
				     krwq_ack_timeout_jiffies(qp->attr.timeout));
			continue;
		}
		if ((o.rnr || o.no_ack) && krwq_sq_retry_later(qp, &o))
			break;
		if (o.rnr)
			o.status = IB_WC_RNR_RETRY_EXC_ERR;
		else if (o.no_ack)
			o.status = IB_WC_RETRY_EXC_ERR;
		qp->rnr_tries = 0;
		qp->ack_tries = 0;
		qp->sq_inv_counted = false;
		qp->sq_tail = krwq_sq_next(qp, qp->sq_tail);
		krwq_sq_complete(qp, w, o.status);
		if (o.status != IB_WC_SUCCESS)
			krwq_qp_error_locked(qp);
	}
	qp->run = NULL;
	WRITE_ONCE(qp->sq_running, false);
	/* what a move to ERR (or a post in ERR) left for the run's end */
	if (krwq_state_ops(qp->state) & KRWQ_FLUSH_SEND)
		krwq_sq_flush_locked(qp);
	if (qp->sq_run_waiters) {
		/*
		 * sq_running before the wait queue is looked at; pairs with
		 * the barrier in wait_var_event()'s prepare_to_wait_event()
		 */
		smp_mb();
		wake_up_var(&qp->sq_running);
	}
}

/*
 * Moves the first @max packets of @qp's wire_txq (or all, when fewer) to
 * @tx and returns how many it moved.  The caller holds s_lock.
 */
static u32 krwq_sq_take_tx(struct krwq_qp *qp, struct sk_buff_head *tx,
			   u32 max)
{
	struct sk_buff *skb;
	u32 n = 0;

	while (n < max && (skb = __skb_dequeue(&qp->wire_txq))) {
		__skb_queue_tail(tx, skb);
		n++;
	}
	return n;
}

/*
 * Sends the packets a run of @qp's send queue built (@tx), in the order
 * runs built them: they join the QP's wire_txq, and unless another caller
 * is sending that, this one sends it, letting s_lock go meanwhile.  Two
 * runs back to back (a post here, send_work on the other CPU) would
 * otherwise race to the IP stack, the later PSNs could leave first, and
 * the responder would take the earlier ones for lost.  One call sends at
 * most KRWQ_SQ_XMIT_BUDGET packets and leaves the rest to send_work, which
 * ends in this function too: a poster whose queue the other CPU keeps
 * filling returns.  A caller with interrupts off leaves them all to it.
 * The caller holds s_lock, taken with spin_lock_irqsave(&qp->s_lock,
 * @flags); it is released on return.
 */
static void krwq_sq_xmit(struct krwq_qp *qp, struct sk_buff_head *tx,
			 unsigned long flags)
	__releases(&qp->s_lock)
{
	u32 sent = 0;

	skb_queue_splice_tail_init(tx, &qp->wire_txq);
	if (qp->wire_tx_busy || skb_queue_empty(&qp->wire_txq))
		goto out;
	/*
	 * With interrupts off they could not go out now (krwq_tx_xmit()
	 * would leave them to the device's tx_work, which a later caller
	 * with interrupts on would pass): send_work sends them, in turn.
	 */
	if (irqs_disabled_flags(flags)) {
		queue_work(krwq_wq, &qp->send_work);
		goto out;
	}
	qp->wire_tx_busy = true;
	while (!skb_queue_empty(&qp->wire_txq)) {
		if (sent == KRWQ_SQ_XMIT_BUDGET) {
			queue_work(krwq_wq, &qp->send_work);
			break;
		}
		sent += krwq_sq_take_tx(qp, tx, KRWQ_SQ_XMIT_BUDGET - sent);
		spin_unlock_irqrestore(&qp->s_lock, flags);
		krwq_tx_xmit(qp->dev, tx, flags);
		spin_lock_irqsave(&qp->s_lock, flags);
	}
	qp->wire_tx_busy = false;
out:
	spin_unlock_irqrestore(&qp->s_lock, flags);
}

/**
 * krwq_sq_timer() - an RNR wait, the local ACK timeout or the tick a
 * busy region's invalidation waits ran out: try the WQE at sq_tail again.
 * @t: qp->sq_timer.
 */
void krwq_sq_timer(struct timer_list *t)
{
	struct krwq_qp *qp = from_timer(qp, t, sq_timer);
	unsigned long flags;

	spin_lock_irqsave(&qp->s_lock, flags);
	/* armed again meanwhile (the answer came, the next WQE went): moot */
	if (qp->sq_waiting && !timer_pending(&qp->sq_timer)) {
		qp->sq_waiting = false;
		/* on the wire: no answer counts as a try; an RNR wait does not */
		if (qp->wire_req.await == KRWQ_WIRE_AWAIT_ANSWER)
			qp->wire_req.timed_out = true;
		qp->wire_req.await = KRWQ_WIRE_AWAIT_NONE;
		krwq_wire_go_back(&qp->wire_req);
		queue_work(krwq_wq, &qp->send_work);
	}
	spin_unlock_irqrestore(&qp->s_lock, flags);
}

/**
 * krwq_send_work() - carry on with a send queue: after an RNR wait or an
 * ACK timeout, when one run's budget was spent, or when wire packets were
 * left to it (krwq_sq_xmit()).
 * @work: qp->send_work.
 */
void krwq_send_work(struct work_struct *work)
{
	struct krwq_qp *qp = container_of(work, struct krwq_qp, send_work);
	struct sk_buff_head tx;
	unsigned long flags;
	bool bh_off = false;

	__skb_queue_head_init(&tx);
	spin_lock_irqsave(&qp->s_lock, flags);
	krwq_sq_run(qp, &flags, &bh_off, &tx);
	krwq_sq_xmit(qp, &tx, flags);
	if (bh_off)
		local_bh_enable();
}

/* Whether a send WR may be posted now (in ERR it is flushed at once). */
static bool krwq_sq_postable(struct krwq_qp *qp)
{
	return krwq_state_ops(qp->state) & KRWQ_POST_SEND;
}

/**
 * krwq_post_send() - ib_device_ops.post_send: queue, then deliver.
 * @ibqp: the QP.
 * @wr: the list of send WRs.
 * @bad_wr: set to the first WR not posted, on error.
 *
 * In ERR, posted WRs complete at once as flushed.
 *
 * Return: 0; -EINVAL for a QP before RTS, a bad opcode for the QP type
 * (RDMA READ and atomics also on an RC QP whose max_rd_atomic is 0),
 * too many SGEs, inline data over the QP's max_inline_data (or for an
 * opcode that cannot carry it), an atomic without one 8-byte buffer, a
 * UD WR without an address handle or to a QPN wider than 24 bits, or a
 * message over the size limit; -ENOMEM when the send queue is full, at
 * the WR past max_send_wr of a longer list (however many WRs complete
 * while it is posted), or without memory for a user QP's inline payloads;
 * -EFAULT when a user QP's inline payload cannot be read.
 */
int krwq_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr)
{
	struct krwq_qp *qp = to_kqp(ibqp);
	const struct ib_send_wr *fault = NULL;
	u8 *staged = NULL;
	const u8 *next_staged;
	struct sk_buff_head tx;
	unsigned long flags;
	bool bh_off = false;
	u32 copied = 0, n = 0;
	int ret = 0;

	if (qp->max_inline && ibqp->uobject) {
		staged = krwq_stage_user_inline(qp, wr, &fault);
		if (IS_ERR(staged)) {
			*bad_wr = wr;
			return PTR_ERR(staged);
		}
	}
	next_staged = staged;
	__skb_queue_head_init(&tx);
	spin_lock_irqsave(&qp->s_lock, flags);
	if (!krwq_sq_postable(qp)) {
		ret = -EINVAL;
		goto out;
	}
	for (; wr; wr = wr->next) {
		u32 next = krwq_sq_next(qp, qp->sq_head);

		/* a long list lets interrupts in, as a run does */
		if (copied >= KRWQ_IRQOFF_BYTES && !irqs_disabled_flags(flags)) {
			spin_unlock_irqrestore(&qp->s_lock, flags);
			spin_lock_irqsave(&qp->s_lock, flags);
			copied = 0;
			next = krwq_sq_next(qp, qp->sq_head);
			if (!krwq_sq_postable(qp)) {
				ret = -EINVAL;	/* reset meanwhile */
				break;
			}
		}
		copied += qp->sq_stride;
		if (next == qp->sq_free || n++ == krwq_sq_post_limit(qp)) {
			ret = -ENOMEM;
			break;
		}
		if (wr == fault) {
			ret = -EFAULT;
			break;
		}
		ret = krwq_sq_fill(qp, wr, krwq_sq_entry(qp, qp->sq_head),
				   &next_staged);
		if (ret)
			break;
		qp->sq_head = next;
	}
	if (krwq_state_ops(qp->state) & KRWQ_FLUSH_SEND)
		krwq_sq_flush_locked(qp);
	else
		krwq_sq_run(qp, &flags, &bh_off, &tx);
out:
	if (ret)
		*bad_wr = wr;
	krwq_sq_xmit(qp, &tx, flags);
	if (bh_off)
		local_bh_enable();	/* softirqs raised meanwhile run here */
	kvfree(staged);
	return ret;
}
