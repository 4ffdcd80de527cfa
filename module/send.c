// SPDX-License-Identifier: GPL-2.0
/*
 * send.c - the send queue and loopback delivery.
 *
 * Sends are delivered in the context that posts them: post_send queues
 * the WRs and runs the send queue under the sender's s_lock until it is
 * empty or must wait to retry.  A send to a QP of this device takes a
 * receive WQE through the C++ core's take (the destination's ring locks,
 * never its s_lock), copies the payload and completes both sides.  Doing
 * it in place costs no context switch and no queueing, which is where a
 * loopback's latency would otherwise go; the only deferred work is the
 * retry of an RC send that must wait (sq_timer -> send_work) and a
 * destination's move to ERR after a responder-side error (its err_work).
 *
 * An RC send waits for one of two reasons, each with its own counter as
 * in IB: an RNR NAK (a destination with no receive WQE; rnr_retry, the
 * responder's min_rnr_timer) or no acknowledgment at all (no destination
 * QP, or one not connected back or not able to receive; retry_cnt, the
 * local ACK timeout 4.096 us * 2^timeout).  Failing such a send at once
 * would end a connection whose peer is merely still connecting, or still
 * tearing down, where an HCA or rxe would have retried first.
 */
#include <linux/ip.h>
#include <linux/jiffies.h>
#include <net/checksum.h>
#include <rdma/ib_hdrs.h>
#include <rdma/ib_pack.h>

#include "krwq.h"
#include "krwq_core.h"
#include "trace.h"

