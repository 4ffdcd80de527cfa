// SPDX-License-Identifier: GPL-2.0
/*
 * rq_cases.c - the receive-queue cases, written once against the core's
 * C API (krwq_core.h) and run both by KUnit in the test kernel (suite
 * krwq_rq, kunit/rq_suite.c) and by GoogleTest on the host, where
 * hostshim/include/kunit/test.h stands in for KUnit.  Each
 * "rdmavt:" note names the 6.1 behaviour a case would catch
 * (docs/differences.md lists them).
 */
#include <kunit/test.h>
#include <linux/string.h>

#include "rq_env.h"

#define SGE_MAX 8

/* The scatter entries a case posts for @wr_id, so a take can check them. */
static void fill_sges(struct ib_sge *sge, int n, u64 wr_id)
{
	int i;

	for (i = 0; i < n; i++) {
		sge[i].addr = (wr_id << 12) + i;
		sge[i].length = i + 1;
		sge[i].lkey = (u32)wr_id ^ (0x100u << i);
	}
}

struct wr_list {
	struct ib_recv_wr *wr;
	struct ib_sge *sge;
	int n;
};

/* @n chained WRs with ids first, first + 1, ..., each with @num_sge SGEs. */
static bool make_list(struct wr_list *l, int n, u64 first, int num_sge)
{
	int i;

	l->n = n;
	l->wr = rq_env_zalloc(sizeof(*l->wr) * n);
	l->sge = rq_env_zalloc(sizeof(*l->sge) * n * SGE_MAX);
	if (!l->wr || !l->sge)
		return false;
	for (i = 0; i < n; i++) {
		l->wr[i].next = i + 1 < n ? &l->wr[i + 1] : NULL;
		l->wr[i].wr_id = first + i;
		l->wr[i].sg_list = &l->sge[i * SGE_MAX];
		l->wr[i].num_sge = num_sge;
		fill_sges(l->wr[i].sg_list, num_sge, first + i);
	}
	return true;
}

static void free_list(struct wr_list *l)
{
	rq_env_kfree(l->wr);
	rq_env_kfree(l->sge);
}

static int post_one(struct krwq_rq *rq, u64 wr_id, int num_sge)
{
	struct ib_sge sge[SGE_MAX];
	struct ib_recv_wr wr = {
		.wr_id = wr_id,
		.sg_list = sge,
		.num_sge = num_sge,
	};
	const struct ib_recv_wr *bad = NULL;

	fill_sges(sge, num_sge < SGE_MAX ? num_sge : SGE_MAX, wr_id);
	return krwq_rq_post(rq, &wr, &bad, NULL).err;
}

static int post_range(struct krwq_rq *rq, u64 first, int n, int num_sge)
{
	int i, ret;

	for (i = 0; i < n; i++) {
		ret = post_one(rq, first + i, num_sge);
		if (ret)
			return ret;
	}
	return 0;
}

/* Takes one WQE and checks it is @wr_id with the SGEs post_one() made. */
static bool take_expect(struct kunit *t, struct krwq_rq *rq, u64 wr_id,
			int num_sge)
{
	struct ib_sge got[SGE_MAX], want[SGE_MAX];
	struct krwq_taken out = { .sg_list = got };
	enum krwq_take_outcome ret;
	int i;

	ret = krwq_rq_take(rq, &out);
	KUNIT_EXPECT_EQ(t, ret, KRWQ_TAKE_TAKEN);
	KUNIT_EXPECT_EQ(t, out.wr_id, wr_id);
	if (ret != KRWQ_TAKE_TAKEN || out.wr_id != wr_id)
		return false;
	KUNIT_EXPECT_EQ(t, out.num_sge, (u32)num_sge);
	fill_sges(want, num_sge, wr_id);
	for (i = 0; i < num_sge && i < (int)out.num_sge; i++) {
		KUNIT_EXPECT_EQ(t, got[i].addr, want[i].addr);
		KUNIT_EXPECT_EQ(t, got[i].length, want[i].length);
		KUNIT_EXPECT_EQ(t, got[i].lkey, want[i].lkey);
	}
	return true;
}

static enum krwq_take_outcome take_any(struct krwq_rq *rq,
				       struct krwq_taken *out)
{
	static struct ib_sge scratch[256]; /* contents are never read */

	out->sg_list = scratch;
	return krwq_rq_take(rq, out);
}

static struct krwq_rq *active_rq(struct kunit *t, u32 max_wr, u32 max_sge,
				 unsigned int flags)
{
	struct krwq_rq *rq = rq_env_new(t, max_wr, max_sge, flags);

	if (rq)
		krwq_rq_set_state(rq, KRWQ_RQ_ACTIVE, NULL);
	return rq;
}

struct flush_log {
	u64 ids[64];
	int n;
};

static void log_flushed(void *ctx, u64 wr_id)
{
	struct flush_log *log = ctx;

	if (log->n < 64)
		log->ids[log->n] = wr_id;
	log->n++;
}

/* --- ring sizing ------------------------------------------------------ */

static void geometry_sizes(struct kunit *t)
{
	struct krwq_geometry g;

	KUNIT_EXPECT_EQ(t, krwq_rq_geometry(7, 3, &g), 0);
	KUNIT_EXPECT_EQ(t, g.slots, 8u);
	KUNIT_EXPECT_EQ(t, g.stride, 16u + 3 * 16);
	KUNIT_EXPECT_EQ(t, g.ring_bytes, 8ull * 64);
	KUNIT_EXPECT_EQ(t, krwq_rq_geometry(0, 0, &g), 0);
	KUNIT_EXPECT_EQ(t, g.slots, 1u);
	KUNIT_EXPECT_EQ(t, g.stride, 16u);
}

static void geometry_limits(struct kunit *t)
{
	struct krwq_geometry g;

	KUNIT_EXPECT_EQ(t, krwq_rq_geometry(KRWQ_CORE_MAX_WR, KRWQ_CORE_MAX_SGE, &g), 0);
	KUNIT_EXPECT_EQ(t, g.ring_bytes,
			(u64)(KRWQ_CORE_MAX_WR + 1) * (16 + 16 * KRWQ_CORE_MAX_SGE));
	KUNIT_EXPECT_EQ(t, krwq_rq_geometry(KRWQ_CORE_MAX_WR + 1, 1, &g), -KRWQ_EINVAL);
	KUNIT_EXPECT_EQ(t, krwq_rq_geometry(0xffffffffu, 1, &g), -KRWQ_EINVAL);
	KUNIT_EXPECT_EQ(t, krwq_rq_geometry(1, KRWQ_CORE_MAX_SGE + 1, &g), -KRWQ_EINVAL);
}

static void new_ring_is_reset(struct kunit *t)
{
	struct krwq_rq *rq = rq_env_new(t, 4, 1, 0);

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_EXPECT_EQ(t, (int)krwq_rq_get_state(rq), KRWQ_RQ_RESET);
	KUNIT_EXPECT_EQ(t, krwq_rq_count(rq), 0u);
	KUNIT_EXPECT_EQ(t, rq_env_slots(rq), 5u);
	rq_env_free(rq);
}

/* --- posting ---------------------------------------------------------- */

static void post_in_reset_fails(struct kunit *t)
{
	struct krwq_rq *rq = rq_env_new(t, 4, 1, 0);
	const struct ib_recv_wr *bad = NULL;
	struct krwq_posted r;
	struct wr_list l;

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_ASSERT_TRUE(t, make_list(&l, 2, 1, 1));
	r = krwq_rq_post(rq, l.wr, &bad, NULL);
	KUNIT_EXPECT_EQ(t, r.err, -KRWQ_EINVAL);
	KUNIT_EXPECT_EQ(t, r.count, 0u);
	KUNIT_EXPECT_PTR_EQ(t, bad, &l.wr[0]);
	KUNIT_EXPECT_EQ(t, krwq_rq_count(rq), 0u);
	free_list(&l);
	rq_env_free(rq);
}

