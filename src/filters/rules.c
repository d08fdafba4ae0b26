/*
 * rules.c - the rule engines as the pipeline runs them (engine.h): one
 * engine per worker and, with several, one more that merges their windows.
 */
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "engine_int.h"
#include "rules_int.h"


int isp_rules_check(const struct isp_program *prog, const struct isp_registry *reg, char *err,
		    size_t errlen)
{
	struct isp_engine *e = isp_engine_new(prog, reg, NULL, false, err, errlen);

	if (!e)
		return -1;
	isp_engine_free(e);
	return 0;
}

struct isp_rules *isp_rules_new(const struct isp_program *prog, const struct isp_registry *reg,
				struct isp_channel **channels, char *err, size_t errlen)
{
	struct isp_rules *r = calloc(1, sizeof(*r));

	if (!r) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	r->prog = prog;
	r->reg = reg;
	r->channels = channels;
	pthread_mutex_init(&r->mu, NULL);
	struct rules_gen *g = rules_gen_new(prog);
	if (!g) {
		free(r);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	atomic_store(&r->gen, g);
	/* the stores now: a file that cannot be made is a configuration error */
	if (prog->ndta && !(r->stores = dta_stores_open(prog, 1, NULL, NULL, err, errlen))) {
		free(g);
		free(r);
		return NULL;
	}
	return r;
}

struct rules_gen *rules_gen_new(const struct isp_program *prog)
{
	struct rules_gen *g = calloc(1, sizeof(*g) + (prog->nmonitors + 1) * sizeof(g->period[0]));

