/*
 * check_channel.c - the channel layer (outputs/channel.c) against a fake
 * channel type (fake.c) that records what it receives and can block, fail
 * or deliver part of a batch: retries and backoff, shutdown within
 * shutdown-ms (the counters adding up), periodic flush, several producer
 * threads, and the generic keys with their error messages.
 */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../outputs/channel.h"
#include "chantest.h"
#include "fake.h"
#include "../check_run.h"

static void setup(void)
{
	fake_reset();
}

/* ---- retries ---------------------------------------------------------------- */

START_TEST(retry_then_success)
{
	const char *kvs[] = { NULL };
	struct isp_channel *ch = ct_open(kvs);
	double t0;

	ct_hold_first(ch);
	for (int i = 1; i < 5; i++)
		ck_assert(ct_put(ch, "r%d", i));
	fake_set_fail(3);
	t0 = ct_now_ms();
	fake_set_block(false);
	while (fake_delivered() < 5 && ct_now_ms() - t0 < 5000)
		ct_sleep_ms(1);
	/* r0 failed three times (backoff 10 + 20 + 40 ms), then went out,
	 * then r1..r4 in one batch. */
	ck_assert_double_ge(ct_now_ms() - t0, 65);
	isp_channel_drain(ch);
	ck_assert_uint_eq(F.n, 5);
	for (int i = 0; i < 5; i++) {
		char want[32];

		snprintf(want, sizeof(want), "r%d", i);
		ck_assert_str_eq(F.text[i], want);
	}

	struct isp_channel_stats st = ct_stats(ch);

	ck_assert_uint_eq(st.retried, 3);
	ck_assert_uint_eq(st.delivered, 5);
	ck_assert_uint_eq(st.dropped, 0);
	isp_channel_close(ch);
}
END_TEST

/* Nothing delivered: offered again after 10 ms, doubling to 1 s and no
 * more; any progress starts again at 10 ms (outputs/README.md,
 * "Retries"). Lower bounds to the millisecond; the cap against what
 * doubling would give (2.56 s, 5.12 s), the reset against the 1 s it
 * would be without. */
START_TEST(backoff_bounds)
{
	const char *kvs[] = { NULL };
	struct isp_channel *ch = ct_open(kvs);
	static const double want[] = { 10, 20, 40, 80, 160, 320, 640, 1000, 1000, 1000 };
	const unsigned nfail = sizeof(want) / sizeof(want[0]);

	fake_set_fail((int)nfail);
	ck_assert(ct_put(ch, "r0"));
	while (fake_delivered() < 1)
		ct_sleep_ms(1);
	pthread_mutex_lock(&F.mu);
	ck_assert_uint_eq(F.calls, nfail + 1);
	for (unsigned i = 0; i < nfail; i++) {
		double d = F.call_ms[i + 1] - F.call_ms[i];

		ck_assert_msg(d >= want[i] - 1, "retry %u after %.1f ms, before its %.0f", i + 1, d,
			      want[i]);
		if (want[i] == 1000)
			ck_assert_msg(d < 2000, "retry %u after %.1f ms: not capped at 1 s", i + 1, d);
	}
	F.fail_calls = 2;
	pthread_mutex_unlock(&F.mu);
	ck_assert(ct_put(ch, "r1"));
	while (fake_delivered() < 2)
		ct_sleep_ms(1);
	pthread_mutex_lock(&F.mu);
	ck_assert_uint_eq(F.calls, nfail + 4);
	double d1 = F.call_ms[nfail + 2] - F.call_ms[nfail + 1];
	double d2 = F.call_ms[nfail + 3] - F.call_ms[nfail + 2];
	pthread_mutex_unlock(&F.mu);
	ck_assert_msg(d1 >= 9 && d1 < 900, "after progress, first retry after %.1f ms", d1);
	ck_assert_msg(d2 >= 19 && d2 < 900, "after progress, second retry after %.1f ms", d2);
	ck_assert_uint_eq(ct_stats(ch).retried, nfail + 2);
	isp_channel_close(ch);
}
END_TEST

START_TEST(partial_batches)
{
	const char *kvs[] = { NULL };
	struct isp_channel *ch = ct_open(kvs);

	F.per_call = 2;                         /* before any write: no race */
	ct_hold_first(ch);
	for (int i = 1; i < 7; i++)
		ck_assert(ct_put(ch, "r%d", i));
	fake_set_block(false);
	isp_channel_drain(ch);
	ck_assert_uint_eq(F.n, 7);
	for (int i = 0; i < 7; i++) {
		char want[32];

		snprintf(want, sizeof(want), "r%d", i);
		ck_assert_str_eq(F.text[i], want);
	}
	/* r1..r6: 2 go, 4 offered again; 2 go, 2 again; 2 go. */
	ck_assert_uint_eq(ct_stats(ch).retried, 6);
	isp_channel_close(ch);
}
END_TEST

