// SPDX-License-Identifier: GPL-2.0
/*
 * raw.c - what the modes of krwq_hostile (verbs.c, fuzz.c, fault.c)
 * share, the kernel asked without libibverbs: the RDMA core's object
 * counts over netlink, raw uverbs commands, and errno names.  It calls
 * none of them.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_netlink.h>

#include "raw.h"
#include "vt.h"

/* --- the RDMA core's object counts --------------------------------------- */

/*
 * What `rdma resource show DEV` prints, asked for directly over the RDMA
 * netlink socket (RDMA_NLDEV_CMD_RES_GET, as a dump of every device): a
 * process per question costs seconds under TCG.
 */
static void res_take(struct res *r, const char *name, uint64_t v)
{
	static const struct { const char *name; size_t off; } f[] = {
		{ "pd", offsetof(struct res, pd) },
		{ "cq", offsetof(struct res, cq) },
		{ "qp", offsetof(struct res, qp) },
		{ "mr", offsetof(struct res, mr) },
		{ "srq", offsetof(struct res, srq) },
		{ "ctx", offsetof(struct res, ctx) },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(f); i++)
		if (!strcmp(name, f[i].name))
			*(long *)((char *)r + f[i].off) = (long)v;
}

#define NLA_FOR(a, start, len)						\
	for (a = (struct nlattr *)(start);				\
	     (char *)a + NLA_HDRLEN <= (char *)(start) + (len) &&	\
	     a->nla_len >= NLA_HDRLEN &&				\
	     (char *)a + a->nla_len <= (char *)(start) + (len);		\
	     a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))

static void res_parse(struct res *r, const char *dev, struct nlmsghdr *h)
{
	struct nlattr *a, *e, *x;
	const char *name = NULL;
	int len = h->nlmsg_len - NLMSG_HDRLEN;
	struct res got = { 0 };

	NLA_FOR(a, NLMSG_DATA(h), len) {
		int t = a->nla_type & NLA_TYPE_MASK;

		if (t == RDMA_NLDEV_ATTR_DEV_NAME)
			name = (const char *)a + NLA_HDRLEN;
		if (t != RDMA_NLDEV_ATTR_RES_SUMMARY)
			continue;
		NLA_FOR(e, (char *)a + NLA_HDRLEN, a->nla_len - NLA_HDRLEN) {
			const char *en = NULL;
			uint64_t v = 0;
			bool have = false;

			NLA_FOR(x, (char *)e + NLA_HDRLEN, e->nla_len - NLA_HDRLEN) {
				int xt = x->nla_type & NLA_TYPE_MASK;

				if (xt == RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME)
					en = (const char *)x + NLA_HDRLEN;
				if (xt == RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR &&
				    x->nla_len >= NLA_HDRLEN + 8) {
					memcpy(&v, (char *)x + NLA_HDRLEN, 8);
					have = true;
				}
			}
			if (en && have) {
				res_take(&got, en, v);
				got.ok = true;
			}
		}
	}
	if (name && !strcmp(name, dev) && got.ok)
		*r = got;
}

bool res_read(const char *dev, struct res *r)
{
	struct {
		struct nlmsghdr h;
	} req = {
		.h = {
			.nlmsg_len = NLMSG_LENGTH(0),
			.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV,
						       RDMA_NLDEV_CMD_RES_GET),
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
			.nlmsg_seq = 1,
		},
	};
	static char buf[65536];
	bool done = false;
	int fd;

	memset(r, 0, sizeof(*r));
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	if (fd < 0)
		return false;
	if (send(fd, &req, req.h.nlmsg_len, 0) < 0) {
		close(fd);
		return false;
	}
	while (!done) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		struct nlmsghdr *h;

		if (n <= 0)
			break;
		for (h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_DONE ||
			    h->nlmsg_type == NLMSG_ERROR) {
				done = true;
				break;
			}
			res_parse(r, dev, h);
		}
	}
	close(fd);
	return r->ok;
}

bool res_same(const struct res *a, const struct res *b)
{
	return a->ok && b->ok && a->pd == b->pd && a->cq == b->cq &&
	       a->qp == b->qp && a->mr == b->mr && a->srq == b->srq &&
	       a->ctx == b->ctx;
}

const char *res_str(const struct res *r)
{
	static char s[4][160];
	static int i;

	i = (i + 1) % 4;
	if (!r->ok)
		return "(rdma resource show gave nothing)";
	snprintf(s[i], sizeof(s[i]), "pd %ld cq %ld qp %ld mr %ld srq %ld ctx %ld",
		 r->pd, r->cq, r->qp, r->mr, r->srq, r->ctx);
	return s[i];
}

/* --- raw uverbs commands ----------------------------------------------- */

int raw_write(int fd, uint32_t cmd, uint16_t in_words, uint16_t out_words,
	      const void *body, size_t len)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		unsigned char body[32768];
	} m;
	ssize_t n;

	if (len > sizeof(m.body))
		return -E2BIG;
	m.hdr.command = cmd;
	m.hdr.in_words = in_words;
	m.hdr.out_words = out_words;
	memcpy(m.body, body, len);
	n = write(fd, &m, sizeof(m.hdr) + len);
	return n < 0 ? -errno : 0;
}

int raw_cmd(int fd, uint32_t cmd, void *body, size_t len, void *resp,
	    size_t resp_len)
{
	uint64_t p = (uintptr_t)resp;

	if (len >= sizeof(p))
		memcpy(body, &p, sizeof(p));
	return raw_write(fd, cmd, (sizeof(struct ib_uverbs_cmd_hdr) + len) / 4,
			 resp_len / 4, body, len);
}

const char *errno_name(int e)
{
	static char s[16];

	switch (e) {
	case 0: return "success";
	case EINVAL: return "EINVAL";
	case ENOMEM: return "ENOMEM";
	case EFAULT: return "EFAULT";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENOENT: return "ENOENT";
	case ENOSYS: return "ENOSYS";
	case EBUSY: return "EBUSY";
	case E2BIG: return "E2BIG";
	case ENOSPC: return "ENOSPC";
	case EPROTONOSUPPORT: return "EPROTONOSUPPORT";
	case EIO: return "EIO";
	case EBADF: return "EBADF";
	case ERANGE: return "ERANGE";
	case ENOTTY: return "ENOTTY";
	case EAGAIN: return "EAGAIN";
	}
	snprintf(s, sizeof(s), "errno %d", e);
	return s;
}
