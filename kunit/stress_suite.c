// SPDX-License-Identifier: GPL-2.0
/*
 * stress_suite.c - the KUnit suite "krwq_stress": producers and consumers
 * on kthreads spread over every CPU, against one receive ring whose state
 * and size a controller thread keeps changing, until a given number of
 * WQEs has left the ring (or, on a machine too slow for that, a time
 * bound has passed).
 *
 * Every WQE carries (producer << 32 | sequence number).  Whatever the
 * interleaving, each one leaves the ring exactly once: taken by a
 * consumer, or completed through the flush sink (when the ring moves to
 * FLUSH, or when it is posted while the ring is in FLUSH).  A bitmap per
 * producer catches a second delivery; at the end every sequence number a
 * producer got accepted must be in its bitmap, and none beyond.  Each
 * consumer and each flush sink also sees a producer's WQEs in posting
 * order.  The controller cycles the ring the way a QP goes round
 * (ACTIVE -> FLUSH (ERR) -> RESET -> POST_ONLY (INIT) -> ACTIVE), so a
 * RESET only ever finds an empty ring; it resizes the ring and arms the
 * SRQ limit between cycles.  lockdep, KASAN (or KCSAN) watch meanwhile.
 *
 * The threads come from rq_suite.c's rq_env_run(), the rings from its
 * rq_env_new()/rq_env_resize(): the module's own allocation paths.
 */
#include <kunit/test.h>
#include <linux/bitops.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "rq_env.h"

#define STRESS_DRAIN_MS 10000		/* give up on a lost WQE after this */
#define STRESS_PRODUCERS 2
#define STRESS_CONSUMERS 2
#define STRESS_MAX_SEQ BIT(22)	/* WQEs per producer, at most */
#define STRESS_MAX_SGE 2

/*
 * The dose.  Each case runs in 12 rounds (KUnit parameters, stress_rounds),
 * each with a fresh ring and its own random sequence; a round ends once
 * its WQEs have left the ring, taken or flushed, or once STRESS_ROUND_MS
 * has passed.  A round stays well under the test kernel's 30 s hung-task
 * bound even under TCG on a loaded host: KUnit's runner waits for a case
 * without a break.  The three cases move a million WQEs between them,
 * the dose make check asks for (dose.MIN in scripts/runner/dose.py) and
 * checks from what each round prints.  The SRQ case moves WQEs at a
 * third of the others' rate (every resize copies the ring), so its rounds
 * are shorter.
 */
#define STRESS_QP_WQES 30000		/* per round */
#define STRESS_SRQ_WQES 25000
#define STRESS_ROUND_MS 15000

/* stress_case flags */
#define STRESS_STATES 0x1u	/* cycle ACTIVE/FLUSH/RESET/POST_ONLY */
#define STRESS_RESIZE 0x2u	/* resize and arm the limit */

struct stress_run {
	struct kunit *test;
	struct krwq_rq *rq;
	unsigned int flags;
	u32 round;			/* from stress_rounds[] */
	u32 wqes;			/* this round's dose */
	unsigned long *seen[STRESS_PRODUCERS];	/* delivered sequence numbers */
	u32 posted[STRESS_PRODUCERS];	/* accepted; final once done */
	int producers_done;		/* atomic */
	bool stop;			/* atomic: producers, finish */
	bool drained;			/* atomic: consumers, finish */
	/* counts, all atomic */
	u64 delivered;
	u64 taken;
	u64 flushed_on_post;
	u64 flushed_on_state;
	u64 full;
	u64 rejected;
	u64 limit_events;
	u32 resizes;
	u32 cycles;
	u32 errors;
};

/* One thread's view of the order it saw WQEs leave the ring in. */
struct stress_recorder {
	struct stress_run *run;
	u64 *counter;			/* taken or flushed_* */
	u32 next[STRESS_PRODUCERS];	/* lowest sequence number still due */
};

struct stress_thread {
	struct stress_run *run;
	int id;
	void (*fn)(struct stress_thread *th);
	struct stress_recorder rec;
};

