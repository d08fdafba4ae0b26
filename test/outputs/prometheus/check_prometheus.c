/*
 * check_prometheus.c - the "prometheus" channel type through the channel
 * API, scraped over loopback by a small HTTP client in the test: the
 * series that chosen line-protocol records make (names, labels, per-hop
 * fields, escaping, updates), an expiry record removing its series,
 * max-series, the program's counters (isp_prom_set_self), the HTTP answers
 * (404, 405, 400, HEAD, a query string, another path; one connection at
 * a time, 5 s at most), key errors with
 * line:col, a port in use, and check mode binding nothing. The expected
 * exposition lines are written out by hand from the format's rules. The
 * real Prometheus is test/outputs/prometheus/run.sh's.
 */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../../../outputs/prometheus.h"
#include "../tcfg.h"
#include "../../check_run.h"

/* A port free on 127.0.0.1 a moment ago. */
static unsigned free_port(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	close(fd);
	return ntohs(a.sin_port);
}

/* Send `request` as is; the whole answer, malloc'd. */
static char *http(unsigned port, const char *request)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);

	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(send(fd, request, strlen(request), 0), (ssize_t)strlen(request));
	for (;;) {
		if (n + 1 == cap) {
			char *more = realloc(buf, cap *= 2);
			ck_assert_ptr_nonnull(more);
			buf = more;
		}
		ssize_t r = recv(fd, buf + n, cap - 1 - n, 0);
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = 0;
	close(fd);
	return buf;
}

static char *scrape(unsigned port)
{
	return http(port, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
}

static struct isp_channel *open_at(unsigned port, const char *extra1, const char *extra2)
{
	char listen[64], err[512];
	const char *extra[] = { "flush-ms=5", extra1, extra2, NULL };

	snprintf(listen, sizeof(listen), "listen=127.0.0.1:%u", port);
	struct isp_channel *ch = tcfg_open_with("prometheus", listen, extra, err, sizeof(err));
	ck_assert_msg(ch != NULL, "open: %s", err);
	return ch;
}

static void put(struct isp_channel *ch, const char *line)
{
	struct isp_record r = { .report = "r", .text = line, .len = strlen(line) };

	ck_assert(isp_channel_submit(ch, &r));
}

/* Wait until the channel has taken everything it was given. */
static void settle(struct isp_channel *ch)
{
	struct timespec nap = { 0, 2000000 };

	for (int i = 0; i < 2500; i++) {
		struct isp_channel_stats st;
		isp_channel_get_stats(ch, &st);
		if (st.delivered + st.dropped == st.queued && st.queue_depth == 0)
			return;
		nanosleep(&nap, NULL);
	}
	ck_abort_msg("the channel did not take its records");
}

/* The body's lines that start with `prefix`, in order. */
static char *lines_of(const char *answer, const char *prefix)
{
	const char *body = strstr(answer, "\r\n\r\n");
	static char out[1 << 15];
	size_t n = 0, plen = strlen(prefix);

	ck_assert_ptr_nonnull(body);
	out[0] = 0;
	for (const char *p = body + 4; *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len >= plen && !strncmp(p, prefix, plen) && n + len + 2 < sizeof(out)) {
			memcpy(out + n, p, len);
			n += len;
			out[n++] = '\n';
			out[n] = 0;
		}
		p += len + (e ? 1 : 0);
	}
	return out;
}

