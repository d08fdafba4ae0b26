/*
 * check_queue.c - what the channel queue does with records, through a
 * channel of the fake type (fake.c) and on the ring alone: order, batch
 * sizes, the drop policies and the byte bound with exact counts, big
 * records, integrity across many wraps of a small ring, a ring that
 * grows to its bound with records wrapped round it, producers pushing
 * while the consumer copies a batch out (concurrent_*), and a producer's
 * stage (batches under one lock) under both drop policies; the same with
 * records written in place (isp_queue_reserve) among the pushed ones; and
 * batches taken as lines (their texts one after the other, each with its
 * newline) in the model, concurrently and past the buffer's size.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../outputs/channel.h"
#include "../../outputs/queue.h"
#include "chantest.h"
#include "fake.h"
#include "../check_run.h"

static void setup(void)
{
	fake_reset();
}

/* ---- ordering, batching, drop policies ----------------------------------- */

START_TEST(order_and_batches)
{
	const char *kvs[] = { "batch=8", NULL };
	struct isp_channel *ch = ct_open(kvs);

	ct_hold_first(ch);
	for (int i = 1; i < 100; i++)
		ck_assert(ct_put(ch, "r%d", i));
	fake_set_block(false);
	isp_channel_drain(ch);

	ck_assert_uint_eq(F.n, 100);
	for (size_t i = 0; i < F.n; i++) {
		char want[32];

		snprintf(want, sizeof(want), "r%zu", i);
		ck_assert_str_eq(F.text[i], want);
		ck_assert_str_eq(F.report[i], "rep");
		ck_assert_str_eq(F.key[i], "k");
	}
	/* 1 held, then 99 = 12 full batches of 8 and 3. */
	ck_assert_uint_eq(F.nbatch, 14);
	ck_assert_uint_eq(F.batch[0], 1);
	for (size_t i = 1; i <= 12; i++)
		ck_assert_uint_eq(F.batch[i], 8);
	ck_assert_uint_eq(F.batch[13], 3);

	struct isp_channel_stats st = ct_stats(ch);

	ck_assert_uint_eq(st.queued, 100);
	ck_assert_uint_eq(st.delivered, 100);
	ck_assert_uint_eq(st.dropped, 0);
	ck_assert_uint_eq(st.retried, 0);
	ck_assert_uint_eq(st.queue_depth, 0);
	isp_channel_close(ch);
	ck_assert_uint_eq(F.closes, 1);
}
END_TEST

static void drop_policy(const char *policy, bool oldest)
{
	const char *kvs[] = { "queue-records=10", "batch=4", policy, NULL };
	struct isp_channel *ch = ct_open(kvs);
	int accepted = 0;

	ct_hold_first(ch);
	for (int i = 1; i <= 20; i++)
		accepted += ct_put(ch, "r%d", i);

	struct isp_channel_stats st = ct_stats(ch);

	ck_assert_int_eq(accepted, oldest ? 20 : 10);
	ck_assert_uint_eq(st.queued, 21);
	ck_assert_uint_eq(st.dropped, 10);
	ck_assert_uint_eq(st.queue_depth, 11);      /* 10 waiting + 1 held */
	fake_set_block(false);
	isp_channel_drain(ch);

	ck_assert_uint_eq(F.n, 11);
	ck_assert_str_eq(F.text[0], "r0");
	for (int i = 1; i <= 10; i++) {
		char want[32];

		snprintf(want, sizeof(want), "r%d", oldest ? i + 10 : i);
		ck_assert_str_eq(F.text[i], want);
	}
	st = ct_stats(ch);
	ck_assert_uint_eq(st.delivered, 11);
	ck_assert_uint_eq(st.dropped, 10);
	ck_assert_uint_eq(st.queue_depth, 0);
	ct_check_invariant(ch);
	isp_channel_close(ch);
}

