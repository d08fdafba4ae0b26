/*
 * check_queue_wake.c - every waiter of the channel queue is woken by the
 * change it waits for, whichever path makes it: a push waiting for a
 * record written in place, when its writer leaves the record by renewing
 * its lease; a consumer asleep until a batch, when a queue bounded below
 * a batch is full, and by the record that makes its batch (the records
 * before it written in place without the lock); a push blocked for room,
 * when the consumer drops a record it cannot hold. Each case reaches its instant deterministically
 * (the queue's state set by hand, or realloc made to fail) and fails,
 * by its deadline, without the wake-up. A binary of its own: it replaces
 * realloc.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../outputs/queue.h"
#include "../../outputs/queue_int.h"
#include "../check_run.h"

/* A push that finds the lease inside a record sleeps until the record is
 * left. The holder may leave it without a commit: it entered its idle
 * lease for a record, found the room short and renewed the lease, which
 * is refused while a push waits. That renewal must wake the push (it used
 * not to: the push slept until an unrelated wake-up, for ever in a queue
 * with no other producer). The lease is put inside a record by hand, as
 * isp_queue_reserve does an instant before it finds the room short:
 * there is no other way to make the push arrive in that instant. */
struct rw_arg {
	struct isp_queue *q;
	_Atomic bool pushed;
};

static void *rw_pusher(void *arg)
{
	struct rw_arg *a = arg;
	struct isp_record r = { .report = "rep", .text = "pushed", .len = 6 };

	ck_assert(isp_queue_push(a->q, &r));
	atomic_store(&a->pushed, true);
	return NULL;
}

START_TEST(renewal_wakes_a_waiting_push)
{
	struct isp_counters cnt = { 0 };
	struct isp_queue *q = isp_queue_new(1000, 4096, ISP_DROP_NEWEST, &cnt);
	struct rw_arg a = { .q = q };
	static int owner;
	pthread_t th;
	char *at;

	ck_assert_ptr_nonnull(q);
	at = isp_queue_reserve(q, &owner, "rep", 3, "", 0, 100);
	ck_assert_ptr_nonnull(at);
	memcpy(at, "first", 5);
	isp_queue_commit(q, 5);
	/* inside a record, as reserve's entry makes it */
	atomic_store(&q->lease, LEASE(&owner, L_BUSY));
	ck_assert_int_eq(pthread_create(&th, NULL, rw_pusher, &a), 0);
	for (int64_t until = isp_now_ns() + 5000000000; atomic_load(&q->resv_waiters) == 0;)
		ck_assert_msg(isp_now_ns() < until, "the push did not wait for the record");
	/* what reserve does: out of the record without a commit, then (the
	 * room being short for 4060 bytes) a renewal, refused to this lease */
	atomic_store(&q->lease, LEASE(&owner, L_IDLE));
	ck_assert_ptr_null(isp_queue_reserve(q, &owner, "rep", 3, "", 0, 4060));
	for (int64_t until = isp_now_ns() + 5000000000; !atomic_load(&a.pushed);)
		ck_assert_msg(isp_now_ns() < until, "the waiting push was not woken by the renewal");
	pthread_join(th, NULL);
	ck_assert_uint_eq(atomic_load(&cnt.queued), 2);
	ck_assert_uint_eq(atomic_load(&cnt.dropped), 0);
	ck_assert_uint_eq(isp_queue_kill(q), 2);
	isp_queue_free(q);
}
END_TEST

/* A consumer is woken for a batch (wake_at records, or its staging
 * buffer's bytes); a queue bounded below that is full first. Full, it
 * must wake the consumer whatever the policy: it used to wake it only
 * under block, so with drop-newest or drop-oldest the consumer slept
 * until its deadline (flush-ms) while every record pushed meanwhile was
 * dropped or evicted. Bounded by records (4 of a batch of 256) and by
 * bytes: queue-bytes 4100 is a ring of 4096 (a multiple of 16) and a
 * staging buffer of 4100, which 7 records of 528 bytes never fill (at
 * 4096, the pad that drop-oldest's record after an eviction needs filled
 * the ring to the staging size, which woke the consumer). */
struct fw_arg {
	struct isp_queue *q;
	size_t len;
	unsigned pushes;
};

static void *fw_pusher(void *arg)
{
	struct fw_arg *a = arg;
	char text[600];

	memset(text, 'f', sizeof(text));
	/* once the consumer sleeps (its flag is set under the lock) */
	for (int64_t until = isp_now_ns() + 5000000000; !atomic_load(&a->q->consumer_waiting);)
		if (isp_now_ns() >= until)
			return NULL;
	for (unsigned i = 0; i < a->pushes; i++) {
		struct isp_record r = { .report = "rep", .text = text, .len = a->len };

		isp_queue_push(a->q, &r);
	}
	return NULL;
}

