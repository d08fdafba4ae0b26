/*
 * partial.c - query windows as mergeable partial states (output-format =
 * partial), and those states read back by a merge stage (pmerge.c).
 *
 * The encoding, version 2, is documented in dsl/README.md ("Partial
 * windows"): one JSON object per group and window, carrying what each
 * function keeps (exact 128-bit sums as decimal text, Welford moments as
 * doubles written to round-trip, sketches as values or bucket counters,
 * first/last with their order), and one watermark record per closed
 * window. Orders are relative to the window's start, in packet time, so
 * that partials of instances reading different inputs compare.
 */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partial.h"
#include "query_int.h"

uint64_t partial_fingerprint(const struct qrule *r)
{
	uint64_t h = 0xcbf29ce484222325u;
	const uint64_t prime = 0x100000001b3u;

	for (unsigned b = 0; b < 8; b++)
		h = (h ^ (uint8_t)(r->period_ns >> (8 * b))) * prime;
	for (unsigned k = 0; k < r->ngroup + r->nitems; k++) {
		const char *t = k < r->ngroup ? r->group_names[k] : r->items[k - r->ngroup].text;
		for (; *t; t++)
			h = (h ^ (uint8_t)*t) * prime;
		h = (h ^ (k < r->ngroup ? 1u : 2u)) * prime;
	}
	return h;
}

/* ---- writing ---- */

static void put_key(struct jsonw *w, const char *key)
{
	jsonw_key3(w, key, NULL, NULL);
}

static void put_u64(struct jsonw *w, const char *key, uint64_t v)
{
	put_key(w, key);
	jsonw_u64(w, v);
}

static void put_i64_value(struct jsonw *w, int64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "%" PRId64, v);
	jsonw_value_text(w, b, strlen(b));
}

static void put_i64(struct jsonw *w, const char *key, int64_t v)
{
	put_key(w, key);
	put_i64_value(w, v);
}

/* A double that reads back to the same bits (null when not finite: JSON
 * has no infinity, and such a state reads back as absent). */
static void put_f64(struct jsonw *w, const char *key, double v)
{
	char b[40];

	put_key(w, key);
	if (!isfinite(v)) {
		jsonw_null(w);
		return;
	}
	snprintf(b, sizeof(b), "%.17g", v);
	if (!strpbrk(b, ".eE"))
		strcat(b, ".0");        /* a real, whatever its value */
	jsonw_value_text(w, b, strlen(b));
}

static void put_i128(struct jsonw *w, const char *key, const uint64_t words[2])
{
	__int128 v;
	char b[48], *p = b + sizeof(b);
	bool neg;

	memcpy(&v, words, sizeof(v));
	neg = v < 0;
	unsigned __int128 u = neg ? -(unsigned __int128)v : (unsigned __int128)v;
	*--p = 0;
	do {
		*--p = (char)('0' + (unsigned)(u % 10));
		u /= 10;
	} while (u);
	if (neg)
		*--p = '-';
	put_key(w, key);
	jsonw_string(w, p);
}

static void put_hex(struct jsonw *w, const char *key, const uint8_t *b, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char t[2 * 64];

	put_key(w, key);
	jsonw_value_text(w, "\"", 1);
	/* in pieces: a key of long per-hop arrays is kilobytes */
	for (size_t at = 0; at < n; at += 64) {
		size_t k = n - at < 64 ? n - at : 64;
		for (size_t i = 0; i < k; i++) {
			t[2 * i] = digits[b[at + i] >> 4];
			t[2 * i + 1] = digits[b[at + i] & 15];
		}
		jsonw_raw(w, t, 2 * k);
	}
	jsonw_raw(w, "\"", 1);
}

/* A kept value (min, max, first, last): one member named by its kind. */
static void put_xval(struct jsonw *w, const struct agg_state *s)
{
	const struct xval *v = &s->a.val.u.v;

	switch ((enum xkind)v->k) {
	case XK_INT: put_i64(w, "i", v->u.i); break;
	case XK_FLOAT: put_f64(w, "f", v->u.f); break;
	case XK_ADDR4: put_u64(w, "a4", v->u.a4); break;
	case XK_ADDR6: put_hex(w, "a6", v->u.a6, 16); break;
	case XK_MAC: put_hex(w, "mac", v->u.a6, 6); break;
	case XK_STR:
		put_key(w, "s");
		jsonw_string(w, s->a.val.u.str.text);
		break;
	case XK_NONE: break;
	}
}

