// SPDX-License-Identifier: GPL-2.0
/*
 * limits.c - krwq_verbs cases: the device's limits on its objects (sizes
 * beyond them refused, each kind filled to its limit) and on a CQ (its
 * overflow), and a CQ's completion events.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <rdma/ib_verbs.h>

#include "../../module/krwq.h"
#include "env.h"

/**
 * kv_cq_notify() - a requested completion event comes once.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * Completions missed while no event was requested are reported when
 * asked for (IB_CQ_REPORT_MISSED_EVENTS).
 */
void kv_cq_notify(struct kunit *t)
{
	struct kv_env *v = t->priv;
	struct ib_wc wc;
	int i;

	KUNIT_ASSERT_EQ(t, ib_req_notify_cq(v->rcq, IB_CQ_NEXT_COMP), 0);
	KUNIT_ASSERT_EQ(t, kv_post_recv(v, v->b, 1, v->bbuf, 64), 0);
	KUNIT_ASSERT_EQ(t, kv_send(v, v->a, 2, v->abuf, 64), 0);
	for (i = 0; i < 200 && !atomic_read(&v->comp_calls); i++)
		usleep_range(1000, 2000);
	KUNIT_EXPECT_EQ(t, atomic_read(&v->comp_calls), 1);
	KUNIT_EXPECT_EQ(t, kv_poll(v->rcq, &wc, 1), 1);
	/* missed events are reported when asked for */
	KUNIT_ASSERT_EQ(t, kv_post_recv(v, v->b, 3, v->bbuf, 64), 0);
	KUNIT_ASSERT_EQ(t, kv_send(v, v->a, 4, v->abuf, 64), 0);
	KUNIT_EXPECT_EQ(t, ib_req_notify_cq(v->rcq, IB_CQ_NEXT_COMP |
					    IB_CQ_REPORT_MISSED_EVENTS), 1);
}

/**
 * kv_cq_moderation() - with moderation an armed CQ's event waits for its
 * count of completions, or for its time after the first; the completions
 * before it are counted as held.
 * @t: the running case; its priv is the fixture (struct kv_env).
 */
void kv_cq_moderation(struct kunit *t)
{
	struct kv_env *v = t->priv;
	u64 held0 = kv_counter(v, "cq_events_held");
	struct ib_wc wc[3];
	int i;

	/* a count of 3, and a time (65 ms) that does not end this wait */
	KUNIT_ASSERT_EQ(t, rdma_set_cq_moderation(v->rcq, 3, U16_MAX), 0);
	KUNIT_ASSERT_EQ(t, ib_req_notify_cq(v->rcq, IB_CQ_NEXT_COMP), 0);
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(t, kv_post_recv(v, v->b, 10 + i, v->bbuf, 64), 0);
	/* the sends complete in the post: two held at once */
	KUNIT_ASSERT_EQ(t, kv_send(v, v->a, 20, v->abuf, 64), 0);
	KUNIT_ASSERT_EQ(t, kv_send(v, v->a, 21, v->abuf, 64), 0);
	KUNIT_EXPECT_EQ(t, kv_counter(v, "cq_events_held") - held0, 2);
	/* the third raises the event, once */
	KUNIT_ASSERT_EQ(t, kv_send(v, v->a, 22, v->abuf, 64), 0);
	for (i = 0; i < 200 && !atomic_read(&v->comp_calls); i++)
		usleep_range(1000, 2000);
	KUNIT_EXPECT_EQ(t, atomic_read(&v->comp_calls), 1);
	KUNIT_EXPECT_EQ(t, kv_counter(v, "cq_events_held") - held0, 2);
	KUNIT_EXPECT_EQ(t, kv_poll(v->rcq, wc, 3), 3);

	/* a count not reached: the time (1 ms) raises it */
	KUNIT_ASSERT_EQ(t, rdma_set_cq_moderation(v->rcq, 8, 1000), 0);
	KUNIT_ASSERT_EQ(t, ib_req_notify_cq(v->rcq, IB_CQ_NEXT_COMP), 0);
	KUNIT_ASSERT_EQ(t, kv_send(v, v->a, 23, v->abuf, 64), 0);
	KUNIT_EXPECT_EQ(t, kv_counter(v, "cq_events_held") - held0, 3);
	for (i = 0; i < 1000 && atomic_read(&v->comp_calls) < 2; i++)
		usleep_range(1000, 2000);
	KUNIT_EXPECT_EQ(t, atomic_read(&v->comp_calls), 2);
	KUNIT_EXPECT_EQ(t, kv_poll(v->rcq, wc, 1), 1);
	KUNIT_EXPECT_EQ(t, rdma_set_cq_moderation(v->rcq, 0, 0), 0);
}

