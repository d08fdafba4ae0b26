/*
 * check_monitor.c - flow monitors: the sampled fraction of 100,000 flows
 * within statistical bounds and the same in every run; the counting
 * Bloom filter's false-positive rate against its size, with no false
 * negative and keys taken out again; buffers shifting on sub-interval
 * boundaries by packet time; one overflow record a crossing.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"
#include "../../dsl/compile.h"
#include "../../src/filters/bloom.h"
#include "../../src/filters/engine.h"
#include "../../src/filters/engine_int.h"

struct mon_run {
	struct isp_program *prog;
	struct isp_channel *ch[1];
	struct isp_engine *e;
	uint64_t next_tick;
	uint64_t index;
	char path[64];
};

/* A program of one flow monitor (body: its keys) writing to a file. */
static void mon_open(struct mon_run *m, const char *body)
{
	struct dsl_diags d;
	char conf[2048], err[256];

	memset(m, 0, sizeof(*m));
	snprintf(m->path, sizeof(m->path), "/tmp/check_monitor.%d.jsonl", (int)getpid());
	snprintf(conf, sizeof(conf), "file-output f { path = \"%s\" }\n"
		 "flow-monitor m {\n%s\n  output-channel = {f}\n}\n", m->path, body);
	dsl_diags_init(&d);
	m->prog = isp_compile_mem(&d, tl_registry(), "t.conf", conf, strlen(conf));
	if (!m->prog)
		dsl_print_diags(&d, stderr);
	dsl_diags_free(&d);
	ck_assert_ptr_nonnull(m->prog);
	m->ch[0] = isp_channel_open(&m->prog->channels[0].cfg, err, sizeof(err));
	ck_assert_msg(m->ch[0] != NULL, "%s", err);
	isp_program_bind_channels(m->prog, m->ch);
	m->e = isp_engine_new(m->prog, tl_registry(), m->ch, false, err, sizeof(err));
	ck_assert_msg(m->e != NULL, "%s", err);
}

/* One UDP packet of flow (src, sport) at ts, through the engine as the
 * pipeline hands it: the ticks it passed first. */
static void mon_packet(struct mon_run *m, uint32_t src, uint16_t sport, uint64_t ts)
{
	static struct isp_packet p;
	static struct isp_stats st;
	struct tl_buf b = { .n = 0 };

	tl_eth_ipv4_udp(&b, 0, sport, 9000);
	b.b[14 + 12] = (uint8_t)(src >> 24);
	b.b[14 + 13] = (uint8_t)(src >> 16);
	b.b[14 + 14] = (uint8_t)(src >> 8);
	b.b[14 + 15] = (uint8_t)src;
	tl_bytes(&b, "payload!", 8);
	tl_fix_lengths(&b, 14);
	tl_dissect(&p, &st, b.b, b.n, NULL);
	p.ts_ns = ts;
	p.wirelen = (uint32_t)b.n;
	p.index = ++m->index;
	if (m->next_tick == 0) {
		m->next_tick = isp_engine_window_end(m->prog, ts);
	} else if (ts >= m->next_tick) {
		isp_engine_tick(m->e, ts);
		m->next_tick = isp_engine_window_end(m->prog, ts);
	}
	isp_engine_item(m->e, &p, ISP_ROUTE_ALL);
}

/* End the input; the records written, one string each (NULL-ended). */
static char **mon_close(struct mon_run *m, struct rule_stats *st)
{
	isp_engine_tick(m->e, UINT64_MAX);
	if (st)
		*st = m->e->mon[0].st;
	isp_engine_free(m->e);
	isp_channel_close(m->ch[0]);
	isp_program_free(m->prog);

	FILE *f = fopen(m->path, "r");
	char **lines = calloc(4096, sizeof(*lines));
	char buf[8192];
	size_t n = 0;
	ck_assert_ptr_nonnull(f);
	while (n < 4095 && fgets(buf, sizeof(buf), f))
		lines[n++] = strdup(buf);
	fclose(f);
	unlink(m->path);
	return lines;
}

static void free_lines(char **l)
{
	for (size_t i = 0; l[i]; i++)
		free(l[i]);
	free(l);
}

static size_t nlines(char **l)
{
	size_t n = 0;

	while (l[n])
		n++;
	return n;
}

/* Sampling by a hash of the key: over 100,000 flows the fraction kept is
 * within 5 standard deviations of the ratio, and a second run keeps the
 * same flows (the same count, and the same flow sampled for each
 * probe). */
