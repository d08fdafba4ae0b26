/*
 * headers.c - plain protocol headers (see headers.h).
 */
#include "headers.h"

#include <string.h>

#include "wire.h"

size_t hdr_eth(uint8_t *p, uint32_t dst_seed, uint32_t src_seed, uint16_t type)
{
	/* 02:xx = locally administered unicast, never a real vendor OUI. */
	p[0] = 0x02; p[1] = 0x00;
	put32(p + 2, dst_seed);
	p[6] = 0x02; p[7] = 0x00;
	put32(p + 8, src_seed);
	put16(p + 12, type);
	return ETH_HLEN;
}

size_t hdr_ipv4(uint8_t *p, uint8_t tos, uint8_t proto, const uint8_t src[4],
		const uint8_t dst[4], uint16_t id, uint8_t ttl)
{
	p[0] = 0x45;
	p[1] = tos;
	put16(p + 2, 0);
	put16(p + 4, id);
	put16(p + 6, 0x4000); /* DF */
	p[8] = ttl;
	p[9] = proto;
	put16(p + 10, 0);
	memcpy(p + 12, src, 4);
	memcpy(p + 16, dst, 4);
	return IPV4_HLEN;
}

void ipv4_finish(uint8_t *ip, size_t total_len)
{
	put16(ip + 2, (uint32_t)total_len);
	put16(ip + 10, 0);
	put16(ip + 10, csum_fold(csum_add(0, ip, IPV4_HLEN)));
}

size_t hdr_ipv6(uint8_t *p, uint8_t tclass, uint8_t next, const uint8_t src[16],
		const uint8_t dst[16], uint32_t flow_label, uint8_t hlim)
{
	put32(p, 6u << 28 | (uint32_t)tclass << 20 | (flow_label & 0xFFFFF));
	put16(p + 4, 0);
	p[6] = next;
	p[7] = hlim;
	memcpy(p + 8, src, 16);
	memcpy(p + 24, dst, 16);
	return IPV6_HLEN;
}

void ipv6_finish(uint8_t *ip, size_t total_len)
{
	put16(ip + 4, (uint32_t)(total_len - IPV6_HLEN));
}

static uint32_t pseudo_sum(const uint8_t *ip, bool v6, uint8_t proto, size_t len)
{
	uint32_t sum;

	if (v6)
		sum = csum_add(0, ip + 8, 32);
	else
		sum = csum_add(0, ip + 12, 8);
	sum += proto;
	sum += (uint32_t)(len >> 16) + (uint32_t)(len & 0xFFFF);
	return sum;
}

size_t hdr_udp(uint8_t *p, uint16_t sport, uint16_t dport)
{
	put16(p, sport);
	put16(p + 2, dport);
	put32(p + 4, 0);
	return UDP_HLEN;
}

void udp_finish(uint8_t *udp, size_t len, const uint8_t *ip, bool v6, bool csum)
{
	put16(udp + 4, (uint32_t)len);
	put16(udp + 6, 0);
	if (!csum && !v6)
		return;
	uint16_t c = csum_fold(csum_add(pseudo_sum(ip, v6, 17, len), udp, len));
	put16(udp + 6, c ? c : 0xFFFF); /* 0 means "no checksum" */
}

size_t hdr_tcp(uint8_t *p, uint16_t sport, uint16_t dport, uint32_t seq,
	       uint32_t ack, uint8_t flags)
{
	put16(p, sport);
	put16(p + 2, dport);
	put32(p + 4, seq);
	put32(p + 8, ack);
	p[12] = (TCP_HLEN / 4) << 4;
	p[13] = flags;
	put16(p + 14, 64240);
	put16(p + 16, 0);
	put16(p + 18, 0);
	return TCP_HLEN;
}

void tcp_finish(uint8_t *tcp, size_t len, const uint8_t *ip, bool v6)
{
	put16(tcp + 16, 0);
	put16(tcp + 16, csum_fold(csum_add(pseudo_sum(ip, v6, 6, len), tcp, len)));
}

size_t hdr_vxlan_gpe(uint8_t *p, uint32_t vni, uint8_t next_proto)
{
	p[0] = 0x0C; /* R R Ver=0 I=1 P=1 B=0 O=0 */
	p[1] = 0;
	p[2] = 0;
	p[3] = next_proto;
	put32(p + 4, vni << 8);
	return VXLAN_GPE_HLEN;
}

size_t hdr_geneve(uint8_t *p, unsigned opt_words, uint16_t proto, uint32_t vni)
{
	p[0] = (uint8_t)(opt_words & 0x3F); /* Ver 0 */
	p[1] = 0;                            /* O = C = 0 */
	put16(p + 2, proto);
	put32(p + 4, vni << 8);
	return GENEVE_HLEN;
}

size_t hdr_gre(uint8_t *p, uint16_t proto)
{
	put16(p, 0); /* C=0, Ver=0 */
	put16(p + 2, proto);
	return GRE_HLEN;
}
