// SPDX-License-Identifier: GPL-2.0
/*
 * tx.c - RoCEv2 packets going out.  A packet is built in two steps:
 *
 *  - krwq_tx_build(), under the sending QP's locks (often with interrupts
 *    off): the transport headers, the payload copied from its regions,
 *    the pad and room for the ICRC, with its addressing (struct
 *    krwq_tx_cb) kept in skb->cb, on a list of the caller's;
 *  - krwq_tx_xmit(), once the caller holds no krwq lock: each packet is
 *    routed out of the device's bound netdev, wrapped in UDP (checksum 0,
 *    as RoCEv2 senders do: the ICRC covers the packet) and IPv4 or IPv6,
 *    given its ICRC and handed to the IP stack.  A caller that had
 *    interrupts off leaves the packets to the device's tx_work.  A run
 *    of a send queue does not come here directly: its packets go through
 *    the QP's wire_txq (req.c's krwq_sq_xmit()), in the order runs built
 *    them, and with interrupts off through the QP's send_work.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6_stubs.h>
#include <net/route.h>
#include <rdma/ib_mad.h>
#include <asm/unaligned.h>

#include "krwq.h"
#include "tx.h"
#include "wire.h"

/* The headroom a packet needs in front of its BTH, at most. */
#define KRWQ_NET_HEADROOM	(sizeof(struct ipv6hdr) + sizeof(struct udphdr))

static struct krwq_tx_cb *krwq_tx_cb(struct sk_buff *skb)
{
	return (struct krwq_tx_cb *)skb->cb;
}

/**
 * krwq_tx_to() - where a packet of @qp's to @grh goes.
 * @to: filled in (all but hdr_len).
 * @qp: the QP sending it: its number picks the UDP source port.
 * @route: where the address vector leads: the source GID and IP version.
 * @grh: the address vector's global route: destination, flow label,
 *       traffic class and hop limit.
 * @dqpn: the destination QP, for the source port.
 */
void krwq_tx_to(struct krwq_tx_cb *to, const struct krwq_qp *qp,
		const struct krwq_route *route,
		const struct ib_global_route *grh, u32 dqpn)
{
	u32 flow_label = grh->flow_label & IB_GRH_FLOWLABEL_MASK;

	*to = (struct krwq_tx_cb) {
		.sgid = route->sgid, .dgid = grh->dgid,
		.flow_label = flow_label,
		.sport = rdma_get_udp_sport(flow_label, qp->ibqp.qp_num, dqpn),
		.tclass = grh->traffic_class, .hop_limit = grh->hop_limit,
		.net_type = route->net_type,
	};
}

/**
 * krwq_tx_to_peer() - where a packet of connected QP @qp's goes: to its
 * peer, along the path its address vector names.
 * @to: filled in (all but hdr_len).
 * @qp: an RC or UC QP past RTR.
 */
void krwq_tx_to_peer(struct krwq_tx_cb *to, const struct krwq_qp *qp)
{
	krwq_tx_to(to, qp, &qp->route, rdma_ah_read_grh(&qp->attr.ah_attr),
		   qp->attr.dest_qp_num);
}

/**
 * krwq_tx_build() - build one packet and queue it on @list.
 * @dev: the sending device (netdev-bound).
 * @pkt: its transport headers; the pad is set here from @len.
 * @src: where its payload comes from (it moves on past it); NULL when
 *       @len is 0.
 * @len: payload bytes.
 * @to: where it goes.
 * @list: the caller's, sent later with krwq_tx_xmit().
 *
 * Context: any; no lock taken.
 * Return: 0, -ENOMEM, or -EFAULT when @src does not check out (a region
 * revoked, or shorter than @len).
 */