static void put_sketch(struct jsonw *w, const struct qsketch *q)
{
	struct qs_view v;

	qs_view(q, &v);
	if (!v.count) {
		put_key(w, "v");
		jsonw_array_begin(w);
		for (uint64_t k = 0; k < v.n; k++)
			put_i64_value(w, v.values[k]);
		jsonw_array_end(w);
		return;
	}
	/* the counters from the first that counts to the last */
	unsigned a = 0, b = v.cap;
	while (a < b && !v.count[a])
		a++;
	while (b > a && !v.count[b - 1])
		b--;
	put_i64(w, "min", v.min);
	put_i64(w, "max", v.max);
	/* buckets numbered from 0 for the values from 0 up, below 0 for the
	 * others: a bucket's number is the same as before the sketch took
	 * values below 0 (partial windows of older instances merge) */
	put_i64(w, "lo", (int64_t)(v.lo + a) - (int64_t)QS_HALF);
	put_key(w, "c");
	jsonw_array_begin(w);
	for (unsigned k = a; k < b; k++)
		jsonw_u64(w, v.count[k]);
	jsonw_array_end(w);
}

/* One function's kept state: null when nothing was added. */
static void put_state(struct jsonw *w, const struct qitem *it, const uint8_t *kept, size_t size)
{
	struct agg_state s;

	agg_load(&s, kept, size);
	if (s.n == 0) {
		jsonw_null(w);
		return;
	}
	jsonw_object_begin(w);
	put_u64(w, "n", s.n);
	if (it->diff_ends) {    /* f(diff(x)): the window's ends */
		put_u64(w, "o1", s.a.ends.first_order);
		put_i64(w, "x1", s.a.ends.first);
		put_u64(w, "o2", s.a.ends.last_order);
		put_i64(w, "x2", s.a.ends.last);
		jsonw_object_end(w);
		return;
	}
	switch ((enum agg_kind)it->agg) {
	case AGG_COUNT:
		break;
	case AGG_SUM:
	case AGG_RATE:
		if (s.is_float)
			put_f64(w, "f", s.a.sum.u.f);
		else
			put_i64(w, "i", s.a.sum.u.i);
		break;
	case AGG_AVG:
	case AGG_VAR:
		if (s.is_float) {
			double mean, m2;
			memcpy(&mean, s.a.m.s1, sizeof(mean));
			memcpy(&m2, s.a.m.s2, sizeof(m2));
			put_f64(w, "mean", mean);
			if (it->agg == AGG_VAR)
				put_f64(w, "m2", m2);
		} else {
			put_i128(w, "s1", s.a.m.s1);
			if (it->agg == AGG_VAR) {
				put_i128(w, "s2", s.a.m.s2);
				put_i64(w, "shift", s.a.m.shift);       /* s1, s2: of x − shift */
			}
		}
		break;
	case AGG_FIRST:
	case AGG_LAST:
		put_u64(w, "o", s.a.val.order);
		put_xval(w, &s);
		break;
	case AGG_MIN:
	case AGG_MAX:
		put_xval(w, &s);
		break;
	case AGG_PCT:
		put_sketch(w, &s.a.q);
		break;
	case AGG_DIFF:          /* refused by the compiler */
		break;
	}
	jsonw_object_end(w);
}

/* The head every partial record starts with. */
static void put_head(struct isp_engine *e, unsigned i, uint64_t ts)
{
	const struct qrule *r = &e->prog->queries[i];
	struct rec *rec = &e->rec;
	char fp[20];

	rec_begin(rec, REC_JSON, r->name, "partial", 999, e->prog->probe_id,
		  e->prog->source_name, ts);
	put_u64(&rec->w, "partial", PARTIAL_VERSION);
	put_u64(&rec->w, "instance", e->prog->probe_id);
	snprintf(fp, sizeof(fp), "%016" PRIx64, partial_fingerprint(r));
	put_key(&rec->w, "rule");
	jsonw_string(&rec->w, fp);
}

