// SPDX-License-Identifier: GPL-2.0
/*
 * fast_reg.c - krwq_verbs cases: fast registration (REG_MR, the bad cases,
 * remapping), LOCAL_INV and SEND_WITH_INV, and an invalidation of a region
 * that a copy still holds, from the host or from the wire, never waiting
 * for it with a QP lock held.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/scatterlist.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_pack.h>
#include <rdma/ib_verbs.h>

#include "../../module/krwq.h"
#include "../../module/resp.h"
#include "../../module/wire.h"
#include "env.h"

/*
 * A fast-registration region over @pages pages of @buf, mapped and
 * registered for local and remote write by WR 1 on d of a new pair c, d.
 */
static struct ib_mr *kv_fr_registered(struct kunit *t, struct kv_env *v, u8 *buf,
				      u32 pages, struct scatterlist *sg,
				      struct ib_qp **c, struct ib_qp **d)
{
	struct ib_mr *mr = kv_fr_mr(v, buf, pages * PAGE_SIZE, pages, sg);
	struct ib_wc wc;

	KUNIT_ASSERT_FALSE(t, IS_ERR(mr));
	KUNIT_ASSERT_EQ(t, ib_map_mr_sg(mr, sg, 1, NULL, PAGE_SIZE), 1);
	KUNIT_ASSERT_EQ(t, kv_pair(v, c, d), 0);
	KUNIT_ASSERT_EQ(t, kv_reg(*d, mr, IB_ACCESS_LOCAL_WRITE |
				  IB_ACCESS_REMOTE_WRITE, 1), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_ASSERT_EQ(t, wc.status, IB_WC_SUCCESS);
	return mr;
}

/**
 * kv_fast_reg() - REG_MR, writes through the region, LOCAL_INV.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * REG_MR gives a fast-registration region its pages, key and access; a
 * peer writes through it; LOCAL_INV takes the key away, and a write with
 * it fails.  The device says it can (MEM_MGT_EXTENSIONS, a local DMA lkey).
 */
void kv_fast_reg(struct kunit *t)
{
	struct kv_env *v = t->priv;
	u8 *buf = kunit_kzalloc(t, 2 * PAGE_SIZE, GFP_KERNEL);
	struct scatterlist sg;
	struct ib_qp *c, *d;
	struct ib_mr *mr;
	struct ib_wc wc;
	u32 key;

	KUNIT_EXPECT_TRUE(t, v->dev->attrs.device_cap_flags &
			  IB_DEVICE_MEM_MGT_EXTENSIONS);
	/* rdma-core's own tests, and a few tools, want a vendor */
	KUNIT_EXPECT_NE(t, v->dev->attrs.vendor_id, 0u);
	KUNIT_EXPECT_NE(t, v->dev->attrs.vendor_part_id, 0u);
	KUNIT_EXPECT_TRUE(t, v->dev->attrs.kernel_cap_flags & IBK_LOCAL_DMA_LKEY);
	KUNIT_EXPECT_EQ(t, v->pd->local_dma_lkey, v->dev->local_dma_lkey);
	KUNIT_ASSERT_NOT_NULL(t, buf);
	mr = kv_fr_mr(v, buf, 2 * PAGE_SIZE, 2, &sg);
	KUNIT_ASSERT_FALSE(t, IS_ERR(mr));
	KUNIT_ASSERT_EQ(t, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE), 1);
	KUNIT_EXPECT_EQ(t, mr->length, 2 * PAGE_SIZE);