static void post_then_take(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 4, 4, 0);

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_EXPECT_EQ(t, post_one(rq, 42, 3), 0);
	KUNIT_EXPECT_EQ(t, krwq_rq_count(rq), 1u);
	take_expect(t, rq, 42, 3);
	KUNIT_EXPECT_EQ(t, krwq_rq_count(rq), 0u);
	rq_env_free(rq);
}

static void post_exact_capacity(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 16, 1, 0);

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_EXPECT_EQ(t, post_range(rq, 1, 16, 1), 0);
	KUNIT_EXPECT_EQ(t, krwq_rq_count(rq), 16u);
	KUNIT_EXPECT_EQ(t, post_one(rq, 17, 1), -KRWQ_ENOMEM);
	KUNIT_EXPECT_EQ(t, krwq_rq_count(rq), 16u);
	take_expect(t, rq, 1, 1);
	KUNIT_EXPECT_EQ(t, post_one(rq, 17, 1), 0);
	KUNIT_EXPECT_EQ(t, post_one(rq, 18, 1), -KRWQ_ENOMEM);
	rq_env_free(rq);
}

static void post_list_full_midway(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 8, 2, 0);
	const struct ib_recv_wr *bad = NULL;
	struct krwq_posted r;
	struct wr_list l;
	int i;

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_ASSERT_TRUE(t, make_list(&l, 11, 100, 2));
	r = krwq_rq_post(rq, l.wr, &bad, NULL);
	KUNIT_EXPECT_EQ(t, r.err, -KRWQ_ENOMEM);
	KUNIT_EXPECT_EQ(t, r.count, 8u);
	KUNIT_EXPECT_PTR_EQ(t, bad, &l.wr[8]);
	KUNIT_EXPECT_EQ(t, krwq_rq_count(rq), 8u);
	for (i = 0; i < 8; i++)
		take_expect(t, rq, 100 + i, 2);
	free_list(&l);
	rq_env_free(rq);
}

static void post_too_many_sge(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 8, 2, 0);
	const struct ib_recv_wr *bad = NULL;
	struct krwq_posted r;
	struct wr_list l;

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_ASSERT_TRUE(t, make_list(&l, 4, 1, 2));
	l.wr[2].num_sge = 3;
	r = krwq_rq_post(rq, l.wr, &bad, NULL);
	KUNIT_EXPECT_EQ(t, r.err, -KRWQ_EINVAL);
	KUNIT_EXPECT_EQ(t, r.count, 2u);
	KUNIT_EXPECT_PTR_EQ(t, bad, &l.wr[2]);
	/* the WRs before the bad one stay posted */
	KUNIT_EXPECT_EQ(t, krwq_rq_count(rq), 2u);
	take_expect(t, rq, 1, 2);
	take_expect(t, rq, 2, 2);
	free_list(&l);
	rq_env_free(rq);
}

static void post_negative_sge(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 8, 2, 0);
	const struct ib_recv_wr *bad = NULL;
	struct wr_list l;

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_ASSERT_TRUE(t, make_list(&l, 1, 1, 1));
	l.wr[0].num_sge = -1;
	KUNIT_EXPECT_EQ(t, krwq_rq_post(rq, l.wr, &bad, NULL).err, -KRWQ_EINVAL);
	KUNIT_EXPECT_PTR_EQ(t, bad, &l.wr[0]);
	KUNIT_EXPECT_EQ(t, krwq_rq_count(rq), 0u);
	free_list(&l);
	rq_env_free(rq);
}

static void post_zero_sge(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 2, 0, 0);
	struct ib_recv_wr wr = { .wr_id = 9, .sg_list = NULL, .num_sge = 0 };
	const struct ib_recv_wr *bad = NULL;

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_EXPECT_EQ(t, krwq_rq_post(rq, &wr, &bad, NULL).err, 0);
	take_expect(t, rq, 9, 0);
	rq_env_free(rq);
}

static void post_empty_list(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 2, 1, 0);
	const struct ib_recv_wr *bad = NULL;
	struct krwq_posted r;

	KUNIT_ASSERT_TRUE(t, rq);
	r = krwq_rq_post(rq, NULL, &bad, NULL);
	KUNIT_EXPECT_EQ(t, r.err, 0);
	KUNIT_EXPECT_EQ(t, r.count, 0u);
	KUNIT_EXPECT_PTR_EQ(t, bad, NULL);
	KUNIT_EXPECT_EQ(t, krwq_rq_count(rq), 0u);
	rq_env_free(rq);
}

static void post_copies_sges(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 2, 2, 0);
	struct ib_sge sge[2];
	struct ib_recv_wr wr = { .wr_id = 5, .sg_list = sge, .num_sge = 2 };
	const struct ib_recv_wr *bad = NULL;

	KUNIT_ASSERT_TRUE(t, rq);
	fill_sges(sge, 2, 5);
	KUNIT_EXPECT_EQ(t, krwq_rq_post(rq, &wr, &bad, NULL).err, 0);
	/* the caller may reuse its WR and SGEs as soon as post returns */
	fill_sges(sge, 2, 77);
	wr.wr_id = 77;
	take_expect(t, rq, 5, 2);
	rq_env_free(rq);
}

static void post_wraps_in_order(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 5, 1, 0);
	u64 next_post = 1, next_take = 1;
	int round;

	KUNIT_ASSERT_TRUE(t, rq);
	for (round = 0; round < 20; round++) {
		int n = 1 + round % 5, i;

		KUNIT_EXPECT_EQ(t, post_range(rq, next_post, n, 1), 0);
		next_post += n;
		for (i = 0; i < n; i++)
			take_expect(t, rq, next_take++, 1);
	}
	KUNIT_EXPECT_EQ(t, krwq_rq_count(rq), 0u);
	rq_env_free(rq);
}

static void post_in_init_not_taken(struct kunit *t)
{
	struct krwq_rq *rq = rq_env_new(t, 4, 1, 0);
	struct krwq_taken out;

	KUNIT_ASSERT_TRUE(t, rq);
	krwq_rq_set_state(rq, KRWQ_RQ_POST_ONLY, NULL);
	KUNIT_EXPECT_EQ(t, post_one(rq, 1, 1), 0);
	KUNIT_EXPECT_EQ(t, take_any(rq, &out), KRWQ_TAKE_EMPTY);
	KUNIT_EXPECT_EQ(t, krwq_rq_count(rq), 1u);
	krwq_rq_set_state(rq, KRWQ_RQ_ACTIVE, NULL);
	take_expect(t, rq, 1, 1);
	rq_env_free(rq);
}

static void post_in_error_flushes(struct kunit *t)
{
	struct krwq_rq *rq = rq_env_new(t, 4, 1, 0);
	struct flush_log log = { .n = 0 };
	struct krwq_sink sink = { .flushed = log_flushed, .ctx = &log };
	const struct ib_recv_wr *bad = NULL;
	struct krwq_posted r;
	struct wr_list l;

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_ASSERT_TRUE(t, make_list(&l, 6, 10, 1));
	krwq_rq_set_state(rq, KRWQ_RQ_FLUSH, &sink);
	/* more WRs than the ring holds: none is queued, all complete */
	r = krwq_rq_post(rq, l.wr, &bad, &sink);
	KUNIT_EXPECT_EQ(t, r.err, 0);
	KUNIT_EXPECT_EQ(t, r.count, 6u);	/* flushed WRs count as posted */
	KUNIT_EXPECT_EQ(t, log.n, 6);
	KUNIT_EXPECT_EQ(t, log.ids[0], 10ull);
	KUNIT_EXPECT_EQ(t, log.ids[5], 15ull);
	KUNIT_EXPECT_EQ(t, krwq_rq_count(rq), 0u);
	free_list(&l);
	rq_env_free(rq);
}

