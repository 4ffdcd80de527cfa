// SPDX-License-Identifier: GPL-2.0
//
// host_bench.cpp - the C++ receive-queue core on the host under Google
// Benchmark, beside Boost.Lockfree's spsc_queue carrying the same WQE as
// the floor: no locks, no state, no validation, one producer and one
// consumer by contract.  The core is built from the same sources and with
// the same host seam (hostshim/host_seam.c: ring locks are spinlocks
// on __atomic builtins, rings are calloc()ed) as the GoogleTest run, at
// -O2 without sanitizers.  scripts/bench reads the JSON output (--benchmark_format=json).
#include <benchmark/benchmark.h>
#include <boost/lockfree/spsc_queue.hpp>

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <kunit/test.h>

extern "C" {
#include "rq_env.h"
}
#include "krwq_layout.h"

// host_seam.c reports allocation failures through the KUnit stand-in.
extern "C" bool kunit_host_check(kunit *, bool ok, const char *what, long long a, long long b,
				 const char *file, int line)
{
	if (!ok) {
		std::fprintf(stderr, "%s:%d: %s failed (%lld vs %lld)\n", file, line, what, a, b);
		std::abort();
	}
	return ok;
}

extern "C" void kunit_host_info(kunit *, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	std::vfprintf(stderr, fmt, ap);
	va_end(ap);
}

namespace {

constexpr unsigned kMaxSge = 4;

// The floor's element: the same bytes a krwq ring slot holds for max_sge
// entries (wr_id, num_sge padded to 8, the scatter list).
template <unsigned S> struct Wqe {
	u64 wr_id;
	u8 num_sge;
	u8 padding[7];
	ib_sge sg_list[S];
};
static_assert(sizeof(Wqe<1>) == KRWQ_RWQE_SIZE + 1 * KRWQ_SGE_SIZE, "same slot as krwq");
static_assert(sizeof(Wqe<4>) == KRWQ_RWQE_SIZE + 4 * KRWQ_SGE_SIZE, "same slot as krwq");

template <unsigned S> using Floor = boost::lockfree::spsc_queue<Wqe<S>>;

void fail(const char *what)
{
	std::fprintf(stderr, "host_bench: %s\n", what);
	std::abort();
}

// A kernel-owned ring in the state a receive queue has once its QP is RTR.
krwq_rq *new_ring(unsigned max_wr, unsigned max_sge, unsigned flags = 0)
{
	kunit t{};
	krwq_rq *rq = rq_env_new(&t, max_wr, max_sge, flags);
	if (!rq)
		fail("rq_env_new");
	krwq_rq_set_state(rq, KRWQ_RQ_ACTIVE, nullptr);
	return rq;
}

// Exact bytes of a QP's receive ring as module/rq.c allocates it: the
// struct krwq_kring header with the entries inline.
unsigned long long ring_bytes(unsigned max_wr, unsigned max_sge)
{
	krwq_geometry geo;
	if (krwq_rq_geometry(max_wr, max_sge, &geo))
		fail("krwq_rq_geometry");
	return KRWQ_KRING_SIZE + geo.ring_bytes;
}

// One WR with num_sge entries, as a consumer of ib_post_recv builds it.
struct OneWr {
	ib_sge sge[kMaxSge];
	ib_recv_wr wr{};

	explicit OneWr(unsigned num_sge)
	{
		for (unsigned i = 0; i < kMaxSge; i++)
			sge[i] = ib_sge{0x10000ull * (i + 1), 4096, 0x1234};
		wr.sg_list = sge;
		wr.num_sge = static_cast<int>(num_sge);
	}
};

struct Taken {
	ib_sge sge[kMaxSge];
	krwq_taken t{};

