// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_test.c - krwq_verbs_test: the receive queue semantics of an RDMA
 * device checked end to end through libibverbs alone.
 *
 *   krwq_verbs_test [-d DEVICE] [-g GID_INDEX]
 *
 * It checks, on one device and port 1, with QPs connected to each other
 * over loopback:
 *  - ibv_post_recv / ibv_post_srq_recv: exact capacity (ENOMEM, bad_wr at
 *    the first WR that did not fit, the earlier ones posted), num_sge over
 *    the limit (EINVAL), posting in RESET, in ERR (flushed at once) and on
 *    a QP that uses an SRQ;
 *  - the move to ERR flushing every posted receive in posting order, reuse
 *    after RESET without stale entries, destroy without completions;
 *  - the SRQ: its limit event (once, then re-armed), resize keeping the
 *    posted WRs in order and refusing sizes below them, a QP on it moved
 *    to ERR or taking a WR with a bad lkey;
 *  - what receives get: RC SEND / SEND_WITH_IMM of 0 bytes to 1 MiB
 *    scattered over 1..4 SGEs from 1..4 SGEs, RDMA WRITE / WRITE_WITH_IMM
 *    / READ, a receive too small, RNR, a bad rkey, a bad lkey, UD with
 *    its GRH room and Q_Key, and the completion channel.
 *
 * The output is TAP version 13; the last line is "P passed, F failed" and
 * the exit status is 0 iff nothing failed.  On an Ethernet link layer
 * (rxe) addresses carry a GRH with GID index GID_INDEX (default 0); on
 * InfiniBand they use the port's LID.  Every wait is bounded, so a
 * missing completion or event fails its check instead of hanging.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checks.h"
#include "vt.h"

