/* SPDX-License-Identifier: GPL-2.0 */
/*
 * req.h - what qp.c calls of the requester (req.c): the send queue's
 * timer and work item, which create_qp sets up.  ib_device_ops.post_send
 * is in krwq.h with the other verbs; the move to ERR, which starts with
 * the send queue's flush, is in sq.h.
 */
#ifndef KRWQ_REQ_H
#define KRWQ_REQ_H

struct timer_list;
struct work_struct;

void krwq_send_work(struct work_struct *work);
void krwq_sq_timer(struct timer_list *t);

#endif /* KRWQ_REQ_H */
