/*
 * check_redis.c - the "redis" channel type through the channel API against
 * the real redis-server on 127.0.0.1:$REDIS_PORT (started by run.sh):
 * records with NUL and CR LF bytes arrive byte for byte; an error reply
 * (WRONGTYPE, and NOPERM for an ACL user) is counted once, never retried
 * and said; a pipeline cut by OOM
 * part way is resumed without duplicates; a server that stops answering
 * holds write_batch no longer than command-timeout-ms; key errors give
 * their line:col. Prints "ok NAME" / "FAIL NAME: why" per case; exit 1 if
 * any failed. Run by run.sh, not on its own (it needs the server).
 */
#include <hiredis/hiredis.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../../outputs/channel.h"
#include "../tcfg.h"

static int port, failed;
static redisContext *rc;
static char err[1024];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A command for the checks; the reply is freed by the caller. */
static redisReply *cmd(const char *fmt, ...)
{
	va_list ap;
	redisReply *r;

	va_start(ap, fmt);
	r = redisvCommand(rc, fmt, ap);
	va_end(ap);
	if (!r) {
		fprintf(stderr, "check_redis: %s\n", rc->errstr);
		exit(1);
	}
	return r;
}

static long long cmd_int(const char *fmt, const char *arg)
{
	redisReply *r = cmd(fmt, arg);
	long long v = r->type == REDIS_REPLY_INTEGER ? r->integer : -1;

	freeReplyObject(r);
	return v;
}

static void result(const char *name, const char *why)
{
	if (why) {
		printf("FAIL %s: %s\n", name, why);
		failed++;
	} else {
		printf("ok %s\n", name);
	}
}

/* Open a redis channel on the test server with extra "key=value"s. */
static struct isp_channel *open_ch(const char *const *extra)
{
	static char kv_port[32];

	snprintf(kv_port, sizeof(kv_port), "port=%d", port);
	return tcfg_open_with("redis", kv_port, extra, err, sizeof(err));
}

static void put(struct isp_channel *ch, const char *report, const char *text, size_t len)
{
	struct isp_record r = { .report = report, .text = text, .len = len };

	isp_channel_submit(ch, &r);
}

static void binary_safe(void)
{
	static const char rec[] = "a\0b\r\nc \"%s\" \xff";
	const char *kv[] = { "mode=rpush", "key=bin", NULL };
	struct isp_channel *ch = open_ch(kv);
	const char *why = NULL;

	if (!ch) {
		result("binary-safe", err);
		return;
	}
	put(ch, "r", rec, sizeof(rec) - 1);
	put(ch, "r", "", 0);
	isp_channel_close(ch);

	redisReply *r = cmd("LRANGE bin 0 -1");

	if (r->type != REDIS_REPLY_ARRAY || r->elements != 2)
		why = "expected 2 elements";
	else if (r->element[0]->len != sizeof(rec) - 1 ||
		 memcmp(r->element[0]->str, rec, sizeof(rec) - 1) != 0)
		why = "bytes differ";
	else if (r->element[1]->len != 0)
		why = "empty record not empty";
	freeReplyObject(r);
	result("binary-safe", why);
}

/* WRONGTYPE for one report's key only: those records are dropped (lost
 * after write_batch), never retried, and the others arrive. */
static void wrongtype(void)
{
	const char *kv[] = { "mode=rpush", "key=wt-%r", NULL };
	struct isp_channel_stats st;
	struct isp_channel *ch;
	char why[200] = "";
	double t0 = now();

	freeReplyObject(cmd("SET wt-bad x"));
	if (!(ch = open_ch(kv))) {
		result("wrongtype", err);
		return;
	}
	for (int i = 0; i < 30; i++)
		put(ch, i % 3 ? "good" : "bad", "rec", 3);
	isp_channel_drain(ch);
	isp_channel_get_stats(ch, &st);
	isp_channel_close(ch);
	if (st.delivered != 20 || st.acked != 20 || st.dropped != 10 || st.retried)
		snprintf(why, sizeof(why), "delivered %llu acked %llu dropped %llu retried %llu",
			 (unsigned long long)st.delivered, (unsigned long long)st.acked,
			 (unsigned long long)st.dropped, (unsigned long long)st.retried);
	else if (cmd_int("LLEN %s", "wt-good") != 20)
		snprintf(why, sizeof(why), "LLEN wt-good %lld", cmd_int("LLEN %s", "wt-good"));
	else if (now() - t0 > 1.0)
		snprintf(why, sizeof(why), "took %.2f s", now() - t0);
	result("wrongtype", why[0] ? why : NULL);
}

