// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_suite.c - the KUnit suite "krwq_verbs": krwq0 driven through the
 * RDMA core's kernel verbs, as an in-kernel consumer would.  Needs krwq.ko
 * loaded (it provides krwq0).  A few cases also look at what no verb
 * shows (an SRQ's cached count) or call a device helper directly (the ERR
 * re-flush budget, exported to KUnit by EXPORT_SYMBOL_IF_KUNIT).
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_pack.h>
#include <rdma/ib_verbs.h>

#include "../module/krwq.h"
#include "../module/resp.h"
#include "../module/uflush.h"
#include "../module/wire.h"
#include "counter.h"

#define VT_DEPTH	16
#define VT_BUF		4096
#define VT_LID		1	/* krwq0's port LID */
#define VT_EXTRA_QPS	4	/* QPs a test may create beyond a and b */

struct vt {
	struct kunit *t;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *scq, *rcq;
	struct ib_qp *a, *b;		/* connected to each other */
	struct ib_qp *extra[VT_EXTRA_QPS];	/* see vt_new_qp() */
	struct ib_srq *srq;
	u8 *abuf, *bbuf;
	u8 *big_src, *big_dst;	/* vt_big_bufs(); vt_exit() frees them */
	atomic_t events[IB_EVENT_GID_CHANGE + 1];
	atomic_t comp_calls;
};

static void vt_event(struct ib_event *ev, void *ctx)
{
	struct vt *v = ctx;

	if (ev->event <= IB_EVENT_GID_CHANGE)
		atomic_inc(&v->events[ev->event]);
}

static void vt_comp(struct ib_cq *cq, void *ctx)
{
	struct vt *v = ctx;

	atomic_inc(&v->comp_calls);
}

static struct ib_qp *vt_qp(struct vt *v, enum ib_qp_type type, bool srq)
{
	struct ib_qp_init_attr init = {
		.event_handler = vt_event,
		.qp_context = v,
		.send_cq = v->scq,
		.recv_cq = v->rcq,
		.srq = srq ? v->srq : NULL,
		.cap = {
			.max_send_wr = VT_DEPTH, .max_recv_wr = VT_DEPTH,
			.max_send_sge = 4, .max_recv_sge = 4,
			.max_inline_data = 64,
		},
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = type,
	};

	return ib_create_qp(v->pd, &init);
}

/*
 * A QP of one test beyond a and b.  vt_exit() destroys it if the test did
 * not get to vt_free_qp() (a failed assertion), before the CQs it uses.
 */
static struct ib_qp *vt_new_qp(struct vt *v, enum ib_qp_type type, bool srq)
{
	struct ib_qp *qp = vt_qp(v, type, srq);
	int i;

	if (IS_ERR(qp))
		return qp;
	for (i = 0; i < VT_EXTRA_QPS; i++) {
		if (!v->extra[i]) {
			v->extra[i] = qp;
			return qp;
		}
	}
	ib_destroy_qp(qp);
	return ERR_PTR(-ENOSPC);
}

static void vt_free_qp(struct vt *v, struct ib_qp *qp)
{
	int i;

	for (i = 0; i < VT_EXTRA_QPS; i++)
		if (v->extra[i] == qp)
			v->extra[i] = NULL;
	ib_destroy_qp(qp);
}

/*
 * RESET -> INIT -> RTR -> RTS, aimed at QP @dest behind LID @lid (RC/UC),
 * with the RC requester's local ACK @timeout and @retry_cnt, and @rd_atom
 * as both its initiator depth and its responder resources
 */
static int vt_connect_rd(struct ib_qp *qp, u16 lid, u32 dest, u8 rnr_retry,
			 u8 timeout, u8 retry_cnt, u8 rd_atom)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
				   IB_ACCESS_REMOTE_ATOMIC,
		.qkey = 0x11111111,
	};
	int mask = IB_QP_STATE | IB_QP_PKEY_INDEX | IB_QP_PORT;
	int ret;

	mask |= qp->qp_type == IB_QPT_UD ? IB_QP_QKEY : IB_QP_ACCESS_FLAGS;
	ret = ib_modify_qp(qp, &a, mask);
	if (ret)
		return ret;
	a.qp_state = IB_QPS_RTR;
	mask = IB_QP_STATE;
	if (qp->qp_type != IB_QPT_UD) {
		a.path_mtu = IB_MTU_4096;
		a.dest_qp_num = dest;
		a.rq_psn = 0;
		a.ah_attr.type = RDMA_AH_ATTR_TYPE_IB;
		rdma_ah_set_dlid(&a.ah_attr, lid);
		rdma_ah_set_port_num(&a.ah_attr, 1);
		mask |= IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN;
		if (qp->qp_type == IB_QPT_RC) {
			a.max_dest_rd_atomic = rd_atom;
			a.min_rnr_timer = 1;
			mask |= IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER;
		}
	}
	ret = ib_modify_qp(qp, &a, mask);
	if (ret)
		return ret;
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = 0;
	mask = IB_QP_STATE | IB_QP_SQ_PSN;
	if (qp->qp_type == IB_QPT_RC) {
		a.timeout = timeout;
		a.retry_cnt = retry_cnt;
		a.rnr_retry = rnr_retry;
		a.max_rd_atomic = rd_atom;
		mask |= IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			IB_QP_MAX_QP_RD_ATOMIC;
	}
	return ib_modify_qp(qp, &a, mask);
}

static int vt_connect_to(struct ib_qp *qp, u16 lid, u32 dest, u8 rnr_retry,
			 u8 timeout, u8 retry_cnt)
{
	return vt_connect_rd(qp, lid, dest, rnr_retry, timeout, retry_cnt, 1);
}

static int vt_connect_retry(struct ib_qp *qp, u32 dest, u8 rnr_retry,
			    u8 timeout, u8 retry_cnt)
{
	return vt_connect_to(qp, VT_LID, dest, rnr_retry, timeout, retry_cnt);
}

static int vt_connect(struct ib_qp *qp, u32 dest, u8 rnr_retry)
{
	return vt_connect_retry(qp, dest, rnr_retry, 14, 7);
}

/* The device's counter @name, as `rdma statistic` would show it. */
static u64 vt_counter(struct vt *v, const char *name)
{
	return krwq_test_counter(v->dev, name);
}

static int vt_init(struct kunit *t)
{
	struct ib_cq_init_attr cq_attr = { .cqe = 4 * VT_DEPTH };
	struct ib_srq_init_attr srq_attr = {
		.event_handler = vt_event,
		.attr = { .max_wr = VT_DEPTH, .max_sge = 4 },
	};
	struct vt *v;

	v = kunit_kzalloc(t, sizeof(*v), GFP_KERNEL);
	if (!v)
		return -ENOMEM;
	t->priv = v;
	v->t = t;
	v->dev = ib_device_get_by_name("krwq0", RDMA_DRIVER_QIB);
	if (!v->dev)
		return -ENODEV;
	v->abuf = kunit_kzalloc(t, VT_BUF, GFP_KERNEL);
	v->bbuf = kunit_kzalloc(t, VT_BUF, GFP_KERNEL);
	v->pd = ib_alloc_pd(v->dev, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (!v->abuf || !v->bbuf || IS_ERR(v->pd))
		return -ENOMEM;
	v->scq = ib_create_cq(v->dev, vt_comp, vt_event, v, &cq_attr);
	v->rcq = ib_create_cq(v->dev, vt_comp, vt_event, v, &cq_attr);
	srq_attr.srq_context = v;
	v->srq = ib_create_srq(v->pd, &srq_attr);
	if (IS_ERR(v->scq) || IS_ERR(v->rcq) || IS_ERR(v->srq))
		return -ENOMEM;
	v->a = vt_qp(v, IB_QPT_RC, false);
	v->b = vt_qp(v, IB_QPT_RC, false);
	if (IS_ERR(v->a) || IS_ERR(v->b))
		return -ENOMEM;
	if (vt_connect(v->a, v->b->qp_num, 7) || vt_connect(v->b, v->a->qp_num, 7))
		return -EIO;
	return 0;
}

static void vt_exit(struct kunit *t)
{
	struct vt *v = t->priv;
	int i;

	if (!v || !v->dev)
		return;
	for (i = 0; i < VT_EXTRA_QPS; i++)
		if (v->extra[i])
			ib_destroy_qp(v->extra[i]);
	if (!IS_ERR_OR_NULL(v->a))
		ib_destroy_qp(v->a);
	if (!IS_ERR_OR_NULL(v->b))
		ib_destroy_qp(v->b);
	if (!IS_ERR_OR_NULL(v->srq))
		ib_destroy_srq(v->srq);
	if (!IS_ERR_OR_NULL(v->scq))
		ib_destroy_cq(v->scq);
	if (!IS_ERR_OR_NULL(v->rcq))
		ib_destroy_cq(v->rcq);
	if (!IS_ERR_OR_NULL(v->pd))
		ib_dealloc_pd(v->pd);
	ib_device_put(v->dev);
	vfree(v->big_src);
	vfree(v->big_dst);
}

/* Polls @n completions from @cq within two seconds. */
static int vt_poll(struct ib_cq *cq, struct ib_wc *wc, int n)
{
	unsigned long end = jiffies + 2 * HZ;
	int got = 0;

	while (got < n && time_before(jiffies, end)) {
		int r = ib_poll_cq(cq, n - got, wc + got);

		if (r < 0)
			return r;
		got += r;
		if (got < n)
			usleep_range(100, 200);
	}
	return got;
}

/* Events are delivered from a work item: wait up to two seconds. */
static int vt_wait_event(struct vt *v, enum ib_event_type type, int want)
{
	unsigned long end = jiffies + 2 * HZ;

	while (atomic_read(&v->events[type]) < want && time_before(jiffies, end))
		usleep_range(500, 1000);
	return atomic_read(&v->events[type]);
}

/* The move to ERR after a responder error is deferred: wait for it. */
static enum ib_qp_state vt_wait_state(struct ib_qp *qp, enum ib_qp_state want)
{
	unsigned long end = jiffies + 2 * HZ;
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	do {
		if (ib_query_qp(qp, &attr, IB_QP_STATE, &init))
			return -1;
		if (attr.qp_state == want)
			break;
		usleep_range(500, 1000);
	} while (time_before(jiffies, end));
	return attr.qp_state;
}

static int vt_post_recv(struct vt *v, struct ib_qp *qp, u64 wr_id, u8 *buf,
			u32 len)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)buf, .length = len, .lkey = v->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	const struct ib_recv_wr *bad;

	return ib_post_recv(qp, &wr, &bad);
}

static int vt_send(struct vt *v, struct ib_qp *qp, u64 wr_id, u8 *buf, u32 len)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)buf, .length = len, .lkey = v->pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED,
	};
	const struct ib_send_wr *bad;

	return ib_post_send(qp, &wr, &bad);
}

static void vt_send_recv(struct kunit *t)
{
	struct vt *v = t->priv;
	struct ib_wc wc;
	int i;

	for (i = 0; i < VT_BUF; i++)
		v->abuf[i] = i * 7;
	KUNIT_ASSERT_EQ(t, vt_post_recv(v, v->b, 1, v->bbuf, VT_BUF), 0);
	KUNIT_ASSERT_EQ(t, vt_send(v, v->a, 2, v->abuf, 3000), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 1ull);
	KUNIT_EXPECT_EQ(t, wc.byte_len, 3000u);
	KUNIT_EXPECT_EQ(t, wc.src_qp, v->a->qp_num);
	KUNIT_EXPECT_PTR_EQ(t, wc.qp, v->b);
	KUNIT_EXPECT_EQ(t, memcmp(v->abuf, v->bbuf, 3000), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_SEND);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 2ull);
}

/* Kernel consumers may post from atomic context: nothing may sleep. */
static void vt_post_with_irqs_off(struct kunit *t)
{
	struct vt *v = t->priv;
	unsigned long flags;
	struct ib_wc wc[2];
	int r1, r2;

	local_irq_save(flags);
	r1 = vt_post_recv(v, v->b, 1, v->bbuf, 64);
	r2 = vt_send(v, v->a, 2, v->abuf, 64);
	local_irq_restore(flags);
	KUNIT_EXPECT_EQ(t, r1, 0);
	KUNIT_EXPECT_EQ(t, r2, 0);
	KUNIT_EXPECT_EQ(t, vt_poll(v->rcq, wc, 1), 1);
	KUNIT_EXPECT_EQ(t, vt_poll(v->scq, wc + 1, 1), 1);
}

static void vt_recv_capacity(struct kunit *t)
{
	struct vt *v = t->priv;
	int i;

	for (i = 0; i < VT_DEPTH; i++)
		KUNIT_EXPECT_EQ(t, vt_post_recv(v, v->b, i, v->bbuf, 8), 0);
	KUNIT_EXPECT_EQ(t, vt_post_recv(v, v->b, i, v->bbuf, 8), -ENOMEM);
}

static void vt_recv_in_reset(struct kunit *t)
{
	struct vt *v = t->priv;
	struct ib_qp_attr a = { .qp_state = IB_QPS_RESET };

	KUNIT_ASSERT_EQ(t, ib_modify_qp(v->b, &a, IB_QP_STATE), 0);
	KUNIT_EXPECT_EQ(t, vt_post_recv(v, v->b, 1, v->bbuf, 8), -EINVAL);
}

static void vt_flush_on_error(struct kunit *t)
{
	struct vt *v = t->priv;
	struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };
	struct ib_wc wc;
	int i;

	for (i = 0; i < 5; i++)
		KUNIT_ASSERT_EQ(t, vt_post_recv(v, v->b, 100 + i, v->bbuf, 8), 0);
	KUNIT_ASSERT_EQ(t, ib_modify_qp(v->b, &a, IB_QP_STATE), 0);
	for (i = 0; i < 5; i++) {
		KUNIT_ASSERT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_WR_FLUSH_ERR);
		KUNIT_EXPECT_EQ(t, wc.wr_id, 100ull + i);
		KUNIT_EXPECT_PTR_EQ(t, wc.qp, v->b);
	}
	/* posting in ERR completes at once */
	KUNIT_EXPECT_EQ(t, vt_post_recv(v, v->b, 200, v->bbuf, 8), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 200ull);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_WR_FLUSH_ERR);
}

static void vt_too_small(struct kunit *t)
{
	struct vt *v = t->priv;
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(t, vt_post_recv(v, v->b, 1, v->bbuf, 100), 0);
	KUNIT_ASSERT_EQ(t, vt_send(v, v->a, 2, v->abuf, 200), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_LOC_LEN_ERR);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_INV_REQ_ERR);
	KUNIT_EXPECT_EQ(t, vt_wait_state(v->a, IB_QPS_ERR), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(t, vt_wait_state(v->b, IB_QPS_ERR), IB_QPS_ERR);
}

static void vt_rdma_write_read(struct kunit *t)
{
	struct vt *v = t->priv;
	struct ib_sge sge = {
		.addr = (uintptr_t)v->abuf, .length = 512,
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_RDMA_WRITE },
		.remote_addr = (uintptr_t)v->bbuf,
		.rkey = v->pd->unsafe_global_rkey,
	};
	const struct ib_send_wr *bad;
	struct ib_wc wc;

	memset(v->abuf, 0x5a, 512);
	KUNIT_ASSERT_EQ(t, ib_post_send(v->a, &wr.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_RDMA_WRITE);
	KUNIT_EXPECT_EQ(t, v->bbuf[0], 0x5a);
	KUNIT_EXPECT_EQ(t, v->bbuf[511], 0x5a);
	KUNIT_EXPECT_EQ(t, v->bbuf[512], 0);

	memset(v->bbuf, 0xa5, 512);
	wr.wr.opcode = IB_WR_RDMA_READ;
	KUNIT_ASSERT_EQ(t, ib_post_send(v->a, &wr.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_RDMA_READ);
	KUNIT_EXPECT_EQ(t, wc.byte_len, 512u);
	KUNIT_EXPECT_EQ(t, v->abuf[0], 0xa5);

	/* a wrong rkey: remote access error, and both sides go to ERR */
	wr.rkey ^= 0x80;
	KUNIT_ASSERT_EQ(t, ib_post_send(v->a, &wr.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_ACCESS_ERR);
}

static void vt_rnr_retry_exceeded(struct kunit *t)
{
	struct vt *v = t->priv;
	struct ib_wc wc;
	struct ib_qp *c, *d;

	c = vt_new_qp(v, IB_QPT_RC, false);
	d = vt_new_qp(v, IB_QPT_RC, false);
	KUNIT_ASSERT_FALSE(t, IS_ERR(c) || IS_ERR(d));
	KUNIT_ASSERT_EQ(t, vt_connect(c, d->qp_num, 1), 0);
	KUNIT_ASSERT_EQ(t, vt_connect(d, c->qp_num, 1), 0);
	KUNIT_ASSERT_EQ(t, vt_send(v, c, 9, v->abuf, 16), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_RNR_RETRY_EXC_ERR);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 9ull);
	vt_free_qp(v, c);
	vt_free_qp(v, d);
}

/* With rnr_retry 7 the sender waits for ever: a late receive completes it. */
static void vt_rnr_waits_for_receive(struct kunit *t)
{
	struct vt *v = t->priv;
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(t, vt_send(v, v->a, 3, v->abuf, 16), 0);
	msleep(30);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->scq, 1, &wc), 0);
	KUNIT_ASSERT_EQ(t, vt_post_recv(v, v->b, 4, v->bbuf, 64), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 4ull);
}

