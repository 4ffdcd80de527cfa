// SPDX-License-Identifier: GPL-2.0
/*
 * vt.c - the verbs helpers of krwq_verbs_test (see vt.h).
 */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "vt.h"

struct env env;

double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* --- memory --- */

bool buf_new(struct run *r, struct buf *b, size_t len, int access)
{
	void *p;
	int err;

	memset(b, 0, sizeof(*b));
	if (posix_memalign(&p, 4096, len))
		return fail(r, "out of memory (%zu bytes)", len);
	memset(p, 0, len);
	b->mr = ibv_reg_mr(env.pd, p, len, access);
	if (!b->mr) {
		err = errno;
		free(p);
		return fail(r, "reg_mr of %zu bytes, access 0x%x: %s", len,
			    access, strerror(err));
	}
	b->p = p;
	b->len = len;
	return true;
}

void buf_free(struct buf *b)
{
	if (b->mr)
		ibv_dereg_mr(b->mr);
	free(b->p);
	memset(b, 0, sizeof(*b));
}

struct ibv_sge sge_at(const struct buf *b, size_t off, uint32_t len)
{
	struct ibv_sge s = {
		.addr = (uintptr_t)(b->p + off),
		.length = len,
		.lkey = b->mr->lkey,
	};

	return s;
}

void fill(void *p, size_t n, uint32_t seed)
{
	unsigned char *c = p;
	uint32_t x = seed * 2654435761u + 0x9e3779b9u;
	size_t i;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		c[i] = (unsigned char)(x >> 7);
	}
}

size_t first_not(const void *p, size_t n, unsigned char c)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		if (b[i] != c)
			return i;
	return n;
}

/* --- objects --- */

/*
 * The uverbs ABI version the kernel driver reports.  rdmavt-style devices
 * (ipathverbs) map their receive and completion rings from version 2 on,
 * and then a post never reaches the kernel.
 */
static int uverbs_abi(struct ibv_device *dev)
{
	char path[IBV_SYSFS_PATH_MAX + 16];
	FILE *f;
	int v = -1;

	snprintf(path, sizeof(path), "%s/abi_version", dev->dev_path);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

const char *env_open(const char *name)
{
	static char why[200];
	struct ibv_device **list;
	struct ibv_device *dev = NULL;
	int i, n, ret;

	list = ibv_get_device_list(&n);
	if (!list)
		return "ibv_get_device_list failed";
	for (i = 0; i < n && !dev; i++)
		if (!name || !strcmp(ibv_get_device_name(list[i]), name))
			dev = list[i];
	if (!dev) {
		snprintf(why, sizeof(why), "no RDMA device%s%s", name ? " named " : "",
			 name ? name : "");
		ibv_free_device_list(list);
		return why;
	}
	env.ctx = ibv_open_device(dev);
	ibv_free_device_list(list);
	if (!env.ctx)
		return "ibv_open_device failed";
	ret = ibv_query_device(env.ctx, &env.dev);
	if (!ret)
		ret = ibv_query_port(env.ctx, 1, &env.port);
	if (ret) {
		snprintf(why, sizeof(why), "query_device/port: %s", strerror(ret));
		return why;
	}
	if (env.port.state != IBV_PORT_ACTIVE)
		return "port 1 is not ACTIVE";
	env.eth = env.port.link_layer == IBV_LINK_LAYER_ETHERNET;
	env.mtu = 128u << env.port.active_mtu;
	if (env.eth && ibv_query_gid(env.ctx, 1, env.gid_index, &env.gid)) {
		snprintf(why, sizeof(why), "query_gid(port 1, index %d) failed",
			 env.gid_index);
		return why;
	}
	env.pd = ibv_alloc_pd(env.ctx);
	if (!env.pd)
		return "alloc_pd failed";
	env.abi = uverbs_abi(env.ctx->device);
	tap_note("device %s: %s link layer, LID %u, active MTU %u, GID index %d, uverbs ABI %d",
		 ibv_get_device_name(env.ctx->device), env.eth ? "Ethernet" : "InfiniBand",
		 env.port.lid, env.mtu, env.gid_index, env.abi);
	return NULL;
}

void env_close(void)
{
	if (env.pd)
		ibv_dealloc_pd(env.pd);
	if (env.ctx)
		ibv_close_device(env.ctx);
}

int uverbs_mappings(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "/dev/infiniband/uverbs"))
			n++;
	fclose(f);
	return n;
}

