// SPDX-License-Identifier: GPL-2.0
/*
 * ring_test.c - krwq_ring_test: the rings a device maps into user space
 * with uverbs ABI 2, checked through libibverbs and mmap() alone.
 *
 *   krwq_ring_test [-d DEVICE] [-t SECONDS]
 *
 *  - create_cq, create_qp and create_srq each map exactly one ring, a QP
 *    on an SRQ none; a second mmap() of a ring's offset shares its memory;
 *  - mmap() with an unknown offset, a wrong size, PROT_EXEC or MAP_PRIVATE
 *    is refused; a mapping outlives its QP, whose offset then maps nothing;
 *  - resize_cq with completions waiting keeps them, in order;
 *  - a hostile writer: for SECONDS (default 8), a thread scribbles random
 *    head, tail, num_sge and entry words into the receiving side's mapped
 *    rings (its QP or SRQ ring and its CQ), mixed with valid WQEs, while
 *    the main thread sends to it; then a fresh QP pair must still work.
 *
 * rdma-core's ipathverbs trusts the indices in a mapped ring, so nothing
 * here calls ibv_post_recv or ibv_poll_cq on a ring being scribbled; the
 * kernel is what must survive.  Output: TAP 13, last line
 * "P passed, F failed"; exit status 0 iff nothing failed.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vt.h"

#define MAX_MAPS	64
#define RWQE_HDR	16	/* wr_id, num_sge, padding */
#define SGE_BYTES	16

struct umap {
	unsigned char *addr;
	size_t len;
	unsigned long long off;
};

static unsigned int hostile_seconds = 8;

/* The uverbs mappings of this process, from /proc/self/maps. */
static int maps_read(struct umap *m)
{
	unsigned long long lo, hi, off;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && n < MAX_MAPS) {
		if (!strstr(line, "/dev/infiniband/uverbs"))
			continue;
		if (sscanf(line, "%llx-%llx %*s %llx", &lo, &hi, &off) != 3)
			continue;
		m[n++] = (struct umap){ (unsigned char *)(uintptr_t)lo,
					hi - lo, off };
	}
	fclose(f);
	return n;
}

/* What the last create mapped: exactly one new mapping, into @out. */
static bool map_created(struct run *r, const struct umap *before, int nb,
			struct umap *out, const char *what)
{
	struct umap now[MAX_MAPS];
	int n = maps_read(now), i, j, found = 0;

	for (i = 0; i < n; i++) {
		for (j = 0; j < nb; j++)
			if (now[i].addr == before[j].addr)
				break;
		if (j == nb) {
			*out = now[i];
			found++;
		}
	}
	if (found != 1)
		return fail(r, "%s mapped %d rings, want 1", what, found);
	return true;
}

static bool no_map_created(struct run *r, int nb, const char *what)
{
	struct umap now[MAX_MAPS];
	int n = maps_read(now);

	if (n != nb)
		return fail(r, "%s mapped %d rings, want none", what, n - nb);
	return true;
}

/* mmap() of the uverbs file; returns MAP_FAILED with errno set. */
static void *map_again(size_t len, unsigned long long off, int prot, int flags)
{
	return mmap(NULL, len, prot, flags, env.ctx->cmd_fd, (off_t)off);
}

static void expect_refused(struct run *r, size_t len, unsigned long long off,
			   int prot, int flags, int want, const char *what)
{
	void *p = map_again(len, off, prot, flags);

	if (p != MAP_FAILED) {
		fail(r, "mmap of %s succeeded", what);
		munmap(p, len);
	} else if (errno != want) {
		fail(r, "mmap of %s: %s, want %s", what, strerror(errno),
		     strerror(want));
	}
}

