/*
 * cursor.h - bounds-carrying byte reader and bit-field helpers.
 *
 * A decoder starts from its layer's cursor (isp_layer_cursor: the captured
 * bytes of the layer) and tests each length with isp_cur_has before it
 * reads at fixed offsets below that length, or reads through isp_cur_u8 /
 * isp_cur_be16 / isp_cur_be32, which fail and leave the cursor where it
 * was when the bytes are not there. Either way a length field can never
 * make a read go past the captured bytes (every prefix and byte mutation
 * of the test captures runs under ASan). Multi-byte values are big-endian
 * (network order); bit numbering in the field helpers is MSB-first, as in
 * the INT and telemetry-report specifications.
 */
#ifndef ISP_CURSOR_H
#define ISP_CURSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct isp_cursor {
	const uint8_t *p;   /* next unread byte */
	size_t left;        /* bytes from p to the end of the captured data */
};

static inline struct isp_cursor isp_cursor_make(const uint8_t *p, size_t len)
{
	struct isp_cursor c = { p, len };
	return c;
}

static inline bool isp_cur_has(const struct isp_cursor *c, size_t n)
{
	return c->left >= n;
}

static inline bool isp_cur_skip(struct isp_cursor *c, size_t n)
{
	if (c->left < n)
		return false;
	c->p += n;
	c->left -= n;
	return true;
}

/* Unchecked big-endian loads: callers must have proven the bytes exist
 * (a decoder checks a header's whole length once, then loads its fields). */
static inline uint16_t isp_be16(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static inline uint32_t isp_be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static inline uint32_t isp_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t isp_be64(const uint8_t *p)
{
	return (uint64_t)isp_be32(p) << 32 | isp_be32(p + 4);
}

/* Load an unsigned big-endian value of 1, 2, 3, 4 or 8 bytes. */
static inline uint64_t isp_be_n(const uint8_t *p, unsigned n)
{
	switch (n) {
	case 1: return p[0];
	case 2: return isp_be16(p);
	case 3: return isp_be24(p);
	case 4: return isp_be32(p);
	case 8: return isp_be64(p);
	default: {
		uint64_t v = 0;
		for (unsigned i = 0; i < n && i < 8; i++)
			v = v << 8 | p[i];
		return v;
	}
	}
}

/* Checked reads: false (and nothing consumed) when the bytes are missing. */
static inline bool isp_cur_u8(struct isp_cursor *c, uint8_t *v)
{
	if (c->left < 1)
		return false;
	*v = c->p[0];
	c->p++;
	c->left--;
	return true;
}

static inline bool isp_cur_be16(struct isp_cursor *c, uint16_t *v)
{
	if (c->left < 2)
		return false;
	*v = isp_be16(c->p);
	c->p += 2;
	c->left -= 2;
	return true;
}

static inline bool isp_cur_be32(struct isp_cursor *c, uint32_t *v)
{
	if (c->left < 4)
		return false;
	*v = isp_be32(c->p);
	c->p += 4;
	c->left -= 4;
	return true;
}

/*
 * Bit field of a 32-bit word, MSB-first numbering as the specs draw them:
 * isp_bits32(w, 0, 4) is the top nibble. first + width must be <= 32.
 */
static inline uint32_t isp_bits32(uint32_t word, unsigned first, unsigned width)
{
	return (word >> (32u - first - width)) & (width >= 32 ? 0xffffffffu : ((1u << width) - 1u));
}

static inline uint16_t isp_bits16(uint16_t word, unsigned first, unsigned width)
{
	return (uint16_t)((word >> (16u - first - width)) & ((1u << width) - 1u));
}

/* Mask with MSB-first bits [0, n) of a 16-bit bitmap set: the bits that come
 * before bit n in wire order. */
static inline uint16_t isp_bits_before16(unsigned n)
{
	return n == 0 ? 0 : (uint16_t)(0xffffu << (16u - n));
}

/* Mask of MSB-first bit n of a 16-bit bitmap. */
static inline uint16_t isp_bit16(unsigned n)
{
	return (uint16_t)(0x8000u >> n);
}

/* Bits set in a byte, for the popcounts below. A table rather than the
 * POPCNT instruction (not in the baseline x86-64; the builtin would call
 * libgcc) or SWAR (a dozen operations): hop field offsets are popcounts of
 * the instruction bitmap, asked for every per-hop attribute of a packet. */
static const uint8_t isp_pop8[256] = {
#define ISP_P2(n) n, n + 1, n + 1, n + 2
#define ISP_P4(n) ISP_P2(n), ISP_P2(n + 1), ISP_P2(n + 1), ISP_P2(n + 2)
#define ISP_P6(n) ISP_P4(n), ISP_P4(n + 1), ISP_P4(n + 1), ISP_P4(n + 2)
	ISP_P6(0), ISP_P6(1), ISP_P6(1), ISP_P6(2)
#undef ISP_P6
#undef ISP_P4
#undef ISP_P2
};

static inline unsigned isp_popcount16(uint16_t v)
{
	return (unsigned)isp_pop8[v & 0xff] + isp_pop8[v >> 8];
}

/* All-ones check of a field of `bits` width: the INT "unavailable" value. */
static inline bool isp_all_ones(uint64_t v, unsigned bits)
{
	return bits >= 64 ? v == UINT64_MAX : v == ((UINT64_C(1) << bits) - 1);
}

#endif