static void sampled(double ratio)
{
	char body[256];
	const unsigned n = 100000;
	struct mon_run a, b;
	struct rule_stats sa, sb;

	snprintf(body, sizeof(body), "  match = {\"ip.src\", \"udp.src_port\"}\n"
		 "  sampling = %g\n  max-entries = 200000\n  query-interval = 1000000", ratio);
	mon_open(&a, body);
	mon_open(&b, body);
	for (unsigned i = 0; i < n; i++) {
		uint64_t ts = 1700000000000000000ull + i * 1000ull;
		mon_packet(&a, 0x0a000000u + i / 7, (uint16_t)(1000 + i % 7), ts);
		/* b sees them in another order and twice: the decision is per flow */
		unsigned j = n - 1 - i;
		mon_packet(&b, 0x0a000000u + j / 7, (uint16_t)(1000 + j % 7), ts);
		mon_packet(&b, 0x0a000000u + j / 7, (uint16_t)(1000 + j % 7), ts + 1);
	}
	free_lines(mon_close(&a, &sa));
	free_lines(mon_close(&b, &sb));
	double mean = ratio * n, sd = sqrt(n * ratio * (1 - ratio));
	ck_assert_msg(fabs((double)sa.flows - mean) <= 5 * sd + 1,
		      "sampling %g: %llu of %u flows kept (expected %.0f +- %.0f)", ratio,
		      (unsigned long long)sa.flows, n, mean, 5 * sd);
	ck_assert_uint_eq(sa.flows, sb.flows);
	ck_assert_uint_eq(sa.sampled_out, n - sa.flows);
	ck_assert_uint_eq(sb.sampled_out, 2 * (n - sb.flows));
	ck_assert_uint_eq(sa.matched, n);
}

START_TEST(sampled_fraction_half) { sampled(0.5); }
END_TEST

START_TEST(sampled_fraction_tenth) { sampled(0.1); }
END_TEST

START_TEST(sampled_all) { sampled(1.0); }
END_TEST

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15u;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
	return x ^ (x >> 31);
}

/* The measured false-positive rate of 8,000 keys in 65,536 counters with
 * 4 hashes is within 15% of (1 - e^(-kn/m))^k over 200,000 probes; no key
 * in is ever missed; a key taken out is gone (up to that rate) and the
 * others stay. */
START_TEST(bloom_false_positives)
{
	struct cbloom b;
	const uint64_t m = 65536, keys = 8000, probes = 200000;

	ck_assert_int_eq(cbloom_init(&b, m, 4), 0);
	for (uint64_t i = 0; i < keys; i++)
		cbloom_add(&b, mix(i));
	for (uint64_t i = 0; i < keys; i++)
		ck_assert(cbloom_has(&b, mix(i)));
	uint64_t fp = 0;
	for (uint64_t i = 0; i < probes; i++)
		fp += cbloom_has(&b, mix(keys + 1 + i));
	double rate = (double)fp / probes, model = cbloom_fp_rate(m, 4, keys);
	ck_assert_msg(fabs(rate - model) <= 0.15 * model, "false positives %.4f, model %.4f",
		      rate, model);
	/* the capacity at 1% gives 1% */
	ck_assert(fabs(cbloom_fp_rate(m, 4, cbloom_capacity(m, 4, 0.01)) - 0.01) < 0.0005);
	/* take the first half out */
	for (uint64_t i = 0; i < keys / 2; i++)
		ck_assert(cbloom_del(&b, mix(i)));
	for (uint64_t i = keys / 2; i < keys; i++)
		ck_assert(cbloom_has(&b, mix(i)));
	uint64_t left = 0;
	for (uint64_t i = 0; i < keys / 2; i++)
		left += cbloom_has(&b, mix(i));
	ck_assert_msg(left < keys / 2 / 20, "%llu of %llu removed keys still in",
		      (unsigned long long)left, (unsigned long long)(keys / 2));
	ck_assert_uint_eq(b.keys, keys / 2);
	cbloom_clear(&b);
	ck_assert(!cbloom_has(&b, mix(keys - 1)));
	cbloom_free(&b);
}
END_TEST

/* A flow's buffer: 100 ms intervals in 4 slots of 25 ms, by packet time;
 * an interval without its packets writes nothing; counts since the
 * first packet go on. */