static void vt_srq_limit_and_resize(struct kunit *t)
{
	struct vt *v = t->priv;
	struct ib_srq_attr sa = { .srq_limit = 3 };
	struct ib_sge sge = {
		.addr = (uintptr_t)v->bbuf, .length = 64,
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };
	const struct ib_recv_wr *bad;
	struct ib_wc wc;
	struct ib_qp *s;
	int i;

	s = vt_new_qp(v, IB_QPT_RC, true);
	KUNIT_ASSERT_FALSE(t, IS_ERR(s));
	KUNIT_ASSERT_EQ(t, vt_connect(s, v->a->qp_num, 7), 0);
	for (i = 0; i < 6; i++) {
		wr.wr_id = i;
		KUNIT_ASSERT_EQ(t, ib_post_srq_recv(v->srq, &wr, &bad), 0);
	}
	KUNIT_EXPECT_EQ(t, ib_modify_srq(v->srq, &sa, IB_SRQ_LIMIT), 0);
	sa.max_wr = 5;	/* smaller than what is posted */
	KUNIT_EXPECT_EQ(t, ib_modify_srq(v->srq, &sa, IB_SRQ_MAX_WR), -EINVAL);
	sa.max_wr = 64;
	KUNIT_EXPECT_EQ(t, ib_modify_srq(v->srq, &sa, IB_SRQ_MAX_WR), 0);
	KUNIT_EXPECT_EQ(t, ib_query_srq(v->srq, &sa), 0);
	KUNIT_EXPECT_EQ(t, sa.max_wr, 64u);
	KUNIT_EXPECT_EQ(t, sa.srq_limit, 3u);

	/* re-aim a at s, and consume four of the six: 2 < 3 fires once */
	{
		struct ib_qp_attr a = { .qp_state = IB_QPS_RESET };

		KUNIT_ASSERT_EQ(t, ib_modify_qp(v->a, &a, IB_QP_STATE), 0);
		KUNIT_ASSERT_EQ(t, vt_connect(v->a, s->qp_num, 7), 0);
	}
	for (i = 0; i < 4; i++) {
		KUNIT_ASSERT_EQ(t, vt_send(v, v->a, 50 + i, v->abuf, 32), 0);
		KUNIT_ASSERT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
		KUNIT_EXPECT_EQ(t, wc.wr_id, (u64)i);	/* in order after resize */
		KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	}
	KUNIT_EXPECT_EQ(t, vt_wait_event(v, IB_EVENT_SRQ_LIMIT_REACHED, 1), 1);
	KUNIT_EXPECT_EQ(t, ib_query_srq(v->srq, &sa), 0);
	KUNIT_EXPECT_EQ(t, sa.srq_limit, 0u);
	vt_free_qp(v, s);
}

static void vt_ud(struct kunit *t)
{
	struct vt *v = t->priv;
	struct rdma_ah_attr ah_attr = { .type = RDMA_AH_ATTR_TYPE_IB };
	struct ib_qp *u1, *u2;
	struct ib_ah *ah;
	struct ib_sge sge = {
		.addr = (uintptr_t)v->abuf, .length = 100,
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_ud_wr wr = {
		.wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED },
		.remote_qkey = 0x11111111,
	};
	const struct ib_send_wr *bad;
	struct ib_wc wc;

	rdma_ah_set_dlid(&ah_attr, VT_LID);
	rdma_ah_set_port_num(&ah_attr, 1);
	u1 = vt_new_qp(v, IB_QPT_UD, false);
	u2 = vt_new_qp(v, IB_QPT_UD, false);
	KUNIT_ASSERT_FALSE(t, IS_ERR(u1) || IS_ERR(u2));
	KUNIT_ASSERT_EQ(t, vt_connect(u1, 0, 0), 0);
	KUNIT_ASSERT_EQ(t, vt_connect(u2, 0, 0), 0);
	ah = rdma_create_ah(v->pd, &ah_attr, 0);
	KUNIT_ASSERT_FALSE(t, IS_ERR(ah));
	wr.ah = ah;
	wr.remote_qpn = u2->qp_num;
	memset(v->abuf, 0x3c, 100);
	KUNIT_ASSERT_EQ(t, vt_post_recv(v, u2, 8, v->bbuf, 140), 0);
	KUNIT_ASSERT_EQ(t, ib_post_send(u1, &wr.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.byte_len, 140u);
	KUNIT_EXPECT_EQ(t, wc.src_qp, u1->qp_num);
	KUNIT_EXPECT_EQ(t, v->bbuf[40], 0x3c);
	KUNIT_EXPECT_EQ(t, v->bbuf[139], 0x3c);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);

	/* a wrong Q_Key is dropped without a trace on the receiver */
	wr.remote_qkey = 0x22222222;
	KUNIT_ASSERT_EQ(t, vt_post_recv(v, u2, 9, v->bbuf, 140), 0);
	KUNIT_ASSERT_EQ(t, ib_post_send(u1, &wr.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->rcq, 1, &wc), 0);
	rdma_destroy_ah(ah, 0);

	/*
	 * with a GRH: its PayLen counts what follows it on the wire, BTH,
	 * DETH, the payload padded to 4 bytes, and the ICRC
	 */
	{
		union rdma_network_hdr *h = (void *)v->bbuf;
		union ib_gid gid;

		KUNIT_ASSERT_EQ(t, rdma_query_gid(v->dev, 1, 0, &gid), 0);
		rdma_ah_set_grh(&ah_attr, &gid, 0, 0, 1, 0);
		ah = rdma_create_ah(v->pd, &ah_attr, 0);
		KUNIT_ASSERT_FALSE(t, IS_ERR(ah));
		wr.ah = ah;
		wr.remote_qkey = 0x11111111;
		/* into receive 9, which the wrong Q_Key left posted */
		sge.length = 99;
		KUNIT_ASSERT_EQ(t, ib_post_send(u1, &wr.wr, &bad), 0);
		KUNIT_ASSERT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
		KUNIT_EXPECT_EQ(t, wc.wr_id, 9ull);
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
		KUNIT_EXPECT_TRUE(t, wc.wc_flags & IB_WC_GRH);
		KUNIT_EXPECT_EQ(t, be16_to_cpu(h->ibgrh.paylen),
				IB_BTH_BYTES + IB_DETH_BYTES + 100 + IB_ICRC_BYTES);
		KUNIT_EXPECT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
		rdma_destroy_ah(ah, 0);
	}
	vt_free_qp(v, u1);
	vt_free_qp(v, u2);
}

static void vt_cq_notify(struct kunit *t)
{
	struct vt *v = t->priv;
	struct ib_wc wc;
	int i;

	KUNIT_ASSERT_EQ(t, ib_req_notify_cq(v->rcq, IB_CQ_NEXT_COMP), 0);
	KUNIT_ASSERT_EQ(t, vt_post_recv(v, v->b, 1, v->bbuf, 64), 0);
	KUNIT_ASSERT_EQ(t, vt_send(v, v->a, 2, v->abuf, 64), 0);
	for (i = 0; i < 200 && !atomic_read(&v->comp_calls); i++)
		usleep_range(1000, 2000);
	KUNIT_EXPECT_EQ(t, atomic_read(&v->comp_calls), 1);
	KUNIT_EXPECT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
	/* missed events are reported when asked for */
	KUNIT_ASSERT_EQ(t, vt_post_recv(v, v->b, 3, v->bbuf, 64), 0);
	KUNIT_ASSERT_EQ(t, vt_send(v, v->a, 4, v->abuf, 64), 0);
	KUNIT_EXPECT_EQ(t, ib_req_notify_cq(v->rcq, IB_CQ_NEXT_COMP |
					    IB_CQ_REPORT_MISSED_EVENTS), 1);
}

static void vt_cq_overflow(struct kunit *t)
{
	struct vt *v = t->priv;
	struct ib_cq_init_attr cq_attr = { .cqe = 2 };
	struct ib_qp_attr attr;
	struct ib_cq *small;
	int i;

	small = ib_create_cq(v->dev, vt_comp, vt_event, v, &cq_attr);
	KUNIT_ASSERT_FALSE(t, IS_ERR(small));
	/* a's receive CQ is replaced by the small one for this case */
	ib_destroy_qp(v->b);
	{
		struct ib_qp_init_attr qi = {
			.event_handler = vt_event, .qp_context = v,
			.send_cq = v->scq, .recv_cq = small,
			.cap = { .max_send_wr = VT_DEPTH, .max_recv_wr = VT_DEPTH,
				 .max_send_sge = 1, .max_recv_sge = 1 },
			.sq_sig_type = IB_SIGNAL_REQ_WR, .qp_type = IB_QPT_RC,
		};

		v->b = ib_create_qp(v->pd, &qi);
	}
	KUNIT_ASSERT_FALSE(t, IS_ERR(v->b));
	attr.qp_state = IB_QPS_RESET;
	KUNIT_ASSERT_EQ(t, ib_modify_qp(v->a, &attr, IB_QP_STATE), 0);
	KUNIT_ASSERT_EQ(t, vt_connect(v->a, v->b->qp_num, 7), 0);
	KUNIT_ASSERT_EQ(t, vt_connect(v->b, v->a->qp_num, 7), 0);
	for (i = 0; i < 4; i++) {
		KUNIT_ASSERT_EQ(t, vt_post_recv(v, v->b, i, v->bbuf, 64), 0);
		KUNIT_ASSERT_EQ(t, vt_send(v, v->a, i, v->abuf, 8), 0);
	}
	KUNIT_EXPECT_EQ(t, vt_wait_event(v, IB_EVENT_CQ_ERR, 1), 1);
	KUNIT_EXPECT_EQ(t, vt_wait_state(v->b, IB_QPS_ERR), IB_QPS_ERR);
	ib_destroy_qp(v->b);
	v->b = NULL;
	ib_destroy_cq(small);
}

static void vt_limits_enforced(struct kunit *t)
{
	struct vt *v = t->priv;
	struct ib_cq_init_attr big = { .cqe = 65537 };
	struct ib_srq_init_attr sa = { .attr = { .max_wr = 65537, .max_sge = 1 } };
	struct ib_qp_init_attr qi = {
		.send_cq = v->scq, .recv_cq = v->rcq, .qp_type = IB_QPT_RC,
		.cap = { .max_send_wr = 16385, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_cq *cq;
	struct ib_srq *srq;
	struct ib_qp *qp;

	cq = ib_create_cq(v->dev, NULL, NULL, NULL, &big);
	KUNIT_EXPECT_EQ(t, PTR_ERR_OR_ZERO(cq), -EINVAL);
	srq = ib_create_srq(v->pd, &sa);
	KUNIT_EXPECT_EQ(t, PTR_ERR_OR_ZERO(srq), -EINVAL);
	qp = ib_create_qp(v->pd, &qi);
	KUNIT_EXPECT_EQ(t, PTR_ERR_OR_ZERO(qp), -EINVAL);
	qi.cap.max_send_wr = 1;
	qi.cap.max_recv_sge = 33;
	qp = ib_create_qp(v->pd, &qi);
	KUNIT_EXPECT_EQ(t, PTR_ERR_OR_ZERO(qp), -EINVAL);
}

/*
 * The device's limit on each kind of object: creating them until one is
 * refused stops at exactly the limit, with -ENOMEM; after one is freed the
 * next fits again.
 */
struct vt_kind {
	const char *name;
	int max;
	atomic_t *(*count)(struct krwq_dev *kdev);
	void *(*make)(struct vt *v);
	void (*drop)(void *obj);
};

static void vt_fill_to_limit(struct kunit *t, const struct vt_kind *k)
{
	struct vt *v = t->priv;
	struct krwq_dev *kdev = to_kdev(v->dev);
	void **objs = kunit_kmalloc_array(t, k->max + 1, sizeof(*objs), GFP_KERNEL);
	void *o = NULL;
	int n = 0;

	KUNIT_ASSERT_TRUE(t, objs);
	while (n <= k->max) {
		o = k->make(v);
		if (IS_ERR(o))
			break;
		objs[n++] = o;
	}
	KUNIT_EXPECT_EQ(t, PTR_ERR_OR_ZERO(o), -ENOMEM);
	KUNIT_EXPECT_EQ(t, atomic_read(k->count(kdev)), k->max);
	if (n > 0) {
		k->drop(objs[--n]);
		o = k->make(v);
		KUNIT_EXPECT_FALSE(t, IS_ERR(o));
		if (!IS_ERR(o))
			objs[n++] = o;
	}
	while (n > 0)
		k->drop(objs[--n]);
}

static atomic_t *vt_n_pd(struct krwq_dev *kdev) { return &kdev->n_pd; }
static atomic_t *vt_n_cq(struct krwq_dev *kdev) { return &kdev->n_cq; }
static atomic_t *vt_n_srq(struct krwq_dev *kdev) { return &kdev->n_srq; }
static atomic_t *vt_n_qp(struct krwq_dev *kdev) { return &kdev->n_qp; }
static atomic_t *vt_n_ah(struct krwq_dev *kdev) { return &kdev->n_ah; }

static void *vt_make_pd(struct vt *v)
{
	return ib_alloc_pd(v->dev, 0);
}

static void vt_drop_pd(void *pd)
{
	ib_dealloc_pd(pd);
}

static void *vt_make_cq(struct vt *v)
{
	struct ib_cq_init_attr a = { .cqe = 1 };

	return ib_create_cq(v->dev, NULL, NULL, NULL, &a);
}

static void vt_drop_cq(void *cq)
{
	ib_destroy_cq(cq);
}

static void *vt_make_srq(struct vt *v)
{
	struct ib_srq_init_attr a = { .attr = { .max_wr = 1, .max_sge = 1 } };

	return ib_create_srq(v->pd, &a);
}

static void vt_drop_srq(void *srq)
{
	ib_destroy_srq(srq);
}

static void *vt_make_qp(struct vt *v)
{
	struct ib_qp_init_attr init = {
		.send_cq = v->scq, .recv_cq = v->rcq, .qp_type = IB_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ib_create_qp(v->pd, &init);
}

static void vt_drop_qp(void *qp)
{
	ib_destroy_qp(qp);
}

static void *vt_make_ah(struct vt *v)
{
	struct rdma_ah_attr attr = { .type = RDMA_AH_ATTR_TYPE_IB };

	rdma_ah_set_dlid(&attr, VT_LID);
	rdma_ah_set_port_num(&attr, 1);
	return rdma_create_ah(v->pd, &attr, 0);
}

static void vt_drop_ah(void *ah)
{
	rdma_destroy_ah(ah, 0);
}

static const struct vt_kind vt_kinds[] = {
	{ "PD", KRWQ_MAX_PD, vt_n_pd, vt_make_pd, vt_drop_pd },
	{ "CQ", KRWQ_MAX_CQ, vt_n_cq, vt_make_cq, vt_drop_cq },
	{ "SRQ", KRWQ_MAX_SRQ, vt_n_srq, vt_make_srq, vt_drop_srq },
	{ "QP", KRWQ_MAX_QP, vt_n_qp, vt_make_qp, vt_drop_qp },
	{ "AH", KRWQ_MAX_AH, vt_n_ah, vt_make_ah, vt_drop_ah },
};

static void vt_kind_desc(const struct vt_kind *k, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", k->name);
}

KUNIT_ARRAY_PARAM(vt_kind, vt_kinds, vt_kind_desc);

static void vt_object_limit(struct kunit *t)
{
	vt_fill_to_limit(t, t->param_value);
}

/* Completions of a destroyed QP are gone: polling them must not see it. */
static void vt_destroy_drops_completions(struct kunit *t)
{
	struct vt *v = t->priv;
	struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(t, vt_post_recv(v, v->b, 1, v->bbuf, 8), 0);
	KUNIT_ASSERT_EQ(t, vt_post_recv(v, v->a, 2, v->abuf, 8), 0);
	KUNIT_ASSERT_EQ(t, ib_modify_qp(v->b, &a, IB_QP_STATE), 0);
	KUNIT_ASSERT_EQ(t, ib_modify_qp(v->a, &a, IB_QP_STATE), 0);
	ib_destroy_qp(v->b);
	v->b = NULL;
	KUNIT_ASSERT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 2ull);
	KUNIT_EXPECT_PTR_EQ(t, wc.qp, v->a);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->rcq, 1, &wc), 0);
}

/*
 * An RC QP not connected back to the sender does not receive from it: the
 * sender hears nothing, retries retry_cnt times after its ACK timeout and
 * then fails with IB_WC_RETRY_EXC_ERR.
 */