/* NOPERM: an ACL user that may write the key of one report only. The
 * other's records are refused for good: dropped, never retried, the
 * server's reason said (a line a batch with refusals) and the total at
 * close, as outputs/README.md shows them. */
static void noperm(void)
{
	const char *kv[] = { "mode=rpush", "key=np-%r", "username=np", "password=pw", NULL };
	struct isp_channel_stats st;
	struct isp_channel *ch;
	char why[300] = "", *said;

	freeReplyObject(cmd("ACL SETUSER np on >pw ~np-good +@all"));
	tcfg_stderr_begin();
	if ((ch = open_ch(kv))) {
		for (int i = 0; i < 30; i++)
			put(ch, i % 3 ? "good" : "bad", "rec", 3);
		isp_channel_drain(ch);
		isp_channel_get_stats(ch, &st);
		isp_channel_close(ch);
	}
	said = tcfg_stderr_end();
	if (!ch)
		snprintf(why, sizeof(why), "%.200s", err);
	else if (st.delivered != 20 || st.dropped != 10 || st.retried)
		snprintf(why, sizeof(why), "delivered %llu dropped %llu retried %llu",
			 (unsigned long long)st.delivered, (unsigned long long)st.dropped,
			 (unsigned long long)st.retried);
	else if (cmd_int("LLEN %s", "np-good") != 20 || cmd_int("EXISTS %s", "np-bad") != 0)
		snprintf(why, sizeof(why), "LLEN np-good %lld", cmd_int("LLEN %s", "np-good"));
	else if (!strstr(said, "records refused (") || !strstr(said, "): NOPERM ") ||
		 !strstr(said, ": 10 record(s) refused by the server in all (counted dropped)"))
		snprintf(why, sizeof(why), "said: %.250s", said);
	free(said);
	result("noperm", why[0] ? why : NULL);
}

/* maxmemory reached in the middle of a pipeline: the refused records (OOM,
 * "not now") are retried once memory is raised, none lost, none twice. */
static void oom_midway(void)
{
	const char *kv[] = { "mode=rpush", "key=oom", "batch=2000", NULL };
	struct isp_channel_stats st;
	struct isp_channel *ch;
	char why[200] = "", text[256];
	redisReply *r;

	r = cmd("INFO memory");
	long long used = atoll(strstr(r->str, "used_memory:") + 12);

	freeReplyObject(r);
	freeReplyObject(cmd("CONFIG SET maxmemory-policy noeviction"));
	freeReplyObject(cmd("CONFIG SET maxmemory %lld", used + 150000));
	if (!(ch = open_ch(kv))) {
		result("oom-midway", err);
		return;
	}
	for (int i = 0; i < 2000; i++) {
		int n = snprintf(text, sizeof(text), "%06d %0200d", i, 0);

		put(ch, "r", text, (size_t)n);
	}
	/* Let some batches meet the limit, then make room. */
	struct timespec ts = { 0, 300 * 1000000 };

	nanosleep(&ts, NULL);
	freeReplyObject(cmd("CONFIG SET maxmemory 0"));
	isp_channel_drain(ch);
	isp_channel_get_stats(ch, &st);
	isp_channel_close(ch);
	if (st.delivered != 2000 || st.acked != 2000 || st.retried == 0)
		snprintf(why, sizeof(why), "delivered %llu acked %llu retried %llu",
			 (unsigned long long)st.delivered, (unsigned long long)st.acked,
			 (unsigned long long)st.retried);
	r = cmd("LRANGE oom 0 -1");
	if (!why[0] && r->elements != 2000)
		snprintf(why, sizeof(why), "LLEN %zu", r->elements);
	/* Each record once. Order is not asserted: Redis checks maxmemory per
	 * command, so a later command of the same pipeline may pass where an
	 * earlier one was refused, and it is not sent again. */
	static unsigned char seen[2000];

	memset(seen, 0, sizeof(seen));
	for (size_t i = 0; !why[0] && i < r->elements; i++) {
		int v = atoi(r->element[i]->str);

		if (v < 0 || v >= 2000 || seen[v]++)
			snprintf(why, sizeof(why), "element %zu is %.6s (twice or unknown)",
				 i, r->element[i]->str);
	}
	freeReplyObject(r);
	result("oom-midway", why[0] ? why : NULL);
}

