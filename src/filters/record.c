/*
 * record.c - JSON and CSV record text.
 */
#include "record.h"

#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../core/value.h"

static void raw(struct rec *r, const char *s)
{
	jsonw_raw(&r->w, s, strlen(s));
}

static void csv_sep(struct rec *r)
{
	jsonw_raw(&r->w, ",", 1);
}

/* A quoted CSV cell: '"' doubled, a newline made a space; the runs
 * between them copied whole. */
static void csv_string_n(struct rec *r, const char *s, size_t n)
{
	size_t run = 0;

	jsonw_raw(&r->w, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '"' && s[i] != '\n')
			continue;
		jsonw_raw(&r->w, s + run, i - run);
		if (s[i] == '"')
			jsonw_raw(&r->w, "\"\"", 2);
		else
			jsonw_raw(&r->w, " ", 1);
		run = i + 1;
	}
	jsonw_raw(&r->w, s + run, n - run);
	jsonw_raw(&r->w, "\"", 1);
}

static void csv_string(struct rec *r, const char *s)
{
	csv_string_n(r, s, strlen(s));
}

/* An unsigned number and a comma. */
static void csv_uint(struct rec *r, uint64_t v)
{
	char b[JSONW_U64_MAX + 1];
	size_t n = jsonw_utoa(v, b);

	b[n] = ',';
	jsonw_raw(&r->w, b, n + 1);
}

/* Is what iso8601 keeps for the second of ns missing? (sec_time_len is 0
 * only before the first record: a writer that was not given iso_sec = -1
 * still gets them.) */
static inline bool iso_stale(const struct rec *r, uint64_t ns)
{
	return (int64_t)(ns / 1000000000u) != r->iso_sec || r->sec_time_len == 0;
}

/* The ISO-8601 text of the second, and the pieces of a JSON head that
 * depend on it alone, recomputed when the second changes. */
static const char *iso8601(struct rec *r, uint64_t ns)
{
	int64_t sec = (int64_t)(ns / 1000000000u);

	if (iso_stale(r, ns)) {
		time_t t = (time_t)sec;
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(r->iso, sizeof(r->iso), "%Y-%m-%dT%H:%M:%S", &tm);
		r->iso_sec = sec;
		/* `YYYY-MM-DDTHH:MM:SS.`: strftime's digits, '-', 'T' and ':'
		 * need no escaping, so this is what jsonw_string would write */
		size_t n = strlen(r->iso);
		memcpy(r->sec_ts, r->iso, n);
		r->sec_ts[n++] = '.';
		r->sec_ts_len = n;
		/* `Z","time":SECONDS.`, as rec_time/jsonw_time write it */
		static const char mid[] = "Z\",\"time\":";
		_Static_assert(sizeof(mid) - 1 == SEC_TIME_MID, "the digits' offset");
		memcpy(r->sec_time, mid, sizeof(mid) - 1);
		n = sizeof(mid) - 1;
		n += jsonw_utoa((uint64_t)sec, r->sec_time + n);
		r->sec_time[n++] = '.';
		r->sec_time_len = n;
	}
	return r->iso;
}

/*
 * The head of JSON records of (report, type) up to the opening quote of
 * "ts", escaped once: looked up by pointer (a rule's name and a literal
 * type), prepared on the first record. NULL when it does not fit an entry
 * (a very long report name): the caller then writes it piece by piece.
 */
static const struct rec_head *head_for(struct rec *r, const char *report, const char *type)
{
	for (unsigned i = 0; i < REC_HEADS; i++)
		if (r->heads[i].report == report && r->heads[i].type == type)
			return &r->heads[i];
	if (!report || !type)
		return NULL;

	char b[REC_HEAD_MAX];
	struct jsonw w;

	jsonw_init(&w, b, sizeof(b));
	jsonw_object_begin(&w);
	jsonw_key3(&w, "report", NULL, NULL);
	jsonw_string(&w, report);
	jsonw_key3(&w, "type", NULL, NULL);
	jsonw_string(&w, type);
	jsonw_key3(&w, "ts", NULL, NULL);
	jsonw_raw(&w, "\"", 1);
	if (w.overflow)
		return NULL;

	struct rec_head *h = &r->heads[r->head_next];
	r->head_next = (r->head_next + 1) % REC_HEADS;
	memset(h->text, 0, sizeof(h->text));
	memcpy(h->text, b, w.len);
	h->len = w.len;
	h->report = report;
	h->type = type;
	return h;
}


