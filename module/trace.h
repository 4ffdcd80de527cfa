/* SPDX-License-Identifier: GPL-2.0 */
/*
 * trace.h - krwq's trace events (system "krwq").
 *
 * Each event marks one step of a receive work request's life or of a
 * loopback message: a batch posted, one taken by an arriving message,
 * one flushed, the SRQ limit firing, one send WQE executed against its
 * destination, one completion entered into a CQ.  docs/architecture.md shows how to
 * record them; scripts/guest/trace.sh checks them in the test VM.
 *
 * QP numbers are ib_qp.qp_num; CQ and SRQ numbers are the restrack ids
 * that `rdma resource show` prints.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM krwq

#if !defined(KRWQ_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define KRWQ_TRACE_H

#include <linux/tracepoint.h>

#include "krwq.h"
#include "krwq_core.h"

/*
 * Enum values printed by name.  TRACE_DEFINE_ENUM() puts their numbers
 * into the events' format files, where user-space tools read them.
 */
TRACE_DEFINE_ENUM(IB_WC_SUCCESS);
TRACE_DEFINE_ENUM(IB_WC_LOC_LEN_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_QP_OP_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_EEC_OP_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_PROT_ERR);
TRACE_DEFINE_ENUM(IB_WC_WR_FLUSH_ERR);
TRACE_DEFINE_ENUM(IB_WC_MW_BIND_ERR);
TRACE_DEFINE_ENUM(IB_WC_BAD_RESP_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_ACCESS_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_INV_REQ_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_ACCESS_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_OP_ERR);
TRACE_DEFINE_ENUM(IB_WC_RETRY_EXC_ERR);
TRACE_DEFINE_ENUM(IB_WC_RNR_RETRY_EXC_ERR);
TRACE_DEFINE_ENUM(IB_WC_LOC_RDD_VIOL_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_INV_RD_REQ_ERR);
TRACE_DEFINE_ENUM(IB_WC_REM_ABORT_ERR);
TRACE_DEFINE_ENUM(IB_WC_INV_EECN_ERR);
TRACE_DEFINE_ENUM(IB_WC_INV_EEC_STATE_ERR);
TRACE_DEFINE_ENUM(IB_WC_FATAL_ERR);
TRACE_DEFINE_ENUM(IB_WC_RESP_TIMEOUT_ERR);
TRACE_DEFINE_ENUM(IB_WC_GENERAL_ERR);
TRACE_DEFINE_ENUM(IB_WC_SEND);
TRACE_DEFINE_ENUM(IB_WC_RDMA_WRITE);
TRACE_DEFINE_ENUM(IB_WC_RDMA_READ);
TRACE_DEFINE_ENUM(IB_WC_RECV);
TRACE_DEFINE_ENUM(IB_WC_RECV_RDMA_WITH_IMM);
TRACE_DEFINE_ENUM(IB_WR_RDMA_WRITE);
TRACE_DEFINE_ENUM(IB_WR_RDMA_WRITE_WITH_IMM);
TRACE_DEFINE_ENUM(IB_WR_SEND);
TRACE_DEFINE_ENUM(IB_WR_SEND_WITH_IMM);
TRACE_DEFINE_ENUM(IB_WR_RDMA_READ);

/* every ib_wc_status */
#define krwq_show_wc_status(v) __print_symbolic(v, \
	{ IB_WC_SUCCESS, "SUCCESS" }, \
	{ IB_WC_LOC_LEN_ERR, "LOC_LEN_ERR" }, \
	{ IB_WC_LOC_QP_OP_ERR, "LOC_QP_OP_ERR" }, \
	{ IB_WC_LOC_EEC_OP_ERR, "LOC_EEC_OP_ERR" }, \
	{ IB_WC_LOC_PROT_ERR, "LOC_PROT_ERR" }, \
	{ IB_WC_WR_FLUSH_ERR, "WR_FLUSH_ERR" }, \
	{ IB_WC_MW_BIND_ERR, "MW_BIND_ERR" }, \
	{ IB_WC_BAD_RESP_ERR, "BAD_RESP_ERR" }, \
	{ IB_WC_LOC_ACCESS_ERR, "LOC_ACCESS_ERR" }, \
	{ IB_WC_REM_INV_REQ_ERR, "REM_INV_REQ_ERR" }, \
	{ IB_WC_REM_ACCESS_ERR, "REM_ACCESS_ERR" }, \
	{ IB_WC_REM_OP_ERR, "REM_OP_ERR" }, \
	{ IB_WC_RETRY_EXC_ERR, "RETRY_EXC_ERR" }, \
	{ IB_WC_RNR_RETRY_EXC_ERR, "RNR_RETRY_EXC_ERR" }, \
	{ IB_WC_LOC_RDD_VIOL_ERR, "LOC_RDD_VIOL_ERR" }, \
	{ IB_WC_REM_INV_RD_REQ_ERR, "REM_INV_RD_REQ_ERR" }, \
	{ IB_WC_REM_ABORT_ERR, "REM_ABORT_ERR" }, \
	{ IB_WC_INV_EECN_ERR, "INV_EECN_ERR" }, \
	{ IB_WC_INV_EEC_STATE_ERR, "INV_EEC_STATE_ERR" }, \
	{ IB_WC_FATAL_ERR, "FATAL_ERR" }, \
	{ IB_WC_RESP_TIMEOUT_ERR, "RESP_TIMEOUT_ERR" }, \
	{ IB_WC_GENERAL_ERR, "GENERAL_ERR" })

