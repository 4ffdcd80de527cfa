// SPDX-License-Identifier: GPL-2.0
/*
 * net.c - RoCEv2's link to the network: the UDP sockets on port 4791 that
 * a network namespace's netdev-bound devices share, and the IP and UDP
 * headers around a transport packet, going out and coming in.
 *
 * A netdev-bound device opens (or shares) its namespace's sockets when it
 * is created, so a namespace where something else holds port 4791
 * (rdma_rxe holds it in the initial namespace from its load) refuses the
 * device.  With the module parameter wire=0 no device opens a socket and
 * nothing goes on the wire: every device is reached only through the
 * host's fabric, as before there was a wire.
 *
 * Out: a run of the send queue builds a packet's transport headers and
 * payload (krwq_net_send_ud()) and queues it on the run's list; the
 * caller hands the list to krwq_net_xmit() once it has released the QP's
 * locks, which routes each packet, puts UDP and IP around it and the ICRC
 * after it, and sends it: the IP stack must not be entered with
 * interrupts off.  A caller that had them off itself leaves the packets
 * to the device's tx_work.
 *
 * In: the UDP stack hands every datagram to port 4791 to
 * krwq_net_recv(), in softirq context, with its UDP checksum (if any)
 * checked.  The packet's netdev names the device, which must hold its
 * destination address as a GID; the ICRC and headers are checked, and
 * the responder (resp.c) delivers it into the QP.  What is dropped is
 * counted: wire_icrc_errors for a failed ICRC, and wire_rx_dropped for
 * anything else, among it a packet from a VLAN on the bound netdev (krwq
 * sends on the bound netdev only), an IPv4 header with options or an
 * IPv6 one with extension headers, and a payload over the port's MTU.
 */
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/list.h>
#include <linux/moduleparam.h>
#include <linux/skbuff.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6_stubs.h>
#include <net/net_namespace.h>
#include <net/route.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>

#include "krwq.h"
#include "resp.h"
#include "wire.h"

static bool krwq_wire_on = true;
module_param_named(wire, krwq_wire_on, bool, 0444);
MODULE_PARM_DESC(wire, "netdev-bound devices speak RoCEv2 on UDP port 4791 to other hosts and namespaces (default true)");

/*
 * struct krwq_net_socks - one network namespace's port 4791.
 * @net: the namespace; NULL once it has gone (krwq_net_exit_net()).
 * @sk4: the IPv4 socket, or NULL once closed.
 * @sk6: the IPv6 socket (IPV6_V6ONLY), or NULL once closed or without IPv6.
 * @users: devices holding it.
 * @node: on krwq_net_list.
 * All under krwq_net_lock.  A device's krwq_dev.wire points here while it
 * lives; the last device to go, or the namespace's end, closes the
 * sockets, and the last of both frees it.
 */
struct krwq_net_socks {
	struct net *net;
	struct socket *sk4, *sk6;
	unsigned int users;
	struct list_head node;
};

static DEFINE_MUTEX(krwq_net_lock);
static LIST_HEAD(krwq_net_list);

/* The headroom a packet needs in front of its BTH, at most. */
#define KRWQ_NET_HEADROOM	(sizeof(struct ipv6hdr) + sizeof(struct udphdr))

/*
 * struct krwq_net_cb - where a packet built under the QP's locks goes,
 * kept in its skb->cb until krwq_net_xmit() routes it and puts UDP and IP
 * around it: the IPv6 route lookup must not run with interrupts off.
 */
struct krwq_net_cb {
	union ib_gid sgid, dgid;
	u32 flow_label;
	u16 sport;
	u16 hdr_len;		/* of the transport headers */
	u8 tclass, hop_limit;
	u8 net_type;		/* RDMA_NETWORK_IPV4 or _IPV6 */
};

static_assert(sizeof(struct krwq_net_cb) <= sizeof_field(struct sk_buff, cb));

static struct krwq_net_cb *krwq_net_cb(struct sk_buff *skb)
{
	return (struct krwq_net_cb *)skb->cb;
}

/* --- coming in ------------------------------------------------------------ */

/* Whether the packet's network header (at @l3) is IPv4; else IPv6. */
static bool krwq_net_is_ipv4(const u8 *l3)
{
	return l3[0] >> 4 == 4;
}

static void krwq_net_drop(struct krwq_dev *dev, enum krwq_stat why,
			  struct sk_buff *skb)
{
	if (dev)
		krwq_count(dev, why, 1);
	kfree_skb(skb);
}

