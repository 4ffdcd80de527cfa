// SPDX-License-Identifier: GPL-2.0
/*
 * data_checks.c - what a receive gets: RC SEND and SEND_WITH_IMM over
 * loopback between two QPs of the device, for sizes from 0 to 1 MiB and
 * scatter/gather layouts of 1..4 SGEs on either side; RDMA WRITE,
 * WRITE_WITH_IMM (which consumes a receive) and READ; the errors of a
 * receive that is too small, of RNR, of a bad rkey and of a bad lkey in
 * a receive; UD with its 40 bytes of GRH room and Q_Key check; and the
 * completion channel.
 *
 * Memory is compared as a whole image: every byte around and between the
 * SGEs is preset to a guard value, so a write past byte_len or into a gap
 * fails as surely as a wrong payload.
 */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "checks.h"
#include "vt.h"

#define GUARD	0xa5
#define BIG	(1u << 20)

static const uint32_t sizes[] = {
	0, 1, 7, 64, 4095, 4096, 4097, 65536, BIG,
};

/*
 * Compares p[0..n) with the expected image; on a mismatch, fails naming
 * the first differing offset (relative to @base_off).
 */
static bool same(struct run *r, const unsigned char *p, const unsigned char *want,
		 size_t n, size_t base_off, const char *what)
{
	size_t i;

	if (!memcmp(p, want, n))
		return true;
	for (i = 0; i < n && p[i] == want[i]; i++)
		;
	return fail(r, "%s: byte at offset %zu is 0x%02x, want 0x%02x", what,
		    base_off + i, p[i], want[i]);
}

/* Splits len into n pieces with uneven weights; each >= 1 if len >= n. */
static void split(uint32_t len, int n, const unsigned int *w, uint32_t *out)
{
	unsigned int total = 0;
	uint32_t used = 0;
	int i;

	for (i = 0; i < n; i++)
		total += w[i];
	for (i = 0; i < n; i++) {
		uint32_t piece = (uint64_t)len * w[i] / total;

		if (len >= (uint32_t)n * 16 && piece == 0)
			piece = 1;
		if (len < (uint32_t)n * 16)
			piece = len / n;	/* small: even */
		out[i] = i == n - 1 ? len - used : piece;
		used += out[i];
	}
}

/* --- RC SEND --- */

struct rc {
	struct pair p;
	struct buf src, dst;	/* BIG + 64 KiB each */
	unsigned char *image;	/* what dst must look like */
	uint32_t seq;
	unsigned int recvs, bad_src;	/* receive completions, wrong src_qp */
	uint32_t last_src;
};

/*
 * One message from ss[0..ns) into rs[0..nr) (both in c->src / c->dst).
 * Checks both completions, byte_len, immediate data and the image of dst
 * up to @extent.
 */
static bool rc_message(struct run *r, struct rc *c, struct ibv_sge *ss, int ns,
		       struct ibv_sge *rs, int nr, size_t extent, bool imm)
{
	uint64_t sid = 0x5d00000000000000ull + ++c->seq;
	uint64_t rid = 0x7d00000000000000ull + c->seq;
	uint32_t immv = 0x1e000000u + c->seq, len = 0, done = 0;
	struct ibv_wc wc;
	char what[96];
	int i;

	for (i = 0; i < ns; i++)
		len += ss[i].length;
	snprintf(what, sizeof(what), "%u bytes, %d send SGE(s) -> %d receive SGE(s)%s",
		 len, ns, nr, imm ? ", with immediate" : "");

	memset(c->dst.p, GUARD, extent);
	memset(c->image, GUARD, extent);
	/* the image: the send SGEs' bytes in order, scattered over rs */
	for (i = 0; i < nr && done < len; i++) {
		unsigned char *to = c->image + (rs[i].addr - (uintptr_t)c->dst.p);
		uint32_t room = rs[i].length;

		while (room && done < len) {
			int j;
			uint32_t at = done, n;
			const struct ibv_sge *from = NULL;

			for (j = 0; j < ns; j++) {
				if (at < ss[j].length) {
					from = &ss[j];
					break;
				}
				at -= ss[j].length;
			}
			n = from->length - at;
			if (n > room)
				n = room;
			memcpy(to, (unsigned char *)(uintptr_t)from->addr + at, n);
			to += n;
			room -= n;
			done += n;
		}
	}

