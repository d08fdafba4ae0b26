/*
 * pipeline.c - see pipeline.h.
 */
#include "pipeline.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "pcapmap.h"
#include "pipeline_int.h"

#define FILE_RING_BYTES (4u << 20)      /* items point into the file: small messages */
#define LIVE_RING_BYTES (8u << 20)

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t window_end(void *ctx, uint64_t t)
{
	const struct isp_pipeline *pl = ctx;

	return pl->ops.window_end ? pl->ops.window_end(pl->rules, t) : UINT64_MAX;
}

/* ---- routing ---- */

static void route(struct worker *me, const struct isp_packet *p)
{
	struct isp_pipeline *pl = me->pl;

	memset(me->dest, 0, pl->n * sizeof(me->dest[0]));
	if (pl->ops.route)
		pl->ops.route(me->ctx, p, pl->n, me->dest);
	else    /* by monitored flow */
		me->dest[isp_item_hash(p, pl->ip4, pl->ip6) % pl->n] = ISP_ROUTE_ALL;
}

/* The values the rules `what` read of p, packed in me->vals: their bytes,
 * or 0 when the item must go whole. */
static size_t pack(struct worker *me, const struct isp_packet *p, uint64_t what)
{
	struct isp_pipeline *pl = me->pl;

	return pl->ops.pack && pl->ops.item_packed ?
	       pl->ops.pack(me->ctx, p, what, me->vals, sizeof(me->vals)) : 0;
}

static bool send_item(struct worker *me, unsigned to, const struct isp_packet *p, uint64_t what,
		      bool wait)
{
	struct isp_pipeline *pl = me->pl;
	size_t nv = pack(me, p, what);
	struct spsc_msg *m = isp_mesh_reserve(pl->mesh, me->id, to,
					      nv ? nv : isp_item_msg_size(p, pl->by_ref), wait);

	if (!m) {       /* a live input: waiting would lose packets upstream */
		atomic_fetch_add_explicit(&pl->dropped, 1, memory_order_relaxed);
		return false;
	}
	if (nv)
		isp_values_to_msg(m, p, me->vals, nv, what);
	else
		isp_item_to_msg(m, p, pl->by_ref, what);
	*(nv ? &me->moved_values : &me->moved_whole) += 1;
	isp_mesh_publish(pl->mesh, me->id, to, m);
	return true;
}

static void defer_item(struct worker *me, const struct isp_packet *p, uint64_t what)
{
	/* own items point to their bytes: the batch keeps them until handled */
	size_t nv = pack(me, p, what);
	struct spsc_msg *m = isp_fifo_push(&me->defer, nv ? nv : isp_item_msg_size(p, true));

	if (!m) {       /* out of memory: lost, and counted */
		atomic_fetch_add_explicit(&me->pl->dropped, 1, memory_order_relaxed);
		return;
	}
	if (nv)
		isp_values_to_msg(m, p, me->vals, nv, what);
	else
		isp_item_to_msg(m, p, true, what);
	*(nv ? &me->moved_values : &me->moved_whole) += 1;
}

void pl_item_msg(struct worker *me, struct isp_packet *into, const struct spsc_msg *m)
{
	struct isp_pipeline *pl = me->pl;

	if (m->kind == SPSC_VALUES) {
		isp_values_head(into, m);
		pl->ops.item_packed(me->ctx, into, m->data, m->caplen, m->aux);
	} else {
		isp_item_from_msg(into, m);
		pl->ops.item(me->ctx, into, m->aux);
	}
	me->handled++;
}

/* An item to every worker its route names: to the others over the mesh
 * (a file waits for room, a live input drops and counts), to this one in
 * place (with the values its route fetched) or, while earlier batches are
 * not handled, set aside. */
void pl_dispatch(struct worker *me, const struct isp_packet *p, bool in_place, bool wait)
{
	struct isp_pipeline *pl = me->pl;

	if (isp_dissect_refused(p))
		return;         /* a corrupt record: no item */
	route(me, p);
	for (unsigned to = 0; to < pl->n; to++) {
		if (!me->dest[to])
			continue;
		if (to != me->id) {
			send_item(me, to, p, me->dest[to], wait);
			continue;
		}
		if (!in_place) {
			defer_item(me, p, me->dest[to]);
			continue;
		}
		if (pl->ops.route && pl->ops.item_routed)
			pl->ops.item_routed(me->ctx, p, me->dest[to]);
		else
			pl->ops.item(me->ctx, p, me->dest[to]);
		me->handled++;
	}
}