static void full_wakes(enum isp_drop_policy policy, size_t records, size_t bytes, size_t len,
		       size_t fit)
{
	struct isp_counters cnt = { 0 };
	struct isp_queue *q = isp_queue_new(records, bytes, policy, &cnt);
	struct fw_arg a = { .q = q, .len = len, .pushes = (unsigned)fit + 3 };
	struct isp_qbatch b;
	pthread_t th;

	ck_assert_ptr_nonnull(q);
	isp_queue_set_wake(q, 256);
	ck_assert_int_eq(isp_qbatch_init(&b, 256, bytes), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, fw_pusher, &a), 0);
	int64_t t0 = isp_now_ns();
	size_t n = isp_queue_take(q, &b, t0 + 10000000000);
	int64_t waited = isp_now_ns() - t0;

	pthread_join(th, NULL);
	ck_assert_uint_eq(n, fit);
	ck_assert_msg(waited < 5000000000, "a full queue (policy %d) left the consumer asleep "
		      "for %lld ms, until its deadline", (int)policy, (long long)(waited / 1000000));
	isp_qbatch_free(&b);
	isp_queue_free(q);
}

START_TEST(full_queue_wakes_the_consumer)
{
	full_wakes(ISP_DROP_NEWEST, 4, 1u << 20, 10, 4);
	full_wakes(ISP_DROP_OLDEST, 4, 1u << 20, 10, 4);
	full_wakes(ISP_DROP_NEWEST, 1000, 4100, 500, 7);
	full_wakes(ISP_DROP_OLDEST, 1000, 4100, 500, 7);
}
END_TEST

/* A record larger than the consumer's staging buffer that the buffer
 * cannot grow for (out of memory) is dropped by the consumer, and a
 * producer blocked for room must then be woken: the room it waits for
 * is there. It used not to be (the give-back before the drop woke only
 * producers already waiting), so a blocked push slept until the next
 * take with records in it, for ever with no other producer. realloc is
 * made to fail here, in builds without a sanitizer (which brings its
 * own); the push is made to block in that instant, after the give-back
 * and before the drop: there is no other way to reach it. */
#if defined(__has_feature)      /* clang's way to say it */
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
	__has_feature(memory_sanitizer)
#define SANITIZED 1
#endif
#endif
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) && \
	!defined(SANITIZED)
#define CAN_FAIL_REALLOC 1
extern void *__libc_realloc(void *p, size_t n);

static _Atomic size_t realloc_fails_from;       /* 0: never */
static void (*realloc_failing)(void);           /* called before it fails */

void *realloc(void *p, size_t n)
{
	size_t from = atomic_load(&realloc_fails_from);

	if (from && n >= from) {
		if (realloc_failing)
			realloc_failing();
		errno = ENOMEM;
		return NULL;
	}
	return __libc_realloc(p, n);
}

struct oom_arg {
	struct isp_queue *q;
	_Atomic bool go, blocked, pushed;
};

static struct oom_arg *oom;

static void *oom_pusher(void *arg)
{
	struct oom_arg *a = arg;
	struct isp_record r = { .report = "rep", .text = "small", .len = 5 };

	while (!atomic_load(&a->go))
		;
	ck_assert(isp_queue_push(a->q, &r));
	atomic_store(&a->pushed, true);
	return NULL;
}

static unsigned room_waiters(struct isp_queue *q)
{
	pthread_mutex_lock(&q->mu);
	unsigned n = q->room_waiters;
	pthread_mutex_unlock(&q->mu);
	return n;
}

/* in the consumer's realloc: the push blocks (the big record is back in
 * the queue, which holds one record), asleep once counted under the lock */
static void oom_push_blocks(void)
{
	atomic_store(&oom->go, true);
	for (int64_t until = isp_now_ns() + 5000000000; room_waiters(oom->q) == 0;)
		if (isp_now_ns() >= until)
			return;
	atomic_store(&oom->blocked, true);
}
#endif

/* A consumer asleep for a batch is woken by the record that makes it,
 * and the records written in place before it take no lock: each lease's
 * commits look at the wake target (what the batch lacks, reckoned under
 * the lock when the consumer fell asleep, after each push and at each
 * new lease), not at the queue. By records (a batch of 8), by bytes (8
 * records fill the ring's bytes to the staging buffer's size), and with
 * pushes from another producer in between, which end the writer's lease
 * (its next records under a new one). */
struct wt_arg {
	struct isp_queue *q;
	size_t len;
	unsigned before, pushes;        /* in place before the pushes; pushed */
	unsigned unfolded;              /* DONE_RECS of `folded` after 7 in place */
	bool asleep;                    /* the consumer still asleep then */
};

static void wt_write(struct isp_queue *q, size_t len)
{
	static int owner;
	char *at = isp_queue_reserve(q, &owner, "rep", 3, "", 0, 600);

	ck_assert_ptr_nonnull(at);
	memset(at, 'w', len);
	isp_queue_commit(q, len);
}

