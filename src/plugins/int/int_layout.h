/*
 * int_layout.h - per-hop metadata layout shared by every INT version and by
 * the telemetry reports' optional metadata.
 *
 * A hop block holds the fields of the set instruction bits in bitmap order
 * (MSB = bit 0). Versions differ only in field sizes, so a layout is three
 * masks and a field's offset is a popcount: no per-version parsing code.
 */
#ifndef ISP_INT_LAYOUT_H
#define ISP_INT_LAYOUT_H

#include "../../core/plugin.h"

enum int_layout_kind {
	INT_LAYOUT_V05,        /* v0.5: every field 4 bytes, bit 6 = queue congestion */
	INT_LAYOUT_V10,        /* v1.0: bit 6 (level-2 ports) 8 bytes */
	INT_LAYOUT_V2,         /* v2.x: timestamps and level-2 ports 8 bytes */
	INT_LAYOUT_V05_TS64,   /* GEANT dialect: v0.5 with 8-byte timestamps */
	INT_LAYOUT_V10_TS64,   /* GEANT dialect: v1.0 with 8-byte timestamps */
	INT_LAYOUT_L4S,        /* p4-int-l4s: bits 0-7 only, 8-byte timestamps,
	                          4-byte level-2 ports, + mark/drop word */
	INT_LAYOUT__COUNT
};

/* Pseudo bit for the L4S mark/drop word (it follows bit 7). */
#define INT_BIT_L4S 16

/* Per layout: bits whose field is 8 bytes, bits that carry nothing.
 * The helpers below are inline because every decoded packet asks for a hop
 * size and every per-hop attribute for an offset: with the layout known at
 * the call site they fold to a few instructions. */
struct int_layout_masks {
	uint16_t eight;
	uint16_t zero;
};

extern const struct int_layout_masks int_layout_masks[INT_LAYOUT__COUNT];

/* Bytes of the field of `bit` in this layout (0: the bit carries nothing). */
static inline unsigned int_field_size(enum int_layout_kind k, unsigned bit)
{
	if (bit == INT_BIT_L4S)
		return k == INT_LAYOUT_L4S ? 4 : 0;
	if (bit > 15)
		return 0;
	uint16_t m = isp_bit16(bit);
	if (int_layout_masks[k].zero & m)
		return 0;
	return int_layout_masks[k].eight & m ? 8 : 4;
}

/* Whether the layout carries the L4S word for this bitmap. */
static inline bool int_has_l4s_word(enum int_layout_kind k, uint16_t bitmap)
{
	return k == INT_LAYOUT_L4S && (bitmap & 0x00f0) != 0;
}

/* Bytes of the fields of the set bits of `set` (already without the
 * layout's empty bits). */
static inline unsigned int_fields_bytes(enum int_layout_kind k, uint16_t set)
{
	return 4u * isp_popcount16(set) + 4u * isp_popcount16(set & int_layout_masks[k].eight);
}

/* Offset of the field of `bit` inside a hop block with this bitmap. */
static inline unsigned int_field_offset(enum int_layout_kind k, uint16_t bitmap, unsigned bit)
{
	if (bit == INT_BIT_L4S)
		bit = 8;        /* the mark/drop word follows bit 7's field */
	return int_fields_bytes(k, isp_bits_before16(bit) & bitmap &
				   (uint16_t)~int_layout_masks[k].zero);
}

/* Bytes of one hop block. */
static inline unsigned int_hop_size(enum int_layout_kind k, uint16_t bitmap)
{
	return int_fields_bytes(k, bitmap & (uint16_t)~int_layout_masks[k].zero) +
	       (int_has_l4s_word(k, bitmap) ? 4u : 0u);
}

/* Which part of a field an attribute reads. */
enum int_part {
	INT_PART_WHOLE,        /* the whole field (4 or 8 bytes) */
	INT_PART_HI,           /* upper half (e.g. ingress port) */
	INT_PART_LO,           /* lower half (e.g. egress port) */
	INT_PART_TOP8,         /* top byte (queue ID, buffer ID) */
	INT_PART_LOW24,        /* low 24 bits (occupancies) */
	INT_PART_BYTE1,        /* second byte (drop reason after queue ID) */
};

/*
 * Read one part of a field at p (size bytes, already bounds-checked).
 * Sets *unavailable when the part is all-ones.
 */
uint64_t int_read_part(const uint8_t *p, unsigned size, enum int_part part,
		       bool *unavailable);

/*
 * Per-hop array extraction: `nhops` blocks of `stride` bytes at `stack`,
 * the first block being the LAST hop. Fills out in path order. Returns
 * false when the field is absent or does not fit in a block.
 */
bool int_hops_read(const uint8_t *stack, unsigned nhops, unsigned stride,
		   enum int_layout_kind k, uint16_t bitmap, unsigned bit,
		   enum int_part part, uint8_t type, struct isp_value *out);

#endif
