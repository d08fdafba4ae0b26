/*
 * int_decode.c - INT shim and instruction headers of every version and
 * carrier, down to the hop stack's position, count and layout.
 *
 * Versions are decided per packet from the fields (shim and metadata header):
 * a shim whose first byte is the whole Type (1, 2) is the v0.5/v1.0 family,
 * one with Type in the high nibble is v2.x. Dialects that disagree with the
 * spec (bitmap in the low byte, 8-byte timestamps in v1.0 headers, wrong
 * HopML) are recognised by which layout makes the lengths consistent.
 */
#include "int_state.h"

#define MD_LEGACY_LEN 8
#define MD_V2_LEN 12
#define TAIL_LEN 4

static uint16_t swap_bytes(uint16_t v)
{
	return (uint16_t)(v << 8 | v >> 8);
}

/*
 * Pick the bitmap reading and layout under which one hop is `stride` bytes,
 * when the spec reading (pick_layout) does not give it: the dialects, in
 * order of likelihood.
 */
static __attribute__((noinline)) bool
pick_layout_other(enum int_layout_kind base, enum int_layout_kind ts64, uint16_t wire_bitmap,
		  unsigned stride, struct int_state *s)
{
	const uint16_t bitmaps[2] = { wire_bitmap, swap_bytes(wire_bitmap) };
	const enum int_layout_kind kinds[2] = { base, ts64 };

	for (unsigned b = 0; b < 2; b++) {
		/* the low-byte reading only where the high byte is empty */
		if (b == 1 && ((wire_bitmap & 0xff00) || !(wire_bitmap & 0x00ff)))
			break;
		for (unsigned k = 0; k < 2; k++) {
			if (int_hop_size(kinds[k], bitmaps[b]) == stride) {
				s->bitmap = bitmaps[b];
				s->layout = (uint8_t)kinds[k];
				if (b == 1)
					s->flags |= INT_F_SWAPPED;
				return true;
			}
		}
	}
	s->bitmap = wire_bitmap;
	s->layout = (uint8_t)base;
	return false;
}

/* The spec reading, that of nearly every packet, inline; the others apart. */
static inline bool pick_layout(enum int_layout_kind base, enum int_layout_kind ts64,
			       uint16_t wire_bitmap, unsigned stride, struct int_state *s)
{
	if (int_hop_size(base, wire_bitmap) == stride) {
		s->bitmap = wire_bitmap;
		s->layout = (uint8_t)base;
		return true;
	}
	return pick_layout_other(base, ts64, wire_bitmap, stride, s);
}

static enum isp_verdict set_hops(struct int_state *s, unsigned stack_bytes,
				 unsigned stride)
{
	if (stack_bytes == 0) {
		s->nhops = 0;
		s->stride = (uint8_t)stride;
		return ISP_OK;
	}
	/* the shim's Length and HopML must agree: a stack that is not a
	 * whole number of hops (HopML past the stack included) is neither
	 * hops nor what follows them */
	if (stride == 0 || stride > 255 || stack_bytes % stride != 0)
		return ISP_ERR_BAD_LENGTH;
	unsigned n = stack_bytes / stride;
	if (n > ISP_MAX_HOPS)
		return ISP_ERR_HOP_OVERFLOW;
	s->nhops = (uint8_t)n;
	s->stride = (uint8_t)stride;
	return ISP_OK;
}

/* v0.5 header: Ver 4 · Rep 2 · C · E · R 3 · InsCnt 5 · MaxHopCnt 8 ·
 * TotalHopCnt 8; its pre-release (ONOS, GEANT): Ver 2 · Rep 2 · C · E · R 5,
 * the rest alike. A first nibble of 0 reads either way: the release's. */
static enum isp_verdict decode_v05(const uint8_t *md, unsigned stack_bytes,
				   struct int_state *s)
{
	uint32_t w0 = isp_be32(md);
	unsigned ce = md[0] >> 4 ? 4 : 6;       /* where C · E are */

	s->family = 0;
	s->version = (uint8_t)isp_bits32(w0, 0, 4);
	s->flags |= (uint8_t)(isp_bits32(w0, ce, 2) << 1);     /* C · E */
	s->hop_ml = (uint8_t)isp_bits32(w0, 11, 5);
	s->max_hop_cnt = (uint8_t)isp_bits32(w0, 16, 8);
	s->hop_cnt = (uint8_t)isp_bits32(w0, 24, 8);
	s->wire_bitmap = isp_be16(md + 4);

