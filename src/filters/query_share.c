/*
 * query_share.c - the records of merged query windows, written by every
 * worker at once, in the order one worker writes them.
 *
 * With several workers, the last to reach a tick merges their windows
 * while the others wait (query_merge.c). A window of a million groups
 * then cost as much to write as the packets had cost to handle, on one
 * core. Here the merger only merges and sorts (isp_engine_merge_begin);
 * the records are then cut into slices of SLICE groups, numbered through
 * every query in rule order, and each worker (the merger too) takes the
 * next slice, writes its records into its own buffer, waits for its turn
 * (every slice before it handed over) and hands them to the channels.
 * Formatting, most of the work, runs on every core; handing over stays in
 * order, so the records and their order are one worker's.
 *
 * A query with a line protocol or partial-window format (whose writers
 * keep state of their own), or whose window could not be sorted, is one
 * slice written whole by the merger engine in its turn; so is a window too
 * small to be worth cutting. The window's end (counters, table emptied)
 * comes in the turn of its last slice, and what follows every window
 * (partial ends, the rules' swap) after the last slice (merge_end).
 */
#include <stdlib.h>
#include <string.h>

#include "engine_int.h"
#include "query_int.h"

#define SLICE 512               /* groups a slice */
#define SHARE_MIN 4096          /* fewer groups in every window: the merger writes */

struct share_job {
	unsigned query;
	struct tentry **sorted;         /* the window's groups, first packet first */
	uint32_t count;
	uint32_t first, nslices;        /* its slices */
	bool parallel;                  /* formatted by any worker */
};

struct query_share {
	struct share_job *jobs;
	unsigned njobs;
	uint32_t nslices;
	_Alignas(64) _Atomic uint32_t take;     /* the next slice to write */
	_Alignas(64) _Atomic uint32_t turn;     /* the next slice to hand over */
};

/* A slice's records in a worker's buffer: per record its length (0: it
 * did not fit), its key text's length, its format, the key text, the
 * record. */
struct slice_head {
	uint32_t len;
	uint16_t keylen;
	uint16_t format;
};

void query_share_free(struct isp_engine *e)
{
	if (e->share) {
		for (unsigned k = 0; k < e->share->njobs; k++)
			free(e->share->jobs[k].sorted);
		free(e->share->jobs);
		free(e->share);
		e->share = NULL;
	}
	free(e->slice);
	e->slice = NULL;
	e->slice_cap = e->slice_len = 0;
}

/* Line protocol and partial windows write through state of the merger's
 * own (points, watermarks): those go whole, in their turn. */
static bool formats_shareable(const struct qrule *r)
{
	for (unsigned f = 0, nf = rule_nformats(&r->fmts); f < nf; f++) {
		enum rec_format fmt = rule_format_at(&r->fmts, r->format, f);
		if (fmt == FMT_INFLUX || fmt == FMT_PARTIAL)
			return false;
	}
	return true;
}

bool query_share_begin(struct isp_engine *m, struct isp_engine *const *w, unsigned n)
{
	const struct isp_program *prog = m->prog;
	struct share_job *jobs = calloc(prog->nqueries ? prog->nqueries : 1, sizeof(*jobs));
	unsigned njobs = 0;
	bool worth = false;

	if (!m->share)
		m->share = calloc(1, sizeof(*m->share));
	if (!jobs || !m->share) {
		free(jobs);
		/* out of memory: merged and written here, as before */
		for (unsigned i = 0; i < prog->nqueries; i++)
			query_merge(m, i, w, n);
		return false;
	}
	for (unsigned i = 0; i < prog->nqueries; i++) {
		uint32_t count;
		struct tentry **sorted;
		if (!query_merge_groups(m, i, w, n, &sorted, &count))
			continue;
		struct share_job *j = &jobs[njobs++];
		j->query = i;
		j->sorted = sorted;
		j->count = count;
		j->parallel = sorted && formats_shareable(&prog->queries[i]);
		worth |= j->parallel && count >= SHARE_MIN;
	}
	if (!worth) {
		for (unsigned k = 0; k < njobs; k++) {
			query_write_window(m, jobs[k].query, jobs[k].sorted);
			free(jobs[k].sorted);
		}
		free(jobs);
		return false;
	}
	struct query_share *s = m->share;
	uint32_t slices = 0;
	for (unsigned k = 0; k < njobs; k++) {
		struct share_job *j = &jobs[k];
		j->first = slices;
		j->nslices = j->parallel && j->count ? (j->count + SLICE - 1) / SLICE : 1;
		slices += j->nslices;
		/* what writing reads of the merger's state, set before any
		 * worker reads it */
		query_write_prepare(m, j->query);
	}
	s->jobs = jobs;
	s->njobs = njobs;
	s->nslices = slices;
	atomic_store_explicit(&s->take, 0, memory_order_relaxed);
	atomic_store_explicit(&s->turn, 0, memory_order_release);
	return true;
}

static const struct share_job *job_of(const struct query_share *s, uint32_t slice)
{
	unsigned k = 0;

	while (k + 1 < s->njobs && s->jobs[k + 1].first <= slice)
		k++;
	return &s->jobs[k];
}

