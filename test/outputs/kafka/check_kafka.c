/*
 * check_kafka.c - the "kafka" channel type without a broker: every key
 * error with its line:col (tcfg.h: key i is at line i+2, column 3), a
 * librdkafka property passed through or refused with librdkafka's text,
 * properties-file errors, where the broker's address comes from (the
 * precedence of defaults, properties-file, named keys and property; an
 * IPv6 address bracketed), and the accounting when no broker ever answers
 * (records delivered to librdkafka, then lost: moved to dropped), and
 * acknowledgements from librdkafka's in-process mock cluster. Also the
 * channel layer's hook for that (isp_channel_add_lost, ops.finish) with a
 * fake type. The broker tests are in run.sh.
 *
 * A fatal producer error cannot be caused from outside (a broken
 * idempotence sequence), so the test links with --wrap=rd_kafka_new to
 * hold the channel's producer and fabricates one with librdkafka's own
 * rd_kafka_test_fatal_error.
 */
#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <pthread.h>

#include "../../../outputs/channel.h"
#include "../../../outputs/queue.h"
#include "../../check_run.h"
#include "../tcfg.h"

static char err[1024];

/* Nothing listens on port 1 of the loopback: connections are refused. */
#define DEAD "brokers=127.0.0.1:1"

static void expect_error(const char *const *kvs, const char *msg)
{
	struct isp_channel *ch = tcfg_open("kafka", kvs, err, sizeof(err));

	ck_assert_msg(ch == NULL, "opened, expected: %s", msg);
	ck_assert_msg(strstr(err, msg) != NULL, "got '%s', expected '%s'", err, msg);
	isp_channel_close(ch);
}

static struct isp_channel_stats stats(const struct isp_channel *ch)
{
	struct isp_channel_stats st;

	isp_channel_get_stats(ch, &st);
	return st;
}

static void put(struct isp_channel *ch, const char *text, const char *key)
{
	struct isp_record r = { .report = "r", .key = key, .key_len = strlen(key),
				.text = text, .len = strlen(text) };

	ck_assert(isp_channel_submit(ch, &r));
}

START_TEST(test_key_errors)
{
	expect_error((const char *const[]){ "topik=x", NULL },
		     "test.conf:2:3: unknown key 'topik' for a kafka output (did you mean 'topic'?)");
	ck_assert_msg(strstr(err, "linger-ms, properties-file, property \"NAME\"") != NULL, "%s", err);
	expect_error((const char *const[]){ "topic=a", "compression=lz5", NULL },
		     "test.conf:3:3: bad value 'lz5' for compression");
	expect_error((const char *const[]){ "acks=2", NULL },
		     "test.conf:2:3: bad value '2' for acks");
	expect_error((const char *const[]){ "key=flow", NULL },
		     "test.conf:2:3: bad value 'flow' for key");
	expect_error((const char *const[]){ "port=70000", NULL },
		     "test.conf:2:3: bad value '70000' for port");
	expect_error((const char *const[]){ "linger-ms=x", NULL },
		     "test.conf:2:3: bad value 'x' for linger-ms");
	expect_error((const char *const[]){ "topic=a b", NULL },
		     "test.conf:2:3: bad topic 'a b'");
	expect_error((const char *const[]){ "topic=x-%s", NULL },
		     "test.conf:2:3: bad topic 'x-%s'");
	expect_error((const char *const[]){ "brokers=", NULL },
		     "test.conf:2:3: brokers must not be empty");
	expect_error((const char *const[]){ "enable=true", "property=x", NULL },
		     "test.conf:3:3: 'property' needs a librdkafka property name");
	expect_error((const char *const[]){ "topic=a", "topic=b", NULL },
		     "test.conf:3:3: duplicate key 'topic'");
}
END_TEST

START_TEST(test_property_errors)
{
	expect_error((const char *const[]){ "topic=a", "property.compresion.type=lz4", NULL },
		     "test.conf:3:3: property 'compresion.type': No such configuration property");
	expect_error((const char *const[]){ "property.linger.ms=soon", NULL },
		     "test.conf:2:3: property 'linger.ms': Invalid value");
	/* conflicting settings are refused by rd_kafka_new: the section */
	expect_error((const char *const[]){ "acks=1", "property.enable.idempotence=true", NULL },
		     "test.conf:1:1: ");
}
END_TEST

