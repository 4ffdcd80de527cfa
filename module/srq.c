// SPDX-License-Identifier: GPL-2.0
/*
 * srq.c - shared receive queues: a resizable ring of the C++ core, always
 * accepting posts and takes.  Resize is the core's: producers and
 * consumers both wait while entries move, and the locks never move.
 */
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "krwq.h"
#include "krwq_core.h"
#include "rq_alloc.h"
#include "rq_post.h"
#include "trace.h"

static void krwq_srq_event_work(struct work_struct *work)
{
	struct krwq_srq *srq = container_of(work, struct krwq_srq, event_work);
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

/**
 * krwq_srq_limit_event() - raise IB_EVENT_SRQ_LIMIT_REACHED, from a work
 * item: the take that found the limit runs under krwq locks.
 * @srq: the SRQ.
 */
void krwq_srq_limit_event(struct krwq_srq *srq)
{
	krwq_count(to_kdev(srq->ibsrq.device), KRWQ_STAT_SRQ_LIMIT, 1);
	trace_krwq_srq_limit(srq);
	queue_work(krwq_wq, &srq->event_work);
}

/**
 * krwq_create_srq() - ib_device_ops.create_srq.
 * @ibsrq: allocated by the RDMA core.
 * @init: max_wr, max_sge and srq_limit wanted; only IB_SRQT_BASIC.
 * @udata: user data: with ABI 2, where the ring's mmap offset goes.
 *
 * Return: 0, -EINVAL for sizes out of range or a limit above max_wr,
 * -EOPNOTSUPP for other SRQ types, -ENOMEM, -EFAULT if the offset cannot
 * be copied out.
 */
int krwq_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		    struct ib_udata *udata)
{
	struct krwq_dev *dev = to_kdev(ibsrq->device);
	struct krwq_srq *srq = to_ksrq(ibsrq);
	struct ib_srq_attr *a = &init->attr;
	int ret;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (!a->max_wr || a->max_wr > KRWQ_MAX_SRQ_WR ||
	    a->max_sge > KRWQ_MAX_SRQ_SGE || a->srq_limit > a->max_wr)
		return -EINVAL;
	if (atomic_inc_return(&dev->n_srq) > KRWQ_MAX_SRQ) {
		ret = -ENOMEM;
		goto err_count;
	}
	srq->mapped = krwq_wants_mapped_ring(udata);
	if (srq->mapped)
		ret = krwq_rq_alloc_mapped(&srq->rq, a->max_wr, a->max_sge,
					   udata, &srq->mmap);
	else
		ret = krwq_rq_alloc(&srq->rq, a->max_wr, a->max_sge,
				    KRWQ_ALLOC_RESIZABLE, NUMA_NO_NODE);
	if (ret)
		goto err_count;
	mutex_init(&srq->resize_mutex);
	INIT_WORK(&srq->event_work, krwq_srq_event_work);
	krwq_rq_set_state(&srq->rq, KRWQ_RQ_ACTIVE, NULL);
	if (a->srq_limit)
		krwq_rq_set_limit(&srq->rq, a->srq_limit);
	return 0;

err_count:
	atomic_dec(&dev->n_srq);
	return ret;
}

/*
 * Resizes a user-mapped ring: the new ring gets its own mmap entry, whose
 * offset is written to the u64 at the user address that rdma-core's
 * ipathverbs provider passes after the core's command (it then unmaps the
 * old ring and maps the new one).  The old ring's entry is revoked; a
 * mapping of it keeps its pages but the kernel no longer reads it.
 */
