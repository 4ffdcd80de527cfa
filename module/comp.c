// SPDX-License-Identifier: GPL-2.0
/*
 * comp.c - the completer of an RC requester on the wire: the answers its
 * peer sends back (ACK, RNR NAK, NAK, RDMA READ responses, atomic
 * acknowledgments) for the send WQE at sq_tail (the head), which the
 * requester (req.c) sent and now waits on, and for the WQEs it sent
 * behind it meanwhile (struct krwq_wire_req).  An answer completes the
 * WQEs it covers, in order (sq.c), and lets the send queue
 * go on (send_work), has it wait out an RNR NAK, or has it sent again
 * from the PSN a NAK names.  Through the fabric there is no completer:
 * the delivery is done when the requester's run returns.
 *
 * Answers come in softirq (net.c) and take the QP's s_lock, as the
 * requester's run does.  A run that sends behind a head awaiting its
 * answer lets s_lock go as it copies, and answers are taken meanwhile:
 * what they change (sq_tail, the head, what went behind it) is not what
 * the run builds.  While a run sends the head itself again, an ACK of it,
 * or an atomic's answer (its result in place), is left for that run
 * (wire_req.answered).
 */
#include <kunit/visibility.h>
#include <linux/jiffies.h>
#include <rdma/ib_pack.h>

#include "krwq.h"
#include "recv.h"
#include "resp.h"
#include "sq.h"
#include "tx.h"
#include "wire.h"

static void krwq_wire_done(struct krwq_qp *qp, struct krwq_swqe *w,
			   enum ib_wc_status status);

/*
 * The head is answered, with a WQE sent behind it: it completes, and the
 * next is the head, awaiting its answer (a READ's from its first
 * response), with the local ACK timeout started again (progress).  A
 * REG_MR or LOCAL_INV that went ahead (executed then) completes as soon
 * as it is the head: with the answer that completed the WQE before it;
 * when it was the last sent, the requester is then idle (wire_req.await
 * is no longer KRWQ_WIRE_AWAIT_ANSWER, which callers look at).
 */
static void krwq_wire_next_head(struct krwq_qp *qp)
{
	struct krwq_wire_req *req = &qp->wire_req;
	struct krwq_swqe *w = krwq_sq_entry(qp, qp->sq_tail);

	for (;;) {
		qp->sq_tail = krwq_sq_next(qp, qp->sq_tail);
		req->ahead--;
		if (krwq_is_rd_atomic(krwq_sq_entry(qp, qp->sq_tail)->opcode))
			req->rd_atomic_ahead--;
		req->first_psn = krwq_psn_add(req->last_psn, 1);
		req->taken_psn = req->first_psn;
		req->last_psn = krwq_sq_entry(qp, qp->sq_tail)->wire_last_psn;
		req->next_resp = req->first_psn;
		req->read_off = 0;
		req->read_gap = false;
		req->resume = false;
		qp->ack_tries = 0;
		qp->rnr_tries = 0;
		mod_timer(&qp->sq_timer,
			  jiffies + krwq_ack_timeout_jiffies(qp->attr.timeout));
		krwq_sq_complete(qp, w, IB_WC_SUCCESS);
		w = krwq_sq_entry(qp, qp->sq_tail);
		if (!w->local_done || qp->state == IB_QPS_ERR)
			return;
		if (!req->ahead) {
			krwq_wire_done(qp, w, IB_WC_SUCCESS);
			return;
		}
	}
}

static void krwq_wire_ack_past(struct krwq_qp *qp);
static void krwq_wire_nak_past(struct krwq_qp *qp);

/*
 * The head, @w, is answered: it completes with @status (and the QP goes
 * to ERR if that is an error), and the send queue goes on, from the WQE
 * sent behind it if there is one.
 */
static void krwq_wire_done(struct krwq_qp *qp, struct krwq_swqe *w,
			   enum ib_wc_status status)
{
	struct krwq_wire_req *req = &qp->wire_req;