void rec_cell_sep(struct rec *r)
{
	csv_sep(r);
}

static const struct rec_csv_head *csv_head_for(struct rec *r, const char *report,
					       unsigned type_id, unsigned probe_id,
					       const char *source)
{
	for (unsigned i = 0; i < REC_HEADS; i++) {
		const struct rec_csv_head *h = &r->csv_heads[i];
		if (h->report == report && h->source == source && h->type_id == type_id &&
		    h->probe_id == probe_id && report)
			return h;
	}
	if (!report)
		return NULL;

	/* written by the general path into the record's own buffer, then kept */
	struct jsonw keep = r->w;
	struct rec_csv_head *h = &r->csv_heads[r->csv_head_next];

	csv_uint(r, type_id);
	csv_uint(r, probe_id);
	csv_string(r, source ? source : "intspect");
	jsonw_raw(&r->w, ",", 1);
	size_t pre = r->w.len - keep.len;
	jsonw_raw(&r->w, ",", 1);
	csv_string(r, report);
	size_t all = r->w.len - keep.len;
	bool fits = !r->w.overflow && all <= sizeof(h->text);

	if (fits) {
		memcpy(h->text, r->w.buf + keep.len, all);
		h->pre = pre;
		h->post = all - pre;
		h->report = report;
		h->source = source;
		h->type_id = type_id;
		h->probe_id = probe_id;
		r->csv_head_next = (r->csv_head_next + 1) % REC_HEADS;
	}
	r->w = keep;
	return fits ? h : NULL;
}

void rec_begin(struct rec *r, enum rec_style style, const char *report, const char *type,
	       unsigned type_id, unsigned probe_id, const char *source, uint64_t ts_ns)
{
	char b[96];
	char *const out = rec_out(r);

	jsonw_init(&r->w, out, REC_MAX - 1);
	bool csv = style != REC_JSON;

	r->csv = csv;
	r->mmt = style == REC_MMT_CSV;
	r->influx = false;
	if (csv) {
		const struct rec_csv_head *ch = csv_head_for(r, report, type_id, probe_id, source);
		if (ch) {
			/* PRE SECONDS.MICROSECONDS POST: an empty 64 KiB buffer */
			char *o = out;
			memcpy(o, ch->text, ch->pre);
			if (iso_stale(r, ts_ns))
				iso8601(r, ts_ns);      /* a new second: its digits */
			o = rec_put_seconds_kept(r, o + ch->pre, ts_ns);
			memcpy(o, ch->text + ch->pre, ch->post);
			r->w.len = (size_t)(o - out) + ch->post;
			return;
		}
		csv_uint(r, type_id);
		csv_uint(r, probe_id);
		csv_string(r, source ? source : "intspect");
		/* ,SECONDS.MICROSECONDS, */
		b[0] = ',';
		char *e = rec_put_seconds(b + 1, ts_ns);
		*e++ = ',';
		jsonw_raw(&r->w, b, (size_t)(e - b));
		csv_string(r, report);
		return;
	}

	/* A record a packet: the head is the prepared text, the second's
	 * pieces and the microseconds twice, in fixed-size copies (the
	 * record starts in an empty 64 KiB buffer, so everything fits). */
	const struct rec_head *h = head_for(r, report, type);
	if (h) {
		char *o = out;
		uint32_t us = (uint32_t)(ts_ns % 1000000000u / 1000u);
		size_t n = h->len;

		_Static_assert(REC_HEAD_MAX + sizeof(r->sec_ts) + sizeof(r->sec_time) + 12 <
			       REC_MAX - 1, "a head fits an empty record");
		if (iso_stale(r, ts_ns))
			iso8601(r, ts_ns);      /* a new second: its pieces */
		memcpy(o, h->text, sizeof(h->text));
		memcpy(o + n, r->sec_ts, sizeof(r->sec_ts));
		n += r->sec_ts_len;
		rec_put_us(o + n, us);
		n += 6;
		memcpy(o + n, r->sec_time, sizeof(r->sec_time));
		n += r->sec_time_len;
		rec_put_us(o + n, us);
		r->w.len = n + 6;
		r->w.need_comma = true;
		return;
	}
	jsonw_object_begin(&r->w);
	jsonw_key3(&r->w, "report", NULL, NULL);
	jsonw_string(&r->w, report);
	jsonw_key3(&r->w, "type", NULL, NULL);
	jsonw_string(&r->w, type);
	/* "ts":"YYYY-MM-DDTHH:MM:SS.uuuuuuZ" without printf: records can be
	 * one per packet */
	const char *iso = iso8601(r, ts_ns);
	size_t n = strlen(iso);
	unsigned us = (unsigned)(ts_ns % 1000000000u / 1000u);
	memcpy(b, iso, n);
	b[n++] = '.';
	for (int i = 5; i >= 0; i--, us /= 10)
		b[n + (size_t)i] = (char)('0' + us % 10);
	n += 6;
	b[n++] = 'Z';
	b[n] = 0;
	jsonw_key3(&r->w, "ts", NULL, NULL);
	jsonw_string(&r->w, b);
	rec_time(r, "time", ts_ns);
}