static int krwq_srq_resize_mapped(struct krwq_srq *srq, u32 max_wr,
				  const u32 *limit, struct ib_udata *udata)
{
	struct rdma_user_mmap_entry *entry;
	void *ring, *old = NULL;
	u64 offset_addr, offset;
	size_t bytes;
	int ret;

	if (!udata || udata->inlen < sizeof(offset_addr))
		return -EINVAL;	/* nowhere to say where the new ring is */
	ret = ib_copy_from_udata(&offset_addr, udata, sizeof(offset_addr));
	if (ret)
		return ret;
	/* one resize at a time: the ring and its entry change together */
	mutex_lock(&srq->resize_mutex);
	ring = krwq_rq_storage_alloc(&srq->rq, max_wr, &bytes);
	if (!ring) {
		ret = -ENOMEM;
		goto out;
	}
	entry = krwq_mmap_insert(udata, ring, bytes, &offset);
	if (IS_ERR(entry)) {
		ret = PTR_ERR(entry);
		krwq_rq_storage_free(&srq->rq, ring);
		goto out;
	}
	if (copy_to_user(u64_to_user_ptr(offset_addr), &offset,
			 sizeof(offset)))
		ret = -EFAULT;
	else
		ret = krwq_rq_resize(&srq->rq, ring, max_wr, limit, &old);
	if (!ret)
		swap(srq->mmap, entry);	/* entry is now the old ring's */
	else
		old = ring;
	krwq_mmap_remove(entry);
	krwq_rq_storage_free(&srq->rq, old);
out:
	mutex_unlock(&srq->resize_mutex);
	return ret;
}

/**
 * krwq_modify_srq() - ib_device_ops.modify_srq: resize and/or arm the limit.
 * @ibsrq: the SRQ.
 * @attr: max_wr and/or srq_limit.
 * @mask: IB_SRQ_MAX_WR and/or IB_SRQ_LIMIT.
 * @udata: user data: for a user-mapped ring, the user address of a u64
 *         that receives the new ring's mmap offset.
 *
 * Only what @mask names changes: an empty mask changes nothing.  Both
 * changes are checked before either is made.
 *
 * Return: 0, -EINVAL for a mask bit other than the two above, or when the
 * new size is out of range or cannot hold the posted WRs, or the limit
 * exceeds max_wr, or a mapped ring is resized without an address for its
 * offset; -ENOMEM; -EFAULT.  On error nothing changed.
 */
int krwq_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct krwq_srq *srq = to_ksrq(ibsrq);
	u32 max_wr = READ_ONCE(srq->rq.slots) - 1;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR) {
		if (!attr->max_wr || attr->max_wr > KRWQ_MAX_SRQ_WR)
			return -EINVAL;
		max_wr = attr->max_wr;
	}
	if ((mask & IB_SRQ_LIMIT) && attr->srq_limit > max_wr)
		return -EINVAL;
	/* both at once: the new limit is checked against the new size */
	if ((mask & IB_SRQ_MAX_WR) && srq->mapped)
		return krwq_srq_resize_mapped(srq, max_wr, mask & IB_SRQ_LIMIT ?
					      &attr->srq_limit : NULL, udata);
	if (mask & IB_SRQ_MAX_WR)
		return krwq_rq_resize_alloc(&srq->rq, max_wr, mask & IB_SRQ_LIMIT ?
					    &attr->srq_limit : NULL);
	if (mask & IB_SRQ_LIMIT)
		return krwq_rq_set_limit(&srq->rq, attr->srq_limit);
	return 0;
}

/**
 * krwq_query_srq() - ib_device_ops.query_srq.
 * @ibsrq: the SRQ.
 * @attr: filled with max_wr, max_sge and the armed limit (0 once fired).
 *
 * Return: 0.
 */
int krwq_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct krwq_srq *srq = to_ksrq(ibsrq);

	attr->max_wr = READ_ONCE(srq->rq.slots) - 1;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = krwq_rq_limit(&srq->rq);
	return 0;
}

/**
 * krwq_destroy_srq() - ib_device_ops.destroy_srq; posted WRs are dropped.
 * @ibsrq: the SRQ; the RDMA core has checked no QP uses it.
 * @udata: user data.
 *
 * Return: 0.
 */
int krwq_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct krwq_srq *srq = to_ksrq(ibsrq);

	cancel_work_sync(&srq->event_work);
	krwq_mmap_remove(srq->mmap);	/* a mapping keeps its pages */
	krwq_rq_free(&srq->rq);
	atomic_dec(&to_kdev(ibsrq->device)->n_srq);
	return 0;
}

/**
 * krwq_post_srq_recv() - ib_device_ops.post_srq_recv: the core's post.
 * @ibsrq: the SRQ.
 * @wr: the list of receive WRs.
 * @bad_wr: set to the first WR not posted, on error.
 *
 * Return: 0, -EINVAL for too many SGEs, -ENOMEM when the SRQ is full.
 */
int krwq_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	return krwq_post_counted(to_kdev(ibsrq->device), &to_ksrq(ibsrq)->rq,
				 wr, bad_wr, NULL);
}
