// SPDX-License-Identifier: GPL-2.0
/*
 * long_copy.c - krwq_verbs cases: long messages, whose copy lets
 * interrupts in between pieces, and what meets a copy under way: an
 * invalidation of its region, a drain, a RESET of the destination (on
 * its own receive queue or an SRQ), posters that keep the send queue
 * busy while a RESET waits.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/sizes.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>

#include "../../module/krwq.h"
#include "env.h"

/*
 * Two buffers of @len bytes for one long message, the source filled with
 * 0x5a and the destination zeroed; they replace those of an earlier call
 * (a case of several rounds), and kv_exit() frees the last.
 */
static bool kv_big_bufs(struct kv_env *v, u32 len)
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
struct kv_probe {
	struct hrtimer timer;
	const u8 *dst;
	u32 len;
	struct krwq_mr *revoke;
	bool fired, begun, ended;
};

static enum hrtimer_restart kv_probe_fn(struct hrtimer *h)
{
	struct kv_probe *p = container_of(h, struct kv_probe, timer);

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
static bool kv_copy_interrupted(struct kv_env *v, enum ib_wr_opcode op,
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
	struct kv_probe p = { .dst = dst, .len = len };
	struct ib_wc wc;
	int ret;

	memset(dst, 0, len);
	if (op == IB_WR_SEND &&
	    ib_post_recv(v->b, &rwr, &rbad))
		return false;
	hrtimer_init_on_stack(&p.timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED);
	p.timer.function = kv_probe_fn;
	preempt_disable();	/* the timer and the copy on one CPU */
	hrtimer_start(&p.timer, ns_to_ktime((u64)delay_us * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_PINNED);
	ret = ib_post_send(v->a, &wr.wr, &bad);
	preempt_enable();
	hrtimer_cancel(&p.timer);
	destroy_hrtimer_on_stack(&p.timer);
	if (ret || kv_poll(v->scq, &wc, 1) != 1 || wc.status != IB_WC_SUCCESS)
		return false;
	if (op == IB_WR_SEND &&
	    (kv_poll(v->rcq, &wc, 1) != 1 || wc.status != IB_WC_SUCCESS))
		return false;
	if (dst[0] != src[0] || dst[len - 1] != src[len - 1])
		return false;
	return p.fired && p.begun && !p.ended;
}

/**
 * kv_big_copy_takes_interrupts() - a 16 MiB copy lets interrupts in.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * Interrupts are not held off for a whole message: a 16 MiB RDMA WRITE
 * or SEND lets an interrupt in between bounded pieces of its copy
 * (issue 13 item 7).  Such a copy takes milliseconds (tens of them under
 * TCG), so a timer set to expire a little into the post fires part way
 * through, unless the copy runs with interrupts off from start to end.  A
 * timer that fires before the copy begins or after it ends proves
 * nothing, so each opcode gets tries from 50 us to 10 ms.
 */
void kv_big_copy_takes_interrupts(struct kunit *t)
{
	static const enum ib_wr_opcode ops[] = { IB_WR_RDMA_WRITE, IB_WR_SEND };
	static const u32 delays_us[] = { 50, 200, 1000, 4000, 10000 };
	const u32 len = KRWQ_MAX_MSG_SIZE;
	struct kv_env *v = t->priv;
	u8 *src, *dst;
	int i, try;

	if (!kv_big_bufs(v, len))
		kunit_skip(t, "no memory for two %u-byte buffers", len);
	src = v->big_src;
	dst = v->big_dst;
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		bool seen = false;

		for (try = 0; try < ARRAY_SIZE(delays_us) && !seen; try++)
			seen = kv_copy_interrupted(v, ops[i], src, dst, len,
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
static bool kv_revoke_try(struct kunit *t, struct kv_env *v, struct ib_mr *mr,
			  u8 *buf, u32 len, enum ib_wr_opcode op, u32 delay_us)
{
	struct ib_sge sge = { .addr = mr->iova, .length = len };
	struct ib_send_wr swr = { .wr_id = 60, .sg_list = &sge, .num_sge = 1,
				  .opcode = IB_WR_SEND,
				  .send_flags = IB_SEND_SIGNALED };
	struct ib_sge rsge = { .addr = (uintptr_t)v->big_dst, .length = len,
			       .lkey = v->pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_id = 61, .sg_list = &rsge, .num_sge = 1 };
	struct kv_probe r = { .revoke = to_kmr(mr), .len = len };
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
	KUNIT_ASSERT_EQ(t, kv_pair(v, &c, &d), 0);
	KUNIT_ASSERT_EQ(t, kv_local_inv(d, mr->rkey, 2), 0);
	KUNIT_ASSERT_EQ(t, kv_reg(d, mr, IB_ACCESS_LOCAL_WRITE |
				  IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ,
				  1), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_ASSERT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
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
	r.timer.function = kv_probe_fn;
	preempt_disable();	/* the timer and the copy on one CPU */
	hrtimer_start(&r.timer, ns_to_ktime((u64)delay_us * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_PINNED);
	if (op == IB_WR_SEND)
		ret = ib_post_send(c, &swr, &bad);
	else if (op == IB_WR_RDMA_READ)
		ret = ib_post_send(c, &rdwr.wr, &bad);
	else
		ret = kv_write(v, c, v->big_src, len, mr->iova, mr->rkey);
	preempt_enable();
	hrtimer_cancel(&r.timer);
	destroy_hrtimer_on_stack(&r.timer);
	KUNIT_EXPECT_EQ(t, ret, 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	mid = r.fired && r.begun && !r.ended;
	if (mid && op == IB_WR_SEND) {
		/*
		 * the sender's region: a local protection error; the
		 * receive WQE completes, aborted, and is not lost
		 */
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_LOC_PROT_ERR);
		KUNIT_ASSERT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
		KUNIT_EXPECT_EQ(t, wc.wr_id, 61);
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_ABORT_ERR);
	} else if (mid) {
		/* the responder's region, written or read: remote access */
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_REM_ACCESS_ERR);
	}
	if (mid)	/* nothing past the window where it stopped */
		KUNIT_EXPECT_EQ(t, r.dst[len - 1], 0);
	kv_free_qp(v, c);
	kv_free_qp(v, d);
	return mid;
}

/**
 * kv_invalidate_during_long_copy() - a long copy stops at its next window
 * once its region is invalidated.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * An invalidation waits for the copies that hold its region, spinning,
 * so a long copy must not hold it to the end: at its next window (every
 * KRWQ_IRQOFF_BYTES) the copy sees the region invalid and stops, with a
 * protection error, and what lies past that window is never written.
 * For an RDMA WRITE into the region, an RDMA READ from it and a SEND out
 * of it, tries with a timer on the copying CPU marking the region invalid
 * from 5 us to 10 ms into the message: a try where it fired before the
 * copy began or after it ended proves nothing.
 */
void kv_invalidate_during_long_copy(struct kunit *t)
{
	static const enum ib_wr_opcode ops[] = {
		IB_WR_RDMA_WRITE, IB_WR_RDMA_READ, IB_WR_SEND,
	};
	static const u32 delays_us[] = { 5, 20, 100, 500, 2000, 10000 };
	const u32 len = SZ_1M;
	struct kv_env *v = t->priv;
	struct scatterlist sg;
	struct ib_mr *mr;
	int i, try;
	u8 *buf;

	/* a large kmalloc comes whole from the page allocator: page aligned */
	buf = kunit_kzalloc(t, len, GFP_KERNEL);
	if (!buf || !kv_big_bufs(v, len))
		kunit_skip(t, "no memory for three %u-byte buffers", len);
	mr = kv_fr_mr(v, buf, len, len / PAGE_SIZE, &sg);
	KUNIT_ASSERT_FALSE(t, IS_ERR(mr));
	KUNIT_ASSERT_EQ(t, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE), 1);
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		bool seen = false;

		for (try = 0; try < ARRAY_SIZE(delays_us) && !seen; try++)
			seen = kv_revoke_try(t, v, mr, buf, len, ops[i],
					     delays_us[try]);
		KUNIT_EXPECT_TRUE_MSG(t, seen, "opcode %d: the timer never fired mid-copy",
				      ops[i]);
	}
	kv_fr_free(v, mr, &sg);
}

struct kv_big_send {
	struct kv_env *v;
	struct ib_qp *from;	/* NULL: v->a, to v->b */
	struct ib_srq *srq;	/* the receive goes here, if set */
	const u8 *src;
	u32 len;
	int ret;
	struct completion done;
};

static int kv_big_send_fn(void *arg)
{
	struct kv_big_send *b = arg;

	b->ret = kv_send(b->v, b->from ? b->from : b->v->a, 7, (u8 *)b->src,
			 b->len);
	/* gone from this module's text once the waiter wakes */
	kthread_complete_and_exit(&b->done, 0);
}

/*
 * Posts a receive of b->len bytes on b and starts a kthread sending that
 * many from a; returns the receive buffer once the copy into it has begun
 * (or skips the case when there is no memory for the buffers).
 */
static u8 *kv_big_send_begun(struct kunit *t, struct kv_big_send *b)
{
	struct kv_env *v = b->v;
	struct task_struct *task;
	unsigned long end;
	bool begun = false;
	u8 *dst;

	if (!kv_big_bufs(v, b->len))
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
		KUNIT_ASSERT_EQ(t, kv_post_recv(v, v->b, 1, dst, b->len), 0);
	}
	task = kthread_run(kv_big_send_fn, b, "kv_big_send");
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
 * (kv_big_send_begun()) into the SRQ's WQE 1.
 */
static u8 *kv_srq_send_begun(struct kunit *t, struct kv_big_send *b,
			     struct ib_qp **s, struct ib_qp **r)
{
	struct kv_env *v = b->v;

	*s = kv_new_qp(v, IB_QPT_RC, false);
	*r = kv_new_qp(v, IB_QPT_RC, true);
	KUNIT_ASSERT_FALSE(t, IS_ERR(*s) || IS_ERR(*r));
	KUNIT_ASSERT_EQ(t, kv_connect(*s, (*r)->qp_num, 7), 0);
	KUNIT_ASSERT_EQ(t, kv_connect(*r, (*s)->qp_num, 7), 0);
	b->from = *s;
	return kv_big_send_begun(t, b);
}

/**
 * kv_drain_waits_for_long_copy() - a move to ERR during a long receive
 * flushes after it.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * A move to ERR that arrives while a long receive is being copied (the
 * sender letting interrupts in between pieces) leaves the receive flush
 * to the end of that copy: the receive completes first, whole, and a
 * drain's marker WR after it.  Flushing at once would complete the marker
 * while data was still landing.
 */
void kv_drain_waits_for_long_copy(struct kunit *t)
{
	const u32 len = KRWQ_MAX_MSG_SIZE;
	struct kv_env *v = t->priv;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct kv_big_send b = { .v = v, .len = len };
	struct ib_wc wc[2];
	bool ended;
	u8 *dst;

	/* into ERR once the copy has begun, while it still runs */
	dst = kv_big_send_begun(t, &b);
	KUNIT_EXPECT_EQ(t, ib_modify_qp(v->b, &attr, IB_QP_STATE), 0);
	ended = READ_ONCE(dst[len - 1]) != 0;
	KUNIT_EXPECT_EQ(t, kv_post_recv(v, v->b, 2, v->bbuf, 64), 0);
	wait_for_completion(&b.done);
	KUNIT_EXPECT_EQ(t, b.ret, 0);
	if (ended)
		kunit_skip(t, "the copy ended before the move to ERR");
	KUNIT_ASSERT_EQ(t, kv_poll(v->rcq, wc, 2), 2);
	KUNIT_EXPECT_EQ(t, wc[0].wr_id, 1ull);
	KUNIT_EXPECT_EQ(t, wc[0].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc[0].byte_len, len);
	KUNIT_EXPECT_EQ(t, dst[len - 1], 0x5a);
	KUNIT_EXPECT_EQ(t, wc[1].wr_id, 2ull);
	KUNIT_EXPECT_EQ(t, wc[1].status, IB_WC_WR_FLUSH_ERR);
}

/**
 * kv_drain_srq_waits_for_long_copy() - a drain's marker on a QP of an SRQ
 * completes after the long receive under way.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * The same on a QP of an SRQ, whose receives a move to ERR does not flush:
 * a drain then waits only for a marker WR on the send queue (ib_drain_qp()
 * on Linux 6.1), and that marker must complete after the receive under
 * way, never while data is still landing.
 */
void kv_drain_srq_waits_for_long_copy(struct kunit *t)
{
	const u32 len = KRWQ_MAX_MSG_SIZE;
	struct kv_env *v = t->priv;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct kv_big_send b = { .v = v, .len = len, .srq = v->srq };
	struct ib_qp *s, *r;
	bool ended, marker = false;
	unsigned long end;
	struct ib_wc wc;
	int got;
	u8 *dst;

	dst = kv_srq_send_begun(t, &b, &s, &r);
	KUNIT_EXPECT_EQ(t, ib_modify_qp(r, &attr, IB_QP_STATE), 0);
	ended = READ_ONCE(dst[len - 1]) != 0;
	/* the drain's marker, posted in ERR as ib_drain_sq() posts it */
	KUNIT_EXPECT_EQ(t, kv_send(v, r, 99, v->abuf, 0), 0);
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
	kv_free_qp(v, s);
	kv_free_qp(v, r);
}

/**
 * kv_reset_during_long_copy() - a RESET during a long receive abandons it;
 * the sender's retry delivers it.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * A RESET of the destination while a long receive is being copied
 * abandons that delivery: the WQE goes with the others RESET discards,
 * nothing completes for it, and the RC sender, never answered, sends the
 * message again once the destination is connected and has a receive.
 */
void kv_reset_during_long_copy(struct kunit *t)
{
	const u32 len = KRWQ_MAX_MSG_SIZE;
	struct kv_env *v = t->priv;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };
	struct kv_big_send b = { .v = v, .len = len };
	struct ib_wc wc;
	u8 *dst;

	dst = kv_big_send_begun(t, &b);
	KUNIT_EXPECT_EQ(t, ib_modify_qp(v->b, &attr, IB_QP_STATE), 0);
	wait_for_completion(&b.done);
	KUNIT_EXPECT_EQ(t, b.ret, 0);
	if (READ_ONCE(dst[len - 1]))
		kunit_skip(t, "the copy ended before the RESET");
	/* connected again, with a new receive: the retry delivers it all */
	memset(dst, 0, len);
	KUNIT_ASSERT_EQ(t, kv_connect(v->b, v->a->qp_num, 7), 0);
	KUNIT_ASSERT_EQ(t, kv_post_recv(v, v->b, 3, dst, len), 0);
	KUNIT_ASSERT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 3ull);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, wc.byte_len, len);
	KUNIT_EXPECT_EQ(t, dst[0], 0x5a);
	KUNIT_EXPECT_EQ(t, dst[len - 1], 0x5a);
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 7ull);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(t, ib_poll_cq(v->rcq, 1, &wc), 0);
}

