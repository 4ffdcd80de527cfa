// SPDX-License-Identifier: GPL-2.0
/*
 * verbs.c - krwq_hostile verbs: bad input to every verb of a device.
 *
 * Every bad input is one TAP line: the call must fail with the errno a
 * careful driver gives (the accepted ones are listed in the check), and
 * nothing may change: the RDMA core's object counts are the same after
 * as before, a QP keeps its state, an SRQ its size and limit, a CQ its
 * completions, and memory a key should not reach is untouched.  Work
 * requests that carry a bad key are accepted by post_send and must
 * complete in error instead; their checks name the completion status.
 *
 * Bad keys cover random ones, keys kept after ibv_dereg_mr(), keys of a
 * region in another PD and the keys of a region of another process
 * (a forked child with its own device context), and ranges that wrap
 * around the end of the address space.
 */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <rdma/ib_user_verbs.h>

#include "hostile.h"
#include "raw.h"
#include "vt.h"

static const char *devname;
static unsigned int n_bad;	/* bad inputs thrown */
static struct res before;
static struct run run;		/* failures of vt.c's helpers */

#define ERRS(...) ((const int[]){ __VA_ARGS__, 0 })

static void begin(void)
{
	res_read(devname, &before);
}

/*
 * The verdict on one bad input: @err is 0 if the call succeeded, else the
 * errno it failed with; it must be one of @want.  @extra, if not NULL, is
 * a further reason it failed (something changed).  The object counts
 * must be as begin() saw them.
 */
static bool verdict(const char *what, int err, const int *want,
		    const char *extra)
{
	char why[600] = "";
	struct res after;
	bool ok = false;
	int i;

	n_bad++;
	for (i = 0; want[i]; i++)
		ok |= err == want[i];
	if (!ok) {
		int n = snprintf(why, sizeof(why), "got %s, want",
				 errno_name(err));

		for (i = 0; want[i]; i++)
			n += snprintf(why + n, sizeof(why) - n, " %s",
				      errno_name(want[i]));
	}
	res_read(devname, &after);
	if (!res_same(&before, &after)) {
		ok = false;
		snprintf(why + strlen(why), sizeof(why) - strlen(why),
			 "%sobjects changed: %s -> %s", *why ? "\n" : "",
			 res_str(&before), res_str(&after));
	}
	if (extra) {
		ok = false;
		snprintf(why + strlen(why), sizeof(why) - strlen(why), "%s%s",
			 *why ? "\n" : "", extra);
	}
	{
		char name[300];

		snprintf(name, sizeof(name), "%s -> %s", what, errno_name(err));
		tap_result(ok, name, why);
	}
	return ok;
}

/* A plain failed check that is not a bad input (setup and the like). */
static bool setup_ok(bool ok, const char *what)
{
	if (!ok) {
		char why[1300];

		snprintf(why, sizeof(why), "%s%s%s", run.why[0],
			 run.failures > 1 ? "\nalso: " : "",
			 run.failures > 1 ? run.why[1] : "");
		tap_result(false, what, why);
	}
	run.failures = 0;
	return ok;
}

static char *say(const char *fmt, ...)
{
	static char s[4][300];
	static int i;
	va_list ap;

	i = (i + 1) % 4;
	va_start(ap, fmt);
	vsnprintf(s[i], sizeof(s[i]), fmt, ap);
	va_end(ap);
	return s[i];
}

static const char *open_env(const char *name)
{
	struct ibv_device **list;
	struct ibv_device *dev = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return "ibv_get_device_list failed";
	for (i = 0; i < n && !dev; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			dev = list[i];
	if (dev)
		env.ctx = ibv_open_device(dev);
	ibv_free_device_list(list);
	if (!env.ctx)
		return "no such device, or ibv_open_device failed";
	if (ibv_query_device(env.ctx, &env.dev) ||
	    ibv_query_port(env.ctx, 1, &env.port))
		return "query_device/port failed";
	env.mtu = 128u << env.port.active_mtu;
	env.pd = ibv_alloc_pd(env.ctx);
	return env.pd ? NULL : "alloc_pd failed";
}

/* --- memory regions ------------------------------------------------------ */

static int reg(void *addr, size_t len, uint64_t iova, int access)
{
	struct ibv_mr *mr = ibv_reg_mr_iova(env.pd, addr, len, iova, access);

	if (mr) {
		ibv_dereg_mr(mr);
		return 0;
	}
	return errno;
}

/* REG_MR through write(), so that no library check is in the way. */
static int raw_reg(uint64_t start, uint64_t len, uint64_t iova, int access,
		   uint32_t pd_handle)
{
	struct ib_uverbs_reg_mr c = {
		.start = start, .length = len, .hca_va = iova,
		.pd_handle = pd_handle, .access_flags = access,
	};
	struct ib_uverbs_reg_mr_resp resp;
	int ret = raw_cmd(env.ctx->cmd_fd, IB_USER_VERBS_CMD_REG_MR, &c,
			  sizeof(c), &resp, sizeof(resp));

	if (!ret) {
		struct ib_uverbs_dereg_mr d = { .mr_handle = resp.mr_handle };

		raw_write(env.ctx->cmd_fd, IB_USER_VERBS_CMD_DEREG_MR,
			  (sizeof(struct ib_uverbs_cmd_hdr) + sizeof(d)) / 4, 0,
			  &d, sizeof(d));
	}
	return -ret;
}

static void mr_checks(void)
{
	const int lw = IBV_ACCESS_LOCAL_WRITE;
	uint32_t pdh = env.pd->handle;
	size_t len = 1 << 16;
	unsigned char *p;
	uint64_t a;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED) {
		tap_result(false, "mr: mmap", strerror(errno));
		return;
	}
	a = (uintptr_t)p;
	memset(p, 0x5a, len);

	begin();
	verdict("reg_mr of 0 bytes", raw_reg(a, 0, a, lw, pdh), ERRS(EINVAL), NULL);
	begin();
	verdict("reg_mr of max_mr_size + 4 KiB",
		raw_reg(a, env.dev.max_mr_size + 4096, a, lw, pdh),
		ERRS(EINVAL), NULL);
	begin();
	verdict("reg_mr of 2^64 - 4 KiB bytes", raw_reg(a, -4096ull, a, lw, pdh),
		ERRS(EINVAL), NULL);
	begin();
	verdict("reg_mr whose start + length wraps (start 2^64 - 4 KiB, 8 KiB)",
		raw_reg(-4096ull, 8192, -4096ull, lw, pdh), ERRS(EINVAL, EFAULT),
		NULL);
	begin();
	verdict("reg_mr whose iova + length wraps (iova 2^64 - 4 KiB, 8 KiB)",
		raw_reg(a, 8192, -4096ull, lw, pdh), ERRS(EINVAL), NULL);
	begin();
	verdict("reg_mr of unmapped memory (address 4 KiB)",
		raw_reg(4096, 4096, 4096, lw, pdh), ERRS(EFAULT, EINVAL, ENOMEM),
		NULL);
	begin();
	verdict("reg_mr of a kernel address (0xffff888000000000)",
		raw_reg(0xffff888000000000ull, 4096, 0xffff888000000000ull, lw,
			pdh), ERRS(EFAULT, EINVAL, ENOMEM), NULL);
	begin();
	verdict("reg_mr of a range running past the mapping",
		raw_reg(a + len - 4096, 8192, a, lw, pdh),
		ERRS(EFAULT, EINVAL, ENOMEM), NULL);
	begin();
	verdict("reg_mr with REMOTE_WRITE but no LOCAL_WRITE",
		reg(p, 4096, a, IBV_ACCESS_REMOTE_WRITE), ERRS(EINVAL), NULL);
	begin();
	/* bits 20..29 are optional: a driver may ignore them; 30 is not */
	verdict("reg_mr with an unknown access bit (1 << 30)",
		raw_reg(a, 4096, a, lw | (1 << 30), pdh),
		ERRS(EINVAL, EOPNOTSUPP), NULL);
	begin();
	verdict("reg_mr on a PD handle that does not exist",
		raw_reg(a, 4096, a, lw, pdh + 1000), ERRS(EINVAL, ENOENT), NULL);
	begin();
	verdict("reg_mr whose iova page offset differs from the address's",
		raw_reg(a, 4096, a + 1, lw, pdh), ERRS(EINVAL), NULL);
	{
		struct ib_uverbs_dereg_mr d = { .mr_handle = 4242 };

		begin();
		verdict("dereg_mr of a handle that does not exist",
			-raw_write(env.ctx->cmd_fd, IB_USER_VERBS_CMD_DEREG_MR,
				   (sizeof(struct ib_uverbs_cmd_hdr) + sizeof(d)) / 4,
				   0, &d, sizeof(d)),
			ERRS(EINVAL, ENOENT), NULL);
	}
	munmap(p, len);
}

