// SPDX-License-Identifier: GPL-2.0
/*
 * qp.c - queue pairs: creation, the state machine, the receive side.
 *
 * The receive queue of a QP is a ring of the C++ core; the QP's state is
 * mirrored into the ring's state (RESET, POST_ONLY for INIT, ACTIVE for
 * RTR/RTS/SQD/SQE, FLUSH for ERR) with both ring locks held, so a post
 * racing a move to ERR either lands before the flush or completes as
 * flushed itself: it is never stranded.
 */
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_cache.h>
#include <rdma/restrack.h>
#include <kunit/visibility.h>

#include "krwq.h"
#include "wire.h"
#include "krwq_core.h"
#include "rq_alloc.h"
#include "rq_post.h"
#include "recv.h"
#include "resp.h"
#include "req.h"
#include "sq.h"
#include "trace.h"
#include "uflush.h"

static void krwq_qp_err_work(struct work_struct *work);

static_assert(IB_EVENT_GID_CHANGE < BITS_PER_LONG);

static void krwq_qp_event_work(struct work_struct *work)
{
	struct krwq_qp *qp = container_of(work, struct krwq_qp, event_work);
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
	};
	int type;

	for (type = 0; type <= IB_EVENT_GID_CHANGE; type++) {
		if (!test_and_clear_bit(type, &qp->events))
			continue;
		ev.event = type;
		if (qp->ibqp.event_handler)
			qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
	}
}

/**
 * krwq_uflush_budget() - reserve WRs of a device's ERR re-flush budget
 * (see krwq.h): tokens accrue at KRWQ_UFLUSH_RATE a second, up to a tenth
 * of that.
 * @dev: the device.
 * @want: WRs the caller would flush.
 *
 * The grant leaves the budget at once, so workers asking at the same time
 * share what there is instead of each being granted all of it; the caller
 * gives back what it did not use with krwq_uflush_spend().
 *
 * Return: WRs the caller may flush now, at most @want.
 */
u32 krwq_uflush_budget(struct krwq_dev *dev, u32 want)
{
	unsigned long now = jiffies, elapsed;
	u32 grant;

	spin_lock(&dev->uflush_lock);
	elapsed = min(now - dev->uflush_stamp, (unsigned long)HZ);
	dev->uflush_tokens = min_t(u64, KRWQ_UFLUSH_RATE / 10,
				   dev->uflush_tokens +
				   (u64)elapsed * KRWQ_UFLUSH_RATE / HZ);
	dev->uflush_stamp = now;
	grant = min(want, dev->uflush_tokens);
	dev->uflush_tokens -= grant;
	spin_unlock(&dev->uflush_lock);
	return grant;
}
EXPORT_SYMBOL_IF_KUNIT(krwq_uflush_budget);

/**
 * krwq_uflush_spend() - settle a grant of krwq_uflush_budget(): what was
 * not used goes back into the budget, which stays within its bound.
 * @dev: the device.
 * @grant: what krwq_uflush_budget() returned.
 * @used: WRs flushed with it.
 */
void krwq_uflush_spend(struct krwq_dev *dev, u32 grant, u32 used)
{
	u32 unused = grant - min(used, grant);

	if (!unused)
		return;
	spin_lock(&dev->uflush_lock);
	dev->uflush_tokens = min_t(u32, KRWQ_UFLUSH_RATE / 10,
				   dev->uflush_tokens + unused);
	spin_unlock(&dev->uflush_lock);
}
EXPORT_SYMBOL_IF_KUNIT(krwq_uflush_spend);

/*
 * Posts to a mapped ring never enter the kernel, so nothing would flush
 * what user space posts after the QP went to ERR (rdmavt leaves such WRs
 * in the ring for good, and a drain that waits for its marker WR hangs).
 * While the QP stays in ERR this work flushes them, within the limits of
 * krwq.h, on the unbound system workqueue at normal priority.
 */
