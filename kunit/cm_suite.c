// SPDX-License-Identifier: GPL-2.0
/*
 * cm_suite.c - the KUnit suite "krwq_cm" (module krwq_kunit_cm): an RDMA
 * device driven through the RDMA connection manager from the kernel, the
 * way NVMe-oF or iSER use it: address and route resolution, an RC
 * connection listened for, accepted, used both ways and disconnected, a
 * rejected one, one to a port nobody listens on, and UD through SIDR.
 *
 * The device is whichever one rdma_cm resolves the module parameter addr
 * to, an IPv4 address of a netdev bound to it (rxe0 as the sanity peer,
 * a netdev-bound krwq device for krwq); the parameter dev, if given, names
 * the device rdma_cm must pick.  Both ends of every connection are in this
 * module, on that one address.  Without addr every case is skipped.
 *
 * rdma_cm calls ct_handler() from its own work items; it only records the
 * event (and takes ownership of the new id of a connection request) and
 * the test thread waits for it, so every KUnit assertion runs in the test
 * thread and every wait is bounded.  ct_exit() destroys what a case left,
 * listener first, so an aborted case leaks no id, QP, CQ, PD or AH.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/in.h>
#include <linux/inet.h>
#include <linux/ip.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <rdma/ib_cm.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_cm.h>
#include <rdma/rdma_cm_ib.h>

#include "qp_state.h"

static char *addr = "";
module_param(addr, charp, 0444);
MODULE_PARM_DESC(addr, "IPv4 address of a netdev bound to the RDMA device under test (none: every case is skipped)");

static char *dev = "";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "name of the RDMA device rdma_cm must resolve addr to (none: any)");

#define CT_RESOLVE_MS	5000	/* rdma_resolve_addr(), rdma_resolve_route() */
#define CT_EVENT_MS	20000	/* one CM exchange, under TCG with KASAN */
#define CT_DEAD_MS	120000	/* a REQ nobody answers: 16 tries of ~4 s */
#define CT_POLL_MS	5000	/* one completion */
#define CT_QLEN		16	/* events an endpoint holds */
#define CT_DEPTH	8	/* send and receive queue depth */
#define CT_HALF		4096	/* an endpoint's send half, then receive half */
#define CT_GRH		40	/* the GRH space of a UD receive */
#define CT_RC_LEN	3000	/* an RC send: more than one packet at MTU 1024 */
#define CT_UD_LEN	512	/* a datagram: within any RoCE path MTU */
#define CT_PDATA	8	/* private data bytes checked in a reject */

/* rdma_cm ports on addr, one per case */
enum {
	CT_PORT_CONNECT = 18515,
	CT_PORT_REJECT,
	CT_PORT_NOBODY,
	CT_PORT_UD,
	CT_PORT_BIND,
};

struct ct_event {
	enum rdma_cm_event_type type;
	int status;
};

/* One end: an rdma_cm id, the events it got, and its verbs objects. */
struct ct_ep {
	struct ct *c;
	const char *name;
	struct rdma_cm_id *id;
	struct completion posted;	/* completed once per event queued */
	spinlock_t lock;		/* q, head, tail, lost */
	struct ct_event q[CT_QLEN];
	unsigned int head, tail, lost;
	/* set by ct_handler() before the event is queued */
	u32 peer_qpn;			/* RC: from CONNECT_REQUEST or the REP */
	struct rdma_ah_attr ah_attr;	/* UD: from ESTABLISHED (SIDR REP) */
	u32 peer_qkey;
	bool has_ah_attr;
	u8 rej_data[CT_PDATA];		/* REJECTED: the consumer's data */
	u8 rej_len;
	/* verbs objects, on id->device */
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_ah *ah;
	u8 *buf;			/* CT_HALF to send, CT_HALF to receive */
	u64 dma;
	bool mapped;
};

struct ct {
	struct sockaddr_in sin;		/* addr, port 0 */
	spinlock_t lock;		/* closing, passive.id */
	bool closing;
	struct ct_ep listen, active, passive;
};

static void ct_queue(struct ct_ep *ep, enum rdma_cm_event_type type,
		     int status)
{
	bool queued = false;

	spin_lock(&ep->lock);
	if (ep->tail - ep->head < CT_QLEN) {
		ep->q[ep->tail % CT_QLEN].type = type;
		ep->q[ep->tail % CT_QLEN].status = status;
		ep->tail++;
		queued = true;
	} else {
		ep->lost++;
	}
	spin_unlock(&ep->lock);
	if (queued)
		complete(&ep->posted);
}

/*
 * rdma_cm's event handler, under the id's handler mutex.  A connection
 * request comes with a new id: it becomes the fixture's passive end, or,
 * if that is taken or the case is ending, is handed back (a non-zero
 * return makes rdma_cm destroy it), so no id escapes ct_exit().
 */