static void vt_foreign_sender_refused(struct kunit *t)
{
	struct vt *v = t->priv;
	u64 timeouts = vt_counter(v, "ack_timeouts");
	struct ib_wc wc;
	struct ib_qp *c;

	c = vt_new_qp(v, IB_QPT_RC, false);
	KUNIT_ASSERT_FALSE(t, IS_ERR(c));
	KUNIT_ASSERT_EQ(t, vt_connect_retry(c, v->b->qp_num, 7, 1, 3), 0);
	KUNIT_ASSERT_EQ(t, vt_post_recv(v, v->b, 1, v->bbuf, 64), 0);
	KUNIT_ASSERT_EQ(t, vt_send(v, c, 2, v->abuf, 64), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_RETRY_EXC_ERR);
	KUNIT_EXPECT_EQ(t, vt_counter(v, "ack_timeouts"), timeouts + 3);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->rcq, 1, &wc), 0);
	/* b still works with its real peer */
	KUNIT_ASSERT_EQ(t, vt_send(v, v->a, 3, v->abuf, 64), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 1ull);
	vt_free_qp(v, c);
}

/*
 * A send that reaches its peer before the peer is in RTR is retried after
 * the ACK timeout and lands once the peer has connected, as on an HCA.
 */
static void vt_send_waits_for_peer_to_connect(struct kunit *t)
{
	struct ib_qp_attr init = {
		.qp_state = IB_QPS_INIT, .port_num = 1,
	};
	struct vt *v = t->priv;
	struct ib_qp *c, *d;
	struct ib_wc wc;

	c = vt_new_qp(v, IB_QPT_RC, false);
	d = vt_new_qp(v, IB_QPT_RC, false);
	KUNIT_ASSERT_FALSE(t, IS_ERR(c) || IS_ERR(d));
	KUNIT_ASSERT_EQ(t, ib_modify_qp(d, &init, IB_QP_STATE | IB_QP_PKEY_INDEX |
					IB_QP_PORT | IB_QP_ACCESS_FLAGS), 0);
	KUNIT_ASSERT_EQ(t, vt_post_recv(v, d, 1, v->bbuf, 64), 0);
	/* timeout 0: retry every 67 ms for ever, so a slow guest cannot fail it */
	KUNIT_ASSERT_EQ(t, vt_connect_retry(c, d->qp_num, 7, 0, 0), 0);
	memset(v->abuf, 0x5a, 64);
	KUNIT_ASSERT_EQ(t, vt_send(v, c, 2, v->abuf, 64), 0);
	/* d is in INIT: nothing can have arrived */
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->scq, 1, &wc), 0);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->rcq, 1, &wc), 0);
	/* INIT -> INIT -> RTR -> RTS, the receive still posted */
	KUNIT_ASSERT_EQ(t, vt_connect(d, c->qp_num, 7), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 2ull);
	KUNIT_ASSERT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 1ull);
	KUNIT_EXPECT_EQ(t, wc.byte_len, 64u);
	KUNIT_EXPECT_EQ(t, v->bbuf[63], 0x5a);
	vt_free_qp(v, c);
	vt_free_qp(v, d);
}

/*
 * A send waiting for its ACK timeout is not lost when the QP goes to ERR:
 * it completes flushed, and timeout 0 (IB's "never") never fails it.
 */
static void vt_waiting_send_flushed(struct kunit *t)
{
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	struct vt *v = t->priv;
	struct ib_wc wc;
	struct ib_qp *c;

	c = vt_new_qp(v, IB_QPT_RC, false);
	KUNIT_ASSERT_FALSE(t, IS_ERR(c));
	KUNIT_ASSERT_EQ(t, vt_connect_retry(c, v->b->qp_num, 7, 0, 0), 0);
	KUNIT_ASSERT_EQ(t, vt_send(v, c, 9, v->abuf, 64), 0);
	msleep(200);	/* three of timeout 0's retries */
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->scq, 1, &wc), 0);
	KUNIT_ASSERT_EQ(t, ib_modify_qp(c, &err, IB_QP_STATE), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 9ull);
	vt_free_qp(v, c);
}

/* ib_drain_sq() posts an RDMA WRITE into ERR, whatever the QP type. */
static void vt_error_flushes_any_opcode(struct kunit *t)
{
	struct vt *v = t->priv;
	struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 77, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED },
	};
	const struct ib_send_wr *bad;
	struct ib_wc wc;
	struct ib_qp *u;

	u = vt_new_qp(v, IB_QPT_UD, false);
	KUNIT_ASSERT_FALSE(t, IS_ERR(u));
	KUNIT_ASSERT_EQ(t, vt_connect(u, 0, 0), 0);
	KUNIT_EXPECT_EQ(t, ib_post_send(u, &wr.wr, &bad), -EINVAL);
	KUNIT_ASSERT_EQ(t, ib_modify_qp(u, &a, IB_QP_STATE), 0);
	KUNIT_EXPECT_EQ(t, ib_post_send(u, &wr.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 77ull);
	vt_free_qp(v, u);
}

/*
 * An address no krwq device holds behaves like an unreachable peer: an RC
 * send is retried on its ACK timeout, then fails; a datagram is dropped
 * and counted, and its sender completes it successfully.
 */
static void vt_unreachable_lid(struct kunit *t)
{
	struct vt *v = t->priv;
	struct rdma_ah_attr ah_attr = { .type = RDMA_AH_ATTR_TYPE_IB };
	u64 timeouts = vt_counter(v, "ack_timeouts");
	u64 dropped = vt_counter(v, "ud_dropped");
	struct ib_sge sge = {
		.addr = (uintptr_t)v->abuf, .length = 64,
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_ud_wr wr = {
		.wr = { .wr_id = 5, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED },
		.remote_qkey = 0x11111111,
	};
	const struct ib_send_wr *bad;
	struct ib_qp *c, *u;
	struct ib_ah *ah;
	struct ib_wc wc;

	c = vt_new_qp(v, IB_QPT_RC, false);
	KUNIT_ASSERT_FALSE(t, IS_ERR(c));
	KUNIT_ASSERT_EQ(t, vt_connect_to(c, 200, v->b->qp_num, 7, 1, 2), 0);
	KUNIT_ASSERT_EQ(t, vt_send(v, c, 4, v->abuf, 64), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_RETRY_EXC_ERR);
	KUNIT_EXPECT_EQ(t, vt_counter(v, "ack_timeouts"), timeouts + 2);

	u = vt_new_qp(v, IB_QPT_UD, false);
	KUNIT_ASSERT_FALSE(t, IS_ERR(u));
	KUNIT_ASSERT_EQ(t, vt_connect(u, 0, 0), 0);
	rdma_ah_set_dlid(&ah_attr, 200);
	rdma_ah_set_port_num(&ah_attr, 1);
	ah = rdma_create_ah(v->pd, &ah_attr, 0);
	KUNIT_ASSERT_FALSE(t, IS_ERR(ah));
	wr.ah = ah;
	wr.remote_qpn = u->qp_num;
	KUNIT_EXPECT_EQ(t, ib_post_send(u, &wr.wr, &bad), 0);
	KUNIT_EXPECT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, vt_counter(v, "ud_dropped"), dropped + 1);
	rdma_destroy_ah(ah, 0);
	vt_free_qp(v, u);
	vt_free_qp(v, c);
}

/* The MAD layer's QP1 exists only where the port has MADs (RoCE). */
static void vt_gsi_only_with_mads(struct kunit *t)
{
	struct vt *v = t->priv;
	struct ib_qp *qp = vt_qp(v, IB_QPT_GSI, false);

	KUNIT_EXPECT_TRUE(t, IS_ERR(qp));
	if (!IS_ERR(qp))
		ib_destroy_qp(qp);
}

/* --- fast registration, inline data, atomics ----------------------------- */

/*
 * A fast-registration region over @len bytes of @buf (page aligned, mapped
 * for the device), with *@sg kept for unmapping.
 */
static struct ib_mr *vt_fr_mr(struct vt *v, void *buf, u32 len, u32 pages,
			      struct scatterlist *sg)
{
	struct ib_mr *mr = ib_alloc_mr(v->pd, IB_MR_TYPE_MEM_REG, pages);

	if (IS_ERR(mr))
		return mr;
	sg_init_one(sg, buf, len);
	if (ib_dma_map_sg(v->dev, sg, 1, DMA_BIDIRECTIONAL) != 1) {
		ib_dereg_mr(mr);
		return ERR_PTR(-EIO);
	}
	return mr;
}

static void vt_fr_free(struct vt *v, struct ib_mr *mr, struct scatterlist *sg)
{
	ib_dma_unmap_sg(v->dev, sg, 1, DMA_BIDIRECTIONAL);
	ib_dereg_mr(mr);
}

/* Posts an IB_WR_REG_MR of @mr with the next key variant and @access. */
static int vt_reg(struct ib_qp *qp, struct ib_mr *mr, int access, u64 wr_id)
{
	struct ib_reg_wr wr = {
		.wr = { .wr_id = wr_id, .opcode = IB_WR_REG_MR,
			.send_flags = IB_SEND_SIGNALED },
		.mr = mr, .access = access,
	};
	const struct ib_send_wr *bad;

	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey) & 0xff);
	wr.key = mr->rkey;
	return ib_post_send(qp, &wr.wr, &bad);
}

static int vt_local_inv(struct ib_qp *qp, u32 rkey, u64 wr_id)
{
	struct ib_send_wr wr = {
		.wr_id = wr_id, .opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED, .ex.invalidate_rkey = rkey,
	};
	const struct ib_send_wr *bad;

	return ib_post_send(qp, &wr, &bad);
}

static int vt_write(struct vt *v, struct ib_qp *qp, u8 *src, u32 len,
		    u64 remote, u32 rkey)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)src, .length = len,
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 50, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_RDMA_WRITE, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = remote, .rkey = rkey,
	};
	const struct ib_send_wr *bad;

	return ib_post_send(qp, &wr.wr, &bad);
}

/* A connected RC pair beyond a and b: *@c -> *@d and back. */
static int vt_pair(struct vt *v, struct ib_qp **c, struct ib_qp **d)
{
	*c = vt_new_qp(v, IB_QPT_RC, false);
	*d = vt_new_qp(v, IB_QPT_RC, false);
	if (IS_ERR(*c) || IS_ERR(*d))
		return -ENOMEM;
	if (vt_connect(*c, (*d)->qp_num, 7) || vt_connect(*d, (*c)->qp_num, 7))
		return -EIO;
	return 0;
}

/*
 * A fast-registration region over @pages pages of @buf, mapped and
 * registered for local and remote write by WR 1 on d of a new pair c, d.
 */
static struct ib_mr *vt_fr_registered(struct kunit *t, struct vt *v, u8 *buf,
				      u32 pages, struct scatterlist *sg,
				      struct ib_qp **c, struct ib_qp **d)
{
	struct ib_mr *mr = vt_fr_mr(v, buf, pages * PAGE_SIZE, pages, sg);
	struct ib_wc wc;

	KUNIT_ASSERT_FALSE(t, IS_ERR(mr));
	KUNIT_ASSERT_EQ(t, ib_map_mr_sg(mr, sg, 1, NULL, PAGE_SIZE), 1);
	KUNIT_ASSERT_EQ(t, vt_pair(v, c, d), 0);
	KUNIT_ASSERT_EQ(t, vt_reg(*d, mr, IB_ACCESS_LOCAL_WRITE |
				  IB_ACCESS_REMOTE_WRITE, 1), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_ASSERT_EQ(t, wc.status, IB_WC_SUCCESS);
	return mr;
}

/*
 * REG_MR gives a fast-registration region its pages, key and access; a
 * peer writes through it; LOCAL_INV takes the key away, and a write with
 * it fails.  The device says it can (MEM_MGT_EXTENSIONS, a local DMA lkey).
 */
static void vt_fast_reg(struct kunit *t)
{
	struct vt *v = t->priv;
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
	mr = vt_fr_mr(v, buf, 2 * PAGE_SIZE, 2, &sg);
	KUNIT_ASSERT_FALSE(t, IS_ERR(mr));
	KUNIT_ASSERT_EQ(t, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE), 1);
	KUNIT_EXPECT_EQ(t, mr->length, 2 * PAGE_SIZE);

	/* not registered yet: its key gives nothing */
	memset(v->abuf, 0x5a, 64);
	KUNIT_ASSERT_EQ(t, vt_pair(v, &c, &d), 0);
	KUNIT_ASSERT_EQ(t, vt_write(v, c, v->abuf, 64, mr->iova, mr->rkey), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_EQ(t, buf[0], 0);
	vt_free_qp(v, c);
	vt_free_qp(v, d);

	KUNIT_ASSERT_EQ(t, vt_pair(v, &c, &d), 0);
	KUNIT_ASSERT_EQ(t, vt_reg(d, mr, IB_ACCESS_LOCAL_WRITE |
				  IB_ACCESS_REMOTE_WRITE, 1), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_REG_MR);
	key = mr->rkey;

	/* across the page boundary */
	KUNIT_ASSERT_EQ(t, vt_write(v, c, v->abuf, 64,
				    mr->iova + PAGE_SIZE - 32, key), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, buf[PAGE_SIZE - 32], 0x5a);
	KUNIT_EXPECT_EQ(t, buf[PAGE_SIZE + 31], 0x5a);
	KUNIT_EXPECT_EQ(t, buf[PAGE_SIZE + 32], 0);

	KUNIT_ASSERT_EQ(t, vt_local_inv(d, key, 2), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_LOCAL_INV);
	/* invalidating an invalid key again changes nothing */
	KUNIT_ASSERT_EQ(t, vt_local_inv(d, key, 3), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);

	/* the invalidated key no longer reaches the memory */
	memset(v->abuf, 0x66, 64);
	KUNIT_ASSERT_EQ(t, vt_write(v, c, v->abuf, 64, mr->iova, key), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_ACCESS_ERR);
	KUNIT_EXPECT_EQ(t, buf[0], 0);
	vt_free_qp(v, c);
	vt_free_qp(v, d);
	vt_fr_free(v, mr, &sg);
}

/*
 * A REG_MR of a region whose last ib_map_mr_sg() mapped no page is
 * refused, whatever iova and length the region holds: a range check
 * against zero pages must not wrap and let an empty page list through.
 */
static void vt_fast_reg_no_pages(struct kunit *t)
{
	struct vt *v = t->priv;
	u8 *buf = kunit_kzalloc(t, PAGE_SIZE, GFP_KERNEL);
	struct scatterlist sg;
	struct ib_qp *c, *d;
	struct ib_mr *mr;
	struct ib_wc wc;

	KUNIT_ASSERT_NOT_NULL(t, buf);
	mr = vt_fr_mr(v, buf, PAGE_SIZE, 1, &sg);
	KUNIT_ASSERT_FALSE(t, IS_ERR(mr));
	KUNIT_EXPECT_LE(t, ib_map_mr_sg(mr, &sg, 0, NULL, PAGE_SIZE), 0);
	/* what a ULP's earlier mapping may have left */
	mr->iova = 0x10;
	mr->length = 0x10;
	KUNIT_ASSERT_EQ(t, vt_pair(v, &c, &d), 0);
	KUNIT_ASSERT_EQ(t, vt_reg(d, mr, IB_ACCESS_LOCAL_WRITE |
				  IB_ACCESS_REMOTE_WRITE, 1), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_LOC_PROT_ERR);
	vt_free_qp(v, c);
	vt_free_qp(v, d);
	vt_fr_free(v, mr, &sg);
}

/*
 * map_mr_sg prepares the page list of the next REG_MR; the registration
 * in force keeps the pages it was registered with.  A consumer that maps
 * a registered region again (to other memory) before invalidating it
 * must not redirect writes through the old key.
 */
static void vt_fast_reg_remap(struct kunit *t)
{
	struct vt *v = t->priv;
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
	mr = vt_fr_registered(t, v, buf, 2, &sg, &c, &d);
	key = mr->rkey;
	iova = mr->iova;

	sg_init_one(&sg2, other, PAGE_SIZE);
	KUNIT_ASSERT_EQ(t, ib_dma_map_sg(v->dev, &sg2, 1, DMA_BIDIRECTIONAL), 1);
	KUNIT_EXPECT_EQ(t, ib_map_mr_sg(mr, &sg2, 1, NULL, PAGE_SIZE), 1);
	memset(v->abuf, 0x5a, 64);
	KUNIT_ASSERT_EQ(t, vt_write(v, c, v->abuf, 64,
				    iova + PAGE_SIZE - 32, key), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, buf[PAGE_SIZE - 32], 0x5a);
	KUNIT_EXPECT_EQ(t, buf[PAGE_SIZE + 31], 0x5a);
	KUNIT_EXPECT_EQ(t, other[PAGE_SIZE - 32], 0);
	KUNIT_ASSERT_EQ(t, vt_local_inv(d, key, 2), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	vt_free_qp(v, c);
	vt_free_qp(v, d);
	ib_dma_unmap_sg(v->dev, &sg2, 1, DMA_BIDIRECTIONAL);
	vt_fr_free(v, mr, &sg);
}

/*
 * The bad cases: a map beyond the page list, REG_MR of another PD's
 * region, a re-registration making the earlier key variant stale, and
 * LOCAL_INV of a stale variant.
 */
static void vt_fast_reg_refused(struct kunit *t)
{
	struct vt *v = t->priv;
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
	mr = vt_fr_mr(v, buf, 8 * PAGE_SIZE, 4, &sg);
	KUNIT_ASSERT_FALSE(t, IS_ERR(mr));
	/* eight pages do not fit a list of four */
	KUNIT_EXPECT_LT(t, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE), 1);
	sg.length = 4 * PAGE_SIZE;
	sg_dma_len(&sg) = 4 * PAGE_SIZE;
	KUNIT_ASSERT_EQ(t, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE), 1);