/* A properties-file of `text` at path (a mkstemp template), and its key
 * in kv. */
static void properties_file(char *path, const char *text, char *kv, size_t kvlen)
{
	int fd = mkstemp(path);
	FILE *f;

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	snprintf(kv, kvlen, "properties-file=%s", path);
}

START_TEST(test_properties_file)
{
	char path[] = "/tmp/check_kafka.XXXXXX", kv[64];
	FILE *f;

	properties_file(path, "# comment\n\n  linger.ms = 7\ncompression.type=lz4\n"
			"batch.num.messages=oops\n", kv, sizeof(kv));
	expect_error((const char *const[]){ DEAD, kv, NULL }, "test.conf:3:3: ");
	ck_assert_msg(strstr(err, ":5: batch.num.messages: Invalid value") != NULL, "%s", err);

	f = fopen(path, "w");
	fputs("linger.ms 7\n", f);
	fclose(f);
	expect_error((const char *const[]){ kv, NULL }, ":1: expected name=value");

	f = fopen(path, "w");
	fputs("linger.ms=7\nmessage.timeout.ms=1000\n", f);
	fclose(f);
	struct isp_channel *ch = tcfg_open("kafka", (const char *const[]){ DEAD, kv, NULL },
					   err, sizeof(err));
	ck_assert_msg(ch != NULL, "%s", err);
	isp_channel_close(ch);
	unlink(path);
	expect_error((const char *const[]){ kv, NULL }, "test.conf:2:3: cannot open properties-file");
}
END_TEST

/* Every key accepted together; opening connects to nothing yet. */
START_TEST(test_open_all_keys)
{
	struct isp_channel *ch = tcfg_open("kafka", (const char *const[]){
		"hostname=127.0.0.1", "port=1", "topic=intspect.%r", "key=none",
		"compression=zstd", "acks=1", "linger-ms=0",
		"property.message.timeout.ms=1000", "shutdown-ms=0", NULL }, err, sizeof(err));

	ck_assert_msg(ch != NULL, "%s", err);
	isp_channel_close(ch);
}
END_TEST

/* The broker a channel of these keys tries first, as librdkafka says it
 * (on stderr, through the channel): nothing listens on these ports. */
static void expect_broker(const char *const *kvs, const char *want)
{
	char said[8192] = "";
	struct isp_channel *ch;

	tcfg_stderr_begin();
	ch = tcfg_open("kafka", kvs, err, sizeof(err));
	if (ch) {
		put(ch, "{\"a\":1}", "k");
		for (int i = 0; i < 500 && !strstr(said, "Connect to "); i++) {
			usleep(10000);
			tcfg_stderr_peek(said, sizeof(said));
		}
		isp_channel_close(ch);
	}
	free(tcfg_stderr_end());
	ck_assert_msg(ch != NULL, "%s", err);
	ck_assert_msg(strstr(said, want) != NULL, "expected '%s', said: %s", want, said);
}

/* Where the broker's address comes from, lowest first: intspect's
 * default, properties-file, the named keys (brokers over hostname and
 * port), property; an IPv6 hostname bracketed before its port. */
START_TEST(test_broker_precedence)
{
	char path[] = "/tmp/check_kafka.XXXXXX", kv[64];

	properties_file(path, "bootstrap.servers=127.0.0.1:2\n", kv, sizeof(kv));
	expect_broker((const char *const[]){ kv, "shutdown-ms=0", NULL },
		      "Connect to ipv4#127.0.0.1:2 failed");
	expect_broker((const char *const[]){ kv, "hostname=127.0.0.1", "port=3", "shutdown-ms=0",
					     NULL }, "Connect to ipv4#127.0.0.1:3 failed");
	expect_broker((const char *const[]){ kv, "hostname=127.0.0.1", "port=3",
					     "property.bootstrap.servers=127.0.0.1:4",
					     "shutdown-ms=0", NULL },
		      "Connect to ipv4#127.0.0.1:4 failed");
	expect_broker((const char *const[]){ "hostname=127.0.0.1", "port=7", "brokers=127.0.0.1:6",
					     "shutdown-ms=0", NULL },
		      "Connect to ipv4#127.0.0.1:6 failed");
	expect_broker((const char *const[]){ "hostname=::1", "port=5", "shutdown-ms=0", NULL },
		      "Connect to ipv6#[::1]:5 failed");
	unlink(path);
}
END_TEST

