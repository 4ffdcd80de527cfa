// SPDX-License-Identifier: GPL-2.0
/*
 * fault.c - krwq_hostile faults: every creating verb run again and again
 * with its Nth kernel allocation failing, N = 1, 2, 3, ... until the verb
 * no longer reaches an Nth allocation and succeeds.
 *
 * The failure comes from the kernel's fault injection (failslab and
 * fail_page_alloc) through /proc/thread-self/fail-nth: writing N arms the
 * Nth fault-injection point this thread passes in the kernel; reading it
 * back gives 0 once that fault was injected.  The debugfs knobs must let
 * sleeping allocations fail (ignore-gfp-wait = N, fail_page_alloc's
 * min-order = 0); scripts/guest/hostile.sh sets them as root.
 *
 * For each injected fault the verb must fail with ENOMEM (or, where the
 * failed allocation had a fallback, succeed), and leave nothing behind:
 * the RDMA core's object counts are back to where they were, a CQ or SRQ
 * that failed to resize keeps its size and its contents.  Leaks of
 * memory the counts do not show are kmemleak's to find at the end of the
 * VM run.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostile.h"
#include "raw.h"
#include "vt.h"

static const char *devname;
static int nth_fd = -1;
static unsigned long n_faults;
static struct run run;

struct objs {
	struct ibv_pd *pd;
	struct ibv_cq *cq;		/* for the QPs, and to resize */
	struct ibv_srq *srq;		/* for a QP on an SRQ, and to resize */
	struct ibv_qp *filler;		/* flushed receives wait in cq */
	struct buf buf;
	struct ibv_mr *mr;
	struct ibv_pd *npd;
	struct ibv_cq *ncq;
	struct ibv_srq *nsrq;
	struct ibv_qp *nqp;
	struct ibv_ah *nah;
	void *big;
};

static struct objs o;

static bool nth_set(unsigned int n)
{
	char s[16];
	int len = snprintf(s, sizeof(s), "%u", n);

	return pwrite(nth_fd, s, len, 0) == len;
}

static long nth_get(void)
{
	char s[16] = "";

	if (pread(nth_fd, s, sizeof(s) - 1, 0) <= 0)
		return -1;
	return strtol(s, NULL, 10);
}

/* The verbs under test: 0 or the errno; undo() releases what do() made. */
struct op {
	const char *name;
	int (*run)(void);
	void (*undo)(void);
	const char *(*intact)(void);	/* after a failure: the target unchanged */
};

static int err_of(const void *p)
{
	return p ? 0 : (errno ? errno : EIO);
}

static int do_pd(void) { return err_of(o.npd = ibv_alloc_pd(env.ctx)); }
static void undo_pd(void) { ibv_dealloc_pd(o.npd); }

static int do_mr_small(void)
{
	return err_of(o.mr = ibv_reg_mr(o.pd, o.buf.p, 65536, ACC_ALL));
}

static int do_mr_big(void)
{
	return err_of(o.mr = ibv_reg_mr(o.pd, o.big, 8 << 20, ACC_ALL));
}

static void undo_mr(void) { ibv_dereg_mr(o.mr); }

static int do_cq_small(void)
{
	return err_of(o.ncq = ibv_create_cq(env.ctx, 16, NULL, NULL, 0));
}

static int do_cq_big(void)
{
	return err_of(o.ncq = ibv_create_cq(env.ctx, 8192, NULL, NULL, 0));
}

static void undo_cq(void) { ibv_destroy_cq(o.ncq); }

static int do_srq_small(void)
{
	struct ibv_srq_init_attr a = { .attr = { .max_wr = 64, .max_sge = 2 } };

	return err_of(o.nsrq = ibv_create_srq(o.pd, &a));
}

static int do_srq_big(void)
{
	struct ibv_srq_init_attr a = { .attr = { .max_wr = 4096, .max_sge = 8 } };

	return err_of(o.nsrq = ibv_create_srq(o.pd, &a));
}

static void undo_srq(void) { ibv_destroy_srq(o.nsrq); }