void partial_encode_group(struct isp_engine *e, unsigned i, struct qgroup *g,
			  const struct isp_value *vals, const bool *present, unsigned ng)
{
	const struct qrule *r = &e->prog->queries[i];
	struct query_state *qs = &e->q[i];
	struct jsonw *w = &e->rec.w;

	put_head(e, i, query_shown_end(qs));
	put_u64(w, "window_start", qs->win_start);
	put_u64(w, "window_end", qs->win_end);
	put_u64(w, "first", g->first);
	if (query_span_known(qs)) {
		/* the packet times of a whole-input window, which the merge
		 * gives as its window */
		put_u64(w, "seen_lo", qs->seen_lo);
		put_u64(w, "seen_hi", qs->seen_hi);
	}
	/* the group's key bytes, which the merge stage groups by, then its
	 * values for a reader */
	struct tentry *te = (struct tentry *)((uint8_t *)g - sizeof(struct tentry));
	put_hex(w, "key", tentry_key(&qs->groups, te), tentry_keylen(te));
	put_key(w, "group");
	jsonw_object_begin(w);
	for (unsigned j = 0; j < ng; j++) {
		rec_key_prepared(&e->rec, &qs->group_keys[j]);
		if (present[j])
			rec_value(&e->rec, &vals[j]);
		else
			rec_null(&e->rec);
	}
	jsonw_object_end(w);
	put_key(w, "states");
	jsonw_array_begin(w);
	for (unsigned k = 0; k < r->nitems; k++) {
		const struct qitem *it = &r->items[k];
		const uint8_t *cell = cell_of(qs, g, k);
		size_t size = qs->cell_size[k];
		if (!it->per_hop) {
			put_state(w, it, cell, size);
			continue;
		}
		const struct qhops *c = (const struct qhops *)cell;
		jsonw_array_begin(w);
		for (unsigned h = 0; h < c->nh; h++)
			put_state(w, it, c->hops + h * size, size);
		jsonw_array_end(w);
	}
	jsonw_array_end(w);
}

void partial_watermark(struct isp_engine *e, unsigned i, uint64_t end, uint64_t groups)
{
	const struct qrule *r = &e->prog->queries[i];
	struct query_state *qs = &e->q[i];

	put_head(e, i, end == UINT64_MAX || end == 0 ? e->last_ts : end);
	if (end == 0) {
		put_key(&e->rec.w, "start");
		jsonw_value_text(&e->rec.w, "true", 4);
		put_u64(&e->rec.w, "window_start", groups);
	} else if (end == UINT64_MAX) {
		put_key(&e->rec.w, "end");
		jsonw_value_text(&e->rec.w, "true", 4);
		put_u64(&e->rec.w, "last", qs->partial_last);
	} else {
		put_u64(&e->rec.w, "watermark", end);
		put_u64(&e->rec.w, "groups", groups);
		put_u64(&e->rec.w, "after", qs->partial_last);
		qs->partial_last = end;
	}
	size_t len = rec_end(&e->rec);
	if (len == 0)
		return;
	struct isp_record rec = { r->name, "", 0, e->rec.w.buf, len, false };
	for (unsigned c = 0; c < r->nchannels; c++) {
		enum rec_format f = r->fmts.n && r->fmts.of ? (enum rec_format)r->fmts.of[c] : r->format;
		struct isp_channel *ch = e->channels ? e->channels[r->channels[c]] : NULL;
		if (f != FMT_PARTIAL)
			continue;
		if (ch && e->stage)
			isp_channel_stage_add(&e->stage[r->channels[c]], &rec, &qs->st.dropped);
		else if (!ch || !isp_channel_submit(ch, &rec))
			qs->st.dropped++;
	}
}

/* ---- reading ---- */

static int fail(char *err, size_t errlen, const char *what)
{
	snprintf(err, errlen, "%s", what);
	return -1;
}

static bool get_i64(const json_t *o, const char *key, int64_t *out)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_integer(v))
		return false;
	*out = json_integer_value(v);
	return true;
}

static bool get_u64(const json_t *o, const char *key, uint64_t *out)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*out = (uint64_t)json_integer_value(v);
	return true;
}

static bool get_f64(const json_t *o, const char *key, double *out)
{
	const json_t *v = json_object_get(o, key);

	if (!json_is_number(v))
		return false;
	*out = json_number_value(v);
	return true;
}

static size_t unhex(const char *t, uint8_t *out, size_t cap)
{
	size_t n = strlen(t);

	if (n % 2 || n / 2 > cap)
		return SIZE_MAX;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned v = 0;
		for (unsigned k = 0; k < 2; k++) {
			char c = t[2 * i + k];
			unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0') :
				     c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) : 16;
			if (d > 15)
				return SIZE_MAX;
			v = v << 4 | d;
		}
		out[i] = (uint8_t)v;
	}
	return n / 2;
}

