// SPDX-License-Identifier: GPL-2.0
//
// rq_fuzz.cpp - libFuzzer target: the receive-queue core against a
// reference model.
//
// Each input is read as a ring (kernel-owned or user-mapped, max_wr,
// max_sge) followed by a sequence of operations: single and list posts,
// takes, counts, state changes (flush and reset among them), SRQ limit
// arm/read, resizes that grow or shrink with or without a new limit, and
// for user rings what user space may do to the mapped memory: honest
// posts, and hostile writes of head, tail and an entry's num_sge.
//
// The model is a deque of the work requests the ring should hold, with
// their scatter lists.  While user space has not moved head behind the
// kernel's back, every result is predicted exactly: error codes, bad_wr,
// the taken wr_id and SGEs, limit events, flush order, count.  Once head
// has been written by a hostile user the deque no longer describes the
// ring; until the kernel rewrites head itself (reset, flush, resize) the
// target checks what must hold anyway:
//  - the kernel's tail stays inside the ring and moves by exactly one per
//    take, and what a take returns is the entry at that tail;
//  - num_sge above max_sge is never trusted (the caller's sg_list has room
//    for max_sge entries only, so ASan sees any overrun);
//  - a take never reports "empty" while the published head shows work;
//  - count, flush, reset and resize follow the head user space published,
//    and never read or copy outside the ring;
//  - a limit event disarms the limit.
// In every mode the target also plays the kernel's lock checker: the core
// must take p_lock before c_lock, never take a lock twice, hand back each
// lock's own flags, call the flush sink under p_lock, hold whatever it
// asserts it holds (krwq_assert_held()) and return with no lock held.  Any divergence aborts with the line that found it.
#include <fuzzer/FuzzedDataProvider.h>
#include <sanitizer/asan_interface.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <vector>

#include "krwq_core.h"
#include "rq.h"

namespace {

[[noreturn]] void diverged(const char *what, int line)
{
	std::fprintf(stderr, "rq_fuzz: divergence at rq_fuzz.cpp:%d: %s\n", line, what);
	std::abort();
}

#define EXPECT(cond) \
	do { \
		if (!(cond)) \
			diverged(#cond, __LINE__); \
	} while (0)

constexpr int kEinval = -KRWQ_EINVAL;
constexpr int kEnomem = -KRWQ_ENOMEM;
constexpr unsigned kMaxOps = 4000;

// --- the lock checker (the seam's kernel half) ---------------------------

struct Locks {
	krwq_kring *kwq = nullptr;
	bool p_held = false;
	bool c_held = false;
	unsigned long p_flags = 0;
	unsigned long c_flags = 0;
	unsigned long next_flags = 0x100;
} locks;

} // namespace

extern "C" unsigned long krwq_spin_lock_irqsave(void *lock)
{
	const unsigned long flags = ++locks.next_flags;

	if (lock == &locks.kwq->p_lock) {
		EXPECT(!locks.p_held);
		EXPECT(!locks.c_held); // lock order: p_lock, then c_lock
		locks.p_held = true;
		locks.p_flags = flags;
	} else {
		EXPECT(lock == &locks.kwq->c_lock);
		EXPECT(!locks.c_held);
		locks.c_held = true;
		locks.c_flags = flags;
	}
	return flags;
}

// lockdep_assert_held(): where the core says its caller holds a lock
extern "C" void krwq_assert_held(const void *lock)
{
	if (lock == &locks.kwq->p_lock) {
		EXPECT(locks.p_held);
	} else {
		EXPECT(lock == &locks.kwq->c_lock);
		EXPECT(locks.c_held);
	}
}

extern "C" void krwq_spin_unlock_irqrestore(void *lock, unsigned long flags)
{
	if (lock == &locks.kwq->p_lock) {
		EXPECT(locks.p_held && flags == locks.p_flags);
		locks.p_held = false;
	} else {
		EXPECT(lock == &locks.kwq->c_lock);
		EXPECT(locks.c_held && flags == locks.c_flags);
		locks.c_held = false;
	}
}

namespace {

bool same_sge(const ib_sge &a, const ib_sge &b)
{
	return a.addr == b.addr && a.length == b.length && a.lkey == b.lkey;
}

// One work request as the model expects to take it back.
struct Wqe {
	uint64_t wr_id;
	unsigned num_sge;	 // as stored; may exceed max_sge in a user ring
	std::vector<ib_sge> sge; // what the slot's SGEs hold (at least num_sge if valid)
};

std::vector<uint64_t> flush_log;

void log_flushed(void *ctx, unsigned long long wr_id)
{
	(void)ctx;
	EXPECT(locks.p_held); // the sink runs under the ring lock(s)
	flush_log.push_back(wr_id);
}

const krwq_sink sink = { log_flushed, nullptr };

// Ring memory, as the module would allocate it.  A malloc and a free per
// ring cost a third of every execution, and twice that on a busy machine:
// a ring of 255-entry scatter lists is 200 KiB, which ASan maps, and
// unmaps with a TLB shootdown of every CPU.  So rings come from four
// slabs of one block, poisoned for ASan but for the bytes of the ring
// each holds: a byte read or written past a ring, or before it, is
// reported.  A resize holds two rings at once, and a ring given back
// stays poisoned until the slab is the free one given back longest ago,
// so a stale pointer into it is reported for at least two more resizes.
class RingArena {
public:
	static constexpr size_t kSlabBytes = 256 * 1024;
	static constexpr unsigned kSlabs = 4;