	KUNIT_ASSERT_EQ(t, vt_pair(v, &c, &d), 0);
	/* a region of another PD */
	mr2 = ib_alloc_mr(pd2, IB_MR_TYPE_MEM_REG, 1);
	KUNIT_ASSERT_FALSE(t, IS_ERR(mr2));
	sg_init_one(&sg2, v->bbuf, 64);
	KUNIT_ASSERT_EQ(t, ib_dma_map_sg(v->dev, &sg2, 1, DMA_BIDIRECTIONAL), 1);
	KUNIT_ASSERT_EQ(t, ib_map_mr_sg(mr2, &sg2, 1, NULL, PAGE_SIZE), 1);
	KUNIT_ASSERT_EQ(t, vt_reg(d, mr2, IB_ACCESS_REMOTE_WRITE |
				  IB_ACCESS_LOCAL_WRITE, 1), 0);
	ib_dma_unmap_sg(v->dev, &sg2, 1, DMA_BIDIRECTIONAL);
	ib_dereg_mr(mr2);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_LOC_PROT_ERR);
	KUNIT_EXPECT_EQ(t, vt_wait_state(d, IB_QPS_ERR), IB_QPS_ERR);
	vt_free_qp(v, c);
	vt_free_qp(v, d);

	/* remote write without local write is no valid access (IB 10.6.3.1) */
	KUNIT_ASSERT_EQ(t, vt_pair(v, &c, &d), 0);
	old = mr->rkey;
	KUNIT_ASSERT_EQ(t, vt_reg(d, mr, IB_ACCESS_REMOTE_WRITE, 6), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_LOC_PROT_ERR);
	/* nothing changed: the region is still free (registered below) */
	mr->rkey = old;
	mr->lkey = old;
	vt_free_qp(v, c);
	vt_free_qp(v, d);

	/* a registered region is not registered again: LOCAL_INV first */
	KUNIT_ASSERT_EQ(t, vt_pair(v, &c, &d), 0);
	KUNIT_ASSERT_EQ(t, vt_reg(d, mr, IB_ACCESS_REMOTE_WRITE |
				  IB_ACCESS_LOCAL_WRITE, 2), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_ASSERT_EQ(t, wc.status, IB_WC_SUCCESS);
	old = mr->rkey;
	KUNIT_ASSERT_EQ(t, vt_reg(d, mr, IB_ACCESS_REMOTE_WRITE |
				  IB_ACCESS_LOCAL_WRITE, 3), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_LOC_PROT_ERR);
	mr->rkey = old;
	mr->lkey = old;
	vt_free_qp(v, c);
	vt_free_qp(v, d);

	/* invalidated and registered again: the earlier variant is stale */
	KUNIT_ASSERT_EQ(t, vt_pair(v, &c, &d), 0);
	KUNIT_ASSERT_EQ(t, vt_local_inv(d, old, 4), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_ASSERT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(t, vt_reg(d, mr, IB_ACCESS_REMOTE_WRITE |
				  IB_ACCESS_LOCAL_WRITE, 5), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_ASSERT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_NE(t, old, mr->rkey);
	KUNIT_ASSERT_EQ(t, vt_write(v, c, v->abuf, 8, mr->iova, mr->rkey), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(t, vt_write(v, c, v->abuf, 8, mr->iova, old), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_ACCESS_ERR);
	vt_free_qp(v, c);
	vt_free_qp(v, d);

	/* LOCAL_INV of a stale variant fails, and the QP goes to ERR */
	KUNIT_ASSERT_EQ(t, vt_pair(v, &c, &d), 0);
	KUNIT_ASSERT_EQ(t, vt_local_inv(d, old, 4), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_LOC_PROT_ERR);
	vt_free_qp(v, c);
	vt_free_qp(v, d);
	vt_fr_free(v, mr, &sg);
	ib_dealloc_pd(pd2);
}

/*
 * A signaled SEND_WITH_INV of v->abuf's first 16 bytes, invalidating @key,
 * into *@wr and *@sge.
 */
static void vt_inv_wr(struct vt *v, struct ib_send_wr *wr, struct ib_sge *sge,
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
static noinline u32 vt_send_inv_once(struct kunit *t, struct vt *v,
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
	mr = vt_fr_registered(t, v, buf, 1, &sg, &c, &d);
	key = mr->rkey;

	vt_inv_wr(v, &wr, &sge, 9, mr->rkey, flags);
	KUNIT_ASSERT_EQ(t, vt_post_recv(v, d, 10, v->bbuf, 64), 0);
	KUNIT_ASSERT_EQ(t, ib_post_send(c, &wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_TRUE(t, wc.wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(t, wc.ex.invalidate_rkey, mr->rkey);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(t, vt_write(v, c, v->abuf, 8, mr->iova, mr->rkey), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_ACCESS_ERR);
	vt_free_qp(v, c);
	vt_free_qp(v, d);
	vt_fr_free(v, mr, &sg);
	return key;
}

/* A SEND_WITH_INV from @c to @d of @key, which names no region of d's. */
static noinline void vt_send_inv_bad(struct kunit *t, struct vt *v,
				     struct ib_qp *c, struct ib_qp *d, u32 key)
{
	const struct ib_send_wr *bad;
	struct ib_send_wr wr;
	struct ib_sge sge;
	struct ib_wc wc;

	vt_inv_wr(v, &wr, &sge, 9, key, 0);

	KUNIT_ASSERT_EQ(t, vt_post_recv(v, d, 11, v->bbuf, 64), 0);
	KUNIT_ASSERT_EQ(t, ib_post_send(c, &wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_INV_REQ_ERR);
	KUNIT_ASSERT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_NE(t, wc.status, IB_WC_SUCCESS);
	vt_free_qp(v, c);
	vt_free_qp(v, d);
}

/*
 * SEND_WITH_INV, plain and inline; and a key the receiver has no region
 * for, a stale variant of a live region's and a gone region's: an
 * invalid request.
 */
static void vt_send_with_invalidate(struct kunit *t)
{
	struct vt *v = t->priv;
	u8 *buf = kunit_kzalloc(t, PAGE_SIZE, GFP_KERNEL);
	struct scatterlist sg;
	struct ib_qp *c, *d;
	struct ib_mr *mr;
	u32 key;

	vt_send_inv_once(t, v, 0);
	key = vt_send_inv_once(t, v, IB_SEND_INLINE);

	KUNIT_ASSERT_NOT_NULL(t, buf);
	mr = vt_fr_registered(t, v, buf, 1, &sg, &c, &d);
	vt_send_inv_bad(t, v, c, d, ib_inc_rkey(mr->rkey));
	vt_fr_free(v, mr, &sg);
	KUNIT_ASSERT_EQ(t, vt_pair(v, &c, &d), 0);
	vt_send_inv_bad(t, v, c, d, key);
}

/* One ib_post_send() from a kthread of its own. */
struct vt_poster {
	struct vt *v;
	struct ib_qp *qp;
	const struct ib_send_wr *wr;
	int ret;
	struct completion done;
};

static int vt_poster_fn(void *arg)
{
	struct vt_poster *p = arg;
	const struct ib_send_wr *bad;

	p->ret = ib_post_send(p->qp, p->wr, &bad);
	/* gone from this module's text once the waiter wakes */
	kthread_complete_and_exit(&p->done, 0);
}

/*
 * A reference to fast-registration region @mr, as a copy through it holds
 * one (until its next window, krwq_run_copy()).
 */
static struct krwq_mr *vt_mr_hold(struct vt *v, struct ib_mr *mr)
{
	return krwq_mr_get(to_kmr(mr)->dev, v->pd, mr->rkey, 0, mr->iova, 1);
}

/*
 * A reference let go from a timer's interrupt, as a copy on another CPU
 * lets go while this CPU waits for it.  The timer comes in even where
 * the wait keeps this CPU from everything else (bottom halves off).
 */
struct vt_release {
	struct hrtimer timer;
	struct krwq_mr *held;
};

static enum hrtimer_restart vt_release_fn(struct hrtimer *h)
{
	struct vt_release *r = container_of(h, struct vt_release, timer);

	krwq_mr_put(r->held);
	return HRTIMER_NORESTART;
}

/* @r lets @held go 20 ms from now. */
static void vt_release_arm(struct vt_release *r, struct krwq_mr *held)
{
	r->held = held;
	hrtimer_init_on_stack(&r->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	r->timer.function = vt_release_fn;
	hrtimer_start(&r->timer, ms_to_ktime(20), HRTIMER_MODE_REL_HARD);
}

/* Sleeps until well after @r's timer; lets go itself if it never ran. */
static void vt_release_wait(struct vt_release *r)
{
	msleep(60);
	if (hrtimer_cancel(&r->timer))
		krwq_mr_put(r->held);
	destroy_hrtimer_on_stack(&r->timer);
}

/* @mr registered again on @qp, under its next key; 0 if it completed. */
static int vt_rereg(struct vt *v, struct ib_qp *qp, struct ib_mr *mr)
{
	struct ib_wc wc;

	if (vt_reg(qp, mr, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE, 40) ||
	    vt_poll(v->scq, &wc, 1) != 1)
		return -EIO;
	return wc.status == IB_WC_SUCCESS ? 0 : -EIO;
}

/*
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
static noinline void vt_inv_local_held(struct kunit *t, struct vt *v,
				       struct ib_mr *mr, struct ib_qp *qp)
{
	struct krwq_mr *held = vt_mr_hold(v, mr);
	struct vt_release r;
	unsigned long flags;
	int ret, polled;
	struct ib_wc wc;
	u64 waits;

	KUNIT_ASSERT_NOT_NULL(t, held);
	waits = vt_counter(v, "inv_waits");
	/* posted and looked at before the timer can fire */
	local_irq_save(flags);
	vt_release_arm(&r, held);
	ret = vt_local_inv(qp, mr->rkey, 42);
	polled = ib_poll_cq(v->scq, 1, &wc);
	local_irq_restore(flags);
	KUNIT_EXPECT_EQ(t, ret, 0);
	KUNIT_EXPECT_EQ(t, polled, 0);
	KUNIT_EXPECT_EQ(t, vt_counter(v, "inv_waits"), waits + 1);
	KUNIT_EXPECT_NULL(t, vt_mr_hold(v, mr));
	vt_release_wait(&r);
	KUNIT_EXPECT_EQ(t, vt_counter(v, "inv_waits"), waits + 1);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 42);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
}

/*
 * Posts @p's WR from a kthread on a CPU other than this one, lets it reach
 * the wait, and modifies @d (s_lock, then r_lock) meanwhile.  The caller
 * runs pinned to this CPU.  Return: 0, or -ECHILD without a kthread.
 */
static noinline int vt_post_elsewhere(struct kunit *t, struct vt_poster *p,
				      struct ib_qp *d)
{
	struct ib_qp_attr attr = { .min_rnr_timer = 12 };
	int here = raw_smp_processor_id(), there;
	struct task_struct *task;

	u64 waits = vt_counter(p->v, "inv_waits");
	int i;

	there = cpumask_any_but(cpu_online_mask, here);
	task = kthread_create(vt_poster_fn, p, "vt_poster");
	if (IS_ERR(task)) {
		KUNIT_FAIL(t, "kthread_create: %ld", PTR_ERR(task));
		return -ECHILD;
	}
	kthread_bind(task, there);
	wake_up_process(task);
	/* the SEND's payload is in place, and it waits */
	for (i = 0; i < 2000 && vt_counter(p->v, "inv_waits") == waits; i++)
		usleep_range(1000, 2000);
	KUNIT_EXPECT_EQ(t, vt_counter(p->v, "inv_waits"), waits + 1);
	KUNIT_EXPECT_EQ(t, ib_modify_qp(d, &attr, IB_QP_MIN_RNR_TIMER), 0);
	return 0;
}

/*
 * A SEND_WITH_INV of @mr on @c to @d while the region is held: posted with
 * interrupts off, or from a kthread while this one modifies @d.
 */
static noinline void vt_inv_send_held(struct kunit *t, struct vt *v,
				      struct ib_mr *mr, struct ib_qp *c,
				      struct ib_qp *d, bool irqs_off)
{
	struct ib_send_wr wr;
	struct ib_sge sge;
	struct vt_poster poster = { .v = v, .qp = c, .wr = &wr };
	const struct ib_send_wr *bad;
	struct krwq_mr *held;
	struct vt_release r;
	unsigned long flags;
	struct ib_wc wc;
	int polled;

	vt_inv_wr(v, &wr, &sge, 43, mr->rkey, 0);
	held = vt_mr_hold(v, mr);
	KUNIT_ASSERT_NOT_NULL(t, held);
	KUNIT_ASSERT_EQ(t, vt_post_recv(v, d, 44, v->bbuf, 64), 0);
	init_completion(&poster.done);
	if (irqs_off) {
		/* send_work may run only once this has looked */
		local_irq_save(flags);
		vt_release_arm(&r, held);
		poster.ret = ib_post_send(c, &wr, &bad);
		polled = ib_poll_cq(v->rcq, 1, &wc);
		local_irq_restore(flags);
		complete(&poster.done);
		KUNIT_EXPECT_EQ(t, polled, 0);
		vt_release_wait(&r);
	} else {
		if (vt_post_elsewhere(t, &poster, d)) {
			krwq_mr_put(held);
			return;
		}
		KUNIT_EXPECT_EQ(t, ib_poll_cq(v->rcq, 1, &wc), 0);
		krwq_mr_put(held);
	}
	wait_for_completion(&poster.done);
	KUNIT_EXPECT_EQ(t, poster.ret, 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 44);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_TRUE(t, wc.wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(t, wc.ex.invalidate_rkey, mr->rkey);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
}

static void vt_invalidate_never_waits_locked(struct kunit *t)
{
	const struct cpumask *here;
	struct vt *v = t->priv;
	u8 *buf = kunit_kzalloc(t, PAGE_SIZE, GFP_KERNEL);
	struct scatterlist sg;
	struct ib_qp *c, *d;
	struct ib_mr *mr;

	KUNIT_ASSERT_NOT_NULL(t, buf);
	if (num_online_cpus() < 2)
		kunit_skip(t, "one CPU: no other to post from");
	mr = vt_fr_registered(t, v, buf, 1, &sg, &c, &d);
	/* this thread stays on its CPU; the kthread posts on another */
	here = cpumask_of(raw_smp_processor_id());
	KUNIT_ASSERT_EQ(t, set_cpus_allowed_ptr(current, here), 0);
	vt_inv_local_held(t, v, mr, d);
	KUNIT_EXPECT_EQ(t, vt_rereg(v, d, mr), 0);
	vt_inv_send_held(t, v, mr, c, d, true);
	KUNIT_EXPECT_EQ(t, vt_rereg(v, d, mr), 0);
	vt_inv_send_held(t, v, mr, c, d, false);
	set_cpus_allowed_ptr(current, cpu_possible_mask);
	vt_free_qp(v, c);
	vt_free_qp(v, d);
	vt_fr_free(v, mr, &sg);
}

/* @pkt from the wire into @qp's responder, as the socket's softirq brings it. */
static void vt_wire_feed(struct ib_qp *qp, const struct krwq_wire_pkt *pkt,
			 const void *payload)
{
	struct krwq_qp *kqp = to_kqp(qp);

	local_bh_disable();
	krwq_resp_wire_rc(kqp, pkt, &kqp->attr.ah_attr.grh.dgid,
			  &kqp->route.sgid, payload);
	local_bh_enable();
}

/*
 * A SEND_WITH_INV from the wire whose region a copy still holds: its
 * payload is placed, but it is neither completed nor acknowledged, and
 * its PSN is still the one expected; the requester's retry of the packet
 * meanwhile changes nothing (and is not counted again).  Once the region
 * is let go, the QP's inv_work completes it with the invalidation, with
 * no retry needed.  Before, the responder spun in softirq under the QP's
 * r_lock for the reference this test held: the machine hung.
 */
static void vt_wire_invalidate_later(struct kunit *t)
{
	struct vt *v = t->priv;
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
	mr = vt_fr_registered(t, v, buf, 1, &sg, &c, &d);
	pkt.dqpn = d->qp_num;
	pkt.psn = to_kqp(d)->wire_rx.epsn;
	pkt.inv_rkey = mr->rkey;
	memset(v->abuf, 0x3c, 16);
	KUNIT_ASSERT_EQ(t, vt_post_recv(v, d, 51, v->bbuf, 64), 0);
	held = vt_mr_hold(v, mr);
	KUNIT_ASSERT_NOT_NULL(t, held);
	waits = vt_counter(v, "inv_waits");
	vt_wire_feed(d, &pkt, v->abuf);
	msleep(20);	/* inv_work looks again, a tick at a time */
	vt_wire_feed(d, &pkt, v->abuf);	/* the requester's retry */
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->rcq, 1, &wc), 0);
	KUNIT_EXPECT_EQ(t, to_kqp(d)->wire_rx.epsn, pkt.psn);
	KUNIT_EXPECT_EQ(t, vt_counter(v, "inv_waits"), waits + 1);
	krwq_mr_put(held);
	KUNIT_ASSERT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 51);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.byte_len, 16u);
	KUNIT_EXPECT_TRUE(t, wc.wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(t, wc.ex.invalidate_rkey, mr->rkey);
	KUNIT_EXPECT_EQ(t, to_kqp(d)->wire_rx.epsn, krwq_psn_add(pkt.psn, 1));
	KUNIT_EXPECT_EQ(t, memcmp(v->bbuf, v->abuf, 16), 0);
	KUNIT_EXPECT_NULL(t, vt_mr_hold(v, mr));
	vt_free_qp(v, c);
	vt_free_qp(v, d);
	vt_fr_free(v, mr, &sg);
}

/* What query_qp says of a QP's max_inline_data; -1 if it fails. */
static noinline int vt_max_inline(struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	if (ib_query_qp(qp, &attr, IB_QP_CAP, &init))
		return -1;
	return attr.cap.max_inline_data;
}

/*
 * Inline data is copied when it is posted: a send waiting for its peer's
 * receive (RNR) delivers what the buffer held then, whatever its lkey.
 */
static void vt_inline(struct kunit *t)
{
	struct vt *v = t->priv;
	struct ib_qp_init_attr init = {
		.send_cq = v->scq, .recv_cq = v->rcq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 2,
			 .max_recv_sge = 1, .max_inline_data = 600 },
		.sq_sig_type = IB_SIGNAL_ALL_WR, .qp_type = IB_QPT_RC,
	};
	u8 *data = kunit_kzalloc(t, 256, GFP_KERNEL);
	struct ib_sge sge[2] = {
		{ .addr = (uintptr_t)data, .length = 100, .lkey = 0xdead00 },
		{ .addr = (uintptr_t)data + 100, .length = 156, .lkey = 0xbeef00 },
	};
	struct ib_send_wr wr = {
		.wr_id = 21, .sg_list = sge, .num_sge = 2, .opcode = IB_WR_SEND,
		.send_flags = IB_SEND_INLINE,
	};
	const struct ib_send_wr *bad;
	struct ib_qp *c, *d;
	struct ib_wc wc;
	int i;

	KUNIT_ASSERT_NOT_NULL(t, data);
	init.cap.max_inline_data = 256;
	c = ib_create_qp(v->pd, &init);
	KUNIT_ASSERT_FALSE(t, IS_ERR(c));
	KUNIT_EXPECT_GE(t, init.cap.max_inline_data, 256u);
	KUNIT_EXPECT_GE(t, vt_max_inline(c), 256);
	d = vt_new_qp(v, IB_QPT_RC, false);
	KUNIT_ASSERT_FALSE(t, IS_ERR(d));
	if (vt_connect(c, d->qp_num, 7) || vt_connect(d, c->qp_num, 7)) {
		ib_destroy_qp(c);
		KUNIT_FAIL(t, "connect");
		return;
	}
	for (i = 0; i < 256; i++)
		data[i] = i;
	KUNIT_EXPECT_EQ(t, ib_post_send(c, &wr, &bad), 0);
	memset(data, 0xee, 256);	/* after the post: not what is sent */
	KUNIT_EXPECT_EQ(t, vt_post_recv(v, d, 22, v->bbuf, 300), 0);
	KUNIT_EXPECT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.byte_len, 256u);
	for (i = 0; i < 256; i++)
		if (v->bbuf[i] != (u8)i)
			break;
	KUNIT_EXPECT_EQ(t, i, 256);
	KUNIT_EXPECT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);

	/* more than max_inline_data, or an inline READ: refused at post */
	sge[1].length = 157;
	KUNIT_EXPECT_EQ(t, ib_post_send(c, &wr, &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(t, bad, (const struct ib_send_wr *)&wr);
	sge[1].length = 156;
	wr.opcode = IB_WR_RDMA_READ;
	KUNIT_EXPECT_EQ(t, ib_post_send(c, &wr, &bad), -EINVAL);
	ib_destroy_qp(c);
	vt_free_qp(v, d);
}

/* A QP asking for more inline data than the device has is refused. */
static void vt_inline_over_limit(struct kunit *t)
{
	struct vt *v = t->priv;
	struct ib_qp_init_attr init = {
		.send_cq = v->scq, .recv_cq = v->rcq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1, .max_inline_data = 513 },
		.sq_sig_type = IB_SIGNAL_ALL_WR, .qp_type = IB_QPT_RC,
	};
	struct ib_qp *qp = ib_create_qp(v->pd, &init);

	KUNIT_EXPECT_TRUE(t, IS_ERR(qp));
	if (!IS_ERR(qp))
		ib_destroy_qp(qp);
}

static int vt_atomic(struct vt *v, struct ib_qp *qp, enum ib_wr_opcode op,
		     u64 remote, u32 rkey, u64 cmp_add, u64 swap, u64 *result)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)result, .length = 8,
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_atomic_wr wr = {
		.wr = { .wr_id = 30, .sg_list = &sge, .num_sge = 1,
			.opcode = op, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = remote, .rkey = rkey,
		.compare_add = cmp_add, .swap = swap,
	};
	const struct ib_send_wr *bad;

	return ib_post_send(qp, &wr.wr, &bad);
}

/* An RC QP posting FETCH_ADD 1 to a target many times, polling its CQ. */
struct vt_adder {
	struct vt *v;
	struct ib_qp *qp;
	struct ib_cq *cq;
	u64 target;
	u32 rkey;
	u64 *result;
	int done;
	struct completion finished;
};

static int vt_adder_fn(void *arg)
{
	struct vt_adder *a = arg;
	struct ib_wc wc;
	int i;

	for (i = 0; i < 500; i++) {
		if (vt_atomic(a->v, a->qp, IB_WR_ATOMIC_FETCH_AND_ADD,
			      a->target, a->rkey, 1, 0, a->result) ||
		    vt_poll(a->cq, &wc, 1) != 1 || wc.status != IB_WC_SUCCESS)
			break;
	}
	a->done = i;
	complete(&a->finished);
	return 0;
}

/*
 * Compare-and-swap and fetch-and-add: results, access checks, alignment,
 * and atomicity between two QPs adding at once.
 */
static void vt_atomics(struct kunit *t)
{
	struct vt *v = t->priv;
	u64 *target = kunit_kzalloc(t, PAGE_SIZE, GFP_KERNEL);
	u64 *res = kunit_kzalloc(t, 2 * sizeof(u64), GFP_KERNEL);
	struct scatterlist sg;
	struct ib_qp *c, *d;
	struct ib_mr *mr;
	struct ib_wc wc;

	KUNIT_EXPECT_EQ(t, v->dev->attrs.atomic_cap, IB_ATOMIC_HCA);
	KUNIT_ASSERT_TRUE(t, target && res);
	mr = vt_fr_mr(v, target, PAGE_SIZE, 1, &sg);
	KUNIT_ASSERT_FALSE(t, IS_ERR(mr));
	KUNIT_ASSERT_EQ(t, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE), 1);
	KUNIT_ASSERT_EQ(t, vt_pair(v, &c, &d), 0);
	KUNIT_ASSERT_EQ(t, vt_reg(d, mr, IB_ACCESS_REMOTE_ATOMIC |
				  IB_ACCESS_LOCAL_WRITE, 1), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_ASSERT_EQ(t, wc.status, IB_WC_SUCCESS);

	target[1] = 40;
	KUNIT_ASSERT_EQ(t, vt_atomic(v, c, IB_WR_ATOMIC_CMP_AND_SWP,
				     mr->iova + 8, mr->rkey, 40, 77, res), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_COMP_SWAP);
	KUNIT_EXPECT_EQ(t, *res, 40ull);
	KUNIT_EXPECT_EQ(t, target[1], 77ull);
	/* compare fails: no swap, the value returned */
	KUNIT_ASSERT_EQ(t, vt_atomic(v, c, IB_WR_ATOMIC_CMP_AND_SWP,
				     mr->iova + 8, mr->rkey, 40, 99, res), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, *res, 77ull);
	KUNIT_EXPECT_EQ(t, target[1], 77ull);
	KUNIT_ASSERT_EQ(t, vt_atomic(v, c, IB_WR_ATOMIC_FETCH_AND_ADD,
				     mr->iova + 8, mr->rkey, 5, 0, res), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_FETCH_ADD);
	KUNIT_EXPECT_EQ(t, *res, 77ull);
	KUNIT_EXPECT_EQ(t, target[1], 82ull);
	/* a result buffer that is not 8 bytes: refused at post */
	{
		struct ib_sge four = {
			.addr = (uintptr_t)res, .length = 4,
			.lkey = v->pd->local_dma_lkey,
		};
		struct ib_atomic_wr aw = {
			.wr = { .sg_list = &four, .num_sge = 1,
				.opcode = IB_WR_ATOMIC_FETCH_AND_ADD },
			.remote_addr = mr->iova, .rkey = mr->rkey,
		};
		const struct ib_send_wr *bad;

		KUNIT_EXPECT_EQ(t, ib_post_send(c, &aw.wr, &bad), -EINVAL);
	}

	vt_free_qp(v, c);
	vt_free_qp(v, d);

	/* misaligned, and a region without remote atomic access */
	KUNIT_ASSERT_EQ(t, vt_pair(v, &c, &d), 0);
	KUNIT_ASSERT_EQ(t, vt_atomic(v, c, IB_WR_ATOMIC_FETCH_AND_ADD,
				     mr->iova + 4, mr->rkey, 1, 0, res), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_INV_REQ_ERR);
	vt_free_qp(v, c);
	vt_free_qp(v, d);
	KUNIT_ASSERT_EQ(t, vt_pair(v, &c, &d), 0);
	KUNIT_ASSERT_EQ(t, vt_atomic(v, c, IB_WR_ATOMIC_FETCH_AND_ADD,
				     (uintptr_t)v->bbuf, v->pd->unsafe_global_rkey,
				     1, 0, res), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_ACCESS_ERR);
	vt_free_qp(v, c);
	vt_free_qp(v, d);
	vt_fr_free(v, mr, &sg);
}

/*
 * RDMA READ and atomics need the QPs' resources for them: a requester
 * whose max_rd_atomic is 0 may not post them (EINVAL, the WR refused and
 * the QP unchanged), and a responder whose max_dest_rd_atomic is 0
 * answers them as an invalid request, as an HCA NAKs one.
 */
static void vt_rd_atomic_resources(struct kunit *t)
{
	struct vt *v = t->priv;
	struct ib_sge sge = {
		.addr = (uintptr_t)v->abuf, .length = 8,
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_rdma_wr rd = {
		.wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_RDMA_READ },
		.remote_addr = (uintptr_t)v->bbuf,
		.rkey = v->pd->unsafe_global_rkey,
	};
	struct ib_atomic_wr fa = {
		.wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_ATOMIC_FETCH_AND_ADD },
		.remote_addr = (uintptr_t)v->bbuf,
		.rkey = v->pd->unsafe_global_rkey, .compare_add = 1,
	};
	const struct ib_send_wr *bad;
	struct ib_qp *c, *d;
	struct ib_wc wc;

	/* no initiator depth: refused at post */
	c = vt_new_qp(v, IB_QPT_RC, false);
	d = vt_new_qp(v, IB_QPT_RC, false);
	KUNIT_ASSERT_FALSE(t, IS_ERR(c) || IS_ERR(d));
	KUNIT_ASSERT_EQ(t, vt_connect_rd(c, VT_LID, d->qp_num, 7, 14, 7, 0), 0);
	KUNIT_ASSERT_EQ(t, vt_connect_rd(d, VT_LID, c->qp_num, 7, 14, 7, 1), 0);
	KUNIT_EXPECT_EQ(t, ib_post_send(c, &rd.wr, &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(t, bad, &rd.wr);
	KUNIT_EXPECT_EQ(t, ib_post_send(c, &fa.wr, &bad), -EINVAL);
	KUNIT_EXPECT_EQ(t, vt_poll(v->scq, &wc, 1), 0);
	/* the QP is as it was: a WRITE goes */
	rd.wr.opcode = IB_WR_RDMA_WRITE;
	KUNIT_ASSERT_EQ(t, ib_post_send(c, &rd.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	vt_free_qp(v, c);
	vt_free_qp(v, d);

	/* no responder resources: an invalid request, for both kinds */
	for (int i = 0; i < 2; i++) {
		struct ib_send_wr *wr = i ? &fa.wr : &rd.wr;

		rd.wr.opcode = IB_WR_RDMA_READ;
		c = vt_new_qp(v, IB_QPT_RC, false);
		d = vt_new_qp(v, IB_QPT_RC, false);
		KUNIT_ASSERT_FALSE(t, IS_ERR(c) || IS_ERR(d));
		KUNIT_ASSERT_EQ(t, vt_connect_rd(c, VT_LID, d->qp_num, 7, 14, 7,
						 1), 0);
		KUNIT_ASSERT_EQ(t, vt_connect_rd(d, VT_LID, c->qp_num, 7, 14, 7,
						 0), 0);
		KUNIT_ASSERT_EQ(t, ib_post_send(c, wr, &bad), 0);
		KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
		KUNIT_EXPECT_EQ(t, wc.wr_id, wr->wr_id);
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_INV_REQ_ERR);
		vt_free_qp(v, c);
		vt_free_qp(v, d);
	}
}

/* Two QPs adding to one target at once lose no addition. */
static void vt_atomics_concurrent(struct kunit *t)
{
	struct vt *v = t->priv;
	struct ib_cq_init_attr cq_attr = { .cqe = 16 };
	u64 *target = kunit_kzalloc(t, PAGE_SIZE, GFP_KERNEL);
	u64 *res = kunit_kzalloc(t, 2 * sizeof(u64), GFP_KERNEL);
	struct vt_adder add[2] = {};
	struct scatterlist sg;
	struct ib_qp *d;
	struct ib_mr *mr;
	struct ib_wc wc;
	int i;

	KUNIT_ASSERT_TRUE(t, target && res);
	mr = vt_fr_mr(v, target, PAGE_SIZE, 1, &sg);
	KUNIT_ASSERT_FALSE(t, IS_ERR(mr));
	KUNIT_ASSERT_EQ(t, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE), 1);
	d = vt_new_qp(v, IB_QPT_RC, false);
	KUNIT_ASSERT_FALSE(t, IS_ERR(d));
	KUNIT_ASSERT_EQ(t, vt_connect(d, v->a->qp_num, 7), 0);
	KUNIT_ASSERT_EQ(t, vt_reg(d, mr, IB_ACCESS_REMOTE_ATOMIC |
				  IB_ACCESS_LOCAL_WRITE, 1), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_ASSERT_EQ(t, wc.status, IB_WC_SUCCESS);
	vt_free_qp(v, d);

	/* two QPs adding at once lose nothing */
	target[2] = 0;
	for (i = 0; i < 2; i++) {
		add[i].v = v;
		add[i].cq = ib_create_cq(v->dev, NULL, NULL, NULL, &cq_attr);
		KUNIT_ASSERT_FALSE(t, IS_ERR(add[i].cq));
		add[i].target = mr->iova + 16;
		add[i].rkey = mr->rkey;
		add[i].result = &res[i];
		init_completion(&add[i].finished);
	}
	for (i = 0; i < 2; i++) {
		struct ib_qp_init_attr qa = {
			.send_cq = add[i].cq, .recv_cq = add[i].cq,
			.cap = { .max_send_wr = 4, .max_recv_wr = 1,
				 .max_send_sge = 1, .max_recv_sge = 1 },
			.sq_sig_type = IB_SIGNAL_ALL_WR, .qp_type = IB_QPT_RC,
		};
		struct ib_qp *peer = vt_new_qp(v, IB_QPT_RC, false);

		add[i].qp = ib_create_qp(v->pd, &qa);
		KUNIT_ASSERT_FALSE(t, IS_ERR(add[i].qp) || IS_ERR(peer));
		KUNIT_ASSERT_EQ(t, vt_connect(add[i].qp, peer->qp_num, 7), 0);
		KUNIT_ASSERT_EQ(t, vt_connect(peer, add[i].qp->qp_num, 7), 0);
	}
	for (i = 0; i < 2; i++)
		if (IS_ERR(kthread_run(vt_adder_fn, &add[i], "vt_adder%d", i)))
			complete(&add[i].finished);
	for (i = 0; i < 2; i++)
		wait_for_completion(&add[i].finished);
	KUNIT_EXPECT_EQ(t, add[0].done, 500);
	KUNIT_EXPECT_EQ(t, add[1].done, 500);
	KUNIT_EXPECT_EQ(t, target[2], (u64)(add[0].done + add[1].done));
	for (i = 0; i < 2; i++) {
		ib_destroy_qp(add[i].qp);
		ib_destroy_cq(add[i].cq);
	}

	vt_fr_free(v, mr, &sg);
}

/*
 * An unsignaled WR keeps its send queue slot until a later signaled WR
 * completes (or the QP is flushed), as the verbs specification and every
 * HCA have it: a list longer than the queue is refused part way.
 */
static void vt_unsignaled_hold_slots(struct kunit *t)
{
	struct vt *v = t->priv;
	struct ib_qp_init_attr init = {
		.send_cq = v->scq, .recv_cq = v->rcq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 1, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR, .qp_type = IB_QPT_RC,
	};
	struct ib_sge sge = {
		.addr = (uintptr_t)v->abuf, .length = 8,
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_rdma_wr *wrs = kunit_kcalloc(t, 40, sizeof(*wrs), GFP_KERNEL);
	const struct ib_send_wr *bad;
	struct ib_qp *c, *d;
	struct ib_wc wc;
	int i;

	KUNIT_ASSERT_NOT_NULL(t, wrs);
	for (i = 0; i < 40; i++) {
		wrs[i].wr.wr_id = i;
		wrs[i].wr.sg_list = &sge;
		wrs[i].wr.num_sge = 1;
		wrs[i].wr.opcode = IB_WR_RDMA_WRITE;
		wrs[i].wr.next = i < 39 ? &wrs[i + 1].wr : NULL;
		wrs[i].remote_addr = (uintptr_t)v->bbuf;
		wrs[i].rkey = v->pd->unsafe_global_rkey;
	}
	c = ib_create_qp(v->pd, &init);
	KUNIT_ASSERT_FALSE(t, IS_ERR(c));
	d = vt_new_qp(v, IB_QPT_RC, false);
	if (IS_ERR(d) || vt_connect(c, d->qp_num, 7) ||
	    vt_connect(d, c->qp_num, 7)) {
		ib_destroy_qp(c);
		KUNIT_FAIL(t, "cannot connect");
		return;
	}
	/* 40 unsignaled WRs in one list: the 17th does not fit */
	KUNIT_EXPECT_EQ(t, ib_post_send(c, &wrs[0].wr, &bad), -ENOMEM);
	KUNIT_EXPECT_PTR_EQ(t, bad, (const struct ib_send_wr *)&wrs[16].wr);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->scq, 1, &wc), 0);
	/* the flush of the move to ERR frees them all */
	{
		struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };

		KUNIT_ASSERT_EQ(t, ib_modify_qp(c, &a, IB_QP_STATE), 0);
		a.qp_state = IB_QPS_RESET;
		KUNIT_ASSERT_EQ(t, ib_modify_qp(c, &a, IB_QP_STATE), 0);
	}
	KUNIT_ASSERT_EQ(t, vt_connect(c, d->qp_num, 7), 0);
	/*
	 * One at a time, executed at once: still, sixteen unsignaled WRs
	 * fill the queue until a signaled one completes
	 */
	for (i = 0; i < 40; i++)
		wrs[i].wr.next = NULL;
	for (i = 0; i < 16; i++)
		KUNIT_EXPECT_EQ(t, ib_post_send(c, &wrs[i].wr, &bad), 0);
	KUNIT_EXPECT_EQ(t, ib_post_send(c, &wrs[16].wr, &bad), -ENOMEM);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->scq, 1, &wc), 0);
	{
		struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };

		KUNIT_ASSERT_EQ(t, ib_modify_qp(c, &a, IB_QP_STATE), 0);
		a.qp_state = IB_QPS_RESET;
		KUNIT_ASSERT_EQ(t, ib_modify_qp(c, &a, IB_QP_STATE), 0);
	}
	while (ib_poll_cq(v->scq, 1, &wc) > 0)
		;	/* the flushed ones */
	KUNIT_ASSERT_EQ(t, vt_connect(c, d->qp_num, 7), 0);
	for (i = 0; i < 15; i++)
		KUNIT_EXPECT_EQ(t, ib_post_send(c, &wrs[i].wr, &bad), 0);
	wrs[15].wr.send_flags = IB_SEND_SIGNALED;
	KUNIT_EXPECT_EQ(t, ib_post_send(c, &wrs[15].wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 15ull);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	/* its completion freed all sixteen */
	for (i = 16; i < 32; i++)
		KUNIT_EXPECT_EQ(t, ib_post_send(c, &wrs[i].wr, &bad), 0);
	KUNIT_EXPECT_EQ(t, ib_post_send(c, &wrs[32].wr, &bad), -ENOMEM);
	ib_destroy_qp(c);
	vt_free_qp(v, d);
}