static bool get_i128(const json_t *o, const char *key, uint64_t words[2])
{
	const char *t = json_string_value(json_object_get(o, key));
	unsigned __int128 u = 0;
	bool neg;

	if (!t)
		return false;
	neg = *t == '-';
	t += neg;
	if (!*t || strlen(t) > 39)
		return false;
	for (; *t; t++) {
		if (*t < '0' || *t > '9')
			return false;
		u = u * 10 + (unsigned)(*t - '0');
	}
	__int128 v = neg ? -(__int128)u : (__int128)u;
	memcpy(words, &v, sizeof(v));
	return true;
}

static bool get_xval(const json_t *o, struct agg_state *s)
{
	const json_t *v;
	struct xval *x = &s->a.val.u.v;

	if ((v = json_object_get(o, "i")) && json_is_integer(v)) {
		x->k = XK_INT;
		x->u.i = json_integer_value(v);
	} else if ((v = json_object_get(o, "f")) && json_is_number(v)) {
		x->k = XK_FLOAT;
		x->u.f = json_number_value(v);
	} else if ((v = json_object_get(o, "a4")) && json_is_integer(v) &&
		   json_integer_value(v) >= 0 && json_integer_value(v) <= UINT32_MAX) {
		x->k = XK_ADDR4;
		x->u.a4 = (uint32_t)json_integer_value(v);
	} else if ((v = json_object_get(o, "a6")) && json_is_string(v)) {
		x->k = XK_ADDR6;
		return unhex(json_string_value(v), x->u.a6, 16) == 16;
	} else if ((v = json_object_get(o, "mac")) && json_is_string(v)) {
		x->k = XK_MAC;
		return unhex(json_string_value(v), x->u.a6, 6) == 6;
	} else if ((v = json_object_get(o, "s")) && json_is_string(v)) {
		s->a.val.u.str.k = XK_STR;
		snprintf(s->a.val.u.str.text, sizeof(s->a.val.u.str.text), "%s",
			 json_string_value(v));
	} else {
		return false;
	}
	return true;
}

static bool get_sketch(const json_t *o, struct qsketch *q, struct arena *scratch)
{
	const json_t *v = json_object_get(o, "v"), *c = json_object_get(o, "c");
	size_t k;
	const json_t *x;

	memset(q, 0, sizeof(*q));
	if (json_is_array(v)) {
		if (json_array_size(v) == 0 || json_array_size(v) > QS_SMALL)
			return false;
		json_array_foreach(v, k, x) {
			if (!json_is_integer(x) ||
			    qs_add(q, (int64_t)json_integer_value(x), arena_alloc_cb, scratch) != 0)
				return false;
		}
		return true;
	}
	struct qs_view view = { 0 };
	int64_t lo;
	if (!json_is_array(c) || json_array_size(c) == 0 || json_array_size(c) > QS_BUCKETS ||
	    !get_i64(o, "min", &view.min) || !get_i64(o, "max", &view.max) || !get_i64(o, "lo", &lo) ||
	    lo < -(int64_t)QS_HALF || lo >= (int64_t)QS_HALF)
		return false;
	uint32_t *count = arena_alloc(scratch, json_array_size(c) * sizeof(*count));
	if (!count)
		return false;
	json_array_foreach(c, k, x) {
		if (!json_is_integer(x) || json_integer_value(x) < 0 ||
		    json_integer_value(x) > UINT32_MAX)
			return false;
		count[k] = (uint32_t)json_integer_value(x);
	}
	view.count = count;
	view.lo = (unsigned)(lo + (int64_t)QS_HALF);
	view.cap = (unsigned)json_array_size(c);
	return qs_merge_view(q, &view, arena_alloc_cb, scratch) == 0;
}

