/*
 * queue.c - the bounded MPSC record ring behind every channel (queue.h).
 *
 * Layout: each record is a 16-byte header followed by report\0 key\0
 * text\0, padded to 16 bytes, stored contiguously so that a batch entry can
 * point straight at its text. When a record does not fit between the head
 * and the end of the ring, a pad header fills the end and the record starts
 * at offset 0. `used` counts bytes including pads; an empty ring restarts
 * at offset 0, which keeps the common case free of pads.
 *
 * The ring starts small and doubles (up to queue-bytes) only when a record
 * does not fit: a ring goes round all of its bytes, so a 64 MiB ring that
 * never holds more than a few records would still end up resident, in
 * every channel. The bound is unchanged: a record is refused, evicts or
 * waits only once the ring has its full size.
 *
 * The consumer takes a batch in two short critical sections: it claims
 * every waiting record at once (they leave `count` and `tail`, so no
 * producer evicts them; their bytes stay in `used`), then without the lock
 * walks their headers and copies out what fits its batch, then gives back
 * the bytes it copied and returns the rest to the head of the queue.
 * Under the lock, the walk and the copy took microseconds a batch (every
 * header a cache line the producer had just written), and a producer
 * arriving meanwhile slept on the mutex: a futex wait and wake per batch.
 * A record that does not fit while records are claimed waits for the
 * give-back, as it waited for the mutex before: the record and byte
 * bounds and the drop policies see the queue as if the batch had left it
 * at once, and the ring never grows (moves) under the walk. Records
 * written in place: queue_lease.c.
 */
#include "queue.h"
#include "queue_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t isp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct timespec to_ts(int64_t ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 };

	return ts;
}

/* The process's stop (isp_channels_stop_asked): set from a signal handler,
 * which may only touch lock-free atomics. */
_Static_assert(ATOMIC_LLONG_LOCK_FREE == 2 && ATOMIC_BOOL_LOCK_FREE == 2,
	       "a signal handler sets these");
static _Atomic int64_t stop_ns;        /* 0: no stop asked */
static _Atomic bool hurried;
/* How often a producer blocked for room looks at them. */
#define LOOK_NS (100 * 1000000LL)

void isp_channels_stop_asked(void)
{
	int64_t none = 0;

	atomic_compare_exchange_strong(&stop_ns, &none, isp_now_ns());
}

void isp_channels_hurry(void)
{
	atomic_store(&hurried, true);
}

bool isp_channels_hurried(void)
{
	return atomic_load_explicit(&hurried, memory_order_relaxed);
}

void isp_queue_set_grace(struct isp_queue *q, int64_t grace_ns)
{
	q->grace_ns = grace_ns;
}

/* Does a producer blocked for room give up (the stop's grace is over)? */
static bool blocked_gives_up(const struct isp_queue *q)
{
	int64_t s = atomic_load_explicit(&stop_ns, memory_order_relaxed);

	return isp_channels_hurried() || (s && isp_now_ns() - s >= q->grace_ns);
}

struct isp_queue *isp_queue_new(size_t max_records, size_t max_bytes,
				enum isp_drop_policy policy,
				struct isp_counters *cnt)
{
	struct isp_queue *q = calloc(1, sizeof(*q));
	pthread_condattr_t ca;

	if (!q)
		return NULL;
	if (max_bytes < ISP_QUEUE_MIN_BYTES)
		max_bytes = ISP_QUEUE_MIN_BYTES;
	/* Sizes are stored in 32 bits. */
	if (max_bytes > (size_t)UINT32_MAX - QALIGN + 1)
		max_bytes = (size_t)UINT32_MAX - QALIGN + 1;
	q->max_cap = max_bytes & ~(size_t)(QALIGN - 1);
	q->cap = q->max_cap < START_BYTES ? q->max_cap : START_BYTES;
	q->ring = malloc(q->cap);
	if (!q->ring) {
		free(q);
		return NULL;
	}
	q->max_records = max_records ? max_records : 1;
	q->policy = policy;
	q->cnt = cnt;
	/* Adaptive: spin a little before sleeping. Both sides hold the lock
	 * briefly (a record's copy; a claim, a give-back), so a waiter that
	 * sleeps costs its holder a futex wake (a system call, and on a VM an
	 * inter-processor interrupt) for nothing. */
	pthread_mutexattr_t ma;

