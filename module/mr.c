// SPDX-License-Identifier: GPL-2.0
/*
 * mr.c - memory regions, their keys, and copies between scatter lists.
 *
 * A key is (index << 8) | tag: the index finds the region in the device's
 * table, the random tag makes a key that was guessed, or kept after the
 * region was deregistered and its index reused, fail to match.  lkey and
 * rkey are the same value; whether a remote peer may use it is decided by
 * the region's access flags.
 *
 * User regions are pinned with ib_umem_get().  With no DMA device the
 * RDMA core maps nothing; the pinned pages are kept in order and data is
 * copied through the kernel's direct mapping (x86_64 has no highmem).
 *
 * Fast-registration regions (alloc_mr, for kernel consumers) hold a page
 * list that map_mr_sg fills; an IB_WR_REG_MR executed on a send queue
 * gives them a key, access and range (krwq_mr_fast_reg()), and an
 * IB_WR_LOCAL_INV or a remote invalidation (SEND_WITH_INV) takes them
 * away (krwq_mr_invalidate()).  The consumer picks the key's low byte (its
 * "variant"); a key of an earlier registration no longer matches.
 *
 * The device's local DMA lkey (KRWQ_LOCAL_DMA_LKEY) names every kernel
 * virtual address for kernel PDs' local access, without a table entry.
 */
#include <kunit/visibility.h>
#include <linux/highmem.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "krwq.h"

static_assert(!IS_ENABLED(CONFIG_HIGHMEM));

#define KRWQ_KEY_INDEX_SHIFT 8

static struct krwq_mr *krwq_mr_alloc(struct krwq_dev *dev, struct ib_pd *pd,
				     int access)
{
	struct krwq_mr *mr;
	u32 index, key;
	int ret;

	if (atomic_inc_return(&dev->n_mr) > KRWQ_MAX_MR) {
		atomic_dec(&dev->n_mr);
		return ERR_PTR(-ENOMEM);
	}
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		atomic_dec(&dev->n_mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->dev = dev;
	mr->access = access;
	mr->valid = true;
	refcount_set(&mr->users, 1);
	init_completion(&mr->released);

	/* publish only once the key is final: reserve the slot first */
	ret = xa_alloc_cyclic_irq(&dev->mrs, &index, NULL,
				  XA_LIMIT(1, KRWQ_MAX_MR), &dev->next_mr_index,
				  GFP_KERNEL);
	if (ret < 0) {
		kfree(mr);
		atomic_dec(&dev->n_mr);
		return ERR_PTR(ret == -EBUSY ? -ENOMEM : ret);
	}
	key = (index << KRWQ_KEY_INDEX_SHIFT) | get_random_u8();
	mr->key = key;
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	mr->ibmr.pd = pd;
	return mr;
}

static void krwq_mr_publish(struct krwq_mr *mr)
{
	xa_store_irq(&mr->dev->mrs, mr->ibmr.lkey >> KRWQ_KEY_INDEX_SHIFT, mr,
		     GFP_KERNEL);
}

static void krwq_mr_free(struct krwq_mr *mr)
{
	xa_erase_irq(&mr->dev->mrs, mr->ibmr.lkey >> KRWQ_KEY_INDEX_SHIFT);
	atomic_dec(&mr->dev->n_mr);
	kfree_rcu(mr, rcu);
}

/**
 * krwq_get_dma_mr() - ib_device_ops.get_dma_mr: a region covering every
 * kernel virtual address, for kernel consumers.
 * @ibpd: the PD.
 * @access: IB_ACCESS_* flags.
 *
 * Return: the region or an ERR_PTR.
 */
struct ib_mr *krwq_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct krwq_mr *mr;

	mr = krwq_mr_alloc(to_kdev(ibpd->device), ibpd, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->kind = KRWQ_MR_DMA;
	mr->iova = 0;
	mr->length = U64_MAX;
	krwq_mr_publish(mr);
	return &mr->ibmr;
}

static int krwq_mr_pin(struct krwq_mr *mr, u64 start, u64 length, int access)
{
	struct ib_umem *umem;
	struct sg_page_iter iter;
	size_t n = 0, npages;

	umem = ib_umem_get(&mr->dev->ibdev, start, length, access);
	if (IS_ERR(umem))
		return PTR_ERR(umem);
	npages = ib_umem_num_pages(umem);
	mr->pages = kvmalloc_array(npages, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages) {
		ib_umem_release(umem);
		return -ENOMEM;
	}
	for_each_sgtable_page(&umem->sgt_append.sgt, &iter, 0) {
		if (WARN_ON_ONCE(n >= npages))
			break;
		mr->pages[n++] = sg_page_iter_page(&iter);
	}
	mr->umem = umem;
	mr->offset = ib_umem_offset(umem);
	return 0;
}

/**
 * krwq_reg_user_mr() - ib_device_ops.reg_user_mr: pin user memory.
 * @ibpd: the PD.
 * @start: user virtual address of the memory.
 * @length: its size in bytes.
 * @iova: the address work requests will use for @start.
 * @access: IB_ACCESS_* flags, already checked by the RDMA core.
 * @udata: user data (none is exchanged).
 *
 * Return: the region, or an ERR_PTR: -EINVAL for an empty, oversized or
 * wrapping range, -ENOMEM past max_mr, or what pinning returned.
 */
struct ib_mr *krwq_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
			       u64 iova, int access, struct ib_udata *udata)
{
	struct krwq_mr *mr;
	u64 end;
	int ret;

	if (!length || length > KRWQ_MAX_MR_SIZE ||
	    check_add_overflow(start, length, &end) ||
	    check_add_overflow(iova, length, &end))
		return ERR_PTR(-EINVAL);
	mr = krwq_mr_alloc(to_kdev(ibpd->device), ibpd, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	ret = krwq_mr_pin(mr, start, length, access);
	if (ret) {
		krwq_mr_free(mr);
		return ERR_PTR(ret);
	}
	mr->kind = KRWQ_MR_USER;
	mr->iova = iova;
	mr->length = length;
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	krwq_mr_publish(mr);
	return &mr->ibmr;
}

/**
 * krwq_alloc_mr() - ib_device_ops.alloc_mr: a fast-registration region,
 * invalid until an IB_WR_REG_MR gives it pages, a key and access.
 * @ibpd: the PD.
 * @type: IB_MR_TYPE_MEM_REG only.
 * @max_num_sg: the most pages it will hold.
 *
 * Context: process.
 * Return: the region, or an ERR_PTR: -EINVAL for another type or more
 * than KRWQ_MAX_FAST_REG_PAGES pages, -ENOMEM.
 */
struct ib_mr *krwq_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			    u32 max_num_sg)
{
	struct krwq_mr *mr;