static void krwq_qp_uflush_work(struct work_struct *work)
{
	struct krwq_qp *qp = container_of(to_delayed_work(work),
					  struct krwq_qp, uflush_work);
	u32 grant = krwq_uflush_budget(qp->dev, KRWQ_UFLUSH_BATCH), n = 0;
	unsigned long flags, delay = 0;

	spin_lock_irqsave(&qp->r_lock, flags);
	if (krwq_state_ops(qp->state) & KRWQ_FLUSH_RECV) {
		/* the flush waits for a delivery part done (r_busy) */
		if (grant && !qp->r_busy)
			n = krwq_rq_flush(&qp->rq, grant, &qp->rq_sink);
		/* found nothing: look less often; else (or out of budget) soon */
		if (grant && !n)
			qp->uflush_ms = min(2 * qp->uflush_ms,
					    (unsigned int)KRWQ_UFLUSH_MAX_MS);
		else
			qp->uflush_ms = KRWQ_UFLUSH_MS;
		delay = msecs_to_jiffies(qp->uflush_ms);
	}
	spin_unlock_irqrestore(&qp->r_lock, flags);
	krwq_uflush_spend(qp->dev, grant, n);
	if (delay)
		queue_delayed_work(system_unbound_wq, &qp->uflush_work, delay);
}

static void krwq_qp_set_state_locked(struct krwq_qp *qp,
				     enum ib_qp_state state)
{
	unsigned int ops = krwq_state_ops(state);
	enum krwq_rq_state rs;

	if (state == IB_QPS_ERR) {
		krwq_qp_error_locked(qp);
		return;
	}
	if (state == IB_QPS_RESET) {
		qp->sq_head = 0;
		qp->sq_tail = 0;
		qp->sq_free = 0;
		qp->sq_err_head = 0;
		qp->sq_waiting = false;
		qp->rnr_tries = 0;
		qp->ack_tries = 0;
		qp->sq_inv_counted = false;
		krwq_wire_req_idle(&qp->wire_req);
		/* not yet sent: they would reach the old peer after the move */
		__skb_queue_purge(&qp->wire_txq);
		atomic_set(&qp->comm_est_sent, 0);
	}
	/* the receive ring takes posts and deliveries as the table says */
	if (ops & KRWQ_RECEIVE)
		rs = KRWQ_RQ_ACTIVE;
	else if (ops & KRWQ_POST_RECV)
		rs = KRWQ_RQ_POST_ONLY;
	else
		rs = KRWQ_RQ_RESET;
	spin_lock(&qp->r_lock);
	if (state == IB_QPS_RESET) {
		qp->err_pending = false;	/* an old responder error is moot */
		/* deliveries part done are abandoned, their WQEs with the rest */
		qp->r_gen++;
		krwq_resp_wire_reset(qp);
		qp->r_flush_deferred = false;
		qp->sq_flush_deferred = false;
	}
	if (!qp->srq)
		krwq_rq_set_state(&qp->rq, rs, NULL);
	WRITE_ONCE(qp->state, state);
	spin_unlock(&qp->r_lock);
	/* e.g. WRs posted in SQD: run from send_work, which may let irqs in */
	if ((ops & KRWQ_RUN_SEND) && qp->sq_tail != qp->sq_head)
		queue_work(krwq_wq, &qp->send_work);
}

static int krwq_check_caps(struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *c = &init->cap;

	if (c->max_send_wr > KRWQ_MAX_QP_WR || c->max_send_sge > KRWQ_MAX_SGE ||
	    c->max_inline_data > KRWQ_MAX_INLINE || init->create_flags)
		return -EINVAL;
	if (!init->srq &&
	    (c->max_recv_wr > KRWQ_MAX_QP_WR || c->max_recv_sge > KRWQ_MAX_SGE))
		return -EINVAL;
	return 0;
}

/**
 * krwq_create_qp() - ib_device_ops.create_qp: RC, UC or UD, and the GSI
 * QP (number 1) of a netdev-bound device for the kernel's MAD layer.
 * @ibqp: allocated by the RDMA core.
 * @init: CQs, SRQ, capacities and signalling.
 * @udata: user data: with ABI 2, where the receive ring's mmap offset
 *         goes (0 for a QP on an SRQ).
 *
 * Return: 0, -EOPNOTSUPP for other QP types, -EBUSY for a second GSI
 * QP, -EINVAL for capacities over
 * the device limits (inline data over KRWQ_MAX_INLINE, any create flags),
 * -ENOMEM past max_qp or when memory runs out, -EFAULT if the offset
 * cannot be copied out.
 */
