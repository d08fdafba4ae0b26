/*
 * shards.c - see shards.h.
 */
#include "shards.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source.h"
#include "spsc.h"
#include "workers.h"

#define READ_BURST 32   /* own packets between two looks at the mesh */
#define DRAIN_BURST 64  /* items from the mesh between two reads */

struct shard {
	struct isp_shards *owner;
	unsigned id;
	void *ctx;
	struct isp_source *src;
	pthread_t thread;
	bool started;
	bool reading;           /* this thread's own view of `live` */
	uint64_t local;         /* packets read from its share */
	struct isp_packet own;  /* read from the share, handled in place */
	struct isp_packet peer; /* sent by another shard, dissected there */
	struct isp_stats st;    /* counts of its own packets (printed) */
	char err[256];
	_Alignas(64) _Atomic uint64_t packets;
	_Atomic uint64_t ticks_done;
	_Atomic bool live;      /* still reading its share */
	_Atomic bool failed;
};

struct isp_shards {
	unsigned n;
	const struct isp_registry *reg;
	uint16_t first;
	uint16_t ip4, ip6;
	struct isp_shard_ops ops;
	void *shared_ctx;
	pthread_mutex_t shared_lock;
	struct spsc *ring;      /* ring[from * n + to] */
	uint64_t ticks;         /* ticks asked (caller's side) */
	_Alignas(64) _Atomic uint64_t tick_req;
	_Atomic uint64_t tick_ts;
	_Atomic uint64_t resumed;
	_Atomic bool stop_reading;
	_Atomic bool quit;
	_Atomic uint64_t dropped;
	struct shard sh[];
};

static struct spsc *ring(struct isp_shards *s, unsigned from, unsigned to)
{
	return &s->ring[from * s->n + to];
}

static void send_item(struct shard *me, unsigned to, const struct isp_packet *p)
{
	struct isp_shards *s = me->owner;
	struct spsc *r = ring(s, me->id, to);
	struct spsc_msg *m = spsc_reserve(r, isp_item_msg_size(p));

	if (!m) {       /* a live input: waiting would lose packets upstream */
		atomic_fetch_add_explicit(&s->dropped, 1, memory_order_relaxed);
		return;
	}
	isp_item_to_msg(m, p);
	spsc_publish(r, m);
}

static void handle_own(struct shard *me)
{
	struct isp_shards *s = me->owner;
	struct isp_packet *p = &me->own;

	me->local++;
	/* unique and increasing per share: first/last keep an order */
	p->index = me->local * s->n + me->id;
	atomic_store_explicit(&me->packets, me->local, memory_order_relaxed);
	isp_dissect(s->reg, p, s->first, &me->st);
	do {
		if (s->ops.shared) {
			pthread_mutex_lock(&s->shared_lock);
			s->ops.shared(s->shared_ctx, p);
			pthread_mutex_unlock(&s->shared_lock);
		}
		unsigned to = isp_item_owner(p, s->ip4, s->ip6, s->n);
		if (to == me->id)
			s->ops.packet(me->ctx, p);
		else
			send_item(me, to, p);
	} while (isp_dissect_next_report(s->reg, p, &me->st));
}

static void end_reading(struct shard *me)
{
	me->reading = false;
	atomic_store_explicit(&me->live, false, memory_order_release);
}

static bool read_some(struct shard *me)
{
	struct isp_packet *p = &me->own;

	for (unsigned k = 0; k < READ_BURST; k++) {
		int rc = isp_source_next(me->src, &p->data, &p->caplen, &p->wirelen, &p->ts_ns,
					 me->err, sizeof(me->err));
		if (rc == 1) {
			handle_own(me);
			continue;
		}
		if (rc == 2)
			return k > 0;
		if (rc < 0)
			atomic_store_explicit(&me->failed, true, memory_order_release);
		end_reading(me);
		return k > 0;
	}
	return true;
}

static void flush_sent(struct shard *me)
{
	for (unsigned j = 0; j < me->owner->n; j++)
		if (j != me->id)
			spsc_flush(ring(me->owner, me->id, j));
}

