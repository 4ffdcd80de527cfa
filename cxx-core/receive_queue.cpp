// SPDX-License-Identifier: GPL-2.0
//
// receive_queue.cpp - init, count, state, flush, limit and resize; post
// and take, the hot path, are inline in receive_queue.h.
#include "receive_queue.h"

namespace krwq {

Status compute_geometry(u32 max_wr, u32 max_sge, krwq_geometry *out)
{
	if (max_wr > KRWQ_CORE_MAX_WR || max_sge > KRWQ_CORE_MAX_SGE) {
		*out = krwq_geometry{}; // written on every path, as every out-parameter
		return Status::kInvalid;
	}
	// Both bounds keep every product below 2^32 * 2^13: no overflow.
	const u32 stride = sizeof(Rwqe) + max_sge * sizeof(Sge);
	out->slots = max_wr + 1;
	out->stride = stride;
	out->ring_bytes = static_cast<u64>(out->slots) * stride;
	return Status::kOk;
}
constexpr u64 kMaxRingBytes =
	static_cast<u64>(KRWQ_CORE_MAX_WR + 1) * (sizeof(Rwqe) + KRWQ_CORE_MAX_SGE * sizeof(Sge));
static_assert(kMaxRingBytes < (1ull << 40), "ring sizes must not overflow");
static_assert((KRWQ_CORE_MAX_SGE + 1) * sizeof(Sge) < (1u << 16), "stride fits easily in u32");
static_assert(KRWQ_CORE_MAX_SGE <= 255, "num_sge is stored in a u8");

void ReceiveQueue::init(KernelRing *kwq, void *storage, bool user, const krwq_geometry &geo,
			u32 max_sge)
{
	// Nobody else can see the queue yet, but its locks are initialised
	// (krwq_core.h), and taking them costs nothing here: every write
	// below is then under the locks that guard it, for the analysis and
	// for lockdep alike.
	q_.kwq = kwq;
	SpinGuard producer(q_.kwq->p_lock);
	SpinGuard consumer(q_.kwq->c_lock);
	q_.wq = user ? static_cast<Rwq *>(storage) : nullptr;
	q_.slots = geo.slots;
	q_.stride = geo.stride;
	q_.max_sge = static_cast<u8>(max_sge);
	q_.limit = 0;
	q_.state = KRWQ_RQ_RESET;
	kwq->curr_wq = user ? q_.wq->entries() : static_cast<Rwqe *>(storage);
	empty_ring();
	refuse_user_posts();
}

// A user-mapped ring in RESET is published full (tail one past head), so
// the provider refuses a post at once instead of writing a WQE nobody
// would take; the kernel's own tail stays where it is.
void ReceiveQueue::refuse_user_posts()
{
	q_.kwq->p_lock.assert_held();
	q_.kwq->c_lock.assert_held();
	if (user_ring())
		store_release(q_.wq->tail, next(load_relaxed(q_.kwq->head)));
}

// Caller holds both locks.
void ReceiveQueue::empty_ring()
{
	q_.kwq->p_lock.assert_held();
	q_.kwq->c_lock.assert_held();
	store_release(q_.kwq->head, 0u);
	if (user_ring())
		store_release(q_.wq->head, 0u);
	publish_tail(0);
	q_.kwq->count = 0;
}

u32 ReceiveQueue::count()
{
	SpinGuard consumer(q_.kwq->c_lock);
	u32 head = 0;
	if (!head_for_consumer(&head))
		return 0;
	q_.kwq->count = occupancy(head, load_relaxed(q_.kwq->tail));
	return q_.kwq->count;
}

// Caller holds both locks.  Completes up to max posted entries, oldest
// first; returns how many.
u32 ReceiveQueue::drain(u32 max, const krwq_sink *sink)
{
	q_.kwq->p_lock.assert_held();
	q_.kwq->c_lock.assert_held();
	u32 head = 0;
	u32 n = 0;
	u32 tail = load_relaxed(q_.kwq->tail);
	if (head_for_consumer(&head)) {
		for (; tail != head && n < max; tail = next(tail), n++) {
			if (sink)
				sink->flushed(sink->ctx, load_relaxed(entry(tail)->wr_id));
		}
	}
	publish_tail(tail);
	q_.kwq->count = 0; // a lower bound; take() recomputes it
	return n;
}

u32 ReceiveQueue::flush(u32 max, const krwq_sink *sink)
{
	SpinGuard producer(q_.kwq->p_lock);
	SpinGuard consumer(q_.kwq->c_lock);

	if (q_.state != KRWQ_RQ_FLUSH)
		return 0;
	return drain(max, sink);
}

void ReceiveQueue::set_state(krwq_rq_state state, const krwq_sink *sink)
{
	SpinGuard producer(q_.kwq->p_lock);
	SpinGuard consumer(q_.kwq->c_lock);

	const auto was = static_cast<krwq_rq_state>(q_.state);
	if (state == KRWQ_RQ_FLUSH)
		drain(q_.slots, sink); // a ring never holds more than slots - 1
	else if (state == KRWQ_RQ_RESET || was == KRWQ_RQ_RESET)
		empty_ring(); // leaving RESET: whatever user space wrote is gone
	q_.state = static_cast<u8>(state);
	if (state == KRWQ_RQ_RESET)
		refuse_user_posts();
}

krwq_rq_state ReceiveQueue::state() const
{
	SpinGuard consumer(q_.kwq->c_lock);
	return static_cast<krwq_rq_state>(q_.state);
}

Status ReceiveQueue::set_limit(u32 limit)
{
	SpinGuard consumer(q_.kwq->c_lock);
	if (limit > max_wr())
		return Status::kInvalid;
	store_relaxed(q_.limit, limit);
	return Status::kOk;
}

Status ReceiveQueue::resize(void *storage, u32 max_wr, const u32 *new_limit, void **old_storage)
{
	*old_storage = nullptr; // until the new storage is in place
	krwq_geometry geo{};
	if (compute_geometry(max_wr, q_.max_sge, &geo) != Status::kOk)
		return Status::kInvalid;

	// Producers and consumers are both shut out while entries move.
	SpinGuard producer(q_.kwq->p_lock);
	SpinGuard consumer(q_.kwq->c_lock);

	u32 head = 0;
	const u32 tail = load_relaxed(q_.kwq->tail);
	const u32 n = head_for_consumer(&head) ? occupancy(head, tail) : 0;
	const u32 limit = new_limit ? *new_limit : q_.limit;
	if (n >= geo.slots || limit >= geo.slots)
		return Status::kInvalid;

	Rwq *new_user = user_ring() ? static_cast<Rwq *>(storage) : nullptr;
	Rwqe *new_entries = new_user ? new_user->entries() : static_cast<Rwqe *>(storage);
	// The queued entries are at most two runs of the old ring, from the
	// tail to its end and then from slot 0; each run moves in one copy
	// (the stride is the same: max_sge does not change).
	const u32 first = n < q_.slots - tail ? n : q_.slots - tail;
	copy_bytes(new_entries, entry(tail), static_cast<usize>(first) * geo.stride);
	copy_bytes(byte_offset<char>(new_entries, static_cast<usize>(first) * geo.stride), entry(0),
		   static_cast<usize>(n - first) * geo.stride);

	*old_storage =
		user_ring() ? static_cast<void *>(q_.wq) : static_cast<void *>(q_.kwq->curr_wq);
	q_.kwq->curr_wq = new_entries;
	q_.wq = new_user;
	q_.slots = geo.slots;
	store_relaxed(q_.limit, limit);
	store_release(q_.kwq->head, n);
	if (new_user)
		store_release(new_user->head, n);
	publish_tail(0);
	if (q_.state == KRWQ_RQ_RESET)
		refuse_user_posts();
	q_.kwq->count = n;
	return Status::kOk;
}

} // namespace krwq
