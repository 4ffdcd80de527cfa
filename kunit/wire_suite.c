// SPDX-License-Identifier: GPL-2.0
/*
 * wire_suite.c - the KUnit suite "krwq_wire": RoCEv2 transport headers
 * built and parsed (module/wire.c), the ICRC (module/icrc.c) against
 * packets another implementation sent, and 24-bit PSN arithmetic across
 * the wrap.
 *
 * The ICRC vectors are whole packets, IP header to ICRC, that rdma_rxe
 * sent through a veth to a namespace with no RDMA device, captured there
 * with tcpdump (kunit/wire_vectors.h says how).  krwq must compute the
 * ICRC rxe put on each, and must refuse it once a bit of the packet that
 * no router may change is flipped.
 */
#include <kunit/test.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <asm/unaligned.h>

#include "../module/wire.h"
#include "wire_vectors.h"

/* --- PSNs ----------------------------------------------------------- */

static void wire_psn_wrap(struct kunit *t)
{
	KUNIT_EXPECT_EQ(t, krwq_psn_add(0xffffff, 1), 0u);
	KUNIT_EXPECT_EQ(t, krwq_psn_add(0xfffffe, 5), 3u);
	KUNIT_EXPECT_EQ(t, krwq_psn_add(7, 0), 7u);
	/* past and before, across the wrap */
	KUNIT_EXPECT_EQ(t, krwq_psn_diff(0, 0xffffff), 1);
	KUNIT_EXPECT_EQ(t, krwq_psn_diff(0xffffff, 0), -1);
	KUNIT_EXPECT_EQ(t, krwq_psn_diff(2, 0xfffffe), 4);
	KUNIT_EXPECT_EQ(t, krwq_psn_diff(0x123456, 0x123456), 0);
	/* the edges of the half-space window */
	KUNIT_EXPECT_EQ(t, krwq_psn_diff(0x7fffff, 0), 0x7fffff);
	KUNIT_EXPECT_EQ(t, krwq_psn_diff(0x800000, 0), -0x800000);
	KUNIT_EXPECT_EQ(t, krwq_psn_diff(0, 0x800001), 0x7fffff);
	/* bits above 24 in a sum never leak into a comparison */
	KUNIT_EXPECT_EQ(t, krwq_psn_diff(krwq_psn_add(0xfffff0, 0x20), 0xfffff0),
			0x20);
}

/* --- headers -------------------------------------------------------- */

struct wire_len_case {
	u8 opcode;
	unsigned int len;	/* 0: not an opcode krwq speaks */
};

/* BTH 12, DETH 8, RETH 16, AtomicETH 28, AETH 4, AtomicAckETH 8, ImmDt 4, IETH 4 */
static const struct wire_len_case wire_lens[] = {
	{ IB_OPCODE_RC_SEND_ONLY, 12 },
	{ IB_OPCODE_RC_SEND_FIRST, 12 },
	{ IB_OPCODE_RC_SEND_LAST_WITH_IMMEDIATE, 16 },
	{ IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE, 16 },
	{ IB_OPCODE_RC_RDMA_WRITE_FIRST, 28 },
	{ IB_OPCODE_RC_RDMA_WRITE_MIDDLE, 12 },
	{ IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 32 },
	{ IB_OPCODE_RC_RDMA_READ_REQUEST, 28 },
	{ IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST, 16 },
	{ IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE, 12 },
	{ IB_OPCODE_RC_ACKNOWLEDGE, 16 },
	{ IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE, 24 },
	{ IB_OPCODE_RC_COMPARE_SWAP, 40 },
	{ IB_OPCODE_RC_FETCH_ADD, 40 },
	{ IB_OPCODE_UC_SEND_ONLY_WITH_IMMEDIATE, 16 },
	{ IB_OPCODE_UC_RDMA_WRITE_ONLY, 28 },
	{ IB_OPCODE_UD_SEND_ONLY, 20 },
	{ IB_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE, 24 },
	/* not krwq's: RD, UC reads and atomics, UD beyond SEND ONLY, gaps */
	{ IB_OPCODE_RD_SEND_ONLY, 0 },
	{ IB_OPCODE_UC + IB_OPCODE_RDMA_READ_REQUEST, 0 },
	{ IB_OPCODE_UC + IB_OPCODE_SEND_ONLY_WITH_INVALIDATE, 0 },
	{ IB_OPCODE_UD + IB_OPCODE_SEND_FIRST, 0 },
	{ 0x15, 0 },
	{ 0x18, 0 },
	{ IB_OPCODE_CNP, 0 },
	{ 0xff, 0 },
};