/* The counters once the one at `field` reaches `value`, or after 20 s:
 * a loaded machine may take a while, so no fixed sleep. */
static struct isp_channel_stats wait_for(struct isp_channel *ch, size_t field, uint64_t value)
{
	struct isp_channel_stats st;

	for (int i = 0; i < 2000; i++) {
		st = stats(ch);
		uint64_t v;
		memcpy(&v, (const char *)&st + field, sizeof(v));
		if (v == value)
			break;
		usleep(10000);
	}
	return st;
}

/* No broker: librdkafka takes the records (delivered), then reports them
 * failed at message.timeout.ms: they must end up dropped, none unaccounted. */
START_TEST(test_dead_broker_timeout)
{
	struct isp_channel *ch = tcfg_open("kafka", (const char *const[]){
		DEAD, "flush-ms=20", "property.message.timeout.ms=300", NULL }, err, sizeof(err));
	struct isp_channel_stats st;

	ck_assert_msg(ch != NULL, "%s", err);
	for (int i = 0; i < 10; i++)
		put(ch, "{\"a\":1}", i % 2 ? "k1" : "k2");
	st = wait_for(ch, offsetof(struct isp_channel_stats, dropped), 10);
	ck_assert_uint_eq(st.queued, 10);
	ck_assert_uint_eq(st.dropped, 10);
	ck_assert_uint_eq(st.delivered, 0);
	ck_assert_uint_eq(st.acked, 0);
	isp_channel_drain(ch);
	st = stats(ch);
	ck_assert_uint_eq(st.queued, st.delivered + st.dropped);
	ck_assert_uint_eq(st.dropped, 10);
	isp_channel_close(ch);
}
END_TEST

/* No broker, records still waiting in librdkafka at the shutdown deadline:
 * drain purges them and the counters are final when it returns. */
START_TEST(test_dead_broker_deadline)
{
	struct isp_channel *ch = tcfg_open("kafka", (const char *const[]){
		DEAD, "shutdown-ms=200", NULL }, err, sizeof(err));
	struct isp_channel_stats st;

	ck_assert_msg(ch != NULL, "%s", err);
	for (int i = 0; i < 100; i++)
		put(ch, "{\"b\":2}", "");
	/* the channel thread hands them to librdkafka's queue */
	st = wait_for(ch, offsetof(struct isp_channel_stats, delivered), 100);
	ck_assert_uint_eq(st.delivered, 100);   /* in librdkafka's queue */
	isp_channel_drain(ch);
	st = stats(ch);
	ck_assert_uint_eq(st.queued, 100);
	ck_assert_uint_eq(st.delivered, 0);
	ck_assert_uint_eq(st.dropped, 100);
	ck_assert_uint_eq(st.queue_depth, 0);
	isp_channel_close(ch);
}
END_TEST

/* librdkafka's own mock cluster (in the process) acknowledges: after
 * drain every record is delivered and acked, per report topic too. */
START_TEST(test_mock_cluster_acked)
{
	struct isp_channel *ch = tcfg_open("kafka", (const char *const[]){
		"property.test.mock.num.brokers=1", "topic=m.%r", "batch=7", NULL },
		err, sizeof(err));
	struct isp_channel_stats st;
	char text[64], key[16];

	ck_assert_msg(ch != NULL, "%s", err);
	for (int i = 0; i < 500; i++) {
		struct isp_record r = { .report = i % 3 ? "a" : "b", .key = key,
					.text = text };

		r.key_len = (size_t)snprintf(key, sizeof(key), "k%d", i % 5);
		r.len = (size_t)snprintf(text, sizeof(text), "{\"i\":%d}", i);
		ck_assert(isp_channel_submit(ch, &r));
	}
	isp_channel_drain(ch);
	st = stats(ch);
	ck_assert_uint_eq(st.queued, 500);
	ck_assert_uint_eq(st.delivered, 500);
	ck_assert_uint_eq(st.acked, 500);
	ck_assert_uint_eq(st.dropped, 0);
	isp_channel_close(ch);
}
END_TEST

