/*
 * check_channel.c - the channel layer (outputs/channel.c, queue.c) against
 * a fake channel type (fake.c) that records what it receives and can block,
 * fail or deliver part of a batch.
 *
 * "Exact numbers" tests use one trick: submit one record, wait until the
 * fake is blocked inside write_batch holding it, then submit more. The
 * queue then holds exactly what the test put there, independent of thread
 * timing, so counts of accepted, dropped and per-batch records are exact.
 */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../outputs/channel.h"
#include "../../outputs/kv.h"
#include "fake.h"
#include "tcfg.h"

static char err[1024];

static struct isp_channel *open_type(const char *type, const char *const *kvs)
{
	return tcfg_open(type, kvs, err, sizeof(err));
}

static struct isp_channel *must_open(const char *const *kvs)
{
	struct isp_channel *ch = open_type("fake", kvs);

	ck_assert_msg(ch != NULL, "open failed: %s", err);
	return ch;
}

static bool put(struct isp_channel *ch, const char *fmt, ...)
{
	char text[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);

	struct isp_record r = { .report = "rep", .key = "k", .key_len = 1,
				.text = text, .len = (size_t)n };

	return isp_channel_submit(ch, &r);
}

static struct isp_channel_stats stats(const struct isp_channel *ch)
{
	struct isp_channel_stats st;