static void wire_header_lengths(struct kunit *t)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(wire_lens); i++)
		KUNIT_EXPECT_EQ_MSG(t, krwq_wire_hdr_len(wire_lens[i].opcode),
				    wire_lens[i].len, "opcode 0x%02x",
				    wire_lens[i].opcode);
}

/* A packet with every field set apart from its neighbours. */
static void wire_fill(struct krwq_wire_pkt *p, u8 opcode)
{
	memset(p, 0, sizeof(*p));
	p->opcode = opcode;
	p->se = true;
	p->ack_req = true;
	p->pad = krwq_wire_headers(opcode) & KRWQ_HDR_PAYLOAD ? 3 : 0;
	p->pkey = 0xffff;
	p->dqpn = 0xabcdef;
	p->psn = 0xfedcba;
	p->qkey = 0x80010000;
	p->sqpn = 0x000001;
	p->va = 0x0123456789abcdefULL;
	p->rkey = 0x11223344;
	p->dma_len = 0x00100000;
	p->swap_add = 0x8877665544332211ULL;
	p->compare = 0x0102030405060708ULL;
	p->syndrome = KRWQ_AETH_RNR_NAK | 0x0e;
	p->msn = 0x00fffe;
	p->orig = 0xdeadbeefcafef00dULL;
	p->imm = cpu_to_be32(0x5a5a0001);
	p->inv_rkey = 0x99aabbcc;
}

static void wire_build_parse(struct kunit *t)
{
	u8 buf[64 + 7 + IB_ICRC_BYTES];
	struct krwq_wire_pkt in, out;
	unsigned int op;

	for (op = 0; op < 256; op++) {
		u32 h = krwq_wire_headers(op);
		int len, parsed;

		if (!h)
			continue;
		wire_fill(&in, op);
		len = krwq_wire_build(&in, buf, sizeof(buf));
		KUNIT_ASSERT_EQ_MSG(t, len, (int)krwq_wire_hdr_len(op),
				    "opcode 0x%02x", op);
		/* 7 bytes of payload where there may be some, then pad, ICRC */
		parsed = krwq_wire_parse(&out, buf,
					 len + (h & KRWQ_HDR_PAYLOAD ? 7 + 3 : 0) +
					 IB_ICRC_BYTES);
		KUNIT_ASSERT_EQ_MSG(t, parsed, len, "opcode 0x%02x", op);
		KUNIT_EXPECT_EQ(t, out.payload_len,
				h & KRWQ_HDR_PAYLOAD ? 7u : 0u);
		KUNIT_EXPECT_EQ(t, out.opcode, in.opcode);
		KUNIT_EXPECT_TRUE(t, out.se && out.ack_req && !out.mig);
		KUNIT_EXPECT_EQ(t, out.pad, in.pad);
		KUNIT_EXPECT_EQ(t, out.pkey, in.pkey);
		KUNIT_EXPECT_EQ(t, out.dqpn, in.dqpn);
		KUNIT_EXPECT_EQ(t, out.psn, in.psn);
		if (h & KRWQ_HDR_DETH) {
			KUNIT_EXPECT_EQ(t, out.qkey, in.qkey);
			KUNIT_EXPECT_EQ(t, out.sqpn, in.sqpn);
		}
		if (h & (KRWQ_HDR_RETH | KRWQ_HDR_ATOMIC_ETH)) {
			KUNIT_EXPECT_EQ(t, out.va, in.va);
			KUNIT_EXPECT_EQ(t, out.rkey, in.rkey);
		}
		if (h & KRWQ_HDR_RETH)
			KUNIT_EXPECT_EQ(t, out.dma_len, in.dma_len);
		if (h & KRWQ_HDR_ATOMIC_ETH) {
			KUNIT_EXPECT_EQ(t, out.swap_add, in.swap_add);
			KUNIT_EXPECT_EQ(t, out.compare, in.compare);
		}
		if (h & KRWQ_HDR_AETH) {
			KUNIT_EXPECT_EQ(t, out.syndrome, in.syndrome);
			KUNIT_EXPECT_EQ(t, out.msn, in.msn);
		}
		if (h & KRWQ_HDR_ATOMIC_ACK_ETH)
			KUNIT_EXPECT_EQ(t, out.orig, in.orig);
		if (h & KRWQ_HDR_IMMDT)
			KUNIT_EXPECT_EQ(t, be32_to_cpu(out.imm), be32_to_cpu(in.imm));
		if (h & KRWQ_HDR_IETH)
			KUNIT_EXPECT_EQ(t, out.inv_rkey, in.inv_rkey);
	}
}

