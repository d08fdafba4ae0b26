/*
 * jsonw.h - append-only JSON text into a caller's buffer, no allocation.
 *
 * The buffer is sized for the largest object intspect writes (a packet
 * dump with every attribute); writes past the end are dropped and flagged
 * so a caller can report instead of emitting a cut object.
 */
#ifndef ISP_JSONW_H
#define ISP_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jsonw {
	char *buf;
	size_t len, cap;
	bool overflow;
	bool need_comma;
};

void jsonw_init(struct jsonw *w, char *buf, size_t cap);

/* Inline: records are made of many short pieces (a prepared key, a comma),
 * and a call per piece cost more than the copy. */
static inline void jsonw_raw(struct jsonw *w, const char *s, size_t n)
{
	char *d = w->buf + w->len;
	size_t room = w->cap - w->len;

	if (n > room) {
		w->overflow = true;
		return;
	}
	w->len += n;
	if (n >= 8 && n <= 32) {
		/* a prepared key: two overlapping fixed-size copies from each
		 * end instead of a call to memcpy for a few bytes */
		if (n >= 16) {
			__builtin_memcpy(d, s, 16);
			__builtin_memcpy(d + n - 16, s + n - 16, 16);
		} else {
			__builtin_memcpy(d, s, 8);
			__builtin_memcpy(d + n - 8, s + n - 8, 8);
		}
		return;
	}
	__builtin_memcpy(d, s, n);
}

/* Room for n more bytes at the end, or NULL (nothing is flagged: the
 * caller falls back to the checked writes, which flag an overflow where
 * they would have). Lets a writer skip the check per character. */
static inline char *jsonw_room(struct jsonw *w, size_t n)
{
	return n <= w->cap - w->len ? w->buf + w->len : NULL;
}

/*
 * Decimal text of v, no terminator, into out (room for JSONW_U64_MAX
 * characters); returns its length. Inline, two digits per table load and
 * 32-bit arithmetic (division by a constant is a multiply): a per-packet
 * record is some sixty numbers.
 */
#define JSONW_U64_MAX 20

extern const char jsonw_digit_pairs[201];

static inline void jsonw_put2(char *o, uint32_t v)  /* v < 100, 2 digits */
{
	__builtin_memcpy(o, jsonw_digit_pairs + 2 * v, 2);
}

static inline void jsonw_put4(char *o, uint32_t v)  /* v < 10000, 4 digits */
{
	jsonw_put2(o, v / 100);
	jsonw_put2(o + 2, v % 100);
}

static inline size_t jsonw_utoa4(char *o, uint32_t v)  /* v < 10000 */
{
	if (v < 10) {
		o[0] = (char)('0' + v);
		return 1;
	}
	if (v < 100) {
		jsonw_put2(o, v);
		return 2;
	}
	if (v < 1000) {
		o[0] = (char)('0' + v / 100);
		jsonw_put2(o + 1, v % 100);
		return 3;
	}
	jsonw_put4(o, v);
	return 4;
}

/*
 * Digits from the front by fixed-point fraction: t holds v / 10^N as a
 * 32.32 number, whose integer part is the leading one or two digits; each
 * following pair is the integer part of the fraction times 100. One
 * multiply and one table load per pair, no division chain (jeaiii's
 * method and constants; checked once against a digit-by-digit writer for
 * every 32-bit value). Most record numbers are per-hop values and 32-bit
 * timestamps; larger ones are 8-digit chunks of the same (jsonw_put8).
 */
static inline uint32_t jsonw_next2_(uint64_t *t)
{
	*t = (uint64_t)(uint32_t)*t * 100u;
	return (uint32_t)(*t >> 32);
}

/* The leading digit or pair of t (1..99), then `pairs` more pairs. */
static inline __attribute__((always_inline)) size_t jsonw_frac_(char *o, uint64_t t,
								 unsigned pairs)
{
	uint32_t lead = (uint32_t)(t >> 32);
	size_t n = 2;

	if (lead < 10) {
		o[0] = (char)('0' + lead);
		n = 1;
	} else {
		jsonw_put2(o, lead);
	}
	/* written out (pairs is a constant at each call): a loop here is
	 * not unrolled at -O2, and its counter cost as much as the pair */
	jsonw_put2(o + n, jsonw_next2_(&t));
	if (pairs >= 2)
		jsonw_put2(o + n + 2, jsonw_next2_(&t));
	if (pairs >= 3)
		jsonw_put2(o + n + 4, jsonw_next2_(&t));
	if (pairs >= 4)
		jsonw_put2(o + n + 6, jsonw_next2_(&t));
	return n + 2 * pairs;
}

static inline __attribute__((always_inline)) size_t jsonw_utoa32(char *o, uint32_t v)
{
	if (v < 100u) {
		if (v < 10u) {
			o[0] = (char)('0' + v);
			return 1;
		}
		jsonw_put2(o, v);
		return 2;
	}
	if (v < 1000000u) {
		if (v < 10000u)  /* v / 10^2 */
			return jsonw_frac_(o, (uint64_t)v * 42949673u, 1);
		/* v / 10^4 */
		return jsonw_frac_(o, (uint64_t)v * 429497u, 2);
	}
	if (v < 100000000u)     /* v / 10^6 */
		return jsonw_frac_(o, ((uint64_t)v * UINT64_C(2251799815) >> 19) + 4, 3);
	/* v / 10^8 */
	return jsonw_frac_(o, ((uint64_t)v * UINT64_C(2882303762) >> 26) + 4, 4);
}

