/*
 * query_write.c - a query window's records: each group in each of its
 * rule's formats (JSON, CSV cells, MMT-Probe's rows, line protocol,
 * partial windows), in the order of their first packet, and the window
 * closed after them.
 */
#include <string.h>

#include "agg.h"
#include "../core/value.h"
#include "engine_int.h"
#include "query_int.h"

/* A result without a value in MMT-Probe's CSV, as its operators give it:
 * "" for an address or a string, 0.000 for avg (a real with no values),
 * 0 otherwise. */
static void mmt_absent(struct rec *rec, const struct qitem *it)
{
	if (it->agg == AGG_AVG && !it->text_result)
		jsonw_raw(&rec->w, "0.000", 5);
	else
		rec_mmt_absent(rec, it->text_result);
}

static void write_result(struct rec *rec, const struct qitem *it, const uint8_t *kept,
			 size_t size, double window_s)
{
	struct agg_state s;
	struct xval v;

	agg_load(&s, kept, size);
	if (agg_result(&s, it, window_s, &v)) {
		/* MMT-Probe's var of integers is an integer (truncated) */
		if (rec->mmt && it->agg == AGG_VAR && !s.is_float && v.k == XK_FLOAT &&
		    v.u.f >= 0 && v.u.f < 9.2e18)
			v = (struct xval){ .k = XK_INT, .u.i = (int64_t)v.u.f };
		rec_xval(rec, &v, v.k == XK_STR ? agg_result_str(&s) : NULL);
	} else if (rec->mmt)
		mmt_absent(rec, it);
	else
		rec_null(rec);
}

/* Line protocol: the group-by values are the tags, the results the
 * fields (a per-hop result one field per hop). */
static void encode_influx(struct isp_engine *e, unsigned i, struct qgroup *g,
			  const struct isp_value *vals, const bool *present, unsigned ng)
{
	const struct qrule *r = &e->prog->queries[i];
	const struct query_state *qs = &e->q[i];
	struct rec *rec = &e->rec;
	double window_s = query_window_s(qs, r);

	rec_influx_begin(rec, r->name, query_shown_end(qs));
	for (unsigned j = 0; j < ng; j++)
		rec_influx_tag(rec, r->group_names[j], present[j] ? &vals[j] : NULL);
	for (unsigned k = 0; k < r->nitems; k++) {
		const struct qitem *it = &r->items[k];
		const uint8_t *cell = cell_of(qs, g, k);
		size_t size = qs->cell_size[k];
		const struct qhops *c = (const struct qhops *)cell;
		unsigned nh = it->per_hop ? c->nh : 1;
		for (unsigned h = 0; h < nh; h++) {
			struct agg_state s;
			struct xval v;
			agg_load(&s, it->per_hop ? c->hops + h * size : cell, size);
			if (agg_result(&s, it, window_s, &v))
				rec_influx_xfield(rec, it->text, it->per_hop ? (int)h : -1, &v,
						  v.k == XK_STR ? agg_result_str(&s) : NULL);
		}
	}
}

/* ,"window_start":S,"window_end":E made once a window: a large table's
 * records all have it (two keys and two times cost ~660 instructions a
 * record). false when it does not fit (then written field by field). */
static bool window_text(struct query_state *qs)
{
	uint64_t start = query_shown_start(qs), end = query_shown_end(qs);

	if (qs->win_text_len && qs->win_text_start == start && qs->win_text_end == end)
		return true;
	struct jsonw w;
	jsonw_init(&w, qs->win_text, sizeof(qs->win_text));
	w.need_comma = true;
	jsonw_key3(&w, "window_start", NULL, NULL);
	jsonw_time(&w, start, 6);
	jsonw_key3(&w, "window_end", NULL, NULL);
	jsonw_time(&w, end, 6);
	qs->win_text_len = w.overflow ? 0 : w.len;
	qs->win_text_start = start;
	qs->win_text_end = end;
	return !w.overflow;
}

