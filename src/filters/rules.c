/*
 * rules.c - the rule engines as the pipeline runs them (engine.h): one
 * engine per worker and, with several, one more that merges their windows.
 */
#include <stdlib.h>

#include "engine.h"
#include "engine_int.h"

struct isp_rules {
	const struct isp_program *prog;
	const struct isp_registry *reg;
	struct isp_channel **channels;
	struct isp_engine *merger;              /* several workers only */
	struct isp_engine *worker[ISP_MAX_WORKERS];
	unsigned n;
};

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
	return r;
}

static void *worker_new(void *rules, unsigned i, unsigned n, char *err, size_t errlen)
{
	struct isp_rules *r = rules;

	if (n > 1 && !r->merger &&
	    !(r->merger = isp_engine_new(r->prog, r->reg, r->channels, false, err, errlen)))
		return NULL;
	struct isp_engine *e = isp_engine_new(r->prog, r->reg, r->channels, n > 1, err, errlen);
	if (!e)
		return NULL;
	e->self = i;            /* per-hop rules: which hops are this worker's */
	e->nworkers = n;
	r->worker[i] = e;
	if (i + 1 > r->n)
		r->n = i + 1;
	return e;
}

static void worker_free(void *w)
{
	(void)w;        /* the rules own their engines: counters outlive the pipeline */
}

static void route(void *w, const struct isp_packet *p, unsigned n, uint64_t *dest)
{
	isp_engine_route(w, p, n, dest);
}

static void item(void *w, const struct isp_packet *p, uint64_t what)
{
	isp_engine_item(w, p, what);
}

static void tick(void *w, uint64_t now_ns)
{
	isp_engine_tick(w, now_ns);
}

static void flush(void *w)
{
	isp_engine_flush(w);
}

static void merge(void *rules, void *const *workers, unsigned n)
{
	struct isp_rules *r = rules;

	isp_engine_merge_windows(r->merger, (struct isp_engine *const *)workers, n);
}

static uint64_t window_end(void *rules, uint64_t t)
{
	return isp_engine_window_end(((struct isp_rules *)rules)->prog, t);
}

const struct isp_pipeline_ops isp_rules_ops = {
	.worker_new = worker_new,
	.worker_free = worker_free,
	.route = route,
	.item = item,
	.tick = tick,
	.flush = flush,
	.merge = merge,
	.window_end = window_end,
};

void isp_rules_print_stats(const struct isp_rules *r, FILE *out)
{
	const struct isp_engine *all[ISP_MAX_WORKERS + 1];
	unsigned k = 0;

	if (r->merger)
		all[k++] = r->merger;
	for (unsigned i = 0; i < r->n; i++)
		if (r->worker[i])
			all[k++] = r->worker[i];
	if (k)
		isp_engine_print_stats_sum(all, k, out);
}

void isp_rules_free(struct isp_rules *r)
{
	if (!r)
		return;
	for (unsigned i = 0; i < r->n; i++)
		isp_engine_free(r->worker[i]);
	isp_engine_free(r->merger);
	free(r);
}