int krwq_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		   struct ib_udata *udata)
{
	struct krwq_dev *dev = to_kdev(ibqp->device);
	struct krwq_qp *qp = to_kqp(ibqp);
	u32 qpn;
	int ret;

	if (init->qp_type == IB_QPT_GSI) {
		/* the MAD layer's QP1, on a port that has MADs */
		if (udata || !dev->ndev)
			return -EOPNOTSUPP;
	} else if (init->qp_type != IB_QPT_RC && init->qp_type != IB_QPT_UC &&
		   init->qp_type != IB_QPT_UD) {
		return -EOPNOTSUPP;
	}
	ret = krwq_check_caps(init);
	if (ret)
		return ret;
	if (atomic_inc_return(&dev->n_qp) > KRWQ_MAX_QP) {
		ret = -ENOMEM;
		goto err_count;
	}

	qp->dev = dev;
	qp->rq_sink.flushed = krwq_rq_flushed;
	qp->rq_sink.ctx = qp;
	spin_lock_init(&qp->s_lock);
	spin_lock_init(&qp->r_lock);
	refcount_set(&qp->users, 1);
	init_completion(&qp->released);
	timer_setup(&qp->sq_timer, krwq_sq_timer, 0);
	skb_queue_head_init(&qp->wire_txq);
	INIT_WORK(&qp->send_work, krwq_send_work);
	INIT_WORK(&qp->err_work, krwq_qp_err_work);
	INIT_DELAYED_WORK(&qp->inv_work, krwq_wire_inv_work);
	INIT_WORK(&qp->event_work, krwq_qp_event_work);
	INIT_DELAYED_WORK(&qp->uflush_work, krwq_qp_uflush_work);
	qp->state = IB_QPS_RESET;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->max_send_sge = init->cap.max_send_sge;
	qp->max_inline = init->cap.max_inline_data;
	qp->sq_slots = init->cap.max_send_wr + 1;
	/* a slot holds the SGEs or the inline payload */
	qp->sq_stride = max(struct_size(qp->sq, sg_list, qp->max_send_sge),
			    sizeof(*qp->sq) + qp->max_inline);
	qp->sq_stride = ALIGN(qp->sq_stride, __alignof__(*qp->sq));
	qp->sq = kvcalloc(qp->sq_slots, qp->sq_stride, GFP_KERNEL_ACCOUNT);
	if (!qp->sq) {
		ret = -ENOMEM;
		goto err_count;
	}
	if (init->qp_type == IB_QPT_RC) {
		qp->wire_rx.atomics = kcalloc(KRWQ_MAX_RD_ATOM,
					      sizeof(*qp->wire_rx.atomics),
					      GFP_KERNEL_ACCOUNT);
		if (!qp->wire_rx.atomics) {
			ret = -ENOMEM;
			goto err_sq;
		}
	}

	if (init->srq) {
		u64 no_ring = 0;

		qp->srq = to_ksrq(init->srq);
		init->cap.max_recv_wr = 0;
		init->cap.max_recv_sge = 0;
		if (krwq_wants_mapped_ring(udata)) {
			ret = ib_copy_to_udata(udata, &no_ring, sizeof(no_ring));
			if (ret)
				goto err_sq;
		}
	} else if (krwq_wants_mapped_ring(udata)) {
		ret = krwq_rq_alloc_mapped(&qp->rq, init->cap.max_recv_wr,
					   init->cap.max_recv_sge, udata,
					   &qp->rq_mmap);
		if (ret)
			goto err_sq;
	} else {
		ret = krwq_rq_alloc(&qp->rq, init->cap.max_recv_wr,
				    init->cap.max_recv_sge, 0, NUMA_NO_NODE);
		if (ret)
			goto err_sq;
	}

	/*
	 * Reserve the number, publish the QP only once it is complete.
	 * Numbers cycle, so a peer still aimed at a destroyed QP does not
	 * reach the next one at once.
	 */
	if (init->qp_type == IB_QPT_GSI) {
		qpn = 1;
		ret = xa_insert_irq(&dev->qps, qpn, NULL, GFP_KERNEL);
	} else {
		ret = xa_alloc_cyclic_irq(&dev->qps, &qpn, NULL,
					  XA_LIMIT(KRWQ_QPN_MIN, KRWQ_QPN_MAX),
					  &dev->next_qpn, GFP_KERNEL);
	}
	if (ret < 0)
		goto err_rq;
	ibqp->qp_num = qpn;
	qp->attr.qp_state = IB_QPS_RESET;
	qp->attr.port_num = 1;
	qp->attr.path_mtu = KRWQ_MTU;
	qp->route.dest = KRWQ_NO_DEST;
	xa_store_irq(&dev->qps, qpn, qp, GFP_KERNEL);
	return 0;

err_rq:
	krwq_mmap_remove(qp->rq_mmap);
	krwq_rq_free(&qp->rq);
err_sq:
	kfree(qp->wire_rx.atomics);
	kvfree(qp->sq);
err_count:
	atomic_dec(&dev->n_qp);
	/* xa_alloc_cyclic's "full" is -EBUSY: the device is out of QPs */
	if (ret == -EBUSY && init->qp_type != IB_QPT_GSI)
		return -ENOMEM;
	return ret;
}