/* ---- close ---------------------------------------------------------------- */

START_TEST(close_delivers_queued)
{
	const char *kvs[] = { "flush-ms=100000", NULL };
	struct isp_channel *ch = ct_open(kvs);

	for (int i = 0; i < 1000; i++)
		ck_assert(ct_put(ch, "r%d", i));
	isp_channel_drain(ch);
	ck_assert_uint_eq(F.n, 1000);
	ck_assert_str_eq(F.text[999], "r999");
	ck_assert_uint_eq(fake_flushes(), 1);   /* the final flush */

	struct isp_channel_stats st = ct_stats(ch);

	ck_assert_uint_eq(st.delivered, 1000);
	ck_assert_uint_eq(st.queue_depth, 0);
	ct_check_invariant(ch);
	isp_channel_close(ch);
}
END_TEST

START_TEST(close_deadline_drops_rest)
{
	const char *kvs[] = { "shutdown-ms=150", NULL };
	struct isp_channel *ch = ct_open(kvs);
	double t0, took;

	fake_set_fail(-1);
	for (int i = 0; i < 20; i++)
		ck_assert(ct_put(ch, "r%d", i));
	t0 = ct_now_ms();
	isp_channel_drain(ch);
	took = ct_now_ms() - t0;
	ck_assert_double_ge(took, 140);
	ck_assert_double_lt(took, 1000);

	struct isp_channel_stats st = ct_stats(ch);

	ck_assert_uint_eq(st.queued, 20);
	ck_assert_uint_eq(st.delivered, 0);
	ck_assert_uint_eq(st.dropped, 20);
	ck_assert_uint_eq(st.queue_depth, 0);
	ck_assert_uint_ge(st.retried, 1);
	ct_check_invariant(ch);
	isp_channel_close(ch);
}
END_TEST

START_TEST(close_deadline_partial)
{
	const char *kvs[] = { "shutdown-ms=100", "batch=3", NULL };
	struct isp_channel *ch = ct_open(kvs);

	F.total_limit = 5;
	for (int i = 0; i < 20; i++)
		ck_assert(ct_put(ch, "r%d", i));
	isp_channel_drain(ch);

	struct isp_channel_stats st = ct_stats(ch);

	ck_assert_uint_eq(F.n, 5);
	ck_assert_str_eq(F.text[4], "r4");
	ck_assert_uint_eq(st.delivered, 5);
	ck_assert_uint_eq(st.dropped, 15);
	ck_assert_uint_eq(st.queue_depth, 0);
	ct_check_invariant(ch);
	isp_channel_close(ch);
}
END_TEST

START_TEST(flush_periodic)
{
	const char *kvs[] = { "flush-ms=20", NULL };
	struct isp_channel *ch = ct_open(kvs);
	unsigned n;

	ct_sleep_ms(210);
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
		p->accepted += ct_put(p->ch, "p%u %u", p->id, i);
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
	struct isp_channel *ch = ct_open(kvs);
	unsigned accepted;

	F.verify = true;
	run_producers(ch, &accepted);
	ck_assert_uint_eq(accepted, PRODUCERS * PER_PRODUCER);
	ck_assert_uint_eq(F.delivered, PRODUCERS * PER_PRODUCER);
	ck_assert(F.order_ok);
	ck_assert(F.gapless);
	for (unsigned i = 0; i < PRODUCERS; i++)
		ck_assert_uint_eq(F.next_seq[i], PER_PRODUCER);

	struct isp_channel_stats st = ct_stats(ch);

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
	struct isp_channel *ch = ct_open(kvs);
	unsigned accepted;

	F.verify = true;
	run_producers(ch, &accepted);

	struct isp_channel_stats st = ct_stats(ch);

	ck_assert_uint_eq(accepted, PRODUCERS * PER_PRODUCER);
	ck_assert_uint_eq(st.queued, PRODUCERS * PER_PRODUCER);
	ck_assert_uint_eq(st.delivered, F.delivered);
	ck_assert_uint_eq(st.queue_depth, 0);
	ct_check_invariant(ch);
	ck_assert(F.order_ok);
	isp_channel_close(ch);
}
END_TEST

/* ---- configuration ---------------------------------------------------------- */