START_TEST(drop_newest_counts)
{
	drop_policy("drop-policy=drop-newest", false);
}
END_TEST

START_TEST(drop_oldest_counts)
{
	drop_policy("drop-policy=drop-oldest", true);
}
END_TEST

/* The same through a producer's stage: records go in batches of one lock,
 * each under the policy as if pushed alone, and the refused ones are
 * counted where the producer said. */
static void staged_policy(const char *policy, bool oldest)
{
	const char *kvs[] = { "queue-records=10", "batch=4", policy, NULL };
	struct isp_channel *ch = ct_open(kvs);
	struct isp_channel_stage stage;
	uint64_t refused = 0;
	char text[32];

	ct_hold_first(ch);
	ck_assert_int_eq(isp_channel_stage_init(&stage, ch, 4096), 0);
	for (int i = 1; i <= 20; i++) {
		snprintf(text, sizeof(text), "r%d", i);
		struct isp_record r = { "rep", "k", 1, text, strlen(text), false };
		isp_channel_stage_add(&stage, &r, &refused);
		if (i == 7)     /* a flush in between: two batches */
			isp_channel_stage_flush(&stage);
	}
	ck_assert_uint_eq(ct_stats(ch).queued, 8);      /* the held one, 7 flushed */
	isp_channel_stage_free(&stage);                 /* flushes the rest */

	struct isp_channel_stats st = ct_stats(ch);
	ck_assert_uint_eq(st.queued, 21);
	ck_assert_uint_eq(st.dropped, 10);
	ck_assert_uint_eq(refused, oldest ? 0 : 10);    /* drop-oldest evicts, refuses none */
	fake_set_block(false);
	isp_channel_drain(ch);
	ck_assert_uint_eq(F.n, 11);
	for (int i = 1; i <= 10; i++) {
		char want[32];

		snprintf(want, sizeof(want), "r%d", oldest ? i + 10 : i);
		ck_assert_str_eq(F.text[i], want);
		ck_assert_str_eq(F.key[i], "k");
	}
	ct_check_invariant(ch);
	isp_channel_close(ch);
}

START_TEST(staged_drop_newest)
{
	staged_policy("drop-policy=drop-newest", false);
}
END_TEST

START_TEST(staged_drop_oldest)
{
	staged_policy("drop-policy=drop-oldest", true);
}
END_TEST

START_TEST(queue_bytes_bound)
{
	const char *kvs[] = { "queue-bytes=4096", "queue-records=1000", NULL };
	struct isp_channel *ch = ct_open(kvs);
	char big[5000];
	int accepted = 0;

	memset(big, 'x', sizeof(big));
	ct_hold_first(ch);
	/* 1100-byte records: 3 fit in 4096 bytes, 4 do not. */
	for (int i = 0; i < 10; i++) {
		struct isp_record r = { .text = big, .len = 1100 };

		big[0] = (char)('a' + i);
		accepted += isp_channel_submit(ch, &r);
	}
	ck_assert_int_eq(accepted, 3);

	struct isp_record huge = { .text = big, .len = sizeof(big) };

	ck_assert(!isp_channel_submit(ch, &huge));  /* larger than the ring */
	ck_assert_uint_eq(ct_stats(ch).dropped, 8);
	fake_set_block(false);
	isp_channel_drain(ch);
	ck_assert_uint_eq(F.n, 4);
	for (size_t i = 1; i < 4; i++) {
		ck_assert_uint_eq(strlen(F.text[i]), 1100);
		ck_assert_int_eq(F.text[i][0], 'a' + (int)i - 1);
		ck_assert_int_eq(F.text[i][1099], 'x');
		ck_assert_str_eq(F.report[i], "");   /* NULL report, NULL key */
		ck_assert_str_eq(F.key[i], "");
	}
	ct_check_invariant(ch);
	isp_channel_close(ch);
}
END_TEST

/* A record above the consumer's initial staging size (64 KiB) still goes
 * through whole, between small ones. */