/* What kv_note_handler() saw: where it ran, and how often. */
static struct task_struct *kv_handler_task;
static int kv_handler_cpu;
static bool kv_handler_hardirq;
static atomic_t kv_handler_calls;

static void kv_note_handler(struct ib_cq *cq, void *ctx)
{
	WRITE_ONCE(kv_handler_task, current);
	WRITE_ONCE(kv_handler_cpu, raw_smp_processor_id());
	WRITE_ONCE(kv_handler_hardirq, in_hardirq());
	/* the notes before the count, which the case reads first */
	smp_mb__before_atomic();
	atomic_inc(&kv_handler_calls);
}

/*
 * An RC QP *@c receiving on @cq and sending on the fixture's scq,
 * connected to a new fixture QP *@d (kv_new_qp(); kv_exit() frees it if
 * the case does not).  Returns 0, or a negative errno with *@c NULL.
 */
static int kv_pair_on(struct kv_env *v, struct ib_cq *cq, struct ib_qp **c,
		      struct ib_qp **d)
{
	struct ib_qp_init_attr init = {
		.send_cq = v->scq,
		.recv_cq = cq,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
		.cap = {
			.max_send_wr = KV_DEPTH, .max_recv_wr = KV_DEPTH,
			.max_send_sge = 1, .max_recv_sge = 1,
		},
	};
	int ret;

	*c = ib_create_qp(v->pd, &init);
	if (IS_ERR(*c)) {
		ret = PTR_ERR(*c);
		*c = NULL;
		return ret;
	}
	*d = kv_new_qp(v, IB_QPT_RC, false);
	ret = IS_ERR(*d) ? PTR_ERR(*d) : kv_connect(*c, (*d)->qp_num, 7);
	if (!ret)
		ret = kv_connect(*d, (*c)->qp_num, 7);
	if (ret) {
		ib_destroy_qp(*c);
		*c = NULL;
	}
	return ret;
}

/*
 * One SEND to a QP receiving on a CQ from ib_alloc_cq() on completion
 * vector 0, whose handler is replaced by kv_note_handler(), posted from
 * the vector's CPU (@same_cpu) or from another.  The case's task stays
 * bound to the posting CPU for the rest of the case.  Returns the
 * vector's CPU, or -1 after failing the case; *@c is the QP made, or NULL.
 */
static int kv_send_to_vector(struct kunit *t, bool same_cpu, struct ib_cq **cq,
			     struct ib_qp **c)
{
	/* vector 0's CPU: the first online one (docs/device.md) */
	int vcpu = cpumask_first(cpu_online_mask), post_cpu = vcpu;
	struct kv_env *v = t->priv;
	struct ib_qp *d;

	*c = NULL;
	if (!same_cpu) {
		post_cpu = cpumask_any_but(cpu_online_mask, vcpu);
		if (post_cpu >= nr_cpu_ids)
			kunit_skip(t, "no second online CPU");
	}
	*cq = ib_alloc_cq(v->dev, NULL, KV_DEPTH, 0, IB_POLL_WORKQUEUE);
	KUNIT_ASSERT_FALSE(t, IS_ERR(*cq));
	(*cq)->comp_handler = kv_note_handler;	/* the core armed the CQ */
	if (kv_pair_on(v, *cq, c, &d)) {
		KUNIT_FAIL(t, "the QP pair");
		return -1;
	}
	WRITE_ONCE(kv_handler_task, NULL);
	atomic_set(&kv_handler_calls, 0);
	if (set_cpus_allowed_ptr(current, cpumask_of(post_cpu))) {
		KUNIT_FAIL(t, "binding the case to CPU %d", post_cpu);
		return -1;
	}
	KUNIT_EXPECT_EQ(t, raw_smp_processor_id(), post_cpu);
	if (kv_post_recv(v, *c, 1, v->bbuf, 64) || kv_send(v, d, 2, v->abuf, 64)) {
		KUNIT_FAIL(t, "post_recv or post_send");
		return -1;
	}
	return vcpu;
}

