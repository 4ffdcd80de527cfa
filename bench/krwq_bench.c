// SPDX-License-Identifier: GPL-2.0
/*
 * krwq_bench.c - a test-only module that times the receive queue of the
 * kernel's own rdmavt against krwq's, in the same boot, through the same
 * kernel verbs.
 *
 * It registers a minimal rdmavt device ("rvtbench_0") with just the driver
 * callbacks rvt_register_device() insists on, creates two UD QPs on it and
 * two on krwq0 (the second of each only for the two-QP figure), and times:
 *  - ib_post_recv() of one WR, and of a 32-WR list (per call);
 *  - one take: rvt_get_rwqe(qp, true) against krwq_rq_take() (both the
 *    responder's way of consuming a receive WQE; rdmavt's with wr_id_only,
 *    which skips its lkey checks, krwq's copying the scatter list out);
 *  - a post+take pair with 1 and with 4 scatter entries;
 *  - a producer kthread and a consumer kthread bound to different CPUs;
 *  - two QPs, each with a kthread of its own on its own CPU doing
 *    post+take pairs, against the one-QP pair above: what the second CPU
 *    adds.
 * Each figure is the best of many short rounds (and, for reference, their
 * median), rdmavt and krwq alternating within a round: in a VM on a shared
 * host a round is often stretched by the host preempting a vCPU, and the
 * best round is the one that was not.  Results go to the kernel log as
 *   krwq_bench: result METRIC DEVICE BEST_NS_PER_OP median MEDIAN
 * for scripts/bench.  Loading it needs rdmavt and krwq.ko loaded first;
 * it leaves nothing behind but the log and is never part of krwq.ko.
 */
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_vt.h>
#include <rdma/rdmavt_qp.h>

#include "krwq.h"
#include "krwq_core.h"

static unsigned int rounds = 31;
module_param(rounds, uint, 0444);
MODULE_PARM_DESC(rounds, "rounds per figure (default 31, at most 63)");

#define BENCH_DEPTH 4096u	/* receive WRs per QP ring */
#define BENCH_OPS 512u		/* operations per round */
#define BENCH_LIST 32u		/* WRs per list post */
#define BENCH_MAX_SGE 4u
#define BENCH_MAX_ROUNDS 63u
#define BENCH_DEVICES 2u	/* rdmavt, then krwq */

/* ------------------------------------------------------------------------
 * A minimal rdmavt device: one port, UD only in practice, no hardware.
 */
struct bench_rvt {
	struct rvt_dev_info rdi;	/* first: rdmavt allocates it */
	struct rvt_ibport port;
	u16 pkeys[1];
};

struct bench_qp_priv {
	struct rvt_qp *qp;
};

static const __be64 bench_guid = cpu_to_be64(0x0002c90300b0e4c1ULL);

static void *bench_qp_priv_alloc(struct rvt_dev_info *rdi, struct rvt_qp *qp)
{
	struct bench_qp_priv *priv = kzalloc(sizeof(*priv), GFP_KERNEL);

	if (!priv)
		return ERR_PTR(-ENOMEM);
	priv->qp = qp;
	return priv;
}

static void bench_qp_priv_free(struct rvt_dev_info *rdi, struct rvt_qp *qp)
{
	kfree(qp->priv);
}

/* Nothing is ever sent on this device: the send-side hooks do nothing. */
static void bench_qp_noop(struct rvt_qp *qp)
{
}

static bool bench_schedule_send(struct rvt_qp *qp)
{
	return false;
}

static void bench_notify_restart_rc(struct rvt_qp *qp, u32 psn, int wait)
{
}

static int bench_get_pmtu_from_attr(struct rvt_dev_info *rdi,
				    struct rvt_qp *qp, struct ib_qp_attr *attr)
{
	return attr->path_mtu;
}

static u32 bench_mtu_from_qp(struct rvt_dev_info *rdi, struct rvt_qp *qp,
			     u32 pmtu)
{
	return ib_mtu_enum_to_int(pmtu);
}

static int bench_mtu_to_path_mtu(u32 mtu)
{
	return ib_mtu_int_to_enum(mtu);
}