/*
 * The 40 bytes a UD receive starts with, from the packet's IP header: an
 * IPv6 header whole, or an IPv4 header (without options) in the last 20.
 */
static void krwq_net_ud_hdr(const u8 *l3, union rdma_network_hdr *hdr,
			    enum rdma_network_type *type)
{
	memset(hdr, 0, sizeof(*hdr));
	if (krwq_net_is_ipv4(l3)) {
		memcpy(&hdr->roce4grh, l3, sizeof(hdr->roce4grh));
		*type = RDMA_NETWORK_IPV4;
	} else {
		memcpy(&hdr->ibgrh, l3, sizeof(hdr->ibgrh));
		*type = RDMA_NETWORK_IPV6;
	}
}

/*
 * The checks every packet passes: it fits its UDP length, its transport
 * headers parse, and its ICRC is right.  Return: the parsed packet's
 * header length, or a stat to count it under.
 */
static int krwq_net_check(struct sk_buff *skb, struct krwq_wire_pkt *pkt,
			  enum krwq_stat *why)
{
	const struct udphdr *udph = udp_hdr(skb);
	const u8 *l3 = skb_network_header(skb);
	const u8 *bth = (const u8 *)(udph + 1);
	unsigned int ib_len, to_bth;
	int hdr_len;
	u32 icrc;

	*why = KRWQ_STAT_WIRE_RX_DROPPED;
	/* the ICRC's invariant fields are those of a bare IP header */
	if (krwq_net_is_ipv4(l3) ? ip_hdr(skb)->ihl != 5 :
	    ipv6_hdr(skb)->nexthdr != IPPROTO_UDP)
		return -EINVAL;
	ib_len = ntohs(udph->len);
	if (ib_len < sizeof(*udph) || skb_tail_pointer(skb) < bth ||
	    ib_len - sizeof(*udph) > skb_tail_pointer(skb) - bth)
		return -EINVAL;
	ib_len -= sizeof(*udph);
	hdr_len = krwq_wire_parse(pkt, bth, ib_len);
	if (hdr_len < 0)
		return hdr_len;
	to_bth = bth - l3;
	if (krwq_icrc(l3, to_bth + ib_len - IB_ICRC_BYTES, to_bth + hdr_len,
		      &icrc))
		return -EINVAL;
	if (icrc != get_unaligned_le32(bth + ib_len - IB_ICRC_BYTES)) {
		*why = KRWQ_STAT_WIRE_ICRC_ERRORS;
		return -EBADMSG;
	}
	return hdr_len;
}

/*
 * The netdev-bound device of the netdev a packet came in on, or of the
 * netdev under the VLAN it came in on (to count the packet).
 */
static struct krwq_dev *krwq_net_dev_rcu(struct net_device *ndev)
{
	if (is_vlan_dev(ndev))
		ndev = vlan_dev_real_dev(ndev);
	return krwq_fabric_by_netdev_rcu(ndev);
}

/* A packet's IP source and destination addresses, as GIDs. */
static void krwq_net_gids(struct sk_buff *skb, union ib_gid *sgid,
			  union ib_gid *dgid)
{
	if (krwq_net_is_ipv4(skb_network_header(skb))) {
		ipv6_addr_set_v4mapped(ip_hdr(skb)->saddr,
				       (struct in6_addr *)sgid->raw);
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)dgid->raw);
	} else {
		memcpy(sgid->raw, &ipv6_hdr(skb)->saddr, sizeof(sgid->raw));
		memcpy(dgid->raw, &ipv6_hdr(skb)->daddr, sizeof(dgid->raw));
	}
}

/*
 * A packet is for @dev when its destination address is one of the
 * device's GIDs: a unicast address of the bound netdev, never one of the
 * host's other addresses, a broadcast or a multicast group.
 */
static bool krwq_net_for_dev(struct krwq_dev *dev, struct sk_buff *skb)
{
	const struct ib_gid_attr *attr;
	union ib_gid sgid, dgid;

	krwq_net_gids(skb, &sgid, &dgid);
	attr = rdma_find_gid_by_port(&dev->ibdev, &dgid,
				     IB_GID_TYPE_ROCE_UDP_ENCAP, 1, dev->ndev);
	if (IS_ERR(attr))
		return false;
	rdma_put_gid_attr(attr);
	return true;
}

