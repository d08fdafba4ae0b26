/*
 * swap.c - hot reload of the rules (engine.h: isp_rules_swap). A new rule
 * set gets new engines, built on the caller's thread; they replace the
 * old ones at one point for every worker: between two items with one
 * worker, at a tick barrier (every worker held, every item routed before
 * it handled) with several. A rule whose section did not change hands its
 * state over (tables, open windows, delta memories, flow tables, whether
 * it is disabled); a rule that went writes what it holds first, as at the
 * end of the input; a new rule starts empty.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "engine.h"
#include "engine_int.h"
#include "rules_int.h"

#define SWAP_WAIT_MS 3000

static int same_text(const char *a, const char *b)
{
	return a && b && strcmp(a, b) == 0;
}

/* The rule of the old program with the same section, or -1. */
static int kept_event(const struct isp_program *o, const struct erule *r)
{
	for (unsigned i = 0; i < o->nevents; i++)
		if (same_text(o->events[i].text, r->text))
			return (int)i;
	return -1;
}

static int kept_query(const struct isp_program *o, const struct qrule *r)
{
	for (unsigned i = 0; i < o->nqueries; i++)
		if (same_text(o->queries[i].text, r->text))
			return (int)i;
	return -1;
}

static int kept_monitor(const struct isp_program *o, const struct mrule *r)
{
	for (unsigned i = 0; i < o->nmonitors; i++)
		if (same_text(o->monitors[i].text, r->text))
			return (int)i;
	return -1;
}

#define SWAP_STATE(a, b) do { __typeof__(a) t_ = (a); (a) = (b); (b) = t_; } while (0)

/* A disabled rule stays disabled: its bit is 0, kept in saved_bit. */
static void keep_disabled(struct isp_engine *ne, uint64_t *nbit, unsigned nat,
			  const uint64_t *obit)
{
	if (*obit == 0 && *nbit) {
		ne->saved_bit[nat] = *nbit;
		*nbit = 0;
	}
}

/*
 * The state of every rule the new program keeps moves from oe to ne, and
 * ne's fresh state goes to oe in its place: oe then holds only what the
 * rules that went had, and both free as usual.
 */
static void adopt(struct isp_engine *ne, struct isp_engine *oe)
{
	const struct isp_program *np = ne->prog, *op = oe->prog;
	unsigned nq0 = np->nevents, nm0 = np->nevents + np->nqueries;

	ne->last_ts = oe->last_ts;
	ne->tick_now = oe->tick_now;
	for (unsigned i = 0; i < np->nevents; i++) {
		int j = kept_event(op, &np->events[i]);
		if (j < 0)
			continue;
		SWAP_STATE(ne->ev[i], oe->ev[j]);
		ne->ev[i].wants_key = 0;        /* its channels are the new engine's */
		event_bind(ne, i);
		event_bind(oe, (unsigned)j);
		keep_disabled(ne, &ne->ebit[i], i, &oe->ebit[j]);
	}
	for (unsigned i = 0; i < np->nqueries; i++) {
		int j = kept_query(op, &np->queries[i]);
		if (j < 0)
			continue;
		SWAP_STATE(ne->q[i], oe->q[j]);
		/* its plan points at the engine's slots and program */
		query_bind(ne, i);
		query_bind(oe, (unsigned)j);
		keep_disabled(ne, &ne->qbit[i], nq0 + i, &oe->qbit[j]);
	}
	for (unsigned i = 0; i < np->nmonitors; i++) {
		int j = kept_monitor(op, &np->monitors[i]);
		if (j < 0)
			continue;
		SWAP_STATE(ne->mon[i], oe->mon[j]);
		keep_disabled(ne, &ne->mbit[i], nm0 + i, &oe->mbit[j]);
	}
}

