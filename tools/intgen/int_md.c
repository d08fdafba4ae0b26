/*
 * int_md.c - INT-MD / INT-MX header and metadata stack encoders.
 */
#include "int_md.h"

#include "wire.h"

static bool layout_v2(const struct ig_config *cfg)
{
	return cfg->int_ver >= IV_20 && !cfg->l4s;
}

size_t int_md_hdr_len(const struct ig_config *cfg)
{
	return layout_v2(cfg) ? 12 : 8;
}

size_t int_stack_len(const struct ig_item *it)
{
	return (size_t)it->nhops * it->hop_words * 4;
}

/* Store a timestamp in 4 or 8 bytes; the model already reduced it to the
 * field width (or to all-ones for "unavailable"). */
static uint8_t *put_ts(uint8_t *p, uint64_t ts, unsigned bytes)
{
	if (bytes == 8) {
		put64(p, ts);
		return p + 8;
	}
	put32(p, (uint32_t)ts);
	return p + 4;
}

static uint8_t *write_hop(uint8_t *p, const struct ig_config *cfg,
			  const struct ig_item *it, const struct ig_hop *h)
{
	unsigned last = cfg->l4s ? 7 : 15;

	for (unsigned b = 0; b <= last; b++) {
		if (!(it->bitmap & (0x8000u >> b)))
			continue;
		switch (b) {
		case 0:
			put32(p, h->switch_id);
			p += 4;
			break;
		case 1:
			put16(p, h->in_port);
			put16(p + 2, h->eg_port);
			p += 4;
			break;
		case 2:
			put32(p, h->latency);
			p += 4;
			break;
		case 3:
			put8(p, h->queue_id);
			put24(p + 1, h->queue_occ);
			p += 4;
			break;
		case 4:
			p = put_ts(p, h->ts_in, it->ts_bytes);
			break;
		case 5:
			p = put_ts(p, h->ts_eg, it->ts_bytes);
			break;
		case 6:
			if (cfg->int_ver == IV_05 && !cfg->l4s) {
				put32(p, h->v05_qcong);
				p += 4;
			} else if (cfg->l4s) {
				/* p4-int-l4s writes 16-bit level-2 ports */
				put16(p, (uint16_t)h->lv2_in);
				put16(p + 2, (uint16_t)h->lv2_eg);
				p += 4;
			} else {
				put32(p, h->lv2_in);
				put32(p + 4, h->lv2_eg);
				p += 8;
			}
			break;
		case 7:
			put32(p, h->tx_util);
			p += 4;
			break;
		case 8:
			if (layout_v2(cfg)) {
				put8(p, h->buffer_id);
				put24(p + 1, h->buffer_occ);
			} else {
				put32(p, 0xFFFFFFFFu); /* reserved before v2.0 */
			}
			p += 4;
			break;
		case 15:
			/* checksum complement (v1.0+); reserved in v0.5 */
			put32(p, cfg->int_ver == IV_05 ? 0xFFFFFFFFu : h->cksum);
			p += 4;
			break;
		default:
			/* reserved bits: a conforming hop writes all-ones */
			put32(p, 0xFFFFFFFFu);
			p += 4;
			break;
		}
	}
	if (cfg->l4s && (it->bitmap & 0x00F0)) {
		/* p4-int-l4s: nb_mark, nb_drop right after TX utilization */
		put16(p, h->l4s_mark);
		put16(p + 2, h->l4s_drop);
		p += 4;
	}
	return p;
}

static unsigned popcount16(uint16_t v)
{
	unsigned n = 0;
	for (; v; v &= (uint16_t)(v - 1))
		n++;
	return n;
}