	/* not registered yet: its key gives nothing */
	memset(v->abuf, 0x5a, 64);
	KUNIT_ASSERT_EQ(t, kv_pair(v, &c, &d), 0);
	KUNIT_ASSERT_EQ(t, kv_write(v, c, v->abuf, 64, mr->iova, mr->rkey), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_EQ(t, buf[0], 0);
	kv_free_qp(v, c);
	kv_free_qp(v, d);

	KUNIT_ASSERT_EQ(t, kv_pair(v, &c, &d), 0);
	KUNIT_ASSERT_EQ(t, kv_reg(d, mr, IB_ACCESS_LOCAL_WRITE |
				  IB_ACCESS_REMOTE_WRITE, 1), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_REG_MR);
	key = mr->rkey;

	/* across the page boundary */
	KUNIT_ASSERT_EQ(t, kv_write(v, c, v->abuf, 64,
				    mr->iova + PAGE_SIZE - 32, key), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, buf[PAGE_SIZE - 32], 0x5a);
	KUNIT_EXPECT_EQ(t, buf[PAGE_SIZE + 31], 0x5a);
	KUNIT_EXPECT_EQ(t, buf[PAGE_SIZE + 32], 0);

	KUNIT_ASSERT_EQ(t, kv_local_inv(d, key, 2), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_LOCAL_INV);
	/* invalidating an invalid key again changes nothing */
	KUNIT_ASSERT_EQ(t, kv_local_inv(d, key, 3), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);

	/* the invalidated key no longer reaches the memory */
	memset(v->abuf, 0x66, 64);
	KUNIT_ASSERT_EQ(t, kv_write(v, c, v->abuf, 64, mr->iova, key), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_EQ(t, buf[0], 0);
	kv_free_qp(v, c);
	kv_free_qp(v, d);
	kv_fr_free(v, mr, &sg);
}

/**
 * kv_fast_reg_no_pages() - a REG_MR of a region with no page mapped is
 * refused.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * A REG_MR of a region whose last ib_map_mr_sg() mapped no page is
 * refused, whatever iova and length the region holds: a range check
 * against zero pages must not wrap and let an empty page list through.
 */
void kv_fast_reg_no_pages(struct kunit *t)
{
	struct kv_env *v = t->priv;
	u8 *buf = kunit_kzalloc(t, PAGE_SIZE, GFP_KERNEL);
	struct scatterlist sg;
	struct ib_qp *c, *d;
	struct ib_mr *mr;
	struct ib_wc wc;

	KUNIT_ASSERT_NOT_NULL(t, buf);
	mr = kv_fr_mr(v, buf, PAGE_SIZE, 1, &sg);
	KUNIT_ASSERT_FALSE(t, IS_ERR(mr));
	KUNIT_EXPECT_LE(t, ib_map_mr_sg(mr, &sg, 0, NULL, PAGE_SIZE), 0);
	/* what a ULP's earlier mapping may have left */
	mr->iova = 0x10;
	mr->length = 0x10;
	KUNIT_ASSERT_EQ(t, kv_pair(v, &c, &d), 0);
	KUNIT_ASSERT_EQ(t, kv_reg(d, mr, IB_ACCESS_LOCAL_WRITE |
				  IB_ACCESS_REMOTE_WRITE, 1), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_LOC_PROT_ERR);
	kv_free_qp(v, c);
	kv_free_qp(v, d);
	kv_fr_free(v, mr, &sg);
}

/**
 * kv_fast_reg_remap() - mapping a registered region again does not
 * redirect its key.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * map_mr_sg prepares the page list of the next REG_MR; the registration
 * in force keeps the pages it was registered with.  A consumer that maps
 * a registered region again (to other memory) before invalidating it
 * must not redirect writes through the old key.
 */
void kv_fast_reg_remap(struct kunit *t)
{
	struct kv_env *v = t->priv;
	u8 *buf = kunit_kzalloc(t, 2 * PAGE_SIZE, GFP_KERNEL);
	u8 *other = kunit_kzalloc(t, PAGE_SIZE, GFP_KERNEL);
	struct scatterlist sg, sg2;
	struct ib_qp *c, *d;
	struct ib_mr *mr;
	struct ib_wc wc;
	u64 iova;
	u32 key;

	KUNIT_ASSERT_NOT_NULL(t, buf);
	KUNIT_ASSERT_NOT_NULL(t, other);
	mr = kv_fr_registered(t, v, buf, 2, &sg, &c, &d);
	key = mr->rkey;
	iova = mr->iova;

	sg_init_one(&sg2, other, PAGE_SIZE);
	KUNIT_ASSERT_EQ(t, ib_dma_map_sg(v->dev, &sg2, 1, DMA_BIDIRECTIONAL), 1);
	KUNIT_EXPECT_EQ(t, ib_map_mr_sg(mr, &sg2, 1, NULL, PAGE_SIZE), 1);
	memset(v->abuf, 0x5a, 64);
	KUNIT_ASSERT_EQ(t, kv_write(v, c, v->abuf, 64,
				    iova + PAGE_SIZE - 32, key), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, buf[PAGE_SIZE - 32], 0x5a);
	KUNIT_EXPECT_EQ(t, buf[PAGE_SIZE + 31], 0x5a);
	KUNIT_EXPECT_EQ(t, other[PAGE_SIZE - 32], 0);
	KUNIT_ASSERT_EQ(t, kv_local_inv(d, key, 2), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	kv_free_qp(v, c);
	kv_free_qp(v, d);
	ib_dma_unmap_sg(v->dev, &sg2, 1, DMA_BIDIRECTIONAL);
	kv_fr_free(v, mr, &sg);
}

/**
 * kv_fast_reg_refused() - the REG_MR and LOCAL_INV that must fail.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * The bad cases: a map beyond the page list, REG_MR of another PD's
 * region, a re-registration making the earlier key variant stale, and
 * LOCAL_INV of a stale variant.
 */
void kv_fast_reg_refused(struct kunit *t)
{
	struct kv_env *v = t->priv;
	u8 *buf = kunit_kzalloc(t, 8 * PAGE_SIZE, GFP_KERNEL);
	struct ib_pd *pd2 = ib_alloc_pd(v->dev, 0);
	struct scatterlist sg, sg2;
	struct ib_qp *c, *d;
	struct ib_mr *mr, *mr2;
	struct ib_wc wc;
	u32 old;

	KUNIT_ASSERT_NOT_NULL(t, buf);
	KUNIT_ASSERT_FALSE(t, IS_ERR(pd2));
	mr = ib_alloc_mr(v->pd, IB_MR_TYPE_MEM_REG, 100000);
	KUNIT_EXPECT_TRUE(t, IS_ERR(mr));
	mr = kv_fr_mr(v, buf, 8 * PAGE_SIZE, 4, &sg);
	KUNIT_ASSERT_FALSE(t, IS_ERR(mr));
	/* eight pages do not fit a list of four */
	KUNIT_EXPECT_LT(t, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE), 1);
	sg.length = 4 * PAGE_SIZE;
	sg_dma_len(&sg) = 4 * PAGE_SIZE;
	KUNIT_ASSERT_EQ(t, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE), 1);

	KUNIT_ASSERT_EQ(t, kv_pair(v, &c, &d), 0);
	/* a region of another PD */
	mr2 = ib_alloc_mr(pd2, IB_MR_TYPE_MEM_REG, 1);
	KUNIT_ASSERT_FALSE(t, IS_ERR(mr2));
	sg_init_one(&sg2, v->bbuf, 64);
	KUNIT_ASSERT_EQ(t, ib_dma_map_sg(v->dev, &sg2, 1, DMA_BIDIRECTIONAL), 1);
	KUNIT_ASSERT_EQ(t, ib_map_mr_sg(mr2, &sg2, 1, NULL, PAGE_SIZE), 1);
	KUNIT_ASSERT_EQ(t, kv_reg(d, mr2, IB_ACCESS_REMOTE_WRITE |
				  IB_ACCESS_LOCAL_WRITE, 1), 0);
	ib_dma_unmap_sg(v->dev, &sg2, 1, DMA_BIDIRECTIONAL);
	ib_dereg_mr(mr2);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_LOC_PROT_ERR);
	KUNIT_EXPECT_EQ(t, kv_wait_state(d, IB_QPS_ERR), IB_QPS_ERR);
	kv_free_qp(v, c);
	kv_free_qp(v, d);