START_TEST(buffer_slots)
{
	struct mon_run m;
	const uint64_t t0 = 1700000000000000000ull;   /* on an interval boundary */

	mon_open(&m, "  match = {\"ip.src\"}\n  query-interval = 100\n  buffer = 4");
	mon_packet(&m, 1, 1, t0 + 1000000);             /* slot 0 */
	mon_packet(&m, 1, 1, t0 + 30000000);            /* slot 1 */
	mon_packet(&m, 1, 2, t0 + 49999999);            /* slot 1, another port: same flow */
	mon_packet(&m, 2, 1, t0 + 50000000);            /* slot 2, flow 2 */
	mon_packet(&m, 1, 1, t0 + 99999999);            /* slot 3 */
	mon_packet(&m, 1, 1, t0 + 130000000);           /* next interval, slot 1 */
	mon_packet(&m, 1, 1, t0 + 375000000);           /* two later: slot 3 */
	char **l = mon_close(&m, NULL);
	ck_assert_uint_eq(nlines(l), 4);
	ck_assert_ptr_nonnull(strstr(l[0], "\"ip.src\":\"0.0.0.1\",\"packets\":4,"));
	ck_assert_ptr_nonnull(strstr(l[0], "\"buffer.packets\":[1,2,0,1]"));
	ck_assert_ptr_nonnull(strstr(l[0], "\"interval_start\":1700000000.000000"));
	ck_assert_ptr_nonnull(strstr(l[0], "\"time\":1700000000.100000"));
	ck_assert_ptr_nonnull(strstr(l[1], "\"ip.src\":\"0.0.0.2\",\"packets\":1,"));
	ck_assert_ptr_nonnull(strstr(l[1], "\"buffer.packets\":[0,0,1,0]"));
	ck_assert_ptr_nonnull(strstr(l[2], "\"packets\":5,"));
	ck_assert_ptr_nonnull(strstr(l[2], "\"buffer.packets\":[0,1,0,0]"));
	ck_assert_ptr_nonnull(strstr(l[2], "\"time\":1700000000.200000"));
	ck_assert_ptr_nonnull(strstr(l[3], "\"packets\":6,"));
	ck_assert_ptr_nonnull(strstr(l[3], "\"buffer.packets\":[0,0,0,1]"));
	ck_assert_ptr_nonnull(strstr(l[3], "\"interval_start\":1700000000.300000"));
	ck_assert_ptr_nonnull(strstr(l[3], "\"first_seen\":1700000000.001000"));
	free_lines(l);
}
END_TEST

/* overflow-threshold 3: one record when the 4th flow arrives, none while
 * the table stays above, another after it fell (a reset) and rose again. */
START_TEST(overflow_once_per_crossing)
{
	struct mon_run m;
	const uint64_t t0 = 1700000000000000000ull, sub = 25000000;

	mon_open(&m, "  match = {\"ip.src\"}\n  query-interval = 100\n  overflow-threshold = 3");
	for (uint32_t f = 1; f <= 6; f++)
		mon_packet(&m, f, 1, t0 + f * sub);     /* a new flow each sub-interval */
	ck_assert_uint_eq(m.e->mon[0].st.overflows, 1);
	monitor_reset(m.e, 0);
	mon_packet(&m, 9, 1, t0 + 7 * sub);            /* one flow: below */
	for (uint32_t f = 10; f <= 13; f++)
		mon_packet(&m, f, 1, t0 + (f - 2) * sub);
	struct rule_stats st;
	char **l = mon_close(&m, &st);
	ck_assert_uint_eq(st.overflows, 2);
	unsigned over = 0;
	for (size_t i = 0; l[i]; i++) {
		if (!strstr(l[i], "\"type\":\"overflow\""))
			continue;
		/* the first at the tick after the 4th flow: 5 sub-intervals in */
		if (over++ == 0)
			ck_assert_ptr_nonnull(strstr(l[i], "\"time\":1700000000.125000,\"entries\":4,"
						       "\"overflow_threshold\":3"));
	}
	ck_assert_uint_eq(over, 2);
	free_lines(l);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("monitor");
	TCase *tc = tcase_create("monitor");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, sampled_fraction_half);
	tcase_add_test(tc, sampled_fraction_tenth);
	tcase_add_test(tc, sampled_all);
	tcase_add_test(tc, bloom_false_positives);
	tcase_add_test(tc, buffer_slots);
	tcase_add_test(tc, overflow_once_per_crossing);
	suite_add_tcase(s, tc);
	return tl_run_suite(s);
}