static void krwq_qp_err_work(struct work_struct *work)
{
	struct krwq_qp *qp = container_of(work, struct krwq_qp, err_work);
	unsigned long flags;
	bool pending;

	spin_lock_irqsave(&qp->s_lock, flags);
	spin_lock(&qp->r_lock);
	pending = qp->err_pending;	/* cleared if the QP was reset since */
	qp->err_pending = false;
	spin_unlock(&qp->r_lock);
	if (pending)
		krwq_qp_error_locked(qp);
	spin_unlock_irqrestore(&qp->s_lock, flags);
}

static int krwq_check_attr(struct krwq_qp *qp, struct ib_qp_attr *a, int mask)
{
	if ((mask & IB_QP_PORT) && a->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && a->pkey_index != 0)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (a->path_mtu < IB_MTU_256 || a->path_mtu > KRWQ_MTU))
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && a->dest_qp_num >= (1U << 24))
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && a->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && a->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && a->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    a->max_rd_atomic > KRWQ_MAX_INIT_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    a->max_dest_rd_atomic > KRWQ_MAX_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (a->qp_access_flags & ~(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
				    IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC |
				    IB_ACCESS_MW_BIND | IB_ACCESS_OPTIONAL)))
		return -EINVAL;
	if ((mask & IB_QP_AV) && !krwq_ah_attr_ok(qp->dev, &a->ah_attr))
		return -EINVAL;
	/* capacities are fixed; no alternate path; no SQ_DRAINED event */
	if (mask & (IB_QP_CAP | IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE |
		    IB_QP_EN_SQD_ASYNC_NOTIFY))
		return -EINVAL;
	return 0;
}

static void krwq_apply_attr(struct krwq_qp *qp, struct ib_qp_attr *a, int mask,
			    const struct krwq_route *route)
{
	struct ib_qp_attr *q = &qp->attr;

	if (mask & IB_QP_ACCESS_FLAGS)
		q->qp_access_flags = a->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		q->pkey_index = a->pkey_index;
	if (mask & IB_QP_QKEY)
		q->qkey = a->qkey;
	if (mask & IB_QP_AV) {
		q->ah_attr = a->ah_attr;
		q->ah_attr.grh.sgid_attr = NULL;	/* not kept: unreferenced */
		qp->route = *route;
	}
	if (mask & IB_QP_PATH_MTU)
		q->path_mtu = a->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		q->timeout = a->timeout;
	if (mask & IB_QP_RETRY_CNT)
		q->retry_cnt = a->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		q->rnr_retry = a->rnr_retry;
	if (mask & IB_QP_RQ_PSN) {
		q->rq_psn = a->rq_psn;
		qp->wire_rx.epsn = a->rq_psn & KRWQ_PSN_MASK;
	}
	if (mask & IB_QP_SQ_PSN) {
		q->sq_psn = a->sq_psn;
		qp->wire_psn = a->sq_psn & KRWQ_PSN_MASK;
		qp->wire_req.first_psn = qp->wire_psn;
	}
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		q->max_rd_atomic = a->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		q->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		q->min_rnr_timer = a->min_rnr_timer;
	if (mask & IB_QP_DEST_QPN)
		q->dest_qp_num = a->dest_qp_num;
}