/* ---- ticks ---- */

void pl_wait_step(void *ctx, unsigned *spins)
{
	struct worker *me = ctx;

	isp_mesh_wait(me->pl->mesh, me->id, spins);
}

/* Close windows at ts; the last worker to get here merges them all. */
void pl_barrier(struct worker *me, uint64_t ts)
{
	struct isp_pipeline *pl = me->pl;
	uint64_t gen = atomic_load_explicit(&pl->gen, memory_order_acquire);

	if (pl->ops.tick)
		pl->ops.tick(me->ctx, ts);
	unsigned spins = 0;
	if (atomic_fetch_add_explicit(&pl->arrived, 1, memory_order_acq_rel) + 1 == pl->n) {
		atomic_store_explicit(&pl->arrived, 0, memory_order_relaxed);
		if (pl->ops.merge)
			pl->ops.merge(pl->rules, pl->ctxs, pl->n);
		atomic_store_explicit(&pl->gen, gen + 1, memory_order_release);
	} else {
		while (atomic_load_explicit(&pl->gen, memory_order_acquire) == gen)
			pl_wait_step(me, &spins);
	}
	if (!pl->ops.merge_share)
		return;
	/* the merged windows' records, written by every worker */
	pl->ops.merge_share(pl->rules, me->ctx, pl_wait_step, me);
	if (atomic_fetch_add_explicit(&pl->shared, 1, memory_order_acq_rel) + 1 == pl->n) {
		atomic_store_explicit(&pl->shared, 0, memory_order_relaxed);
		if (pl->ops.merge_end)
			pl->ops.merge_end(pl->rules, pl->ctxs, pl->n);
		atomic_store_explicit(&pl->gen, gen + 2, memory_order_release);
		return;
	}
	while (atomic_load_explicit(&pl->gen, memory_order_acquire) == gen + 1)
		pl_wait_step(me, &spins);
}

static void *worker_main(void *arg)
{
	struct worker *me = arg;
	unsigned spins = 0;
	int go;

	/* all start, or none: a missing worker would hold the others */
	while ((go = atomic_load_explicit(&me->pl->go, memory_order_acquire)) == 0)
		spsc_pause(&spins);
	if (go < 0)
		return NULL;
	isp_dissect_start(&me->dis, me->pl->reg, &me->own);
	if (me->pl->local)
		pl_run_local(me);
	else if (me->pl->ordered)
		pl_run_ordered(me);
	else
		pl_run_live(me);
	pl_publish(me);         /* its final counters */
	atomic_store_explicit(&me->finished, true, memory_order_release);
	sem_post(&me->pl->ended);
	return NULL;
}

/* ---- one worker: the calling thread ---- */

/*
 * A Kafka input's time while it waits: packet time, not the wall clock
 * (it may be reading hours old reports), moving on with the wall clock
 * once the input has been quiet longer than KAFKA_GRACE_NS, so that the
 * windows of a stream that stopped close, and those of a fetch that is
 * late do not.
 */
#define KAFKA_GRACE_NS 3000000000u

static uint64_t idle_time(const struct worker *me, uint64_t last_ts, uint64_t last_wall)
{
	uint64_t quiet = wall_ns() - last_wall;

	(void)me;
	if (!last_ts || quiet <= KAFKA_GRACE_NS)
		return last_ts;
	return last_ts + (quiet - KAFKA_GRACE_NS);
}

static bool holding(const struct isp_pipeline *pl, struct worker *me)
{
	return pl->ops.holding && pl->ops.holding(me->ctx);
}

/* One loop, compiled twice (run_single): for a mapped capture file, whose
 * records are read inline and which has no backlog, idle time, partitions
 * or checkpoints, and for every other source. */
static inline __attribute__((always_inline)) int
run_single_from(struct isp_pipeline *pl, const struct isp_pipeline_ctl *ctl,
		struct pcap_map *const map)
{
	struct worker *me = &pl->w[0];
	struct isp_packet *p = &me->own;
	struct isp_stats *st = &me->st;
	uint64_t next_tick = 0;         /* 0 before the first packet */
	int rc = 0;
	/* a Kafka input commits its offsets behind checkpoints: points where
	 * the rules hold nothing of what was read */
	const bool ckpt = !map && isp_source_checkpoints(pl->src[0]);
	uint64_t last_ts = 0, last_wall = 0;    /* a Kafka input's time */
	const bool backlog = !map && isp_source_has_backlog(pl->src[0]);
	/* a mapped file: its records read here, inline, and what a sampler,
	 * a signal or a broken channel asks looked at every RARE packets
	 * (a live input looks every time: it may wait between packets) */
	const _Atomic int *const stop = isp_source_stop_flag(pl->src[0]);
	enum { RARE = 64 };
	unsigned rare = 1;
	struct isp_dissect dis;