void rec_key(struct rec *r, const char *key)
{
	if (r->csv)
		csv_sep(r);
	else
		jsonw_key3(&r->w, key, NULL, NULL);
}

int rec_jkey_make(struct rec_jkey *k, const char *name)
{
	char buf[1024];
	struct jsonw w;

	jsonw_init(&w, buf, sizeof(buf));
	jsonw_key3(&w, name, NULL, NULL);
	k->len = w.overflow ? 0 : w.len;
	/* a comma before, zeros after up to the padded size: see rec_jkey */
	size_t size = 1 + (k->len + 1 > REC_JKEY_PAD ? k->len + 1 : REC_JKEY_PAD);
	char *a = calloc(1, size);
	if (!a) {
		k->text = NULL;
		return -1;
	}
	a[0] = ',';
	k->text = a + 1;
	memcpy(k->text, buf, k->len);
	/* not lost: rec_jkey_free frees k->text - 1 */
	// cppcheck-suppress memleak
	return 0;
}

void rec_jkey_free(struct rec_jkey *k)
{
	if (k->text)
		free(k->text - 1);
	k->text = NULL;
}

void rec_key_prepared(struct rec *r, const struct rec_jkey *k)
{
	if (r->csv) {
		csv_sep(r);
		return;
	}
	if (r->w.need_comma)
		jsonw_raw(&r->w, k->text - 1, k->len + 1);
	else
		jsonw_raw(&r->w, k->text, k->len);
	r->w.need_comma = false;
}

static void time_value(struct rec *r, uint64_t ns)
{
	if (r->csv) {
		char b[48];
		snprintf(b, sizeof(b), "%llu.%06llu", (unsigned long long)(ns / 1000000000u),
			 (unsigned long long)(ns % 1000000000u / 1000u));
		raw(r, b);
	} else {
		jsonw_time(&r->w, ns, 6);
	}
}

void rec_time(struct rec *r, const char *key, uint64_t ns)
{
	rec_key(r, key);
	time_value(r, ns);
}

void rec_time_prepared(struct rec *r, const struct rec_jkey *k, uint64_t ns)
{
	rec_key_prepared(r, k);
	time_value(r, ns);
}

void rec_null(struct rec *r)
{
	if (r->mmt)
		rec_mmt_absent(r, false);
	else if (!r->csv)
		jsonw_null(&r->w);
}

void xval_json(struct jsonw *w, const struct xval *v, const char *str)
{
	char b[64];

	switch ((enum xkind)v->k) {
	case XK_NONE:
		jsonw_null(w);
		return;
	case XK_INT:
		jsonw_value_text(w, b, jsonw_itoa(v->u.i, b));
		return;
	case XK_FLOAT:
		if (!isfinite(v->u.f)) {
			jsonw_null(w);
			return;
		}
		jsonw_value_text(w, b, jsonw_g15(b, v->u.f));
		return;
	case XK_ADDR4: {
		uint32_t a = htonl(v->u.a4);
		inet_ntop(AF_INET, &a, b, sizeof(b));
		jsonw_string(w, b);
		return;
	}
	case XK_ADDR6:
		inet_ntop(AF_INET6, v->u.a6, b, sizeof(b));
		jsonw_string(w, b);
		return;
	case XK_MAC:
		snprintf(b, sizeof(b), "%02x:%02x:%02x:%02x:%02x:%02x", v->u.a6[0], v->u.a6[1],
			 v->u.a6[2], v->u.a6[3], v->u.a6[4], v->u.a6[5]);
		jsonw_string(w, b);
		return;
	case XK_STR:
		jsonw_string(w, str ? str : v->u.s ? v->u.s : "");
		return;
	}
}

