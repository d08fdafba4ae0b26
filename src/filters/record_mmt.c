/*
 * record_mmt.c - the cells of MMT-Probe's CSV rows (format = csv).
 *
 * MMT-Probe formats a value with MMT-DPI's mmt_attr_sprintf and quotes it
 * when its type is text-like (dpi_tool.h is_string_datatype). What follows
 * is that behaviour, so that consumers of MMT-Probe's files read intspect's
 * unchanged (dsl/README.md lists it with the sources):
 *   - numbers bare, in decimal; MMT's floats (avg, var) with three decimals;
 *   - IPv4, IPv6 and MAC addresses and strings in double quotes;
 *   - a timestamp as seconds.microseconds, bare;
 *   - a per-hop array as one bare cell per hop, in the order of the wire
 *     (the last switch first: intspect's arrays are in path order), 0 for
 *     a hop whose value is unavailable, an empty cell for no hop;
 *   - an absent attribute as one cell: "" for a text-like type, else 0.
 * A '"' inside a string is doubled (MMT-Probe does not escape; doubling
 * changes nothing for text without quotes and keeps rows parseable).
 */
#include "record.h"

#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/value.h"

static void put(struct rec *r, const char *s, size_t n)
{
	jsonw_raw(&r->w, s, n);
}

static void put_u64(struct rec *r, uint64_t v)
{
	char b[JSONW_U64_MAX];

	put(r, b, jsonw_utoa(v, b));
}

void rec_mmt_string(struct rec *r, const char *s, size_t n)
{
	size_t run = 0;

	put(r, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '"' && s[i] != '\n')
			continue;
		put(r, s + run, i - run);
		put(r, s[i] == '"' ? "\"\"" : " ", s[i] == '"' ? 2 : 1);
		run = i + 1;
	}
	put(r, s + run, n - run);
	put(r, "\"", 1);
}

static bool quoted_type(unsigned type)
{
	return type == ISP_T_IPV4 || type == ISP_T_IPV6 || type == ISP_T_MAC ||
	       type == ISP_T_STRING;
}

/* One element of a value (the scalar, or hop i of an array). */
static void put_element(struct rec *r, const struct isp_value *v, uint64_t raw)
{
	char b[128];

	switch ((enum isp_type)v->type) {
	case ISP_T_IPV4:
	case ISP_T_IPV6:
	case ISP_T_MAC:
	case ISP_T_STRING: {
		size_t n = isp_value_text(v, raw, b, sizeof(b));
		rec_mmt_string(r, b, n < sizeof(b) ? n : sizeof(b) - 1);
		return;
	}
	case ISP_T_TIMESTAMP: {
		int n = snprintf(b, sizeof(b), "%llu.%06llu",
				 (unsigned long long)(raw / 1000000000u),
				 (unsigned long long)(raw % 1000000000u / 1000u));
		put(r, b, (size_t)n);
		return;
	}
	default:
		put_u64(r, raw);
		return;
	}
}

void rec_mmt_absent(struct rec *r, bool quoted)
{
	put(r, quoted ? "\"\"" : "0", quoted ? 2 : 1);
}

#define NUMBERS ((1u << ISP_T_U8) | (1u << ISP_T_U16) | (1u << ISP_T_U32) | (1u << ISP_T_U64))

/* Whether a value's cells go straight into the buffer (put_cells_at):
 * numbers and per-hop arrays of numbers, present IPv4 addresses and
 * timestamps, the cells of a per-packet record. */
static inline bool cells_direct(const struct isp_value *v)
{
	if (NUMBERS >> v->type & 1)
		return !v->is_array || v->count <= ISP_MAX_HOPS;
	return !v->is_array && !(v->missing & 1) &&
	       (v->type == ISP_T_IPV4 || v->type == ISP_T_TIMESTAMP);
}

/* The most put_cells_at writes: a comma and the cells of every hop. */
#define CELLS_MAX (1 + ISP_MAX_HOPS * (JSONW_U64_MAX + 1))

/* A per-hop array of numbers as cells, in the wire's order: the last hop
 * first. */
static inline __attribute__((always_inline)) char *put_hops_at(struct rec *r, char *o,
								const struct isp_value *v)
{
	if (!v->missing) {
		/* every hop present, the usual case: no test per hop */
		for (unsigned i = v->count; i-- > 0;) {
			o += jsonw_utoa_top(v->v.arr[i], o, &r->top);
			*o++ = ',';
		}
	} else {
		for (unsigned i = v->count; i-- > 0;) {
			if (v->missing & (UINT32_C(1) << i))
				*o++ = '0';
			else
				o += jsonw_utoa_top(v->v.arr[i], o, &r->top);
			*o++ = ',';
		}
	}
	return v->count ? o - 1 : o;    /* the last comma */
}

static inline __attribute__((always_inline)) char *put_cells_at(struct rec *r, char *o,
								 const struct isp_value *v)
{
	*o++ = ',';
	if (v->is_array)        /* of numbers (cells_direct): most fields */
		return put_hops_at(r, o, v);
	if (v->type == ISP_T_IPV4)
		return rec_put_ipv4_quoted(o, (uint32_t)v->v.u);
	if (v->type == ISP_T_TIMESTAMP)
		return rec_put_seconds_kept(r, o, v->v.u);
	if (v->missing & 1)
		*o++ = '0';
	else
		o += jsonw_utoa_top(v->v.u, o, &r->top);
	return o;
}

