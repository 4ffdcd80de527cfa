// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz.c - krwq_hostile fuzz: random and truncated commands straight to
 * the device's uverbs character device, for a bounded time.
 *
 * A session opens /dev/infiniband/uverbsN, usually gets a context, and
 * then sends a few hundred to a few thousand commands before it closes
 * the file, leaving whatever it created for the RDMA core and the driver
 * to tear down.  A command is one of:
 *  - a write() of a known command with the right length, its words drawn
 *    from values that matter (0, 1, small object handles, powers of two,
 *    2^31, 2^32 - 1, ...) and its pointers aimed at a scratch buffer, at
 *    NULL, at unmapped or kernel addresses;
 *  - the same, truncated, or with word counts in the header that lie;
 *  - an extended (ib_uverbs_ex_cmd_hdr) command built the same way;
 *  - an ioctl(RDMA_VERBS_IOCTL) with a random object, method and a few
 *    random attributes (inline values, handles, pointers), under the
 *    device's driver id, so that it reaches the method's handler.
 * Every call may fail; what is checked is that the kernel neither oopses,
 * warns, leaks nor hangs (the VM runner and kmemleak judge that) and that
 * the device still works afterwards (a pingpong, outside this program).
 * The output is TAP: one line for the run with its counts.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "hostile.h"
#include "raw.h"
#include "vt.h"

#define ARENA_BYTES	(1 << 16)

static unsigned char *arena;	/* where good pointers point */
static uint64_t rng;

static uint32_t rnd(void)
{
	/* xorshift64*: reproducible from the seed printed */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 0x2545f4914f6cdd1dull) >> 32);
}

static uint32_t below(uint32_t n)
{
	return n ? rnd() % n : 0;
}

static uint32_t word(void)
{
	static const uint32_t v[] = {
		0, 1, 2, 3, 4, 7, 8, 16, 31, 32, 33, 64, 255, 256, 4096,
		16384, 16385, 65536, 65537, 0x7fffffff, 0x80000000,
		0xfffffffe, 0xffffffff,
	};

	switch (below(8)) {
	case 0: case 1: case 2:
		return below(8);		/* an object handle, a small enum */
	case 3: case 4: case 5:
		return v[below(ARRAY_SIZE(v))];
	case 6:
		return 1u << below(32);
	default:
		return rnd();
	}
}

static uint64_t pointer(void)
{
	switch (below(10)) {
	case 0:
		return 0;
	case 1:
		return 0xffff888000000000ull + (below(16) << 12);
	case 2:
		return 4096;
	case 3:
		return (uintptr_t)arena + ARENA_BYTES - below(64);
	default:
		return (uintptr_t)arena + (below(ARENA_BYTES / 64) * 64);
	}
}

/* Body bytes of each write() command (0: unknown, made up), and the
 * response room it asks for. */
struct cmd_size {
	uint16_t in, out;
};