START_TEST(series_from_records)
{
	unsigned port = free_port();
	struct isp_channel *ch = open_at(port, NULL, NULL);

	/* an event: tags from its delta-key, a per-hop array, a string */
	put(ch, "lat,ip.src=10.0.0.1,udp.dst_port=5 int.latency=1500i,"
		"int.hop_switch_ids.0=7i,int.hop_switch_ids.1=9i,name=\"x y\" 1000");
	/* a query's results, named as selected */
	put(ch, "q,int.hop_switch_ids=[1\\,2] avg(int.hop_latencies)=2.5,count()=3i 2000");
	/* a tag value with a comma, a quote and a backslash; a float */
	put(ch, "esc,k=a\\,b\"c\\d v=-0.125 3000");
	/* the first key again: its values change, no new series */
	put(ch, "lat,ip.src=10.0.0.1,udp.dst_port=5 int.latency=1700i,"
		"int.hop_switch_ids.0=7i,int.hop_switch_ids.1=8i 4000");
	settle(ch);
	char *a = scrape(port);
	ck_assert_msg(!strncmp(a, "HTTP/1.1 200 OK\r\n", 17), "%s", a);
	ck_assert_ptr_nonnull(strstr(a, "Content-Type: text/plain; version=0.0.4"));
	ck_assert_str_eq(lines_of(a, "intspect_lat_"),
			 "intspect_lat_int_latency{ip_src=\"10.0.0.1\",udp_dst_port=\"5\"} 1700\n"
			 "intspect_lat_int_hop_switch_ids{ip_src=\"10.0.0.1\",udp_dst_port=\"5\",hop=\"0\"} 7\n"
			 "intspect_lat_int_hop_switch_ids{ip_src=\"10.0.0.1\",udp_dst_port=\"5\",hop=\"1\"} 8\n");
	ck_assert_str_eq(lines_of(a, "intspect_q_"),
			 "intspect_q_avg_int_hop_latencies{int_hop_switch_ids=\"[1,2]\"} 2.5\n"
			 "intspect_q_count{int_hop_switch_ids=\"[1,2]\"} 3\n");
	ck_assert_str_eq(lines_of(a, "intspect_esc_"), "intspect_esc_v{k=\"a,b\\\"c\\\\d\"} -0.125\n");
	/* one HELP and one TYPE per family, before its series */
	ck_assert_str_eq(lines_of(a, "# TYPE intspect_lat_"),
			 "# TYPE intspect_lat_int_latency gauge\n"
			 "# TYPE intspect_lat_int_hop_switch_ids gauge\n");
	ck_assert_str_eq(lines_of(a, "# HELP intspect_q_count"),
			 "# HELP intspect_q_count intspect report q, field count()\n");
	ck_assert_str_eq(lines_of(a, "intspect_prometheus_series{"),
			 "intspect_prometheus_series{channel=\"t\"} 6\n");
	ck_assert_str_eq(lines_of(a, "intspect_prometheus_fields_not_numeric_total"),
			 "intspect_prometheus_fields_not_numeric_total{channel=\"t\"} 1\n");
	ck_assert_str_eq(lines_of(a, "intspect_prometheus_scrapes_total{"),
			 "intspect_prometheus_scrapes_total{channel=\"t\"} 1\n");
	free(a);
	a = scrape(port);
	ck_assert_str_eq(lines_of(a, "intspect_prometheus_scrapes_total{"),
			 "intspect_prometheus_scrapes_total{channel=\"t\"} 2\n");
	free(a);
	/* operators keep their words in a field's name; two names still the
	 * same: the first field's value, the other counted. (x.y is the
	 * fourth field, as the string `name` of the first record was: a
	 * number there is a number.) */
	put(ch, "ops,k=1 sum(int.latency\\ >\\ 5000)=831i,sum(int.latency\\ <\\=\\ 5000)=1169i,"
		"avg(a\\ -\\ b)=1.5,x.y=1i,x_y=2i 4500");
	settle(ch);
	a = scrape(port);
	ck_assert_str_eq(lines_of(a, "intspect_ops_"),
			 "intspect_ops_sum_int_latency_gt_5000{k=\"1\"} 831\n"
			 "intspect_ops_sum_int_latency_le_5000{k=\"1\"} 1169\n"
			 "intspect_ops_avg_a_minus_b{k=\"1\"} 1.5\n"
			 "intspect_ops_x_y{k=\"1\"} 1\n");
	ck_assert_str_eq(lines_of(a, "intspect_prometheus_fields_collided_total{"),
			 "intspect_prometheus_fields_collided_total{channel=\"t\"} 1\n");
	free(a);
	/* the path gets shorter and the latency has no value: a key's series
	 * are those of its last record (hop 1 and the latency go) */
	put(ch, "lat,ip.src=10.0.0.1,udp.dst_port=5 int.hop_switch_ids.0=6i 5000");
	settle(ch);
	a = scrape(port);
	ck_assert_str_eq(lines_of(a, "intspect_lat_"),
			 "intspect_lat_int_hop_switch_ids{ip_src=\"10.0.0.1\",udp_dst_port=\"5\",hop=\"0\"} 6\n");
	ck_assert_str_eq(lines_of(a, "intspect_prometheus_series_superseded_total{"),
			 "intspect_prometheus_series_superseded_total{channel=\"t\"} 2\n");
	ck_assert_str_eq(lines_of(a, "intspect_q_"),         /* other keys keep theirs */
			 "intspect_q_avg_int_hop_latencies{int_hop_switch_ids=\"[1,2]\"} 2.5\n"
			 "intspect_q_count{int_hop_switch_ids=\"[1,2]\"} 3\n");
	free(a);
	/* two tags that reduce to one label name: the second gets _N, N its
	 * position among the tags */
	put(ch, "twice,ip.src=1,ip_src=2 v=1i 6000");
	settle(ch);
	a = scrape(port);
	ck_assert_str_eq(lines_of(a, "intspect_twice_"), "intspect_twice_v{ip_src=\"1\",ip_src_2=\"2\"} 1\n");
	free(a);
	isp_channel_close(ch);
}
END_TEST

