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
 */
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

	rcu_read_lock();
	mr = xa_load(&dev->mrs, key >> KRWQ_KEY_INDEX_SHIFT);
	if (mr && (mr->ibmr.lkey != key || !refcount_inc_not_zero(&mr->users)))
		mr = NULL;
	rcu_read_unlock();
	if (!mr)
		return NULL;

	/* [addr, addr + len) inside [iova, iova + length), without overflow */
	if (mr->ibmr.pd != pd || (mr->access & access) != access ||
	    addr < mr->iova || addr - mr->iova > mr->length ||
	    len > mr->length - (addr - mr->iova)) {
		krwq_mr_put(mr);
		return NULL;
	}
	return mr;
}

/**
 * krwq_mr_put() - release a reference from krwq_mr_get().
 * @mr: the region.
 */
void krwq_mr_put(struct krwq_mr *mr)
{
	if (refcount_dec_and_test(&mr->users))
		complete(&mr->released);
}

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
	off = addr - mr->iova + mr->offset;
	*contig = PAGE_SIZE - offset_in_page(off);
	return page_address(mr->pages[off >> PAGE_SHIFT]) + offset_in_page(off);
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