static const struct cmd_size sizes[] = {
	[IB_USER_VERBS_CMD_GET_CONTEXT] = { sizeof(struct ib_uverbs_get_context),
		sizeof(struct ib_uverbs_get_context_resp) },
	[IB_USER_VERBS_CMD_QUERY_DEVICE] = { sizeof(struct ib_uverbs_query_device),
		sizeof(struct ib_uverbs_query_device_resp) },
	[IB_USER_VERBS_CMD_QUERY_PORT] = { sizeof(struct ib_uverbs_query_port),
		sizeof(struct ib_uverbs_query_port_resp) },
	[IB_USER_VERBS_CMD_ALLOC_PD] = { sizeof(struct ib_uverbs_alloc_pd),
		sizeof(struct ib_uverbs_alloc_pd_resp) },
	[IB_USER_VERBS_CMD_DEALLOC_PD] = { sizeof(struct ib_uverbs_dealloc_pd), 0 },
	[IB_USER_VERBS_CMD_CREATE_AH] = { sizeof(struct ib_uverbs_create_ah),
		sizeof(struct ib_uverbs_create_ah_resp) },
	[IB_USER_VERBS_CMD_DESTROY_AH] = { sizeof(struct ib_uverbs_destroy_ah), 0 },
	[IB_USER_VERBS_CMD_REG_MR] = { sizeof(struct ib_uverbs_reg_mr),
		sizeof(struct ib_uverbs_reg_mr_resp) },
	[IB_USER_VERBS_CMD_REREG_MR] = { sizeof(struct ib_uverbs_rereg_mr),
		sizeof(struct ib_uverbs_rereg_mr_resp) },
	[IB_USER_VERBS_CMD_DEREG_MR] = { sizeof(struct ib_uverbs_dereg_mr), 0 },
	[IB_USER_VERBS_CMD_ALLOC_MW] = { sizeof(struct ib_uverbs_alloc_mw),
		sizeof(struct ib_uverbs_alloc_mw_resp) },
	[IB_USER_VERBS_CMD_DEALLOC_MW] = { sizeof(struct ib_uverbs_dealloc_mw), 0 },
	[IB_USER_VERBS_CMD_CREATE_COMP_CHANNEL] = {
		sizeof(struct ib_uverbs_create_comp_channel),
		sizeof(struct ib_uverbs_create_comp_channel_resp) },
	[IB_USER_VERBS_CMD_CREATE_CQ] = { sizeof(struct ib_uverbs_create_cq),
		sizeof(struct ib_uverbs_create_cq_resp) },
	[IB_USER_VERBS_CMD_RESIZE_CQ] = { sizeof(struct ib_uverbs_resize_cq),
		sizeof(struct ib_uverbs_resize_cq_resp) },
	[IB_USER_VERBS_CMD_DESTROY_CQ] = { sizeof(struct ib_uverbs_destroy_cq),
		sizeof(struct ib_uverbs_destroy_cq_resp) },
	[IB_USER_VERBS_CMD_POLL_CQ] = { sizeof(struct ib_uverbs_poll_cq),
		sizeof(struct ib_uverbs_poll_cq_resp) + 4 * sizeof(struct ib_uverbs_wc) },
	[IB_USER_VERBS_CMD_REQ_NOTIFY_CQ] = { sizeof(struct ib_uverbs_req_notify_cq), 0 },
	[IB_USER_VERBS_CMD_CREATE_QP] = { sizeof(struct ib_uverbs_create_qp),
		sizeof(struct ib_uverbs_create_qp_resp) },
	[IB_USER_VERBS_CMD_QUERY_QP] = { sizeof(struct ib_uverbs_query_qp),
		sizeof(struct ib_uverbs_query_qp_resp) },
	[IB_USER_VERBS_CMD_MODIFY_QP] = { sizeof(struct ib_uverbs_modify_qp), 0 },
	[IB_USER_VERBS_CMD_DESTROY_QP] = { sizeof(struct ib_uverbs_destroy_qp),
		sizeof(struct ib_uverbs_destroy_qp_resp) },
	[IB_USER_VERBS_CMD_POST_SEND] = { sizeof(struct ib_uverbs_post_send),
		sizeof(struct ib_uverbs_post_send_resp) },
	[IB_USER_VERBS_CMD_POST_RECV] = { sizeof(struct ib_uverbs_post_recv),
		sizeof(struct ib_uverbs_post_recv_resp) },
	[IB_USER_VERBS_CMD_ATTACH_MCAST] = { sizeof(struct ib_uverbs_attach_mcast), 0 },
	[IB_USER_VERBS_CMD_DETACH_MCAST] = { sizeof(struct ib_uverbs_detach_mcast), 0 },
	[IB_USER_VERBS_CMD_CREATE_SRQ] = { sizeof(struct ib_uverbs_create_srq),
		sizeof(struct ib_uverbs_create_srq_resp) },
	[IB_USER_VERBS_CMD_MODIFY_SRQ] = { sizeof(struct ib_uverbs_modify_srq), 0 },
	[IB_USER_VERBS_CMD_QUERY_SRQ] = { sizeof(struct ib_uverbs_query_srq),
		sizeof(struct ib_uverbs_query_srq_resp) },
	[IB_USER_VERBS_CMD_DESTROY_SRQ] = { sizeof(struct ib_uverbs_destroy_srq),
		sizeof(struct ib_uverbs_destroy_srq_resp) },
	[IB_USER_VERBS_CMD_POST_SRQ_RECV] = { sizeof(struct ib_uverbs_post_srq_recv),
		sizeof(struct ib_uverbs_post_srq_recv_resp) },
	[IB_USER_VERBS_CMD_OPEN_XRCD] = { sizeof(struct ib_uverbs_open_xrcd),
		sizeof(struct ib_uverbs_open_xrcd_resp) },
	[IB_USER_VERBS_CMD_CLOSE_XRCD] = { sizeof(struct ib_uverbs_close_xrcd), 0 },
	[IB_USER_VERBS_CMD_CREATE_XSRQ] = { sizeof(struct ib_uverbs_create_xsrq),
		sizeof(struct ib_uverbs_create_srq_resp) },
	[IB_USER_VERBS_CMD_OPEN_QP] = { sizeof(struct ib_uverbs_open_qp),
		sizeof(struct ib_uverbs_create_qp_resp) },
};