/**
 * kv_cq_core_handler_in_place() - the handler of a CQ from ib_alloc_cq()
 * runs in the context that completes, before the post returns, when that
 * runs on the CPU of the CQ's completion vector.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * The RDMA core's handlers for such a CQ only schedule its poller, so
 * krwq calls them in place instead of from a work item of its own.
 */
void kv_cq_core_handler_in_place(struct kunit *t)
{
	struct task_struct *ran_in;
	struct ib_qp *c;
	struct ib_cq *cq;
	struct ib_wc wc;

	if (kv_send_to_vector(t, true, &cq, &c) >= 0) {
		/* no wait: the delivery and its completion happened in the post */
		KUNIT_EXPECT_EQ(t, atomic_read(&kv_handler_calls), 1);
		ran_in = READ_ONCE(kv_handler_task);
		KUNIT_EXPECT_PTR_EQ(t, ran_in, current);
		KUNIT_EXPECT_EQ(t, kv_poll(cq, &wc, 1), 1);
	}
	if (c)
		ib_destroy_qp(c);
	ib_free_cq(cq);
}

/**
 * kv_cq_core_handler_on_vector_cpu() - from another CPU, the handler of a
 * CQ from ib_alloc_cq() is called on its completion vector's CPU, in hard
 * interrupt context, as an HCA's interrupt would call it.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * nvme-rdma and nvmet-rdma spread their queues' CQs over the vectors so
 * that their pollers run on different CPUs; called in place, every step
 * of an I/O would run on the CPU that posted it.  Skipped on one CPU.
 */
void kv_cq_core_handler_on_vector_cpu(struct kunit *t)
{
	struct ib_qp *c;
	struct ib_cq *cq;
	struct ib_wc wc;
	int cpu, ran_on, i;
	bool in_irq;

	cpu = kv_send_to_vector(t, false, &cq, &c);
	if (cpu >= 0) {
		for (i = 0; i < 1000 && !atomic_read(&kv_handler_calls); i++)
			usleep_range(1000, 2000);
		KUNIT_EXPECT_EQ(t, atomic_read(&kv_handler_calls), 1);
		/* pairs with kv_note_handler()'s barrier */
		smp_rmb();
		ran_on = READ_ONCE(kv_handler_cpu);
		in_irq = READ_ONCE(kv_handler_hardirq);
		KUNIT_EXPECT_EQ(t, ran_on, cpu);
		KUNIT_EXPECT_TRUE(t, in_irq);
		KUNIT_EXPECT_EQ(t, kv_poll(cq, &wc, 1), 1);
	}
	if (c)
		ib_destroy_qp(c);
	ib_free_cq(cq);
}

/*
 * kv_hold_cpu()'s state: it began, and it let its CPU go.  Plain atomics:
 * what queues krwq's IPI behind the hold is llist_add()'s fully ordered
 * cmpxchg on the held CPU's queue, not these.
 */
static atomic_t kv_hold_began, kv_hold_ended;

#define KV_HOLD_MS 500
#define KV_HOLD_TRIES 3

/*
 * Holds the CPU it runs on with interrupts off (it runs as a cross-CPU
 * call) for KV_HOLD_MS: an IPI queued to that CPU meanwhile waits for the
 * end.
 */
static void kv_hold_cpu(void *unused)
{
	atomic_set(&kv_hold_began, 1);
	mdelay(KV_HOLD_MS);
	atomic_set(&kv_hold_ended, 1);
}

/*
 * One try of kv_cq_core_freed_with_ipi_queued(): a completion on a new CQ
 * from ib_alloc_cq() on vector 0, whose CPU @vcpu is held, then
 * ib_free_cq().  Returns 1 if the handler's IPI was still queued just
 * before ib_free_cq(), 0 if the hold had ended by then (the host
 * scheduled a vCPU out for longer than the hold), or a negative errno.
 * Returns once the hold has ended.
 */
static int kv_free_behind_hold(struct kunit *t, int vcpu)
{
	struct kv_env *v = t->priv;
	struct ib_wc wc = {
		.status = IB_WC_SUCCESS, .opcode = IB_WC_RECV, .qp = v->b,
	};
	struct ib_cq *cq;
	int held = -EIO;

	cq = ib_alloc_cq(v->dev, NULL, KV_DEPTH, 0, IB_POLL_WORKQUEUE);
	if (IS_ERR(cq))
		return PTR_ERR(cq);
	cq->comp_handler = kv_note_handler;	/* the core armed the CQ */
	atomic_set(&kv_handler_calls, 0);
	atomic_set(&kv_hold_began, 0);
	atomic_set(&kv_hold_ended, 0);
	if (!smp_call_function_single(vcpu, kv_hold_cpu, NULL, false)) {
		while (!atomic_read(&kv_hold_began))
			cpu_relax();
		if (krwq_cq_enter(to_kcq(cq), &wc, false))
			held = atomic_read(&to_kcq(cq)->ipis_queued) == 1 &&
			       !atomic_read(&kv_hold_ended);
	}
	ib_free_cq(cq);
	while (atomic_read(&kv_hold_began) && !atomic_read(&kv_hold_ended))
		msleep(20);
	return held;
}

