/*
 * fuzz_merge.c - libFuzzer target for the merge stage (src/filters/pmerge.c,
 * src/filters/partial.c): each input is split into lines, as the merge
 * reads files and Kafka messages, and every line goes to a fresh merge of
 * query reports with every report function (per-hop ones, quantiles,
 * first/last of addresses and strings, the functions of diff() that keep
 * the window's ends), two periods, one window of the whole input (its
 * packet times carried as seen_lo/seen_hi) and late = correct,
 * with a clock that moves by a millisecond a line so that lateness closes
 * windows too. Then the merge ends (every window written) and is freed.
 * The records go to a channel of nothing (counted as dropped): what is
 * fuzzed is reading the partials, folding them and writing the results.
 * max-groups is small: each run's fresh tables are sized by it (the
 * default's megabytes were most of a run), and the overflow is fuzzed too.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../dsl/compile.h"
#include "../../src/filters/engine.h"
#include "../../src/filters/pmerge.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char conf[] =
	"merge { lateness-ms = 3; late = correct }\n"
	"query-report qa {\n"
	"  ms-period = 100\n"
	"  max-groups = 64\n"
	"  select = {\"count()\", \"sum(int.latency)\", \"avg(int.latency)\", \"var(int.latency)\","
	" \"min(int.latency)\", \"max(int.latency)\", \"first(int.hop_switch_ids)\","
	" \"last(int.num_hop)\", \"rate(int.latency)\", \"p50(int.latency)\", \"p99(int.latency)\","
	" \"avg(int.hop_latencies)\", \"max(int.hop_queue_occups)\", \"p90(int.hop_latencies)\"}\n"
	"  group-by = {\"int.num_hop\"}\n"
	"}\n"
	"query-report qb {\n"
	"  ms-period = 250\n"
	"  max-groups = 64\n"
	"  select = {\"count()\", \"avg(int.latency)\", \"var(int.hop_latencies)\","
	" \"last(int.hop_switch_ids)\", \"first(ip.src)\", \"last(ipv6.src)\", \"first(eth.src)\","
	" \"last(meta.proto_hierarchy)\", \"sum(int.latency / 3)\", \"avg(int.latency * 0.5)\"}\n"
	"  group-by = {\"int.hop_switch_ids\", \"ip.src\"}\n"
	"}\n"
	"query-report qc {\n"
	"  ms-period = 100\n"
	"  max-groups = 64\n"
	"  select = {\"count()\", \"avg(diff(meta.timestamp))\", \"sum(diff(int.latency))\","
	" \"count(diff(int.hop_latencies))\", \"avg(diff(int.hop_latencies))\","
	" \"rate(diff(int.latency))\"}\n"
	"  group-by = {\"int.num_hop\"}\n"
	"}\n"
	"query-report qw {\n"
	"  ms-period = 0\n"
	"  max-groups = 64\n"
	"  select = {\"count()\", \"rate()\", \"avg(int.latency)\"}\n"
	"  group-by = {\"int.num_hop\"}\n"
	"}\n";

static struct isp_registry *reg;
static struct isp_program *prog;
static struct isp_channel *channels[4];

static void die(const char *what)
{
	fprintf(stderr, "fuzz_merge: %s\n", what);
	abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct dsl_diags d;
	char err[256];

	(void)argc;
	(void)argv;
	reg = isp_registry_new();
	if (!reg || isp_register_builtins(reg) != 0 || isp_registry_finalize(reg, err, sizeof err))
		die("registry");
	dsl_diags_init(&d);
	prog = isp_compile_mem(&d, reg, "merge.conf", conf, sizeof(conf) - 1);
	if (!prog) {
		dsl_print_diags(&d, stderr);
		die("config");
	}
	dsl_diags_free(&d);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	struct isp_pmerge *m = isp_pmerge_new(prog, reg, channels, err, sizeof err);
	uint64_t now = 1;

	if (!m)
		die(err);
	for (size_t at = 0; at < size;) {
		const uint8_t *nl = memchr(data + at, '\n', size - at);
		size_t len = nl ? (size_t)(nl - (data + at)) : size - at;
		isp_pmerge_feed(m, (const char *)data + at, len, now);
		isp_pmerge_tick(m, now);
		now += 1000000;
		at += len + 1;
	}
	isp_pmerge_finish(m);
	isp_pmerge_free(m);
	return 0;
}