/* The commands a context's objects come from, sent more often. */
static const uint8_t makers[] = {
	IB_USER_VERBS_CMD_ALLOC_PD, IB_USER_VERBS_CMD_CREATE_CQ,
	IB_USER_VERBS_CMD_CREATE_QP, IB_USER_VERBS_CMD_CREATE_SRQ,
	IB_USER_VERBS_CMD_REG_MR, IB_USER_VERBS_CMD_MODIFY_QP,
	IB_USER_VERBS_CMD_POST_SEND, IB_USER_VERBS_CMD_POST_RECV,
	IB_USER_VERBS_CMD_POST_SRQ_RECV, IB_USER_VERBS_CMD_POLL_CQ,
	IB_USER_VERBS_CMD_RESIZE_CQ, IB_USER_VERBS_CMD_MODIFY_SRQ,
	IB_USER_VERBS_CMD_CREATE_AH,
};

struct stats {
	unsigned long calls, ok, writes, ioctls, ioctls_ok, sessions;
	unsigned long get_context_kept;	/* see has_context() */
	unsigned long err[160];
};

static void fill_body(unsigned char *b, size_t len)
{
	size_t i;

	for (i = 0; i + 4 <= len; i += 4) {
		uint32_t w = word();

		memcpy(b + i, &w, 4);
	}
	/* a few 64-bit fields become pointers (addresses, responses, lists) */
	for (i = 0; i + 8 <= len; i += 8)
		if (below(4) == 0) {
			uint64_t p = pointer();

			memcpy(b + i, &p, 8);
		}
}

static void count(struct stats *s, int err)
{
	s->calls++;
	if (!err)
		s->ok++;
	else if (err > 0 && err < (int)ARRAY_SIZE(s->err))
		s->err[err]++;
}

static int fuzz_write(int fd, struct stats *s)
{
	static unsigned char buf[8 + 8192];
	struct ib_uverbs_cmd_hdr *h = (void *)buf;
	unsigned char *body = buf + sizeof(*h);
	uint32_t cmd;
	size_t len, out;
	ssize_t n;
	int kind = below(10);

	if (kind < 5)
		cmd = makers[below(ARRAY_SIZE(makers))];
	else
		cmd = below(ARRAY_SIZE(sizes) + 8);
	len = cmd < ARRAY_SIZE(sizes) && sizes[cmd].in ? sizes[cmd].in : 8 * below(16);
	out = cmd < ARRAY_SIZE(sizes) ? sizes[cmd].out : 8 * below(8);
	/* post commands carry WRs and SGEs after the fixed part */
	if (cmd == IB_USER_VERBS_CMD_POST_SEND || cmd == IB_USER_VERBS_CMD_POST_RECV ||
	    cmd == IB_USER_VERBS_CMD_POST_SRQ_RECV || cmd == IB_USER_VERBS_CMD_CREATE_AH ||
	    below(4) == 0)
		len += 8 * below(48);
	fill_body(body, len);
	if (below(3)) {
		uint64_t p = below(8) ? (uintptr_t)arena : pointer();

		memcpy(body, &p, 8);	/* the response pointer, mostly good */
	}
	if (cmd == IB_USER_VERBS_CMD_POST_SEND || cmd == IB_USER_VERBS_CMD_POST_RECV) {
		/* mostly honest counts, so that the WRs get parsed */
		struct ib_uverbs_post_send *ps = (void *)body;

		if (below(2)) {
			ps->wr_count = 1 + below(3);
			ps->sge_count = below(4);
			ps->wqe_size = cmd == IB_USER_VERBS_CMD_POST_SEND ?
				sizeof(struct ib_uverbs_send_wr) :
				sizeof(struct ib_uverbs_recv_wr);
		}
	}
	if (kind == 9)
		cmd |= IB_USER_VERBS_CMD_FLAG_EXTENDED;
	h->command = cmd;
	h->in_words = (sizeof(*h) + len) / 4;
	h->out_words = out / 4;
	switch (below(8)) {
	case 0:	/* the header lies about the length */
		h->in_words = below(3) ? h->in_words + below(5) - 2 : word();
		break;
	case 1:	/* and about the response */
		h->out_words = word();
		break;
	case 2:	/* truncated: less is written than the header says */
		len = below(len + 1);
		break;
	}
	if (cmd & IB_USER_VERBS_CMD_FLAG_EXTENDED) {
		struct ib_uverbs_ex_cmd_hdr *x = (void *)body;

		h->in_words = below(2) ? (len - sizeof(*x)) / 8 : word();
		h->out_words = below(8);
		x->provider_in_words = below(3) ? 0 : below(4);
		x->provider_out_words = below(3) ? 0 : below(4);
		x->cmd_hdr_reserved = below(4) ? 0 : word();
	}
	n = write(fd, buf, sizeof(*h) + len);
	s->writes++;
	count(s, n < 0 ? errno : 0);
	return n < 0 ? errno : 0;
}