/*
 * modify_srq acts on IB_SRQ_MAX_WR and IB_SRQ_LIMIT only: an empty mask
 * changes nothing, and a mask with any other bit fails with -EINVAL and
 * changes nothing either.
 */
static void vt_srq_modify_mask(struct kunit *t)
{
	static const u32 unknown[] = {
		BIT(2), IB_SRQ_LIMIT | BIT(2), IB_SRQ_MAX_WR | BIT(7),
		IB_SRQ_MAX_WR | IB_SRQ_LIMIT | BIT(31),
	};
	struct vt *v = t->priv;
	struct ib_srq_attr sa = { .srq_limit = 5 };
	int i;

	KUNIT_ASSERT_EQ(t, ib_modify_srq(v->srq, &sa, IB_SRQ_LIMIT), 0);
	sa.max_wr = 2 * VT_DEPTH;
	sa.srq_limit = 2;
	KUNIT_EXPECT_EQ(t, ib_modify_srq(v->srq, &sa, 0), 0);
	KUNIT_EXPECT_EQ(t, ib_query_srq(v->srq, &sa), 0);
	KUNIT_EXPECT_EQ(t, sa.max_wr, (u32)VT_DEPTH);
	KUNIT_EXPECT_EQ(t, sa.srq_limit, 5u);
	sa.srq_limit = 5;	/* the next checks start from 5 whatever happened */
	KUNIT_ASSERT_EQ(t, ib_modify_srq(v->srq, &sa, IB_SRQ_LIMIT), 0);
	for (i = 0; i < ARRAY_SIZE(unknown); i++) {
		sa.max_wr = 2 * VT_DEPTH;
		sa.srq_limit = 2;
		KUNIT_EXPECT_EQ(t, ib_modify_srq(v->srq, &sa,
						 (enum ib_srq_attr_mask)unknown[i]),
				-EINVAL);
		KUNIT_EXPECT_EQ(t, ib_query_srq(v->srq, &sa), 0);
		KUNIT_EXPECT_EQ(t, sa.max_wr, (u32)VT_DEPTH);
		KUNIT_EXPECT_EQ(t, sa.srq_limit, 5u);
	}
}