	pthread_mutexattr_init(&ma);
#ifdef PTHREAD_MUTEX_ADAPTIVE_NP
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
	pthread_mutex_init(&q->mu, &ma);
	pthread_mutexattr_destroy(&ma);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->data, &ca);
	pthread_cond_init(&q->room, &ca);
	pthread_condattr_destroy(&ca);
	q->wake_at = 1;
	return q;
}

void isp_queue_settle(struct isp_queue *q)
{
	/* Records written in place since the consumer's last look (after
	 * its kill, an idle lease with room takes them without the lock) are
	 * counted, dropped, as every record still in the queue: none leaves
	 * uncounted. */
	pthread_mutex_lock(&q->mu);
	queue_fold(q);
	if (!q->dead && q->count)
		atomic_fetch_add_explicit(&q->cnt->dropped, q->count, memory_order_release);
	q->count = 0;
	q->dead = true;
	pthread_mutex_unlock(&q->mu);
}

void isp_queue_free(struct isp_queue *q)
{
	if (!q)
		return;
	isp_queue_settle(q);
	pthread_cond_destroy(&q->data);
	pthread_cond_destroy(&q->room);
	pthread_mutex_destroy(&q->mu);
	free(q->ring);
	free(q);
}

/* The oldest record's header, skipping (and releasing) a pad. */
static const struct qhdr *oldest(struct isp_queue *q)
{
	const struct qhdr *h = (const struct qhdr *)(q->ring + q->tail);

	if (h->text_len == PAD_MARK) {
		q->used -= h->size;
		q->tail = 0;
		h = (const struct qhdr *)q->ring;
	}
	return h;
}

/*
 * A record of `need` bytes does not fit: a ring of twice the size (or what
 * the records and this one need), at most max_cap. realloc keeps the
 * bytes (a large ring is its own mapping, which the kernel moves without
 * copying); records that wrapped keep their order if the part before the
 * end moves to the new end, pad included (a pad still ends the ring).
 * Before, every record was copied to the start of a new ring: a flood the
 * channel did not keep up with paid a copy of each record once more.
 * false when the ring is at its full size already or out of memory: the
 * caller then applies the drop policy. Never while a lease is out or
 * records are claimed (their holders point into the ring).
 */
static bool grow(struct isp_queue *q, size_t need)
{
	if (q->cap >= q->max_cap)
		return false;
	size_t want = q->used + need;   /* pads included: a little more is fine */
	size_t cap = q->cap * 2 > want ? q->cap * 2 : want;
	if (cap > q->max_cap)
		cap = q->max_cap;
	unsigned char *ring = realloc(q->ring, cap);
	if (!ring)
		return false;
	if (q->count > 0 && q->tail >= q->head) {       /* wrapped */
		size_t first = q->cap - q->tail;

		memmove(ring + cap - first, ring + q->tail, first);
		q->tail = cap - first;
	}
	q->ring = ring;
	q->cap = cap;
	return true;
}

/*
 * The free bytes where the next record (about `need` bytes, like this one)
 * will go, or NULL. The consumer read them last, so they are in its cache:
 * asked for now (prefetch_next, after the unlock), they arrive while the
 * producer formats its next record, instead of stalling the next copy
 * and the unlock after it (a locked instruction waits for every pending
 * store).
 */
static inline const unsigned char *next_room(const struct isp_queue *q, size_t need)
{
	size_t lo = q->claim_n ? q->claim_at : q->tail;
	size_t room = q->head < lo ? lo - q->head : q->cap - q->head;

	return room >= need ? q->ring + q->head : NULL;
}