	if (status == IB_WC_SUCCESS && req->ahead) {
		krwq_wire_next_head(qp);
		/* idle: the last WQE sent was a local one, done */
		if (req->await != KRWQ_WIRE_AWAIT_ANSWER)
			return;
		if (req->acked_past)
			krwq_wire_ack_past(qp);
		if (req->nak_past && req->await == KRWQ_WIRE_AWAIT_ANSWER &&
		    qp->state != IB_QPS_ERR)
			krwq_wire_nak_past(qp);
		/* room in the window: send_work sends what waits behind */
		queue_work(krwq_wq, &qp->send_work);
		return;
	}
	krwq_wire_req_idle(req);
	req->first_psn = krwq_psn_add(req->last_psn, 1);
	qp->sq_waiting = false;
	del_timer(&qp->sq_timer);
	qp->ack_tries = 0;
	qp->rnr_tries = 0;
	qp->sq_tail = krwq_sq_next(qp, qp->sq_tail);
	krwq_sq_complete(qp, w, status);
	if (status != IB_WC_SUCCESS)
		krwq_qp_error_locked(qp);
	else if (qp->sq_tail != qp->sq_head)
		queue_work(krwq_wq, &qp->send_work);
}

/*
 * An answer of @psn (an ACK if @through; else a NAK, an RNR NAK, a READ
 * response or an atomic acknowledgment, which the responder sends only
 * once it had every request before @psn) completes, in order, the SENDs
 * and WRITEs it covers that have a WQE sent behind them; the last one
 * sent is the answer's to complete or send again
 * (krwq_wire_take_answer()).  A READ or atomic is done only by its own
 * answer, so it ends the walk.  A REG_MR or LOCAL_INV executed behind a
 * WQE completes with it (krwq_wire_next_head()).  A PSN not yet sent
 * acknowledges nothing.
 * A full CQ, which moves the QP to ERR, ends it (the flush completes the
 * rest, now or at the end of a run).  Return: whether any completed.
 */
static bool krwq_wire_ack_ahead(struct krwq_qp *qp, u32 psn, bool through)
{
	struct krwq_wire_req *req = &qp->wire_req;
	bool any = false;

	if (krwq_psn_diff(psn, qp->wire_psn) >= 0)
		return false;
	while (req->ahead && qp->state != IB_QPS_ERR &&
	       !krwq_is_rd_atomic(krwq_sq_entry(qp, qp->sq_tail)->opcode)) {
		s32 d = krwq_psn_diff(psn, req->last_psn);

		if (d < 0 || (d == 0 && !through))
			break;
		krwq_wire_next_head(qp);
		any = true;
	}
	return any;
}

/*
 * The head is done, and an ACK that came past it (acked_past) completes
 * what it covers of the WQEs that were behind it: all, or up to a READ
 * or atomic still waiting for its own answer, for which it stays kept.
 */
static void krwq_wire_ack_past(struct krwq_qp *qp)
{
	struct krwq_wire_req *req = &qp->wire_req;
	u32 psn = req->acked_past_psn;
	struct krwq_swqe *w;

	krwq_wire_ack_ahead(qp, psn, true);
	if (qp->state == IB_QPS_ERR || req->await != KRWQ_WIRE_AWAIT_ANSWER)
		return;
	w = krwq_sq_entry(qp, qp->sq_tail);
	if (krwq_is_rd_atomic(w->opcode) &&
	    krwq_psn_diff(psn, req->last_psn) > 0)
		return;
	req->acked_past = false;
	if (!req->ahead && !krwq_is_rd_atomic(w->opcode) &&
	    krwq_psn_diff(psn, req->last_psn) >= 0)
		krwq_wire_done(qp, w, IB_WC_SUCCESS);
}

/*
 * An answer past the head, a READ or atomic whose own answer has not
 * come: lost, or overtaken (krwq's responder sends a long READ's later
 * responses from tx_work, after an ACK or atomic result built
 * meanwhile).  The responder took the head and went on.  An ACK is kept
 * (acked_past) to complete what it covers once the head is done, and so
 * is the first NAK or RNR NAK (nak_past), for the WQE it names.  A READ
 * response past a READ at the head says its responses were lost (the
 * responder sends them in order): the READ asks for its rest at once,
 * once until a response comes (read_gap).  An atomic, or a READ whose
 * responses may only be late, goes again at its timeout.
 */
