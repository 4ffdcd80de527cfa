/* SPDX-License-Identifier: GPL-2.0 */
/*
 * recv.h - a destination QP's receive side (recv.c), for the two
 * deliveries into it, the host's (resp.c) and the wire's (wire_resp.c),
 * and its flush, for qp.c and sq.c.
 */
#ifndef KRWQ_RECV_H
#define KRWQ_RECV_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "krwq.h"
#include "krwq_core.h"

struct krwq_dev;
struct krwq_mr;
struct krwq_qp;
struct krwq_sge_cursor;

void krwq_qp_fail(struct krwq_qp *qp);
void krwq_rq_flush_complete(struct krwq_qp *qp, u64 wr_id);
void krwq_rq_flushed(void *ctx, unsigned long long wr_id);
void krwq_qp_recv_flush_locked(struct krwq_qp *qp);
void krwq_put_mrs(struct krwq_mr **mrs, u32 n);
bool krwq_get_mrs(struct krwq_dev *dev, struct ib_pd *pd,
		  const struct ib_sge *sge, u32 n, int access,
		  struct krwq_mr **mrs);
bool krwq_can_receive(struct krwq_qp *dqp);
void krwq_dest_error(struct krwq_qp *dqp, u64 wr_id, enum ib_wc_status status);
void krwq_dest_dropped(struct krwq_qp *dqp, u64 wr_id,
		       enum ib_wc_status status);
bool krwq_dest_fits(const struct ib_sge *sge, struct krwq_qp *dqp,
		    struct krwq_taken *t, u32 need);
void krwq_dest_complete(struct krwq_qp *dqp, struct ib_wc *wc, bool solicited);
enum krwq_take_outcome krwq_take(struct ib_sge *sge, struct krwq_qp *dqp,
				 struct krwq_taken *t, u32 need);

/* small enough to be inlined into both deliveries */

/**
 * krwq_sge_total() - the bytes a scatter list holds.
 * @sge: the entries.
 * @n: how many.
 *
 * Return: the sum of their lengths.
 */
static inline u64 krwq_sge_total(const struct ib_sge *sge, u32 n)
{
	u64 total = 0;

	while (n--)
		total += sge[n].length;
	return total;
}

/**
 * krwq_cursor_init() - a cursor at the start of a scatter list whose
 * regions are held.
 * @c: the cursor.
 * @sge: the entries.
 * @n: how many (0: an empty list).
 * @mrs: their regions (krwq_get_mrs()).
 */
static inline void krwq_cursor_init(struct krwq_sge_cursor *c,
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
 * krwq_dest_pd() - the PD a destination's receive buffers are checked
 * against: its SRQ's, if it has one.
 * @dqp: the destination QP.
 *
 * Return: the PD.
 */
static inline struct ib_pd *krwq_dest_pd(struct krwq_qp *dqp)
{
	return dqp->srq ? dqp->srq->ibsrq.pd : dqp->ibqp.pd;
}

#endif /* KRWQ_RECV_H */
