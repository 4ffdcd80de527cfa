// SPDX-License-Identifier: GPL-2.0
/*
 * cq.c - completion queues: a ring under cq->lock, either the kernel's
 * own of struct ib_wc, or (uverbs ABI 2) a ring of struct ib_uverbs_wc
 * that user space maps and polls without a system call.
 *
 * Completions are entered by the send path, flushes and errors, with the
 * locks of the lock order in krwq.h held.  The RDMA core's own completion
 * handlers only schedule their poller (a CQ from ib_alloc_cq(), polled
 * from softirq or a work item) or queue an event (a user CQ's completion
 * channel), so they are called right there, under cq->lock, one hand-off
 * fewer per completion.  Where the poller is bound to the CPU its handler
 * runs on (ib_alloc_cq()'s softirq and bound work-item polling), the
 * handler is called on the CPU of the CQ's completion vector, as an HCA's
 * interrupt vector would call it: in place when the completing context
 * runs there, else from an IPI.  A ULP that spreads its queues over the
 * vectors (nvme-rdma, nvmet-rdma) so has its two ends' pollers on two
 * CPUs, instead of every step of an I/O on the CPU that posted it.  Any
 * other kernel handler is called from notify_work, never under a krwq
 * lock, so it may post and poll freely.
 * An event may be moderated, as an HCA moderates its interrupts
 * (rdma_set_cq_moderation(), which the RDMA core's adaptive moderation
 * drives for the CQs of ib_alloc_cq() when the device has use_cq_dim):
 * it waits for a count of completions, or a time after the first, so that
 * at depth one poller run takes several.
 * A full CQ is an overflow: the completion is lost, the CQ raises
 * IB_EVENT_CQ_ERR and the caller moves its QP to ERR.
 */
#include <kunit/visibility.h>
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

/*
 * The handler on cq->cpu, in hard interrupt context as an HCA's would be.
 * Not under cq->lock: on that CPU it cannot interrupt a call made in
 * place, which holds the lock with interrupts off.  The count drops last,
 * with release, after which nothing here touches the CQ.
 */
static void krwq_cq_notify_ipi(void *data)
{
	struct krwq_cq *cq = data;

	if (!READ_ONCE(cq->dying))
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
	atomic_dec_return_release(&cq->ipis_queued);
}

/*
 * Calls a handler that only schedules (cq->handler_schedules) on the CPU
 * it belongs to.  Under cq->lock, so interrupts are off: the CPU cannot
 * go offline between the look and the queueing.  An IPI still queued
 * (-EBUSY) has not yet called the handler, so it covers this completion
 * too.  Counted before it is queued, so that its handler's decrement
 * never comes first.
 */
static void krwq_cq_call_handler(struct krwq_cq *cq)
{
	int ret;

	lockdep_assert_held(&cq->lock);
	if (cq->cpu >= 0 && cq->cpu != smp_processor_id() &&
	    cpu_online(cq->cpu)) {
		atomic_inc(&cq->ipis_queued);
		ret = smp_call_function_single_async(cq->cpu, &cq->notify_ipi);
		if (!ret)
			return;
		atomic_dec(&cq->ipis_queued);
		if (ret == -EBUSY)
			return;
	}
	cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

/*
 * The CQ's event, due now: the RDMA core's scheduling handler on the
 * vector's CPU, any other from notify_work.  Under cq->lock.
 */
static void krwq_cq_event(struct krwq_cq *cq)
{
	lockdep_assert_held(&cq->lock);
	cq->notify = 0;
	if (cq->held) {
		cq->held = 0;
		/* never waits: a callback waiting for cq->lock finds none held */
		hrtimer_try_to_cancel(&cq->moder_timer);
	}
	if (cq->dying)
		return;
	if (cq->handler_schedules)
		krwq_cq_call_handler(cq);
	else
		queue_work(krwq_wq, &cq->notify_work);
}

/*
 * Whether moderation holds back the event a completion would raise now:
 * until moder_count completions have come, and no longer than moder_usec
 * after the first (moder_timer).  A count of 0 or 1, or no time, is no
 * moderation: a count alone could hold an event for ever.  Under
 * cq->lock.
 */
static bool krwq_cq_hold_event(struct krwq_cq *cq)
{
	lockdep_assert_held(&cq->lock);
	if (cq->moder_count <= 1 || !cq->moder_usec || cq->dying ||
	    cq->held + 1 >= cq->moder_count)
		return false;
	if (!cq->held++)
		hrtimer_start(&cq->moder_timer,
			      ns_to_ktime((u64)cq->moder_usec * NSEC_PER_USEC),
			      HRTIMER_MODE_REL);
	krwq_count(to_kdev(cq->ibcq.device), KRWQ_STAT_CQ_HELD, 1);
	return true;
}

/*
 * A held event's time is up: it is raised, unless the count raised it
 * first.  Hard interrupt context; takes cq->lock.
 */
static enum hrtimer_restart krwq_cq_moder_expired(struct hrtimer *timer)
{
	struct krwq_cq *cq = container_of(timer, struct krwq_cq, moder_timer);
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->held && cq->notify)
		krwq_cq_event(cq);
	spin_unlock_irqrestore(&cq->lock, flags);
	return HRTIMER_NORESTART;
}