START_TEST(big_record_passes)
{
	const char *kvs[] = { "queue-bytes=1M", NULL };
	struct isp_channel *ch = ct_open(kvs);
	size_t len = 300 * 1024;
	char *big = malloc(len);

	ck_assert_ptr_nonnull(big);
	for (size_t i = 0; i < len; i++)
		big[i] = (char)('a' + i % 26);

	struct isp_record r = { .text = big, .len = len };

	ck_assert(ct_put(ch, "before"));
	ck_assert(isp_channel_submit(ch, &r));
	ck_assert(ct_put(ch, "after"));
	isp_channel_drain(ch);
	ck_assert_uint_eq(F.n, 3);
	ck_assert_str_eq(F.text[0], "before");
	ck_assert_uint_eq(strlen(F.text[1]), len);
	ck_assert(memcmp(F.text[1], big, len) == 0);
	ck_assert_str_eq(F.text[2], "after");
	free(big);
	isp_channel_close(ch);
}
END_TEST

/* Records of varying sizes through the smallest ring, many times round:
 * every wrap and pad must leave the bytes intact. */
START_TEST(ring_wraps_intact)
{
	const char *kvs[] = { "queue-bytes=1024", "batch=3",
			      "drop-policy=block", NULL };
	struct isp_channel *ch = ct_open(kvs);
	enum { N = 20000 };
	char text[300];
	unsigned x = 12345;

	for (int i = 0; i < N; i++) {
		size_t len = (x = x * 1103515245u + 12345u) % 250;

		for (size_t j = 0; j < len; j++)
			text[j] = (char)('A' + (i + j) % 26);

		struct isp_record r = { .text = text, .len = len,
					.report = i % 2 ? "odd" : "even-report" };

		ck_assert(isp_channel_submit(ch, &r));
	}
	isp_channel_drain(ch);
	ck_assert_uint_eq(F.n, N);
	x = 12345;
	/* One assertion per record: Check's are too slow for every byte. */
	for (int i = 0; i < N; i++) {
		size_t len = (x = x * 1103515245u + 12345u) % 250;
		bool ok = strlen(F.text[i]) == len &&
			  strcmp(F.report[i], i % 2 ? "odd" : "even-report") == 0;

		for (size_t j = 0; ok && j < len; j++)
			ok = F.text[i][j] == 'A' + (i + (int)j) % 26;
		if (!ok)
			ck_abort_msg("record %d damaged: '%s'", i, F.text[i]);
	}
	ck_assert_uint_eq(ct_stats(ch).dropped, 0);
	isp_channel_close(ch);
}
END_TEST

/* Record i of a batch as taken: NUL-terminated with its report and key,
 * or, taken as lines, its newline after it, right after the one before,
 * no report or key. */
static bool lined_ok(const struct isp_qbatch *b, size_t i, bool lines)
{
	const struct isp_record *r = &b->recs[i];

	if (!lines)
		return !r->lined && r->text[r->len] == '\0' && r->report != NULL;
	return r->lined && r->text[r->len] == '\n' && !r->report && !r->key && r->key_len == 0 &&
	       (i == 0 ? r->text == (const char *)b->buf :
			 r->text == b->recs[i - 1].text + b->recs[i - 1].len + 1);
}

/* The ring alone, single-threaded, random sizes and policies against a
 * model: what comes out is a subsequence of what went in, in order, intact,
 * and every record is accounted for. */