/* Round @round of kv_reset_srq_during_long_copy(), on new QPs. */
static noinline void kv_reset_srq_once(struct kunit *t, int round)
{
	const u32 len = KRWQ_MAX_MSG_SIZE;
	struct kv_env *v = t->priv;
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };
	struct kv_big_send b = { .v = v, .len = len, .srq = v->srq };
	struct ib_sge sge = { .length = len, .lkey = v->pd->local_dma_lkey };
	struct ib_recv_wr rwr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 };
	const struct ib_recv_wr *bad;
	struct ib_qp *s, *r;
	struct ib_wc wc;
	int got;
	u8 *dst;

	dst = kv_srq_send_begun(t, &b, &s, &r);
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
			KUNIT_ASSERT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
		KUNIT_EXPECT_EQ(t, wc.wr_id, 1ull);
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_WR_FLUSH_ERR);
		KUNIT_EXPECT_PTR_EQ(t, wc.qp, r);
		KUNIT_EXPECT_EQ(t, ib_poll_cq(v->rcq, 1, &wc), 0);
		/* connected again, with the SRQ's next WQE: the retry takes it */
		memset(dst, 0, len);
		sge.addr = (uintptr_t)dst;
		KUNIT_ASSERT_EQ(t, kv_connect(r, s->qp_num, 7), 0);
		KUNIT_ASSERT_EQ(t, ib_post_srq_recv(v->srq, &rwr, &bad), 0);
		KUNIT_ASSERT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
		KUNIT_EXPECT_EQ(t, wc.wr_id, 2ull);
		KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
		KUNIT_EXPECT_EQ(t, wc.byte_len, len);
		KUNIT_EXPECT_EQ(t, dst[len - 1], 0x5a);
	}
	KUNIT_ASSERT_EQ(t, kv_poll(v->scq, &wc, 1), 1);
	KUNIT_EXPECT_EQ(t, wc.wr_id, 7ull);
	KUNIT_EXPECT_EQ(t, wc.status, IB_WC_SUCCESS);
	kv_free_qp(v, s);
	kv_free_qp(v, r);
}

