/*
 * check_influxdb.c - the "influxdb" channel type through the channel API.
 * The HTTP cases run against a small HTTP server inside the test (a thread
 * on loopback) that answers each request with the status code the case
 * chooses, and records what it was sent: 204 (delivered, one kept-alive
 * connection, the URL and the Authorization header), 400 (the request
 * counted dropped, said with the server's text), 404 (open refused at the
 * database key; dropped at write time; created with create-database), 500
 * then 204 (retried, nothing lost or sent twice), a chunked error body, a
 * connection the server closes after an answer (a new one, counted) or
 * before it (the request sent again at once), 503 to everything (reached,
 * dropped at the deadline), a server that does not answer (bounded time),
 * connection refused (retried, never connected), a batch split at
 * max-body; UDP datagrams packed up to udp-payload; records that are not
 * one line; key errors with line:col; check mode connects nothing. The
 * real InfluxDB is test/outputs/influxdb/run.sh's.
 */
#include <arpa/inet.h>
#include <check.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include "../tcfg.h"
#include "ifxtest.h"
#include "../../check_run.h"

/* ---- HTTP ------------------------------------------------------------------------ */

/* gunzip a request body (zlib, gzip wrapper); malloc'd, NUL-terminated. */
static char *gunzip(const char *p, size_t n, size_t *out_len)
{
	z_stream z = { 0 };
	size_t cap = 1 << 20;
	char *out = malloc(cap);

	ck_assert_ptr_nonnull(out);
	ck_assert_int_eq(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)p;
	z.avail_in = (uInt)n;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)(cap - 1);
	ck_assert_int_eq(inflate(&z, Z_FINISH), Z_STREAM_END);
	*out_len = cap - 1 - z.avail_out;
	out[*out_len] = 0;
	inflateEnd(&z);
	return out;
}