int krwq_tx_build(struct krwq_dev *dev, struct krwq_wire_pkt *pkt,
		  struct krwq_sge_cursor *src, u32 len,
		  const struct krwq_tx_cb *to, struct sk_buff_head *list)
{
	struct net_device *ndev = dev->ndev;
	struct krwq_mr *local = &dev->local_dma_mr;
	unsigned int hdr_len = krwq_wire_hdr_len(pkt->opcode);
	struct krwq_sge_cursor dst;
	struct sk_buff *skb;
	struct ib_sge sge;
	u8 *bth;

	pkt->pad = -len & 3;
	skb = alloc_skb(LL_RESERVED_SPACE(ndev) + KRWQ_NET_HEADROOM + hdr_len +
			len + pkt->pad + IB_ICRC_BYTES, GFP_ATOMIC);
	if (!skb)
		return -ENOMEM;
	skb_reserve(skb, LL_RESERVED_SPACE(ndev) + KRWQ_NET_HEADROOM);
	bth = skb_put(skb, hdr_len + len + pkt->pad + IB_ICRC_BYTES);
	if (WARN_ON_ONCE(krwq_wire_build(pkt, bth, hdr_len) != hdr_len))
		goto fault;
	if (len) {
		sge = (struct ib_sge) {
			.addr = (uintptr_t)(bth + hdr_len), .length = len,
		};
		dst = (struct krwq_sge_cursor) {
			.sge = &sge, .mrs = &local, .held = &local, .nheld = 1,
		};
		if (krwq_cursor_revoked(src) || krwq_copy(&dst, src, len))
			goto fault;
	}
	memset(bth + hdr_len + len, 0, pkt->pad);
	*krwq_tx_cb(skb) = *to;
	krwq_tx_cb(skb)->hdr_len = hdr_len;
	__skb_queue_tail(list, skb);
	return 0;
fault:
	kfree_skb(skb);
	return -EFAULT;
}

/* Pushes the UDP header onto @skb, whose data starts at the BTH. */
static void krwq_tx_push_udp(struct sk_buff *skb, u16 sport)
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
static int krwq_tx_push_ipv4(struct sk_buff *skb, struct net_device *ndev,
			     const struct krwq_tx_cb *to)
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
static int krwq_tx_push_ipv6(struct sk_buff *skb, struct net_device *ndev,
			     const struct krwq_tx_cb *to)
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
 * krwq_tx_cb says, and fills in the ICRC.  Return: 0, or a negative
 * errno when there is no route.
 */
static int krwq_tx_wrap(struct sk_buff *skb, struct net_device *ndev)
{
	/* a copy: IPCB() and IP6CB() share skb->cb */
	struct krwq_tx_cb to = *krwq_tx_cb(skb);
	unsigned int to_bth;
	u32 icrc;
	int ret;

	krwq_tx_push_udp(skb, to.sport);
	if (to.net_type == RDMA_NETWORK_IPV4)
		ret = krwq_tx_push_ipv4(skb, ndev, &to);
	else
		ret = krwq_tx_push_ipv6(skb, ndev, &to);
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

/* Routes one packet and hands it to the IP stack, which frees it. */
static void krwq_tx_out(struct krwq_dev *dev, struct sk_buff *skb)
{
	struct net *net;
	int ret;

	if (krwq_tx_wrap(skb, dev->ndev)) {
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
 * krwq_tx_defer() - leave packets to dev->tx_work, which sends them from
 * process context, in order after those left before.
 * @dev: the sending device.
 * @tx: the packets; empty on return.
 *
 * Context: any.
 */
void krwq_tx_defer(struct krwq_dev *dev, struct sk_buff_head *tx)
{
	unsigned long f;

	if (skb_queue_empty(tx))
		return;
	spin_lock_irqsave(&dev->tx_q.lock, f);
	skb_queue_splice_tail_init(tx, &dev->tx_q);
	spin_unlock_irqrestore(&dev->tx_q.lock, f);
	queue_work(krwq_wq, &dev->tx_work);
}

/**
 * krwq_tx_xmit() - send the packets a run queued.
 * @dev: the sending device.
 * @tx: the run's list; empty on return.
 * @flags: the interrupt state the caller had before it took the QP's
 *         s_lock; with interrupts off the packets go to dev->tx_work.
 *
 * Context: any; the caller holds no krwq lock.
 */
void krwq_tx_xmit(struct krwq_dev *dev, struct sk_buff_head *tx,
		  unsigned long flags)
{
	struct sk_buff *skb;

	if (irqs_disabled_flags(flags) || irqs_disabled()) {
		krwq_tx_defer(dev, tx);
		return;
	}
	while ((skb = __skb_dequeue(tx)))
		krwq_tx_out(dev, skb);
}

/**
 * krwq_tx_work() - send what a caller with interrupts off left: the
 * responder's answers, and a READ's request for its rest.
 * @work: dev->tx_work.
 */
void krwq_tx_work(struct work_struct *work)
{
	struct krwq_dev *dev = container_of(work, struct krwq_dev, tx_work);
	struct sk_buff *skb;

	while ((skb = skb_dequeue(&dev->tx_q)))
		krwq_tx_out(dev, skb);
}