/*
 * Waits until no IPI of the CQ's is queued or running.  cq->dying was set
 * under cq->lock, so every IPI counted is counted by now.
 */
static void krwq_cq_sync_ipis(struct krwq_cq *cq)
{
	while (atomic_read_acquire(&cq->ipis_queued))
		cpu_relax();
}

/*
 * Completion vector @vector's CPU: the (vector mod online)-th online CPU,
 * or -1 (any CPU) if one went offline meanwhile.
 */
static int krwq_vector_cpu(u32 vector)
{
	unsigned int n = num_online_cpus(), i = 0;
	int cpu;

	if (!n)
		return -1;
	vector %= n;
	for_each_online_cpu(cpu)
		if (i++ == vector)
			return cpu;
	return -1;
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

/* The ipathverbs provider's view of a mapped ring must be ours. */
static_assert(offsetof(struct krwq_cq_uring, queue) == 2 * sizeof(u32));
static_assert(sizeof(struct ib_uverbs_wc) == 48);

static size_t krwq_cq_uring_bytes(u32 slots)
{
	/* struct_size_t() is newer than some 6.1 kernels: its expansion */
	return struct_size((struct krwq_cq_uring *)NULL, queue, slots);
}

/*
 * The tail of a mapped ring is user memory: read it with acquire, so the
 * slots user space polled are done with before the kernel refills them.
 * A tail outside the ring is user space's own corruption; the ring is
 * then treated as full.
 */
static bool krwq_cq_tail(const struct krwq_cq *cq, u32 *tail)
{
	if (!cq->mapped) {
		*tail = cq->tail;
		return true;
	}
	/* pairs with the provider's store of tail after it copied entries */
	*tail = smp_load_acquire(&cq->uring->tail);
	return *tail < cq->slots;
}

static u32 krwq_cq_used(u32 slots, u32 head, u32 tail)
{
	return head >= tail ? head - tail : head + slots - tail;
}

/* A mapped ring for a user CQ of @slots, its mmap entry and the offset
 * copied out after the core's response.
 */
static struct krwq_cq_uring *krwq_cq_uring_alloc(struct ib_udata *udata,
						 u32 slots,
						 struct rdma_user_mmap_entry **entry)
{
	size_t bytes = krwq_cq_uring_bytes(slots);
	struct rdma_user_mmap_entry *e;
	struct krwq_cq_uring *uring;

	*entry = NULL;
	uring = krwq_ring_alloc(bytes);
	if (!uring)
		return ERR_PTR(-ENOMEM);
	e = krwq_mmap_offer(udata, uring, bytes);
	if (IS_ERR(e)) {
		vfree(uring);
		return ERR_CAST(e);
	}
	*entry = e;
	return uring;
}

/**
 * krwq_create_cq() - ib_device_ops.create_cq.
 * @ibcq: allocated by the RDMA core.
 * @attr: cqe wanted; no flags are supported.
 * @udata: user data: with ABI 2, where the ring's mmap offset goes.
 *
 * Return: 0, -EINVAL for a size of 0 or over max_cqe or unknown flags,
 * -ENOMEM past max_cq or when the ring cannot be allocated, -EFAULT if
 * the offset cannot be copied out.
 */
int krwq_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		   struct ib_udata *udata)
{
	struct krwq_dev *dev = to_kdev(ibcq->device);
	struct krwq_cq *cq = to_kcq(ibcq);
	int ret = -ENOMEM;

	if (attr->cqe < 1 || attr->cqe > KRWQ_MAX_CQE || attr->flags ||
	    attr->comp_vector >= ibcq->device->num_comp_vectors)
		return -EINVAL;
	if (atomic_inc_return(&dev->n_cq) > KRWQ_MAX_CQ)
		goto err_count;
	cq->slots = attr->cqe + 1;
	cq->mapped = krwq_wants_mapped_ring(udata);
	if (cq->mapped) {
		cq->uring = krwq_cq_uring_alloc(udata, cq->slots, &cq->mmap);
		if (IS_ERR(cq->uring)) {
			ret = PTR_ERR(cq->uring);
			cq->uring = NULL;
			goto err_count;
		}
	} else {
		cq->ring = kvcalloc(cq->slots, sizeof(*cq->ring),
				    GFP_KERNEL_ACCOUNT);
		if (!cq->ring)
			goto err_count;
	}
	/*
	 * A user CQ's handler, or the core's for a CQ of ib_alloc_cq(), which
	 * gives it the poll batch (cq->wc) and its poll context before it
	 * asks for the CQ; an IB_POLL_DIRECT CQ's handler only complains.
	 */
	cq->handler_schedules = udata ||
		(ibcq->wc && ibcq->poll_ctx != IB_POLL_DIRECT);
	/*
	 * A softirq or bound work-item poller runs on the CPU its handler
	 * runs on; an unbound one, or a user CQ's event, wakes a thread
	 * that the scheduler places.
	 */
	cq->cpu = !udata && ibcq->wc && (ibcq->poll_ctx == IB_POLL_SOFTIRQ ||
					 ibcq->poll_ctx == IB_POLL_WORKQUEUE) ?
		  krwq_vector_cpu(attr->comp_vector) : -1;
	INIT_CSD(&cq->notify_ipi, krwq_cq_notify_ipi, cq);
	atomic_set(&cq->ipis_queued, 0);
	hrtimer_init(&cq->moder_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	cq->moder_timer.function = krwq_cq_moder_expired;
	spin_lock_init(&cq->lock);
	INIT_WORK(&cq->notify_work, krwq_cq_notify_work);
	INIT_WORK(&cq->event_work, krwq_cq_event_work);
	ibcq->cqe = attr->cqe;
	return 0;

err_count:
	atomic_dec(&dev->n_cq);
	return ret;
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
	WRITE_ONCE(cq->dying, true);	/* read by krwq_cq_notify_ipi() */
	spin_unlock_irqrestore(&cq->lock, flags);
	/* a held event's timer raises nothing now, but may be running */
	hrtimer_cancel(&cq->moder_timer);
	krwq_cq_sync_ipis(cq);
	cancel_work_sync(&cq->notify_work);
	return 0;
}

/**
 * krwq_modify_cq() - ib_device_ops.modify_cq: event moderation.
 * @ibcq: the CQ.
 * @cq_count: completions an armed CQ's event waits for; 0 or 1: none.
 * @cq_period: microseconds it waits at most after the first; 0: none.
 *
 * The RDMA core's adaptive moderation calls it from a work item for the
 * CQs of ib_alloc_cq() on a device with use_cq_dim.  An event already
 * held keeps the timer it has.
 *
 * Context: process context; takes cq->lock.
 * Return: 0.
 */
int krwq_modify_cq(struct ib_cq *ibcq, u16 cq_count, u16 cq_period)
{
	struct krwq_cq *cq = to_kcq(ibcq);
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	cq->moder_count = cq_count;
	cq->moder_usec = cq_period;
	spin_unlock_irqrestore(&cq->lock, flags);
	return 0;
}

/**
 * krwq_cq_clean() - drop the completions of a QP being destroyed, which
 * would otherwise point at freed memory when polled.
 * @cq: the QP's send or receive CQ.
 * @ibqp: the QP.
 *
 * A mapped ring is left alone: its entries carry QP numbers, not
 * pointers, and user space may be reading them.
 */
void krwq_cq_clean(struct krwq_cq *cq, struct ib_qp *ibqp)
{
	unsigned long flags;
	u32 from, to;

	if (cq->mapped)
		return;
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

/*
 * A kernel without ib_device_ops.pre_destroy_cq has ib_free_cq() stop
 * the poll work of an ib_alloc_cq() CQ before it calls destroy_cq, so a
 * handler call krwq made in between may have queued that work again.
 * Once krwq_pre_destroy_cq() has stopped the calls, cancel it once more;
 * a softirq poller needs nothing, irq_poll_sched() ignores a disabled one.
 * Such a late poll finds no adaptive moderation (cq->dim), which
 * ib_free_cq() has freed by then: device.c offers no modify_cq there.
 */
static void krwq_cq_stop_core_work(struct ib_cq *ibcq)
{
#ifndef KRWQ_HAVE_PRE_DESTROY_CQ
	if (ibcq->wc && (ibcq->poll_ctx == IB_POLL_WORKQUEUE ||
			 ibcq->poll_ctx == IB_POLL_UNBOUND_WORKQUEUE))
		cancel_work_sync(&ibcq->work);
#endif
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
	krwq_cq_stop_core_work(ibcq);
	cancel_work_sync(&cq->event_work);
	krwq_mmap_remove(cq->mmap);	/* a mapping keeps its pages */
	vfree(cq->uring);
	kvfree(cq->ring);
	atomic_dec(&to_kdev(ibcq->device)->n_cq);
	return 0;
}

/* Moves the waiting completions of a mapped ring to @new; under cq->lock. */
static int krwq_cq_move_uring(struct krwq_cq *cq, struct krwq_cq_uring *new,
			      u32 cqe)
{
	u32 tail, n, i;

	if (!krwq_cq_tail(cq, &tail))
		return -EINVAL;	/* user space broke its own ring */
	n = krwq_cq_used(cq->slots, cq->head, tail);
	if (n > cqe)
		return -EINVAL;
	for (i = 0; i < n; i++)
		new->queue[i] = cq->uring->queue[(tail + i) % cq->slots];
	new->tail = 0;
	/* the entries, then the index: as krwq_cq_enter() publishes them */
	smp_store_release(&new->head, n);
	cq->uring = new;
	cq->head = n;
	return 0;
}

/* Moves the waiting completions of a kernel ring to @new; under cq->lock. */
static int krwq_cq_move_ring(struct krwq_cq *cq, struct ib_wc *new, u32 cqe)
{
	u32 n = krwq_cq_used(cq->slots, cq->head, cq->tail), i;

	if (n > cqe)
		return -EINVAL;
	for (i = 0; i < n; i++)
		new[i] = cq->ring[(cq->tail + i) % cq->slots];
	cq->ring = new;
	cq->head = n;
	cq->tail = 0;
	return 0;
}

/**
 * krwq_resize_cq() - ib_device_ops.resize_cq; completions are kept.
 * @ibcq: the CQ.
 * @cqe: the new size.
 * @udata: user data: for a mapped ring, where the new ring's mmap offset
 *         goes (user space then maps it in place of the old one).
 *
 * Return: 0, -EINVAL if @cqe is out of range or below the completions
 * waiting in the CQ (or a mapped ring's tail is corrupt, or there is no
 * room for the new offset), -ENOMEM, -EFAULT.  On error the CQ is
 * unchanged.
 */
int krwq_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct krwq_cq *cq = to_kcq(ibcq);
	struct rdma_user_mmap_entry *entry = NULL;
	bool mapped = cq->mapped;
	void *new, *old;
	unsigned long flags;
	int ret;

	if (cqe < 1 || cqe > KRWQ_MAX_CQE)
		return -EINVAL;
	if (mapped) {
		if (!krwq_wants_mapped_ring(udata))
			return -EINVAL;
		new = krwq_cq_uring_alloc(udata, cqe + 1, &entry);
		if (IS_ERR(new))
			return PTR_ERR(new);
	} else {
		new = kvcalloc(cqe + 1, sizeof(*cq->ring), GFP_KERNEL_ACCOUNT);
		if (!new)
			return -ENOMEM;
	}

	spin_lock_irqsave(&cq->lock, flags);
	old = mapped ? (void *)cq->uring : (void *)cq->ring;
	ret = mapped ? krwq_cq_move_uring(cq, new, cqe) :
		       krwq_cq_move_ring(cq, new, cqe);
	if (!ret) {
		cq->slots = cqe + 1;
		ibcq->cqe = cqe;
		swap(cq->mmap, entry);
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	/* on success: the old ring and its entry; else the new ones */
	krwq_mmap_remove(entry);
	if (mapped)
		vfree(ret ? new : old);
	else
		kvfree(ret ? new : old);
	return ret;
}

/**
 * krwq_poll_cq() - ib_device_ops.poll_cq.
 * @ibcq: the CQ.
 * @n: room in @wc.
 * @wc: where completions are copied, oldest first.
 *
 * Return: completions copied, or -EINVAL for a mapped ring (user space
 * polls that itself).
 */
int krwq_poll_cq(struct ib_cq *ibcq, int n, struct ib_wc *wc)
{
	struct krwq_cq *cq = to_kcq(ibcq);
	unsigned long flags;
	int i;

	if (cq->mapped)
		return -EINVAL;
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
	u32 tail;

	spin_lock_irqsave(&cq->lock, irqf);
	/* NEXT_COMP widens an armed SOLICITED, never the other way round */
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    (!krwq_cq_tail(cq, &tail) || tail != cq->head))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqf);
	return ret;
}