/* posts a receive of 64 bytes at bbuf to @srq with @lkey */
static int vt_post_srq(struct vt *v, struct ib_srq *srq, u64 wr_id, u32 lkey)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)v->bbuf, .length = 64, .lkey = lkey,
	};
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	const struct ib_recv_wr *bad;

	return ib_post_srq_recv(srq, &wr, &bad);
}

/* RESET, then connect @a and @b to each other again (a: rnr_retry 1) */
static int vt_reconnect(struct ib_qp *a, struct ib_qp *b)
{
	struct ib_qp_attr r = { .qp_state = IB_QPS_RESET };

	if (ib_modify_qp(a, &r, IB_QP_STATE) || ib_modify_qp(b, &r, IB_QP_STATE))
		return -EIO;
	if (vt_connect(a, b->qp_num, 1) || vt_connect(b, a->qp_num, 7))
		return -EIO;
	return 0;
}

/*
 * A receive WQE with a bad lkey is consumed, and counted as consumed: the
 * SRQ's cached count must never exceed what is really posted.  rdmavt
 * 6.1 advances the tail but skips count-- when init_sge() fails, and
 * reloads the count only once it falls below 16, so 16 bad-lkey takes
 * out of 32 posted leave its count at 32 with 16 posted; after the 16
 * good ones it says 16 with none, and the next send is given the
 * never-posted slot at the tail instead of an RNR NAK.
 */
static void vt_srq_bad_lkey_counted(struct kunit *t)
{
	struct vt *v = t->priv;
	struct krwq_rq *ring = &to_ksrq(v->srq)->rq;
	struct ib_srq_attr sa = { .max_wr = 4 * VT_DEPTH };
	u32 lkey = v->pd->local_dma_lkey, count;
	struct ib_qp *s;
	struct ib_wc wc;
	int i;

	/* room for 32: the first take loads the count with all of them */
	KUNIT_ASSERT_EQ(t, ib_modify_srq(v->srq, &sa, IB_SRQ_MAX_WR), 0);
	s = vt_new_qp(v, IB_QPT_RC, true);
	KUNIT_ASSERT_FALSE(t, IS_ERR(s));
	KUNIT_ASSERT_EQ(t, vt_reconnect(v->a, s), 0);
	for (i = 0; i < 2 * VT_DEPTH; i++)
		KUNIT_ASSERT_EQ(t, vt_post_srq(v, v->srq, i,
					       i < VT_DEPTH ? ~lkey : lkey), 0);
	for (i = 0; i < VT_DEPTH; i++) {
		KUNIT_ASSERT_EQ(t, vt_send(v, v->a, 100 + i, v->abuf, 32), 0);
		KUNIT_ASSERT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
		KUNIT_EXPECT_EQ(t, wc.wr_id, (u64)i);
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_LOC_PROT_ERR);
		KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_OP_ERR);
		/* both went to ERR: start them again, the SRQ keeps its WRs */
		KUNIT_ASSERT_EQ(t, vt_wait_state(s, IB_QPS_ERR), IB_QPS_ERR);
		KUNIT_ASSERT_EQ(t, vt_wait_state(v->a, IB_QPS_ERR), IB_QPS_ERR);
		KUNIT_ASSERT_EQ(t, vt_reconnect(v->a, s), 0);
		count = READ_ONCE(ring->kwq->count);
		KUNIT_EXPECT_LE(t, count, (u32)(2 * VT_DEPTH - 1 - i));
	}
	for (i = VT_DEPTH; i < 2 * VT_DEPTH; i++) {
		KUNIT_ASSERT_EQ(t, vt_send(v, v->a, 100 + i, v->abuf, 32), 0);
		KUNIT_ASSERT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
		KUNIT_EXPECT_EQ(t, wc.wr_id, (u64)i);
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
		KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	}
	count = READ_ONCE(ring->kwq->count);
	KUNIT_EXPECT_EQ(t, count, 0u);
	/* nothing is posted: RNR NAKs until rnr_retry runs out */
	KUNIT_ASSERT_EQ(t, vt_send(v, v->a, 999, v->abuf, 32), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_RNR_RETRY_EXC_ERR);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->rcq, 1, &wc), 0);
	vt_free_qp(v, s);
}

/*
 * The ERR re-flush budget of a device, asked by two workers at the same
 * time (each grants, then each spends): between them they may not be
 * granted more than the device had, and what they did not use returns.
 */
static void vt_uflush_budget_shared(struct kunit *t)
{
	const u32 full = KRWQ_UFLUSH_RATE / 10;	/* a full bucket */
	struct krwq_dev *d = kunit_kzalloc(t, sizeof(*d), GFP_KERNEL);
	unsigned long start;
	u32 a, b, accrued;

	KUNIT_ASSERT_NOT_NULL(t, d);
	spin_lock_init(&d->uflush_lock);
	start = jiffies;
	d->uflush_stamp = start;
	d->uflush_tokens = full;
	a = krwq_uflush_budget(d, full);	/* worker 1 */
	b = krwq_uflush_budget(d, full);	/* worker 2, before 1 spent */
	accrued = min_t(u64, full,
			(u64)(jiffies - start) * KRWQ_UFLUSH_RATE / HZ);
	KUNIT_EXPECT_EQ(t, a, full);
	KUNIT_EXPECT_LE(t, a + b, full + accrued);
	/* worker 1 flushed 100, worker 2 nothing: the rest comes back */
	krwq_uflush_spend(d, a, 100);
	krwq_uflush_spend(d, b, 0);
	KUNIT_EXPECT_LE(t, d->uflush_tokens, full);
	KUNIT_EXPECT_GE(t, krwq_uflush_budget(d, full), full - 100);
}

/* The QP's state now, and again after the deferred work had its chance. */
static enum ib_qp_state vt_state_settled(struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	msleep(50);
	if (ib_query_qp(qp, &attr, IB_QP_STATE, &init))
		return -1;
	return attr.qp_state;
}

/*
 * Two UD QPs in RTS (vt_exit() frees them) and an address handle for this
 * port, with @wr aimed from *@u1 at *@u2.  Return: the address handle,
 * for rdma_destroy_ah().
 */
static struct ib_ah *vt_ud_pair(struct kunit *t, struct ib_ud_wr *wr,
				struct ib_qp **u1, struct ib_qp **u2)
{
	struct vt *v = t->priv;
	struct rdma_ah_attr ah_attr = { .type = RDMA_AH_ATTR_TYPE_IB };
	struct ib_ah *ah;

	rdma_ah_set_dlid(&ah_attr, VT_LID);
	rdma_ah_set_port_num(&ah_attr, 1);
	*u1 = vt_new_qp(v, IB_QPT_UD, false);
	*u2 = vt_new_qp(v, IB_QPT_UD, false);
	KUNIT_ASSERT_FALSE(t, IS_ERR(*u1) || IS_ERR(*u2));
	KUNIT_ASSERT_EQ(t, vt_connect(*u1, 0, 0), 0);
	KUNIT_ASSERT_EQ(t, vt_connect(*u2, 0, 0), 0);
	ah = rdma_create_ah(v->pd, &ah_attr, 0);
	KUNIT_ASSERT_FALSE(t, IS_ERR(ah));
	wr->ah = ah;
	wr->remote_qpn = (*u2)->qp_num;
	return ah;
}

/*
 * A datagram longer than the receive WQE is dropped and counted; the WQE
 * stays, the receiver stays in RTS, and a datagram that fits lands in it
 * (as hfi1 does; rxe moves the QP to ERR, which lets any sender that
 * knows a QP number and Q_Key flush another process's receives).
 */
static void vt_ud_too_long_dropped(struct kunit *t)
{
	struct vt *v = t->priv;
	u64 dropped = vt_counter(v, "rx_dropped");
	struct ib_sge sge = {
		.addr = (uintptr_t)v->abuf, .length = 200,
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_ud_wr wr = {
		.wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED },
		.remote_qkey = 0x11111111,
	};
	const struct ib_send_wr *bad;
	struct ib_qp *u1, *u2;
	struct ib_ah *ah;
	struct ib_wc wc;

	ah = vt_ud_pair(t, &wr, &u1, &u2);
	KUNIT_ASSERT_EQ(t, vt_post_recv(v, u2, 8, v->bbuf, 140), 0);
	KUNIT_ASSERT_EQ(t, ib_post_send(u1, &wr.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, vt_state_settled(u2), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->rcq, 1, &wc), 0);
	KUNIT_EXPECT_EQ(t, vt_counter(v, "rx_dropped"), dropped + 1);
	sge.length = 100;
	KUNIT_ASSERT_EQ(t, ib_post_send(u1, &wr.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 8ull);
	KUNIT_EXPECT_EQ(t, wc.byte_len, 140u);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	rdma_destroy_ah(ah, 0);
	vt_free_qp(v, u1);
	vt_free_qp(v, u2);
}

/*
 * A destination QPN is 24 bits on the wire: a UD WR naming one wider is
 * refused at post (EINVAL, bad_wr at it), and nothing is queued.
 */
static void vt_ud_qpn_over_24_bits(struct kunit *t)
{
	struct vt *v = t->priv;
	struct ib_sge sge = {
		.addr = (uintptr_t)v->abuf, .length = 16,
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_ud_wr wr = {
		.wr = { .wr_id = 9, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED },
		.remote_qkey = 0x11111111,
	};
	const struct ib_send_wr *bad;
	struct ib_qp *u1, *u2;
	struct ib_ah *ah;
	struct ib_wc wc;

	ah = vt_ud_pair(t, &wr, &u1, &u2);
	wr.remote_qpn |= BIT(24);
	KUNIT_ASSERT_EQ(t, vt_post_recv(v, u2, 8, v->bbuf, 140), 0);
	KUNIT_EXPECT_EQ(t, ib_post_send(u1, &wr.wr, &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(t, bad, &wr.wr);
	KUNIT_EXPECT_EQ(t, vt_poll(v->scq, &wc, 1), 0);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->rcq, 1, &wc), 0);
	/* the QP is as it was: the 24-bit QPN goes */
	wr.remote_qpn = u2->qp_num;
	KUNIT_ASSERT_EQ(t, ib_post_send(u1, &wr.wr, &bad), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 8ull);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	rdma_destroy_ah(ah, 0);
	vt_free_qp(v, u1);
	vt_free_qp(v, u2);
}

/*
 * On an SRQ a WQE too small for a datagram is not left at the head, where
 * it would stall every QP of the SRQ: it completes with LOC_LEN_ERR, the
 * QP stays in RTS, and the next datagram takes the next WQE.
 */
static void vt_ud_too_long_srq(struct kunit *t)
{
	struct vt *v = t->priv;
	struct rdma_ah_attr ah_attr = { .type = RDMA_AH_ATTR_TYPE_IB };
	struct ib_sge sge = {
		.addr = (uintptr_t)v->abuf, .length = 100,
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_ud_wr wr = {
		.wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED },
		.remote_qkey = 0x11111111,
	};
	const struct ib_send_wr *bad;
	struct ib_qp *u1, *u2;
	struct ib_ah *ah;
	struct ib_wc wc;

	rdma_ah_set_dlid(&ah_attr, VT_LID);
	rdma_ah_set_port_num(&ah_attr, 1);
	u1 = vt_new_qp(v, IB_QPT_UD, false);
	u2 = vt_new_qp(v, IB_QPT_UD, true);
	KUNIT_ASSERT_FALSE(t, IS_ERR(u1) || IS_ERR(u2));
	KUNIT_ASSERT_EQ(t, vt_connect(u1, 0, 0), 0);
	KUNIT_ASSERT_EQ(t, vt_connect(u2, 0, 0), 0);
	ah = rdma_create_ah(v->pd, &ah_attr, 0);
	KUNIT_ASSERT_FALSE(t, IS_ERR(ah));
	wr.ah = ah;
	wr.remote_qpn = u2->qp_num;
	KUNIT_EXPECT_EQ(t, vt_post_srq(v, v->srq, 40, v->pd->local_dma_lkey), 0);
	KUNIT_EXPECT_EQ(t, ib_post_send(u1, &wr.wr, &bad), 0);
	KUNIT_EXPECT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 40ull);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_LOC_LEN_ERR);
	KUNIT_EXPECT_EQ(t, vt_state_settled(u2), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(t, vt_post_srq(v, v->srq, 41, v->pd->local_dma_lkey), 0);
	sge.length = 16;
	KUNIT_EXPECT_EQ(t, ib_post_send(u1, &wr.wr, &bad), 0);
	KUNIT_EXPECT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 41ull);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.byte_len, 56u);
	rdma_destroy_ah(ah, 0);
	vt_free_qp(v, u1);
	vt_free_qp(v, u2);
}

