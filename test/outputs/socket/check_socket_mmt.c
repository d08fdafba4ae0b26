/*
 * check_socket_mmt.c - the socket channel with MMT-Probe's words, against
 * real sockets on loopback: type BOTH (a Unix and a TCP reader getting the
 * same records; a reader away holds them in the queue, nothing is sent
 * twice to the other, nothing counted delivered that one lacks); every
 * type name in any case reaching the right kind of reader; server-address
 * for hostname; MMT-Probe's sections as written; check mode connecting
 * nothing. Part of the check_socket program (its main adds these).
 */
#include <check.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../../outputs/channel.h"
#include "../tcfg.h"
#include "sockutil.h"

/* ---- BOTH: a Unix stream socket and TCP, every record on both ------------------ */

START_TEST(both_exact_records)
{
	int port, tl = tcp_listener(&port), ul = unix_socket(SOCK_STREAM, true), tc, uc;
	char kv_port[32], kv_desc[160];
	const char *kvs[] = { "type=Both", kv_desc, "server-address=127.0.0.1", kv_port, NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;
	char *got;

	snprintf(kv_port, sizeof(kv_port), "port=%d", port);
	snprintf(kv_desc, sizeof(kv_desc), "descriptor=%s", sock_path);
	ch = must_open(kvs);
	put_n(ch, 0, 500);
	uc = accept_within(ul, 2000);
	tc = accept_within(tl, 2000);
	got = read_stream(uc, strlen(expect_n(0, 500)), 3000);
	ck_assert_str_eq(got, expect_n(0, 500));
	free(got);
	got = read_stream(tc, strlen(expect_n(0, 500)), 3000);
	ck_assert_str_eq(got, expect_n(0, 500));
	free(got);
	isp_channel_drain(ch);
	st = stats(ch);
	ck_assert_uint_eq(st.delivered, 500);
	ck_assert_uint_eq(st.dropped, 0);
	ck_assert(!isp_channel_never_connected(ch));
	isp_channel_close(ch);
	close(uc);
	close(tc);
	close(ul);
	close(tl);
}
END_TEST

/* Nothing is reported delivered that one reader did not get: while the
 * Unix reader is away the records wait in the queue (the TCP reader gets
 * each once, not again when the records are offered again); when it
 * comes, both get everything; a TCP reader that leaves is reconnected to
 * and given the rest, the Unix reader nothing twice. */
START_TEST(both_one_reader_away)
{
	int port, tl = tcp_listener(&port), ul, tc, uc;
	char kv_port[32], kv_desc[160], *got;
	const char *kvs[] = { "type=BOTH", kv_desc, "hostname=127.0.0.1", kv_port,
			      "flush-ms=20", "batch=16", NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;

	snprintf(kv_port, sizeof(kv_port), "port=%d", port);
	snprintf(kv_desc, sizeof(kv_desc), "path=%s", sock_path);
	ch = must_open(kvs);
	put_n(ch, 0, 100);
	tc = accept_within(tl, 2000);
	sleep_ms(300);
	st = stats(ch);
	ck_assert_uint_eq(st.delivered, 0);     /* the Unix reader has none */
	ck_assert_uint_eq(st.dropped, 0);
	ck_assert_uint_eq(st.queue_depth, 100);
	ck_assert(isp_channel_never_connected(ch));
	got = read_stream(tc, strlen(expect_n(0, 16)) + 1, 300);
	ck_assert_str_eq(got, expect_n(0, 16));  /* one batch, not repeated */
	free(got);

	ul = unix_socket(SOCK_STREAM, true);
	uc = accept_within(ul, 3000);
	got = read_stream(uc, strlen(expect_n(0, 100)), 3000);
	ck_assert_str_eq(got, expect_n(0, 100));
	free(got);
	got = read_stream(tc, strlen(expect_n(16, 100)), 3000);
	ck_assert_str_eq(got, expect_n(16, 100));
	free(got);
	ck_assert(wait_delivered(ch, 100));
	ck_assert(!isp_channel_never_connected(ch));

	close(tc);                              /* the TCP reader leaves */
	sleep_ms(50);
	put_n(ch, 100, 200);
	tc = accept_within(tl, 3000);
	got = read_stream(tc, strlen(expect_n(100, 200)), 3000);
	ck_assert_str_eq(got, expect_n(100, 200));
	free(got);
	got = read_stream(uc, strlen(expect_n(100, 200)) + 1, 500);
	ck_assert_str_eq(got, expect_n(100, 200));
	free(got);
	isp_channel_drain(ch);
	st = stats(ch);
	ck_assert_uint_eq(st.delivered, 200);
	ck_assert_uint_eq(st.dropped, 0);
	ck_assert_uint_eq(st.reconnects, 1);
	isp_channel_close(ch);
	close(uc);
	close(tc);
	close(ul);
	close(tl);
}
END_TEST

/* A reader away until the end: the records are counted dropped at the
 * shutdown deadline (the other reader got them, but not both). */
START_TEST(both_reader_away_at_close)
{
	int port, tl = tcp_listener(&port), tc;
	char kv_port[32], kv_desc[160], *got;
	const char *kvs[] = { "type=both", kv_desc, "hostname=127.0.0.1", kv_port,
			      "flush-ms=20", "shutdown-ms=200", NULL };
	struct isp_channel *ch;
	struct isp_channel_stats st;

	snprintf(kv_port, sizeof(kv_port), "port=%d", port);
	snprintf(kv_desc, sizeof(kv_desc), "descriptor=%s", sock_path);
	ch = must_open(kvs);
	put_n(ch, 0, 50);
	tc = accept_within(tl, 2000);
	isp_channel_drain(ch);
	st = stats(ch);
	ck_assert_uint_eq(st.queued, 50);
	ck_assert_uint_eq(st.delivered, 0);
	ck_assert_uint_eq(st.dropped, 50);
	ck_assert_uint_eq(st.queue_depth, 0);
	isp_channel_close(ch);
	got = read_stream(tc, strlen(expect_n(0, 50)) + 1, 500);
	ck_assert_str_eq(got, expect_n(0, 50));  /* each once */
	free(got);
	close(tc);
	close(tl);
}
END_TEST

/* ---- type names ------------------------------------------------------------------ */

/* One record through a channel of type `word` to a reader of the kind it
 * names: the word selects the right socket, in any case. */
static void one_record_via(const char *word)
{
	char kv_type[48], kv_port[32], kv_desc[160], *got;
	const char *kvs[] = { kv_type, kv_desc, "hostname=127.0.0.1", kv_port, NULL };
	int port = 0, tl = -1, ul = -1, rfd = -1, fd;
	bool inet = strcasecmp(word, "tcp") == 0 || strcasecmp(word, "internet") == 0;
	bool both = strcasecmp(word, "both") == 0;
	struct isp_channel *ch;

	if (inet || both)
		tl = tcp_listener(&port);
	if (strcasecmp(word, "unix") == 0 || both)
		ul = unix_socket(SOCK_STREAM, true);
	if (strcasecmp(word, "udp") == 0) {
		rfd = udp_receiver(0);
		port = udp_port(rfd);
	}
	if (strcasecmp(word, "unix-dgram") == 0)
		rfd = unix_socket(SOCK_DGRAM, false);
	snprintf(kv_type, sizeof(kv_type), "type=%s", word);
	snprintf(kv_port, sizeof(kv_port), "port=%d", port ? port : 1);
	snprintf(kv_desc, sizeof(kv_desc), "descriptor=%s", sock_path);
	ch = must_open(kvs);
	put(ch, "x", 1);
	if (rfd >= 0) {
		ck_assert_str_eq(read_dgrams(rfd, 1, 2000), "x\n");
		close(rfd);
	}
	for (int *l = (int[]){ tl, ul }, i = 0; i < 2; i++) {
		if (l[i] < 0)
			continue;
		fd = accept_within(l[i], 2000);
		got = read_stream(fd, 2, 2000);
		ck_assert_msg(strcmp(got, "x\n") == 0, "type %s: got '%s'", word, got);
		free(got);
		close(fd);
		close(l[i]);
	}
	isp_channel_close(ch);
}

START_TEST(type_names_any_case)
{
	static const char *const words[] = {
		"udp", "UDP", "Udp", "tcp", "TCP", "tCp", "internet", "INTERNET",
		"Internet", "unix", "UNIX", "Unix", "unix-dgram", "UNIX-DGRAM",
		"Unix-Dgram", "both", "BOTH", "Both", NULL
	};

	for (int i = 0; words[i]; i++)
		one_record_via(words[i]);
}
END_TEST

START_TEST(check_mode_connects_nothing)
{
	int port, tl = tcp_listener(&port), ul = unix_socket(SOCK_STREAM, true);
	char kv_port[32], kv_desc[160];
	const char *ok[] = { "type=BOTH", kv_desc, "server-address=127.0.0.1", kv_port, NULL };
	const char *twice[] = { "type=BOTH", kv_desc, "server-address=127.0.0.1",
				"hostname=localhost", kv_port, NULL };
	struct pollfd p[2] = { { .fd = tl, .events = POLLIN }, { .fd = ul, .events = POLLIN } };

	snprintf(kv_port, sizeof(kv_port), "port=%d", port);
	snprintf(kv_desc, sizeof(kv_desc), "descriptor=%s", sock_path);
	ck_assert_msg(tcfg_check("socket", ok, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(tcfg_check("socket", twice, err, sizeof(err)), -1);
	ck_assert_str_eq(err, "test.conf:5:3: 'hostname' and 'server-address' are the same "
			 "setting (server-address is MMT-Probe's name); give one");
	ck_assert_int_eq(poll(p, 2, 100), 0);   /* nobody connected */
	close(tl);
	close(ul);
}
END_TEST

/* MMT-Probe's section as it writes it: every key, whatever the type. */
START_TEST(mmt_keys_accepted)
{
	const char *unix_kvs[] = { "enable=true", "type=UNIX", "descriptor=/tmp/x.sock",
				   "port=0", "hostname=localhost", NULL };
	const char *inet_kvs[] = { "type=internet", "descriptor=/tmp/x.sock", "port=5000",
				   "hostname=localhost", "connect-timeout-ms=50",
				   "send-buffer=64k", NULL };
	const char *both_kvs[] = { "enable=true", "type=BOTH", "descriptor=/tmp/x.sock",
				   "hostname=localhost", "port=5000", NULL };
	const char *old_kvs[] = { "type=TCP", "server-address=localhost", "port=5000", NULL };
	const char *off_kvs[] = { "enable=false", "type=BOTH", NULL };

	isp_channel_close(must_open(unix_kvs));
	isp_channel_close(must_open(inet_kvs));
	isp_channel_close(must_open(both_kvs));
	isp_channel_close(must_open(old_kvs));
	/* A disabled section's type keys are not checked. */
	isp_channel_close(must_open(off_kvs));
}
END_TEST

void socket_mmt_tests(TCase *tc)
{
	tcase_add_test(tc, both_exact_records);
	tcase_add_test(tc, both_one_reader_away);
	tcase_add_test(tc, both_reader_away_at_close);
	tcase_add_test(tc, type_names_any_case);
	tcase_add_test(tc, check_mode_connects_nothing);
	tcase_add_test(tc, mmt_keys_accepted);
}
