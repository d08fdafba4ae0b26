/*
 * check_queue_held.c - records held back by a producer, laid out as the
 * queue holds them (outputs/qrec.h), and copied into the queue a run at
 * once (isp_queue_write_held): every record of a run arrives whole and in
 * its place among records written in place and pushed, as records and as
 * lines; a run that would not all go in at once (the ring's room, the
 * record bound, a dead queue) goes in not at all and counts nothing, and
 * the producer's next record goes in as usual; two producers, one
 * writing runs and one pushing, lose nothing and keep their orders.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../outputs/qrec.h"
#include "../../outputs/queue.h"
#include "../check_run.h"

/* A run being held: its bytes and records. */
struct held {
	_Alignas(16) char buf[64 * 1024];
	size_t len, n;
};

static void hold(struct held *h, const char *report, const char *key, const char *text)
{
	char *t = qrec_open(h->buf + h->len, report, strlen(report), key, strlen(key));
	size_t tl = strlen(text);

	memcpy(t, text, tl);
	h->len += qrec_close(h->buf + h->len, tl);
	h->n++;
}

static void check_rec(const struct isp_qbatch *b, size_t i, const char *report, const char *key,
		      const char *text)
{
	ck_assert_str_eq(b->recs[i].report, report);
	ck_assert_uint_eq(b->recs[i].key_len, strlen(key));
	ck_assert(memcmp(b->recs[i].key, key, strlen(key)) == 0);
	ck_assert_uint_eq(b->recs[i].len, strlen(text));
	ck_assert(memcmp(b->recs[i].text, text, strlen(text)) == 0);
}

/* In place, held, pushed, in place again: in that order, each whole. */
START_TEST(run_in_order)
{
	struct isp_counters cnt = { 0 };
	struct isp_queue *q = isp_queue_new(100, 1u << 20, ISP_DROP_NEWEST, &cnt);
	static struct held h;
	static int owner;
	struct isp_qbatch b;

	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(isp_qbatch_init(&b, 16, 4096), 0);
	char *at = isp_queue_reserve(q, &owner, "rep", 3, "", 0, 100);
	ck_assert_ptr_nonnull(at);
	memcpy(at, "first", 5);
	isp_queue_commit(q, 5);
	h.len = h.n = 0;
	hold(&h, "a", "", "one");
	hold(&h, "a-longer-report-name", "k1", "two, a text of some length");
	hold(&h, "abcd", "a key of more than sixteen bytes", "");
	ck_assert(isp_queue_write_held(q, &owner, h.buf, h.len, h.n));
	struct isp_record r = { .report = "rep", .key = "pk", .key_len = 2, .text = "pushed", .len = 6 };
	ck_assert(isp_queue_push(q, &r));
	at = isp_queue_reserve(q, &owner, "rep", 3, "", 0, 100);
	ck_assert_ptr_nonnull(at);
	memcpy(at, "last", 4);
	isp_queue_commit(q, 4);

	ck_assert_uint_eq(isp_queue_take(q, &b, 0), 6);
	check_rec(&b, 0, "rep", "", "first");
	check_rec(&b, 1, "a", "", "one");
	check_rec(&b, 2, "a-longer-report-name", "k1", "two, a text of some length");
	check_rec(&b, 3, "abcd", "a key of more than sixteen bytes", "");
	check_rec(&b, 4, "rep", "pk", "pushed");
	check_rec(&b, 5, "rep", "", "last");
	ck_assert_uint_eq(atomic_load(&cnt.queued), 6);
	ck_assert_uint_eq(atomic_load(&cnt.dropped), 0);
	isp_qbatch_free(&b);
	isp_queue_free(q);
}
END_TEST