	if (type != IB_MR_TYPE_MEM_REG || !max_num_sg ||
	    max_num_sg > KRWQ_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);
	mr = krwq_mr_alloc(to_kdev(ibpd->device), ibpd, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	/* one allocation: the list being mapped, then the registered one */
	mr->page_list = kvcalloc(2 * max_num_sg, sizeof(*mr->page_list),
				 GFP_KERNEL);
	if (!mr->page_list) {
		krwq_mr_free(mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->reg_pages = mr->page_list + max_num_sg;
	mr->kind = KRWQ_MR_FAST;
	mr->max_pages = max_num_sg;
	mr->valid = false;
	krwq_mr_publish(mr);
	return &mr->ibmr;
}

static int krwq_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct krwq_mr *mr = to_kmr(ibmr);

	if (mr->npages == mr->max_pages)
		return -ENOMEM;
	mr->page_list[mr->npages++] = addr;
	return 0;
}

/**
 * krwq_map_mr_sg() - ib_device_ops.map_mr_sg: a fast-registration
 * region's page list from a scatterlist (kernel virtual addresses: there
 * is no DMA device).
 * @ibmr: the region, from krwq_alloc_mr().
 * @sg: the scatterlist.
 * @sg_nents: its entries.
 * @sg_offset: offset into the first entry, or NULL.
 *
 * The new list takes effect with the next IB_WR_REG_MR of the region,
 * which copies it; a registration in force keeps its own pages.
 *
 * Return: how many entries were mapped (fewer than @sg_nents when the
 * page list is full or an entry does not fit the page size).
 */
int krwq_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		   unsigned int *sg_offset)
{
	struct krwq_mr *mr = to_kmr(ibmr);

	if (mr->kind != KRWQ_MR_FAST)
		return -EINVAL;
	mr->npages = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset, krwq_set_page);
}

/**
 * krwq_mr_fast_reg() - execute an IB_WR_REG_MR: the region takes @key,
 * @access and the range and page list map_mr_sg gave it.
 * @mr: the region.
 * @pd: the PD of the posting QP.
 * @key: the new lkey and rkey: the region's index, any variant.
 * @access: IB_ACCESS_* flags.
 *
 * Context: any; the caller holds the posting QP's s_lock.
 * Return: 0; -EBUSY while a copy still holds the region, invalid as it
 * is (an invalidation whose WQE was flushed before the copy let go: the
 * caller tries again later); or -EINVAL (not a fast-registration region,
 * another PD, a key of another region, no page size, no page mapped, a
 * range beyond the page list, or access flags the verbs forbid, such as
 * remote write without local write).  Nothing changes unless it is 0.
 */