static void post_in_error_checks_sge(struct kunit *t)
{
	struct krwq_rq *rq = rq_env_new(t, 4, 1, 0);
	struct flush_log log = { .n = 0 };
	struct krwq_sink sink = { .flushed = log_flushed, .ctx = &log };
	const struct ib_recv_wr *bad = NULL;
	struct krwq_posted r;
	struct wr_list l;

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_ASSERT_TRUE(t, make_list(&l, 3, 1, 1));
	l.wr[1].num_sge = 2;
	krwq_rq_set_state(rq, KRWQ_RQ_FLUSH, &sink);
	r = krwq_rq_post(rq, l.wr, &bad, &sink);
	KUNIT_EXPECT_EQ(t, r.err, -KRWQ_EINVAL);
	KUNIT_EXPECT_EQ(t, r.count, 1u);
	KUNIT_EXPECT_PTR_EQ(t, bad, &l.wr[1]);
	KUNIT_EXPECT_EQ(t, log.n, 1);
	free_list(&l);
	rq_env_free(rq);
}

static void post_in_error_needs_sink(struct kunit *t)
{
	struct krwq_rq *rq = rq_env_new(t, 4, 1, 0);

	KUNIT_ASSERT_TRUE(t, rq);
	krwq_rq_set_state(rq, KRWQ_RQ_FLUSH, NULL);
	KUNIT_EXPECT_EQ(t, post_one(rq, 1, 1), -KRWQ_EINVAL);
	rq_env_free(rq);
}

/* --- taking ----------------------------------------------------------- */

static void take_empty(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 4, 1, 0);
	struct krwq_taken out;

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_EXPECT_EQ(t, take_any(rq, &out), KRWQ_TAKE_EMPTY);
	KUNIT_EXPECT_EQ(t, post_one(rq, 1, 1), 0);
	KUNIT_EXPECT_EQ(t, take_any(rq, &out), KRWQ_TAKE_TAKEN);
	KUNIT_EXPECT_EQ(t, take_any(rq, &out), KRWQ_TAKE_EMPTY);
	rq_env_free(rq);
}

/*
 * A take for a message larger than the oldest WQE holds leaves that WQE
 * where it is: the next take finds it again.
 */
static void take_fitting_leaves_small(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 4, 3, 0);
	struct ib_sge got[SGE_MAX];
	struct krwq_taken out = { .sg_list = got };

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_EXPECT_EQ(t, krwq_rq_take_fitting(rq, &out, 1), KRWQ_TAKE_EMPTY);
	KUNIT_EXPECT_EQ(t, post_one(rq, 7, 3), 0);	/* holds 1 + 2 + 3 bytes */
	KUNIT_EXPECT_EQ(t, post_one(rq, 8, 3), 0);
	KUNIT_EXPECT_EQ(t, krwq_rq_take_fitting(rq, &out, 7), KRWQ_TAKE_TOO_SMALL);
	KUNIT_EXPECT_EQ(t, out.wr_id, 7ull);
	KUNIT_EXPECT_EQ(t, krwq_rq_count(rq), 2u);
	KUNIT_EXPECT_EQ(t, krwq_rq_take_fitting(rq, &out, 6), KRWQ_TAKE_TAKEN);
	KUNIT_EXPECT_EQ(t, out.wr_id, 7ull);
	KUNIT_EXPECT_EQ(t, out.num_sge, 3u);
	KUNIT_EXPECT_TRUE(t, take_expect(t, rq, 8, 3));
	rq_env_free(rq);
}

static void take_only_when_active(struct kunit *t)
{
	static const enum krwq_rq_state idle[] = {
		KRWQ_RQ_RESET, KRWQ_RQ_POST_ONLY, KRWQ_RQ_FLUSH,
	};
	struct krwq_rq *rq = active_rq(t, 4, 1, 0);
	struct krwq_taken out;
	int i;

	KUNIT_ASSERT_TRUE(t, rq);
	for (i = 0; i < 3; i++) {
		krwq_rq_set_state(rq, KRWQ_RQ_ACTIVE, NULL);
		KUNIT_EXPECT_EQ(t, post_one(rq, i, 1), 0);
		krwq_rq_set_state(rq, idle[i], NULL);
		KUNIT_EXPECT_EQ(t, take_any(rq, &out), KRWQ_TAKE_EMPTY);
	}
	rq_env_free(rq);
}

static void take_fifo_long_run(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 64, 4, 0);
	const struct ib_recv_wr *bad = NULL;
	u64 next_take = 0;
	struct wr_list l;
	int round, i;

	KUNIT_ASSERT_TRUE(t, rq);
	for (round = 0; round < 50; round++) {
		KUNIT_ASSERT_TRUE(t, make_list(&l, 1 + round % 40, next_take, 1 + round % 4));
		KUNIT_EXPECT_EQ(t, krwq_rq_post(rq, l.wr, &bad, NULL).err, 0);
		for (i = 0; i < l.n; i++)
			take_expect(t, rq, next_take++, 1 + round % 4);
		free_list(&l);
	}
	rq_env_free(rq);
}

/* rdmavt: a bad lkey consumed the WQE but left count alone (defect 6). */
static void count_never_exceeds_length(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 40, 1, 0);
	struct krwq_taken out;
	u32 posted = 0, taken = 0;
	int i;

	KUNIT_ASSERT_TRUE(t, rq);
	for (i = 0; i < 200; i++) {
		if ((i * 7) % 3 != 0 && posted - taken < 40) {
			KUNIT_EXPECT_EQ(t, post_one(rq, posted, 1), 0);
			posted++;
		} else if (take_any(rq, &out) == KRWQ_TAKE_TAKEN) {
			KUNIT_EXPECT_EQ(t, out.wr_id, (u64)taken);
			taken++;
		}
		KUNIT_EXPECT_TRUE(t, rq_env_cached_count(rq) <= posted - taken);
	}
	KUNIT_EXPECT_EQ(t, krwq_rq_count(rq), posted - taken);
	rq_env_free(rq);
}

static void cached_count_refresh(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 64, 1, 0);
	int i;

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_EXPECT_EQ(t, post_range(rq, 0, 40, 1), 0);
	take_expect(t, rq, 0, 1);
	/* the take refreshed the cache from head: 39 remain */
	KUNIT_EXPECT_EQ(t, rq_env_cached_count(rq), 39u);
	KUNIT_EXPECT_EQ(t, post_range(rq, 40, 10, 1), 0);
	for (i = 1; i < 50; i++)
		take_expect(t, rq, i, 1);
	KUNIT_EXPECT_EQ(t, rq_env_cached_count(rq), 0u);
	rq_env_free(rq);
}

/* --- the SRQ limit ---------------------------------------------------- */

static int drain_until_event(struct kunit *t, struct krwq_rq *rq, int max_takes)
{
	struct krwq_taken out;
	int i;

	for (i = 0; i < max_takes; i++) {
		if (take_any(rq, &out) != KRWQ_TAKE_TAKEN)
			return -1;
		if (out.flags & KRWQ_TAKEN_LIMIT_REACHED)
			return i;
	}
	return -1;
}