	if (!recv_post(r, c->p.qp[1], NULL, rid, rs, nr) ||
	    !pair_send(r, &c->p, sid, imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		       ss, ns, immv) ||
	    !cq_get(r, c->p.scq[0], &wc, what) ||
	    !wc_is(r, &wc, sid, IBV_WC_SUCCESS, IBV_WC_SEND, c->p.qp[0]->qp_num,
		   what) ||
	    !cq_get(r, c->p.rcq[1], &wc, what) ||
	    !wc_is(r, &wc, rid, IBV_WC_SUCCESS, IBV_WC_RECV, c->p.qp[1]->qp_num,
		   what))
		return false;
	c->recvs++;
	if (wc.src_qp != c->p.qp[0]->qp_num) {
		c->bad_src++;
		c->last_src = wc.src_qp;
	}
	if (wc.byte_len != len)
		return fail(r, "%s: byte_len %u", what, wc.byte_len);
	if (imm && (!(wc.wc_flags & IBV_WC_WITH_IMM) || wc.imm_data != htobe32(immv)))
		return fail(r, "%s: wc_flags 0x%x imm_data 0x%x, want IBV_WC_WITH_IMM and 0x%x",
			    what, wc.wc_flags, be32toh(wc.imm_data), immv);
	if (!imm && (wc.wc_flags & IBV_WC_WITH_IMM))
		return fail(r, "%s: IBV_WC_WITH_IMM set for a plain SEND", what);
	return same(r, c->dst.p, c->image, extent, 0, what);
}

/* Sends of every size from one SGE into one SGE with 64 bytes to spare. */
static void rc_plain(struct run *r, struct rc *c)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sizes) && !r->failures; i++) {
		struct ibv_sge ss = sge_at(&c->src, 0, sizes[i]);
		struct ibv_sge rs = sge_at(&c->dst, 0, sizes[i] + 64);

		fill(c->src.p, sizes[i], sizes[i]);
		rc_message(r, c, &ss, sizes[i] ? 1 : 0, &rs, 1, sizes[i] + 128,
			   false);
	}
}

/*
 * Every size from 1..4 send SGEs into 1..4 receive SGEs: the receive
 * SGEs lie in reverse order in memory with gaps between them and hold a
 * few bytes more than the message; the send SGEs have gaps too.
 */
static void rc_scatter(struct run *r, struct rc *c)
{
	static const unsigned int wr_[] = { 5, 1, 3, 2 }, ws[] = { 2, 7, 1, 4 };
	unsigned int i;
	int nr, ns;

	for (i = 0; i < ARRAY_SIZE(sizes) && !r->failures; i++) {
		uint32_t len = sizes[i];

		fill(c->src.p, len + 4 * 24 + 8, len ^ 0x5ca7);
		for (nr = 1; nr <= 4 && !r->failures; nr++) {
			for (ns = 1; ns <= 4 && !r->failures; ns++) {
				struct ibv_sge rs[4], ss[4];
				uint32_t rl[4], sl[4];
				size_t off = 40;
				int n = len < (uint32_t)ns ? (int)len : ns, k;

				split(len + 3 * nr + 1, nr, wr_, rl);
				for (k = nr - 1; k >= 0; k--) {
					rs[k] = sge_at(&c->dst, off, rl[k]);
					off += rl[k] + 40;
				}
				split(len, n, ws, sl);
				for (k = 0, off = 8; k < n; k++) {
					ss[k] = sge_at(&c->src, off, sl[k]);
					off += sl[k] + 24;
				}
				rc_message(r, c, ss, n, rs, nr,
					   len + 3 * nr + 1 + 40 * (nr + 1), false);
			}
		}
	}
}