	/* remote write without local write is no valid access (IB 10.6.3.1) */
	KUNIT_ASSERT_EQ(t, kv_pair(v, &c, &d), 0);
	old = mr->rkey;
	KUNIT_ASSERT_EQ(t, kv_reg(d, mr, IB_ACCESS_REMOTE_WRITE, 6), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_LOC_PROT_ERR);
	/* nothing changed: the region is still free (registered below) */
	mr->rkey = old;
	mr->lkey = old;
	kv_free_qp(v, c);
	kv_free_qp(v, d);

	/* a registered region is not registered again: LOCAL_INV first */
	KUNIT_ASSERT_EQ(t, kv_pair(v, &c, &d), 0);
	KUNIT_ASSERT_EQ(t, kv_reg(d, mr, IB_ACCESS_REMOTE_WRITE |
				  IB_ACCESS_LOCAL_WRITE, 2), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_ASSERT_EQ(t, wc.status, IB_WC_SUCCESS);
	old = mr->rkey;
	KUNIT_ASSERT_EQ(t, kv_reg(d, mr, IB_ACCESS_REMOTE_WRITE |
				  IB_ACCESS_LOCAL_WRITE, 3), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_LOC_PROT_ERR);
	mr->rkey = old;
	mr->lkey = old;
	kv_free_qp(v, c);
	kv_free_qp(v, d);

	/* invalidated and registered again: the earlier variant is stale */
	KUNIT_ASSERT_EQ(t, kv_pair(v, &c, &d), 0);
	KUNIT_ASSERT_EQ(t, kv_local_inv(d, old, 4), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_ASSERT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(t, kv_reg(d, mr, IB_ACCESS_REMOTE_WRITE |
				  IB_ACCESS_LOCAL_WRITE, 5), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_ASSERT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_NE(t, old, mr->rkey);
	KUNIT_ASSERT_EQ(t, kv_write(v, c, v->abuf, 8, mr->iova, mr->rkey), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(t, kv_write(v, c, v->abuf, 8, mr->iova, old), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_ACCESS_ERR);
	kv_free_qp(v, c);
	kv_free_qp(v, d);

	/* LOCAL_INV of a stale variant fails, and the QP goes to ERR */
	KUNIT_ASSERT_EQ(t, kv_pair(v, &c, &d), 0);
	KUNIT_ASSERT_EQ(t, kv_local_inv(d, old, 4), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_LOC_PROT_ERR);
	kv_free_qp(v, c);
	kv_free_qp(v, d);
	kv_fr_free(v, mr, &sg);
	ib_dealloc_pd(pd2);
}

/*
 * A signaled SEND_WITH_INV of v->abuf's first 16 bytes, invalidating @key,
 * into *@wr and *@sge.
 */
static void kv_inv_wr(struct kv_env *v, struct ib_send_wr *wr, struct ib_sge *sge,
		      u64 wr_id, u32 key, int flags)
{
	*sge = (struct ib_sge){
		.addr = (uintptr_t)v->abuf, .length = 16,
		.lkey = v->pd->local_dma_lkey,
	};
	*wr = (struct ib_send_wr){
		.wr_id = wr_id, .sg_list = sge, .num_sge = 1,
		.opcode = IB_WR_SEND_WITH_INV,
		.send_flags = IB_SEND_SIGNALED | flags,
		.ex.invalidate_rkey = key,
	};
}

/*
 * SEND_WITH_INV (with @flags) invalidates the receiver's region and says
 * so.  An inline payload lies in the send queue: the sender holds no
 * region that the invalidation could count as its own, and before, the
 * invalidation read that list of held regions anyway, from a NULL
 * pointer (an oops under the receiver's r_lock).
 * Return: the region's key, its region gone.
 */
static noinline u32 kv_send_inv_once(struct kunit *t, struct kv_env *v,
				     int flags)
{
	u8 *buf = kunit_kzalloc(t, PAGE_SIZE, GFP_KERNEL);
	const struct ib_send_wr *bad;
	struct ib_send_wr wr;
	struct scatterlist sg;
	struct ib_sge sge;
	struct ib_qp *c, *d;
	struct ib_mr *mr;
	struct ib_wc wc;
	u32 key;

	KUNIT_ASSERT_NOT_NULL(t, buf);
	mr = kv_fr_registered(t, v, buf, 1, &sg, &c, &d);
	key = mr->rkey;

	kv_inv_wr(v, &wr, &sge, 9, mr->rkey, flags);
	KUNIT_ASSERT_EQ(t, kv_post_recv(v, d, 10, v->bbuf, 64), 0);
	KUNIT_ASSERT_EQ(t, ib_post_send(c, &wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_TRUE(t, wc.wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(t, wc.ex.invalidate_rkey, mr->rkey);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(t, kv_write(v, c, v->abuf, 8, mr->iova, mr->rkey), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_ACCESS_ERR);
	kv_free_qp(v, c);
	kv_free_qp(v, d);
	kv_fr_free(v, mr, &sg);
	return key;
}

/* A SEND_WITH_INV from @c to @d of @key, which names no region of d's. */
static noinline void kv_send_inv_bad(struct kunit *t, struct kv_env *v,
				     struct ib_qp *c, struct ib_qp *d, u32 key)
{
	const struct ib_send_wr *bad;
	struct ib_send_wr wr;
	struct ib_sge sge;
	struct ib_wc wc;

	kv_inv_wr(v, &wr, &sge, 9, key, 0);

	KUNIT_ASSERT_EQ(t, kv_post_recv(v, d, 11, v->bbuf, 64), 0);
	KUNIT_ASSERT_EQ(t, ib_post_send(c, &wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_INV_REQ_ERR);
	KUNIT_ASSERT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_NE(t, wc.status, IB_WC_SUCCESS);
	kv_free_qp(v, c);
	kv_free_qp(v, d);
}

/**
 * kv_send_with_invalidate() - SEND_WITH_INV, and the keys it refuses.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * SEND_WITH_INV, plain and inline; and a key the receiver has no region
 * for, a stale variant of a live region's and a gone region's: an
 * invalid request.
 */
void kv_send_with_invalidate(struct kunit *t)
{
	struct kv_env *v = t->priv;
	u8 *buf = kunit_kzalloc(t, PAGE_SIZE, GFP_KERNEL);
	struct scatterlist sg;
	struct ib_qp *c, *d;
	struct ib_mr *mr;
	u32 key;

	kv_send_inv_once(t, v, 0);
	key = kv_send_inv_once(t, v, IB_SEND_INLINE);

	KUNIT_ASSERT_NOT_NULL(t, buf);
	mr = kv_fr_registered(t, v, buf, 1, &sg, &c, &d);
	kv_send_inv_bad(t, v, c, d, ib_inc_rkey(mr->rkey));
	kv_fr_free(v, mr, &sg);
	KUNIT_ASSERT_EQ(t, kv_pair(v, &c, &d), 0);
	kv_send_inv_bad(t, v, c, d, key);
}

/* One ib_post_send() from a kthread of its own. */
struct kv_poster {
	struct kv_env *v;
	struct ib_qp *qp;
	const struct ib_send_wr *wr;
	int ret;
	struct completion done;
};

static int kv_poster_fn(void *arg)
{
	struct kv_poster *p = arg;
	const struct ib_send_wr *bad;

	p->ret = ib_post_send(p->qp, p->wr, &bad);
	/* gone from this module's text once the waiter wakes */
	kthread_complete_and_exit(&p->done, 0);
}

/*
 * A reference to fast-registration region @mr, as a copy through it holds
 * one (until its next window, krwq_run_copy()).
 */
static struct krwq_mr *kv_mr_hold(struct kv_env *v, struct ib_mr *mr)
{
	return krwq_mr_get(to_kmr(mr)->dev, v->pd, mr->rkey, 0, mr->iova, 1);
}

/*
 * A reference let go from a timer's interrupt, as a copy on another CPU
 * lets go while this CPU waits for it.  The timer comes in even where
 * the wait keeps this CPU from everything else (bottom halves off).
 */
struct kv_release {
	struct hrtimer timer;
	struct krwq_mr *held;
};

static enum hrtimer_restart kv_release_fn(struct hrtimer *h)
{
	struct kv_release *r = container_of(h, struct kv_release, timer);

	krwq_mr_put(r->held);
	return HRTIMER_NORESTART;
}

/* @r lets @held go 20 ms from now. */
static void kv_release_arm(struct kv_release *r, struct krwq_mr *held)
{
	r->held = held;
	hrtimer_init_on_stack(&r->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	r->timer.function = kv_release_fn;
	hrtimer_start(&r->timer, ms_to_ktime(20), HRTIMER_MODE_REL_HARD);
}

/* Sleeps until well after @r's timer; lets go itself if it never ran. */
static void kv_release_wait(struct kv_release *r)
{
	msleep(60);
	if (hrtimer_cancel(&r->timer))
		krwq_mr_put(r->held);
	destroy_hrtimer_on_stack(&r->timer);
}

/* @mr registered again on @qp, under its next key; 0 if it completed. */
static int kv_rereg(struct kv_env *v, struct ib_qp *qp, struct ib_mr *mr)
{
	struct ib_wc wc;

	if (kv_reg(qp, mr, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE, 40) ||
	    kv_poll(v->scq, &wc, 1) != 1)
		return -EIO;
	return wc.status == IB_WC_SUCCESS ? 0 : -EIO;
}

/*
 * The LOCAL_INV part of kv_invalidate_never_waits_locked(): posted on @qp
 * while this test holds @mr, it completes only once a timer lets go.
 */
static noinline void kv_inv_local_held(struct kunit *t, struct kv_env *v,
				       struct ib_mr *mr, struct ib_qp *qp)
{
	struct krwq_mr *held = kv_mr_hold(v, mr);
	struct kv_release r;
	unsigned long flags;
	int ret, polled;
	struct ib_wc wc;
	u64 waits;

	KUNIT_ASSERT_NOT_NULL(t, held);
	waits = kv_counter(v, "inv_waits");
	/* posted and looked at before the timer can fire */
	local_irq_save(flags);
	kv_release_arm(&r, held);
	ret = kv_local_inv(qp, mr->rkey, 42);
	polled = ib_poll_cq(v->scq, 1, &wc);
	local_irq_restore(flags);
	KUNIT_EXPECT_EQ(t, ret, 0);
	KUNIT_EXPECT_EQ(t, polled, 0);
	KUNIT_EXPECT_EQ(t, kv_counter(v, "inv_waits"), waits + 1);
	KUNIT_EXPECT_NULL(t, kv_mr_hold(v, mr));
	kv_release_wait(&r);
	KUNIT_EXPECT_EQ(t, kv_counter(v, "inv_waits"), waits + 1);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 42);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
}

/*
 * Posts @p's WR from a kthread on a CPU other than this one, lets it reach
 * the wait, and modifies @d (s_lock, then r_lock) meanwhile.  The caller
 * runs pinned to this CPU.  Return: 0, or -ECHILD without a kthread.
 */
static noinline int kv_post_elsewhere(struct kunit *t, struct kv_poster *p,
				      struct ib_qp *d)
{
	struct ib_qp_attr attr = { .min_rnr_timer = 12 };
	int here = raw_smp_processor_id(), there;
	struct task_struct *task;

	u64 waits = kv_counter(p->v, "inv_waits");
	int i;

	there = cpumask_any_but(cpu_online_mask, here);
	task = kthread_create(kv_poster_fn, p, "kv_poster");
	if (IS_ERR(task)) {
		KUNIT_FAIL(t, "kthread_create: %ld", PTR_ERR(task));
		return -ECHILD;
	}
	kthread_bind(task, there);
	wake_up_process(task);
	/* the SEND's payload is in place, and it waits */
	for (i = 0; i < 2000 && kv_counter(p->v, "inv_waits") == waits; i++)
		usleep_range(1000, 2000);
	KUNIT_EXPECT_EQ(t, kv_counter(p->v, "inv_waits"), waits + 1);
	KUNIT_EXPECT_EQ(t, ib_modify_qp(d, &attr, IB_QP_MIN_RNR_TIMER), 0);
	return 0;
}

/*
 * A SEND_WITH_INV of @mr on @c to @d while the region is held: posted with
 * interrupts off, or from a kthread while this one modifies @d.
 */
static noinline void kv_inv_send_held(struct kunit *t, struct kv_env *v,
				      struct ib_mr *mr, struct ib_qp *c,
				      struct ib_qp *d, bool irqs_off)
{
	struct ib_send_wr wr;
	struct ib_sge sge;
	struct kv_poster poster = { .v = v, .qp = c, .wr = &wr };
	const struct ib_send_wr *bad;
	struct krwq_mr *held;
	struct kv_release r;
	unsigned long flags;
	struct ib_wc wc;
	int polled;

	kv_inv_wr(v, &wr, &sge, 43, mr->rkey, 0);
	held = kv_mr_hold(v, mr);
	KUNIT_ASSERT_NOT_NULL(t, held);
	KUNIT_ASSERT_EQ(t, kv_post_recv(v, d, 44, v->bbuf, 64), 0);
	init_completion(&poster.done);
	if (irqs_off) {
		/* send_work may run only once this has looked */
		local_irq_save(flags);
		kv_release_arm(&r, held);
		poster.ret = ib_post_send(c, &wr, &bad);
		polled = ib_poll_cq(v->rcq, 1, &wc);
		local_irq_restore(flags);
		complete(&poster.done);
		KUNIT_EXPECT_EQ(t, polled, 0);
		kv_release_wait(&r);
	} else {
		if (kv_post_elsewhere(t, &poster, d)) {
			krwq_mr_put(held);
			return;
		}
		KUNIT_EXPECT_EQ(t, ib_poll_cq(v->rcq, 1, &wc), 0);
		krwq_mr_put(held);
	}
	wait_for_completion(&poster.done);
	KUNIT_EXPECT_EQ(t, poster.ret, 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 44);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_TRUE(t, wc.wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(t, wc.ex.invalidate_rkey, mr->rkey);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
}

/**
 * kv_invalidate_never_waits_locked() - no invalidation waits for a held
 * region with a QP lock held.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * A region that a copy still holds keeps its invalidation from completing,
 * since the completion tells the consumer that the memory may go; but no
 * CPU waits for it with a QP lock held, because the copy may need that
 * lock, or one whose holder waits for it, before it can let go (issue 27
 * item 3).  The test holds the region itself, as a copy on another CPU,
 * or on this one under an interrupt, would:
 * - a LOCAL_INV stays at the head of its send queue, send_work tries it
 *   again, and it completes once the region is let go;
 * - a SEND_WITH_INV posted with interrupts off goes to send_work;
 * - a SEND_WITH_INV posted from a kthread on another CPU waits with the
 *   receiver's r_lock let go, so a modify_qp of the receiver (its s_lock,
 *   then its r_lock) on this CPU returns meanwhile.
 * Meanwhile no new copy finds the region.  Before, each of these spun
 * under a QP lock, for a reference this test held, or with a lock this
 * test then waited for: the machine hung.
 */
void kv_invalidate_never_waits_locked(struct kunit *t)
{
	const struct cpumask *here;
	struct kv_env *v = t->priv;
	u8 *buf = kunit_kzalloc(t, PAGE_SIZE, GFP_KERNEL);
	struct scatterlist sg;
	struct ib_qp *c, *d;
	struct ib_mr *mr;

	KUNIT_ASSERT_NOT_NULL(t, buf);
	if (num_online_cpus() < 2)
		kunit_skip(t, "one CPU: no other to post from");
	mr = kv_fr_registered(t, v, buf, 1, &sg, &c, &d);
	/* this thread stays on its CPU; the kthread posts on another */
	here = cpumask_of(raw_smp_processor_id());
	KUNIT_ASSERT_EQ(t, set_cpus_allowed_ptr(current, here), 0);
	kv_inv_local_held(t, v, mr, d);
	KUNIT_EXPECT_EQ(t, kv_rereg(v, d, mr), 0);
	kv_inv_send_held(t, v, mr, c, d, true);
	KUNIT_EXPECT_EQ(t, kv_rereg(v, d, mr), 0);
	kv_inv_send_held(t, v, mr, c, d, false);
	set_cpus_allowed_ptr(current, cpu_possible_mask);
	kv_free_qp(v, c);
	kv_free_qp(v, d);
	kv_fr_free(v, mr, &sg);
}

/* @pkt from the wire into @qp's responder, as the socket's softirq brings it. */
static void kv_wire_feed(struct ib_qp *qp, const struct krwq_wire_pkt *pkt,
			 const void *payload)
{
	struct krwq_qp *kqp = to_kqp(qp);

	local_bh_disable();
	krwq_resp_wire_rc(kqp, pkt, &kqp->attr.ah_attr.grh.dgid,
			  &kqp->route.sgid, payload);
	local_bh_enable();
}

/**
 * kv_wire_invalidate_later() - a SEND_WITH_INV from the wire whose region
 * is held completes later, from the QP's inv_work.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * A SEND_WITH_INV from the wire whose region a copy still holds: its
 * payload is placed, but it is neither completed nor acknowledged, and
 * its PSN is still the one expected; the requester's retry of the packet
 * meanwhile changes nothing (and is not counted again).  Once the region
 * is let go, the QP's inv_work completes it with the invalidation, with
 * no retry needed.  Before, the responder spun in softirq under the QP's
 * r_lock for the reference this test held: the machine hung.
 */
void kv_wire_invalidate_later(struct kunit *t)
{
	struct kv_env *v = t->priv;
	u8 *buf = kunit_kzalloc(t, PAGE_SIZE, GFP_KERNEL);
	struct krwq_wire_pkt pkt = {
		.opcode = IB_OPCODE_RC | IB_OPCODE_SEND_ONLY_WITH_INVALIDATE,
		.pkey = IB_DEFAULT_PKEY_FULL, .payload_len = 16,
	};
	struct scatterlist sg;
	struct krwq_mr *held;
	struct ib_qp *c, *d;
	struct ib_mr *mr;
	struct ib_wc wc;
	u64 waits;

	KUNIT_ASSERT_NOT_NULL(t, buf);
	mr = kv_fr_registered(t, v, buf, 1, &sg, &c, &d);
	pkt.dqpn = d->qp_num;
	pkt.psn = to_kqp(d)->wire_rx.epsn;
	pkt.inv_rkey = mr->rkey;
	memset(v->abuf, 0x3c, 16);
	KUNIT_ASSERT_EQ(t, kv_post_recv(v, d, 51, v->bbuf, 64), 0);
	held = kv_mr_hold(v, mr);
	KUNIT_ASSERT_NOT_NULL(t, held);
	waits = kv_counter(v, "inv_waits");
	kv_wire_feed(d, &pkt, v->abuf);
	msleep(20);	/* inv_work looks again, a tick at a time */
	kv_wire_feed(d, &pkt, v->abuf);	/* the requester's retry */
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->rcq, 1, &wc), 0);
	KUNIT_EXPECT_EQ(t, to_kqp(d)->wire_rx.epsn, pkt.psn);
	KUNIT_EXPECT_EQ(t, kv_counter(v, "inv_waits"), waits + 1);
	krwq_mr_put(held);
	KUNIT_ASSERT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 51);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.byte_len, 16u);
	KUNIT_EXPECT_TRUE(t, wc.wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(t, wc.ex.invalidate_rkey, mr->rkey);
	KUNIT_EXPECT_EQ(t, to_kqp(d)->wire_rx.epsn, krwq_psn_add(pkt.psn, 1));
	KUNIT_EXPECT_EQ(t, memcmp(v->bbuf, v->abuf, 16), 0);
	KUNIT_EXPECT_NULL(t, kv_mr_hold(v, mr));
	kv_free_qp(v, c);
	kv_free_qp(v, d);
	kv_fr_free(v, mr, &sg);
}