static void expect_error(const char *type, const char *const *kvs, const char *want)
{
	struct isp_channel *ch = ct_open_type(type, kvs);

	ck_assert_ptr_null(ch);
	ck_assert_str_eq(ct_err, want);
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
		     "expected json, csv, intspect-csv or influx");
	/* The type sees only its own keys; its index maps back to line 3. */
	expect_error("fake", h, "test.conf:3:3: tag must not be 'bad'");
	expect_error("fake", i, "test.conf:2:3: bad value '-1' for queue-records: "
		     "expected an integer from 1 to 1073741824");
	expect_error("fake", j, "test.conf:2:3: bad value ' 5' for shutdown-ms: "
		     "expected an integer from 0 to 3600000");
	/* the known types depend on what configure found (kafka, redis) */
	ck_assert_ptr_null(ct_open_type("nosuch", a));
	static const char want[] = "test.conf:1:1: output 't': unknown type 'nosuch'; known: "
				   "stdout, file";
	ck_assert_msg(strncmp(ct_err, want, sizeof(want) - 1) == 0, "%s", ct_err);
	ck_assert_msg(strstr(ct_err, "socket") && strstr(ct_err, "fake"), "%s", ct_err);
	ck_assert_uint_eq(F.opens, 0);
}
END_TEST

START_TEST(generic_keys_consumed)
{
	const char *kvs[] = { "enable=yes", "queue-records=7", "queue-bytes=2M",
			      "drop-policy=drop-oldest", "batch=9", "flush-ms=11",
			      "tag=x", "shutdown-ms=0", "format=csv", NULL };
	struct isp_channel *ch = ct_open(kvs);

	ck_assert_uint_eq(F.opens, 1);
	ck_assert_uint_eq(F.open_nkv, 1);       /* only "tag" */
	ck_assert_uint_eq(F.open_params.queue_records, 7);
	ck_assert_uint_eq(F.open_params.queue_bytes, 2u << 20);
	ck_assert_int_eq(F.open_params.policy, ISP_DROP_OLDEST);
	ck_assert_uint_eq(F.open_params.batch, 9);
	ck_assert_uint_eq(F.open_params.flush_ms, 11);
	ck_assert_uint_eq(F.open_params.shutdown_ms, 0);
	ck_assert_int_eq(isp_channel_format(ch), 1);
	ck_assert(isp_channel_enabled(ch));
	ck_assert_str_eq(isp_channel_name(ch), "t");
	isp_channel_close(ch);
}
END_TEST

/* The generic keys' defaults (outputs/README.md, "Generic keys"). */
START_TEST(generic_keys_defaults)
{
	const char *kvs[] = { NULL };
	struct isp_channel *ch = ct_open(kvs);

	ck_assert_uint_eq(F.opens, 1);
	ck_assert(F.open_params.enable);
	ck_assert_uint_eq(F.open_params.queue_records, 65536);
	ck_assert_uint_eq(F.open_params.queue_bytes, 64u << 20);
	ck_assert_int_eq(F.open_params.policy, ISP_DROP_NEWEST);
	ck_assert_uint_eq(F.open_params.batch, 256);
	ck_assert_uint_eq(F.open_params.flush_ms, 100);
	ck_assert_uint_eq(F.open_params.shutdown_ms, 5000);
	ck_assert_int_eq(isp_channel_format(ch), ISP_REC_JSON);
	isp_channel_close(ch);
}
END_TEST

START_TEST(disabled_channel)
{
	const char *kvs[] = { "enable=false", NULL };
	struct isp_channel *ch = ct_open(kvs);

	ck_assert(!isp_channel_enabled(ch));
	ck_assert_uint_eq(F.opens, 0);
	ck_assert(!ct_put(ch, "r0"));

	struct isp_channel_stats st = ct_stats(ch);

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

	isp_channels_init();
	if (isp_channel_register_type(&fake_ops) != 0)
		return 1;
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, retry_then_success);
	tcase_add_test(tc, backoff_bounds);
	tcase_add_test(tc, partial_batches);
	tcase_add_test(tc, close_delivers_queued);
	tcase_add_test(tc, close_deadline_drops_rest);
	tcase_add_test(tc, close_deadline_partial);
	tcase_add_test(tc, flush_periodic);
	tcase_add_test(tc, producers_complete_in_order);
	tcase_add_test(tc, producers_drop_oldest_adds_up);
	tcase_add_test(tc, generic_key_errors);
	tcase_add_test(tc, generic_keys_consumed);
	tcase_add_test(tc, generic_keys_defaults);
	tcase_add_test(tc, disabled_channel);
	tcase_add_test(tc, register_twice);
	suite_add_tcase(s, tc);
	return check_run(s, CK_FORK_GETENV);
}