static int bench_get_guid_be(struct rvt_dev_info *rdi, struct rvt_ibport *rvp,
			     int guid_index, __be64 *guid)
{
	if (guid_index)
		return -EINVAL;
	*guid = bench_guid;
	return 0;
}

static int bench_query_port_state(struct rvt_dev_info *rdi, u32 port_num,
				  struct ib_port_attr *props)
{
	props->state = IB_PORT_ACTIVE;
	props->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	props->lid = 1;
	props->lmc = 0;
	props->max_mtu = IB_MTU_4096;
	props->active_mtu = IB_MTU_4096;
	props->gid_tbl_len = 1;
	props->max_vl_num = 1;
	props->active_width = IB_WIDTH_4X;
	props->active_speed = IB_SPEED_EDR;
	return 0;
}

static int bench_shut_down_port(struct rvt_dev_info *rdi, u32 port_num)
{
	return 0;
}

static void bench_cap_mask_chg(struct rvt_dev_info *rdi, u32 port_num)
{
}

static unsigned int bench_free_all_qps(struct rvt_dev_info *rdi)
{
	return 0;
}

/*
 * rdmavt's log macros (rvt_pr_info() and friends) print through
 * &get_pci_dev()->dev, unconditionally: a device without a PCI function
 * cannot even log.  That is the only use rdmavt makes of it, so the bench
 * lends it the first PCI device of the machine (in the VM, the host
 * bridge), held by reference for the module's lifetime and never touched.
 */
static struct pci_dev *bench_log_pdev;

static struct pci_dev *bench_get_pci_dev(struct rvt_dev_info *rdi)
{
	return bench_log_pdev;
}

static int bench_modify_device(struct ib_device *ibdev, int mask,
			       struct ib_device_modify *props)
{
	return -EOPNOTSUPP;
}

/* rdmavt wants a (possibly empty) set of per-port sysfs groups. */
static const struct attribute_group *bench_port_groups[] = { NULL };

static const struct ib_device_ops bench_rvt_ops = {
	.owner = THIS_MODULE,
	.modify_device = bench_modify_device,
	.port_groups = bench_port_groups,
};

/* Checked by rvt_register_device(), used only by post_send. */
static const struct rvt_operation_params bench_post_parms[RVT_OPERATION_MAX] = {
	[IB_WR_SEND] = {
		.length = sizeof(struct ib_ud_wr),
		.qpt_support = BIT(IB_QPT_UD),
	},
};

static struct bench_rvt *bench_rvt_register(void)
{
	struct rvt_dev_info *rdi;
	struct bench_rvt *b;
	int ret;

	rdi = rvt_alloc_device(sizeof(*b), 1);
	if (!rdi)
		return ERR_PTR(-ENOMEM);
	b = container_of(rdi, struct bench_rvt, rdi);
	rvt_set_ibdev_name(rdi, "%s_%d", "rvtbench", 0);

	rdi->driver_f.get_pci_dev = bench_get_pci_dev;
	rdi->driver_f.query_port_state = bench_query_port_state;
	rdi->driver_f.shut_down_port = bench_shut_down_port;
	rdi->driver_f.cap_mask_chg = bench_cap_mask_chg;
	rdi->driver_f.get_guid_be = bench_get_guid_be;
	rdi->driver_f.qp_priv_alloc = bench_qp_priv_alloc;
	rdi->driver_f.qp_priv_free = bench_qp_priv_free;
	rdi->driver_f.free_all_qps = bench_free_all_qps;
	rdi->driver_f.notify_qp_reset = bench_qp_noop;
	rdi->driver_f.notify_restart_rc = bench_notify_restart_rc;
	rdi->driver_f.flush_qp_waiters = bench_qp_noop;
	rdi->driver_f.stop_send_queue = bench_qp_noop;
	rdi->driver_f.quiesce_qp = bench_qp_noop;
	rdi->driver_f.notify_error_qp = bench_qp_noop;
	rdi->driver_f.schedule_send = bench_schedule_send;
	rdi->driver_f.do_send = bench_qp_noop;
	rdi->driver_f.get_pmtu_from_attr = bench_get_pmtu_from_attr;
	rdi->driver_f.mtu_from_qp = bench_mtu_from_qp;
	rdi->driver_f.mtu_to_path_mtu = bench_mtu_to_path_mtu;
	rdi->post_parms = bench_post_parms;

