// SPDX-License-Identifier: GPL-2.0
/*
 * rq.c - allocation of receive rings for the C++ core.
 *
 * The core allocates nothing; this file sizes rings with the core's
 * geometry, allocates them the way rdmavt's rvt_alloc_rq() does, sets up
 * the two ring locks (one lockdep class each, shared by every ring) and
 * frees them again.
 *
 * Where the entries live (what curr_wq points at):
 *  - a QP's ring: inline, one allocation holding struct krwq_kring and its
 *    wq[] array, since a QP's receive queue never changes size;
 *  - an SRQ's ring: a separate allocation, so that a resize can swap it
 *    while the struct krwq_kring that holds the locks stays where it is
 *    (a poster spinning on p_lock during a resize still holds a valid lock);
 *  - a user-mapped ring (uverbs ABI 2): a struct krwq_rwq from
 *    krwq_ring_alloc(), indices and entries together, which user space
 *    maps.
 */
#include <linux/vmalloc.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/overflow.h>
#include <kunit/visibility.h>

#include "krwq.h"
#include "krwq_core.h"
#include "rq_alloc.h"
#include "trace.h"

static void krwq_rq_init_locks(struct krwq_kring *kwq)
{
	spin_lock_init(&kwq->p_lock);
	spin_lock_init(&kwq->c_lock);
}

/**
 * krwq_rq_alloc() - allocate and initialise a kernel-owned receive ring.
 * @rq: the descriptor to fill; zeroed by the caller.
 * @max_wr: work requests the ring must hold.
 * @max_sge: scatter entries per work request.
 * @flags: KRWQ_ALLOC_RESIZABLE to keep the entries in their own allocation.
 * @node: NUMA node for the memory.
 *
 * The ring starts in KRWQ_RQ_RESET; the owner moves it on with
 * krwq_rq_set_state().
 *
 * Return: 0, -EINVAL for sizes the core rejects, or -ENOMEM.
 */
int krwq_rq_alloc(struct krwq_rq *rq, u32 max_wr, u32 max_sge,
		  unsigned int flags, int node)
{
	struct krwq_geometry geo;
	struct krwq_kring *kwq;
	void *entries;
	int ret;

	ret = krwq_rq_geometry(max_wr, max_sge, &geo);
	if (ret)
		return ret;

	if (flags & KRWQ_ALLOC_RESIZABLE) {
		kwq = kzalloc_node(sizeof(*kwq), GFP_KERNEL_ACCOUNT, node);
		if (!kwq)
			return -ENOMEM;
		entries = kvzalloc_node(geo.ring_bytes, GFP_KERNEL_ACCOUNT, node);
		if (!entries) {
			kfree(kwq);
			return -ENOMEM;
		}
	} else {
		kwq = kvzalloc_node(size_add(sizeof(*kwq), geo.ring_bytes),
				    GFP_KERNEL_ACCOUNT, node);
		if (!kwq)
			return -ENOMEM;
		entries = kwq->wq;
	}
	krwq_rq_init_locks(kwq);
	return krwq_rq_init(rq, kwq, entries, 0, max_wr, max_sge);
}
EXPORT_SYMBOL_IF_KUNIT(krwq_rq_alloc);

static size_t krwq_rwq_bytes(const struct krwq_geometry *geo)
{
	return size_add(sizeof(struct krwq_rwq), geo->ring_bytes);
}

static struct krwq_rwq *krwq_rwq_alloc(const struct krwq_geometry *geo)
{
	return krwq_ring_alloc(krwq_rwq_bytes(geo));
}

/**
 * krwq_rq_alloc_user() - allocate a ring whose indices and entries user
 * space maps and writes (rdmavt's struct rvt_rwq layout).
 * @rq: the descriptor to fill; zeroed by the caller.
 * @max_wr: work requests the ring must hold.
 * @max_sge: scatter entries per work request.
 * @node: NUMA node for the kernel-private part.
 *
 * Return: 0, -EINVAL for sizes the core rejects, or -ENOMEM.
 */
int krwq_rq_alloc_user(struct krwq_rq *rq, u32 max_wr, u32 max_sge, int node)
{
	struct krwq_geometry geo;
	struct krwq_kring *kwq;
	struct krwq_rwq *ring;
	int ret;

	ret = krwq_rq_geometry(max_wr, max_sge, &geo);
	if (ret)
		return ret;
	kwq = kzalloc_node(sizeof(*kwq), GFP_KERNEL_ACCOUNT, node);
	if (!kwq)
		return -ENOMEM;
	ring = krwq_rwq_alloc(&geo);
	if (!ring) {
		kfree(kwq);
		return -ENOMEM;
	}
	krwq_rq_init_locks(kwq);
	return krwq_rq_init(rq, kwq, ring, KRWQ_RING_USER, max_wr, max_sge);
}
EXPORT_SYMBOL_IF_KUNIT(krwq_rq_alloc_user);