static int ct_handler(struct rdma_cm_id *id, struct rdma_cm_event *ev)
{
	struct ct_ep *ep = id->context;
	struct ct *c = ep->c;
	u8 len;

	switch (ev->event) {
	case RDMA_CM_EVENT_CONNECT_REQUEST:
		spin_lock(&c->lock);
		if (c->closing || c->passive.id) {
			spin_unlock(&c->lock);
			return 1;
		}
		c->passive.id = id;
		spin_unlock(&c->lock);
		ep = &c->passive;
		id->context = ep;
		if (id->qp_type == IB_QPT_RC)
			ep->peer_qpn = ev->param.conn.qp_num;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (id->qp_type == IB_QPT_UD && !ep->has_ah_attr) {
			/* the event's ah_attr is released when we return */
			rdma_copy_ah_attr(&ep->ah_attr, &ev->param.ud.ah_attr);
			ep->peer_qpn = ev->param.ud.qp_num;
			ep->peer_qkey = ev->param.ud.qkey;
			ep->has_ah_attr = true;
		} else if (id->qp_type == IB_QPT_RC && ev->param.conn.qp_num) {
			ep->peer_qpn = ev->param.conn.qp_num;
		}
		break;
	case RDMA_CM_EVENT_REJECTED:
		if (id->qp_type == IB_QPT_RC) {
			const u8 *data = rdma_consumer_reject_data(id, ev, &len);

			if (data) {
				ep->rej_len = min_t(u8, len, CT_PDATA);
				memcpy(ep->rej_data, data, ep->rej_len);
			}
		}
		break;
	default:
		break;
	}
	ct_queue(ep, ev->event, ev->status);
	return 0;
}

/* The next event of @ep, waiting up to @ms; -ETIMEDOUT if none came. */
static int ct_next(struct ct_ep *ep, unsigned int ms, struct ct_event *ev)
{
	if (!wait_for_completion_timeout(&ep->posted, msecs_to_jiffies(ms)))
		return -ETIMEDOUT;
	spin_lock(&ep->lock);
	*ev = ep->q[ep->head % CT_QLEN];
	ep->head++;
	spin_unlock(&ep->lock);
	return 0;
}

/* The next event of @ep must be @want, within @ms; returns its status. */
static int ct_await_ms(struct kunit *t, struct ct_ep *ep,
		       enum rdma_cm_event_type want, unsigned int ms)
{
	struct ct_event ev;

	KUNIT_ASSERT_EQ_MSG(t, ct_next(ep, ms, &ev), 0,
			    "%s: no event within %u ms, waiting for %s",
			    ep->name, ms, rdma_event_msg(want));
	KUNIT_ASSERT_EQ_MSG(t, ev.type, want,
			    "%s: got %s (status %d), wanted %s", ep->name,
			    rdma_event_msg(ev.type), ev.status,
			    rdma_event_msg(want));
	return ev.status;
}

static int ct_await(struct kunit *t, struct ct_ep *ep,
		    enum rdma_cm_event_type want)
{
	return ct_await_ms(t, ep, want, CT_EVENT_MS);
}

static void ct_ep_init(struct ct *c, struct ct_ep *ep, const char *name)
{
	ep->c = c;
	ep->name = name;
	init_completion(&ep->posted);
	spin_lock_init(&ep->lock);
}

/* Everything @ep holds, the QP before its id, the id before its CQ. */
static void ct_ep_release(struct ct_ep *ep)
{
	if (ep->id) {
		if (ep->id->qp)
			rdma_destroy_qp(ep->id);
		rdma_destroy_id(ep->id);
		ep->id = NULL;
	}
	if (ep->ah)
		rdma_destroy_ah(ep->ah, RDMA_DESTROY_AH_SLEEPABLE);
	if (ep->has_ah_attr)
		rdma_destroy_ah_attr(&ep->ah_attr);
	if (ep->mapped)
		ib_dma_unmap_single(ep->dev, ep->dma, 2 * CT_HALF,
				    DMA_BIDIRECTIONAL);
	kfree(ep->buf);
	if (ep->cq)
		ib_destroy_cq(ep->cq);
	if (ep->pd)
		ib_dealloc_pd(ep->pd);
	if (ep->lost)
		pr_warn("krwq_cm: %s: %u rdma_cm events did not fit the queue\n",
			ep->name, ep->lost);
}

static int ct_init(struct kunit *t)
{
	struct ct *c;

	if (!addr || !*addr)
		kunit_skip(t, "no addr=: want the IPv4 address of a netdev on the device");
	c = kunit_kzalloc(t, sizeof(*c), GFP_KERNEL);
	if (!c)
		return -ENOMEM;
	c->sin.sin_family = AF_INET;
	if (!in4_pton(addr, -1, (u8 *)&c->sin.sin_addr.s_addr, -1, NULL)) {
		kunit_err(t, "addr=%s is not an IPv4 address\n", addr);
		return -EINVAL;
	}
	spin_lock_init(&c->lock);
	ct_ep_init(c, &c->listen, "listener");
	ct_ep_init(c, &c->active, "active");
	ct_ep_init(c, &c->passive, "passive");
	t->priv = c;
	return 0;
}