/* A burst of its own packets; what it sent others is visible after it. */
static bool read_burst(struct shard *me)
{
	bool got = read_some(me);

	flush_sent(me);
	return got;
}

/* Items other shards sent, up to a tick marker. */
static unsigned drain_from(struct shard *me, unsigned from, unsigned budget, bool *at_tick)
{
	struct isp_shards *s = me->owner;
	struct spsc *r = ring(s, from, me->id);
	unsigned done = 0;
	struct spsc_msg *m;

	*at_tick = false;
	while (done < budget && (m = spsc_peek(r))) {
		if (m->kind == SPSC_TICK) {
			*at_tick = true;
			break;
		}
		isp_item_from_msg(&me->peer, m);
		s->ops.packet(me->ctx, &me->peer);
		spsc_release(r, m);
		done++;
	}
	return done;
}

static bool drain(struct shard *me)
{
	bool busy = false, at_tick;

	for (unsigned j = 0; j < me->owner->n; j++)
		if (j != me->id && drain_from(me, j, DRAIN_BURST, &at_tick))
			busy = true;
	return busy;
}

static void barrier(struct shard *me, uint64_t tick)
{
	struct isp_shards *s = me->owner;
	uint64_t ts = atomic_load_explicit(&s->tick_ts, memory_order_acquire);
	unsigned spins = 0;

	for (unsigned j = 0; j < s->n; j++) {
		struct spsc_msg *m;
		if (j == me->id)
			continue;
		/* the receiver drains while it waits for markers: room comes */
		while (!(m = spsc_reserve(ring(s, me->id, j), 0)))
			spsc_pause(&spins);
		m->kind = SPSC_TICK;
		m->ts_ns = ts;
		spsc_publish_now(ring(s, me->id, j), m);
	}
	for (;;) {
		unsigned at = 0;
		bool busy = false, at_tick;
		for (unsigned j = 0; j < s->n; j++) {
			if (j == me->id)
				continue;
			if (drain_from(me, j, DRAIN_BURST, &at_tick))
				busy = true;
			at += at_tick;
		}
		if (at == s->n - 1)
			break;
		if (busy)
			spins = 0;
		else
			spsc_pause(&spins);
	}
	s->ops.tick(me->ctx, ts);
	atomic_store_explicit(&me->ticks_done, tick, memory_order_release);
	while (atomic_load_explicit(&s->resumed, memory_order_acquire) < tick)
		spsc_pause(&spins);
	for (unsigned j = 0; j < s->n; j++) {
		if (j == me->id)
			continue;
		struct spsc *r = ring(s, j, me->id);
		spsc_release(r, spsc_peek(r));
	}
}

static void *shard_main(void *arg)
{
	struct shard *me = arg;
	struct isp_shards *s = me->owner;
	uint64_t ticks = 0;
	unsigned spins = 0;

	for (;;) {
		uint64_t req = atomic_load_explicit(&s->tick_req, memory_order_acquire);
		if (req > ticks) {
			ticks = req;
			barrier(me, ticks);
			continue;
		}
		if (atomic_load_explicit(&s->quit, memory_order_acquire))
			return NULL;
		bool busy = drain(me);
		if (me->reading) {
			if (atomic_load_explicit(&s->stop_reading, memory_order_acquire))
				end_reading(me);
			else if (read_burst(me))
				busy = true;
		}
		if (busy)
			spins = 0;
		else
			spsc_pause(&spins);
	}
}

