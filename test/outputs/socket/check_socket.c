/*
 * check_socket.c - the "socket" channel type against real sockets on
 * loopback, the test being the reader: exact records over TCP, UDP, Unix
 * stream and datagram sockets; a line cut by a full socket resumed
 * mid-record; a reader that stops reading costs bounded time; readers that
 * close and come back (reconnects counted, nothing lost); datagrams too
 * large for UDP skipped; ICMP port unreachable not fatal; key errors with
 * line:col. MMT-Probe's words (BOTH, type names in any case,
 * server-address) and check mode are in check_socket_mmt.c, of the same
 * program; intspect end to end is test/outputs/socket/run.sh.
 */
#include <check.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../../outputs/channel.h"
#include "../tcfg.h"
#include "sockutil.h"
#include "../../check_run.h"

/* ---- exact records -------------------------------------------------------- */

START_TEST(tcp_exact_records)
{
	int port, lfd = tcp_listener(&port), cfd;
	char kv_port[32];
	const char *kvs[] = { "type=TCP", "hostname=127.0.0.1", kv_port, NULL };
	struct isp_channel *ch;
	const char *want = "{\"a\":1}\n\n1,2,\"x y\"\n";
	char *got;

	snprintf(kv_port, sizeof(kv_port), "port=%d", port);
	ch = must_open(kvs);
	put(ch, "{\"a\":1}", 7);
	put(ch, "", 0);
	put(ch, "1,2,\"x y\"", 9);
	cfd = accept_within(lfd, 2000);
	isp_channel_close(ch);
	got = read_stream(cfd, 4096, 2000);
	ck_assert_str_eq(got, want);
	free(got);
	close(cfd);
	close(lfd);
}
END_TEST

START_TEST(unix_stream_exact_records)
{
	int lfd = unix_socket(SOCK_STREAM, true), cfd;
	char kv[160];
	const char *kvs[] = { "type=unix", kv, NULL };
	struct isp_channel *ch;
	char *got;

	snprintf(kv, sizeof(kv), "path=%s", sock_path);
	ch = must_open(kvs);
	put_n(ch, 0, 500);
	cfd = accept_within(lfd, 2000);
	got = read_stream(cfd, strlen(expect_n(0, 500)), 3000);
	ck_assert_str_eq(got, expect_n(0, 500));
	free(got);
	isp_channel_close(ch);
	close(cfd);
	close(lfd);
}
END_TEST

START_TEST(udp_one_record_per_datagram)
{
	int rfd = udp_receiver(0);
	char kv_port[32];
	const char *kvs[] = { "type=udp", "hostname=127.0.0.1", kv_port, NULL };
	struct isp_channel *ch;
	char one[64];
	ssize_t r;

	snprintf(kv_port, sizeof(kv_port), "port=%d", udp_port(rfd));
	ch = must_open(kvs);
	put_n(ch, 0, 100);
	isp_channel_close(ch);
	/* Datagram boundaries: each holds exactly one record and its newline. */
	r = recv(rfd, one, sizeof(one), 0);
	ck_assert_int_eq(r, (ssize_t)strlen("{\"rec\":0}\n"));
	ck_assert_str_eq(read_dgrams(rfd, 99, 2000), expect_n(1, 100));
	close(rfd);
}
END_TEST

START_TEST(unix_dgram_exact_records)
{
	int rfd = unix_socket(SOCK_DGRAM, false);
	char kv[160];
	const char *kvs[] = { "type=unix-dgram", kv, NULL };
	struct isp_channel *ch;

	snprintf(kv, sizeof(kv), "descriptor=%s", sock_path);
	ch = must_open(kvs);
	put_n(ch, 0, 100);
	/* Read while it sends: a Unix datagram queue holds few datagrams
	 * (net.unix.max_dgram_qlen), the sender waits for room. */
	ck_assert_str_eq(read_dgrams(rfd, 100, 3000), expect_n(0, 100));
	isp_channel_close(ch);
	close(rfd);
}
END_TEST