/*
 * udp_tunnel_sock_cfg.encap_rcv: one datagram to port 4791, its UDP
 * header at skb->data.  Return: 0, the packet consumed.
 */
static int krwq_net_recv(struct sock *sk, struct sk_buff *skb)
{
	union ib_gid sgid, dgid;
	const u8 *payload;
	bool ud;
	union rdma_network_hdr hdr;
	enum rdma_network_type type;
	struct krwq_wire_pkt pkt;
	enum krwq_stat why;
	struct krwq_dev *dev;
	struct krwq_qp *qp;
	int hdr_len;

	rcu_read_lock();
	dev = krwq_net_dev_rcu(skb->dev);
	if (!dev || !dev->wire || !krwq_port_active(dev) ||
	    is_vlan_dev(skb->dev) || skb_linearize(skb)) {
		krwq_net_drop(dev, KRWQ_STAT_WIRE_RX_DROPPED, skb);
		goto out;
	}
	hdr_len = krwq_net_check(skb, &pkt, &why);
	if (hdr_len < 0) {
		krwq_net_drop(dev, why, skb);
		goto out;
	}
	/* a datagram is one packet: it fits the MTU a sender must keep */
	if (pkt.payload_len > krwq_port_mtu_bytes(dev)) {
		krwq_net_drop(dev, KRWQ_STAT_WIRE_RX_DROPPED, skb);
		goto out;
	}
	krwq_count(dev, KRWQ_STAT_WIRE_RX, 1);
	/*
	 * UD and UC so far (RC reaches a peer only through the fabric); the
	 * one partition is the default one, of either membership
	 */
	ud = (pkt.opcode & KRWQ_WIRE_CLASS_MASK) == IB_OPCODE_UD;
	if ((!ud && (pkt.opcode & KRWQ_WIRE_CLASS_MASK) != IB_OPCODE_UC) ||
	    (pkt.pkey & IB_DEFAULT_PKEY_PARTIAL) != IB_DEFAULT_PKEY_PARTIAL) {
		krwq_net_drop(dev, KRWQ_STAT_WIRE_RX_DROPPED, skb);
		goto out;
	}
	qp = krwq_qp_get(dev, pkt.dqpn);
	if (!qp) {
		krwq_net_drop(dev, ud ? KRWQ_STAT_UD_DROPPED :
				   KRWQ_STAT_WIRE_RX_DROPPED, skb);
		goto out;
	}
	/*
	 * only now: a QP exists only on a registered device, whose GID
	 * table is set up (a device being created is already in the fabric)
	 */
	if (!krwq_net_for_dev(dev, skb)) {
		krwq_qp_put(qp);
		krwq_net_drop(dev, KRWQ_STAT_WIRE_RX_DROPPED, skb);
		goto out;
	}
	payload = (const u8 *)(udp_hdr(skb) + 1) + hdr_len;
	if (ud) {
		krwq_net_ud_hdr(skb_network_header(skb), &hdr, &type);
		krwq_resp_wire_ud(qp, &pkt, &hdr, type, payload);
	} else {
		krwq_net_gids(skb, &sgid, &dgid);
		krwq_resp_wire_uc(qp, &pkt, &sgid, &dgid, payload);
	}
	krwq_qp_put(qp);
	consume_skb(skb);
out:
	rcu_read_unlock();
	return 0;
}

/* --- the sockets ------------------------------------------------------------ */

static struct socket *krwq_net_socket(struct net *net, bool ipv6)
{
	struct udp_tunnel_sock_cfg tnl = {
		.encap_type = 1,
		.encap_rcv = krwq_net_recv,
	};
	struct udp_port_cfg cfg = {
		.family = ipv6 ? AF_INET6 : AF_INET,
		.ipv6_v6only = ipv6,
		.local_udp_port = htons(KRWQ_ROCE_UDP_PORT),
	};
	struct socket *sock;
	int ret;

	ret = udp_sock_create(net, &cfg, &sock);
	if (ret)
		return ERR_PTR(ret);
	setup_udp_tunnel_sock(net, sock, &tnl);
	return sock;
}

static void krwq_net_close(struct krwq_net_socks *s)
{
	if (s->sk4)
		udp_tunnel_sock_release(s->sk4);
	if (s->sk6)
		udp_tunnel_sock_release(s->sk6);
	s->sk4 = NULL;
	s->sk6 = NULL;
}