/**
 * kv_cq_core_freed_with_ipi_queued() - a CQ from ib_alloc_cq() freed while
 * the IPI that calls its handler is still queued: ib_free_cq() waits for
 * the IPI, and the handler is not called.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * The completion vector's CPU is held with interrupts off (kv_hold_cpu())
 * from before the completion, and the IPI is seen still queued just
 * before ib_free_cq(); a try where the hold ended first is made again, up
 * to KV_HOLD_TRIES times.  Were the CQ freed without waiting, the IPI
 * would then read freed memory (a KASAN report) or call the handler of a
 * freed CQ.  The completion is entered directly: destroying a QP waits
 * for every CPU, the held one too.  Skipped on one CPU.
 */
void kv_cq_core_freed_with_ipi_queued(struct kunit *t)
{
	int vcpu = cpumask_first(cpu_online_mask), post_cpu, held = 0, i;

	post_cpu = cpumask_any_but(cpu_online_mask, vcpu);
	if (post_cpu >= nr_cpu_ids)
		kunit_skip(t, "no second online CPU");
	KUNIT_ASSERT_EQ(t, set_cpus_allowed_ptr(current, cpumask_of(post_cpu)), 0);
	for (i = 0; i < KV_HOLD_TRIES && !held; i++)
		held = kv_free_behind_hold(t, vcpu);
	KUNIT_ASSERT_GE_MSG(t, held, 0, "a CQ and a completion entered");
	KUNIT_ASSERT_EQ_MSG(t, held, 1, "the hold ended before ib_free_cq(), %d tries",
			    KV_HOLD_TRIES);
	KUNIT_EXPECT_EQ(t, atomic_read(&kv_handler_calls), 0);
}

/* A receive completion that signals a waiter, as a ULP's wr_cqe does. */
struct kv_signal {
	struct ib_cqe cqe;
	struct completion done;
	enum ib_wc_status status;
	u32 byte_len;
};

static void kv_signal_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kv_signal *s = container_of(wc->wr_cqe, struct kv_signal, cqe);

	s->status = wc->status;
	s->byte_len = wc->byte_len;
	complete(&s->done);
}

/**
 * kv_cq_core_pollers() - the RDMA core's pollers deliver a completion
 * whose handler krwq called in place.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * For each of softirq, bound and unbound work-item polling: a CQ from
 * ib_alloc_cq() left as the core made it, a QP receiving on it, one
 * SEND; the receive's wr_cqe must be called with the SEND's length.
 * The core's handlers thereby run under krwq's locks, where lockdep
 * sees them.
 */
void kv_cq_core_pollers(struct kunit *t)
{
	static const enum ib_poll_context how[] = {
		IB_POLL_SOFTIRQ, IB_POLL_WORKQUEUE, IB_POLL_UNBOUND_WORKQUEUE,
	};
	struct kv_env *v = t->priv;
	struct ib_sge sge = {
		.addr = (uintptr_t)v->bbuf, .length = 64,
		.lkey = v->pd->local_dma_lkey,
	};
	struct kv_signal s = { .cqe.done = kv_signal_done };
	struct ib_recv_wr wr = { .wr_cqe = &s.cqe, .sg_list = &sge, .num_sge = 1 };
	const struct ib_recv_wr *bad;
	struct ib_qp *c, *d;
	struct ib_cq *cq;
	int i, ret;

	for (i = 0; i < ARRAY_SIZE(how); i++) {
		cq = ib_alloc_cq(v->dev, NULL, KV_DEPTH, 0, how[i]);
		KUNIT_ASSERT_FALSE(t, IS_ERR(cq));
		ret = kv_pair_on(v, cq, &c, &d);
		if (ret) {
			ib_free_cq(cq);
			KUNIT_FAIL(t, "poll context %d: the QP pair: %d", how[i], ret);
			return;
		}
		init_completion(&s.done);
		s.status = IB_WC_GENERAL_ERR;
		s.byte_len = 0;
		if (ib_post_recv(c, &wr, &bad) || kv_send(v, d, 2, v->abuf, 48)) {
			KUNIT_FAIL(t, "poll context %d: a post", how[i]);
		} else {
			KUNIT_EXPECT_GT_MSG(t, wait_for_completion_timeout(&s.done, 5 * HZ),
					    0UL, "poll context %d", how[i]);
			KUNIT_EXPECT_EQ(t, s.status, IB_WC_SUCCESS);
			KUNIT_EXPECT_EQ(t, s.byte_len, 48);
		}
		/* the QP first: its flush completes the receive if it is left */
		ib_destroy_qp(c);
		ib_free_cq(cq);
		kv_free_qp(v, d);
	}
}