static void rc_imm(struct run *r, struct rc *c)
{
	static const uint32_t isz[] = { 0, 13, 4096 };
	unsigned int i;

	for (i = 0; i < 3 && !r->failures; i++) {
		struct ibv_sge ss = sge_at(&c->src, 0, isz[i]);
		struct ibv_sge rs = sge_at(&c->dst, 0, isz[i] + 64);

		fill(c->src.p, isz[i], isz[i] + 77);
		rc_message(r, c, &ss, isz[i] ? 1 : 0, &rs, 1, isz[i] + 128, true);
	}
}

void t_rc_send(struct run *r)
{
	struct pair_cfg pc = { .recv_wr = 16, .recv_sge = 4, .send_sge = 4 };
	struct rc c = {};

	c.image = malloc(BIG + 65536);
	if (!c.image || !pair_new(r, &c.p, &pc) ||
	    !buf_new(r, &c.src, BIG + 65536, IBV_ACCESS_LOCAL_WRITE) ||
	    !buf_new(r, &c.dst, BIG + 65536, IBV_ACCESS_LOCAL_WRITE))
		goto out;
	rc_plain(r, &c);
	report(r);
	rc_scatter(r, &c);
	report(r);
	rc_imm(r, &c);
	report(r);
	if (!c.recvs)
		fail(r, "no receive completed");
	else if (c.bad_src)
		fail(r, "%u of %u receive completions had src_qp %u, want %u",
		     c.bad_src, c.recvs, c.last_src, c.p.qp[0]->qp_num);
	report(r);
out:
	pair_free(&c.p);
	buf_free(&c.src);
	buf_free(&c.dst);
	free(c.image);
}

/* --- RDMA --- */

static bool rdma_post(struct run *r, struct pair *p, uint64_t wr_id,
		      enum ibv_wr_opcode op, struct ibv_sge *sg, int n,
		      uint64_t raddr, uint32_t rkey, uint32_t imm)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = sg,
		.num_sge = n,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htobe32(imm),
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	};

	return pair_post(r, p, &wr);
}

