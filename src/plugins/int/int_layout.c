/*
 * int_layout.c - field sizes and offsets of INT hop blocks.
 */
#include "int_layout.h"

#define B(n) (uint16_t)(0x8000u >> (n))

const struct int_layout_masks int_layout_masks[INT_LAYOUT__COUNT] = {
	[INT_LAYOUT_V05] = { 0, 0 },
	[INT_LAYOUT_V10] = { B(6), 0 },
	[INT_LAYOUT_V2] = { B(4) | B(5) | B(6), 0 },
	[INT_LAYOUT_V05_TS64] = { B(4) | B(5), 0 },
	[INT_LAYOUT_V10_TS64] = { B(4) | B(5) | B(6), 0 },
	[INT_LAYOUT_L4S] = { B(4) | B(5), 0x00ff },
};

/*
 * Where a part sits in a field of `bits` bits: the value is
 * (field >> shift) & mask, and it is "unavailable" when it equals mask.
 * One description serves the single reads (reports) and the per-hop loop.
 */
struct part_geom {
	unsigned shift;
	uint64_t mask;
};

static struct part_geom part_geom(unsigned bits, enum int_part part)
{
	unsigned shift = 0, width = bits;

	switch (part) {
	case INT_PART_WHOLE:
		break;
	case INT_PART_HI:
		width = bits / 2;
		shift = width;
		break;
	case INT_PART_LO:
		width = bits / 2;
		break;
	case INT_PART_TOP8:
		width = 8;
		shift = bits - 8;
		break;
	case INT_PART_LOW24:
		width = 24;
		break;
	case INT_PART_BYTE1:
		width = 8;
		shift = bits - 16;
		break;
	}
	struct part_geom g = { shift, width >= 64 ? UINT64_MAX : (UINT64_C(1) << width) - 1 };
	return g;
}

uint64_t int_read_part(const uint8_t *p, unsigned size, enum int_part part,
		       bool *unavailable)
{
	struct part_geom g = part_geom(size * 8, part);
	uint64_t v = (isp_be_n(p, size) >> g.shift) & g.mask;

	*unavailable = v == g.mask;
	return v;
}

/* The per-hop loop for one field size, so that the load is a single
 * byte-swapping move instead of a switch per hop. Hop i of the path is
 * block nhops-1-i (each hop prepends its block). */
static inline void hops_loop(const uint8_t *first, unsigned nhops, unsigned stride,
			     unsigned size, struct part_geom g, struct isp_value *out)
{
	uint32_t missing = 0;
	size_t at = (size_t)(nhops - 1) * stride;

	for (unsigned i = 0; i < nhops; i++, at -= stride) {
		const uint8_t *f = first + at;
		uint64_t v = ((size == 8 ? isp_be64(f) : isp_be32(f)) >> g.shift) & g.mask;
		out->v.arr[i] = v;
		missing |= (uint32_t)(v == g.mask) << i;
	}
	out->missing = missing;
}

bool int_hops_read(const uint8_t *stack, unsigned nhops, unsigned stride,
		   enum int_layout_kind k, uint16_t bitmap, unsigned bit,
		   enum int_part part, uint8_t type, struct isp_value *out)
{
	/* int_field_size and int_field_offset, with the masks loaded once:
	 * this runs for every per-hop attribute of every packet */
	const struct int_layout_masks *lm = &int_layout_masks[k];
	unsigned size, fo;
	if (bit == INT_BIT_L4S) {
		if (!int_has_l4s_word(k, bitmap))
			return false;
		size = 4;
		fo = int_field_offset(k, bitmap, bit);
	} else {
		uint16_t m = bit < 16 ? isp_bit16(bit) : 0;
		if (!(bitmap & m) || (lm->zero & m))
			return false;
		size = lm->eight & m ? 8 : 4;
		fo = int_fields_bytes(k, isp_bits_before16(bit) & bitmap & (uint16_t)~lm->zero);
	}
	if (fo + size > stride)
		return false;

	isp_val_array(out, type);
	if (nhops > ISP_MAX_HOPS)
		nhops = ISP_MAX_HOPS;
	out->count = (uint8_t)nhops;
	if (nhops == 0)
		return true;
	if (size == 8)
		hops_loop(stack + fo, nhops, stride, 8, part_geom(64, part), out);
	else
		hops_loop(stack + fo, nhops, stride, 4, part_geom(32, part), out);
	return true;
}
