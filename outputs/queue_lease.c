/*
 * queue_lease.c - records written in place in a channel's queue
 * (isp_queue_reserve, queue.h).
 *
 * A producer takes, under the lock, a lease on the free bytes after the
 * head that are in one piece, and writes record after record there
 * without it, each made known by two atomic stores (`done`: records and
 * bytes so far; `lease`: out of the record). Whoever takes the lock next
 * folds what is done into the queue (queue_fold). A per-packet record
 * handed over this way costs no copy and no lock: the 14-attribute event
 * as CSV, about 600 bytes a record, costs the packet thread 250 to 320
 * instructions less a record than with submit's copy under the lock
 * (bench/README.md, "Records written in place").
 * Pushes, growth and eviction never run while a lease is out: they end
 * an idle one first, or wait for the record being written.
 */
#include "queue.h"
#include "queue_int.h"

#include <string.h>

/*
 * Under the lock: the records the lease's holder finished since the last
 * fold join the queue (counted queued; dropped when the queue died
 * meanwhile). They follow the head: the lease began there (after a pad
 * at the end of the ring, when it began at offset 0).
 */
void queue_fold(struct isp_queue *q)
{
	/* sequentially consistent: take's sleeper stores its flag, then
	 * folds; the holder stores `done`, then reads the flag */
	uint64_t d = atomic_load(&q->done);

	if (d == q->folded)
		return;
	uint64_t n = DONE_RECS(d) - DONE_RECS(q->folded);
	size_t bytes = (size_t)(DONE_BYTES(d) - DONE_BYTES(q->folded));

	q->queued += n;
	atomic_store_explicit(&q->cnt->queued, q->queued, memory_order_release);
	if (q->dead) {
		atomic_fetch_add_explicit(&q->cnt->dropped, n, memory_order_release);
	} else {
		if (q->folded == 0 && q->lease_pad) {
			struct qhdr p = { .size = (uint32_t)q->lease_pad, .text_len = PAD_MARK };

			memcpy(q->ring + q->head, &p, sizeof(p));
			q->used += q->lease_pad;
			q->head = 0;
		}
		q->head += bytes;
		if (q->head == q->cap)
			q->head = 0;
		q->used += bytes;
		q->count += n;
	}
	q->folded = d;
}

/* Under the lock: end an idle lease (after folding what it finished).
 * false when its holder is inside a record. */
bool queue_end_lease(struct isp_queue *q)
{
	uintptr_t w = atomic_load(&q->lease);

	if (w == 0)
		return true;
	if ((w & L_STATE) == L_BUSY || !atomic_compare_exchange_strong(&q->lease, &w, 0))
		return false;
	queue_fold(q);
	return true;
}

/* Under the lock, the holder-to-be: a lease on the free bytes after the
 * head, when a record of `need` bytes goes in at once there (no growing,
 * evicting or waiting: isp_queue_push does those), no other lease is out
 * and no producer waits for one. */
static bool grant_lease(struct isp_queue *q, const void *owner, size_t need)
{
	size_t pad = 0, lo, start, end;

	if (atomic_load_explicit(&q->lease, memory_order_relaxed) != 0 || q->dead ||
	    atomic_load(&q->resv_waiters) != 0 || q->count + q->claim_n >= q->max_records ||
	    need > q->cap || (q->used != 0 && !ring_fit(q, need, &pad)))
		return false;
	lo = q->claim_n ? q->claim_at : q->tail;
	start = pad ? 0 : q->head;
	end = q->used == 0 ? q->cap : start < lo ? lo : q->cap;
	q->lease_pad = pad;
	q->folded = 0;
	atomic_store_explicit(&q->done, 0, memory_order_relaxed);
	q->w_at = q->ring + start;
	q->w_end = q->ring + end;
	q->w_done = 0;
	q->w_left = q->max_records - q->count - q->claim_n;
	if (q->w_left > LEASE_MAX_RECORDS)
		q->w_left = LEASE_MAX_RECORDS;
	atomic_store(&q->lease, LEASE(owner, L_BUSY));
	return true;
}

/* The lease's holder out of room, or a producer without a lease: a new
 * lease under the lock, when there is room at once. */
static __attribute__((noinline)) bool renew_lease(struct isp_queue *q, const void *owner,
						  size_t need, bool held)
{
	bool ok, wake, wake_room;

	if (held)       /* out of room: this lease ends, another begins */
		atomic_store(&q->lease, LEASE(owner, L_IDLE));
	pthread_mutex_lock(&q->mu);
	queue_end_lease(q);   /* ours, or an idle one of another producer */
	queue_fold(q);
	reset_if_empty(q);
	/* A push that found our lease inside a record (entered above, before
	 * the room was found short) sleeps until the record is left: it was
	 * left here, and no lease is granted while it waits, so no commit
	 * will wake it. Read under the lock: such a waiter counted itself
	 * and went to sleep before this thread could take it. */
	wake_room = held && atomic_load(&q->resv_waiters) != 0;
	ok = grant_lease(q, owner, need);
	/* also reckons the wake target anew, from the new lease's `done` */
	wake = wake_consumer(q);
	pthread_mutex_unlock(&q->mu);
	if (wake_room)
		pthread_cond_broadcast(&q->room);
	if (wake)
		pthread_cond_signal(&q->data);
	return ok;
}