static void limit_fires_once(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 10, 1, RQ_ENV_RESIZABLE);

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_EXPECT_EQ(t, post_range(rq, 0, 10, 1), 0);
	KUNIT_EXPECT_EQ(t, krwq_rq_set_limit(rq, 5), 0);
	KUNIT_EXPECT_EQ(t, krwq_rq_limit(rq), 5u);
	/* the sixth take leaves 4 < 5 entries: that one reports the event */
	KUNIT_EXPECT_EQ(t, drain_until_event(t, rq, 10), 5);
	KUNIT_EXPECT_EQ(t, krwq_rq_limit(rq), 0u);
	/* disarmed: the remaining takes report nothing */
	KUNIT_EXPECT_EQ(t, drain_until_event(t, rq, 4), -1);
	rq_env_free(rq);
}

static void limit_rearm(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 10, 1, RQ_ENV_RESIZABLE);

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_EXPECT_EQ(t, post_range(rq, 0, 4, 1), 0);
	KUNIT_EXPECT_EQ(t, krwq_rq_set_limit(rq, 2), 0);
	KUNIT_EXPECT_EQ(t, drain_until_event(t, rq, 4), 2);
	KUNIT_EXPECT_EQ(t, post_range(rq, 4, 6, 1), 0);
	KUNIT_EXPECT_EQ(t, krwq_rq_set_limit(rq, 3), 0);
	KUNIT_EXPECT_EQ(t, drain_until_event(t, rq, 7), 4);
	rq_env_free(rq);
}

static void limit_above_max_wr(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 10, 1, RQ_ENV_RESIZABLE);

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_EXPECT_EQ(t, krwq_rq_set_limit(rq, 4), 0);
	KUNIT_EXPECT_EQ(t, krwq_rq_set_limit(rq, 11), -KRWQ_EINVAL);
	KUNIT_EXPECT_EQ(t, krwq_rq_limit(rq), 4u);
	KUNIT_EXPECT_EQ(t, krwq_rq_set_limit(rq, 10), 0);
	KUNIT_EXPECT_EQ(t, krwq_rq_limit(rq), 10u);
	rq_env_free(rq);
}

static void limit_zero_disarms(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 10, 1, RQ_ENV_RESIZABLE);

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_EXPECT_EQ(t, post_range(rq, 0, 3, 1), 0);
	KUNIT_EXPECT_EQ(t, krwq_rq_set_limit(rq, 8), 0);
	KUNIT_EXPECT_EQ(t, krwq_rq_set_limit(rq, 0), 0);
	KUNIT_EXPECT_EQ(t, drain_until_event(t, rq, 3), -1);
	rq_env_free(rq);
}

static void limit_quiet_above(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 40, 1, RQ_ENV_RESIZABLE);

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_EXPECT_EQ(t, post_range(rq, 0, 40, 1), 0);
	KUNIT_EXPECT_EQ(t, krwq_rq_set_limit(rq, 3), 0);
	/* 37 takes leave 3 entries, not below 3: no event, still armed */
	KUNIT_EXPECT_EQ(t, drain_until_event(t, rq, 37), -1);
	KUNIT_EXPECT_EQ(t, krwq_rq_limit(rq), 3u);
	/* the next leaves 2 < 3 */
	KUNIT_EXPECT_EQ(t, drain_until_event(t, rq, 1), 0);
	rq_env_free(rq);
}

/* --- flush and reset -------------------------------------------------- */

static void flush_in_order(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 8, 1, 0);
	struct flush_log log = { .n = 0 };
	struct krwq_sink sink = { .flushed = log_flushed, .ctx = &log };
	struct krwq_taken out;
	int i;

	KUNIT_ASSERT_TRUE(t, rq);
	/* move head and tail off zero so the flush has to wrap */
	KUNIT_EXPECT_EQ(t, post_range(rq, 0, 6, 1), 0);
	for (i = 0; i < 6; i++)
		take_any(rq, &out);
	KUNIT_EXPECT_EQ(t, post_range(rq, 100, 7, 1), 0);
	take_expect(t, rq, 100, 1);
	krwq_rq_set_state(rq, KRWQ_RQ_FLUSH, &sink);
	KUNIT_EXPECT_EQ(t, log.n, 6);
	for (i = 0; i < 6 && i < log.n; i++)
		KUNIT_EXPECT_EQ(t, log.ids[i], 101ull + i);
	KUNIT_EXPECT_EQ(t, krwq_rq_count(rq), 0u);
	KUNIT_EXPECT_EQ(t, take_any(rq, &out), KRWQ_TAKE_EMPTY);
	rq_env_free(rq);
}

static void flush_twice_is_empty(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 8, 1, 0);
	struct flush_log log = { .n = 0 };
	struct krwq_sink sink = { .flushed = log_flushed, .ctx = &log };

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_EXPECT_EQ(t, post_range(rq, 0, 3, 1), 0);
	krwq_rq_set_state(rq, KRWQ_RQ_FLUSH, &sink);
	krwq_rq_set_state(rq, KRWQ_RQ_FLUSH, &sink);
	KUNIT_EXPECT_EQ(t, log.n, 3);
	rq_env_free(rq);
}

/* rdmavt: RESET kept head, tail and count; a stale count let the
 * consumer take slots that were never posted (defect 4).
 */
static void reset_empties(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 32, 1, 0);
	struct krwq_taken out;

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_EXPECT_EQ(t, post_range(rq, 0, 30, 1), 0);
	take_expect(t, rq, 0, 1);
	KUNIT_EXPECT_EQ(t, rq_env_cached_count(rq), 29u);
	krwq_rq_set_state(rq, KRWQ_RQ_RESET, NULL);
	KUNIT_EXPECT_EQ(t, krwq_rq_count(rq), 0u);
	KUNIT_EXPECT_EQ(t, rq_env_cached_count(rq), 0u);
	krwq_rq_set_state(rq, KRWQ_RQ_POST_ONLY, NULL);
	krwq_rq_set_state(rq, KRWQ_RQ_ACTIVE, NULL);
	KUNIT_EXPECT_EQ(t, take_any(rq, &out), KRWQ_TAKE_EMPTY);
	rq_env_free(rq);
}

static void reset_after_error_reuse(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 8, 2, 0);
	struct flush_log log = { .n = 0 };
	struct krwq_sink sink = { .flushed = log_flushed, .ctx = &log };
	struct krwq_taken out;

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_EXPECT_EQ(t, post_range(rq, 0, 5, 2), 0);
	take_expect(t, rq, 0, 2);
	krwq_rq_set_state(rq, KRWQ_RQ_FLUSH, &sink);
	krwq_rq_set_state(rq, KRWQ_RQ_RESET, NULL);
	krwq_rq_set_state(rq, KRWQ_RQ_POST_ONLY, NULL);
	KUNIT_EXPECT_EQ(t, post_range(rq, 50, 2, 2), 0);
	krwq_rq_set_state(rq, KRWQ_RQ_ACTIVE, NULL);
	take_expect(t, rq, 50, 2);
	take_expect(t, rq, 51, 2);
	KUNIT_EXPECT_EQ(t, take_any(rq, &out), KRWQ_TAKE_EMPTY);
	KUNIT_EXPECT_EQ(t, log.n, 4);
	rq_env_free(rq);
}

/* --- resize ----------------------------------------------------------- */

/* rdmavt: resizing a ring that was never user-mapped read the unused
 * user indices (0/0) and dropped every posted WR (defect 3).
 */