static void krwq_wire_past_head(struct krwq_qp *qp, struct krwq_swqe *w,
				const struct krwq_wire_pkt *pkt,
				struct sk_buff_head *out)
{
	struct krwq_wire_req *req = &qp->wire_req;
	u8 type = pkt->syndrome & KRWQ_AETH_TYPE_MASK;

	if (pkt->opcode == IB_OPCODE_RC_ACKNOWLEDGE && type == KRWQ_AETH_ACK &&
	    (!req->acked_past ||
	     krwq_psn_diff(pkt->psn, req->acked_past_psn) > 0)) {
		req->acked_past = true;
		req->acked_past_psn = pkt->psn;
	}
	if (pkt->opcode == IB_OPCODE_RC_ACKNOWLEDGE && type != KRWQ_AETH_ACK &&
	    !req->nak_past) {
		req->nak_past = true;
		req->nak_past_psn = pkt->psn;
		req->nak_past_syndrome = pkt->syndrome;
	}
	if (w->opcode == IB_WR_RDMA_READ && !req->read_gap &&
	    pkt->opcode != IB_OPCODE_RC_ACKNOWLEDGE &&
	    pkt->opcode != IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE) {
		req->read_gap = true;
		krwq_wire_read_rest(qp, w, out);
	}
}

/*
 * @len bytes into the local buffers of @w (a READ's or an atomic's, never
 * inline), @off bytes in, through the completer's own regions (c_mrs): a
 * run of the send queue may hold s_mrs meanwhile.  Return: 0, or a
 * negative errno when they do not check out (a region gone, or too
 * short).
 */
static int krwq_wire_local_write(struct krwq_qp *qp, struct krwq_swqe *w,
				 u32 off, const void *buf, u32 len)
{
	struct krwq_sge_cursor dst;
	int ret;

	if (!krwq_get_mrs(qp->dev, qp->ibqp.pd, w->sg_list, w->num_sge,
			  IB_ACCESS_LOCAL_WRITE, qp->c_mrs))
		return -EFAULT;
	krwq_cursor_init(&dst, w->sg_list, w->num_sge, qp->c_mrs);
	ret = krwq_write(&dst, NULL, off);
	if (!ret)
		ret = krwq_write(&dst, buf, len);
	krwq_put_mrs(qp->c_mrs, w->num_sge);
	return ret;
}

/*
 * An RNR NAK: wait the time it names and send the WQE again, counted
 * against rnr_retry (7: for ever).  Return: true when those are used up:
 * the WQE fails with *@status.
 */
static bool krwq_wire_rnr_nak(struct krwq_qp *qp,
			      const struct krwq_wire_pkt *pkt,
			      enum ib_wc_status *status)
{
	if (qp->attr.rnr_retry != 7) {
		if (qp->rnr_tries >= qp->attr.rnr_retry) {
			*status = IB_WC_RNR_RETRY_EXC_ERR;
			return true;
		}
		qp->rnr_tries++;
	}
	krwq_count(qp->dev, KRWQ_STAT_RNR_RETRIES, 1);
	krwq_wire_go_back(&qp->wire_req);
	krwq_sq_wait(qp, KRWQ_WIRE_AWAIT_RNR,
		     krwq_rnr_jiffies(pkt->syndrome & KRWQ_AETH_VALUE_MASK));
	return false;
}

/*
 * Whether a PSN sequence error NAK of @psn says the responder took more of
 * the WQE at sq_tail than any NAK before (or, the first, than nothing).
 */
static bool krwq_wire_nak_progress(struct krwq_wire_req *req, u32 psn)
{
	if (krwq_psn_diff(psn, req->taken_psn) <= 0 ||
	    krwq_psn_diff(psn, req->last_psn) > 0)
		return false;
	req->taken_psn = psn;
	return true;
}

/*
 * A NAK.  A PSN sequence error: the responder missed packets of the head,
 * which goes again now from the PSN the NAK names, counted as a try, and
 * what went behind it goes again after it (go-back-N).  A
 * NAK that names a later PSN than the one before is progress, and the
 * tries start again: retry_cnt bounds the tries in a row that got no
 * further, not the packets a long message may lose on its way.
 * Return: true when the WQE fails with *@status (the responder's error).
 */
