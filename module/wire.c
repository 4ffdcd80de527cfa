// SPDX-License-Identifier: GPL-2.0
/*
 * wire.c - building and parsing RoCEv2 transport headers (wire.h): which
 * extension headers each opcode carries, and their bytes.
 *
 * The opcode's top three bits name the transport and the low five the
 * operation.  krwq speaks RC, UC and UD; an opcode of another transport
 * (RD, XRC, CNP, vendor) or one its transport does not define is unknown,
 * and krwq_wire_parse() refuses it, as a responder drops a packet it
 * cannot interpret.
 */
#include <kunit/visibility.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <asm/unaligned.h>

#include "wire.h"

/* What the low five bits of an opcode carry, whatever the transport. */
static u32 krwq_op_headers(u8 op)
{
	switch (op) {
	case IB_OPCODE_SEND_FIRST:
	case IB_OPCODE_SEND_MIDDLE:
	case IB_OPCODE_SEND_LAST:
	case IB_OPCODE_SEND_ONLY:
	case IB_OPCODE_RDMA_WRITE_MIDDLE:
	case IB_OPCODE_RDMA_WRITE_LAST:
		return KRWQ_HDR_PAYLOAD;
	case IB_OPCODE_SEND_LAST_WITH_IMMEDIATE:
	case IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE:
	case IB_OPCODE_RDMA_WRITE_LAST_WITH_IMMEDIATE:
		return KRWQ_HDR_IMMDT | KRWQ_HDR_PAYLOAD;
	case IB_OPCODE_RDMA_WRITE_FIRST:
	case IB_OPCODE_RDMA_WRITE_ONLY:
		return KRWQ_HDR_RETH | KRWQ_HDR_PAYLOAD;
	case IB_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE:
		return KRWQ_HDR_RETH | KRWQ_HDR_IMMDT | KRWQ_HDR_PAYLOAD;
	case IB_OPCODE_RDMA_READ_REQUEST:
		return KRWQ_HDR_RETH;
	case IB_OPCODE_RDMA_READ_RESPONSE_FIRST:
	case IB_OPCODE_RDMA_READ_RESPONSE_LAST:
	case IB_OPCODE_RDMA_READ_RESPONSE_ONLY:
		return KRWQ_HDR_AETH | KRWQ_HDR_PAYLOAD;
	case IB_OPCODE_RDMA_READ_RESPONSE_MIDDLE:
		return KRWQ_HDR_PAYLOAD;
	case IB_OPCODE_ACKNOWLEDGE:
		return KRWQ_HDR_AETH;
	case IB_OPCODE_ATOMIC_ACKNOWLEDGE:
		return KRWQ_HDR_AETH | KRWQ_HDR_ATOMIC_ACK_ETH;
	case IB_OPCODE_COMPARE_SWAP:
	case IB_OPCODE_FETCH_ADD:
		return KRWQ_HDR_ATOMIC_ETH;
	case IB_OPCODE_SEND_LAST_WITH_INVALIDATE:
	case IB_OPCODE_SEND_ONLY_WITH_INVALIDATE:
		return KRWQ_HDR_IETH | KRWQ_HDR_PAYLOAD;
	default:
		return 0;
	}
}

/**
 * krwq_wire_headers() - what a packet of @opcode carries after its BTH.
 * @opcode: a BTH OpCode.
 *
 * Context: any.
 * Return: a mask of enum krwq_wire_hdr; KRWQ_HDR_KNOWN is set only for an
 * opcode of RC, UC or UD that its transport defines (0 otherwise).
 */
u32 krwq_wire_headers(u8 opcode)
{
	u8 op = opcode & KRWQ_WIRE_OP_MASK;
	u32 h = krwq_op_headers(op);

	if (!h)
		return 0;
	switch (opcode & KRWQ_WIRE_CLASS_MASK) {
	case IB_OPCODE_RC:
		break;
	case IB_OPCODE_UC:
		/* sends and writes only: no reads, atomics, ACKs, invalidates */
		if (op > IB_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE)
			return 0;
		break;
	case IB_OPCODE_UD:
		if (op != IB_OPCODE_SEND_ONLY &&
		    op != IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE)
			return 0;
		h |= KRWQ_HDR_DETH;
		break;
	default:
		return 0;
	}
	return h | KRWQ_HDR_KNOWN;
}
EXPORT_SYMBOL_IF_KUNIT(krwq_wire_headers);