/* Outside the lock: a locked instruction would wait for these too. The
 * bytes may be taken meanwhile; a prefetch is only a hint. */
static inline void prefetch_next(const unsigned char *p, size_t need)
{
	if (!p)
		return;
	for (size_t off = 0; off < need; off += 64) {
#if defined(__x86_64__) || defined(__i386__)
		/* prefetchw (a NOP where not implemented); GCC emits it
		 * for __builtin_prefetch only with -mprfchw */
		__asm__ volatile("prefetchw %0" : : "m"(p[off]));
#else
		__builtin_prefetch(p + off, 1, 3);
#endif
	}
}

/* Drop the oldest waiting record (eviction, or a record the consumer
 * cannot hold). */
static void pop(struct isp_queue *q, size_t size)
{
	q->tail += size;
	if (q->tail == q->cap)
		q->tail = 0;
	q->used -= size;
	q->count--;
	reset_if_empty(q);
}

/* One record, under the lock: true when it went in; *next is where the
 * one after it will go (to prefetch after the unlock). */
static bool push_locked(struct isp_queue *q, const struct isp_record *r,
			const unsigned char **next)
{
	const char *rep = r->report ? r->report : "";
	const char *key = r->key ? r->key : "";
	size_t rl = strlen(rep), kl = r->key ? r->key_len : 0, tl = r->len;
	size_t need = 0, pad = 0;
	bool fits;

	/* Each length below the bound first, so the sum cannot overflow. */
	fits = rl < q->max_cap && kl < q->max_cap && tl < q->max_cap;
	if (fits) {
		need = rec_size(rl, kl, tl);
		fits = need <= q->max_cap;
	}
	/* records written in place before this one count first (and, in a
	 * dead queue, as dropped: nobody else may fold them) */
	queue_fold(q);
	/* Published before any matching dropped/delivered increment, so a
	 * reader that sees those also sees this (release/acquire). */
	atomic_store_explicit(&q->cnt->queued, ++q->queued, memory_order_release);
	if (!fits || q->dead)
		return false;
	for (;;) {
		if (!queue_end_lease(q)) {
			/* a record is being written in place at the head: wait
			 * for it (a few microseconds; its writer waits for
			 * nothing). The counter and the state are sequentially
			 * consistent, as in commit: either the writer sees this
			 * waiter and wakes it, or this sees the record done. */
			atomic_fetch_add(&q->resv_waiters, 1);
			if ((atomic_load(&q->lease) & L_STATE) == L_BUSY)
				pthread_cond_wait(&q->room, &q->mu);
			atomic_fetch_sub(&q->resv_waiters, 1);
			if (q->dead)
				return false;
			continue;
		}
		pad = 0;
		reset_if_empty(q);
		if (q->count + q->claim_n < q->max_records && need <= q->cap &&
		    (q->used == 0 || ring_fit(q, need, &pad)))
			break;
		if (q->claim_n) {
			/* The consumer is taking its batch out of the claimed
			 * records and gives back the rest in a moment: wait,
			 * as for the mutex of a take under the lock, before
			 * growing (which would move them) or applying the
			 * drop policy (which may evict them). */
			q->room_waiters++;
			pthread_cond_wait(&q->room, &q->mu);
			q->room_waiters--;
			if (q->dead)
				return false;
			continue;
		}
		if (q->count < q->max_records && grow(q, need))
			continue;
		if (q->count == 0)
			return false;   /* no memory to grow: nothing to wait for */
		/* Full, whatever the policy: the consumer must hear of the
		 * records already in. It is woken for a batch (wake_at
		 * records, or its staging buffer's bytes), which a queue
		 * bounded below that never holds: it would sleep until its
		 * deadline while records are dropped, evicted or blocked (a
		 * batch push may also hold a batch's worth it was not woken
		 * for). */
		if (atomic_load_explicit(&q->consumer_waiting, memory_order_relaxed)) {
			atomic_store_explicit(&q->consumer_waiting, false, memory_order_relaxed);
			pthread_cond_signal(&q->data);
		}
		if (q->policy == ISP_DROP_OLDEST) {
			/* count > 0 here: an empty ring always fits need <= cap. */
			pop(q, oldest(q)->size);
			atomic_fetch_add_explicit(&q->cnt->dropped, 1, memory_order_release);
			continue;
		}
		if (q->policy != ISP_BLOCK || blocked_gives_up(q))
			return false;
		q->room_waiters++;
		struct timespec ts = to_ts(isp_now_ns() + LOOK_NS);
		pthread_cond_timedwait(&q->room, &q->mu, &ts);
		q->room_waiters--;
		if (q->dead)
			return false;
	}
	if (pad) {
		struct qhdr p = { .size = (uint32_t)pad, .text_len = PAD_MARK };

		memcpy(q->ring + q->head, &p, sizeof(p));
		q->used += pad;
		q->head = 0;
	}

	struct qhdr h = {
		.size = (uint32_t)need, .text_len = (uint32_t)tl,
		.key_len = (uint32_t)kl, .report_len = (uint32_t)rl,
	};
	unsigned char *p = q->ring + q->head;

	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	memcpy(p, rep, rl + 1);
	p += rl + 1;
	memcpy(p, key, kl);
	p[kl] = '\0';
	p += kl + 1;
	memcpy(p, r->text, tl);
	p[tl] = '\0';
	q->head += need;
	if (q->head == q->cap)
		q->head = 0;
	q->used += need;
	q->count++;
	*next = next_room(q, need);
	return true;
}