/* ---- full sockets ----------------------------------------------------------- */

/* A reader that does not read: records of 10 kB against 8 kB of socket
 * buffer, so writes stop mid-record; once it reads, every line arrives
 * whole, in order, once. */
START_TEST(partial_write_resumes_mid_record)
{
	enum { N = 60, LEN = 10000 };
	int lfd = unix_socket(SOCK_STREAM, true), cfd;
	char kv[160], *rec = malloc(LEN), *want = malloc(N * (LEN + 1) + 1), *got;
	const char *kvs[] = { "type=unix", kv, "send-buffer=4k", "flush-ms=20", NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;

	snprintf(kv, sizeof(kv), "path=%s", sock_path);
	ch = must_open(kvs);
	for (int i = 0; i < N; i++) {
		memset(rec, 'a' + i % 26, LEN);
		snprintf(rec, 16, "%06d", i);
		rec[6] = ' ';
		put(ch, rec, LEN);
		memcpy(want + (size_t)i * (LEN + 1), rec, LEN);
		want[(size_t)i * (LEN + 1) + LEN] = '\n';
	}
	want[N * (LEN + 1)] = '\0';
	cfd = accept_within(lfd, 2000);
	sleep_ms(300);
	st = stats(ch);
	ck_assert_uint_lt(st.delivered, N);
	ck_assert_uint_gt(st.retried, 0);       /* cut short, offered again */
	got = read_stream(cfd, N * (LEN + 1), 10000);
	ck_assert_uint_eq(strlen(got), N * (LEN + 1));
	ck_assert(memcmp(got, want, N * (LEN + 1)) == 0);
	isp_channel_close(ch);
	free(got);
	free(want);
	free(rec);
	close(cfd);
	close(lfd);
}
END_TEST

/* The same stalled reader at close: the channel gives up at shutdown-ms
 * (each write waits at most flush-ms), counting the rest as dropped. */
START_TEST(stalled_reader_bounded)
{
	int port, lfd = tcp_listener(&port), cfd;
	char kv_port[32], big[4000];
	const char *kvs[] = { "type=tcp", "hostname=127.0.0.1", kv_port, "send-buffer=4k",
			      "flush-ms=50", "shutdown-ms=200", NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;
	double t0;

	snprintf(kv_port, sizeof(kv_port), "port=%d", port);
	memset(big, 'x', sizeof(big));
	ch = must_open(kvs);
	for (int i = 0; i < 2000; i++)
		put(ch, big, sizeof(big));
	cfd = accept_within(lfd, 2000);
	sleep_ms(200);
	t0 = now_s();
	isp_channel_drain(ch);
	ck_assert_double_lt(now_s() - t0, 0.6);
	st = stats(ch);
	ck_assert_uint_eq(st.queued, 2000);
	ck_assert_uint_eq(st.delivered + st.dropped, 2000);
	ck_assert_uint_gt(st.dropped, 0);
	isp_channel_close(ch);
	close(cfd);
	close(lfd);
}
END_TEST

/* ---- readers that leave and come back ------------------------------------------- */

/* The reader reads 50 records and closes; the next records must not go
 * into the closed connection (the first send after a FIN succeeds and is
 * lost) but to the next one. */
START_TEST(tcp_reader_closes_reconnect)
{
	int port, lfd = tcp_listener(&port), cfd;
	char kv_port[32], *got;
	const char *kvs[] = { "type=tcp", "hostname=localhost", kv_port, "flush-ms=20", NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;

	snprintf(kv_port, sizeof(kv_port), "port=%d", port);
	ch = must_open(kvs);
	put_n(ch, 0, 50);
	cfd = accept_within(lfd, 2000);
	got = read_stream(cfd, strlen(expect_n(0, 50)), 2000);
	ck_assert_str_eq(got, expect_n(0, 50));
	free(got);
	close(cfd);
	sleep_ms(50);                   /* the FIN arrives */
	put_n(ch, 50, 100);
	cfd = accept_within(lfd, 3000);
	got = read_stream(cfd, strlen(expect_n(50, 100)), 3000);
	ck_assert_str_eq(got, expect_n(50, 100));
	free(got);
	isp_channel_drain(ch);
	st = stats(ch);
	ck_assert_uint_eq(st.reconnects, 1);
	ck_assert_uint_eq(st.delivered, 100);
	isp_channel_close(ch);
	close(cfd);
	close(lfd);
}
END_TEST

START_TEST(unix_reader_gone_and_back)
{
	int lfd = unix_socket(SOCK_STREAM, true), cfd;
	char kv[160], *got;
	const char *kvs[] = { "type=unix", kv, "flush-ms=20", NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;

	snprintf(kv, sizeof(kv), "path=%s", sock_path);
	ch = must_open(kvs);
	put_n(ch, 0, 10);
	cfd = accept_within(lfd, 2000);
	got = read_stream(cfd, strlen(expect_n(0, 10)), 2000);
	ck_assert_str_eq(got, expect_n(0, 10));
	free(got);
	close(cfd);
	close(lfd);                     /* the reader is gone altogether */
	unlink(sock_path);
	put_n(ch, 10, 20);
	sleep_ms(300);
	st = stats(ch);
	ck_assert_uint_eq(st.delivered, 10);    /* waiting, not lost */
	ck_assert_uint_eq(st.dropped, 0);
	lfd = unix_socket(SOCK_STREAM, true);
	cfd = accept_within(lfd, 3000);
	got = read_stream(cfd, strlen(expect_n(10, 20)), 3000);
	ck_assert_str_eq(got, expect_n(10, 20));
	free(got);
	ck_assert(wait_delivered(ch, 20));
	st = stats(ch);
	ck_assert_uint_eq(st.reconnects, 1);
	isp_channel_close(ch);
	close(cfd);
	close(lfd);
}
END_TEST

START_TEST(unix_dgram_reader_gone_and_back)
{
	int rfd = unix_socket(SOCK_DGRAM, false);
	char kv[160];
	const char *kvs[] = { "type=unix-dgram", kv, "flush-ms=20", NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;

	snprintf(kv, sizeof(kv), "path=%s", sock_path);
	ch = must_open(kvs);
	put_n(ch, 0, 10);
	ck_assert_str_eq(read_dgrams(rfd, 10, 2000), expect_n(0, 10));
	close(rfd);
	unlink(sock_path);
	put_n(ch, 10, 20);
	sleep_ms(300);
	st = stats(ch);
	ck_assert_uint_eq(st.delivered, 10);
	ck_assert_uint_eq(st.dropped, 0);
	rfd = unix_socket(SOCK_DGRAM, false);
	ck_assert_str_eq(read_dgrams(rfd, 10, 3000), expect_n(10, 20));
	st = stats(ch);
	ck_assert_uint_eq(st.reconnects, 1);
	isp_channel_close(ch);
	close(rfd);
}
END_TEST

/* A unix-dgram record larger than the socket takes (EMSGSIZE: above its
 * send buffer) is skipped as UDP's oversize ones are: the records around
 * it arrive, it counts delivered (it left the queue for good), and
 * stderr says so at the first and gives the number at close. */
START_TEST(unix_dgram_oversize_skipped)
{
	int rfd = unix_socket(SOCK_DGRAM, false);
	char kv[160], *said, *big = malloc(400000);
	const char *kvs[] = { "type=unix-dgram", kv, NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;

	ck_assert(big);
	memset(big, 'x', 400000);
	snprintf(kv, sizeof(kv), "path=%s", sock_path);
	tcfg_stderr_begin();
	ch = must_open(kvs);
	put(ch, "a", 1);
	put(ch, big, 400000);
	put(ch, "b", 1);
	isp_channel_drain(ch);
	st = stats(ch);
	isp_channel_close(ch);
	said = tcfg_stderr_end();
	ck_assert_uint_eq(st.delivered, 3);
	ck_assert_uint_eq(st.dropped, 0);
	ck_assert_str_eq(read_dgrams(rfd, 1, 1000), "a\n");
	ck_assert_str_eq(read_dgrams(rfd, 1, 1000), "b\n");
	ck_assert_msg(strstr(said, "a record of 400001 bytes does not fit in one datagram") &&
		      strstr(said, ": 1 records too large for a datagram were not sent (counted as delivered)"),
		      "said: %s", said);
	free(said);
	free(big);
	close(rfd);
}
END_TEST

/* ---- UDP specifics -------------------------------------------------------------- */

START_TEST(udp_oversize_skipped)
{
	int rfd = udp_receiver(0);
	char kv_port[32], *big = malloc(70000);
	const char *kvs[] = { "type=udp", "hostname=127.0.0.1", kv_port, NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;

	memset(big, 'x', 70000);
	snprintf(kv_port, sizeof(kv_port), "port=%d", udp_port(rfd));
	ch = must_open(kvs);
	put(ch, "a", 1);
	put(ch, big, 70000);
	put(ch, big, 65506);                    /* 65507 with its newline: fits */
	put(ch, "b", 1);
	isp_channel_drain(ch);
	st = stats(ch);
	/* The channel layer has no way for a type to count a drop: the record
	 * left the queue for good, it counts as delivered (socket.c says so on
	 * stderr). */
	ck_assert_uint_eq(st.delivered, 4);
	ck_assert_uint_eq(st.dropped, 0);
	isp_channel_close(ch);
	ck_assert_str_eq(read_dgrams(rfd, 1, 1000), "a\n");
	ck_assert_uint_eq(strlen(read_dgrams(rfd, 1, 1000)), 65507);
	ck_assert_str_eq(read_dgrams(rfd, 1, 1000), "b\n");
	free(big);
	close(rfd);
}
END_TEST

/* Nobody listens: ICMP port unreachable comes back (ECONNREFUSED on the
 * next send). Not fatal: no reconnect, no backoff; a reader that binds
 * later gets what is sent from then on. */
START_TEST(udp_refused_not_fatal)
{
	int rfd = udp_receiver(0), port = udp_port(rfd);
	char kv_port[32];
	const char *kvs[] = { "type=udp", "hostname=127.0.0.1", kv_port, "flush-ms=20", NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;

	close(rfd);                     /* a port nobody has */
	snprintf(kv_port, sizeof(kv_port), "port=%d", port);
	ch = must_open(kvs);
	for (int i = 0; i < 20; i++) {
		put_n(ch, i * 10, i * 10 + 10);
		sleep_ms(5);
	}
	ck_assert(wait_delivered(ch, 200));
	rfd = udp_receiver(port);
	put_n(ch, 200, 300);
	ck_assert(wait_delivered(ch, 300));
	ck_assert_str_eq(read_dgrams(rfd, 100, 2000), expect_n(200, 300));
	st = stats(ch);
	ck_assert_uint_eq(st.dropped, 0);
	ck_assert_uint_eq(st.reconnects, 0);
	isp_channel_close(ch);
	close(rfd);
}
END_TEST

/* ---- keys ----------------------------------------------------------------------- */

static void open_fails(const char *const *kvs, const char *want)
{
	struct isp_channel *ch = tcfg_open("socket", kvs, err, sizeof(err));

	ck_assert_ptr_null(ch);
	ck_assert_str_eq(err, want);
}

START_TEST(key_errors)
{
	const char *typo[] = { "type=tcp", "port=5000", "hostnme=x", NULL };
	const char *both[] = { "enable=true", "type=BOTH", NULL };
	const char *alias[] = { "type=udp", "hostname=a", "port=1", "server-address=b", NULL };
	const char *both_path[] = { "type=both", "port=5000", "descriptor=", NULL };
	const char *bad[] = { "type=udp4", NULL };
	const char *noport[] = { "hostname=127.0.0.1", "type=tcp", NULL };
	const char *bigport[] = { "type=udp", "port=70000", NULL };
	const char *notype[] = { "port=5000", NULL };
	const char *twice[] = { "type=unix", "descriptor=/tmp/a", "path=/tmp/b", NULL };
	const char *sndbuf[] = { "type=unix", "send-buffer=12", NULL };
	const char *tmo[] = { "type=unix", "connect-timeout-ms=0", NULL };
	char longpath[160], kvlong[180];
	const char *toolong[] = { "type=unix-dgram", kvlong, NULL };

	open_fails(typo, "test.conf:4:3: unknown key 'hostnme' for a socket output "
		   "(did you mean 'hostname'?); known: enable, queue-records, queue-bytes, "
		   "drop-policy, batch, flush-ms, shutdown-ms, format, type, hostname, "
		   "server-address, port, descriptor, path, connect-timeout-ms, send-buffer");
	open_fails(both, "test.conf:3:3: a both socket output needs 'port' (1 to 65535) "
		   "for its TCP connection");
	open_fails(alias, "test.conf:5:3: 'hostname' and 'server-address' are the same "
		   "setting (server-address is MMT-Probe's name); give one");
	open_fails(both_path, "test.conf:4:3: bad Unix socket path '': 1 to 107 bytes");
	open_fails(bad, "test.conf:2:3: bad value 'udp4' for type: expected udp, tcp, unix, "
		   "unix-dgram or both (or MMT-Probe's UDP, TCP, INTERNET, UNIX, BOTH)");
	open_fails(noport, "test.conf:3:3: a tcp socket output needs 'port' (1 to 65535)");
	open_fails(bigport, "test.conf:3:3: bad value '70000' for port: expected an "
		   "integer from 0 to 65535");
	open_fails(notype, "test.conf:2:3: a socket output needs 'type': udp, tcp, unix, "
		   "unix-dgram or both");
	open_fails(twice, "test.conf:4:3: 'path' and 'descriptor' are the same setting "
		   "(descriptor is MMT-Probe's name); give one");
	open_fails(sndbuf, "test.conf:3:3: bad value '12' for send-buffer: expected a size "
		   "from 1k to 1G (bytes, or with k, M, G)");
	open_fails(tmo, "test.conf:3:3: bad value '0' for connect-timeout-ms: expected an "
		   "integer from 1 to 600000");
	memset(longpath, 'p', 120);
	longpath[0] = '/';
	longpath[120] = '\0';
	snprintf(kvlong, sizeof(kvlong), "path=%s", longpath);
	snprintf(err, sizeof(err), "test.conf:3:3: bad Unix socket path '%s': 1 to 107 bytes",
		 longpath);
	char want[sizeof(err)];

	memcpy(want, err, sizeof(want));
	open_fails(toolong, want);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("socket");
	TCase *tc = tcase_create("socket");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, tcp_exact_records);
	tcase_add_test(tc, unix_stream_exact_records);
	tcase_add_test(tc, udp_one_record_per_datagram);
	tcase_add_test(tc, unix_dgram_exact_records);
	tcase_add_test(tc, partial_write_resumes_mid_record);
	tcase_add_test(tc, stalled_reader_bounded);
	tcase_add_test(tc, tcp_reader_closes_reconnect);
	tcase_add_test(tc, unix_reader_gone_and_back);
	tcase_add_test(tc, unix_dgram_reader_gone_and_back);
	tcase_add_test(tc, unix_dgram_oversize_skipped);
	tcase_add_test(tc, udp_oversize_skipped);
	tcase_add_test(tc, udp_refused_not_fatal);
	tcase_add_test(tc, key_errors);
	socket_mmt_tests(tc);
	suite_add_tcase(s, tc);
	return check_run(s, CK_FORK_GETENV);
}
