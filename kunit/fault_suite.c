// SPDX-License-Identifier: GPL-2.0
/*
 * fault_suite.c - the KUnit suite "krwq_faults" (module krwq_kunit_faults):
 * krwq0's creating kernel verbs run again and again with their Nth
 * allocation failing, N = 1, 2, ... until the verb no longer reaches an
 * Nth allocation and succeeds.
 *
 * The fault comes from the kernel's fault injection exactly as
 * /proc/<pid>/fail-nth arms it: that file only sets the task's fail_nth,
 * which every failslab and fail_page_alloc check counts down; this suite
 * sets current->fail_nth itself around one verb.  Sleeping allocations
 * fail only if debugfs allows it (failslab and fail_page_alloc
 * ignore-gfp-wait = N, fail_page_alloc ignore-gfp-highmem = N and
 * min-order = 0): scripts/guest/hostile.sh sets that before loading the
 * module; without it no fault is injected and every case is skipped.
 *
 * After each injected fault the verb must have failed with -ENOMEM (or,
 * where the failed allocation had a fallback, succeeded) and the
 * driver's object counts must be back where they were; a CQ or SRQ
 * that failed to resize keeps its size.  kmemleak, at the end of the VM
 * run, finds what the counts cannot see.
 */
#include <kunit/test.h>
#include <linux/fault-inject.h>
#include <linux/sched.h>
#include <rdma/ib_verbs.h>

#include "../module/krwq.h"

#define FW_MAX_N	4000

struct fw {
	struct ib_device *dev;
	struct krwq_dev *kdev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_srq *srq;
	/* what the op under test made, for its undo */
	struct ib_pd *npd;
	struct ib_cq *ncq;
	struct ib_srq *nsrq;
	struct ib_qp *nqp;
	struct ib_ah *nah;
};

struct fw_counts {
	int qp, cq, srq, mr, pd, ah;
};

static void fw_counts(struct fw *f, struct fw_counts *c)
{
	c->qp = atomic_read(&f->kdev->n_qp);
	c->cq = atomic_read(&f->kdev->n_cq);
	c->srq = atomic_read(&f->kdev->n_srq);
	c->mr = atomic_read(&f->kdev->n_mr);
	c->pd = atomic_read(&f->kdev->n_pd);
	c->ah = atomic_read(&f->kdev->n_ah);
}

struct fw_op {
	int (*run)(struct fw *f);
	void (*undo)(struct fw *f);
	bool (*intact)(struct fw *f);	/* after a failure: target unchanged */
};

/*
 * Walks N = 1, 2, ... over @op and returns how many faults were injected;
 * *@absorbed counts those the verb survived (a fallback allocation).
 */
static unsigned int fw_walk(struct kunit *t, struct fw *f,
			    const struct fw_op *op, unsigned int *absorbed)
{
	struct fw_counts base, now;
	unsigned int n, left, injected = 0;
	int ret;

	*absorbed = 0;
	fw_counts(f, &base);
	for (n = 1; n <= FW_MAX_N; n++) {
		WRITE_ONCE(current->fail_nth, n);
		ret = op->run(f);
		left = READ_ONCE(current->fail_nth);
		WRITE_ONCE(current->fail_nth, 0);
		if (left) {
			/* no Nth allocation: the verb ran its course */
			KUNIT_EXPECT_EQ_MSG(t, ret, 0, "without a fault (N = %u)", n);
			if (!ret)
				op->undo(f);
			return injected;
		}
		injected++;
		if (!ret) {
			(*absorbed)++;
			op->undo(f);
		} else {
			KUNIT_EXPECT_EQ_MSG(t, ret, -ENOMEM, "fault %u", n);
		}
		fw_counts(f, &now);
		KUNIT_EXPECT_TRUE_MSG(t, !memcmp(&base, &now, sizeof(base)),
				      "fault %u: objects qp/cq/srq/mr/pd/ah %d/%d/%d/%d/%d/%d -> %d/%d/%d/%d/%d/%d",
				      n, base.qp, base.cq, base.srq, base.mr,
				      base.pd, base.ah, now.qp, now.cq, now.srq,
				      now.mr, now.pd, now.ah);
		if (ret && op->intact)
			KUNIT_EXPECT_TRUE_MSG(t, op->intact(f),
					      "fault %u: the target changed", n);
	}
	KUNIT_FAIL(t, "still failing after %u faults", FW_MAX_N);
	return injected;
}

static void fw_case(struct kunit *t, const struct fw_op *op)
{
	unsigned int injected, absorbed;

	injected = fw_walk(t, t->priv, op, &absorbed);
	if (!injected)
		kunit_skip(t, "no fault injected: set ignore-gfp-wait=N for %s",
			   "failslab and fail_page_alloc");
	kunit_info(t, "faults injected: %u (%u failed with -ENOMEM, %u had a fallback)\n",
		   injected, injected - absorbed, absorbed);
}