/* --- completion queues --------------------------------------------------- */

static int cq_try(int cqe, int vector)
{
	struct ibv_cq *cq = ibv_create_cq(env.ctx, cqe, NULL, NULL, vector);

	if (cq) {
		ibv_destroy_cq(cq);
		return 0;
	}
	return errno;
}

/* An RC QP on @rcq in INIT with @n receives posted, to be flushed. */
static struct ibv_qp *flush_source(struct ibv_cq *rcq, int n, struct buf *b)
{
	struct qp_cfg qc = { .scq = rcq, .rcq = rcq, .recv_wr = 64 };
	struct ibv_qp *qp = qp_new(&run, &qc);
	int i;

	if (!qp || !qp_to_init(&run, qp)) {
		if (qp)
			ibv_destroy_qp(qp);
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (!recv_slot(&run, qp, NULL, 100 + i, b)) {
			ibv_destroy_qp(qp);
			return NULL;
		}
	return qp;
}

static void cq_checks(void)
{
	int max = env.dev.max_cqe;
	struct ibv_wc wc[32];
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct buf b;
	int i, k, ret;

	begin();
	verdict("create_cq with cqe 0", cq_try(0, 0), ERRS(EINVAL), NULL);
	begin();
	verdict("create_cq with cqe -1", cq_try(-1, 0), ERRS(EINVAL), NULL);
	begin();
	verdict("create_cq with cqe max_cqe + 1", cq_try(max + 1, 0),
		ERRS(EINVAL), NULL);
	begin();
	verdict("create_cq with cqe INT_MAX", cq_try(0x7fffffff, 0),
		ERRS(EINVAL, ENOMEM), NULL);
	begin();
	verdict("create_cq with comp_vector num_comp_vectors (one past the last)",
		cq_try(16, env.ctx->num_comp_vectors), ERRS(EINVAL), NULL);
	begin();
	verdict("create_cq with comp_vector -1", cq_try(16, -1), ERRS(EINVAL),
		NULL);

	cq = cq_new(&run, 16, NULL);
	if (!setup_ok(cq && buf_new(&run, &b, 65536, ACC_ALL), "cq: setup"))
		return;
	begin();
	ret = ibv_resize_cq(cq, 0);
	verdict("resize_cq to 0", ret, ERRS(EINVAL),
		cq->cqe != 16 ? say("cqe %d after, want 16", cq->cqe) : NULL);
	begin();
	ret = ibv_resize_cq(cq, -5);
	verdict("resize_cq to -5", ret, ERRS(EINVAL),
		cq->cqe != 16 ? say("cqe %d after, want 16", cq->cqe) : NULL);
	begin();
	ret = ibv_resize_cq(cq, max + 1);
	verdict("resize_cq to max_cqe + 1", ret, ERRS(EINVAL),
		cq->cqe != 16 ? say("cqe %d after, want 16", cq->cqe) : NULL);

	/* ten flushed receives waiting, then a resize too small for them */
	qp = flush_source(cq, 10, &b);
	if (setup_ok(qp && qp_move(&run, qp, IBV_QPS_ERR), "cq: ten flushes")) {
		usleep(100000);
		begin();
		ret = ibv_resize_cq(cq, 5);
		k = cq_wait(cq, wc, 32, 500);
		for (i = 0; i < k && wc[i].wr_id == 100u + i; i++)
			;
		verdict("resize_cq to 5 with 10 completions waiting", ret,
			ERRS(EINVAL),
			k != 10 || i != 10 ?
			say("then polled %d completions (%d in order), want 10", k, i) :
			NULL);
		ibv_destroy_qp(qp);
	}
	ibv_destroy_cq(cq);

	/* overflow: 16 flushes into a CQ of 4 */
	cq = cq_new(&run, 4, NULL);
	qp = cq ? flush_source(cq, 16, &b) : NULL;
	if (setup_ok(qp != NULL, "cq: overflow setup")) {
		int ev, want = cq->cqe;

		begin();
		ret = ibv_modify_qp(qp, &(struct ibv_qp_attr){ .qp_state = IBV_QPS_ERR },
				    IBV_QP_STATE);
		ev = async_wait(IBV_EVENT_CQ_ERR, cq, 1, TIMEOUT_MS);
		k = cq_wait(cq, wc, 32, 300);
		n_bad++;
		tap_result(!ret && ev == 1 && k >= 1 && k <= want,
			   "16 flushed receives into a CQ of 4 -> IBV_EVENT_CQ_ERR, the CQ keeps what fit",
			   say("modify_qp %s, %d CQ_ERR events, polled %d (cqe %d)",
			       errno_name(ret), ev, k, want));
		ibv_destroy_qp(qp);
	}
	if (cq)
		ibv_destroy_cq(cq);
	buf_free(&b);
}

/* --- shared receive queues ----------------------------------------------- */

static int srq_try(uint32_t wr, uint32_t sge, uint32_t limit)
{
	struct ibv_srq_init_attr a = {
		.attr = { .max_wr = wr, .max_sge = sge, .srq_limit = limit },
	};
	struct ibv_srq *srq = ibv_create_srq(env.pd, &a);

	if (srq) {
		ibv_destroy_srq(srq);
		return 0;
	}
	return errno;
}

static const char *srq_unchanged(struct ibv_srq *srq, uint32_t wr,
				 uint32_t limit)
{
	struct ibv_srq_attr a;

	if (ibv_query_srq(srq, &a))
		return "query_srq failed";
	if (a.max_wr != wr || a.srq_limit != limit)
		return say("max_wr %u limit %u after, want %u and %u", a.max_wr,
			   a.srq_limit, wr, limit);
	return NULL;
}

static void srq_checks(void)
{
	uint32_t max = env.dev.max_srq_wr;
	struct ibv_recv_wr wr, *bad;
	struct ibv_srq_attr a;
	struct ibv_sge sg[40];
	struct ibv_srq *srq;
	struct buf b;
	uint32_t wr0, i;
	int ret;

	begin();
	verdict("create_srq with max_wr 0", srq_try(0, 1, 0), ERRS(EINVAL), NULL);
	begin();
	verdict("create_srq with max_wr 2^32 - 1", srq_try(~0u, 1, 0),
		ERRS(EINVAL), NULL);
	begin();
	verdict("create_srq with max_wr max_srq_wr + 1", srq_try(max + 1, 1, 0),
		ERRS(EINVAL), NULL);
	begin();
	verdict("create_srq with max_sge max_srq_sge + 1",
		srq_try(16, env.dev.max_srq_sge + 1, 0), ERRS(EINVAL), NULL);
	begin();
	verdict("create_srq with max_sge 2^32 - 1", srq_try(16, ~0u, 0),
		ERRS(EINVAL), NULL);
	begin();
	verdict("create_srq with srq_limit 17 > max_wr 16", srq_try(16, 1, 17),
		ERRS(EINVAL), NULL);

	srq = srq_new(&run, 16, 1);
	if (!setup_ok(srq && srq_attr(&run, srq, &a) &&
		      buf_new(&run, &b, 65536, ACC_ALL), "srq: setup"))
		return;
	wr0 = a.max_wr;
	begin();
	ret = ibv_modify_srq(srq, &(struct ibv_srq_attr){ .srq_limit = wr0 + 1 },
			     IBV_SRQ_LIMIT);
	verdict("modify_srq: limit above max_wr", ret, ERRS(EINVAL),
		srq_unchanged(srq, wr0, 0));
	begin();
	ret = ibv_modify_srq(srq, &(struct ibv_srq_attr){ .max_wr = 0 },
			     IBV_SRQ_MAX_WR);
	verdict("modify_srq: resize to 0", ret, ERRS(EINVAL),
		srq_unchanged(srq, wr0, 0));
	begin();
	ret = ibv_modify_srq(srq, &(struct ibv_srq_attr){ .max_wr = ~0u },
			     IBV_SRQ_MAX_WR);
	verdict("modify_srq: resize to 2^32 - 1", ret, ERRS(EINVAL),
		srq_unchanged(srq, wr0, 0));
	begin();
	ret = ibv_modify_srq(srq, &(struct ibv_srq_attr){ .max_wr = 32, .srq_limit = 33 },
			     IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT);
	verdict("modify_srq: resize to 32 with limit 33", ret, ERRS(EINVAL),
		srq_unchanged(srq, wr0, 0));
	begin();
	ret = ibv_modify_srq(srq, &(struct ibv_srq_attr){ .srq_limit = 1 }, 1 << 7);
	verdict("modify_srq: unknown attribute mask bit", ret,
		ERRS(EINVAL, EOPNOTSUPP), srq_unchanged(srq, wr0, 0));

	for (i = 0; i < 8; i++)
		recv_slot(&run, NULL, srq, 500 + i, &b);
	if (setup_ok(true, "srq: post 8")) {
		begin();
		ret = ibv_modify_srq(srq, &(struct ibv_srq_attr){ .max_wr = 4 },
				     IBV_SRQ_MAX_WR);
		verdict("modify_srq: resize to 4 with 8 posted", ret,
			ERRS(EINVAL), srq_unchanged(srq, wr0, 0));
	}
	for (i = 0; i < ARRAY_SIZE(sg); i++)
		sg[i] = sge_at(&b, 64 * i, 8);
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = sg;
	wr.num_sge = env.dev.max_srq_sge + 1;
	begin();
	ret = ibv_post_srq_recv(srq, &wr, &bad);
	verdict("post_srq_recv with max_srq_sge + 1 SGEs", ret, ERRS(EINVAL),
		ret && bad != &wr ? "bad_wr does not point at the WR" : NULL);
	ibv_destroy_srq(srq);
	buf_free(&b);
}

/* --- queue pairs: creation ----------------------------------------------- */

static int qp_try(int type, uint32_t swr, uint32_t rwr, uint32_t ssge,
		  uint32_t rsge, uint32_t inl, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.cap = { .max_send_wr = swr, .max_recv_wr = rwr,
			 .max_send_sge = ssge, .max_recv_sge = rsge,
			 .max_inline_data = inl },
	};
	struct ibv_qp *qp = ibv_create_qp(env.pd, &a);