/*
 * Whether the session's file already holds a context: without one the
 * ioctl QUERY_CONTEXT fails with EINVAL; with one it succeeds, or fails
 * with EOPNOTSUPP on a driver that has no query_ucontext (krwq has none).
 *
 * The 6.1 RDMA core leaks a task reference each time the ioctl
 * GET_CONTEXT fails after it has named the new context after the caller,
 * and it fails so whenever the file already has a context: the task and
 * its credentials are never freed, on every driver (docs/testing.md,
 * "Defects of the peers").  An unprivileged process can do that; krwq
 * has no hook on that path.  (Any other failure of ib_init_ucontext()
 * leaks the same way: a refused charge, or the driver's alloc_ucontext,
 * which for krwq never fails.)  The fuzzer sends that call only to a file
 * without a context, where it succeeds, and counts what it held back.
 */
static bool has_context(int fd)
{
	struct ib_uverbs_ioctl_hdr h = {
		.length = sizeof(h),
		.object_id = UVERBS_OBJECT_DEVICE,
		.method_id = UVERBS_METHOD_QUERY_CONTEXT,
		.driver_id = RDMA_DRIVER_QIB,
	};

	return ioctl(fd, RDMA_VERBS_IOCTL, &h) == 0 || errno == EOPNOTSUPP;
}

/*
 * A mostly well-formed QUERY_PORT, so that some ioctls get through the
 * attribute checks to the driver: its port number, the response's size
 * or its address is now and then wrong.
 */
static void query_port_ioctl(struct ib_uverbs_ioctl_hdr *h)
{
	struct ib_uverbs_attr *a = h->attrs;

	memset(h, 0, sizeof(*h) + 2 * sizeof(*a));
	h->driver_id = RDMA_DRIVER_QIB;
	h->num_attrs = 2;
	h->length = sizeof(*h) + 2 * sizeof(*a);
	h->object_id = UVERBS_OBJECT_DEVICE;
	h->method_id = UVERBS_METHOD_QUERY_PORT;
	a[0].attr_id = UVERBS_ATTR_QUERY_PORT_PORT_NUM;
	a[0].len = sizeof(uint64_t);	/* a constant travels as a u64 */
	a[0].data = below(4) ? 1 : word();	/* inline */
	a[1].attr_id = UVERBS_ATTR_QUERY_PORT_RESP;
	a[1].len = below(4) ? sizeof(struct ib_uverbs_query_port_resp_ex) :
		   below(64);
	a[1].data = below(4) ? (uintptr_t)arena : pointer();
}