	isp_channel_get_stats(ch, &st);
	return st;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

static void check_invariant(const struct isp_channel *ch)
{
	struct isp_channel_stats st = stats(ch);

	ck_assert_uint_eq(st.queued, st.delivered + st.dropped + st.queue_depth);
}

/* Submit r0 and wait until the fake holds it inside a blocked write. */
static void hold_first(struct isp_channel *ch)
{
	fake_set_block(true);
	ck_assert(put(ch, "r0"));
	ck_assert(fake_wait_in_write());
}

static void setup(void)
{
	fake_reset();
}

/* ---- ordering, batching, drop policies ----------------------------------- */

START_TEST(order_and_batches)
{
	const char *kvs[] = { "batch=8", NULL };
	struct isp_channel *ch = must_open(kvs);

	hold_first(ch);
	for (int i = 1; i < 100; i++)
		ck_assert(put(ch, "r%d", i));
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

	struct isp_channel_stats st = stats(ch);

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
	struct isp_channel *ch = must_open(kvs);
	int accepted = 0;

	hold_first(ch);
	for (int i = 1; i <= 20; i++)
		accepted += put(ch, "r%d", i);

	struct isp_channel_stats st = stats(ch);

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
	st = stats(ch);
	ck_assert_uint_eq(st.delivered, 11);
	ck_assert_uint_eq(st.dropped, 10);
	ck_assert_uint_eq(st.queue_depth, 0);
	check_invariant(ch);
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

START_TEST(queue_bytes_bound)
{
	const char *kvs[] = { "queue-bytes=4096", "queue-records=1000", NULL };
	struct isp_channel *ch = must_open(kvs);
	char big[5000];
	int accepted = 0;

	memset(big, 'x', sizeof(big));
	hold_first(ch);
	/* 1100-byte records: 3 fit in 4096 bytes, 4 do not. */
	for (int i = 0; i < 10; i++) {
		struct isp_record r = { .text = big, .len = 1100 };

		big[0] = (char)('a' + i);
		accepted += isp_channel_submit(ch, &r);
	}
	ck_assert_int_eq(accepted, 3);

	struct isp_record huge = { .text = big, .len = sizeof(big) };

	ck_assert(!isp_channel_submit(ch, &huge));  /* larger than the ring */
	ck_assert_uint_eq(stats(ch).dropped, 8);
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
	check_invariant(ch);
	isp_channel_close(ch);
}
END_TEST

/* A record above the consumer's initial staging size (64 KiB) still goes
 * through whole, between small ones. */
START_TEST(big_record_passes)
{
	const char *kvs[] = { "queue-bytes=1M", NULL };
	struct isp_channel *ch = must_open(kvs);
	size_t len = 300 * 1024;
	char *big = malloc(len);

	ck_assert_ptr_nonnull(big);
	for (size_t i = 0; i < len; i++)
		big[i] = (char)('a' + i % 26);

	struct isp_record r = { .text = big, .len = len };

	ck_assert(put(ch, "before"));
	ck_assert(isp_channel_submit(ch, &r));
	ck_assert(put(ch, "after"));
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
	struct isp_channel *ch = must_open(kvs);
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
	ck_assert_uint_eq(stats(ch).dropped, 0);
	isp_channel_close(ch);
}
END_TEST

/* ---- retries ---------------------------------------------------------------- */

START_TEST(retry_then_success)
{
	const char *kvs[] = { NULL };
	struct isp_channel *ch = must_open(kvs);
	double t0;

	hold_first(ch);
	for (int i = 1; i < 5; i++)
		ck_assert(put(ch, "r%d", i));
	fake_set_fail(3);
	t0 = now_ms();
	fake_set_block(false);
	while (fake_delivered() < 5 && now_ms() - t0 < 5000)
		sleep_ms(1);
	/* r0 failed three times (backoff 10 + 20 + 40 ms), then went out,
	 * then r1..r4 in one batch. */
	ck_assert_double_ge(now_ms() - t0, 65);
	isp_channel_drain(ch);
	ck_assert_uint_eq(F.n, 5);
	for (int i = 0; i < 5; i++) {
		char want[32];

		snprintf(want, sizeof(want), "r%d", i);
		ck_assert_str_eq(F.text[i], want);
	}

	struct isp_channel_stats st = stats(ch);

	ck_assert_uint_eq(st.retried, 3);
	ck_assert_uint_eq(st.delivered, 5);
	ck_assert_uint_eq(st.dropped, 0);
	isp_channel_close(ch);
}
END_TEST

START_TEST(partial_batches)
{
	const char *kvs[] = { NULL };
	struct isp_channel *ch = must_open(kvs);

	F.per_call = 2;                         /* before any write: no race */
	hold_first(ch);
	for (int i = 1; i < 7; i++)
		ck_assert(put(ch, "r%d", i));
	fake_set_block(false);
	isp_channel_drain(ch);
	ck_assert_uint_eq(F.n, 7);
	for (int i = 0; i < 7; i++) {
		char want[32];

		snprintf(want, sizeof(want), "r%d", i);
		ck_assert_str_eq(F.text[i], want);
	}
	/* r1..r6: 2 go, 4 offered again; 2 go, 2 again; 2 go. */
	ck_assert_uint_eq(stats(ch).retried, 6);
	isp_channel_close(ch);
}
END_TEST

/* ---- close ---------------------------------------------------------------- */

START_TEST(close_delivers_queued)
{
	const char *kvs[] = { "flush-ms=100000", NULL };
	struct isp_channel *ch = must_open(kvs);

	for (int i = 0; i < 1000; i++)
		ck_assert(put(ch, "r%d", i));
	isp_channel_drain(ch);
	ck_assert_uint_eq(F.n, 1000);
	ck_assert_str_eq(F.text[999], "r999");
	ck_assert_uint_eq(fake_flushes(), 1);   /* the final flush */

	struct isp_channel_stats st = stats(ch);

	ck_assert_uint_eq(st.delivered, 1000);
	ck_assert_uint_eq(st.queue_depth, 0);
	check_invariant(ch);
	isp_channel_close(ch);
}
END_TEST

START_TEST(close_deadline_drops_rest)
{
	const char *kvs[] = { "shutdown-ms=150", NULL };
	struct isp_channel *ch = must_open(kvs);
	double t0, took;

	fake_set_fail(-1);
	for (int i = 0; i < 20; i++)
		ck_assert(put(ch, "r%d", i));
	t0 = now_ms();
	isp_channel_drain(ch);
	took = now_ms() - t0;
	ck_assert_double_ge(took, 140);
	ck_assert_double_lt(took, 1000);

	struct isp_channel_stats st = stats(ch);

	ck_assert_uint_eq(st.queued, 20);
	ck_assert_uint_eq(st.delivered, 0);
	ck_assert_uint_eq(st.dropped, 20);
	ck_assert_uint_eq(st.queue_depth, 0);
	ck_assert_uint_ge(st.retried, 1);
	check_invariant(ch);
	isp_channel_close(ch);
}
END_TEST

START_TEST(close_deadline_partial)
{
	const char *kvs[] = { "shutdown-ms=100", "batch=3", NULL };
	struct isp_channel *ch = must_open(kvs);

	F.total_limit = 5;
	for (int i = 0; i < 20; i++)
		ck_assert(put(ch, "r%d", i));
	isp_channel_drain(ch);

	struct isp_channel_stats st = stats(ch);

	ck_assert_uint_eq(F.n, 5);
	ck_assert_str_eq(F.text[4], "r4");
	ck_assert_uint_eq(st.delivered, 5);
	ck_assert_uint_eq(st.dropped, 15);
	ck_assert_uint_eq(st.queue_depth, 0);
	check_invariant(ch);
	isp_channel_close(ch);
}
END_TEST

START_TEST(flush_periodic)
{
	const char *kvs[] = { "flush-ms=20", NULL };
	struct isp_channel *ch = must_open(kvs);
	unsigned n;

	sleep_ms(210);
	n = fake_flushes();
	ck_assert_uint_ge(n, 4);
	ck_assert_uint_le(n, 11);
	isp_channel_close(ch);
}
END_TEST

/* ---- several producers ------------------------------------------------------ */

enum { PRODUCERS = 4, PER_PRODUCER = 50000 };

struct producer {
	struct isp_channel *ch;
	unsigned id;
	unsigned accepted;
};

static void *produce(void *arg)
{
	struct producer *p = arg;

	for (unsigned i = 0; i < PER_PRODUCER; i++)
		p->accepted += put(p->ch, "p%u %u", p->id, i);
	return NULL;
}

static void run_producers(struct isp_channel *ch, unsigned *accepted)
{
	struct producer p[PRODUCERS];
	pthread_t t[PRODUCERS];

	*accepted = 0;
	for (unsigned i = 0; i < PRODUCERS; i++) {
		p[i] = (struct producer){ ch, i, 0 };
		ck_assert_int_eq(pthread_create(&t[i], NULL, produce, &p[i]), 0);
	}
	for (unsigned i = 0; i < PRODUCERS; i++) {
		pthread_join(t[i], NULL);
		*accepted += p[i].accepted;
	}
	isp_channel_drain(ch);
}

START_TEST(producers_complete_in_order)
{
	const char *kvs[] = { "queue-records=1024", "batch=64",
			      "drop-policy=block", NULL };
	struct isp_channel *ch = must_open(kvs);
	unsigned accepted;

	F.verify = true;
	run_producers(ch, &accepted);
	ck_assert_uint_eq(accepted, PRODUCERS * PER_PRODUCER);
	ck_assert_uint_eq(F.delivered, PRODUCERS * PER_PRODUCER);
	ck_assert(F.order_ok);
	ck_assert(F.gapless);
	for (unsigned i = 0; i < PRODUCERS; i++)
		ck_assert_uint_eq(F.next_seq[i], PER_PRODUCER);

	struct isp_channel_stats st = stats(ch);

	ck_assert_uint_eq(st.queued, PRODUCERS * PER_PRODUCER);
	ck_assert_uint_eq(st.dropped, 0);
	isp_channel_close(ch);
}
END_TEST

/* A tiny drop-oldest queue under contention: drops, but every count adds
 * up and what arrives is still in per-producer order. */
START_TEST(producers_drop_oldest_adds_up)
{
	const char *kvs[] = { "queue-records=100", "batch=16",
			      "drop-policy=drop-oldest", NULL };
	struct isp_channel *ch = must_open(kvs);
	unsigned accepted;

	F.verify = true;
	run_producers(ch, &accepted);

	struct isp_channel_stats st = stats(ch);

	ck_assert_uint_eq(accepted, PRODUCERS * PER_PRODUCER);
	ck_assert_uint_eq(st.queued, PRODUCERS * PER_PRODUCER);
	ck_assert_uint_eq(st.delivered, F.delivered);
	ck_assert_uint_eq(st.queue_depth, 0);
	check_invariant(ch);
	ck_assert(F.order_ok);
	isp_channel_close(ch);
}
END_TEST

/* ---- configuration ---------------------------------------------------------- */

static void expect_error(const char *type, const char *const *kvs, const char *want)
{
	struct isp_channel *ch = open_type(type, kvs);

	ck_assert_ptr_null(ch);
	ck_assert_str_eq(err, want);
}

START_TEST(generic_key_errors)
{
	const char *a[] = { "batch=0", NULL };
	const char *b[] = { "drop-policy=newest", NULL };
	const char *c[] = { "flush-ms=10", "queue-recods=5", NULL };
	const char *d[] = { "queue-bytes=12x", NULL };
	const char *e[] = { "batch=4", "batch=5", NULL };
	const char *f[] = { "enable=maybe", NULL };
	const char *g[] = { "format=xml", NULL };
	const char *h[] = { "batch=4", "tag=bad", NULL };
	const char *i[] = { "queue-records=-1", NULL };
	const char *j[] = { "shutdown-ms= 5", NULL };

	expect_error("fake", a, "test.conf:2:3: bad value '0' for batch: "
		     "expected an integer from 1 to 65536");
	expect_error("fake", b, "test.conf:2:3: bad value 'newest' for drop-policy: "
		     "expected drop-newest, drop-oldest or block");
	expect_error("fake", c, "test.conf:3:3: unknown key 'queue-recods' for a "
		     "fake output (did you mean 'queue-records'?); known: enable, "
		     "queue-records, queue-bytes, drop-policy, batch, flush-ms, "
		     "shutdown-ms, format, tag");
	expect_error("fake", d, "test.conf:2:3: bad value '12x' for queue-bytes: "
		     "expected a size from 1k to 2G (bytes, or with k, M, G)");
	expect_error("fake", e, "test.conf:3:3: duplicate key 'batch' (first at line 2)");
	expect_error("fake", f, "test.conf:2:3: bad value 'maybe' for enable: "
		     "expected true or false");
	expect_error("fake", g, "test.conf:2:3: bad value 'xml' for format: "
		     "expected json or csv");
	/* The type sees only its own keys; its index maps back to line 3. */
	expect_error("fake", h, "test.conf:3:3: tag must not be 'bad'");
	expect_error("fake", i, "test.conf:2:3: bad value '-1' for queue-records: "
		     "expected an integer from 1 to 1073741824");
	expect_error("fake", j, "test.conf:2:3: bad value ' 5' for shutdown-ms: "
		     "expected an integer from 0 to 3600000");
	expect_error("nosuch", a, "test.conf:1:1: output 't': unknown type "
		     "'nosuch'; known: stdout, file, fake");
	ck_assert_uint_eq(F.opens, 0);
}
END_TEST

START_TEST(generic_keys_consumed)
{
	const char *kvs[] = { "enable=yes", "queue-records=7", "queue-bytes=2M",
			      "drop-policy=drop-oldest", "batch=9", "flush-ms=11",
			      "tag=x", "shutdown-ms=0", "format=csv", NULL };
	struct isp_channel *ch = must_open(kvs);

	ck_assert_uint_eq(F.opens, 1);
	ck_assert_uint_eq(F.open_nkv, 1);       /* only "tag" */
	ck_assert_uint_eq(F.open_params.queue_records, 7);
	ck_assert_uint_eq(F.open_params.queue_bytes, 2u << 20);
	ck_assert_int_eq(F.open_params.policy, ISP_DROP_OLDEST);
	ck_assert_uint_eq(F.open_params.batch, 9);
	ck_assert_uint_eq(F.open_params.flush_ms, 11);
	ck_assert_uint_eq(F.open_params.shutdown_ms, 0);
	ck_assert(isp_channel_wants_csv(ch));
	ck_assert(isp_channel_enabled(ch));
	ck_assert_str_eq(isp_channel_name(ch), "t");
	isp_channel_close(ch);
}
END_TEST

START_TEST(disabled_channel)
{
	const char *kvs[] = { "enable=false", NULL };
	struct isp_channel *ch = must_open(kvs);

	ck_assert(!isp_channel_enabled(ch));
	ck_assert_uint_eq(F.opens, 0);
	ck_assert(!put(ch, "r0"));

	struct isp_channel_stats st = stats(ch);

	ck_assert_uint_eq(st.queued, 1);
	ck_assert_uint_eq(st.dropped, 1);
	ck_assert_uint_eq(st.queue_depth, 0);
	isp_channel_close(ch);
	ck_assert_uint_eq(F.closes, 0);
}
END_TEST

START_TEST(register_twice)
{
	ck_assert_int_eq(isp_channel_register_type(&fake_ops), -1);

	struct isp_channel_ops file_again = fake_ops;

	file_again.type = "file";
	ck_assert_int_eq(isp_channel_register_type(&file_again), -1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("channel");
	TCase *tc = tcase_create("channel");
	SRunner *sr;
	int failed;

	isp_channels_init();
	if (isp_channel_register_type(&fake_ops) != 0)
		return 1;
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, order_and_batches);
	tcase_add_test(tc, drop_newest_counts);
	tcase_add_test(tc, drop_oldest_counts);
	tcase_add_test(tc, queue_bytes_bound);
	tcase_add_test(tc, big_record_passes);
	tcase_add_test(tc, ring_wraps_intact);
	tcase_add_test(tc, retry_then_success);
	tcase_add_test(tc, partial_batches);
	tcase_add_test(tc, close_delivers_queued);
	tcase_add_test(tc, close_deadline_drops_rest);
	tcase_add_test(tc, close_deadline_partial);
	tcase_add_test(tc, flush_periodic);
	tcase_add_test(tc, producers_complete_in_order);
	tcase_add_test(tc, producers_drop_oldest_adds_up);
	tcase_add_test(tc, generic_key_errors);
	tcase_add_test(tc, generic_keys_consumed);
	tcase_add_test(tc, disabled_channel);
	tcase_add_test(tc, register_twice);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
