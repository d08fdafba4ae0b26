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

/* Pseudo bit for the cloud-gaming block of the L4S layout: 28 bytes after
 * everything else in the hop when bitmap bit 9 (0x0040) is set (MMT-DPI's
 * reading, mmt-csv-int notes B.4). Unlike the other fields it is not part
 * of int_hop_size: the p4-int-l4s switch sets 0x0040 with mask 0xFFFF and
 * does not write it, so the decoder counts it only when HopML does
 * (int_decode.c, l4s_stride). */
#define INT_BIT_CG 17
#define INT_CG_LEN 28

/* Per layout: bits whose field is 8 bytes, bits that carry nothing.
 * The helpers below are inline because every decoded packet asks for a hop
 * size: with the layout known at the call site they fold to a few
 * instructions. */
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

/* Bytes of one hop block (without the optional cloud-gaming block), by
 * the layout's rules: what int_hop_bytes is filled from. */
static inline unsigned int_hop_size_rule(enum int_layout_kind k, uint16_t bitmap)
{
	return int_fields_bytes(k, bitmap & (uint16_t)~int_layout_masks[k].zero) +
	       (int_has_l4s_word(k, bitmap) ? 4u : 0u);
}

/*
 * The same from a table (int_layout_init): a hop block's bytes are those
 * of the high byte's fields plus those of the low byte's (and of the L4S
 * word, which the low byte decides). Every decoded packet asks, with the
 * bitmap of the packet before it: two loads from one cache line instead
 * of four popcounts.
 */
extern uint8_t int_hop_bytes[INT_LAYOUT__COUNT][2][256];

static inline unsigned int_hop_size(enum int_layout_kind k, uint16_t bitmap)
{
	return (unsigned)int_hop_bytes[k][0][bitmap >> 8] + int_hop_bytes[k][1][bitmap & 0xff];
}

/* Whether the bitmap asks for the cloud-gaming block in this layout. */
static inline bool int_has_cg_block(enum int_layout_kind k, uint16_t bitmap)
{
	return k == INT_LAYOUT_L4S && (bitmap & 0x0040) != 0;
}

/* Offset of the field of `bit` inside a hop block with this bitmap. */
static inline unsigned int_field_offset(enum int_layout_kind k, uint16_t bitmap, unsigned bit)
{
	if (bit == INT_BIT_CG)
		return int_hop_size_rule(k, bitmap); /* after everything else */
	if (bit == INT_BIT_L4S)
		bit = 8;        /* the mark/drop word follows bit 7's field */
	return int_fields_bytes(k, isp_bits_before16(bit) & bitmap &
				   (uint16_t)~int_layout_masks[k].zero);
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

/* Where a part sits in a field of `bits` bits: the value is
 * (field >> shift) & mask, and it is "unavailable" when it equals mask.
 * One description serves the single reads (reports) and the per-hop loops;
 * inline so that a getter with a constant part gets constants. */
struct int_part_geom {
	uint64_t mask;
	unsigned shift;
};

static inline struct int_part_geom int_part_geom(unsigned bits, enum int_part part)
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
	struct int_part_geom g = { width >= 64 ? UINT64_MAX : (UINT64_C(1) << width) - 1, shift };
	return g;
}

/*
 * Read one part of a field at p (size bytes, already bounds-checked).
 * Sets *unavailable when the part is all-ones.
 */
uint64_t int_read_part(const uint8_t *p, unsigned size, enum int_part part,
		       bool *unavailable);

/*
 * Fill int_fo_rows from int_field_offset and int_field_size, and
 * int_hop_bytes from int_hop_size_rule. Called when
 * the int protocol registers (start-up, one thread), so that the hot paths
 * read one table row instead of recomputing popcounts of the bitmap, and
 * the layout rules stay written once.
 */
void int_layout_init(void);

/*
 * Fields of bits 0-7 (every field but the buffer, checksum and L4S words)
 * for each layout and high byte of the bitmap, 8 bits a field: bits
 * [8i, 8i+8) of a row are the offset of bit i's field in a hop block, plus
 * INT_FO_WIDE when the field is 8 bytes, or INT_FO_NONE when the bit is
 * clear or carries nothing (offsets are multiples of 4, so the flag fits
 * in their low bits). The decoder keeps its packet's row in the layer
 * state (one 8-byte move), so a per-hop getter finds its field with a
 * shift instead of popcounts of the bitmap; a number rather than 8 bytes
 * so that it reaches the getter in a register.
 */
#define INT_FO_NONE 0xff
#define INT_FO_WIDE 0x01
extern uint64_t int_fo_rows[INT_LAYOUT__COUNT][256];

static inline uint64_t int_fo_row(enum int_layout_kind k, uint16_t bitmap)
{
	return int_fo_rows[k][bitmap >> 8];
}

/*
 * Offset and size of `bit`'s field in a hop block of this layout and
 * bitmap, `row` being their int_fo_row. False when the hop block has no
 * such field. Bits 8-15, the L4S word and the cloud-gaming block, which
 * few rules ask for, are computed here; whether a field lies inside the
 * hop block as decoded (its stride) is the caller's check.
 */
static inline bool int_field_find(uint64_t row, enum int_layout_kind k,
				  uint16_t bitmap, unsigned bit,
				  unsigned *off, unsigned *size)
{
	if (bit < 8) {
		unsigned fo = (unsigned)(row >> 8 * bit) & 0xff;
		if (fo == INT_FO_NONE)
			return false;
		*off = fo & ~3u;
		*size = 4 + 4 * (fo & INT_FO_WIDE);
		return true;
	}
	if (bit == INT_BIT_L4S)
		*size = int_has_l4s_word(k, bitmap) ? 4 : 0;
	else if (bit == INT_BIT_CG)
		*size = int_has_cg_block(k, bitmap) ? INT_CG_LEN : 0;
	else
		*size = bit < 16 && (bitmap & isp_bit16(bit)) ? int_field_size(k, bit) : 0;
	if (!*size)
		return false;
	*off = int_field_offset(k, bitmap, bit);
	return true;
}