/**
 * kv_cq_vectors() - a completion vector per possible CPU, as rxe and
 * siw offer: nvme-rdma, for one, makes one I/O queue per vector.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * A CQ on the last vector is made; one past it is refused.
 */
void kv_cq_vectors(struct kunit *t)
{
	struct kv_env *v = t->priv;
	int n = v->dev->num_comp_vectors;
	struct ib_cq *cq;

	KUNIT_EXPECT_EQ(t, n, num_possible_cpus());
	cq = ib_alloc_cq(v->dev, NULL, KV_DEPTH, n - 1, IB_POLL_WORKQUEUE);
	KUNIT_EXPECT_FALSE(t, IS_ERR(cq));
	if (!IS_ERR(cq))
		ib_free_cq(cq);
	cq = ib_alloc_cq(v->dev, NULL, KV_DEPTH, n, IB_POLL_WORKQUEUE);
	KUNIT_EXPECT_PTR_EQ(t, cq, ERR_PTR(-EINVAL));
	if (!IS_ERR(cq))
		ib_free_cq(cq);
}

/**
 * kv_cq_overflow() - a CQ too small for its completions overflows.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * The CQ raises IB_EVENT_CQ_ERR and the QP whose completions it could
 * not take goes to ERR.
 */
void kv_cq_overflow(struct kunit *t)
{
	struct kv_env *v = t->priv;
	struct ib_cq_init_attr cq_attr = { .cqe = 2 };
	struct ib_qp_attr attr;
	struct ib_cq *small;
	int i;

	small = ib_create_cq(v->dev, kv_comp, kv_event, v, &cq_attr);
	KUNIT_ASSERT_FALSE(t, IS_ERR(small));
	/* a's receive CQ is replaced by the small one for this case */
	ib_destroy_qp(v->b);
	{
		struct ib_qp_init_attr qi = {
			.event_handler = kv_event, .qp_context = v,
			.send_cq = v->scq, .recv_cq = small,
			.cap = { .max_send_wr = KV_DEPTH, .max_recv_wr = KV_DEPTH,
				 .max_send_sge = 1, .max_recv_sge = 1 },
			.sq_sig_type = IB_SIGNAL_REQ_WR, .qp_type = IB_QPT_RC,
		};

		v->b = ib_create_qp(v->pd, &qi);
	}
	KUNIT_ASSERT_FALSE(t, IS_ERR(v->b));
	attr.qp_state = IB_QPS_RESET;
	KUNIT_ASSERT_EQ(t, ib_modify_qp(v->a, &attr, IB_QP_STATE), 0);
	KUNIT_ASSERT_EQ(t, kv_connect(v->a, v->b->qp_num, 7), 0);
	KUNIT_ASSERT_EQ(t, kv_connect(v->b, v->a->qp_num, 7), 0);
	for (i = 0; i < 4; i++) {
		KUNIT_ASSERT_EQ(t, kv_post_recv(v, v->b, i, v->bbuf, 64), 0);
		KUNIT_ASSERT_EQ(t, kv_send(v, v->a, i, v->abuf, 8), 0);
	}
	KUNIT_EXPECT_EQ(t, kv_wait_event(v, IB_EVENT_CQ_ERR, 1), 1);
	KUNIT_EXPECT_EQ(t, kv_wait_state(v->b, IB_QPS_ERR), IB_QPS_ERR);
	ib_destroy_qp(v->b);
	v->b = NULL;
	ib_destroy_cq(small);
}

/**
 * kv_limits_enforced() - a CQ, SRQ or QP beyond the device's limits
 * (entries, WRs, SGEs) is refused with -EINVAL.
 * @t: the running case; its priv is the fixture (struct kv_env).
 */