/* The bytes of one packet's headers, laid out by hand from the spec. */
static void wire_bytes(struct kunit *t)
{
	static const u8 want[] = {
		/* BTH: RC RDMA WRITE ONLY with Immediate, SE, PadCnt 1 */
		0x0b, 0x90, 0x12, 0x34, 0x00, 0x00, 0x00, 0x2a,
		0x80, 0x00, 0x00, 0x07,
		/* RETH: VA, R_Key, DMA length */
		0x00, 0x00, 0x7f, 0x00, 0x00, 0x00, 0x10, 0x00,
		0xaa, 0xbb, 0xcc, 0xdd, 0x00, 0x00, 0x00, 0x03,
		/* ImmDt */
		0x01, 0x02, 0x03, 0x04,
	};
	struct krwq_wire_pkt p = {
		.opcode = IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
		.se = true, .ack_req = true, .pad = 1, .pkey = 0x1234,
		.dqpn = 42, .psn = 7, .va = 0x7f0000001000ULL,
		.rkey = 0xaabbccdd, .dma_len = 3,
		.imm = cpu_to_be32(0x01020304),
	};
	u8 buf[sizeof(want)];

	KUNIT_ASSERT_EQ(t, krwq_wire_build(&p, buf, sizeof(buf)),
			(int)sizeof(want));
	KUNIT_EXPECT_EQ_MSG(t, memcmp(buf, want, sizeof(want)), 0,
			    "built %*ph", (int)sizeof(buf), buf);
}

static void wire_refused(struct kunit *t)
{
	struct krwq_wire_pkt p;
	u8 buf[64] = { 0 };

	wire_fill(&p, IB_OPCODE_RC_SEND_ONLY);
	KUNIT_EXPECT_EQ(t, krwq_wire_build(&p, buf, 11), -EINVAL);
	p.dqpn = 1 << 24;
	KUNIT_EXPECT_EQ(t, krwq_wire_build(&p, buf, sizeof(buf)), -EINVAL);
	wire_fill(&p, IB_OPCODE_RC_SEND_ONLY);
	p.pad = 4;
	KUNIT_EXPECT_EQ(t, krwq_wire_build(&p, buf, sizeof(buf)), -EINVAL);
	wire_fill(&p, IB_OPCODE_RD_SEND_ONLY);
	KUNIT_EXPECT_EQ(t, krwq_wire_build(&p, buf, sizeof(buf)), -EINVAL);

	wire_fill(&p, IB_OPCODE_RC_SEND_ONLY);
	p.pad = 0;
	KUNIT_ASSERT_EQ(t, krwq_wire_build(&p, buf, sizeof(buf)), 12);
	/* shorter than BTH and ICRC */
	KUNIT_EXPECT_EQ(t, krwq_wire_parse(&p, buf, 15), -EINVAL);
	KUNIT_EXPECT_EQ(t, krwq_wire_parse(&p, buf, 16), 12);
	/* a transport version krwq does not speak */
	buf[1] |= 1;
	KUNIT_EXPECT_EQ(t, krwq_wire_parse(&p, buf, 16), -EINVAL);
	buf[1] &= ~1;
	/* pad longer than what follows the headers */
	buf[1] |= 3 << 4;
	KUNIT_EXPECT_EQ(t, krwq_wire_parse(&p, buf, 18), -EINVAL);
	KUNIT_EXPECT_EQ(t, krwq_wire_parse(&p, buf, 20), 12);
	/* an ACK carries no payload, and no pad */
	wire_fill(&p, IB_OPCODE_RC_ACKNOWLEDGE);
	p.pad = 0;
	KUNIT_ASSERT_EQ(t, krwq_wire_build(&p, buf, sizeof(buf)), 16);
	KUNIT_EXPECT_EQ(t, krwq_wire_parse(&p, buf, 20), 16);
	KUNIT_EXPECT_EQ(t, krwq_wire_parse(&p, buf, 24), -EINVAL);
	buf[1] |= 1 << 4;
	KUNIT_EXPECT_EQ(t, krwq_wire_parse(&p, buf, 21), -EINVAL);
	/* an opcode of a transport krwq does not speak */
	buf[0] = IB_OPCODE_RD_SEND_ONLY;
	KUNIT_EXPECT_EQ(t, krwq_wire_parse(&p, buf, 40), -EINVAL);
}

