/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rq_env.h - what the shared receive-queue cases (rq_cases.c) need from
 * where they run: rq_suite.c inside the test kernel, or
 * kunit/host/host_seam.c on the host.
 */
#ifndef KRWQ_RQ_ENV_H
#define KRWQ_RQ_ENV_H

#include <kunit/test.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "krwq_core.h"

/* The cases, for a KUnit suite or the host's GoogleTest registration. */
extern struct kunit_case krwq_rq_cases[];

/* WQEs the concurrent cases move: fewer under KASAN and TCG. */
#ifdef __KERNEL__
#define RQ_STRESS_WQES 40000u
#else
#define RQ_STRESS_WQES 400000u
#endif

/* flags for rq_env_new() */
#define RQ_ENV_RESIZABLE 0x1u	/* an SRQ-style ring */
#define RQ_ENV_USER 0x2u	/* a user-mappable ring (ABI 2) */

/* A ring as the module would make it; NULL (and a failed check) on error. */
struct krwq_rq *rq_env_new(struct kunit *t, u32 max_wr, u32 max_sge,
			   unsigned int flags);
/* resize to @max_wr; a non-NULL @limit also re-arms the SRQ limit */
int rq_env_resize(struct krwq_rq *rq, u32 max_wr, const u32 *limit);
void rq_env_free(struct krwq_rq *rq);
void *rq_env_zalloc(size_t bytes);
void rq_env_kfree(void *p);

/* Lets other threads run in a busy loop (cond_resched() in the kernel). */
void rq_env_relax(void);

/* Raw views, for checking invariants and for playing a hostile user. */
u32 rq_env_slots(struct krwq_rq *rq);
u32 rq_env_cached_count(struct krwq_rq *rq);
u32 *rq_env_user_head(struct krwq_rq *rq);
u32 *rq_env_user_tail(struct krwq_rq *rq);
void *rq_env_entry(struct krwq_rq *rq, u32 idx);

/* Runs fn(args[i]) for i < n at the same time, spread over the CPUs. */
void rq_env_run(struct kunit *t, int n, void (*fn)(void *arg), void **args);

#endif /* KRWQ_RQ_ENV_H */