/* Opens @net's sockets into a new entry; the caller holds krwq_net_lock. */
static struct krwq_net_socks *krwq_net_open(struct net *net)
{
	struct krwq_net_socks *s;
	struct socket *sock;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return ERR_PTR(-ENOMEM);
	s->net = net;
	sock = krwq_net_socket(net, false);
	if (IS_ERR(sock))
		goto err;
	s->sk4 = sock;
	if (IS_ENABLED(CONFIG_IPV6) && ipv6_mod_enabled()) {
		sock = krwq_net_socket(net, true);
		if (IS_ERR(sock))
			goto err;
		s->sk6 = sock;
	}
	list_add(&s->node, &krwq_net_list);
	return s;
err:
	krwq_net_close(s);
	kfree(s);
	return ERR_CAST(sock);
}

/**
 * krwq_net_attach() - give a netdev-bound device its namespace's port 4791,
 * opening the namespace's sockets if it is the first there.
 * @dev: the device, not yet registered; dev->ndev set.
 *
 * Context: process; takes krwq_net_lock.
 * Return: 0 (also with wire=0, when nothing is opened), -EADDRINUSE when
 * something else holds the port in the namespace (logged), or another
 * negative errno from the UDP stack.
 */
int krwq_net_attach(struct krwq_dev *dev)
{
	struct net *net = dev_net(dev->ndev);
	struct krwq_net_socks *s;
	int ret = 0;

	if (!krwq_wire_on)
		return 0;
	mutex_lock(&krwq_net_lock);
	list_for_each_entry(s, &krwq_net_list, node)
		if (s->net && net_eq(s->net, net))
			goto found;
	s = krwq_net_open(net);
	if (IS_ERR(s)) {
		ret = PTR_ERR(s);
		if (ret == -EADDRINUSE)
			pr_warn("krwq: UDP port %u is taken in %s's network namespace (by rdma_rxe?); krwq devices there need it, or the module loaded with wire=0\n",
				KRWQ_ROCE_UDP_PORT, netdev_name(dev->ndev));
		goto out;
	}
found:
	s->users++;
	dev->wire = s;
out:
	mutex_unlock(&krwq_net_lock);
	return ret;
}

/* Drops one hold on @s; the caller holds krwq_net_lock. */
static void krwq_net_put(struct krwq_net_socks *s)
{
	if (--s->users)
		return;
	krwq_net_close(s);
	list_del(&s->node);
	kfree(s);
}

/**
 * krwq_net_detach() - a device is done with the wire: nothing of it is
 * sent any more, and its namespace's sockets close if it was their last.
 * @dev: the device, unregistered (or never registered).
 *
 * Context: process; takes krwq_net_lock; waits for the device's tx_work.
 */
void krwq_net_detach(struct krwq_dev *dev)
{
	cancel_work_sync(&dev->tx_work);
	skb_queue_purge(&dev->tx_q);
	if (!dev->wire)
		return;
	mutex_lock(&krwq_net_lock);
	krwq_net_put(dev->wire);
	dev->wire = NULL;
	mutex_unlock(&krwq_net_lock);
}

/*
 * pernet_operations.exit: a namespace ends.  Its netdevs, and with them
 * the devices bound to them, went before (the device part of the
 * namespace's end comes first); a device whose netdev moved away may
 * still hold the entry, which then outlives the namespace without its
 * sockets.
 */
static void krwq_net_exit_net(struct net *net)
{
	struct krwq_net_socks *s;

	mutex_lock(&krwq_net_lock);
	list_for_each_entry(s, &krwq_net_list, node) {
		if (s->net && net_eq(s->net, net)) {
			krwq_net_close(s);
			s->net = NULL;
			break;
		}
	}
	mutex_unlock(&krwq_net_lock);
}

static struct pernet_operations krwq_net_ops = {
	.exit = krwq_net_exit_net,
};

/* --- going out -------------------------------------------------------------- */

/**
 * krwq_net_reaches() - whether a send of @dev's to @route goes on the wire.
 * @dev: the sending device.
 * @route: where the address vector leads (krwq_fabric_route()).
 *
 * Context: any.
 * Return: true when no krwq device in the sender's namespace holds the
 * address, the device has the wire, and the address is a RoCE v2 one (v1
 * is no IP packet).
 */
bool krwq_net_reaches(const struct krwq_dev *dev,
		      const struct krwq_route *route)
{
	return route->dest == KRWQ_NO_DEST && dev->wire &&
	       (route->net_type == RDMA_NETWORK_IPV4 ||
		route->net_type == RDMA_NETWORK_IPV6);
}