int krwq_mr_fast_reg(struct krwq_mr *mr, struct ib_pd *pd, u32 key, int access)
{
	u64 page_size = mr->ibmr.page_size, first;

	/* only a free region is registered, as on rxe: LOCAL_INV first */
	if (mr->kind != KRWQ_MR_FAST || mr->ibmr.pd != pd || mr->valid ||
	    key >> KRWQ_KEY_INDEX_SHIFT != mr->ibmr.lkey >> KRWQ_KEY_INDEX_SHIFT ||
	    !is_power_of_2(page_size) || page_size < 512 ||
	    ib_check_mr_access(&mr->dev->ibdev, access))
		return -EINVAL;
	/*
	 * the pages a copy still reads through the region are not changed
	 * under it; no new copy finds it while it is invalid
	 */
	if (refcount_read(&mr->users) > 1)
		return -EBUSY;
	first = mr->ibmr.iova & (page_size - 1);
	/* no page mapped (a failed or empty map_mr_sg): nothing to register */
	if (!mr->npages ||
	    mr->ibmr.length > (u64)mr->npages * page_size - first)
		return -EINVAL;
	/*
	 * No key matches while the fields change (index 0 is nobody's).
	 * krwq_mr_get() checks the key and valid again after reading the
	 * fields, so a lookup with an earlier variant that raced this
	 * registration fails instead of reaching the new pages.
	 */
	WRITE_ONCE(mr->key, mr->key & ((1U << KRWQ_KEY_INDEX_SHIFT) - 1));
	/* the fields below are written after the key is seen invalid */
	smp_wmb();
	mr->access = access;
	mr->iova = mr->ibmr.iova;
	mr->length = mr->ibmr.length;
	mr->page_shift = ilog2(page_size);
	mr->offset = first;
	/* a later map_mr_sg prepares the next registration, not this one */
	memcpy(mr->reg_pages, mr->page_list,
	       mr->npages * sizeof(*mr->reg_pages));
	mr->reg_npages = mr->npages;
	WRITE_ONCE(mr->key, key);
	mr->ibmr.lkey = key;
	mr->ibmr.rkey = key;
	/* the fields above are visible before valid is seen set */
	smp_wmb();
	WRITE_ONCE(mr->valid, true);
	return 0;
}

/**
 * krwq_mr_invalidate() - an IB_WR_LOCAL_INV or a remote invalidation: the
 * fast-registration region @key names stops being usable.
 * @dev: the device of the region.
 * @pd: the PD the region must belong to.
 * @key: its current key.
 *
 * No new copy finds the region once this has marked it invalid.  A copy
 * that had found it before may still be running, on another CPU or on
 * this one under an interrupt, and it stops at its next window
 * (KRWQ_IRQOFF_BYTES, krwq_run_copy()); this never waits for it, because
 * its caller holds a QP lock that such a copy may need before it can let
 * go.  The caller calls again later, in another context, until the region
 * is free: only then may the invalidation complete, since its completion
 * tells the consumer that the memory may be freed.  Calling again with the
 * same key, or invalidating an invalid region, changes nothing.
 *
 * Context: any, a hard interrupt included; takes no lock and never spins.
 * Return: 0 when no copy holds the region; -EBUSY when one still does
 * (the region is invalid all the same);
 * -EINVAL when @key names no fast-registration region of @pd (or a stale
 * variant of one).
 */
int krwq_mr_invalidate(struct krwq_dev *dev, struct ib_pd *pd, u32 key)
{
	struct krwq_mr *mr;
	int ret = -EINVAL;

	rcu_read_lock();
	mr = xa_load(&dev->mrs, key >> KRWQ_KEY_INDEX_SHIFT);
	if (mr && mr->kind == KRWQ_MR_FAST && mr->ibmr.pd == pd &&
	    READ_ONCE(mr->key) == key) {
		WRITE_ONCE(mr->valid, false);
		/* pairs with the smp_mb() in krwq_mr_get() */
		smp_mb();
		/* users: the registration's own reference, and the copies' */
		ret = refcount_read(&mr->users) > 1 ? -EBUSY : 0;
	}
	rcu_read_unlock();
	return ret;
}