void rec_xval(struct rec *r, const struct xval *v, const char *str_override)
{
	char buf[512];
	struct jsonw w;

	if (!r->csv) {
		xval_json(&r->w, v, str_override);
		return;
	}
	if (r->mmt) {
		rec_mmt_xval(r, v, str_override);
		return;
	}
	jsonw_init(&w, buf, sizeof(buf));
	xval_json(&w, v, str_override);
	if (v->k == XK_NONE)
		return;         /* CSV: an empty cell */
	if (v->k == XK_ADDR4 || v->k == XK_ADDR6 || v->k == XK_MAC) {
		/* MMT-Probe writes addresses unquoted */
		if (w.len >= 2 && !w.overflow)
			jsonw_raw(&r->w, buf + 1, w.len - 2);
		return;
	}
	rec_json_cell(r, buf, w.overflow ? 0 : w.len);
}

void rec_json_cell(struct rec *r, const char *json, size_t n)
{
	if (!r->csv) {
		jsonw_value_text(&r->w, json, n);
		return;
	}
	/* CSV: a JSON string loses its quotes, anything else (numbers stay
	 * bare, arrays) becomes one quoted cell */
	if (n >= 2 && json[0] == '"') {
		csv_string_n(r, json + 1, n - 2);
	} else if (n && json[0] == '[') {
		csv_string_n(r, json, n);
	} else {
		jsonw_raw(&r->w, json, n);
	}
}

#define CSV_NUMBER_TYPES ((1u << ISP_T_U8) | (1u << ISP_T_U16) | (1u << ISP_T_U32) | \
			  (1u << ISP_T_U64))

void rec_value(struct rec *r, const struct isp_value *v)
{
	char buf[REC_MAX / 4];
	struct jsonw w;

	if (!r->csv) {
		isp_value_json(&r->w, v, 6);
		return;
	}
	if (v->is_array && (CSV_NUMBER_TYPES >> v->type & 1)) {
		/* numbers and null: nothing to escape, straight into the cell */
		bool comma = r->w.need_comma;
		jsonw_raw(&r->w, "\"", 1);
		r->w.need_comma = false;
		isp_value_json(&r->w, v, 6);
		r->w.need_comma = comma;
		jsonw_raw(&r->w, "\"", 1);
		return;
	}
	if (!v->is_array && !(v->missing & 1) &&
	    (v->type == ISP_T_IPV4 || v->type == ISP_T_IPV6 || v->type == ISP_T_MAC)) {
		/* MMT-Probe writes addresses unquoted */
		size_t n = isp_value_text(v, v->v.u, buf, sizeof(buf));
		jsonw_raw(&r->w, buf, n);
		return;
	}

	jsonw_init(&w, buf, sizeof(buf));
	isp_value_json(&w, v, 6);
	if (w.overflow) {
		rec_null(r);
		return;
	}
	rec_json_cell(r, buf, w.len);
}

size_t rec_end(struct rec *r)
{
	if (r->influx)
		return rec_influx_end(r);
	if (!r->csv) {
		if (r->w.len < r->w.cap)        /* jsonw_object_end, inline */
			r->w.buf[r->w.len++] = '}';
		else
			r->w.overflow = true;
	}
	if (r->w.overflow)
		return 0;
	r->w.buf[r->w.len] = 0;
	return r->w.len;
}

/* Values put_value writes itself (by type, a bit each): numbers, and as
 * scalars IPv4 addresses and timestamps too. The rest (IPv6, MAC,
 * strings, arrays of those or of timestamps) go to isp_value_json. */
#define NUMBER_TYPES ((1u << ISP_T_U8) | (1u << ISP_T_U16) | (1u << ISP_T_U32) | (1u << ISP_T_U64))
#define SCALAR_TYPES (NUMBER_TYPES | (1u << ISP_T_IPV4) | (1u << ISP_T_TIMESTAMP))

static inline __attribute__((always_inline)) bool put_value_can(const struct isp_value *v)
{
	if (v->is_array)
		return (NUMBER_TYPES >> v->type & 1) && v->count <= ISP_MAX_HOPS;
	return SCALAR_TYPES >> v->type & 1;
}