static int qp_make(enum ibv_qp_type t, uint32_t wr, uint32_t sge,
		   struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = o.cq, .recv_cq = o.cq, .srq = srq, .qp_type = t,
		.cap = { .max_send_wr = wr, .max_recv_wr = srq ? 0 : wr,
			 .max_send_sge = sge, .max_recv_sge = srq ? 0 : sge },
	};

	return err_of(o.nqp = ibv_create_qp(o.pd, &a));
}

static int do_qp_rc(void) { return qp_make(IBV_QPT_RC, 64, 2, NULL); }
static int do_qp_ud_big(void) { return qp_make(IBV_QPT_UD, 2048, 8, NULL); }
static int do_qp_srq(void) { return qp_make(IBV_QPT_UC, 64, 1, o.srq); }
static void undo_qp(void) { ibv_destroy_qp(o.nqp); }

static int do_qp_modify(void)
{
	/* a QP to INIT, RTR, RTS and ERR (flushing 8 receives) */
	int ret = qp_make(IBV_QPT_RC, 16, 1, NULL), i;

	if (ret)
		return ret;
	if (!qp_to_init(&run, o.nqp))
		goto bad;
	for (i = 0; i < 8; i++)
		if (!recv_slot(&run, o.nqp, NULL, i, &o.buf))
			goto bad;
	if (!qp_to_rtr(&run, o.nqp, o.nqp->qp_num, 1) ||
	    !qp_to_rts(&run, o.nqp, 0) || !qp_move(&run, o.nqp, IBV_QPS_ERR))
		goto bad;
	return 0;
bad:
	run.failures = 0;
	ibv_destroy_qp(o.nqp);
	return ENOMEM;
}

static void undo_qp_modify(void)
{
	struct ibv_wc wc[16];

	ibv_destroy_qp(o.nqp);
	while (ibv_poll_cq(o.cq, 16, wc) > 0)
		;
}

static int do_ah(void)
{
	struct ibv_ah_attr a;

	fill_ah(&a);
	return err_of(o.nah = ibv_create_ah(o.pd, &a));
}

static void undo_ah(void) { ibv_destroy_ah(o.nah); }

/*
 * resize o.cq (cqe 64, 10 flushed completions waiting) to 4096 and back
 * (a ring kvcalloc() may take from vmalloc when kmalloc fails), and to 40
 * and back (a ring under a page: kmalloc only, no fallback)
 */
static int do_cq_resize(void) { return ibv_resize_cq(o.cq, 4096); }
static int do_cq_shrink(void) { return ibv_resize_cq(o.cq, 40); }
static void undo_cq_resize(void) { ibv_resize_cq(o.cq, 64); }

static const char *cq_intact(void)
{
	static char s[120];
	struct ibv_wc wc[16];
	int n;

	if (o.cq->cqe != 64) {
		snprintf(s, sizeof(s), "cqe %d after a failed resize", o.cq->cqe);
		return s;
	}
	/* peek: the 10 completions must still be there, in order */
	n = ibv_poll_cq(o.cq, 16, wc);
	if (n != 10 || wc[0].wr_id != 100 || wc[9].wr_id != 109) {
		snprintf(s, sizeof(s), "%d completions after a failed resize, want 10", n);
		return s;
	}
	return "";	/* polled: the caller refills */
}

/* resize o.srq (max_wr 64, 8 posted) to 8192 and back */
static int do_srq_resize(void)
{
	return ibv_modify_srq(o.srq, &(struct ibv_srq_attr){ .max_wr = 8192 },
			      IBV_SRQ_MAX_WR);
}

/* a ring under a page: kmalloc only, no fallback */
static int do_srq_grow_small(void)
{
	return ibv_modify_srq(o.srq, &(struct ibv_srq_attr){ .max_wr = 100 },
			      IBV_SRQ_MAX_WR);
}

static void undo_srq_resize(void)
{
	ibv_modify_srq(o.srq, &(struct ibv_srq_attr){ .max_wr = 64 },
		       IBV_SRQ_MAX_WR);
}