struct ibv_cq *cq_new(struct run *r, int cqe, struct ibv_comp_channel *ch)
{
	struct ibv_cq *cq = ibv_create_cq(env.ctx, cqe, NULL, ch, 0);

	if (!cq)
		fail(r, "create_cq(%d): %s", cqe, strerror(errno));
	return cq;
}

struct ibv_srq *srq_new(struct run *r, uint32_t max_wr, uint32_t max_sge)
{
	struct ibv_srq_init_attr ia = {
		.attr = { .max_wr = max_wr, .max_sge = max_sge },
	};
	struct ibv_srq *srq = ibv_create_srq(env.pd, &ia);

	if (!srq)
		fail(r, "create_srq(max_wr %u, max_sge %u): %s", max_wr,
		     max_sge, strerror(errno));
	return srq;
}

bool srq_attr(struct run *r, struct ibv_srq *srq, struct ibv_srq_attr *a)
{
	int ret = ibv_query_srq(srq, a);

	if (ret)
		return fail(r, "query_srq: %s", strerror(ret));
	return true;
}

struct ibv_qp *qp_new(struct run *r, const struct qp_cfg *c)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = c->scq,
		.recv_cq = c->rcq,
		.srq = c->srq,
		.qp_type = c->type ? c->type : IBV_QPT_RC,
		.cap = {
			.max_send_wr = c->send_wr ? c->send_wr : 64,
			.max_send_sge = c->send_sge ? c->send_sge : 1,
			.max_inline_data = c->max_inline,
		},
	};
	struct ibv_qp *qp;

	if (!c->srq) {
		ia.cap.max_recv_wr = c->recv_wr ? c->recv_wr : 64;
		ia.cap.max_recv_sge = c->recv_sge ? c->recv_sge : 1;
	}
	qp = ibv_create_qp(env.pd, &ia);
	if (!qp)
		fail(r, "create_qp(type %d, recv_wr %u, recv_sge %u%s): %s",
		     ia.qp_type, ia.cap.max_recv_wr, ia.cap.max_recv_sge,
		     c->srq ? ", on an SRQ" : "", strerror(errno));
	return qp;
}

bool qp_caps(struct run *r, struct ibv_qp *qp, struct ibv_qp_cap *cap)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	int ret = ibv_query_qp(qp, &a, IBV_QP_CAP, &ia);

	if (ret)
		return fail(r, "query_qp(QP %u): %s", qp->qp_num, strerror(ret));
	*cap = a.cap;
	return true;
}

int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

const char *state_str(int s)
{
	static const char *const names[] = {
		"RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR",
	};

	if (s < 0)
		return "(query_qp failed)";
	if ((unsigned int)s < ARRAY_SIZE(names))
		return names[s];
	return "(unknown)";
}

static bool modify(struct run *r, struct ibv_qp *qp, struct ibv_qp_attr *a,
		   int mask)
{
	int ret = ibv_modify_qp(qp, a, mask);

	if (ret)
		return fail(r, "modify_qp(QP %u to %s, mask 0x%x): %s",
			    qp->qp_num, state_str(a->qp_state), mask,
			    strerror(ret));
	return true;
}

bool qp_move(struct run *r, struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };

	return modify(r, qp, &a, IBV_QP_STATE);
}

bool qp_to_init(struct run *r, struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
	};
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (qp->qp_type == IBV_QPT_UD) {
		a.qkey = UD_QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				    IBV_ACCESS_REMOTE_READ;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	return modify(r, qp, &a, mask);
}

void fill_ah(struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->dlid = env.port.lid;
	ah->port_num = 1;
	if (env.eth) {
		ah->is_global = 1;
		ah->grh.dgid = env.gid;
		ah->grh.sgid_index = env.gid_index;
		ah->grh.hop_limit = 1;
	}
}

bool qp_to_rtr(struct run *r, struct ibv_qp *qp, uint32_t dest_qpn,
	       uint8_t min_rnr_timer)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };
	int mask = IBV_QP_STATE;

	if (qp->qp_type != IBV_QPT_UD) {
		a.path_mtu = env.port.active_mtu;
		a.dest_qp_num = dest_qpn;
		a.rq_psn = 0;
		a.max_dest_rd_atomic = 1;
		a.min_rnr_timer = min_rnr_timer;
		fill_ah(&a.ah_attr);
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			IBV_QP_MIN_RNR_TIMER;
	}
	return modify(r, qp, &a, mask);
}

