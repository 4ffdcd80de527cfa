// SPDX-License-Identifier: GPL-2.0
/*
 * net.c - RoCEv2's link to the network: the UDP sockets on port 4791 that
 * a network namespace's netdev-bound devices share, and the packets
 * coming in through them.  Packets going out are built and sent by tx.c.
 *
 * A netdev-bound device opens (or shares) its namespace's sockets when it
 * is created, so a namespace where something else holds port 4791
 * (rdma_rxe holds it in the initial namespace from its load) refuses the
 * device.  With the module parameter wire=0 no device opens a socket and
 * nothing goes on the wire: every device is reached only through the
 * host's fabric, as before there was a wire.
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
#include "tx.h"
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

/* Whether an RC opcode answers a request: for the requester, not the responder. */
static bool krwq_net_is_answer(u8 opcode)
{
	switch (opcode) {
	case IB_OPCODE_RC_ACKNOWLEDGE:
	case IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE:
	case IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST:
	case IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE:
	case IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST:
	case IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY:
		return true;
	default:
		return false;
	}
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
	/* the one partition is the default one, of either membership */
	ud = (pkt.opcode & KRWQ_WIRE_CLASS_MASK) == IB_OPCODE_UD;
	if ((pkt.pkey & IB_DEFAULT_PKEY_PARTIAL) != IB_DEFAULT_PKEY_PARTIAL) {
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
	krwq_net_gids(skb, &sgid, &dgid);
	if (ud) {
		krwq_net_ud_hdr(skb_network_header(skb), &hdr, &type);
		krwq_resp_wire_ud(qp, &pkt, &hdr, type, payload);
	} else if ((pkt.opcode & KRWQ_WIRE_CLASS_MASK) == IB_OPCODE_UC) {
		krwq_resp_wire_uc(qp, &pkt, &sgid, &dgid, payload);
	} else if (krwq_net_is_answer(pkt.opcode)) {
		krwq_wire_answer(qp, &pkt, &sgid, &dgid, payload);
	} else {
		krwq_resp_wire_rc(qp, &pkt, &sgid, &dgid, payload);
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

/* --- the module ------------------------------------------------------------ */

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