static void resize_keeps_order(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 6, 2, RQ_ENV_RESIZABLE);
	int i;

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_EXPECT_EQ(t, post_range(rq, 0, 5, 2), 0);
	for (i = 0; i < 4; i++)
		take_expect(t, rq, i, 2);
	KUNIT_EXPECT_EQ(t, post_range(rq, 5, 5, 2), 0);	/* wraps */
	KUNIT_EXPECT_EQ(t, rq_env_resize(rq, 20, NULL), 0);
	KUNIT_EXPECT_EQ(t, rq_env_slots(rq), 21u);
	KUNIT_EXPECT_EQ(t, krwq_rq_count(rq), 6u);
	KUNIT_EXPECT_EQ(t, post_range(rq, 10, 14, 2), 0);
	KUNIT_EXPECT_EQ(t, post_one(rq, 24, 2), -KRWQ_ENOMEM);
	for (i = 4; i < 24; i++)
		take_expect(t, rq, i, 2);
	rq_env_free(rq);
}

static void resize_too_small(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 10, 1, RQ_ENV_RESIZABLE);
	int i;

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_EXPECT_EQ(t, post_range(rq, 0, 6, 1), 0);
	KUNIT_EXPECT_EQ(t, rq_env_resize(rq, 5, NULL), -KRWQ_EINVAL);
	KUNIT_EXPECT_EQ(t, rq_env_slots(rq), 11u);
	for (i = 0; i < 6; i++)
		take_expect(t, rq, i, 1);
	rq_env_free(rq);
}

static void resize_to_exact_fit(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 10, 1, RQ_ENV_RESIZABLE);
	int i;

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_EXPECT_EQ(t, post_range(rq, 0, 6, 1), 0);
	KUNIT_EXPECT_EQ(t, rq_env_resize(rq, 6, NULL), 0);
	KUNIT_EXPECT_EQ(t, post_one(rq, 6, 1), -KRWQ_ENOMEM);
	for (i = 0; i < 6; i++)
		take_expect(t, rq, i, 1);
	KUNIT_EXPECT_EQ(t, post_range(rq, 6, 6, 1), 0);
	rq_env_free(rq);
}

static void resize_below_limit(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 10, 1, RQ_ENV_RESIZABLE);

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_EXPECT_EQ(t, krwq_rq_set_limit(rq, 8), 0);
	KUNIT_EXPECT_EQ(t, rq_env_resize(rq, 7, NULL), -KRWQ_EINVAL);
	KUNIT_EXPECT_EQ(t, rq_env_resize(rq, 8, NULL), 0);
	KUNIT_EXPECT_EQ(t, krwq_rq_limit(rq), 8u);
	rq_env_free(rq);
}

/* rdmavt checks a limit given with the resize against the new size */
static void resize_with_new_limit(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 10, 1, RQ_ENV_RESIZABLE);
	u32 limit = 6;

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_EXPECT_EQ(t, post_range(rq, 0, 2, 1), 0);
	KUNIT_EXPECT_EQ(t, krwq_rq_set_limit(rq, 8), 0);
	/* the armed 8 alone would not fit 5, but it is replaced */
	KUNIT_EXPECT_EQ(t, rq_env_resize(rq, 5, &limit), -KRWQ_EINVAL);
	limit = 3;
	KUNIT_EXPECT_EQ(t, rq_env_resize(rq, 5, &limit), 0);
	KUNIT_EXPECT_EQ(t, krwq_rq_limit(rq), 3u);
	KUNIT_EXPECT_EQ(t, rq_env_slots(rq), 6u);
	limit = 6;
	KUNIT_EXPECT_EQ(t, rq_env_resize(rq, 5, &limit), -KRWQ_EINVAL);
	KUNIT_EXPECT_EQ(t, krwq_rq_limit(rq), 3u);
	take_expect(t, rq, 0, 1);
	take_expect(t, rq, 1, 1);
	rq_env_free(rq);
}

static void resize_over_core_max(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 10, 1, RQ_ENV_RESIZABLE);

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_EXPECT_EQ(t, post_range(rq, 0, 2, 1), 0);
	KUNIT_EXPECT_EQ(t, rq_env_resize(rq, KRWQ_CORE_MAX_WR + 1, NULL), -KRWQ_EINVAL);
	KUNIT_EXPECT_EQ(t, rq_env_resize(rq, 0xffffffffu, NULL), -KRWQ_EINVAL);
	take_expect(t, rq, 0, 1);
	take_expect(t, rq, 1, 1);
	rq_env_free(rq);
}

/* rdmavt: after a resize it unlocked the new queue's lock, not the one it
 * took (defect 2).  Here the locks never move: post and take keep working
 * across repeated grows and shrinks.
 */
static void resize_repeatedly(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 4, 1, RQ_ENV_RESIZABLE);
	u64 next_post = 0, next_take = 0;
	int round;

	KUNIT_ASSERT_TRUE(t, rq);
	for (round = 0; round < 30; round++) {
		u32 size;

		KUNIT_EXPECT_EQ(t, post_range(rq, next_post, 3, 1), 0);
		next_post += 3;
		/* from room for just the next round to 28 more slots */
		size = (u32)(next_post - next_take) + 1 + (round * 13) % 29;
		KUNIT_EXPECT_EQ(t, rq_env_resize(rq, size, NULL), 0);
		take_expect(t, rq, next_take++, 1);
		take_expect(t, rq, next_take++, 1);
	}
	KUNIT_EXPECT_EQ(t, krwq_rq_count(rq), (u32)(next_post - next_take));
	rq_env_free(rq);
}

/* --- user-mapped rings: curr_wq points into memory user space writes --- */

/*
 * Writes an entry the way rdma-core's provider does, then bumps head.
 * num_sge is stored as given; at most two SGEs are written.
 */
static void user_post(struct krwq_rq *rq, u64 wr_id, u8 num_sge)
{
	u32 *head = rq_env_user_head(rq);
	u32 h = *head;
	struct { u64 wr_id; u8 num_sge; u8 pad[7]; struct ib_sge sge[]; } *e;

	e = rq_env_entry(rq, h);
	e->wr_id = wr_id;
	e->num_sge = num_sge;
	fill_sges(e->sge, num_sge < 2 ? num_sge : 2, wr_id);
	__atomic_store_n(head, h + 1 == rq_env_slots(rq) ? 0 : h + 1,
			 __ATOMIC_RELEASE);
}

static void user_ring_take(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 4, 2, RQ_ENV_USER);
	int i;

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_ASSERT_TRUE(t, rq_env_user_head(rq));
	for (i = 0; i < 10; i++) {
		user_post(rq, 1000 + i, 2);
		take_expect(t, rq, 1000 + i, 2);
		/* the kernel publishes its tail for the user's producer */
		KUNIT_EXPECT_EQ(t, *rq_env_user_tail(rq), (u32)(i + 1) % 5);
	}
	rq_env_free(rq);
}

static void user_ring_bad_head(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 4, 2, RQ_ENV_USER);
	struct flush_log log = { .n = 0 };
	struct krwq_sink sink = { .flushed = log_flushed, .ctx = &log };
	struct krwq_taken out;

	KUNIT_ASSERT_TRUE(t, rq);
	user_post(rq, 1, 1);
	*rq_env_user_head(rq) = 5;		/* == slots: out of range */
	KUNIT_EXPECT_EQ(t, take_any(rq, &out), KRWQ_TAKE_EMPTY);
	*rq_env_user_head(rq) = 0xffffffffu;
	KUNIT_EXPECT_EQ(t, take_any(rq, &out), KRWQ_TAKE_EMPTY);
	KUNIT_EXPECT_EQ(t, krwq_rq_count(rq), 0u);
	KUNIT_EXPECT_EQ(t, post_one(rq, 2, 1), -KRWQ_EINVAL);
	krwq_rq_set_state(rq, KRWQ_RQ_FLUSH, &sink);
	KUNIT_EXPECT_EQ(t, log.n, 0);
	rq_env_free(rq);
}

