/*
 * query_int.h - a query window's groups, as query.c keeps them and
 * partial.c writes and reads them.
 */
#ifndef ISP_FILTERS_QUERY_INT_H
#define ISP_FILTERS_QUERY_INT_H

#include "agg.h"
#include "engine_int.h"

/*
 * A group's state: the order of its first packet, then one cell per
 * select item at qs->cell_off[k]: the part of the item's agg_state its
 * function uses (qs->cell_size[k] bytes, agg_state_size), or for a
 * per-hop argument a struct qhops whose array holds that much per hop.
 * Sized per rule because a million groups multiply every byte.
 */
/* Exchange two windows: their group tables and per-hop arenas (a worker's
 * closed window set aside for the merger; the largest taken whole by it). */
static inline void query_window_swap(struct table *t1, struct arena *a1, struct table *t2,
				     struct arena *a2)
{
	struct table t = *t1;
	struct arena a = *a1;

	*t1 = *t2;
	*a1 = *a2;
	*t2 = t;
	*a2 = a;
}

struct qhops {
	uint8_t *hops;          /* nh states of cell_size bytes (cap allocated) */
	uint8_t nh, cap;
};

#define MAX_GROUP_BY 16   /* the compiler refuses more */

struct qgroup {
	uint64_t first;                 /* order of its first packet (output order) */
};

static inline uint8_t *cell_of(const struct query_state *qs, struct qgroup *g, unsigned k)
{
	return (uint8_t *)g + qs->cell_off[k];
}

/* ---- partial windows (partial.c) ---- */

/* The record of a group as a partial window (FMT_PARTIAL), into e->rec. */
void partial_encode_group(struct isp_engine *e, unsigned i, struct qgroup *g,
			  const struct isp_value *vals, const bool *present, unsigned ng);
/* The record saying this instance wrote rule i's window ending at `end`
 * in `groups` records, after the one it wrote before (a chain, so that a
 * merge reading them out of order knows when it has them all); end
 * UINT64_MAX: the input ended, every window written; end 0: the instance
 * starts, its first window starting at `groups`. Sent to the rule's
 * partial channels. */
void partial_watermark(struct isp_engine *e, unsigned i, uint64_t end, uint64_t groups);

/* ---- query.c's helpers for query_merge.c ---- */

/* The state of hop `hop` (size bytes) in a per-hop cell, made on first use. */
uint8_t *query_hop_state(struct query_state *qs, struct qhops *c, unsigned hop, size_t size);
uint64_t query_group_hash(const uint8_t *k, size_t len);
/* A group's records, in each of the rule's formats. */
void query_write_group(struct isp_engine *e, unsigned i, struct tentry *te);
/* ... in pieces, for several writers of one window (query_share.c):
 * what a window's writing reads of e's state and sets once, before it
 * (whether a channel reads record keys); a group's values from its key
 * bytes and its key text (kl bytes into keytext, when a channel reads
 * it); their record in format f into rec. */
void query_write_prepare(struct isp_engine *e, unsigned i);
unsigned query_group_values(const struct isp_engine *e, unsigned i, struct tentry *te,
			    struct isp_value *vals, bool *present, char *keytext, size_t cap,
			    size_t *kl);
void query_encode_group(struct isp_engine *e, struct rec *rec, unsigned i, struct tentry *te,
			const struct isp_value *vals, const bool *present, unsigned ng, unsigned f);
/* The open window's groups, in the order of `sorted` (count groups), or
 * of arrival when NULL. */
void query_write_groups(struct isp_engine *e, unsigned i, struct tentry *const *sorted);
/* Its records so, then the window closed. */
void query_write_window(struct isp_engine *e, unsigned i, struct tentry *const *sorted);
/* The window closed (its records written): counted, its table emptied. */
void query_window_done(struct isp_engine *e, unsigned i);
/* Merge the workers' closed windows of rule i into m's (query_merge.c):
 * false when none had one; else *sorted (count groups in the order of
 * their first packet, NULL when out of memory: the table's order) to
 * write, then query_window_done. */
bool query_merge_groups(struct isp_engine *m, unsigned i, struct isp_engine *const *w,
			unsigned n, struct tentry ***sorted, uint32_t *count);

/* ---- merged windows written by every worker (query_share.c) ---- */

/* Merge every query's windows; when one is large enough, set their
 * writing up for query_share_run (true); else write them all (false). */
bool query_share_begin(struct isp_engine *m, struct isp_engine *const *w, unsigned n);
/* On each worker (its engine me) at once: take slices, write them, hand
 * them over in turn, until none is left. */
void query_share_run(struct isp_engine *m, struct isp_engine *me,
		     void (*wait)(void *ctx, unsigned *spins), void *ctx);
/* After every worker's run: true when a share was open (now closed). */
bool query_share_end(struct isp_engine *m);
void query_share_free(struct isp_engine *e);

/* ---- what partial.c uses of query_merge.c to fold a partial in ---- */

/* The group of key in the engine's open window of rule i, made on first
 * use with first packet order `first` (kept the smallest); NULL when the
 * table is full (counted). */
struct qgroup *query_group_get(struct isp_engine *e, unsigned i, const uint8_t *key, size_t len,
			       uint64_t first);
/* The state of hop h of item k's per-hop cell, made on first use. */
uint8_t *query_hop_cell(struct isp_engine *e, unsigned i, struct qgroup *g, unsigned k,
			unsigned h);
/* Fold a partial state into a kept one (item k of rule i). */
void query_fold(struct isp_engine *e, unsigned i, unsigned k, uint8_t *kept,
		const struct agg_state *from);
/* Write the window [start, end) the engine holds for rule i: groups in
 * the order of their first packet; keep: the groups stay (late partials
 * may still fold in: query_write_correction), until query_forget. */
void query_write_merged(struct isp_engine *e, unsigned i, uint64_t start, uint64_t end, bool keep);
/* Write a kept window's group again, as "type":"correction" (JSON; CSV
 * and line protocol write the same row, a point that replaces the first). */
void query_write_correction(struct isp_engine *e, unsigned i, struct qgroup *g);
void query_forget(struct isp_engine *e, unsigned i);

#endif