/* --- the ICRC ------------------------------------------------------- */

/* Bytes from the IP header to the payload of captured packet @v. */
static unsigned int wire_vec_hdr_len(const struct wire_vector *v)
{
	unsigned int ip = (v->pkt[0] >> 4) == 6 ? sizeof(struct ipv6hdr) :
			  (v->pkt[0] & 0xf) * 4;

	return ip + sizeof(struct udphdr) +
	       krwq_wire_hdr_len(v->pkt[ip + sizeof(struct udphdr)]);
}

static void wire_icrc_vectors(struct kunit *t)
{
	unsigned int i;

	KUNIT_ASSERT_GT(t, ARRAY_SIZE(wire_vectors), 0);
	for (i = 0; i < ARRAY_SIZE(wire_vectors); i++) {
		const struct wire_vector *v = &wire_vectors[i];
		unsigned int hlen = wire_vec_hdr_len(v);
		u32 icrc = 0;

		KUNIT_ASSERT_GT_MSG(t, hlen, 0u, "%s", v->what);
		KUNIT_EXPECT_EQ_MSG(t, krwq_icrc(v->pkt, v->len - IB_ICRC_BYTES,
						 hlen, &icrc), 0, "%s", v->what);
		KUNIT_EXPECT_EQ_MSG(t, icrc,
				    get_unaligned_le32(v->pkt + v->len - IB_ICRC_BYTES),
				    "%s", v->what);
	}
}

/* Fields a router rewrites change nothing; a payload bit does. */
static void wire_icrc_masks(struct kunit *t)
{
	const struct wire_vector *v4 = NULL, *v6 = NULL;
	u8 *pkt = kunit_kzalloc(t, WIRE_VECTOR_MAX, GFP_KERNEL);
	unsigned int i, hlen;
	u32 want, icrc;

	KUNIT_ASSERT_NOT_NULL(t, pkt);
	for (i = 0; i < ARRAY_SIZE(wire_vectors); i++) {
		if (wire_vectors[i].pkt[0] >> 4 == 4 && !v4)
			v4 = &wire_vectors[i];
		if (wire_vectors[i].pkt[0] >> 4 == 6 && !v6)
			v6 = &wire_vectors[i];
	}
	KUNIT_ASSERT_TRUE_MSG(t, v4 && v6, "an IPv4 and an IPv6 vector");

	memcpy(pkt, v4->pkt, v4->len);
	hlen = wire_vec_hdr_len(v4);
	want = get_unaligned_le32(pkt + v4->len - IB_ICRC_BYTES);
	((struct iphdr *)pkt)->ttl ^= 0x3f;
	((struct iphdr *)pkt)->tos ^= 0x02;
	((struct iphdr *)pkt)->check ^= (__force __sum16)htons(0x1234);
	((struct udphdr *)(pkt + 20))->check ^= (__force __sum16)htons(0x5678);
	pkt[20 + 8 + 4] ^= 0xc0;	/* BTH resv8a */
	KUNIT_ASSERT_EQ(t, krwq_icrc(pkt, v4->len - IB_ICRC_BYTES, hlen, &icrc), 0);
	KUNIT_EXPECT_EQ_MSG(t, icrc, want, "IPv4: masked fields changed");
	pkt[v4->len - IB_ICRC_BYTES - 1] ^= 0x01;	/* the byte before the ICRC */
	KUNIT_ASSERT_EQ(t, krwq_icrc(pkt, v4->len - IB_ICRC_BYTES, hlen, &icrc), 0);
	KUNIT_EXPECT_NE_MSG(t, icrc, want, "IPv4: a bit before the ICRC flipped");
	memcpy(pkt, v4->pkt, v4->len);
	((struct iphdr *)pkt)->saddr ^= htonl(1);
	KUNIT_ASSERT_EQ(t, krwq_icrc(pkt, v4->len - IB_ICRC_BYTES, hlen, &icrc), 0);
	KUNIT_EXPECT_NE_MSG(t, icrc, want, "IPv4: the source address changed");

	memcpy(pkt, v6->pkt, v6->len);
	hlen = wire_vec_hdr_len(v6);
	want = get_unaligned_le32(pkt + v6->len - IB_ICRC_BYTES);
	pkt[0] ^= 0x0f;		/* traffic class, high nibble */
	pkt[1] ^= 0xff;		/* traffic class, low nibble; flow label */
	pkt[3] ^= 0x55;		/* flow label */
	((struct ipv6hdr *)pkt)->hop_limit ^= 0x11;
	((struct udphdr *)(pkt + 40))->check ^= (__force __sum16)htons(0x9abc);
	KUNIT_ASSERT_EQ(t, krwq_icrc(pkt, v6->len - IB_ICRC_BYTES, hlen, &icrc), 0);
	KUNIT_EXPECT_EQ_MSG(t, icrc, want, "IPv6: masked fields changed");
	((struct ipv6hdr *)pkt)->payload_len ^= htons(4);
	KUNIT_ASSERT_EQ(t, krwq_icrc(pkt, v6->len - IB_ICRC_BYTES, hlen, &icrc), 0);
	KUNIT_EXPECT_NE_MSG(t, icrc, want, "IPv6: the payload length changed");

	/* no IP header, or headers longer than the packet */
	pkt[0] = 0x50;
	KUNIT_EXPECT_EQ(t, krwq_icrc(pkt, 80, 60, &icrc), -EINVAL);
	memcpy(pkt, v4->pkt, v4->len);
	KUNIT_EXPECT_EQ(t, krwq_icrc(pkt, 30, 40, &icrc), -EINVAL);
	KUNIT_EXPECT_EQ(t, krwq_icrc(pkt, 100, 39, &icrc), -EINVAL);
}

