/*
 * jsonw.c - the JSON text writer.
 *
 * A per-packet record is mostly numbers and short keys, written a few
 * million times a second: numbers are converted straight into the buffer
 * (no scratch copy), and strings go through a per-character check only
 * when they may not fit or need escaping.
 */
#include "jsonw.h"

#include <stdio.h>
#include <string.h>

void jsonw_init(struct jsonw *w, char *buf, size_t cap)
{
	w->buf = buf;
	w->cap = cap;
	w->len = 0;
	w->overflow = false;
	w->need_comma = false;
}

static void put(struct jsonw *w, char c)
{
	if (w->len < w->cap)
		w->buf[w->len++] = c;
	else
		w->overflow = true;
}

static void sep(struct jsonw *w)
{
	if (w->need_comma)
		put(w, ',');
	w->need_comma = true;
}

void jsonw_object_begin(struct jsonw *w)
{
	sep(w);
	put(w, '{');
	w->need_comma = false;
}

void jsonw_object_end(struct jsonw *w)
{
	put(w, '}');
	w->need_comma = true;
}

void jsonw_array_begin(struct jsonw *w)
{
	sep(w);
	put(w, '[');
	w->need_comma = false;
}

void jsonw_array_end(struct jsonw *w)
{
	put(w, ']');
	w->need_comma = true;
}

/* The checked, character by character escape: the reference behaviour,
 * also what the fast path falls back to. */
static void escaped_slow(struct jsonw *w, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			put(w, '\\');
			put(w, (char)c);
		} else if (c < 0x20) {
			jsonw_raw(w, "\\u00", 4);
			put(w, hex[c >> 4]);
			put(w, hex[c & 15]);
		} else {
			put(w, (char)c);
		}
	}
}

/* Characters JSON needs escaped: controls, the quote, the backslash; the
 * NUL is marked too, so one lookup also finds the end of the string. */
static const uint8_t special[256] = {
	[0x00] = 1, [0x01] = 1, [0x02] = 1, [0x03] = 1, [0x04] = 1, [0x05] = 1,
	[0x06] = 1, [0x07] = 1, [0x08] = 1, [0x09] = 1, [0x0a] = 1, [0x0b] = 1,
	[0x0c] = 1, [0x0d] = 1, [0x0e] = 1, [0x0f] = 1, [0x10] = 1, [0x11] = 1,
	[0x12] = 1, [0x13] = 1, [0x14] = 1, [0x15] = 1, [0x16] = 1, [0x17] = 1,
	[0x18] = 1, [0x19] = 1, [0x1a] = 1, [0x1b] = 1, [0x1c] = 1, [0x1d] = 1,
	[0x1e] = 1, [0x1f] = 1, ['"'] = 1, ['\\'] = 1,
};

/* Copies the leading run of plain characters while there is room (one
 * table lookup per character: the strings here are short keys and
 * addresses, where a strlen and a memcpy call cost more); what follows (an
 * escape, or the end of the room) takes the checked path, so the bytes and
 * the overflow flag are those of the character-by-character writer. */
static void escaped(struct jsonw *w, const char *s)
{
	char *o = w->buf + w->len;
	size_t room = w->cap - w->len, n = 0;

	while (n < room && !special[(unsigned char)s[n]]) {
		o[n] = s[n];
		n++;
	}
	w->len += n;
	if (s[n])
		escaped_slow(w, s + n);
}

void jsonw_key3(struct jsonw *w, const char *a, const char *b, const char *c)
{
	sep(w);
	put(w, '"');
	escaped(w, a);
	if (b)
		escaped(w, b);
	if (c)
		escaped(w, c);
	jsonw_raw(w, "\":", 2);
	w->need_comma = false;
}

const char jsonw_digit_pairs[201] =
#define P(t) t "0" t "1" t "2" t "3" t "4" t "5" t "6" t "7" t "8" t "9"
	P("0") P("1") P("2") P("3") P("4") P("5") P("6") P("7") P("8") P("9");
#undef P

void jsonw_u64(struct jsonw *w, uint64_t v)
{
	char *o = jsonw_room(w, JSONW_U64_MAX + 1);

	if (o) {
		size_t n = 0;
		if (w->need_comma)
			o[n++] = ',';
		w->need_comma = true;
		w->len += n + jsonw_utoa(v, o + n);
		return;
	}
	char b[JSONW_U64_MAX];
	sep(w);
	jsonw_raw(w, b, jsonw_utoa(v, b));
}

void jsonw_value_text(struct jsonw *w, const char *s, size_t n)
{
	sep(w);
	jsonw_raw(w, s, n);
}

void jsonw_null(struct jsonw *w)
{
	sep(w);
	jsonw_raw(w, "null", 4);
}

void jsonw_string(struct jsonw *w, const char *s)
{
	sep(w);
	put(w, '"');
	escaped(w, s);
	put(w, '"');
}

void jsonw_time(struct jsonw *w, uint64_t ns, unsigned digits)
{
	char b[32];
	size_t n = jsonw_utoa(ns / 1000000000u, b);
	uint32_t frac = (uint32_t)(ns % 1000000000u);

	if (digits > 9)
		digits = 9;
	for (unsigned i = digits; i < 9; i++)
		frac /= 10;
	b[n++] = '.';
	if (digits == 6) {      /* microseconds: every record's "time" */
		jsonw_put2(b + n, frac / 10000);
		jsonw_put4(b + n + 2, frac % 10000);
		n += 6;
		sep(w);
		jsonw_raw(w, b, n);
		return;
	}
	for (unsigned i = digits; i > 0; i--) {
		b[n + i - 1] = (char)('0' + frac % 10);
		frac /= 10;
	}
	n += digits;
	sep(w);
	jsonw_raw(w, b, n);
}