static const char *srq_intact(void)
{
	static char s[120];
	struct ibv_srq_attr a;

	if (ibv_query_srq(o.srq, &a) || a.max_wr != 64) {
		snprintf(s, sizeof(s), "max_wr %u after a failed resize", a.max_wr);
		return s;
	}
	return NULL;
}

static const struct op ops[] = {
	{ "alloc_pd", do_pd, undo_pd, NULL },
	{ "reg_mr 64 KiB", do_mr_small, undo_mr, NULL },
	{ "reg_mr 8 MiB", do_mr_big, undo_mr, NULL },
	{ "create_cq 16", do_cq_small, undo_cq, NULL },
	{ "create_cq 8192", do_cq_big, undo_cq, NULL },
	{ "create_srq 64 x 2 SGEs", do_srq_small, undo_srq, NULL },
	{ "create_srq 4096 x 8 SGEs", do_srq_big, undo_srq, NULL },
	{ "create_qp RC 64 WRs", do_qp_rc, undo_qp, NULL },
	{ "create_qp UD 2048 WRs x 8 SGEs", do_qp_ud_big, undo_qp, NULL },
	{ "create_qp UC on an SRQ", do_qp_srq, undo_qp, NULL },
	{ "create_qp, post 8, RTS, ERR (flush)", do_qp_modify, undo_qp_modify, NULL },
	{ "create_ah", do_ah, undo_ah, NULL },
	{ "resize_cq 64 -> 4096 with 10 completions", do_cq_resize,
	  undo_cq_resize, cq_intact },
	{ "resize_cq 64 -> 40 with 10 completions", do_cq_shrink,
	  undo_cq_resize, cq_intact },
	{ "modify_srq resize 64 -> 8192 with 8 posted", do_srq_resize,
	  undo_srq_resize, srq_intact },
	{ "modify_srq resize 64 -> 100 with 8 posted", do_srq_grow_small,
	  undo_srq_resize, srq_intact },
};