bool qp_to_rts(struct run *r, struct ibv_qp *qp, uint8_t rnr_retry)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS, .sq_psn = 0 };
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;

	if (qp->qp_type != IBV_QPT_UD) {
		a.timeout = 14;
		a.retry_cnt = 7;
		a.rnr_retry = rnr_retry;
		a.max_rd_atomic = 1;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	return modify(r, qp, &a, mask);
}

bool pair_connect(struct run *r, struct pair *p)
{
	int i;

	for (i = 0; i < 2; i++)
		if (!qp_to_init(r, p->qp[i]))
			return false;
	for (i = 0; i < 2; i++)
		if (!qp_to_rtr(r, p->qp[i], p->qp[!i]->qp_num,
			       p->min_rnr_timer))
			return false;
	for (i = 0; i < 2; i++)
		if (!qp_to_rts(r, p->qp[i], p->rnr_retry))
			return false;
	return true;
}

bool pair_new(struct run *r, struct pair *p, const struct pair_cfg *c)
{
	int i;

	memset(p, 0, sizeof(*p));
	p->rnr_retry = c->set_rnr ? c->rnr_retry : 2;
	p->min_rnr_timer = c->set_rnr ? c->min_rnr_timer : 1;
	for (i = 0; i < 2; i++) {
		struct qp_cfg qc = {
			.type = c->type,
			.recv_wr = c->recv_wr,
			.recv_sge = c->recv_sge,
			.send_sge = c->send_sge,
			.send_wr = c->send_wr,
			.max_inline = c->max_inline,
			.srq = i ? c->srq : NULL,
		};

		p->scq[i] = cq_new(r, 1024, NULL);
		p->rcq[i] = cq_new(r, 1024, i ? c->channel : NULL);
		if (!p->scq[i] || !p->rcq[i])
			return false;
		qc.scq = p->scq[i];
		qc.rcq = p->rcq[i];
		p->qp[i] = qp_new(r, &qc);
		if (!p->qp[i] || !buf_new(r, &p->buf[i], 65536, ACC_ALL))
			return false;
	}
	if (c->type == IBV_QPT_UD) {
		struct ibv_ah_attr ah;

		fill_ah(&ah);
		p->ah = ibv_create_ah(env.pd, &ah);
		if (!p->ah)
			return fail(r, "create_ah(dlid %u%s): %s", ah.dlid,
				    ah.is_global ? ", GRH" : "", strerror(errno));
	}
	return pair_connect(r, p);
}

void pair_free(struct pair *p)
{
	int i;

	for (i = 0; i < 2; i++)
		if (p->qp[i])
			ibv_destroy_qp(p->qp[i]);
	if (p->ah)
		ibv_destroy_ah(p->ah);
	for (i = 0; i < 2; i++) {
		if (p->scq[i])
			ibv_destroy_cq(p->scq[i]);
		if (p->rcq[i])
			ibv_destroy_cq(p->rcq[i]);
		buf_free(&p->buf[i]);
	}
	memset(p, 0, sizeof(*p));
}

/* --- posting --- */

bool recv_post(struct run *r, struct ibv_qp *qp, struct ibv_srq *srq,
	       uint64_t wr_id, struct ibv_sge *sg, int n)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sg, .num_sge = n };
	struct ibv_recv_wr *bad = NULL;
	int ret;

	ret = srq ? ibv_post_srq_recv(srq, &wr, &bad) :
		    ibv_post_recv(qp, &wr, &bad);
	if (ret)
		return fail(r, "post_%srecv(wr_id 0x%llx): %s", srq ? "srq_" : "",
			    (unsigned long long)wr_id, strerror(ret));
	return true;
}

bool recv_slot(struct run *r, struct ibv_qp *qp, struct ibv_srq *srq,
	       uint64_t wr_id, struct buf *b)
{
	struct ibv_sge s = sge_at(b, (wr_id % 1024) * SLOT, SLOT);

	return recv_post(r, qp, srq, wr_id, &s, 1);
}

bool pair_post(struct run *r, struct pair *p, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad = NULL;
	int ret;

	if (p->ah) {
		wr->wr.ud.ah = p->ah;
		wr->wr.ud.remote_qpn = p->qp[1]->qp_num;
		wr->wr.ud.remote_qkey = UD_QKEY;
	}
	ret = ibv_post_send(p->qp[0], wr, &bad);
	if (ret)
		return fail(r, "post_send(opcode %d, %d SGEs) on QP %u: %s",
			    wr->opcode, wr->num_sge, p->qp[0]->qp_num,
			    strerror(ret));
	return true;
}