	unsigned total = s->hop_cnt;
	if (total > ISP_MAX_HOPS)
		return ISP_ERR_HOP_OVERFLOW;
	if (total == 0)
		return stack_bytes == 0 ? set_hops(s, 0, 0) : ISP_ERR_BAD_LENGTH;
	if (stack_bytes % total != 0)
		return ISP_ERR_BAD_LENGTH;
	unsigned stride = stack_bytes / total;
	if (!pick_layout(INT_LAYOUT_V05, INT_LAYOUT_V05_TS64, s->wire_bitmap, stride, s)) {
		if (stride != s->hop_ml * 4u)
			return ISP_ERR_BAD_LENGTH;
		s->flags |= INT_F_HOPML_MISMATCH;
	}
	return set_hops(s, stack_bytes, stride);
}

/*
 * Bytes of a p4-int-l4s hop. The switch writes more words than its HopML
 * says, so the bitmap decides; but not for the 28-byte cloud-gaming block
 * that MMT-DPI reads for bit 0x0040 (the P4 cloud-gaming detector's
 * report): the L4S switch, which ignores bits 8-15, sets 0x0040 in its
 * usual mask 0xFFFF without writing one. The block is counted only when
 * HopML counts it too, the one case in which the lengths say it is there.
 */
static unsigned l4s_stride(uint16_t bitmap, unsigned hop_ml)
{
	unsigned base = int_hop_size(INT_LAYOUT_L4S, bitmap);

	if (int_has_cg_block(INT_LAYOUT_L4S, bitmap) && hop_ml * 4u == base + INT_CG_LEN)
		return base + INT_CG_LEN;
	return base;
}

/* v1.0 header: Ver 4 · Rep 2 · C · E · M · reserved 10 · HopML 5 · RemainingHopCnt 8 */
static inline __attribute__((always_inline)) enum isp_verdict
decode_v10(const uint8_t *md, unsigned stack_bytes, struct int_state *s, bool l4s)
{
	uint32_t w0 = isp_be32(md);

	s->family = 1;
	s->version = (uint8_t)isp_bits32(w0, 0, 4);
	s->flags |= (uint8_t)isp_bits32(w0, 6, 3);              /* C · E · M */
	s->hop_ml = (uint8_t)isp_bits32(w0, 19, 5);
	s->hop_cnt = (uint8_t)isp_bits32(w0, 24, 8);
	s->wire_bitmap = isp_be16(md + 4);

	if (l4s) {
		/* p4-int-l4s writes more words than its HopML says: the bitmap
		 * decides the stride */
		s->bitmap = s->wire_bitmap;
		s->layout = INT_LAYOUT_L4S;
		return set_hops(s, stack_bytes, l4s_stride(s->bitmap, s->hop_ml));
	}
	unsigned stride = s->hop_ml * 4u;
	if (!pick_layout(INT_LAYOUT_V10, INT_LAYOUT_V10_TS64, s->wire_bitmap, stride, s))
		s->flags |= INT_F_HOPML_MISMATCH;
	return set_hops(s, stack_bytes, stride);
}

/* v2.x header: Ver 4 · D · E · M · reserved 12 · HopML 5 · RemainingHopCnt 8,
 * bitmap 16 · DS ID 16, DS instruction 16 · DS flags 16 */
static inline __attribute__((always_inline)) enum isp_verdict
decode_v2(const uint8_t *md, unsigned stack_bytes, struct int_state *s)
{
	uint32_t w0 = isp_be32(md);

	s->family = 2;
	s->version = (uint8_t)isp_bits32(w0, 0, 4);
	s->flags |= (uint8_t)(isp_bits32(w0, 5, 2) |            /* E · M */
			      (isp_bits32(w0, 4, 1) ? INT_F_D : 0));
	s->wire_bitmap = isp_be16(md + 4);
	s->bitmap = s->wire_bitmap;
	s->layout = INT_LAYOUT_V2;
	/* v2.0 and v2.1 both write 2; another number under a v2.x shim or
	 * in a Geneve option is a header this layout does not describe */
	if (s->version != 2)
		return ISP_ERR_BAD_VERSION;
	if (s->mode == INT_MODE_MX) /* MX: instruction header only */
		return stack_bytes ? ISP_ERR_BAD_LENGTH : set_hops(s, 0, 0);
	s->hop_ml = (uint8_t)isp_bits32(w0, 19, 5);
	s->hop_cnt = (uint8_t)isp_bits32(w0, 24, 8);
	unsigned stride = s->hop_ml * 4u, fields = int_hop_size(INT_LAYOUT_V2, s->bitmap);
	/* v2.x has no dialect whose HopML is short: a hop that cannot hold
	 * the bitmap's fields contradicts it, as a report's MD Length does.
	 * A longer one holds domain-specific metadata. */
	if (stride < fields)
		return ISP_ERR_BAD_LENGTH;
	if (stride != fields)
		s->flags |= INT_F_HOPML_MISMATCH;
	return set_hops(s, stack_bytes, stride);
}

