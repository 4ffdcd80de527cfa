// SPDX-License-Identifier: GPL-2.0
/*
 * post_rate.c - krwq_post_rate: how many ibv_post_recv calls per second a
 * device takes, one WR of one SGE per call.
 *
 *   krwq_post_rate [-d DEVICE] [-t SECONDS] [-q DEPTH]
 *
 * Fills a QP's receive queue (in INIT, so nothing consumes it) DEPTH posts
 * at a time; only the posts are timed.  Between fills the QP goes to ERR,
 * the flush completions are polled, and back through RESET to INIT.
 * Prints "post_recv_calls_per_s=N posts=N seconds=S abi=N".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vt.h"

static double elapsed_s(double since_ms)
{
	return (now_ms() - since_ms) / 1000.0;
}

static bool refill_cycle(struct run *r, struct ibv_qp *qp, struct ibv_cq *cq,
			 struct buf *b, unsigned int depth, double *posting)
{
	struct ibv_sge sg = sge_at(b, 0, 64);
	struct ibv_recv_wr wr = { .sg_list = &sg, .num_sge = 1 }, *bad;
	struct ibv_wc wc[64];
	unsigned int i, got = 0;
	double t0;
	int n;

	t0 = now_ms();
	for (i = 0; i < depth; i++) {
		wr.wr_id = i;
		if (ibv_post_recv(qp, &wr, &bad))
			return fail(r, "post %u of %u failed", i + 1, depth);
	}
	*posting += elapsed_s(t0);
	if (!qp_move(r, qp, IBV_QPS_ERR))
		return false;
	t0 = now_ms();
	while (got < depth && now_ms() - t0 < TIMEOUT_MS) {
		n = ibv_poll_cq(cq, 64, wc);
		if (n < 0)
			return fail(r, "poll_cq: %d", n);
		got += n;
	}
	if (got != depth)
		return fail(r, "%u of %u flushes completed", got, depth);
	return qp_move(r, qp, IBV_QPS_RESET) && qp_to_init(r, qp);
}

int main(int argc, char **argv)
{
	struct run r = { .group = "post rate" };
	unsigned int seconds = 3, depth = 4096;
	unsigned long posts = 0;
	double posting = 0, start;
	struct ibv_qp *qp = NULL;
	struct ibv_cq *cq = NULL;
	struct buf b = {};
	const char *name = NULL, *why;
	int opt, ret = 1;

	while ((opt = getopt(argc, argv, "d:t:q:")) != -1) {
		if (opt == 'd')
			name = optarg;
		else if (opt == 't')
			seconds = (unsigned int)atoi(optarg);
		else if (opt == 'q')
			depth = (unsigned int)atoi(optarg);
		else
			return 2;
	}
	why = env_open(name);
	if (why) {
		fprintf(stderr, "krwq_post_rate: %s\n", why);
		return 1;
	}
	cq = cq_new(&r, 2 * depth, NULL);
	if (cq && buf_new(&r, &b, 4096, ACC_ALL)) {
		struct qp_cfg qc = { .scq = cq, .rcq = cq, .recv_wr = depth };

		qp = qp_new(&r, &qc);
	}
	if (!qp || !qp_to_init(&r, qp))
		goto out;
	start = now_ms();
	while (elapsed_s(start) < seconds) {
		if (!refill_cycle(&r, qp, cq, &b, depth, &posting))
			goto out;
		posts += depth;
	}
	printf("post_recv_calls_per_s=%.0f posts=%lu seconds=%.3f abi=%d\n",
	       posts / posting, posts, posting, env.abi);
	ret = 0;
out:
	if (r.failures)
		fprintf(stderr, "krwq_post_rate: %s\n", r.why[0]);
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
	buf_free(&b);
	env_close();
	return ret;
}
