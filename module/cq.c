// SPDX-License-Identifier: GPL-2.0
/*
 * cq.c - completion queues: a kernel ring of struct ib_wc under cq->lock.
 *
 * Completions are entered by the send path, flushes and errors, with the
 * locks of the lock order in krwq.h held; the completion handler is never
 * called from there but from notify_work, so a consumer's handler may post
 * and poll freely.  A full CQ is an overflow: the completion is lost, the
 * CQ raises IB_EVENT_CQ_ERR and the caller moves its QP to ERR.
 */
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "krwq.h"
#include "trace.h"

static void krwq_cq_notify_work(struct work_struct *work)
{
	struct krwq_cq *cq = container_of(work, struct krwq_cq, notify_work);

	if (cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

/* IB_EVENT_CQ_ERR, raised here rather than under the locks of an overflow */
static void krwq_cq_event_work(struct work_struct *work)
{
	struct krwq_cq *cq = container_of(work, struct krwq_cq, event_work);
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/**
 * krwq_create_cq() - ib_device_ops.create_cq.
 * @ibcq: allocated by the RDMA core.
 * @attr: cqe wanted; no flags are supported.
 * @udata: user data (none is exchanged with ABI 1).
 *
 * Return: 0, -EINVAL for a size of 0 or over max_cqe or unknown flags,
 * -ENOMEM past max_cq or when the ring cannot be allocated.
 */
int krwq_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata)
{
	struct krwq_dev *dev = to_kdev(ibcq->device);
	struct krwq_cq *cq = to_kcq(ibcq);

	if (attr->cqe < 1 || attr->cqe > KRWQ_MAX_CQE || attr->flags ||
	    attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	if (atomic_inc_return(&dev->n_cq) > KRWQ_MAX_CQ) {
		atomic_dec(&dev->n_cq);
		return -ENOMEM;
	}
	cq->slots = attr->cqe + 1;
	cq->ring = kvcalloc(cq->slots, sizeof(*cq->ring), GFP_KERNEL_ACCOUNT);
	if (!cq->ring) {
		atomic_dec(&dev->n_cq);
		return -ENOMEM;
	}
	spin_lock_init(&cq->lock);
	INIT_WORK(&cq->notify_work, krwq_cq_notify_work);
	INIT_WORK(&cq->event_work, krwq_cq_event_work);
	ibcq->cqe = attr->cqe;
	return 0;
}

/**
 * krwq_pre_destroy_cq() - ib_device_ops.pre_destroy_cq: stop calling the
 * completion handler, before the RDMA core stops the work its handler
 * queues (ib_free_cq() would otherwise race a late handler call).
 * @ibcq: the CQ.
 *
 * Return: 0.
 */
int krwq_pre_destroy_cq(struct ib_cq *ibcq)
{
	struct krwq_cq *cq = to_kcq(ibcq);
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	cq->dying = true;
	spin_unlock_irqrestore(&cq->lock, flags);
	cancel_work_sync(&cq->notify_work);
	return 0;
}

/**
 * krwq_cq_clean() - drop the completions of a QP being destroyed, which
 * would otherwise point at freed memory when polled.
 * @cq: the QP's send or receive CQ.
 * @ibqp: the QP.
 */
void krwq_cq_clean(struct krwq_cq *cq, struct ib_qp *ibqp)
{
	unsigned long flags;
	u32 from, to;

	spin_lock_irqsave(&cq->lock, flags);
	for (from = to = cq->tail; from != cq->head;
	     from = from + 1 == cq->slots ? 0 : from + 1) {
		if (cq->ring[from].qp == ibqp)
			continue;
		if (to != from)
			cq->ring[to] = cq->ring[from];
		to = to + 1 == cq->slots ? 0 : to + 1;
	}
	cq->head = to;
	spin_unlock_irqrestore(&cq->lock, flags);
}

/**
 * krwq_destroy_cq() - ib_device_ops.destroy_cq.
 * @ibcq: the CQ; the RDMA core has checked no QP uses it.
 * @udata: user data.
 *
 * Return: 0.
 */
int krwq_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct krwq_cq *cq = to_kcq(ibcq);

	krwq_pre_destroy_cq(ibcq);
	cancel_work_sync(&cq->event_work);
	kvfree(cq->ring);
	atomic_dec(&to_kdev(ibcq->device)->n_cq);
	return 0;
}

static u32 krwq_cq_count(const struct krwq_cq *cq)
{
	return cq->head >= cq->tail ? cq->head - cq->tail :
				      cq->head + cq->slots - cq->tail;
}

/**
 * krwq_resize_cq() - ib_device_ops.resize_cq; completions are kept.
 * @ibcq: the CQ.
 * @cqe: the new size.
 * @udata: user data.
 *
 * Return: 0, -EINVAL if @cqe is out of range or below the completions
 * waiting in the CQ, -ENOMEM.  On error the CQ is unchanged.
 */
int krwq_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct krwq_cq *cq = to_kcq(ibcq);
	struct ib_wc *ring, *old;
	unsigned long flags;
	u32 n, i;

	if (cqe < 1 || cqe > KRWQ_MAX_CQE)
		return -EINVAL;
	ring = kvcalloc(cqe + 1, sizeof(*ring), GFP_KERNEL_ACCOUNT);
	if (!ring)
		return -ENOMEM;

	spin_lock_irqsave(&cq->lock, flags);
	n = krwq_cq_count(cq);
	if (n > cqe) {
		spin_unlock_irqrestore(&cq->lock, flags);
		kvfree(ring);
		return -EINVAL;
	}
	for (i = 0; i < n; i++)
		ring[i] = cq->ring[(cq->tail + i) % cq->slots];
	old = cq->ring;
	cq->ring = ring;
	cq->slots = cqe + 1;
	cq->head = n;
	cq->tail = 0;
	ibcq->cqe = cqe;
	spin_unlock_irqrestore(&cq->lock, flags);
	kvfree(old);
	return 0;
}

/**
 * krwq_poll_cq() - ib_device_ops.poll_cq.
 * @ibcq: the CQ.
 * @n: room in @wc.
 * @wc: where completions are copied, oldest first.
 *
 * Return: completions copied.
 */
int krwq_poll_cq(struct ib_cq *ibcq, int n, struct ib_wc *wc)
{
	struct krwq_cq *cq = to_kcq(ibcq);
	unsigned long flags;
	int i;

	spin_lock_irqsave(&cq->lock, flags);
	for (i = 0; i < n && cq->tail != cq->head; i++) {
		wc[i] = cq->ring[cq->tail];
		cq->tail = cq->tail + 1 == cq->slots ? 0 : cq->tail + 1;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return i;
}

/**
 * krwq_req_notify_cq() - ib_device_ops.req_notify_cq.
 * @ibcq: the CQ.
 * @flags: IB_CQ_SOLICITED or IB_CQ_NEXT_COMP, maybe with
 *         IB_CQ_REPORT_MISSED_EVENTS.
 *
 * Return: 1 if missed events were asked about and completions are already
 * waiting, else 0.
 */
int krwq_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct krwq_cq *cq = to_kcq(ibcq);
	unsigned long irqf;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqf);
	/* NEXT_COMP widens an armed SOLICITED, never the other way round */
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && cq->head != cq->tail)
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqf);
	return ret;
}

