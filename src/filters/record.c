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

static void csv_string(struct rec *r, const char *s)
{
	jsonw_raw(&r->w, "\"", 1);
	for (; *s; s++) {
		if (*s == '"')
			jsonw_raw(&r->w, "\"\"", 2);
		else if (*s == '\n')
			jsonw_raw(&r->w, " ", 1);
		else
			jsonw_raw(&r->w, s, 1);
	}
	jsonw_raw(&r->w, "\"", 1);
}

static const char *iso8601(struct rec *r, uint64_t ns)
{
	int64_t sec = (int64_t)(ns / 1000000000u);

	if (sec != r->iso_sec) {
		time_t t = (time_t)sec;
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(r->iso, sizeof(r->iso), "%Y-%m-%dT%H:%M:%S", &tm);
		r->iso_sec = sec;
	}
	return r->iso;
}

void rec_begin(struct rec *r, bool csv, const char *report, const char *type,
	       unsigned type_id, unsigned probe_id, const char *source, uint64_t ts_ns)
{
	char b[96];

	jsonw_init(&r->w, r->buf, sizeof(r->buf) - 1);
	r->csv = csv;
	if (csv) {
		snprintf(b, sizeof(b), "%u,%u,", type_id, probe_id);
		raw(r, b);
		csv_string(r, source);
		snprintf(b, sizeof(b), ",%llu.%06llu,", (unsigned long long)(ts_ns / 1000000000u),
			 (unsigned long long)(ts_ns % 1000000000u / 1000u));
		raw(r, b);
		csv_string(r, report);
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
	k->text = malloc(k->len + 1);
	if (!k->text)
		return -1;
	memcpy(k->text, buf, k->len);
	k->text[k->len] = 0;
	return 0;
}

void rec_jkey_free(struct rec_jkey *k)
{
	free(k->text);
	k->text = NULL;
}

void rec_key_prepared(struct rec *r, const struct rec_jkey *k)
{
	if (r->csv) {
		csv_sep(r);
		return;
	}
	if (r->w.need_comma)
		jsonw_raw(&r->w, ",", 1);
	jsonw_raw(&r->w, k->text, k->len);
	r->w.need_comma = false;
}

void rec_time(struct rec *r, const char *key, uint64_t ns)
{
	rec_key(r, key);
	if (r->csv) {
		char b[48];
		snprintf(b, sizeof(b), "%llu.%06llu", (unsigned long long)(ns / 1000000000u),
			 (unsigned long long)(ns % 1000000000u / 1000u));
		raw(r, b);
	} else {
		jsonw_time(&r->w, ns, 6);
	}
}

void rec_null(struct rec *r)
{
	if (!r->csv)
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
		snprintf(b, sizeof(b), "%lld", (long long)v->u.i);
		jsonw_value_text(w, b, strlen(b));
		return;
	case XK_FLOAT:
		if (!isfinite(v->u.f)) {
			jsonw_null(w);
			return;
		}
		snprintf(b, sizeof(b), "%.15g", v->u.f);
		jsonw_value_text(w, b, strlen(b));
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
		char tmp[1024];
		snprintf(tmp, sizeof(tmp), "%.*s", (int)(n - 2), json + 1);
		csv_string(r, tmp);
	} else if (n && json[0] == '[') {
		char tmp[REC_MAX / 4];
		snprintf(tmp, sizeof(tmp), "%.*s", (int)n, json);
		csv_string(r, tmp);
	} else {
		jsonw_raw(&r->w, json, n);
	}
}

void rec_value(struct rec *r, const struct isp_value *v)
{
	char buf[REC_MAX / 4];
	struct jsonw w;

	if (!r->csv) {
		isp_value_json(&r->w, v, 6);
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
	if (!r->csv)
		jsonw_object_end(&r->w);
	if (r->w.overflow)
		return 0;
	r->buf[r->w.len] = 0;
	return r->w.len;
}