/* A completion as the uverbs ABI has it (what a mapped ring holds). */
static void krwq_uverbs_wc(struct ib_uverbs_wc *u, const struct ib_wc *wc)
{
	*u = (struct ib_uverbs_wc) {
		.wr_id = wc->wr_id,
		.status = wc->status,
		.opcode = wc->opcode,
		.vendor_err = wc->vendor_err,
		.byte_len = wc->byte_len,
		.ex.imm_data = wc->ex.imm_data,
		.qp_num = wc->qp->qp_num,
		.src_qp = wc->src_qp,
		/* the flags the uverbs ABI defines, no kernel-only ones */
		.wc_flags = wc->wc_flags & (IB_WC_GRH | IB_WC_WITH_IMM |
					    IB_WC_WITH_INVALIDATE),
		.pkey_index = wc->pkey_index,
		.slid = ib_lid_cpu16(wc->slid),
		.sl = wc->sl,
		.dlid_path_bits = wc->dlid_path_bits,
		.port_num = wc->port_num,
	};
}

/**
 * krwq_cq_enter() - add one completion.
 * @cq: the CQ.
 * @wc: the completion; wc->qp must be set.
 * @solicited: the completion is for a solicited event.
 *
 * May run with a QP's s_lock and a ring lock held (see krwq.h).  Calls
 * the RDMA core's own completion handler when the CQ is armed
 * (handler_schedules), in place or by an IPI to the CPU of the CQ's
 * completion vector, any other handler from notify_work.
 *
 * Return: true, or false if the CQ overflowed (the caller moves the QP to
 * ERR).
 */