	if (qp) {
		ibv_destroy_qp(qp);
		return 0;
	}
	return errno;
}

static void qp_create_checks(void)
{
	uint32_t mw = env.dev.max_qp_wr, ms = env.dev.max_sge;
	struct ibv_cq *cq = cq_new(&run, 64, NULL);
	struct ibv_recv_wr rwr = {}, *rbad;
	struct ibv_send_wr swr = {}, *sbad;
	struct ibv_qp *qp;
	int ret;

	if (!setup_ok(cq != NULL, "qp create: setup"))
		return;
	begin();
	verdict("create_qp with max_send_wr 2^32 - 1",
		qp_try(IBV_QPT_RC, ~0u, 4, 1, 1, 0, cq), ERRS(EINVAL), NULL);
	begin();
	verdict("create_qp with max_recv_wr 2^32 - 1",
		qp_try(IBV_QPT_RC, 4, ~0u, 1, 1, 0, cq), ERRS(EINVAL), NULL);
	begin();
	verdict("create_qp with max_send_wr max_qp_wr + 1",
		qp_try(IBV_QPT_RC, mw + 1, 4, 1, 1, 0, cq), ERRS(EINVAL), NULL);
	begin();
	verdict("create_qp with max_recv_wr max_qp_wr + 1",
		qp_try(IBV_QPT_RC, 4, mw + 1, 1, 1, 0, cq), ERRS(EINVAL), NULL);
	begin();
	verdict("create_qp with max_send_sge max_sge + 1",
		qp_try(IBV_QPT_RC, 4, 4, ms + 1, 1, 0, cq), ERRS(EINVAL), NULL);
	begin();
	verdict("create_qp with max_recv_sge 2^32 - 1",
		qp_try(IBV_QPT_RC, 4, 4, 1, ~0u, 0, cq), ERRS(EINVAL), NULL);
	begin();
	verdict("create_qp with max_send_sge 2^32 - 1",
		qp_try(IBV_QPT_UD, 4, 4, ~0u, 1, 0, cq), ERRS(EINVAL), NULL);
	begin();
	verdict("create_qp with max_wr and max_sge at 2^31 (size overflow)",
		qp_try(IBV_QPT_UC, 1u << 31, 1u << 31, 1u << 31, 1u << 31, 0, cq),
		ERRS(EINVAL), NULL);
	begin();
	verdict("create_qp with max_inline_data 513 (the device has 512)",
		qp_try(IBV_QPT_RC, 4, 4, 1, 1, 513, cq), ERRS(EINVAL), NULL);
	begin();
	verdict("create_qp of type RAW_PACKET",
		qp_try(IBV_QPT_RAW_PACKET, 4, 4, 1, 1, 0, cq),
		ERRS(EOPNOTSUPP, EINVAL, EPERM), NULL);
	begin();
	verdict("create_qp of type 77", qp_try(77, 4, 4, 1, 1, 0, cq),
		ERRS(EOPNOTSUPP, EINVAL), NULL);
	{
		struct ib_uverbs_create_qp c = {
			.pd_handle = env.pd->handle, .send_cq_handle = 4242,
			.recv_cq_handle = 4242, .max_send_wr = 4,
			.max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1,
			.qp_type = IBV_QPT_RC,
		};
		struct ib_uverbs_create_qp_resp r;

		begin();
		verdict("create_qp on CQ handles that do not exist",
			-raw_cmd(env.ctx->cmd_fd, IB_USER_VERBS_CMD_CREATE_QP, &c,
				 sizeof(c), &r, sizeof(r)),
			ERRS(EINVAL, ENOENT), NULL);
	}

	/* max_send_wr 0 and max_recv_wr 0 are legal; every post then fails */
	{
		struct qp_cfg qc = { .scq = cq, .rcq = cq };
		struct ibv_qp_init_attr a = {
			.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
			.cap = { .max_send_sge = 1, .max_recv_sge = 1 },
		};

		(void)qc;
		qp = ibv_create_qp(env.pd, &a);
		if (setup_ok(qp && qp_to_init(&run, qp) &&
			     qp_to_rtr(&run, qp, qp->qp_num, 1) &&
			     qp_to_rts(&run, qp, 0),
			     "create_qp with max_send_wr 0 and max_recv_wr 0, to RTS")) {
			begin();
			ret = ibv_post_recv(qp, &rwr, &rbad);
			verdict("post_recv to a QP of max_recv_wr 0", ret,
				ERRS(ENOMEM), cq_quiet(&run, cq, 50, "") ? NULL :
				"a completion appeared");
			begin();
			swr.opcode = IBV_WR_SEND;
			ret = ibv_post_send(qp, &swr, &sbad);
			verdict("post_send to a QP of max_send_wr 0", ret,
				ERRS(ENOMEM), cq_quiet(&run, cq, 50, "") ? NULL :
				"a completion appeared");
			run.failures = 0;
		}
		if (qp)
			ibv_destroy_qp(qp);
	}
	ibv_destroy_cq(cq);
}

