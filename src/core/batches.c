/*
 * batches.c - see batches.h.
 */
#include "batches.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcapmap.h"
#include "pipeline.h"
#include "source.h"
#include "spsc.h"

#define MAX_CAPLEN (256u * 1024u)       /* libpcap's own limit for most links */

/* Ticks whose time isp_batches_tick keeps: a worker reads its next batch
 * only past every earlier tick, which every worker meets before its own
 * next batch, so at most one tick per worker is not met by all. */
#define TICK_RING (2 * ISP_MAX_WORKERS)

struct isp_batches {
	_Alignas(64) _Atomic uint64_t turn;     /* the next batch to be read */
	_Atomic bool reading;                   /* isp_batches_next: held */
	_Alignas(64) struct isp_source *src;    /* the turn's holder only: */
	struct pcap_map *map;                   /* src's mapped file, read inline; or NULL */
	const _Atomic int *stop;                /* src's */
	bool keeps_bytes;
	bool ended;
	uint64_t count;
	unsigned n;             /* workers taking turns */
	uint64_t packets;       /* read so far */
	uint64_t next_tick;     /* 0 before the first packet */
	isp_window_end_fn window_end;
	void *window_ctx;
	char err[256];
	_Atomic uint64_t packets_seen;  /* packets, for other threads */
	_Atomic bool failed;
	/* isp_batches_next: ticks placed, their times (written before the
	 * batch that holds a tick is handed out, read after its barrier) */
	bool cut_at_ticks;
	uint64_t ticks;
	_Atomic uint64_t tick_ts[TICK_RING];
	struct isp_batch_pkt held;      /* the packet a batch ended before */
	bool has_held;
	uint8_t *held_buf;              /* its bytes, from libpcap's buffer */
};

struct isp_batches *isp_batches_new(struct isp_source *src, unsigned n, uint64_t count,
				    isp_window_end_fn window_end, void *window_ctx)
{
	struct isp_batches *bs = aligned_alloc(64, (sizeof(*bs) + 63) & ~(size_t)63);

	if (!bs)
		return NULL;
	memset(bs, 0, sizeof(*bs));
	bs->src = src;
	bs->keeps_bytes = isp_source_keeps_bytes(src);
	bs->map = isp_source_map(src);
	if (bs->map && n > 1) {
		bs->map->defer_calls = true;    /* made after the turn (calls_after) */
		/* a worker's next batch, whose lines it asks for while it
		 * dissects this one, mapped by then (n - 1 batches on) */
		size_t lead = (size_t)(n + 1) * ISP_BATCH_BYTES;
		if (lead > bs->map->lead)
			bs->map->lead = lead;
	}
	bs->stop = isp_source_stop_flag(src);
	bs->count = count;
	bs->n = n;
	bs->window_end = window_end;
	bs->window_ctx = window_ctx;
	return bs;
}

/* Copy a packet out of libpcap's buffer, which the next read reuses. */
static const uint8_t *keep(struct isp_batch *out, size_t *used, const uint8_t *data,
			   uint32_t caplen)
{
	if (!out->bytes) {
		/* a batch stops once past ISP_BATCH_BYTES: room for that, one
		 * more packet as large as libpcap makes them, and alignment */
		out->bytes_cap = ISP_BATCH_BYTES + MAX_CAPLEN + 8 * ISP_BATCH_PACKETS;
		out->bytes = malloc(out->bytes_cap);
		if (!out->bytes)
			return NULL;
	}
	uint8_t *p = out->bytes + *used;
	memcpy(p, data, caplen);
	*used += (caplen + 7) & ~(size_t)7;
	return p;
}

/* A window ends at packet p's time (bs->window_end): its tick goes before
 * p. 1: the batch ends before p, which is held for the next one (ticks
 * open their batch, cut); 0: p goes on; -1: out of memory. */
static int place_tick(struct isp_batches *bs, struct isp_batch_pkt *p, unsigned n,
		      uint64_t *next_tick, bool cut, bool keeps)
{
	bool first = *next_tick == 0;

	*next_tick = bs->window_end(bs->window_ctx, p->ts_ns);
	if (first)
		return 0;
	p->tick = p->ts_ns;
	if (!cut)
		return 0;
	if (n > 0) {
		/* libpcap's buffer is reused by the next read: the held
		 * packet's bytes wait here */
		if (!keeps) {
			if (!bs->held_buf && !(bs->held_buf = malloc(MAX_CAPLEN)))
				return -1;
			memcpy(bs->held_buf, p->data, p->caplen);
			p->data = bs->held_buf;
		}
		bs->held = *p;
		bs->has_held = true;
		return 1;
	}
	bs->tick_ts[bs->ticks++ % TICK_RING] = p->tick;
	return 0;
}