static void window_times(struct rec *rec, struct query_state *qs)
{
	/* after a head (always: rec_begin ends with "time"), the text made
	 * once; else as rec_time writes them */
	if (rec->w.need_comma && window_text(qs)) {
		jsonw_raw(&rec->w, qs->win_text, qs->win_text_len);
		rec->w.need_comma = true;
		return;
	}
	rec_time(rec, "window_start", query_shown_start(qs));
	rec_time(rec, "window_end", query_shown_end(qs));
}

/* The record of one group of e's window in one format, into rec (e's,
 * or another engine's when several write one window: query_share.c,
 * which never gives line protocol or partial windows, written into e's). */
static void encode_group(struct isp_engine *e, struct rec *rec, unsigned i, struct qgroup *g,
			 const struct isp_value *vals, const bool *present, unsigned ng,
			 enum rec_format format)
{
	const struct qrule *r = &e->prog->queries[i];
	struct query_state *qs = &e->q[i];
	const struct isp_program *prog = e->prog;
	double window_s = query_window_s(qs, r);
	bool csv = format == FMT_CSV || format == FMT_CSV_CELLS;

	if (format == FMT_INFLUX) {
		encode_influx(e, i, g, vals, present, ng);
		return;
	}
	if (format == FMT_PARTIAL) {
		partial_encode_group(e, i, g, vals, present, ng);
		return;
	}
	rec_begin(rec, rec_style_of(format), r->name, qs->correction ? "correction" : "query", 999, prog->probe_id,
		  prog->source_name, query_shown_end(qs));
	if (csv) {
		char b[24];
		/* MMT-Probe numbers its reports from 1 */
		snprintf(b, sizeof(b), ",%llu", (unsigned long long)qs->flushes + rec->mmt);
		jsonw_raw(&rec->w, b, strlen(b));
	} else {
		window_times(rec, qs);
		for (unsigned j = 0; j < ng; j++) {
			rec_key_prepared(rec, &qs->group_keys[j]);
			if (present[j])
				rec_value(rec, &vals[j]);
			else
				rec_null(rec);
		}
	}
	for (unsigned k = 0; k < r->nitems; k++) {
		const struct qitem *it = &r->items[k];
		const uint8_t *cell = cell_of(qs, g, k);
		size_t size = qs->cell_size[k];
		rec_key_prepared(rec, &qs->item_keys[k]);
		if (!it->per_hop) {
			write_result(rec, it, cell, size, window_s);
			continue;
		}
		/* per hop: an array, null for a hop no packet had; null when
		 * no packet of the group had the attribute */
		const struct qhops *c = (const struct qhops *)cell;
		if (c->nh == 0) {
			/* MMT-Probe: an array of no element, an empty cell */
			if (!rec->mmt)
				rec_null(rec);
			continue;
		}
		if (rec->mmt) {
			/* one cell per hop, the wire's order (the last hop first) */
			for (unsigned h = c->nh; h-- > 0;) {
				struct agg_state s;
				struct xval v;
				if (h + 1 != c->nh)
					rec_cell_sep(rec);
				agg_load(&s, c->hops + h * size, size);
				if (agg_result(&s, it, window_s, &v))
					rec_mmt_xval(rec, &v, v.k == XK_STR ? agg_result_str(&s) : NULL);
				else
					rec_mmt_absent(rec, false);
			}
			continue;
		}
		char buf[REC_MAX / 4];
		struct jsonw w;
		jsonw_init(&w, buf, sizeof(buf));
		jsonw_array_begin(&w);
		for (unsigned h = 0; h < c->nh; h++) {
			struct agg_state s;
			struct xval v;
			agg_load(&s, c->hops + h * size, size);
			if (agg_result(&s, it, window_s, &v))
				xval_json(&w, &v, v.k == XK_STR ? agg_result_str(&s) : NULL);
			else
				jsonw_null(&w);
		}
		jsonw_array_end(&w);
		rec_json_cell(rec, buf, w.overflow ? 0 : w.len);
	}
}

