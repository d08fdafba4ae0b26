/*
 * frame.c - the monitored packet with its INT headers (see frame.h).
 */
#include "frame.h"

#include <string.h>

#include "headers.h"
#include "int_md.h"
#include "rng.h"
#include "wire.h"

/* Bytes of INT for the transport: shim (or Geneve option header), MD
 * header, stack and, for v0.5 over TCP/UDP, the tail. */
static size_t int_bytes(const struct ig_config *cfg, const struct ig_item *it)
{
	size_t n;

	if (!it->has_int)
		return 0;
	n = INT_SHIM_LEN + int_md_hdr_len(cfg) + int_stack_len(it);
	if (cfg->int_ver == IV_05 && !cfg->l4s &&
	    (cfg->transport == TR_UDP || cfg->transport == TR_TCP))
		n += INT_TAIL_LEN;
	return n;
}

static size_t inner_l3l4(const struct ig_item *it)
{
	size_t l3 = it->flow.v6 ? IPV6_HLEN : IPV4_HLEN;
	size_t l4 = it->flow.proto == 6 ? TCP_HLEN : UDP_HLEN;

	return l3 + l4;
}

size_t frame_len(const struct ig_config *cfg, const struct ig_item *it,
		 bool with_l2)
{
	size_t n = with_l2 ? ETH_HLEN : 0;
	size_t outer = IPV4_HLEN + UDP_HLEN;

	switch (cfg->transport) {
	case TR_UDP:
	case TR_TCP:
		break;
	case TR_VXLAN_GPE:
		n += outer + VXLAN_GPE_HLEN + ETH_HLEN;
		break;
	case TR_GENEVE:
		n += outer + GENEVE_HLEN + ETH_HLEN;
		break;
	case TR_GRE:
		n += IPV4_HLEN + GRE_HLEN;
		break;
	}
	return n + int_bytes(cfg, it) + inner_l3l4(it) + it->payload_len;
}

/* Fill the application payload with a fixed, recognisable pattern. */
static void fill_payload(uint8_t *p, size_t n)
{
	static const char pat[] = "intgen-payload-0123456789abcdefghijklmnopqrstuvwxyz";
	const size_t pl = sizeof(pat) - 1;

	while (n) {
		size_t k = n < pl ? n : pl;
		memcpy(p, pat, k);
		p += k;
		n -= k;
	}
}

/* Write the INT headers that sit between L4 (or tunnel) header and the
 * next layer. Records offsets in fi. */
static size_t write_int_l4(uint8_t *p, const struct ig_config *cfg,
			   const struct ig_item *it, size_t base,
			   struct frame_info *fi)
{
	uint8_t *s = p;

	fi->int_off = base;
	fi->len_off = base + ((cfg->int_ver >= IV_20 && !cfg->l4s) ? 1 : 2);
	p += int_write_shim_l4(p, cfg, it);
	p += int_write_md(p, cfg, it);
	if (cfg->int_ver == IV_05 && !cfg->l4s)
		p += int_write_tail_v05(p, it);
	fi->int_len = (size_t)(p - s);
	return fi->int_len;
}

/* The flow's own IP + L4 header and payload; INT goes after L4 when
 * int_after_l4 (TCP/UDP transport). Returns bytes written. */
static size_t write_flow(uint8_t *p, const struct ig_config *cfg,
			 const struct ig_item *it, bool int_after_l4,
			 size_t base, struct frame_info *fi)
{
	const struct ig_flow *f = &it->flow;
	uint8_t *ip = p, *l4;
	uint8_t tos = (uint8_t)(f->dscp << 2);
	uint8_t ttl = (uint8_t)(64 - it->nhops);
	uint64_t h = mix64(it->ts_ns ^ ((uint64_t)f->index << 32));

	if (int_after_l4 && it->has_int)
		tos = 0x80; /* DSCP 0x20 announces INT after TCP/UDP */
	if (f->v6)
		p += hdr_ipv6(p, tos, f->proto, f->src, f->dst, f->index & 0xFFFFF, ttl);
	else
		p += hdr_ipv4(p, tos, f->proto, f->src, f->dst, (uint16_t)h, ttl);
	l4 = p;
	if (f->proto == 6)
		p += hdr_tcp(p, f->sport, f->dport, (uint32_t)(h >> 16),
			     (uint32_t)(h >> 40) * 1000u, 0x18 /* PSH|ACK */);
	else
		p += hdr_udp(p, f->sport, f->dport);
	if (int_after_l4 && it->has_int)
		p += write_int_l4(p, cfg, it, base + (size_t)(p - ip), fi);
	fill_payload(p, it->payload_len);
	p += it->payload_len;

	size_t total = (size_t)(p - ip), l4len = (size_t)(p - l4);
	if (f->v6)
		ipv6_finish(ip, total);
	else
		ipv4_finish(ip, total);
	if (f->proto == 6)
		tcp_finish(l4, l4len, ip, f->v6);
	else
		udp_finish(l4, l4len, ip, f->v6, true);
	return total;
}

