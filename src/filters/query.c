/*
 * query.c - query reports: tumbling windows of ms-period on packet time,
 * aligned to multiples of the period since the epoch (so every worker and
 * every run cuts the same windows), groups by the binary value of the
 * group-by attributes, report functions per group.
 *
 * Per-hop arguments aggregate element by element: hop i of a group
 * aggregates the packets that have a hop i, so packets with different hop
 * counts in one group are all counted. Groups come out in the order of
 * their first packet in the window.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "../core/value.h"
#include "engine.h"

/*
 * A group's state: the order of its first packet, then one cell per
 * select item at qs->cell_off[k]: the part of the item's agg_state its
 * function uses (qs->cell_size[k] bytes, agg_state_size), or for a
 * per-hop argument a struct qhops whose array holds that much per hop.
 * Sized per rule because a million groups multiply every byte.
 */
struct qhops {
	uint8_t *hops;          /* nh states of cell_size bytes (cap allocated) */
	uint8_t nh, cap;
};

#define MAX_GROUP_BY 16   /* the compiler refuses more */

struct qgroup {
	uint64_t first;                 /* order of its first packet (output order) */
};

static uint8_t *cell_of(const struct query_state *qs, struct qgroup *g, unsigned k)
{
	return (uint8_t *)g + qs->cell_off[k];
}

/* Packet order for first/last and for the order of groups: the position
 * in the input, then the report within a coalesced packet. The same for
 * any number of workers. */
static uint64_t order_of(const struct isp_packet *p)
{
	return p->index << 8 | p->report_index;
}

int query_init(struct isp_engine *e, unsigned i)
{
	const struct qrule *r = &e->prog->queries[i];
	struct query_state *qs = &e->q[i];

	qs->cell_off = calloc(r->nitems ? r->nitems : 1, sizeof(*qs->cell_off));
	qs->cell_size = calloc(r->nitems ? r->nitems : 1, sizeof(*qs->cell_size));
	if (!qs->cell_off || !qs->cell_size)
		return -1;
	size_t off = sizeof(struct qgroup);
	for (unsigned k = 0; k < r->nitems; k++) {
		qs->cell_off[k] = (uint32_t)off;
		qs->cell_size[k] = (uint16_t)agg_state_size(&r->items[k]);
		off += r->items[k].per_hop ? sizeof(struct qhops) : qs->cell_size[k];
	}
	qs->entry_state = off;
	size_t kmax = engine_key_max(e, r->group_slots, r->ngroup);
	if (table_init(&qs->groups, r->max_groups, qs->entry_state, kmax, false) != 0 ||
	    table_init(&qs->done, r->max_groups, qs->entry_state, kmax, false) != 0)
		return -1;
	qs->group_keys = calloc(r->ngroup ? r->ngroup : 1, sizeof(*qs->group_keys));
	qs->item_keys = calloc(r->nitems ? r->nitems : 1, sizeof(*qs->item_keys));
	if (!qs->group_keys || !qs->item_keys)
		return -1;
	for (unsigned k = 0; k < r->ngroup; k++)
		if (rec_jkey_make(&qs->group_keys[k], r->group_names[k]) != 0)
			return -1;
	for (unsigned k = 0; k < r->nitems; k++)
		if (rec_jkey_make(&qs->item_keys[k], r->items[k].text) != 0)
			return -1;
	return 0;
}

/* The state of hop `hop` (size bytes) in a per-hop cell, made on first use. */
static uint8_t *hop_state(struct query_state *qs, struct qhops *c, unsigned hop, size_t size)
{
	if (hop >= ISP_MAX_HOPS)
		return NULL;
	if (hop >= c->cap) {
		/* exactly the path's length: paths rarely grow within a group */
		unsigned cap = hop + 1;
		uint8_t *n = arena_alloc(&qs->hops, cap * size);
		if (!n)
			return NULL;
		if (c->nh)
			memcpy(n, c->hops, c->nh * size);
		c->hops = n;
		c->cap = (uint8_t)cap;
	}
	if (hop >= c->nh)
		c->nh = (uint8_t)(hop + 1);
	return c->hops + hop * size;
}

/* One value into a kept state: v == NULL counts a packet (count(), rate()). */
static void update_state(struct query_state *qs, const struct qitem *it, uint8_t *kept,
			 size_t size, struct xval *v, uint64_t order)
{
	struct agg_state s;

	agg_load(&s, kept, size);
	if (!v || !(it->diff || it->agg == AGG_DIFF) || agg_diff(&s, v))
		agg_update(&s, it, v, order, &qs->hops);
	agg_store(kept, &s, size);
}