/* Pushes the UDP header onto @skb, whose data starts at the BTH. */
static void krwq_net_push_udp(struct sk_buff *skb, u16 sport)
{
	struct udphdr *udph;

	__skb_push(skb, sizeof(*udph));
	skb_reset_transport_header(skb);
	udph = udp_hdr(skb);
	udph->source = htons(sport);
	udph->dest = htons(KRWQ_ROCE_UDP_PORT);
	udph->len = htons(skb->len);
	/* zero: the ICRC covers the packet, as RoCEv2 senders do */
	udph->check = 0;
}

/* Routes @skb from @ndev as @to says and pushes IPv4. */
static int krwq_net_push_ipv4(struct sk_buff *skb, struct net_device *ndev,
			      const struct krwq_net_cb *to)
{
	struct flowi4 fl = {
		.flowi4_oif = ndev->ifindex,
		.flowi4_proto = IPPROTO_UDP,
	};
	struct rtable *rt;
	struct iphdr *iph;

	memcpy(&fl.saddr, &to->sgid.raw[12], sizeof(fl.saddr));
	memcpy(&fl.daddr, &to->dgid.raw[12], sizeof(fl.daddr));
	rt = ip_route_output_key(dev_net(ndev), &fl);
	if (IS_ERR(rt))
		return PTR_ERR(rt);
	skb_dst_set(skb, &rt->dst);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph = ip_hdr(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) / 4;
	iph->tos = to->tclass;
	iph->tot_len = htons(skb->len);
	iph->frag_off = htons(IP_DF);
	/* an address handle's hop limit 0 means the route's default */
	iph->ttl = to->hop_limit ?: ip4_dst_hoplimit(&rt->dst);
	iph->protocol = IPPROTO_UDP;
	iph->saddr = fl.saddr;
	iph->daddr = fl.daddr;
	/* the ID is under the ICRC, so it is chosen before the ICRC is taken */
	__ip_select_ident(dev_net(ndev), iph, 1);
	skb->protocol = htons(ETH_P_IP);
	return 0;
}

/* Routes @skb from @ndev as @to says and pushes IPv6. */
static int krwq_net_push_ipv6(struct sk_buff *skb, struct net_device *ndev,
			      const struct krwq_net_cb *to)
{
	struct flowi6 fl = {
		.flowi6_oif = ndev->ifindex,
		.flowi6_proto = IPPROTO_UDP,
	};
	struct dst_entry *dst;
	struct ipv6hdr *ip6h;

	if (!IS_ENABLED(CONFIG_IPV6))
		return -EAFNOSUPPORT;
	memcpy(&fl.saddr, to->sgid.raw, sizeof(fl.saddr));
	memcpy(&fl.daddr, to->dgid.raw, sizeof(fl.daddr));
	dst = ipv6_stub->ipv6_dst_lookup_flow(dev_net(ndev), NULL, &fl, NULL);
	if (IS_ERR(dst))
		return PTR_ERR(dst);
	if (dst->error) {
		int ret = dst->error;

		dst_release(dst);
		return ret;
	}
	skb_dst_set(skb, dst);
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
	__skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6h = ipv6_hdr(skb);
	ip6_flow_hdr(ip6h, to->tclass, htonl(to->flow_label));
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = to->hop_limit ?: ip6_dst_hoplimit(dst);
	ip6h->saddr = fl.saddr;
	ip6h->daddr = fl.daddr;
	skb->protocol = htons(ETH_P_IPV6);
	return 0;
}

/*
 * Puts UDP and IP around @skb (data at the BTH; the transport headers,
 * payload and pad, and four bytes for the ICRC at its end) as its
 * krwq_net_cb says, and fills in the ICRC.  Return: 0, or a negative
 * errno when there is no route.
 */
static int krwq_net_wrap(struct sk_buff *skb, struct net_device *ndev)
{
	/* a copy: IPCB() and IP6CB() share skb->cb */
	struct krwq_net_cb to = *krwq_net_cb(skb);
	unsigned int to_bth;
	u32 icrc;
	int ret;

	krwq_net_push_udp(skb, to.sport);
	if (to.net_type == RDMA_NETWORK_IPV4)
		ret = krwq_net_push_ipv4(skb, ndev, &to);
	else
		ret = krwq_net_push_ipv6(skb, ndev, &to);
	if (ret)
		return ret;
	to_bth = skb_transport_offset(skb) + sizeof(struct udphdr);
	if (WARN_ON_ONCE(krwq_icrc(skb->data, skb->len - IB_ICRC_BYTES,
				   to_bth + to.hdr_len, &icrc)))
		return -EINVAL;
	put_unaligned_le32(icrc, skb_tail_pointer(skb) - IB_ICRC_BYTES);
	skb->dev = ndev;
	return 0;
}