static void t_mapping(struct run *r)
{
	struct umap m[MAX_MAPS], cqm, qpm, srqm;
	struct ibv_qp *q = NULL, *qs = NULL;
	struct ibv_srq *srq = NULL;
	struct ibv_cq *cq = NULL;
	struct qp_cfg qc = { .recv_wr = 100 };
	unsigned char *again = MAP_FAILED;
	struct buf b = {};
	long page = sysconf(_SC_PAGESIZE);
	uint64_t id = wr_tag(0x3a, 7);
	int n;

	/* each create maps one ring of its own; a QP on an SRQ maps none */
	n = maps_read(m);
	cq = cq_new(r, 200, NULL);
	if (!cq || !map_created(r, m, n, &cqm, "create_cq"))
		goto out;
	n = maps_read(m);
	qc.scq = qc.rcq = cq;
	q = qp_new(r, &qc);
	if (!q || !map_created(r, m, n, &qpm, "create_qp"))
		goto out;
	n = maps_read(m);
	srq = srq_new(r, 50, 2);
	if (!srq || !map_created(r, m, n, &srqm, "create_srq"))
		goto out;
	n = maps_read(m);
	qc.srq = srq;
	qs = qp_new(r, &qc);
	if (!qs || !no_map_created(r, n, "create_qp on an SRQ"))
		goto out;
	report(r);

	/* a second mapping of the QP's ring sees what the provider wrote */
	if (!buf_new(r, &b, 4096, ACC_ALL) || !qp_to_init(r, q) ||
	    !recv_slot(r, q, NULL, id, &b))
		goto out;
	again = map_again(qpm.len, qpm.off, PROT_READ | PROT_WRITE, MAP_SHARED);
	if (again == MAP_FAILED) {
		fail(r, "mmap of the QP ring's offset again: %s", strerror(errno));
		goto out;
	}
	if (memcmp(again, qpm.addr, qpm.len))
		fail(r, "the second mapping differs from the provider's");
	else if (memcmp(again + 8, &id, sizeof(id)))
		fail(r, "the posted wr_id is not in the first WQE");
	report(r);

	expect_refused(r, qpm.len, qpm.off + 4096ull * page,
		       PROT_READ | PROT_WRITE, MAP_SHARED, EINVAL, "an unknown offset");
	expect_refused(r, qpm.len + page, qpm.off, PROT_READ | PROT_WRITE,
		       MAP_SHARED, EINVAL, "a ring with one page too many");
	expect_refused(r, qpm.len, qpm.off, PROT_READ | PROT_EXEC, MAP_SHARED,
		       EPERM, "a ring with PROT_EXEC");
	expect_refused(r, qpm.len, qpm.off, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE, EINVAL, "a ring with MAP_PRIVATE");
	if (mprotect(again, qpm.len, PROT_READ | PROT_EXEC) == 0)
		fail(r, "mprotect(PROT_EXEC) of a ring mapping succeeded");
	report(r);

	/* the memory stays with the mapping; the offset is gone */
	if (ibv_destroy_qp(q)) {
		fail(r, "destroy_qp: %s", strerror(errno));
		goto out;
	}
	q = NULL;
	if (memcmp(again + 8, &id, sizeof(id)))
		fail(r, "the ring changed under its mapping after destroy_qp");
	memset(again, 0xa5, qpm.len);
	if (again[qpm.len - 1] != 0xa5)
		fail(r, "the mapping is not writable after destroy_qp");
	expect_refused(r, qpm.len, qpm.off, PROT_READ | PROT_WRITE, MAP_SHARED,
		       EINVAL, "a destroyed QP's ring");
	report(r);
out:
	if (again != MAP_FAILED)
		munmap(again, qpm.len);
	if (qs)
		ibv_destroy_qp(qs);
	if (q)
		ibv_destroy_qp(q);
	if (srq)
		ibv_destroy_srq(srq);
	if (cq)
		ibv_destroy_cq(cq);
	buf_free(&b);
}

