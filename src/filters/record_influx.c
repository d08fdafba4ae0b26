/*
 * record_influx.c - a record as one line of InfluxDB's line protocol:
 *
 *   measurement,tag=value,... field=value,... timestamp
 *
 * The measurement is the report's name, the tags the values the rule keys
 * by (an event's delta-key, a query's group-by), the fields the rest:
 * integers with InfluxDB's `i` suffix, floats as they are, addresses and
 * strings quoted, a per-hop array as one field per hop (`name.0`, `name.1`,
 * ... in the record's order). An absent value is left out (line protocol
 * has no null), and so is an unsigned value past InfluxDB's integers; a
 * record left with no field at all is not a point, and rec_end refuses
 * it. The timestamp is in nanoseconds.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/value.h"
#include "record.h"

/* Text with the characters of its class escaped by a backslash (in
 * names and tag values: comma, space and equals sign, which would end the
 * element; in a measurement: comma and space; in a string field: the
 * quote and the backslash); a line break, which would end the line
 * whatever its escape, becomes a space (escaped where a space is). Runs of
 * plain characters go out in one copy: names rarely need an escape. */
enum { ESC_MEASUREMENT = 1, ESC_NAME = 2, ESC_STRING = 4, ESC_BREAK = 8 };

static const uint8_t esc_class[256] = {
	[','] = ESC_MEASUREMENT | ESC_NAME,
	[' '] = ESC_MEASUREMENT | ESC_NAME,
	['='] = ESC_NAME,
	['"'] = ESC_STRING,
	['\\'] = ESC_STRING,
	['\n'] = ESC_BREAK,
	['\r'] = ESC_BREAK,
};

static void put_escaped(struct rec *r, const char *s, size_t n, unsigned cls)
{
	const unsigned stop = cls | ESC_BREAK;
	size_t i = 0;

	while (i < n) {
		size_t j = i;
		while (j < n && !(esc_class[(uint8_t)s[j]] & stop))
			j++;
		if (j > i)
			jsonw_raw(&r->w, s + i, j - i);
		if (j == n)
			return;
		char e[2];
		size_t k = 0;
		char c = s[j] == '\n' || s[j] == '\r' ? ' ' : s[j];
		if (esc_class[(uint8_t)c] & cls)
			e[k++] = '\\';
		e[k++] = c;
		jsonw_raw(&r->w, e, k);
		i = j + 1;
	}
}

/* An unsigned integer field value, InfluxDB's `i` suffix. */
static void put_int(struct rec *r, uint64_t u)
{
	char b[24];
	size_t n = jsonw_utoa(u, b);

	b[n++] = 'i';
	jsonw_raw(&r->w, b, n);
}

static void put_quoted(struct rec *r, const char *s, size_t n)
{
	jsonw_raw(&r->w, "\"", 1);
	put_escaped(r, s, n, ESC_STRING);
	jsonw_raw(&r->w, "\"", 1);
}

void rec_influx_begin(struct rec *r, const char *measurement, uint64_t ts_ns)
{
	jsonw_init(&r->w, rec_out(r), REC_MAX - 1);
	r->csv = false;
	r->mmt = false;
	r->influx = true;
	r->influx_ts = ts_ns;
	r->influx_fields = 0;
	put_escaped(r, measurement, strlen(measurement), ESC_MEASUREMENT);
}

/* Before a field: the space that ends the tags, or a comma. */
static void field_sep(struct rec *r)
{
	jsonw_raw(&r->w, r->influx_fields ? "," : " ", 1);
	r->influx_fields++;
}

static void field_key(struct rec *r, const char *name, int hop)
{
	char b[16];

	field_sep(r);
	put_escaped(r, name, strlen(name), ESC_NAME);
	if (hop >= 0) {
		b[0] = '.';
		size_t n = 1 + jsonw_utoa((uint64_t)hop, b + 1);
		b[n++] = '=';
		jsonw_raw(&r->w, b, n);
		return;
	}
	jsonw_raw(&r->w, "=", 1);
}

/* A value InfluxDB takes as an integer (the `i` suffix). */
static bool is_integer(const struct isp_value *v)
{
	switch (v->type) {
	case ISP_T_U8:
	case ISP_T_U16:
	case ISP_T_U32:
	case ISP_T_U64:
	case ISP_T_TIMESTAMP:
		return true;
	default:
		return false;
	}
}

/* InfluxDB's integers are signed 64-bit, and a field keeps its first
 * type: an unsigned value past 2^63 - 1 is left out, as a float would
 * make the field's later points (integers) refused. */
static bool fits_field(const struct isp_value *v, uint64_t u)
{
	return !is_integer(v) || u <= INT64_MAX;
}

