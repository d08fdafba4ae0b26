/*
 * query_merge.c - query windows folded together: the windows of several
 * workers at a tick (query_merge), and partial windows of several
 * instances read back by the merge stage (partial.c, pmerge.c).
 */
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "engine_int.h"
#include "query_int.h"

/* A group and its first packet's order, sorted without reading the
 * group again: with a million groups, each comparison of two pointers
 * was two cache misses. */
struct by_first_of {
	uint64_t first;
	struct tentry *te;
};

static int by_first(const void *a, const void *b)
{
	const struct by_first_of *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/* The groups in the order of their first packet, as one worker writes
 * them (merged groups arrive worker by worker); NULL when out of memory,
 * and the records come out in their order of arrival, all of them. The
 * caller frees. */
static struct tentry **sorted_groups(const struct table *t)
{
	size_t n = t->count ? t->count : 1;
	struct by_first_of *v = malloc(n * sizeof(*v));
	struct tentry **out = malloc(n * sizeof(*out));
	uint32_t k = 0;

	if (!v || !out) {
		free(v);
		free(out);
		return NULL;
	}
	for (struct tentry *te = NULL; (te = table_next(t, te)) != NULL;)
		v[k++] = (struct by_first_of){ ((const struct qgroup *)tentry_state(te))->first, te };
	qsort(v, k, sizeof(*v), by_first);
	for (uint32_t j = 0; j < k; j++)
		out[j] = v[j].te;
	free(v);
	return out;
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
		uint8_t *s = query_hop_state(mqs, (struct qhops *)to, h, size);
		if (s)
			merge_state(mqs, it, s, f->hops + h * size, size);
	}
}

/* Fold a worker's closed window into the merged one. With many groups
 * each lookup is two cache misses (the slot, the entry): the slots of the
 * groups FOLD_SLOT ahead and the entries of those FOLD_ENTRY ahead are
 * asked for first, as ahead.c does for packets (a group's tag holds its
 * hash, the same on every engine). */
#define FOLD_SLOT 8
#define FOLD_ENTRY 4

static void fold(struct query_state *mqs, const struct qrule *r, struct query_state *wqs)
{
	const struct table *from = &wqs->done;
	struct tentry *slot_at = NULL, *entry_at = NULL;

	for (unsigned k = 0; k < FOLD_SLOT && (slot_at = table_next(from, slot_at)) != NULL; k++)
		table_prefetch_slot(&mqs->groups, slot_at->tag >> 16);
	for (unsigned k = 0; k < FOLD_ENTRY && (entry_at = table_next(from, entry_at)) != NULL; k++)
		table_prefetch_entry(&mqs->groups, entry_at->tag >> 16);
	for (struct tentry *src = NULL; (src = table_next(from, src)) != NULL;) {
		if (slot_at && (slot_at = table_next(from, slot_at)) != NULL)
			table_prefetch_slot(&mqs->groups, slot_at->tag >> 16);
		if (entry_at && (entry_at = table_next(from, entry_at)) != NULL)
			table_prefetch_entry(&mqs->groups, entry_at->tag >> 16);
		struct qgroup *sg = tentry_state(src);
		bool created;
		const uint8_t *key = tentry_key(from, src);
		uint32_t len = tentry_keylen(src);
		struct tentry *te = table_get_hashed(&mqs->groups, key, len, query_group_hash(key, len),
						     0, false, &created);
		if (!te)
			continue;       /* max-groups: counted in the merger's overflows */
		struct qgroup *g = tentry_state(te);
		if (created || sg->first < g->first)
			g->first = sg->first;
		for (unsigned c = 0; c < r->nitems; c++)
			merge_cell(mqs, c, &r->items[c], cell_of(mqs, g, c), cell_of(wqs, sg, c));
	}
}

/* The worker whose closed window has the most groups, or n. */
static unsigned largest_done(unsigned i, struct isp_engine *const *w, unsigned n)
{
	unsigned best = n;

	for (unsigned k = 0; k < n; k++)
		if (w[k]->q[i].has_done &&
		    (best == n || w[k]->q[i].done.count > w[best]->q[i].done.count))
			best = k;
	return best;
}