void rules_swap_here(struct isp_rules *r)
{
	int want = SWAP_PENDING;

	if (atomic_load_explicit(&r->swap_state, memory_order_acquire) != SWAP_PENDING ||
	    !atomic_compare_exchange_strong(&r->swap_state, &want, SWAP_RUNNING))
		return;
	unsigned n = r->n;
	struct isp_engine *old[ISP_MAX_WORKERS], *old_merger = r->merger;
	for (unsigned i = 0; i < n; i++) {
		old[i] = r->worker[i];
		adopt(r->next_worker[i], old[i]);
	}
	if (old_merger)
		adopt(r->next_merger, old_merger);
	/* ticks at the sub-intervals the monitors have: a kept one keeps an
	 * interval set-interval gave it, which its section does not say */
	for (unsigned i = 0; n && i < r->next_prog->nmonitors; i++)
		atomic_store(&r->next_gen->period[i], r->next_worker[0]->mon[i].sub_ns);
	/* the rules that went write what they hold, as at the end of the
	 * input, through the old engines (their channels are still open) */
	for (unsigned i = 0; i < n; i++)
		isp_engine_tick(old[i], UINT64_MAX);
	if (old_merger)
		isp_engine_merge_windows(old_merger, old, n);
	for (unsigned i = 0; i < n; i++)
		isp_engine_flush(old[i]);
	pthread_mutex_lock(&r->mu);
	for (unsigned i = 0; i < n; i++) {
		r->worker[i] = r->next_worker[i];
		r->rw[i].e = r->next_worker[i];
		r->next_worker[i] = NULL;
	}
	r->merger = r->next_merger;
	r->next_merger = NULL;
	struct dta_store **old_stores = r->stores;
	const struct isp_program *old_prog = r->prog;
	r->stores = r->next_stores;
	r->next_stores = NULL;
	r->prog = r->next_prog;
	r->channels = r->next_channels;
	r->next_gen->older = atomic_load(&r->gen);
	atomic_store_explicit(&r->gen, r->next_gen, memory_order_release);
	r->next_gen = NULL;
	pthread_mutex_unlock(&r->mu);
	/* their counters, published at once (a reader sees no dip to 0) */
	for (unsigned i = 0; i < n; i++)
		rules_publish_engine(r->worker[i]);
	if (r->merger)
		rules_publish_engine(r->merger);
	for (unsigned i = 0; i < n; i++)
		isp_engine_free(old[i]);
	isp_engine_free(old_merger);
	/* the stores the new program did not keep (files stay for readers) */
	dta_stores_release(old_stores, old_stores ? old_prog->ndta : 0, r->stores,
			   r->stores ? r->prog->ndta : 0);
	atomic_store_explicit(&r->swap_state, SWAP_DONE, memory_order_release);
}

static void free_next(struct isp_rules *r)
{
	for (unsigned i = 0; i < ISP_MAX_WORKERS; i++) {
		isp_engine_free(r->next_worker[i]);
		r->next_worker[i] = NULL;
	}
	isp_engine_free(r->next_merger);
	r->next_merger = NULL;
	free(r->next_gen);
	r->next_gen = NULL;
	dta_stores_release(r->next_stores, r->next_prog ? r->next_prog->ndta : 0, r->stores,
			   r->stores ? r->prog->ndta : 0);
	r->next_stores = NULL;
}

int isp_rules_swap(struct isp_rules *r, struct isp_pipeline *pl, const struct isp_program *prog,
		   struct isp_channel **channels, char *err, size_t errlen)
{
	unsigned n = r->n;

	if (!pl || n == 0) {
		snprintf(err, errlen, "the rules are not running");
		return -1;
	}
	if (!isp_pipeline_barrier_soon(pl)) {
		snprintf(err, errlen, "several workers reading a capture file meet only at the "
			 "file's window ends: reload with one worker, or on a live input");
		return -1;
	}
	/* stores whose section did not change stay (the same objects) */
	r->next_prog = prog;
	if (prog->ndta && !(r->next_stores = dta_stores_open(prog, n, r->prog, r->stores, err,
							      errlen)))
		goto fail;
	if (n > 1 && !(r->next_merger = rules_engine_new(r, prog, channels, r->next_stores, false,
							 err, errlen)))
		goto fail;
	for (unsigned i = 0; i < n; i++) {
		struct isp_engine *e = rules_engine_new(r, prog, channels, r->next_stores, n > 1, err,
							errlen);
		if (!e)
			goto fail;
		e->self = i;
		e->nworkers = n;
		e->merger = r->next_merger;
		r->next_worker[i] = e;
	}
	if (!(r->next_gen = rules_gen_new(prog))) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	r->next_prog = prog;
	r->next_channels = channels;
	atomic_store_explicit(&r->swap_state, SWAP_PENDING, memory_order_release);
	struct isp_stats st;
	for (unsigned waited = 0; waited < SWAP_WAIT_MS; waited++) {
		if (atomic_load_explicit(&r->swap_state, memory_order_acquire) == SWAP_DONE)
			break;
		if (n == 1) {
			memset(&st, 0, sizeof(st));
			isp_pipeline_sample(pl, &st, NULL, 1);  /* wakes an idle reader */
		} else {
			if (waited % 100 == 99)
				isp_pipeline_barrier_soon(pl);
			struct timespec ms = { 0, 1000000 };
			nanosleep(&ms, NULL);
		}
	}
	int want = SWAP_PENDING;
	if (atomic_compare_exchange_strong(&r->swap_state, &want, SWAP_NONE)) {
		/* no worker took it: nothing changed */
		free_next(r);
		snprintf(err, errlen, "the workers did not reach a point to swap the rules within "
			 "%d ms (the input ended, or they wait): the old rules keep running",
			 SWAP_WAIT_MS);
		return -1;
	}
	while (atomic_load_explicit(&r->swap_state, memory_order_acquire) != SWAP_DONE) {
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	atomic_store(&r->swap_state, SWAP_NONE);
	return 0;
fail:
	free_next(r);
	return -1;
}