/* Taken as lines: each held text with its newline, one after the other. */
START_TEST(run_as_lines)
{
	struct isp_counters cnt = { 0 };
	struct isp_queue *q = isp_queue_new(100, 1u << 20, ISP_DROP_NEWEST, &cnt);
	static struct held h;
	static int owner;
	struct isp_qbatch b;

	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(isp_qbatch_init(&b, 16, 4096), 0);
	b.lines = true;
	h.len = h.n = 0;
	hold(&h, "r", "", "{\"a\":1}");
	hold(&h, "r", "key", "{\"b\":22}");
	ck_assert(isp_queue_write_held(q, &owner, h.buf, h.len, h.n));
	ck_assert_uint_eq(isp_queue_take(q, &b, 0), 2);
	ck_assert(memcmp(b.recs[0].text, "{\"a\":1}\n{\"b\":22}\n", 17) == 0);
	isp_qbatch_free(&b);
	isp_queue_free(q);
}
END_TEST

/* A run the ring cannot hold in one piece, or past the record bound, or
 * into a dead queue: nothing goes in, nothing is counted, and the
 * producer's next record (or a shorter run) goes in. */
START_TEST(run_refused_whole)
{
	struct isp_counters cnt = { 0 };
	struct isp_queue *q = isp_queue_new(3, ISP_QUEUE_MIN_BYTES, ISP_DROP_NEWEST, &cnt);
	static struct held h;
	static int owner;
	char text[200];
	struct isp_qbatch b;

	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(isp_qbatch_init(&b, 16, 4096), 0);
	memset(text, 'x', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	h.len = h.n = 0;
	for (int i = 0; i < 6; i++)     /* 6 x 240 bytes: more than the ring */
		hold(&h, "rep", "", text);
	ck_assert(!isp_queue_write_held(q, &owner, h.buf, h.len, h.n));
	ck_assert_uint_eq(atomic_load(&cnt.queued), 0);
	h.len = h.n = 0;
	for (int i = 0; i < 4; i++)     /* 4 small records: more than the bound */
		hold(&h, "rep", "", "s");
	ck_assert(!isp_queue_write_held(q, &owner, h.buf, h.len, h.n));
	ck_assert_uint_eq(atomic_load(&cnt.queued), 0);
	char *at = isp_queue_reserve(q, &owner, "rep", 3, "", 0, 100);
	ck_assert_ptr_nonnull(at);      /* the lease was left: the producer goes on */
	memcpy(at, "after", 5);
	isp_queue_commit(q, 5);
	ck_assert(isp_queue_write_held(q, &owner, h.buf, 2 * rec_size(3, 0, 1), 2));
	ck_assert_uint_eq(isp_queue_take(q, &b, 0), 3);
	check_rec(&b, 0, "rep", "", "after");
	check_rec(&b, 1, "rep", "", "s");
	check_rec(&b, 2, "rep", "", "s");
	ck_assert_uint_eq(atomic_load(&cnt.queued), 3);
	ck_assert_uint_eq(isp_queue_kill(q), 0);
	ck_assert(!isp_queue_write_held(q, &owner, h.buf, rec_size(3, 0, 1), 1));
	ck_assert_uint_eq(atomic_load(&cnt.queued), 3);
	ck_assert_uint_eq(atomic_load(&cnt.dropped), 0);
	isp_qbatch_free(&b);
	isp_queue_free(q);
}
END_TEST

/* After the consumer's kill, a producer whose idle lease has room still
 * writes in place, a record or a held run, without the lock: those are
 * counted when the queue is freed, queued and dropped, so that queued ==
 * delivered + dropped holds at the end (they were lost before). */
START_TEST(written_after_kill_counted)
{
	struct isp_counters cnt = { 0 };
	struct isp_queue *q = isp_queue_new(100, 1u << 20, ISP_DROP_NEWEST, &cnt);
	static struct held h;
	static int owner;

	ck_assert_ptr_nonnull(q);
	char *at = isp_queue_reserve(q, &owner, "rep", 3, "", 0, 100);
	ck_assert_ptr_nonnull(at);
	memcpy(at, "before", 6);
	isp_queue_commit(q, 6);
	ck_assert_uint_eq(isp_queue_kill(q), 1);
	h.len = h.n = 0;
	hold(&h, "rep", "", "held1");
	hold(&h, "rep", "", "held2");
	isp_queue_write_held(q, &owner, h.buf, h.len, h.n);
	at = isp_queue_reserve(q, &owner, "rep", 3, "", 0, 100);
	if (at)
		isp_queue_commit(q, 0);
	const uint64_t after = 2 + (at != NULL);
	isp_queue_free(q);
	ck_assert_uint_eq(atomic_load(&cnt.queued), 1 + after);
	ck_assert_uint_eq(atomic_load(&cnt.dropped), 1 + after);
}
END_TEST

/* Two producers, one holding runs of 1 to 40 records, one pushing, while
 * the consumer takes: every record arrives once, each producer's in its
 * order; a refused run is pushed record by record, as a worker does. */
#define HELD_RECS 200000
#define PUSHED_RECS 100000

static void *held_producer(void *arg)
{
	struct isp_queue *q = arg;
	static struct held h;
	static int owner;
	unsigned seed = 7;
	char text[32];

	for (unsigned i = 0; i < HELD_RECS;) {
		unsigned n = 1 + (seed = seed * 1103515245u + 12345u) % 40;
		h.len = h.n = 0;
		for (unsigned k = 0; k < n && i + k < HELD_RECS; k++) {
			snprintf(text, sizeof(text), "h%u", i + k);
			hold(&h, "held", "", text);
		}
		if (!isp_queue_write_held(q, &owner, h.buf, h.len, h.n)) {
			for (const char *at = h.buf; at < h.buf + h.len;
			     at += ((const struct qhdr *)(const void *)at)->size) {
				struct isp_record r = qrec_read(at);
				isp_queue_push(q, &r);
			}
		}
		i += (unsigned)h.n;
	}
	return NULL;
}

static void *pushing_producer(void *arg)
{
	struct isp_queue *q = arg;
	char text[32];

	for (unsigned i = 0; i < PUSHED_RECS; i++) {
		struct isp_record r = { .report = "pushed", .text = text };
		r.len = (size_t)snprintf(text, sizeof(text), "p%u", i);
		isp_queue_push(q, &r);
	}
	return NULL;
}

START_TEST(concurrent_runs)
{
	struct isp_counters cnt = { 0 };
	struct isp_queue *q = isp_queue_new(64, 16 * 1024, ISP_BLOCK, &cnt);
	struct isp_qbatch b;
	pthread_t t1, t2;
	unsigned next_h = 0, next_p = 0;

	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(isp_qbatch_init(&b, 32, 4096), 0);
	ck_assert_int_eq(pthread_create(&t1, NULL, held_producer, q), 0);
	ck_assert_int_eq(pthread_create(&t2, NULL, pushing_producer, q), 0);
	while (next_h < HELD_RECS || next_p < PUSHED_RECS) {
		size_t n = isp_queue_take(q, &b, isp_now_ns() + 10 * 1000 * 1000);
		for (size_t i = 0; i < n; i++) {
			char want[32];
			bool held = b.recs[i].text[0] == 'h';

			snprintf(want, sizeof(want), "%c%u", held ? 'h' : 'p', held ? next_h++ : next_p++);
			ck_assert_uint_eq(b.recs[i].len, strlen(want));
			ck_assert(memcmp(b.recs[i].text, want, b.recs[i].len) == 0);
			ck_assert_str_eq(b.recs[i].report, held ? "held" : "pushed");
		}
	}
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	ck_assert_uint_eq(atomic_load(&cnt.queued), HELD_RECS + PUSHED_RECS);
	ck_assert_uint_eq(atomic_load(&cnt.dropped), 0);
	isp_qbatch_free(&b);
	isp_queue_free(q);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("queue_held");
	TCase *tc = tcase_create("queue_held");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, run_in_order);
	tcase_add_test(tc, run_as_lines);
	tcase_add_test(tc, run_refused_whole);
	tcase_add_test(tc, written_after_kill_counted);
	tcase_add_test(tc, concurrent_runs);
	suite_add_tcase(s, tc);
	return check_run(s, CK_FORK_GETENV);
}