struct isp_shards *isp_shards_start(unsigned n, struct isp_source *const *src, unsigned nsrc,
				    const struct isp_registry *reg, uint16_t first_proto,
				    const struct isp_shard_ops *ops, void *const *ctx,
				    void *shared_ctx, size_t ring_bytes)
{
	struct isp_shards *s = calloc(1, sizeof(*s) + n * sizeof(s->sh[0]));

	if (!s)
		return NULL;
	s->n = n;
	s->reg = reg;
	s->first = first_proto;
	s->ip4 = isp_proto_id(reg, "ip");
	s->ip6 = isp_proto_id(reg, "ipv6");
	s->ops = *ops;
	s->shared_ctx = shared_ctx;
	pthread_mutex_init(&s->shared_lock, NULL);
	s->ring = calloc((size_t)n * n, sizeof(*s->ring));
	if (!s->ring) {
		free(s);
		return NULL;
	}
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = 0; j < n; j++)
			if (i != j && spsc_init(ring(s, i, j), ring_bytes) != 0) {
				isp_shards_stop(s);
				return NULL;
			}
	for (unsigned i = 0; i < n; i++) {
		struct shard *me = &s->sh[i];
		me->owner = s;
		me->id = i;
		me->ctx = ctx[i];
		me->src = i < nsrc ? src[i] : NULL;
		me->reading = me->src != NULL;
		atomic_store(&me->live, me->reading);
	}
	for (unsigned i = 0; i < n; i++) {
		if (spsc_thread_start(&s->sh[i].thread, shard_main, &s->sh[i]) != 0) {
			isp_shards_stop(s);
			return NULL;
		}
		s->sh[i].started = true;
	}
	return s;
}

uint64_t isp_shards_packets(const struct isp_shards *s)
{
	uint64_t sum = 0;

	for (unsigned i = 0; i < s->n; i++)
		sum += atomic_load_explicit(&s->sh[i].packets, memory_order_relaxed);
	return sum;
}

uint64_t isp_shards_share_packets(const struct isp_shards *s, unsigned i)
{
	return atomic_load_explicit(&s->sh[i].packets, memory_order_relaxed);
}

bool isp_shards_ended(const struct isp_shards *s)
{
	for (unsigned i = 0; i < s->n; i++)
		if (atomic_load_explicit(&s->sh[i].live, memory_order_acquire))
			return false;
	return true;
}

const char *isp_shards_error(const struct isp_shards *s)
{
	for (unsigned i = 0; i < s->n; i++)
		if (atomic_load_explicit(&s->sh[i].failed, memory_order_acquire))
			return s->sh[i].err;
	return NULL;
}

void isp_shards_tick(struct isp_shards *s, uint64_t now_ns)
{
	unsigned spins = 0;

	atomic_store_explicit(&s->tick_ts, now_ns, memory_order_relaxed);
	s->ticks++;
	atomic_store_explicit(&s->tick_req, s->ticks, memory_order_release);
	for (unsigned i = 0; i < s->n; i++)
		while (atomic_load_explicit(&s->sh[i].ticks_done, memory_order_acquire) < s->ticks)
			spsc_pause(&spins);
}

void isp_shards_resume(struct isp_shards *s)
{
	atomic_store_explicit(&s->resumed, s->ticks, memory_order_release);
}

void isp_shards_stop_reading(struct isp_shards *s)
{
	unsigned spins = 0;

	atomic_store_explicit(&s->stop_reading, true, memory_order_release);
	for (unsigned i = 0; i < s->n; i++) {
		if (s->sh[i].src)
			isp_source_break(s->sh[i].src);
		while (s->sh[i].started && atomic_load_explicit(&s->sh[i].live, memory_order_acquire))
			spsc_pause(&spins);
	}
}

void isp_shards_stats(const struct isp_shards *s, struct isp_stats *st)
{
	for (unsigned i = 0; i < s->n; i++)
		isp_stats_add(st, &s->sh[i].st);
}

uint64_t isp_shards_dropped(const struct isp_shards *s)
{
	return atomic_load_explicit(&s->dropped, memory_order_relaxed);
}

void isp_shards_stop(struct isp_shards *s)
{
	if (!s)
		return;
	isp_shards_stop_reading(s);
	atomic_store_explicit(&s->quit, true, memory_order_release);
	for (unsigned i = 0; i < s->n; i++)
		if (s->sh[i].started)
			pthread_join(s->sh[i].thread, NULL);
	for (unsigned i = 0; i < s->n; i++)
		for (unsigned j = 0; j < s->n; j++)
			if (i != j)
				spsc_free(ring(s, i, j));
	pthread_mutex_destroy(&s->shared_lock);
	free(s->ring);
	free(s);
}