/* p4-int-l4s readings: its stride comes from the bitmap, not HopML. */
static enum isp_verdict try_l4s(const uint8_t *md, unsigned stack_bytes,
				struct int_state *s)
{
	struct int_state save = *s;
	unsigned stride = l4s_stride(isp_be16(md + 4), isp_bits32(isp_be32(md), 19, 5));

	if (stride && stack_bytes % stride == 0 &&
	    decode_v10(md, stack_bytes, s, true) == ISP_OK)
		return ISP_OK;
	*s = save;
	return ISP_ERR_BAD_LENGTH;
}

/* Which header family an MD header of a legacy (v0.5/v1.0) shim is. */
static __attribute__((noinline)) enum isp_verdict
decode_legacy_md_all(const uint8_t *md, unsigned stack_bytes, bool has_tail,
		     struct int_state *s)
{
	unsigned ver = md[0] >> 4;
	struct int_state save = *s;

	if (int_cfg.dialect == INT_DIALECT_L4S && (ver == 1 || ver == 2))
		return decode_v10(md, stack_bytes, s, true);
	if (ver == 1 || ver == 2) {
		/* v1.0, or the L4S switch (which may write version 2) when
		 * HopML disagrees with the bitmap and the L4S stride fits */
		enum isp_verdict v = decode_v10(md, stack_bytes, s, false);
		if (v == ISP_OK && !(s->flags & INT_F_HOPML_MISMATCH) && ver == 1)
			return ISP_OK;
		*s = save;
		if (try_l4s(md, stack_bytes, s) == ISP_OK)
			return ISP_OK;
		*s = save;
		if (ver == 1)
			return decode_v10(md, stack_bytes, s, false);
	}
	unsigned tail = has_tail ? TAIL_LEN : 0;
	if (ver == 0 || ver == 3) { /* v0.5 and its pre-release */
		if (stack_bytes < tail)
			return ISP_ERR_BAD_LENGTH;
		return decode_v05(md, stack_bytes - tail, s);
	}
	/* Other version numbers are seen in the field (GEANT writes 4 with a
	 * v0.5 header and a tail): take the reading whose lengths agree. */
	*s = save;
	if (stack_bytes >= tail &&
	    decode_v05(md, stack_bytes - tail, s) == ISP_OK &&
	    !(s->flags & INT_F_HOPML_MISMATCH))
		return ISP_OK;
	*s = save;
	if (decode_v10(md, stack_bytes, s, false) == ISP_OK &&
	    !(s->flags & INT_F_HOPML_MISMATCH) && s->stride &&
	    stack_bytes % s->stride == 0)
		return ISP_OK;
	*s = save;
	return ISP_ERR_BAD_VERSION;
}

/*
 * The same, with a v1.0 header whose lengths agree with the bitmap (nearly
 * every one) read inline and the rest apart, where the other readings
 * spill nothing on its way. When it does not fit, the fields decode_v10
 * wrote stay (every reading that succeeds writes them again, a failed one
 * leaves no state) but flags, which readings or into, are put back.
 */
static inline enum isp_verdict decode_legacy_md(const uint8_t *md, unsigned stack_bytes,
						bool has_tail, struct int_state *s)
{
	if (md[0] >> 4 == 1 && int_cfg.dialect != INT_DIALECT_L4S) {
		uint8_t flags = s->flags;

		if (decode_v10(md, stack_bytes, s, false) == ISP_OK &&
		    !(s->flags & INT_F_HOPML_MISMATCH))
			return ISP_OK;
		s->flags = flags;
	}
	return decode_legacy_md_all(md, stack_bytes, has_tail, s);
}

/* Leave the decoded state for the getters, with its layout's field
 * offsets (a table row: the only per-hop work done before a getter asks). */
static void keep_state(struct isp_layer *l, struct int_state *s)
{
	l->version = s->version;
	s->fo = int_fo_row((enum int_layout_kind)s->layout, s->bitmap);
	int_state_store(l, s);
}

/*
 * Shim layouts by carrier. Returns the INT bytes after the shim (MD header
 * plus stack, plus tail for v0.5 over L4) in *body and sets the mode; the
 * getters read the shim's other fields at shim_off.
 */