/* --- queue pairs: the state machine and attributes ------------------------ */

static void modify_bad(struct ibv_qp *qp, const char *what,
		       struct ibv_qp_attr *a, int mask, const int *want)
{
	int was = qp_state(qp), ret, now;

	begin();
	ret = ibv_modify_qp(qp, a, mask);
	now = qp_state(qp);
	verdict(say("%s QP: %s", state_str(was), what), ret, want,
		now != was ? say("state %s after, was %s", state_str(now),
				 state_str(was)) : NULL);
}

static void qp_modify_checks(void)
{
	struct ibv_cq *cq = cq_new(&run, 64, NULL);
	struct qp_cfg qc = { .scq = cq, .rcq = cq };
	struct ibv_qp_attr a;
	struct ibv_qp *qp = cq ? qp_new(&run, &qc) : NULL;
	const int init_mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
			      IBV_QP_ACCESS_FLAGS;
	const int rtr_mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			     IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			     IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	const int rts_mask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_MAX_QP_RD_ATOMIC;

	if (!setup_ok(qp != NULL, "qp modify: setup"))
		goto out;

	/* from RESET */
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
	modify_bad(qp, "to RTR", &a, IBV_QP_STATE, ERRS(EINVAL));
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS };
	modify_bad(qp, "to RTS", &a, IBV_QP_STATE, ERRS(EINVAL));
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_SQD };
	modify_bad(qp, "to SQD", &a, IBV_QP_STATE, ERRS(EINVAL));
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT };
	modify_bad(qp, "to INIT without port, P_Key index, access", &a,
		   IBV_QP_STATE, ERRS(EINVAL));
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 2 };
	modify_bad(qp, "to INIT on port 2", &a, init_mask, ERRS(EINVAL));
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1,
				  .pkey_index = 7 };
	modify_bad(qp, "to INIT with P_Key index 7", &a, init_mask,
		   ERRS(EINVAL));
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1,
				  .qp_access_flags = 1 << 30 };
	/* bits 20..29 are optional ones a driver may ignore; 30 is not */
	modify_bad(qp, "to INIT with unknown access bit 1 << 30", &a, init_mask,
		   ERRS(EINVAL));
	a = (struct ibv_qp_attr){ .qp_state = 99 };
	modify_bad(qp, "to state 99", &a, IBV_QP_STATE, ERRS(EINVAL));
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1,
				  .cur_qp_state = IBV_QPS_RTS };
	modify_bad(qp, "to INIT claiming the current state is RTS", &a,
		   init_mask | IBV_QP_CUR_STATE, ERRS(EINVAL));
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1,
				  .qkey = 1 };
	modify_bad(qp, "to INIT with a Q_Key (not an RC attribute)", &a,
		   init_mask | IBV_QP_QKEY, ERRS(EINVAL));
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT, .port_num = 1,
				  .cap = { .max_send_wr = 1u << 30 } };
	modify_bad(qp, "to INIT with new capacities", &a, init_mask | IBV_QP_CAP,
		   ERRS(EINVAL));

	if (!setup_ok(qp_to_init(&run, qp), "qp modify: to INIT"))
		goto out;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS };
	modify_bad(qp, "to RTS", &a, rts_mask, ERRS(EINVAL));
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
	modify_bad(qp, "to RTR without the path", &a, IBV_QP_STATE, ERRS(EINVAL));

#define RTR(field, value, what) do {					\
		memset(&a, 0, sizeof(a));				\
		a.qp_state = IBV_QPS_RTR;				\
		a.path_mtu = env.port.active_mtu;			\
		a.dest_qp_num = qp->qp_num;				\
		a.max_dest_rd_atomic = 1;				\
		fill_ah(&a.ah_attr);					\
		a.field = value;					\
		modify_bad(qp, what, &a, rtr_mask, ERRS(EINVAL));	\
	} while (0)

	RTR(dest_qp_num, 1u << 24, "to RTR with dest QPN 2^24");
	RTR(path_mtu, 0, "to RTR with path MTU 0");
	RTR(path_mtu, 9, "to RTR with path MTU 9");
	RTR(ah_attr.dlid, 0, "to RTR with DLID 0");
	RTR(ah_attr.port_num, 3, "to RTR with the path on port 3");
	RTR(ah_attr.is_global = 1; a.ah_attr.grh.sgid_index, 5,
	    "to RTR with a GRH from GID index 5 (the port has 1 GID)");
	RTR(min_rnr_timer, 32, "to RTR with min_rnr_timer 32");
	RTR(max_dest_rd_atomic, 255, "to RTR with max_dest_rd_atomic 255");
#undef RTR
	if (!setup_ok(qp_to_rtr(&run, qp, qp->qp_num, 1), "qp modify: to RTR"))
		goto out;

#define RTS(field, value, what) do {					\
		memset(&a, 0, sizeof(a));				\
		a.qp_state = IBV_QPS_RTS;				\
		a.timeout = 14;						\
		a.retry_cnt = 7;					\
		a.rnr_retry = 7;					\
		a.max_rd_atomic = 1;					\
		a.field = value;					\
		modify_bad(qp, what, &a, rts_mask, ERRS(EINVAL));	\
	} while (0)

	RTS(retry_cnt, 8, "to RTS with retry_cnt 8");
	RTS(rnr_retry, 8, "to RTS with rnr_retry 8");
	RTS(timeout, 32, "to RTS with timeout 32");
	RTS(max_rd_atomic, 255, "to RTS with max_rd_atomic 255");
#undef RTS
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .alt_port_num = 1 };
	modify_bad(qp, "to RTS with an alternate path", &a,
		   rts_mask | IBV_QP_ALT_PATH, ERRS(EINVAL));
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_INIT };
	modify_bad(qp, "back to INIT", &a, IBV_QP_STATE, ERRS(EINVAL));
out:
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
}

/* --- posting ------------------------------------------------------------- */

/* POST_SEND / POST_RECV through write() with counts that lie. */
static int raw_post(struct ibv_qp *qp, bool send, uint32_t wr_count,
		    uint32_t sge_count, uint32_t num_sge, uint32_t wqe_size)
{
	struct {
		struct ib_uverbs_post_send c;
		union {
			struct ib_uverbs_send_wr s;
			struct ib_uverbs_recv_wr r;
		} wr;
		struct ib_uverbs_sge sge[4];
	} m;
	struct ib_uverbs_post_send_resp resp;

	memset(&m, 0, sizeof(m));
	m.c.qp_handle = qp->handle;
	m.c.wr_count = wr_count;
	m.c.sge_count = sge_count;
	m.c.wqe_size = wqe_size;
	if (send) {
		m.wr.s.num_sge = num_sge;
		m.wr.s.opcode = IBV_WR_SEND;
	} else {
		m.wr.r.num_sge = num_sge;
	}
	return -raw_cmd(qp->context->cmd_fd,
			send ? IB_USER_VERBS_CMD_POST_SEND :
			       IB_USER_VERBS_CMD_POST_RECV,
			&m, sizeof(m), &resp, sizeof(resp));
}