	Taken() { t.sg_list = sge; }
};

void krwq_post_one(krwq_rq *rq, ib_recv_wr *wr)
{
	const ib_recv_wr *bad;
	if (krwq_rq_post(rq, wr, &bad, nullptr).err)
		fail("krwq_rq_post");
}

void krwq_take_one(krwq_rq *rq, Taken *out)
{
	if (krwq_rq_take(rq, &out->t) != KRWQ_TAKE_TAKEN)
		fail("krwq_rq_take");
}

// The floor's post: the WR copied into a slot, as krwq does.
template <unsigned S> void floor_post_one(Floor<S> *q, const ib_recv_wr *wr)
{
	Wqe<S> e;
	e.wr_id = wr->wr_id;
	e.num_sge = static_cast<u8>(wr->num_sge);
	std::memcpy(e.sg_list, wr->sg_list, sizeof(ib_sge) * wr->num_sge);
	if (!q->push(e))
		fail("spsc_queue::push");
}

// The floor's take: the slot copied out, as krwq_rq_take() does.
template <unsigned S> bool floor_take_one(Floor<S> *q, Taken *out)
{
	return q->consume_one([out](const Wqe<S> &e) {
		out->t.wr_id = e.wr_id;
		out->t.num_sge = e.num_sge;
		std::memcpy(out->t.sg_list, e.sg_list, sizeof(ib_sge) * e.num_sge);
	});
}

// --- post+take pairs on one thread, on an empty ring of 256 --------------
void BM_krwq_pair(benchmark::State &state)
{
	const unsigned sge = state.range(0);
	krwq_rq *rq = new_ring(256, sge);
	OneWr w(sge);
	Taken out;

	for (auto _ : state) {
		w.wr.wr_id++;
		krwq_post_one(rq, &w.wr);
		krwq_take_one(rq, &out);
		benchmark::DoNotOptimize(out.t.wr_id);
	}
	rq_env_free(rq);
}
BENCHMARK(BM_krwq_pair)->Arg(1)->Arg(4);

template <unsigned S> void BM_floor_pair(benchmark::State &state)
{
	Floor<S> q(256);
	OneWr w(S);
	Taken out;

	for (auto _ : state) {
		w.wr.wr_id++;
		floor_post_one(&q, &w.wr);
		if (!floor_take_one(&q, &out))
			fail("spsc_queue empty");
		benchmark::DoNotOptimize(out.t.wr_id);
	}
}
BENCHMARK_TEMPLATE(BM_floor_pair, 1)->Name("BM_floor_pair/1");
BENCHMARK_TEMPLATE(BM_floor_pair, 4)->Name("BM_floor_pair/4");

// --- 32-WR lists: one post call for the list, then 32 takes --------------
constexpr unsigned kList = 32;

struct WrList {
	OneWr wrs[kList]{OneWr(1), OneWr(1), OneWr(1), OneWr(1), OneWr(1), OneWr(1), OneWr(1),
			 OneWr(1), OneWr(1), OneWr(1), OneWr(1), OneWr(1), OneWr(1), OneWr(1),
			 OneWr(1), OneWr(1), OneWr(1), OneWr(1), OneWr(1), OneWr(1), OneWr(1),
			 OneWr(1), OneWr(1), OneWr(1), OneWr(1), OneWr(1), OneWr(1), OneWr(1),
			 OneWr(1), OneWr(1), OneWr(1), OneWr(1)};

