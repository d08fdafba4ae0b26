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

uint64_t int_read_part(const uint8_t *p, unsigned size, enum int_part part,
		       bool *unavailable)
{
	struct int_part_geom g = int_part_geom(size * 8, part);
	uint64_t v = (isp_be_n(p, size) >> g.shift) & g.mask;

	*unavailable = v == g.mask;
	return v;
}

uint64_t int_fo_rows[INT_LAYOUT__COUNT][256];
uint8_t int_hop_bytes[INT_LAYOUT__COUNT][2][256];

void int_layout_init(void)
{
	static bool done;

	/* Each registry that registers int calls this: the table is filled
	 * once, never rewritten while packets are decoded elsewhere. */
	if (done)
		return;
	for (unsigned k = 0; k < INT_LAYOUT__COUNT; k++) {
		for (unsigned hi = 0; hi < 256; hi++) {
			uint16_t bitmap = (uint16_t)(hi << 8);
			uint64_t row = 0;
			for (unsigned bit = 0; bit < 8; bit++) {
				unsigned size = bitmap & isp_bit16(bit) ?
					int_field_size((enum int_layout_kind)k, bit) : 0;
				unsigned off = int_field_offset((enum int_layout_kind)k, bitmap, bit);
				uint64_t fo = size ? off | (size == 8 ? INT_FO_WIDE : 0) : INT_FO_NONE;
				row |= fo << 8 * bit;
			}
			int_fo_rows[k][hi] = row;
			/* at most 16 fields of 8 bytes and the L4S word */
			int_hop_bytes[k][0][hi] = (uint8_t)int_hop_size_rule((enum int_layout_kind)k, bitmap);
			int_hop_bytes[k][1][hi] = (uint8_t)int_hop_size_rule((enum int_layout_kind)k, (uint16_t)hi);
		}
	}
	done = true;
}