	isp_dissect_start(&dis, pl->reg, p);
	p->backlog = 0;

	while (!pl->count || st->packets < pl->count) {
		if (!map || --rare == 0) {
			rare = RARE;
			/* a stop hands out what the input read first (its
			 * own stop then ends it) */
			if (atomic_load_explicit(&pl->broken, memory_order_relaxed) &&
			    (map || !isp_source_pending(pl->src[0])))
				break;
			pl_maybe_publish(me);
			if (ctl && ctl->print_stats && *ctl->print_stats) {
				*ctl->print_stats = 0;
				ctl->progress(ctl->ctx, st->packets);
			}
		}
		int got;
		if (map) {
			got = pcap_map_next(map, &p->data, &p->caplen, &p->wirelen, &p->ts_ns, pl->err,
					    sizeof(pl->err));
			if (got > 0 && atomic_load_explicit(stop, memory_order_relaxed))
				got = 0;
		} else {
			got = isp_source_next(pl->src[0], &p->data, &p->caplen, &p->wirelen, &p->ts_ns,
					      pl->err, sizeof(pl->err));
		}
		if (got == 0)
			break;
		if (backlog)    /* else 0, as set before the loop */
			p->backlog = isp_source_backlog(pl->src[0]);
		if (got == 2) {         /* live and idle: let windows close */
			if (pl->ops.tick)
				pl->ops.tick(me->ctx, ckpt ? idle_time(me, last_ts, last_wall) : wall_ns());
			if (ckpt && !holding(pl, me))
				isp_source_checkpoint(pl->src[0], true, false);
			continue;
		}
		if (got == 3) {         /* a Kafka input's partitions leave */
			if (pl->ops.drain)
				pl->ops.drain(me->ctx, false);
			isp_source_checkpoint(pl->src[0], true, true);
			continue;
		}
		if (got < 0) {
			rc = 1;
			break;
		}
		/* ticks on packet time, where the batches of several workers
		 * place them (batches.c): rules that act on time alone (key
		 * expiry) see the same points of the input */
		if (pl->ops.tick) {
			if (next_tick == 0) {
				next_tick = window_end(pl, p->ts_ns);
			} else if (p->ts_ns >= next_tick) {
				pl->ops.tick(me->ctx, p->ts_ns);
				next_tick = window_end(pl, p->ts_ns);
				/* the windows before this packet are written */
				if (ckpt && !holding(pl, me))
					isp_source_checkpoint(pl->src[0], false, true);
			}
		}
		p->index = st->packets + 1;
		isp_dissect_inline(&dis, pl->reg, p, pl->first, st);
		if (isp_dissect_refused(p))
			continue;
		do {
			if (!pl->has_ops)
				continue;
			if (!ckpt && pl->ops.item_held)
				pl->ops.item_held(me->ctx, p, ISP_ROUTE_ALL, map != NULL);
			else
				pl->ops.item(me->ctx, p, ISP_ROUTE_ALL);
		} while (isp_dissect_next_report(pl->reg, p, st));
		if (__builtin_expect(ckpt, 0)) {
			last_ts = p->ts_ns;
			last_wall = wall_ns();
			if (!holding(pl, me))
				isp_source_checkpoint(pl->src[0], true, false);
		}
	}
	me->local = st->packets;
	if (ckpt && pl->ops.drain)
		pl->ops.drain(me->ctx, true);   /* a Kafka input's windows are not over */
	if (pl->ops.tick)
		pl->ops.tick(me->ctx, UINT64_MAX);      /* every window */
	pl_publish(me);         /* its final counters */
	atomic_store_explicit(&me->finished, true, memory_order_release);
	return rc;
}

static int run_single(struct isp_pipeline *pl, const struct isp_pipeline_ctl *ctl)
{
	struct pcap_map *map = isp_source_map(pl->src[0]);

	return map ? run_single_from(pl, ctl, map) : run_single_from(pl, ctl, NULL);
}