/*
 * UC has no acknowledgments: a message the responder cannot take (a bad
 * rkey, a receive too small) is dropped there, the QP stays in RTS, the
 * receive WQE stays for the next message that fits.
 */
static void vt_uc_drops(struct kunit *t)
{
	struct vt *v = t->priv;
	u64 dropped = vt_counter(v, "rx_dropped");
	struct ib_qp *c, *d;
	struct ib_wc wc;

	c = vt_new_qp(v, IB_QPT_UC, false);
	d = vt_new_qp(v, IB_QPT_UC, false);
	KUNIT_ASSERT_FALSE(t, IS_ERR(c) || IS_ERR(d));
	KUNIT_ASSERT_EQ(t, vt_connect(c, d->qp_num, 0), 0);
	KUNIT_ASSERT_EQ(t, vt_connect(d, c->qp_num, 0), 0);
	KUNIT_ASSERT_EQ(t, vt_write(v, c, v->abuf, 8, (uintptr_t)v->bbuf,
				    v->pd->unsafe_global_rkey ^ 0x80), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, vt_state_settled(d), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(t, vt_counter(v, "rx_dropped"), dropped + 1);

	KUNIT_ASSERT_EQ(t, vt_post_recv(v, d, 12, v->bbuf, 64), 0);
	KUNIT_ASSERT_EQ(t, vt_send(v, c, 13, v->abuf, 100), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, vt_state_settled(d), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->rcq, 1, &wc), 0);
	KUNIT_EXPECT_EQ(t, vt_counter(v, "rx_dropped"), dropped + 2);
	KUNIT_ASSERT_EQ(t, vt_send(v, c, 14, v->abuf, 32), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 12ull);
	KUNIT_EXPECT_EQ(t, wc.byte_len, 32u);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	vt_free_qp(v, c);
	vt_free_qp(v, d);
}

/*
 * Two buffers of @len bytes for one long message, the source filled with
 * 0x5a and the destination zeroed; they replace those of an earlier call
 * (a case of several rounds), and vt_exit() frees the last.
 */
static bool vt_big_bufs(struct vt *v, u32 len)
{
	vfree(v->big_src);
	vfree(v->big_dst);
	v->big_src = vmalloc(len);
	v->big_dst = vzalloc(len);
	if (!v->big_src || !v->big_dst)
		return false;
	memset(v->big_src, 0x5a, len);
	return true;
}

/*
 * What an hrtimer on the copying CPU saw of the destination buffer: the
 * first byte written (the copy had begun) and the last (it had ended).
 * With @revoke it also marks that fast-registration region invalid, as
 * an invalidation on another CPU does first (krwq_mr_invalidate()).
 */
struct vt_probe {
	struct hrtimer timer;
	const u8 *dst;
	u32 len;
	struct krwq_mr *revoke;
	bool fired, begun, ended;
};

static enum hrtimer_restart vt_probe_fn(struct hrtimer *h)
{
	struct vt_probe *p = container_of(h, struct vt_probe, timer);

	p->begun = READ_ONCE(p->dst[0]) != 0;
	p->ended = READ_ONCE(p->dst[p->len - 1]) != 0;
	if (p->revoke)
		WRITE_ONCE(p->revoke->valid, false);
	WRITE_ONCE(p->fired, true);
	return HRTIMER_NORESTART;
}

/*
 * One message of @len bytes from @src to @dst, by RDMA WRITE or by SEND,
 * with an hrtimer armed on this CPU to expire @delay_us after the post
 * begins.  Return: true if the timer's interrupt was taken while the copy
 * was part done.
 */
static bool vt_copy_interrupted(struct vt *v, enum ib_wr_opcode op,
				u8 *src, u8 *dst, u32 len, u32 delay_us)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)src, .length = len,
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1, .opcode = op,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = (uintptr_t)dst,
		.rkey = v->pd->unsafe_global_rkey,
	};
	struct ib_sge rsge = {
		.addr = (uintptr_t)dst, .length = len,
		.lkey = v->pd->local_dma_lkey,
	};
	struct ib_recv_wr rwr = { .wr_id = 2, .sg_list = &rsge, .num_sge = 1 };
	const struct ib_recv_wr *rbad;
	const struct ib_send_wr *bad;
	struct vt_probe p = { .dst = dst, .len = len };
	struct ib_wc wc;
	int ret;

	memset(dst, 0, len);
	if (op == IB_WR_SEND &&
	    ib_post_recv(v->b, &rwr, &rbad))
		return false;
	hrtimer_init_on_stack(&p.timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED);
	p.timer.function = vt_probe_fn;
	preempt_disable();	/* the timer and the copy on one CPU */
	hrtimer_start(&p.timer, ns_to_ktime((u64)delay_us * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_PINNED);
	ret = ib_post_send(v->a, &wr.wr, &bad);
	preempt_enable();
	hrtimer_cancel(&p.timer);
	destroy_hrtimer_on_stack(&p.timer);
	if (ret || vt_poll(v->scq, &wc, 1) != 1 || wc.status != IB_WC_SUCCESS)
		return false;
	if (op == IB_WR_SEND &&
	    (vt_poll(v->rcq, &wc, 1) != 1 || wc.status != IB_WC_SUCCESS))
		return false;
	if (dst[0] != src[0] || dst[len - 1] != src[len - 1])
		return false;
	return p.fired && p.begun && !p.ended;
}

/*
 * Interrupts are not held off for a whole message: a 16 MiB RDMA WRITE
 * or SEND lets an interrupt in between bounded pieces of its copy
 * (issue 13 item 7).  Such a copy takes milliseconds (tens of them under
 * TCG), so a timer set to expire a little into the post fires part way
 * through, unless the copy runs with interrupts off from start to end.  A
 * timer that fires before the copy begins or after it ends proves
 * nothing, so each opcode gets tries from 50 us to 10 ms.
 */
static void vt_big_copy_takes_interrupts(struct kunit *t)
{
	static const enum ib_wr_opcode ops[] = { IB_WR_RDMA_WRITE, IB_WR_SEND };
	static const u32 delays_us[] = { 50, 200, 1000, 4000, 10000 };
	const u32 len = KRWQ_MAX_MSG_SIZE;
	struct vt *v = t->priv;
	u8 *src, *dst;
	int i, try;

	if (!vt_big_bufs(v, len))
		kunit_skip(t, "no memory for two %u-byte buffers", len);
	src = v->big_src;
	dst = v->big_dst;
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		bool seen = false;

		for (try = 0; try < ARRAY_SIZE(delays_us) && !seen; try++)
			seen = vt_copy_interrupted(v, ops[i], src, dst, len,
						   delays_us[try]);
		KUNIT_EXPECT_TRUE_MSG(t, seen, "opcode %d: no interrupt mid-copy",
				      ops[i]);
	}
}

/*
 * One 1 MiB message through fast-registration region @mr while a timer
 * marks it invalid @delay_us in: an RDMA WRITE from a plain buffer into
 * the region, an RDMA READ from it into a plain buffer, or a SEND out of
 * it into a plain receive buffer.  Return: true if the timer fired part
 * way through the copy; then what the copy did is checked.
 */
static bool vt_revoke_try(struct kunit *t, struct vt *v, struct ib_mr *mr,
			  u8 *buf, u32 len, enum ib_wr_opcode op, u32 delay_us)
{
	struct ib_sge sge = { .addr = mr->iova, .length = len };
	struct ib_send_wr swr = { .wr_id = 60, .sg_list = &sge, .num_sge = 1,
				  .opcode = IB_WR_SEND,
				  .send_flags = IB_SEND_SIGNALED };
	struct ib_sge rsge = { .addr = (uintptr_t)v->big_dst, .length = len,
			       .lkey = v->pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_id = 61, .sg_list = &rsge, .num_sge = 1 };
	struct vt_probe r = { .revoke = to_kmr(mr), .len = len };
	struct ib_rdma_wr rdwr = {
		.wr = { .wr_id = 62, .sg_list = &rsge, .num_sge = 1,
			.opcode = IB_WR_RDMA_READ,
			.send_flags = IB_SEND_SIGNALED },
		.remote_addr = mr->iova,
	};
	const struct ib_recv_wr *rbad;
	const struct ib_send_wr *bad;
	struct ib_qp *c, *d;
	struct ib_wc wc;
	bool mid;
	int ret;

	/*
	 * A failed message takes its QPs to ERR: a new pair each time.  A
	 * region is registered only once invalid: a try the timer missed
	 * left it valid.
	 */
	KUNIT_ASSERT_EQ(t, vt_pair(v, &c, &d), 0);
	KUNIT_ASSERT_EQ(t, vt_local_inv(d, mr->rkey, 2), 0);
	KUNIT_ASSERT_EQ(t, vt_reg(d, mr, IB_ACCESS_LOCAL_WRITE |
				  IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ,
				  1), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_ASSERT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_ASSERT_EQ(t, wc.status, IB_WC_SUCCESS);
	sge.lkey = mr->lkey;	/* the registration's new key */
	rdwr.rkey = mr->rkey;
	if (op == IB_WR_RDMA_WRITE) {
		memset(buf, 0, len);
		r.dst = buf;
	} else {
		memset(buf, 0x5a, len);
		memset(v->big_dst, 0, len);
		r.dst = v->big_dst;
	}
	if (op == IB_WR_SEND)
		KUNIT_ASSERT_EQ(t, ib_post_recv(d, &rwr, &rbad), 0);
	hrtimer_init_on_stack(&r.timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED);
	r.timer.function = vt_probe_fn;
	preempt_disable();	/* the timer and the copy on one CPU */
	hrtimer_start(&r.timer, ns_to_ktime((u64)delay_us * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_PINNED);
	if (op == IB_WR_SEND)
		ret = ib_post_send(c, &swr, &bad);
	else if (op == IB_WR_RDMA_READ)
		ret = ib_post_send(c, &rdwr.wr, &bad);
	else
		ret = vt_write(v, c, v->big_src, len, mr->iova, mr->rkey);
	preempt_enable();
	hrtimer_cancel(&r.timer);
	destroy_hrtimer_on_stack(&r.timer);
	KUNIT_EXPECT_EQ(t, ret, 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	mid = r.fired && r.begun && !r.ended;
	if (mid && op == IB_WR_SEND) {
		/*
		 * the sender's region: a local protection error; the
		 * receive WQE completes, aborted, and is not lost
		 */
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_LOC_PROT_ERR);
		KUNIT_ASSERT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
		KUNIT_EXPECT_EQ(t, wc.wr_id, 61);
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_ABORT_ERR);
	} else if (mid) {
		/* the responder's region, written or read: remote access */
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_ACCESS_ERR);
	}
	if (mid)	/* nothing past the window where it stopped */
		KUNIT_EXPECT_EQ(t, r.dst[len - 1], 0);
	vt_free_qp(v, c);
	vt_free_qp(v, d);
	return mid;
}

/*
 * An invalidation waits for the copies that hold its region, spinning,
 * so a long copy must not hold it to the end: at its next window (every
 * KRWQ_IRQOFF_BYTES) the copy sees the region invalid and stops, with a
 * protection error, and what lies past that window is never written.
 * For an RDMA WRITE into the region, an RDMA READ from it and a SEND out
 * of it, tries with a timer on the copying CPU marking the region invalid
 * from 5 us to 10 ms into the message: a try where it fired before the
 * copy began or after it ended proves nothing.
 */
static void vt_invalidate_during_long_copy(struct kunit *t)
{
	static const enum ib_wr_opcode ops[] = {
		IB_WR_RDMA_WRITE, IB_WR_RDMA_READ, IB_WR_SEND,
	};
	static const u32 delays_us[] = { 5, 20, 100, 500, 2000, 10000 };
	const u32 len = SZ_1M;
	struct vt *v = t->priv;
	struct scatterlist sg;
	struct ib_mr *mr;
	int i, try;
	u8 *buf;

	/* a large kmalloc comes whole from the page allocator: page aligned */
	buf = kunit_kzalloc(t, len, GFP_KERNEL);
	if (!buf || !vt_big_bufs(v, len))
		kunit_skip(t, "no memory for three %u-byte buffers", len);
	mr = vt_fr_mr(v, buf, len, len / PAGE_SIZE, &sg);
	KUNIT_ASSERT_FALSE(t, IS_ERR(mr));
	KUNIT_ASSERT_EQ(t, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE), 1);
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		bool seen = false;

		for (try = 0; try < ARRAY_SIZE(delays_us) && !seen; try++)
			seen = vt_revoke_try(t, v, mr, buf, len, ops[i],
					     delays_us[try]);
		KUNIT_EXPECT_TRUE_MSG(t, seen, "opcode %d: the timer never fired mid-copy",
				      ops[i]);
	}
	vt_fr_free(v, mr, &sg);
}

struct vt_big_send {
	struct vt *v;
	struct ib_qp *from;	/* NULL: v->a, to v->b */
	struct ib_srq *srq;	/* the receive goes here, if set */
	const u8 *src;
	u32 len;
	int ret;
	struct completion done;
};

static int vt_big_send_fn(void *arg)
{
	struct vt_big_send *b = arg;

	b->ret = vt_send(b->v, b->from ? b->from : b->v->a, 7, (u8 *)b->src,
			 b->len);
	/* gone from this module's text once the waiter wakes */
	kthread_complete_and_exit(&b->done, 0);
}

/*
 * Posts a receive of b->len bytes on b and starts a kthread sending that
 * many from a; returns the receive buffer once the copy into it has begun
 * (or skips the case when there is no memory for the buffers).
 */
static u8 *vt_big_send_begun(struct kunit *t, struct vt_big_send *b)
{
	struct vt *v = b->v;
	struct task_struct *task;
	unsigned long end;
	bool begun = false;
	u8 *dst;

	if (!vt_big_bufs(v, b->len))
		kunit_skip(t, "no memory for two %u-byte buffers", b->len);
	dst = v->big_dst;
	b->src = v->big_src;
	init_completion(&b->done);
	if (b->srq) {
		struct ib_sge sge = {
			.addr = (uintptr_t)dst, .length = b->len,
			.lkey = v->pd->local_dma_lkey,
		};
		struct ib_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 };
		const struct ib_recv_wr *bad;

		KUNIT_ASSERT_EQ(t, ib_post_srq_recv(b->srq, &wr, &bad), 0);
	} else {
		KUNIT_ASSERT_EQ(t, vt_post_recv(v, v->b, 1, dst, b->len), 0);
	}
	task = kthread_run(vt_big_send_fn, b, "vt_big_send");
	KUNIT_ASSERT_FALSE(t, IS_ERR(task));
	end = jiffies + 2 * HZ;
	while (!begun && time_before(jiffies, end)) {
		begun = READ_ONCE(dst[0]) != 0;
		usleep_range(20, 50);
	}
	KUNIT_EXPECT_TRUE(t, begun);
	return dst;
}

/*
 * An RC pair s -> r, r on the SRQ, and b's long send from s begun
 * (vt_big_send_begun()) into the SRQ's WQE 1.
 */
static u8 *vt_srq_send_begun(struct kunit *t, struct vt_big_send *b,
			     struct ib_qp **s, struct ib_qp **r)
{
	struct vt *v = b->v;