START_TEST(gzip_bodies)
{
	const char *kv[] = { "database=db", "gzip=true", NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;
	size_t raw = 0, sent = 0;
	char all[1 << 16] = "";

	server_start(NULL, 0, A204);
	ch = must_open(srv.port, kv);
	put_n(ch, 0, 500);
	cap_start();
	isp_channel_drain(ch);
	st = stats(ch);
	ck_assert_uint_eq(st.delivered, 500);
	ck_assert_uint_eq(st.dropped, 0);
	isp_channel_close(ch);
	char *said = cap_end();
	/* every write with a body is gzip, and gunzips to the lines sent */
	for (size_t i = 0; i < srv.nreq; i++) {
		if (!srv.req[i].body_len)
			continue;
		ck_assert_ptr_nonnull(srv.req[i].encoding);
		ck_assert_str_eq(srv.req[i].encoding, "gzip");
		size_t n;
		char *text = gunzip(srv.req[i].body, srv.req[i].body_len, &n);
		ck_assert_uint_lt(strlen(all) + n + 2, sizeof(all));
		strcat(all, text);
		strcat(all, "\n");
		raw += n;
		sent += srv.req[i].body_len;
		free(text);
	}
	ck_assert_str_eq(all, expect_n(0, 500));
	ck_assert_uint_lt(sent, raw / 2);       /* repetitive lines: well under half */
	/* the close says what was saved */
	ck_assert_msg(strstr(said, "gzip: ") && strstr(said, "bytes of line protocol sent as"), "%s",
		      said);
	free(said);
	/* the empty write of open has no body, so no encoding */
	ck_assert_uint_eq(srv.req[0].body_len, 0);
	ck_assert_ptr_null(srv.req[0].encoding);
	server_stop();
}
END_TEST

START_TEST(delivered_204)
{
	const char *kv[] = { "database=my db", "retention-policy=r/1", "user=u",
			     "password=p:w", NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;

	server_start(NULL, 0, A204);
	ch = must_open(srv.port, kv);
	put_n(ch, 0, 50);
	isp_channel_drain(ch);
	st = stats(ch);
	ck_assert_uint_eq(st.queued, 50);
	ck_assert_uint_eq(st.delivered, 50);
	ck_assert_uint_eq(st.dropped, 0);
	ck_assert_uint_eq(st.retried, 0);
	ck_assert_uint_eq(st.reconnects, 0);
	ck_assert(!isp_channel_never_connected(ch));
	isp_channel_close(ch);
	ck_assert_str_eq(bodies(204), expect_n(0, 50));
	/* the empty write of open, then the records: one connection kept */
	ck_assert_uint_ge(srv.nreq, 2);
	ck_assert_str_eq(srv.req[0].method, "POST");
	ck_assert_uint_eq(srv.req[0].body_len, 0);
	ck_assert_int_eq(srv.conns, 1);
	for (size_t i = 0; i < srv.nreq; i++) {
		ck_assert_str_eq(srv.req[i].path, "/write?db=my%20db&precision=ns&rp=r%2F1");
		ck_assert_str_eq(srv.req[i].auth, "Basic dTpwOnc=");     /* u:p:w */
	}
	server_stop();
}
END_TEST

/* A 400 (InfluxDB's partial write): the request's records are dropped, not
 * retried, and the server's text is said. */
START_TEST(refused_400)
{
	const struct answer script[] = {
		{ .status = 204 },
		{ .status = 400, .error = "partial write: unable to parse 'bad': invalid "
					  "field format dropped=0" },
	};
	const char *kv[] = { "database=db", NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;
	char *log;

	server_start(script, 2, A204);
	cap_start();
	ch = must_open(srv.port, kv);
	put(ch, "bad");
	isp_channel_drain(ch);
	st = stats(ch);
	isp_channel_close(ch);
	log = cap_end();
	ck_assert_uint_eq(st.queued, 1);
	ck_assert_uint_eq(st.delivered, 0);
	ck_assert_uint_eq(st.dropped, 1);
	ck_assert_uint_eq(st.retried, 0);
	ck_assert_msg(strstr(log, "intspect: channel t: influxdb 127.0.0.1:") &&
		      strstr(log, ": HTTP 400: partial write: unable to parse 'bad': invalid "
			     "field format dropped=0: 1 record(s) dropped"), "log: %s", log);
	ck_assert_msg(strstr(log, "1 record(s) refused by the server in all (counted dropped)"),
		      "log: %s", log);
	ck_assert_uint_eq(nrequests(), 2);      /* never sent again */
	free(log);
	server_stop();
}
END_TEST

/* The same with several records in one request: all count as dropped, and
 * the message says why. The first write is held so that the others make
 * one batch. */
START_TEST(refused_400_batch)
{
	const struct answer script[] = {
		{ .status = 204 },
		{ .status = 204, .delay_ms = 300 },
	};
	const struct answer dflt = { .status = 400, .chunked = true,
				     .error = "partial write: field type conflict dropped=1" };
	const char *kv[] = { "database=db", NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;
	char *log;

	server_start(script, 2, dflt);
	cap_start();
	ch = must_open(srv.port, kv);
	put_n(ch, 0, 1);
	wait_requests(2);       /* the empty write at open, then record 0's */
	put_n(ch, 1, 11);
	isp_channel_drain(ch);
	st = stats(ch);
	isp_channel_close(ch);
	log = cap_end();
	ck_assert_uint_eq(st.delivered, 1);
	ck_assert_uint_eq(st.dropped, 10);
	ck_assert_uint_eq(st.retried, 0);
	ck_assert_uint_eq(nrequests(), 3);
	ck_assert_msg(strstr(log, "HTTP 400: partial write: field type conflict dropped=1: "
			     "InfluxDB stored the valid lines of these 10 but says not which, "
			     "so all count as dropped"), "log: %s", log);
	free(log);
	server_stop();
}
END_TEST

START_TEST(database_not_found)
{
	const struct answer at_open[] = {
		{ .status = 404, .error = "database not found: \\\"nodb\\\"" },
	};
	const struct answer at_write[] = { { .status = 204 } };
	const struct answer nf = { .status = 404, .error = "database not found: \\\"nodb\\\"" };
	const char *kv[] = { "timeout-ms=500", "database=nodb", NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;
	char want[256], *log;

	/* at open: a mistake in the file, said at the database key */
	server_start(at_open, 1, A204);
	ch = open_on(srv.port, kv);
	ck_assert_ptr_null(ch);
	snprintf(want, sizeof(want), "test.conf:4:3: influxdb 127.0.0.1:%d: database \"nodb\" "
		 "not found (CREATE DATABASE \"nodb\" first, or create-database = true)", srv.port);
	ck_assert_str_eq(err, want);
	server_stop();

	/* gone after open: the records are dropped, the database named */
	server_start(at_write, 1, nf);
	cap_start();
	ch = must_open(srv.port, kv);
	put_n(ch, 0, 5);
	isp_channel_drain(ch);
	st = stats(ch);
	isp_channel_close(ch);
	log = cap_end();
	ck_assert_uint_eq(st.delivered, 0);
	ck_assert_uint_eq(st.dropped, 5);
	ck_assert_uint_eq(st.retried, 0);
	ck_assert_msg(strstr(log, "database \"nodb\" not found: ") &&
		      strstr(log, "(CREATE DATABASE \"nodb\", or create-database = true)"),
		      "log: %s", log);
	free(log);
	server_stop();
}
END_TEST

START_TEST(create_database)
{
	const struct answer script[] = {
		{ .status = 404, .error = "database not found: \\\"new\\\"" },
		{ .status = 200, .body = "{\"results\":[{\"statement_id\":0}]}", .chunked = true },
	};
	const char *kv[] = { "database=new", "create-database=true", NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;

	server_start(script, 2, A204);
	ch = must_open(srv.port, kv);
	put_n(ch, 0, 3);
	isp_channel_drain(ch);
	st = stats(ch);
	isp_channel_close(ch);
	ck_assert_uint_eq(st.delivered, 3);
	ck_assert_uint_eq(st.dropped, 0);
	ck_assert_str_eq(srv.req[1].path, "/query?q=CREATE%20DATABASE%20%22new%22");
	ck_assert_str_eq(bodies(204), expect_n(0, 3));
	server_stop();
}
END_TEST

/* 500 twice, then 204: retried with backoff, each record stored once. */
START_TEST(retry_500_then_204)
{
	const struct answer script[] = {
		{ .status = 204 },
		{ .status = 500, .error = "timeout" },
		{ .status = 503, .body = "overloaded" },
	};
	const char *kv[] = { "database=db", NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;
	char *log;

	server_start(script, 3, A204);
	cap_start();
	ch = must_open(srv.port, kv);
	put_n(ch, 0, 20);
	isp_channel_drain(ch);
	st = stats(ch);
	isp_channel_close(ch);
	log = cap_end();
	ck_assert_uint_eq(st.delivered, 20);
	ck_assert_uint_eq(st.dropped, 0);
	ck_assert_uint_ge(st.retried, 2);
	ck_assert_str_eq(bodies(204), expect_n(0, 20));
	ck_assert_msg(strstr(log, "HTTP 500: timeout; records wait in the queue, retrying") &&
		      strstr(log, "writing again"), "log: %s", log);
	ck_assert_ptr_null(strstr(log, "overloaded"));  /* said once per outage */
	free(log);
	server_stop();
}
END_TEST

/* The server closes after an answer, or mid-way: the next request opens
 * a new connection (counted), and nothing is lost. */
START_TEST(server_closes)
{
	const struct answer script[] = {
		{ .status = 204 },
		{ .status = 204, .close = true },
	};
	const char *kv[] = { "database=db", NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;

	server_start(script, 2, A204);
	ch = must_open(srv.port, kv);
	put_n(ch, 0, 5);
	for (int i = 0; i < 100 && stats(ch).delivered < 5; i++)
		sleep_ms(10);
	sleep_ms(50);
	put_n(ch, 5, 10);
	isp_channel_drain(ch);
	st = stats(ch);
	isp_channel_close(ch);
	ck_assert_uint_eq(st.delivered, 10);
	ck_assert_uint_eq(st.reconnects, (uint64_t)srv.conns - 1);
	ck_assert_int_ge(srv.conns, 2);
	ck_assert_str_eq(bodies(204), expect_n(0, 10));
	server_stop();
}
END_TEST

/* A kept-alive connection closed when the request came, before any
 * answer (a server restarting, an idle timeout racing the request): the
 * request is sent once more on a new connection, within the same write. */
START_TEST(closed_before_answer)
{
	const struct answer script[] = {
		{ .status = 204 },
		{ .status = 0 },
	};
	const char *kv[] = { "database=db", NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;

	server_start(script, 2, A204);
	ch = must_open(srv.port, kv);
	put_n(ch, 0, 5);
	isp_channel_drain(ch);
	st = stats(ch);
	isp_channel_close(ch);
	ck_assert_uint_eq(st.delivered, 5);
	ck_assert_uint_eq(st.retried, 0);
	ck_assert_uint_eq(st.reconnects, 1);
	ck_assert_int_eq(srv.conns, 2);
	ck_assert_str_eq(srv.req[1].body, srv.req[2].body);     /* the same request again */
	ck_assert_str_eq(bodies(204), expect_n(0, 5));
	server_stop();
}
END_TEST

/* A server that answers 503 to everything: the records wait and are
 * dropped at the shutdown deadline; the service was reached (it answered),
 * so the channel did connect. */
START_TEST(unavailable_503)
{
	const struct answer busy = { .status = 503,
				     .error = "engine: cache maximum memory size exceeded" };
	const char *kv[] = { "database=db", "shutdown-ms=300", NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;
	char *log;

	server_start(NULL, 0, busy);
	cap_start();
	ch = must_open(srv.port, kv);
	put_n(ch, 0, 4);
	isp_channel_drain(ch);
	st = stats(ch);
	ck_assert(!isp_channel_never_connected(ch));
	isp_channel_close(ch);
	log = cap_end();
	ck_assert_uint_eq(st.delivered, 0);
	ck_assert_uint_eq(st.dropped, 4);
	ck_assert_uint_ge(st.retried, 4);
	ck_assert_msg(strstr(log, "HTTP 503: engine: cache maximum memory size exceeded; "
			     "records wait in the queue, retrying"), "log: %s", log);
	ck_assert_ptr_null(strstr(log, "never connected"));
	free(log);
	server_stop();
}
END_TEST

/* A server that takes the request and does not answer: each attempt
 * gives up after timeout-ms, and the shutdown deadline holds. */
START_TEST(no_answer_bounded)
{
	const struct answer script[] = { { .status = 204 } };
	const struct answer slow = { .status = 204, .delay_ms = 3000 };
	const char *kv[] = { "database=db", "timeout-ms=200", "shutdown-ms=500", NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;
	double t0;

	server_start(script, 1, slow);
	ch = must_open(srv.port, kv);
	put_n(ch, 0, 5);
	sleep_ms(100);
	t0 = now_s();
	isp_channel_drain(ch);
	st = stats(ch);
	/* the deadline, an attempt under way and the last flush's */
	ck_assert_double_lt(now_s() - t0, 1.5);
	ck_assert_uint_eq(st.delivered, 0);
	ck_assert_uint_eq(st.dropped, 5);
	isp_channel_close(ch);
	server_stop();
}
END_TEST

/* Nothing listens: open goes on, the records are retried until the
 * shutdown deadline, then dropped; the channel never connected. */
START_TEST(refused_never_connected)
{
	const char *kv[] = { "database=db", "shutdown-ms=300", NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;
	int port = dead_port();
	char want[128], *log;

	cap_start();
	ch = must_open(port, kv);
	put_n(ch, 0, 3);
	isp_channel_drain(ch);
	st = stats(ch);
	ck_assert(isp_channel_never_connected(ch));
	isp_channel_close(ch);
	log = cap_end();
	ck_assert_uint_eq(st.delivered, 0);
	ck_assert_uint_eq(st.dropped, 3);
	ck_assert_uint_ge(st.retried, 3);
	snprintf(want, sizeof(want), "intspect: channel t: influxdb 127.0.0.1:%d: connect: "
		 "Connection refused; records wait in the queue, retrying\n", port);
	ck_assert_msg(strstr(log, want), "log: %s", log);
	snprintf(want, sizeof(want), "influxdb 127.0.0.1:%d: never connected: connect: "
		 "Connection refused\n", port);
	ck_assert_msg(strstr(log, want), "log: %s", log);
	free(log);
}
END_TEST

/* A batch larger than max-body goes in several requests of whole lines;
 * a line longer than max-body goes alone. */
START_TEST(split_at_max_body)
{
	const struct answer script[] = {
		{ .status = 204 },
		{ .status = 204, .delay_ms = 300 },     /* the rest makes one batch */
	};
	const char *kv[] = { "database=db", "max-body=1k", NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;
	char rec[2100], *want = calloc(1, 1 << 16);
	size_t off = 0, writes = 0;

	server_start(script, 2, A204);
	ch = must_open(srv.port, kv);
	for (int i = 0; i < 21; i++) {
		size_t len = i == 15 ? 2000 : 290;     /* one longer than max-body */

		memset(rec, 'a' + i % 26, len);
		snprintf(rec, 16, "m f=%02di ", i);
		rec[8] = ' ';
		rec[len] = '\0';
		put(ch, rec);
		off += (size_t)snprintf(want + off, (1 << 16) - off, "%s\n", rec);
		if (i == 0)
			wait_requests(2);       /* the open's, then this record's */
	}
	isp_channel_drain(ch);
	st = stats(ch);
	isp_channel_close(ch);
	ck_assert_uint_eq(st.delivered, 21);
	ck_assert_str_eq(bodies(204), want);
	for (size_t i = 1; i < srv.nreq; i++) {
		writes++;
		/* three lines of 290 are 872 bytes: a fourth would pass 1024 */
		if (strlen(srv.req[i].body) != 2000)
			ck_assert_uint_le(srv.req[i].body_len, 1024);
	}
	ck_assert_uint_ge(writes, 8);   /* 1, then 5 of 3, the long one, 2 */
	free(want);
	server_stop();
}
END_TEST

START_TEST(not_one_line)
{
	const char *kv[] = { "database=db", NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;
	struct isp_record empty = { .text = "", .len = 0 };
	char *log;

	server_start(NULL, 0, A204);
	cap_start();
	ch = must_open(srv.port, kv);
	put_n(ch, 0, 2);
	put(ch, "m f=1i 1\nm f=2i 2");
	ck_assert(isp_channel_submit(ch, &empty));
	put_n(ch, 2, 4);
	isp_channel_drain(ch);
	st = stats(ch);
	isp_channel_close(ch);
	log = cap_end();
	ck_assert_uint_eq(st.delivered, 4);
	ck_assert_uint_eq(st.dropped, 2);
	ck_assert_str_eq(bodies(204), expect_n(0, 4));
	ck_assert_msg(strstr(log, "a record of 17 bytes is not one line of line protocol: "
			     "not sent, counted dropped"), "log: %s", log);
	free(log);
	server_stop();
}
END_TEST

START_TEST(unauthorized_at_open)
{
	const struct answer script[] = {
		{ .status = 401, .error = "authorization failed" },
	};
	const char *kv[] = { "database=db", "user=u", "password=bad", NULL };
	char want[256];

	server_start(script, 1, A204);
	ck_assert_ptr_null(open_on(srv.port, kv));
	snprintf(want, sizeof(want), "test.conf:5:3: influxdb 127.0.0.1:%d: HTTP 401: "
		 "authorization failed", srv.port);
	ck_assert_str_eq(err, want);
	server_stop();
}
END_TEST

/* ---- UDP ------------------------------------------------------------------------ */

START_TEST(udp_datagrams)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	char kv_port[32], *big = malloc(70000), *got = calloc(1, 1 << 18), *want;
	const char *kvs[] = { "transport=udp", kv_port, "udp-payload=512", NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;
	size_t off = 0, n = 0;
	int rcv = 1 << 20;

	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	getsockname(fd, (struct sockaddr *)&a, &len);
	snprintf(kv_port, sizeof(kv_port), "port=%d", ntohs(a.sin_port));
	ch = tcfg_open("influxdb", kvs, err, sizeof(err));
	ck_assert_msg(ch != NULL, "open failed: %s", err);
	ck_assert(!isp_channel_never_connected(ch));
	put_n(ch, 0, 100);
	memset(big, 'x', 69999);
	big[69999] = '\0';
	put(ch, big);                   /* no datagram can carry it */
	memset(big, 'y', 600);
	big[600] = '\0';
	put(ch, big);                   /* longer than udp-payload: alone */
	isp_channel_drain(ch);
	st = stats(ch);
	isp_channel_close(ch);
	ck_assert_uint_eq(st.delivered, 101);
	ck_assert_uint_eq(st.dropped, 1);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		if (poll(&p, 1, 500) <= 0)
			break;
		r = recv(fd, got + off, (1 << 18) - off - 1, 0);
		ck_assert_int_gt(r, 0);
		ck_assert_msg(r <= 512 || r == 600, "datagram of %zd bytes", r);
		ck_assert_int_ne(got[off + (size_t)r - 1], '\n');
		off += (size_t)r;
		got[off++] = '\n';
		n++;
	}
	got[off] = '\0';
	want = malloc(1 << 18);
	snprintf(want, 1 << 18, "%s%s\n", expect_n(0, 100), big);
	ck_assert_str_eq(got, want);
	/* lines of 15 or 16 bytes, up to 30 to a datagram, as the batches
	 * allow; then the long one */
	ck_assert_uint_le(n, 20);
	close(fd);
	free(big);
	free(got);
	free(want);
}
END_TEST

/* ---- keys and check mode -------------------------------------------------------- */

static void open_fails(const char *const *kvs, const char *want)
{
	ck_assert_ptr_null(tcfg_open("influxdb", kvs, err, sizeof(err)));
	ck_assert_str_eq(err, want);
}

START_TEST(key_errors)
{
	const char *typo[] = { "databse=x", NULL };
	const char *nodb[] = { "host=127.0.0.1", NULL };
	const char *udpdb[] = { "transport=udp", "database=x", NULL };
	const char *payload[] = { "database=x", "udp-payload=1400", NULL };
	const char *tr[] = { "transport=tcp", NULL };
	const char *port[] = { "database=x", "port=0", NULL };
	const char *tmo[] = { "database=x", "timeout-ms=0", NULL };
	const char *user[] = { "database=x", "user=u", NULL };
	const char *body[] = { "database=x", "max-body=12", NULL };
	const char *small[] = { "transport=udp", "udp-payload=100", NULL };
	const char *fmt[] = { "database=x", "format=json", NULL };
	const char *twice[] = { "database=x", "database=y", NULL };
	const char *cdb[] = { "database=x", "create-database=maybe", NULL };
	const char *nohost[] = { "database=x", "host=no-such-host.invalid", NULL };
	const char *gzudp[] = { "transport=udp", "gzip=true", NULL };
	const char *gzbad[] = { "database=x", "gzip=yes please", NULL };

	open_fails(typo, "test.conf:2:3: unknown key 'databse' for an influxdb output (did "
		   "you mean 'database'?); known: enable, queue-records, queue-bytes, "
		   "drop-policy, batch, flush-ms, shutdown-ms, format, host, port, database, "
		   "retention-policy, user, password, transport, timeout-ms, create-database, "
		   "max-body, udp-payload, gzip");
	open_fails(nodb, "test.conf:1:1: an influxdb output needs 'database' (the database "
		   "records are written into)");
	open_fails(udpdb, "test.conf:3:3: database applies to transport = http only (a UDP "
		   "listener writes into the database of its [[udp]] section)");
	open_fails(payload, "test.conf:3:3: udp-payload applies to transport = udp only");
	open_fails(tr, "test.conf:2:3: bad value 'tcp' for transport: expected http or udp");
	open_fails(port, "test.conf:3:3: bad value '0' for port: expected an integer from 1 "
		   "to 65535");
	open_fails(tmo, "test.conf:3:3: bad value '0' for timeout-ms: expected an integer "
		   "from 1 to 600000");
	open_fails(user, "test.conf:3:3: user needs a password");
	open_fails(body, "test.conf:3:3: bad value '12' for max-body: expected a size from "
		   "1k to 1G (bytes, or with k, M, G)");
	open_fails(small, "test.conf:3:3: bad value '100' for udp-payload: expected a size "
		   "from 512 to 65507 (bytes, or with k, M, G)");
	open_fails(fmt, "test.conf:3:3: an influxdb output writes format = influx only");
	open_fails(twice, "test.conf:3:3: duplicate key 'database' (first at line 2)");
	open_fails(cdb, "test.conf:3:3: bad value 'maybe' for create-database: expected "
		   "true or false");
	open_fails(gzudp, "test.conf:3:3: gzip applies to transport = http only");
	open_fails(gzbad, "test.conf:3:3: bad value 'yes please' for gzip: expected true or false");
	/* (where the resolver answers: without one, the name is not known
	 * not to exist) */
	struct addrinfo *ai = NULL;

	if (getaddrinfo("no-such-host.invalid", "80", NULL, &ai) == EAI_NONAME) {
		ck_assert_ptr_null(tcfg_open("influxdb", nohost, err, sizeof(err)));
		ck_assert_msg(strncmp(err, "test.conf:3:3: cannot resolve no-such-host.invalid: ",
				      52) == 0, "%s", err);
	}
	if (ai)
		freeaddrinfo(ai);
}
END_TEST

/* Check mode validates and connects to nothing: not to a server that
 * would answer (no connection accepted), nor fails for one that is down. */
START_TEST(check_mode_connects_nothing)
{
	char kv_port[32];
	const char *ok[] = { kv_port, "database=nodb", "create-database=true", "format=influx",
			     "batch=1000", NULL };
	const char *udp[] = { kv_port, "transport=udp", "udp-payload=8k", NULL };
	const char *bad[] = { kv_port, "database=x", "timeout-ms=x", NULL };

	server_start(NULL, 0, A204);
	snprintf(kv_port, sizeof(kv_port), "port=%d", srv.port);
	ck_assert_int_eq(tcfg_check("influxdb", ok, err, sizeof(err)), 0);
	ck_assert_int_eq(tcfg_check("influxdb", bad, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "test.conf:4:3: bad value 'x' for timeout-ms: expected an "
			 "integer from 1 to 600000");
	ck_assert_int_eq(tcfg_check("influxdb", udp, err, sizeof(err)), 0);
	sleep_ms(150);
	ck_assert_int_eq(srv.conns, 0);
	ck_assert_uint_eq(nrequests(), 0);
	server_stop();
	snprintf(kv_port, sizeof(kv_port), "port=%d", dead_port());
	ck_assert_int_eq(tcfg_check("influxdb", ok, err, sizeof(err)), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("influxdb");
	TCase *tc = tcase_create("influxdb");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, delivered_204);
	tcase_add_test(tc, gzip_bodies);
	tcase_add_test(tc, refused_400);
	tcase_add_test(tc, refused_400_batch);
	tcase_add_test(tc, database_not_found);
	tcase_add_test(tc, create_database);
	tcase_add_test(tc, retry_500_then_204);
	tcase_add_test(tc, server_closes);
	tcase_add_test(tc, closed_before_answer);
	tcase_add_test(tc, unavailable_503);
	tcase_add_test(tc, no_answer_bounded);
	tcase_add_test(tc, refused_never_connected);
	tcase_add_test(tc, split_at_max_body);
	tcase_add_test(tc, not_one_line);
	tcase_add_test(tc, unauthorized_at_open);
	tcase_add_test(tc, udp_datagrams);
	tcase_add_test(tc, key_errors);
	tcase_add_test(tc, check_mode_connects_nothing);
	suite_add_tcase(s, tc);
	return check_run(s, CK_FORK_GETENV);
}