/* Outer IPv4 (+ UDP) of a tunnel. Endpoints and source port are derived
 * from the flow index: stable per flow like a real VTEP pair, and the
 * source port varies for ECMP entropy as RFC 7348 recommends. */
static size_t write_outer(uint8_t *p, const struct ig_item *it, uint8_t proto,
			  uint16_t dport)
{
	uint32_t i = it->flow.index;
	const uint8_t src[4] = { 192, 168, 1, (uint8_t)(1 + i % 250) };
	const uint8_t dst[4] = { 192, 168, 2, (uint8_t)(1 + (i / 250) % 250) };
	size_t n = hdr_ipv4(p, 0, proto, src, dst, (uint16_t)it->ts_ns, 64);

	if (proto == 17)
		n += hdr_udp(p + n, (uint16_t)(49152 + i % 16384), dport);
	return n;
}

size_t frame_build(uint8_t *p, const struct ig_config *cfg,
		   const struct ig_item *it, bool with_l2,
		   struct frame_info *fi)
{
	struct frame_info dummy;
	uint8_t *start = p, *ip, *udp;
	const struct ig_flow *f = &it->flow;
	uint16_t inner_et = f->v6 ? ETHERTYPE_IPV6 : ETHERTYPE_IPV4;
	uint32_t mac = f->index;

	if (!fi)
		fi = &dummy;
	memset(fi, 0, sizeof(*fi));

	if (cfg->transport == TR_UDP || cfg->transport == TR_TCP) {
		if (with_l2)
			p += hdr_eth(p, mac | 0x80000000u, mac, inner_et);
		p += write_flow(p, cfg, it, true, (size_t)(p - start), fi);
		fi->len = (size_t)(p - start);
		return fi->len;
	}

	if (with_l2)
		p += hdr_eth(p, 0xFE000000u | mac, 0xFD000000u | mac, ETHERTYPE_IPV4);
	ip = p;
	if (cfg->transport == TR_GRE) {
		p += write_outer(p, it, 47, 0);
		p += hdr_gre(p, it->has_int ? cfg->gre_proto : inner_et);
		if (it->has_int) {
			fi->int_off = (size_t)(p - start);
			fi->len_off = fi->int_off + 1;
			p += int_write_shim_gre(p, it, cfg, inner_et);
			p += int_write_md(p, cfg, it);
			fi->int_len = (size_t)(p - start) - fi->int_off;
		}
		p += write_flow(p, cfg, it, false, (size_t)(p - start), fi);
		ipv4_finish(ip, (size_t)(p - ip));
		fi->len = (size_t)(p - start);
		return fi->len;
	}

	bool gpe = cfg->transport == TR_VXLAN_GPE;
	p += write_outer(p, it, 17, gpe ? UDP_PORT_VXLAN_GPE : UDP_PORT_GENEVE);
	udp = p - UDP_HLEN;
	if (gpe) {
		p += hdr_vxlan_gpe(p, 0x1000 + f->index % 4096,
				   it->has_int ? int_gpe_next_proto(cfg->int_ver) : 0x03);
		if (it->has_int) {
			fi->int_off = (size_t)(p - start);
			fi->len_off = fi->int_off + ((cfg->int_ver >= IV_20) ? 1 : 2);
			p += int_write_shim_gpe(p, cfg, it, 0x03 /* Ethernet */);
			p += int_write_md(p, cfg, it);
			fi->int_len = (size_t)(p - start) - fi->int_off;
		}
	} else {
		size_t body = it->has_int ? int_md_hdr_len(cfg) + int_stack_len(it) : 0;
		unsigned opt_words = it->has_int ? (unsigned)(1 + body / 4) : 0;

		fi->tun_off = (size_t)(p - start);
		p += hdr_geneve(p, opt_words, ETHERTYPE_TEB, 0x1000 + f->index % 4096);
		if (it->has_int) {
			/* Option: class 16 | type 8 | R 3 | length 5. The type
			 * repeats the INT header type (1 MD, 3 MX) since the
			 * Geneve option replaces the shim that would carry it. */
			fi->int_off = (size_t)(p - start);
			fi->len_off = fi->int_off + 3;
			put16(p, cfg->geneve_class);
			put8(p + 2, it->mx ? INT_TYPE_MX : INT_TYPE_MD);
			put8(p + 3, (uint32_t)(body / 4) & 0x1F);
			p += GENEVE_OPT_HLEN;
			p += int_write_md(p, cfg, it);
			fi->int_len = (size_t)(p - start) - fi->int_off;
		}
	}
	p += hdr_eth(p, 0x80000000u | mac, mac, inner_et);
	p += write_flow(p, cfg, it, false, (size_t)(p - start), fi);
	udp_finish(udp, (size_t)(p - udp), ip, false, false);
	ipv4_finish(ip, (size_t)(p - ip));
	fi->len = (size_t)(p - start);
	return fi->len;
}