	rdi->dparms.props.max_qp = 64;
	rdi->dparms.props.max_qp_wr = 16383;
	rdi->dparms.props.max_send_sge = BENCH_MAX_SGE;
	rdi->dparms.props.max_recv_sge = BENCH_MAX_SGE;
	rdi->dparms.props.max_sge_rd = BENCH_MAX_SGE;
	rdi->dparms.props.max_cq = 64;
	rdi->dparms.props.max_cqe = 65535;
	rdi->dparms.props.max_pd = 64;
	rdi->dparms.props.max_ah = 64;
	rdi->dparms.props.max_srq = 16;
	rdi->dparms.props.max_srq_wr = 16383;
	rdi->dparms.props.max_srq_sge = BENCH_MAX_SGE;
	rdi->dparms.props.max_pkeys = 1;
	rdi->dparms.props.sys_image_guid = bench_guid;
	rdi->dparms.lkey_table_size = 12;
	rdi->dparms.qp_table_size = 256;
	rdi->dparms.qpn_start = 1;
	rdi->dparms.qpn_inc = 1;
	rdi->dparms.qpn_res_start = 0;
	rdi->dparms.qpn_res_end = 0;
	rdi->dparms.qos_shift = 1;
	rdi->dparms.nports = 1;
	rdi->dparms.npkeys = 1;
	rdi->dparms.node = NUMA_NO_NODE;
	rdi->dparms.psn_mask = 0xffffff;
	rdi->dparms.psn_shift = 8;
	rdi->dparms.psn_modify_mask = 0xffffff;
	rdi->dparms.core_cap_flags = RDMA_CORE_PORT_IBA_IB;
	rdi->dparms.max_mad_size = IB_MGMT_MAD_SIZE;

	rdi->ibdev.node_guid = bench_guid;
	rdi->ibdev.phys_port_cnt = 1;
	rdi->ibdev.num_comp_vectors = 1;
	ib_set_device_ops(&rdi->ibdev, &bench_rvt_ops);

	b->pkeys[0] = IB_DEFAULT_PKEY_FULL;
	b->port.port_cap_flags = IB_PORT_CM_SUP;
	b->port.gid_prefix = cpu_to_be64(0xfe80000000000000ULL);
	rvt_init_port(rdi, &b->port, 0, b->pkeys);

	ret = rvt_register_device(rdi);
	if (ret) {
		rvt_dealloc_device(rdi);
		return ERR_PTR(ret);
	}
	return b;
}

static void bench_rvt_unregister(struct bench_rvt *b)
{
	rvt_unregister_device(&b->rdi);
	rvt_dealloc_device(&b->rdi);
}

/* ------------------------------------------------------------------------
 * A UD QP of a device, and the way that device takes a receive WQE.
 */
struct bench_target {
	const char *name;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	int (*take)(struct bench_target *t);
	struct ib_sge taken[BENCH_MAX_SGE];	/* krwq copies the list here */
	u64 last_wr_id;
	struct bench_target *twin;	/* a second QP on the same device */
};

static int bench_take_rvt(struct bench_target *t)
{
	struct rvt_qp *qp = ibqp_to_rvtqp(t->qp);
	int ret = rvt_get_rwqe(qp, true);

	if (ret > 0)
		t->last_wr_id = qp->r_wr_id;
	return ret;
}

static int bench_take_krwq(struct bench_target *t)
{
	struct krwq_qp *qp = container_of(t->qp, struct krwq_qp, ibqp);
	struct krwq_taken taken = { .sg_list = t->taken };

	switch (krwq_rq_take(&qp->rq, &taken)) {
	case KRWQ_TAKE_TAKEN:
		t->last_wr_id = taken.wr_id;
		return 1;
	case KRWQ_TAKE_EMPTY:
		return 0;
	default:
		return -EINVAL;
	}
}

