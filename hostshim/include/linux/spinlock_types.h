/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Host stand-in: a ring lock is a test-and-test-and-set spinlock on the
 * compiler's __atomic builtins (hostshim/host_seam.c), zero when free.
 * Taking it is an acquiring exchange and dropping it a releasing store,
 * which is what the kernel's spinlock costs when nobody contends, and
 * TSan models the builtins, so it still sees the happens-before edges.
 * @owner names the holding thread, for krwq_assert_held().
 */
#ifndef KRWQ_HOST_SPINLOCK_TYPES_H
#define KRWQ_HOST_SPINLOCK_TYPES_H
typedef struct {
	int locked;
	const void *owner;
} spinlock_t;
#endif