/* The loop's state, in locals: the stores into the batch might be to the
 * fields of bs as far as the compiler knows, and it read them again for
 * every packet (a third of the loop). */
struct walk {
	unsigned n;
	size_t used, bytes;
	uint64_t packets, next_tick;
	bool ended, oom;
};

/* Records of any source but a mapped file, through isp_source_next. */
static void walk_source(struct isp_batches *bs, struct isp_batch *out, struct walk *w,
			uint64_t limit)
{
	const bool keeps = bs->keeps_bytes, cut = bs->cut_at_ticks;

	while (w->n < ISP_BATCH_PACKETS && w->bytes < ISP_BATCH_BYTES) {
		struct isp_batch_pkt *p = &out->pkt[w->n];
		if (w->packets >= limit) {
			w->ended = true;
			return;
		}
		int rc = isp_source_next(bs->src, &p->data, &p->caplen, &p->wirelen, &p->ts_ns,
					 bs->err, sizeof(bs->err));
		if (rc == 2)
			continue;       /* not for files; a timeout is no packet */
		if (rc <= 0) {
			w->ended = true;
			if (rc < 0)
				atomic_store_explicit(&bs->failed, true, memory_order_release);
			return;
		}
		if (p->caplen > MAX_CAPLEN)
			p->caplen = MAX_CAPLEN; /* a few link types allow more: cut, as a snap length */
		p->index = ++w->packets;
		p->tick = 0;
		/* where windows close: as one reader placed ticks, on packet time */
		if (__builtin_expect(p->ts_ns >= w->next_tick, 0)) {
			int t = place_tick(bs, p, w->n, &w->next_tick, cut, keeps);
			if (t) {
				w->oom = t < 0;
				return;
			}
		}
		if (!keeps && !(p->data = keep(out, &w->used, p->data, p->caplen))) {
			w->oom = true;
			return;
		}
		w->bytes += p->caplen;
		w->n++;
	}
}

/*
 * A mapped file's records, inline: the offset kept in a register, the
 * byte order, the packet limit and the stop flag settled once a batch
 * (pcap_map_next's loop, through the map's fields, with those tests for
 * every packet, was 110 instructions a packet against 78 for one
 * worker's read loop; this one, 72: callgrind, the delta event on (a)).
 * A record that is not plain (the file's end, one past the snap length,
 * a bad one) goes through pcap_map_next.
 */
static inline __attribute__((always_inline)) void
walk_map(struct isp_batches *bs, struct isp_batch *out, struct walk *w, uint64_t limit, bool swap)
{
	struct pcap_map *m = bs->map;
	const uint8_t *const base = m->base;
	const size_t len = m->len;
	const uint32_t max_incl = m->max_incl;
	const uint64_t frac_ns = m->nano ? 1u : 1000u;
	const bool cut = bs->cut_at_ticks;
	size_t off = m->off, chores = m->chores, bytes = w->bytes;
	uint64_t packets = w->packets, next_tick = w->next_tick;
	unsigned n = w->n, last = ISP_BATCH_PACKETS;

	if (atomic_load_explicit(bs->stop, memory_order_relaxed) || packets >= limit) {
		w->ended = true;
		return;
	}
	if (limit - packets < (uint64_t)(last - n))
		last = n + (unsigned)(limit - packets);
	while (n < last && bytes < ISP_BATCH_BYTES) {
		struct isp_batch_pkt *p = &out->pkt[n];
		if (__builtin_expect(off >= chores, 0)) {
			m->off = off;
			pcap_map_chores(m);
			chores = m->chores;
		}
		if (__builtin_expect(!pcap_map_plain(base, len, off, max_incl, swap, frac_ns, &p->data,
						     &p->caplen, &p->wirelen, &p->ts_ns, &off), 0)) {
			m->off = off;
			int rc = pcap_map_next(m, &p->data, &p->caplen, &p->wirelen, &p->ts_ns,
					       bs->err, sizeof(bs->err));
			off = m->off;
			chores = m->chores;
			if (rc <= 0) {
				w->ended = true;
				if (rc < 0)
					atomic_store_explicit(&bs->failed, true, memory_order_release);
				break;
			}
		}
		p->index = ++packets;
		p->tick = 0;
		if (__builtin_expect(p->ts_ns >= next_tick, 0)) {
			uint64_t nt = next_tick;        /* its address taken, not next_tick's */
			int held = place_tick(bs, p, n, &nt, cut, true);
			next_tick = nt;
			if (held)
				break;  /* counted: the next batch's first */
		}
		bytes += p->caplen;
		n++;
	}
	m->off = off;
	if (n == last && last < ISP_BATCH_PACKETS)
		w->ended = true;        /* the limit (-c) */
	w->n = n;
	w->bytes = bytes;
	w->packets = packets;
	w->next_tick = next_tick;
}