static const char *nothing_sent(struct pair *p)
{
	struct ibv_wc wc;

	if (cq_wait(p->scq[0], &wc, 1, 50) != 0)
		return say("a send completion appeared: %s", wc_str(&wc));
	if (cq_wait(p->rcq[1], &wc, 1, 0) != 0)
		return say("a receive completion appeared: %s", wc_str(&wc));
	return NULL;
}

static int post_one(struct pair *p, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad = NULL;

	return ibv_post_send(p->qp[0], wr, &bad);
}

static void post_checks(void)
{
	struct pair_cfg pc = { .recv_sge = 4, .send_sge = 4 };
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_send_wr wr;
	struct ibv_sge sg[40];
	struct pair p;
	unsigned int i;
	int ret;

	if (!setup_ok(pair_new(&run, &p, &pc) &&
		      recv_slot(&run, p.qp[1], NULL, 1, &p.buf[1]),
		      "post: an RC pair"))
		goto out;
	for (i = 0; i < ARRAY_SIZE(sg); i++)
		sg[i] = sge_at(&p.buf[0], 64 * i, 8);

#define SEND(...) do {							\
		memset(&wr, 0, sizeof(wr));				\
		wr.opcode = IBV_WR_SEND;				\
		wr.sg_list = sg;					\
		wr.num_sge = 1;						\
		wr.send_flags = IBV_SEND_SIGNALED;			\
		__VA_ARGS__;						\
	} while (0)

	SEND(wr.num_sge = 5);
	begin();
	verdict("post_send with 5 SGEs on a QP of max_send_sge 4",
		post_one(&p, &wr), ERRS(EINVAL), nothing_sent(&p));
	SEND(wr.opcode = 99);
	begin();
	verdict("post_send with opcode 99", post_one(&p, &wr), ERRS(EINVAL),
		nothing_sent(&p));
	SEND(wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP; wr.wr.atomic.rkey = p.buf[1].mr->rkey;
	     wr.wr.atomic.remote_addr = (uintptr_t)p.buf[1].p; wr.num_sge = 2);
	begin();
	verdict("post_send of an atomic with two result SGEs (one of 8 bytes wanted)",
		post_one(&p, &wr), ERRS(EINVAL), nothing_sent(&p));
	SEND(wr.opcode = IBV_WR_LOCAL_INV; wr.invalidate_rkey = p.buf[0].mr->rkey);
	begin();
	verdict("post_send LOCAL_INV (fast registration is the kernel's)",
		post_one(&p, &wr), ERRS(EINVAL, EOPNOTSUPP), nothing_sent(&p));
	SEND(wr.send_flags |= IBV_SEND_INLINE);
	begin();
	verdict("post_send with IBV_SEND_INLINE (max_inline_data 0)",
		post_one(&p, &wr), ERRS(EINVAL), nothing_sent(&p));
	SEND(sg[0].length = 0xfffffff0u; sg[1].length = 0x20; wr.num_sge = 2);
	begin();
	verdict("post_send of 2^32 + 16 bytes (a 32-bit sum wraps to 16)",
		post_one(&p, &wr), ERRS(EINVAL), nothing_sent(&p));
	sg[0].length = sg[1].length = 8;
	SEND(sg[0].length = 16 << 20; sg[1].length = 1; wr.num_sge = 2);
	begin();
	verdict("post_send of max_msg_sz + 1 bytes", post_one(&p, &wr),
		ERRS(EINVAL), nothing_sent(&p));
	sg[0].length = sg[1].length = 8;
	{
		struct ibv_send_wr w2;

		SEND(wr.next = &w2);
		w2 = wr;
		w2.next = NULL;
		w2.num_sge = 5;	/* the core passes it on; the driver refuses */
		w2.wr_id = 2;
		begin();
		{
			struct ibv_send_wr *bad = NULL;
			struct ibv_wc wc;
			const char *extra = NULL;

			ret = ibv_post_send(p.qp[0], &wr, &bad);
			if (ret && bad != &w2)
				extra = "bad_wr is not the second WR";
			else if (!cq_get(&run, p.scq[0], &wc, "the first WR") ||
				 wc.status != IBV_WC_SUCCESS || wc.wr_id != 0)
				extra = "the first WR did not complete";
			else if (!cq_get(&run, p.rcq[1], &wc, "its receive"))
				extra = "the first WR was not received";
			else
				extra = nothing_sent(&p);
			run.failures = 0;
			verdict("post_send of a good WR, then one with 5 SGEs (max 4)", ret,
				ERRS(EINVAL), extra);
		}
	}
	begin();
	verdict("raw post_send: sge_count 2^30, buffer of 4 SGEs",
		raw_post(p.qp[0], true, 1, 1u << 30, 1u << 30,
			 sizeof(struct ib_uverbs_send_wr)),
		ERRS(EINVAL, EFAULT, ENOSPC), nothing_sent(&p));
	begin();
	verdict("raw post_send: num_sge 2^32 - 1 with sge_count 4",
		raw_post(p.qp[0], true, 1, 4, ~0u, sizeof(struct ib_uverbs_send_wr)),
		ERRS(EINVAL, EFAULT, ENOSPC), nothing_sent(&p));
	begin();
	verdict("raw post_send: wr_count 2^32 - 1",
		raw_post(p.qp[0], true, ~0u, 0, 0, sizeof(struct ib_uverbs_send_wr)),
		ERRS(EINVAL, EFAULT, ENOSPC), nothing_sent(&p));
	begin();
	verdict("raw post_send: wqe_size 2^31 (wr_count x wqe_size overflows)",
		raw_post(p.qp[0], true, 2, 0, 0, 1u << 31),
		ERRS(EINVAL, EFAULT, ENOSPC), nothing_sent(&p));
	begin();
	verdict("raw post_send: wqe_size 8 (smaller than a WR)",
		raw_post(p.qp[0], true, 1, 0, 0, 8),
		ERRS(EINVAL, EFAULT, ENOSPC, EOPNOTSUPP), nothing_sent(&p));
	begin();
	verdict("raw post_recv: sge_count 2^30, buffer of 4 SGEs",
		raw_post(p.qp[1], false, 1, 1u << 30, 1u << 30,
			 sizeof(struct ib_uverbs_recv_wr)),
		ERRS(EINVAL, EFAULT, ENOSPC), nothing_sent(&p));
	begin();
	verdict("raw post_recv: num_sge 2^32 - 1 with sge_count 4",
		raw_post(p.qp[1], false, 1, 4, ~0u,
			 sizeof(struct ib_uverbs_recv_wr)),
		ERRS(EINVAL, EFAULT, ENOSPC), nothing_sent(&p));
	memset(&rwr, 0, sizeof(rwr));
	rwr.sg_list = sg;
	rwr.num_sge = 5;
	begin();
	ret = ibv_post_recv(p.qp[1], &rwr, &rbad);
	verdict("post_recv with 5 SGEs on a QP of max_recv_sge 4", ret,
		ERRS(EINVAL), nothing_sent(&p));

	/* the pair still works (the good WR above took the first receive) */
	setup_ok(recv_slot(&run, p.qp[1], NULL, 2, &p.buf[1]) &&
		 deliver(&run, &p, 2), "post: the pair delivers after all that");
	/* and a QP in RESET takes nothing */
	if (setup_ok(qp_move(&run, p.qp[0], IBV_QPS_RESET), "post: QP to RESET")) {
		SEND();
		begin();
		verdict("post_send on a QP in RESET", post_one(&p, &wr),
			ERRS(EINVAL), nothing_sent(&p));
	}