/*
 * Builds one packet for a run of @sqp's send queue and queues it on the
 * run's list: @pkt's transport headers, @len bytes of payload from @src
 * (which moves on past them), its pad and room for the ICRC; @to says
 * where it goes (hdr_len is filled in here).  The packet takes the next
 * PSN whatever becomes of it.  Return: 0, -ENOMEM, or -EFAULT when @src
 * does not check out (a region revoked).
 */
static int krwq_net_packet(struct krwq_qp *sqp, struct krwq_wire_pkt *pkt,
			   struct krwq_sge_cursor *src, u32 len,
			   struct krwq_net_cb *to)
{
	struct net_device *ndev = sqp->dev->ndev;
	struct krwq_mr *local = &sqp->dev->local_dma_mr;
	unsigned int hdr_len = krwq_wire_hdr_len(pkt->opcode);
	struct krwq_sge_cursor dst;
	struct sk_buff *skb;
	struct ib_sge sge;
	u8 *bth;

	pkt->psn = sqp->wire_psn;
	pkt->pad = -len & 3;
	sqp->wire_psn = krwq_psn_add(sqp->wire_psn, 1);
	skb = alloc_skb(LL_RESERVED_SPACE(ndev) + KRWQ_NET_HEADROOM + hdr_len +
			len + pkt->pad + IB_ICRC_BYTES, GFP_ATOMIC);
	if (!skb)
		return -ENOMEM;
	skb_reserve(skb, LL_RESERVED_SPACE(ndev) + KRWQ_NET_HEADROOM);
	bth = skb_put(skb, hdr_len + len + pkt->pad + IB_ICRC_BYTES);
	if (WARN_ON_ONCE(krwq_wire_build(pkt, bth, hdr_len) != hdr_len)) {
		kfree_skb(skb);
		return -EFAULT;
	}
	sge = (struct ib_sge) { .addr = (uintptr_t)(bth + hdr_len), .length = len };
	dst = (struct krwq_sge_cursor) {
		.sge = &sge, .mrs = &local, .held = &local, .nheld = 1,
	};
	if (krwq_cursor_revoked(src) || krwq_copy(&dst, src, len)) {
		kfree_skb(skb);
		return -EFAULT;
	}
	/* the copy counts against the run's interrupts-off section */
	sqp->run->section += len;
	memset(bth + hdr_len + len, 0, pkt->pad);
	to->hdr_len = hdr_len;
	*krwq_net_cb(skb) = *to;
	__skb_queue_tail(sqp->run->tx, skb);
	return 0;
}

/* Where a packet to @grh from @sqp goes, for its krwq_net_cb. */
static void krwq_net_to(struct krwq_net_cb *to, const struct krwq_qp *sqp,
			const struct krwq_route *route,
			const struct ib_global_route *grh, u32 dqpn)
{
	u32 flow_label = grh->flow_label & IB_GRH_FLOWLABEL_MASK;

	*to = (struct krwq_net_cb) {
		.sgid = route->sgid, .dgid = grh->dgid,
		.flow_label = flow_label,
		.sport = rdma_get_udp_sport(flow_label, sqp->ibqp.qp_num, dqpn),
		.tclass = grh->traffic_class, .hop_limit = grh->hop_limit,
		.net_type = route->net_type,
	};
}

/**
 * krwq_net_send_ud() - put a UD send WQE on the wire: one packet, queued
 * on the run's list for krwq_net_xmit(), which routes it.
 * @sqp: the sender; the caller holds its s_lock, in a run (sqp->run).
 * @w: the WQE, whose route krwq_net_reaches().
 *
 * A datagram that cannot be sent is dropped and counted, in ud_dropped
 * (no memory) or wire_tx_dropped (no route, or the IP stack refused it);
 * the sender is not told, as on a network.
 *
 * Return: IB_WC_SUCCESS, or IB_WC_LOC_PROT_ERR when the payload's regions
 * do not check out.
 */