static bool krwq_wire_nak(struct krwq_qp *qp, const struct krwq_wire_pkt *pkt,
			  enum ib_wc_status *status)
{
	switch (pkt->syndrome & KRWQ_AETH_VALUE_MASK) {
	case KRWQ_NAK_PSN_SEQ_ERR:
		if (krwq_wire_nak_progress(&qp->wire_req, pkt->psn))
			qp->ack_tries = 0;
		qp->wire_req.resume_psn = pkt->psn;
		qp->wire_req.resume =
			krwq_psn_diff(pkt->psn, qp->wire_req.first_psn) >= 0 &&
			krwq_psn_diff(pkt->psn, qp->wire_req.last_psn) <= 0;
		qp->wire_req.timed_out = true;
		qp->wire_req.await = KRWQ_WIRE_AWAIT_NONE;
		krwq_wire_go_back(&qp->wire_req);
		qp->sq_waiting = false;
		del_timer(&qp->sq_timer);
		queue_work(krwq_wq, &qp->send_work);
		return false;
	case KRWQ_NAK_INVALID_REQ:
		*status = IB_WC_REM_INV_REQ_ERR;
		return true;
	case KRWQ_NAK_REM_ACCESS:
		*status = IB_WC_REM_ACCESS_ERR;
		return true;
	default:
		*status = IB_WC_REM_OP_ERR;
		return true;
	}
}

/*
 * The head is done, and a NAK or RNR NAK came past it (nak_past): once
 * the WQEs before its PSN are complete, the WQE it names takes it, as if
 * it came now (a sequence error sends it again, an RNR NAK waits, any
 * other NAK fails it), unless it is still past a READ or atomic head.
 */
static void krwq_wire_nak_past(struct krwq_qp *qp)
{
	struct krwq_wire_req *req = &qp->wire_req;
	struct krwq_wire_pkt pkt = {
		.opcode = IB_OPCODE_RC_ACKNOWLEDGE,
		.psn = req->nak_past_psn,
		.syndrome = req->nak_past_syndrome,
	};
	enum ib_wc_status status;
	struct krwq_swqe *w;
	bool failed;

	krwq_wire_ack_ahead(qp, pkt.psn, false);
	if (qp->state == IB_QPS_ERR || req->await != KRWQ_WIRE_AWAIT_ANSWER)
		return;
	w = krwq_sq_entry(qp, qp->sq_tail);
	if (krwq_psn_diff(pkt.psn, req->last_psn) > 0)
		return;
	req->nak_past = false;
	if ((pkt.syndrome & KRWQ_AETH_TYPE_MASK) == KRWQ_AETH_RNR_NAK)
		failed = krwq_wire_rnr_nak(qp, &pkt, &status);
	else
		failed = krwq_wire_nak(qp, &pkt, &status);
	if (failed)
		krwq_wire_done(qp, w, status);
}

/* Whether a READ response's opcode ends its READ (LAST or ONLY). */
static bool krwq_read_resp_last(u8 op)
{
	return op == IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST ||
	       op == IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY;
}

/*
 * An RDMA READ response.  The one with the PSN expected next: its payload
 * lands after what came before, and the last completes the READ; the
 * local ACK timer starts again with each, so a long READ is not sent
 * again while its responses come.  One past it: the rest of the READ is
 * asked for again (krwq_wire_read_rest()), once until the expected one
 * comes.  One that would carry the READ past its end, or that reaches
 * its end without being its last (a last response carries at least a
 * byte), fails it with BAD_RESP_ERR.  Return: true when the READ is
 * done, with *@status.
 */
static bool krwq_wire_read_resp(struct krwq_qp *qp, struct krwq_swqe *w,
				const struct krwq_wire_pkt *pkt,
				const void *payload, enum ib_wc_status *status,
				struct sk_buff_head *out)
{
	struct krwq_wire_req *req = &qp->wire_req;
	bool last = krwq_read_resp_last(pkt->opcode);
	u64 end;