out:
	pair_free(&p);
}

/* --- keys ---------------------------------------------------------------- */

/* Both QPs of a pair back to RTS, CQs drained. */
static bool reconnect(struct pair *p)
{
	struct ibv_wc wc[16];
	int i;

	for (i = 0; i < 2; i++) {
		if (!qp_move(&run, p->qp[i], IBV_QPS_RESET))
			return false;
		while (ibv_poll_cq(p->scq[i], 16, wc) > 0 ||
		       ibv_poll_cq(p->rcq[i], 16, wc) > 0)
			;
	}
	return pair_connect(&run, p);
}

/*
 * Posts @wr on qp[0]: it must complete with @want, and neither buffer of
 * the pair nor @guard (if any) may change.  @rq_status: the status the
 * receive posted on qp[1] must complete with, or -1 for none at all (a
 * remote access error moves the responder to ERR too: its receive is
 * flushed, never consumed).
 */
static void key_case(struct pair *p, const char *what, struct ibv_send_wr *wr,
		     enum ibv_wc_status want, int rq_status,
		     const struct buf *guard)
{
	static unsigned char copy[2][65536];
	const char *extra = NULL;
	struct ibv_wc wc;
	int ret, i;

	if (!reconnect(p) || !recv_slot(&run, p->qp[1], NULL, 77, &p->buf[1])) {
		setup_ok(false, say("keys: reconnect for %s", what));
		return;
	}
	for (i = 0; i < 2; i++)
		memcpy(copy[i], p->buf[i].p, sizeof(copy[i]));
	begin();
	ret = post_one(p, wr);
	if (ret) {
		extra = say("post_send refused it: %s", errno_name(ret));
	} else if (!cq_get(&run, p->scq[0], &wc, what)) {
		extra = "no send completion";
	} else if (wc.status != want) {
		extra = say("send completion %s, want %s", wc_str(&wc),
			    ibv_wc_status_str(want));
	} else if (rq_status < 0 ? cq_wait(p->rcq[1], &wc, 1, 50) != 0 :
		   !cq_get(&run, p->rcq[1], &wc, "the receive") ||
		   (int)wc.status != rq_status) {
		extra = rq_status < 0 ? say("a receive completed: %s", wc_str(&wc)) :
			say("receive completion %s, want %s", wc_str(&wc),
			    ibv_wc_status_str(rq_status));
	} else {
		for (i = 0; i < 2 && !extra; i++)
			if (memcmp(copy[i], p->buf[i].p, sizeof(copy[i])))
				extra = say("the buffer of QP %d changed", i);
		if (!extra && guard &&
		    first_not(guard->p, guard->len, 0xee) != guard->len)
			extra = "memory behind a bad key changed";
	}
	run.failures = 0;
	n_bad++;
	tap_result(!extra, say("%s -> %s", what, ibv_wc_status_str(want)), extra);
}

/* A child process's registered memory: address, length and rkey. */
struct foreign {
	uint64_t addr;
	uint32_t len, rkey, qpn;
	pid_t pid;
	int to_child, from_child;
};

/*
 * The child: its own context, PD and region of 0xee bytes with every
 * remote access, and an RC QP in RTS connected to a second QP of its own.
 * It reports its keys, waits for the parent to be done, and exits 0 iff
 * its memory still holds 0xee.
 */
static void child(int wfd, int rfd)
{
	struct pair_cfg pc = { .recv_sge = 1, .send_sge = 1 };
	struct foreign f = { 0 };
	struct pair p;
	char c;

	memset(&env, 0, sizeof(env));
	if (open_env(devname) || !pair_new(&run, &p, &pc))
		_exit(10);
	memset(p.buf[1].p, 0xee, p.buf[1].len);
	f.addr = (uintptr_t)p.buf[1].p;
	f.len = p.buf[1].len;
	f.rkey = p.buf[1].mr->rkey;
	f.qpn = p.qp[1]->qp_num;
	if (write(wfd, &f, sizeof(f)) != sizeof(f))
		_exit(11);
	if (read(rfd, &c, 1) != 1)
		_exit(12);
	if (first_not(p.buf[1].p, p.buf[1].len, 0xee) != p.buf[1].len)
		_exit(1);
	_exit(0);
}

static bool foreign_start(struct foreign *f)
{
	int a[2], b[2];

	if (pipe(a) || pipe(b))
		return false;
	f->pid = fork();
	if (f->pid < 0)
		return false;
	if (f->pid == 0) {
		close(a[0]);
		close(b[1]);
		child(a[1], b[0]);
	}
	close(a[1]);
	close(b[0]);
	f->from_child = a[0];
	f->to_child = b[1];
	{
		struct foreign got;

		if (read(f->from_child, &got, sizeof(got)) != sizeof(got))
			return false;
		f->addr = got.addr;
		f->len = got.len;
		f->rkey = got.rkey;
		f->qpn = got.qpn;
	}
	return true;
}