	WrList()
	{
		for (unsigned i = 0; i < kList; i++) {
			wrs[i].wr.wr_id = i;
			wrs[i].wr.next = i + 1 < kList ? &wrs[i + 1].wr : nullptr;
		}
	}
};

// krwq: the list in one krwq_rq_post() (one p_lock round trip).
void BM_krwq_list32(benchmark::State &state)
{
	krwq_rq *rq = new_ring(256, 1);
	WrList l;
	Taken out;

	for (auto _ : state) {
		krwq_post_one(rq, &l.wrs[0].wr);
		for (unsigned i = 0; i < kList; i++)
			krwq_take_one(rq, &out);
		benchmark::DoNotOptimize(out.t.wr_id);
	}
	state.counters["wr_per_iter"] = kList;
	rq_env_free(rq);
}
BENCHMARK(BM_krwq_list32);

// floor: the list copied into 32 slots with one bulk push, then 32 pops.
void BM_floor_list32(benchmark::State &state)
{
	Floor<1> q(256);
	WrList l;
	Wqe<1> batch[kList];
	Taken out;

	for (auto _ : state) {
		unsigned n = 0;
		for (const ib_recv_wr *wr = &l.wrs[0].wr; wr; wr = wr->next, n++) {
			batch[n].wr_id = wr->wr_id;
			batch[n].num_sge = static_cast<u8>(wr->num_sge);
			std::memcpy(batch[n].sg_list, wr->sg_list, sizeof(ib_sge) * wr->num_sge);
		}
		if (q.push(batch, n) != n)
			fail("spsc_queue::push(batch)");
		for (unsigned i = 0; i < kList; i++)
			if (!floor_take_one(&q, &out))
				fail("spsc_queue empty");
		benchmark::DoNotOptimize(out.t.wr_id);
	}
	state.counters["wr_per_iter"] = kList;
}
BENCHMARK(BM_floor_list32);

// --- depth sweep: post+take with the ring half full, so that successive
// operations walk every slot of the ring -----------------------------------
void BM_krwq_depth(benchmark::State &state)
{
	const unsigned depth = state.range(0);
	krwq_rq *rq = new_ring(depth, 1);
	OneWr w(1);
	Taken out;

	for (unsigned i = 0; i < depth / 2; i++)
		krwq_post_one(rq, &w.wr);
	for (auto _ : state) {
		w.wr.wr_id++;
		krwq_post_one(rq, &w.wr);
		krwq_take_one(rq, &out);
		benchmark::DoNotOptimize(out.t.wr_id);
	}
	state.counters["queue_bytes"] = static_cast<double>(ring_bytes(depth, 1));
	rq_env_free(rq);
}
BENCHMARK(BM_krwq_depth)->Arg(16)->Arg(256)->Arg(4096)->Arg(65536);

void BM_floor_depth(benchmark::State &state)
{
	const unsigned depth = state.range(0);
	Floor<1> q(depth);
	OneWr w(1);
	Taken out;

	for (unsigned i = 0; i < depth / 2; i++)
		floor_post_one(&q, &w.wr);
	for (auto _ : state) {
		w.wr.wr_id++;
		floor_post_one(&q, &w.wr);
		if (!floor_take_one(&q, &out))
			fail("spsc_queue empty");
		benchmark::DoNotOptimize(out.t.wr_id);
	}
	// boost keeps capacity + 1 elements in one allocation beside the object
	state.counters["queue_bytes"] =
		static_cast<double>(sizeof(q) + (static_cast<size_t>(depth) + 1) * sizeof(Wqe<1>));
}
BENCHMARK(BM_floor_depth)->Arg(16)->Arg(256)->Arg(4096)->Arg(65536);

// --- SRQ resize with 64K entries queued: 64K -> 128K -> 64K per iteration.
// The floor is what any copying resize must do: allocate, copy the queued
// entries, free the old ring.
constexpr unsigned kResizeWr = 65536;

void BM_krwq_srq_resize64k(benchmark::State &state)
{
	krwq_rq *rq = new_ring(kResizeWr, 1, RQ_ENV_RESIZABLE);
	OneWr w(1);

	for (unsigned i = 0; i < kResizeWr; i++)
		krwq_post_one(rq, &w.wr);
	for (auto _ : state) {
		if (rq_env_resize(rq, 2 * kResizeWr, nullptr) || rq_env_resize(rq, kResizeWr, nullptr))
			fail("rq_env_resize");
	}
	if (krwq_rq_count(rq) != kResizeWr)
		fail("resize lost entries");
	state.counters["resizes_per_iter"] = 2;
	rq_env_free(rq);
}
BENCHMARK(BM_krwq_srq_resize64k)->Unit(benchmark::kMicrosecond);

void BM_floor_srq_resize64k(benchmark::State &state)
{
	krwq_geometry geo;
	if (krwq_rq_geometry(kResizeWr, 1, &geo))
		fail("krwq_rq_geometry");
	const size_t queued = static_cast<size_t>(kResizeWr) * geo.stride;
	void *ring = std::calloc(1, geo.ring_bytes);
	if (!ring)
		fail("calloc");

	auto move_to = [&](size_t bytes) {
		void *fresh = std::calloc(1, bytes);
		if (!fresh)
			fail("calloc");
		std::memcpy(fresh, ring, queued);
		std::free(ring);
		ring = fresh;
	};
	for (auto _ : state) {
		move_to(2 * geo.ring_bytes);
		move_to(geo.ring_bytes);
		benchmark::ClobberMemory();
	}
	state.counters["resizes_per_iter"] = 2;
	std::free(ring);
}
BENCHMARK(BM_floor_srq_resize64k)->Unit(benchmark::kMicrosecond);

// --- a producer thread and a consumer thread on a ring of 256 ------------
// Both threads run the same number of iterations: every post is taken.
// A thread that finds the ring full (empty) spins briefly, then yields, so
// that on a loaded machine it does not burn the time slice its peer needs.
krwq_rq *g_shared;

void backoff(unsigned *spins)
{
	if (++*spins < 64) {
		__builtin_ia32_pause();
	} else {
		*spins = 0;
		rq_env_relax();
	}
}

void BM_krwq_threads(benchmark::State &state)
{
	OneWr w(1);
	Taken out;

	for (auto _ : state) {
		if (state.thread_index() == 0) {
			const ib_recv_wr *bad;
			int ret;

			unsigned spins = 0;

			w.wr.wr_id++;
			while ((ret = krwq_rq_post(g_shared, &w.wr, &bad, nullptr).err) == -KRWQ_ENOMEM)
				backoff(&spins);
			if (ret)
				fail("krwq_rq_post");
		} else {
			unsigned spins = 0;

			while (krwq_rq_take(g_shared, &out.t) == KRWQ_TAKE_EMPTY)
				backoff(&spins);
		}
	}
}
BENCHMARK(BM_krwq_threads)->Threads(2)->UseRealTime();

Floor<1> *g_floor;

void BM_floor_threads(benchmark::State &state)
{
	OneWr w(1);
	Taken out;

	for (auto _ : state) {
		if (state.thread_index() == 0) {
			unsigned spins = 0;
			Wqe<1> e;

			e.wr_id = ++w.wr.wr_id;
			e.num_sge = 1;
			e.sg_list[0] = w.sge[0];
			while (!g_floor->push(e))
				backoff(&spins);
		} else {
			unsigned spins = 0;

			while (!floor_take_one(g_floor, &out))
				backoff(&spins);
		}
	}
}
BENCHMARK(BM_floor_threads)->Threads(2)->UseRealTime();

}  // namespace

int main(int argc, char **argv)
{
	g_shared = new_ring(256, 1);
	g_floor = new Floor<1>(256);
	benchmark::Initialize(&argc, argv);
	if (benchmark::ReportUnrecognizedArguments(argc, argv))
		return 1;
	benchmark::RunSpecifiedBenchmarks();
	benchmark::Shutdown();
	delete g_floor;
	rq_env_free(g_shared);
	return 0;
}