/*
 * Takes qp->s_lock once no run of the send queue is under way: a RESET
 * must not pull the send queue from under a run that let interrupts in
 * (req.c).  Meanwhile sq_stop ends the run at its next WQE (one WQE's
 * copy, or one SEND_WITH_INV's wait for a copy elsewhere) and starts no
 * other, however often the QP is posted to; this may sleep.  WRs
 * posted meanwhile are left to send_work, in case the caller then
 * changes nothing.
 */
static void krwq_qp_lock_idle(struct krwq_qp *qp, unsigned long *flags)
	__acquires(&qp->s_lock)
{
	bool stopped = false;

	might_sleep();
	spin_lock_irqsave(&qp->s_lock, *flags);
	while (qp->sq_running) {
		stopped = true;
		qp->sq_stop = true;
		qp->sq_run_waiters++;	/* the run's end wakes us */
		spin_unlock_irqrestore(&qp->s_lock, *flags);
		wait_var_event(&qp->sq_running, !READ_ONCE(qp->sq_running));
		spin_lock_irqsave(&qp->s_lock, *flags);
		qp->sq_run_waiters--;
	}
	/* the caller holds s_lock from here on: no run starts before it is done */
	qp->sq_stop = false;
	if (stopped && qp->sq_tail != qp->sq_head)
		queue_work(krwq_wq, &qp->send_work);
}

/*
 * After a move to RESET: waits, sleeping, until no delivery into @qp is
 * part done (r_busy).  Each finds r_gen moved once it takes r_lock again
 * and abandons its WQE: a QP's own goes with its ring, an SRQ's completes
 * flushed (krwq_dest_reset_under()).  So that WQE completes before the
 * RESET returns, not once the QP may be connected again, or destroyed
 * with its completions cleaned out of the CQ.  No delivery starts in
 * RESET, so the wait ends.
 */
static void krwq_qp_wait_abandoned(struct krwq_qp *qp)
{
	unsigned long flags;

	might_sleep();
	spin_lock_irqsave(&qp->r_lock, flags);
	while (qp->r_busy) {
		qp->r_busy_waiters++;	/* the last delivery's end wakes us */
		spin_unlock_irqrestore(&qp->r_lock, flags);
		wait_var_event(&qp->r_busy, !READ_ONCE(qp->r_busy));
		spin_lock_irqsave(&qp->r_lock, flags);
		qp->r_busy_waiters--;
	}
	spin_unlock_irqrestore(&qp->r_lock, flags);
}

/**
 * krwq_modify_qp() - ib_device_ops.modify_qp: attributes and the state
 * machine (ib_modify_qp_is_ok() decides which transitions and attribute
 * masks are legal).
 * @ibqp: the QP.
 * @attr: the new attributes.
 * @mask: IB_QP_* bits naming the valid members of @attr.
 * @udata: user data (none is exchanged).
 *
 * Everything is checked before anything changes.
 *
 * Context: process context when moving to RESET, which waits for a run of
 * the send queue under way, and then for the deliveries into the QP that
 * the RESET abandons (an SRQ's WQE among them completes flushed first);
 * any other change does not sleep.
 * Return: 0 or -EINVAL.
 */
