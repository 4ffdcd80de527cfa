/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rq_post.h - the receive post both ib_device_ops share (a QP's own
 * ring, an SRQ's): the core's post, counted and traced.  Inline, so each
 * op is one call into the core, as rdmavt's post is one function.
 */
#ifndef KRWQ_RQ_POST_H
#define KRWQ_RQ_POST_H

#include "krwq.h"
#include "krwq_core.h"
#include "trace.h"

/**
 * krwq_post_counted() - the core's post, counted in the device's stats.
 * @dev: the device.
 * @rq: the ring.
 * @wr: the list of receive WRs.
 * @bad_wr: set to the first WR not posted, on error.
 * @sink: where WRs posted in ERR are flushed to, or NULL.
 *
 * Context: Any context; the caller holds neither of the ring's locks
 * (krwq_rq_post() takes its p_lock).
 *
 * Return: krwq_rq_post()'s error, 0 when every WR was posted.
 */
static inline int krwq_post_counted(struct krwq_dev *dev, struct krwq_rq *rq,
				    const struct ib_recv_wr *wr,
				    const struct ib_recv_wr **bad_wr,
				    const struct krwq_sink *sink)
{
	struct krwq_posted r = krwq_rq_post(rq, wr, bad_wr, sink);

	/* a mapped ring's WQEs count when taken or flushed (resp.c) */
	if (!rq->wq)
		krwq_count(dev, KRWQ_STAT_RX_POSTED, r.count);
	trace_krwq_post_recv(dev, rq, r.count, r.err);
	if (r.err == -ENOMEM)
		krwq_count(dev, KRWQ_STAT_RX_FULL, 1);
	return r.err;
}

#endif /* KRWQ_RQ_POST_H */