static void t_resize_cq(struct run *r)
{
	struct qp_cfg qc = { .recv_wr = 40 };
	struct ibv_qp *q = NULL;
	struct ibv_cq *cq;
	uint64_t ids[30];
	struct buf b = {};
	int i;

	cq = cq_new(r, 32, NULL);
	if (!cq || !buf_new(r, &b, 4096, ACC_ALL))
		goto out;
	qc.scq = qc.rcq = cq;
	q = qp_new(r, &qc);
	if (!q || !qp_to_init(r, q))
		goto out;
	for (i = 0; i < 30; i++) {
		ids[i] = wr_tag(0xc5, i);
		if (!recv_slot(r, q, NULL, ids[i], &b))
			goto out;
	}
	/* 30 flush completions wait in a CQ of 32 (the move to ERR enters
	 * them before it returns), which then grows
	 */
	if (!qp_move(r, q, IBV_QPS_ERR))
		goto out;
	if (ibv_resize_cq(cq, 3000)) {
		fail(r, "resize_cq(3000): %s", strerror(errno));
		goto out;
	}
	if (cq->cqe < 3000)
		fail(r, "resize_cq(3000) left cqe %d", cq->cqe);
	expect_flushed(r, cq, q, ids, 30);
	if (ibv_resize_cq(cq, 16) == 0)
		cq_quiet(r, cq, 10, "a shrink of the empty CQ");
	else
		fail(r, "resize_cq(16) of an empty CQ: %s", strerror(errno));
	report(r);
out:
	if (q)
		ibv_destroy_qp(q);
	if (cq)
		ibv_destroy_cq(cq);
	buf_free(&b);
}

/* --- the hostile writer --- */

struct target {
	struct umap ring;	/* the receiving QP's or SRQ's ring */
	struct umap cq;		/* the receiving QP's receive CQ */
	uint32_t slots, stride, cq_slots, lkey;
	uint64_t buf;		/* 64 KiB registered with ACC_ALL */
};

static struct target tgt;
static atomic_bool stop;
static atomic_ulong scribbles, wqes_written;

static uint32_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return (uint32_t)*s;
}

/* An index: mostly in range, sometimes just past it, sometimes anything. */
static uint32_t rnd_index(uint64_t *s, uint32_t slots)
{
	uint32_t v = rnd(s);

	switch (v % 4) {
	case 0:
		return slots + v % 3;
	case 1:
		return rnd(s);
	default:
		return v % slots;
	}
}

static void put32(unsigned char *p, uint32_t v)
{
	atomic_store_explicit((_Atomic uint32_t *)p, v, memory_order_release);
}

static void *scribbler(void *arg)
{
	uint64_t seed = (uintptr_t)arg | 1;
	struct target *t = &tgt;
	unsigned long n = 0;

	while (!atomic_load(&stop)) {
		uint32_t v = rnd(&seed), head, idx;
		unsigned char *e;

		switch (v % 8) {
		case 0:	/* the producer index of the ring */
			put32(t->ring.addr, rnd_index(&seed, t->slots));
			break;
		case 1:	/* the consumer index, which only the kernel writes */
			put32(t->ring.addr + 4, rnd_index(&seed, t->slots));
			break;
		case 2:	/* num_sge of some WQE */
			idx = rnd(&seed) % t->slots;
			t->ring.addr[8 + (size_t)idx * t->stride + 8] = (unsigned char)rnd(&seed);
			break;
		case 3:	/* the CQ's consumer index */
			put32(t->cq.addr + 4, rnd_index(&seed, t->cq_slots));
			break;
		case 4:	/* any word of the ring */
			idx = rnd(&seed) % (uint32_t)(t->ring.len / 4);
			put32(t->ring.addr + 4 * (size_t)idx, rnd(&seed));
			break;
		default: /* a valid WQE at the head, then the head moved on */
			head = atomic_load_explicit((_Atomic uint32_t *)t->ring.addr,
						    memory_order_acquire);
			if (head >= t->slots)
				head = 0;
			e = t->ring.addr + 8 + (size_t)head * t->stride;
			memcpy(e, &(uint64_t){ wr_tag(0x05, (uint32_t)n) }, 8);
			e[8] = 1;
			memcpy(e + RWQE_HDR, &(uint64_t){ t->buf + (v % 256) * 64 }, 8);
			memcpy(e + RWQE_HDR + 8, &(uint32_t){ 64 }, 4);
			memcpy(e + RWQE_HDR + 12, &t->lkey, 4);
			put32(t->ring.addr, head + 1 == t->slots ? 0 : head + 1);
			atomic_fetch_add(&wqes_written, 1);
			break;
		}
		atomic_fetch_add(&scribbles, 1);
		if (++n % 64 == 0)
			sched_yield();
	}
	return NULL;
}