static int read_batch(struct isp_batches *bs, struct isp_batch *out)
{
	struct walk w = { 0, 0, 0, bs->packets, bs->next_tick, bs->ended, false };

	out->ticks_before = bs->ticks;
	if (bs->has_held) {
		/* the packet the last batch ended before: its tick opens this one */
		struct isp_batch_pkt *p = &out->pkt[0];
		*p = bs->held;
		bs->has_held = false;
		if (!bs->keeps_bytes && !(p->data = keep(out, &w.used, p->data, p->caplen))) {
			w.oom = true;
		} else {
			bs->tick_ts[bs->ticks++ % TICK_RING] = p->tick;
			w.bytes += p->caplen;
			w.n++;
		}
	}
	const uint64_t limit = bs->count ? bs->count : UINT64_MAX;
	if (!w.ended && !w.oom) {
		if (!bs->map)
			walk_source(bs, out, &w, limit);
		else if (bs->map->swap)
			walk_map(bs, out, &w, limit, true);
		else
			walk_map(bs, out, &w, limit, false);
	}
	bs->packets = w.packets;
	bs->next_tick = w.next_tick;
	bs->ended = w.ended;
	out->n = w.n;
	if (w.oom) {
		snprintf(bs->err, sizeof(bs->err), "out of memory for a batch of packets");
		atomic_store_explicit(&bs->failed, true, memory_order_release);
		bs->ended = true;
	}
	/* this worker's next batch is likely n - 1 batches of this size on
	 * (isp_lines_ahead; 65-80% of a delta event's batches on bench/'s
	 * (b), taken by whoever asks first) */
	out->ahead_len = 0;
	if (bs->keeps_bytes && w.bytes)
		out->ahead_len = isp_source_ahead(bs->src, (size_t)(bs->n - 1) * (w.bytes + 16 * out->n),
						  w.bytes + 16 * out->n, &out->ahead);
	atomic_store_explicit(&bs->packets_seen, bs->packets, memory_order_relaxed);
	return atomic_load_explicit(&bs->failed, memory_order_acquire) && out->n == 0 ? -1
										  : (int)out->n;
}

/* The mapped file's calls noted during the turn, taken before it passes */
static inline void calls_take(struct isp_batches *bs, struct pcap_map_calls *c)
{
	if (bs->map)
		pcap_map_calls_take(bs->map, c);
}

/* ... and made after it (none most turns: one every 2 MiB of file) */
static inline void calls_after(struct isp_batches *bs, const struct pcap_map_calls *c)
{
	if (__builtin_expect(c->map_len | c->drop_len, 0))
		pcap_map_calls_make(bs->map, c);
}

int isp_batches_read(struct isp_batches *bs, uint64_t b, struct isp_batch *out)
{
	struct pcap_map_calls c = { 0 };

	if (atomic_load_explicit(&bs->turn, memory_order_acquire) != b)
		return ISP_BATCH_NOT_YET;
	int rc = read_batch(bs, out);
	calls_take(bs, &c);
	atomic_store_explicit(&bs->turn, b + 1, memory_order_release);
	calls_after(bs, &c);
	return rc;
}

int isp_batches_next(struct isp_batches *bs, struct isp_batch *out)
{
	unsigned spins = 0;

	while (atomic_exchange_explicit(&bs->reading, true, memory_order_acquire))
		spsc_pause(&spins);
	bs->cut_at_ticks = true;
	int rc = read_batch(bs, out);
	struct pcap_map_calls c = { 0 };
	calls_take(bs, &c);
	out->seq = atomic_load_explicit(&bs->turn, memory_order_relaxed);
	atomic_store_explicit(&bs->turn, out->seq + 1, memory_order_relaxed);
	atomic_store_explicit(&bs->reading, false, memory_order_release);
	calls_after(bs, &c);
	return rc;
}

uint64_t isp_batches_tick(const struct isp_batches *bs, uint64_t t)
{
	return atomic_load_explicit(&bs->tick_ts[t % TICK_RING], memory_order_relaxed);
}

const char *isp_batches_error(const struct isp_batches *bs)
{
	return atomic_load_explicit(&bs->failed, memory_order_acquire) ? bs->err : NULL;
}

uint64_t isp_batches_packets(const struct isp_batches *bs)
{
	return atomic_load_explicit(&bs->packets_seen, memory_order_relaxed);
}

void isp_batch_free(struct isp_batch *b)
{
	free(b->bytes);
	b->bytes = NULL;
	b->bytes_cap = 0;
}

void isp_batches_free(struct isp_batches *bs)
{
	if (bs)
		free(bs->held_buf);
	free(bs);
}
