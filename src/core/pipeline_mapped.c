/*
 * pipeline_mapped.c - a memory-mapped capture whose rules need their
 * keys' owners (event rules, per-flow state), read whole by every worker.
 *
 * Every worker reads every record through its own cursor on the one
 * mapping and dissects it, then runs on each item only its own part of
 * the route: its keys, its monitored flows, and the rules that merge from
 * any split for the items of its share (every n-th run of SHARE_RUN
 * records, which its counters also count). So each worker meets every
 * item and every tick in the file's order by itself: nothing crosses
 * cores, nothing is set aside, and workers wait for each other only at
 * ticks, where windows merge. Dissecting a record on every worker costs
 * less than handing its dissection to another core and keeping the
 * file's order between them (bench/workers.sh, bench/README.md).
 */
#include <string.h>

#include "pcapmap.h"
#include "pipeline_int.h"

#define SHARE_RUN 128   /* records a share takes in turn, as a batch */
#define CHECK_EVERY 64  /* records between two looks at stop, signals, the end */
#define MAX_LEAD (4u << 20)     /* bytes a worker may read ahead of the last one */

static uint64_t window_end(const struct isp_pipeline *pl, uint64_t t)
{
	return pl->ops.window_end ? pl->ops.window_end(pl->rules, t) : UINT64_MAX;
}

static bool asked_to_stop(const struct isp_pipeline *pl, const _Atomic int *stop)
{
	return atomic_load_explicit(stop, memory_order_relaxed) ||
	       atomic_load_explicit(&pl->broken, memory_order_relaxed);
}

/* Where the last worker is (under end_mu): the pages before it go back. */
static size_t last_off(const struct isp_pipeline *pl)
{
	size_t floor = SIZE_MAX;

	for (unsigned i = 0; i < pl->n; i++)
		if (pl->w[i].at_off < floor)
			floor = pl->w[i].at_off;
	return floor;
}

/*
 * A check point, every CHECK_EVERY records: where every worker stops
 * when one is asked to (a signal, a broken channel), decided under a lock
 * so that all stop after the same record: the first check point no
 * worker has passed. Also where the pages behind every worker go back,
 * and where a worker MAX_LEAD ahead of the last waits for it: the pages
 * between them stay mapped, and the last one finds them in the cache.
 * (The last one never waits here, and a worker waiting at a tick is not
 * ahead of any: none waits for another that waits.)
 */
static bool go_on(struct worker *me, struct pcap_map *view, uint64_t rec, const _Atomic int *stop)
{
	struct isp_pipeline *pl = me->pl;
	bool asked = asked_to_stop(pl, stop);
	size_t floor;
	unsigned spins = 0;

	pthread_mutex_lock(&pl->end_mu);
	me->at_rec = rec;
	me->at_off = view->off;
	while (!asked && view->off - (floor = last_off(pl)) > MAX_LEAD) {
		pthread_mutex_unlock(&pl->end_mu);
		spsc_pause(&spins);
		asked = asked_to_stop(pl, stop);
		pthread_mutex_lock(&pl->end_mu);
	}
	if (asked && pl->end_rec == UINT64_MAX) {
		/* a worker that has passed this check point (or not started:
		 * taken as past 0) goes on to its next one */
		bool passed = false;
		uint64_t furthest = 0;
		for (unsigned i = 0; i < pl->n; i++) {
			if (i == me->id)
				continue;
			passed |= pl->w[i].at_rec >= rec;
			if (pl->w[i].at_rec > furthest)
				furthest = pl->w[i].at_rec;
		}
		pl->end_rec = passed ? furthest + CHECK_EVERY : rec;
	}
	floor = last_off(pl);
	bool more = rec < pl->end_rec;
	pthread_mutex_unlock(&pl->end_mu);
	view->keep_from = floor;
	return more;
}

void pl_run_mapped(struct worker *me)
{
	struct isp_pipeline *pl = me->pl;
	struct pcap_map view = *isp_source_map(pl->src[0]);     /* its own cursor */
	const _Atomic int *stop = isp_source_stop_flag(pl->src[0]);
	struct isp_packet *p = &me->own;
	struct isp_stats others;        /* the records of other shares: counted there */
	uint64_t rec = 0, next_tick = 0;

	memset(&others, 0, sizeof(others));
	for (;; rec++) {
		if (pl->count && rec >= pl->count)
			break;
		if (rec % CHECK_EVERY == 0) {
			pl_maybe_publish(me);
			if (!go_on(me, &view, rec, stop))
				break;
		}
		int got = pcap_map_next(&view, &p->data, &p->caplen, &p->wirelen, &p->ts_ns, me->err,
					sizeof(me->err));
		if (got == 0)
			break;
		if (got < 0) {  /* the same record for every worker */
			atomic_store_explicit(&me->failed, true, memory_order_release);
			break;
		}
		/* ticks on packet time, where one reader places them */
		if (pl->ops.tick) {
			if (next_tick == 0) {
				next_tick = window_end(pl, p->ts_ns);
			} else if (p->ts_ns >= next_tick) {
				pl_barrier(me, p->ts_ns);
				next_tick = window_end(pl, p->ts_ns);
			}
		}
		unsigned reader = (unsigned)(rec / SHARE_RUN % pl->n);
		bool mine = reader == me->id;
		p->index = rec + 1;
		isp_dissect(pl->reg, p, pl->first, mine ? &me->st : &others);
		if (mine) {
			me->local++;
			if (me->local % CHECK_EVERY == 0)
				atomic_store_explicit(&me->packets, me->local, memory_order_relaxed);
		}
		if (isp_dissect_refused(p))
			continue;       /* a corrupt record: no item */
		do {
			pl_route(me, p, reader);
			uint64_t what = me->dest[me->id];
			if (!what)
				continue;
			if (pl->ops.route && pl->ops.item_routed)
				pl->ops.item_routed(me->ctx, p, what);
			else
				pl->ops.item(me->ctx, p, what);
			me->handled++;
		} while (isp_dissect_next_report(pl->reg, p, mine ? &me->st : &others));
	}
	atomic_store_explicit(&me->packets, me->local, memory_order_relaxed);
	atomic_store_explicit(&me->items, me->handled, memory_order_relaxed);
	pl_barrier(me, UINT64_MAX);        /* every window */
}
