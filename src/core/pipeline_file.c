/*
 * pipeline_file.c - a capture file read as shares (pipeline.h): workers
 * take turns claiming batches (batches.h) and handle every batch in the
 * order of the file.
 */
#include "pipeline_int.h"

/* ---- capture files: batches, handled in the file's order ---- */

static void defer_tick(struct worker *me, uint64_t ts)
{
	struct spsc_msg *m = isp_fifo_push(&me->defer, 0);

	if (!m) {
		/* out of memory: the others wait at this tick, so it comes
		 * now, a batch early for this worker, rather than never */
		pl_barrier(me, ts);
		return;
	}
	m->kind = SPSC_TICK;
	m->ts_ns = ts;
}

/* One packet of a batch into the worker's own packet, dissected. */
static inline __attribute__((always_inline)) void dissect_pkt(struct worker *me, const struct isp_batch_pkt *bp)
{
	struct isp_packet *p = &me->own;

	p->data = bp->data;
	p->caplen = bp->caplen;
	p->wirelen = bp->wirelen;
	p->ts_ns = bp->ts_ns;
	p->index = bp->index;
	/* inline, as one worker's read loop: a call and the context's set-up
	 * a packet cost as much as a short decoder */
	isp_dissect_inline(&me->dis, me->pl->reg, p, me->pl->first, &me->st);
}

/* Dissect batch b: items for others go now, its own wait in `defer`
 * until the batches before b are handled. */
static void dissect_batch(struct worker *me, const struct isp_batch *batch, uint64_t b,
			  bool in_place)
{
	struct isp_pipeline *pl = me->pl;
	struct isp_packet *p = &me->own;
	struct isp_lines_ahead ahead;

	isp_lines_ahead_start(&ahead, batch);
	for (unsigned k = 0; k < batch->n; k++) {
		const struct isp_batch_pkt *bp = &batch->pkt[k];
		isp_lines_ahead_step(&ahead);
		if (bp->tick) {
			isp_mesh_broadcast(pl->mesh, me->id, SPSC_TICK, bp->tick, 0);
			if (in_place)
				pl_barrier(me, bp->tick);
			else
				defer_tick(me, bp->tick);
		}
		dissect_pkt(me, bp);
		do
			pl_dispatch(me, p, in_place, true);
		while (isp_dissect_next_report(pl->reg, p, &me->st));
	}
	me->local += batch->n;
	atomic_store_explicit(&me->packets, me->local, memory_order_relaxed);
	isp_mesh_broadcast(pl->mesh, me->id, SPSC_BATCH, 0, b);
	if (in_place)
		return;
	struct spsc_msg *m;
	unsigned spins = 0;     /* one count for the whole wait: it comes to spill and sleep */
	while (!(m = isp_fifo_push(&me->defer, 0)))
		pl_wait_step(me, &spins);       /* the end of the batch cannot be lost */
	m->kind = SPSC_BATCH;
}

struct ordered {
	uint64_t next;          /* the first batch not handled yet */
	uint64_t read;          /* the next own batch to claim */
	uint64_t dis;           /* the next own batch to dissect (<= read) */
	uint64_t end;           /* the first empty batch, once known */
	uint64_t eof;           /* its own first empty batch, once claimed */
	unsigned ahead;         /* own batches dissected, not handled */
};

static bool read_own(struct worker *me, struct ordered *o);

/* Its turn at the file comes while it handles: take it now, since the
 * others wait for what it reads (a worker that claimed its batches only
 * when idle held them up). */
static inline void claim_turn(struct worker *me, struct ordered *o)
{
	unsigned held = o->ahead + (unsigned)((o->read - o->dis) / me->pl->n);

	if (held < AHEAD && o->read < o->eof && o->read < o->end)
		read_own(me, o);
}

#define CLAIM_EVERY 16          /* items handled between two looks at the turn */

/* The oldest own batch dissected ahead, up to its marker. */
static void handle_own(struct worker *me, struct ordered *o)
{
	unsigned k = 0;
	struct spsc_msg *m;

	while ((m = isp_fifo_peek(&me->defer))) {
		if (m->kind == SPSC_BATCH) {
			isp_fifo_pop(&me->defer);
			return;
		}
		if (m->kind == SPSC_TICK) {
			uint64_t ts = m->ts_ns;
			isp_fifo_pop(&me->defer);
			pl_barrier(me, ts);
			continue;
		}
		pl_item_msg(me, &me->own, m);
		isp_fifo_pop(&me->defer);
		if (++k % CLAIM_EVERY == 0)
			claim_turn(me, o);
	}
}