/* A server that stops answering (CLIENT PAUSE): close returns within
 * shutdown-ms plus one command timeout, counting the records dropped. */
static void paused_server(void)
{
	const char *kv[] = { "key=p", "command-timeout-ms=200", "shutdown-ms=500", NULL };
	struct isp_channel_stats st;
	struct isp_channel *ch = open_ch(kv);
	char why[200] = "";

	if (!ch) {
		result("paused-server", err);
		return;
	}
	freeReplyObject(cmd("CLIENT PAUSE 1500 ALL"));
	double t0 = now();

	for (int i = 0; i < 5; i++)
		put(ch, "r", "x", 1);
	isp_channel_close(ch);      /* drains: no stats after, so check time */
	double t = now() - t0;

	(void)st;
	if (t > 0.5 + 0.2 + 0.3)
		snprintf(why, sizeof(why), "close took %.2f s", t);
	result("paused-server", why[0] ? why : NULL);
	struct timespec ts = { 1, 0 };

	nanosleep(&ts, NULL);       /* let the pause end */
}

static void expect_error(const char *name, const char *const *kv, const char *want)
{
	struct isp_channel *ch = open_ch(kv);
	char why[1200] = "";

	if (ch) {
		isp_channel_close(ch);
		snprintf(why, sizeof(why), "opened");
	} else if (!strstr(err, want)) {
		snprintf(why, sizeof(why), "got '%s', want '%s'", err, want);
	}
	result(name, why[0] ? why : NULL);
}

static void key_errors(void)
{
	const char *a[] = { "mod=rpush", NULL };
	const char *b[] = { "mode=pubsub", NULL };
	const char *c[] = { "key=x-%q", NULL };
	const char *d[] = { "stream-maxlen=10", NULL };
	const char *e[] = { "server=127.0.0.1", "hostname=localhost", NULL };
	const char *f[] = { "username=u", NULL };
	const char *g[] = { "database=100000", NULL };

	expect_error("api-error-unknown-key", a,
		     "test.conf:3:3: unknown key 'mod' for a redis output (did you mean 'mode'?)");
	expect_error("api-error-bad-mode", b, "test.conf:3:3: bad value 'pubsub' for mode");
	expect_error("api-error-key-template", c, "test.conf:3:3: bad '%q' in the name");
	expect_error("api-error-maxlen-mode", d, "test.conf:3:3: stream-maxlen applies to mode = xadd only");
	expect_error("api-error-alias-twice", e, "test.conf:4:3: 'hostname' and 'server' are the same setting (first at line 3)");
	expect_error("api-error-user-no-password", f, "test.conf:3:3: username needs a password");
	expect_error("api-error-select", g, "test.conf:3:3: redis 127.0.0.1:");
}

int main(void)
{
	const char *p = getenv("REDIS_PORT");

	if (!p) {
		fprintf(stderr, "check_redis: set REDIS_PORT (run.sh does)\n");
		return 77;
	}
	port = atoi(p);
	signal(SIGPIPE, SIG_IGN);
	rc = redisConnect("127.0.0.1", port);
	if (!rc || rc->err) {
		fprintf(stderr, "check_redis: cannot connect to port %d\n", port);
		return 1;
	}
	binary_safe();
	wrongtype();
	noperm();
	oom_midway();
	paused_server();
	key_errors();
	redisFree(rc);
	return failed ? 1 : 0;
}