/*
 * pair_new() with the receiver's rings found: the mapping each create
 * adds is told apart from the ones before it.
 */
static bool pair_tracked(struct run *r, struct pair *p, const struct pair_cfg *c)
{
	struct umap m[MAX_MAPS];
	int i, n;

	memset(p, 0, sizeof(*p));
	p->rnr_retry = c->rnr_retry;
	p->min_rnr_timer = c->min_rnr_timer;
	for (i = 0; i < 2; i++) {
		struct qp_cfg qc = { .recv_wr = c->recv_wr, .srq = i ? c->srq : NULL };

		p->scq[i] = cq_new(r, 1024, NULL);
		n = maps_read(m);
		p->rcq[i] = cq_new(r, 1024, NULL);
		if (!p->scq[i] || !p->rcq[i] ||
		    (i && !map_created(r, m, n, &tgt.cq, "create_cq")))
			return false;
		qc.scq = p->scq[i];
		qc.rcq = p->rcq[i];
		n = maps_read(m);
		p->qp[i] = qp_new(r, &qc);
		if (!p->qp[i] || !buf_new(r, &p->buf[i], 65536, ACC_ALL))
			return false;
		if (i && !c->srq && !map_created(r, m, n, &tgt.ring, "create_qp"))
			return false;
	}
	tgt.cq_slots = 1025;
	return pair_connect(r, p);
}

struct hostile_counts {
	unsigned long rounds, sends, ok, errors, post_errors;
};

/* One round: a fresh receiver (own ring or SRQ) scribbled while sent to. */
static bool hostile_round(struct run *r, bool on_srq, uint64_t seed,
			  struct hostile_counts *c)
{
	struct umap m[MAX_MAPS];
	struct pair p = {};
	struct ibv_srq *srq = NULL;
	struct pair_cfg pc = { .recv_wr = 64, .set_rnr = true, .rnr_retry = 1,
			       .min_rnr_timer = 1 };
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	pthread_t th;
	double end;
	bool ok = false;
	int n, i;

	if (on_srq) {
		n = maps_read(m);
		srq = srq_new(r, 64, 1);
		if (!srq || !map_created(r, m, n, &tgt.ring, "create_srq"))
			goto out;
		pc.srq = srq;
		tgt.slots = 65;
		ibv_modify_srq(srq, &(struct ibv_srq_attr){ .srq_limit = 8 },
			       IBV_SRQ_LIMIT);
	}
	if (!pair_tracked(r, &p, &pc))
		goto out;
	if (!on_srq) {
		if (ibv_query_qp(p.qp[1], &qa, IBV_QP_CAP, &ia))
			goto out;
		tgt.slots = ia.cap.max_recv_wr + 1;
	}
	tgt.stride = RWQE_HDR + SGE_BYTES;
	tgt.lkey = p.buf[1].mr->lkey;
	tgt.buf = (uintptr_t)p.buf[1].p;