enum ib_wc_status krwq_net_send_ud(struct krwq_qp *sqp, struct krwq_swqe *w)
{
	struct krwq_wire_pkt pkt = {
		.opcode = w->opcode == IB_WR_SEND_WITH_IMM ?
			  IB_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE :
			  IB_OPCODE_UD_SEND_ONLY,
		.se = w->send_flags & IB_SEND_SOLICITED,
		.pkey = IB_DEFAULT_PKEY_FULL,
		.dqpn = w->remote_qpn,
		/* a Q_Key with the high bit set means the sender's own */
		.qkey = (int)w->remote_qkey < 0 ? sqp->attr.qkey :
			w->remote_qkey,
		.sqpn = sqp->ibqp.qp_num,
		.imm = w->imm_data,
	};
	struct krwq_sge_cursor src;
	struct krwq_net_cb to;
	int ret;

	if (!krwq_src_get(sqp, w, 0))
		return IB_WC_LOC_PROT_ERR;
	krwq_src_cursor(sqp, w, &src);
	krwq_net_to(&to, sqp, &w->route, rdma_ah_read_grh(&w->ah),
		    w->remote_qpn);
	ret = krwq_net_packet(sqp, &pkt, &src, w->length, &to);
	krwq_src_put(sqp, w);
	if (ret == -ENOMEM)
		krwq_count(sqp->dev, KRWQ_STAT_UD_DROPPED, 1);
	return ret == -EFAULT ? IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
}

/*
 * The UC opcode of a send WQE's packet: the first, a middle one, the last,
 * or the only one of its message.
 */
static u8 krwq_net_uc_opcode(enum ib_wr_opcode op, bool first, bool last)
{
	bool write = op == IB_WR_RDMA_WRITE || op == IB_WR_RDMA_WRITE_WITH_IMM;
	bool imm = op == IB_WR_SEND_WITH_IMM || op == IB_WR_RDMA_WRITE_WITH_IMM;
	u8 code;

	if (first && last)
		code = write ? (imm ? IB_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE :
				      IB_OPCODE_RDMA_WRITE_ONLY) :
			       (imm ? IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE :
				      IB_OPCODE_SEND_ONLY);
	else if (first)
		code = write ? IB_OPCODE_RDMA_WRITE_FIRST : IB_OPCODE_SEND_FIRST;
	else if (last)
		code = write ? (imm ? IB_OPCODE_RDMA_WRITE_LAST_WITH_IMMEDIATE :
				      IB_OPCODE_RDMA_WRITE_LAST) :
			       (imm ? IB_OPCODE_SEND_LAST_WITH_IMMEDIATE :
				      IB_OPCODE_SEND_LAST);
	else
		code = write ? IB_OPCODE_RDMA_WRITE_MIDDLE :
			       IB_OPCODE_SEND_MIDDLE;
	return IB_OPCODE_UC | code;
}

/**
 * krwq_net_send_uc() - put a UC send WQE on the wire: its message cut
 * into packets of the path MTU (the port's, if smaller), each with the
 * next PSN, queued on the run's list for krwq_net_xmit().
 * @sqp: the sender; the caller holds its s_lock, in a run (sqp->run).
 * @w: the WQE, a SEND, SEND with immediate, or RDMA WRITE with or without
 *     immediate; the QP's route krwq_net_reaches().
 *
 * A long message lets interrupts in between packets, and the packets
 * queued so far go out then (krwq_run_unlock_for_irqs()).  UC has no
 * acknowledgments: a packet that cannot be sent is counted in
 * wire_tx_dropped, the rest of its message is not sent, and the receiver
 * drops the message; the sender is not told, as on a network.
 *
 * Return: IB_WC_SUCCESS; IB_WC_LOC_PROT_ERR when the payload's regions do
 * not check out; IB_WC_LOC_QP_OP_ERR for a SEND with invalidate, which
 * UC cannot carry on the wire.
 */
enum ib_wc_status krwq_net_send_uc(struct krwq_qp *sqp, struct krwq_swqe *w)
{
	u32 mtu = min_t(u32, ib_mtu_enum_to_int(sqp->attr.path_mtu),
			krwq_port_mtu_bytes(sqp->dev));
	struct krwq_sge_cursor src;
	struct krwq_net_cb to;
	u32 off = 0;
	int ret = 0;