static int bench_target_init(struct bench_target *t)
{
	struct ib_qp_init_attr init = {
		.qp_type = IB_QPT_UD,
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.cap = {
			.max_send_wr = 1,
			.max_send_sge = 1,
			.max_recv_wr = BENCH_DEPTH,
			.max_recv_sge = BENCH_MAX_SGE,
		},
	};
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qkey = 0x11111111,
	};
	int ret;

	t->pd = ib_alloc_pd(t->dev, 0);
	if (IS_ERR(t->pd))
		return PTR_ERR(t->pd);
	t->cq = ib_alloc_cq(t->dev, NULL, 64, 0, IB_POLL_DIRECT);
	if (IS_ERR(t->cq)) {
		ret = PTR_ERR(t->cq);
		goto free_pd;
	}
	init.send_cq = t->cq;
	init.recv_cq = t->cq;
	t->qp = ib_create_qp(t->pd, &init);
	if (IS_ERR(t->qp)) {
		ret = PTR_ERR(t->qp);
		goto free_cq;
	}
	ret = ib_modify_qp(t->qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_QKEY);
	if (ret)
		goto free_qp;
	attr.qp_state = IB_QPS_RTR;	/* both devices take WQEs from RTR on */
	ret = ib_modify_qp(t->qp, &attr, IB_QP_STATE);
	if (ret)
		goto free_qp;
	return 0;

free_qp:
	ib_destroy_qp(t->qp);
free_cq:
	ib_free_cq(t->cq);
free_pd:
	ib_dealloc_pd(t->pd);
	return ret;
}

static void bench_target_exit(struct bench_target *t)
{
	ib_destroy_qp(t->qp);
	ib_free_cq(t->cq);
	ib_dealloc_pd(t->pd);
}

/* ------------------------------------------------------------------------
 * The measurements.  Each returns nanoseconds per operation times 10, or
 * a negative errno.
 */
struct bench_wrs {
	struct ib_sge sge[BENCH_LIST][BENCH_MAX_SGE];
	struct ib_recv_wr wr[BENCH_LIST];
};

static void bench_wrs_init(struct bench_wrs *w, struct bench_target *t,
			   unsigned int num_sge, bool chain)
{
	unsigned int i, j;

	for (i = 0; i < BENCH_LIST; i++) {
		for (j = 0; j < BENCH_MAX_SGE; j++) {
			w->sge[i][j].addr = 0x100000ULL * (j + 1);
			w->sge[i][j].length = 4096;
			w->sge[i][j].lkey = t->pd->local_dma_lkey;
		}
		w->wr[i].wr_id = i;
		w->wr[i].sg_list = w->sge[i];
		w->wr[i].num_sge = num_sge;
		w->wr[i].next = chain && i + 1 < BENCH_LIST ? &w->wr[i + 1] : NULL;
	}
}

static int bench_drain(struct bench_target *t, unsigned int n)
{
	while (n--)
		if (t->take(t) != 1)
			return -EIO;
	return 0;
}

/* Takes whatever a failed measurement left posted. */
static void bench_empty(struct bench_target *t)
{
	while (t->take(t) == 1)
		;
}

static s64 per_op(u64 ns, unsigned int ops)
{
	return div_u64(ns * 10, ops);
}

enum bench_metric {
	M_POST1, M_LIST32, M_TAKE, M_PAIR1, M_PAIR4, M_THREADS, M_TWO_QPS,
	M_COUNT
};

static const char *const bench_metric_names[M_COUNT] = {
	"post1", "post_list32", "take", "pair1", "pair4", "threads", "two_qps",
};

static s64 bench_post1(struct bench_target *t, struct bench_wrs *w)
{
	const struct ib_recv_wr *bad;
	unsigned int i;
	u64 start, ns;

	bench_wrs_init(w, t, 1, false);
	start = ktime_get_ns();
	for (i = 0; i < BENCH_OPS; i++)
		if (ib_post_recv(t->qp, &w->wr[i % BENCH_LIST], &bad))
			return -EIO;
	ns = ktime_get_ns() - start;
	return bench_drain(t, BENCH_OPS) ?: per_op(ns, BENCH_OPS);
}

static s64 bench_list32(struct bench_target *t, struct bench_wrs *w)
{
	const unsigned int lists = BENCH_OPS / BENCH_LIST;
	const struct ib_recv_wr *bad;
	unsigned int i;
	u64 start, ns;

	bench_wrs_init(w, t, 1, true);
	start = ktime_get_ns();
	for (i = 0; i < lists; i++)
		if (ib_post_recv(t->qp, &w->wr[0], &bad))
			return -EIO;
	ns = ktime_get_ns() - start;
	return bench_drain(t, BENCH_OPS) ?: per_op(ns, lists);
}