/* v < 10^8 as exactly 8 digits, leading zeros kept: the part of a
 * 64-bit number below its top. v / 10^6 as a 32.32 number (the constant
 * of jsonw_utoa32's 8-digit case, exact for every v < 10^8, which
 * check_jsonw tests one by one): four pairs, no division. */
static inline __attribute__((always_inline)) void jsonw_put8(char *o, uint32_t v)
{
	uint64_t t = ((uint64_t)v * UINT64_C(2251799815) >> 19) + 4;

	jsonw_put2(o, (uint32_t)(t >> 32));
	jsonw_put2(o + 2, jsonw_next2_(&t));
	jsonw_put2(o + 4, jsonw_next2_(&t));
	jsonw_put2(o + 6, jsonw_next2_(&t));
}

/* Past 2^32 (device and epoch nanosecond timestamps): the top part, below
 * 2^32 up to 4.3 * 10^17, by jsonw_utoa32, then 8 digits at a time. */
static inline __attribute__((always_inline)) size_t jsonw_utoa(uint64_t v, char *out)
{
	if (v <= UINT32_MAX)
		return jsonw_utoa32(out, (uint32_t)v);
	uint64_t hi = v / 100000000u;
	uint32_t lo = (uint32_t)(v - hi * 100000000u);
	size_t n;

	if (hi <= UINT32_MAX) {
		n = jsonw_utoa32(out, (uint32_t)hi);
	} else {
		uint32_t top = (uint32_t)(hi / 100000000u);    /* below 1845 */
		n = jsonw_utoa32(out, top);
		jsonw_put8(out + n, (uint32_t)(hi - (uint64_t)top * 100000000u));
		n += 8;
	}
	jsonw_put8(out + n, lo);
	return n + 8;
}

/*
 * The digits above the last 8 of the last number past 2^32 written, kept
 * for the next: a record's device timestamps (a dozen a packet, nanoseconds
 * since boot or the epoch) share them, and so do those of the packets
 * that follow. A number within 10^8 above `base` is then one subtraction,
 * a 16-byte copy and jsonw_put8. base 0 (zeroed memory) holds nothing: no
 * number tested against it is that small.
 */
struct jsonw_top {
	uint64_t base;          /* the top part times 10^8 */
	size_t n;               /* digits in text, at most 12 */
	char text[JSONW_U64_MAX];
};

/* jsonw_utoa's text, through top. At most JSONW_U64_MAX bytes written. */
static inline __attribute__((always_inline)) size_t jsonw_utoa_top(uint64_t v, char *out,
								    struct jsonw_top *top)
{
	if (v <= UINT32_MAX)
		return jsonw_utoa32(out, (uint32_t)v);
	uint64_t lo = v - top->base;

	if (__builtin_expect(lo >= 100000000u, 0)) {
		uint64_t hi = v / 100000000u;
		top->base = hi * 100000000u;
		top->n = jsonw_utoa(hi, top->text);
		lo = v - top->base;
	}
	/* n read once: the digits' stores could be to top itself */
	size_t n = top->n;

	_Static_assert(sizeof(top->text) >= 16, "the top part in one fixed-size copy");
	__builtin_memcpy(out, top->text, 16);
	jsonw_put8(out + n, (uint32_t)lo);
	return n + 8;
}

void jsonw_object_begin(struct jsonw *w);
void jsonw_object_end(struct jsonw *w);
void jsonw_array_begin(struct jsonw *w);
void jsonw_array_end(struct jsonw *w);
/* Key of the next member; parts are concatenated ("ip" "." "src"). */
void jsonw_key3(struct jsonw *w, const char *a, const char *b, const char *c);
void jsonw_u64(struct jsonw *w, uint64_t v);
void jsonw_null(struct jsonw *w);
/* A value already in JSON text (a number, an array built elsewhere). */
void jsonw_value_text(struct jsonw *w, const char *s, size_t n);
void jsonw_string(struct jsonw *w, const char *s);
/* Seconds with `digits` decimals from nanoseconds. */
void jsonw_time(struct jsonw *w, uint64_t ns, unsigned digits);

/*
 * The text printf's "%.15g" gives for v, byte for byte, into out (room
 * for JSONW_G15_MAX characters, no terminator); its length. Query
 * results (averages, variances, rates) are written this way a million
 * times a window on a large table, where snprintf took ~1,500
 * instructions a number. 10^-5 <= |v| < 10^15 is converted by exact
 * integer arithmetic (jsonw.c); other values, and those whose text is in
 * exponent form, go to snprintf.
 */
#define JSONW_G15_MAX 32
size_t jsonw_g15(char *out, double v);
/* The text of "%lld" (JSONW_U64_MAX + 1 characters at most). */
static inline size_t jsonw_itoa(int64_t v, char *out)
{
	if (v >= 0)
		return jsonw_utoa((uint64_t)v, out);
	out[0] = '-';
	return 1 + jsonw_utoa(0 - (uint64_t)v, out + 1);
}

#endif