char *isp_queue_reserve(struct isp_queue *q, const void *owner, const char *report, size_t rl,
			const char *key, size_t kl, size_t text_max)
{
	size_t need = rec_size(rl, kl, text_max);
	uintptr_t idle = LEASE(owner, L_IDLE);

	/* The holder of an idle lease enters it without the lock. */
	bool held = atomic_compare_exchange_strong(&q->lease, &idle, LEASE(owner, L_BUSY));

	if (__builtin_expect(!held || (size_t)(q->w_end - q->w_at) < need || q->w_left == 0, 0) &&
	    !renew_lease(q, owner, need, held))
		return NULL;

	q->w_hdr = (struct qhdr *)q->w_at;
	return qrec_open(q->w_at, report, rl, key, kl);
}

/* The holder has left its record, and others wait for it or a consumer
 * sleeps: look after them under the lock. */
static __attribute__((noinline)) void after_record(struct isp_queue *q, bool waiters)
{
	pthread_mutex_lock(&q->mu);
	if (waiters)
		queue_end_lease(q);
	queue_fold(q);
	bool wake = wake_consumer(q);
	pthread_mutex_unlock(&q->mu);
	if (waiters)
		pthread_cond_broadcast(&q->room);
	if (wake)
		pthread_cond_signal(&q->data);
}

/* Whether what the holder has done reaches the sleeping consumer's wake
 * target: records or bytes. The target is read after the consumer's
 * flag: a sleeper clears it before raising the flag and reckons it after
 * its fold, so a target read is 0 or one reckoned after this record's
 * `done` was folded or not (then counted here). */
static inline bool wake_target_reached(struct isp_queue *q, uint64_t done)
{
	uint64_t t = atomic_load(&q->wake_target);

	return DONE_RECS(done) >= DONE_RECS(t) || DONE_BYTES(done) >= DONE_BYTES(t);
}

/* The holder leaves its record (done or not). Sequentially consistent,
 * against push_locked's waiter and take's sleeper: either they see the
 * record done, or this sees them. A sleeping consumer is looked after
 * (under the lock) only by the record that makes its batch: before the
 * wake target, a commit with the consumer asleep took the lock and folded
 * for nothing (108 instructions a record of the 14-attribute event). */
static inline void leave_record(struct isp_queue *q)
{
	uintptr_t w = atomic_load_explicit(&q->lease, memory_order_relaxed);
	/* read while the lease is ours: once idle, another producer may end
	 * it and take a lease of its own, w_done included */
	const uint64_t done = q->w_done;

	atomic_store(&q->lease, (w & ~(uintptr_t)L_STATE) | L_IDLE);
	bool waiters = atomic_load(&q->resv_waiters) != 0;

	if (__builtin_expect(waiters || (atomic_load(&q->consumer_waiting) &&
					 wake_target_reached(q, done)), 0))
		after_record(q, waiters);
}

void isp_queue_commit(struct isp_queue *q, size_t text_len)
{
	size_t size = qrec_close(q->w_hdr, text_len);

	q->w_at += size;
	q->w_left--;
	q->w_done += (UINT64_C(1) << DONE_SHIFT) + size;
	atomic_store(&q->done, q->w_done);
	leave_record(q);
}

void isp_queue_abort(struct isp_queue *q)
{
	leave_record(q);
}

bool isp_queue_write_held(struct isp_queue *q, const void *owner, const void *recs, size_t bytes,
			  size_t n)
{
	uintptr_t idle = LEASE(owner, L_IDLE);
	bool held = atomic_compare_exchange_strong(&q->lease, &idle, LEASE(owner, L_BUSY));

	if (!held || (size_t)(q->w_end - q->w_at) < bytes || q->w_left < n) {
		if (!renew_lease(q, owner, bytes, held))
			return false;
		if (q->w_left < n) {    /* a lease, but for fewer records */
			leave_record(q);
			return false;
		}
	}
	memcpy(q->w_at, recs, bytes);
	q->w_at += bytes;
	q->w_left -= n;
	q->w_done += ((uint64_t)n << DONE_SHIFT) + bytes;
	atomic_store(&q->done, q->w_done);
	leave_record(q);
	return true;
}