static char *slice_room(struct isp_engine *me, size_t n)
{
	if (!engine_buf_room(&me->slice, &me->slice_cap, me->slice_len, n, 256 * 1024))
		return NULL;
	return me->slice + me->slice_len;
}

/* The records of groups [from, to) of job j, into me's slice buffer. */
static void format_slice(struct isp_engine *me, struct isp_engine *m, const struct share_job *j,
			 uint32_t from, uint32_t to)
{
	const struct qrule *r = &m->prog->queries[j->query];
	unsigned nf = rule_nformats(&r->fmts);

	me->slice_len = 0;
	for (uint32_t g = from; g < to; g++) {
		struct isp_value vals[MAX_GROUP_BY];
		bool present[MAX_GROUP_BY];
		size_t kl;
		unsigned ng = query_group_values(m, j->query, j->sorted[g], vals, present,
						 me->keytext, sizeof(me->keytext), &kl);
		for (unsigned f = 0; f < nf; f++) {
			query_encode_group(m, &me->rec, j->query, j->sorted[g], vals, present, ng, f);
			size_t len = rec_end(&me->rec);
			struct slice_head h = { (uint32_t)len, (uint16_t)kl, (uint16_t)f };
			char *o = slice_room(me, sizeof(h) + kl + len);
			if (!o) {       /* no memory: the record counts as dropped */
				h.len = 0;
				h.keylen = 0;
				if (!(o = slice_room(me, sizeof(h))))
					continue;       /* not even counted: cannot be */
				len = kl = 0;
			}
			memcpy(o, &h, sizeof(h));
			memcpy(o + sizeof(h), me->keytext, kl);
			memcpy(o + sizeof(h) + kl, me->rec.w.buf, len);
			me->slice_len += sizeof(h) + kl + len;
		}
	}
}

/* me's slice buffer to the channels, through the merger (its rule's
 * counters): in turn, one writer at a time. */
static void hand_over(struct isp_engine *m, struct isp_engine *me, const struct share_job *j)
{
	const struct qrule *r = &m->prog->queries[j->query];
	struct query_state *qs = &m->q[j->query];

	for (size_t at = 0; at < me->slice_len;) {
		struct slice_head h;
		memcpy(&h, me->slice + at, sizeof(h));
		const char *key = me->slice + at + sizeof(h);
		engine_emit_bytes(m, r->name, key, h.keylen, key + h.keylen, h.len, r->channels,
				  r->nchannels, &r->fmts, h.format, &qs->st);
		at += sizeof(h) + h.keylen + h.len;
	}
	me->slice_len = 0;
}

void query_share_run(struct isp_engine *m, struct isp_engine *me,
		     void (*wait)(void *ctx, unsigned *spins), void *ctx)
{
	struct query_share *s = m->share;
	unsigned spins = 0;

	if (!s)
		return;
	for (;;) {
		uint32_t k = atomic_fetch_add_explicit(&s->take, 1, memory_order_relaxed);
		if (k >= s->nslices)
			return;
		const struct share_job *j = job_of(s, k);
		if (j->parallel) {
			uint32_t from = (k - j->first) * SLICE;
			uint32_t to = from + SLICE < j->count ? from + SLICE : j->count;
			format_slice(me, m, j, from, to);
		}
		while (atomic_load_explicit(&s->turn, memory_order_acquire) != k)
			wait(ctx, &spins);
		if (j->parallel) {
			hand_over(m, me, j);
			if (k + 1 == j->first + j->nslices)
				query_window_done(m, j->query);
		} else {
			query_write_window(m, j->query, j->sorted);
		}
		atomic_store_explicit(&s->turn, k + 1, memory_order_release);
	}
}

bool query_share_end(struct isp_engine *m)
{
	struct query_share *s = m->share;

	if (!s || !s->jobs)
		return false;
	for (unsigned k = 0; k < s->njobs; k++)
		free(s->jobs[k].sorted);
	free(s->jobs);
	s->jobs = NULL;
	s->njobs = 0;
	s->nslices = 0;
	return true;
}

/* ---- the three steps of a merge at a barrier (engine_int.h) ---- */

bool isp_engine_merge_begin(struct isp_engine *merger, struct isp_engine *const *workers,
			    unsigned n)
{
	const bool final = n && workers[0]->tick_now == UINT64_MAX;

	for (unsigned i = 0; i < merger->prog->nmonitors; i++)
		monitor_merge(merger, i, workers, n);
	if (query_share_begin(merger, workers, n)) {
		merger->share_final = final;
		return true;
	}
	if (final)
		engine_partial_ends(merger);
	return false;
}

void isp_engine_merge_share(struct isp_engine *merger, struct isp_engine *me,
			    void (*wait)(void *ctx, unsigned *spins), void *ctx)
{
	query_share_run(merger, me, wait, ctx);
}

void isp_engine_merge_end(struct isp_engine *merger)
{
	if (query_share_end(merger) && merger->share_final)
		engine_partial_ends(merger);
}
