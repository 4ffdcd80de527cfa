// SPDX-License-Identifier: GPL-2.0
//
// receive_queue.h - the receive queue logic of rdmavt's struct rvt_krwq,
// done over memory that C owns (see layout.h).  A ReceiveQueue is a view:
// it holds a reference to the C descriptor and nothing else, so making
// one per call costs nothing and allocates nothing.
//
// Who touches what (the memory-ordering contract):
//  - producer head: written by the producer under p_lock with a release
//    store; read by consumers with an acquire load.  In a user-mapped ring
//    user space is the producer and the value is validated on every read.
//  - kernel tail (Krwq::tail): written by consumers under c_lock with a
//    release store; read by producers with an acquire load.  For a user
//    ring it is also published to Rwq::tail, which the kernel never reads
//    back.
//  - count: a lower bound on the posted entries, read and written only
//    under c_lock, never larger than the true length.
//  - limit: written under c_lock; read without a lock only by queries.
//  - state, slots, stride, curr_wq, wq: written only with both locks held,
//    so either lock is enough to read them.
#ifndef KRWQ_RECEIVE_QUEUE_H
#define KRWQ_RECEIVE_QUEUE_H

#include "layout.h"

namespace krwq {

// Ring sizes for max_wr work requests of up to max_sge entries each.
Status compute_geometry(u32 max_wr, u32 max_sge, krwq_geometry *out);

// What take() found: enum krwq_take_outcome, scoped.
enum class TakeOutcome : int {
	kTooSmall = KRWQ_TAKE_TOO_SMALL,  // left in the ring: holds less than needed
	kMalformed = KRWQ_TAKE_MALFORMED, // consumed, but a user ring held garbage
	kEmpty = KRWQ_TAKE_EMPTY,	  // nothing to take in this state
	kTaken = KRWQ_TAKE_TAKEN,
};

// The locks each member function takes or needs are annotated
// (thread_annotations.h); the order they are taken in is module/krwq.h's.  TA_EXCL: takes the lock itself, so its caller must not
// hold it; TA_REQ: its caller holds the lock.
class ReceiveQueue {
public:
	explicit ReceiveQueue(krwq_rq *rq) : q_(*reinterpret_cast<Rq *>(rq)) {}

	void init(Krwq *kwq, void *storage, bool user, const krwq_geometry &geo, u32 max_sge)
		TA_EXCL(kwq->p_lock, kwq->c_lock);
	// *posted: WRs taken from the list (queued, or flushed in FLUSH)
	Status post(const RecvWr *wr, const RecvWr **bad_wr, const krwq_sink *sink, u32 *posted)
		TA_EXCL(q_.kwq->p_lock);
	// need: bytes the WQE's entries must hold, or it stays (kTooSmall)
	TakeOutcome take(krwq_taken *out, u32 need = 0) TA_EXCL(q_.kwq->c_lock);
	u32 count() TA_EXCL(q_.kwq->c_lock);
	void set_state(krwq_rq_state state, const krwq_sink *sink)
		TA_EXCL(q_.kwq->p_lock, q_.kwq->c_lock);
	// In FLUSH: completes up to max entries posted since, oldest first.
	u32 flush(u32 max, const krwq_sink *sink) TA_EXCL(q_.kwq->p_lock, q_.kwq->c_lock);
	krwq_rq_state state() const TA_EXCL(q_.kwq->c_lock);
	Status set_limit(u32 limit) TA_EXCL(q_.kwq->c_lock);
	// Lock-free on purpose (a query may read a limit being changed), so
	// the one unguarded read of a guarded field is exempt from the analysis.
	u32 limit() const TA_NO_ANALYSIS { return load_relaxed(q_.limit); }
	// A null new_limit keeps the armed limit, which must fit the new size.
	Status resize(void *storage, u32 max_wr, const u32 *new_limit, void **old_storage)
		TA_EXCL(q_.kwq->p_lock, q_.kwq->c_lock);

private:
	// Entries are refreshed from the shared head only when the cached
	// count drops below this, keeping consumers off the producer's line.
	static constexpr u32 kCountRefresh = 16;

	bool user_ring() const { return q_.wq != nullptr; }
	u32 max_wr() const { return q_.slots - 1; }
	u32 next(u32 idx) const { return idx + 1 == q_.slots ? 0 : idx + 1; }
	u32 occupancy(u32 head, u32 tail) const
	{
		return head >= tail ? head - tail : head + q_.slots - tail;
	}
	Rwqe *entry(u32 idx) const
	{
		return byte_offset<Rwqe>(q_.kwq->curr_wq, static_cast<usize>(idx) * q_.stride);
	}
	bool head_for_consumer(u32 *head) const TA_REQ(q_.kwq->c_lock);
	void publish_tail(u32 tail) TA_REQ(q_.kwq->c_lock);
	void empty_ring() TA_REQ(q_.kwq->p_lock, q_.kwq->c_lock);
	void refuse_user_posts() TA_REQ(q_.kwq->p_lock, q_.kwq->c_lock);
	u32 drain(u32 max, const krwq_sink *sink) TA_REQ(q_.kwq->p_lock, q_.kwq->c_lock);

	Rq &q_;
};

} // namespace krwq

#endif // KRWQ_RECEIVE_QUEUE_H
