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
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "../module/krwq.h"
#include "../module/uflush.h"

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
 * RESET -> INIT -> RTR -> RTS, aimed at @dest (RC/UC), with the RC
 * requester's local ACK @timeout and @retry_cnt
 */
static int vt_connect_retry(struct ib_qp *qp, u32 dest, u8 rnr_retry,
			    u8 timeout, u8 retry_cnt)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ,
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
		rdma_ah_set_dlid(&a.ah_attr, VT_LID);
		rdma_ah_set_port_num(&a.ah_attr, 1);
		mask |= IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN;
		if (qp->qp_type == IB_QPT_RC) {
			a.max_dest_rd_atomic = 1;
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
		a.max_rd_atomic = 1;
		mask |= IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY |
			IB_QP_MAX_QP_RD_ATOMIC;
	}
	return ib_modify_qp(qp, &a, mask);
}

static int vt_connect(struct ib_qp *qp, u32 dest, u8 rnr_retry)
{
	return vt_connect_retry(qp, dest, rnr_retry, 14, 7);
}

/* The device's counter @name, as `rdma statistic` would show it. */
static u64 vt_counter(struct vt *v, const char *name)
{
	const struct ib_device_ops *ops = &v->dev->ops;
	struct rdma_hw_stats *st = ops->alloc_hw_port_stats(v->dev, 1);
	u64 value = U64_MAX;
	int i;

	if (!st)
		return value;
	ops->get_hw_stats(v->dev, st, 1, st->num_counters);
	for (i = 0; i < st->num_counters; i++)
		if (!strcmp(st->descs[i].name, name))
			value = st->value[i];
	rdma_free_hw_stats_struct(st);
	return value;
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
	KUNIT_CASE(vt_destroy_drops_completions),
	KUNIT_CASE(vt_foreign_sender_refused),
	KUNIT_CASE(vt_send_waits_for_peer_to_connect),
	KUNIT_CASE(vt_waiting_send_flushed),
	KUNIT_CASE(vt_error_flushes_any_opcode),
	KUNIT_CASE(vt_srq_modify_mask),
	KUNIT_CASE(vt_srq_bad_lkey_counted),
	KUNIT_CASE(vt_uflush_budget_shared),
	{}
};

static struct kunit_suite krwq_verbs_suite = {
	.name = "krwq_verbs",
	.init = vt_init,
	.exit = vt_exit,
	.test_cases = krwq_verbs_cases,
};

kunit_test_suite(krwq_verbs_suite);
