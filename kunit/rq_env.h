/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rq_env.h - what the shared receive-queue cases (rq_cases.c) need from
 * the place they run: KUnit inside the test kernel, or GoogleTest on the
 * host (cxx-core/test).  The cases are written once and run in both.
 */
#ifndef KRWQ_RQ_ENV_H
#define KRWQ_RQ_ENV_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "krwq_core.h"

#ifdef __KERNEL__
#include <kunit/test.h>

typedef struct kunit rq_test;

#define RQ_EXPECT_EQ(t, a, b) KUNIT_EXPECT_EQ(t, a, b)
#define RQ_EXPECT_PTR_EQ(t, a, b) KUNIT_EXPECT_PTR_EQ(t, a, b)
#define RQ_EXPECT_TRUE(t, c) KUNIT_EXPECT_TRUE(t, c)
#define RQ_ASSERT_TRUE(t, c) KUNIT_ASSERT_TRUE(t, c)
#define RQ_INFO(t, fmt, ...) kunit_info(t, fmt, ##__VA_ARGS__)
#define RQ_STRESS_WQES 40000u

#else /* host */
#include <stdbool.h>

typedef struct rq_host_test rq_test;

bool rq_host_check(rq_test *t, bool ok, const char *what, long long a,
		   long long b, const char *file, int line);
void rq_host_info(rq_test *t, const char *fmt, ...);

/* Like KUnit's macros, each operand is evaluated exactly once. */
#define RQ_EXPECT_EQ(t, a, b)                                                 \
	({                                                                    \
		__typeof__(a) a_ = (a);                                       \
		__typeof__(b) b_ = (b);                                       \
		rq_host_check(t, a_ == b_, #a " == " #b, (long long)a_,       \
			      (long long)b_, __FILE__, __LINE__);             \
	})
#define RQ_EXPECT_PTR_EQ(t, a, b)                                             \
	({                                                                    \
		const void *a_ = (a), *b_ = (b);                              \
		rq_host_check(t, a_ == b_, #a " == " #b,                      \
			      (long long)(unsigned long)a_,                   \
			      (long long)(unsigned long)b_, __FILE__,         \
			      __LINE__);                                      \
	})
#define RQ_EXPECT_TRUE(t, c)                                                  \
	({                                                                    \
		bool c_ = (c);                                                \
		rq_host_check(t, c_, #c, c_, 1, __FILE__, __LINE__);          \
	})
#define RQ_ASSERT_TRUE(t, c)                                                  \
	do {                                                                  \
		if (!RQ_EXPECT_TRUE(t, c))                                    \
			return;                                               \
	} while (0)
#define RQ_INFO(t, fmt, ...) rq_host_info(t, fmt, ##__VA_ARGS__)
#define RQ_STRESS_WQES 400000u
#endif

/* A ring as the module would make it; NULL (and a failed check) on error. */
struct krwq_rq *rq_env_new(rq_test *t, u32 max_wr, u32 max_sge,
			   unsigned int flags);
/* flags for rq_env_new() */
#define RQ_ENV_RESIZABLE 0x1u	/* an SRQ-style ring */
#define RQ_ENV_USER 0x2u	/* a user-mappable ring (ABI 2) */

int rq_env_resize(struct krwq_rq *rq, u32 max_wr);
void rq_env_free(struct krwq_rq *rq);
void *rq_env_zalloc(size_t bytes);
void rq_env_kfree(void *p);

/* Raw views, for checking invariants and for playing a hostile user. */
u32 rq_env_slots(struct krwq_rq *rq);
u32 rq_env_cached_count(struct krwq_rq *rq);
u32 *rq_env_user_head(struct krwq_rq *rq);
u32 *rq_env_user_tail(struct krwq_rq *rq);
void *rq_env_entry(struct krwq_rq *rq, u32 idx);

/* Lets other threads run in a busy loop (cond_resched() in the kernel). */
void rq_env_relax(void);

/* Runs fn(args[i]) for i < n at the same time, on all CPUs; waits. */
void rq_env_run(rq_test *t, int n, void (*fn)(void *arg), void **args);

#endif /* KRWQ_RQ_ENV_H */