unsigned query_group_values(const struct isp_engine *e, unsigned i, struct tentry *te,
			    struct isp_value *vals, bool *present, char *keytext, size_t cap,
			    size_t *kl)
{
	const struct qrule *r = &e->prog->queries[i];
	const struct query_state *qs = &e->q[i];
	const struct isp_program *prog = e->prog;
	unsigned ng = r->ngroup < MAX_GROUP_BY ? r->ngroup : MAX_GROUP_BY;
	const uint8_t *kb = tentry_key(&qs->groups, te), *kend = kb + tentry_keylen(te);

	*kl = 0;
	keytext[0] = 0;
	for (unsigned j = 0; j < ng; j++) {
		const struct isp_attr_desc *a = isp_attr_desc_of(e->sc.reg, &prog->slots[r->group_slots[j]]);
		present[j] = false;
		kb = engine_key_value(kb, kend, a->type, a->per_hop, &vals[j], &present[j]);
		if (qs->wants_key == 1)
			continue;
		if (j)
			engine_text_append(keytext, cap, kl, "|", NULL);
		if (present[j])
			engine_text_append(keytext, cap, kl, NULL, &vals[j]);
	}
	return ng;
}

void query_encode_group(struct isp_engine *e, struct rec *rec, unsigned i, struct tentry *te,
			const struct isp_value *vals, const bool *present, unsigned ng, unsigned f)
{
	const struct qrule *r = &e->prog->queries[i];

	encode_group(e, rec, i, tentry_state(te), vals, present, ng,
		     rule_format_at(&r->fmts, r->format, f));
}

void query_write_prepare(struct isp_engine *e, unsigned i)
{
	const struct qrule *r = &e->prog->queries[i];
	struct query_state *qs = &e->q[i];

	if (!qs->wants_key)
		qs->wants_key = engine_channels_use_key(e, r->channels, r->nchannels) ? 2 : 1;
	window_text(qs);
}

void query_write_group(struct isp_engine *e, unsigned i, struct tentry *te)
{
	const struct qrule *r = &e->prog->queries[i];
	struct query_state *qs = &e->q[i];

	/* the group-by values, decoded once from the key bytes: for the record
	 * and for its key (Kafka partitioning) */
	struct isp_value vals[MAX_GROUP_BY];
	bool present[MAX_GROUP_BY];
	size_t kl;
	query_write_prepare(e, i);
	unsigned ng = query_group_values(e, i, te, vals, present, e->keytext, sizeof(e->keytext), &kl);
	for (unsigned f = 0, nf = rule_nformats(&r->fmts); f < nf; f++) {
		query_encode_group(e, &e->rec, i, te, vals, present, ng, f);
		engine_emit(e, r->name, e->keytext, kl, r->channels, r->nchannels, &r->fmts, f,
			    &qs->st);
	}
}

void query_write_groups(struct isp_engine *e, unsigned i, struct tentry *const *sorted)
{
	struct query_state *qs = &e->q[i];

	if (sorted)
		for (uint32_t k = 0; k < qs->groups.count; k++)
			query_write_group(e, i, sorted[k]);
	else
		for (struct tentry *te = NULL; (te = table_next(&qs->groups, te)) != NULL;)
			query_write_group(e, i, te);
}

void query_write_window(struct isp_engine *e, unsigned i, struct tentry *const *sorted)
{
	query_write_groups(e, i, sorted);
	query_window_done(e, i);
}

void query_window_done(struct isp_engine *e, unsigned i)
{
	struct query_state *qs = &e->q[i];

	if (qs->ts_order) {
		uint64_t groups = qs->groups.count;
		for (unsigned k = 0; k < qs->ndrained; k++)
			if (qs->drained[k].end == qs->win_end) {
				groups += qs->drained[k].groups;
				qs->drained[k] = qs->drained[--qs->ndrained];
				break;
			}
		/* (a window already said written: its late groups go bare) */
		if (qs->win_end > qs->partial_last)
			partial_watermark(e, i, qs->win_end, groups);
	}
	qs->flushes++;
	qs->st.windows++;
	table_clear(&qs->groups);
	arena_reset(&qs->hops);
	query_window_clear(qs);
}
