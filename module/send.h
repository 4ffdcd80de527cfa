/* SPDX-License-Identifier: GPL-2.0 */
/*
 * send.h - what qp.c calls of the send queue (send.c): the send queue's
 * timer and work item, which create_qp sets up, and the move to ERR,
 * which starts with the send queue's flush.  Private to the two files;
 * ib_device_ops.post_send is in krwq.h with the other verbs.
 */
#ifndef KRWQ_SEND_H
#define KRWQ_SEND_H

struct krwq_qp;
struct timer_list;
struct work_struct;

void krwq_qp_error_locked(struct krwq_qp *qp);
void krwq_send_work(struct work_struct *work);
void krwq_sq_timer(struct timer_list *t);

#endif /* KRWQ_SEND_H */
