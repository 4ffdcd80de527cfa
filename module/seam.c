// SPDX-License-Identifier: GPL-2.0
/*
 * seam.c - the kernel's half of krwq_core.h: the lock operations the
 * C++ core needs, and compile-time checks that the seam's types and errno
 * values are the kernel's.
 */
#include <linux/build_bug.h>
#include <linux/errno.h>
#include <linux/lockdep.h>
#include <linux/spinlock.h>
#include <kunit/visibility.h>

#include "krwq_core.h"

static_assert(__same_type(unsigned int, u32));
static_assert(__same_type(unsigned long long, u64));
static_assert(KRWQ_ENOMEM == ENOMEM);
static_assert(KRWQ_EINVAL == EINVAL);
static_assert(KRWQ_EMSGSIZE == EMSGSIZE);

/**
 * krwq_spin_lock_irqsave() - take a ring lock for the core.
 * @lock: a spinlock_t inside a struct krwq_kring.
 *
 * Return: the saved interrupt flags, for krwq_spin_unlock_irqrestore().
 */
unsigned long krwq_spin_lock_irqsave(void *lock)
	__acquires(lock)
{
	unsigned long flags;

	spin_lock_irqsave((spinlock_t *)lock, flags);
	return flags;
}

/**
 * krwq_spin_unlock_irqrestore() - drop a ring lock taken by the core.
 * @lock: the lock passed to krwq_spin_lock_irqsave().
 * @flags: what krwq_spin_lock_irqsave() returned.
 */
void krwq_spin_unlock_irqrestore(void *lock, unsigned long flags)
	__releases(lock)
{
	spin_unlock_irqrestore((spinlock_t *)lock, flags);
}

/**
 * krwq_assert_held() - lockdep_assert_held() for the core, where its
 * contract says the caller holds a ring lock.
 * @lock: a spinlock_t inside a struct krwq_kring.
 *
 * Without CONFIG_LOCKDEP this does nothing.
 */
void krwq_assert_held(const void *lock)
{
	lockdep_assert_held((const spinlock_t *)lock);
}

/* The core's entry points, for the KUnit suites in kunit/. */
EXPORT_SYMBOL_IF_KUNIT(krwq_rq_geometry);
EXPORT_SYMBOL_IF_KUNIT(krwq_rq_init);
EXPORT_SYMBOL_IF_KUNIT(krwq_rq_post);
EXPORT_SYMBOL_IF_KUNIT(krwq_rq_take);
EXPORT_SYMBOL_IF_KUNIT(krwq_rq_take_fitting);
EXPORT_SYMBOL_IF_KUNIT(krwq_rq_count);
EXPORT_SYMBOL_IF_KUNIT(krwq_rq_set_state);
EXPORT_SYMBOL_IF_KUNIT(krwq_rq_flush);
EXPORT_SYMBOL_IF_KUNIT(krwq_rq_get_state);
EXPORT_SYMBOL_IF_KUNIT(krwq_rq_set_limit);
EXPORT_SYMBOL_IF_KUNIT(krwq_rq_limit);
EXPORT_SYMBOL_IF_KUNIT(krwq_rq_resize);