static void update_cell(struct isp_engine *e, struct query_state *qs, const struct qitem *it,
			unsigned k, uint8_t *cell, struct cx_ctx *ctx)
{
	size_t size = qs->cell_size[k];
	uint64_t order = order_of(ctx->pkt);
	struct xval v;

	if (!it->arg) {                 /* count(), rate() */
		update_state(qs, it, cell, size, NULL, order);
		return;
	}
	if (!it->per_hop) {
		if (cx_eval(it->arg, ctx, &v))
			update_state(qs, it, cell, size, &v, order);
		return;
	}
	struct qhops *c = (struct qhops *)cell;
	const struct isp_value *hv = slot_get(&e->sc, ctx->pkt, (unsigned)it->hop_slot);
	if (!hv || !hv->is_array)
		return;
	/* the result is as long as the longest path seen, even when its last
	 * hops had no value (they come out as null) */
	if (hv->count && !hop_state(qs, c, hv->count - 1u, size))
		return;
	for (unsigned h = 0; h < hv->count; h++) {
		ctx->hop = (int)h;
		if (!cx_eval(it->arg, ctx, &v))
			continue;
		uint8_t *s = hop_state(qs, c, h, size);
		if (s)
			update_state(qs, it, s, size, &v, order);
	}
	ctx->hop = -1;
}

void query_packet(struct isp_engine *e, unsigned i, const struct isp_packet *p)
{
	const struct qrule *r = &e->prog->queries[i];
	struct query_state *qs = &e->q[i];
	struct cx_ctx ctx = { &e->sc, p, -1 };

	query_advance(e, i, p->ts_ns);
	if (r->where && !cx_true(r->where, &ctx))
		return;
	if (qs->win_end == 0) {
		qs->win_start = p->ts_ns - p->ts_ns % r->period_ns;
		qs->win_end = qs->win_start + r->period_ns;
	}
	qs->st.matched++;
	size_t klen = engine_key(e, p, r->group_slots, r->ngroup, e->keybuf, qs->groups.key_max);
	bool created;
	struct tentry *te = table_get(&qs->groups, e->keybuf, klen, p->ts_ns, false, &created);
	if (!te)
		return;         /* max-groups reached: counted in overflows */
	struct qgroup *g = tentry_state(te);
	if (created)
		g->first = order_of(p);
	for (unsigned k = 0; k < r->nitems; k++)
		update_cell(e, qs, &r->items[k], k, cell_of(qs, g, k), &ctx);
}

void query_advance(struct isp_engine *e, unsigned i, uint64_t now)
{
	struct query_state *qs = &e->q[i];

	if (qs->win_end && now >= qs->win_end)
		query_flush(e, i);
}

/* Rebuild a group-by value from its key bytes (see engine_key). */
static const uint8_t *key_value(const uint8_t *k, const uint8_t *end, uint8_t type,
				bool per_hop, struct isp_value *v, bool *present)
{
	memset(v, 0, offsetof(struct isp_value, v) + 16);
	v->type = type;
	if (k >= end)
		return end;
	*present = *k++;
	if (!*present)
		return k;
	if (per_hop) {
		if (end - k < 5)
			return end;
		v->is_array = 1;
		v->count = *k++;
		memcpy(&v->missing, k, 4);
		k += 4;
		size_t n = v->count * 8u;
		if ((size_t)(end - k) < n || v->count > ISP_MAX_HOPS)
			return end;
		memcpy(v->v.arr, k, n);
		return k + n;
	}
	if (type == ISP_T_STRING) {
		const uint8_t *z = memchr(k, 0, (size_t)(end - k));
		if (!z)
			return end;
		memcpy(v->v.str, k, (size_t)(z - k) + 1);
		return z + 1;
	}
	if (end - k < 16)
		return end;
	if (type == ISP_T_IPV6 || type == ISP_T_MAC) {
		memcpy(v->v.ip6, k, 16);
	} else {
		memcpy(&v->v.u, k, 8);
		v->missing = k[8] & 1;
	}
	return k + 16;
}

static void write_result(struct rec *rec, const struct qitem *it, const uint8_t *kept,
			 size_t size, double window_s)
{
	struct agg_state s;
	struct xval v;

	agg_load(&s, kept, size);
	if (agg_result(&s, it, window_s, &v))
		rec_xval(rec, &v, v.k == XK_STR ? agg_result_str(&s) : NULL);
	else
		rec_null(rec);
}