static void user_ring_bad_num_sge(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 4, 2, RQ_ENV_USER);
	struct krwq_taken out;

	KUNIT_ASSERT_TRUE(t, rq);
	user_post(rq, 7, 255);		/* more than max_sge: never copied */
	user_post(rq, 8, 2);
	KUNIT_EXPECT_EQ(t, take_any(rq, &out), KRWQ_TAKE_MALFORMED);
	KUNIT_EXPECT_EQ(t, out.wr_id, 7ull);
	KUNIT_EXPECT_EQ(t, out.num_sge, 0u);
	take_expect(t, rq, 8, 2);
	KUNIT_EXPECT_EQ(t, krwq_rq_count(rq), 0u);
	rq_env_free(rq);
}

static void user_ring_tail_is_kernels(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 4, 1, RQ_ENV_USER);

	KUNIT_ASSERT_TRUE(t, rq);
	user_post(rq, 1, 1);
	user_post(rq, 2, 1);
	*rq_env_user_tail(rq) = 3;	/* user space lies about the tail */
	take_expect(t, rq, 1, 1);
	take_expect(t, rq, 2, 1);
	KUNIT_EXPECT_EQ(t, *rq_env_user_tail(rq), 2u);
	rq_env_free(rq);
}

static void user_ring_kernel_post(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 3, 1, RQ_ENV_USER);

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_EXPECT_EQ(t, post_range(rq, 1, 3, 1), 0);
	KUNIT_EXPECT_EQ(t, post_one(rq, 4, 1), -KRWQ_ENOMEM);
	KUNIT_EXPECT_EQ(t, *rq_env_user_head(rq), 3u);
	take_expect(t, rq, 1, 1);
	take_expect(t, rq, 2, 1);
	take_expect(t, rq, 3, 1);
	rq_env_free(rq);
}

static void user_ring_resize(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 4, 1, RQ_ENV_USER);
	int i;

	KUNIT_ASSERT_TRUE(t, rq);
	for (i = 0; i < 3; i++)
		user_post(rq, i, 1);
	take_expect(t, rq, 0, 1);
	KUNIT_EXPECT_EQ(t, rq_env_resize(rq, 9, NULL), 0);
	KUNIT_EXPECT_EQ(t, *rq_env_user_head(rq), 2u);
	KUNIT_EXPECT_EQ(t, *rq_env_user_tail(rq), 0u);
	user_post(rq, 3, 1);
	for (i = 1; i < 4; i++)
		take_expect(t, rq, i, 1);
	rq_env_free(rq);
}

static void user_ring_reset(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 4, 1, RQ_ENV_USER);
	struct krwq_taken out;

	KUNIT_ASSERT_TRUE(t, rq);
	user_post(rq, 1, 1);
	user_post(rq, 2, 1);
	krwq_rq_set_state(rq, KRWQ_RQ_RESET, NULL);
	/* empty, and published full: the provider refuses posts in RESET */
	KUNIT_EXPECT_EQ(t, *rq_env_user_head(rq), 0u);
	KUNIT_EXPECT_EQ(t, *rq_env_user_tail(rq), 1u);
	/* a WQE written anyway is not kept when the QP leaves RESET */
	user_post(rq, 3, 1);
	krwq_rq_set_state(rq, KRWQ_RQ_POST_ONLY, NULL);
	KUNIT_EXPECT_EQ(t, *rq_env_user_head(rq), 0u);
	KUNIT_EXPECT_EQ(t, *rq_env_user_tail(rq), 0u);
	krwq_rq_set_state(rq, KRWQ_RQ_ACTIVE, NULL);
	KUNIT_EXPECT_EQ(t, take_any(rq, &out), KRWQ_TAKE_EMPTY);
	/* the whole capacity is there again */
	user_post(rq, 4, 1);
	KUNIT_EXPECT_TRUE(t, take_expect(t, rq, 4, 1));
	rq_env_free(rq);
}

/* A new user-mapped ring is in RESET: published full from the start. */
static void user_ring_new_refuses(struct kunit *t)
{
	struct krwq_rq *rq = rq_env_new(t, 4, 1, RQ_ENV_USER);

	KUNIT_ASSERT_TRUE(t, rq);
	KUNIT_EXPECT_EQ(t, *rq_env_user_head(rq), 0u);
	KUNIT_EXPECT_EQ(t, *rq_env_user_tail(rq), 1u);
	krwq_rq_set_state(rq, KRWQ_RQ_POST_ONLY, NULL);
	KUNIT_EXPECT_EQ(t, *rq_env_user_tail(rq), 0u);
	rq_env_free(rq);
}

/*
 * In ERR user space can still write a mapped ring: krwq_rq_flush()
 * completes what it posted since, oldest first, at most @max per call,
 * and does nothing outside FLUSH.
 */
static void user_ring_flush_bounded(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 8, 1, RQ_ENV_USER);
	struct flush_log log = { .n = 0 };
	struct krwq_sink sink = { .flushed = log_flushed, .ctx = &log };
	int i;

	KUNIT_ASSERT_TRUE(t, rq);
	user_post(rq, 100, 1);
	KUNIT_EXPECT_EQ(t, krwq_rq_flush(rq, 8, &sink), 0u);	/* ACTIVE */
	krwq_rq_set_state(rq, KRWQ_RQ_FLUSH, &sink);
	KUNIT_EXPECT_EQ(t, log.n, 1);
	for (i = 0; i < 6; i++)
		user_post(rq, 200 + i, 1);
	KUNIT_EXPECT_EQ(t, krwq_rq_flush(rq, 4, &sink), 4u);
	KUNIT_EXPECT_EQ(t, krwq_rq_flush(rq, 4, &sink), 2u);
	KUNIT_EXPECT_EQ(t, krwq_rq_flush(rq, 4, &sink), 0u);
	KUNIT_EXPECT_EQ(t, log.n, 7);
	KUNIT_EXPECT_EQ(t, log.ids[0], 100ull);
	for (i = 0; i < 6; i++)
		KUNIT_EXPECT_EQ(t, log.ids[1 + i], 200ull + i);
	KUNIT_EXPECT_EQ(t, *rq_env_user_tail(rq), 7u);
	rq_env_free(rq);
}

/*
 * An armed limit on a user ring whose head user space has since made
 * invalid: a take trusts the cached count while it is large (no read of
 * head), but the take that brings it under the limit reads head again,
 * can trust nothing it finds and counts the ring as empty, so the event
 * fires and the next take finds nothing.
 */
static void user_ring_limit_bad_head(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 40, 1, RQ_ENV_USER);
	struct krwq_taken out;
	int i;

	KUNIT_ASSERT_TRUE(t, rq);
	for (i = 0; i < 17; i++)
		user_post(rq, 10 + i, 1);
	KUNIT_EXPECT_EQ(t, krwq_rq_set_limit(rq, 16), 0);
	take_expect(t, rq, 10, 1);		/* reads head: 16 left */
	*rq_env_user_head(rq) = 0xffffffffu;
	KUNIT_EXPECT_EQ(t, take_any(rq, &out), KRWQ_TAKE_TAKEN);
	KUNIT_EXPECT_EQ(t, out.wr_id, 11ull);
	KUNIT_EXPECT_EQ(t, out.flags & KRWQ_TAKEN_LIMIT_REACHED, KRWQ_TAKEN_LIMIT_REACHED);
	KUNIT_EXPECT_EQ(t, krwq_rq_limit(rq), 0u);
	KUNIT_EXPECT_EQ(t, take_any(rq, &out), KRWQ_TAKE_EMPTY);
	rq_env_free(rq);
}

