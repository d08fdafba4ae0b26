/*
 * pipeline_live.c - a live input read in shares (pipeline.h): each worker
 * reads its own (fanout socket, reuseport socket, RSS queue), hands items
 * it does not own over the mesh, and ticks come from the controller on
 * the wall clock.
 */
#include "pipeline_int.h"

#define READ_BURST 32           /* own packets between two looks at the mesh */
#define DRAIN_BURST 64          /* items from the mesh between two reads */
/* ... when the worker's own share was idle: its next read may wait up to
 * ISP_LIVE_TIMEOUT_MS, so a worker whose share is quiet (the kernel gave
 * every flow to another) must take all it was sent at each look, not 64
 * items a wait (6,400 items/s: the rest was dropped at its full ring) */
#define DRAIN_IDLE 8192

/* ---- live inputs: shares read by their own workers ---- */

static void handle_read(struct worker *me)
{
	struct isp_pipeline *pl = me->pl;
	struct isp_packet *p = &me->own;

	me->local++;
	/* unique and increasing per share: first/last keep an order */
	p->index = me->local * pl->n + me->id;
	atomic_store_explicit(&me->packets, me->local, memory_order_relaxed);
	isp_dissect(pl->reg, p, pl->first, &me->st);
	do
		pl_dispatch(me, p, true, false);
	while (isp_dissect_next_report(pl->reg, p, &me->st));
}

static void end_reading(struct worker *me)
{
	me->reading = false;
	atomic_store_explicit(&me->live, false, memory_order_release);
}

static bool read_burst(struct worker *me)
{
	struct isp_packet *p = &me->own;
	unsigned k = 0;

	for (; k < READ_BURST; k++) {
		int rc = isp_source_next(me->src, &p->data, &p->caplen, &p->wirelen, &p->ts_ns,
					 me->err, sizeof(me->err));
		if (rc == 1) {
			p->backlog = isp_source_backlog(me->src);
			handle_read(me);
			continue;
		}
		if (rc == 2)
			break;
		if (rc < 0)
			atomic_store_explicit(&me->failed, true, memory_order_release);
		end_reading(me);
		break;
	}
	isp_mesh_flush(me->pl->mesh, me->id);
	return k > 0;
}

/* Items from `from`, up to a tick marker (left in place). */
static unsigned drain_from(struct worker *me, unsigned from, unsigned budget, bool *at_tick)
{
	struct isp_pipeline *pl = me->pl;
	unsigned done = 0;
	struct spsc_msg *m;

	*at_tick = false;
	while (done < budget && (m = isp_mesh_peek(pl->mesh, from, me->id))) {
		if (m->kind == SPSC_TICK) {
			*at_tick = true;
			break;
		}
		pl_item_msg(me, &me->peer, m);
		isp_mesh_release(pl->mesh, from, me->id, m);
		done++;
	}
	return done;
}

/* A tick asked by the controller: a marker to every other worker, what
 * came before theirs, then the barrier. */
static void live_tick(struct worker *me, uint64_t ts)
{
	struct isp_pipeline *pl = me->pl;
	bool seen[ISP_MAX_WORKERS] = { false };
	unsigned pending = pl->n - 1, spins = 0;

	isp_mesh_flush(pl->mesh, me->id);
	isp_mesh_broadcast(pl->mesh, me->id, SPSC_TICK, ts, 0);
	while (pending) {
		bool busy = false;
		for (unsigned j = 0; j < pl->n; j++) {
			bool at_tick;
			if (j == me->id || seen[j])
				continue;
			if (drain_from(me, j, DRAIN_BURST, &at_tick))
				busy = true;
			if (at_tick) {
				isp_mesh_release(pl->mesh, j, me->id, isp_mesh_peek(pl->mesh, j, me->id));
				seen[j] = true;
				pending--;
			}
		}
		if (busy)
			spins = 0;
		else
			pl_wait_step(me, &spins);
	}
	pl_barrier(me, ts);
}

void pl_run_live(struct worker *me)
{
	struct isp_pipeline *pl = me->pl;
	uint64_t ticks = 0;
	unsigned spins = 0;
	bool staged = false, read_any = true;

	for (;;) {
		pl_maybe_publish(me);
		uint64_t req = atomic_load_explicit(&pl->tick_req, memory_order_acquire);
		if (req > ticks) {
			ticks = req;
			live_tick(me, atomic_load_explicit(&pl->tick_ts, memory_order_relaxed));
			atomic_store_explicit(&me->ticks_done, ticks, memory_order_release);
			continue;
		}
		if (atomic_load_explicit(&pl->quit, memory_order_acquire))
			return;
		bool busy = false, at_tick;
		const unsigned budget = read_any ? DRAIN_BURST : DRAIN_IDLE;
		for (unsigned j = 0; j < pl->n; j++)
			if (j != me->id && drain_from(me, j, budget, &at_tick))
				busy = true;
		read_any = false;
		if (me->reading) {
			/* what the input read goes through first */
			if (atomic_load_explicit(&pl->stop_reading, memory_order_acquire) &&
			    !isp_source_pending(me->src))
				end_reading(me);
			else if (read_burst(me))
				busy = read_any = true;
		}
		if (busy) {
			spins = 0;
			staged = true;
		} else {
			/* idle: records staged in batches go now, not at the
			 * next tick (which may be far, or never come) */
			if (staged && pl->ops.flush)
				pl->ops.flush(me->ctx);
			staged = false;
			spsc_pause(&spins);
		}
	}
}