bool pair_send(struct run *r, struct pair *p, uint64_t wr_id,
	       enum ibv_wr_opcode op, struct ibv_sge *sg, int n, uint32_t imm)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = sg,
		.num_sge = n,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htobe32(imm),
	};

	return pair_post(r, p, &wr);
}

bool deliver(struct run *r, struct pair *p, uint64_t expect)
{
	static uint64_t seq;
	uint64_t id = 0x5e0d000000000000ull + ++seq;
	struct ibv_sge s = sge_at(&p->buf[0], 0, 8);
	struct ibv_wc wc;

	if (!pair_send(r, p, id, IBV_WR_SEND, &s, 1, 0) ||
	    !cq_get(r, p->scq[0], &wc, "a send") ||
	    !wc_is(r, &wc, id, IBV_WC_SUCCESS, IBV_WC_SEND, p->qp[0]->qp_num,
		   "send completion") ||
	    !cq_get(r, p->rcq[1], &wc, "the receive of a send") ||
	    !wc_is(r, &wc, expect, IBV_WC_SUCCESS, IBV_WC_RECV,
		   p->qp[1]->qp_num, "receive completion"))
		return false;
	if (wc.byte_len != 8)
		return fail(r, "receive completion byte_len %u, want 8", wc.byte_len);
	return true;
}

bool expect_rnr(struct run *r, struct pair *p, const char *what)
{
	struct ibv_sge s = sge_at(&p->buf[0], 0, 8);
	struct ibv_wc wc;

	return pair_send(r, p, 0x5e0e, IBV_WR_SEND, &s, 1, 0) &&
	       cq_get(r, p->scq[0], &wc, what) &&
	       wc_is(r, &wc, 0x5e0e, IBV_WC_RNR_RETRY_EXC_ERR, -1,
		     p->qp[0]->qp_num, what) &&
	       cq_quiet(r, p->rcq[1], 50, what);
}

/* --- completions --- */

int cq_wait(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms)
{
	double end = now_ms() + ms;
	int got = 0;

	while (got < n) {
		int k = ibv_poll_cq(cq, n - got, wc + got);

		if (k < 0)
			return -1;
		got += k;
		if (got == n || now_ms() >= end)
			break;
		if (!k)
			usleep(200);
	}
	return got;
}

bool cq_get(struct run *r, struct ibv_cq *cq, struct ibv_wc *wc,
	    const char *what)
{
	int k = cq_wait(cq, wc, 1, TIMEOUT_MS);

	if (k < 0)
		return fail(r, "poll_cq failed waiting for %s", what);
	if (k == 0)
		return fail(r, "no completion for %s within %d ms", what,
			    TIMEOUT_MS);
	return true;
}

bool cq_quiet(struct run *r, struct ibv_cq *cq, int ms, const char *what)
{
	struct ibv_wc wc;
	int k = cq_wait(cq, &wc, 1, ms);

	if (k < 0)
		return fail(r, "poll_cq failed (%s)", what);
	if (k > 0)
		return fail(r, "unexpected completion (%s): %s", what, wc_str(&wc));
	return true;
}

const char *wc_str(const struct ibv_wc *wc)
{
	static char s[200];

	snprintf(s, sizeof(s),
		 "wr_id 0x%llx status %s opcode %d byte_len %u qp_num %u src_qp %u wc_flags 0x%x",
		 (unsigned long long)wc->wr_id, ibv_wc_status_str(wc->status),
		 wc->opcode, wc->byte_len, wc->qp_num, wc->src_qp,
		 wc->wc_flags);
	return s;
}

bool wc_is(struct run *r, const struct ibv_wc *wc, uint64_t wr_id,
	   enum ibv_wc_status status, int opcode, uint32_t qp_num,
	   const char *what)
{
	if (wc->wr_id != wr_id || wc->status != status ||
	    (opcode >= 0 && (int)wc->opcode != opcode) ||
	    (qp_num && wc->qp_num != qp_num))
		return fail(r, "%s: got %s; want wr_id 0x%llx status %s opcode %d qp_num %u",
			    what, wc_str(wc), (unsigned long long)wr_id,
			    ibv_wc_status_str(status), opcode, qp_num);
	return true;
}