/* ---- the controller (the calling thread, with several workers) ---- */

static bool all_finished(const struct isp_pipeline *pl)
{
	for (unsigned i = 0; i < pl->n; i++)
		if (!atomic_load_explicit(&pl->w[i].finished, memory_order_acquire))
			return false;
	return true;
}

static bool shares_ended(const struct isp_pipeline *pl)
{
	for (unsigned i = 0; i < pl->n; i++)
		if (atomic_load_explicit(&pl->w[i].live, memory_order_acquire))
			return false;
	return true;
}

static void ask_tick(struct isp_pipeline *pl, uint64_t ts)
{
	unsigned spins = 0;

	atomic_store_explicit(&pl->tick_ts, ts, memory_order_relaxed);
	pl->ticks++;
	atomic_store_explicit(&pl->tick_req, pl->ticks, memory_order_release);
	for (unsigned i = 0; i < pl->n; i++)
		while (atomic_load_explicit(&pl->w[i].ticks_done, memory_order_acquire) < pl->ticks)
			spsc_pause(&spins);
}

static void nap_ms(unsigned ms)
{
	struct timespec nap = { 0, (long)ms * 1000000 };

	nanosleep(&nap, NULL);
}

static void poll_progress(struct isp_pipeline *pl, const struct isp_pipeline_ctl *ctl)
{
	if (ctl && ctl->print_stats && *ctl->print_stats) {
		*ctl->print_stats = 0;
		ctl->progress(ctl->ctx, isp_pipeline_packets(pl));
	}
}

static void control_live(struct isp_pipeline *pl, const struct isp_pipeline_ctl *ctl)
{
	uint64_t next_tick = window_end(pl, wall_ns());

	while (!atomic_load_explicit(&pl->broken, memory_order_relaxed) && !shares_ended(pl) &&
	       (!pl->count || isp_pipeline_packets(pl) < pl->count)) {
		nap_ms(1);
		poll_progress(pl, ctl);
		uint64_t now = wall_ns();
		bool asked = atomic_exchange_explicit(&pl->tick_now, false, memory_order_acq_rel);
		if (now >= next_tick || asked) {
			ask_tick(pl, now);
			next_tick = window_end(pl, now);
		}
	}
	atomic_store_explicit(&pl->stop_reading, true, memory_order_release);
	for (unsigned i = 0; i < pl->nsrc; i++)
		isp_source_break(pl->src[i]);
	unsigned spins = 0;
	while (!shares_ended(pl))
		spsc_pause(&spins);
	ask_tick(pl, UINT64_MAX);       /* every window */
	atomic_store_explicit(&pl->quit, true, memory_order_release);
}

int isp_pipeline_run(struct isp_pipeline *pl, const struct isp_pipeline_ctl *ctl)
{
	if (pl->n == 1)
		return run_single(pl, ctl);
	unsigned started = 0;
	for (; started < pl->n; started++) {
		if (spsc_thread_start(&pl->w[started].thread, worker_main, &pl->w[started]) != 0)
			break;
		pl->w[started].started = true;
	}
	atomic_store_explicit(&pl->go, started < pl->n ? -1 : 1, memory_order_release);
	if (started < pl->n) {
		snprintf(pl->err, sizeof(pl->err), "cannot start %u workers (%u started)", pl->n,
			 started);
		for (unsigned i = 0; i < started; i++)
			pthread_join(pl->w[i].thread, NULL);
		return 1;
	}
	if (pl->ordered) {
		/* a file's workers need nothing from here but the progress a
		 * signal asks for: waking seldom leaves both CPUs to them (each
		 * wake-up may preempt a worker the other one waits for), and
		 * each worker's end wakes it at once (a nap of 10 ms made the
		 * run of a short capture up to 10 ms longer) */
		while (!all_finished(pl)) {
			struct timespec until;
			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += 10 * 1000000;
			if (until.tv_nsec >= 1000000000) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000;
			}
			sem_timedwait(&pl->ended, &until);     /* or a signal, or the time */
			poll_progress(pl, ctl);
		}
	} else {
		control_live(pl, ctl);
	}
	for (unsigned i = 0; i < pl->n; i++)
		pthread_join(pl->w[i].thread, NULL);
	return isp_pipeline_error(pl) ? 1 : 0;
}

/* ---- opening and closing ---- */