static s64 bench_take(struct bench_target *t, struct bench_wrs *w)
{
	const struct ib_recv_wr *bad;
	unsigned int i;
	u64 start, ns;

	bench_wrs_init(w, t, 1, false);
	for (i = 0; i < BENCH_OPS; i++)
		if (ib_post_recv(t->qp, &w->wr[i % BENCH_LIST], &bad))
			return -EIO;
	start = ktime_get_ns();
	if (bench_drain(t, BENCH_OPS))
		return -EIO;
	ns = ktime_get_ns() - start;
	return per_op(ns, BENCH_OPS);
}

/* @n post+take pairs on @t's QP.  Return: 0, or -EIO. */
static int bench_pair_loop(struct bench_target *t, struct bench_wrs *w,
			   unsigned int n)
{
	const struct ib_recv_wr *bad;
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (ib_post_recv(t->qp, &w->wr[i % BENCH_LIST], &bad) ||
		    t->take(t) != 1)
			return -EIO;
	}
	return 0;
}

static s64 bench_pair(struct bench_target *t, struct bench_wrs *w,
		      unsigned int num_sge)
{
	u64 start, ns;

	bench_wrs_init(w, t, num_sge, false);
	start = ktime_get_ns();
	if (bench_pair_loop(t, w, BENCH_OPS))
		return -EIO;
	ns = ktime_get_ns() - start;
	return per_op(ns, BENCH_OPS);
}

/*
 * Two kthreads, each bound to a CPU of its own.  Each times its own run,
 * from when it starts to work, so the wake-ups of the two do not count.
 */
#define BENCH_THREAD_WRS (4 * BENCH_OPS)

struct bench_side {
	struct bench_target *t;
	struct bench_wrs *w;
	struct completion *go;
	bool *abort;		/* set by a side that fails, or never started */
	struct completion done;
	u64 start, end;
	int ret;
};

static void bench_side_begin(struct bench_side *s)
{
	wait_for_completion(s->go);
	s->start = ktime_get_ns();
}

static int bench_side_end(struct bench_side *s, int ret)
{
	s->end = ktime_get_ns();
	s->ret = ret;
	if (ret)
		WRITE_ONCE(*s->abort, true);
	complete(&s->done);
	return 0;
}

/* Spins while the other side has not failed.  Return: false once it has. */
static bool bench_backoff(struct bench_side *s, unsigned int *spins)
{
	cpu_relax();
	if (++*spins % 1024 == 0)
		cond_resched();
	return !READ_ONCE(*s->abort);
}

static int bench_producer(void *arg)
{
	struct bench_side *s = arg;
	const struct ib_recv_wr *bad;
	unsigned int i, spins = 0;
	int ret = 0;

	bench_side_begin(s);
	for (i = 0; i < BENCH_THREAD_WRS && !ret; i++) {
		while ((ret = ib_post_recv(s->t->qp, &s->w->wr[i % BENCH_LIST],
					   &bad)) == -ENOMEM) {
			if (!bench_backoff(s, &spins))
				return bench_side_end(s, -EIO);
		}
	}
	return bench_side_end(s, ret);
}

static int bench_consumer(void *arg)
{
	struct bench_side *s = arg;
	unsigned int i, spins = 0;
	int ret = 0;

	bench_side_begin(s);
	for (i = 0; i < BENCH_THREAD_WRS && ret >= 0; i++) {
		while ((ret = s->t->take(s->t)) == 0) {
			if (!bench_backoff(s, &spins))
				return bench_side_end(s, -EIO);
		}
	}
	return bench_side_end(s, ret < 0 ? -EIO : 0);
}

/* Post+take pairs on the side's own QP, as bench_pair() does. */
static int bench_pairs(void *arg)
{
	struct bench_side *s = arg;

	bench_side_begin(s);
	return bench_side_end(s, bench_pair_loop(s->t, s->w, BENCH_THREAD_WRS));
}

