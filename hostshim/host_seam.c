// SPDX-License-Identifier: GPL-2.0
/*
 * host_seam.c - the kernel's half of the seam, for user space, and the
 * allocation side of rq_env.h: ring locks are spinlocks on __atomic
 * builtins (which TSan understands) and rings are calloc()ed the way
 * module/rq.c does it with kvzalloc().
 */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include <kunit/test.h>

#include "rq.h"
#include "rq_env.h"

/* Its address names the calling thread: the owner of the locks it holds. */
static __thread char this_thread;

unsigned long krwq_spin_lock_irqsave(void *lock)
{
	spinlock_t *l = lock;

	while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
			sched_yield();	/* the holder may be off its CPU */
	__atomic_store_n(&l->owner, &this_thread, __ATOMIC_RELAXED);
	return 0;
}

void krwq_spin_unlock_irqrestore(void *lock, unsigned long flags)
{
	spinlock_t *l = lock;

	(void)flags;
	__atomic_store_n(&l->owner, NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

/* lockdep_assert_held(): this thread holds @lock, or the run stops. */
void krwq_assert_held(const void *lock)
{
	const spinlock_t *l = lock;

	if (__atomic_load_n(&l->owner, __ATOMIC_RELAXED) != &this_thread) {
		fprintf(stderr, "%s: lock %p not held by this thread\n",
			__func__, lock);
		abort();
	}
}

static void *ring_storage(const struct krwq_geometry *geo, bool user)
{
	if (user)
		return calloc(1, sizeof(struct krwq_rwq) + geo->ring_bytes);
	return calloc(1, geo->ring_bytes);
}

struct krwq_rq *rq_env_new(struct kunit *t, u32 max_wr, u32 max_sge,
			   unsigned int flags)
{
	unsigned int user = flags & RQ_ENV_USER;
	struct krwq_geometry geo;
	struct krwq_kring *kwq;
	struct krwq_rq *rq;
	void *storage;
	int ret;

	ret = krwq_rq_geometry(max_wr, max_sge, &geo);
	KUNIT_EXPECT_EQ(t, ret, 0);
	if (ret)
		return NULL;
	rq = calloc(1, sizeof(*rq));
	kwq = calloc(1, sizeof(*kwq));
	storage = ring_storage(&geo, user);
	KUNIT_EXPECT_TRUE(t, rq && kwq && storage);
	if (!rq || !kwq || !storage) {
		free(rq);
		free(kwq);
		free(storage);
		return NULL;
	}
	ret = krwq_rq_init(rq, kwq, storage, user ? KRWQ_RING_USER : 0,
			   max_wr, max_sge);
	KUNIT_EXPECT_EQ(t, ret, 0);
	return rq;
}

int rq_env_resize(struct krwq_rq *rq, u32 max_wr, const u32 *limit)
{
	struct krwq_geometry geo;
	void *storage, *old = NULL;
	int ret;

	ret = krwq_rq_geometry(max_wr, rq->max_sge, &geo);
	if (ret)
		return ret;
	storage = ring_storage(&geo, rq->wq);
	if (!storage)
		return -KRWQ_ENOMEM;
	ret = krwq_rq_resize(rq, storage, max_wr, limit, &old);
	free(ret ? storage : old);
	return ret;
}

void rq_env_free(struct krwq_rq *rq)
{
	free(rq->wq ? (void *)rq->wq : (void *)rq->kwq->curr_wq);
	free(rq->kwq);
	free(rq);
}

void *rq_env_zalloc(size_t bytes)
{
	return calloc(1, bytes);
}

void rq_env_kfree(void *p)
{
	free(p);
}

void rq_env_relax(void)
{
	sched_yield();
}
