/*
 * report.c - telemetry report encoders (Telemetry Report Format v0.5,
 * v1.0 and v2.0).
 */
#include "report.h"

#include <string.h>

#include "frame.h"
#include "headers.h"
#include "wire.h"

#define REP_OUTER (ETH_HLEN + IPV4_HLEN + UDP_HLEN)
#define V2_REPORT_MAX_WORDS 254 /* 0xFF means "to the end of the payload" */

static unsigned popcount(uint32_t v)
{
	unsigned n = 0;
	for (; v; v &= v - 1)
		n++;
	return n;
}

/* Does the inner packet of this report start with Ethernet? */
static bool inner_has_l2(const struct ig_config *cfg, const struct ig_item *it)
{
	if (cfg->report_ver == 0)
		return it->inner_kind != 4;     /* Host-INT: the IPv4 packet */
	if (cfg->report_ver == 1)
		return it->inner_kind == 0;
	return it->inner_kind == 3;
}

/* Report bytes that precede one item's inner packet. */
static size_t item_overhead(const struct ig_config *cfg, const struct ig_item *it)
{
	switch (cfg->report_ver) {
	case 0:
		return 12 + (it->inner_kind == 1 ? 12 : it->inner_kind == 2 ? 16 : 0);
	case 1:
		return 16 + 4u * popcount(cfg->rep_md_bits & 0x3F);
	default:
		return 12 + 4u * model_rep_md_words(cfg->rep_md_bits);
	}
}

size_t report_len(const struct ig_config *cfg, const struct ig_item *items,
		  unsigned k)
{
	size_t n = REP_OUTER + (cfg->report_ver == 2 ? 8 : 0);

	for (unsigned i = 0; i < k; i++)
		n += item_overhead(cfg, &items[i]) +
		     frame_len(cfg, &items[i], inner_has_l2(cfg, &items[i]));
	return n;
}

void report_size_items(const struct ig_config *cfg, struct ig_item *items,
		       unsigned k)
{
	for (unsigned i = 0; i < k; i++)
		items[i].payload_len = 0;
	size_t base = report_len(cfg, items, k);
	size_t budget = cfg->size > base ? cfg->size - base : 0;

	for (unsigned i = 0; i < k; i++) {
		struct ig_item *it = &items[i];
		size_t pl = budget / k;

		if (cfg->report_ver == 2) {
			size_t inner0 = frame_len(cfg, it, inner_has_l2(cfg, it));
			size_t md = item_overhead(cfg, it) - 4;
			size_t max_inner = V2_REPORT_MAX_WORDS * 4 - md;

			if (inner0 + pl > max_inner)
				pl = max_inner > inner0 ? max_inner - inner0 : 0;
			/* Report Length counts words: keep the inner packet
			 * a whole number of words long. */
			pl += (4 - (inner0 + pl) % 4) % 4;
			if (inner0 + pl > max_inner)
				pl -= 4;
		}
		it->payload_len = (unsigned)pl;
	}
}

static size_t write_outer(uint8_t *p, const struct ig_config *cfg,
			  const struct ig_item *lead)
{
	uint32_t node = lead->node_id;
	const uint8_t src[4] = { 172, 16, (uint8_t)(node >> 8), (uint8_t)node };
	const uint8_t dst[4] = { 10, 255, 0, 1 };
	size_t n = hdr_eth(p, 0xC0000001u, 0xC1000000u | node, ETHERTYPE_IPV4);

	n += hdr_ipv4(p + n, 0, 17, src, dst, (uint16_t)lead->seq, 64);
	n += hdr_udp(p + n, (uint16_t)(40000 + lead->hw_id), cfg->report_port);
	return n;
}

static size_t write_v05(uint8_t *p, const struct ig_item *it)
{
	const struct ig_repmd *r = &it->rep;
	uint8_t *s = p;

	put32(p, 0u << 28 | (uint32_t)it->inner_kind << 24 |
		 (uint32_t)it->dropped << 23 | (uint32_t)it->congested << 22 |
		 1u << 21 /* F: tracked flow */ | (it->hw_id & 0x3Fu));
	put32(p + 4, it->seq);
	put32(p + 8, (uint32_t)r->ts_in);
	p += 12;
	if (it->inner_kind == 1) {
		/* drop header */
		put32(p, it->node_id);
		put16(p + 4, r->in_port);
		put16(p + 6, r->eg_port);
		put8(p + 8, r->queue_id);
		put8(p + 9, r->drop_reason);
		put16(p + 10, 0);
		p += 12;
	} else if (it->inner_kind == 2) {
		/* switch-local header */
		put32(p, it->node_id);
		put16(p + 4, r->in_port);
		put16(p + 6, r->eg_port);
		put8(p + 8, r->queue_id);
		put24(p + 9, r->queue_occ);
		put32(p + 12, (uint32_t)r->ts_eg);
		p += 16;
	}
	return (size_t)(p - s);
}