	if (!g)
		return NULL;
	g->prog = prog;
	for (unsigned i = 0; i < prog->nmonitors; i++)
		atomic_store(&g->period[i], prog->monitors[i].interval_ns / prog->monitors[i].nbuf);
	return g;
}

struct isp_engine *rules_engine_new(struct isp_rules *r, const struct isp_program *prog,
				    struct isp_channel **channels, struct dta_store *const *stores,
				    bool partial, char *err, size_t errlen)
{
	struct isp_engine *e = isp_engine_new(prog, r->reg, channels, partial, err, errlen);
	bool nack = prog->dta.nack > 0 || (prog->dta.nack == 0 && r->live);

	if (e && dta_engine_new(e, r->reg, stores, nack) != 0) {
		isp_engine_free(e);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	return e;
}

void isp_rules_set_live(struct isp_rules *r, bool live)
{
	r->live = live;
}

static void *worker_new(void *rules, unsigned i, unsigned n, char *err, size_t errlen)
{
	struct isp_rules *r = rules;

	for (unsigned k = 0; i == 0 && r->stores && k < r->prog->ndta; k++)
		dta_store_set_shared(r->stores[k], n > 1);
	if (n > 1 && !r->merger &&
	    !(r->merger = rules_engine_new(r, r->prog, r->channels, r->stores, false, err, errlen)))
		return NULL;
	struct isp_engine *e = rules_engine_new(r, r->prog, r->channels, r->stores, n > 1, err,
						errlen);
	if (!e)
		return NULL;
	e->self = i;            /* per-hop rules: which hops are this worker's */
	e->nworkers = n;
	e->merger = r->merger;
	r->worker[i] = e;
	r->rw[i] = (struct rules_worker){ r, e };
	if (i + 1 > r->n)
		r->n = i + 1;
	return &r->rw[i];
}

static void worker_free(void *w)
{
	(void)w;        /* the rules own their engines: counters outlive the pipeline */
}

static void route(void *w, const struct isp_packet *p, unsigned n, uint64_t *dest)
{
	isp_engine_route(((struct rules_worker *)w)->e, p, n, dest);
}

static bool local_only(void *w)
{
	return isp_engine_local_only(((struct rules_worker *)w)->e);
}

static bool local_in_order(void *w, bool bytes_stay)
{
	return event_batch_start(((struct rules_worker *)w)->e, bytes_stay);
}

static void batch_done(void *w)
{
	event_batch_done(((struct rules_worker *)w)->e);
}

static void batch_commit(void *w)
{
	event_batch_commit(((struct rules_worker *)w)->e);
}

static void item(void *w, const struct isp_packet *p, uint64_t what)
{
	isp_engine_item(((struct rules_worker *)w)->e, p, what);
}

static void item_held(void *w, const struct isp_packet *p, uint64_t what, bool bytes_stay)
{
	engine_item_held(((struct rules_worker *)w)->e, p, what, bytes_stay);
}

static void item_routed(void *w, const struct isp_packet *p, uint64_t what)
{
	isp_engine_item_routed(((struct rules_worker *)w)->e, p, what);
}

static size_t pack(void *w, const struct isp_packet *p, uint64_t what, uint8_t *out, size_t room)
{
	return isp_engine_pack(((struct rules_worker *)w)->e, p, what, out, room);
}

static void item_packed(void *w, const struct isp_packet *p, const uint8_t *vals, size_t len,
			uint64_t what)
{
	isp_engine_item_packed(((struct rules_worker *)w)->e, p, vals, len, what);
}

static void tick(void *w, uint64_t now_ns)
{
	isp_engine_tick(((struct rules_worker *)w)->e, now_ns);
}

static void flush(void *w)
{
	isp_engine_flush(((struct rules_worker *)w)->e);
}

/* With every worker held at the barrier: their windows, then a swap that
 * waits (hot reload), which may act on every engine now. */
static void merge(void *rules, void *const *workers, unsigned n)
{
	struct isp_rules *r = rules;
	struct isp_engine *e[ISP_MAX_WORKERS];

	for (unsigned i = 0; i < n; i++)
		e[i] = ((struct rules_worker *const *)workers)[i]->e;
	/* large windows: their records are written by every worker next */
	r->sharing = isp_engine_merge_begin(r->merger, e, n);
	if (!r->sharing)
		rules_swap_here(r);
}

static void merge_share(void *rules, void *w, void (*wait)(void *ctx, unsigned *spins), void *ctx)
{
	struct isp_rules *r = rules;

	if (r->sharing)
		isp_engine_merge_share(r->merger, ((struct rules_worker *)w)->e, wait, ctx);
}

static void merge_end(void *rules, void *const *workers, unsigned n)
{
	struct isp_rules *r = rules;

	(void)workers;
	(void)n;
	if (!r->sharing)
		return;
	r->sharing = false;
	isp_engine_merge_end(r->merger);
	rules_swap_here(r);
}

static uint64_t window_end(void *rules, uint64_t t)
{
	struct isp_rules *r = rules;
	const struct rules_gen *g = atomic_load_explicit(&r->gen, memory_order_acquire);
	uint64_t next = engine_window_end(g->prog, t, false);

	/* flow monitors: each sub-interval, as set now */
	for (unsigned i = 0; i < g->prog->nmonitors; i++) {
		uint64_t p = atomic_load_explicit(&g->period[i], memory_order_relaxed);
		if ((t / p + 1) * p < next)
			next = (t / p + 1) * p;
	}
	/* Sketch-Merge reporters that went quiet are NACKed on ticks */
	const struct isp_program *prog = g->prog;
	bool nack = prog->dta.nack > 0 || (prog->dta.nack == 0 && r->live);
	for (unsigned i = 0; nack && i < prog->ndta; i++) {
		const uint64_t p = DTA_TICK_NS;
		if (prog->dta_stores[i].reports && prog->dta_stores[i].cfg.kind == ISP_DTA_SKETCH_MERGE &&
		    (t / p + 1) * p < next)
			next = (t / p + 1) * p;
	}
	return next;
}

/* An engine's counters now, per rule (events, then queries): only its
 * own thread, or anyone once the workers stopped. */
static void engine_counts(const struct isp_engine *e, struct rule_stats *out)
{
	unsigned ne = e->prog->nevents;

	for (unsigned i = 0; i < ne; i++) {
		out[i] = e->ev[i].st;
		/* (settled in order: the merger's evictions, counted by the
		 * worker that committed them) */
		out[i].evictions += e->ev[i].keys.evictions;
	}
	for (unsigned i = 0; i < e->prog->nqueries; i++) {
		out[ne + i] = e->q[i].st;
		/* tables move between groups and done (a window closed, a merge):
		 * their counts with them */
		out[ne + i].overflows = e->q[i].groups.overflows + e->q[i].done.overflows;
	}
	for (unsigned i = 0, at = ne + e->prog->nqueries; i < e->prog->nmonitors; i++) {
		out[at + i] = e->mon[i].st;
		out[at + i].evictions = e->mon[i].entries.evictions;
		out[at + i].entries = e->mon[i].entries.count;
	}
}

void rules_publish_engine(struct isp_engine *e)
{
	pthread_mutex_lock(&e->pub_mu);
	engine_counts(e, e->pub);
	dta_publish(e);
	pthread_mutex_unlock(&e->pub_mu);
}

/* On a worker's thread (isp_pipeline_sample): its engine, and the merger,
 * which only the worker that merges writes, with every other worker
 * waiting at the barrier, so none is publishing it then. */
static void publish(void *w)
{
	struct rules_worker *rw = w;

	engine_ahead_drain(rw->e);      /* no item held across a swap or a command */
	if (rw->r->n == 1)
		rules_swap_here(rw->r);         /* one worker: between two items */
	struct isp_engine *e = rw->e;
	engine_control_apply(e);
	rules_publish_engine(e);
	if (e->merger)
		rules_publish_engine(e->merger);
}

static bool holding(void *w)
{
	return isp_engine_holding(((struct rules_worker *)w)->e);
}

static void drain(void *w, bool final)
{
	isp_engine_drain(((struct rules_worker *)w)->e, final);
}

const struct isp_pipeline_ops isp_rules_ops = {
	.worker_new = worker_new,
	.worker_free = worker_free,
	.route = route,
	.local_only = local_only,
	.local_in_order = local_in_order,
	.batch_done = batch_done,
	.batch_commit = batch_commit,
	.item = item,
	.item_held = item_held,
	.item_routed = item_routed,
	.pack = pack,
	.item_packed = item_packed,
	.tick = tick,
	.flush = flush,
	.merge = merge,
	.merge_share = merge_share,
	.merge_end = merge_end,
	.window_end = window_end,
	.publish = publish,
	.holding = holding,
	.drain = drain,
};

static void add_counts(struct rule_stats *to, const struct rule_stats *from, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		to[i].matched += from[i].matched;
		to[i].records += from[i].records;
		to[i].dropped += from[i].dropped;
		to[i].evictions += from[i].evictions;
		to[i].overflows += from[i].overflows;
		to[i].expired += from[i].expired;
		to[i].ahead += from[i].ahead;
		to[i].flows += from[i].flows;
		to[i].sampled_out += from[i].sampled_out;
		to[i].excluded += from[i].excluded;
		to[i].entries += from[i].entries;
		/* every worker closes the same windows */
		if (from[i].windows > to[i].windows)
			to[i].windows = from[i].windows;
	}
}

/* Sum over the merger and every worker: published or live counters. */
static void sum_counts(const struct isp_rules *r, bool published, struct rule_stats *sum,
		       struct rule_stats *tmp)
{
	unsigned n = r->prog->nevents + r->prog->nqueries + r->prog->nmonitors;
	struct isp_engine *all[ISP_MAX_WORKERS + 1];
	unsigned k = 0;