size_t int_write_md(uint8_t *p, const struct ig_config *cfg,
		    const struct ig_item *it)
{
	uint8_t *start = p;
	uint32_t w0;

	if (it->mx) {
		/* v2.1 INT-MX: Ver, D, reserved; no stack follows */
		put32(p, (uint32_t)it->md_version << 28);
		put16(p + 4, it->bitmap);
		put16(p + 6, 0); /* domain-specific ID */
		put32(p + 8, 0); /* DS instruction, DS flags */
		return 12;
	}
	if (cfg->int_ver == IV_05 && !cfg->l4s) {
		/* Ver 4 | Rep 2 | C | E | R 3 | InsCnt 5 | MaxHopCnt | TotalHopCnt */
		w0 = (uint32_t)it->md_version << 28 | (uint32_t)it->e_flag << 24 |
		     (uint32_t)(popcount16(it->bitmap) & 0x1F) << 16 |
		     (uint32_t)it->max_hops << 8 | (uint32_t)(it->nhops & 0xFF);
		put32(p, w0);
		put16(p + 4, it->bitmap);
		put16(p + 6, 0);
		p += 8;
	} else {
		/* v1.0: Ver|Rep|C|E|M|res 10|HopML 5|RemHop 8
		 * v2.x: Ver|D|E|M|res 12|HopML 5|RemHop 8 */
		unsigned ebit = layout_v2(cfg) ? 26 : 24;
		w0 = (uint32_t)it->md_version << 28 | (uint32_t)it->e_flag << ebit |
		     (uint32_t)(it->hop_ml & 0x1F) << 8 | it->remaining;
		put32(p, w0);
		put16(p + 4, it->bitmap);
		put16(p + 6, 0); /* v2.x domain-specific ID; v1.0 reserved */
		p += 8;
		if (layout_v2(cfg)) {
			put32(p, 0); /* DS instruction, DS flags */
			p += 4;
		}
	}
	/* Each hop prepends its block: the stack starts with the last hop. */
	for (unsigned h = it->nhops; h-- > 0;)
		p = write_hop(p, cfg, it, &it->hop[h]);
	return (size_t)(p - start);
}

static unsigned body_words(const struct ig_config *cfg, const struct ig_item *it)
{
	return (unsigned)((int_md_hdr_len(cfg) + int_stack_len(it)) / 4);
}

size_t int_write_shim_l4(uint8_t *p, const struct ig_config *cfg,
			 const struct ig_item *it)
{
	unsigned body = body_words(cfg, it);
	uint8_t type = it->mx ? INT_TYPE_MX : INT_TYPE_MD;

	if (cfg->int_ver == IV_05 && !cfg->l4s) {
		put8(p, type);
		put8(p + 1, 0);
		put8(p + 2, 1 + body + 1); /* shim + MD + stack + tail */
		put8(p + 3, 0);
	} else if (!layout_v2(cfg)) {
		put8(p, type);
		put8(p + 1, 0);
		put8(p + 2, 1 + body);     /* shim + MD + stack */
		put8(p + 3, (uint32_t)it->flow.dscp << 2);
	} else {
		put8(p, (uint32_t)type << 4); /* NPT = 0: DSCP follows */
		put8(p + 1, body);            /* shim not counted */
		put8(p + 2, 0);
		put8(p + 3, (uint32_t)it->flow.dscp << 2);
	}
	return INT_SHIM_LEN;
}

size_t int_write_tail_v05(uint8_t *p, const struct ig_item *it)
{
	put8(p, it->flow.proto);
	put16(p + 1, it->flow.dport);
	put8(p + 3, it->flow.dscp);
	return INT_TAIL_LEN;
}

uint8_t int_gpe_next_proto(enum ig_intver v)
{
	switch (v) {
	case IV_05: return 0x05;
	case IV_10: return 0x08;
	case IV_20: return 0x80;
	default:    return 0x82;
	}
}

size_t int_write_shim_gpe(uint8_t *p, const struct ig_config *cfg,
			  const struct ig_item *it, uint8_t next_proto)
{
	unsigned body = body_words(cfg, it);
	uint8_t type = it->mx ? INT_TYPE_MX : INT_TYPE_MD;

	if (!layout_v2(cfg)) {
		/* v0.5/v1.0: Type 8 | Reserved 8 | Length (shim counted) | Next */
		put8(p, type);
		put8(p + 1, 0);
		put8(p + 2, 1 + body);
	} else {
		/* v2.x: Type 4 | Rsvd 4 | Length (shim not counted) | G | R | Next */
		put8(p, (uint32_t)type << 4);
		put8(p + 1, body);
		put8(p + 2, 0); /* G = 0: the original packet used VXLAN-GPE */
	}
	put8(p + 3, next_proto);
	return INT_SHIM_LEN;
}

size_t int_write_shim_gre(uint8_t *p, const struct ig_item *it,
			  const struct ig_config *cfg, uint16_t ethertype)
{
	uint8_t type = it->mx ? INT_TYPE_MX : INT_TYPE_MD;

	put8(p, (uint32_t)type << 4 | 1u << 3); /* G = 1: source added GRE */
	put8(p + 1, body_words(cfg, it));
	put16(p + 2, ethertype);
	return INT_SHIM_LEN;
}