static void *wt_producer(void *arg)
{
	struct wt_arg *a = arg;

	for (int64_t until = isp_now_ns() + 5000000000; !atomic_load(&a->q->consumer_waiting);)
		if (isp_now_ns() >= until)
			return NULL;
	for (unsigned i = 0; i < 7; i++) {
		if (i == a->before) {
			for (unsigned k = 0; k < a->pushes; k++) {
				char text[600];
				struct isp_record r = { .report = "rep", .text = text, .len = a->len };

				memset(text, 'p', sizeof(text));
				ck_assert(isp_queue_push(a->q, &r));
			}
			i += a->pushes;
		}
		if (i < 7)
			wt_write(a->q, a->len);
	}
	pthread_mutex_lock(&a->q->mu);
	a->unfolded = (unsigned)DONE_RECS(a->q->folded);
	/* waiting: what the pushes folded (the records before them, and
	 * theirs); the lease's since, unfolded */
	a->asleep = atomic_load(&a->q->consumer_waiting) &&
		    a->q->count == (a->pushes ? a->before + a->pushes : 0);
	pthread_mutex_unlock(&a->q->mu);
	wt_write(a->q, a->len);         /* the batch's last */
	return NULL;
}

static void wake_target(size_t wake_at, size_t staging, size_t len, unsigned before,
			unsigned pushes, bool lines)
{
	struct isp_counters cnt = { 0 };
	struct isp_queue *q = isp_queue_new(1000, 1u << 20, ISP_DROP_NEWEST, &cnt);
	struct wt_arg a = { .q = q, .len = len, .before = before, .pushes = pushes };
	struct isp_qbatch b;
	pthread_t th;

	ck_assert_ptr_nonnull(q);
	isp_queue_set_wake(q, wake_at);
	ck_assert_int_eq(isp_qbatch_init(&b, 256, staging), 0);
	b.lines = lines;
	ck_assert_int_eq(pthread_create(&th, NULL, wt_producer, &a), 0);
	int64_t t0 = isp_now_ns();
	size_t n = isp_queue_take(q, &b, t0 + 10000000000);
	int64_t waited = isp_now_ns() - t0;

	pthread_join(th, NULL);
	ck_assert_msg(a.asleep, "the consumer was woken before its batch was there");
	/* the lease's records since it began (after the pushes, if any: a
	 * new lease), none folded by a commit */
	ck_assert_uint_eq(a.unfolded, 0);
	ck_assert_uint_eq(n, 8);
	ck_assert_msg(waited < 5000000000, "the batch's last record left the consumer asleep "
		      "for %lld ms, until its deadline", (long long)(waited / 1000000));
	ck_assert_uint_eq(atomic_load(&cnt.queued), 8);
	isp_qbatch_free(&b);
	isp_queue_free(q);
}

START_TEST(the_batch_wakes_the_consumer_the_rest_no_lock)
{
	wake_target(8, 1u << 20, 20, 7, 0, false);      /* by records */
	/* by bytes: 8 records of 512 in the ring fill 4000, and their
	 * lines (481 bytes) go in a staging buffer of that size */
	wake_target(256, 4000, 480, 7, 0, true);
	wake_target(8, 1u << 20, 20, 3, 2, false);      /* pushes between */
}
END_TEST

START_TEST(dropped_big_record_wakes_a_blocked_push)
{
#ifdef CAN_FAIL_REALLOC
	struct isp_counters cnt = { 0 };
	struct isp_queue *q = isp_queue_new(1, 1u << 20, ISP_BLOCK, &cnt);
	struct oom_arg a = { .q = q };
	struct isp_qbatch b;
	static char big[100000];
	pthread_t th;

	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(isp_qbatch_init(&b, 8, 1u << 20), 0);   /* 64 KiB staging */
	memset(big, 'b', sizeof(big));
	struct isp_record r = { .report = "rep", .text = big, .len = sizeof(big) };
	ck_assert(isp_queue_push(q, &r));
	oom = &a;
	ck_assert_int_eq(pthread_create(&th, NULL, oom_pusher, &a), 0);
	realloc_failing = oom_push_blocks;
	atomic_store(&realloc_fails_from, sizeof(big));
	size_t n = isp_queue_take(q, &b, isp_now_ns() + 3000000000);
	atomic_store(&realloc_fails_from, 0);
	ck_assert_msg(atomic_load(&a.blocked), "the push did not block");
	for (int64_t until = isp_now_ns() + 2000000000; !atomic_load(&a.pushed);)
		ck_assert_msg(isp_now_ns() < until, "the blocked push was not woken when the "
			      "record it waited behind was dropped");
	pthread_join(th, NULL);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(b.recs[0].text, "small");
	ck_assert_uint_eq(atomic_load(&cnt.dropped), 1);
	isp_qbatch_free(&b);
	isp_queue_free(q);
#endif
}
END_TEST

int main(void)
{
	Suite *s = suite_create("queue_wake");
	TCase *tc = tcase_create("queue_wake");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, renewal_wakes_a_waiting_push);
	tcase_add_test(tc, full_queue_wakes_the_consumer);
	tcase_add_test(tc, the_batch_wakes_the_consumer_the_rest_no_lock);
	tcase_add_test(tc, dropped_big_record_wakes_a_blocked_push);
	suite_add_tcase(s, tc);
	return check_run(s, CK_FORK_GETENV);
}