static void stress_count(u64 *counter, u64 n)
{
	__atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

/* @val: the wr_id or return value concerned */
static void stress_error(struct stress_run *run, const char *what, s64 val)
{
	if (__atomic_fetch_add(&run->errors, 1, __ATOMIC_RELAXED) < 8)
		kunit_err(run->test, "%s: %#llx", what, val);
}

/* Runs with ring locks held when it is the flush sink. */
static void stress_record(void *ctx, u64 wr_id)
{
	struct stress_recorder *rec = ctx;
	struct stress_run *run = rec->run;
	u32 p = wr_id >> 32, seq = (u32)wr_id;

	if (p >= STRESS_PRODUCERS || seq >= STRESS_MAX_SEQ) {
		stress_error(run, "a WQE nobody posted", wr_id);
		return;
	}
	if (test_and_set_bit(seq, run->seen[p]))
		stress_error(run, "delivered twice", wr_id);
	if (seq < rec->next[p])
		stress_error(run, "out of posting order", wr_id);
	rec->next[p] = seq + 1;
	stress_count(rec->counter, 1);
	stress_count(&run->delivered, 1);
}

/* Lists of 1 to 4 WRs; a refused tail of a list is posted again. */
static void stress_produce(struct stress_thread *th)
{
	struct stress_run *run = th->run;
	struct krwq_sink sink = { .flushed = stress_record, .ctx = &th->rec };
	const struct ib_recv_wr *bad;
	struct ib_recv_wr wr[4];
	struct ib_sge sge[4][STRESS_MAX_SGE];
	u32 seq = 0;
	int i, j, n, ret;

	th->rec.counter = &run->flushed_on_post;
	while (!__atomic_load_n(&run->stop, __ATOMIC_RELAXED) && seq < STRESS_MAX_SEQ - 4) {
		n = 1 + seq % 4;
		for (i = 0; i < n; i++) {
			u64 id = (u64)th->id << 32 | (seq + i);

			wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
			wr[i].wr_id = id;
			wr[i].sg_list = sge[i];
			wr[i].num_sge = (seq + i) % (STRESS_MAX_SGE + 1);
			for (j = 0; j < wr[i].num_sge; j++) {
				sge[i][j].addr = id;
				sge[i][j].length = seq + i;
				sge[i][j].lkey = j;
			}
		}
		/* PREEMPT_NONE: without this the controller never runs */
		rq_env_relax();
		bad = NULL;
		ret = krwq_rq_post(run->rq, wr, &bad, &sink).err;
		if (ret == 0) {
			seq += n;
			continue;
		}
		if (!bad || bad < wr || bad >= wr + n) {
			stress_error(run, "post: bad_wr outside the list", ret);
			break;
		}
		seq += bad - wr;	/* the WRs before bad_wr went in */
		if (ret == -KRWQ_ENOMEM) {
			stress_count(&run->full, 1);
		} else if (ret == -KRWQ_EINVAL && bad == wr) {
			/* the ring was in RESET: valid WRs are refused only then */
			stress_count(&run->rejected, 1);
		} else {
			stress_error(run, "post: unexpected error", ret);
			break;
		}
	}
	run->posted[th->id] = seq;
	__atomic_fetch_add(&run->producers_done, 1, __ATOMIC_RELEASE);
}

static void stress_consume(struct stress_thread *th)
{
	struct stress_run *run = th->run;
	struct ib_sge sge[STRESS_MAX_SGE];
	struct krwq_taken out = { .sg_list = sge };
	enum krwq_take_outcome ret;
	u32 i, seq;

	th->rec.counter = &run->taken;
	while (!__atomic_load_n(&run->drained, __ATOMIC_ACQUIRE)) {
		ret = krwq_rq_take(run->rq, &out);
		rq_env_relax();
		if (ret == KRWQ_TAKE_EMPTY)
			continue;
		if (ret != KRWQ_TAKE_TAKEN) {
			stress_error(run, "take: unexpected result", ret);
			break;
		}
		seq = (u32)out.wr_id;
		if (out.num_sge != seq % (STRESS_MAX_SGE + 1))
			stress_error(run, "take: wrong num_sge", out.wr_id);
		for (i = 0; i < out.num_sge; i++)
			if (sge[i].addr != out.wr_id || sge[i].length != seq || sge[i].lkey != i)
				stress_error(run, "take: wrong SGE", out.wr_id);
		if (out.flags & KRWQ_TAKEN_LIMIT_REACHED)
			stress_count(&run->limit_events, 1);
		stress_record(&th->rec, out.wr_id);
	}
}

static void stress_set_state(struct stress_thread *th, enum krwq_rq_state state)
{
	struct krwq_sink sink = { .flushed = stress_record, .ctx = &th->rec };

	krwq_rq_set_state(th->run->rq, state, &sink);
}

/* Lets producers and consumers run for a while in the current state. */
static void stress_pause(u32 rnd)
{
	usleep_range(50 + rnd % 200, 300 + rnd % 200);
}

/* A short stay in a state the ring passes through. */
static void stress_brief(u32 rnd)
{
	usleep_range(10 + rnd % 40, 60 + rnd % 40);
}

static void stress_resize_step(struct stress_thread *th, u32 rnd)
{
	static const u32 sizes[] = { 4, 8, 16, 31, 64, 200 };
	struct stress_run *run = th->run;
	u32 max_wr = sizes[rnd % ARRAY_SIZE(sizes)], limit = rnd % 4;
	int ret;

	/* a resize may re-arm the limit, or keep the armed one */
	ret = rq_env_resize(run->rq, max_wr, rnd & 0x100 ? &limit : NULL);
	if (ret == 0)
		run->resizes++;
	else if (ret != -KRWQ_EINVAL)	/* holds more than fits: fine */
		stress_error(run, "resize: unexpected error", ret);
	if (rnd & 0x200) {
		ret = krwq_rq_set_limit(run->rq, 1 + rnd % 3);
		if (ret && ret != -KRWQ_EINVAL)	/* a ring of max_wr < 3 refuses */
			stress_error(run, "set_limit: unexpected error", ret);
	}
}

/* The QP's side: state changes, resizes, then the final drain. */
static void stress_control(struct stress_thread *th)
{
	struct stress_run *run = th->run;
	unsigned long end = jiffies + msecs_to_jiffies(STRESS_ROUND_MS);
	u32 rnd = 0x9e3779b9u * run->round;

	th->rec.counter = &run->flushed_on_state;
	while (__atomic_load_n(&run->delivered, __ATOMIC_RELAXED) < run->wqes &&
	       !__atomic_load_n(&run->errors, __ATOMIC_RELAXED) && time_before(jiffies, end)) {
		rnd ^= rnd << 13;
		rnd ^= rnd >> 17;
		rnd ^= rnd << 5;
		if ((run->flags & STRESS_RESIZE) && (rnd & 1))
			stress_resize_step(th, rnd >> 1);
		if ((run->flags & STRESS_STATES) && (rnd & 6) == 0) {
			stress_set_state(th, KRWQ_RQ_FLUSH);	/* ERR */
			stress_brief(rnd);
			/* posts in FLUSH complete at once: nothing to drop */
			if (krwq_rq_count(run->rq))
				stress_error(run, "FLUSH left WQEs in the ring", 0);
			stress_set_state(th, KRWQ_RQ_RESET);
			stress_brief(rnd >> 3);
			stress_set_state(th, KRWQ_RQ_POST_ONLY);	/* INIT */
			stress_brief(rnd >> 6);
			stress_set_state(th, KRWQ_RQ_ACTIVE);	/* RTR */
			run->cycles++;
		}
		stress_pause(rnd >> 9);
	}

	/* Stop the producers, then let the consumers take what is left. */
	__atomic_store_n(&run->stop, true, __ATOMIC_RELAXED);
	while (__atomic_load_n(&run->producers_done, __ATOMIC_ACQUIRE) < STRESS_PRODUCERS)
		usleep_range(500, 1000);
	if (krwq_rq_get_state(run->rq) != KRWQ_RQ_ACTIVE)
		stress_set_state(th, KRWQ_RQ_ACTIVE);
	end = jiffies + msecs_to_jiffies(STRESS_DRAIN_MS);
	while (__atomic_load_n(&run->delivered, __ATOMIC_RELAXED) <
	       (u64)run->posted[0] + run->posted[1] && time_before(jiffies, end)) {
		if (__atomic_load_n(&run->errors, __ATOMIC_RELAXED))
			break;
		usleep_range(500, 1000);
	}
	__atomic_store_n(&run->drained, true, __ATOMIC_RELEASE);
}

static void stress_thread_run(void *arg)
{
	struct stress_thread *th = arg;

	th->fn(th);
}

static void stress_case(struct kunit *test, unsigned int flags, u32 wqes)
{
	const u32 *round = test->param_value;
	struct stress_thread th[1 + STRESS_PRODUCERS + STRESS_CONSUMERS];
	void *args[ARRAY_SIZE(th)];
	struct stress_run *run;
	unsigned long start;
	u32 p, missing, extra;
	u64 posted = 0;
	unsigned int i;

	run = kunit_kzalloc(test, sizeof(*run), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, run);
	run->test = test;
	run->flags = flags;
	run->round = *round;
	run->wqes = wqes;
	for (p = 0; p < STRESS_PRODUCERS; p++) {
		run->seen[p] = kvcalloc(BITS_TO_LONGS(STRESS_MAX_SEQ), sizeof(long), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, run->seen[p]);
	}
	run->rq = rq_env_new(test, 32, STRESS_MAX_SGE,
			     flags & STRESS_RESIZE ? RQ_ENV_RESIZABLE : 0);
	KUNIT_ASSERT_NOT_NULL(test, run->rq);
	krwq_rq_set_state(run->rq, KRWQ_RQ_ACTIVE, NULL);

	/* controller first: round robin puts the others on every CPU */
	memset(th, 0, sizeof(th));
	th[0] = (struct stress_thread){ .run = run, .fn = stress_control };
	for (i = 0; i < STRESS_PRODUCERS; i++)
		th[1 + i] = (struct stress_thread){ .run = run, .id = i, .fn = stress_produce };
	for (i = 0; i < STRESS_CONSUMERS; i++)
		th[1 + STRESS_PRODUCERS + i] =
			(struct stress_thread){ .run = run, .id = i, .fn = stress_consume };
	for (i = 0; i < ARRAY_SIZE(th); i++) {
		th[i].rec.run = run;
		args[i] = &th[i];
	}
	start = jiffies;
	rq_env_run(test, ARRAY_SIZE(th), stress_thread_run, args);

	/* Every accepted WQE delivered once, and nothing else. */
	for (p = 0; p < STRESS_PRODUCERS; p++) {
		missing = run->posted[p] - bitmap_weight(run->seen[p], run->posted[p]);
		extra = bitmap_weight(run->seen[p], STRESS_MAX_SEQ) -
			bitmap_weight(run->seen[p], run->posted[p]);
		KUNIT_EXPECT_EQ_MSG(test, missing, 0u, "producer %u: WQEs lost", p);
		KUNIT_EXPECT_EQ_MSG(test, extra, 0u, "producer %u: WQEs never posted", p);
		posted += run->posted[p];
		kvfree(run->seen[p]);
	}
	KUNIT_EXPECT_EQ(test, run->errors, 0u);
	KUNIT_EXPECT_EQ(test, run->delivered, posted);
	KUNIT_EXPECT_EQ(test, run->taken + run->flushed_on_post + run->flushed_on_state,
			run->delivered);
	KUNIT_EXPECT_EQ(test, krwq_rq_count(run->rq), 0u);
	KUNIT_EXPECT_GT(test, posted, 0ull);
	if (flags & STRESS_STATES)
		KUNIT_EXPECT_GT(test, run->cycles, 0u);
	if (flags & STRESS_RESIZE)
		KUNIT_EXPECT_GT(test, run->resizes, 0u);
	kunit_info(test,
		   "round %u: %llu WQEs posted on %u CPUs in %u ms: %llu taken, %llu flushed at ERR, %llu flushed on post; %u ERR/RESET/INIT/RTR cycles, %u resizes, %llu limit events, %llu ring-full and %llu RESET refusals",
		   run->round, posted, num_online_cpus(), jiffies_to_msecs(jiffies - start),
		   run->taken, run->flushed_on_state, run->flushed_on_post, run->cycles,
		   run->resizes, run->limit_events, run->full, run->rejected);
	rq_env_free(run->rq);
}

/* A QP's receive queue: the state machine under load. */
static void stress_qp_states(struct kunit *test)
{
	stress_case(test, STRESS_STATES, STRESS_QP_WQES);
}

/* An SRQ: resizes and limit events under load. */
static void stress_srq_resize(struct kunit *test)
{
	stress_case(test, STRESS_RESIZE, STRESS_SRQ_WQES);
}

/* Both at once, which no real object does, as the hardest interleaving. */
static void stress_everything(struct kunit *test)
{
	stress_case(test, STRESS_STATES | STRESS_RESIZE, STRESS_QP_WQES);
}

/* round numbers seed the controller's sequence: never 0 */
static const u32 stress_rounds[] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };

static void stress_round_desc(const u32 *round, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "round %u", *round);
}

KUNIT_ARRAY_PARAM(stress, stress_rounds, stress_round_desc);

static struct kunit_case krwq_stress_cases[] = {
	KUNIT_CASE_PARAM(stress_qp_states, stress_gen_params),
	KUNIT_CASE_PARAM(stress_srq_resize, stress_gen_params),
	KUNIT_CASE_PARAM(stress_everything, stress_gen_params),
	{}
};

static struct kunit_suite krwq_stress_suite = {
	.name = "krwq_stress",
	.test_cases = krwq_stress_cases,
};

kunit_test_suite(krwq_stress_suite);