	if (w->opcode != IB_WR_RDMA_READ)
		return false;
	if (krwq_psn_diff(pkt->psn, req->next_resp) > 0 &&
	    krwq_psn_diff(pkt->psn, req->last_psn) <= 0 && !req->read_gap) {
		req->read_gap = true;
		krwq_wire_read_rest(qp, w, out);
	}
	if (pkt->psn != req->next_resp)
		return false;	/* late, or a duplicate */
	req->read_gap = false;
	end = (u64)req->read_off + pkt->payload_len;
	if (end > w->length || (!last && end == w->length)) {
		*status = IB_WC_BAD_RESP_ERR;
		return true;
	}
	if (krwq_wire_local_write(qp, w, req->read_off, payload,
				  pkt->payload_len)) {
		*status = IB_WC_LOC_PROT_ERR;
		return true;
	}
	req->read_off += pkt->payload_len;
	req->next_resp = krwq_psn_add(req->next_resp, 1);
	/* progress: a resend asks for the rest only, so the tries start again */
	qp->ack_tries = 0;
	if (last) {
		*status = req->read_off == w->length ? IB_WC_SUCCESS :
						       IB_WC_BAD_RESP_ERR;
		return true;
	}
	mod_timer(&qp->sq_timer,
		  jiffies + krwq_ack_timeout_jiffies(qp->attr.timeout));
	return false;
}

/*
 * Whether @pkt is the atomic acknowledgment of @w, the head, an atomic
 * sent at first_psn; if it is, the value before goes in @w's buffer.
 * Return: 1 when it is and the value is in place, -EFAULT when it is but
 * the buffer does not check out, 0 when it is not.
 */
static int krwq_wire_atomic_ack(struct krwq_qp *qp, struct krwq_swqe *w,
				const struct krwq_wire_pkt *pkt)
{
	if (pkt->opcode != IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE ||
	    !krwq_is_atomic(w->opcode) || pkt->psn != qp->wire_req.first_psn)
		return 0;
	if (krwq_wire_local_write(qp, w, 0, &pkt->orig, sizeof(pkt->orig)))
		return -EFAULT;
	return 1;
}

/*
 * What an answer does to the head, the WQE at sq_tail.  Return: true
 * when it completes, with *@status.
 */
static bool krwq_wire_take_answer(struct krwq_qp *qp, struct krwq_swqe *w,
				  const struct krwq_wire_pkt *pkt,
				  const void *payload,
				  enum ib_wc_status *status,
				  struct sk_buff_head *out)
{
	struct krwq_wire_req *req = &qp->wire_req;
	u8 type = pkt->syndrome & KRWQ_AETH_TYPE_MASK;
	int ret;

	/* an answer to an earlier PSN than the WQE's is a stale one */
	if (krwq_psn_diff(pkt->psn, req->first_psn) < 0)
		return false;
	if (krwq_is_rd_atomic(w->opcode) &&
	    krwq_psn_diff(pkt->psn, req->last_psn) > 0 &&
	    krwq_psn_diff(pkt->psn, qp->wire_psn) < 0) {
		krwq_wire_past_head(qp, w, pkt, out);
		return false;
	}
	if (krwq_wire_headers(pkt->opcode) & KRWQ_HDR_AETH) {
		if (type == KRWQ_AETH_RNR_NAK)
			return krwq_wire_rnr_nak(qp, pkt, status);
		if (type == KRWQ_AETH_NAK)
			return krwq_wire_nak(qp, pkt, status);
	}
	*status = IB_WC_SUCCESS;
	switch (pkt->opcode) {
	case IB_OPCODE_RC_ACKNOWLEDGE:
		/* a READ or an atomic is answered by its own packets */
		return !krwq_is_rd_atomic(w->opcode) &&
		       krwq_psn_diff(pkt->psn, req->last_psn) >= 0;
	case IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE:
		ret = krwq_wire_atomic_ack(qp, w, pkt);
		if (ret < 0)
			*status = IB_WC_LOC_PROT_ERR;
		return ret != 0;
	default:
		return krwq_wire_read_resp(qp, w, pkt, payload, status, out);
	}
}

