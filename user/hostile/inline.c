// SPDX-License-Identifier: GPL-2.0
/*
 * inline.c - krwq_hostile verbs: a user QP's inline payloads while another
 * thread of the same process keeps its send queue moving.
 *
 * The kernel reads a user QP's inline payloads before it takes the send
 * queue's lock, and a long list lets interrupts in (drops the lock) on its
 * way.  Another thread posting to the same QP meanwhile runs the queue and
 * frees slots, so a list could go on past what was read in advance.  Each
 * round posts one 200-WR list, in one uverbs POST_SEND, to a UD QP of
 * max_send_wr 64 and max_inline_data 512 (WQEs large enough that the list
 * crosses 16 KiB windows before the queue fills), while a second thread
 * posts single WRs to a QP number nobody has.  The lists come
 * in two shapes: 130 plain WRs then 70 inline ones, and 30 plain then 170
 * inline.  What must hold:
 *  - one post queues at most max_send_wr WRs: ENOMEM, and bad_wr no later
 *    than the 65th WR, whatever the other thread completes meanwhile;
 *  - every queued WR completes once, successfully;
 *  - every inline payload that arrives is the one that was posted (not
 *    bytes of the kernel's heap);
 *  - alone on an idle queue, a 200-WR list queues exactly 64: bad_wr is
 *    the 65th WR.
 * A read through a NULL or past a buffer in the kernel shows as a splat
 * the VM runner fails the boot on (KASAN, in the test kernel).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>

#include "hostile.h"
#include "raw.h"
#include "vt.h"

#define SQ_WR		64
#define LIST_WR		200
#define PAYLOAD		16		/* bytes of one inline payload */
#define ROUNDS		400
#define SECONDS		8
#define NOBODY_QPN	0xfffff0u	/* no QP of the device has it */
#define B_WR		(1ull << 63)	/* wr_id of the other thread's WRs */
#define RECVS		256
#define FILLER		0xa5

struct race {
	struct pair p;
	pthread_mutex_t cq_lock;	/* p.scq[0] is polled by both threads */
	int stop;			/* __atomic */
	unsigned long a_posted, a_done, b_posted, b_done, errors;
	struct ibv_wc first_error;
};

/* Polls the sender's CQ empty, counting each thread's completions. */
static void drain(struct race *x)
{
	struct ibv_wc wc[16];
	int i, n;

	pthread_mutex_lock(&x->cq_lock);
	while ((n = ibv_poll_cq(x->p.scq[0], 16, wc)) > 0)
		for (i = 0; i < n; i++) {
			if (wc[i].wr_id & B_WR)
				x->b_done++;
			else
				x->a_done++;
			if (wc[i].status != IBV_WC_SUCCESS && !x->errors++)
				x->first_error = wc[i];
		}
	pthread_mutex_unlock(&x->cq_lock);
}

static void ud_to(struct ibv_send_wr *wr, struct race *x, uint32_t qpn)
{
	wr->opcode = IBV_WR_SEND;
	wr->send_flags = IBV_SEND_SIGNALED;
	wr->wr.ud.ah = x->p.ah;
	wr->wr.ud.remote_qpn = qpn;
	wr->wr.ud.remote_qkey = UD_QKEY;
}

/* The other thread: single WRs to nobody, each one runs the queue. */
static void *other_poster(void *arg)
{
	struct race *x = arg;
	struct ibv_sge sg = sge_at(&x->p.buf[0], 0, 8);
	struct ibv_send_wr wr, *bad;
	unsigned long n = 0;

	while (!__atomic_load_n(&x->stop, __ATOMIC_ACQUIRE)) {
		memset(&wr, 0, sizeof(wr));
		ud_to(&wr, x, NOBODY_QPN);
		wr.wr_id = B_WR | n++;
		wr.sg_list = &sg;
		wr.num_sge = 1;
		if (!ibv_post_send(x->p.qp[0], &wr, &bad))
			x->b_posted++;
		drain(x);
	}
	return NULL;
}

/* What an inline payload of WR @i of round @round carries. */
static void payload(unsigned char *p, uint32_t round, uint32_t i)
{
	memcpy(p, &round, 4);
	memcpy(p + 4, &i, 4);
	memset(p + 8, FILLER, PAYLOAD - 8);
}