static void ct_exit(struct kunit *t)
{
	struct ct *c = t->priv;

	if (!c)
		return;
	spin_lock(&c->lock);
	c->closing = true;
	spin_unlock(&c->lock);
	/* no connection request is delivered once the listener is gone */
	ct_ep_release(&c->listen);
	ct_ep_release(&c->passive);
	ct_ep_release(&c->active);
}

static void ct_cq_comp(struct ib_cq *cq, void *ctx)
{
}

static void ct_cq_event(struct ib_event *ev, void *ctx)
{
	struct ct_ep *ep = ctx;

	pr_warn("krwq_cm: %s: CQ event %s\n", ep->name,
		ib_event_msg(ev->event));
}

/*
 * A message that reaches a passive QP before the RTU makes the device
 * raise COMM_EST; rdma_cm has to hear of it to report ESTABLISHED.
 */
static void ct_qp_event(struct ib_event *ev, void *ctx)
{
	struct ct_ep *ep = ctx;

	if (ev->event == IB_EVENT_COMM_EST) {
		rdma_notify(ep->id, ev->event);
		return;
	}
	pr_warn("krwq_cm: %s: QP event %s\n", ep->name,
		ib_event_msg(ev->event));
}

/* An rdma_cm id for @ep, owned by @ep from here on. */
static void ct_create_id(struct kunit *t, struct ct_ep *ep,
			 enum rdma_ucm_port_space ps, enum ib_qp_type type)
{
	struct rdma_cm_id *id;

	id = rdma_create_id(&init_net, ct_handler, ep, ps, type);
	KUNIT_ASSERT_FALSE_MSG(t, IS_ERR(id), "rdma_create_id: %ld",
			       PTR_ERR(id));
	ep->id = id;
}

static struct sockaddr *ct_addr(struct ct *c, struct sockaddr_in *sin,
				u16 port)
{
	*sin = c->sin;
	sin->sin_port = htons(port);
	return (struct sockaddr *)sin;
}

/* rdma_cm bound @id to a device: the one asked for, an IB CM port. */
static void ct_check_device(struct kunit *t, struct rdma_cm_id *id)
{
	struct ib_port_attr pa;

	KUNIT_ASSERT_NOT_NULL_MSG(t, id->device, "rdma_cm found no device for %s",
				  addr);
	if (dev && *dev)
		KUNIT_ASSERT_STREQ_MSG(t, dev_name(&id->device->dev), dev,
				       "%s resolved to another device", addr);
	KUNIT_ASSERT_TRUE(t, rdma_is_port_valid(id->device, id->port_num));
	KUNIT_ASSERT_TRUE_MSG(t, rdma_cap_ib_cm(id->device, id->port_num),
			      "%s port %u: no IB CM (not an InfiniBand or RoCE port)",
			      dev_name(&id->device->dev), id->port_num);
	KUNIT_ASSERT_EQ(t, ib_query_port(id->device, id->port_num, &pa), 0);
	KUNIT_EXPECT_EQ(t, pa.state, IB_PORT_ACTIVE);
}

/* @ep's id resolved to addr:@port: address, then route. */
static void ct_resolve(struct kunit *t, struct ct_ep *ep, u16 port,
		       enum rdma_ucm_port_space ps, enum ib_qp_type type)
{
	struct sockaddr_in dst;

	ct_create_id(t, ep, ps, type);
	KUNIT_ASSERT_EQ(t, rdma_resolve_addr(ep->id, NULL,
					     ct_addr(ep->c, &dst, port),
					     CT_RESOLVE_MS), 0);
	KUNIT_ASSERT_EQ(t, ct_await(t, ep, RDMA_CM_EVENT_ADDR_RESOLVED), 0);
	ct_check_device(t, ep->id);
	KUNIT_ASSERT_EQ(t, rdma_resolve_route(ep->id, CT_RESOLVE_MS), 0);
	KUNIT_ASSERT_EQ(t, ct_await(t, ep, RDMA_CM_EVENT_ROUTE_RESOLVED), 0);
}

/* The fixture's listener on addr:@port. */
static void ct_listen(struct kunit *t, struct ct *c, u16 port,
		      enum rdma_ucm_port_space ps, enum ib_qp_type type)
{
	struct sockaddr_in sin;

	ct_create_id(t, &c->listen, ps, type);
	KUNIT_ASSERT_EQ_MSG(t, rdma_bind_addr(c->listen.id,
					      ct_addr(c, &sin, port)), 0,
			    "no RDMA device has %s (-ENODEV) or the port is taken",
			    addr);
	/* a specific address binds the id to its device at once */
	ct_check_device(t, c->listen.id);
	KUNIT_ASSERT_EQ(t, rdma_listen(c->listen.id, 4), 0);
}