void t_rdma(struct run *r)
{
	struct pair_cfg pc = { .recv_sge = 4, .send_sge = 4 };
	unsigned char *image = NULL;
	struct buf rb = {}, ro = {};
	struct ibv_sge sg[3];
	struct pair p = {}, q = {};
	unsigned char *local, *remote;
	struct ibv_wc wc;
	uint64_t raddr;
	uint32_t rkey;

	image = malloc(65536);
	if (!image || !pair_new(r, &p, &pc) ||
	    !buf_new(r, &rb, 65536, IBV_ACCESS_LOCAL_WRITE))
		goto out;
	local = p.buf[0].p;
	remote = p.buf[1].p;
	raddr = (uintptr_t)remote;
	rkey = p.buf[1].mr->rkey;

	/* WRITE: lands, and takes no receive (the next SEND takes it) */
	memset(remote, GUARD, 65536);
	memset(image, GUARD, 65536);
	fill(local, 16384, 0x3717);
	memcpy(image + 100, local, 3000);
	memcpy(image + 3100, local + 8192, 7000);
	sg[0] = sge_at(&p.buf[0], 0, 3000);
	sg[1] = sge_at(&p.buf[0], 8192, 7000);
	if (!recv_slot(r, p.qp[1], NULL, 0xabc1, &rb) ||
	    !rdma_post(r, &p, 0xd1, IBV_WR_RDMA_WRITE, sg, 2, raddr + 100, rkey, 0) ||
	    !cq_get(r, p.scq[0], &wc, "the RDMA WRITE") ||
	    !wc_is(r, &wc, 0xd1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
		   p.qp[0]->qp_num, "the RDMA WRITE"))
		goto out;
	same(r, remote, image, 65536, 0, "target of the RDMA WRITE");
	if (cq_quiet(r, p.rcq[1], QUIET_MS, "an RDMA WRITE must take no receive"))
		deliver(r, &p, 0xabc1);
	report(r);

	/* WRITE_WITH_IMM: lands, and takes one receive without using its SGE */
	memset(rb.p, 0x5a, rb.len);
	fill(local + 20000, 3000, 0x3718);
	memcpy(image + 20000, local + 20000, 3000);
	sg[0] = sge_at(&p.buf[0], 20000, 3000);
	if (!recv_slot(r, p.qp[1], NULL, 0xabc2, &rb) ||
	    !rdma_post(r, &p, 0xd2, IBV_WR_RDMA_WRITE_WITH_IMM, sg, 1,
		       raddr + 20000, rkey, 0xfeedbeef) ||
	    !cq_get(r, p.scq[0], &wc, "the RDMA WRITE_WITH_IMM") ||
	    !wc_is(r, &wc, 0xd2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
		   p.qp[0]->qp_num, "the RDMA WRITE_WITH_IMM") ||
	    !cq_get(r, p.rcq[1], &wc, "the receive of WRITE_WITH_IMM") ||
	    !wc_is(r, &wc, 0xabc2, IBV_WC_SUCCESS, IBV_WC_RECV_RDMA_WITH_IMM,
		   p.qp[1]->qp_num, "the receive of WRITE_WITH_IMM"))
		goto out;
	if (wc.byte_len != 3000)
		fail(r, "WRITE_WITH_IMM receive byte_len %u, want 3000", wc.byte_len);
	if (!(wc.wc_flags & IBV_WC_WITH_IMM) || wc.imm_data != htobe32(0xfeedbeef))
		fail(r, "WRITE_WITH_IMM receive wc_flags 0x%x imm_data 0x%x",
		     wc.wc_flags, be32toh(wc.imm_data));
	same(r, remote, image, 65536, 0, "target of the RDMA WRITE_WITH_IMM");
	if (first_not(rb.p, rb.len, 0x5a) != rb.len)
		fail(r, "WRITE_WITH_IMM wrote into the receive's own buffer");
	report(r);

	/* READ into three SGEs with gaps */
	fill(remote + 30000, 5000, 0x3719);
	memset(local + 40000, GUARD, 8000);
	memset(image, GUARD, 8000);
	memcpy(image, remote + 30000, 1000);
	memcpy(image + 2000, remote + 31000, 2500);
	memcpy(image + 6000, remote + 33500, 1500);
	sg[0] = sge_at(&p.buf[0], 40000, 1000);
	sg[1] = sge_at(&p.buf[0], 42000, 2500);
	sg[2] = sge_at(&p.buf[0], 46000, 1500);
	if (rdma_post(r, &p, 0xd3, IBV_WR_RDMA_READ, sg, 3, raddr + 30000, rkey, 0) &&
	    cq_get(r, p.scq[0], &wc, "the RDMA READ") &&
	    wc_is(r, &wc, 0xd3, IBV_WC_SUCCESS, IBV_WC_RDMA_READ,
		  p.qp[0]->qp_num, "the RDMA READ"))
		same(r, local + 40000, image, 8000, 40000, "RDMA READ result");
	report(r);

	/* WRITE to a region without remote write access */
	if (!pair_new(r, &q, &pc) || !buf_new(r, &ro, 4096, IBV_ACCESS_LOCAL_WRITE))
		goto out;
	memset(ro.p, 0x33, ro.len);
	fill(q.buf[0].p, 64, 0x371a);
	sg[0] = sge_at(&q.buf[0], 0, 64);
	if (rdma_post(r, &q, 0xd4, IBV_WR_RDMA_WRITE, sg, 1, (uintptr_t)ro.p,
		      ro.mr->rkey, 0) &&
	    cq_get(r, q.scq[0], &wc, "the RDMA WRITE without access") &&
	    wc_is(r, &wc, 0xd4, IBV_WC_REM_ACCESS_ERR, -1, q.qp[0]->qp_num,
		  "the RDMA WRITE without access") &&
	    first_not(ro.p, ro.len, 0x33) != ro.len)
		fail(r, "the refused RDMA WRITE changed the region");
	report(r);
out:
	pair_free(&p);
	pair_free(&q);
	buf_free(&rb);
	buf_free(&ro);
	free(image);
}

/* --- errors --- */