enum { BATCH_PARTIAL, BATCH_DONE, BATCH_END };

/* What has come of batch bb, read by another worker: its items for this
 * one, up to its marker (BATCH_DONE), or the end of the input. */
static int handle_batch_of(struct worker *me, struct ordered *o, uint64_t bb)
{
	struct isp_pipeline *pl = me->pl;
	unsigned from = (unsigned)(bb % pl->n);
	struct spsc_msg *m;
	unsigned k = 0;

	while ((m = isp_mesh_peek(pl->mesh, from, me->id))) {
		k++;
		uint8_t kind = m->kind;
		uint64_t ts = m->ts_ns;
		if (kind == SPSC_PACKET || kind == SPSC_VALUES)
			pl_item_msg(me, &me->peer, m);
		isp_mesh_release(pl->mesh, from, me->id, m);
		if (kind == SPSC_TICK)
			pl_barrier(me, ts);
		else if (kind == SPSC_BATCH)
			return BATCH_DONE;
		else if (kind == SPSC_END)
			return BATCH_END;
		else if (k % CLAIM_EVERY == 0)
			claim_turn(me, o);
	}
	return BATCH_PARTIAL;
}

/* Read and dissect the next own batch: false when it is not its turn yet
 * or the input has ended. When it is the next to handle, its own items
 * are handled as they come, without a copy; else they wait in `defer`. */
static bool read_own(struct worker *me, struct ordered *o)
{
	struct isp_pipeline *pl = me->pl;
	struct isp_batch *batch = &me->batch[(o->read / pl->n) % AHEAD];
	int got = isp_batches_read(pl->batches, o->read, batch);

	if (got == ISP_BATCH_NOT_YET)
		return false;
	if (got <= 0)
		o->eof = o->read;       /* told to the others once what came before is sent */
	else
		o->read += pl->n;
	return got > 0;
}

/* Dissect the oldest own batch claimed: in place when it is the next to
 * handle, else set aside. At its end of input, tell the others. */
static bool dissect_own(struct worker *me, struct ordered *o)
{
	struct isp_pipeline *pl = me->pl;

	if (o->dis == o->read) {
		if (o->dis == o->eof) {
			isp_mesh_broadcast(pl->mesh, me->id, SPSC_END, 0, o->eof);
			if (o->eof < o->end)
				o->end = o->eof;
			o->eof = UINT64_MAX - 1;        /* said once */
		}
		return false;
	}
	bool in_place = o->next == o->dis && o->ahead == 0;
	dissect_batch(me, &me->batch[(o->dis / pl->n) % AHEAD], o->dis, in_place);
	if (in_place)
		o->next++;
	else
		o->ahead++;
	o->dis += pl->n;
	return true;
}

/* Commit the batches whose turn has come, and wait for the oldest while
 * more than `keep` wait (pl->commits). No worker waits here for one held
 * at a barrier: a tick opens its batch, every worker meets it before
 * taking a batch after it, and commits everything it ran first. */
static void commit_upto(struct worker *me, unsigned keep)
{
	struct isp_pipeline *pl = me->pl;
	unsigned spins = 0;

	while (me->npend) {
		uint64_t seq = me->pend[0];
		if (atomic_load_explicit(&pl->commit_turn, memory_order_acquire) != seq) {
			if (me->npend <= keep)
				return;
			while (atomic_load_explicit(&pl->commit_turn, memory_order_acquire) != seq)
				pl_wait_step(me, &spins);
		}
		pl->ops.batch_commit(me->ctx);
		atomic_store_explicit(&pl->commit_turn, seq + 1, memory_order_release);
		me->pend[0] = me->pend[1];
		me->npend--;
	}
}

/* A barrier, with everything this worker ran before it committed. */
static void local_barrier(struct worker *me, uint64_t ts)
{
	if (me->pl->commits)
		commit_upto(me, 0);
	pl_barrier(me, ts);
}