bool expect_flushed(struct run *r, struct ibv_cq *cq, struct ibv_qp *qp,
		    const uint64_t *ids, int n)
{
	struct ibv_wc *wc = calloc(n + 1, sizeof(*wc));
	int i, k, bad_op, bad_opcode = 0;
	char what[64];
	bool ok = true;

	if (!wc)
		return fail(r, "out of memory");
	k = cq_wait(cq, wc, n, TIMEOUT_MS);
	if (k < 0) {
		ok = fail(r, "poll_cq failed waiting for flushes");
		goto out;
	}
	/* the order, the status and the QP first; the opcode on its own */
	for (i = 0; i < k; i++) {
		snprintf(what, sizeof(what), "flush completion %d of %d", i + 1, n);
		if (!wc_is(r, &wc[i], ids[i], IBV_WC_WR_FLUSH_ERR, -1, qp->qp_num,
			   what)) {
			ok = false;
			goto out;
		}
	}
	for (i = 0, bad_op = 0; i < k; i++)
		if (wc[i].opcode != IBV_WC_RECV && !bad_op++)
			bad_opcode = wc[i].opcode;
	if (bad_op)	/* a failure, but no reason for the caller to stop */
		fail(r, "%d of %d flush completions of QP %u had opcode %d, want IBV_WC_RECV (%d)",
		     bad_op, k, qp->qp_num, bad_opcode, IBV_WC_RECV);
	if (k < n) {
		ok = fail(r, "only %d of %d receives flushed within %d ms (next wanted: wr_id 0x%llx)",
			  k, n, TIMEOUT_MS, (unsigned long long)ids[k]);
		goto out;
	}
	if (!cq_quiet(r, cq, QUIET_MS, "after the expected flushes"))
		ok = false;
out:
	free(wc);
	return ok;
}

/* --- asynchronous events --- */

static const void *event_obj(const struct ibv_async_event *ev)
{
	switch (ev->event_type) {
	case IBV_EVENT_CQ_ERR:
		return ev->element.cq;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		return ev->element.srq;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		return ev->element.qp;
	default:
		return NULL;
	}
}

int async_wait(enum ibv_event_type type, const void *obj, int want, int ms)
{
	double end = now_ms() + ms;
	int got = 0;

	while (got < want) {
		struct pollfd pfd = { .fd = env.ctx->async_fd, .events = POLLIN };
		struct ibv_async_event ev;
		double left = end - now_ms();
		int k;

		k = poll(&pfd, 1, left > 0 ? (int)left + 1 : 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		if (ibv_get_async_event(env.ctx, &ev))
			break;
		if (ev.event_type == type && event_obj(&ev) == obj)
			got++;
		else
			tap_note("async event %s ignored",
				 ibv_event_type_str(ev.event_type));
		ibv_ack_async_event(&ev);
	}
	return got;
}

/* --- receive WR lists --- */

uint64_t wr_tag(uint32_t tag, uint32_t i)
{
	return 0xfe00000000000000ull | (uint64_t)tag << 32 | i;
}

const char *bad_str(const struct ibv_recv_wr *bad,
		    const struct ibv_recv_wr *list, int n)
{
	static char s[48];
	int i;

	if (!bad)
		return "NULL";
	for (i = 0; i < n; i++)
		if (bad == &list[i]) {
			snprintf(s, sizeof(s), "WR %d of the list", i);
			return s;
		}
	return "a pointer outside the list";
}

void link_wrs(struct ibv_recv_wr *list, int n, const uint64_t *ids,
	      struct ibv_sge *sg)
{
	int i;

	for (i = 0; i < n; i++) {
		list[i] = (struct ibv_recv_wr){
			.wr_id = ids[i],
			.sg_list = sg ? &sg[i] : NULL,
			.num_sge = sg ? 1 : 0,
			.next = i + 1 < n ? &list[i + 1] : NULL,
		};
	}
}

void expect_post_error(struct run *r, int ret, int want,
		       const struct ibv_recv_wr *bad,
		       const struct ibv_recv_wr *list, int n, int at,
		       const char *what)
{
	if (ret != want)
		fail(r, "%s: post returned %d (%s), want %s", what, ret,
		     ret ? strerror(ret) : "success", strerror(want));
	else if (bad != &list[at])
		fail(r, "%s: bad_wr is %s, want WR %d of the list", what,
		     bad_str(bad, list, n), at);
}