/* A state read back (zeroed: nothing added, for null). */
static bool get_state(const json_t *o, const struct qitem *it, struct agg_state *s,
		      struct arena *scratch)
{
	memset(s, 0, sizeof(*s));
	if (json_is_null(o))
		return true;
	uint64_t n;
	/* (n shares its word with a flag; JSON's integers stop below 2^63) */
	if (!json_is_object(o) || !get_u64(o, "n", &n) || n == 0 || n >> 63)
		return false;
	s->n = n;
	if (it->diff_ends)
		return get_u64(o, "o1", &s->a.ends.first_order) &&
		       get_i64(o, "x1", &s->a.ends.first) &&
		       get_u64(o, "o2", &s->a.ends.last_order) && get_i64(o, "x2", &s->a.ends.last);
	switch ((enum agg_kind)it->agg) {
	case AGG_COUNT:
		return true;
	case AGG_SUM:
	case AGG_RATE:
		if (json_is_integer(json_object_get(o, "i"))) {
			s->a.sum.u.i = json_integer_value(json_object_get(o, "i"));
			return true;
		}
		s->is_float = 1;
		return get_f64(o, "f", &s->a.sum.u.f);
	case AGG_AVG:
	case AGG_VAR:
		if (json_object_get(o, "s1")) {
			/* no shift: sums of the values themselves (shift 0) */
			if (it->agg == AGG_VAR && json_object_get(o, "shift") &&
			    !get_i64(o, "shift", &s->a.m.shift))
				return false;
			return get_i128(o, "s1", s->a.m.s1) &&
			       (it->agg == AGG_AVG || get_i128(o, "s2", s->a.m.s2));
		} else {
			double mean, m2 = 0;
			if (!get_f64(o, "mean", &mean) || (it->agg == AGG_VAR && !get_f64(o, "m2", &m2)))
				return false;
			s->is_float = 1;
			memcpy(s->a.m.s1, &mean, sizeof(mean));
			memcpy(s->a.m.s2, &m2, sizeof(m2));
			return true;
		}
	case AGG_FIRST:
	case AGG_LAST:
		return get_u64(o, "o", &s->a.val.order) && get_xval(o, s);
	case AGG_MIN:
	case AGG_MAX:
		return get_xval(o, s);
	case AGG_PCT:
		return get_sketch(o, &s->a.q, scratch) && s->a.q.n == s->n;
	case AGG_DIFF:
		return false;
	}
	return false;
}

int partial_fold(struct isp_engine *e, unsigned i, const json_t *rec, struct arena *scratch,
		 struct qgroup **group, char *err, size_t errlen)
{
	const struct qrule *r = &e->prog->queries[i];
	const json_t *states = json_object_get(rec, "states");
	const char *hex = json_string_value(json_object_get(rec, "key"));
	uint8_t key[8192];
	uint64_t first;

	if (!hex || !json_is_array(states) || json_array_size(states) != r->nitems ||
	    !get_u64(rec, "first", &first))
		return fail(err, errlen, "a partial group needs key, first and one state per select item");
	size_t klen = unhex(hex, key, sizeof(key));
	if (klen == SIZE_MAX)
		return fail(err, errlen, "key is not hexadecimal, or too long");
	/* every state read before any is folded: a bad record changes nothing */
	struct agg_state flat[64];
	if (r->nitems > 64)
		return fail(err, errlen, "more select items than a partial holds");
	for (unsigned k = 0; k < r->nitems; k++) {
		const json_t *o = json_array_get(states, k);
		const struct qitem *it = &r->items[k];
		if (it->per_hop) {
			if (!json_is_array(o) || json_array_size(o) > ISP_MAX_HOPS)
				return fail(err, errlen, "a per-hop state is an array of hops");
			size_t h;
			const json_t *x;
			json_array_foreach(o, h, x) {
				struct agg_state s;
				if (!get_state(x, it, &s, scratch))
					return fail(err, errlen, "a hop's state does not read");
			}
		} else if (!get_state(o, it, &flat[k], scratch)) {
			return fail(err, errlen, "a state does not read as its function's");
		}
	}
	struct qgroup *g = query_group_get(e, i, key, klen, first);
	*group = g;
	if (!g) {
		e->q[i].st.overflows++;
		return 0;
	}
	for (unsigned k = 0; k < r->nitems; k++) {
		const struct qitem *it = &r->items[k];
		if (!it->per_hop) {
			query_fold(e, i, k, cell_of(&e->q[i], g, k), &flat[k]);
			continue;
		}
		size_t h;
		const json_t *x;
		/* every hop, those without a value too: the array keeps its
		 * length, as the window's own record has it */
		json_array_foreach(json_array_get(states, k), h, x) {
			struct agg_state s;
			uint8_t *cell;
			if (get_state(x, it, &s, scratch) &&
			    (cell = query_hop_cell(e, i, g, k, (unsigned)h)))
				query_fold(e, i, k, cell, &s);
		}
	}
	return 0;
}