/**
 * krwq_dereg_mr() - ib_device_ops.dereg_mr.
 * @ibmr: the region; its key stops working at once.
 * @udata: user data.
 *
 * Waits for copies that hold the region to finish, then unpins it.
 *
 * Return: 0.
 */
int krwq_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct krwq_mr *mr = to_kmr(ibmr);

	/* no new lookup finds it; wait out the ones that did */
	xa_store_irq(&mr->dev->mrs, ibmr->lkey >> KRWQ_KEY_INDEX_SHIFT, NULL,
		     GFP_KERNEL);
	krwq_mr_put(mr);
	wait_for_completion(&mr->released);
	if (mr->umem)
		ib_umem_release(mr->umem);
	kvfree(mr->pages);
	kvfree(mr->page_list);
	krwq_mr_free(mr);
	return 0;
}

/**
 * krwq_mr_get() - find the region a key names and take a reference on it.
 * @dev: the device.
 * @pd: the PD the region must belong to.
 * @key: an lkey or rkey (they are the same value).
 * @access: IB_ACCESS_* bits the region must grant: IB_ACCESS_REMOTE_* for
 *          a peer's access, IB_ACCESS_LOCAL_WRITE to write locally, 0 to
 *          read locally.
 * @addr: first byte accessed.
 * @len: bytes accessed.
 *
 * Return: the region, to be released with krwq_mr_put(), or NULL when the
 * key is unknown or stale, the PD differs, access is not granted or the
 * range falls outside the region.
 */
struct krwq_mr *krwq_mr_get(struct krwq_dev *dev, struct ib_pd *pd, u32 key,
			    int access, u64 addr, u64 len)
{
	struct krwq_mr *mr;

	/* kernel PDs only, local access only */
	if (key == KRWQ_LOCAL_DMA_LKEY) {
		if (!pd || pd->uobject || (access & ~IB_ACCESS_LOCAL_WRITE))
			return NULL;
		refcount_inc(&dev->local_dma_mr.users);
		return &dev->local_dma_mr;
	}
	rcu_read_lock();
	mr = xa_load(&dev->mrs, key >> KRWQ_KEY_INDEX_SHIFT);
	if (mr && (READ_ONCE(mr->key) != key || !READ_ONCE(mr->valid) ||
		   !refcount_inc_not_zero(&mr->users)))
		mr = NULL;
	rcu_read_unlock();
	if (!mr)
		return NULL;
	/*
	 * The fields after the key and valid; and, with the smp_mb() of
	 * krwq_mr_invalidate(), either it sees this reference or this sees
	 * valid clear below.
	 */
	smp_mb();
	if (mr->kind == KRWQ_MR_FAST &&
	    (READ_ONCE(mr->key) != key || !READ_ONCE(mr->valid))) {
		krwq_mr_put(mr);
		return NULL;
	}

	/* [addr, addr + len) inside [iova, iova + length), without overflow */
	if (mr->ibmr.pd != pd || (mr->access & access) != access ||
	    addr < mr->iova || addr - mr->iova > mr->length ||
	    len > mr->length - (addr - mr->iova)) {
		krwq_mr_put(mr);
		return NULL;
	}
	return mr;
}
EXPORT_SYMBOL_IF_KUNIT(krwq_mr_get);

/**
 * krwq_mr_put() - release a reference from krwq_mr_get().
 * @mr: the region.
 */
void krwq_mr_put(struct krwq_mr *mr)
{
	if (refcount_dec_and_test(&mr->users))
		complete(&mr->released);
}
EXPORT_SYMBOL_IF_KUNIT(krwq_mr_put);

/*
 * Kernel address of byte @addr of a referenced region; *@contig is set to
 * how many bytes from there are contiguous.
 */
static void *krwq_mr_kaddr(struct krwq_mr *mr, u64 addr, u32 *contig)
{
	unsigned long off;

	if (mr->kind == KRWQ_MR_DMA) {
		*contig = U32_MAX;
		return (void *)(uintptr_t)addr;
	}
	if (mr->kind == KRWQ_MR_FAST) {
		u64 page = 1ULL << mr->page_shift, i;

		off = addr - mr->iova + mr->offset;
		i = off >> mr->page_shift;
		/* REG_MR checked the range against the pages it copied */
		if (WARN_ON_ONCE(i >= mr->reg_npages)) {
			*contig = 0;
			return NULL;
		}
		off &= page - 1;
		*contig = min_t(u64, page - off, U32_MAX);
		return (void *)(uintptr_t)(mr->reg_pages[i] + off);
	}
	off = addr - mr->iova + mr->offset;
	*contig = PAGE_SIZE - offset_in_page(off);
	return page_address(mr->pages[off >> PAGE_SHIFT]) + offset_in_page(off);
}

