// SPDX-License-Identifier: GPL-2.0
/*
 * srq.c - shared receive queues: a resizable ring of the C++ core, always
 * accepting posts and takes.  Resize is the core's: producers and
 * consumers both wait while entries move, and the locks never move.
 */
#include <linux/slab.h>

#include "krwq.h"
#include "krwq_core.h"
#include "rq_alloc.h"
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
 * @udata: user data (none is exchanged with ABI 1).
 *
 * Return: 0, -EINVAL for sizes out of range or a limit above max_wr,
 * -EOPNOTSUPP for other SRQ types, -ENOMEM.
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
	ret = krwq_rq_alloc(&srq->rq, a->max_wr, a->max_sge,
			    KRWQ_ALLOC_RESIZABLE, NUMA_NO_NODE);
	if (ret)
		goto err_count;
	INIT_WORK(&srq->event_work, krwq_srq_event_work);
	krwq_rq_set_state(&srq->rq, KRWQ_RQ_ACTIVE, NULL);
	if (a->srq_limit)
		krwq_rq_set_limit(&srq->rq, a->srq_limit);
	return 0;

err_count:
	atomic_dec(&dev->n_srq);
	return ret;
}

/**
 * krwq_modify_srq() - ib_device_ops.modify_srq: resize and/or arm the limit.
 * @ibsrq: the SRQ.
 * @attr: max_wr and/or srq_limit.
 * @mask: IB_SRQ_MAX_WR and/or IB_SRQ_LIMIT.
 * @udata: user data.
 *
 * Both changes are checked before either is made.
 *
 * Return: 0, -EINVAL when the new size is out of range or cannot hold the
 * posted WRs, or the limit exceeds max_wr; -ENOMEM.  On error nothing
 * changed.
 */
int krwq_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct krwq_srq *srq = to_ksrq(ibsrq);
	u32 max_wr = READ_ONCE(srq->rq.size) - 1;

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
	if (mask & IB_SRQ_MAX_WR)
		return krwq_rq_resize_alloc(&srq->rq, max_wr, mask & IB_SRQ_LIMIT ?
					    &attr->srq_limit : NULL);
	return krwq_rq_set_limit(&srq->rq, attr->srq_limit);
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

	attr->max_wr = READ_ONCE(srq->rq.size) - 1;
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
	cancel_work_sync(&to_ksrq(ibsrq)->event_work);
	krwq_rq_free(&to_ksrq(ibsrq)->rq);
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