static void write_group(struct isp_engine *e, unsigned i, struct tentry *te)
{
	const struct qrule *r = &e->prog->queries[i];
	struct query_state *qs = &e->q[i];
	struct rec *rec = &e->rec;
	const struct isp_program *prog = e->prog;
	struct qgroup *g = tentry_state(te);
	double window_s = (double)r->period_ns / 1e9;
	bool csv = r->format == FMT_CSV;

	/* the group-by values, decoded once from the key bytes: for the record
	 * and for its key (Kafka partitioning) */
	struct isp_value vals[MAX_GROUP_BY];
	bool present[MAX_GROUP_BY];
	unsigned ng = r->ngroup < MAX_GROUP_BY ? r->ngroup : MAX_GROUP_BY;
	const uint8_t *kb = tentry_key(&qs->groups, te), *kend = kb + te->keylen;
	size_t kl = 0;
	e->keytext[0] = 0;
	for (unsigned j = 0; j < ng; j++) {
		const struct isp_attr_desc *a = isp_attr_desc_of(e->sc.reg, &prog->slots[r->group_slots[j]]);
		present[j] = false;
		kb = key_value(kb, kend, a->type, a->per_hop, &vals[j], &present[j]);
		if (j)
			engine_text_append(e->keytext, sizeof(e->keytext), &kl, "|", NULL);
		if (present[j])
			engine_text_append(e->keytext, sizeof(e->keytext), &kl, NULL, &vals[j]);
	}
	rec_begin(rec, csv, r->name, "query", 999, prog->probe_id, prog->source_name, qs->win_end);
	if (csv) {
		char b[24];
		snprintf(b, sizeof(b), ",%llu", (unsigned long long)qs->flushes);
		jsonw_raw(&rec->w, b, strlen(b));
	} else {
		rec_time(rec, "window_start", qs->win_start);
		rec_time(rec, "window_end", qs->win_end);
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
			rec_null(rec);
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
	engine_emit(e, r->name, e->keytext, kl, r->channels, r->nchannels, &qs->st);
}

static void write_window(struct isp_engine *e, unsigned i)
{
	struct query_state *qs = &e->q[i];

	for (uint32_t k = 0; k < qs->groups.count; k++)
		write_group(e, i, qs->groups.order[k]);
	qs->flushes++;
	qs->st.windows++;
	table_clear(&qs->groups);
	arena_reset(&qs->hops);
	qs->win_end = 0;
}

void query_flush(struct isp_engine *e, unsigned i)
{
	struct query_state *qs = &e->q[i];

	if (qs->win_end == 0)
		return;
	if (!e->partial) {
		write_window(e, i);
		return;
	}
	/* a worker: the window waits for the merger (which takes it before
	 * the next one closes); the next window starts on empty tables */
	struct table t = qs->done;
	struct arena a = qs->done_hops;
	qs->done = qs->groups;
	qs->done_hops = qs->hops;
	qs->groups = t;
	qs->hops = a;
	qs->done_start = qs->win_start;
	qs->done_end = qs->win_end;
	qs->has_done = true;
	qs->win_end = 0;
}

static int by_first(const void *a, const void *b)
{
	const struct qgroup *x = tentry_state(*(struct tentry *const *)a);
	const struct qgroup *y = tentry_state(*(struct tentry *const *)b);

	return x->first < y->first ? -1 : x->first > y->first;
}

/* Fold a worker's cell into the merged one: states add up (Chan's formula
 * for var, counters for sketches, packet order for first/last). */
static void merge_state(struct query_state *mqs, const struct qitem *it, uint8_t *to,
			const uint8_t *from, size_t size)
{
	struct agg_state a, b;

	agg_load(&a, to, size);
	agg_load(&b, from, size);
	agg_merge(&a, &b, it, &mqs->hops);
	agg_store(to, &a, size);
}

static void merge_cell(struct query_state *mqs, unsigned k, const struct qitem *it, uint8_t *to,
		       const uint8_t *from)
{
	size_t size = mqs->cell_size[k];

	if (!it->per_hop) {
		merge_state(mqs, it, to, from, size);
		return;
	}
	const struct qhops *f = (const struct qhops *)from;
	for (unsigned h = 0; h < f->nh; h++) {
		uint8_t *s = hop_state(mqs, (struct qhops *)to, h, size);
		if (s)
			merge_state(mqs, it, s, f->hops + h * size, size);
	}
}

void query_merge(struct isp_engine *m, unsigned i, struct isp_engine *const *w, unsigned n)
{
	const struct qrule *r = &m->prog->queries[i];
	struct query_state *mqs = &m->q[i];
	bool any = false;

	for (unsigned k = 0; k < n; k++) {
		struct query_state *wqs = &w[k]->q[i];
		if (!wqs->has_done)
			continue;
		any = true;
		mqs->win_start = wqs->done_start;
		mqs->win_end = wqs->done_end;
		for (uint32_t j = 0; j < wqs->done.count; j++) {
			struct tentry *src = wqs->done.order[j];
			struct qgroup *sg = tentry_state(src);
			bool created;
			struct tentry *te = table_get(&mqs->groups, tentry_key(&wqs->done, src),
						      src->keylen, src->last_seen, false, &created);
			if (!te)
				continue;       /* max-groups: counted in the merger's overflows */
			struct qgroup *g = tentry_state(te);
			if (created || sg->first < g->first)
				g->first = sg->first;
			for (unsigned c = 0; c < r->nitems; c++)
				merge_cell(mqs, c, &r->items[c], cell_of(mqs, g, c), cell_of(wqs, sg, c));
		}
		mqs->st.matched += wqs->st.matched;
		wqs->st.matched = 0;
		table_clear(&wqs->done);
		arena_reset(&wqs->done_hops);
		wqs->has_done = false;
	}
	if (!any)
		return;
	/* the groups in the order of their first packet, as one worker writes them */
	qsort(mqs->groups.order, mqs->groups.count, sizeof(*mqs->groups.order), by_first);
	write_window(m, i);
}