/*
 * Rules that need no order between workers (ops.local_only, or none):
 * each worker takes the next batch, whoever asks first, and handles its
 * items in place; rules that need only their records in the file's order
 * (ops.local_in_order) commit each batch in turn. They meet only at
 * ticks, every one of them in the file's order: a tick opens its batch
 * (isp_batches_next), and a worker meets the ticks of earlier batches,
 * read by others, before the packets of its own.
 */
void pl_run_local(struct worker *me)
{
	struct isp_pipeline *pl = me->pl;
	struct isp_batch *batch = &me->batch[0];
	struct isp_packet *p = &me->own;
	uint64_t met = 0;       /* ticks this worker has met */
	/* a mapped file's records stay where they are; a batch's copies
	 * (pcapng, standard input) are reused by the next */
	const bool stay = isp_source_map(pl->src[0]) != NULL;

	for (;;) {
		pl_maybe_publish(me);
		int got = isp_batches_next(pl->batches, batch);
		while (met < batch->ticks_before)
			local_barrier(me, isp_batches_tick(pl->batches, met++));
		if (got <= 0)
			break;
		struct isp_lines_ahead ahead;
		isp_lines_ahead_start(&ahead, batch);
		for (unsigned k = 0; k < batch->n; k++) {
			const struct isp_batch_pkt *bp = &batch->pkt[k];
			isp_lines_ahead_step(&ahead);
			if (bp->tick) {
				local_barrier(me, bp->tick);
				met++;
			}
			dissect_pkt(me, bp);
			if (isp_dissect_refused(p))
				continue;
			do {
				if (pl->has_ops && pl->ops.item_held)
					pl->ops.item_held(me->ctx, p, ISP_ROUTE_ALL, stay);
				else if (pl->has_ops)
					pl->ops.item(me->ctx, p, ISP_ROUTE_ALL);
				me->handled++;
			} while (isp_dissect_next_report(pl->reg, p, &me->st));
		}
		me->local += batch->n;
		atomic_store_explicit(&me->packets, me->local, memory_order_relaxed);
		atomic_store_explicit(&me->items, me->handled, memory_order_relaxed);
		if (pl->commits) {
			/* another batch may run while this one waits its turn */
			pl->ops.batch_done(me->ctx);
			me->pend[me->npend++] = batch->seq;
			commit_upto(me, 1);
		}
	}
	local_barrier(me, UINT64_MAX);     /* every window */
}

/*
 * Worker me claims batches me, me + n, me + 2n, ... and handles every
 * batch in order: its own, the others' from what they sent it. Claiming
 * (taking the turn, the record pointers) is done as soon as the turn
 * comes, since the others' turns wait for it; dissecting is done when the
 * batch is the next to handle (its own items then need no copy) or when
 * there is nothing else to do (up to AHEAD batches ahead, their own items
 * set aside). Measured: dissecting every batch as soon as it was claimed
 * set aside almost every own item and was 10-20% slower.
 */
void pl_run_ordered(struct worker *me)
{
	struct isp_pipeline *pl = me->pl;
	struct ordered o = { 0, me->id, me->id, UINT64_MAX, UINT64_MAX, 0 };
	unsigned spins = 0;

	while (o.next < o.end) {
		pl_maybe_publish(me);
		if (o.next % pl->n == me->id) {
			if (o.ahead == 0) {
				if (o.dis == o.read && o.read < o.eof)
					read_own(me, &o);
				if (dissect_own(me, &o))
					spins = 0;
				else if (o.next < o.end)
					pl_wait_step(me, &spins);
				continue;
			}
			handle_own(me, &o);
			o.ahead--;
			o.next++;
			spins = 0;
			continue;
		}
		claim_turn(me, &o);
		int r = handle_batch_of(me, &o, o.next);
		if (r == BATCH_DONE) {
			o.next++;
			spins = 0;
		} else if (r == BATCH_END) {
			o.end = o.next;
		} else if (!dissect_own(me, &o)) {
			/* nothing to handle and nothing of its own to dissect */
			isp_mesh_flush(pl->mesh, me->id);
			pl_wait_step(me, &spins);
		}
	}
	pl_barrier(me, UINT64_MAX);        /* every window */
}