int krwq_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		   struct ib_udata *udata)
{
	struct krwq_qp *qp = to_kqp(ibqp);
	struct krwq_route route = { .dest = KRWQ_NO_DEST };
	enum ib_qp_state cur, next;
	unsigned long flags;
	int ret;

	if (udata && udata->inlen)
		return -EOPNOTSUPP;
	/* where the path leads, resolved before any lock is taken */
	if ((mask & IB_QP_AV) && krwq_ah_attr_ok(qp->dev, &attr->ah_attr))
		krwq_fabric_route(qp->dev, &attr->ah_attr, &route);
	if ((mask & IB_QP_STATE) && attr->qp_state == IB_QPS_RESET)
		krwq_qp_lock_idle(qp, &flags);
	else
		spin_lock_irqsave(&qp->s_lock, flags);
	cur = mask & IB_QP_CUR_STATE ? attr->cur_qp_state : qp->state;
	next = mask & IB_QP_STATE ? attr->qp_state : cur;
	ret = -EINVAL;
	if (cur != qp->state ||
	    !ib_modify_qp_is_ok(cur, next, ibqp->qp_type, mask))
		goto out;
	ret = krwq_check_attr(qp, attr, mask);
	if (ret)
		goto out;
	/* deliveries read a destination's attributes under its r_lock */
	spin_lock(&qp->r_lock);
	krwq_apply_attr(qp, attr, mask, &route);
	spin_unlock(&qp->r_lock);
	if (mask & IB_QP_STATE) {
		krwq_qp_set_state_locked(qp, next);
		qp->attr.qp_state = next;
	}
out:
	spin_unlock_irqrestore(&qp->s_lock, flags);
	if (!ret && next == IB_QPS_RESET)
		krwq_qp_wait_abandoned(qp);
	return ret;
}

/**
 * krwq_query_qp() - ib_device_ops.query_qp.
 * @ibqp: the QP.
 * @attr: filled with the current attributes.
 * @mask: which attributes the caller wants (all are filled).
 * @init: filled with the creation attributes.
 *
 * Return: 0.
 */
int krwq_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_qp_init_attr *init)
{
	struct krwq_qp *qp = to_kqp(ibqp);
	unsigned long flags;

	spin_lock_irqsave(&qp->s_lock, flags);
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	spin_unlock_irqrestore(&qp->s_lock, flags);

	attr->cap.max_send_wr = qp->sq_slots - 1;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_recv_wr = qp->srq ? 0 : qp->rq.slots - 1;
	attr->cap.max_recv_sge = qp->srq ? 0 : qp->rq.max_sge;
	attr->cap.max_inline_data = qp->max_inline;

	memset(init, 0, sizeof(*init));
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->qp_type = ibqp->qp_type;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init->port_num = 1;
	return 0;
}

/* One driver attribute of `rdma resource show qp -dd`. */
struct krwq_res_attr {
	const char *name;
	u32 value;
	bool hex;
};

/**
 * krwq_fill_res_qp_entry() - ib_device_ops.fill_res_qp_entry: where @ibqp's
 * send queue and its wire state stand, as driver attributes that
 * `rdma resource show qp -dd` prints; what to look at when a QP stalls.
 * @msg: the netlink message.
 * @ibqp: the QP.
 *
 * The requester's half is read under s_lock, the responder's under
 * r_lock, one after the other (each half is consistent, not the pair).
 *
 * Context: process; takes qp->s_lock, then qp->r_lock, never both.
 * Return: 0, or -EMSGSIZE when @msg is full.
 */