/*
 * One round's list: @plain WRs to nobody, then inline ones to qp[1], in
 * one uverbs POST_SEND written to the device file.  (rdma-core's
 * ipathverbs cuts a list of more than 10 WRs into a system call per few
 * WRs, so ibv_post_send() never hands the kernel a long list; any process
 * can.)  Return: the WRs queued; *@ret is 0 or the errno of the write.
 */
static unsigned int post_list(struct race *x, uint32_t round,
			      unsigned int plain, int *ret)
{
	static struct {
		struct ib_uverbs_post_send c;
		struct ib_uverbs_send_wr wr[LIST_WR];
		struct ib_uverbs_sge sge[LIST_WR];
	} m;
	static unsigned char data[LIST_WR][PAYLOAD];
	struct ib_uverbs_post_send_resp resp = { 0 };
	unsigned int i;

	memset(&m, 0, sizeof(m));
	m.c.qp_handle = x->p.qp[0]->handle;
	m.c.wr_count = LIST_WR;
	m.c.sge_count = LIST_WR;
	m.c.wqe_size = sizeof(m.wr[0]);
	for (i = 0; i < LIST_WR; i++) {
		struct ib_uverbs_send_wr *w = &m.wr[i];

		w->wr_id = (uint64_t)round << 16 | i;
		w->num_sge = 1;
		w->opcode = IBV_WR_SEND;
		w->send_flags = IBV_SEND_SIGNALED;
		w->wr.ud.ah = x->p.ah->handle;
		w->wr.ud.remote_qkey = UD_QKEY;
		if (i < plain) {
			struct ibv_sge sg = sge_at(&x->p.buf[0], 0, 8);

			w->wr.ud.remote_qpn = NOBODY_QPN;
			m.sge[i].addr = sg.addr;
			m.sge[i].length = sg.length;
			m.sge[i].lkey = sg.lkey;
		} else {
			w->wr.ud.remote_qpn = x->p.qp[1]->qp_num;
			w->send_flags |= IBV_SEND_INLINE;
			payload(data[i], round, i);
			m.sge[i].addr = (uintptr_t)data[i];
			m.sge[i].length = PAYLOAD;
		}
	}
	*ret = -raw_cmd(x->p.qp[0]->context->cmd_fd,
			IB_USER_VERBS_CMD_POST_SEND, &m, sizeof(m), &resp,
			sizeof(resp));
	/* bad_wr counts the WRs up to and including the one refused */
	if (!*ret)
		return LIST_WR;
	return resp.bad_wr ? resp.bad_wr - 1 : 0;
}

/*
 * Checks and re-posts what qp[1] received.  Return: the payloads that
 * arrived; *@wrong counts those not as posted, *@why tells the first.
 */