static void queue_model(enum isp_drop_policy policy, unsigned seed, bool inplace, bool lines)
{
	struct isp_counters cnt = { 0 };
	struct isp_queue *q = isp_queue_new(37, 2048, policy, &cnt);
	struct isp_qbatch b;
	char text[400];
	unsigned x = seed, next = 0, pushed = 0, taken = 0, refused = 0, written = 0;
	long last = -1;
	bool ok = true;
	static int owner;

	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(isp_qbatch_init(&b, 5, 2048), 0);
	b.lines = lines;
	for (int step = 0; step < 60000 && ok; step++) {
		x = x * 1103515245u + 12345u;
		if ((x >> 8) % 3 != 0) {
			size_t len = 8 + (x >> 12) % 380;
			int n = snprintf(text, sizeof(text), "%07u:", next);
			const char *rep = next % 2 ? "r" : "";

			for (size_t j = (size_t)n; j < len; j++)
				text[j] = (char)('a' + (next + j) % 26);
			next++;

			/* in place when the queue takes it at once; now and
			 * then one given up (never counted) */
			char *at = inplace && (x >> 20) % 4 != 0 ?
				isp_queue_reserve(q, &owner, rep, strlen(rep), "", 0, sizeof(text)) : NULL;
			if (at && (x >> 23) % 16 == 0) {
				isp_queue_abort(q);
				continue;
			}
			pushed++;
			if (at) {
				memcpy(at, text, len);
				isp_queue_commit(q, len);
				written++;
				continue;
			}

			struct isp_record r = { .report = rep, .text = text, .len = len };

			refused += !isp_queue_push(q, &r);
			continue;
		}
		isp_queue_take(q, &b, 0);
		for (size_t i = 0; i < b.n && ok; i++) {
			const struct isp_record *r = &b.recs[i];
			long seq = strtol(r->text, NULL, 10);

			ok = seq > last && r->len >= 8 && lined_ok(&b, i, lines) &&
			     (lines || strcmp(r->report, seq % 2 ? "r" : "") == 0);
			for (size_t j = 8; ok && j < r->len; j++)
				ok = r->text[j] == 'a' + (char)(((size_t)seq + j) % 26);
			last = seq;
			taken++;
		}
	}
	ck_assert_msg(ok, "record damaged or out of order after %u taken", taken);
	size_t left = isp_queue_kill(q);

	ck_assert_uint_eq(atomic_load(&cnt.queued), pushed);
	ck_assert_uint_eq(atomic_load(&cnt.dropped) + taken, pushed);
	ck_assert_uint_gt(taken, 1000);
	if (inplace)
		ck_assert_uint_gt(written, 1000);
	ck_assert_uint_gt(atomic_load(&cnt.dropped) - left, 1000);
	if (policy == ISP_DROP_NEWEST)
		ck_assert_uint_eq(refused + left, atomic_load(&cnt.dropped));
	else
		ck_assert_uint_eq(refused, 0);
	isp_qbatch_free(&b);
	isp_queue_free(q);
}

START_TEST(queue_model_newest)
{
	queue_model(ISP_DROP_NEWEST, 1, false, false);
	queue_model(ISP_DROP_NEWEST, 99, false, false);
	queue_model(ISP_DROP_NEWEST, 5, true, false);
	queue_model(ISP_DROP_NEWEST, 3, true, true);
}
END_TEST

START_TEST(queue_model_oldest)
{
	queue_model(ISP_DROP_OLDEST, 7, false, false);
	queue_model(ISP_DROP_OLDEST, 12345, false, false);
	queue_model(ISP_DROP_OLDEST, 77, true, false);
	queue_model(ISP_DROP_OLDEST, 78, true, true);
}
END_TEST

/* Push record `seq` of RING_TEXT bytes (1520 with its header: a 1 MiB ring
 * ends in a pad). */
#define RING_TEXT 1500
static bool push_seq(struct isp_queue *q, unsigned seq)
{
	char text[RING_TEXT];
	int n = snprintf(text, sizeof(text), "%07u:", seq);

	for (size_t j = (size_t)n; j < sizeof(text); j++)
		text[j] = (char)('a' + (seq + j) % 26);

	struct isp_record r = { .text = text, .len = sizeof(text) };

	return isp_queue_push(q, &r);
}

