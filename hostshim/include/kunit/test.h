/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host stand-in for the part of KUnit the shared cases use, so that
 * kunit/rq_cases.c compiles unchanged on the host; the checks report to
 * GoogleTest (kunit/host/rq_test.cpp).  Like KUnit's, each operand is
 * evaluated exactly once.
 */
#ifndef KRWQ_HOST_KUNIT_TEST_H
#define KRWQ_HOST_KUNIT_TEST_H
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kunit {
	int unused;
};

struct kunit_case {
	void (*run_case)(struct kunit *test);
	const char *name;
};

#define KUNIT_CASE(fn) { .run_case = fn, .name = #fn }

bool kunit_host_check(struct kunit *t, bool ok, const char *what,
		      long long a, long long b, const char *file, int line);
void kunit_host_info(struct kunit *t, const char *fmt, ...);

#define KUNIT_EXPECT_EQ(t, a, b)                                              \
	((void)({                                                             \
		__typeof__(a) a_ = (a);                                       \
		__typeof__(b) b_ = (b);                                       \
		kunit_host_check(t, a_ == b_, #a " == " #b, (long long)a_,    \
				 (long long)b_, __FILE__, __LINE__);          \
	}))
#define KUNIT_EXPECT_PTR_EQ(t, a, b)                                          \
	((void)({                                                             \
		const void *a_ = (a), *b_ = (b);                              \
		kunit_host_check(t, a_ == b_, #a " == " #b,                   \
				 (long long)(unsigned long)a_,                \
				 (long long)(unsigned long)b_, __FILE__,      \
				 __LINE__);                                   \
	}))
#define KUNIT_EXPECT_TRUE(t, c)                                               \
	((void)({                                                             \
		bool c_ = (c);                                                \
		kunit_host_check(t, c_, #c, c_, 1, __FILE__, __LINE__);       \
	}))
/* KUnit aborts the case; the host returns from the function instead. */
#define KUNIT_ASSERT_TRUE(t, c)                                               \
	do {                                                                  \
		bool c_ = (c);                                                \
		if (!kunit_host_check(t, c_, #c, c_, 1, __FILE__, __LINE__))  \
			return;                                               \
	} while (0)
#define kunit_info(t, fmt, ...) kunit_host_info(t, fmt, ##__VA_ARGS__)

#ifdef __cplusplus
}
#endif
#endif