START_TEST(expiry_removes_its_series)
{
	unsigned port = free_port();
	struct isp_channel *ch = open_at(port, "prefix=x_", NULL);

	put(ch, "e,sw=1,q=0 occ=10i,lat.0=1i 1");
	put(ch, "e,sw=2,q=0 occ=20i 2");
	put(ch, "e,sw=1,q=0 expired=1i,last_seen=1i 3");
	put(ch, "e,sw=9,q=9 expired=1i,last_seen=1i 4");    /* never seen: nothing */
	settle(ch);
	char *a = scrape(port);
	ck_assert_str_eq(lines_of(a, "x_e_"), "x_e_occ{sw=\"2\",q=\"0\"} 20\n");
	ck_assert_str_eq(lines_of(a, "intspect_prometheus_series_expired_total{"),
			 "intspect_prometheus_series_expired_total{channel=\"t\"} 2\n");
	/* a family left with no series has no HELP either */
	ck_assert_str_eq(lines_of(a, "# HELP x_e_lat"), "");
	free(a);
	/* the key comes back: its series again */
	put(ch, "e,sw=1,q=0 occ=11i 5");
	settle(ch);
	a = scrape(port);
	ck_assert_str_eq(lines_of(a, "x_e_"), "x_e_occ{sw=\"2\",q=\"0\"} 20\n"
					      "x_e_occ{sw=\"1\",q=\"0\"} 11\n");
	free(a);
	isp_channel_close(ch);

	/* no prefix, a report named with a digit first: still a name */
	port = free_port();
	ch = open_at(port, "prefix=", NULL);
	put(ch, "5g,k=1 lat=3i 1");
	settle(ch);
	a = scrape(port);
	ck_assert_str_eq(lines_of(a, "_5g_"), "_5g_lat{k=\"1\"} 3\n");
	free(a);
	isp_channel_close(ch);
}
END_TEST

START_TEST(max_series_refuses_the_rest)
{
	unsigned port = free_port();
	struct isp_channel *ch = open_at(port, "max-series=3", NULL);

	put(ch, "m,k=1 a=1i,b=2i 1");
	put(ch, "m,k=2 a=3i,b=4i 2");   /* one of two fits */
	put(ch, "m,k=1 a=5i,b=6i 3");   /* existing series still change */
	settle(ch);
	char *a = scrape(port);
	ck_assert_str_eq(lines_of(a, "intspect_m_"), "intspect_m_a{k=\"1\"} 5\n"
						     "intspect_m_a{k=\"2\"} 3\n"
						     "intspect_m_b{k=\"1\"} 6\n");
	ck_assert_str_eq(lines_of(a, "intspect_prometheus_series_refused_total{"),
			 "intspect_prometheus_series_refused_total{channel=\"t\"} 1\n");
	free(a);
	struct isp_channel_stats st;
	isp_channel_get_stats(ch, &st);
	ck_assert_uint_eq(st.delivered, 3);
	ck_assert_uint_eq(st.dropped, 0);
	isp_channel_close(ch);
}
END_TEST

static void self_fn(void *ctx, struct isp_prom_text *t)
{
	isp_prom_family(t, "test_self_total", "counter", "A test counter");
	isp_prom_sample(t, "test_self_total", *(unsigned *)ctx, 1, "who", "a\"b");
	isp_prom_family(t, "test_real", "gauge", "A real");
	isp_prom_sample_real(t, "test_real", 0.5, 0);
}