/* Take up to `n` records; each must be the next in sequence, intact. */
static unsigned take_seq(struct isp_queue *q, struct isp_qbatch *b, unsigned n, unsigned *next)
{
	unsigned got = 0;

	while (got < n && isp_queue_take(q, b, 0) > 0) {
		for (size_t i = 0; i < b->n; i++) {
			const struct isp_record *r = &b->recs[i];
			bool ok = r->len == RING_TEXT && strtoul(r->text, NULL, 10) == *next;

			for (size_t j = 8; ok && j < r->len; j++)
				ok = r->text[j] == 'a' + (char)((*next + j) % 26);
			ck_assert_msg(ok, "record %u damaged or out of order", *next);
			(*next)++;
			got++;
		}
	}
	return got;
}

/* The ring starts at 1 MiB and grows while records wait, keeping them in
 * order across a wrap and its pad; at its bound (3 MiB, not a power of
 * two) it holds exactly what the bytes allow, and refuses the next. A
 * ring grows in place: the records before its end move to the new end
 * with the pad that ended the first ring, which waits there until the
 * records before it are taken. */
START_TEST(ring_grows_to_bound)
{
	struct isp_counters cnt = { 0 };
	struct isp_queue *q = isp_queue_new(1u << 20, 3u << 20, ISP_DROP_NEWEST, &cnt);
	struct isp_qbatch b;
	unsigned seq = 0, next = 0;

	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(isp_qbatch_init(&b, 100, 3u << 20), 0);
	for (; seq < 400; seq++)
		ck_assert(push_seq(q, seq));
	/* (batches of 43: the staging buffer holds 64 KiB) */
	ck_assert_uint_eq(take_seq(q, &b, 300, &next), 301);
	/* 99 wait in the middle; 500 more wrap round the end (289 fit) */
	for (; seq < 900; seq++)
		ck_assert(push_seq(q, seq));
	/* past 1 MiB, then past 2 MiB of records waiting */
	for (; seq < 1900; seq++)
		ck_assert(push_seq(q, seq));
	/* 3 MiB but the 1 MiB ring's pad (1,296 bytes), / 1520 bytes: 2068
	 * records in all */
	while (push_seq(q, seq))
		seq++;
	ck_assert_uint_eq(seq - next, ((3u << 20) - (1u << 20) % 1520u) / 1520u);
	ck_assert_uint_eq(atomic_load(&cnt.dropped), 1);
	ck_assert_uint_eq(take_seq(q, &b, ~0u, &next), seq - 301);
	ck_assert_uint_eq(next, seq);
	/* empty again: records still go through */
	ck_assert(push_seq(q, seq++));
	ck_assert_uint_eq(take_seq(q, &b, ~0u, &next), 1);
	isp_qbatch_free(&b);
	isp_queue_free(q);
}
END_TEST

/* ---- producers and the consumer at the same time --------------------------
 * The consumer copies a batch out without the lock while producers push
 * into the rest of the ring: a small ring that wraps every few batches,
 * records of varying sizes, four producers. Whatever the policy, each
 * producer's records come out in its order and intact, and every record is
 * taken or counted dropped; with block, none is dropped. */

#define CP_PRODUCERS 4
#define CP_RECORDS 20000

struct cp_arg {
	struct isp_queue *q;
	unsigned id;
	bool inplace;           /* records written in place when they fit */
	unsigned refused, written;
};

static void *cp_producer(void *arg)
{
	struct cp_arg *a = arg;
	char text[700];
	unsigned x = 777 + a->id;

	for (unsigned seq = 0; seq < CP_RECORDS; seq++) {
		size_t len = 12 + (x = x * 1103515245u + 12345u) % 600;
		int n = snprintf(text, sizeof(text), "%u:%07u:", a->id, seq);

		for (size_t j = (size_t)n; j < len; j++)
			text[j] = (char)('a' + (seq + a->id + j) % 26);

		char *at = a->inplace ? isp_queue_reserve(a->q, a, "rep", 3, "k", 1, sizeof(text)) : NULL;

		if (at) {
			memcpy(at, text, len);
			isp_queue_commit(a->q, len);
			a->written++;
			continue;
		}

		struct isp_record r = { .report = "rep", .key = "k", .key_len = 1,
					.text = text, .len = len };

		a->refused += !isp_queue_push(a->q, &r);
	}
	return NULL;
}

