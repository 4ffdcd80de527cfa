/* SPDX-License-Identifier: GPL-2.0 */
/*
 * resp.h - what the requester (req.c) and the responder (resp.c) share:
 * one run of a send queue, what executing one send WQE came to, and the
 * calls req.c makes into the responder; and what the wire (net.c,
 * wire_req.c, wire_resp.c, comp.c) needs of both: a send WQE's payload,
 * and delivery of what came in.
 */
#ifndef KRWQ_RESP_H
#define KRWQ_RESP_H

#include <linux/compiler_types.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

struct krwq_qp;
struct krwq_sge_cursor;
struct krwq_swqe;
struct krwq_wire_pkt;
struct sk_buff_head;
union ib_gid;
union rdma_network_hdr;

/*
 * A run lets interrupts in (drops its locks and takes them again) each
 * time it has copied KRWQ_IRQOFF_BYTES since it last did, in the middle
 * of a message if need be, so no interrupts-off section of a run copies
 * more than that.  Each WQE is charged KRWQ_WQE_COST on top of its
 * payload, for its take, look-ups and completions.
 */
#define KRWQ_IRQOFF_BYTES	SZ_16K
#define KRWQ_WQE_COST		SZ_1K

/*
 * One run of a send queue (krwq_sq_run()), reached from the QP as
 * qp->run while it lasts.
 * @flags: the interrupt state its caller saved when it took s_lock.
 * @bh_off: set when the run disabled bottom halves for its first window;
 *          its caller enables them again once s_lock is released.
 * @section: bytes copied or charged since interrupts were last let in.
 * @busy_dqp: the destination whose r_busy this run raised, or NULL.
 * @tx: packets for the wire, which its caller sends (krwq_tx_xmit()) once
 *      it has released s_lock.
 */
struct krwq_run {
	unsigned long *flags;
	bool *bh_off;
	u32 section;
	struct krwq_qp *busy_dqp;
	struct sk_buff_head *tx;
};

/* What executing one send WQE came to. */
struct krwq_outcome {
	enum ib_wc_status status;	/* for the sender */
	bool rnr;			/* no receive WQE: retry later */
	u8 min_rnr_timer;		/* the responder's, when rnr */
	bool no_ack;			/* RC, nobody answered: retry later */
	bool lost;			/* the destination was reset mid-copy */
	bool awaits;			/* RC on the wire: sent, the answer due */
	bool again;			/* not executed: send_work tries again */
	bool inv_busy;			/* not executed: again after a tick */
};

/*
 * An invalidation of the WQE at @qp's sq_tail found its region still in
 * a copy: inv_waits counts it once per WQE.  The caller holds qp->s_lock.
 */
static inline void krwq_inv_wait_counted(struct krwq_qp *qp)
{
	if (!qp->sq_inv_counted)
		krwq_count(qp->dev, KRWQ_STAT_INV_WAITS, 1);
	qp->sq_inv_counted = true;
}

static inline bool krwq_is_atomic(enum ib_wr_opcode op)
{
	return op == IB_WR_ATOMIC_CMP_AND_SWP || op == IB_WR_ATOMIC_FETCH_AND_ADD;
}

/* an RDMA READ or an atomic: it needs the QPs' rd_atomic resources */
static inline bool krwq_is_rd_atomic(enum ib_wr_opcode op)
{
	return op == IB_WR_RDMA_READ || krwq_is_atomic(op);
}

static inline bool krwq_is_send(enum ib_wr_opcode op)
{
	return op == IB_WR_SEND || op == IB_WR_SEND_WITH_IMM ||
	       op == IB_WR_SEND_WITH_INV;
}

void krwq_run_let_irqs_in(struct krwq_qp *sqp) __must_hold(&sqp->s_lock);
bool krwq_run_can_unlock(struct krwq_qp *sqp);
void krwq_run_unlock(struct krwq_qp *sqp) __releases(&sqp->s_lock);
void krwq_run_relock(struct krwq_qp *sqp) __acquires(&sqp->s_lock);
void krwq_exec_connected(struct krwq_qp *sqp, struct krwq_swqe *w,
			 struct krwq_outcome *o);
void krwq_exec_ud(struct krwq_qp *sqp, struct krwq_swqe *w,
		  struct krwq_outcome *o);
bool krwq_src_get(struct krwq_qp *sqp, struct krwq_swqe *w, int access);
void krwq_src_put(struct krwq_qp *sqp, struct krwq_swqe *w);
void krwq_src_cursor(struct krwq_qp *sqp, struct krwq_swqe *w,
		     struct krwq_sge_cursor *c);

/* wire_resp.c: the responder's side of the wire */
void krwq_resp_wire_ud(struct krwq_qp *dqp, const struct krwq_wire_pkt *pkt,
		       const union rdma_network_hdr *hdr,
		       enum rdma_network_type type, const void *payload);
void krwq_resp_wire_uc(struct krwq_qp *dqp, const struct krwq_wire_pkt *pkt,
		       const union ib_gid *sgid, const union ib_gid *dgid,
		       const void *payload);
void krwq_resp_wire_rc(struct krwq_qp *dqp, const struct krwq_wire_pkt *pkt,
		       const union ib_gid *sgid, const union ib_gid *dgid,
		       const void *payload);
void krwq_resp_wire_reset(struct krwq_qp *qp);
void krwq_wire_inv_work(struct work_struct *work);
bool krwq_wire_from_peer(struct krwq_qp *dqp, const union ib_gid *sgid,
			 const union ib_gid *dgid);

/* wire_req.c: the requester's side of the wire */
enum ib_wc_status krwq_wire_send_ud(struct krwq_qp *sqp, struct krwq_swqe *w);
enum ib_wc_status krwq_wire_send_uc(struct krwq_qp *sqp, struct krwq_swqe *w);
enum ib_wc_status krwq_wire_send_rc(struct krwq_qp *sqp, struct krwq_swqe *w);
bool krwq_wire_may_send_ahead(struct krwq_qp *sqp, struct krwq_swqe *w);
bool krwq_wire_send_ahead(struct krwq_qp *sqp, struct krwq_swqe *w);
void krwq_wire_read_rest(struct krwq_qp *sqp, struct krwq_swqe *w,
			 struct sk_buff_head *out);

/* comp.c: the completer, the wire's answers to an RC requester */
void krwq_wire_answer(struct krwq_qp *qp, const struct krwq_wire_pkt *pkt,
		      const union ib_gid *sgid, const union ib_gid *dgid,
		      const void *payload);

#endif /* KRWQ_RESP_H */