START_TEST(program_counters)
{
	unsigned port = free_port(), port2 = free_port(), v = 42;
	struct isp_channel *ch = open_at(port, NULL, NULL);
	struct isp_channel *quiet = open_at(port2, "self-metrics=false", NULL);
	char *a;

	isp_prom_set_self(self_fn, &v);
	a = scrape(port);
	ck_assert_str_eq(lines_of(a, "test_"), "test_self_total{who=\"a\\\"b\"} 42\ntest_real 0.5\n");
	ck_assert_str_eq(lines_of(a, "# TYPE test_"), "# TYPE test_self_total counter\n"
						     "# TYPE test_real gauge\n");
	free(a);
	a = scrape(port2);
	ck_assert_str_eq(lines_of(a, "test_"), "");
	free(a);
	/* a record's family named as one of intspect's own: NAME_record, so
	 * that no name has two blocks (promtool: "second HELP line") */
	unsigned port3 = free_port();
	struct isp_channel *same = open_at(port3, "prefix=test_", NULL);
	put(same, "self,k=1 total=7i,other=1i 1");
	settle(same);
	a = scrape(port3);
	ck_assert_str_eq(lines_of(a, "# TYPE test_"), "# TYPE test_self_total_record gauge\n"
						     "# TYPE test_self_other gauge\n"
						     "# TYPE test_self_total counter\n"
						     "# TYPE test_real gauge\n");
	ck_assert_str_eq(lines_of(a, "test_self_total"), "test_self_total_record{k=\"1\"} 7\n"
							"test_self_total{who=\"a\\\"b\"} 42\n");
	free(a);
	isp_channel_close(same);
	isp_prom_set_self(NULL, NULL);
	a = scrape(port);
	ck_assert_str_eq(lines_of(a, "test_"), "");
	free(a);
	isp_channel_close(quiet);
	isp_channel_close(ch);
}
END_TEST