/* The most put_value writes for v (put_value_can): numbers take at most
 * 20 digits and a comma, "null" is shorter, a timestamp is seconds.micro,
 * an IPv4 address 17 bytes with its quotes. */
static inline __attribute__((always_inline)) size_t value_room(const struct isp_value *v)
{
	return v->is_array ? 2 + (size_t)v->count * (JSONW_U64_MAX + 1) : JSONW_U64_MAX + 8;
}

/* The JSON of a value put_value_can accepts, at o (room checked): the
 * bytes of isp_value_json(v, 6), without its call and check per piece.
 * Inline in the field loops: a per-packet record is mostly these.
 * Returns the end. put_array takes the arrays, put_scalar the rest, so
 * that rec_fields tests is_array once a field. */
static inline __attribute__((always_inline)) char *put_array(struct rec *r, char *o,
							     const struct isp_value *v)
{
	const uint64_t *a = v->v.arr;
	unsigned cnt = v->count;
	uint32_t missing = v->missing;

	*o++ = '[';
	if (!missing) {
		/* every hop present, the usual case: no test per element */
		for (unsigned i = 0; i < cnt; i++) {
			o += jsonw_utoa_top(a[i], o, &r->top);
			*o++ = ',';
		}
	} else {
		for (unsigned i = 0; i < cnt; i++) {
			if (missing & (UINT32_C(1) << i)) {
				memcpy(o, "null", 4);
				o += 4;
			} else {
				o += jsonw_utoa_top(a[i], o, &r->top);
			}
			*o++ = ',';
		}
	}
	if (cnt)
		o[-1] = ']';    /* the last comma */
	else
		*o++ = ']';
	return o;
}

/* A scalar put_value_can accepts (see put_value). */
static inline __attribute__((always_inline)) char *put_scalar(struct rec *r, char *o,
							      const struct isp_value *v)
{
	if (v->missing & 1) {
		memcpy(o, "null", 4);
		return o + 4;
	}
	if (v->type == ISP_T_IPV4)
		return rec_put_ipv4_quoted(o, (uint32_t)v->v.u);
	if (v->type == ISP_T_TIMESTAMP)
		return rec_put_seconds_kept(r, o, v->v.u);
	return o + jsonw_utoa_top(v->v.u, o, &r->top);
}

static inline __attribute__((always_inline)) char *put_value(struct rec *r, char *o,
							     const struct isp_value *v)
{
	return v->is_array ? put_array(r, o, v) : put_scalar(r, o, v);
}

void rec_field(struct rec *r, const struct rec_jkey *k, const struct isp_value *v)
{
	char *o;

	if (r->mmt) {
		rec_mmt_field(r, k, v);
		return;
	}
	/* The common case, a JSON field after another with a short key: one
	 * room check, the key (comma first) in one fixed-size copy of its
	 * padded text, the value straight into the buffer. */
	if (!r->csv && r->w.need_comma && k->len < REC_JKEY_PAD && (!v || put_value_can(v)) &&
	    (o = jsonw_room(&r->w, REC_JKEY_PAD + (v ? value_room(v) : 4))) != NULL) {
		char *end;

		memcpy(o, k->text - 1, REC_JKEY_PAD);
		o += k->len + 1;
		if (v) {
			end = put_value(r, o, v);
		} else {
			memcpy(o, "null", 4);
			end = o + 4;
		}
		r->w.len = (size_t)(end - r->w.buf);
		return;         /* need_comma stays true */
	}
	/* CSV: numbers and timestamps bare, a numeric per-hop array as one
	 * quoted cell, straight into the buffer (what rec_value writes) */
	if (r->csv && v && put_value_can(v) && v->type != ISP_T_IPV4 &&
	    (o = jsonw_room(&r->w, 3 + value_room(v))) != NULL) {
		*o++ = ',';
		if (v->is_array) {
			*o++ = '"';
			o = put_array(r, o, v);
			*o++ = '"';
		} else {
			o = put_scalar(r, o, v);
		}
		r->w.len = (size_t)(o - r->w.buf);
		return;
	}
	rec_key_prepared(r, k);
	if (v)
		rec_value(r, v);
	else
		rec_null(r);
}