static unsigned int take_received(struct race *x, unsigned int *wrong,
				  char *why, size_t whylen)
{
	unsigned char want[PAYLOAD];
	struct ibv_wc wc[16];
	unsigned int got = 0;
	struct run r = { 0 };
	int i, n;

	while ((n = ibv_poll_cq(x->p.rcq[1], 16, wc)) > 0)
		for (i = 0; i < n; i++) {
			const unsigned char *p = x->p.buf[1].p +
				(wc[i].wr_id % 1024) * SLOT + 40;
			uint32_t round, idx;

			got++;
			memcpy(&round, p, 4);
			memcpy(&idx, p + 4, 4);
			payload(want, round, idx);
			if (wc[i].status != IBV_WC_SUCCESS ||
			    wc[i].byte_len != 40 + PAYLOAD ||
			    idx >= LIST_WR || memcmp(p, want, PAYLOAD)) {
				if (!(*wrong)++)
					snprintf(why, whylen,
						 "received %s; payload %02x %02x %02x %02x %02x %02x %02x %02x ... %02x",
						 wc_str(&wc[i]), p[0], p[1], p[2], p[3],
						 p[4], p[5], p[6], p[7], p[PAYLOAD - 1]);
			}
			recv_slot(&r, x->p.qp[1], NULL, wc[i].wr_id, &x->p.buf[1]);
		}
	return got;
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

void inline_race_checks(void)
{
	struct pair_cfg pc = {
		.type = IBV_QPT_UD, .send_wr = SQ_WR, .recv_wr = RECVS,
		.max_inline = 512,
	};
	unsigned int rounds = 0, most = 0, not_enomem = 0, received = 0;
	unsigned int wrong = 0, queued;
	char why[600] = "", badwhy[300] = "";
	struct race x = { 0 };
	struct run r = { 0 };
	pthread_t other;
	double end;
	int ret, i;

	pthread_mutex_init(&x.cq_lock, NULL);
	if (!pair_new(&r, &x.p, &pc)) {
		tap_result(false, "inline race: a UD pair of max_send_wr 64, max_inline_data 512",
			   r.why[0]);
		goto out;
	}
	{
		struct ibv_qp_cap cap;

		if (qp_caps(&r, x.p.qp[0], &cap))
			tap_note("inline race: the sender has max_send_wr %u, max_inline_data %u",
				 cap.max_send_wr, cap.max_inline_data);
	}
	for (i = 0; i < RECVS; i++)
		if (!recv_slot(&r, x.p.qp[1], NULL, i, &x.p.buf[1]))
			break;
	if (pthread_create(&other, NULL, other_poster, &x)) {
		tap_result(false, "inline race: start the other thread", strerror(errno));
		goto out;
	}
	end = now() + SECONDS;
	for (; rounds < ROUNDS && now() < end; rounds++) {
		queued = post_list(&x, rounds, rounds % 2 ? 30 : 130, &ret);
		x.a_posted += queued;
		if (queued > most)
			most = queued;
		if (ret != ENOMEM && !not_enomem++)
			snprintf(badwhy, sizeof(badwhy),
				 "round %u: POST_SEND returned %d (%s), %u WRs queued",
				 rounds, ret, ret ? strerror(ret) : "success", queued);
		drain(&x);
		received += take_received(&x, &wrong, why, sizeof(why));
	}
	__atomic_store_n(&x.stop, 1, __ATOMIC_RELEASE);
	pthread_join(other, NULL);
	for (end = now() + 10; now() < end; usleep(10000)) {
		drain(&x);
		received += take_received(&x, &wrong, why, sizeof(why));
		if (x.a_done == x.a_posted && x.b_done == x.b_posted)
			break;
	}
	tap_note("inline race: %u rounds, %lu of the lists' WRs and %lu single WRs queued, %u payloads received",
		 rounds, x.a_posted, x.b_posted, received);

	{
		char s[300];

		snprintf(s, sizeof(s), "%u of %u rounds did not return ENOMEM, most WRs queued by one post %u: %s",
			 not_enomem, rounds, most, badwhy);
		tap_result(rounds > 0 && !not_enomem && most <= SQ_WR,
			   "inline race: a 200-WR list to a queue of 64 queues at most 64 and returns ENOMEM, while another thread drains it",
			   s);
		snprintf(s, sizeof(s), "lists: %lu queued, %lu completed; single: %lu queued, %lu completed; %lu in error, the first %s",
			 x.a_posted, x.a_done, x.b_posted, x.b_done, x.errors,
			 x.errors ? wc_str(&x.first_error) : "-");
		tap_result(x.a_done == x.a_posted && x.b_done == x.b_posted &&
			   !x.errors,
			   "inline race: every queued WR completed once, successfully", s);
		snprintf(s, sizeof(s), "%u of %u not as posted: %s", wrong, received,
			 received ? why : "nothing arrived");
		tap_result(received > 0 && !wrong,
			   "inline race: every inline payload received is the one posted", s);
	}

	/* alone, on the idle queue: exactly the queue's depth */
	queued = post_list(&x, ROUNDS, 30, &ret);
	x.a_posted += queued;
	{
		char s[200];

		snprintf(s, sizeof(s), "POST_SEND returned %d (%s), bad_wr is WR %u",
			 ret, ret ? strerror(ret) : "success", queued);
		tap_result(ret == ENOMEM && queued == SQ_WR,
			   "inline: a 200-WR list to an idle queue of 64 returns ENOMEM at the 65th WR",
			   s);
	}
	for (end = now() + 10; now() < end && x.a_done < x.a_posted; usleep(10000))
		drain(&x);
	tap_result(qp_state(x.p.qp[0]) == IBV_QPS_RTS && x.a_done == x.a_posted,
		   "inline race: the sender is still in RTS with nothing left over",
		   state_str(qp_state(x.p.qp[0])));
out:
	pair_free(&x.p);
	pthread_mutex_destroy(&x.cq_lock);
}