static int fw_err(const void *p)
{
	return IS_ERR(p) ? PTR_ERR(p) : 0;
}

/* --- the verbs ------------------------------------------------------------ */

static int fw_pd(struct fw *f)
{
	f->npd = ib_alloc_pd(f->dev, 0);
	return fw_err(f->npd);
}

static int fw_pd_rkey(struct fw *f)
{
	/* with the unsafe global rkey the core also makes a DMA MR */
	f->npd = ib_alloc_pd(f->dev, IB_PD_UNSAFE_GLOBAL_RKEY);
	return fw_err(f->npd);
}

static void fw_pd_undo(struct fw *f)
{
	ib_dealloc_pd(f->npd);
}

static int fw_cq(struct fw *f, int cqe)
{
	struct ib_cq_init_attr a = { .cqe = cqe };

	f->ncq = ib_create_cq(f->dev, NULL, NULL, NULL, &a);
	return fw_err(f->ncq);
}

static int fw_cq_small(struct fw *f) { return fw_cq(f, 16); }
static int fw_cq_big(struct fw *f) { return fw_cq(f, 8192); }

static void fw_cq_undo(struct fw *f)
{
	ib_destroy_cq(f->ncq);
}

static int fw_srq(struct fw *f, u32 wr, u32 sge)
{
	struct ib_srq_init_attr a = { .attr = { .max_wr = wr, .max_sge = sge } };

	f->nsrq = ib_create_srq(f->pd, &a);
	return fw_err(f->nsrq);
}

static int fw_srq_small(struct fw *f) { return fw_srq(f, 64, 2); }
static int fw_srq_big(struct fw *f) { return fw_srq(f, 4096, 8); }

static void fw_srq_undo(struct fw *f)
{
	ib_destroy_srq(f->nsrq);
}

static int fw_qp(struct fw *f, enum ib_qp_type type, u32 wr, u32 sge,
		 bool srq)
{
	struct ib_qp_init_attr a = {
		.send_cq = f->cq, .recv_cq = f->cq,
		.srq = srq ? f->srq : NULL,
		.cap = { .max_send_wr = wr, .max_recv_wr = srq ? 0 : wr,
			 .max_send_sge = sge, .max_recv_sge = srq ? 0 : sge },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = type,
	};

	f->nqp = ib_create_qp(f->pd, &a);
	return fw_err(f->nqp);
}

static int fw_qp_rc(struct fw *f) { return fw_qp(f, IB_QPT_RC, 64, 2, false); }
static int fw_qp_ud(struct fw *f) { return fw_qp(f, IB_QPT_UD, 2048, 8, false); }
static int fw_qp_srq(struct fw *f) { return fw_qp(f, IB_QPT_UC, 64, 1, true); }

static void fw_qp_undo(struct fw *f)
{
	ib_destroy_qp(f->nqp);
}

static int fw_ah(struct fw *f)
{
	struct rdma_ah_attr a = { .type = RDMA_AH_ATTR_TYPE_IB };

	rdma_ah_set_dlid(&a, 1);
	rdma_ah_set_port_num(&a, 1);
	f->nah = rdma_create_ah(f->pd, &a, RDMA_CREATE_AH_SLEEPABLE);
	return fw_err(f->nah);
}

static void fw_ah_undo(struct fw *f)
{
	rdma_destroy_ah(f->nah, RDMA_DESTROY_AH_SLEEPABLE);
}

static int fw_cq_resize(struct fw *f)
{
	return ib_resize_cq(f->cq, 4096);
}

/* a ring under a page: kmalloc only, no vmalloc fallback */
static int fw_cq_shrink(struct fw *f)
{
	return ib_resize_cq(f->cq, 40);
}

static void fw_cq_resize_undo(struct fw *f)
{
	ib_resize_cq(f->cq, 64);
}

static bool fw_cq_intact(struct fw *f)
{
	return f->cq->cqe == 64;
}

static int fw_srq_resize(struct fw *f)
{
	struct ib_srq_attr a = { .max_wr = 8192 };

	return ib_modify_srq(f->srq, &a, IB_SRQ_MAX_WR);
}

static int fw_srq_grow_small(struct fw *f)
{
	struct ib_srq_attr a = { .max_wr = 100 };

	return ib_modify_srq(f->srq, &a, IB_SRQ_MAX_WR);
}

static void fw_srq_resize_undo(struct fw *f)
{
	struct ib_srq_attr a = { .max_wr = 64 };

	ib_modify_srq(f->srq, &a, IB_SRQ_MAX_WR);
}

