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
//  - kernel tail (KernelRing::tail): written by consumers under c_lock with a
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
#include "spin_guard.h"

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

	void init(KernelRing *kwq, void *storage, bool user, const krwq_geometry &geo, u32 max_sge)
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

// The hot path: post() and take() run once per receive, each behind one
// seam entry point (seam.cpp).  Defined here and always inlined (GCC's
// own judgement keeps them out of line), so that entry point holds the
// whole of it rather than one more call and return.

// A scatter list is a few 16-byte entries, copied inline, entry by entry.
// An out-of-line memcpy() of a variable size is the kernel's `rep movsb`,
// whose start-up costs more than such a copy (and under QEMU's TCG it runs
// a byte per step); Kbuild keeps GCC from turning this loop back into one.
inline void copy_sges(Sge *dst, const Sge *src, u32 n)
{
	for (u32 i = 0; i < n; i++)
		dst[i] = src[i];
}

// Reads the producer's head for a consumer.  A user-mapped head is
// untrusted: a value outside the ring means "nothing posted".
inline bool ReceiveQueue::head_for_consumer(u32 *head) const
{
	const u32 h = load_acquire(user_ring() ? q_.wq->head : q_.kwq->head);
	if (h >= q_.slots)
		return false;
	*head = h;
	return true;
}

inline void ReceiveQueue::publish_tail(u32 tail)
{
	store_release(q_.kwq->tail, tail);
	if (user_ring())
		store_release(q_.wq->tail, tail);
}

[[gnu::always_inline]] inline Status ReceiveQueue::post(const RecvWr *wr, const RecvWr **bad_wr,
							const krwq_sink *sink, u32 *posted)
{
	*posted = 0;
	SpinGuard producer(q_.kwq->p_lock);

	const auto state = static_cast<krwq_rq_state>(q_.state);
	if (state == KRWQ_RQ_RESET) {
		*bad_wr = wr;
		return Status::kInvalid;
	}

	u32 head = 0;
	if (user_ring()) {
		head = load_acquire(q_.wq->head);
		if (head >= q_.slots) {
			*bad_wr = wr;
			return Status::kInvalid;
		}
	} else {
		head = load_relaxed(q_.kwq->head); // only p_lock holders write it
	}
	const u32 first_head = head;
	u32 tail = load_acquire(q_.kwq->tail);
	Status status = Status::kOk;
	u32 n = 0;

	for (; wr; wr = wr->next, n++) {
		if (wr->num_sge < 0 || static_cast<u32>(wr->num_sge) > q_.max_sge) {
			status = Status::kInvalid;
			break;
		}
		if (state == KRWQ_RQ_FLUSH) {
			if (!sink) {
				status = Status::kInvalid;
				break;
			}
			sink->flushed(sink->ctx, wr->wr_id);
			continue;
		}
		const u32 after = next(head);
		if (after == tail) {
			tail = load_acquire(q_.kwq->tail); // a consumer may have moved on
			if (after == tail) {
				status = Status::kNoMemory;
				break;
			}
		}
		Rwqe *e = entry(head);
		e->wr_id = wr->wr_id;
		e->num_sge = static_cast<u8>(wr->num_sge);
		copy_sges(e->sg_list(), wr->sg_list, static_cast<u32>(wr->num_sge));
		head = after;
	}
	if (status != Status::kOk)
		*bad_wr = wr;
	*posted = n;

	// One release store makes every entry written above visible to
	// consumers, which read the head with an acquire load.
	if (head != first_head)
		store_release(user_ring() ? q_.wq->head : q_.kwq->head, head);
	return status;
}

// take() writes every field of krwq_taken but the caller's sg_list on
// every path, empty ones included: the caller reads flags unconditionally.
static_assert(sizeof(krwq_taken) == 24 && __builtin_offsetof(krwq_taken, sg_list) == 16,
	      "a new krwq_taken field must be written by every path of take()");

[[gnu::always_inline]] inline TakeOutcome ReceiveQueue::take(krwq_taken *out, u32 need)
{
	out->wr_id = 0;
	out->num_sge = 0;
	out->flags = 0;

	SpinGuard consumer(q_.kwq->c_lock);

	if (q_.state != KRWQ_RQ_ACTIVE)
		return TakeOutcome::kEmpty;

	const u32 tail = load_relaxed(q_.kwq->tail); // only c_lock holders write it
	if (q_.kwq->count < kCountRefresh) {
		u32 head = 0;
		q_.kwq->count = head_for_consumer(&head) ? occupancy(head, tail) : 0;
		if (q_.kwq->count == 0)
			return TakeOutcome::kEmpty;
	}

	// Copy the entry once; in a user ring it may change under us, so
	// nothing below reads the ring again.
	const Rwqe *e = entry(tail);
	const u8 num_sge = load_relaxed(e->num_sge);
	out->wr_id = load_relaxed(e->wr_id);
	TakeOutcome result = TakeOutcome::kTaken;
	if (num_sge > q_.max_sge) {
		result = TakeOutcome::kMalformed; // num_sge stays 0
	} else {
		out->num_sge = num_sge;
		// the caller's array of struct ib_sge, which layout.h's
		// asserts hold Sge to
		Sge *sges = reinterpret_cast<Sge *>(out->sg_list);
		copy_sges(sges, e->sg_list(), num_sge);
		// the copy is what counts: the ring may have changed since
		u64 room = 0;
		for (u32 i = 0; i < num_sge; i++)
			room += sges[i].length;
		if (room < need)
			return TakeOutcome::kTooSmall; // tail and count unchanged
	}

	publish_tail(next(tail));
	q_.kwq->count--;

	// SRQ limit: the cached count is a lower bound, so only when it is
	// under the limit is the real length worth reading.
	if (q_.limit && q_.kwq->count < q_.limit) {
		u32 head = 0;
		q_.kwq->count = head_for_consumer(&head) ? occupancy(head, next(tail)) : 0;
		if (q_.kwq->count < q_.limit) {
			store_relaxed(q_.limit, 0u);
			out->flags |= KRWQ_TAKEN_LIMIT_REACHED;
		}
	}
	return result;
}

} // namespace krwq

#endif // KRWQ_RECEIVE_QUEUE_H