/* the completion opcodes krwq enters */
#define krwq_show_wc_opcode(v) __print_symbolic(v, \
	{ IB_WC_SEND, "SEND" }, \
	{ IB_WC_RDMA_WRITE, "RDMA_WRITE" }, \
	{ IB_WC_RDMA_READ, "RDMA_READ" }, \
	{ IB_WC_RECV, "RECV" }, \
	{ IB_WC_RECV_RDMA_WITH_IMM, "RECV_RDMA_WITH_IMM" })

/* the send opcodes krwq executes (krwq_opcode_ok() in req.c) */
#define krwq_show_wr_opcode(v) __print_symbolic(v, \
	{ IB_WR_RDMA_WRITE, "RDMA_WRITE" }, \
	{ IB_WR_RDMA_WRITE_WITH_IMM, "RDMA_WRITE_WITH_IMM" }, \
	{ IB_WR_SEND, "SEND" }, \
	{ IB_WR_SEND_WITH_IMM, "SEND_WITH_IMM" }, \
	{ IB_WR_RDMA_READ, "RDMA_READ" })

TRACE_EVENT(krwq_post_recv,
	TP_PROTO(const struct krwq_dev *dev, const struct krwq_rq *rq,
		 u32 posted, int ret),
	TP_ARGS(dev, rq, posted, ret),
	TP_STRUCT__entry(
		__string(dev, dev_name(&dev->ibdev.dev))
		__field(const void *, ring)
		__field(u32, max_wr)
		__field(u32, posted)
		__field(int, ret)
	),
	TP_fast_assign(
		__assign_str(dev, dev_name(&dev->ibdev.dev));
		__entry->ring = rq->kwq;
		__entry->max_wr = rq->slots - 1;
		__entry->posted = posted;
		__entry->ret = ret;
	),
	TP_printk("dev=%s ring=%p max_wr=%u posted=%u ret=%d",
		  __get_str(dev), __entry->ring, __entry->max_wr,
		  __entry->posted, __entry->ret)
);

TRACE_EVENT(krwq_take,
	TP_PROTO(const struct krwq_qp *qp, int ret, const struct krwq_taken *t),
	TP_ARGS(qp, ret, t),
	TP_STRUCT__entry(
		__string(dev, dev_name(&qp->dev->ibdev.dev))
		__field(u32, qpn)
		__field(bool, srq)
		__field(int, ret)
		__field(u64, wr_id)
		__field(u32, num_sge)
		__field(bool, limit)
	),
	TP_fast_assign(
		__assign_str(dev, dev_name(&qp->dev->ibdev.dev));
		__entry->qpn = qp->ibqp.qp_num;
		__entry->srq = qp->srq;
		__entry->ret = ret;
		__entry->wr_id = ret ? t->wr_id : 0;
		__entry->num_sge = ret > 0 ? t->num_sge : 0;
		__entry->limit = t->flags & KRWQ_TAKEN_LIMIT_REACHED;
	),
	TP_printk("dev=%s qpn=%u srq=%d ret=%d wr_id=0x%llx num_sge=%u limit=%d",
		  __get_str(dev), __entry->qpn, __entry->srq, __entry->ret,
		  __entry->wr_id, __entry->num_sge, __entry->limit)
);