/* A value of cells_direct, straight into the buffer (one room check). */
static bool put_cells(struct rec *r, const struct isp_value *v)
{
	char *o;

	if (!cells_direct(v) || !(o = jsonw_room(&r->w, CELLS_MAX)))
		return false;
	r->w.len = (size_t)(put_cells_at(r, o, v) - r->w.buf);
	return true;
}

void rec_mmt_fields(struct rec *r, const struct rec_jkey *const *key,
		    const struct isp_value *const *v, unsigned n)
{
	unsigned i = 0;

	while (i < n) {
		/* room for every field left: no check a field */
		char *o = jsonw_room(&r->w, (size_t)(n - i) * CELLS_MAX);
		if (!o)
			break;
		for (; i < n && v[i] && cells_direct(v[i]); i++)
			o = put_cells_at(r, o, v[i]);
		r->w.len = (size_t)(o - r->w.buf);
		if (i < n) {
			rec_mmt_field(r, key[i], v[i]);
			i++;
		}
	}
	for (; i < n; i++)
		rec_mmt_field(r, key[i], v[i]);
}

void rec_mmt_slot_fields(struct rec *r, struct slot *const *at, const struct rec_jkey *const *key,
			 unsigned n, struct slot_cache *sc, const struct isp_packet *p)
{
	const uint32_t gen = sc->gen;   /* slot_put_layer's */
	const uint64_t protos = p->protos;
	const struct isp_layer *l;
	unsigned i = 0;

	while (i < n) {
		/* room for the next REC_BATCH fields */
		unsigned lim = n - i < REC_BATCH ? n : i + REC_BATCH;
		char *o = jsonw_room(&r->w, (size_t)(lim - i) * CELLS_MAX), *end;
		if (!o)
			break;
		for (; i < lim; i++) {
			struct slot *s = at[i];
			/* rec_slot_fields' put, its hops as cells */
			if ((l = slot_put_layer(s, gen, protos, p)) != NULL) {
				end = s->put(p, l, s->arg, o + 1, ISP_PUT_WIRE_ORDER, &r->top);
				if (end) {
					*o = ',';
					o = end - 1;    /* the last comma */
					continue;
				}
			}
			const struct isp_value *v = slot_value(sc, p, s);
			if (!v || !cells_direct(v))
				break;
			o = put_cells_at(r, o, v);
		}
		r->w.len = (size_t)(o - r->w.buf);
		if (i < lim) {
			rec_mmt_field(r, key[i], slot_value(sc, p, at[i]));
			i++;
		}
	}
	for (; i < n; i++)
		rec_mmt_field(r, key[i], slot_value(sc, p, at[i]));
}

void rec_mmt_field(struct rec *r, const struct rec_jkey *k, const struct isp_value *v)
{
	if (v && put_cells(r, v))
		return;
	put(r, ",", 1);
	if (!v) {
		rec_mmt_absent(r, k->mmt_quoted);
		return;
	}
	if (!v->is_array) {
		if (v->missing & 1)
			rec_mmt_absent(r, quoted_type(v->type));
		else
			put_element(r, v, v->v.u);
		return;
	}
	/* the wire's order: the last hop first */
	for (unsigned i = v->count; i-- > 0;) {
		if (i + 1 != v->count)
			put(r, ",", 1);
		if (v->missing & (UINT32_C(1) << i))
			put(r, "0", 1);
		else
			put_element(r, v, v->v.arr[i]);
	}
}

void rec_mmt_xval(struct rec *r, const struct xval *v, const char *str)
{
	char b[64];
	int n;

	switch ((enum xkind)v->k) {
	case XK_NONE:
		put(r, "0", 1);
		return;
	case XK_INT:
		n = snprintf(b, sizeof(b), "%lld", (long long)v->u.i);
		put(r, b, (size_t)n);
		return;
	case XK_FLOAT:
		n = snprintf(b, sizeof(b), "%.3f", isfinite(v->u.f) ? v->u.f : 0.0);
		put(r, b, (size_t)n);
		return;
	case XK_ADDR4: {
		uint32_t a = htonl(v->u.a4);
		inet_ntop(AF_INET, &a, b, sizeof(b));
		rec_mmt_string(r, b, strlen(b));
		return;
	}
	case XK_ADDR6:
		inet_ntop(AF_INET6, v->u.a6, b, sizeof(b));
		rec_mmt_string(r, b, strlen(b));
		return;
	case XK_MAC:
		n = snprintf(b, sizeof(b), "%02x:%02x:%02x:%02x:%02x:%02x", v->u.a6[0],
			     v->u.a6[1], v->u.a6[2], v->u.a6[3], v->u.a6[4], v->u.a6[5]);
		rec_mmt_string(r, b, (size_t)n);
		return;
	case XK_STR: {
		const char *s = str ? str : v->u.s ? v->u.s : "";
		rec_mmt_string(r, s, strlen(s));
		return;
	}
	}
}