	memset(sum, 0, n * sizeof(*sum));
	if (r->merger)
		all[k++] = r->merger;
	for (unsigned i = 0; i < r->n; i++)
		if (r->worker[i])
			all[k++] = r->worker[i];
	for (unsigned i = 0; i < k; i++) {
		if (published) {
			pthread_mutex_lock(&all[i]->pub_mu);
			add_counts(sum, all[i]->pub, n);
			pthread_mutex_unlock(&all[i]->pub_mu);
		} else {
			engine_counts(all[i], tmp);
			add_counts(sum, tmp, n);
		}
	}
}

static unsigned counts(const struct isp_rules *r, bool published, struct isp_rule_count *out,
		       unsigned max)
{
	/* a swap does not free engines or change the program meanwhile */
	pthread_mutex_lock((pthread_mutex_t *)&r->mu);
	unsigned ne = r->prog->nevents, nq = r->prog->nqueries, n = ne + nq + r->prog->nmonitors;
	struct rule_stats *sum = calloc(2 * n + 1, sizeof(*sum));

	if (!sum) {
		pthread_mutex_unlock((pthread_mutex_t *)&r->mu);
		return 0;
	}
	sum_counts(r, published, sum, sum + n);
	for (unsigned i = 0; i < n && i < max; i++) {
		const struct rule_stats *s = &sum[i];
		out[i] = (struct isp_rule_count){
			.kind = i < ne ? "event" : i < ne + nq ? "query" : "monitor",
			.name = i < ne ? r->prog->events[i].name : i < ne + nq ?
				r->prog->queries[i - ne].name : r->prog->monitors[i - ne - nq].name,
			.matched = s->matched, .records = s->records, .dropped = s->dropped,
			.evicted = s->evictions, .expired = s->expired, .ahead = s->ahead,
			.overflows = s->overflows, .windows = s->windows,
			.expires = i < ne && r->prog->events[i].idle_ns != 0,
			.flows = s->flows, .sampled_out = s->sampled_out, .excluded = s->excluded,
			.entries = s->entries,
		};
	}
	pthread_mutex_unlock((pthread_mutex_t *)&r->mu);
	free(sum);
	return n;
}

unsigned isp_rules_counts(const struct isp_rules *r, struct isp_rule_count *out, unsigned max)
{
	return counts(r, true, out, max);
}

void isp_rules_print_stats(const struct isp_rules *r, bool published, FILE *out)
{
	unsigned n = counts(r, published, NULL, 0);
	struct isp_rule_count *c;

	if (!r->merger && !r->n)        /* never ran */
		return;
	if (!(c = calloc(n + 1, sizeof(*c))))
		return;
	unsigned got = counts(r, published, c, n);
	n = got < n ? got : n;
	for (unsigned i = 0; i < n; i++) {
		char ahead[48] = "";    /* only where a table grew large (ahead.c) */
		if (c[i].ahead)
			snprintf(ahead, sizeof(ahead), ", %llu looked up ahead",
				 (unsigned long long)c[i].ahead);
		if (c[i].kind[0] == 'e') {
			char idle[48] = "";
			if (c[i].expires)
				snprintf(idle, sizeof(idle), ", %llu keys expired",
					 (unsigned long long)c[i].expired);
			fprintf(out, "intspect: event-report %s: %llu matched, %llu records, "
				"%llu dropped, %llu keys evicted%s%s\n", c[i].name,
				(unsigned long long)c[i].matched, (unsigned long long)c[i].records,
				(unsigned long long)c[i].dropped, (unsigned long long)c[i].evicted,
				idle, ahead);
		} else if (c[i].kind[0] == 'm') {
			fprintf(out, "intspect: flow-monitor %s: %llu matched, %llu flows (%llu in the "
				"table), %llu packets sampled out, %llu excluded, %llu intervals, "
				"%llu records, %llu dropped, %llu evicted, %llu overflow records%s\n",
				c[i].name, (unsigned long long)c[i].matched,
				(unsigned long long)c[i].flows, (unsigned long long)c[i].entries,
				(unsigned long long)c[i].sampled_out, (unsigned long long)c[i].excluded,
				(unsigned long long)c[i].windows, (unsigned long long)c[i].records,
				(unsigned long long)c[i].dropped, (unsigned long long)c[i].evicted,
				(unsigned long long)c[i].overflows, ahead);
		} else {
			fprintf(out, "intspect: query-report %s: %llu matched, %llu windows, "
				"%llu records, %llu dropped, %llu packets beyond max-groups%s\n",
				c[i].name, (unsigned long long)c[i].matched,
				(unsigned long long)c[i].windows, (unsigned long long)c[i].records,
				(unsigned long long)c[i].dropped, (unsigned long long)c[i].overflows,
				ahead);
		}
	}
	free(c);
	/* at the end only (the workers' own counters): none is ever made so */
	uint64_t bad = 0;
	for (unsigned i = 0; !published && i < r->n; i++)
		bad += r->worker[i] ? r->worker[i]->carry_bad : 0;
	if (bad)
		fprintf(out, "intspect: %llu items passed between workers as values could not be "
			"read back and were not handled (a bug: please report it)\n",
			(unsigned long long)bad);
	if (r->prog->ndta && r->stores) {
		struct dta_counts dc;
		memset(&dc, 0, sizeof(dc));
		for (unsigned i = 0; i < r->n; i++) {
			if (published)
				pthread_mutex_lock(&r->worker[i]->pub_mu);
			dta_counts_add(r->worker[i], published, &dc);
			if (published)
				pthread_mutex_unlock(&r->worker[i]->pub_mu);
		}
		dta_print_stats(r->prog, r->stores, &dc, out);
	}
}

int isp_rules_dta(struct isp_rules *r, const char *op, const char *store,
		  const char *const *args, unsigned nargs, char **json, char *err, size_t errlen)
{
	int rc;

	pthread_mutex_lock(&r->mu);
	if (!r->stores) {
		pthread_mutex_unlock(&r->mu);
		*json = NULL;
		snprintf(err, errlen, r->prog->ndta ? "the stores are not open yet" :
			 "the configuration has no dta-store");
		return -1;
	}
	rc = dta_query(r->prog, r->reg, r->stores, op, store, args, nargs, json, err, errlen);
	pthread_mutex_unlock(&r->mu);
	return rc;
}

void isp_rules_free(struct isp_rules *r)
{
	if (!r)
		return;
	for (unsigned i = 0; i < r->n; i++) {
		isp_engine_free(r->worker[i]);
		isp_engine_free(r->next_worker[i]);
	}
	isp_engine_free(r->merger);
	isp_engine_free(r->next_merger);
	for (struct rules_gen *g = atomic_load(&r->gen), *older; g; g = older) {
		older = g->older;
		free(g);
	}
	free(r->next_gen);
	dta_stores_release(r->next_stores, r->next_prog ? r->next_prog->ndta : 0, r->stores,
			   r->stores ? r->prog->ndta : 0);
	dta_stores_release(r->stores, r->prog->ndta, NULL, 0);
	pthread_mutex_destroy(&r->mu);
	free(r);
}