/* The state of @qp must be @want, now or (noted) within a second. */
static void expect_state(struct run *r, struct ibv_qp *qp, int want,
			 const char *who)
{
	int st = qp_state(qp), first = st;
	double t0 = now_ms();

	while (st != want && now_ms() - t0 < 1000) {
		usleep(1000);
		st = qp_state(qp);
	}
	if (st != want)
		fail(r, "%s QP is in %s, want %s", who, state_str(st), state_str(want));
	else if (first != want)
		tap_note("%s QP was in %s after its completion, %s %.0f ms later",
			 who, state_str(first), state_str(want), now_ms() - t0);
}

void t_short_recv(struct run *r)
{
	struct pair_cfg pc = {};
	struct ibv_sge ss, rs;
	struct ibv_wc wc;
	struct pair p;

	if (!pair_new(r, &p, &pc))
		goto out;
	fill(p.buf[0].p, 200, 0x500);
	ss = sge_at(&p.buf[0], 0, 200);
	rs = sge_at(&p.buf[1], 0, 100);
	if (!recv_post(r, p.qp[1], NULL, 0x5401, &rs, 1) ||
	    !pair_send(r, &p, 0x5402, IBV_WR_SEND, &ss, 1, 0))
		goto out;
	if (cq_get(r, p.rcq[1], &wc, "the receive that is too small"))
		wc_is(r, &wc, 0x5401, IBV_WC_LOC_LEN_ERR, -1, p.qp[1]->qp_num,
		      "the receive that is too small");
	if (cq_get(r, p.scq[0], &wc, "the send that is too large"))
		wc_is(r, &wc, 0x5402, IBV_WC_REM_INV_REQ_ERR, -1, p.qp[0]->qp_num,
		      "the send that is too large");
	report(r);
	expect_state(r, p.qp[0], IBV_QPS_ERR, "the sending");
	expect_state(r, p.qp[1], IBV_QPS_ERR, "the receiving");
	report(r);
out:
	pair_free(&p);
}

void t_rnr(struct run *r)
{
	struct pair_cfg pc = { .set_rnr = true, .rnr_retry = 1, .min_rnr_timer = 1 };
	struct ibv_sge ss;
	struct ibv_wc wc;
	struct pair p;
	int k;

	/* nobody posts: one retry, then the error */
	if (!pair_new(r, &p, &pc))
		goto out;
	ss = sge_at(&p.buf[0], 0, 16);
	if (pair_send(r, &p, 0x7701, IBV_WR_SEND, &ss, 1, 0) &&
	    cq_get(r, p.scq[0], &wc, "a send nobody receives") &&
	    wc_is(r, &wc, 0x7701, IBV_WC_RNR_RETRY_EXC_ERR, -1, p.qp[0]->qp_num,
		  "a send nobody receives with rnr_retry 1"))
		cq_quiet(r, p.rcq[1], 50, "the receiver of an RNR failure");
	report(r);
	pair_free(&p);

	/* rnr_retry 7 retries until the receive posted 50 ms later */
	pc.rnr_retry = 7;
	if (!pair_new(r, &p, &pc))
		goto out;
	fill(p.buf[0].p, 16, 0x7702);
	ss = sge_at(&p.buf[0], 0, 16);
	if (!pair_send(r, &p, 0x7702, IBV_WR_SEND, &ss, 1, 0))
		goto out;
	k = cq_wait(p.scq[0], &wc, 1, 50);
	if (k) {
		fail(r, "the send completed before any receive was posted: %s",
		     k > 0 ? wc_str(&wc) : "poll_cq failed");
		goto out;
	}
	if (recv_slot(r, p.qp[1], NULL, 0x7703, &p.buf[1]) &&
	    cq_get(r, p.scq[0], &wc, "the send retried after RNR") &&
	    wc_is(r, &wc, 0x7702, IBV_WC_SUCCESS, IBV_WC_SEND, p.qp[0]->qp_num,
		  "the send retried after RNR") &&
	    cq_get(r, p.rcq[1], &wc, "the receive posted late") &&
	    wc_is(r, &wc, 0x7703, IBV_WC_SUCCESS, IBV_WC_RECV, p.qp[1]->qp_num,
		  "the receive posted late")) {
		if (wc.byte_len != 16)
			fail(r, "byte_len %u, want 16", wc.byte_len);
		same(r, p.buf[1].p + (0x7703 % 1024) * SLOT, p.buf[0].p, 16, 0,
		     "the payload after RNR");
	}
	report(r);
out:
	pair_free(&p);
}

