// SPDX-License-Identifier: GPL-2.0
/*
 * mmap.c - rings that user space maps (uverbs ABI 2).
 *
 * A QP's receive ring, an SRQ's ring and a CQ's completion ring are
 * krwq_ring_alloc() memory (zeroed vmalloc pages, charged to the caller's
 * memory cgroup) that the object owns.  Each one a user context
 * may map gets an rdma_user_mmap_entry; its offset goes back in the
 * create (or resize) response and rdma-core's ipathverbs provider passes
 * it to mmap() on the uverbs file.
 *
 * Lifetime: mmap() inserts the ring's pages into the VMA, and each page
 * inserted holds a page reference, so a ring freed by destroy or replaced
 * by a resize stays readable and writable through an existing mapping
 * until that mapping goes away; the kernel no longer looks at it.  The
 * entry itself only lets new mappings be made: the owner revokes it with
 * krwq_mmap_remove() before it frees the ring, and entry->lock makes an
 * mmap() that races with that see either the whole ring or nothing.
 */
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "krwq.h"

/**
 * struct krwq_mmap_entry - one ring a user context may map.
 * @rdma: the RDMA core's entry (offset, size, reference count).
 * @lock: serialises mapping against krwq_mmap_remove().
 * @ring: the krwq_ring_alloc() memory; NULL once revoked.
 */
struct krwq_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	struct mutex lock;	/* orders mapping against revocation */
	void *ring;
};

/**
 * krwq_ring_alloc() - memory for a ring user space may map.
 * @bytes: its size; whole pages are allocated.
 *
 * Unlike vmalloc_user(), the pages are charged to the memory cgroup of
 * the caller, like every other allocation of its objects.
 *
 * Return: zeroed memory for vfree(), or NULL.
 */
void *krwq_ring_alloc(size_t bytes)
{
	return __vmalloc(bytes, GFP_KERNEL_ACCOUNT | __GFP_ZERO);
}

static struct krwq_mmap_entry *to_kentry(struct rdma_user_mmap_entry *e)
{
	return container_of(e, struct krwq_mmap_entry, rdma);
}

/**
 * krwq_mmap_insert() - let the user context of @udata map @ring.
 * @udata: the create or resize call's user data.
 * @ring: krwq_ring_alloc() memory, owned by the caller.
 * @bytes: its size (the mapping must be this size rounded up to pages).
 * @offset: where to tell user space to map it.
 *
 * Return: the entry; ERR_PTR(-EINVAL) without a user context,
 * ERR_PTR(-ENOMEM).
 */
struct rdma_user_mmap_entry *krwq_mmap_insert(struct ib_udata *udata,
					      void *ring, size_t bytes,
					      u64 *offset)
{
	struct krwq_ucontext *kuc =
		rdma_udata_to_drv_context(udata, struct krwq_ucontext, ibuc);
	struct krwq_mmap_entry *e;
	int ret;

	if (!kuc)
		return ERR_PTR(-EINVAL);
	e = kzalloc(sizeof(*e), GFP_KERNEL_ACCOUNT);
	if (!e)
		return ERR_PTR(-ENOMEM);
	mutex_init(&e->lock);
	e->ring = ring;
	/* offsets start at one page: offset 0 never maps anything */
	ret = rdma_user_mmap_entry_insert_range(&kuc->ibuc, &e->rdma, bytes, 1,
						U32_MAX);
	if (ret) {
		kfree(e);
		return ERR_PTR(ret);
	}
	*offset = rdma_user_mmap_get_offset(&e->rdma);
	return &e->rdma;
}

/**
 * krwq_mmap_offer() - krwq_mmap_insert(), and the offset copied out to
 * user space after the core's response, where rdma-core's ipathverbs
 * provider reads it.
 * @udata: the create or resize call's user data, with room for a u64.
 * @ring: krwq_ring_alloc() memory, owned by the caller.
 * @bytes: its size.
 *
 * Return: the entry, or an ERR_PTR (-EINVAL, -ENOMEM, -EFAULT); on error
 * nothing is left inserted.
 */
struct rdma_user_mmap_entry *krwq_mmap_offer(struct ib_udata *udata,
					     void *ring, size_t bytes)
{
	struct rdma_user_mmap_entry *entry;
	u64 offset;
	int ret;

	entry = krwq_mmap_insert(udata, ring, bytes, &offset);
	if (IS_ERR(entry))
		return entry;
	ret = ib_copy_to_udata(udata, &offset, sizeof(offset));
	if (ret) {
		krwq_mmap_remove(entry);
		return ERR_PTR(ret);
	}
	return entry;
}

/**
 * krwq_mmap_remove() - no new mapping of an entry's ring; existing ones
 * keep their pages.  The caller may free the ring afterwards.
 * @entry: from krwq_mmap_insert(), or NULL.
 */
void krwq_mmap_remove(struct rdma_user_mmap_entry *entry)
{
	struct krwq_mmap_entry *e;

	if (!entry)
		return;
	e = to_kentry(entry);
	mutex_lock(&e->lock);
	e->ring = NULL;
	mutex_unlock(&e->lock);
	rdma_user_mmap_entry_remove(entry);
}

/* Inserts every page of @ring; each holds a reference for the VMA. */
static int krwq_map_pages(struct vm_area_struct *vma, void *ring)
{
	unsigned long off, len = vma->vm_end - vma->vm_start;
	int ret;

	for (off = 0; off < len; off += PAGE_SIZE) {
		ret = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page(ring + off));
		if (ret)
			return ret;
	}
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	return 0;
}

/**
 * krwq_mmap() - ib_device_ops.mmap: map a ring by the offset a create or
 * resize response gave.
 * @uctx: the user context of the uverbs file.
 * @vma: the mapping; its size must be the ring's, rounded up to pages.
 *
 * Return: 0; -EINVAL for an unknown offset, a wrong size, a private
 * mapping or a revoked ring; -EPERM for an executable mapping.
 */
int krwq_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *entry;
	struct krwq_mmap_entry *e;
	int ret;

	/*
	 * The RDMA core checks the offset, that the size is exactly the
	 * entry's and that the mapping is shared (a private copy would
	 * never see the kernel's writes).
	 */
	entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!entry)
		return -EINVAL;
	e = to_kentry(entry);
	if (vma->vm_flags & VM_EXEC) {
		ret = -EPERM;
		goto out;
	}
	vma->vm_flags &= ~VM_MAYEXEC;	/* nor later, by mprotect() */
	mutex_lock(&e->lock);
	ret = e->ring ? krwq_map_pages(vma, e->ring) : -EINVAL;
	mutex_unlock(&e->lock);
out:
	rdma_user_mmap_entry_put(entry);
	return ret;
}

/**
 * krwq_mmap_free() - ib_device_ops.mmap_free: the last reference to an
 * entry is gone.
 * @entry: the entry; its ring is its owner's to free.
 */
void krwq_mmap_free(struct rdma_user_mmap_entry *entry)
{
	kfree(to_kentry(entry));
}