bool query_merge_groups(struct isp_engine *m, unsigned i, struct isp_engine *const *w,
			unsigned n, struct tentry ***sorted, uint32_t *count)
{
	const struct qrule *r = &m->prog->queries[i];
	struct query_state *mqs = &m->q[i];
	bool any = false;
	/* The largest window becomes the merged one as it is: its table and
	 * per-hop states are swapped with the merger's empty ones (the same
	 * rule made both), and only the others' groups are folded in. With
	 * many groups, inserting every group of every worker again was most
	 * of a merge (a million groups: ~36% of 2 workers' time, perf). */
	unsigned base = mqs->groups.count == 0 ? largest_done(i, w, n) : n;
	if (base < n)
		query_window_swap(&mqs->groups, &mqs->hops, &w[base]->q[i].done,
				  &w[base]->q[i].done_hops);

	for (unsigned k = 0; k < n; k++) {
		struct query_state *wqs = &w[k]->q[i];
		/* the merger sees no packet: its time is the workers' (what
		 * stamps a partial window's end record) */
		if (w[k]->last_ts > m->last_ts)
			m->last_ts = w[k]->last_ts;
		if (!wqs->has_done)
			continue;
		any = true;
		mqs->win_start = wqs->done_start;
		mqs->win_end = wqs->done_end;
		query_span_add(mqs, wqs->done_lo, wqs->done_hi);
		if (k != base)
			fold(mqs, r, wqs);
		mqs->st.matched += wqs->st.matched;
		wqs->st.matched = 0;
		table_clear(&wqs->done);
		arena_reset(&wqs->done_hops);
		wqs->has_done = false;
	}
	if (!any)
		return false;
	*count = mqs->groups.count;
	*sorted = sorted_groups(&mqs->groups);
	return true;
}

void query_merge(struct isp_engine *m, unsigned i, struct isp_engine *const *w, unsigned n)
{
	struct tentry **sorted;
	uint32_t count;

	if (!query_merge_groups(m, i, w, n, &sorted, &count))
		return;
	query_write_window(m, i, sorted);
	free(sorted);
}

/* ---- folding partial windows in (partial.c) ---- */

struct qgroup *query_group_get(struct isp_engine *e, unsigned i, const uint8_t *key, size_t len,
			       uint64_t first)
{
	struct query_state *qs = &e->q[i];
	bool created;

	if (len > qs->groups.key_max)
		return NULL;
	struct tentry *te = table_get_hashed(&qs->groups, key, len, query_group_hash(key, len), 0, false,
					     &created);
	if (!te)
		return NULL;    /* max-groups: counted in overflows */
	struct qgroup *g = tentry_state(te);
	if (created || first < g->first)
		g->first = first;
	return g;
}

uint8_t *query_hop_cell(struct isp_engine *e, unsigned i, struct qgroup *g, unsigned k,
			unsigned h)
{
	struct query_state *qs = &e->q[i];

	return query_hop_state(qs, (struct qhops *)cell_of(qs, g, k), h, qs->cell_size[k]);
}

void query_fold(struct isp_engine *e, unsigned i, unsigned k, uint8_t *kept,
		const struct agg_state *from)
{
	struct query_state *qs = &e->q[i];
	size_t size = qs->cell_size[k];
	struct agg_state a;

	agg_load(&a, kept, size);
	agg_merge(&a, from, &e->prog->queries[i].items[k], &qs->hops);
	agg_store(kept, &a, size);
}

void query_write_merged(struct isp_engine *e, unsigned i, uint64_t start, uint64_t end, bool keep)
{
	struct query_state *qs = &e->q[i];

	qs->win_start = start;
	qs->win_end = end;
	struct tentry **sorted = sorted_groups(&qs->groups);
	if (!keep) {
		query_write_window(e, i, sorted);
		free(sorted);
		return;
	}
	query_write_groups(e, i, sorted);
	free(sorted);
	qs->flushes++;
	qs->st.windows++;
}

void query_write_correction(struct isp_engine *e, unsigned i, struct qgroup *g)
{
	struct query_state *qs = &e->q[i];

	qs->correction = true;
	query_write_group(e, i, (struct tentry *)((uint8_t *)g - sizeof(struct tentry)));
	qs->correction = false;
}

void query_forget(struct isp_engine *e, unsigned i)
{
	struct query_state *qs = &e->q[i];

	table_clear(&qs->groups);
	arena_reset(&qs->hops);
	query_window_clear(qs);
}