void t_ud(struct run *r)
{
	uint32_t usz[] = { 0, 1, 100, env.mtu };
	struct pair_cfg pc = { .type = IBV_QPT_UD };
	struct ibv_send_wr wr, *bad;
	struct ibv_sge ss, rs;
	unsigned char *rb;
	struct ibv_wc wc;
	struct pair p;
	char what[64];
	unsigned int i;
	int ret;

	if (!pair_new(r, &p, &pc))
		goto out;
	rb = p.buf[1].p;
	for (i = 0; i < 5 && !r->failures; i++) {
		bool imm = i == 4;
		uint32_t len = imm ? 32 : usz[i];

		snprintf(what, sizeof(what), "UD %s of %u bytes",
			 imm ? "SEND_WITH_IMM" : "SEND", len);
		fill(p.buf[0].p, len, len + 0x0d);
		memset(rb, GUARD, len + 40 + 64);
		ss = sge_at(&p.buf[0], 0, len);
		rs = sge_at(&p.buf[1], 0, len + 40);
		if (!recv_post(r, p.qp[1], NULL, 0x0d00 + i, &rs, 1) ||
		    !pair_send(r, &p, 0x0e00 + i,
			       imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND, &ss,
			       len ? 1 : 0, 0xabcd0000 + i) ||
		    !cq_get(r, p.scq[0], &wc, what) ||
		    !wc_is(r, &wc, 0x0e00 + i, IBV_WC_SUCCESS, IBV_WC_SEND,
			   p.qp[0]->qp_num, what) ||
		    !cq_get(r, p.rcq[1], &wc, what) ||
		    !wc_is(r, &wc, 0x0d00 + i, IBV_WC_SUCCESS, IBV_WC_RECV,
			   p.qp[1]->qp_num, what))
			break;
		if (wc.byte_len != len + 40)
			fail(r, "%s: byte_len %u, want %u", what, wc.byte_len, len + 40);
		if (wc.src_qp != p.qp[0]->qp_num)
			fail(r, "%s: src_qp %u, want %u", what, wc.src_qp,
			     p.qp[0]->qp_num);
		if (imm && (!(wc.wc_flags & IBV_WC_WITH_IMM) ||
			    wc.imm_data != htobe32(0xabcd0000 + i)))
			fail(r, "%s: wc_flags 0x%x imm_data 0x%x", what,
			     wc.wc_flags, be32toh(wc.imm_data));
		same(r, rb + 40, p.buf[0].p, len, 40, what);
		if (first_not(rb + 40 + len, 64, GUARD) != 64)
			fail(r, "%s: written past the receive buffer", what);
	}
	report(r);

	/* a wrong Q_Key: the datagram is dropped, the sender never knows */
	ss = sge_at(&p.buf[0], 0, 16);
	wr = (struct ibv_send_wr){
		.wr_id = 0x0f01, .sg_list = &ss, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = p.ah, .remote_qpn = p.qp[1]->qp_num,
			   .remote_qkey = UD_QKEY ^ 0x00010001 },
	};
	bad = NULL;
	if (!recv_slot(r, p.qp[1], NULL, 0x0f02, &p.buf[1]))
		goto out;
	ret = ibv_post_send(p.qp[0], &wr, &bad);
	if (ret) {
		fail(r, "post_send with a wrong qkey: %s", strerror(ret));
	} else if (cq_get(r, p.scq[0], &wc, "a send with a wrong qkey") &&
		   wc_is(r, &wc, 0x0f01, IBV_WC_SUCCESS, IBV_WC_SEND,
			 p.qp[0]->qp_num, "a send with a wrong qkey") &&
		   cq_quiet(r, p.rcq[1], QUIET_MS, "a datagram with a wrong qkey") &&
		   pair_send(r, &p, 0x0f03, IBV_WR_SEND, &ss, 1, 0) &&
		   cq_get(r, p.rcq[1], &wc, "the next datagram, right qkey")) {
		wc_is(r, &wc, 0x0f02, IBV_WC_SUCCESS, IBV_WC_RECV, p.qp[1]->qp_num,
		      "the next datagram, right qkey");
	}
	report(r);