/*
 * Runs @fn[i] with @sides[i] on a kthread bound to the i-th online CPU
 * (the caller checks there are two), both let go at once.  Return: the
 * nanoseconds from the first side's start to the last side's end, or a
 * negative errno: a kthread could not be created (the one created before
 * it, if any, is told to stop and has ended), or a side failed.  On an
 * error each side's QP is emptied of what the run left posted.
 */
static s64 bench_on_two_cpus(int (*const fn[2])(void *),
			     struct bench_side sides[2])
{
	unsigned int cpu = cpumask_first(cpu_online_mask);
	DECLARE_COMPLETION_ONSTACK(go);
	struct task_struct *task[2];
	bool abort = false;
	s64 ret = 0;
	int i;

	for (i = 0; i < 2; i++) {
		sides[i].go = &go;
		sides[i].abort = &abort;
		sides[i].ret = 0;
		init_completion(&sides[i].done);
		task[i] = kthread_create(fn[i], &sides[i], "krwq_bench_%d", i);
		if (IS_ERR(task[i])) {
			ret = PTR_ERR(task[i]);
			WRITE_ONCE(abort, true);
			complete_all(&go);
			if (i) {
				wake_up_process(task[0]);
				wait_for_completion(&sides[0].done);
			}
			goto out;
		}
		kthread_bind(task[i], cpu);
		cpu = cpumask_next(cpu, cpu_online_mask);
	}
	wake_up_process(task[0]);
	wake_up_process(task[1]);
	complete_all(&go);
	wait_for_completion(&sides[0].done);
	wait_for_completion(&sides[1].done);
	if (sides[0].ret || sides[1].ret)
		ret = -EIO;
	else
		ret = max(sides[0].end, sides[1].end) -
		      min(sides[0].start, sides[1].start);
out:
	if (ret < 0) {
		bench_empty(sides[0].t);
		bench_empty(sides[1].t);
	}
	return ret;
}

/* A producer and a consumer of one QP, on different CPUs. */
static s64 bench_threads(struct bench_target *t, struct bench_wrs *w)
{
	static int (*const fn[2])(void *) = { bench_producer, bench_consumer };
	struct bench_side sides[2] = { { .t = t, .w = w }, { .t = t, .w = w } };
	s64 ns;

	bench_wrs_init(w, t, 1, false);
	ns = bench_on_two_cpus(fn, sides);
	return ns < 0 ? ns : per_op(ns, BENCH_THREAD_WRS);
}

/* Two QPs of one device, each with its own CPU: per WR of both. */
static s64 bench_two_qps(struct bench_target *t, struct bench_wrs *w,
			 struct bench_wrs *w2)
{
	static int (*const fn[2])(void *) = { bench_pairs, bench_pairs };
	struct bench_side sides[2] = {
		{ .t = t, .w = w }, { .t = t->twin, .w = w2 }
	};
	s64 ns;

	bench_wrs_init(w, t, 1, false);
	bench_wrs_init(w2, t->twin, 1, false);
	ns = bench_on_two_cpus(fn, sides);
	return ns < 0 ? ns : per_op(ns, 2 * BENCH_THREAD_WRS);
}

/* The WRs each measurement posts: a second set for a second QP. */
struct bench_state {
	struct bench_wrs w, w2;
	s64 samples[BENCH_DEVICES][BENCH_MAX_ROUNDS];
};

static s64 bench_run(enum bench_metric m, struct bench_target *t,
		     struct bench_state *st)
{
	struct bench_wrs *w = &st->w;

	switch (m) {
	case M_POST1:
		return bench_post1(t, w);
	case M_LIST32:
		return bench_list32(t, w);
	case M_TAKE:
		return bench_take(t, w);
	case M_PAIR1:
		return bench_pair(t, w, 1);
	case M_PAIR4:
		return bench_pair(t, w, 4);
	case M_THREADS:
		return bench_threads(t, w);
	case M_TWO_QPS:
		return bench_two_qps(t, w, &st->w2);
	default:
		return -EINVAL;
	}
}

static int bench_cmp_s64(const void *a, const void *b)
{
	s64 x = *(const s64 *)a, y = *(const s64 *)b;

	return x < y ? -1 : x > y;
}