/* The per-hop loop for one field size, so that the load is a single
 * byte-swapping move. Block 0 is the LAST hop on the path (each hop
 * prepends its block): the loop walks the stack forward and fills the
 * array from its end, so the missing bit of hop i reaches position i by
 * doubling (no variable shift per hop). */
static inline __attribute__((always_inline)) void
int_hops_loop(const uint8_t *f, unsigned nhops, unsigned stride, unsigned size,
	      enum int_part part, struct isp_value *out)
{
	struct int_part_geom g = int_part_geom(size * 8, part);
	uint32_t missing = 0;

	for (unsigned i = nhops; i-- > 0; f += stride) {
		uint64_t v = ((size == 8 ? isp_be64(f) : isp_be32(f)) >> g.shift) & g.mask;
		out->v.arr[i] = v;
		/* v <= mask: all-ones carries out of the part's width once
		 * incremented (an add and a shift, not a compare and a flag
		 * move); a part of 64 bits has no room for the carry */
		missing = missing * 2 + (uint32_t)(g.mask == UINT64_MAX ? v == g.mask
						    : (v + 1) >> __builtin_popcountll(g.mask));
	}
	out->missing = missing;
}

/*
 * int_hops_loop's values as text (isp_put_fn): each number and a comma,
 * in path order (the blocks from the last, the first hop) or in the
 * wire's (from the first). NULL at an unavailable value: the writer then
 * takes the array, which marks it. nhops > 0. No pointer is made past
 * either end of the stack.
 */
static inline __attribute__((always_inline)) char *
int_hops_put_loop(const uint8_t *f, unsigned nhops, unsigned stride, unsigned size,
		  enum int_part part, bool wire_order, char *o, struct jsonw_top *top)
{
	struct int_part_geom g = int_part_geom(size * 8, part);
	ptrdiff_t step = wire_order ? (ptrdiff_t)stride : -(ptrdiff_t)stride;

	if (!wire_order)
		f += (size_t)(nhops - 1) * stride;
	for (unsigned left = nhops;; f += step) {
		uint64_t v = ((size == 8 ? isp_be64(f) : isp_be32(f)) >> g.shift) & g.mask;
		if (v == g.mask)
			return NULL;
		o += jsonw_utoa_top(v, o, top);
		*o++ = ',';
		if (--left == 0)
			return o;
	}
}

/* int_hops_read's values as text (int_hops_put_loop), for one field size
 * and order each, so that the load and the walk are fixed in the loop. */
static inline __attribute__((always_inline)) char *
int_hops_put(const uint8_t *field, unsigned nhops, unsigned stride, unsigned size,
	     enum int_part part, bool wire_order, char *o, struct jsonw_top *top)
{
	if (size == 8)
		return wire_order ? int_hops_put_loop(field, nhops, stride, 8, part, true, o, top)
				  : int_hops_put_loop(field, nhops, stride, 8, part, false, o, top);
	return wire_order ? int_hops_put_loop(field, nhops, stride, 4, part, true, o, top)
			  : int_hops_put_loop(field, nhops, stride, 4, part, false, o, top);
}

/*
 * Per-hop array of one part of a field: `field` is the field in the first
 * block of a stack of `nhops` (<= ISP_MAX_HOPS) blocks of `stride` bytes,
 * the first block being the LAST hop; size is the field's (4 or 8). Fills
 * out in path order. The caller has checked that the field fits in a
 * block. Always inline: with a constant part, the shift and mask become
 * immediates.
 */
static inline __attribute__((always_inline)) void
int_hops_read(const uint8_t *field, unsigned nhops, unsigned stride, unsigned size,
	      enum int_part part, uint8_t type, struct isp_value *out)
{
	isp_val_array(out, type);
	out->count = (uint8_t)nhops;
	if (size == 8)
		int_hops_loop(field, nhops, stride, 8, part, out);
	else
		int_hops_loop(field, nhops, stride, 4, part, out);
}

/* Sum of a whole field of one size over the hops, leaving out the
 * unavailable (all-ones) values. The loop runs on the field's address
 * alone (no counter), and a 4-byte field stays 32 bits wide until the
 * add, so that a hop costs a load, a swap, a compare and the add. */
static inline __attribute__((always_inline)) uint64_t
int_hops_sum_loop(const uint8_t *f, unsigned nhops, unsigned stride, unsigned size)
{
	const uint8_t *end = f + (size_t)nhops * stride;
	uint64_t sum = 0;

	for (; f != end; f += stride) {
		if (size == 8) {
			uint64_t v = isp_be64(f);
			sum += v != UINT64_MAX ? v : 0;
		} else {
			uint32_t v = isp_be32(f);
			sum += v != UINT32_MAX ? v : 0;
		}
	}
	return sum;
}

/* The same over a field as int_hops_read finds it: int.latency without
 * building the per-hop array. */
static inline uint64_t int_hops_sum(const uint8_t *field, unsigned nhops, unsigned stride,
				    unsigned size)
{
	return size == 8 ? int_hops_sum_loop(field, nhops, stride, 8)
			 : int_hops_sum_loop(field, nhops, stride, 4);
}

#endif