	atomic_store(&stop, false);
	if (pthread_create(&th, NULL, scribbler, (void *)(uintptr_t)seed))
		goto out;
	end = now_ms() + 400;
	while (now_ms() < end) {
		struct ibv_sge sg = sge_at(&p.buf[0], 0, 32);
		struct ibv_send_wr wr = { .wr_id = c->sends, .sg_list = &sg,
					  .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED };
		struct ibv_send_wr *bad;
		struct ibv_wc wc[16];
		int ret, k;

		ret = ibv_post_send(p.qp[0], &wr, &bad);
		c->sends++;
		if (ret && ret != ENOMEM)
			c->post_errors++;
		k = ibv_poll_cq(p.scq[0], 16, wc);	/* never scribbled */
		for (i = 0; i < k; i++) {
			if (wc[i].status == IBV_WC_SUCCESS)
				c->ok++;
			else
				c->errors++;
			if (wc[i].status > IBV_WC_GENERAL_ERR)
				fail(r, "a send completed with status %d",
				     wc[i].status);
		}
		if (k < 0)
			fail(r, "poll_cq of the sender: %d", k);
	}
	atomic_store(&stop, true);
	pthread_join(th, NULL);
	c->rounds++;
	ok = true;
out:
	if (!ok && !r->failures)
		fail(r, "hostile round setup failed (%s)", strerror(errno));
	pair_free(&p);
	if (srq)
		ibv_destroy_srq(srq);
	return ok;
}

static void t_hostile(struct run *r)
{
	struct pair_cfg fresh = { .recv_wr = 16 };
	struct hostile_counts c = {};
	struct pair p = {};
	double end = now_ms() + hostile_seconds * 1000.0;
	uint64_t seed = 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	unsigned int i;

	while (now_ms() < end)
		if (!hostile_round(r, c.rounds % 2, seed + c.rounds, &c))
			break;
	tap_note("hostile writer: %lu rounds, %lu sends (%lu ok, %lu failed), %lu scribbles, %lu valid WQEs among them",
		 c.rounds, c.sends, c.ok, c.errors,
		 atomic_load(&scribbles), atomic_load(&wqes_written));
	if (c.post_errors)
		fail(r, "%lu post_send calls failed with an unexpected error",
		     c.post_errors);
	if (!c.ok || !c.errors)
		fail(r, "the writer reached only one path (%lu ok, %lu failed)",
		     c.ok, c.errors);
	report(r);

	/* and the device still works for this process */
	if (pair_new(r, &p, &fresh)) {
		for (i = 0; i < 3; i++)
			if (!recv_slot(r, p.qp[1], NULL, wr_tag(0xaf, i), &p.buf[1]))
				break;
		for (i = 0; i < 3; i++)
			if (!deliver(r, &p, wr_tag(0xaf, i)))
				break;
	}
	pair_free(&p);
	report(r);
}

static const struct tap_group groups[] = {
	{ "mapping", t_mapping, {
		"create_cq, create_qp and create_srq map one ring each, a QP on an SRQ none",
		"a second mmap of a ring's offset shares the ring the provider writes",
		"mmap with an unknown offset, a wrong size, PROT_EXEC or MAP_PRIVATE is refused, and so is mprotect to PROT_EXEC",
		"a mapping outlives its QP (same bytes, writable); the offset then maps nothing",
	} },
	{ "resize cq", t_resize_cq, {
		"resize_cq with 30 completions waiting: the remapped ring holds them in order; shrinking an empty CQ works",
	} },
	{ "hostile writer", t_hostile, {
		"random head, tail, num_sge and words in a receiver's mapped rings while sends arrive: every verb returns, both outcomes seen",
		"afterwards a fresh QP pair of the same process sends and receives correctly",
	} },
};

int main(int argc, char **argv)
{
	const char *setup_error, *name = NULL;
	int opt;

	while ((opt = getopt(argc, argv, "d:g:t:")) != -1) {
		if (opt == 'd')
			name = optarg;
		else if (opt == 'g')	/* GID index, on an Ethernet port */
			env.gid_index = atoi(optarg);
		else if (opt == 't')
			hostile_seconds = (unsigned int)atoi(optarg);
		else
			return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	tap_plan_groups(groups, ARRAY_SIZE(groups));
	setup_error = env_open(name);
	if (!setup_error && env.abi < 2)
		setup_error = "the device maps no rings (uverbs ABI below 2)";
	tap_run_groups(groups, ARRAY_SIZE(groups), setup_error);
	env_close();
	return tap_finish();
}