/* 0 iff the child found its memory untouched. */
static int foreign_end(struct foreign *f)
{
	int st;

	if (write(f->to_child, "x", 1) != 1)
		return -1;
	close(f->to_child);
	close(f->from_child);
	if (waitpid(f->pid, &st, 0) != f->pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* krwq's local DMA lkey (module/krwq.h), and an x86-64 direct-map address */
#define KERNEL_DMA_LKEY 0x7f
#define KERNEL_ADDR 0xffff888000100000ull

static void key_checks(void)
{
	struct pair_cfg pc = { .recv_sge = 1, .send_sge = 1 };
	struct ibv_pd *pd2 = NULL;
	struct ibv_mr *other = NULL;
	struct buf stale = {}, local_only = {}, guard = {}, ro = {};
	struct ibv_send_wr wr;
	struct ibv_sge sg;
	struct foreign f = { 0 };
	uint32_t stale_key;
	struct pair p;
	unsigned char *other_mem;
	int st;

	if (!setup_ok(pair_new(&run, &p, &pc) &&
		      buf_new(&run, &stale, 4096, ACC_ALL) &&
		      buf_new(&run, &local_only, 4096, IBV_ACCESS_LOCAL_WRITE) &&
		      buf_new(&run, &guard, 65536, ACC_ALL) &&
		      buf_new(&run, &ro, 4096, 0),
		      "keys: setup"))
		goto out;
	memset(guard.p, 0xee, guard.len);
	memset(ro.p, 0xee, ro.len);
	stale_key = stale.mr->lkey;
	ibv_dereg_mr(stale.mr);
	stale.mr = NULL;
	pd2 = ibv_alloc_pd(env.ctx);
	other_mem = calloc(1, 65536);
	if (pd2 && other_mem)
		other = ibv_reg_mr(pd2, other_mem, 65536, ACC_ALL);
	if (!setup_ok(other != NULL, "keys: a region in a second PD"))
		goto out;
	memset(other_mem, 0xee, 65536);

#define WR(op, ...) do {						\
		memset(&wr, 0, sizeof(wr));				\
		sg = sge_at(&p.buf[0], 0, 64);				\
		wr.opcode = op;						\
		wr.sg_list = &sg;					\
		wr.num_sge = 1;						\
		wr.send_flags = IBV_SEND_SIGNALED;			\
		wr.wr.rdma.remote_addr = (uintptr_t)p.buf[1].p;		\
		wr.wr.rdma.rkey = p.buf[1].mr->rkey;			\
		__VA_ARGS__;						\
	} while (0)

	/* local keys of a send */
	WR(IBV_WR_SEND, sg.lkey = 0x7a3c19d5);
	key_case(&p, "SEND with a random lkey", &wr, IBV_WC_LOC_PROT_ERR, -1, NULL);
	WR(IBV_WR_SEND, sg.lkey = stale_key; sg.addr = (uintptr_t)stale.p);
	key_case(&p, "SEND with the lkey of a deregistered region", &wr,
		 IBV_WC_LOC_PROT_ERR, -1, NULL);
	WR(IBV_WR_SEND, sg.lkey = other->lkey; sg.addr = (uintptr_t)other_mem);
	key_case(&p, "SEND from a region of another PD", &wr,
		 IBV_WC_LOC_PROT_ERR, -1, NULL);
	WR(IBV_WR_SEND, sg.addr = ~0ull - 7);
	key_case(&p, "SEND whose SGE wraps past 2^64", &wr,
		 IBV_WC_LOC_PROT_ERR, -1, NULL);
	WR(IBV_WR_SEND, sg.addr = (uintptr_t)p.buf[0].p + p.buf[0].len - 32);
	key_case(&p, "SEND whose SGE runs past its region", &wr,
		 IBV_WC_LOC_PROT_ERR, -1, NULL);

	/*
	 * the device's local DMA lkey names all kernel memory, for kernel
	 * PDs' local access only: from user space, locally or remotely, it
	 * must name nothing (the address is one of the kernel's direct map)
	 */
	WR(IBV_WR_SEND, sg.lkey = KERNEL_DMA_LKEY; sg.addr = KERNEL_ADDR);
	key_case(&p, "SEND with the kernel's local DMA lkey from a user PD",
		 &wr, IBV_WC_LOC_PROT_ERR, -1, NULL);
	WR(IBV_WR_RDMA_WRITE, wr.wr.rdma.rkey = KERNEL_DMA_LKEY;
	   wr.wr.rdma.remote_addr = KERNEL_ADDR);
	key_case(&p, "RDMA WRITE to kernel memory with the local DMA lkey",
		 &wr, IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR, NULL);
	WR(IBV_WR_RDMA_READ, wr.wr.rdma.rkey = KERNEL_DMA_LKEY;
	   wr.wr.rdma.remote_addr = KERNEL_ADDR);
	key_case(&p, "RDMA READ of kernel memory with the local DMA lkey",
		 &wr, IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR, NULL);

	/* RDMA WRITE: remote keys and ranges */
	WR(IBV_WR_RDMA_WRITE, wr.wr.rdma.rkey = 0x51c0ffee);
	key_case(&p, "RDMA WRITE with a random rkey", &wr,
		 IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR, NULL);
	WR(IBV_WR_RDMA_WRITE, wr.wr.rdma.rkey = stale_key;
	   wr.wr.rdma.remote_addr = (uintptr_t)stale.p);
	key_case(&p, "RDMA WRITE with the rkey of a deregistered region", &wr,
		 IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR, NULL);
	WR(IBV_WR_RDMA_WRITE, wr.wr.rdma.rkey = other->rkey;
	   wr.wr.rdma.remote_addr = (uintptr_t)other_mem);
	key_case(&p, "RDMA WRITE to a region of another PD", &wr,
		 IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR, NULL);
	WR(IBV_WR_RDMA_WRITE, wr.wr.rdma.rkey = local_only.mr->rkey;
	   wr.wr.rdma.remote_addr = (uintptr_t)local_only.p);
	key_case(&p, "RDMA WRITE to a region without REMOTE_WRITE", &wr,
		 IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR, NULL);
	WR(IBV_WR_RDMA_WRITE, wr.wr.rdma.remote_addr = ~0ull - 15);
	key_case(&p, "RDMA WRITE whose remote range wraps past 2^64", &wr,
		 IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR, NULL);
	WR(IBV_WR_RDMA_WRITE,
	   wr.wr.rdma.remote_addr = (uintptr_t)p.buf[1].p + p.buf[1].len - 8);
	key_case(&p, "RDMA WRITE running past the remote region", &wr,
		 IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR, NULL);
	WR(IBV_WR_RDMA_WRITE, wr.wr.rdma.remote_addr = (uintptr_t)p.buf[1].p - 64);
	key_case(&p, "RDMA WRITE starting before the remote region", &wr,
		 IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR, NULL);
	WR(IBV_WR_RDMA_WRITE, wr.wr.rdma.rkey = guard.mr->rkey + 1;
	   wr.wr.rdma.remote_addr = (uintptr_t)guard.p);
	key_case(&p, "RDMA WRITE with a valid rkey + 1 (same index, other tag)",
		 &wr, IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR, &guard);
	WR(IBV_WR_RDMA_WRITE, wr.wr.rdma.rkey = guard.mr->rkey + 0x100;
	   wr.wr.rdma.remote_addr = (uintptr_t)guard.p);
	key_case(&p, "RDMA WRITE with a valid rkey + 0x100 (the next index)",
		 &wr, IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR, &guard);

	/* RDMA READ */
	WR(IBV_WR_RDMA_READ, wr.wr.rdma.rkey = 0x0badcafe);
	key_case(&p, "RDMA READ with a random rkey", &wr,
		 IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR, NULL);
	WR(IBV_WR_RDMA_READ, wr.wr.rdma.rkey = stale_key;
	   wr.wr.rdma.remote_addr = (uintptr_t)stale.p);
	key_case(&p, "RDMA READ with the rkey of a deregistered region", &wr,
		 IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR, NULL);
	WR(IBV_WR_RDMA_READ, wr.wr.rdma.rkey = other->rkey;
	   wr.wr.rdma.remote_addr = (uintptr_t)other_mem);
	key_case(&p, "RDMA READ from a region of another PD", &wr,
		 IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR, NULL);
	WR(IBV_WR_RDMA_READ, wr.wr.rdma.remote_addr = ~0ull - 15);
	key_case(&p, "RDMA READ whose remote range wraps past 2^64", &wr,
		 IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR, NULL);
	WR(IBV_WR_RDMA_READ, sg = sge_at(&ro, 0, 64));
	key_case(&p, "RDMA READ into a read-only region (no LOCAL_WRITE)", &wr,
		 IBV_WC_LOC_PROT_ERR, -1, &ro);

	/* receives with a bad lkey, and into read-only memory */
	for (int k = 0; k < 2; k++) {
		struct ibv_recv_wr rwr = { .wr_id = 88, .num_sge = 1 }, *rb;
		struct ibv_sge rs = k ? sge_at(&ro, 0, 64) : sge_at(&p.buf[1], 0, 64);
		const char *extra = NULL;
		struct ibv_wc wc;

		if (!k)
			rs.lkey = 0x33cc33cc;
		rwr.sg_list = &rs;
		memcpy(p.buf[1].p, "untouched", 10);
		WR(IBV_WR_SEND);
		if (!reconnect(&p) || ibv_post_recv(p.qp[1], &rwr, &rb) ||
		    post_one(&p, &wr))
			extra = "posting failed";
		else if (!cq_get(&run, p.scq[0], &wc, "send") ||
			 wc.status != IBV_WC_REM_OP_ERR)
			extra = say("send completion %s, want REM_OP_ERR",
				    wc_str(&wc));
		else if (!cq_get(&run, p.rcq[1], &wc, "recv") ||
			 wc.status != IBV_WC_LOC_PROT_ERR)
			extra = say("receive completion %s, want LOC_PROT_ERR",
				    wc_str(&wc));
		else if (memcmp(p.buf[1].p, "untouched", 10) ||
			 first_not(ro.p, ro.len, 0xee) != ro.len)
			extra = "the receiver's memory changed";
		run.failures = 0;
		n_bad++;
		tap_result(!extra, k ?
			   "a receive into a read-only region -> LOC_PROT_ERR, sender REM_OP_ERR" :
			   "a receive with a random lkey -> LOC_PROT_ERR, sender REM_OP_ERR",
			   extra);
	}

	/* another process's memory */
	if (!setup_ok(foreign_start(&f), "keys: a second process with its own region"))
		goto out;
	WR(IBV_WR_RDMA_WRITE, wr.wr.rdma.rkey = f.rkey; wr.wr.rdma.remote_addr = f.addr);
	key_case(&p, "RDMA WRITE with another process's rkey", &wr,
		 IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR, NULL);
	WR(IBV_WR_RDMA_READ, wr.wr.rdma.rkey = f.rkey; wr.wr.rdma.remote_addr = f.addr);
	key_case(&p, "RDMA READ with another process's rkey", &wr,
		 IBV_WC_REM_ACCESS_ERR, IBV_WC_WR_FLUSH_ERR, NULL);
	WR(IBV_WR_SEND, sg.lkey = f.rkey; sg.addr = f.addr);
	key_case(&p, "SEND from another process's region (its key as lkey)", &wr,
		 IBV_WC_LOC_PROT_ERR, -1, NULL);
	/* our QP aimed at the child's QP, which is connected elsewhere */
	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
		const char *extra = NULL;
		struct ibv_wc wc;

		if (!reconnect(&p) || ibv_modify_qp(p.qp[0], &a, IBV_QP_STATE) ||
		    !qp_to_init(&run, p.qp[0]) ||
		    !qp_to_rtr(&run, p.qp[0], f.qpn, 1) ||
		    !qp_to_rts(&run, p.qp[0], 0)) {
			extra = "could not aim a QP at the other process's QP";
		} else {
			WR(IBV_WR_RDMA_WRITE, wr.wr.rdma.rkey = f.rkey;
			   wr.wr.rdma.remote_addr = f.addr);
			if (post_one(&p, &wr))
				extra = "post_send refused";
			else if (!cq_get(&run, p.scq[0], &wc, "write") ||
				 wc.status != IBV_WC_RETRY_EXC_ERR)
				extra = say("completion %s, want RETRY_EXC_ERR",
					    wc_str(&wc));
		}
		run.failures = 0;
		n_bad++;
		tap_result(!extra, "RDMA WRITE through a QP aimed at another process's QP -> RETRY_EXC_ERR",
			   extra);
	}
	st = foreign_end(&f);
	tap_result(st == 0, "the other process's memory is untouched",
		   say("child exit status %d", st));

	/* nothing above reached memory behind the other PD's key either */
	tap_result(first_not(other_mem, 65536, 0xee) == 65536 &&
		   first_not(guard.p, guard.len, 0xee) == guard.len,
		   "memory of the other PD and behind guessed keys is untouched",
		   "changed");
out:
	if (other)
		ibv_dereg_mr(other);
	if (pd2)
		ibv_dealloc_pd(pd2);
	buf_free(&local_only);
	buf_free(&guard);
	buf_free(&ro);
	pair_free(&p);
}

