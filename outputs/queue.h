/*
 * queue.h - a channel's bounded multi-producer, single-consumer record
 * queue.
 *
 * Records are copied into one contiguous byte ring owned by the queue (no
 * allocation per record), bounded by a record count and by the ring's
 * size. Producers are the engine's worker threads; the consumer is the
 * channel thread, which moves a batch out of the ring into its own staging
 * buffer (isp_qbatch: whole records, or their texts as lines) so that
 * producers, drop-oldest eviction included,
 * never touch records being written. A mutex guards the ring: uncontended
 * it costs a few tens of nanoseconds, and correctness of eviction and
 * blocking is simple to see; the consumer holds it only to claim a batch
 * and to give its bytes back, and copies it out in between. A producer
 * may also write records in place under a lease, without the lock per
 * record (isp_queue_reserve).
 *
 * Counting: every push counts `queued`; every record the queue refuses or
 * evicts counts `dropped`. The consumer counts delivered/retried itself.
 */
#ifndef ISP_OUTPUTS_QUEUE_H
#define ISP_OUTPUTS_QUEUE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "channel.h"

#define ISP_CACHE_LINE 64

/* A channel's counters; see struct isp_channel_stats. queue_depth is not
 * stored: it is queued - delivered - dropped. `queued` is written by the
 * producers on every record, the others by the channel's thread (dropped
 * by both, rarely): on separate cache lines, so that neither side waits
 * for a line the other has just written. */
struct isp_counters {
	_Alignas(ISP_CACHE_LINE) _Atomic uint64_t queued;
	_Alignas(ISP_CACHE_LINE) _Atomic uint64_t delivered, acked, retried, dropped, reconnects;
};

/* The consumer's batch: records copied out of the ring. recs[i] point into
 * buf and stay valid until the next isp_queue_take on this batch. */
struct isp_qbatch {
	unsigned char *buf;
	size_t cap;                     /* bytes of buf */
	struct isp_record *recs;
	size_t n;                       /* records in recs */
	size_t max;                     /* capacity of recs (the batch size) */
	/* set by the consumer: take records as lines (their texts only, each
	 * followed by '\n', one after the other in buf; report and key NULL) */
	bool lines;
};

struct isp_queue;

/* Smallest ring accepted (queue-bytes); smaller values are raised to it. */
#define ISP_QUEUE_MIN_BYTES 1024

/*
 * New empty queue. max_bytes is rounded down to the ring's alignment; the
 * ring starts at 1 MiB (or max_bytes if smaller) and doubles up to
 * max_bytes only when records do not fit, so memory follows what waits;
 * `cnt` (owned by the caller, zeroed) receives queued/dropped counts.
 * NULL when out of memory.
 */
struct isp_queue *isp_queue_new(size_t max_records, size_t max_bytes,
				enum isp_drop_policy policy,
				struct isp_counters *cnt);
/* Free the queue (no thread may be using it). */
void isp_queue_free(struct isp_queue *q);

/* A blocked producer's wait after a stop (isp_channels_stop_asked). */
void isp_queue_set_grace(struct isp_queue *q, int64_t grace_ns);

/*
 * Producer: copy r into the ring. When it does not fit (record count or
 * bytes), drop-newest refuses it, drop-oldest evicts the oldest waiting
 * records (not the consumer's batch) until it fits, block waits for room.
 * A record larger than the ring, or pushed once the queue is dead
 * (isp_queue_kill), is refused. Returns false when r was dropped.
 */
bool isp_queue_push(struct isp_queue *q, const struct isp_record *r);

/* n records under one lock, each as isp_queue_push would (refused[i]:
 * dropped). Returns how many went in. */
size_t isp_queue_push_many(struct isp_queue *q, const struct isp_record *r, size_t n,
			   bool *refused);

/*
 * Producer, writing records in place (no copy): room for a record of
 * report `report` (rl bytes), key `key` (kl bytes) and a text of at most
 * text_max bytes. Write the text at the pointer returned, then
 * isp_queue_commit(its length) or isp_queue_abort, and push nothing to
 * this queue in between. NULL when the record would not go in at once
 * (not enough contiguous room without growing, the record bound, another
 * producer's record being written, a dead queue): then isp_queue_push,
 * which applies the drop policy.
 *
 * The first reserve takes the lock and a lease on the free bytes after
 * the head for `owner` (any address unique to the producer, 4-aligned);
 * the next ones take neither while the lease has room, and commit
 * publishes each record with two atomic stores. The queue's lock holder
 * (the consumer at every take, a push, the next lease) folds published
 * records into the queue, and counts them `queued` then; a consumer
 * asleep for a batch is woken by the commit that makes it (the commits
 * before it compare their lease's progress with a wake target, with no
 * lock). Another producer's push ends an idle lease,
 * or waits for the record being written.
 */
char *isp_queue_reserve(struct isp_queue *q, const void *owner, const char *report, size_t rl,
			const char *key, size_t kl, size_t text_max);
void isp_queue_commit(struct isp_queue *q, size_t text_len);
void isp_queue_abort(struct isp_queue *q);

/*
 * Producer: n records held back elsewhere (a worker's log of records that
 * wait for their batch's turn), laid out one after the other as the
 * queue holds them (qrec.h), `bytes` in all: copied in at once under the
 * lease, as isp_queue_reserve and commit would one by one, with one check
 * of the lease and one publication. false when they would not all go in
 * at once (none went in: hand them over one by one, which applies the
 * drop policy).
 */
bool isp_queue_write_held(struct isp_queue *q, const void *owner, const void *recs, size_t bytes,
			  size_t n);

/* Consumer batch: allocate/free (max = batch size). -1 out of memory. */
int isp_qbatch_init(struct isp_qbatch *b, size_t max, size_t max_bytes);
void isp_qbatch_free(struct isp_qbatch *b);

/*
 * Consumer: wait until a batch is waiting (the wake-up count of
 * isp_queue_set_wake, or enough bytes to fill b's buffer; with fewer
 * records waiting, at most a tenth of a millisecond more), the queue is
 * kicked, or the CLOCK_MONOTONIC time `until_ns` passes; then move up to
 * b->max records (oldest first) into b, replacing its previous content.
 * Returns the number moved (b->n); 0 on timeout or on a kick with nothing
 * waiting. A record too big for b's buffer grows it; if that fails the
 * record is dropped (counted).
 */
size_t isp_queue_take(struct isp_queue *q, struct isp_qbatch *b, int64_t until_ns);

/*
 * Consumer: sleep until `until_ns` (CLOCK_MONOTONIC); when `wake_on_kick`
 * return early once the queue is kicked.
 */
void isp_queue_sleep(struct isp_queue *q, int64_t until_ns, bool wake_on_kick);

/* Wake the consumer for good (shutdown): take no longer waits when the
 * queue is empty and sleep(wake_on_kick) returns at once. */
void isp_queue_kick(struct isp_queue *q);

/* Consumer, at shutdown: drop (count) everything waiting, refuse every
 * later push and release blocked producers. Returns the number dropped. */
size_t isp_queue_kill(struct isp_queue *q);

/* Once no producer writes any more (and at free): what is still in the
 * queue, and what a producer wrote in place after the kill, counted
 * dropped. */
void isp_queue_settle(struct isp_queue *q);

/* Wake a waiting consumer only when this many records wait (default 1),
 * or as many bytes as its batch buffer holds; below that it waits until
 * its own deadline (flush-ms). */
void isp_queue_set_wake(struct isp_queue *q, size_t records);

/* CLOCK_MONOTONIC in nanoseconds. */
int64_t isp_now_ns(void);

#endif