struct isp_pipeline *isp_pipeline_open(struct isp_registry *reg, const struct isp_pipeline_opts *o,
				       char *err, size_t errlen)
{
	unsigned n = o->workers ? o->workers : 1;

	if (!o->ops)
		n = 1;          /* decode only: nothing to spread */
	if (n > ISP_MAX_WORKERS) {
		snprintf(err, errlen, "at most %d workers", ISP_MAX_WORKERS);
		return NULL;
	}
	struct isp_pipeline *pl = aligned_alloc(64, (sizeof(*pl) + n * sizeof(pl->w[0]) + 63) &
						~(size_t)63);
	if (!pl) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	memset(pl, 0, sizeof(*pl) + n * sizeof(pl->w[0]));
	for (unsigned i = 0; i < ISP_MAX_WORKERS; i++)
		pl->wake[i] = -1;
	pthread_mutex_init(&pl->sample_mu, NULL);
	sem_init(&pl->ended, 0, 0);
	for (unsigned i = 0; i < n; i++)
		pthread_mutex_init(&pl->w[i].snap_mu, NULL);
	pl->reg = reg;
	pl->n = n;
	pl->count = o->count;
	pl->rules = o->rules;
	pl->has_ops = o->ops != NULL;
	if (o->ops)
		pl->ops = *o->ops;
	pl->ip4 = isp_proto_id(reg, "ip");
	pl->ip6 = isp_proto_id(reg, "ipv6");
	pl->port_counters = o->src.dpdk != NULL;
	bool live = o->src.iface || o->src.udp || o->src.dpdk || o->src.kafka;
	if (n > 1 && live) {
		int k = isp_source_open_shares(&o->src, n, pl->src, err, errlen);
		if (k <= 0)
			goto fail;
		pl->nsrc = (unsigned)k;
	} else {
		pl->src[0] = isp_source_open(&o->src, err, errlen);
		if (!pl->src[0])
			goto fail;
		pl->nsrc = 1;
	}
	/* an idle reader answers a sampler (the control socket) at once */
	for (unsigned i = 0; live && i < pl->nsrc; i++) {
		int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (fd >= 0 && !isp_source_set_wake(pl->src[i], fd)) {
			close(fd);
			fd = -1;
		}
		pl->wake[i] = fd;
	}
	/* what arrives on the report port is a telemetry report, whatever
	 * the port, unless it is a DTA port (dta.udp-ports: 40040): then DTA */
	uint16_t rport = isp_source_udp_port(pl->src[0]);
	if (rport && reg->table[ISP_TBL_UDP_PORT][rport] != isp_proto_id(reg, "dta"))
		isp_registry_link(reg, "int_report", ISP_TBL_UDP_PORT, rport);
	pl->first = isp_source_first_proto(pl->src[0], reg, err, errlen);
	if (pl->first == ISP_PROTO_NONE)
		goto fail;
	if (n > 1) {
		pl->ordered = !live;
		pl->by_ref = pl->ordered && isp_source_keeps_bytes(pl->src[0]);
		if (pl->ordered &&
		    !(pl->batches = isp_batches_new(pl->src[0], n, o->count, window_end, pl)))
			goto oom;
		if (!(pl->mesh = isp_mesh_new(n, pl->ordered ? FILE_RING_BYTES : LIVE_RING_BYTES)))
			goto oom;
	}
	for (unsigned i = 0; i < n; i++) {
		struct worker *w = &pl->w[i];
		w->pl = pl;
		w->id = i;
		w->src = live && n > 1 && i < pl->nsrc ? pl->src[i] : NULL;
		w->reading = w->src != NULL;
		atomic_store(&w->live, w->reading);
		if (pl->ops.worker_new) {
			w->ctx = pl->ops.worker_new(pl->rules, i, n, err, errlen);
			if (!w->ctx)
				goto fail;
		} else {
			w->ctx = pl->rules;
		}
		pl->ctxs[i] = w->ctx;
	}
	/* decode only, or rules that all merge from any split */
	pl->local = pl->ordered && (!pl->has_ops || (pl->ops.local_only &&
						    pl->ops.local_only(pl->w[0].ctx)));
	/* or rules whose records are handed on batch by batch, in order */
	const bool stay = pl->ordered && isp_source_map(pl->src[0]) != NULL;
	if (pl->ordered && !pl->local && pl->ops.local_in_order && pl->ops.batch_done &&
	    pl->ops.batch_commit &&
	    pl->ops.local_in_order(pl->w[0].ctx, stay)) {
		for (unsigned i = 1; i < n; i++)
			if (!pl->ops.local_in_order(pl->w[i].ctx, stay))
				goto oom;       /* the same rules: only memory can fail */
		pl->local = pl->commits = true;
	}
	return pl;
oom:
	snprintf(err, errlen, "out of memory for %u workers", n);
fail:
	isp_pipeline_close(pl);
	return NULL;
}