void kv_limits_enforced(struct kunit *t)
{
	struct kv_env *v = t->priv;
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

/* A kind of object with a device limit, for kv_object_limit(). */
struct kv_kind {
	const char *name;
	int max;
	atomic_t *(*count)(struct krwq_dev *kdev);
	void *(*make)(struct kv_env *v);
	void (*drop)(void *obj);
};

static void kv_fill_to_limit(struct kunit *t, const struct kv_kind *k)
{
	struct kv_env *v = t->priv;
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

static atomic_t *kv_n_pd(struct krwq_dev *kdev) { return &kdev->n_pd; }
static atomic_t *kv_n_cq(struct krwq_dev *kdev) { return &kdev->n_cq; }
static atomic_t *kv_n_srq(struct krwq_dev *kdev) { return &kdev->n_srq; }
static atomic_t *kv_n_qp(struct krwq_dev *kdev) { return &kdev->n_qp; }
static atomic_t *kv_n_ah(struct krwq_dev *kdev) { return &kdev->n_ah; }

static void *kv_make_pd(struct kv_env *v)
{
	return ib_alloc_pd(v->dev, 0);
}

static void kv_drop_pd(void *pd)
{
	ib_dealloc_pd(pd);
}

static void *kv_make_cq(struct kv_env *v)
{
	struct ib_cq_init_attr a = { .cqe = 1 };

	return ib_create_cq(v->dev, NULL, NULL, NULL, &a);
}

static void kv_drop_cq(void *cq)
{
	ib_destroy_cq(cq);
}

static void *kv_make_srq(struct kv_env *v)
{
	struct ib_srq_init_attr a = { .attr = { .max_wr = 1, .max_sge = 1 } };

	return ib_create_srq(v->pd, &a);
}

static void kv_drop_srq(void *srq)
{
	ib_destroy_srq(srq);
}

static void *kv_make_qp(struct kv_env *v)
{
	struct ib_qp_init_attr init = {
		.send_cq = v->scq, .recv_cq = v->rcq, .qp_type = IB_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ib_create_qp(v->pd, &init);
}

static void kv_drop_qp(void *qp)
{
	ib_destroy_qp(qp);
}

static void *kv_make_ah(struct kv_env *v)
{
	struct rdma_ah_attr attr = { .type = RDMA_AH_ATTR_TYPE_IB };

	rdma_ah_set_dlid(&attr, KV_LID);
	rdma_ah_set_port_num(&attr, 1);
	return rdma_create_ah(v->pd, &attr, 0);
}

static void kv_drop_ah(void *ah)
{
	rdma_destroy_ah(ah, 0);
}

static const struct kv_kind kv_kinds[] = {
	{ "PD", KRWQ_MAX_PD, kv_n_pd, kv_make_pd, kv_drop_pd },
	{ "CQ", KRWQ_MAX_CQ, kv_n_cq, kv_make_cq, kv_drop_cq },
	{ "SRQ", KRWQ_MAX_SRQ, kv_n_srq, kv_make_srq, kv_drop_srq },
	{ "QP", KRWQ_MAX_QP, kv_n_qp, kv_make_qp, kv_drop_qp },
	{ "AH", KRWQ_MAX_AH, kv_n_ah, kv_make_ah, kv_drop_ah },
};

static void kv_kind_desc(const struct kv_kind *k, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", k->name);
}

KUNIT_ARRAY_PARAM(kv_kind, kv_kinds, kv_kind_desc);

/**
 * kv_kind_params() - the parameters of kv_object_limit(): each kind of
 * object with a device limit, for suite.c's KUNIT_CASE_PARAM().
 * @prev: the kind of the run before, or NULL for the first.
 * @desc: where the kind's name goes, the run's description.
 *
 * Return: the next kind (a struct kv_kind), or NULL after the last.
 */
const void *kv_kind_params(const void *prev, char *desc)
{
	return kv_kind_gen_params(prev, desc);
}

/**
 * kv_object_limit() - the device's limit on one kind of object.
 * @t: the running case; its priv is the fixture (struct kv_env).
 *
 * For the kind in @t's param_value (a struct kv_kind): creating them
 * until one is refused stops at exactly the limit, with -ENOMEM; after
 * one is freed the next fits again.
 */
void kv_object_limit(struct kunit *t)
{
	kv_fill_to_limit(t, t->param_value);
}