out:
	pair_free(&p);
}

void t_cq_channel(struct run *r)
{
	struct ibv_comp_channel *ch;
	struct pair_cfg pc = {};
	struct ibv_cq *ev_cq;
	struct pollfd pfd;
	struct ibv_sge ss;
	struct ibv_wc wc;
	struct pair p = {};
	void *ev_ctx;
	int ret;

	ch = ibv_create_comp_channel(env.ctx);
	if (!ch) {
		fail(r, "create_comp_channel: %s", strerror(errno));
		goto out;
	}
	pc.channel = ch;
	if (!pair_new(r, &p, &pc))
		goto out;
	ret = ibv_req_notify_cq(p.rcq[1], 0);
	if (ret) {
		fail(r, "req_notify_cq: %s", strerror(ret));
		goto out;
	}
	pfd = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	if (poll(&pfd, 1, QUIET_MS) != 0) {
		fail(r, "the channel is readable before any completion");
		goto out;
	}
	ss = sge_at(&p.buf[0], 0, 8);
	if (!recv_slot(r, p.qp[1], NULL, 0xc401, &p.buf[1]) ||
	    !pair_send(r, &p, 0xc402, IBV_WR_SEND, &ss, 1, 0))
		goto out;
	if (poll(&pfd, 1, TIMEOUT_MS) != 1) {
		fail(r, "no completion event within %d ms of a receive", TIMEOUT_MS);
		goto out;
	}
	if (ibv_get_cq_event(ch, &ev_cq, &ev_ctx)) {
		fail(r, "get_cq_event: %s", strerror(errno));
		goto out;
	}
	ibv_ack_cq_events(ev_cq, 1);
	if (ev_cq != p.rcq[1])
		fail(r, "the event names another CQ");
	else if (cq_get(r, p.rcq[1], &wc, "the receive that raised the event"))
		wc_is(r, &wc, 0xc401, IBV_WC_SUCCESS, IBV_WC_RECV, p.qp[1]->qp_num,
		      "the receive that raised the event");
	report(r);
out:
	pair_free(&p);
	if (ch)
		ibv_destroy_comp_channel(ch);
}

void t_bad_lkey(struct run *r)
{
	struct pair_cfg pc = {};
	struct ibv_sge ss, rs;
	struct ibv_wc wc;
	struct pair p;

	if (!pair_new(r, &p, &pc))
		goto out;
	ss = sge_at(&p.buf[0], 0, 32);
	rs = sge_at(&p.buf[1], 0, 64);
	rs.lkey ^= 0x5a;
	if (!recv_post(r, p.qp[1], NULL, 0xb401, &rs, 1) ||
	    !pair_send(r, &p, 0xb402, IBV_WR_SEND, &ss, 1, 0))
		goto out;
	if (cq_get(r, p.scq[0], &wc, "the send into a bad lkey")) {
		if (wc.wr_id != 0xb402 || wc.status == IBV_WC_SUCCESS ||
		    wc.status == IBV_WC_WR_FLUSH_ERR)
			fail(r, "the send into a bad lkey: %s; want an error", wc_str(&wc));
		else
			tap_note("the send into a bad lkey completed with %s",
				 ibv_wc_status_str(wc.status));
	}
	if (cq_get(r, p.rcq[1], &wc, "the receive with a bad lkey"))
		wc_is(r, &wc, 0xb401, IBV_WC_LOC_PROT_ERR, -1, p.qp[1]->qp_num,
		      "the receive with a bad lkey");
	report(r);
out:
	pair_free(&p);
}