	*s = vt_new_qp(v, IB_QPT_RC, false);
	*r = vt_new_qp(v, IB_QPT_RC, true);
	KUNIT_ASSERT_FALSE(t, IS_ERR(*s) || IS_ERR(*r));
	KUNIT_ASSERT_EQ(t, vt_connect(*s, (*r)->qp_num, 7), 0);
	KUNIT_ASSERT_EQ(t, vt_connect(*r, (*s)->qp_num, 7), 0);
	b->from = *s;
	return vt_big_send_begun(t, b);
}

/*
 * A move to ERR that arrives while a long receive is being copied (the
 * sender letting interrupts in between pieces) leaves the receive flush
 * to the end of that copy: the receive completes first, whole, and a
 * drain's marker WR after it.  Flushing at once would complete the marker
 * while data was still landing.
 */
static void vt_drain_waits_for_long_copy(struct kunit *t)
{
	const u32 len = KRWQ_MAX_MSG_SIZE;
	struct vt *v = t->priv;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct vt_big_send b = { .v = v, .len = len };
	struct ib_wc wc[2];
	bool ended;
	u8 *dst;

	/* into ERR once the copy has begun, while it still runs */
	dst = vt_big_send_begun(t, &b);
	KUNIT_EXPECT_EQ(t, ib_modify_qp(v->b, &attr, IB_QP_STATE), 0);
	ended = READ_ONCE(dst[len - 1]) != 0;
	KUNIT_EXPECT_EQ(t, vt_post_recv(v, v->b, 2, v->bbuf, 64), 0);
	wait_for_completion(&b.done);
	KUNIT_EXPECT_EQ(t, b.ret, 0);
	if (ended)
		kunit_skip(t, "the copy ended before the move to ERR");
	KUNIT_ASSERT_EQ(t, vt_poll(v->rcq, wc, 2), 2);
	KUNIT_EXPECT_EQ(t, wc[0].wr_id, 1ull);
	KUNIT_EXPECT_EQ(t, wc[0].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc[0].byte_len, len);
	KUNIT_EXPECT_EQ(t, dst[len - 1], 0x5a);
	KUNIT_EXPECT_EQ(t, wc[1].wr_id, 2ull);
	KUNIT_EXPECT_EQ(t, wc[1].status, IB_WC_WR_FLUSH_ERR);
}

/*
 * The same on a QP of an SRQ, whose receives a move to ERR does not flush:
 * a drain then waits only for a marker WR on the send queue (ib_drain_qp()
 * on Linux 6.1), and that marker must complete after the receive under
 * way, never while data is still landing.
 */
static void vt_drain_srq_waits_for_long_copy(struct kunit *t)
{
	const u32 len = KRWQ_MAX_MSG_SIZE;
	struct vt *v = t->priv;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct vt_big_send b = { .v = v, .len = len, .srq = v->srq };
	struct ib_qp *s, *r;
	bool ended, marker = false;
	unsigned long end;
	struct ib_wc wc;
	int got;
	u8 *dst;

	dst = vt_srq_send_begun(t, &b, &s, &r);
	KUNIT_EXPECT_EQ(t, ib_modify_qp(r, &attr, IB_QP_STATE), 0);
	ended = READ_ONCE(dst[len - 1]) != 0;
	/* the drain's marker, posted in ERR as ib_drain_sq() posts it */
	KUNIT_EXPECT_EQ(t, vt_send(v, r, 99, v->abuf, 0), 0);
	end = jiffies + 60 * HZ;	/* 16 MiB under KASAN and TCG */
	while (!marker && time_before(jiffies, end)) {
		if (ib_poll_cq(v->scq, 1, &wc) == 1)
			marker = wc.wr_id == 99;
		else
			usleep_range(100, 200);
	}
	/* what the receive CQ holds when the drain would return */
	got = ib_poll_cq(v->rcq, 1, &wc);
	wait_for_completion(&b.done);
	KUNIT_EXPECT_EQ(t, b.ret, 0);
	KUNIT_ASSERT_TRUE(t, marker);
	if (ended)
		kunit_skip(t, "the copy ended before the move to ERR");
	KUNIT_ASSERT_EQ_MSG(t, got, 1,
			    "the marker completed before the receive under way");
	KUNIT_EXPECT_EQ(t, wc.wr_id, 1ull);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.byte_len, len);
	KUNIT_EXPECT_EQ(t, dst[len - 1], 0x5a);
	vt_free_qp(v, s);
	vt_free_qp(v, r);
}

/*
 * A RESET of the destination while a long receive is being copied
 * abandons that delivery: the WQE goes with the others RESET discards,
 * nothing completes for it, and the RC sender, never answered, sends the
 * message again once the destination is connected and has a receive.
 */
static void vt_reset_during_long_copy(struct kunit *t)
{
	const u32 len = KRWQ_MAX_MSG_SIZE;
	struct vt *v = t->priv;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };
	struct vt_big_send b = { .v = v, .len = len };
	struct ib_wc wc;
	u8 *dst;

	dst = vt_big_send_begun(t, &b);
	KUNIT_EXPECT_EQ(t, ib_modify_qp(v->b, &attr, IB_QP_STATE), 0);
	wait_for_completion(&b.done);
	KUNIT_EXPECT_EQ(t, b.ret, 0);
	if (READ_ONCE(dst[len - 1]))
		kunit_skip(t, "the copy ended before the RESET");
	/* connected again, with a new receive: the retry delivers it all */
	memset(dst, 0, len);
	KUNIT_ASSERT_EQ(t, vt_connect(v->b, v->a->qp_num, 7), 0);
	KUNIT_ASSERT_EQ(t, vt_post_recv(v, v->b, 3, dst, len), 0);
	KUNIT_ASSERT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 3ull);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.byte_len, len);
	KUNIT_EXPECT_EQ(t, dst[0], 0x5a);
	KUNIT_EXPECT_EQ(t, dst[len - 1], 0x5a);
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 7ull);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->rcq, 1, &wc), 0);
}

/*
 * The same on a QP of an SRQ, whose WQEs a RESET does not discard: the
 * abandoned delivery's WQE completes flushed, once, before the RESET
 * returns, and the sender's retry takes the SRQ's next WQE.  Before, the
 * FLUSH_ERR was entered whenever the abandoned copy next took the QP's
 * lock: after the RESET had returned, maybe on a QP connected again, or
 * once a destroy had cleaned the QP's completions out of the CQ, the
 * SRQ's WQE then gone without one.  That copy takes the lock again within
 * microseconds, so a single look right after the RESET may miss it: the
 * case looks three times, on new QPs each time.
 */
static noinline void vt_reset_srq_once(struct kunit *t, int round)
{
	const u32 len = KRWQ_MAX_MSG_SIZE;
	struct vt *v = t->priv;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };
	struct vt_big_send b = { .v = v, .len = len, .srq = v->srq };
	struct ib_sge sge = { .length = len, .lkey = v->pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 };
	const struct ib_recv_wr *bad;
	struct ib_qp *s, *r;
	struct ib_wc wc;
	int got;
	u8 *dst;

	dst = vt_srq_send_begun(t, &b, &s, &r);
	KUNIT_EXPECT_EQ(t, ib_modify_qp(r, &attr, IB_QP_STATE), 0);
	/* what the receive CQ holds when the RESET returns */
	got = ib_poll_cq(v->rcq, 1, &wc);
	wait_for_completion(&b.done);
	KUNIT_EXPECT_EQ(t, b.ret, 0);
	if (got == 1 && wc.status == IB_WC_SUCCESS) {
		kunit_info(t, "round %d: the copy ended before the RESET", round);
	} else {
		KUNIT_EXPECT_EQ_MSG(t, got, 1,
				    "round %d: the RESET returned before the abandoned WQE completed",
				    round);
		if (got != 1)	/* it comes later: take it, and go on */
			KUNIT_ASSERT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
		KUNIT_EXPECT_EQ(t, wc.wr_id, 1ull);
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_WR_FLUSH_ERR);
		KUNIT_EXPECT_PTR_EQ(t, wc.qp, r);
		KUNIT_EXPECT_EQ(t, ib_poll_cq(v->rcq, 1, &wc), 0);
		/* connected again, with the SRQ's next WQE: the retry takes it */
		memset(dst, 0, len);
		sge.addr = (uintptr_t)dst;
		KUNIT_ASSERT_EQ(t, vt_connect(r, s->qp_num, 7), 0);
		KUNIT_ASSERT_EQ(t, ib_post_srq_recv(v->srq, &rwr, &bad), 0);
		KUNIT_ASSERT_EQ(t, vt_poll(v->rcq, &wc, 1), 1);
		KUNIT_EXPECT_EQ(t, wc.wr_id, 2ull);
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(t, wc.byte_len, len);
		KUNIT_EXPECT_EQ(t, dst[len - 1], 0x5a);
	}
	KUNIT_ASSERT_EQ(t, vt_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 7ull);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	vt_free_qp(v, s);
	vt_free_qp(v, r);
}

static void vt_reset_srq_during_long_copy(struct kunit *t)
{
	int round;

	for (round = 1; round <= 3; round++)
		vt_reset_srq_once(t, round);
}

/* Posters of 64 KiB RDMA WRITEs that keep a QP's send queue running. */
#define VT_POSTERS	4
#define VT_POSTS_MAX	500	/* each; the send CQ holds all of them */
#define VT_POST_LEN	SZ_64K

struct vt_busy {
	struct vt *v;
	struct ib_qp *qp;
	u64 remote;
	bool resetting, stop;
	atomic_t posted, during;	/* accepted; of those, while resetting */
	struct completion done[VT_POSTERS];
};

struct vt_busy_poster {
	struct vt_busy *b;
	int i;
};

static int vt_busy_poster_fn(void *arg)
{
	struct vt_busy_poster *p = arg;
	struct vt_busy *b = p->b;
	int n = 0, ret;

	while (n < VT_POSTS_MAX && !READ_ONCE(b->stop)) {
		ret = vt_write(b->v, b->qp, b->v->big_src, VT_POST_LEN,
			       b->remote, b->v->pd->unsafe_global_rkey);
		if (ret == -ENOMEM) {	/* the queue is full for now */
			cond_resched();
			continue;
		}
		if (ret)		/* RESET: no more posts */
			break;
		n++;
		atomic_inc(&b->posted);
		/* a RESET that never ends would keep these going: a bound */
		if (READ_ONCE(b->resetting) &&
		    atomic_inc_return(&b->during) > 10 * VT_DEPTH)
			break;
	}
	kthread_complete_and_exit(&b->done[p->i], 0);
}

/*
 * A RESET of a QP that four threads keep posting to returns once the run
 * under way has finished its WQE: meanwhile no new run starts, so the
 * posts it accepts are at most what the send queue holds (issue 27 item
 * 7).  Before, each run's end let the next poster start another, and the
 * RESET waited in D state for as long as they kept posting: it accepted
 * posts without bound (here the posters give up after ten queues' worth).
 */
static void vt_reset_with_busy_posters(struct kunit *t)
{
	struct vt *v = t->priv;
	struct ib_cq_init_attr cq_attr = {
		.cqe = VT_POSTERS * VT_POSTS_MAX + VT_DEPTH,
	};
	struct ib_qp_init_attr init = {
		.recv_cq = v->rcq, .sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = VT_DEPTH, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IB_QPT_RC,
	};
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };
	struct vt_busy_poster p[VT_POSTERS];
	struct vt_busy *b;
	struct ib_qp *d;
	int i, started = 0;

	b = kunit_kzalloc(t, sizeof(*b), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(t, b);
	if (!vt_big_bufs(v, VT_POST_LEN))
		kunit_skip(t, "no memory for two %u-byte buffers", VT_POST_LEN);
	init.send_cq = ib_create_cq(v->dev, NULL, NULL, NULL, &cq_attr);
	KUNIT_ASSERT_FALSE(t, IS_ERR(init.send_cq));
	b->qp = ib_create_qp(v->pd, &init);
	d = vt_new_qp(v, IB_QPT_RC, false);
	if (IS_ERR(b->qp) || IS_ERR(d) || vt_connect(b->qp, d->qp_num, 7) ||
	    vt_connect(d, b->qp->qp_num, 7)) {
		KUNIT_FAIL(t, "QPs");
		goto out;
	}
	b->v = v;
	b->remote = (uintptr_t)v->big_dst;
	for (i = 0; i < VT_POSTERS; i++) {
		struct task_struct *task;

		p[i] = (struct vt_busy_poster){ .b = b, .i = i };
		init_completion(&b->done[i]);
		task = kthread_run(vt_busy_poster_fn, &p[i], "vt_busy%d", i);
		if (IS_ERR(task))
			break;
		started++;
	}
	KUNIT_EXPECT_EQ(t, started, VT_POSTERS);
	/* well under way, then the RESET */
	for (i = 0; i < 100000 && atomic_read(&b->posted) < 4 * VT_DEPTH; i++)
		usleep_range(100, 200);
	KUNIT_EXPECT_GE(t, atomic_read(&b->posted), 4 * VT_DEPTH);
	WRITE_ONCE(b->resetting, true);
	KUNIT_EXPECT_EQ(t, ib_modify_qp(b->qp, &attr, IB_QP_STATE), 0);
	WRITE_ONCE(b->resetting, false);
	WRITE_ONCE(b->stop, true);
	for (i = 0; i < started; i++)
		wait_for_completion(&b->done[i]);
	/*
	 * a few posts run before the RESET takes s_lock, then the queue
	 * fills while the last run ends
	 */
	kunit_info(t, "posts accepted while the RESET waited: %d\n",
		   atomic_read(&b->during));
	KUNIT_EXPECT_LE(t, atomic_read(&b->during), 3 * VT_DEPTH);
out:
	if (!IS_ERR(b->qp))
		ib_destroy_qp(b->qp);
	if (!IS_ERR(d))
		vt_free_qp(v, d);
	ib_destroy_cq(init.send_cq);
}

static struct kunit_case krwq_verbs_cases[] = {
	KUNIT_CASE(vt_send_recv),
	KUNIT_CASE(vt_post_with_irqs_off),
	KUNIT_CASE(vt_recv_capacity),
	KUNIT_CASE(vt_recv_in_reset),
	KUNIT_CASE(vt_flush_on_error),
	KUNIT_CASE(vt_too_small),
	KUNIT_CASE(vt_rdma_write_read),
	KUNIT_CASE(vt_rnr_retry_exceeded),
	KUNIT_CASE(vt_rnr_waits_for_receive),
	KUNIT_CASE(vt_srq_limit_and_resize),
	KUNIT_CASE(vt_ud),
	KUNIT_CASE(vt_cq_notify),
	KUNIT_CASE(vt_cq_overflow),
	KUNIT_CASE(vt_limits_enforced),
	KUNIT_CASE_PARAM(vt_object_limit, vt_kind_gen_params),
	KUNIT_CASE(vt_destroy_drops_completions),
	KUNIT_CASE(vt_foreign_sender_refused),
	KUNIT_CASE(vt_send_waits_for_peer_to_connect),
	KUNIT_CASE(vt_waiting_send_flushed),
	KUNIT_CASE(vt_error_flushes_any_opcode),
	KUNIT_CASE(vt_unreachable_lid),
	KUNIT_CASE(vt_gsi_only_with_mads),
	KUNIT_CASE(vt_fast_reg),
	KUNIT_CASE(vt_fast_reg_no_pages),
	KUNIT_CASE(vt_fast_reg_refused),
	KUNIT_CASE(vt_fast_reg_remap),
	KUNIT_CASE(vt_send_with_invalidate),
	KUNIT_CASE(vt_invalidate_never_waits_locked),
	KUNIT_CASE(vt_wire_invalidate_later),
	KUNIT_CASE(vt_inline),
	KUNIT_CASE(vt_inline_over_limit),
	KUNIT_CASE(vt_atomics),
	KUNIT_CASE(vt_atomics_concurrent),
	KUNIT_CASE(vt_rd_atomic_resources),
	KUNIT_CASE(vt_unsignaled_hold_slots),
	KUNIT_CASE(vt_srq_modify_mask),
	KUNIT_CASE(vt_srq_bad_lkey_counted),
	KUNIT_CASE(vt_uflush_budget_shared),
	KUNIT_CASE(vt_ud_too_long_dropped),
	KUNIT_CASE(vt_ud_qpn_over_24_bits),
	KUNIT_CASE(vt_uc_drops),
	KUNIT_CASE(vt_ud_too_long_srq),
	KUNIT_CASE(vt_big_copy_takes_interrupts),
	KUNIT_CASE(vt_invalidate_during_long_copy),
	KUNIT_CASE(vt_drain_waits_for_long_copy),
	KUNIT_CASE(vt_drain_srq_waits_for_long_copy),
	KUNIT_CASE(vt_reset_during_long_copy),
	KUNIT_CASE(vt_reset_srq_during_long_copy),
	KUNIT_CASE(vt_reset_with_busy_posters),
	{}
};

static struct kunit_suite krwq_verbs_suite = {
	.name = "krwq_verbs",
	.init = vt_init,
	.exit = vt_exit,
	.test_cases = krwq_verbs_cases,
};

kunit_test_suite(krwq_verbs_suite);