	if (w->opcode == IB_WR_SEND_WITH_INV)
		return IB_WC_LOC_QP_OP_ERR;
	if (!krwq_src_get(sqp, w, 0))
		return IB_WC_LOC_PROT_ERR;
	krwq_src_cursor(sqp, w, &src);
	krwq_net_to(&to, sqp, &sqp->route,
		    rdma_ah_read_grh(&sqp->attr.ah_attr),
		    sqp->attr.dest_qp_num);
	do {
		u32 n = min(mtu, w->length - off);
		bool last = off + n == w->length;
		struct krwq_wire_pkt pkt = {
			.opcode = krwq_net_uc_opcode(w->opcode, !off, last),
			.se = last && (w->send_flags & IB_SEND_SOLICITED),
			.pkey = IB_DEFAULT_PKEY_FULL,
			.dqpn = sqp->attr.dest_qp_num,
			.va = w->remote_addr,
			.rkey = w->rkey,
			.dma_len = w->length,
			.imm = w->imm_data,
		};

		if (sqp->run->section + n > KRWQ_IRQOFF_BYTES &&
		    krwq_run_unlock_for_irqs(sqp)) {
			/* the packets built so far go out meanwhile */
			krwq_net_xmit(sqp->dev, sqp->run->tx, *sqp->run->flags);
			krwq_run_relock(sqp);
		}
		ret = krwq_net_packet(sqp, &pkt, &src, n, &to);
		if (ret)
			break;
		off += n;
	} while (off < w->length);
	krwq_src_put(sqp, w);
	if (ret == -ENOMEM)
		krwq_count(sqp->dev, KRWQ_STAT_WIRE_TX_DROPPED, 1);
	return ret == -EFAULT ? IB_WC_LOC_PROT_ERR : IB_WC_SUCCESS;
}

/* Routes one packet and hands it to the IP stack, which frees it. */
static void krwq_net_out(struct krwq_dev *dev, struct sk_buff *skb)
{
	struct net *net;
	int ret;

	if (krwq_net_wrap(skb, dev->ndev)) {
		krwq_count(dev, KRWQ_STAT_WIRE_TX_DROPPED, 1);
		kfree_skb(skb);
		return;
	}
	net = dev_net(skb_dst(skb)->dev);
	if (skb->protocol == htons(ETH_P_IP))
		ret = ip_local_out(net, NULL, skb);
	else
		ret = ip6_local_out(net, NULL, skb);
	krwq_count(dev, net_xmit_eval(ret) ? KRWQ_STAT_WIRE_TX_DROPPED :
					     KRWQ_STAT_WIRE_TX, 1);
}

/**
 * krwq_net_xmit() - send the packets a run queued.
 * @dev: the sending device.
 * @tx: the run's list; empty on return.
 * @flags: the interrupt state the caller had before it took the QP's
 *         s_lock; with interrupts off the packets go to dev->tx_work.
 *
 * Context: any; the caller holds no krwq lock.
 */
void krwq_net_xmit(struct krwq_dev *dev, struct sk_buff_head *tx,
		   unsigned long flags)
{
	struct sk_buff *skb;

	if (skb_queue_empty(tx))
		return;
	if (irqs_disabled_flags(flags) || irqs_disabled()) {
		unsigned long f;

		spin_lock_irqsave(&dev->tx_q.lock, f);
		skb_queue_splice_tail_init(tx, &dev->tx_q);
		spin_unlock_irqrestore(&dev->tx_q.lock, f);
		queue_work(krwq_wq, &dev->tx_work);
		return;
	}
	while ((skb = __skb_dequeue(tx)))
		krwq_net_out(dev, skb);
}

/**
 * krwq_net_tx_work() - send what a run left because its caller had
 * interrupts off.
 * @work: dev->tx_work.
 */
void krwq_net_tx_work(struct work_struct *work)
{
	struct krwq_dev *dev = container_of(work, struct krwq_dev, tx_work);
	struct sk_buff *skb;

	while ((skb = skb_dequeue(&dev->tx_q)))
		krwq_net_out(dev, skb);
}

/**
 * krwq_net_init() - at module load: follow network namespaces' ends.
 *
 * Context: process.
 * Return: 0 or a negative errno.
 */
int krwq_net_init(void)
{
	return register_pernet_subsys(&krwq_net_ops);
}

/**
 * krwq_net_exit() - at module unload, after every device is gone.
 *
 * Context: process.
 */
void krwq_net_exit(void)
{
	unregister_pernet_subsys(&krwq_net_ops);
	WARN_ON(!list_empty(&krwq_net_list));
}