TRACE_EVENT(krwq_flush,
	TP_PROTO(const struct krwq_qp *qp, u64 wr_id),
	TP_ARGS(qp, wr_id),
	TP_STRUCT__entry(
		__string(dev, dev_name(&qp->dev->ibdev.dev))
		__field(u32, qpn)
		__field(u64, wr_id)
	),
	TP_fast_assign(
		__assign_str(dev, dev_name(&qp->dev->ibdev.dev));
		__entry->qpn = qp->ibqp.qp_num;
		__entry->wr_id = wr_id;
	),
	TP_printk("dev=%s qpn=%u wr_id=0x%llx",
		  __get_str(dev), __entry->qpn, __entry->wr_id)
);

TRACE_EVENT(krwq_srq_limit,
	TP_PROTO(const struct krwq_srq *srq),
	TP_ARGS(srq),
	TP_STRUCT__entry(
		__string(dev, dev_name(&srq->ibsrq.device->dev))
		__field(u32, srqn)
		__field(u32, max_wr)
	),
	TP_fast_assign(
		__assign_str(dev, dev_name(&srq->ibsrq.device->dev));
		__entry->srqn = srq->ibsrq.res.id;
		__entry->max_wr = srq->rq.slots - 1;
	),
	TP_printk("dev=%s srqn=%u max_wr=%u",
		  __get_str(dev), __entry->srqn, __entry->max_wr)
);

TRACE_EVENT(krwq_deliver,
	TP_PROTO(const struct krwq_qp *qp, const struct krwq_swqe *w,
		 enum ib_wc_status status, bool rnr, bool no_ack),
	TP_ARGS(qp, w, status, rnr, no_ack),
	TP_STRUCT__entry(
		__string(dev, dev_name(&qp->dev->ibdev.dev))
		__field(u32, src_qpn)
		__field(u32, dst_qpn)
		__field(u64, wr_id)
		__field(u32, opcode)
		__field(u32, length)
		__field(u32, status)
		__field(bool, rnr)
		__field(bool, no_ack)
	),
	TP_fast_assign(
		__assign_str(dev, dev_name(&qp->dev->ibdev.dev));
		__entry->src_qpn = qp->ibqp.qp_num;
		__entry->dst_qpn = qp->ibqp.qp_type == IB_QPT_UD ?
				   w->remote_qpn : qp->attr.dest_qp_num;
		__entry->wr_id = w->wr_id;
		__entry->opcode = w->opcode;
		__entry->length = w->length;
		__entry->status = status;
		__entry->rnr = rnr;
		__entry->no_ack = no_ack;
	),
	TP_printk("dev=%s src_qpn=%u dst_qpn=%u wr_id=0x%llx opcode=%s length=%u status=%s rnr=%d no_ack=%d",
		  __get_str(dev), __entry->src_qpn, __entry->dst_qpn,
		  __entry->wr_id, krwq_show_wr_opcode(__entry->opcode),
		  __entry->length, krwq_show_wc_status(__entry->status),
		  __entry->rnr, __entry->no_ack)
);

TRACE_EVENT(krwq_cqe,
	TP_PROTO(const struct krwq_cq *cq, const struct ib_wc *wc),
	TP_ARGS(cq, wc),
	TP_STRUCT__entry(
		__string(dev, dev_name(&cq->ibcq.device->dev))
		__field(u32, cqn)
		__field(u32, qpn)
		__field(u64, wr_id)
		__field(u32, status)
		__field(u32, opcode)
		__field(u32, byte_len)
	),
	TP_fast_assign(
		__assign_str(dev, dev_name(&cq->ibcq.device->dev));
		__entry->cqn = cq->ibcq.res.id;
		__entry->qpn = wc->qp ? wc->qp->qp_num : 0;
		__entry->wr_id = wc->wr_id;
		__entry->status = wc->status;
		__entry->opcode = wc->opcode;
		__entry->byte_len = wc->byte_len;
	),
	TP_printk("dev=%s cqn=%u qpn=%u wr_id=0x%llx status=%s opcode=%s byte_len=%u",
		  __get_str(dev), __entry->cqn, __entry->qpn, __entry->wr_id,
		  krwq_show_wc_status(__entry->status),
		  krwq_show_wc_opcode(__entry->opcode), __entry->byte_len)
);

#endif /* KRWQ_TRACE_H */

/* define_trace.h finds this file as TRACE_INCLUDE_PATH/trace.h */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
