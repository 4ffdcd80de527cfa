/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sq.h - the send queue's slots and its ends (sq.c), which the requester
 * (req.c), the completer (comp.c) and the QP's state machine (qp.c)
 * share: a send WQE's completion, the flush, the move to ERR, the waits
 * the requester and the completer arm on sq_timer, and whether the QP's
 * wire packets are all out.
 */
#ifndef KRWQ_SQ_H
#define KRWQ_SQ_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "krwq.h"

/* The send WQE in slot @idx of @qp's send queue. */
static inline struct krwq_swqe *krwq_sq_entry(struct krwq_qp *qp, u32 idx)
{
	return (void *)qp->sq + (size_t)idx * qp->sq_stride;
}

/* The slot after @idx, round the ring. */
static inline u32 krwq_sq_next(struct krwq_qp *qp, u32 idx)
{
	return idx + 1 == qp->sq_slots ? 0 : idx + 1;
}

/*
 * The slot of the next WQE to go on the wire behind the head, which
 * awaits its answer (struct krwq_wire_req): past those sent ahead of it.
 */
static inline u32 krwq_sq_ahead(struct krwq_qp *qp)
{
	u32 idx = qp->sq_tail + 1 + qp->wire_req.ahead;

	/* fewer WQEs are ahead than the ring has slots */
	return idx >= qp->sq_slots ? idx - qp->sq_slots : idx;
}

/*
 * Whether none of @qp's wire packets is waiting in wire_txq or on its way
 * out through a caller of req.c's krwq_sq_xmit(): a packet sent now would
 * pass none of them.  Under s_lock.
 */
static inline bool krwq_sq_tx_idle(struct krwq_qp *qp)
{
	lockdep_assert_held(&qp->s_lock);
	return !qp->wire_tx_busy && skb_queue_empty(&qp->wire_txq);
}

void krwq_sq_complete(struct krwq_qp *qp, struct krwq_swqe *w,
		      enum ib_wc_status status);
void krwq_sq_flush_locked(struct krwq_qp *qp);
void krwq_qp_error_locked(struct krwq_qp *qp);
unsigned long krwq_ack_timeout_jiffies(u8 timeout);
unsigned long krwq_rnr_jiffies(u8 code);
void krwq_sq_wait(struct krwq_qp *qp, enum krwq_wire_await what,
		  unsigned long delay);

#endif /* KRWQ_SQ_H */