/* acks = 0: a record counts as acknowledged once sent */
START_TEST(test_mock_cluster_acks0)
{
	struct isp_channel *ch = tcfg_open("kafka", (const char *const[]){
		"property.test.mock.num.brokers=1", "acks=0", NULL }, err, sizeof(err));
	struct isp_record r = { .report = "a", .key = "k", .key_len = 1, .text = "{}", .len = 2 };
	struct isp_channel_stats st;

	ck_assert_msg(ch != NULL, "%s", err);
	for (int i = 0; i < 100; i++)
		ck_assert(isp_channel_submit(ch, &r));
	isp_channel_drain(ch);
	st = stats(ch);
	ck_assert_uint_eq(st.delivered, 100);
	ck_assert_uint_eq(st.acked, 100);
	ck_assert_uint_eq(st.dropped, 0);
	isp_channel_close(ch);
}
END_TEST

/* ---- a fatal error: the producer is replaced (kafka.c, replace_producer) ---- */

rd_kafka_t *__real_rd_kafka_new(rd_kafka_type_t type, rd_kafka_conf_t *conf,
				char *errstr, size_t errstr_size);
rd_kafka_t *__wrap_rd_kafka_new(rd_kafka_type_t type, rd_kafka_conf_t *conf,
				char *errstr, size_t errstr_size);

static pthread_mutex_t made_mu = PTHREAD_MUTEX_INITIALIZER;
static rd_kafka_t *made_rk;     /* the newest producer */
static int made;                /* producers made */

rd_kafka_t *__wrap_rd_kafka_new(rd_kafka_type_t type, rd_kafka_conf_t *conf,
				char *errstr, size_t errstr_size)
{
	rd_kafka_t *rk = __real_rd_kafka_new(type, conf, errstr, errstr_size);

	pthread_mutex_lock(&made_mu);
	if (rk) {
		made_rk = rk;
		made++;
	}
	pthread_mutex_unlock(&made_mu);
	return rk;
}

static void put_many(struct isp_channel *ch, int from, int to)
{
	char text[32];

	for (int i = from; i < to; i++) {
		struct isp_record r = { .report = "r", .key = "k", .key_len = 1, .text = text };

		r.len = (size_t)snprintf(text, sizeof(text), "{\"i\":%d}", i);
		ck_assert(isp_channel_submit(ch, &r));
	}
}

/* Wait up to 10 s for the channel's acks to reach n. */
static void wait_acked(struct isp_channel *ch, uint64_t n)
{
	for (int k = 0; k < 1000 && stats(ch).acked < n; k++)
		usleep(10000);
	ck_assert_uint_eq(stats(ch).acked, n);
}

/* The producer hits a fatal error after 100 records are acknowledged: it
 * is replaced once (a reconnect, said on stderr), and the 100 records
 * written after reach the mock cluster through the new one. Nothing is
 * lost, as the dead producer held nothing. */