/* --- out-parameters: written on every return path ---------------------- */

/*
 * A caller must never read what its stack happened to hold (a kernel
 * without CONFIG_INIT_STACK_ALL_ZERO does not clear it): each check fills
 * the out-parameter with POISON bytes before the call.
 */
#define POISON 0xa5

/* A take into a POISONed struct; sg_list is the caller's own array. */
static enum krwq_take_outcome take_poisoned(struct krwq_rq *rq,
					    struct krwq_taken *out,
					    struct ib_sge *sge)
{
	memset(out, POISON, sizeof(*out));
	out->sg_list = sge;
	return krwq_rq_take(rq, out);
}

static void expect_taken(struct kunit *t, const struct krwq_taken *out,
			 u64 wr_id, u32 num_sge, u32 flags,
			 const struct ib_sge *sge)
{
	KUNIT_EXPECT_EQ(t, out->wr_id, wr_id);
	KUNIT_EXPECT_EQ(t, out->num_sge, num_sge);
	KUNIT_EXPECT_EQ(t, out->flags, flags);
	KUNIT_EXPECT_PTR_EQ(t, out->sg_list, sge);
}

/*
 * Empty (three ways), taken, limit reached, malformed: every field of
 * struct krwq_taken written.  A stale KRWQ_TAKEN_LIMIT_REACHED after an
 * empty take would raise an SRQ event on a QP that has no SRQ.
 */
static void take_writes_every_field(struct kunit *t)
{
	struct krwq_rq *rq = rq_env_new(t, 4, 2, RQ_ENV_USER);
	struct ib_sge sge[2];
	struct krwq_taken out;

	KUNIT_ASSERT_TRUE(t, rq);
	/* empty: the ring is not ACTIVE (RESET) */
	KUNIT_EXPECT_EQ(t, take_poisoned(rq, &out, sge), KRWQ_TAKE_EMPTY);
	expect_taken(t, &out, 0, 0, 0, sge);
	krwq_rq_set_state(rq, KRWQ_RQ_ACTIVE, NULL);
	/* empty: nothing posted */
	KUNIT_EXPECT_EQ(t, take_poisoned(rq, &out, sge), KRWQ_TAKE_EMPTY);
	expect_taken(t, &out, 0, 0, 0, sge);
	/* empty: user space wrote a head outside the ring */
	*rq_env_user_head(rq) = 0xffffffffu;
	KUNIT_EXPECT_EQ(t, take_poisoned(rq, &out, sge), KRWQ_TAKE_EMPTY);
	expect_taken(t, &out, 0, 0, 0, sge);
	*rq_env_user_head(rq) = 0;

	user_post(rq, 5, 2);
	KUNIT_EXPECT_EQ(t, take_poisoned(rq, &out, sge), KRWQ_TAKE_TAKEN);
	expect_taken(t, &out, 5, 2, 0, sge);

	KUNIT_EXPECT_EQ(t, krwq_rq_set_limit(rq, 2), 0);
	user_post(rq, 6, 1);
	user_post(rq, 7, 0);
	KUNIT_EXPECT_EQ(t, take_poisoned(rq, &out, sge), KRWQ_TAKE_TAKEN);
	expect_taken(t, &out, 6, 1, KRWQ_TAKEN_LIMIT_REACHED, sge);
	KUNIT_EXPECT_EQ(t, take_poisoned(rq, &out, sge), KRWQ_TAKE_TAKEN);
	expect_taken(t, &out, 7, 0, 0, sge);

	user_post(rq, 8, 255);		/* more than max_sge */
	KUNIT_EXPECT_EQ(t, take_poisoned(rq, &out, sge), KRWQ_TAKE_MALFORMED);
	expect_taken(t, &out, 8, 0, 0, sge);
	KUNIT_EXPECT_EQ(t, take_poisoned(rq, &out, sge), KRWQ_TAKE_EMPTY);
	expect_taken(t, &out, 0, 0, 0, sge);
	rq_env_free(rq);
}

/* geometry, post and resize: their out-parameters on success and error */
static void seam_writes_out_params(struct kunit *t)
{
	struct krwq_rq *rq = active_rq(t, 4, 1, RQ_ENV_RESIZABLE);
	struct ib_sge sge = { .addr = 1, .length = 2, .lkey = 3 };
	struct ib_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 };
	const struct ib_recv_wr *bad;
	struct krwq_geometry g;
	u64 storage[4];
	void *old;

	KUNIT_ASSERT_TRUE(t, rq);
	memset(&g, POISON, sizeof(g));
	KUNIT_EXPECT_EQ(t, krwq_rq_geometry(KRWQ_CORE_MAX_WR + 1, 1, &g),
			-KRWQ_EINVAL);
	KUNIT_EXPECT_EQ(t, g.slots, 0u);
	KUNIT_EXPECT_EQ(t, g.stride, 0u);
	KUNIT_EXPECT_EQ(t, g.ring_bytes, 0ull);
	memset(&g, POISON, sizeof(g));
	KUNIT_EXPECT_EQ(t, krwq_rq_geometry(1, KRWQ_CORE_MAX_SGE + 1, &g),
			-KRWQ_EINVAL);
	KUNIT_EXPECT_EQ(t, g.slots, 0u);
	KUNIT_EXPECT_EQ(t, g.stride, 0u);
	KUNIT_EXPECT_EQ(t, g.ring_bytes, 0ull);

	memset(&bad, POISON, sizeof(bad));
	KUNIT_EXPECT_EQ(t, krwq_rq_post(rq, &wr, &bad, NULL).err, 0);
	KUNIT_EXPECT_PTR_EQ(t, bad, NULL);
	memset(&bad, POISON, sizeof(bad));
	wr.num_sge = 2;			/* over max_sge */
	KUNIT_EXPECT_EQ(t, krwq_rq_post(rq, &wr, &bad, NULL).err, -KRWQ_EINVAL);
	KUNIT_EXPECT_PTR_EQ(t, bad, &wr);
	wr.num_sge = 1;
	KUNIT_EXPECT_EQ(t, krwq_rq_post(rq, &wr, &bad, NULL).err, 0);

	/* a failed resize never touches the storage it is given */
	memset(&old, POISON, sizeof(old));
	KUNIT_EXPECT_EQ(t, krwq_rq_resize(rq, storage, KRWQ_CORE_MAX_WR + 1,
					  NULL, &old), -KRWQ_EINVAL);
	KUNIT_EXPECT_PTR_EQ(t, old, NULL);
	memset(&old, POISON, sizeof(old));
	KUNIT_EXPECT_EQ(t, krwq_rq_resize(rq, storage, 1, NULL, &old),
			-KRWQ_EINVAL);	/* two are posted */
	KUNIT_EXPECT_PTR_EQ(t, old, NULL);
	KUNIT_EXPECT_EQ(t, krwq_rq_count(rq), 2u);
	rq_env_free(rq);
}

/* --- producers and consumers on different CPUs ------------------------ */

struct stress {
	struct krwq_rq *rq;
	u32 total;		/* WQEs each producer posts */
	int producers;
	int done;		/* producers finished; atomic */
	u32 taken[2];		/* per producer, in order */
	u32 errors;		/* atomic */
	u32 resizes;
};

enum stress_kind { PRODUCER, CONSUMER, RESIZER };

struct stress_role {
	struct stress *s;
	enum stress_kind kind;
	int id;
};

static void stress_fail(struct stress *s)
{
	__atomic_fetch_add(&s->errors, 1, __ATOMIC_RELAXED);
}