bool isp_queue_push(struct isp_queue *q, const struct isp_record *r)
{
	const unsigned char *next = NULL;

	pthread_mutex_lock(&q->mu);
	bool ok = push_locked(q, r, &next);
	bool wake = ok && wake_consumer(q);
	pthread_mutex_unlock(&q->mu);
	if (!ok) {
		atomic_fetch_add_explicit(&q->cnt->dropped, 1, memory_order_release);
		return false;
	}
	prefetch_next(next, r->len);
	if (wake)
		pthread_cond_signal(&q->data);
	return true;
}

size_t isp_queue_push_many(struct isp_queue *q, const struct isp_record *r, size_t n,
			   bool *refused)
{
	const unsigned char *next = NULL;
	size_t in = 0;

	pthread_mutex_lock(&q->mu);
	for (size_t i = 0; i < n; i++) {
		refused[i] = !push_locked(q, &r[i], &next);
		in += !refused[i];
	}
	bool wake = in && wake_consumer(q);
	pthread_mutex_unlock(&q->mu);
	if (in < n)
		atomic_fetch_add_explicit(&q->cnt->dropped, n - in, memory_order_release);
	if (wake)
		pthread_cond_signal(&q->data);
	return in;
}

int isp_qbatch_init(struct isp_qbatch *b, size_t max, size_t max_bytes)
{
	memset(b, 0, sizeof(*b));
	b->max = max ? max : 1;
	b->cap = max_bytes < STAGING_BYTES ? max_bytes : STAGING_BYTES;
	if (b->cap < ISP_QUEUE_MIN_BYTES)
		b->cap = ISP_QUEUE_MIN_BYTES;
	b->buf = malloc(b->cap);
	b->recs = calloc(b->max, sizeof(*b->recs));
	if (!b->buf || !b->recs) {
		isp_qbatch_free(b);
		return -1;
	}
	return 0;
}

void isp_qbatch_free(struct isp_qbatch *b)
{
	free(b->buf);
	free(b->recs);
	memset(b, 0, sizeof(*b));
}

/*
 * Without the lock: copy claimed records from `at` on (n of them at most)
 * into b, each after the other, while they fit b's buffer and batch size,
 * and index them. Producers write only free bytes and wait for the
 * give-back before evicting or growing. *stop = where the records not
 * taken start; returns the bytes taken, pads included; *grow = the size
 * of a first record larger than b's buffer.
 */