/*
 * A READ response come while the head, a READ, waits to go again
 * (krwq_wire_take_late_answer()).  The one expected next is taken as it
 * would have been in time: its data lands after what came before, the
 * resend then asks only for the rest (krwq_wire_send_rc()), and the last
 * completes the READ.  While a run of the send queue is under way
 * (sq_running) the head is the run's, to send again or to complete, so
 * every response is dropped; so is one whose end is not the READ's end
 * exactly when it is the last (or is when it is not), or whose buffer
 * does not check out.  The resend asks for those bytes again.
 * Return: whether @pkt completes the READ.
 */
static bool krwq_wire_late_read_resp(struct krwq_qp *qp, struct krwq_swqe *w,
				     const struct krwq_wire_pkt *pkt,
				     const void *payload)
{
	struct krwq_wire_req *req = &qp->wire_req;
	u8 op = pkt->opcode;
	bool last = krwq_read_resp_last(op);
	u64 end = (u64)req->read_off + pkt->payload_len;
	bool whole = end == w->length;

	if (qp->sq_running || pkt->psn != req->next_resp ||
	    op < IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST ||
	    op > IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY ||
	    end > w->length || last != whole)
		return false;
	if (krwq_wire_local_write(qp, w, req->read_off, payload,
				  pkt->payload_len))
		return false;
	req->read_off = end;
	req->next_resp = krwq_psn_add(req->next_resp, 1);
	req->read_gap = false;
	/* progress: the resend's tries start again */
	qp->ack_tries = 0;
	return last;
}

/*
 * Takes @pkt, come while the WQE at sq_tail is not waiting for an answer
 * (a PSN sequence error NAK or a timeout has it going again, or it waits
 * out an RNR NAK), if it still completes that WQE:
 *  - a SEND's or WRITE's ACK of its last PSN, sent once the responder had
 *    the whole message, maybe from a duplicate packet that filled the gap
 *    its NAK named.  Dropped, it would leave the WQE to go again to a peer
 *    that may be gone by then, as a pingpong's is once it has its last
 *    message.
 *  - an atomic's acknowledgment: the responder executed it once and
 *    answers each resend from the result it kept, so this is the answer
 *    a resend would bring.  Dropped, it left an atomic whose answers each
 *    came just after its timeout (a round trip near the local ACK
 *    timeout, as on a loaded host) to go again until RETRY_EXC_ERR.  Its
 *    result goes in place here; one whose buffer does not check out is
 *    left to its resend, whose answer fails it.
 *  - a READ's response, the one expected next (krwq_wire_late_read_resp()):
 *    its data is what the resend would bring.  Dropped, it left a READ
 *    whose first response came just after its timeout to go again until
 *    RETRY_EXC_ERR, as atomics did; taken, a response that does not
 *    complete the READ leaves the resend only the rest to ask for.
 * Return: whether @pkt completes the WQE (an atomic's result written, a
 * READ's data in place).
 */
static bool krwq_wire_take_late_answer(struct krwq_qp *qp, struct krwq_swqe *w,
				       const struct krwq_wire_pkt *pkt,
				       const void *payload)
{
	const struct krwq_wire_req *req = &qp->wire_req;

	if (!req->sent ||
	    (pkt->syndrome & KRWQ_AETH_TYPE_MASK) != KRWQ_AETH_ACK)
		return false;
	if (krwq_is_atomic(w->opcode))
		return krwq_wire_atomic_ack(qp, w, pkt) > 0;
	if (w->opcode == IB_WR_RDMA_READ)
		return krwq_wire_late_read_resp(qp, w, pkt, payload);
	return !krwq_is_rd_atomic(w->opcode) &&
	       pkt->opcode == IB_OPCODE_RC_ACKNOWLEDGE &&
	       krwq_psn_diff(pkt->psn, req->first_psn) >= 0 &&
	       krwq_psn_diff(pkt->psn, req->last_psn) >= 0;
}

