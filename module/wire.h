/* SPDX-License-Identifier: GPL-2.0 */
/*
 * wire.h - RoCEv2 packets as the InfiniBand Architecture Specification
 * (volume 1, chapter 9, and its RoCEv2 annex) lays them out: the base
 * transport header, the extension headers each opcode carries, the
 * invariant CRC and 24-bit PSN arithmetic.  wire.c builds and parses the
 * headers; icrc.c computes the ICRC.  Nothing here touches a QP: these are
 * the bytes a requester sends and a responder reads.
 *
 * On the wire a packet is: IPv4 or IPv6 header, UDP header (destination
 * port 4791), BTH, the opcode's extension headers in a fixed order (DETH,
 * RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH), the payload, 0-3 pad
 * bytes (BTH PadCnt) to a multiple of 4, and the 4-byte ICRC.
 */
#ifndef KRWQ_WIRE_H
#define KRWQ_WIRE_H

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/compiler.h>
#include <linux/types.h>
#include <rdma/ib_pack.h>

#define KRWQ_ROCE_UDP_PORT	4791

/* --- 24-bit packet sequence numbers --- */

#define KRWQ_PSN_MASK		GENMASK(23, 0)

/* The PSN @n after @psn, wrapping at 2^24. */
static inline u32 krwq_psn_add(u32 psn, u32 n)
{
	return (psn + n) & KRWQ_PSN_MASK;
}

/*
 * How far @a is past @b in the 24-bit sequence space: negative when @a
 * comes before @b.  PSNs compare within half the space (2^23) of each
 * other, as the spec's windows do; the shift pair sign-extends bit 23.
 */
static inline s32 krwq_psn_diff(u32 a, u32 b)
{
	return (s32)((a - b) << 8) >> 8;
}

/* --- headers, in wire order --- */

/* Base Transport Header. */
struct krwq_bth {
	u8 opcode;
	u8 flags;		/* SE:1 MigReq:1 PadCnt:2 TVer:4 */
	__be16 pkey;
	__be32 dqpn;		/* resv8a:8 DestQP:24 */
	__be32 apsn;		/* AckReq:1 resv7:7 PSN:24 */
} __packed;

#define KRWQ_BTH_SE		BIT(7)
#define KRWQ_BTH_MIG		BIT(6)
#define KRWQ_BTH_PAD_SHIFT	4
#define KRWQ_BTH_PAD_MASK	GENMASK(5, 4)
#define KRWQ_BTH_TVER_MASK	GENMASK(3, 0)
#define KRWQ_BTH_ACKREQ		BIT(31)
#define KRWQ_QPN_MASK		GENMASK(23, 0)
/* an opcode's top three bits: its transport (IB_OPCODE_RC, _UC, _UD) */
#define KRWQ_WIRE_CLASS_MASK	0xe0
/* its low five: the operation (IB_OPCODE_SEND_FIRST ...) */
#define KRWQ_WIRE_OP_MASK	0x1f

/* Datagram Extended Transport Header (UD). */
struct krwq_deth {
	__be32 qkey;
	__be32 sqpn;		/* resv8:8 SrcQP:24 */
} __packed;

/* RDMA Extended Transport Header. */
struct krwq_reth {
	__be64 va;
	__be32 rkey;
	__be32 dma_len;
} __packed;

/* Atomic Extended Transport Header. */
struct krwq_atomic_eth {
	__be64 va;
	__be32 rkey;
	__be64 swap_add;
	__be64 compare;
} __packed;

/* ACK Extended Transport Header. */
struct krwq_aeth {
	__be32 smsn;		/* Syndrome:8 MSN:24 */
} __packed;

/* Atomic ACK Extended Transport Header. */
struct krwq_atomic_ack_eth {
	__be64 orig;
} __packed;

/* Immediate data and the Invalidate ETH are a bare 32-bit field each. */
#define KRWQ_IMMDT_BYTES	4
#define KRWQ_IETH_BYTES		4