static inline __attribute__((always_inline)) size_t
copy_claimed_as(const unsigned char *ring, size_t cap, size_t at, size_t n, struct isp_qbatch *b,
		size_t *stop, size_t *grow, const bool lines)
{
	/* in locals: the copies may write anywhere, as far as the compiler
	 * knows, and would have b's fields read again for every record */
	unsigned char *const buf = b->buf;
	struct isp_record *const recs = b->recs;
	const size_t room = b->cap, most = n < b->max ? n : b->max;
	size_t off = 0, taken = 0, i;

	for (i = 0; i < most; i++) {
		struct qhdr c;
		size_t pad = 0;

		memcpy(&c, ring + at, sizeof(c));
		if (c.text_len == PAD_MARK) {   /* the end of the ring */
			pad = c.size;
			memcpy(&c, ring, sizeof(c));
		}
		size_t need = lines ? (size_t)c.text_len + 1 : c.size;

		if (off + need > room) {
			if (i == 0)
				*grow = c.size;
			break;
		}
		if (pad)
			at = 0;

		struct isp_record *r = &recs[i];

		if (lines) {
			/* the text alone and its newline, after the last one:
			 * the batch is the lines a write takes as they are */
			char *t = (char *)buf + off;

			memcpy(t, ring + at + sizeof(c) + c.report_len + 1 + c.key_len + 1,
			       c.text_len);
			t[c.text_len] = '\n';
			*r = (struct isp_record){ .text = t, .len = c.text_len, .lined = true };
		} else {
			memcpy(buf + off, ring + at, c.size);

			char *s = (char *)buf + off + sizeof(c);

			r->report = s;
			r->key = s + c.report_len + 1;
			r->key_len = c.key_len;
			r->text = r->key + c.key_len + 1;
			r->len = c.text_len;
			r->lined = false;
		}
		off += need;
		taken += pad + c.size;
		at += c.size;
		if (at == cap)
			at = 0;
	}
	b->n = i;
	*stop = at;
	return taken;
}

static size_t copy_claimed(const unsigned char *ring, size_t cap, size_t at, size_t n,
			   struct isp_qbatch *b, size_t *stop, size_t *grow)
{
	return b->lines ? copy_claimed_as(ring, cap, at, n, b, stop, grow, true)
			: copy_claimed_as(ring, cap, at, n, b, stop, grow, false);
}