/* inplace: producers 0 and 1 write in place when they can (so they end
 * each other's leases, and the others wait for a record or end a lease) */
static void concurrent(enum isp_drop_policy policy, bool inplace, bool lines)
{
	struct isp_counters cnt = { 0 };
	struct isp_queue *q = isp_queue_new(50, 8192, policy, &cnt);
	struct isp_qbatch b;
	struct cp_arg args[CP_PRODUCERS];
	pthread_t th[CP_PRODUCERS];
	long next[CP_PRODUCERS] = { 0 };
	unsigned taken = 0, refused = 0;
	bool ok = true;

	ck_assert_ptr_nonnull(q);
	/* a staging buffer smaller than the ring: a batch is part of it */
	ck_assert_int_eq(isp_qbatch_init(&b, 7, 3000), 0);
	b.lines = lines;
	for (unsigned i = 0; i < CP_PRODUCERS; i++) {
		args[i] = (struct cp_arg){ .q = q, .id = i, .inplace = inplace && i < 2 };
		ck_assert_int_eq(pthread_create(&th[i], NULL, cp_producer, &args[i]), 0);
	}
	for (;;) {
		uint64_t queued = atomic_load(&cnt.queued);
		uint64_t dropped = atomic_load(&cnt.dropped);

		if (queued == (uint64_t)CP_PRODUCERS * CP_RECORDS && queued == dropped + taken)
			break;
		isp_queue_take(q, &b, isp_now_ns() + 1000000);
		for (size_t i = 0; i < b.n && ok; i++) {
			const struct isp_record *r = &b.recs[i];
			char *end;
			unsigned long id = strtoul(r->text, &end, 10);
			long seq = strtol(end + 1, NULL, 10);

			ok = id < CP_PRODUCERS && seq >= next[id] && r->len >= 12 &&
			     lined_ok(&b, i, lines) &&
			     (lines || (strcmp(r->report, "rep") == 0 &&
					r->key_len == 1 && strcmp(r->key, "k") == 0));
			for (size_t j = 10; ok && j < r->len; j++)
				ok = r->text[j] == 'a' + (char)(((size_t)seq + id + j) % 26);
			if (!ok)
				break;
			if (policy == ISP_BLOCK)
				ok = seq == next[id];
			next[id] = seq + 1;
			taken++;
		}
		ck_assert_msg(ok, "record damaged or out of order after %u taken", taken);
	}
	unsigned written = 0;

	for (unsigned i = 0; i < CP_PRODUCERS; i++) {
		pthread_join(th[i], NULL);
		refused += args[i].refused;
		written += args[i].written;
	}
	if (inplace)
		ck_assert_uint_gt(written, 0);
	ck_assert_uint_eq(isp_queue_kill(q), 0);
	ck_assert_uint_eq(atomic_load(&cnt.queued), CP_PRODUCERS * CP_RECORDS);
	ck_assert_uint_eq(atomic_load(&cnt.dropped) + taken, CP_PRODUCERS * CP_RECORDS);
	if (policy == ISP_BLOCK)
		ck_assert_uint_eq(taken, CP_PRODUCERS * CP_RECORDS);
	if (policy == ISP_DROP_OLDEST)
		ck_assert_uint_eq(refused, 0);
	else
		ck_assert_uint_eq(refused, atomic_load(&cnt.dropped));
	isp_qbatch_free(&b);
	isp_queue_free(q);
}