START_TEST(test_fatal_error_new_producer)
{
	struct isp_channel *ch;
	struct isp_channel_stats st;
	rd_kafka_t *rk;
	char *said;

	made = 0;
	ch = tcfg_open("kafka", (const char *const[]){
		"property.test.mock.num.brokers=1", "property.enable.idempotence=true",
		"batch=10", NULL }, err, sizeof(err));
	ck_assert_msg(ch != NULL, "%s", err);
	put_many(ch, 0, 100);
	wait_acked(ch, 100);
	pthread_mutex_lock(&made_mu);
	rk = made_rk;
	ck_assert_int_eq(made, 1);
	pthread_mutex_unlock(&made_mu);

	tcfg_stderr_begin();
	ck_assert_int_eq(rd_kafka_test_fatal_error(rk, RD_KAFKA_RESP_ERR_OUT_OF_ORDER_SEQUENCE_NUMBER,
						   "sequence broken"),
			 RD_KAFKA_RESP_ERR_NO_ERROR);
	put_many(ch, 100, 200);
	wait_acked(ch, 200);
	isp_channel_drain(ch);
	said = tcfg_stderr_end();
	st = stats(ch);
	pthread_mutex_lock(&made_mu);
	ck_assert_int_eq(made, 2);
	pthread_mutex_unlock(&made_mu);
	ck_assert_uint_eq(st.reconnects, 1);
	ck_assert_uint_eq(st.queued, 200);
	ck_assert_uint_eq(st.delivered, 200);
	ck_assert_uint_eq(st.acked, 200);
	ck_assert_uint_eq(st.dropped, 0);
	ck_assert_msg(strstr(said, "kafka: fatal error, new producer: ") &&
		      strstr(said, "sequence broken"), "said: %s", said);
	free(said);
	isp_channel_close(ch);
}
END_TEST

/* ---- the channel layer's hook, with a type that acknowledges later ---- */

static int64_t fin_deadline;
static int fin_calls;
static struct isp_channel *lost_ch;
static size_t taken;

static int late_open(void **state, const struct isp_channel_cfg *cfg, int *bad_kv,
		     char *e, size_t elen)
{
	(void)bad_kv, (void)e, (void)elen;
	lost_ch = cfg->channel;
	*state = &taken;
	return 0;
}

static size_t late_write(void *state, const struct isp_record *recs, size_t n)
{
	(void)state, (void)recs;
	taken += n;
	return n;
}

/* Half of what it took is "acknowledged", the rest lost. */
static void late_finish(void *state, int64_t deadline_ns)
{
	(void)state;
	fin_calls++;
	fin_deadline = deadline_ns;
	isp_channel_add_acked(lost_ch, taken / 2);
	isp_channel_add_lost(lost_ch, taken - taken / 2);
}

static const struct isp_channel_ops late_ops = {
	.type = "late", .open = late_open, .write_batch = late_write,
	.finish = late_finish,
};

START_TEST(test_lost_hook)
{
	struct isp_channel *ch;
	struct isp_channel_stats st;
	int64_t t0;

	isp_channels_init();
	isp_channel_register_type(&late_ops);   /* -1 when already there (forks off) */
	ch = tcfg_open("late", (const char *const[]){ "shutdown-ms=3000", NULL },
		       err, sizeof(err));
	ck_assert_msg(ch != NULL, "%s", err);
	for (int i = 0; i < 7; i++)
		put(ch, "x", "");
	t0 = isp_now_ns();
	isp_channel_drain(ch);
	st = stats(ch);
	ck_assert_int_eq(fin_calls, 1);
	/* the deadline given is the channel's: shutdown-ms after shutdown */
	ck_assert(fin_deadline >= t0 + 2900 * 1000000LL);
	ck_assert(fin_deadline <= isp_now_ns() + 3000 * 1000000LL);
	ck_assert_uint_eq(st.queued, 7);
	ck_assert_uint_eq(st.delivered, 3);
	ck_assert_uint_eq(st.acked, 3);
	ck_assert_uint_eq(st.dropped, 4);
	ck_assert_uint_eq(st.queue_depth, 0);
	isp_channel_close(ch);
	ck_assert_int_eq(fin_calls, 1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("kafka");
	TCase *tc = tcase_create("kafka");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_key_errors);
	tcase_add_test(tc, test_property_errors);
	tcase_add_test(tc, test_properties_file);
	tcase_add_test(tc, test_open_all_keys);
	tcase_add_test(tc, test_broker_precedence);
	tcase_add_test(tc, test_dead_broker_timeout);
	tcase_add_test(tc, test_dead_broker_deadline);
	tcase_add_test(tc, test_mock_cluster_acked);
	tcase_add_test(tc, test_mock_cluster_acks0);
	tcase_add_test(tc, test_fatal_error_new_producer);
	tcase_add_test(tc, test_lost_hook);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(suite(), CK_FORK_GETENV);
}