/* Fed in pieces, the ICRC is the same as in one go. */
static void wire_icrc_pieces(struct kunit *t)
{
	const struct wire_vector *v = &wire_vectors[0];
	unsigned int hlen = wire_vec_hdr_len(v), off, step;
	u32 crc, whole;

	KUNIT_ASSERT_EQ(t, krwq_icrc(v->pkt, v->len - IB_ICRC_BYTES, hlen,
				     &whole), 0);
	for (step = 1; step <= 64; step *= 4) {
		KUNIT_ASSERT_EQ(t, krwq_icrc_headers(v->pkt, v->len, hlen, &crc), 0);
		for (off = hlen; off < v->len - IB_ICRC_BYTES; off += step)
			crc = krwq_icrc_update(crc, v->pkt + off,
					       min(step, v->len - IB_ICRC_BYTES - off));
		KUNIT_EXPECT_EQ_MSG(t, krwq_icrc_final(crc), whole, "step %u", step);
	}
}

/* The captured packets parse as what rxe sent. */
static void wire_vectors_parse(struct kunit *t)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(wire_vectors); i++) {
		const struct wire_vector *v = &wire_vectors[i];
		unsigned int ip = (v->pkt[0] >> 4) == 6 ? 40 : 20;
		const u8 *bth = v->pkt + ip + sizeof(struct udphdr);
		struct krwq_wire_pkt p;

		KUNIT_EXPECT_EQ_MSG(t, get_unaligned_be16(v->pkt + ip + 2),
				    KRWQ_ROCE_UDP_PORT, "%s", v->what);
		KUNIT_EXPECT_EQ_MSG(t, krwq_wire_parse(&p, bth, v->pkt + v->len - bth),
				    (int)krwq_wire_hdr_len(bth[0]), "%s", v->what);
		KUNIT_EXPECT_EQ_MSG(t, p.opcode, v->opcode, "%s", v->what);
		KUNIT_EXPECT_EQ_MSG(t, p.payload_len, v->payload_len, "%s", v->what);
		KUNIT_EXPECT_EQ_MSG(t, p.pad, v->pad, "%s", v->what);
	}
}

static struct kunit_case krwq_wire_cases[] = {
	KUNIT_CASE(wire_psn_wrap),
	KUNIT_CASE(wire_header_lengths),
	KUNIT_CASE(wire_build_parse),
	KUNIT_CASE(wire_bytes),
	KUNIT_CASE(wire_refused),
	KUNIT_CASE(wire_icrc_vectors),
	KUNIT_CASE(wire_icrc_masks),
	KUNIT_CASE(wire_icrc_pieces),
	KUNIT_CASE(wire_vectors_parse),
	{}
};

static struct kunit_suite krwq_wire_suite = {
	.name = "krwq_wire",
	.test_cases = krwq_wire_cases,
};

kunit_test_suite(krwq_wire_suite);