/* --- commands with bad handles and lying headers ------------------------- */

static void raw_checks(void)
{
	int fd = env.ctx->cmd_fd;
	unsigned char body[64] = { 0 };
	struct ib_uverbs_destroy_qp dq = { .qp_handle = 99999 };
	struct ib_uverbs_poll_cq pc = { .cq_handle = 99999, .ne = 1 };
	struct ib_uverbs_create_cq cc = { .cqe = 16, .comp_channel = -1 };
	struct ib_uverbs_destroy_qp_resp dqr;
	unsigned char resp[256];

	begin();
	verdict("destroy_qp of a handle that does not exist",
		-raw_cmd(fd, IB_USER_VERBS_CMD_DESTROY_QP, &dq, sizeof(dq),
			 &dqr, sizeof(dqr)), ERRS(EINVAL, ENOENT), NULL);
	begin();
	verdict("poll_cq of a handle that does not exist",
		-raw_cmd(fd, IB_USER_VERBS_CMD_POLL_CQ, &pc, sizeof(pc), resp,
			 sizeof(resp)), ERRS(EINVAL, ENOENT), NULL);
	begin();
	verdict("create_cq with in_words one word short",
		-raw_write(fd, IB_USER_VERBS_CMD_CREATE_CQ,
			   (sizeof(struct ib_uverbs_cmd_hdr) + sizeof(cc)) / 4 - 1,
			   sizeof(struct ib_uverbs_create_cq_resp) / 4, &cc,
			   sizeof(cc)), ERRS(EINVAL), NULL);
	begin();
	cc.response = 0;
	verdict("create_cq with out_words but a NULL response",
		-raw_write(fd, IB_USER_VERBS_CMD_CREATE_CQ,
			   (sizeof(struct ib_uverbs_cmd_hdr) + sizeof(cc)) / 4,
			   sizeof(struct ib_uverbs_create_cq_resp) / 4, &cc,
			   sizeof(cc)), ERRS(EFAULT), NULL);
	begin();
	cc.response = 0xffff888000000000ull;
	verdict("create_cq with a kernel address as response",
		-raw_write(fd, IB_USER_VERBS_CMD_CREATE_CQ,
			   (sizeof(struct ib_uverbs_cmd_hdr) + sizeof(cc)) / 4,
			   sizeof(struct ib_uverbs_create_cq_resp) / 4, &cc,
			   sizeof(cc)), ERRS(EFAULT), NULL);
	begin();
	{
		ssize_t n = write(fd, body, 3);

		verdict("a write of 3 bytes (less than a header)",
			n < 0 ? errno : 0, ERRS(EINVAL), NULL);
	}
	begin();
	verdict("command 200", -raw_write(fd, 200, 4, 0, body, 8),
		ERRS(EINVAL, EOPNOTSUPP, ENOSYS), NULL);
	begin();
	verdict("extended command 63",
		-raw_write(fd, IB_USER_VERBS_CMD_FLAG_EXTENDED | 63, 4, 0, body,
			   sizeof(body)), ERRS(EINVAL, EOPNOTSUPP, ENOSYS), NULL);
}

int hostile_verbs(const char *dev)
{
	const char *why;
	struct res base, end;

	devname = dev;
	printf("TAP version 13\n");
	why = open_env(dev);
	if (why) {
		tap_result(false, "open the device", why);
		printf("1..%u\n", tap_count());
		return tap_finish();
	}
	res_read(dev, &base);
	tap_note("device %s, objects at the start: %s", dev, res_str(&base));
	tap_result(base.ok, "rdma resource show gives the object counts",
		   "no counts");
	mr_checks();
	cq_checks();
	srq_checks();
	qp_create_checks();
	qp_modify_checks();
	post_checks();
	inline_race_checks();
	key_checks();
	raw_checks();
	res_read(dev, &end);
	tap_result(res_same(&base, &end), "every object made for the checks is gone",
		   say("%s at the start, %s at the end", res_str(&base),
		       res_str(&end)));
	ibv_dealloc_pd(env.pd);
	ibv_close_device(env.ctx);
	tap_note("bad inputs: %u", n_bad);
	printf("1..%u\n", tap_count());
	return tap_finish();
}