void isp_pipeline_break(struct isp_pipeline *pl)
{
	if (!pl)
		return;
	atomic_store_explicit(&pl->broken, true, memory_order_relaxed);
	for (unsigned i = 0; i < pl->nsrc; i++)
		isp_source_break(pl->src[i]);
}

bool isp_pipeline_barrier_soon(struct isp_pipeline *pl)
{
	if (pl->n < 2)
		return true;    /* one worker: between any two items */
	if (pl->ordered)
		return false;   /* ticks sit at points of the file */
	atomic_store_explicit(&pl->tick_now, true, memory_order_release);
	return true;
}

const char *isp_pipeline_error(const struct isp_pipeline *pl)
{
	if (pl->err[0])
		return pl->err;
	if (pl->batches && isp_batches_error(pl->batches))
		return isp_batches_error(pl->batches);
	for (unsigned i = 0; i < pl->n; i++)
		if (atomic_load_explicit(&pl->w[i].failed, memory_order_acquire))
			return pl->w[i].err;
	return NULL;
}

unsigned isp_pipeline_workers(const struct isp_pipeline *pl)
{
	return pl->n;
}

void *isp_pipeline_worker(const struct isp_pipeline *pl, unsigned i)
{
	return pl->w[i].ctx;
}

unsigned isp_pipeline_ts_digits(const struct isp_pipeline *pl)
{
	return isp_source_ts_digits(pl->src[0]);
}

uint64_t isp_pipeline_packets(const struct isp_pipeline *pl)
{
	if (pl->n == 1)
		return pl->w[0].st.packets;     /* only asked from the loop itself */
	if (pl->batches)
		return isp_batches_packets(pl->batches);
	uint64_t sum = 0;
	for (unsigned i = 0; i < pl->n; i++)
		sum += atomic_load_explicit(&pl->w[i].packets, memory_order_relaxed);
	return sum;
}

void isp_pipeline_stats(const struct isp_pipeline *pl, struct isp_stats *st)
{
	for (unsigned i = 0; i < pl->n; i++)
		isp_stats_add(st, &pl->w[i].st);
}

void pl_publish(struct worker *me)
{
	uint64_t req = atomic_load_explicit(&me->pl->snap_req, memory_order_acquire);

	pthread_mutex_lock(&me->snap_mu);
	me->snap = me->st;
	pthread_mutex_unlock(&me->snap_mu);
	atomic_store_explicit(&me->items, me->handled, memory_order_relaxed);
	if (me->pl->ops.publish)
		me->pl->ops.publish(me->ctx);
	me->snap_seen = req;
	atomic_store_explicit(&me->snap_done, req, memory_order_release);
}

static bool answered(const struct worker *w, uint64_t req)
{
	return atomic_load_explicit(&w->snap_done, memory_order_acquire) >= req ||
	       atomic_load_explicit(&w->finished, memory_order_acquire);
}

unsigned isp_pipeline_sample(struct isp_pipeline *pl, struct isp_stats *st,
			     uint64_t *worker_packets, unsigned wait_ms)
{
	unsigned ok = 0;

	pthread_mutex_lock(&pl->sample_mu);
	uint64_t req = atomic_fetch_add_explicit(&pl->snap_req, 1, memory_order_acq_rel) + 1;
	for (unsigned i = 0; i < pl->nsrc; i++) {
		uint64_t one = 1;
		if (pl->wake[i] >= 0 && write(pl->wake[i], &one, sizeof(one)) < 0)
			continue;       /* full: it is awake already */
	}
	/* a worker between two batches answers within microseconds: look
	 * every 50 us, up to wait_ms */
	for (unsigned waited_us = 0;; waited_us += 50) {
		ok = 0;
		for (unsigned i = 0; i < pl->n; i++)
			ok += answered(&pl->w[i], req);
		if (ok == pl->n || waited_us >= wait_ms * 1000u)
			break;
		struct timespec nap = { 0, 50000 };
		nanosleep(&nap, NULL);
	}
	for (unsigned i = 0; i < pl->n; i++) {
		pthread_mutex_lock(&pl->w[i].snap_mu);
		isp_stats_add(st, &pl->w[i].snap);
		if (worker_packets)
			worker_packets[i] = pl->w[i].snap.packets;
		pthread_mutex_unlock(&pl->w[i].snap_mu);
	}
	pthread_mutex_unlock(&pl->sample_mu);
	return ok;
}