int krwq_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct krwq_qp *qp = to_kqp(ibqp);
	struct krwq_res_attr a[17];
	struct nlattr *table;
	unsigned long flags;
	unsigned int n = 0, i;

	spin_lock_irqsave(&qp->s_lock, flags);
	a[n++] = (struct krwq_res_attr){ "sq_head", qp->sq_head };
	a[n++] = (struct krwq_res_attr){ "sq_tail", qp->sq_tail };
	a[n++] = (struct krwq_res_attr){ "sq_free", qp->sq_free };
	a[n++] = (struct krwq_res_attr){ "sq_running", qp->sq_running };
	a[n++] = (struct krwq_res_attr){ "sq_waiting", qp->sq_waiting };
	a[n++] = (struct krwq_res_attr){ "sq_timer",
					 timer_pending(&qp->sq_timer) };
	a[n++] = (struct krwq_res_attr){ "ack_tries", qp->ack_tries };
	a[n++] = (struct krwq_res_attr){ "rnr_tries", qp->rnr_tries };
	a[n++] = (struct krwq_res_attr){ "wire_await", qp->wire_req.await };
	a[n++] = (struct krwq_res_attr){ "wire_ahead", qp->wire_req.ahead };
	a[n++] = (struct krwq_res_attr){ "wire_first_psn",
					 qp->wire_req.first_psn, true };
	a[n++] = (struct krwq_res_attr){ "wire_last_psn",
					 qp->wire_req.last_psn, true };
	a[n++] = (struct krwq_res_attr){ "wire_next_psn", qp->wire_psn, true };
	spin_unlock_irqrestore(&qp->s_lock, flags);

	spin_lock_irqsave(&qp->r_lock, flags);
	a[n++] = (struct krwq_res_attr){ "wire_rx_epsn", qp->wire_rx.epsn,
					 true };
	a[n++] = (struct krwq_res_attr){ "wire_rx_msg", qp->wire_rx.msg };
	a[n++] = (struct krwq_res_attr){ "wire_rx_held", qp->wire_rx.held };
	a[n++] = (struct krwq_res_attr){ "wire_rx_msn", qp->wire_rx.msn, true };
	spin_unlock_irqrestore(&qp->r_lock, flags);

	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	for (i = 0; i < n; i++) {
		int ret = a[i].hex ?
			  rdma_nl_put_driver_u32_hex(msg, a[i].name, a[i].value) :
			  rdma_nl_put_driver_u32(msg, a[i].name, a[i].value);

		if (ret) {
			nla_nest_cancel(msg, table);
			return -EMSGSIZE;
		}
	}
	nla_nest_end(msg, table);
	return 0;
}

/**
 * krwq_destroy_qp() - ib_device_ops.destroy_qp; posted WRs are dropped
 * without completions.
 * @ibqp: the QP.
 * @udata: user data.
 *
 * Waits until no send in flight can still reach the QP, and removes the
 * QP's completions from its CQs.
 *
 * Return: 0.
 */
int krwq_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct krwq_qp *qp = to_kqp(ibqp);
	struct krwq_dev *dev = qp->dev;
	unsigned long flags;

	xa_erase_irq(&dev->qps, ibqp->qp_num);
	synchronize_rcu();		/* no lookup still holds the pointer */
	krwq_qp_put(qp);
	wait_for_completion(&qp->released);

	/* stop the QP's own retries; RESET makes them find nothing to do */
	krwq_qp_lock_idle(qp, &flags);
	krwq_qp_set_state_locked(qp, IB_QPS_RESET);
	spin_unlock_irqrestore(&qp->s_lock, flags);
	del_timer_sync(&qp->sq_timer);
	cancel_work_sync(&qp->send_work);
	skb_queue_purge(&qp->wire_txq);	/* nothing sends them any more */
	cancel_work_sync(&qp->err_work);
	cancel_delayed_work_sync(&qp->inv_work);	/* RESET: inv_wait off */
	cancel_work_sync(&qp->event_work);
	cancel_delayed_work_sync(&qp->uflush_work);	/* RESET: no re-arm */
	/* completions that name this QP would point at freed memory */
	krwq_cq_clean(krwq_send_cq(qp), ibqp);
	krwq_cq_clean(krwq_recv_cq(qp), ibqp);

	krwq_mmap_remove(qp->rq_mmap);	/* a mapping keeps its pages */
	krwq_rq_free(&qp->rq);
	kfree(qp->wire_rx.atomics);
	kvfree(qp->sq);
	atomic_dec(&dev->n_qp);
	return 0;
}

/**
 * krwq_post_recv() - ib_device_ops.post_recv: the core's post.
 * @ibqp: the QP.
 * @wr: the list of receive WRs.
 * @bad_wr: set to the first WR not posted, on error.
 *
 * In ERR each WR completes at once as flushed.
 *
 * Return: 0, or -EINVAL (QP in RESET, on an SRQ, or too many SGEs), or
 * -ENOMEM (the ring is full).
 */
int krwq_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		   const struct ib_recv_wr **bad_wr)
{
	struct krwq_qp *qp = to_kqp(ibqp);

	if (qp->srq) {
		*bad_wr = wr;
		return -EINVAL;
	}
	return krwq_post_counted(qp->dev, &qp->rq, wr, bad_wr, &qp->rq_sink);
}