/**
 * krwq_rq_alloc_mapped() - a user-mapped ring for a user create call, and
 * the mmap entry whose offset goes back to user space after the core's
 * response (rdma-core's ipathverbs provider reads it there).
 * @rq: the descriptor to fill; zeroed by the caller.
 * @max_wr: work requests the ring must hold.
 * @max_sge: scatter entries per work request.
 * @udata: the create call's user data, with room for a u64.
 * @entry: set to the mmap entry; krwq_mmap_remove() it before
 *         krwq_rq_free().
 *
 * Return: 0, -EINVAL, -ENOMEM, or -EFAULT if the offset cannot be copied
 * out.  On error nothing is left allocated.
 */
int krwq_rq_alloc_mapped(struct krwq_rq *rq, u32 max_wr, u32 max_sge,
			 struct ib_udata *udata,
			 struct rdma_user_mmap_entry **entry)
{
	struct rdma_user_mmap_entry *e;
	int ret;

	*entry = NULL;
	ret = krwq_rq_alloc_user(rq, max_wr, max_sge, NUMA_NO_NODE);
	if (ret)
		return ret;
	e = krwq_mmap_offer(udata, rq->wq, krwq_rq_mapped_bytes(rq));
	if (IS_ERR(e)) {
		krwq_rq_free(rq);
		return PTR_ERR(e);
	}
	*entry = e;
	return 0;
}

/**
 * krwq_rq_mapped_bytes() - the size of a user-mapped ring's memory.
 * @rq: a ring from krwq_rq_alloc_user().
 *
 * Return: header plus slots times stride.
 */
size_t krwq_rq_mapped_bytes(const struct krwq_rq *rq)
{
	return size_add(sizeof(struct krwq_rwq),
			size_mul(rq->slots, rq->stride));
}

/**
 * krwq_rq_storage_alloc() - entries for @rq resized to @max_wr, of the
 * kind @rq has (user-mappable or kernel-only), for krwq_rq_resize().
 * @rq: a resizable ring.
 * @max_wr: the new capacity.
 * @bytes: set to the size of the allocation.
 *
 * Return: zeroed memory, or NULL if @max_wr is out of range or memory
 * runs out.
 */
void *krwq_rq_storage_alloc(const struct krwq_rq *rq, u32 max_wr,
			    size_t *bytes)
{
	struct krwq_geometry geo;

	if (krwq_rq_geometry(max_wr, rq->max_sge, &geo))
		return NULL;
	if (rq->wq) {
		*bytes = krwq_rwq_bytes(&geo);
		return krwq_rwq_alloc(&geo);
	}
	*bytes = geo.ring_bytes;
	return kvzalloc(geo.ring_bytes, GFP_KERNEL_ACCOUNT);
}

/**
 * krwq_rq_storage_free() - free entries from krwq_rq_storage_alloc(), or
 * the ones krwq_rq_resize() replaced.
 * @rq: the ring they were for.
 * @storage: the memory, or NULL.
 */
void krwq_rq_storage_free(const struct krwq_rq *rq, void *storage)
{
	if (rq->wq)
		vfree(storage);
	else
		kvfree(storage);
}

/**
 * krwq_rq_resize_alloc() - give a resizable ring room for @max_wr entries.
 * @rq: a ring from krwq_rq_alloc_user(), or krwq_rq_alloc() with
 *      KRWQ_ALLOC_RESIZABLE.
 * @max_wr: the new capacity.
 * @limit: NULL to keep the armed SRQ limit, else the limit to arm with it.
 *
 * Posted entries are kept in order; producers and consumers wait while
 * they move.  On failure the ring is unchanged.
 *
 * Return: 0, -EINVAL if @max_wr cannot hold what is posted or is below
 * the (new or armed) SRQ limit, or -ENOMEM.
 */
int krwq_rq_resize_alloc(struct krwq_rq *rq, u32 max_wr, const u32 *limit)
{
	struct krwq_geometry geo;
	void *storage, *old = NULL;
	size_t bytes;
	int ret;

	if (rq->kwq->curr_wq == rq->kwq->wq)
		return -EINVAL;	/* an inline ring never moves */
	ret = krwq_rq_geometry(max_wr, rq->max_sge, &geo);
	if (ret)
		return ret;
	storage = krwq_rq_storage_alloc(rq, max_wr, &bytes);
	if (!storage)
		return -ENOMEM;
	ret = krwq_rq_resize(rq, storage, max_wr, limit, &old);
	krwq_rq_storage_free(rq, ret ? storage : old);
	return ret;
}
EXPORT_SYMBOL_IF_KUNIT(krwq_rq_resize_alloc);

/**
 * krwq_rq_free() - free a ring from krwq_rq_alloc() or krwq_rq_alloc_user();
 * posted entries are dropped without completions.
 * @rq: the ring; may be one whose allocation failed (kwq == NULL).
 */
void krwq_rq_free(struct krwq_rq *rq)
{
	struct krwq_kring *kwq = rq->kwq;

	if (!kwq)
		return;
	if (rq->wq)
		vfree(rq->wq);
	else if (kwq->curr_wq != kwq->wq)
		kvfree(kwq->curr_wq);
	kvfree(kwq);
	rq->kwq = NULL;
	rq->wq = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(krwq_rq_free);