static enum isp_verdict parse_shim(struct isp_dissect *d, const struct isp_layer *l,
				   const uint8_t *sh,
				   unsigned avail, struct int_state *s,
				   unsigned *body, uint32_t *next_tbl, uint32_t *next_key)
{
	uint8_t b0 = sh[0];
	unsigned words;

	*next_tbl = 0xff;
	if (b0 == 1 || b0 == 2) {               /* v0.5 / v1.0 family */
		s->mode = b0;
		words = sh[2];
		if (words * 4u < SHIM_LEN + MD_LEGACY_LEN)
			return ISP_ERR_BAD_LENGTH;
		*body = words * 4u - SHIM_LEN;
		if (d->carrier == ISP_CARRIER_GPE) {
			*next_tbl = ISP_TBL_GPE_NEXT;
			*next_key = sh[3];
		}
	} else if (b0 >> 4 >= 1 && b0 >> 4 <= 3) { /* v2.x */
		s->mode = b0 >> 4;
		*body = sh[1] * 4u;
		if (d->carrier == ISP_CARRIER_GPE) {
			*next_tbl = ISP_TBL_GPE_NEXT;
			*next_key = sh[3];
		} else if (d->carrier == ISP_CARRIER_GRE) {
			*next_tbl = ISP_TBL_ETHERTYPE;
			*next_key = isp_be16(sh + 2);
		}
	} else {
		return d->carrier == ISP_CARRIER_L4 ? ISP_NOT_MINE : ISP_ERR_BAD_VERSION;
	}
	if (SHIM_LEN + *body > avail)
		return isp_short_verdict(d, l);
	return ISP_OK;
}

enum isp_verdict int_decode(struct isp_dissect *d, struct isp_layer *l)
{
	struct isp_cursor c = isp_layer_cursor(d->pkt, l);
	struct int_state s;
	unsigned start = 0;

	memset(&s, 0, sizeof(s));
	s.carrier = d->carrier;
	if (d->carrier == ISP_CARRIER_L4 && int_cfg.probe_marker_set &&
	    isp_cur_has(&c, 8) && isp_be64(c.p) == int_cfg.probe_marker) {
		start = 8;
		s.probe = 1;
	}

	if (d->carrier == ISP_CARRIER_GENEVE) {
		/* The Geneve option body is the v2 instruction header and stack;
		 * the Geneve decoder bounded the region to the option. */
		unsigned len = l->end - l->off;
		if (len < MD_V2_LEN)
			return isp_short_verdict(d, l);
		s.mode = INT_MODE_MD;
		s.md_off = 0;
		s.stack_off = MD_V2_LEN;
		enum isp_verdict v = decode_v2(c.p, len - MD_V2_LEN, &s);
		if (v != ISP_OK)
			return v;
		l->len = len;
		keep_state(l, &s);
		isp_next_by(d, (enum isp_table)d->carrier_next_tbl, d->carrier_next_key);
		return isp_next_at(d, d->carrier_next_off, d->pkt->layer[d->pkt->nlayers - 1].end);
	}

	if (!isp_cur_skip(&c, start) || !isp_cur_has(&c, SHIM_LEN)) {
		/* a DSCP-marked payload too short for a shim is not INT, unless
		 * the capture cut it */
		if (d->carrier == ISP_CARRIER_L4 && !s.probe &&
		    !isp_region_cut(d, l))
			return ISP_NOT_MINE;
		return ISP_ERR_TRUNCATED;
	}

	unsigned body;
	uint32_t next_tbl, next_key = 0;
	enum isp_verdict v = parse_shim(d, l, c.p, (unsigned)c.left, &s, &body, &next_tbl, &next_key);
	if (v != ISP_OK)
		return v;
	bool legacy = c.p[0] < 0x10;
	unsigned mdlen = legacy ? MD_LEGACY_LEN : MD_V2_LEN;
	/* lengths first: a Length that contradicts the data is bad_length
	 * whatever the type says */
	if (body < mdlen)
		return ISP_ERR_BAD_LENGTH;
	if (s.mode == INT_MODE_DST)
		return ISP_ERR_UNSUPPORTED; /* destination-only header: counted, not decoded */

	const uint8_t *md = c.p + SHIM_LEN;
	s.shim_off = (uint16_t)start;
	s.md_off = (uint16_t)(start + SHIM_LEN);
	s.stack_off = (uint16_t)(s.md_off + mdlen);
	if (legacy) {
		bool has_tail = d->carrier == ISP_CARRIER_L4;
		v = decode_legacy_md(md, body - mdlen, has_tail, &s);
		if (v == ISP_OK && s.family == 0 && has_tail && !(s.layout == INT_LAYOUT_L4S))
			s.tail_off = (uint16_t)(s.md_off + body - TAIL_LEN);
	} else {
		v = decode_v2(md, body - mdlen, &s);
	}
	if (v != ISP_OK)
		return v;
	l->len = start + SHIM_LEN + body;
	keep_state(l, &s);
	if (next_tbl != 0xff)
		isp_next_by(d, (enum isp_table)next_tbl, next_key);
	return ISP_OK;
}
