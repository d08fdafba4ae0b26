/*
 * int_layout.c - field sizes and offsets of INT hop blocks.
 */
#include "int_layout.h"

/* Per layout: bits whose field is 8 bytes, bits that carry nothing. */
struct layout_masks {
	uint16_t eight;
	uint16_t zero;
};

#define B(n) (uint16_t)(0x8000u >> (n))

static const struct layout_masks masks[INT_LAYOUT__COUNT] = {
	[INT_LAYOUT_V05] = { 0, 0 },
	[INT_LAYOUT_V10] = { B(6), 0 },
	[INT_LAYOUT_V2] = { B(4) | B(5) | B(6), 0 },
	[INT_LAYOUT_V05_TS64] = { B(4) | B(5), 0 },
	[INT_LAYOUT_V10_TS64] = { B(4) | B(5) | B(6), 0 },
	[INT_LAYOUT_L4S] = { B(4) | B(5), 0x00ff },
};

unsigned int_field_size(enum int_layout_kind k, unsigned bit)
{
	if (bit == INT_BIT_L4S)
		return k == INT_LAYOUT_L4S ? 4 : 0;
	if (bit > 15)
		return 0;
	uint16_t m = B(bit);
	if (masks[k].zero & m)
		return 0;
	return masks[k].eight & m ? 8 : 4;
}

bool int_has_l4s_word(enum int_layout_kind k, uint16_t bitmap)
{
	return k == INT_LAYOUT_L4S && (bitmap & 0x00f0) != 0;
}

unsigned int_field_offset(enum int_layout_kind k, uint16_t bitmap, unsigned bit)
{
	if (bit == INT_BIT_L4S)
		bit = 8;        /* the mark/drop word follows bit 7's field */
	uint16_t before = isp_bits_before16(bit) & bitmap & (uint16_t)~masks[k].zero;

	return 4u * isp_popcount16(before) + 4u * isp_popcount16(before & masks[k].eight);
}

unsigned int_hop_size(enum int_layout_kind k, uint16_t bitmap)
{
	uint16_t set = bitmap & (uint16_t)~masks[k].zero;
	unsigned n = 4u * isp_popcount16(set) + 4u * isp_popcount16(set & masks[k].eight);

	return n + (int_has_l4s_word(k, bitmap) ? 4u : 0u);
}

uint64_t int_read_part(const uint8_t *p, unsigned size, enum int_part part,
		       bool *unavailable)
{
	uint64_t whole = isp_be_n(p, size);
	unsigned bits = size * 8, width = bits;
	uint64_t v = whole;

	switch (part) {
	case INT_PART_WHOLE:
		break;
	case INT_PART_HI:
		width = bits / 2;
		v = whole >> width;
		break;
	case INT_PART_LO:
		width = bits / 2;
		v = whole & ((UINT64_C(1) << width) - 1);
		break;
	case INT_PART_TOP8:
		width = 8;
		v = whole >> (bits - 8);
		break;
	case INT_PART_LOW24:
		width = 24;
		v = whole & 0xffffff;
		break;
	case INT_PART_BYTE1:
		width = 8;
		v = (whole >> (bits - 16)) & 0xff;
		break;
	}
	*unavailable = isp_all_ones(v, width);
	return v;
}

bool int_hops_read(const uint8_t *stack, unsigned nhops, unsigned stride,
		   enum int_layout_kind k, uint16_t bitmap, unsigned bit,
		   enum int_part part, uint8_t type, struct isp_value *out)
{
	if (bit == INT_BIT_L4S ? !int_has_l4s_word(k, bitmap)
			       : !(bitmap & isp_bit16(bit)))
		return false;
	unsigned size = int_field_size(k, bit);
	unsigned fo = int_field_offset(k, bitmap, bit);
	if (size == 0 || fo + size > stride)
		return false;

	isp_val_array(out, type);
	if (nhops > ISP_MAX_HOPS)
		nhops = ISP_MAX_HOPS;
	for (unsigned i = 0; i < nhops; i++) {
		/* path order: hop i is block nhops-1-i (each hop prepends) */
		const uint8_t *f = stack + (size_t)(nhops - 1 - i) * stride + fo;
		bool na;
		out->v.arr[i] = int_read_part(f, size, part, &na);
		if (na)
			out->missing |= UINT32_C(1) << i;
	}
	out->count = (uint8_t)nhops;
	return true;
}