START_TEST(http_answers)
{
	unsigned port = free_port();
	struct isp_channel *ch = open_at(port, "path=/m", NULL);
	char *a;

	a = http(port, "GET /metrics HTTP/1.1\r\n\r\n");
	ck_assert_msg(!strncmp(a, "HTTP/1.1 404 ", 13), "%s", a);
	ck_assert_ptr_nonnull(strstr(a, "the metrics are at /m"));
	free(a);
	a = http(port, "POST /m HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
	ck_assert_msg(!strncmp(a, "HTTP/1.1 405 ", 13), "%s", a);
	ck_assert_ptr_nonnull(strstr(a, "Allow: GET, HEAD\r\n"));
	free(a);
	a = http(port, "hello\r\n\r\n");
	ck_assert_msg(!strncmp(a, "HTTP/1.1 400 ", 13), "%s", a);
	free(a);
	a = http(port, "GET /m?x=1 HTTP/1.0\r\n\r\n");
	ck_assert_msg(!strncmp(a, "HTTP/1.1 200 ", 13), "%s", a);
	free(a);
	/* HEAD: the length of what GET sends, no body */
	a = http(port, "HEAD /m HTTP/1.1\r\n\r\n");
	ck_assert_msg(!strncmp(a, "HTTP/1.1 200 ", 13), "%s", a);
	ck_assert_ptr_nonnull(strstr(a, "Content-Length: "));
	ck_assert_str_eq(strstr(a, "\r\n\r\n"), "\r\n\r\n");
	free(a);
	/* a head past 8 KiB */
	char big[10000];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = 0;
	memcpy(big, "GET /m HTTP/1.1\r\nX: ", 20);
	a = http(port, big);
	ck_assert_msg(!strncmp(a, "HTTP/1.1 431 ", 13), "%s", a);
	free(a);
	/* still serving after all that */
	a = http(port, "GET /m HTTP/1.1\r\n\r\n");
	ck_assert_msg(!strncmp(a, "HTTP/1.1 200 ", 13), "%s", a);
	free(a);
	isp_channel_close(ch);
}
END_TEST

/* One connection at a time, 5 s each at most: a client that connects
 * and says nothing holds the server until it is closed at 5 s; a scrape
 * that came meanwhile is answered then, and not before. */
START_TEST(one_connection_at_a_time)
{
	unsigned port = free_port();
	struct isp_channel *ch = open_at(port, NULL, NULL);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int mute = socket(AF_INET, SOCK_STREAM, 0);
	struct timespec t0, t1;
	char c;

	ck_assert_int_eq(connect(mute, (struct sockaddr *)&a, sizeof(a)), 0);
	usleep(100000);                 /* taken by the server before the scrape */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	char *ans = scrape(port);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double waited = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

	ck_assert_msg(!strncmp(ans, "HTTP/1.1 200 ", 13), "%s", ans);
	ck_assert_msg(waited > 4.5 && waited < 8.0, "the scrape waited %.2f s", waited);
	ck_assert_int_eq(recv(mute, &c, 1, MSG_DONTWAIT), 0);   /* closed by the server */
	free(ans);
	close(mute);
	isp_channel_close(ch);
}
END_TEST

static void key_error(const char *kv1, const char *want)
{
	char err[512];
	const char *kv[] = { "listen=127.0.0.1:0", kv1, NULL };

	ck_assert_ptr_null(tcfg_open("prometheus", kv, err, sizeof(err)));
	ck_assert_msg(strstr(err, want) != NULL, "%s: got \"%s\"", kv1, err);
	/* check mode says the same */
	ck_assert_int_eq(tcfg_check("prometheus", kv, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, want) != NULL, "%s (check): got \"%s\"", kv1, err);
}

START_TEST(key_errors)
{
	key_error("lisen=1", "test.conf:3:3: unknown key 'lisen' for a prometheus output");
	key_error("max-series=0", "test.conf:3:3: ");
	key_error("path=metrics", "test.conf:3:3: path must start with '/'");
	key_error("prefix=9x", "test.conf:3:3: prefix must be letters, digits and '_'");
	key_error("self-metrics=maybe", "test.conf:3:3: ");
	key_error("format=json", "test.conf:3:3: ");

	char err[512];
	const char *host[] = { "listen=localhost:9464", NULL };
	ck_assert_ptr_null(tcfg_open("prometheus", host, err, sizeof(err)));
	ck_assert_msg(strstr(err, "test.conf:2:3: listen: \"localhost\" is not a numeric IPv4 or IPv6 "
				  "address") != NULL, "%s", err);
	const char *port[] = { "listen=127.0.0.1:70000", NULL };
	ck_assert_ptr_null(tcfg_open("prometheus", port, err, sizeof(err)));
	ck_assert_msg(strstr(err, "test.conf:2:3: listen: port must be 0 to 65535") != NULL, "%s", err);
}
END_TEST

START_TEST(port_in_use_and_check_mode)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	char where[64], err[512];
	const char *kv[] = { where, NULL };

	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(fd, 1), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	snprintf(where, sizeof(where), "listen=127.0.0.1:%u", ntohs(a.sin_port));
	ck_assert_ptr_null(tcfg_open("prometheus", kv, err, sizeof(err)));
	ck_assert_msg(strstr(err, "test.conf:2:3: listen: cannot serve 127.0.0.1:") != NULL &&
		      strstr(err, "Address already in use") != NULL, "%s", err);
	close(fd);
	/* -T checks the keys and binds nothing: the port stays free */
	unsigned p = free_port();
	snprintf(where, sizeof(where), "listen=127.0.0.1:%u", p);
	ck_assert_int_eq(tcfg_check("prometheus", kv, err, sizeof(err)), 0);
	struct sockaddr_in b = { .sin_family = AF_INET, .sin_port = htons((uint16_t)p),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&b, sizeof(b)), 0);
	close(fd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("prometheus");
	TCase *tc = tcase_create("channel");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, series_from_records);
	tcase_add_test(tc, expiry_removes_its_series);
	tcase_add_test(tc, max_series_refuses_the_rest);
	tcase_add_test(tc, program_counters);
	tcase_add_test(tc, http_answers);
	tcase_add_test(tc, one_connection_at_a_time);
	tcase_add_test(tc, key_errors);
	tcase_add_test(tc, port_in_use_and_check_mode);
	suite_add_tcase(s, tc);
	return check_run(s, CK_FORK_GETENV);
}