	RingArena()
	    : block_(static_cast<unsigned char *>(std::aligned_alloc(64, kSlabs * kSlabBytes)))
	{
		EXPECT(block_);
		ASAN_POISON_MEMORY_REGION(block_, kSlabs * kSlabBytes);
	}

	void *take(size_t bytes)
	{
		EXPECT(bytes <= kSlabBytes);
		int pick = -1;
		for (unsigned i = 0; i < kSlabs; i++)
			if (!in_use_[i] && (pick < 0 || given_back_at_[i] < given_back_at_[pick]))
				pick = static_cast<int>(i);
		EXPECT(pick >= 0);
		in_use_[pick] = true;
		unsigned char *slab = block_ + static_cast<size_t>(pick) * kSlabBytes;
		ASAN_UNPOISON_MEMORY_REGION(slab, bytes);
		return slab;
	}

	void give_back(void *p)
	{
		const size_t off = static_cast<unsigned char *>(p) - block_;
		EXPECT(off % kSlabBytes == 0 && off / kSlabBytes < kSlabs);
		const size_t i = off / kSlabBytes;
		EXPECT(in_use_[i]);
		in_use_[i] = false;
		given_back_at_[i] = ++clock_;
		ASAN_POISON_MEMORY_REGION(p, kSlabBytes);
	}

private:
	unsigned char *const block_; // kSlabs slabs, end to end
	bool in_use_[kSlabs] = {};
	unsigned long long given_back_at_[kSlabs] = {};
	unsigned long long clock_ = 0;
};

RingArena &ring_arena()
{
	static RingArena *arena = new RingArena; // lives for the process
	return *arena;
}

class Harness {
public:
	explicit Harness(FuzzedDataProvider &in) : in_(in) {}
	~Harness();
	bool setup();
	void run();

private:
	// ring memory, as the module would allocate it
	void *alloc_storage(const krwq_geometry &geo) const;
	u32 slots() const { return max_wr_ + 1; }
	u32 next(u32 i) const { return i + 1 == slots() ? 0 : i + 1; }
	u32 occupancy(u32 head, u32 tail) const
	{
		return head >= tail ? head - tail : head + slots() - tail;
	}
	krwq_rwqe *entry(u32 idx) const;
	u32 ktail() const { return __atomic_load_n(&kwq_->tail, __ATOMIC_RELAXED); }
	u32 uhead() const { return rq_.wq->head; }
	bool head_valid() const { return uhead() < slots(); }
	Wqe snapshot(u32 idx) const;
	void check_kernel_state();
	void resync_from_ring();