static const struct tap_group groups[] = {
	{ "rq capacity", t_rq_capacity, {
		"max_recv_wr single posts fit, the next gets ENOMEM with bad_wr at it",
		"a list overflowing midway gets ENOMEM with bad_wr at the first WR that did not fit",
		"the move to ERR flushes exactly the WRs that fit, in posting order",
	} },
	{ "rq num_sge", t_rq_sge, {
		"num_sge over max_recv_sge gets EINVAL with bad_wr at that WR",
		"the WRs before it stay posted (flushed in order)",
	} },
	{ "rq RESET", t_rq_reset, {
		"post_recv on a new QP (RESET) fails at once with bad_wr at the WR (ABI 2: the kernel publishes the ring full, the provider says ENOMEM)",
		"nothing posted in RESET is kept: after INIT the RQ takes its whole capacity and ERR flushes exactly that; after ERR -> RESET the same again",
	} },
	{ "rq on SRQ", t_rq_on_srq, {
		"a QP that uses an SRQ: post_recv is rejected with bad_wr at the WR (ABI 1); no receive ring is mapped for it (ABI 2)",
	} },
	{ "rq flush", t_rq_flush, {
		"a full RQ whose ring wrapped: ENOMEM, then ERR flushes every WR in order (FLUSH_ERR, RECV, wr_id, qp_num)",
	} },
	{ "rq ERR", t_rq_post_in_err, {
		"post_recv in ERR completes each WR with IBV_WC_WR_FLUSH_ERR (at once with ABI 1, by the kernel's re-flush of mapped rings with ABI 2), nothing stays queued",
	} },
	{ "rq reuse", t_rq_reuse, {
		"ERR, RESET, INIT, RTR, RTS: a send takes the receive posted since, not a stale one",
		"after RESET the move to ERR flushes only the receives posted since",
	} },
	{ "rq destroy", t_rq_destroy, {
		"destroy_qp with receives posted gives no completions",
	} },
	{ "srq capacity", t_srq_capacity, {
		"max_wr posts fit, the next gets ENOMEM with bad_wr at it",
		"a list overflowing midway: ENOMEM, bad_wr at the first WR that did not fit; sends take exactly the WRs that fit, in order",
		"num_sge over max_sge gets EINVAL with bad_wr at that WR, the WRs before it stay posted",
	} },
	{ "srq limit", t_srq_limit, {
		"no IBV_EVENT_SRQ_LIMIT_REACHED while the SRQ holds limit WRs",
		"exactly one IBV_EVENT_SRQ_LIMIT_REACHED when it drops below the limit",
		"query_srq reports srq_limit 0 after the event",
		"a re-armed limit fires again, exactly when the SRQ drops below it",
	} },
	{ "srq modify", t_srq_modify, {
		"srq_limit above max_wr gets EINVAL and changes nothing",
		"resizing a full, wrapped SRQ keeps its WRs in posting order",
		"resizing below the posted count gets EINVAL and loses nothing",
	} },
	{ "srq QP error", t_srq_qp_error, {
		"a QP on an SRQ moved to ERR: IBV_EVENT_QP_LAST_WQE_REACHED, no flush, another QP takes the WRs",
	} },
	{ "srq bad lkey", t_srq_bad_lkey, {
		"a WR with a bad lkey fails only its taker (IBV_WC_LOC_PROT_ERR); another QP takes the rest in order, then nothing",
	} },
	{ "rc send", t_rc_send, {
		"SEND of 0 B to 1 MiB: payload, byte_len, IBV_WC_RECV and the send completion",
		"SEND of 0 B to 1 MiB from 1..4 SGEs into 1..4 uneven SGEs: every byte where it belongs",
		"SEND_WITH_IMM: IBV_WC_WITH_IMM and imm_data",
		"RC receive completions carry the sender's QP number in src_qp",
	} },
	{ "rdma", t_rdma, {
		"RDMA WRITE lands and consumes no receive",
		"RDMA WRITE_WITH_IMM lands and consumes one receive: IBV_WC_RECV_RDMA_WITH_IMM, byte_len, imm_data",
		"RDMA READ into 3 SGEs",
		"RDMA WRITE to an MR without IBV_ACCESS_REMOTE_WRITE: IBV_WC_REM_ACCESS_ERR, memory unchanged",
	} },
	{ "short receive", t_short_recv, {
		"receive too small: IBV_WC_LOC_LEN_ERR for it, IBV_WC_REM_INV_REQ_ERR for the send",
		"receive too small: both QPs end in ERR",
	} },
	{ "rnr", t_rnr, {
		"no receive, rnr_retry 1: IBV_WC_RNR_RETRY_EXC_ERR",
		"rnr_retry 7, receive posted 50 ms late: the send completes successfully",
	} },
	{ "ud", t_ud, {
		"UD: byte_len = size + 40, payload at offset 40, src_qp, immediate data",
		"UD: a wrong qkey is dropped silently, the send still succeeds",
	} },
	{ "cq channel", t_cq_channel, {
		"req_notify_cq: no event before a completion, one after a receive completes",
	} },
	{ "bad lkey", t_bad_lkey, {
		"a receive with a bad lkey: IBV_WC_LOC_PROT_ERR for it, an error for the send",
	} },
};

static void usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-d DEVICE] [-g GID_INDEX]\n", prog);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *name = NULL;
	char *end;
	int opt;

	while ((opt = getopt(argc, argv, "d:g:h")) != -1) {
		switch (opt) {
		case 'd':
			name = optarg;
			break;
		case 'g':
			errno = 0;
			env.gid_index = (int)strtol(optarg, &end, 0);
			if (errno || *end || env.gid_index < 0)
				usage(argv[0]);
			break;
		default:
			usage(argv[0]);
		}
	}
	if (optind != argc)
		usage(argv[0]);
	setvbuf(stdout, NULL, _IOLBF, 0);

	tap_plan_groups(groups, ARRAY_SIZE(groups));
	tap_run_groups(groups, ARRAY_SIZE(groups), env_open(name));
	env_close();
	return tap_finish();
}
