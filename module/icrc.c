// SPDX-License-Identifier: GPL-2.0
/*
 * icrc.c - the invariant CRC (ICRC) of a RoCEv2 packet.
 *
 * The ICRC is CRC-32 (Ethernet's polynomial, bit-reflected, started from
 * all ones and inverted at the end) over the packet from its IP header to
 * the end of its pad, as if an 8-byte local route header of all ones came
 * first.  Every field a router or switch may rewrite on the way counts as
 * all ones: IPv4's TOS, TTL and header checksum; IPv6's traffic class,
 * flow label and hop limit; UDP's checksum; and the BTH's byte after the
 * P_Key (resv8a).  The sender puts the result after the pad, least
 * significant byte first, as Ethernet does its FCS.
 *
 * The headers are CRC'd from a masked copy, the payload in place, so a
 * sender or receiver can feed the payload piece by piece
 * (krwq_icrc_update()).
 */
#include <kunit/visibility.h>
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/string.h>
#include <linux/udp.h>

#include "wire.h"

/* The longest stretch that is masked: IPv4 with options, UDP, BTH. */
#define KRWQ_ICRC_MASKED_MAX	(60 + sizeof(struct udphdr) + \
				 sizeof(struct krwq_bth))

/* the pseudo local route header: 8 bytes of ones */
static const u8 krwq_icrc_lrh[8] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
};

/* Bytes of the IP header at @l3, by its version; 0 if neither. */
static unsigned int krwq_ip_hdr_len(const u8 *l3)
{
	switch (l3[0] >> 4) {
	case 4:
		return (l3[0] & 0xf) * 4;
	case 6:
		return sizeof(struct ipv6hdr);
	default:
		return 0;
	}
}

/**
 * krwq_icrc_headers() - start an ICRC: the pseudo header and the packet's
 * headers, masked.
 * @l3: the packet's IP header (IPv4 or IPv6, by its version field).
 * @l3_len: bytes readable at @l3.
 * @hdr_len: bytes from @l3 to the payload: the IP, UDP and BTH headers and
 *           the extension headers.
 * @crc: set to the running CRC, for krwq_icrc_update() and
 *       krwq_icrc_final().
 *
 * Context: any.
 * Return: 0, or -EINVAL if @l3 is no IPv4 or IPv6 header, or @hdr_len
 * does not cover the IP, UDP and BTH headers or exceeds @l3_len.
 */
int krwq_icrc_headers(const void *l3, unsigned int l3_len,
		      unsigned int hdr_len, u32 *crc)
{
	u8 copy[KRWQ_ICRC_MASKED_MAX];
	unsigned int ip_len, masked;
	struct udphdr *udp;
	struct krwq_bth *bth;

	ip_len = l3_len ? krwq_ip_hdr_len(l3) : 0;
	masked = ip_len + sizeof(struct udphdr) + sizeof(struct krwq_bth);
	if (ip_len < sizeof(struct iphdr) || hdr_len < masked ||
	    hdr_len > l3_len)
		return -EINVAL;
	memcpy(copy, l3, masked);
	if (copy[0] >> 4 == 6) {
		struct ipv6hdr *ip6 = (void *)copy;

		ip6->priority = 0xf;
		memset(ip6->flow_lbl, 0xff, sizeof(ip6->flow_lbl));
		ip6->hop_limit = 0xff;
	} else {
		struct iphdr *ip4 = (void *)copy;

		ip4->tos = 0xff;
		ip4->ttl = 0xff;
		ip4->check = (__force __sum16)0xffff;
	}
	udp = (void *)(copy + ip_len);
	udp->check = (__force __sum16)0xffff;
	bth = (void *)(udp + 1);
	((u8 *)&bth->dqpn)[0] = 0xff;	/* resv8a */

	*crc = crc32_le(~0U, krwq_icrc_lrh, sizeof(krwq_icrc_lrh));
	*crc = crc32_le(*crc, copy, masked);
	*crc = crc32_le(*crc, (const u8 *)l3 + masked, hdr_len - masked);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(krwq_icrc_headers);

/**
 * krwq_icrc_update() - go on with an ICRC over payload or pad bytes.
 * @crc: the running CRC.
 * @data: the next bytes.
 * @len: their number.
 *
 * Context: any.
 * Return: the running CRC.
 */
u32 krwq_icrc_update(u32 crc, const void *data, size_t len)
{
	return crc32_le(crc, data, len);
}
EXPORT_SYMBOL_IF_KUNIT(krwq_icrc_update);

/**
 * krwq_icrc_final() - the ICRC of a running CRC.
 * @crc: the running CRC, over everything up to the end of the pad.
 *
 * Context: any.
 * Return: the ICRC, to be put on the wire with put_unaligned_le32().
 */
u32 krwq_icrc_final(u32 crc)
{
	return ~crc;
}
EXPORT_SYMBOL_IF_KUNIT(krwq_icrc_final);

/**
 * krwq_icrc() - the ICRC of a whole packet in one buffer.
 * @l3: the packet's IP header.
 * @len: bytes from @l3 to the end of the pad (the ICRC excluded).
 * @hdr_len: bytes from @l3 to the payload (see krwq_icrc_headers()).
 * @icrc: set to the ICRC.
 *
 * Context: any.
 * Return: 0, or -EINVAL as krwq_icrc_headers().
 */
int krwq_icrc(const void *l3, unsigned int len, unsigned int hdr_len,
	      u32 *icrc)
{
	u32 crc;

	if (krwq_icrc_headers(l3, len, hdr_len, &crc))
		return -EINVAL;
	crc = krwq_icrc_update(crc, (const u8 *)l3 + hdr_len, len - hdr_len);
	*icrc = krwq_icrc_final(crc);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(krwq_icrc);