/* One element of v as a field value. */
static void put_elem(struct rec *r, const struct isp_value *v, uint64_t u)
{
	char b[64];
	size_t n;

	if (is_integer(v)) {
		put_int(r, u);  /* below 2^63 (fits_field) */
		return;
	}
	n = isp_value_text(v, u, b, sizeof(b));
	put_quoted(r, b, n);
}

void rec_influx_field(struct rec *r, const char *name, const struct isp_value *v)
{
	if (!v)
		return;
	if (!v->is_array) {
		if (v->missing & 1)
			return;
		if (v->type == ISP_T_STRING) {
			field_key(r, name, -1);
			put_quoted(r, v->v.str, strnlen(v->v.str, sizeof(v->v.str)));
			return;
		}
		if (v->type == ISP_T_IPV6 || v->type == ISP_T_MAC) {
			char b[64];
			size_t n = isp_value_text(v, 0, b, sizeof(b));
			field_key(r, name, -1);
			put_quoted(r, b, n);
			return;
		}
		if (!fits_field(v, v->v.u))
			return;
		field_key(r, name, -1);
		put_elem(r, v, v->v.u);
		return;
	}
	/* ISP_MAX_HOPS <= 32: a hop's bit is in `missing` */
	_Static_assert(ISP_MAX_HOPS <= 32, "one missing bit per hop");
	for (unsigned h = 0; h < v->count && h < ISP_MAX_HOPS; h++) {
		if (v->missing >> h & 1 || !fits_field(v, v->v.arr[h]))
			continue;
		field_key(r, name, (int)h);
		put_elem(r, v, v->v.arr[h]);
	}
}

void rec_influx_xfield(struct rec *r, const char *name, int hop, const struct xval *v,
		       const char *str)
{
	char b[64];
	size_t n;

	switch ((enum xkind)v->k) {
	case XK_NONE:
		return;
	case XK_INT:
		field_key(r, name, hop);
		if (v->u.i < 0) {
			jsonw_raw(&r->w, "-", 1);
			put_int(r, 0 - (uint64_t)v->u.i);
		} else {
			put_int(r, (uint64_t)v->u.i);
		}
		return;
	case XK_FLOAT:
		if (!isfinite(v->u.f))
			return;         /* InfluxDB has no NaN or infinity */
		field_key(r, name, hop);
		n = jsonw_g15(b, v->u.f);
		/* a whole number stays a float: a field keeps one type */
		if (!memchr(b, '.', n) && !memchr(b, 'e', n) && n + 2 < sizeof(b)) {
			b[n++] = '.';
			b[n++] = '0';
		}
		jsonw_raw(&r->w, b, n);
		return;
	case XK_ADDR4: {
		uint32_t a = htonl(v->u.a4);
		inet_ntop(AF_INET, &a, b, sizeof(b));
		break;
	}
	case XK_ADDR6:
		inet_ntop(AF_INET6, v->u.a6, b, sizeof(b));
		break;
	case XK_MAC:
		snprintf(b, sizeof(b), "%02x:%02x:%02x:%02x:%02x:%02x", v->u.a6[0], v->u.a6[1],
			 v->u.a6[2], v->u.a6[3], v->u.a6[4], v->u.a6[5]);
		break;
	case XK_STR: {
		const char *s = str ? str : v->u.s ? v->u.s : "";
		field_key(r, name, hop);
		put_quoted(r, s, strlen(s));
		return;
	}
	default:
		return;
	}
	field_key(r, name, hop);
	put_quoted(r, b, strlen(b));
}

void rec_influx_tag(struct rec *r, const char *name, const struct isp_value *v)
{
	char b[REC_MAX / 8];
	size_t n;

	if (!v || (!v->is_array && (v->missing & 1)))
		return;
	if (v->is_array) {
		/* a path, a list of queues: the array as JSON is the tag */
		struct jsonw w;
		jsonw_init(&w, b, sizeof(b));
		isp_value_json(&w, v, 6);
		if (w.overflow)
			return;
		n = w.len;
	} else if (v->type == ISP_T_STRING) {
		n = strnlen(v->v.str, sizeof(v->v.str));
		memcpy(b, v->v.str, n);
	} else {
		n = isp_value_text(v, v->v.u, b, sizeof(b));
	}
	if (n == 0)
		return;         /* line protocol has no empty tag value */
	jsonw_raw(&r->w, ",", 1);
	put_escaped(r, name, strlen(name), ESC_NAME);
	jsonw_raw(&r->w, "=", 1);
	put_escaped(r, b, n, ESC_NAME);
}

size_t rec_influx_end(struct rec *r)
{
	char b[32];

	r->influx = false;
	if (r->influx_fields == 0 || r->w.overflow)
		return 0;
	b[0] = ' ';
	jsonw_raw(&r->w, b, 1 + jsonw_utoa(r->influx_ts, b + 1));
	if (r->w.overflow)
		return 0;
	r->w.buf[r->w.len] = 0;
	return r->w.len;
}
