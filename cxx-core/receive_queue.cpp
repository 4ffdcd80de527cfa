// SPDX-License-Identifier: GPL-2.0
//
// receive_queue.cpp - post, take, flush, reset, limit and resize.
#include "receive_queue.h"

#include "spin_guard.h"

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

namespace {

// A scatter list is a few 16-byte entries, copied inline, entry by entry.
// An out-of-line memcpy() of a variable size is the kernel's `rep movsb`,
// whose start-up costs more than such a copy (and under QEMU's TCG it runs
// a byte per step); Kbuild keeps GCC from turning this loop back into one.
void copy_sges(Sge *dst, const Sge *src, u32 n)
{
	for (u32 i = 0; i < n; i++)
		dst[i] = src[i];
}

} // namespace

void ReceiveQueue::init(Krwq *kwq, void *storage, bool user, const krwq_geometry &geo, u32 max_sge)
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

// Reads the producer's head for a consumer.  A user-mapped head is
// untrusted: a value outside the ring means "nothing posted".
bool ReceiveQueue::head_for_consumer(u32 *head) const
{
	const u32 h = load_acquire(user_ring() ? q_.wq->head : q_.kwq->head);
	if (h >= q_.slots)
		return false;
	*head = h;
	return true;
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

void ReceiveQueue::publish_tail(u32 tail)
{
	store_release(q_.kwq->tail, tail);
	if (user_ring())
		store_release(q_.wq->tail, tail);
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

Status ReceiveQueue::post(const RecvWr *wr, const RecvWr **bad_wr, const krwq_sink *sink,
			  u32 *posted)
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

TakeOutcome ReceiveQueue::take(krwq_taken *out, u32 need)
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
