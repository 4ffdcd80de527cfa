// SPDX-License-Identifier: GPL-2.0
/*
 * rq_suite.c - the KUnit suite "krwq_rq": the shared receive-queue cases
 * (rq_cases.c) run inside the kernel against krwq.ko's core, with rings
 * allocated by the module's own krwq_rq_alloc() and kthreads for the
 * concurrent cases.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "../module/rq.h"
#include "../module/rq_alloc.h"
#include "rq_env.h"

struct krwq_rq *rq_env_new(struct kunit *t, u32 max_wr, u32 max_sge,
			   unsigned int flags)
{
	struct krwq_rq *rq;
	int ret;

	rq = kzalloc(sizeof(*rq), GFP_KERNEL);
	KUNIT_EXPECT_NOT_ERR_OR_NULL(t, rq);
	if (!rq)
		return NULL;
	if (flags & RQ_ENV_USER)
		ret = krwq_rq_alloc_user(rq, max_wr, max_sge, NUMA_NO_NODE);
	else
		ret = krwq_rq_alloc(rq, max_wr, max_sge,
				    flags & RQ_ENV_RESIZABLE ?
				    KRWQ_ALLOC_RESIZABLE : 0, NUMA_NO_NODE);
	KUNIT_EXPECT_EQ(t, ret, 0);
	if (ret) {
		kfree(rq);
		return NULL;
	}
	return rq;
}

int rq_env_resize(struct krwq_rq *rq, u32 max_wr, const u32 *limit)
{
	return krwq_rq_resize_alloc(rq, max_wr, limit);
}

void rq_env_free(struct krwq_rq *rq)
{
	krwq_rq_free(rq);
	kfree(rq);
}

void *rq_env_zalloc(size_t bytes)
{
	return kzalloc(bytes, GFP_KERNEL);
}

void rq_env_kfree(void *p)
{
	kfree(p);
}

void rq_env_relax(void)
{
	cond_resched();
}

struct rq_env_thread {
	void (*fn)(void *arg);
	void *arg;
	struct completion done;
};

static int rq_env_thread_fn(void *data)
{
	struct rq_env_thread *th = data;

	th->fn(th->arg);
	complete(&th->done);
	return 0;
}

void rq_env_run(struct kunit *t, int n, void (*fn)(void *arg), void **args)
{
	struct rq_env_thread *th;
	struct task_struct *task;
	int i, cpu = cpumask_first(cpu_online_mask);

	th = kcalloc(n, sizeof(*th), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(t, th);
	for (i = 0; i < n; i++) {
		th[i].fn = fn;
		th[i].arg = args[i];
		init_completion(&th[i].done);
		task = kthread_create(rq_env_thread_fn, &th[i], "krwq_kunit/%d", i);
		if (IS_ERR(task)) {
			KUNIT_FAIL(t, "kthread_create: %ld", PTR_ERR(task));
			th[i].fn(th[i].arg);	/* run it here rather than lose it */
			complete(&th[i].done);
			continue;
		}
		/* spread the threads over the CPUs, round robin */
		kthread_bind(task, cpu);
		cpu = cpumask_next(cpu, cpu_online_mask);
		if (cpu >= nr_cpu_ids)
			cpu = cpumask_first(cpu_online_mask);
		wake_up_process(task);
	}
	for (i = 0; i < n; i++)
		wait_for_completion(&th[i].done);
	kfree(th);
}

static struct kunit_suite krwq_rq_suite = {
	.name = "krwq_rq",
	.test_cases = krwq_rq_cases,
};

kunit_test_suite(krwq_rq_suite);

MODULE_DESCRIPTION("KUnit: krwq's receive-queue core");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