static void fuzz_ioctl(int fd, struct stats *s)
{
	static unsigned char buf[sizeof(struct ib_uverbs_ioctl_hdr) +
				 16 * sizeof(struct ib_uverbs_attr)];
	struct ib_uverbs_ioctl_hdr *h = (void *)buf;
	unsigned int i, n = below(9);
	int ret;

	memset(buf, 0, sizeof(buf));
	h->num_attrs = n;
	h->length = sizeof(*h) + n * sizeof(struct ib_uverbs_attr);
	if (!below(10))
		h->length = word();
	/* the core's objects and methods are numbered from 0 */
	h->object_id = below(6) ? below(20) : word();
	h->method_id = below(6) ? below(12) : word();
	h->driver_id = below(8) ? RDMA_DRIVER_QIB : word();
	if (h->object_id == UVERBS_OBJECT_DEVICE &&
	    h->method_id == UVERBS_METHOD_GET_CONTEXT && has_context(fd)) {
		s->get_context_kept++;
		return;
	}
	if (!below(10))
		h->reserved1 = word();
	for (i = 0; i < n; i++) {
		struct ib_uverbs_attr *a = &h->attrs[i];

		a->attr_id = below(4) ? below(12) : 0x1000 + below(4);
		a->len = below(3) ? 1u << below(8) : word();
		a->flags = below(3) ? 0 : below(4);
		switch (below(4)) {
		case 0:
			a->data = below(8);		/* a handle or fd */
			break;
		case 1:
			a->data = pointer();
			break;
		default:
			a->data = ((uint64_t)word() << 32) | word();
		}
	}
	if (!below(4))
		query_port_ioctl(h);
	ret = ioctl(fd, RDMA_VERBS_IOCTL, buf);
	s->ioctls++;
	s->ioctls_ok += ret == 0;
	count(s, ret < 0 ? errno : 0);
}

static int session_open(const char *path, struct stats *s)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -1;
	s->sessions++;
	if (below(10)) {
		struct ib_uverbs_get_context c = { 0 };
		struct ib_uverbs_get_context_resp r;

		count(s, -raw_cmd(fd, IB_USER_VERBS_CMD_GET_CONTEXT, &c,
				  sizeof(c), &r, sizeof(r)));
	}
	return fd;
}

/* Close the session and every file it made (completion channels,
 * the async event file): all numbered from its own fd up. */
static void session_close(int fd)
{
	int i;

	for (i = 1023; i >= fd; i--)
		close(i);
}

int hostile_fuzz(const char *dev, double seconds, unsigned int seed)
{
	struct ibv_device **list;
	char path[256] = "";
	struct stats s = { 0 };
	double end;
	int i, n, fd = -1;
	unsigned long left = 0;
	char line[400];
	int len;

	printf("TAP version 13\n1..2\n");
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			snprintf(path, sizeof(path), "/dev/infiniband/%s",
				 list[i]->dev_name);
	if (list)
		ibv_free_device_list(list);
	/* the scratch buffer between two guard areas: an overrun faults */
	arena = mmap(NULL, 3 * ARENA_BYTES, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (arena != MAP_FAILED) {
		arena += ARENA_BYTES;
		if (mprotect(arena, ARENA_BYTES, PROT_READ | PROT_WRITE))
			arena = MAP_FAILED;
	}
	if (!*path || arena == MAP_FAILED) {
		tap_result(false, "fuzz: find the device's uverbs file", dev);
		return tap_finish();
	}
	rng = 0x9e3779b97f4a7c15ull ^ seed;
	tap_note("fuzzing %s (%s) for %.0f s, seed %u", path, dev, seconds, seed);

	end = now_ms() + seconds * 1e3;
	while (now_ms() < end) {
		if (!left) {
			if (fd >= 0)
				session_close(fd);
			fd = session_open(path, &s);
			if (fd < 0) {
				tap_result(false, "fuzz: open the uverbs file",
					   strerror(errno));
				return tap_finish();
			}
			left = 200 + below(3000);
		}
		left--;
		if (below(4))
			fuzz_write(fd, &s);
		else
			fuzz_ioctl(fd, &s);
		if (!(s.calls & 255))
			memset(arena, 0, ARENA_BYTES);
	}
	if (fd >= 0)
		session_close(fd);

	len = snprintf(line, sizeof(line), "errors:");
	for (i = 0; i < (int)ARRAY_SIZE(s.err); i++)
		if (s.err[i] && len < (int)sizeof(line) - 40)
			len += snprintf(line + len, sizeof(line) - len, " %s %lu",
					errno_name(i), s.err[i]);
	tap_note("%s", line);
	tap_note("fuzz calls: %lu (%lu write, %lu ioctl) in %lu sessions; %lu succeeded",
		 s.calls, s.writes, s.ioctls, s.sessions, s.ok);
	tap_note("ioctl: %lu succeeded; %lu GET_CONTEXT on a file with a context held back",
		 s.ioctls_ok, s.get_context_kept);
	printf("fuzz calls: %lu\n", s.calls);
	tap_result(s.calls > 0, "fuzz: random and truncated uverbs commands, the kernel survived",
		   "no calls made");
	tap_result(s.ioctls_ok > 0, "fuzz: ioctl commands reach their methods, some succeed",
		   "every ioctl was refused");
	return tap_finish();
}