/* wr_id = producer id << 32 | sequence number; lists of 1 to 4 WRs */
static void stress_produce(struct stress *s, int id)
{
	const struct ib_recv_wr *bad;
	struct ib_recv_wr wr[4];
	struct ib_sge sge[4];
	u32 seq = 0;
	int i, n, ret;

	while (seq < s->total) {
		n = 1 + seq % 4;
		if (n > (int)(s->total - seq))
			n = s->total - seq;
		for (i = 0; i < n; i++) {
			wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
			wr[i].wr_id = ((u64)id << 32) | (seq + i);
			wr[i].sg_list = &sge[i];
			wr[i].num_sge = 1;
			sge[i].addr = wr[i].wr_id;
			sge[i].length = seq + i;
			sge[i].lkey = id;
		}
		bad = NULL;
		ret = krwq_rq_post(s->rq, wr, &bad, NULL).err;
		if (ret == 0) {
			seq += n;
		} else if (ret == -KRWQ_ENOMEM) {
			seq += bad - wr;	/* the WRs before bad went in */
			rq_env_relax();
		} else {
			stress_fail(s);
			break;
		}
	}
	__atomic_fetch_add(&s->done, 1, __ATOMIC_RELEASE);
}

static void stress_consume(struct stress *s)
{
	struct ib_sge sge[1];
	struct krwq_taken out = { .sg_list = sge };
	u32 want = s->producers * s->total, got = 0;
	int id;

	while (got < want) {
		if (krwq_rq_take(s->rq, &out) != KRWQ_TAKE_TAKEN) {
			/* a producer that failed never finishes the count */
			if (__atomic_load_n(&s->errors, __ATOMIC_RELAXED))
				break;
			rq_env_relax();
			continue;
		}
		got++;
		id = out.wr_id >> 32;
		if (id >= s->producers || (u32)out.wr_id != s->taken[id] ||
		    sge[0].addr != out.wr_id || sge[0].length != (u32)out.wr_id) {
			stress_fail(s);
			break;
		}
		s->taken[id]++;
	}
}

static void stress_resize(struct stress *s)
{
	static const u32 sizes[] = { 8, 64, 16, 200, 12, 31 };
	int i = 0, ret;

	while (__atomic_load_n(&s->done, __ATOMIC_ACQUIRE) < s->producers) {
		ret = rq_env_resize(s->rq, sizes[i++ % 6], NULL);
		/* a ring holding more than the new size refuses: fine */
		if (ret == 0)
			s->resizes++;
		else if (ret != -KRWQ_EINVAL)
			stress_fail(s);
		rq_env_relax();
	}
}

static void stress_role_run(void *arg)
{
	struct stress_role *r = arg;

	switch (r->kind) {
	case PRODUCER:
		stress_produce(r->s, r->id);
		break;
	case CONSUMER:
		stress_consume(r->s);
		break;
	case RESIZER:
		stress_resize(r->s);
		break;
	}
}

static void run_stress(struct kunit *t, int producers, bool resize)
{
	struct stress s = {
		.total = RQ_STRESS_WQES / producers,
		.producers = producers,
	};
	struct stress_role roles[4];
	void *args[4];
	int i, n = 0;

	s.rq = active_rq(t, 32, 1, resize ? RQ_ENV_RESIZABLE : 0);
	KUNIT_ASSERT_TRUE(t, s.rq);
	for (i = 0; i < producers; i++)
		roles[n++] = (struct stress_role){ &s, PRODUCER, i };
	roles[n++] = (struct stress_role){ &s, CONSUMER, 0 };
	if (resize)
		roles[n++] = (struct stress_role){ &s, RESIZER, 0 };
	for (i = 0; i < n; i++)
		args[i] = &roles[i];
	rq_env_run(t, n, stress_role_run, args);

	KUNIT_EXPECT_EQ(t, s.errors, 0u);
	for (i = 0; i < producers; i++)
		KUNIT_EXPECT_EQ(t, s.taken[i], s.total);
	KUNIT_EXPECT_EQ(t, krwq_rq_count(s.rq), 0u);
	kunit_info(t, "%d producer(s): posted %u, taken %u, resizes %u",
		   producers, producers * s.total,
		   s.taken[0] + (producers > 1 ? s.taken[1] : 0), s.resizes);
	rq_env_free(s.rq);
}

static void threads_one_producer(struct kunit *t)
{
	run_stress(t, 1, false);
}

static void threads_two_producers(struct kunit *t)
{
	run_stress(t, 2, false);
}

/* rdmavt: resize held only c_lock, so a post could land in the old ring
 * after the copy (lost) or after it was freed (defect 1).
 */
static void threads_resize_under_load(struct kunit *t)
{
	run_stress(t, 2, true);
}

struct kunit_case krwq_rq_cases[] = {
	KUNIT_CASE(geometry_sizes),
	KUNIT_CASE(geometry_limits),
	KUNIT_CASE(new_ring_is_reset),
	KUNIT_CASE(post_in_reset_fails),
	KUNIT_CASE(post_then_take),
	KUNIT_CASE(post_exact_capacity),
	KUNIT_CASE(post_list_full_midway),
	KUNIT_CASE(post_too_many_sge),
	KUNIT_CASE(post_negative_sge),
	KUNIT_CASE(post_zero_sge),
	KUNIT_CASE(post_empty_list),
	KUNIT_CASE(post_copies_sges),
	KUNIT_CASE(post_wraps_in_order),
	KUNIT_CASE(post_in_init_not_taken),
	KUNIT_CASE(post_in_error_flushes),
	KUNIT_CASE(post_in_error_checks_sge),
	KUNIT_CASE(post_in_error_needs_sink),
	KUNIT_CASE(take_empty),
	KUNIT_CASE(take_fitting_leaves_small),
	KUNIT_CASE(take_only_when_active),
	KUNIT_CASE(take_fifo_long_run),
	KUNIT_CASE(count_never_exceeds_length),
	KUNIT_CASE(cached_count_refresh),
	KUNIT_CASE(limit_fires_once),
	KUNIT_CASE(limit_rearm),
	KUNIT_CASE(limit_above_max_wr),
	KUNIT_CASE(limit_zero_disarms),
	KUNIT_CASE(limit_quiet_above),
	KUNIT_CASE(flush_in_order),
	KUNIT_CASE(flush_twice_is_empty),
	KUNIT_CASE(reset_empties),
	KUNIT_CASE(reset_after_error_reuse),
	KUNIT_CASE(resize_keeps_order),
	KUNIT_CASE(resize_too_small),
	KUNIT_CASE(resize_to_exact_fit),
	KUNIT_CASE(resize_below_limit),
	KUNIT_CASE(resize_with_new_limit),
	KUNIT_CASE(resize_over_core_max),
	KUNIT_CASE(resize_repeatedly),
	KUNIT_CASE(user_ring_take),
	KUNIT_CASE(user_ring_bad_head),
	KUNIT_CASE(user_ring_bad_num_sge),
	KUNIT_CASE(user_ring_tail_is_kernels),
	KUNIT_CASE(user_ring_kernel_post),
	KUNIT_CASE(user_ring_resize),
	KUNIT_CASE(user_ring_reset),
	KUNIT_CASE(user_ring_new_refuses),
	KUNIT_CASE(user_ring_flush_bounded),
	KUNIT_CASE(user_ring_limit_bad_head),
	KUNIT_CASE(take_writes_every_field),
	KUNIT_CASE(seam_writes_out_params),
	KUNIT_CASE(threads_one_producer),
	KUNIT_CASE(threads_two_producers),
	KUNIT_CASE(threads_resize_under_load),
	{}
};