	// operations
	void op_post(bool list);
	void op_take();
	void op_count();
	void op_set_state();
	void op_limit();
	void op_resize();
	void op_user_post();
	void op_user_write_head();
	void op_user_write_tail();
	void op_user_write_num_sge();

	int pick_num_sge();

	FuzzedDataProvider &in_;
	bool user_ = false;
	u32 max_wr_ = 0;
	u32 max_sge_ = 0;
	u32 stride_ = 0;
	krwq_rq rq_{};
	krwq_kring *kwq_ = nullptr;
	void *storage_ = nullptr;
	ib_sge *out_sge_ = nullptr; // exactly max_sge entries

	// the model
	krwq_rq_state state_ = KRWQ_RQ_RESET;
	std::deque<Wqe> q_;
	u32 limit_ = 0;
	bool tainted_ = false; // user space moved head: q_ is void
	u32 stale_takes_ = 0;  // takes past the published head since
	uint64_t next_id_ = 1;
};

Harness::~Harness()
{
	if (storage_)
		ring_arena().give_back(storage_);
	std::free(kwq_);
	std::free(out_sge_);
	locks.kwq = nullptr;
}

void *Harness::alloc_storage(const krwq_geometry &geo) const
{
	// Exact sizes, so that ASan flags one byte read or written past the ring.
	const size_t bytes = (user_ ? sizeof(krwq_rwq) : 0) + geo.ring_bytes;
	void *p = ring_arena().take(bytes);
	std::memset(p, 0xa5, bytes); // garbage, as kvmalloc would not zero it
	if (user_)
		std::memset(p, 0, sizeof(krwq_rwq));
	return p;
}

krwq_rwqe *Harness::entry(u32 idx) const
{
	char *base = user_ ? reinterpret_cast<char *>(rq_.wq) + sizeof(krwq_rwq) :
			     static_cast<char *>(storage_);
	return reinterpret_cast<krwq_rwqe *>(base + static_cast<size_t>(idx) * stride_);
}

Wqe Harness::snapshot(u32 idx) const
{
	const krwq_rwqe *e = entry(idx);

	// one allocation: ASan records a stack for each, and a push_back per
	// entry was a fifth of every execution
	return Wqe{ e->wr_id, e->num_sge, std::vector<ib_sge>(e->sg_list, e->sg_list + max_sge_) };
}

bool Harness::setup()
{
	user_ = in_.ConsumeBool();
	max_wr_ = in_.ConsumeIntegralInRange<u32>(0, 40);
	max_sge_ = in_.ConsumeIntegralInRange<u32>(0, 6);
	if (in_.ConsumeIntegralInRange(0, 31) == 0)
		max_sge_ = KRWQ_CORE_MAX_SGE;

	krwq_geometry geo;
	EXPECT(krwq_rq_geometry(KRWQ_CORE_MAX_WR + 1, max_sge_, &geo) == kEinval);
	EXPECT(krwq_rq_geometry(max_wr_, KRWQ_CORE_MAX_SGE + 1, &geo) == kEinval);
	EXPECT(krwq_rq_geometry(max_wr_, max_sge_, &geo) == 0);
	EXPECT(geo.slots == max_wr_ + 1);
	EXPECT(geo.stride >= sizeof(krwq_rwqe) + max_sge_ * sizeof(ib_sge));
	EXPECT(geo.ring_bytes == static_cast<unsigned long long>(geo.slots) * geo.stride);
	stride_ = geo.stride;

	kwq_ = static_cast<krwq_kring *>(std::aligned_alloc(
		alignof(krwq_kring), (sizeof(krwq_kring) + alignof(krwq_kring) - 1) /
					     alignof(krwq_kring) * alignof(krwq_kring)));
	EXPECT(kwq_);
	std::memset(static_cast<void *>(kwq_), 0, sizeof(*kwq_));
	locks = Locks();
	locks.kwq = kwq_;
	storage_ = alloc_storage(geo);
	out_sge_ = static_cast<ib_sge *>(std::malloc(max_sge_ ? max_sge_ * sizeof(ib_sge) : 1));
	EXPECT(out_sge_);

	EXPECT(krwq_rq_init(&rq_, kwq_, storage_, user_ ? KRWQ_RING_USER : 0, KRWQ_CORE_MAX_WR + 1,
			    max_sge_) == kEinval);
	EXPECT(krwq_rq_init(&rq_, kwq_, storage_, user_ ? KRWQ_RING_USER : 0, max_wr_, max_sge_) ==
	       0);
	EXPECT(krwq_rq_get_state(&rq_) == KRWQ_RQ_RESET);
	EXPECT(krwq_rq_count(&rq_) == 0);
	EXPECT(krwq_rq_limit(&rq_) == 0);
	return true;
}

// What must hold after every operation, whatever user space did.
void Harness::check_kernel_state()
{
	EXPECT(!locks.p_held && !locks.c_held);
	EXPECT(rq_.slots == slots());
	EXPECT(ktail() < slots());
	EXPECT(kwq_->count <= max_wr_);
	EXPECT(krwq_rq_limit(&rq_) == limit_ || tainted_);
	if (user_) {
		EXPECT(kwq_->curr_wq == rq_.wq->wq);
		if (!tainted_)
			EXPECT(head_valid() && occupancy(uhead(), ktail()) == q_.size());
	} else {
		EXPECT(kwq_->curr_wq == storage_);
		EXPECT(kwq_->head < slots());
		EXPECT(occupancy(kwq_->head, ktail()) == q_.size());
	}
}

// The kernel wrote head itself: the ring again is what the model says.
void Harness::resync_from_ring()
{
	q_.clear();
	if (user_)
		EXPECT(head_valid());
	const u32 head = user_ ? uhead() : kwq_->head;
	for (u32 t = ktail(); t != head; t = next(t))
		q_.push_back(snapshot(t));
	if (tainted_)
		limit_ = krwq_rq_limit(&rq_);
	else
		EXPECT(krwq_rq_limit(&rq_) == limit_);
	tainted_ = false;
	stale_takes_ = 0;
}

int Harness::pick_num_sge()
{
	switch (in_.ConsumeIntegralInRange(0, 15)) {
	case 0:
		return -1 - in_.ConsumeIntegralInRange(0, 1000);
	case 1:
		return static_cast<int>(max_sge_) + 1 + in_.ConsumeIntegralInRange(0, 300);
	default:
		return in_.ConsumeIntegralInRange<int>(0, static_cast<int>(max_sge_));
	}
}

void Harness::op_post(bool list)
{
	const int n = list ? in_.ConsumeIntegralInRange(0, 8) : 1;
	const bool with_sink = in_.ConsumeIntegralInRange(0, 7) != 0;
	std::vector<ib_recv_wr> wr(n);
	std::vector<std::vector<ib_sge>> sges(n);

	for (int i = 0; i < n; i++) {
		const int num = pick_num_sge();
		const uint64_t id = next_id_++;
		// The array has room for what a valid num_sge names, no more:
		// reading an invalid count's worth would be an ASan report.
		const int room = num < 0 ? 0 : num > static_cast<int>(max_sge_) ? max_sge_ : num;
		for (int s = 0; s < room; s++)
			sges[i].push_back(ib_sge{ id << 8 | s, static_cast<u32>(id + s),
						  static_cast<u32>(s) });
		wr[i].next = i + 1 < n ? &wr[i + 1] : nullptr;
		wr[i].wr_id = id;
		wr[i].sg_list = room ? sges[i].data() : nullptr;
		wr[i].num_sge = num;
	}

	// Predict.
	int want = 0, bad_at = -1;
	std::vector<uint64_t> want_flushed;
	std::vector<Wqe> want_queued;
	const bool head_ok = !user_ || head_valid();
	u32 head = user_ ? (head_ok ? uhead() : 0) : kwq_->head;
	const u32 tail = ktail();
	// Free slots: from the model, or from what user space left in head.
	u32 room = tainted_ ? max_wr_ - occupancy(head, tail) : max_wr_ - q_.size();
	if (state_ == KRWQ_RQ_RESET || !head_ok) {
		want = kEinval;
		bad_at = 0;
	} else {
		for (int i = 0; i < n; i++) {
			if (wr[i].num_sge < 0 || wr[i].num_sge > static_cast<int>(max_sge_)) {
				want = kEinval;
				bad_at = i;
				break;
			}
			if (state_ == KRWQ_RQ_FLUSH) {
				if (!with_sink) {
					want = kEinval;
					bad_at = i;
					break;
				}
				want_flushed.push_back(wr[i].wr_id);
				continue;
			}
			if (room == 0) {
				want = kEnomem;
				bad_at = i;
				break;
			}
			room--;
			want_queued.push_back(
				Wqe{ wr[i].wr_id, static_cast<unsigned>(wr[i].num_sge), sges[i] });
			head = next(head);
		}
	}

	static const ib_recv_wr untouched{};
	const ib_recv_wr *bad = &untouched; // written on every path
	flush_log.clear();
	const u32 head_before = user_ ? uhead() : kwq_->head;
	const krwq_posted r =
		krwq_rq_post(&rq_, n ? wr.data() : nullptr, &bad, with_sink ? &sink : nullptr);
	const int ret = r.err;
	const unsigned int posted = r.count;

	EXPECT(ret == want);
	if (want)
		EXPECT(bad == (bad_at < n ? wr.data() + bad_at : nullptr));
	else
		EXPECT(bad == nullptr); // written on success too
	// the WRs before bad_wr: queued, or flushed in FLUSH
	EXPECT(posted == (want ? static_cast<unsigned>(bad_at) : static_cast<unsigned>(n)));
	EXPECT(posted == want_queued.size() + want_flushed.size());
	EXPECT(flush_log == want_flushed);
	EXPECT(ktail() == tail);
	const u32 head_after = user_ ? uhead() : kwq_->head;
	EXPECT(head_after == (head_ok ? head : head_before));
	// What was queued is in the ring, in order, SGEs and all.
	u32 at = head_before;
	for (const Wqe &w : want_queued) {
		const krwq_rwqe *e = entry(at);
		EXPECT(e->wr_id == w.wr_id && e->num_sge == w.num_sge);
		for (unsigned s = 0; s < w.num_sge; s++)
			EXPECT(same_sge(e->sg_list[s], w.sge[s]));
		at = next(at);
		if (!tainted_)
			q_.push_back(w);
	}
}

void Harness::op_take()
{
	const u32 tail = ktail();
	const Wqe at_tail = snapshot(tail);
	u32 published = 0;
	const bool head_ok = !user_ || head_valid();
	if (head_ok)
		published = occupancy(user_ ? uhead() : kwq_->head, tail);
	const u32 limit_before = krwq_rq_limit(&rq_);

	krwq_taken out;
	std::memset(&out, 0xa5, sizeof(out)); // every field is written
	out.sg_list = out_sge_;
	const krwq_take_outcome ret = krwq_rq_take(&rq_, &out);
	EXPECT(ret == KRWQ_TAKE_TAKEN || ret == KRWQ_TAKE_EMPTY || ret == KRWQ_TAKE_MALFORMED);
	EXPECT(out.sg_list == out_sge_);

	if (ret == KRWQ_TAKE_EMPTY) {
		EXPECT(out.wr_id == 0 && out.num_sge == 0 && out.flags == 0);
		// Nothing taken: possible only when not active or nothing published.
		EXPECT(state_ != KRWQ_RQ_ACTIVE || published == 0);
		EXPECT(ktail() == tail);
		if (!tainted_)
			EXPECT(q_.empty() || state_ != KRWQ_RQ_ACTIVE);
		return;
	}

	// Something was consumed: the entry at the kernel's tail, exactly once.
	EXPECT(state_ == KRWQ_RQ_ACTIVE);
	EXPECT(ktail() == next(tail));
	if (user_)
		EXPECT(rq_.wq->tail == ktail());
	EXPECT(out.wr_id == at_tail.wr_id);
	if (at_tail.num_sge > max_sge_) {
		EXPECT(ret == KRWQ_TAKE_MALFORMED);
		EXPECT(out.num_sge == 0);
	} else {
		EXPECT(ret == KRWQ_TAKE_TAKEN);
		EXPECT(out.num_sge == at_tail.num_sge);
		for (unsigned s = 0; s < out.num_sge; s++)
			EXPECT(same_sge(out_sge_[s], at_tail.sge[s]));
	}
	EXPECT((out.flags & ~KRWQ_TAKEN_LIMIT_REACHED) == 0);
	if (out.flags & KRWQ_TAKEN_LIMIT_REACHED)
		EXPECT(limit_before != 0 && krwq_rq_limit(&rq_) == 0);
	else
		EXPECT(krwq_rq_limit(&rq_) == limit_before);

	if (tainted_) {
		// Past the published head only on a stale cached count, which a
		// hostile head can leave behind; never more than a ring's worth.
		if (published == 0)
			EXPECT(++stale_takes_ <= max_wr_);
		return;
	}

	// The model: the oldest work request, with the limit rule of an SRQ.
	EXPECT(!q_.empty());
	const Wqe &want = q_.front();
	EXPECT(want.wr_id == at_tail.wr_id && want.num_sge == at_tail.num_sge);
	if (want.num_sge <= max_sge_) {
		EXPECT(out.num_sge == want.num_sge);
		for (unsigned s = 0; s < want.num_sge; s++)
			EXPECT(same_sge(out_sge_[s], want.sge[s]));
	}
	q_.pop_front();
	const bool fire = limit_ && q_.size() < limit_;
	EXPECT(!!(out.flags & KRWQ_TAKEN_LIMIT_REACHED) == fire);
	if (fire)
		limit_ = 0;
}

void Harness::op_count()
{
	u32 want;
	if (tainted_)
		want = head_valid() ? occupancy(uhead(), ktail()) : 0;
	else
		want = q_.size();
	EXPECT(krwq_rq_count(&rq_) == want);
	EXPECT(krwq_rq_get_state(&rq_) == state_);
}

void Harness::op_set_state()
{
	const auto to = static_cast<krwq_rq_state>(in_.ConsumeIntegralInRange(0, 3));
	const bool with_sink = in_.ConsumeIntegralInRange(0, 7) != 0;
	const u32 tail = ktail();
	const bool head_ok = !user_ || head_valid();
	const u32 head = user_ ? uhead() : kwq_->head;

	std::vector<uint64_t> want_flushed;
	if (to == KRWQ_RQ_FLUSH && with_sink && head_ok)
		for (u32 t = tail; t != head; t = next(t))
			want_flushed.push_back(entry(t)->wr_id);
	if (!tainted_ && to == KRWQ_RQ_FLUSH && with_sink) {
		// The model's order must be the ring's order.
		EXPECT(want_flushed.size() == q_.size());
		for (size_t i = 0; i < q_.size(); i++)
			EXPECT(want_flushed[i] == q_[i].wr_id);
	}

	flush_log.clear();
	const krwq_rq_state from = state_;
	krwq_rq_set_state(&rq_, to, with_sink ? &sink : nullptr);
	state_ = to;
	EXPECT(krwq_rq_get_state(&rq_) == to);
	EXPECT(flush_log == want_flushed);

	switch (to) {
	case KRWQ_RQ_FLUSH:
		EXPECT(ktail() == (head_ok ? head : tail));
		EXPECT(krwq_rq_count(&rq_) == 0);
		if (user_)
			EXPECT(rq_.wq->tail == ktail() && uhead() == head);
		if (head_ok)
			resync_from_ring();
		break;
	case KRWQ_RQ_RESET:
		EXPECT(ktail() == 0);
		EXPECT((user_ ? uhead() : kwq_->head) == 0);
		// published full: the provider refuses posts in RESET
		if (user_)
			EXPECT(rq_.wq->tail == next(0));
		EXPECT(krwq_rq_count(&rq_) == 0);
		resync_from_ring();
		break;
	default:
		if (from == KRWQ_RQ_RESET) {
			// leaving RESET empties the ring, whatever was written
			EXPECT(ktail() == 0);
			EXPECT((user_ ? uhead() : kwq_->head) == 0);
			if (user_)
				EXPECT(rq_.wq->tail == 0);
			resync_from_ring();
			break;
		}
		EXPECT(ktail() == tail);
		EXPECT((user_ ? uhead() : kwq_->head) == head);
		break;
	}
}

void Harness::op_limit()
{
	if (in_.ConsumeBool()) {
		const u32 v = in_.ConsumeIntegralInRange<u32>(0, max_wr_ + 2);
		const int ret = krwq_rq_set_limit(&rq_, v);
		if (v > max_wr_) {
			EXPECT(ret == kEinval);
		} else {
			EXPECT(ret == 0);
			limit_ = v;
		}
	}
	if (!tainted_)
		EXPECT(krwq_rq_limit(&rq_) == limit_);
	else
		limit_ = krwq_rq_limit(&rq_);
}

void Harness::op_resize()
{
	u32 new_max = in_.ConsumeIntegralInRange<u32>(0, 48);
	if (in_.ConsumeIntegralInRange(0, 31) == 0)
		new_max = KRWQ_CORE_MAX_WR + 1 + in_.ConsumeIntegral<uint16_t>();
	const bool with_limit = in_.ConsumeBool();
	const u32 new_limit =
		in_.ConsumeIntegralInRange<u32>(0, new_max + 2 > 50 ? 50 : new_max + 2);

	krwq_geometry geo;
	std::memset(&geo, 0xa5, sizeof(geo));
	if (krwq_rq_geometry(new_max, max_sge_, &geo) != 0) {
		EXPECT(geo.slots == 0 && geo.stride == 0 && geo.ring_bytes == 0);
		void *old = &old;
		EXPECT(krwq_rq_resize(&rq_, nullptr, new_max, with_limit ? &new_limit : nullptr,
				      &old) == kEinval);
		EXPECT(old == nullptr);
		return;
	}
	EXPECT(geo.stride == stride_);

	// What the ring holds now, as published.
	const u32 tail = ktail();
	const bool head_ok = !user_ || head_valid();
	const u32 head = user_ ? uhead() : kwq_->head;
	std::vector<Wqe> held;
	if (head_ok)
		for (u32 t = tail; t != head; t = next(t))
			held.push_back(snapshot(t));
	const u32 limit_now = krwq_rq_limit(&rq_);
	const u32 limit = with_limit ? new_limit : limit_now;
	const int want = held.size() >= geo.slots || limit >= geo.slots ? kEinval : 0;

	void *storage = alloc_storage(geo);
	void *old = &old; // written on every path
	const int ret =
		krwq_rq_resize(&rq_, storage, new_max, with_limit ? &new_limit : nullptr, &old);
	EXPECT(ret == want);
	if (ret) {
		EXPECT(old == nullptr);
		ring_arena().give_back(storage);
		EXPECT(ktail() == tail && krwq_rq_limit(&rq_) == limit_now);
		return;
	}
	EXPECT(old == storage_);
	ring_arena().give_back(old); // ASan now catches any later use of the old ring
	storage_ = storage;
	max_wr_ = new_max;
	if (user_)
		EXPECT(rq_.wq == storage);
	EXPECT(rq_.slots == slots());
	EXPECT(ktail() == 0);
	EXPECT((user_ ? uhead() : kwq_->head) == held.size());
	if (user_)
		EXPECT(rq_.wq->tail == (state_ == KRWQ_RQ_RESET ? next(uhead()) : 0u));
	EXPECT(krwq_rq_limit(&rq_) == limit);
	// The entries moved in order, whole.
	for (size_t i = 0; i < held.size(); i++) {
		const Wqe now = snapshot(i);
		EXPECT(now.wr_id == held[i].wr_id && now.num_sge == held[i].num_sge);
		for (u32 s = 0; s < max_sge_; s++)
			EXPECT(same_sge(now.sge[s], held[i].sge[s]));
	}
	if (!tainted_) {
		EXPECT(held.size() == q_.size());
		for (size_t i = 0; i < held.size(); i++)
			EXPECT(held[i].wr_id == q_[i].wr_id && held[i].num_sge == q_[i].num_sge);
	}
	limit_ = limit;
	resync_from_ring();
}

// User space posts the way rdma-core's provider does: entry, then head.
void Harness::op_user_post()
{
	const int num = in_.ConsumeIntegralInRange<int>(0, static_cast<int>(max_sge_));
	if (!head_valid())
		return;
	if (!tainted_ && q_.size() == max_wr_)
		return; // an honest user sees the ring full
	const u32 h = uhead();
	krwq_rwqe *e = entry(h);
	Wqe w{ next_id_++, static_cast<unsigned>(num), {} };
	e->wr_id = w.wr_id;
	e->num_sge = static_cast<u8>(num);
	for (u32 s = 0; s < max_sge_; s++) {
		e->sg_list[s] = ib_sge{ w.wr_id << 8 | s, static_cast<u32>(s), 0x7 };
		w.sge.push_back(e->sg_list[s]);
	}
	__atomic_store_n(&rq_.wq->head, next(h), __ATOMIC_RELEASE);
	if (!tainted_)
		q_.push_back(w);
}

void Harness::op_user_write_head()
{
	u32 v;
	switch (in_.ConsumeIntegralInRange(0, 3)) {
	case 0:
		v = in_.ConsumeIntegral<u32>();
		break;
	case 1:
		v = slots() + in_.ConsumeIntegralInRange<u32>(0, 3);
		break;
	default:
		v = in_.ConsumeIntegralInRange<u32>(0, max_wr_);
		break;
	}
	__atomic_store_n(&rq_.wq->head, v, __ATOMIC_RELEASE);
	tainted_ = true;
	stale_takes_ = 0;
}

// The kernel never reads the user's tail back: the model does not change.
void Harness::op_user_write_tail()
{
	__atomic_store_n(&rq_.wq->tail, in_.ConsumeIntegral<u32>(), __ATOMIC_RELEASE);
}

void Harness::op_user_write_num_sge()
{
	const u32 idx = in_.ConsumeIntegralInRange<u32>(0, max_wr_);
	u8 v;
	switch (in_.ConsumeIntegralInRange(0, 3)) {
	case 0: // just past what the caller's sg_list holds
		v = static_cast<u8>(max_sge_ + 1);
		break;
	case 1:
		v = static_cast<u8>(max_sge_);
		break;
	default:
		v = in_.ConsumeIntegral<u8>();
		break;
	}
	entry(idx)->num_sge = v;
	if (tainted_ || !head_valid())
		return;
	// A live entry changes in the model too; its SGEs are now whatever
	// the slot held beyond the ones posted.
	const u32 off = occupancy(idx, ktail());
	if (off < q_.size()) {
		q_[off].num_sge = v;
		q_[off].sge = snapshot(idx).sge;
	}
}

void Harness::run()
{
	for (unsigned ops = 0; ops < kMaxOps && in_.remaining_bytes(); ops++) {
		switch (in_.ConsumeIntegralInRange(0, user_ ? 13 : 9)) {
		case 0:
		case 1:
			op_post(false);
			break;
		case 2:
			op_post(true);
			break;
		case 3:
		case 4:
			op_take();
			break;
		case 5:
			op_count();
			break;
		case 6:
			op_set_state();
			break;
		case 7:
			op_limit();
			break;
		case 8:
			op_resize();
			break;
		case 9:
			// Drain the ring through take: every model entry comes back.
			for (u32 i = 0; i <= max_wr_ + 1; i++)
				op_take();
			break;
		case 10:
			op_user_post();
			break;
		case 11:
			op_user_write_head();
			break;
		case 12:
			op_user_write_tail();
			break;
		case 13:
			op_user_write_num_sge();
			break;
		}
		check_kernel_state();
	}
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FuzzedDataProvider in(data, size);
	Harness h(in);
	if (h.setup())
		h.run();
	return 0;
}
