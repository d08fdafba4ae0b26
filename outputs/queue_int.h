/*
 * queue_int.h - what queue.c (the ring, pushes, the consumer) and
 * queue_lease.c (records written in place) share: the ring's layout, the
 * queue's state, and the small checks both make under the lock.
 */
#ifndef ISP_OUTPUTS_QUEUE_INT_H
#define ISP_OUTPUTS_QUEUE_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "queue.h"
#include "qrec.h"

/* Initial staging size, and so the most bytes a batch takes in the
 * common case (and what a waiting consumer is woken for). */
#define STAGING_BYTES (64u * 1024u)
/* How long a consumer that finds part of a batch waits for the rest
 * (producers are not asked to signal it): a tenth of a millisecond more
 * for a record at most. */
#define GATHER_NS (100 * 1000)
/* First size of the ring; a channel that keeps up never needs more. */
#define START_BYTES (1024u * 1024u)

struct isp_queue {
	pthread_mutex_t mu;
	pthread_cond_t data;            /* consumer: records arrived, or kick */
	pthread_cond_t room;            /* blocked producers: room, or kill */
	unsigned char *ring;
	size_t cap, head, tail, used, count, max_records;
	/* The consumer's claim: claim_n records from claim_at on (pads
	 * included, wrapping), out of count and not free. claim_n == 0: none. */
	size_t claim_at, claim_n;
	size_t max_cap;                 /* queue-bytes: cap grows up to it */
	enum isp_drop_policy policy;
	int64_t grace_ns;               /* how long a blocked producer waits after a stop */
	_Atomic bool consumer_waiting;  /* in take, asleep until a batch */
	bool kicked, dead;
	size_t wake_at;                 /* records waiting before a waiting consumer is woken */
	size_t wake_bytes;              /* or bytes: the consumer's staging size */
	unsigned room_waiters;
	uint64_t queued;                /* shadow of cnt->queued, under mu */
	struct isp_counters *cnt;
	/* Records written in place (isp_queue_reserve): one producer at a
	 * time holds a lease on the free bytes after the head and writes
	 * record after record there without the lock. `done` publishes what
	 * it finished (records and bytes since the lease began); whoever
	 * holds the lock folds them into the queue (queue_fold). `lease` says
	 * who holds it and whether it is inside a record, in one word (a
	 * holder that lost its lease cannot enter another's); others end an
	 * idle lease, or wait for the record. */
	_Atomic uintptr_t lease;        /* the holder's address | enum lease_state */
	_Atomic uint64_t done;          /* records << DONE_SHIFT | bytes, since the lease began */
	_Atomic unsigned resv_waiters;  /* producers waiting for a record */
	/* While the consumer sleeps for a batch: the lease's `done` at which
	 * the batch will be ready (records << DONE_SHIFT | bytes, each
	 * reached on its own), reckoned under the lock from what waits; the
	 * holder's commits below it take no lock. 0: not known, every
	 * commit looks. */
	_Atomic uint64_t wake_target;
	size_t lease_pad;               /* pad before lease_at, at the head (under mu) */
	uint64_t folded;                /* `done` already folded (under mu) */
	/* the holder's own (no lock: only the holder touches them) */
	unsigned char *w_at, *w_end;    /* next record; end of the room granted */
	struct qhdr *w_hdr;             /* the record being written */
	uint64_t w_done;                /* what `done` will say */
	size_t w_left;                  /* records the bound still allows */
};

enum lease_state { L_NONE, L_IDLE, L_BUSY };
#define L_STATE 3u
#define LEASE(owner, state) ((uintptr_t)(owner) | (state))
#define DONE_SHIFT 40                   /* bytes below, records above */
#define DONE_BYTES(d) ((d) & ((UINT64_C(1) << DONE_SHIFT) - 1))
#define DONE_RECS(d) ((d) >> DONE_SHIFT)
/* Records a lease holds at most before it is renewed (DONE_RECS's bits). */
#define LEASE_MAX_RECORDS ((UINT64_C(1) << (64 - DONE_SHIFT)) - 1)

/* Does a record of `need` bytes fit now? *pad = bytes to skip at the end
 * of the ring first. Requires used > 0 (an empty ring is reset first).
 * The free bytes end where the claimed records start, if any. */
static inline bool ring_fit(const struct isp_queue *q, size_t need, size_t *pad)
{
	size_t lo = q->claim_n ? q->claim_at : q->tail;

	*pad = 0;
	if (q->head > lo) {
		if (q->cap - q->head >= need)
			return true;
		*pad = q->cap - q->head;
		return lo >= need;
	}
	if (q->head < lo)
		return lo - q->head >= need;
	return false;                   /* head == lo with used > 0: full */
}

/* Nothing in the ring, claimed or waiting, and no lease out (its holder
 * writes after the head): restart at offset 0 (no pads in the common
 * case). */
static inline void reset_if_empty(struct isp_queue *q)
{
	if (q->count == 0 && q->claim_n == 0 && atomic_load_explicit(&q->lease, memory_order_relaxed) == 0)
		q->head = q->tail = q->used = 0;
}

/* Enough waiting for the consumer to take: wake_at records, or what
 * fills its staging buffer. */
static inline bool batch_ready(const struct isp_queue *q)
{
	return q->count > 0 && (q->count >= q->wake_at || q->used >= q->wake_bytes);
}

/* Under the lock, the consumer asleep and its batch not ready: the
 * wake target, from the lease's `done` folded so far and what the batch
 * lacks (records or bytes; other producers' pushes reckon it again). */
static inline void reckon_wake_target(struct isp_queue *q)
{
	uint64_t recs = DONE_RECS(q->folded) + (q->wake_at > q->count ? q->wake_at - q->count : 1);
	uint64_t bytes = DONE_BYTES(q->folded) + (q->wake_bytes > q->used ? q->wake_bytes - q->used : 1);

	if (recs > LEASE_MAX_RECORDS)
		recs = LEASE_MAX_RECORDS;
	if (bytes >= UINT64_C(1) << DONE_SHIFT)
		bytes = (UINT64_C(1) << DONE_SHIFT) - 1;
	atomic_store(&q->wake_target, recs << DONE_SHIFT | bytes);
}

/* Wake a waiting consumer only once a batch is worth it: below that it
 * wakes by itself within flush-ms, and a busy producer pays no futex call
 * per record, nor a lock (the wake target). Under the lock. */
static inline bool wake_consumer(struct isp_queue *q)
{
	if (!atomic_load_explicit(&q->consumer_waiting, memory_order_relaxed))
		return false;
	if (!batch_ready(q)) {
		reckon_wake_target(q);
		return false;
	}
	atomic_store_explicit(&q->consumer_waiting, false, memory_order_relaxed);
	return true;
}

/* Under the lock (queue_lease.c): fold the records the lease's holder
 * finished into the queue; end an idle lease (false while its holder is
 * inside a record). */
void queue_fold(struct isp_queue *q);
bool queue_end_lease(struct isp_queue *q);

#endif