/* ---- "%.15g" (jsonw_g15) ---- */

static size_t g15_slow(char *out, double v)
{
	char b[64];
	int n = snprintf(b, sizeof(b), "%.15g", v);

	if (n < 0 || n > JSONW_G15_MAX)
		n = 0;
	memcpy(out, b, (size_t)n);
	return (size_t)n;
}

#ifdef __SIZEOF_INT128__

static const uint64_t pow10_u64[20] = {
	UINT64_C(1), UINT64_C(10), UINT64_C(100), UINT64_C(1000), UINT64_C(10000),
	UINT64_C(100000), UINT64_C(1000000), UINT64_C(10000000), UINT64_C(100000000),
	UINT64_C(1000000000), UINT64_C(10000000000), UINT64_C(100000000000),
	UINT64_C(1000000000000), UINT64_C(10000000000000), UINT64_C(100000000000000),
	UINT64_C(1000000000000000), UINT64_C(10000000000000000),
	UINT64_C(100000000000000000), UINT64_C(1000000000000000000),
	UINT64_C(10000000000000000000),
};

static const double pow10_d[] = {     /* 10^-5 .. 10^15 */
	1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15,
};

#define G15_LOW UINT64_C(100000000000000)       /* 10^14: 15 digits */
#define G15_HIGH UINT64_C(1000000000000000)     /* 10^15 */

/* m * 2^-s * 10^p rounded to an integer as printf rounds (to nearest,
 * ties to even): exact, the product fitting in 128 bits (m < 2^53,
 * 10^p < 2^64) and 0 < s < 128. */
static uint64_t scaled_round(uint64_t m, unsigned s, unsigned p)
{
	unsigned __int128 prod = (unsigned __int128)m * pow10_u64[p];
	unsigned __int128 half = (unsigned __int128)1 << (s - 1);
	unsigned __int128 rem = prod & ((half << 1) - 1);
	uint64_t n = (uint64_t)(prod >> s);

	if (rem > half || (rem == half && (n & 1)))
		n++;
	return n;
}

#endif

size_t jsonw_g15(char *out, double v)
{
#ifndef __SIZEOF_INT128__
	return g15_slow(out, v);        /* no 128-bit integers (32-bit hosts) */
#else
	uint64_t bits;

	memcpy(&bits, &v, sizeof(bits));
	unsigned bexp = (unsigned)(bits >> 52 & 0x7ff);
	double a = v < 0 ? -v : v;
	/* zero, subnormals, infinities and NaN fail the range test too */
	if (!(a >= 1e-5 && a < 1e15))
		return g15_slow(out, v);
	/* a whole number (averages of integers often are): its digits */
	if (v == (double)(int64_t)v)
		return jsonw_itoa((int64_t)v, out);
	uint64_t m = (bits & ((UINT64_C(1) << 52) - 1)) | UINT64_C(1) << 52;
	int k = (int)bexp - 1023;               /* 2^k <= a < 2^(k+1), -17..49 */
	unsigned s = (unsigned)(52 - k);        /* a = m * 2^-s, 3..69 */
	/* the decimal exponent: floor(k * log10(2)), or one more when a
	 * reaches the next power of ten (the loop below settles the rare
	 * value a double comparison puts on the wrong side) */
	int e = k >= 0 ? k * 1233 >> 12 : -((-k * 1233 + 4095) >> 12);
	if (a >= pow10_d[e + 1 + 5])       /* e is -6..14 here */
		e++;
	uint64_t n;
	for (;;) {
		int p = 14 - e;
		if (p < 0 || p > 19)
			return g15_slow(out, v);
		n = scaled_round(m, s, (unsigned)p);
		if (n >= G15_HIGH)
			e++;
		else if (n < G15_LOW)
			e--;
		else
			break;
	}
	if (e < -4)
		return g15_slow(out, v);        /* "%g" writes it with an exponent */
	/* 15 digits, then where the point goes, the trailing zeros dropped */
	char d[16];
	uint64_t hi = n / 100000000u;
	size_t len = jsonw_utoa(hi, d);         /* 7 digits: hi >= 10^6 */
	jsonw_put8(d + len, (uint32_t)(n - hi * 100000000u));
	size_t nd = 15;
	size_t o = 0;
	if (v < 0)
		out[o++] = '-';
	if (e >= 0) {
		size_t ip = (size_t)e + 1;      /* digits before the point */
		while (nd > ip && d[nd - 1] == '0')
			nd--;
		memcpy(out + o, d, ip);
		o += ip;
		if (nd > ip) {
			out[o++] = '.';
			memcpy(out + o, d + ip, nd - ip);
			o += nd - ip;
		}
		return o;
	}
	while (d[nd - 1] == '0')
		nd--;
	out[o++] = '0';
	out[o++] = '.';
	for (int z = -1; z > e; z--)
		out[o++] = '0';
	memcpy(out + o, d, nd);
	return o + nd;
#endif
}