/**
 * kv_reset_srq_during_long_copy() - a RESET during a long receive into an
 * SRQ's WQE completes that WQE flushed before it returns.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
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
void kv_reset_srq_during_long_copy(struct kunit *t)
{
	int round;

	for (round = 1; round <= 3; round++)
		kv_reset_srq_once(t, round);
}

/* Posters of 64 KiB RDMA WRITEs that keep a QP's send queue running. */
#define KV_POSTERS	4
#define KV_POSTS_MAX	500	/* each; the send CQ holds all of them */
#define KV_POST_LEN	SZ_64K

struct kv_busy {
	struct kv_env *v;
	struct ib_qp *qp;
	u64 remote;
	bool resetting, stop;
	atomic_t posted, during;	/* accepted; of those, while resetting */
	struct completion done[KV_POSTERS];
};

struct kv_busy_poster {
	struct kv_busy *b;
	int i;
};

static int kv_busy_poster_fn(void *arg)
{
	struct kv_busy_poster *p = arg;
	struct kv_busy *b = p->b;
	int n = 0, ret;

	while (n < KV_POSTS_MAX && !READ_ONCE(b->stop)) {
		ret = kv_write(b->v, b->qp, b->v->big_src, KV_POST_LEN,
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
		    atomic_inc_return(&b->during) > 10 * KV_DEPTH)
			break;
	}
	kthread_complete_and_exit(&b->done[p->i], 0);
}