/**
 * krwq_wire_hdr_len() - bytes of a packet of @opcode from the BTH to the
 * payload.
 * @opcode: a BTH OpCode.
 *
 * Context: any.
 * Return: the length, or 0 for an opcode krwq_wire_headers() does not know.
 */
unsigned int krwq_wire_hdr_len(u8 opcode)
{
	u32 h = krwq_wire_headers(opcode);
	unsigned int len = sizeof(struct krwq_bth);

	if (!h)
		return 0;
	if (h & KRWQ_HDR_DETH)
		len += sizeof(struct krwq_deth);
	if (h & KRWQ_HDR_RETH)
		len += sizeof(struct krwq_reth);
	if (h & KRWQ_HDR_ATOMIC_ETH)
		len += sizeof(struct krwq_atomic_eth);
	if (h & KRWQ_HDR_AETH)
		len += sizeof(struct krwq_aeth);
	if (h & KRWQ_HDR_ATOMIC_ACK_ETH)
		len += sizeof(struct krwq_atomic_ack_eth);
	if (h & KRWQ_HDR_IMMDT)
		len += KRWQ_IMMDT_BYTES;
	if (h & KRWQ_HDR_IETH)
		len += KRWQ_IETH_BYTES;
	return len;
}
EXPORT_SYMBOL_IF_KUNIT(krwq_wire_hdr_len);

/**
 * krwq_wire_build() - write the BTH and the extension headers of @p.
 * @p: the packet; the fields of the headers its opcode carries, and pad.
 * @buf: where the BTH goes; needs no alignment.
 * @len: bytes at @buf.
 *
 * The BTH's TVer is 0 and its resv8a and resv7 fields are zero, as a
 * sender sets them.
 *
 * Context: any.
 * Return: the bytes written (krwq_wire_hdr_len()), or -EINVAL for an
 * unknown opcode, a pad over 3, a QP number or PSN over 24 bits, or too
 * short a buffer.
 */
int krwq_wire_build(const struct krwq_wire_pkt *p, void *buf, size_t len)
{
	unsigned int hlen = krwq_wire_hdr_len(p->opcode);
	u32 h = krwq_wire_headers(p->opcode);
	struct krwq_bth *bth = buf;
	u8 *q = buf;

	if (!hlen || hlen > len || p->pad > 3 || p->dqpn & ~KRWQ_QPN_MASK ||
	    p->psn & ~KRWQ_PSN_MASK || p->sqpn & ~KRWQ_QPN_MASK ||
	    p->msn & ~KRWQ_PSN_MASK)
		return -EINVAL;
	bth->opcode = p->opcode;
	bth->flags = (p->se ? KRWQ_BTH_SE : 0) | (p->mig ? KRWQ_BTH_MIG : 0) |
		     p->pad << KRWQ_BTH_PAD_SHIFT;
	put_unaligned_be16(p->pkey, &bth->pkey);
	put_unaligned_be32(p->dqpn, &bth->dqpn);
	put_unaligned_be32((p->ack_req ? KRWQ_BTH_ACKREQ : 0) | p->psn,
			   &bth->apsn);
	q += sizeof(*bth);
	if (h & KRWQ_HDR_DETH) {
		struct krwq_deth *d = (void *)q;

		put_unaligned_be32(p->qkey, &d->qkey);
		put_unaligned_be32(p->sqpn, &d->sqpn);
		q += sizeof(*d);
	}
	if (h & KRWQ_HDR_RETH) {
		struct krwq_reth *r = (void *)q;

		put_unaligned_be64(p->va, &r->va);
		put_unaligned_be32(p->rkey, &r->rkey);
		put_unaligned_be32(p->dma_len, &r->dma_len);
		q += sizeof(*r);
	}
	if (h & KRWQ_HDR_ATOMIC_ETH) {
		struct krwq_atomic_eth *a = (void *)q;

		put_unaligned_be64(p->va, &a->va);
		put_unaligned_be32(p->rkey, &a->rkey);
		put_unaligned_be64(p->swap_add, &a->swap_add);
		put_unaligned_be64(p->compare, &a->compare);
		q += sizeof(*a);
	}
	if (h & KRWQ_HDR_AETH) {
		put_unaligned_be32((u32)p->syndrome << 24 | p->msn, q);
		q += sizeof(struct krwq_aeth);
	}
	if (h & KRWQ_HDR_ATOMIC_ACK_ETH) {
		put_unaligned_be64(p->orig, q);
		q += sizeof(struct krwq_atomic_ack_eth);
	}
	if (h & KRWQ_HDR_IMMDT) {
		memcpy(q, &p->imm, KRWQ_IMMDT_BYTES);
		q += KRWQ_IMMDT_BYTES;
	}
	if (h & KRWQ_HDR_IETH) {
		put_unaligned_be32(p->inv_rkey, q);
		q += KRWQ_IETH_BYTES;
	}
	return q - (u8 *)buf;
}
EXPORT_SYMBOL_IF_KUNIT(krwq_wire_build);