uint64_t isp_pipeline_worker_items(struct isp_pipeline *pl, unsigned i)
{
	uint64_t items;

	if (pl->n > 1)
		return atomic_load_explicit(&pl->w[i].items, memory_order_relaxed);
	/* one worker handles every item it dissects */
	pthread_mutex_lock(&pl->w[0].snap_mu);
	items = pl->w[0].snap.items;
	pthread_mutex_unlock(&pl->w[0].snap_mu);
	return items;
}

uint64_t isp_pipeline_dropped(const struct isp_pipeline *pl)
{
	return atomic_load_explicit(&pl->dropped, memory_order_relaxed);
}

void isp_pipeline_report(const struct isp_pipeline *pl, FILE *out)
{
	uint64_t dropped = atomic_load_explicit(&pl->dropped, memory_order_relaxed);

	if (dropped)
		fprintf(out, "intspect: %llu items dropped: a worker's ring was full (live) or memory ran out\n",
			(unsigned long long)dropped);
	if (pl->n > 1) {
		/* how the file's batches, the kernel or the card spread the input */
		unsigned shares = pl->ordered ? pl->n : pl->nsrc;
		fprintf(out, "intspect: %u workers read %u shares:", pl->n, shares);
		for (unsigned i = 0; i < shares; i++)
			fprintf(out, "%s%llu", i ? " + " : " ",
				(unsigned long long)atomic_load(&pl->w[i].packets));
		fprintf(out, " packets\n");
		/* how the keys' owners spread the work: what bounds n workers */
		fprintf(out, "intspect: %u workers handled", pl->n);
		for (unsigned i = 0; i < pl->n; i++)
			fprintf(out, "%s%llu", i ? " + " : " ",
				(unsigned long long)atomic_load(&pl->w[i].items));
		fprintf(out, " items\n");
		/* in what form items crossed (or waited): values unless a rule
		 * needs the packet (src/filters/carry.c) */
		uint64_t vals = 0, whole = 0;
		for (unsigned i = 0; i < pl->n; i++) {
			vals += pl->w[i].moved_values;
			whole += pl->w[i].moved_whole;
		}
		if (vals + whole)
			fprintf(out, "intspect: %llu items went to another worker or waited: %llu as "
				"their rules' values, %llu dissected\n", (unsigned long long)(vals + whole),
				(unsigned long long)vals, (unsigned long long)whole);
	}
	uint64_t krecv = 0, kdrop = 0;
	bool any = false;
	for (unsigned i = 0; i < pl->nsrc; i++) {
		uint64_t r, d;
		if (isp_source_kernel_stats(pl->src[i], &r, &d)) {
			any = true;
			krecv += r;
			kdrop += d;
		}
	}
	if (any)
		fprintf(out, "intspect: %llu packets received by the %s, %llu dropped\n",
			(unsigned long long)krecv, pl->port_counters ? "port" : "kernel",
			(unsigned long long)kdrop);
}

void isp_pipeline_close(struct isp_pipeline *pl)
{
	if (!pl)
		return;
	for (unsigned i = 0; i < pl->n; i++) {
		if (pl->w[i].ctx && pl->ops.worker_free)
			pl->ops.worker_free(pl->w[i].ctx);
		for (unsigned k = 0; k < AHEAD; k++)
			isp_batch_free(&pl->w[i].batch[k]);
		isp_fifo_free(&pl->w[i].defer);
		pthread_mutex_destroy(&pl->w[i].snap_mu);
	}
	pthread_mutex_destroy(&pl->sample_mu);
	sem_destroy(&pl->ended);
	isp_mesh_free(pl->mesh);
	isp_batches_free(pl->batches);
	/* in reverse: a DPDK port belongs to share 0 */
	for (unsigned i = pl->nsrc; i-- > 0;)
		isp_source_close(pl->src[i]);
	for (unsigned i = 0; i < ISP_MAX_WORKERS; i++)
		if (pl->wake[i] >= 0)
			close(pl->wake[i]);
	free(pl);
}
