/*
 * batches.h - a capture file read as shares: workers take turns at the one
 * source, each claiming the next batch of records (a few dozen packets),
 * so every worker advances through packet time with the others and no
 * reader thread sits in front. Batch b goes to worker b % n; a worker
 * waits for its turn only while another copies a batch's record pointers
 * (the bytes themselves stay in the mapped file, or are copied out of
 * libpcap's buffer for pcapng and standard input).
 *
 * The packets of all batches, in batch order, are exactly the input:
 * their index counts the packets that passed the filter (as one reader
 * counts them), -c stops at the same packet, and the ticks at which query
 * windows close are placed on packet time in that one order.
 */
#ifndef ISP_BATCHES_H
#define ISP_BATCHES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 2048 rather than 512: events settled in order (event_batch.c) settle
 * each key's first item of a batch and commit a batch at a time, both a
 * quarter as often (bench/workers.sh: the delta event per flow 1.16-1.35x
 * to 1.54-1.60x on (a) and (b), the query no slower) */
#define ISP_BATCH_PACKETS 2048
#define ISP_BATCH_BYTES (1024u * 1024u)   /* captured bytes, unless one packet is larger */

struct isp_source;

struct isp_batch_pkt {
	const uint8_t *data;
	uint32_t caplen, wirelen;
	uint64_t ts_ns;
	uint64_t index;         /* 1-based position among the packets read */
	uint64_t tick;          /* a tick at this time comes before it; 0 = none */
};

struct isp_batch {
	unsigned n;
	/* read in any order (isp_batches_next): ticks placed in the batches
	 * before this one (at the end of the input: all of them); a tick of
	 * its own can only be at its first packet */
	uint64_t ticks_before;
	uint64_t seq;           /* isp_batches_next: its place in the file, from 0 */
	struct isp_batch_pkt pkt[ISP_BATCH_PACKETS];
	uint8_t *bytes;         /* copies, when the source does not keep its bytes */
	size_t bytes_cap;
	const uint8_t *ahead;   /* the reader's likely next batch, to prefetch */
	size_t ahead_len;
};

/*
 * The lines of a worker's likely next batch (isp_batch.ahead), asked for
 * a few with each packet of this one, so that they come in while it is
 * dissected rather than in one burst: a batch's worth of prefetches in a
 * row (14,000 lines on bench/'s (b)) waited on the memory as long as the
 * walk they spared, and a walk of lines not in the caches is a chain of
 * waits on the memory, each record's length the address of the next.
 */
struct isp_lines_ahead {
	const uint8_t *base;
	size_t at, end;
	bool wide;              /* 8 lines a packet, not 4 */
};

static inline void isp_lines_ahead_start(struct isp_lines_ahead *a, const struct isp_batch *b)
{
	a->base = NULL;
	a->at = a->end = 0;
	a->wide = false;
	if (!b->ahead_len || !b->n)
		return;         /* b->ahead is not set */
	size_t skew = (uintptr_t)b->ahead % 64;

	a->base = b->ahead - skew;      /* a mapped file's page holds its line */
	a->end = skew + b->ahead_len;
	/* past 512 bytes a packet, the rest is left to the walk's prefetch */
	a->wide = a->end / b->n > 256;
}

/* With each packet: its share of the lines, a fixed count without a loop
 * (callgrind, the delta event on (b): a loop over the lines cost 37
 * instructions a packet, this 16; the last step may ask for a few lines
 * past the end) */
static inline void isp_lines_ahead_step(struct isp_lines_ahead *a)
{
	if (a->at >= a->end)
		return;
	const uint8_t *p = a->base + a->at;

	__builtin_prefetch(p);
	__builtin_prefetch(p + 64);
	__builtin_prefetch(p + 128);
	__builtin_prefetch(p + 192);
	if (a->wide) {
		__builtin_prefetch(p + 256);
		__builtin_prefetch(p + 320);
		__builtin_prefetch(p + 384);
		__builtin_prefetch(p + 448);
	}
	a->at += a->wide ? 512 : 256;
}

struct isp_batches;

/* Ticks: the first time after t at which windows end (UINT64_MAX: none). */
typedef uint64_t (*isp_window_end_fn)(void *ctx, uint64_t t);

/* Batches of src (not owned) for n workers, at most `count` packets
 * (0: all). NULL when out of memory. */
struct isp_batches *isp_batches_new(struct isp_source *src, unsigned n, uint64_t count,
				    isp_window_end_fn window_end, void *window_ctx);

#define ISP_BATCH_NOT_YET (-2)

/*
 * Worker `b % n` reads batch b into out once every earlier batch has been
 * read; before that it gets ISP_BATCH_NOT_YET at once (it has other work).
 * Returns the packets read, 0 at the end of the input (every later batch
 * is empty too), -1 on a read error (isp_batches_error; also the end).
 */
int isp_batches_read(struct isp_batches *bs, uint64_t b, struct isp_batch *out);

/*
 * Any order, for workers whose rules need no order between them (every
 * rule merges its windows from any split): the next batch, whoever asks.
 * A batch then ends before a tick, so that a tick is only ever at a
 * batch's first packet and every worker can meet it before the packets
 * after it: out->ticks_before says how many came earlier, and
 * isp_batches_tick the time of each. Same returns as isp_batches_read,
 * without ISP_BATCH_NOT_YET (it waits while another worker reads).
 */
int isp_batches_next(struct isp_batches *bs, struct isp_batch *out);

/* The time of tick t (0-based), for isp_batches_next's readers: valid
 * while some worker has not met it (the last ISP_BATCH_TICKS ticks). */
uint64_t isp_batches_tick(const struct isp_batches *bs, uint64_t t);

/* The read error, once a read returned -1. */
const char *isp_batches_error(const struct isp_batches *bs);

/* Packets read so far (any thread). */
uint64_t isp_batches_packets(const struct isp_batches *bs);

void isp_batch_free(struct isp_batch *b);
void isp_batches_free(struct isp_batches *bs);

#endif