/* IB's RNR NAK timer field in microseconds (encoding 0 is the longest). */
static const u32 krwq_rnr_usecs[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/*
 * How much one run of the send queue may do before the rest is handed to
 * send_work: it bounds the time a poster spends in post_send.
 */
#define KRWQ_SQ_BUDGET_WRS	64
#define KRWQ_SQ_BUDGET_BYTES	SZ_1M

/*
 * A run lets interrupts in (drops its locks and takes them again) each
 * time it has copied KRWQ_IRQOFF_BYTES since it last did, in the middle
 * of a message if need be, so no interrupts-off section of a run copies
 * more than that.  Each WQE is charged KRWQ_WQE_COST on top of its
 * payload, for its take, look-ups and completions.
 */
#define KRWQ_IRQOFF_BYTES	SZ_16K
#define KRWQ_WQE_COST		SZ_1K

/*
 * One run of a send queue (krwq_sq_run()), reached from the QP as
 * qp->run while it lasts.
 * @flags: the interrupt state its caller saved when it took s_lock.
 * @section: bytes copied or charged since interrupts were last let in.
 * @busy_dqp: the destination whose r_busy this run raised, or NULL.
 */
struct krwq_run {
	unsigned long *flags;
	u32 section;
	struct krwq_qp *busy_dqp;
};

/* What executing one send WQE came to. */
struct krwq_outcome {
	enum ib_wc_status status;	/* for the sender */
	bool rnr;			/* no receive WQE: retry later */
	u8 min_rnr_timer;		/* the responder's, when rnr */
	bool no_ack;			/* RC, nobody answered: retry later */
	bool lost;			/* the destination was reset mid-copy */
};

static struct krwq_swqe *krwq_sq_entry(struct krwq_qp *qp, u32 idx)
{
	return (void *)qp->sq + (size_t)idx * qp->sq_stride;
}

static u32 krwq_sq_next(struct krwq_qp *qp, u32 idx)
{
	return idx + 1 == qp->sq_slots ? 0 : idx + 1;
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

static bool krwq_is_atomic(enum ib_wr_opcode op)
{
	return op == IB_WR_ATOMIC_CMP_AND_SWP || op == IB_WR_ATOMIC_FETCH_AND_ADD;
}

/* Executed on the send queue without reaching a peer. */
static bool krwq_is_local(enum ib_wr_opcode op)
{
	return op == IB_WR_REG_MR || op == IB_WR_LOCAL_INV;
}

static bool krwq_is_send(enum ib_wr_opcode op)
{
	return op == IB_WR_SEND || op == IB_WR_SEND_WITH_IMM ||
	       op == IB_WR_SEND_WITH_INV;
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
		return type == IB_QPT_RC;
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
 * A user QP's inline payloads live in its process's memory, which may only
 * be read where a fault may sleep: before s_lock.  Copies the payload of
 * every inline WR of @wr into one buffer, in order.  Return: the buffer
 * (kfree() it; NULL if there is no inline WR), an ERR_PTR(-ENOMEM), or
 * NULL with *@fault set to the first WR whose payload could not be read
 * (the WRs before it are still posted).
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
	/* no more WRs than the send queue can hold: the rest never fit */
	for (w = wr, n = 0; w && n < qp->sq_slots; w = w->next, n++) {
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
	for (w = wr, p = buf, n = 0; w && n < qp->sq_slots;
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
	if (qp->state == IB_QPS_ERR) {
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
	if (krwq_qp_is_ud(qp) && !ud_wr(wr)->ah)
		return -EINVAL;
	/* inline: a payload, never a place to write or a local operation */
	if (inl && (total > qp->max_inline || wr->opcode == IB_WR_RDMA_READ ||
		    krwq_is_atomic(wr->opcode) || krwq_is_local(wr->opcode)))
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

/*
 * Completes the WQE just executed (sq_tail has moved past it), if it is
 * signaled or failed.  A completion frees the send queue slots of every
 * WQE up to it: an unsignaled WQE holds its slot until then (IB 10.8.3.1).
 */
static void krwq_complete_send(struct krwq_qp *qp, struct krwq_swqe *w,
			       enum ib_wc_status status)
{
	struct ib_wc wc = {
		.wr_id = w->wr_id,
		.status = status,
		.opcode = krwq_wc_opcode(w->opcode),
		.byte_len = w->opcode == IB_WR_RDMA_READ ||
			    krwq_is_atomic(w->opcode) ? w->length : 0,
		.qp = &qp->ibqp,
	};

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
 * at sq_tail with interrupts let in), the flush is left to its end.
 */
void krwq_sq_flush_locked(struct krwq_qp *qp)
{
	struct ib_wc wc = { .status = IB_WC_WR_FLUSH_ERR, .qp = &qp->ibqp };

	lockdep_assert_held(&qp->s_lock);
	if (qp->sq_running)
		return;
	qp->sq_waiting = false;
	qp->rnr_tries = 0;
	qp->ack_tries = 0;
	for (; qp->sq_tail != qp->sq_head;
	     qp->sq_tail = krwq_sq_next(qp, qp->sq_tail)) {
		struct krwq_swqe *w = krwq_sq_entry(qp, qp->sq_tail);

		wc.wr_id = w->wr_id;
		wc.opcode = krwq_wc_opcode(w->opcode);
		krwq_cq_enter(krwq_send_cq(qp), &wc, false);
	}
	qp->sq_free = qp->sq_tail;	/* every slot is free again */
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
}

/*
 * The sender's payload: the regions of its SGEs (checked for @access), or
 * its inline copy in the send queue, which needs none.
 */
static bool krwq_src_get(struct krwq_qp *sqp, struct krwq_swqe *w, int access)
{
	if (w->send_flags & IB_SEND_INLINE)
		return true;
	return krwq_get_mrs(sqp->dev, sqp->ibqp.pd, w->sg_list, w->num_sge,
			    access, sqp->s_mrs);
}

static void krwq_src_put(struct krwq_qp *sqp, struct krwq_swqe *w)
{
	if (!(w->send_flags & IB_SEND_INLINE))
		krwq_put_mrs(sqp->s_mrs, w->num_sge);
}

static void krwq_src_cursor(struct krwq_qp *sqp, struct krwq_swqe *w,
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

/*
 * Drops the run's s_lock and takes it again, so that interrupts it holds
 * off come in.  Meanwhile the run keeps the send queue (sq_running).
 *
 * Only hard interrupts come in.  Bottom halves stay disabled, and with
 * them preemption, so that nothing else runs on this CPU meanwhile that
 * could wait for what the run holds (an invalidation spins until the
 * copies through its region end).  They are enabled again with the lock
 * held, hence _local_bh_enable(): softirqs raised meanwhile run at the
 * next opportunity, not here.  A caller that itself holds interrupts off
 * gains nothing from this, and the lock stays held.
 */
static void krwq_run_let_irqs_in(struct krwq_qp *sqp)
	__must_hold(&sqp->s_lock)
{
	struct krwq_run *run = sqp->run;

	lockdep_assert_held(&sqp->s_lock);
	run->section = 0;
	if (irqs_disabled_flags(*run->flags))
		return;
	local_bh_disable();
	spin_unlock_irqrestore(&sqp->s_lock, *run->flags);
	spin_lock_irqsave(&sqp->s_lock, *run->flags);
	_local_bh_enable();
}

/*
 * krwq_run_let_irqs_in() in the middle of a delivery into @dqp: its
 * r_lock is dropped too (first, and taken again last), and its receive
 * flush waits meanwhile (r_busy, until krwq_run_dest_done()).
 * Return: 0, or -ECANCELED if @dqp was reset meanwhile: the delivery is
 * abandoned, its WQE gone with the rest.
 */
static int krwq_run_window(struct krwq_qp *sqp, struct krwq_qp *dqp)
	__must_hold(&sqp->s_lock) __must_hold(&dqp->r_lock)
{
	struct krwq_run *run = sqp->run;
	u32 gen = dqp->r_gen;

	lockdep_assert_held(&dqp->r_lock);
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
 * A delivery into @dqp ends (the caller holds dqp->r_lock): if the run let
 * interrupts in during it and @dqp went to ERR meanwhile, the receive
 * flush the move left to the last such delivery happens now.
 */
static void krwq_run_dest_done(struct krwq_qp *sqp, struct krwq_qp *dqp)
{
	struct krwq_run *run = sqp->run;

	lockdep_assert_held(&dqp->r_lock);
	if (run->busy_dqp != dqp)
		return;
	run->busy_dqp = NULL;
	if (--dqp->r_busy || !dqp->r_flush_deferred)
		return;
	dqp->r_flush_deferred = false;
	krwq_qp_recv_flush_locked(dqp);
}

/*
 * krwq_copy() for a delivery into @dqp (whose r_lock the caller holds,
 * with sqp's s_lock), in pieces that keep each interrupts-off section
 * within KRWQ_IRQOFF_BYTES.  Return: 0; -EINVAL if a list ran out first;
 * -ECANCELED if @dqp was reset while interrupts were let in.
 */
static int krwq_run_copy(struct krwq_qp *sqp, struct krwq_qp *dqp,
			 struct krwq_sge_cursor *dst,
			 struct krwq_sge_cursor *src, u32 len)
{
	struct krwq_run *run = sqp->run;

	while (len) {
		u32 n;
		int ret;

		if (run->section >= KRWQ_IRQOFF_BYTES) {
			ret = krwq_run_window(sqp, dqp);
			if (ret)
				return ret;
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
	switch (dqp->state) {
	case IB_QPS_RTR:
		/* the first arrival in RTR establishes the connection */
		if (!krwq_qp_is_ud(dqp) &&
		    !atomic_xchg(&dqp->comm_est_sent, 1))
			krwq_qp_event(dqp, IB_EVENT_COMM_EST);
		return true;
	case IB_QPS_RTS:
	case IB_QPS_SQD:
	case IB_QPS_SQE:
		return true;
	default:
		return false;
	}
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
 * UD and UC on an SRQ: a message too long for the WQE taken.  Leaving the
 * WQE would stall every QP of the SRQ behind it, so it completes in error
 * (LOC_LEN_ERR), counted as a drop; the QP itself stays as it is.
 */
static bool krwq_dest_fits(struct krwq_qp *sqp, struct krwq_qp *dqp,
			   struct krwq_taken *t, u32 need)
{
	struct ib_wc wc = {
		.wr_id = t->wr_id,
		.status = IB_WC_LOC_LEN_ERR,
		.opcode = IB_WC_RECV,
		.qp = &dqp->ibqp,
	};

	if (krwq_sge_total(sqp->r_sge, t->num_sge) >= need)
		return true;
	krwq_count(dqp->dev, KRWQ_STAT_RX_DROPPED, 1);
	krwq_cq_enter(krwq_recv_cq(dqp), &wc, false);
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
 * Takes a receive WQE of @dqp into sqp->r_sge; one that holds fewer than
 * @need bytes is left where it is (UD and UC drop what does not fit).
 * Return: the core's outcome; a KRWQ_TAKE_MALFORMED WQE is already
 * completed in error.
 */
static enum krwq_take_outcome krwq_take(struct krwq_qp *sqp,
					struct krwq_qp *dqp,
					struct krwq_taken *t, u32 need)
{
	enum krwq_take_outcome ret;

	t->sg_list = sqp->r_sge;
	ret = krwq_rq_take_fitting(krwq_dest_ring(dqp), t, need);
	trace_krwq_take(dqp, ret, t);
	if (ret == KRWQ_TAKE_TOO_SMALL) {
		krwq_count(dqp->dev, KRWQ_STAT_RX_DROPPED, 1);
		return ret;
	}
	if (ret != KRWQ_TAKE_EMPTY)
		krwq_count(dqp->dev, KRWQ_STAT_RX_TAKEN, 1);
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
 * WQE is gone without a completion.  Return: true on success.
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
	if (ret == -ECANCELED)
		*lost = true;	/* reset meanwhile: no WQE, no completion */
	else if (WARN_ON_ONCE(ret)) {	/* lengths were checked above */
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
	taken = krwq_take(sqp, dqp, &t, uc && !dqp->srq ? w->length : 0);
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
	if (uc && !krwq_dest_fits(sqp, dqp, &t, w->length))
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
		taken = krwq_take(sqp, dqp, &t, 0);
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
			o->lost = true;	/* the responder was reset meanwhile */
			goto out;
		}
		if (WARN_ON_ONCE(ret)) {
			o->status = IB_WC_LOC_LEN_ERR;
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

static void krwq_exec_connected(struct krwq_qp *sqp, struct krwq_swqe *w,
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
	u32 roce_len = IB_BTH_BYTES + IB_DETH_BYTES + w->length + IB_ICRC_BYTES;
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
		grh->paylen = cpu_to_be16(w->length);
		grh->next_hdr = IB_GRH_NEXT_HDR;
	}
	grh->hop_limit = g->hop_limit;
	grh->sgid = w->route.sgid;
	grh->dgid = g->dgid;
}

static void krwq_exec_ud(struct krwq_qp *sqp, struct krwq_swqe *w,
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
	taken = krwq_take(sqp, dqp, &t, dqp->srq ? 0 : need);
	if (taken != KRWQ_TAKE_TAKEN) {
		krwq_src_put(sqp, w);
		if (taken == KRWQ_TAKE_TOO_SMALL)
			goto out;
		goto drop;
	}
	if (!krwq_dest_fits(sqp, dqp, &t, need))
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

/* --- local operations ------------------------------------------------- */

/* IB_WR_REG_MR and IB_WR_LOCAL_INV, in send queue order. */
static void krwq_exec_local(struct krwq_qp *qp, struct krwq_swqe *w,
			    struct krwq_outcome *o)
{
	int ret;

	if (w->opcode == IB_WR_REG_MR)
		ret = krwq_mr_fast_reg(w->reg.mr, qp->ibqp.pd, w->reg.key,
				       w->reg.access);
	else
		ret = krwq_mr_invalidate(qp->dev, qp->ibqp.pd, w->rkey,
					 NULL, 0);
	if (ret)
		o->status = IB_WC_LOC_PROT_ERR;
}

/* --- running the send queue -------------------------------------------- */

/*
 * The local ACK timeout IB encodes in @timeout: 4.096 us * 2^timeout.  Zero
 * is IB's "no timeout": the requester never gives up, and krwq then tries
 * again every 67 ms (the period of timeout 14, the usual setting).
 */
static unsigned long krwq_ack_timeout_jiffies(u8 timeout)
{
	u64 ns = 4096ULL << (timeout ? timeout : 14);

	/* rounded up, plus the tick a timer may fire early within */
	return nsecs_to_jiffies64(ns + TICK_NSEC - 1) + 1;
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
		delay = usecs_to_jiffies(krwq_rnr_usecs[o->min_rnr_timer]);
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
 *
 * Stops when the queue is empty, the QP leaves RTS, an RC send must wait
 * to be retried (an RNR NAK or no answer; sq_timer resumes it), or the
 * budget of one run is spent (send_work carries on).  Only one run at a
 * time: a second caller leaves its WRs to the run under way.
 *
 * Every KRWQ_IRQOFF_BYTES copied the run drops its locks and takes them
 * again, so s_lock may be released and re-taken within; the run keeps the
 * send queue meanwhile (qp->sq_running) and a RESET waits for it.  Flushes
 * asked for while it runs (a move to ERR) happen at its end, after the
 * completion of the WQE it was executing.
 */
static void krwq_sq_run(struct krwq_qp *qp, unsigned long *flags)
{
	struct krwq_run run = { .flags = flags };
	u32 wrs = 0, bytes = 0;

	lockdep_assert_held(&qp->s_lock);
	if (qp->sq_running)
		return;
	qp->sq_running = true;
	qp->run = &run;
	while (qp->sq_tail != qp->sq_head && qp->state == IB_QPS_RTS &&
	       !qp->sq_waiting) {
		struct krwq_swqe *w = krwq_sq_entry(qp, qp->sq_tail);
		struct krwq_outcome o = { .status = IB_WC_SUCCESS };

		if (wrs >= KRWQ_SQ_BUDGET_WRS || bytes >= KRWQ_SQ_BUDGET_BYTES) {
			queue_work(krwq_wq, &qp->send_work);
			break;
		}
		if (run.section >= KRWQ_IRQOFF_BYTES) {
			krwq_run_let_irqs_in(qp);
			continue;	/* the QP may have left RTS */
		}
		wrs++;
		bytes += w->length;
		run.section += KRWQ_WQE_COST;

		if (krwq_is_local(w->opcode))
			krwq_exec_local(qp, w, &o);
		else if (krwq_qp_is_ud(qp))
			krwq_exec_ud(qp, w, &o);
		else
			krwq_exec_connected(qp, w, &o);
		trace_krwq_deliver(qp, w, o.status, o.rnr, o.no_ack);

		if ((o.rnr || o.no_ack) && krwq_sq_retry_later(qp, &o))
			break;
		if (o.rnr)
			o.status = IB_WC_RNR_RETRY_EXC_ERR;
		else if (o.no_ack)
			o.status = IB_WC_RETRY_EXC_ERR;
		qp->rnr_tries = 0;
		qp->ack_tries = 0;
		qp->sq_tail = krwq_sq_next(qp, qp->sq_tail);
		krwq_complete_send(qp, w, o.status);
		if (o.status != IB_WC_SUCCESS)
			krwq_qp_error_locked(qp);
	}
	qp->run = NULL;
	WRITE_ONCE(qp->sq_running, false);
	/* what a move to ERR (or a post in ERR) left for the run's end */
	if (qp->state == IB_QPS_ERR)
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

/**
 * krwq_sq_timer() - an RNR wait or the local ACK timeout ran out: try the
 * send at sq_tail again.
 * @t: qp->sq_timer.
 */
void krwq_sq_timer(struct timer_list *t)
{
	struct krwq_qp *qp = from_timer(qp, t, sq_timer);
	unsigned long flags;

	spin_lock_irqsave(&qp->s_lock, flags);
	if (qp->sq_waiting) {
		qp->sq_waiting = false;
		queue_work(krwq_wq, &qp->send_work);
	}
	spin_unlock_irqrestore(&qp->s_lock, flags);
}

/**
 * krwq_send_work() - carry on with a send queue: after an RNR wait or an
 * ACK timeout, or when one run's budget was spent.
 * @work: qp->send_work.
 */
void krwq_send_work(struct work_struct *work)
{
	struct krwq_qp *qp = container_of(work, struct krwq_qp, send_work);
	unsigned long flags;

	spin_lock_irqsave(&qp->s_lock, flags);
	krwq_sq_run(qp, &flags);
	spin_unlock_irqrestore(&qp->s_lock, flags);
}

/* The states a send WR may be posted in (in ERR it is flushed at once). */
static bool krwq_sq_postable(struct krwq_qp *qp)
{
	switch (qp->state) {
	case IB_QPS_RTS:
	case IB_QPS_SQD:
	case IB_QPS_SQE:
	case IB_QPS_ERR:
		return true;
	default:
		return false;
	}
}

/**
 * krwq_post_send() - ib_device_ops.post_send: queue, then deliver.
 * @ibqp: the QP.
 * @wr: the list of send WRs.
 * @bad_wr: set to the first WR not posted, on error.
 *
 * In ERR, posted WRs complete at once as flushed.
 *
 * Return: 0; -EINVAL for a QP before RTS, a bad opcode for the QP type,
 * too many SGEs, inline data over the QP's max_inline_data (or for an
 * opcode that cannot carry it), an atomic without one 8-byte buffer, or a
 * message over the size limit; -ENOMEM when the send queue is full (or
 * no memory for a user QP's inline payloads); -EFAULT when a user QP's
 * inline payload cannot be read.
 */
int krwq_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		   const struct ib_send_wr **bad_wr)
{
	struct krwq_qp *qp = to_kqp(ibqp);
	const struct ib_send_wr *fault = NULL;
	u8 *staged = NULL;
	const u8 *next_staged;
	unsigned long flags;
	u32 copied = 0;
	int ret = 0;

	if (qp->max_inline && ibqp->uobject) {
		staged = krwq_stage_user_inline(qp, wr, &fault);
		if (IS_ERR(staged)) {
			*bad_wr = wr;
			return PTR_ERR(staged);
		}
	}
	next_staged = staged;
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
		if (next == qp->sq_free) {
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
	if (qp->state == IB_QPS_ERR)
		krwq_sq_flush_locked(qp);
	else
		krwq_sq_run(qp, &flags);
out:
	if (ret)
		*bad_wr = wr;
	spin_unlock_irqrestore(&qp->s_lock, flags);
	kvfree(staged);
	return ret;
}