/* 10 flushed receives into o.cq, from a QP that then goes away */
static bool cq_refill(void)
{
	struct ibv_qp_init_attr a = {
		.send_cq = o.cq, .recv_cq = o.cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 16, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(o.pd, &a);
	bool ok;
	int i;

	if (!qp)
		return false;
	ok = qp_to_init(&run, qp);
	for (i = 0; ok && i < 10; i++)
		ok = recv_slot(&run, qp, NULL, 100 + i, &o.buf);
	ok = ok && qp_move(&run, qp, IBV_QPS_ERR);
	usleep(20000);
	/* destroying the QP would drop its completions: keep it */
	if (o.filler)
		ibv_destroy_qp(o.filler);
	o.filler = qp;
	run.failures = 0;
	return ok;
}

static void walk(const struct op *op)
{
	unsigned int n, injected = 0, absorbed = 0, wrong = 0;
	char why[600] = "", name[200];
	struct res base, now;
	int err = 0;
	bool done = false;

	if (op->intact == cq_intact && !cq_refill()) {
		tap_result(false, op->name, "could not queue 10 completions");
		return;
	}
	res_read(devname, &base);
	for (n = 1; n <= 2000 && !done; n++) {
		long left;

		errno = 0;
		if (!nth_set(n)) {
			snprintf(why, sizeof(why), "cannot write fail-nth: %s",
				 strerror(errno));
			wrong++;
			break;
		}
		err = op->run();
		left = nth_get();
		nth_set(0);
		if (left != 0) {
			/* no Nth allocation: the verb ran its course */
			done = true;
			if (err) {
				wrong++;
				snprintf(why, sizeof(why),
					 "failed with %s without a fault (N = %u)",
					 errno_name(err), n);
			} else {
				op->undo();
			}
			break;
		}
		injected++;
		n_faults++;
		if (!err) {
			absorbed++;	/* the failed allocation had a fallback */
			op->undo();
		} else if (err != ENOMEM) {
			if (!wrong++)
				snprintf(why, sizeof(why),
					 "fault %u: %s, want ENOMEM", n,
					 errno_name(err));
		}
		if (err)	/* after an undo the end of the walk checks */
			res_read(devname, &now);
		if (err && !res_same(&base, &now) && !wrong++)
			snprintf(why, sizeof(why),
				 "fault %u (%s): objects %s -> %s", n,
				 errno_name(err), res_str(&base), res_str(&now));
		if (err && op->intact) {
			const char *bad = op->intact();

			if (bad && *bad && !wrong++)
				snprintf(why, sizeof(why), "fault %u: %s", n, bad);
			if (bad && !*bad && !cq_refill() && !wrong++)
				snprintf(why, sizeof(why),
					 "could not queue the completions again");
		}
	}
	res_read(devname, &now);
	if (!res_same(&base, &now) && !wrong++)
		snprintf(why, sizeof(why), "after the walk: objects %s -> %s",
			 res_str(&base), res_str(&now));
	if (!done && !wrong) {
		wrong++;
		snprintf(why, sizeof(why), "still failing after %u faults", n - 1);
	}
	snprintf(name, sizeof(name),
		 "%s: %u allocation faults, %u failed cleanly with ENOMEM, %u had a fallback",
		 op->name, injected, injected - absorbed, absorbed);
	tap_result(!wrong && injected > 0, name,
		   injected ? why : "no fault was injected: is fault injection set up?");
}

int hostile_faults(const char *dev)
{
	struct ibv_device **list;
	struct ibv_device *d = NULL;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 64, .max_sge = 1 } };
	struct res base, end;
	unsigned int i;
	int n;

	devname = dev;
	printf("TAP version 13\n1..%zu\n", ARRAY_SIZE(ops) + 2);
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	list = ibv_get_device_list(&n);
	for (i = 0; list && (int)i < n && !d; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			d = list[i];
	if (d)
		env.ctx = ibv_open_device(d);
	if (list)
		ibv_free_device_list(list);
	if (nth_fd < 0 || !env.ctx || ibv_query_port(env.ctx, 1, &env.port) ||
	    !(env.pd = o.pd = ibv_alloc_pd(env.ctx))) {
		tap_result(false, "faults: setup",
			   nth_fd < 0 ? "no /proc/thread-self/fail-nth" : "device");
		return tap_finish();
	}
	o.cq = ibv_create_cq(env.ctx, 64, NULL, NULL, 0);
	o.srq = ibv_create_srq(o.pd, &sa);
	o.big = aligned_alloc(4096, 8 << 20);
	if (!o.cq || !o.srq || !o.big || !buf_new(&run, &o.buf, 65536, ACC_ALL)) {
		tap_result(false, "faults: setup", "objects");
		return tap_finish();
	}
	memset(o.big, 1, 8 << 20);
	for (i = 0; i < 8; i++)
		recv_slot(&run, NULL, o.srq, 900 + i, &o.buf);
	res_read(dev, &base);
	tap_note("objects before: %s", res_str(&base));

	for (i = 0; i < ARRAY_SIZE(ops); i++)
		walk(&ops[i]);

	if (o.filler)
		ibv_destroy_qp(o.filler);
	o.filler = NULL;
	{
		struct ibv_srq_attr a;
		unsigned int posted = 0;

		/* the 8 WRs posted before the failed resizes still hold their
		 * slots: exactly max_wr - 8 more fit */
		if (!ibv_query_srq(o.srq, &a))
			while (posted < a.max_wr &&
			       recv_slot(&run, NULL, o.srq, posted, &o.buf))
				posted++;
		run.failures = 0;
		tap_result(a.max_wr == 64 && posted == 56,
			   "the SRQ that failed to resize kept its size and its 8 WRs",
			   "max_wr or the room left is wrong");
	}
	ibv_destroy_srq(o.srq);
	ibv_destroy_cq(o.cq);
	buf_free(&o.buf);
	res_read(dev, &end);
	ibv_dealloc_pd(o.pd);
	tap_result(end.ok && end.pd == base.pd && end.cq == base.cq - 1 &&
		   end.srq == base.srq - 1 && end.qp == base.qp &&
		   end.mr == base.mr - 1,
		   "every object is gone again",
		   res_str(&end));
	ibv_close_device(env.ctx);
	tap_note("faults injected: %lu", n_faults);
	printf("faults injected: %lu\n", n_faults);
	return tap_finish();
}
