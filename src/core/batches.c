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
	if (bs->map && n > 1)
		bs->map->defer_calls = true;    /* made after the turn (calls_after) */
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

static int read_batch(struct isp_batches *bs, struct isp_batch *out)
{
	size_t used = 0, bytes = 0;
	unsigned n = 0;
	bool oom = false;

	out->ticks_before = bs->ticks;
	if (bs->has_held) {
		/* the packet the last batch ended before: its tick opens this one */
		struct isp_batch_pkt *p = &out->pkt[n];
		*p = bs->held;
		bs->has_held = false;
		if (!bs->keeps_bytes && !(p->data = keep(out, &used, p->data, p->caplen))) {
			oom = true;
		} else {
			bs->tick_ts[bs->ticks++ % TICK_RING] = p->tick;
			bytes += p->caplen;
			n++;
		}
	}
	/* The loop's state in locals: the stores into the batch might be to
	 * these fields as far as the compiler knows, and it read them again
	 * for every packet (a third of the loop). Written back below. */
	struct pcap_map *map = bs->map;
	const bool keeps = bs->keeps_bytes, cut = bs->cut_at_ticks;
	const uint64_t limit = bs->count ? bs->count : UINT64_MAX;
	uint64_t packets = bs->packets, next_tick = bs->next_tick;
	bool ended = bs->ended;

	while (!ended && !oom && n < ISP_BATCH_PACKETS && bytes < ISP_BATCH_BYTES) {
		struct isp_batch_pkt *p = &out->pkt[n];
		if (packets >= limit) {
			ended = true;
			break;
		}
		int rc;
		if (map) {      /* inline, as one worker's read loop */
			rc = pcap_map_next(map, &p->data, &p->caplen, &p->wirelen, &p->ts_ns,
					   bs->err, sizeof(bs->err));
			if (rc > 0 && atomic_load_explicit(bs->stop, memory_order_relaxed))
				rc = 0;
		} else {
			rc = isp_source_next(bs->src, &p->data, &p->caplen, &p->wirelen, &p->ts_ns,
					     bs->err, sizeof(bs->err));
		}
		if (rc == 2)
			continue;       /* not for files; a timeout is no packet */
		if (rc <= 0) {
			ended = true;
			if (rc < 0)
				atomic_store_explicit(&bs->failed, true, memory_order_release);
			break;
		}
		if (p->caplen > MAX_CAPLEN)
			p->caplen = MAX_CAPLEN; /* a few link types allow more: cut, as a snap length */
		p->index = ++packets;
		p->tick = 0;
		/* where windows close: as one reader placed ticks, on packet time */
		if (__builtin_expect(p->ts_ns >= next_tick, 0)) {
			bool first = next_tick == 0;
			next_tick = bs->window_end(bs->window_ctx, p->ts_ns);
			if (!first) {
				p->tick = p->ts_ns;
				if (cut) {
					if (n > 0) {
						/* libpcap's buffer is reused by the next
						 * read: the held packet's bytes wait here */
						if (!keeps) {
							if (!bs->held_buf &&
							    !(bs->held_buf = malloc(MAX_CAPLEN))) {
								oom = true;
								break;
							}
							memcpy(bs->held_buf, p->data, p->caplen);
							p->data = bs->held_buf;
						}
						bs->held = *p;
						bs->has_held = true;
						break;
					}
					bs->tick_ts[bs->ticks++ % TICK_RING] = p->tick;
				}
			}
		}
		if (!keeps && !(p->data = keep(out, &used, p->data, p->caplen))) {
			oom = true;
			break;
		}
		bytes += p->caplen;
		n++;
	}
	bs->packets = packets;
	bs->next_tick = next_tick;
	bs->ended = ended;
	out->n = n;
	if (oom) {
		snprintf(bs->err, sizeof(bs->err), "out of memory for a batch of packets");
		atomic_store_explicit(&bs->failed, true, memory_order_release);
		bs->ended = true;
	}
	/* this worker's next batch is likely n - 1 batches of this size on:
	 * its lines come to this core while it dissects this one (asked for
	 * once the turn is passed on: a few hundred prefetches in a row wait
	 * for the memory, and the others waited for the turn meanwhile) */
	out->ahead_len = 0;
	if (bs->keeps_bytes && bytes)
		out->ahead_len = isp_source_ahead(bs->src, (size_t)(bs->n - 1) * (bytes + 16 * out->n),
						  bytes + 16 * out->n, &out->ahead);
	atomic_store_explicit(&bs->packets_seen, bs->packets, memory_order_relaxed);
	return atomic_load_explicit(&bs->failed, memory_order_acquire) && out->n == 0 ? -1
											  : (int)out->n;
}

static void prefetch_ahead(const struct isp_batch *out)
{
	if (!out->ahead_len)
		return;         /* out->ahead is not set */
	const uint8_t *p = out->ahead - (uintptr_t)out->ahead % 64, *end = out->ahead + out->ahead_len;

	for (; p < end; p += 64)
		__builtin_prefetch(p);
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
	prefetch_ahead(out);
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
	prefetch_ahead(out);
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