/* The consumer kills the queue while a producer writes in place: every
 * record it committed is counted once, taken or dropped (those committed
 * after the kill are folded, and dropped, by the next lock taken). */
struct kl_arg {
	struct isp_queue *q;
	_Atomic unsigned committed;
	_Atomic bool stop;
};

static void *kl_producer(void *arg)
{
	struct kl_arg *a = arg;
	char text[300];

	memset(text, 'x', sizeof(text));
	while (!atomic_load(&a->stop)) {
		char *at = isp_queue_reserve(a->q, a, "rep", 3, "", 0, sizeof(text));

		if (!at) {
			struct isp_record r = { .report = "rep", .text = text, .len = sizeof(text) };

			isp_queue_push(a->q, &r);
			atomic_fetch_add(&a->committed, 1);
			continue;
		}
		memcpy(at, text, sizeof(text));
		isp_queue_commit(a->q, sizeof(text));
		atomic_fetch_add(&a->committed, 1);
	}
	return NULL;
}

START_TEST(kill_while_written_in_place)
{
	struct isp_counters cnt = { 0 };
	struct isp_queue *q = isp_queue_new(1000, 64 * 1024, ISP_DROP_NEWEST, &cnt);
	struct kl_arg a = { .q = q };
	struct isp_qbatch b;
	pthread_t th;
	uint64_t taken = 0;

	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(isp_qbatch_init(&b, 50, 64 * 1024), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, kl_producer, &a), 0);
	while (taken < 20000)
		taken += isp_queue_take(q, &b, isp_now_ns() + 1000000);
	isp_queue_kill(q);
	/* records go on being committed (a caller error, harmless) */
	unsigned after = atomic_load(&a.committed);
	while (atomic_load(&a.committed) < after + 1000)
		;
	atomic_store(&a.stop, true);
	pthread_join(th, NULL);
	/* a push folds what the lease still holds, and is refused */
	struct isp_record r = { .report = "rep", .text = "y", .len = 1 };
	ck_assert(!isp_queue_push(q, &r));
	ck_assert_uint_eq(atomic_load(&cnt.queued), atomic_load(&a.committed) + 1);
	ck_assert_uint_eq(atomic_load(&cnt.dropped) + taken, atomic_load(&cnt.queued));
	isp_qbatch_free(&b);
	isp_queue_free(q);
}
END_TEST

/* The same, step by step: records committed in place after the kill are
 * counted (dropped) by the next push, which is refused. */
START_TEST(kill_then_written_in_place)
{
	struct isp_counters cnt = { 0 };
	struct isp_queue *q = isp_queue_new(1000, 64 * 1024, ISP_DROP_NEWEST, &cnt);
	static int owner;

	ck_assert_ptr_nonnull(q);
	for (int i = 0; i < 3; i++) {
		char *at = isp_queue_reserve(q, &owner, "rep", 3, "", 0, 100);

		ck_assert_ptr_nonnull(at);
		memcpy(at, "abc", 3);
		isp_queue_commit(q, 3);
	}
	ck_assert_uint_eq(isp_queue_kill(q), 3);        /* folded, then dropped */
	char *at = isp_queue_reserve(q, &owner, "rep", 3, "", 0, 100);

	ck_assert_ptr_nonnull(at);      /* the lease is still ours: no lock, no check */
	isp_queue_commit(q, 0);
	ck_assert_uint_eq(atomic_load(&cnt.queued), 3);
	struct isp_record r = { .report = "rep", .text = "y", .len = 1 };
	ck_assert(!isp_queue_push(q, &r));
	ck_assert_uint_eq(atomic_load(&cnt.queued), 5);
	ck_assert_uint_eq(atomic_load(&cnt.dropped), 5);
	ck_assert_ptr_null(isp_queue_reserve(q, &owner, "rep", 3, "", 0, 100 * 1024));
	isp_queue_free(q);
}
END_TEST