static int bench_all(struct bench_target *targets, unsigned int n)
{
	struct bench_state *st;
	unsigned int m, r, i;
	int ret = 0;

	st = kzalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	for (m = 0; m < M_COUNT && !ret; m++) {
		if ((m == M_THREADS || m == M_TWO_QPS) &&
		    num_online_cpus() < 2) {
			pr_info("krwq_bench: skip %s: one CPU online\n",
				bench_metric_names[m]);
			continue;
		}
		for (r = 0; r < rounds && !ret; r++) {
			for (i = 0; i < n && !ret; i++) {
				/* alternate which device goes first */
				struct bench_target *t = &targets[(i + r) % n];
				s64 v = bench_run(m, t, st);

				if (v < 0) {
					pr_err("krwq_bench: %s on %s failed: %lld\n",
					       bench_metric_names[m], t->name, v);
					ret = v;
				}
				st->samples[(i + r) % n][r] = v;
				cond_resched();
			}
		}
		for (i = 0; i < n && !ret; i++) {
			s64 best, med;

			sort(st->samples[i], rounds, sizeof(s64), bench_cmp_s64,
			     NULL);
			best = st->samples[i][0];
			med = st->samples[i][rounds / 2];
			pr_info("krwq_bench: result %s %s %lld.%lld median %lld.%lld\n",
				bench_metric_names[m], targets[i].name,
				div_s64(best, 10), best % 10,
				div_s64(med, 10), med % 10);
		}
	}
	kfree(st);
	return ret;
}

static int __init krwq_bench_init(void)
{
	/* a QP of each device, then a second QP of each (their twins) */
	const unsigned int n_targets = 2 * BENCH_DEVICES;
	struct bench_target *targets;
	struct ib_device *krwq_dev;
	struct bench_rvt *b;
	unsigned int i;
	int ret;

	if (!rounds || rounds > BENCH_MAX_ROUNDS)
		return -EINVAL;
	targets = kcalloc(n_targets, sizeof(*targets), GFP_KERNEL);
	if (!targets)
		return -ENOMEM;
	bench_log_pdev = pci_get_device(PCI_ANY_ID, PCI_ANY_ID, NULL);
	if (!bench_log_pdev) {
		pr_err("krwq_bench: rdmavt logs through a PCI device; there is none\n");
		ret = -ENODEV;
		goto free_targets;
	}
	b = bench_rvt_register();
	if (IS_ERR(b)) {
		pr_err("krwq_bench: rvt_register_device failed: %ld\n",
		       PTR_ERR(b));
		ret = PTR_ERR(b);
		goto put_pdev;
	}
	krwq_dev = ib_device_get_by_name("krwq0", RDMA_DRIVER_QIB);
	if (!krwq_dev) {
		pr_err("krwq_bench: no krwq0 (load krwq.ko first)\n");
		ret = -ENODEV;
		goto unregister;
	}
	for (i = 0; i < n_targets; i++) {
		bool krwq = i % BENCH_DEVICES;

		targets[i].name = krwq ? "krwq" : "rdmavt";
		targets[i].take = krwq ? bench_take_krwq : bench_take_rvt;
		targets[i].dev = krwq ? krwq_dev : &b->rdi.ibdev;
		ret = bench_target_init(&targets[i]);
		if (ret)
			goto exit_targets;
	}
	for (i = 0; i < BENCH_DEVICES; i++)
		targets[i].twin = &targets[i + BENCH_DEVICES];
	i = n_targets;	/* how many to exit */

	pr_info("krwq_bench: %u rounds of %u operations, depth %u, %u CPUs, devices %s and %s\n",
		rounds, BENCH_OPS, BENCH_DEPTH, num_online_cpus(),
		dev_name(&targets[0].dev->dev), dev_name(&targets[1].dev->dev));
	ret = bench_all(targets, BENCH_DEVICES);
	if (!ret)
		pr_info("krwq_bench: done\n");

exit_targets:
	while (i--)
		bench_target_exit(&targets[i]);
	ib_device_put(krwq_dev);
unregister:
	bench_rvt_unregister(b);
put_pdev:
	pci_dev_put(bench_log_pdev);
free_targets:
	kfree(targets);
	return ret;
}

static void __exit krwq_bench_exit(void)
{
}

module_init(krwq_bench_init);
module_exit(krwq_bench_exit);
MODULE_DESCRIPTION("krwq: in-kernel receive-queue benchmark against rdmavt");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
