/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tx.h - RoCEv2 packets going out (tx.c): one packet built from its
 * transport headers and a payload, with where it goes kept beside it
 * until it is routed, wrapped in UDP and IP, given its ICRC and sent.
 * The requester's packets (wire_req.c) and the responder's answers
 * (resp.c) are both made here.
 */
#ifndef KRWQ_TX_H
#define KRWQ_TX_H

#include <linux/skbuff.h>
#include <rdma/ib_verbs.h>

struct krwq_dev;
struct krwq_qp;
struct krwq_route;
struct krwq_sge_cursor;
struct krwq_wire_pkt;

/**
 * struct krwq_tx_cb - where a packet built under a QP's locks goes, kept
 * in its skb->cb until krwq_tx_xmit() routes it and puts UDP and IP
 * around it: the IPv6 route lookup must not run with interrupts off.
 * @sgid: the source address, as a GID.
 * @dgid: the destination address, as a GID.
 * @flow_label: the IPv6 flow label (20 bits).
 * @sport: the UDP source port.
 * @hdr_len: the length of the transport headers (krwq_tx_build() sets it).
 * @tclass: the traffic class (IPv6) or TOS (IPv4).
 * @hop_limit: the hop limit or TTL; 0 means the route's default.
 * @net_type: RDMA_NETWORK_IPV4 or RDMA_NETWORK_IPV6.
 */
struct krwq_tx_cb {
	union ib_gid sgid, dgid;
	u32 flow_label;
	u16 sport;
	u16 hdr_len;
	u8 tclass, hop_limit;
	u8 net_type;
};

static_assert(sizeof(struct krwq_tx_cb) <= sizeof_field(struct sk_buff, cb));

void krwq_tx_to(struct krwq_tx_cb *to, const struct krwq_qp *qp,
		const struct krwq_route *route,
		const struct ib_global_route *grh, u32 dqpn);
void krwq_tx_to_peer(struct krwq_tx_cb *to, const struct krwq_qp *qp);
int krwq_tx_build(struct krwq_dev *dev, struct krwq_wire_pkt *pkt,
		  struct krwq_sge_cursor *src, u32 len,
		  const struct krwq_tx_cb *to, struct sk_buff_head *list);
void krwq_tx_defer(struct krwq_dev *dev, struct sk_buff_head *tx);
void krwq_tx_xmit(struct krwq_dev *dev, struct sk_buff_head *tx,
		  unsigned long flags);
void krwq_tx_work(struct work_struct *work);

#endif /* KRWQ_TX_H */
