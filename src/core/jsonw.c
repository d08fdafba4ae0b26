/*
 * jsonw.c - the JSON text writer.
 */
#include "jsonw.h"

#include <string.h>

void jsonw_init(struct jsonw *w, char *buf, size_t cap)
{
	w->buf = buf;
	w->cap = cap;
	w->len = 0;
	w->overflow = false;
	w->need_comma = false;
}

void jsonw_raw(struct jsonw *w, const char *s, size_t n)
{
	if (w->len + n > w->cap) {
		w->overflow = true;
		return;
	}
	memcpy(w->buf + w->len, s, n);
	w->len += n;
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

static void escaped(struct jsonw *w, const char *s)
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

/* Decimal digits, two at a time (numbers are most of a record). */
static size_t utoa(uint64_t v, char *out)
{
	static const char pairs[201] =
		"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
		"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
		"8081828384858687888990919293949596979899";
	char tmp[20];
	size_t n = 20;

	while (v >= 100) {
		unsigned d = (unsigned)(v % 100) * 2;
		v /= 100;
		tmp[--n] = pairs[d + 1];
		tmp[--n] = pairs[d];
	}
	if (v >= 10) {
		unsigned d = (unsigned)v * 2;
		tmp[--n] = pairs[d + 1];
		tmp[--n] = pairs[d];
	} else {
		tmp[--n] = (char)('0' + v);
	}
	memcpy(out, tmp + n, 20 - n);
	return 20 - n;
}

void jsonw_u64(struct jsonw *w, uint64_t v)
{
	char b[20];

	sep(w);
	jsonw_raw(w, b, utoa(v, b));
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
	size_t n = utoa(ns / 1000000000u, b);
	uint64_t frac = ns % 1000000000u;

	if (digits > 9)
		digits = 9;
	for (unsigned i = digits; i < 9; i++)
		frac /= 10;
	b[n++] = '.';
	for (unsigned i = digits; i > 0; i--) {
		b[n + i - 1] = (char)('0' + frac % 10);
		frac /= 10;
	}
	n += digits;
	sep(w);
	jsonw_raw(w, b, n);
}
