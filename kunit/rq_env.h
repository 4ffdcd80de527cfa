/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rq_env.h - what the shared receive-queue cases (rq_cases.c) need from
 * where they run: rq_suite.c inside the test kernel, or
 * hostshim/host_seam.c on the host.
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

/*
 * Each function below has two definitions: kunit/rq_suite.c and
 * kunit/rq_views.c in the kernel, hostshim/host_seam.c and
 * kunit/rq_views.c on the host.  They are documented here, once.
 */

/**
 * rq_env_new() - a ring as the module would make it.
 * @t: the running case; a failure to allocate fails it.
 * @max_wr: work requests the ring holds.
 * @max_sge: scatter entries per work request.
 * @flags: RQ_ENV_RESIZABLE, RQ_ENV_USER or 0 (a QP's inline ring).
 *
 * Return: the ring, in KRWQ_RQ_RESET, or NULL after a failed check.
 */
struct krwq_rq *rq_env_new(struct kunit *t, u32 max_wr, u32 max_sge,
			   unsigned int flags);

/**
 * rq_env_resize() - resize a ring from rq_env_new() with RQ_ENV_RESIZABLE
 * or RQ_ENV_USER.
 * @rq: the ring.
 * @max_wr: the new capacity.
 * @limit: NULL to keep the armed SRQ limit, else the limit to arm.
 *
 * Return: 0 or a negative errno, as krwq_rq_resize_alloc().
 */
int rq_env_resize(struct krwq_rq *rq, u32 max_wr, const u32 *limit);

/**
 * rq_env_free() - free a ring from rq_env_new().
 * @rq: the ring, or one whose allocation failed.
 */
void rq_env_free(struct krwq_rq *rq);

/**
 * rq_env_zalloc() - zeroed memory for a case's own bookkeeping.
 * @bytes: its size.
 *
 * Return: the memory, or NULL.
 */
void *rq_env_zalloc(size_t bytes);

/**
 * rq_env_kfree() - free memory from rq_env_zalloc().
 * @p: the memory, or NULL.
 */
void rq_env_kfree(void *p);

/**
 * rq_env_relax() - let other threads run in a busy loop (cond_resched()
 * in the kernel, a yield on the host).
 */
void rq_env_relax(void);

/*
 * Raw views of a ring, for checking invariants and for playing a hostile
 * user; each reads or points into the C structures of module/rq.h.
 */

/**
 * rq_env_slots() - the ring's slots (max_wr + 1).
 * @rq: the ring.
 *
 * Return: struct krwq_rq's slots.
 */
u32 rq_env_slots(struct krwq_rq *rq);

/**
 * rq_env_cached_count() - the consumer's count of posted entries, read
 * without the lock.
 * @rq: the ring.
 *
 * Return: struct krwq_kring's count.
 */
u32 rq_env_cached_count(struct krwq_rq *rq);

/**
 * rq_env_user_head() - the head index of a user-mapped ring.
 * @rq: the ring.
 *
 * Return: the address user space writes it at, or NULL for a kernel ring.
 */
u32 *rq_env_user_head(struct krwq_rq *rq);

/**
 * rq_env_user_tail() - the tail index the kernel publishes to a
 * user-mapped ring.
 * @rq: the ring.
 *
 * Return: its address, or NULL for a kernel ring.
 */
u32 *rq_env_user_tail(struct krwq_rq *rq);

/**
 * rq_env_entry() - the entry in slot @idx.
 * @rq: the ring.
 * @idx: the slot, below rq_env_slots().
 *
 * Return: the address of that struct krwq_rwqe.
 */
void *rq_env_entry(struct krwq_rq *rq, u32 idx);

/**
 * rq_env_run() - run @fn(@args[i]) for every i below @n at the same time,
 * spread over the CPUs, and wait for all of them.
 * @t: the running case.
 * @n: how many.
 * @fn: what each runs.
 * @args: the argument of each.
 */
void rq_env_run(struct kunit *t, int n, void (*fn)(void *arg), void **args);

#endif /* KRWQ_RQ_ENV_H */