/**
 * krwq_wire_parse() - read the transport headers of a packet.
 * @p: filled in.
 * @buf: the packet from its BTH to the end of its ICRC; needs no alignment.
 * @len: bytes at @buf.
 *
 * Context: any.
 * Return: the length of the headers (the payload starts there), or
 * -EINVAL for an unknown opcode, a transport version other than 0, a
 * packet too short for its headers, pad and ICRC, or pad on a packet that
 * carries no payload.  @p->payload_len is the payload's length, pad and
 * ICRC excluded.
 */
int krwq_wire_parse(struct krwq_wire_pkt *p, const void *buf, size_t len)
{
	const struct krwq_bth *bth = buf;
	const u8 *q = buf;
	unsigned int hlen;
	u32 h, apsn;

	if (len < sizeof(*bth) + IB_ICRC_BYTES)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	p->opcode = bth->opcode;
	h = krwq_wire_headers(p->opcode);
	hlen = krwq_wire_hdr_len(p->opcode);
	if (!h || bth->flags & KRWQ_BTH_TVER_MASK)
		return -EINVAL;
	p->se = bth->flags & KRWQ_BTH_SE;
	p->mig = bth->flags & KRWQ_BTH_MIG;
	p->pad = (bth->flags & KRWQ_BTH_PAD_MASK) >> KRWQ_BTH_PAD_SHIFT;
	if (len < hlen + p->pad + IB_ICRC_BYTES ||
	    (p->pad && !(h & KRWQ_HDR_PAYLOAD)))
		return -EINVAL;
	p->payload_len = len - hlen - p->pad - IB_ICRC_BYTES;
	if (p->payload_len && !(h & KRWQ_HDR_PAYLOAD))
		return -EINVAL;
	p->pkey = get_unaligned_be16(&bth->pkey);
	p->dqpn = get_unaligned_be32(&bth->dqpn) & KRWQ_QPN_MASK;
	apsn = get_unaligned_be32(&bth->apsn);
	p->ack_req = apsn & KRWQ_BTH_ACKREQ;
	p->psn = apsn & KRWQ_PSN_MASK;
	q += sizeof(*bth);
	if (h & KRWQ_HDR_DETH) {
		const struct krwq_deth *d = (const void *)q;

		p->qkey = get_unaligned_be32(&d->qkey);
		p->sqpn = get_unaligned_be32(&d->sqpn) & KRWQ_QPN_MASK;
		q += sizeof(*d);
	}
	if (h & KRWQ_HDR_RETH) {
		const struct krwq_reth *r = (const void *)q;

		p->va = get_unaligned_be64(&r->va);
		p->rkey = get_unaligned_be32(&r->rkey);
		p->dma_len = get_unaligned_be32(&r->dma_len);
		q += sizeof(*r);
	}
	if (h & KRWQ_HDR_ATOMIC_ETH) {
		const struct krwq_atomic_eth *a = (const void *)q;

		p->va = get_unaligned_be64(&a->va);
		p->rkey = get_unaligned_be32(&a->rkey);
		p->swap_add = get_unaligned_be64(&a->swap_add);
		p->compare = get_unaligned_be64(&a->compare);
		q += sizeof(*a);
	}
	if (h & KRWQ_HDR_AETH) {
		u32 smsn = get_unaligned_be32(q);

		p->syndrome = smsn >> 24;
		p->msn = smsn & KRWQ_PSN_MASK;
		q += sizeof(struct krwq_aeth);
	}
	if (h & KRWQ_HDR_ATOMIC_ACK_ETH) {
		p->orig = get_unaligned_be64(q);
		q += sizeof(struct krwq_atomic_ack_eth);
	}
	if (h & KRWQ_HDR_IMMDT) {
		memcpy(&p->imm, q, KRWQ_IMMDT_BYTES);
		q += KRWQ_IMMDT_BYTES;
	}
	if (h & KRWQ_HDR_IETH)
		p->inv_rkey = get_unaligned_be32(q);
	return hlen;
}
EXPORT_SYMBOL_IF_KUNIT(krwq_wire_parse);