/**
 * kv_reset_with_busy_posters() - a RESET of a QP that four threads keep
 * posting to returns.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * A RESET of a QP that four threads keep posting to returns once the run
 * under way has finished its WQE: meanwhile no new run starts, so the
 * posts it accepts are at most what the send queue holds (issue 27 item
 * 7).  Before, each run's end let the next poster start another, and the
 * RESET waited in D state for as long as they kept posting: it accepted
 * posts without bound (here the posters give up after ten queues' worth).
 */
void kv_reset_with_busy_posters(struct kunit *t)
{
	struct kv_env *v = t->priv;
	struct ib_cq_init_attr cq_attr = {
		.cqe = KV_POSTERS * KV_POSTS_MAX + KV_DEPTH,
	};
	struct ib_qp_init_attr init = {
		.recv_cq = v->rcq, .sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = { .max_send_wr = KV_DEPTH, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IB_QPT_RC,
	};
	struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };
	struct kv_busy_poster p[KV_POSTERS];
	struct kv_busy *b;
	struct ib_qp *d;
	int i, started = 0;

	b = kunit_kzalloc(t, sizeof(*b), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(t, b);
	if (!kv_big_bufs(v, KV_POST_LEN))
		kunit_skip(t, "no memory for two %u-byte buffers", KV_POST_LEN);
	init.send_cq = ib_create_cq(v->dev, NULL, NULL, NULL, &cq_attr);
	KUNIT_ASSERT_FALSE(t, IS_ERR(init.send_cq));
	b->qp = ib_create_qp(v->pd, &init);
	d = kv_new_qp(v, IB_QPT_RC, false);
	if (IS_ERR(b->qp) || IS_ERR(d) || kv_connect(b->qp, d->qp_num, 7) ||
	    kv_connect(d, b->qp->qp_num, 7)) {
		KUNIT_FAIL(t, "QPs");
		goto out;
	}
	b->v = v;
	b->remote = (uintptr_t)v->big_dst;
	for (i = 0; i < KV_POSTERS; i++) {
		struct task_struct *task;

		p[i] = (struct kv_busy_poster){ .b = b, .i = i };
		init_completion(&b->done[i]);
		task = kthread_run(kv_busy_poster_fn, &p[i], "kv_busy%d", i);
		if (IS_ERR(task))
			break;
		started++;
	}
	KUNIT_EXPECT_EQ(t, started, KV_POSTERS);
	/* well under way, then the RESET */
	for (i = 0; i < 100000 && atomic_read(&b->posted) < 4 * KV_DEPTH; i++)
		usleep_range(100, 200);
	KUNIT_EXPECT_GE(t, atomic_read(&b->posted), 4 * KV_DEPTH);
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
	KUNIT_EXPECT_LE(t, atomic_read(&b->during), 3 * KV_DEPTH);
out:
	if (!IS_ERR(b->qp))
		ib_destroy_qp(b->qp);
	if (!IS_ERR(d))
		kv_free_qp(v, d);
	ib_destroy_cq(init.send_cq);
}