static size_t write_v10(uint8_t *p, const struct ig_config *cfg,
			const struct ig_item *it)
{
	const struct ig_repmd *r = &it->rep;
	unsigned bits = cfg->rep_md_bits & 0x3F;
	uint8_t *s = p;

	put32(p, 1u << 28 | (4u + popcount(bits)) << 24 |
		 (uint32_t)it->inner_kind << 21 | bits << 15 |
		 (uint32_t)it->dropped << 8 | (uint32_t)it->congested << 7 |
		 1u << 6 | (it->hw_id & 0x3Fu));
	put32(p + 4, it->node_id);
	put32(p + 8, it->seq);
	put32(p + 12, (uint32_t)r->ts_in);
	p += 16;
	if (bits & 0x20) { put16(p, r->in_port); put16(p + 2, r->eg_port); p += 4; }
	if (bits & 0x10) { put32(p, r->latency); p += 4; }
	if (bits & 0x08) { put8(p, r->queue_id); put24(p + 1, r->queue_occ); p += 4; }
	if (bits & 0x04) { put32(p, (uint32_t)r->ts_eg); p += 4; }
	if (bits & 0x02) {
		put8(p, r->queue_id);
		put8(p + 1, r->drop_reason);
		put16(p + 2, 0);
		p += 4;
	}
	if (bits & 0x01) { put32(p, r->tx_util); p += 4; }
	return (size_t)(p - s);
}

/* v2.0 individual report header and metadata; the Report Length is
 * patched by the caller once the inner packet is written. */
static size_t write_v2_item(uint8_t *p, const struct ig_config *cfg,
			    const struct ig_item *it)
{
	const struct ig_repmd *r = &it->rep;
	uint16_t bits = cfg->rep_md_bits;
	unsigned mdw = model_rep_md_words(bits);
	uint8_t *s = p;

	put32(p, 1u << 28 /* RepType INT */ | (uint32_t)it->inner_kind << 24 |
		 mdw << 8 | (uint32_t)it->dropped << 7 |
		 (uint32_t)it->congested << 6 | 1u << 5 /* F */);
	put16(p + 4, bits);
	put16(p + 6, 0); /* domain-specific ID */
	put32(p + 8, 0); /* DSMdBits, DSMdStatus */
	p += 12;
	if (bits & 0x4000) { put16(p, r->in_port); put16(p + 2, r->eg_port); p += 4; }
	if (bits & 0x2000) { put32(p, r->latency); p += 4; }
	if (bits & 0x1000) { put8(p, r->queue_id); put24(p + 1, r->queue_occ); p += 4; }
	if (bits & 0x0800) { put64(p, r->ts_in); p += 8; }
	if (bits & 0x0400) { put64(p, r->ts_eg); p += 8; }
	if (bits & 0x0200) { put32(p, r->lv2_in); put32(p + 4, r->lv2_eg); p += 8; }
	if (bits & 0x0100) { put32(p, r->tx_util); p += 4; }
	if (bits & 0x0080) { put8(p, r->buffer_id); put24(p + 1, r->buffer_occ); p += 4; }
	for (unsigned b = 9; b <= 14; b++) {
		if (bits & (0x8000u >> b)) {
			put32(p, 0xFFFFFFFFu);
			p += 4;
		}
	}
	if (bits & 0x0001) {
		put8(p, r->queue_id);
		put8(p + 1, r->drop_reason);
		put16(p + 2, 0);
		p += 4;
	}
	return (size_t)(p - s);
}

size_t report_build(uint8_t *p, const struct ig_config *cfg,
		    const struct ig_item *items, unsigned k, bool last_ff,
		    struct report_info *ri)
{
	struct report_info dummy;
	uint8_t *s = p, *ip, *udp;
	const struct ig_item *lead = &items[0];

	if (!ri)
		ri = &dummy;
	memset(ri, 0, sizeof(*ri));
	p += write_outer(p, cfg, lead);
	ip = s + ETH_HLEN;
	udp = p - UDP_HLEN;
	ri->rep_off = (size_t)(p - s);

	if (cfg->report_ver == 2) {
		put32(p, 2u << 28 | (uint32_t)(lead->hw_id & 0x3F) << 22 |
			 (lead->seq & 0x3FFFFF));
		put32(p + 4, lead->node_id);
		p += 8;
	}
	for (unsigned i = 0; i < k; i++) {
		const struct ig_item *it = &items[i];
		uint8_t *hdr = p;

		if (cfg->report_ver == 0)
			p += write_v05(p, it);
		else if (cfg->report_ver == 1)
			p += write_v10(p, cfg, it);
		else
			p += write_v2_item(p, cfg, it);
		if (i == 0) {
			ri->hdr_len = (size_t)(p - s) - ri->rep_off;
			ri->len_off = (size_t)(hdr + 1 - s);
		}
		p += frame_build(p, cfg, it, inner_has_l2(cfg, it), NULL);
		if (cfg->report_ver == 2) {
			size_t words = (size_t)(p - hdr) / 4 - 1;
			put8(hdr + 1, (last_ff && i == k - 1) ? 0xFF : (uint32_t)words);
		}
	}
	if (cfg->report_ver == 2)
		ri->rest = ((size_t)(p - s) - (ri->len_off - 1)) / 4 - 1;
	udp_finish(udp, (size_t)(p - udp), ip, false, true);
	ipv4_finish(ip, (size_t)(p - ip));
	ri->len = (size_t)(p - s);
	return ri->len;
}