static bool fw_srq_intact(struct fw *f)
{
	struct ib_srq_attr a;

	return !ib_query_srq(f->srq, &a) && a.max_wr == 64;
}

#define FW_CASE(name, run_fn, undo_fn, intact_fn)			\
	static void name(struct kunit *t)				\
	{								\
		static const struct fw_op op = {			\
			.run = run_fn, .undo = undo_fn,			\
			.intact = intact_fn,				\
		};							\
		fw_case(t, &op);					\
	}

FW_CASE(fault_alloc_pd, fw_pd, fw_pd_undo, NULL)
FW_CASE(fault_alloc_pd_global_rkey, fw_pd_rkey, fw_pd_undo, NULL)
FW_CASE(fault_create_cq_16, fw_cq_small, fw_cq_undo, NULL)
FW_CASE(fault_create_cq_8192, fw_cq_big, fw_cq_undo, NULL)
FW_CASE(fault_create_srq_64, fw_srq_small, fw_srq_undo, NULL)
FW_CASE(fault_create_srq_4096, fw_srq_big, fw_srq_undo, NULL)
FW_CASE(fault_create_qp_rc, fw_qp_rc, fw_qp_undo, NULL)
FW_CASE(fault_create_qp_ud_2048, fw_qp_ud, fw_qp_undo, NULL)
FW_CASE(fault_create_qp_on_srq, fw_qp_srq, fw_qp_undo, NULL)
FW_CASE(fault_create_ah, fw_ah, fw_ah_undo, NULL)
FW_CASE(fault_resize_cq, fw_cq_resize, fw_cq_resize_undo, fw_cq_intact)
FW_CASE(fault_resize_srq, fw_srq_resize, fw_srq_resize_undo, fw_srq_intact)
FW_CASE(fault_shrink_cq, fw_cq_shrink, fw_cq_resize_undo, fw_cq_intact)
FW_CASE(fault_grow_srq_small, fw_srq_grow_small, fw_srq_resize_undo,
	fw_srq_intact)

static int fw_init(struct kunit *t)
{
	struct ib_cq_init_attr ca = { .cqe = 64 };
	struct ib_srq_init_attr sa = { .attr = { .max_wr = 64, .max_sge = 1 } };
	struct fw *f;

	f = kunit_kzalloc(t, sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	t->priv = f;
	f->dev = ib_device_get_by_name("krwq0", RDMA_DRIVER_QIB);
	if (!f->dev)
		return -ENODEV;
	f->kdev = container_of(f->dev, struct krwq_dev, ibdev);
	f->pd = ib_alloc_pd(f->dev, 0);
	if (IS_ERR(f->pd))
		return PTR_ERR(f->pd);
	f->cq = ib_create_cq(f->dev, NULL, NULL, NULL, &ca);
	if (IS_ERR(f->cq))
		return PTR_ERR(f->cq);
	f->srq = ib_create_srq(f->pd, &sa);
	return PTR_ERR_OR_ZERO(f->srq);
}

static void fw_exit(struct kunit *t)
{
	struct fw *f = t->priv;

	if (!f || !f->dev)
		return;
	if (!IS_ERR_OR_NULL(f->srq))
		ib_destroy_srq(f->srq);
	if (!IS_ERR_OR_NULL(f->cq))
		ib_destroy_cq(f->cq);
	if (!IS_ERR_OR_NULL(f->pd))
		ib_dealloc_pd(f->pd);
	ib_device_put(f->dev);
}

static struct kunit_case krwq_fault_cases[] = {
	KUNIT_CASE(fault_alloc_pd),
	KUNIT_CASE(fault_alloc_pd_global_rkey),
	KUNIT_CASE(fault_create_cq_16),
	KUNIT_CASE(fault_create_cq_8192),
	KUNIT_CASE(fault_create_srq_64),
	KUNIT_CASE(fault_create_srq_4096),
	KUNIT_CASE(fault_create_qp_rc),
	KUNIT_CASE(fault_create_qp_ud_2048),
	KUNIT_CASE(fault_create_qp_on_srq),
	KUNIT_CASE(fault_create_ah),
	KUNIT_CASE(fault_resize_cq),
	KUNIT_CASE(fault_resize_srq),
	KUNIT_CASE(fault_shrink_cq),
	KUNIT_CASE(fault_grow_srq_small),
	{}
};

static struct kunit_suite krwq_fault_suite = {
	.name = "krwq_faults",
	.init = fw_init,
	.exit = fw_exit,
	.test_cases = krwq_fault_cases,
};

kunit_test_suite(krwq_fault_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("krwq: allocation faults in the creating kernel verbs (KUnit)");