size_t isp_queue_take(struct isp_queue *q, struct isp_qbatch *b, int64_t until_ns)
{
	size_t grow, n, at, stop, taken, cap;
	const unsigned char *ring;
	bool gathered, wake_room;

again:
	grow = 0;
	b->n = 0;
	pthread_mutex_lock(&q->mu);
	/* Wait for a batch worth taking (wake_at records, or enough to fill
	 * the staging buffer). With nothing waiting, sleep until producers
	 * have that much or the deadline passes, as always. With a part of
	 * a batch waiting, give the producers GATHER_NS more without asking
	 * them to signal: a consumer faster than its producers would
	 * otherwise take a few records at a time, and each take moves the
	 * lock and the ring's last lines between the cores. */
	q->wake_bytes = b->cap;
	gathered = false;
	for (;;) {
		queue_fold(q);  /* records the lease's holder finished meanwhile */
		if (batch_ready(q) || q->kicked || gathered)
			break;
		int64_t now = isp_now_ns();

		if (now >= until_ns)
			break;
		if (q->count > 0) {
			struct timespec ts = to_ts(until_ns - now > GATHER_NS ?
						   now + GATHER_NS : until_ns);

			gathered = true;        /* then take what is there */
			pthread_cond_timedwait(&q->data, &q->mu, &ts);
			continue;
		}

		struct timespec ts = to_ts(until_ns);

		/* Asleep until signalled: a lease's holder that finishes a
		 * record after this store sees it and folds for us; one that
		 * finished before, unseen, is folded here (both sequentially
		 * consistent, as leave_record's). */
		atomic_store(&q->wake_target, 0);      /* every commit looks, */
		atomic_store(&q->consumer_waiting, true);
		queue_fold(q);
		if (q->count > 0)
			continue;
		reckon_wake_target(q);                  /* until this one */
		if (pthread_cond_timedwait(&q->data, &q->mu, &ts) == ETIMEDOUT)
			break;
	}
	atomic_store_explicit(&q->consumer_waiting, false, memory_order_relaxed);
	n = q->count;
	if (n == 0) {
		pthread_mutex_unlock(&q->mu);
		return 0;
	}
	/* Claim every waiting record; the rest of the work is unlocked. */
	q->claim_at = at = q->tail;
	q->claim_n = n;
	q->tail = q->head;
	q->count = 0;
	ring = q->ring;
	cap = q->cap;
	pthread_mutex_unlock(&q->mu);

	taken = copy_claimed(ring, cap, at, n, b, &stop, &grow);

	pthread_mutex_lock(&q->mu);
	q->used -= taken;
	if (b->n < n) {                 /* the rest goes back, first in line */
		q->tail = stop;
		q->count += n - b->n;
	}
	q->claim_n = 0;
	reset_if_empty(q);
	wake_room = q->room_waiters > 0;
	pthread_mutex_unlock(&q->mu);
	if (wake_room)
		pthread_cond_broadcast(&q->room);
	if (grow) {
		/* Rare (a record above the staging size): grow outside the lock
		 * and look again; the record may have been evicted meanwhile. */
		unsigned char *nb = realloc(b->buf, grow);

		if (nb) {
			b->buf = nb;
			b->cap = grow;
		} else {
			/* Out of memory: drop (count) the record we cannot
			 * hold rather than stall the channel on it. That
			 * makes room: producers blocked for it (since the
			 * give-back above, which found none) must hear, as
			 * no take may come to wake them. */
			pthread_mutex_lock(&q->mu);
			wake_room = false;
			if (q->count > 0 && oldest(q)->size > b->cap) {
				pop(q, oldest(q)->size);
				atomic_fetch_add_explicit(&q->cnt->dropped, 1,
							  memory_order_release);
				wake_room = q->room_waiters > 0;
			}
			pthread_mutex_unlock(&q->mu);
			if (wake_room)
				pthread_cond_broadcast(&q->room);
		}
		goto again;
	}
	return b->n;
}

void isp_queue_sleep(struct isp_queue *q, int64_t until_ns, bool wake_on_kick)
{
	struct timespec ts = to_ts(until_ns);

	pthread_mutex_lock(&q->mu);
	while (!(wake_on_kick && q->kicked) && isp_now_ns() < until_ns) {
		if (pthread_cond_timedwait(&q->data, &q->mu, &ts) == ETIMEDOUT)
			break;
	}
	pthread_mutex_unlock(&q->mu);
}

void isp_queue_kick(struct isp_queue *q)
{
	pthread_mutex_lock(&q->mu);
	q->kicked = true;
	pthread_mutex_unlock(&q->mu);
	pthread_cond_broadcast(&q->data);
}

size_t isp_queue_kill(struct isp_queue *q)
{
	size_t n;

	/* The consumer's own call, between takes: nothing is claimed. A
	 * record being written in place is dropped when it is folded. */
	pthread_mutex_lock(&q->mu);
	queue_fold(q);
	n = q->count;
	q->count = 0;
	if (atomic_load_explicit(&q->lease, memory_order_relaxed) != 0)
		q->tail = q->head;      /* the lease's holder writes after it */
	else
		q->head = q->tail = 0;
	q->used = 0;
	q->dead = true;
	if (n)
		atomic_fetch_add_explicit(&q->cnt->dropped, n, memory_order_release);
	pthread_mutex_unlock(&q->mu);
	pthread_cond_broadcast(&q->room);
	return n;
}

void isp_queue_set_wake(struct isp_queue *q, size_t records)
{
	pthread_mutex_lock(&q->mu);
	q->wake_at = records ? records : 1;
	pthread_mutex_unlock(&q->mu);
}