static_assert(sizeof(struct krwq_bth) == IB_BTH_BYTES);
static_assert(sizeof(struct krwq_deth) == IB_DETH_BYTES);
static_assert(sizeof(struct krwq_reth) == 16);
static_assert(sizeof(struct krwq_atomic_eth) == IB_EXT_ATOMICETH_BYTES);
static_assert(sizeof(struct krwq_aeth) == 4);
static_assert(sizeof(struct krwq_atomic_ack_eth) == 8);

/* The headers an opcode carries after the BTH (krwq_wire_headers()). */
enum krwq_wire_hdr {
	KRWQ_HDR_DETH		= BIT(0),
	KRWQ_HDR_RETH		= BIT(1),
	KRWQ_HDR_ATOMIC_ETH	= BIT(2),
	KRWQ_HDR_AETH		= BIT(3),
	KRWQ_HDR_ATOMIC_ACK_ETH	= BIT(4),
	KRWQ_HDR_IMMDT		= BIT(5),
	KRWQ_HDR_IETH		= BIT(6),
	KRWQ_HDR_PAYLOAD	= BIT(7),	/* may carry payload */
	KRWQ_HDR_KNOWN		= BIT(8),	/* an opcode krwq speaks */
};

/* AETH syndromes (the top three bits; the low five are a credit count,
 * an RNR timer or a NAK code).
 */
#define KRWQ_AETH_ACK		0x00
#define KRWQ_AETH_RNR_NAK	0x20
#define KRWQ_AETH_NAK		0x60
#define KRWQ_AETH_TYPE_MASK	0x60
#define KRWQ_AETH_VALUE_MASK	0x1f
/* an ACK's credit count that means "no limit": krwq does no flow control */
#define KRWQ_AETH_CREDITS_UNLIMITED	0x1f
#define KRWQ_NAK_PSN_SEQ_ERR	0x00
#define KRWQ_NAK_INVALID_REQ	0x01
#define KRWQ_NAK_REM_ACCESS	0x02
#define KRWQ_NAK_REM_OP_ERR	0x03

/**
 * struct krwq_wire_pkt - one packet's transport headers, parsed.
 * @opcode: BTH OpCode (IB_OPCODE_*).
 * @se: solicited event.
 * @mig: MigReq.
 * @ack_req: AckReq.
 * @pad: PadCnt, bytes after the payload up to a multiple of 4.
 * @pkey: P_Key.
 * @dqpn: destination QP.
 * @psn: packet sequence number.
 * @qkey: DETH Q_Key.
 * @sqpn: DETH source QP.
 * @va: RETH or AtomicETH virtual address.
 * @rkey: RETH or AtomicETH R_Key.
 * @dma_len: RETH DMA length.
 * @swap_add: AtomicETH swap (compare and swap) or add (fetch and add) data.
 * @compare: AtomicETH compare data.
 * @syndrome: AETH syndrome.
 * @msn: AETH message sequence number.
 * @orig: AtomicAckETH original remote data.
 * @imm: ImmDt, as on the wire.
 * @inv_rkey: IETH R_Key to invalidate.
 * @payload_len: bytes of payload (krwq_wire_parse() sets it).
 *
 * Only the fields of the headers @opcode carries mean anything.
 */
struct krwq_wire_pkt {
	u8 opcode;
	bool se, mig, ack_req;
	u8 pad;
	u16 pkey;
	u32 dqpn, psn;
	u32 qkey, sqpn;
	u64 va;
	u32 rkey, dma_len;
	u64 swap_add, compare;
	u8 syndrome;
	u32 msn;
	u64 orig;
	__be32 imm;
	u32 inv_rkey;
	u32 payload_len;
};

u32 krwq_wire_headers(u8 opcode);
unsigned int krwq_wire_hdr_len(u8 opcode);
int krwq_wire_build(const struct krwq_wire_pkt *p, void *buf, size_t len);
int krwq_wire_parse(struct krwq_wire_pkt *p, const void *buf, size_t len);

/* icrc.c */
int krwq_icrc_headers(const void *l3, unsigned int l3_len,
		      unsigned int hdr_len, u32 *crc);
u32 krwq_icrc_update(u32 crc, const void *data, size_t len);
u32 krwq_icrc_final(u32 crc);
int krwq_icrc(const void *l3, unsigned int len, unsigned int hdr_len,
	      u32 *icrc);

#endif /* KRWQ_WIRE_H */