/* The most a field written by rec_fields' own loop takes: its padded key
 * copy, then at most a full per-hop array of 20-digit numbers. */
#define FIELD_MAX (REC_JKEY_PAD + 2 + ISP_MAX_HOPS * (JSONW_U64_MAX + 1))

/* A field of rec_fields' own loop at o (FIELD_MAX bytes of room): its key
 * then its value (put_value_can, then put_value, with the array test made
 * once: most fields are per-hop arrays), or NULL, with nothing written
 * that counts, for rec_field's general path. */
static inline __attribute__((always_inline)) char *put_field_at(struct rec *r, char *o,
								 const struct rec_jkey *k,
								 const struct isp_value *v)
{
	if (k->len >= REC_JKEY_PAD)
		return NULL;
	if (!v) {
		memcpy(o, k->text - 1, REC_JKEY_PAD);
		o += k->len + 1;
		memcpy(o, "null", 4);
		return o + 4;
	}
	if (v->is_array) {
		if (!(NUMBER_TYPES >> v->type & 1) || v->count > ISP_MAX_HOPS)
			return NULL;
		memcpy(o, k->text - 1, REC_JKEY_PAD);
		return put_array(r, o + k->len + 1, v);
	}
	if (!(SCALAR_TYPES >> v->type & 1))
		return NULL;
	memcpy(o, k->text - 1, REC_JKEY_PAD);
	return put_scalar(r, o + k->len + 1, v);
}

void rec_fields(struct rec *r, const struct rec_jkey *const *key,
		const struct isp_value *const *val, unsigned n)
{
	unsigned i = 0;

	if (r->mmt) {
		rec_mmt_fields(r, key, val, n);
		return;
	}
	if (r->csv || !r->w.need_comma)
		goto one_by_one;
	while (i < n) {
		/* room for every field left, however large: no check below */
		if (r->w.cap - r->w.len < (size_t)(n - i) * FIELD_MAX)
			goto one_by_one;
		char *o = r->w.buf + r->w.len, *end;
		for (; i < n && (end = put_field_at(r, o, key[i], val[i])) != NULL; i++)
			o = end;
		r->w.len = (size_t)(o - r->w.buf);
		if (i < n) {
			rec_field(r, key[i], val[i]);
			i++;
		}
	}
	return;
one_by_one:
	for (; i < n; i++)
		rec_field(r, key[i], val[i]);
}

void rec_slot_fields(struct rec *r, const struct rec_jkey *const *key, struct slot *const *at,
		     unsigned n, struct slot_cache *sc, const struct isp_packet *p)
{
	if (r->mmt) {
		rec_mmt_slot_fields(r, at, key, n, sc, p);
		return;
	}
	const uint32_t gen = sc->gen;   /* slot_put_layer's */
	const uint64_t protos = p->protos;
	const struct isp_layer *l;
	unsigned i = 0;

	if (r->csv || !r->w.need_comma)
		goto one_by_one;
	while (i < n) {
		/* room for the next REC_BATCH fields, however large */
		unsigned lim = n - i < REC_BATCH ? n : i + REC_BATCH;
		if (r->w.cap - r->w.len < (size_t)(lim - i) * FIELD_MAX)
			goto one_by_one;
		char *o = r->w.buf + r->w.len, *end;
		for (; i < lim; i++) {
			const struct rec_jkey *k = key[i];
			struct slot *s = at[i];

			/* a per-hop attribute no rule read in this packet: from
			 * the packet to the text, its numbers' last comma
			 * closing the array; else (put declined) its value */
			if (k->len < REC_JKEY_PAD && (l = slot_put_layer(s, gen, protos, p)) != NULL) {
				memcpy(o, k->text - 1, REC_JKEY_PAD);
				char *b = o + k->len + 1;
				*b++ = '[';
				end = s->put(p, l, s->arg, b, 0, &r->top);
				if (end) {
					end[-1] = ']';
					o = end;
					continue;
				}
			}
			if (!(end = put_field_at(r, o, k, slot_value(sc, p, s))))
				break;
			o = end;
		}
		r->w.len = (size_t)(o - r->w.buf);
		if (i < lim) {
			rec_field(r, key[i], slot_value(sc, p, at[i]));
			i++;
		}
	}
	return;
one_by_one:
	for (; i < n; i++)
		rec_field(r, key[i], slot_value(sc, p, at[i]));
}