/* @ep's PD, CQ and mapped buffer, on the device its id is bound to. */
static void ct_verbs(struct kunit *t, struct ct_ep *ep)
{
	struct ib_cq_init_attr ca = { .cqe = 2 * CT_DEPTH };
	struct ib_device *d = ep->id->device;
	struct ib_pd *pd;
	struct ib_cq *cq;

	ep->dev = d;
	pd = ib_alloc_pd(d, 0);
	KUNIT_ASSERT_FALSE_MSG(t, IS_ERR(pd), "ib_alloc_pd: %ld", PTR_ERR(pd));
	ep->pd = pd;
	cq = ib_create_cq(d, ct_cq_comp, ct_cq_event, ep, &ca);
	KUNIT_ASSERT_FALSE_MSG(t, IS_ERR(cq), "ib_create_cq: %ld", PTR_ERR(cq));
	ep->cq = cq;
	ep->buf = kzalloc(2 * CT_HALF, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(t, ep->buf);
	ep->dma = ib_dma_map_single(d, ep->buf, 2 * CT_HALF, DMA_BIDIRECTIONAL);
	KUNIT_ASSERT_EQ(t, ib_dma_mapping_error(d, ep->dma), 0);
	ep->mapped = true;
}

/* @ep's QP, made by rdma_cm on its id; rdma_cm moves it through its states. */
static void ct_create_qp(struct kunit *t, struct ct_ep *ep)
{
	struct ib_qp_init_attr init = {
		.event_handler = ct_qp_event,
		.qp_context = ep,
		.send_cq = ep->cq,
		.recv_cq = ep->cq,
		.cap = {
			.max_send_wr = CT_DEPTH, .max_recv_wr = CT_DEPTH,
			.max_send_sge = 1, .max_recv_sge = 1,
		},
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = ep->id->qp_type,
	};

	KUNIT_ASSERT_EQ(t, rdma_create_qp(ep->id, ep->pd, &init), 0);
	KUNIT_ASSERT_NOT_NULL(t, ep->id->qp);
}

static int ct_post_recv(struct ct_ep *ep, u64 wr_id, u32 len)
{
	struct ib_sge sge = {
		.addr = ep->dma + CT_HALF, .length = len,
		.lkey = ep->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	const struct ib_recv_wr *bad;

	ib_dma_sync_single_for_device(ep->dev, ep->dma + CT_HALF, CT_HALF,
				      DMA_BIDIRECTIONAL);
	return ib_post_recv(ep->id->qp, &wr, &bad);
}

/*
 * A signalled SEND of the first @len bytes of @ep's send half, a @seed
 * pattern; to @ah, @qpn and @qkey if the QP is UD.
 */
static int ct_post_send(struct ct_ep *ep, u64 wr_id, u32 len, u8 seed,
			struct ib_ah *ah, u32 qpn, u32 qkey)
{
	struct ib_sge sge = {
		.addr = ep->dma, .length = len, .lkey = ep->pd->local_dma_lkey,
	};
	struct ib_ud_wr wr = {
		.wr = {
			.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED,
		},
		.ah = ah, .remote_qpn = qpn, .remote_qkey = qkey,
	};
	const struct ib_send_wr *bad;
	u32 i;

	for (i = 0; i < len; i++)
		ep->buf[i] = seed + i * 13;
	ib_dma_sync_single_for_device(ep->dev, ep->dma, len, DMA_BIDIRECTIONAL);
	return ib_post_send(ep->id->qp, &wr.wr, &bad);
}

/* Does @buf hold the first @len bytes of the @seed pattern? */
static bool ct_pattern_ok(const u8 *buf, u32 len, u8 seed)
{
	u32 i;

	for (i = 0; i < len; i++)
		if (buf[i] != (u8)(seed + i * 13))
			return false;
	return true;
}

/* One completion of @ep's CQ into @wc within CT_POLL_MS, or 0. */
static int ct_poll(struct ct_ep *ep, struct ib_wc *wc)
{
	unsigned long end = jiffies + msecs_to_jiffies(CT_POLL_MS);
	int n;

	do {
		n = ib_poll_cq(ep->cq, 1, wc);
		if (n)
			return n;
		usleep_range(200, 500);
	} while (time_before(jiffies, end));
	return ib_poll_cq(ep->cq, 1, wc);
}

/* The send completion of @wr_id on @from's CQ. */
static void ct_expect_sent(struct kunit *t, struct ct_ep *from, u64 wr_id)
{
	struct ib_wc wc;

	KUNIT_ASSERT_EQ_MSG(t, ct_poll(from, &wc), 1,
			    "%s: no send completion", from->name);
	KUNIT_EXPECT_EQ_MSG(t, wc.status, IB_WC_SUCCESS, "%s: send %s",
			    from->name, ib_wc_status_msg(wc.status));
	KUNIT_EXPECT_EQ(t, wc.opcode, IB_WC_SEND);
	KUNIT_EXPECT_EQ(t, wc.wr_id, wr_id);
	KUNIT_EXPECT_PTR_EQ(t, wc.qp, from->id->qp);
}

/*
 * The receive completion of @wr_id on @to's CQ: @len bytes of the @seed
 * pattern after @skip bytes (the GRH space of UD).  The completion is
 * left in @wc.
 */
static void ct_expect_received(struct kunit *t, struct ct_ep *to, u64 wr_id,
			       u32 skip, u32 len, u8 seed, struct ib_wc *wc)
{
	KUNIT_ASSERT_EQ_MSG(t, ct_poll(to, wc), 1,
			    "%s: no receive completion", to->name);
	KUNIT_ASSERT_EQ_MSG(t, wc->status, IB_WC_SUCCESS, "%s: receive %s",
			    to->name, ib_wc_status_msg(wc->status));
	KUNIT_EXPECT_EQ(t, wc->opcode, IB_WC_RECV);
	KUNIT_EXPECT_EQ(t, wc->wr_id, wr_id);
	KUNIT_EXPECT_EQ(t, wc->byte_len, skip + len);
	KUNIT_EXPECT_PTR_EQ(t, wc->qp, to->id->qp);
	KUNIT_EXPECT_FALSE(t, wc->wc_flags & IB_WC_WITH_IMM);
	ib_dma_sync_single_for_cpu(to->dev, to->dma + CT_HALF, CT_HALF,
				   DMA_BIDIRECTIONAL);
	KUNIT_EXPECT_TRUE_MSG(t, ct_pattern_ok(to->buf + CT_HALF + skip, len, seed),
			      "%s: the received bytes differ from those sent",
			      to->name);
}

/* @qp's Q_Key, or 0 if it cannot be queried. */
static noinline_for_stack u32 ct_qp_qkey(struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	if (ib_query_qp(qp, &attr, IB_QP_QKEY, &init))
		return 0;
	return attr.qkey;
}

/*
 * A RoCE v2 receive on a UD QP starts with 20 unused bytes and the IPv4
 * header, here from addr to addr; an IB one with the GRH.
 */
static void ct_expect_grh(struct kunit *t, struct ct_ep *ep,
			  const struct ib_wc *wc)
{
	const union rdma_network_hdr *h = (void *)(ep->buf + CT_HALF);
	struct rdma_cm_id *id = ep->id;

	KUNIT_EXPECT_TRUE_MSG(t, wc->wc_flags & IB_WC_GRH,
			      "%s: a UD receive without IB_WC_GRH", ep->name);
	if (!rdma_protocol_roce(id->device, id->port_num))
		return;
	if (wc->wc_flags & IB_WC_WITH_NETWORK_HDR_TYPE)
		KUNIT_EXPECT_EQ(t, wc->network_hdr_type, RDMA_NETWORK_IPV4);
	KUNIT_EXPECT_EQ_MSG(t, ib_get_rdma_header_version(h), 4,
			    "%s: no IPv4 header in the GRH space", ep->name);
	KUNIT_EXPECT_TRUE_MSG(t, h->roce4grh.saddr == ep->c->sin.sin_addr.s_addr &&
			      h->roce4grh.daddr == ep->c->sin.sin_addr.s_addr,
			      "%s: IPv4 header from %pI4 to %pI4, wanted %s", ep->name,
			      &h->roce4grh.saddr, &h->roce4grh.daddr, addr);
	KUNIT_EXPECT_EQ(t, h->roce4grh.protocol, IPPROTO_UDP);
}

/*
 * Case 1: addr resolves to a device and port, and a route to itself; the
 * GIDs are addr's and a listener bound to addr is on the same device.
 */
static void ct_resolve_addr_route(struct kunit *t)
{
	struct ct *c = t->priv;
	struct rdma_cm_id *id;
	union ib_gid want, sgid, dgid;
	struct sa_path_rec *path;
	struct sockaddr_in sin;

	ct_resolve(t, &c->active, CT_PORT_BIND, RDMA_PS_TCP, IB_QPT_RC);
	id = c->active.id;
	kunit_info(t, "%s resolves to %s port %u", addr,
		   dev_name(&id->device->dev), id->port_num);
	KUNIT_EXPECT_EQ(t, id->route.addr.src_addr.ss_family, AF_INET);
	KUNIT_EXPECT_NE(t, id->route.addr.dev_addr.bound_dev_if, 0);
	ipv6_addr_set_v4mapped(c->sin.sin_addr.s_addr, (struct in6_addr *)&want);
	rdma_read_gids(id, &sgid, &dgid);
	if (rdma_protocol_roce(id->device, id->port_num)) {
		KUNIT_EXPECT_EQ(t, memcmp(&sgid, &want, sizeof(want)), 0);
		KUNIT_EXPECT_EQ(t, memcmp(&dgid, &want, sizeof(want)), 0);
	}
	KUNIT_ASSERT_EQ(t, id->route.num_pri_alt_paths, 1);
	path = id->route.path_rec;
	KUNIT_ASSERT_NOT_NULL(t, path);
	KUNIT_EXPECT_EQ(t, memcmp(&path->sgid, &sgid, sizeof(sgid)), 0);
	KUNIT_EXPECT_EQ(t, memcmp(&path->dgid, &dgid, sizeof(dgid)), 0);
	if (rdma_protocol_roce(id->device, id->port_num))
		KUNIT_EXPECT_EQ_MSG(t, path->rec_type, SA_PATH_REC_TYPE_ROCE_V2,
				    "rdma_cm's default GID type is not RoCE v2");

	/* a listener bound to the address lands on the same device */
	ct_create_id(t, &c->listen, RDMA_PS_TCP, IB_QPT_RC);
	KUNIT_ASSERT_EQ(t, rdma_bind_addr(c->listen.id,
					  ct_addr(c, &sin, CT_PORT_BIND)), 0);
	KUNIT_EXPECT_PTR_EQ(t, c->listen.id->device, id->device);
	KUNIT_EXPECT_EQ(t, c->listen.id->port_num, id->port_num);
}

/* Listener, active end with its QP, connect: up to CONNECT_REQUEST. */
static void ct_request(struct kunit *t, struct ct *c, u16 port)
{
	struct rdma_conn_param cp = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = 7, .rnr_retry_count = 7,
	};

	ct_listen(t, c, port, RDMA_PS_TCP, IB_QPT_RC);
	ct_resolve(t, &c->active, port, RDMA_PS_TCP, IB_QPT_RC);
	ct_verbs(t, &c->active);
	ct_create_qp(t, &c->active);
	KUNIT_ASSERT_EQ(t, rdma_connect(c->active.id, &cp), 0);
	ct_await(t, &c->passive, RDMA_CM_EVENT_CONNECT_REQUEST);
	KUNIT_ASSERT_NOT_NULL(t, c->passive.id);
	KUNIT_EXPECT_PTR_EQ(t, c->passive.id->device, c->active.id->device);
	KUNIT_EXPECT_EQ(t, c->passive.peer_qpn, c->active.id->qp->qp_num);
}

/*
 * Case 2: an RC connection made entirely in the kernel: sends both ways,
 * byte for byte, then a disconnect both ends see.
 */
static void ct_rc_connect(struct kunit *t)
{
	struct rdma_conn_param cp = {
		.responder_resources = 1, .initiator_depth = 1,
		.rnr_retry_count = 7,
	};
	struct ct *c = t->priv;
	struct ct_ep *a = &c->active, *p = &c->passive;
	struct ib_wc wc;
	int ret;

	ct_request(t, c, CT_PORT_CONNECT);
	ct_verbs(t, p);
	ct_create_qp(t, p);
	/* the first message may come before ESTABLISHED: receive it */
	KUNIT_ASSERT_EQ(t, ct_post_recv(p, 10, CT_HALF), 0);
	rdma_lock_handler(p->id);
	ret = rdma_accept(p->id, &cp);
	rdma_unlock_handler(p->id);
	KUNIT_ASSERT_EQ(t, ret, 0);
	ct_await(t, a, RDMA_CM_EVENT_ESTABLISHED);
	ct_await(t, p, RDMA_CM_EVENT_ESTABLISHED);
	KUNIT_EXPECT_EQ(t, a->peer_qpn, p->id->qp->qp_num);
	KUNIT_EXPECT_EQ(t, krwq_test_qp_state(a->id->qp), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(t, krwq_test_qp_state(p->id->qp), IB_QPS_RTS);

	/* active -> passive */
	KUNIT_ASSERT_EQ(t, ct_post_send(a, 11, CT_RC_LEN, 0x21, NULL, 0, 0), 0);
	ct_expect_sent(t, a, 11);
	ct_expect_received(t, p, 10, 0, CT_RC_LEN, 0x21, &wc);

	/* passive -> active */
	KUNIT_ASSERT_EQ(t, ct_post_recv(a, 20, CT_HALF), 0);
	KUNIT_ASSERT_EQ(t, ct_post_send(p, 21, 1000, 0x7b, NULL, 0, 0), 0);
	ct_expect_sent(t, p, 21);
	ct_expect_received(t, a, 20, 0, 1000, 0x7b, &wc);

	/*
	 * The passive end hears the DREQ and answers it with its own
	 * rdma_disconnect() (the DREP); the active end hears the DREP.
	 */
	KUNIT_ASSERT_EQ(t, rdma_disconnect(a->id), 0);
	ct_await(t, p, RDMA_CM_EVENT_DISCONNECTED);
	KUNIT_ASSERT_EQ(t, rdma_disconnect(p->id), 0);
	ct_await(t, a, RDMA_CM_EVENT_DISCONNECTED);
	KUNIT_EXPECT_EQ(t, krwq_test_qp_state(a->id->qp), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(t, krwq_test_qp_state(p->id->qp), IB_QPS_ERR);
}

/* Case 3: the passive end rejects; the active end hears why. */
static void ct_rc_reject(struct kunit *t)
{
	static const u8 why[CT_PDATA] = "busy!";
	struct ct *c = t->priv;
	struct ct_ep *a = &c->active;
	int status;

	ct_request(t, c, CT_PORT_REJECT);
	KUNIT_ASSERT_EQ(t, rdma_reject(c->passive.id, why, sizeof(why),
				       IB_CM_REJ_CONSUMER_DEFINED), 0);
	status = ct_await(t, a, RDMA_CM_EVENT_REJECTED);
	KUNIT_EXPECT_EQ(t, status, IB_CM_REJ_CONSUMER_DEFINED);
	KUNIT_EXPECT_STREQ(t, rdma_reject_msg(a->id, status), "consumer defined");
	KUNIT_ASSERT_EQ(t, a->rej_len, CT_PDATA);
	KUNIT_EXPECT_EQ(t, memcmp(a->rej_data, why, CT_PDATA), 0);
	KUNIT_EXPECT_EQ(t, krwq_test_qp_state(a->id->qp), IB_QPS_ERR);
}

/*
 * Case 4: a connect to a port nobody listens on ends: REJECTED (the
 * peer's CM knows no such service) or UNREACHABLE (nobody answered).
 */
static void ct_rc_nobody_listens(struct kunit *t)
{
	struct rdma_conn_param cp = {
		.responder_resources = 1, .initiator_depth = 1,
		.retry_count = 7, .rnr_retry_count = 7,
	};
	struct ct *c = t->priv;
	struct ct_ep *a = &c->active;
	unsigned long start;
	struct ct_event ev;

	ct_resolve(t, a, CT_PORT_NOBODY, RDMA_PS_TCP, IB_QPT_RC);
	ct_verbs(t, a);
	ct_create_qp(t, a);
	start = jiffies;
	KUNIT_ASSERT_EQ(t, rdma_connect(a->id, &cp), 0);
	KUNIT_ASSERT_EQ_MSG(t, ct_next(a, CT_DEAD_MS, &ev), 0,
			    "no event %u ms after connecting to nobody",
			    CT_DEAD_MS);
	kunit_info(t, "%s (status %d) after %u ms", rdma_event_msg(ev.type),
		   ev.status, jiffies_to_msecs(jiffies - start));
	KUNIT_EXPECT_TRUE_MSG(t, ev.type == RDMA_CM_EVENT_REJECTED ||
			      ev.type == RDMA_CM_EVENT_UNREACHABLE,
			      "got %s", rdma_event_msg(ev.type));
	if (ev.type == RDMA_CM_EVENT_REJECTED) {
		KUNIT_EXPECT_EQ(t, ev.status, IB_CM_REJ_INVALID_SERVICE_ID);
		/* rdma_cm moves the QP of a rejected connect to ERR */
		KUNIT_EXPECT_EQ(t, krwq_test_qp_state(a->id->qp), IB_QPS_ERR);
	}
}

/*
 * Case 5: UD through rdma_cm: SIDR resolves the passive QP; a datagram
 * to it through an AH made from the ESTABLISHED event, and the answer
 * through an AH made from what was received.
 */
static void ct_ud(struct kunit *t)
{
	struct rdma_conn_param cp = {};
	struct ct *c = t->priv;
	struct ct_ep *a = &c->active, *p = &c->passive;
	union ib_gid want, *dgid;
	struct ib_ah *ah;
	u32 qkey;
	struct ib_wc wc;
	int ret;

	ct_listen(t, c, CT_PORT_UD, RDMA_PS_UDP, IB_QPT_UD);
	ct_resolve(t, a, CT_PORT_UD, RDMA_PS_UDP, IB_QPT_UD);
	ct_verbs(t, a);
	ct_create_qp(t, a);
	KUNIT_EXPECT_EQ(t, krwq_test_qp_state(a->id->qp), IB_QPS_RTS);
	KUNIT_ASSERT_EQ(t, rdma_connect(a->id, &cp), 0);
	ct_await(t, p, RDMA_CM_EVENT_CONNECT_REQUEST);
	KUNIT_ASSERT_NOT_NULL(t, p->id);
	KUNIT_EXPECT_EQ(t, p->id->qp_type, IB_QPT_UD);
	ct_verbs(t, p);
	ct_create_qp(t, p);
	KUNIT_ASSERT_EQ(t, ct_post_recv(p, 30, CT_HALF), 0);
	rdma_lock_handler(p->id);
	ret = rdma_accept(p->id, &cp);
	rdma_unlock_handler(p->id);
	KUNIT_ASSERT_EQ(t, ret, 0);
	ct_await(t, a, RDMA_CM_EVENT_ESTABLISHED);

	/* the SIDR reply: the passive QP, the port space's Q_Key, a path */
	KUNIT_ASSERT_TRUE(t, a->has_ah_attr);
	KUNIT_EXPECT_EQ(t, a->peer_qpn, p->id->qp->qp_num);
	KUNIT_EXPECT_EQ(t, a->peer_qkey, RDMA_UDP_QKEY);
	KUNIT_EXPECT_EQ(t, rdma_ah_get_port_num(&a->ah_attr), a->id->port_num);
	if (rdma_protocol_roce(a->id->device, a->id->port_num)) {
		KUNIT_EXPECT_EQ(t, a->ah_attr.type, RDMA_AH_ATTR_TYPE_ROCE);
		KUNIT_ASSERT_TRUE(t, rdma_ah_get_ah_flags(&a->ah_attr) & IB_AH_GRH);
		ipv6_addr_set_v4mapped(c->sin.sin_addr.s_addr,
				       (struct in6_addr *)&want);
		dgid = &rdma_ah_retrieve_grh(&a->ah_attr)->dgid;
		KUNIT_EXPECT_EQ(t, memcmp(dgid, &want, sizeof(want)), 0);
	}
	ah = rdma_create_ah(a->pd, &a->ah_attr, RDMA_CREATE_AH_SLEEPABLE);
	KUNIT_ASSERT_FALSE_MSG(t, IS_ERR(ah), "rdma_create_ah: %ld", PTR_ERR(ah));
	a->ah = ah;

	/* active -> passive, with the GRH space in front */
	KUNIT_ASSERT_EQ(t, ct_post_send(a, 31, CT_UD_LEN, 0x3c, a->ah,
					a->peer_qpn, a->peer_qkey), 0);
	ct_expect_sent(t, a, 31);
	ct_expect_received(t, p, 30, CT_GRH, CT_UD_LEN, 0x3c, &wc);
	KUNIT_EXPECT_EQ(t, wc.src_qp, a->id->qp->qp_num);
	ct_expect_grh(t, p, &wc);

	/* passive -> active: an AH from the receive, as a GSI QP answers */
	ah = ib_create_ah_from_wc(p->pd, &wc, (void *)(p->buf + CT_HALF),
				  p->id->port_num);
	KUNIT_ASSERT_FALSE_MSG(t, IS_ERR(ah), "ib_create_ah_from_wc: %ld",
			       PTR_ERR(ah));
	p->ah = ah;
	qkey = ct_qp_qkey(a->id->qp);
	KUNIT_EXPECT_EQ(t, qkey, RDMA_UDP_QKEY);
	KUNIT_ASSERT_EQ(t, ct_post_recv(a, 40, CT_HALF), 0);
	KUNIT_ASSERT_EQ(t, ct_post_send(p, 41, CT_UD_LEN / 2, 0x5d, p->ah,
					wc.src_qp, qkey), 0);
	ct_expect_sent(t, p, 41);
	ct_expect_received(t, a, 40, CT_GRH, CT_UD_LEN / 2, 0x5d, &wc);
	KUNIT_EXPECT_EQ(t, wc.src_qp, p->id->qp->qp_num);
	ct_expect_grh(t, a, &wc);
}

static struct kunit_case krwq_cm_cases[] = {
	KUNIT_CASE(ct_resolve_addr_route),
	KUNIT_CASE(ct_rc_connect),
	KUNIT_CASE(ct_rc_reject),
	KUNIT_CASE(ct_rc_nobody_listens),
	KUNIT_CASE(ct_ud),
	{}
};

static struct kunit_suite krwq_cm_suite = {
	.name = "krwq_cm",
	.init = ct_init,
	.exit = ct_exit,
	.test_cases = krwq_cm_cases,
};

static struct kunit_suite *krwq_cm_suites[] = { &krwq_cm_suite };

/*
 * Not kunit_test_suite(): Linux 6.1 runs a module's suites from its
 * MODULE_STATE_COMING notifier, which comes before the module's
 * parameters are parsed, so addr would always be empty.  The module's
 * own init runs after, and runs the suite the same way.
 */
static int __init ct_module_init(void)
{
	return __kunit_test_suites_init(krwq_cm_suites,
					ARRAY_SIZE(krwq_cm_suites));
}
module_init(ct_module_init);

static void __exit ct_module_exit(void)
{
	__kunit_test_suites_exit(krwq_cm_suites, ARRAY_SIZE(krwq_cm_suites));
}
module_exit(ct_module_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("krwq: rdma_cm from the kernel on a netdev-bound RDMA device (KUnit)");