/* Taken as lines, a record larger than the batch's buffer grows it and
 * comes whole, its newline after it; the one after it comes next. */
START_TEST(lines_big_record)
{
	struct isp_counters cnt = { 0 };
	struct isp_queue *q = isp_queue_new(10, 1u << 20, ISP_DROP_NEWEST, &cnt);
	struct isp_qbatch b;
	static char big[5000];

	ck_assert_ptr_nonnull(q);
	ck_assert_int_eq(isp_qbatch_init(&b, 4, 1024), 0);
	b.lines = true;
	memset(big, 'b', sizeof(big));
	struct isp_record r1 = { .report = "rep", .key = "k", .key_len = 1, .text = "small", .len = 5 };
	struct isp_record r2 = { .report = "rep", .text = big, .len = sizeof(big) };

	ck_assert(isp_queue_push(q, &r1));
	ck_assert(isp_queue_push(q, &r2));
	ck_assert(isp_queue_push(q, &r1));
	/* the small one alone (the big one does not fit after it), then the
	 * big one in a buffer grown to its size in the ring, which holds the
	 * last one's line too */
	ck_assert_uint_eq(isp_queue_take(q, &b, 0), 1);
	ck_assert(lined_ok(&b, 0, true));
	ck_assert(memcmp(b.recs[0].text, "small\n", 6) == 0);
	ck_assert_uint_eq(isp_queue_take(q, &b, 0), 2);
	ck_assert(lined_ok(&b, 0, true) && lined_ok(&b, 1, true));
	ck_assert_uint_eq(b.recs[0].len, sizeof(big));
	ck_assert(memcmp(b.recs[0].text, big, sizeof(big)) == 0);
	ck_assert(memcmp(b.recs[1].text, "small\n", 6) == 0);
	ck_assert_uint_eq(isp_queue_kill(q), 0);
	ck_assert_uint_eq(atomic_load(&cnt.dropped), 0);
	isp_qbatch_free(&b);
	isp_queue_free(q);
}
END_TEST

START_TEST(concurrent_block)
{
	concurrent(ISP_BLOCK, false, false);
	concurrent(ISP_BLOCK, true, false);
	concurrent(ISP_BLOCK, true, true);
}
END_TEST

START_TEST(concurrent_drop_newest)
{
	concurrent(ISP_DROP_NEWEST, false, false);
	concurrent(ISP_DROP_NEWEST, true, false);
	concurrent(ISP_DROP_NEWEST, true, true);
}
END_TEST

START_TEST(concurrent_drop_oldest)
{
	concurrent(ISP_DROP_OLDEST, false, false);
	concurrent(ISP_DROP_OLDEST, true, false);
	concurrent(ISP_DROP_OLDEST, true, true);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("queue");
	TCase *tc = tcase_create("queue");

	isp_channels_init();
	if (isp_channel_register_type(&fake_ops) != 0)
		return 1;
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, order_and_batches);
	tcase_add_test(tc, drop_newest_counts);
	tcase_add_test(tc, drop_oldest_counts);
	tcase_add_test(tc, staged_drop_newest);
	tcase_add_test(tc, staged_drop_oldest);
	tcase_add_test(tc, queue_bytes_bound);
	tcase_add_test(tc, big_record_passes);
	tcase_add_test(tc, ring_wraps_intact);
	tcase_add_test(tc, queue_model_newest);
	tcase_add_test(tc, queue_model_oldest);
	tcase_add_test(tc, ring_grows_to_bound);
	tcase_add_test(tc, kill_while_written_in_place);
	tcase_add_test(tc, kill_then_written_in_place);
	tcase_add_test(tc, lines_big_record);
	tcase_add_test(tc, concurrent_block);
	tcase_add_test(tc, concurrent_drop_newest);
	tcase_add_test(tc, concurrent_drop_oldest);
	suite_add_tcase(s, tc);
	return check_run(s, CK_FORK_GETENV);
}