bool krwq_cq_enter(struct krwq_cq *cq, const struct ib_wc *wc, bool solicited)
{
	unsigned long flags;
	u32 next, tail;
	bool room;

	spin_lock_irqsave(&cq->lock, flags);
	next = cq->head + 1 == cq->slots ? 0 : cq->head + 1;
	room = krwq_cq_tail(cq, &tail) && next != tail;
	if (!room || cq->overflowed) {
		if (!cq->overflowed)
			queue_work(krwq_wq, &cq->event_work);
		krwq_count(to_kdev(cq->ibcq.device), KRWQ_STAT_CQ_OVERFLOWS, 1);
		cq->overflowed = true;
		spin_unlock_irqrestore(&cq->lock, flags);
		return false;
	}
	if (cq->mapped) {
		krwq_uverbs_wc(&cq->uring->queue[cq->head], wc);
		/* the entry before the index: pairs with user space's acquire */
		smp_store_release(&cq->uring->head, next);
	} else {
		cq->ring[cq->head] = *wc;
	}
	cq->head = next;
	trace_krwq_cqe(cq, wc);
	if ((cq->notify == IB_CQ_NEXT_COMP ||
	     (cq->notify == IB_CQ_SOLICITED &&
	      (solicited || wc->status != IB_WC_SUCCESS))) &&
	    !krwq_cq_hold_event(cq))
		krwq_cq_event(cq);
	spin_unlock_irqrestore(&cq->lock, flags);
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(krwq_cq_enter);