/**
 * krwq_mr_atomic() - an IB atomic on 8 bytes of a referenced region:
 * compare-and-swap or fetch-and-add, atomic against every other access to
 * the memory, the CPU's included.
 * @mr: the region, checked for remote atomic access over [addr, addr + 8).
 * @addr: the target; 8-byte aligned.
 * @cmp_swap: compare-and-swap, else fetch-and-add.
 * @cmp_add: the compare value, or the addend.
 * @swap: the swap value.
 * @orig: set to the value before the operation.
 *
 * Context: any.
 * Return: 0, or -EINVAL for a misaligned target.
 */
int krwq_mr_atomic(struct krwq_mr *mr, u64 addr, bool cmp_swap, u64 cmp_add,
		   u64 swap, u64 *orig)
{
	u32 contig;
	u64 *p;

	if (!IS_ALIGNED(addr, sizeof(u64)))
		return -EINVAL;
	p = krwq_mr_kaddr(mr, addr, &contig);
	if (!p || contig < sizeof(u64))
		return -EINVAL;
	if (cmp_swap)
		*orig = cmpxchg64(p, cmp_add, swap);
	else
		*orig = atomic64_fetch_add(cmp_add, (atomic64_t *)p);
	return 0;
}

/* Kernel address and contiguous length at a cursor; NULL at the end. */
static void *krwq_cursor_span(struct krwq_sge_cursor *c, u32 *n)
{
	u32 contig;
	void *p;

	while (c->off == c->sge->length) {
		if (!c->left)
			return NULL;
		c->sge++;
		c->mrs++;
		c->left--;
		c->off = 0;
	}
	p = krwq_mr_kaddr(*c->mrs, c->sge->addr + c->off, &contig);
	*n = min(contig, c->sge->length - c->off);
	return p;
}

/**
 * krwq_cursor_revoked() - whether a region a scatter list holds was
 * invalidated after the copy through it took its reference.
 * @c: the cursor; the regions of its whole list are held (krwq_mr_get())
 *     until the message is done, those it has passed and those past the
 *     message's end too, so each of them keeps an invalidation waiting.
 *
 * Only a fast-registration region can be: krwq_mr_invalidate() marks it
 * invalid, and the invalidation completes once every copy holding it has
 * let go.  A plain READ_ONCE() of the mark: seeing it a window late only
 * makes that invalidation wait one window longer.
 *
 * Context: any; the caller holds the references.
 * Return: true if a region of the list is invalid.
 */
bool krwq_cursor_revoked(const struct krwq_sge_cursor *c)
{
	u32 i;

	for (i = 0; i < c->nheld; i++) {
		const struct krwq_mr *mr = c->held[i];	/* NULL: empty entry */

		if (mr && mr->kind == KRWQ_MR_FAST && !READ_ONCE(mr->valid))
			return true;
	}
	return false;
}

/**
 * krwq_copy() - copy bytes from one scatter list to another.
 * @dst: where to write; its regions were checked for local write.
 * @src: where to read.
 * @len: bytes to copy; both lists hold at least that many.
 *
 * Return: 0, or -EINVAL if a list ran out first.
 */
int krwq_copy(struct krwq_sge_cursor *dst, struct krwq_sge_cursor *src,
	      u32 len)
{
	while (len) {
		u32 dn, sn, n;
		void *d = krwq_cursor_span(dst, &dn);
		void *s = krwq_cursor_span(src, &sn);

		if (!d || !s)
			return -EINVAL;
		n = min3(len, dn, sn);
		memcpy(d, s, n);
		dst->off += n;
		src->off += n;
		len -= n;
	}
	return 0;
}

/**
 * krwq_write() - write a kernel buffer into a scatter list.
 * @dst: where to write; its regions were checked for local write.
 * @buf: the bytes, or NULL to step over @len bytes without writing.
 * @len: bytes.
 *
 * Return: 0, or -EINVAL if the list ran out first.
 */
int krwq_write(struct krwq_sge_cursor *dst, const void *buf, u32 len)
{
	while (len) {
		u32 dn, n;
		void *d = krwq_cursor_span(dst, &dn);

		if (!d)
			return -EINVAL;
		n = min(len, dn);
		if (buf) {
			memcpy(d, buf, n);
			buf += n;
		}
		dst->off += n;
		len -= n;
	}
	return 0;
}