/**
 * krwq_cq_enter() - add one completion.
 * @cq: the CQ.
 * @wc: the completion; wc->qp must be set.
 * @solicited: the completion is for a solicited event.
 *
 * May run with a QP's s_lock and a ring lock held (see krwq.h).
 *
 * Return: true, or false if the CQ overflowed (the caller moves the QP to
 * ERR).
 */
bool krwq_cq_enter(struct krwq_cq *cq, const struct ib_wc *wc, bool solicited)
{
	unsigned long flags;
	u32 next;

	spin_lock_irqsave(&cq->lock, flags);
	next = cq->head + 1 == cq->slots ? 0 : cq->head + 1;
	if (next == cq->tail || cq->overflowed) {
		if (!cq->overflowed)
			queue_work(krwq_wq, &cq->event_work);
		krwq_count(to_kdev(cq->ibcq.device), KRWQ_STAT_CQ_OVERFLOWS, 1);
		cq->overflowed = true;
		spin_unlock_irqrestore(&cq->lock, flags);
		return false;
	}
	cq->ring[cq->head] = *wc;
	cq->head = next;
	trace_krwq_cqe(cq, wc);
	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED &&
	     (solicited || wc->status != IB_WC_SUCCESS))) {
		cq->notify = 0;
		if (!cq->dying)
			queue_work(krwq_wq, &cq->notify_work);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return true;
}