/**
 * krwq_wire_answer() - an answer from the wire to RC requester @qp: an
 * acknowledgment (ACK, RNR NAK or NAK), an RDMA READ response or an
 * atomic acknowledgment, for the WQE at sq_tail (the head), which waits
 * for it, or for the WQEs sent behind it.
 * @qp: the QP the packet's BTH names, held by the caller.
 * @pkt: the packet's transport headers, checked (net.c).
 * @sgid: the packet's IP source, as a GID.
 * @dgid: its IP destination, as a GID.
 * @payload: pkt->payload_len bytes (a READ response's data).
 *
 * An answer first completes, in order, the SENDs and WRITEs it covers
 * that have another WQE sent behind them: an ACK those up to its PSN,
 * any other answer those before it.  An answer past a READ or atomic at
 * the head, whose own has not come, is charged to nothing: an ACK is
 * kept until the head is done, and a READ asks for its rest.  Then, for
 * the head:
 * an ACK of its last PSN completes a SEND or WRITE; the last READ
 * response a READ, its data in place; the atomic acknowledgment an
 * atomic, the value before in its buffer.  A READ response past the one
 * expected asks again for the rest of the READ.  An RNR NAK makes the WQE
 * wait and go again; a PSN sequence error NAK sends it again now, from
 * the PSN it names; any other
 * NAK fails it with the responder's error, and the QP goes to ERR.  An
 * ACK of a SEND's or WRITE's last PSN, or an atomic's acknowledgment,
 * completes it even while it is about to go again, or is going again (the
 * run that sends it completes it); a READ's response expected next is
 * taken while it is about to go again, and the last completes it.  An
 * answer nothing waits for (stale, duplicated, from anyone but the peer)
 * is dropped and counted in wire_rx_dropped.
 *
 * Context: softirq; takes qp->s_lock.
 */
void krwq_wire_answer(struct krwq_qp *qp, const struct krwq_wire_pkt *pkt,
		      const union ib_gid *sgid, const union ib_gid *dgid,
		      const void *payload)
{
	enum ib_wc_status status;
	struct sk_buff_head out;
	struct krwq_swqe *w;
	unsigned long flags;
	bool through, room;

	__skb_queue_head_init(&out);
	spin_lock_irqsave(&qp->s_lock, flags);
	if (qp->ibqp.qp_type != IB_QPT_RC || qp->sq_tail == qp->sq_head ||
	    !krwq_wire_from_peer(qp, sgid, dgid)) {
		krwq_count(qp->dev, KRWQ_STAT_WIRE_RX_DROPPED, 1);
		goto out;
	}
	w = krwq_sq_entry(qp, qp->sq_tail);
	if (qp->wire_req.await != KRWQ_WIRE_AWAIT_ANSWER) {
		if (!krwq_wire_take_late_answer(qp, w, pkt, payload))
			krwq_count(qp->dev, KRWQ_STAT_WIRE_RX_DROPPED, 1);
		else if (qp->sq_running)
			qp->wire_req.answered = true;
		else
			krwq_wire_done(qp, w, IB_WC_SUCCESS);
		goto out;
	}
	through = pkt->opcode == IB_OPCODE_RC_ACKNOWLEDGE &&
		  (pkt->syndrome & KRWQ_AETH_TYPE_MASK) == KRWQ_AETH_ACK;
	room = qp->wire_req.ahead &&
	       krwq_wire_ack_ahead(qp, pkt->psn, through);
	if (room) {
		if (qp->state == IB_QPS_ERR ||
		    qp->wire_req.await != KRWQ_WIRE_AWAIT_ANSWER)
			goto out;
		w = krwq_sq_entry(qp, qp->sq_tail);
	}
	if (krwq_wire_take_answer(qp, w, pkt, payload, &status, &out))
		krwq_wire_done(qp, w, status);
	else if (room && qp->wire_req.await == KRWQ_WIRE_AWAIT_ANSWER)
		/* room in the window: send_work sends what waits behind */
		queue_work(krwq_wq, &qp->send_work);
out:
	spin_unlock_irqrestore(&qp->s_lock, flags);
	krwq_tx_xmit(qp->dev, &out, flags);
}
EXPORT_SYMBOL_IF_KUNIT(krwq_wire_answer);
