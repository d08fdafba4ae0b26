/*
 * intspect.c - the command line: options, the read loop, the summary.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "../core/dissect.h"
#include "../core/dump.h"
#include "../core/registry.h"
#include "../core/source.h"
#include "../core/workers.h"
#include "parallel.h"
#include "../filters/engine.h"
#include "../../dsl/compile.h"
#include "../../outputs/channel.h"

#define MAX_OPTIONS 64

static struct isp_source *g_source;
static volatile sig_atomic_t g_stop;
static volatile sig_atomic_t g_print_stats;

static void on_usr1(int sig)
{
	(void)sig;
	g_print_stats = 1;      /* the read loop prints: no stdio in a handler */
}

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
	isp_source_break(g_source);
}

static void usage(FILE *out)
{
	fprintf(out,
"Usage: intspect [options] [-r FILE | -i IFACE]\n"
"In-band Network Telemetry collector: decodes INT and telemetry reports.\n"
"\n"
"Input:\n"
"  -r FILE               read a pcap/pcapng capture ('-' = standard input)\n"
"  -i IFACE              capture live on IFACE\n"
"  -u, --udp [ADDR:]PORT receive telemetry reports on a UDP port, as a collector\n"
"  --dpdk 'EAL ARGS'     read the first DPDK port, e.g. '--no-huge --no-pci\n"
"                        --vdev net_pcap0,rx_pcap=FILE' (when built with DPDK)\n"
"  -f EXPR               BPF filter expression\n"
"  -c COUNT              stop after COUNT packets\n"
"  -w, --workers N       rule workers (default 1, or thread-nb of the config)\n"
"                        (a live input: each reads its own share)\n"
"Rules:\n"
"  -C, --config FILE     run the report rules of FILE (event-report, query-report,\n"
"                        outputs; see dsl/README.md)\n"
"  -T, --check-config FILE  check FILE and exit (0 when it is valid)\n"
"Output:\n"
"  --dump                one JSON object per packet with every attribute\n"
"  -q, --quiet           no per-packet output; print packets/second at the end\n"
"  --list-attributes     print every attribute with its type and meaning\n"
"  --list-protocols      print every protocol, its origin and its options\n"
"Plugins:\n"
"  --plugin-dir DIR      load protocol plugins (*.so) from DIR\n"
"  --no-builtin          register no built-in plugin (use with --plugin-dir)\n"
"  -o PROTO.KEY=VALUE    protocol option, e.g. -o int.dscp=0x17 -o int.dialect=l4s\n"
"                        -o int_report.udp-ports=32766,9555\n"
"  -v, --verbose         more messages\n"
"  -V, --version         print the version\n"
"  -h, --help            this help\n"
"\n"
"Signals: SIGINT/SIGTERM close open windows, flush the channels and stop;\n"
"SIGUSR1 prints the counters.\n");
}

struct cli {
	const char *file, *iface, *udp, *dpdk, *filter, *plugin_dir, *config, *check_config;
	unsigned long long count;
	unsigned workers;
	bool dump, quiet, list_attrs, list_protos, no_builtin, verbose;
	const char *options[MAX_OPTIONS];
	unsigned noptions;
};

static int parse_cli(int argc, char **argv, struct cli *c)
{
	enum { O_DUMP = 256, O_LIST_ATTRS, O_LIST_PROTOS, O_PLUGIN_DIR, O_NO_BUILTIN, O_DPDK };
	static const struct option longopts[] = {
		{ "dump", no_argument, NULL, O_DUMP },
		{ "config", required_argument, NULL, 'C' },
		{ "udp", required_argument, NULL, 'u' },
		{ "dpdk", required_argument, NULL, O_DPDK },
		{ "workers", required_argument, NULL, 'w' },
		{ "check-config", required_argument, NULL, 'T' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "list-attributes", no_argument, NULL, O_LIST_ATTRS },
		{ "list-protocols", no_argument, NULL, O_LIST_PROTOS },
		{ "plugin-dir", required_argument, NULL, O_PLUGIN_DIR },
		{ "no-builtin", no_argument, NULL, O_NO_BUILTIN },
		{ "verbose", no_argument, NULL, 'v' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "r:i:u:f:c:o:C:T:w:qvVh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'r': c->file = optarg; break;
		case 'i': c->iface = optarg; break;
		case 'u': c->udp = optarg; break;
		case 'w': {
			char *end;
			unsigned long n = strtoul(optarg, &end, 10);
			if (*end || !*optarg || n == 0 || n > 64) {
				fprintf(stderr, "intspect: -w: '%s' is not a number of workers (1-64)\n", optarg);
				return -1;
			}
			c->workers = (unsigned)n;
			break;
		}
		case 'f': c->filter = optarg; break;
		case 'c': {
			char *end;
			c->count = strtoull(optarg, &end, 10);
			if (*end || !*optarg) {
				fprintf(stderr, "intspect: -c: '%s' is not a count\n", optarg);
				return -1;
			}
			break;
		}
		case 'o':
			if (c->noptions >= MAX_OPTIONS) {
				fprintf(stderr, "intspect: more than %d -o options\n", MAX_OPTIONS);
				return -1;
			}
			c->options[c->noptions++] = optarg;
			break;
		case 'q': c->quiet = true; break;
		case 'C': c->config = optarg; break;
		case 'T': c->check_config = optarg; break;
		case 'v': c->verbose = true; break;
		case 'V':
			printf("intspect %s\n", PACKAGE_VERSION);
#ifdef HAVE_DPDK
			printf("built with: dpdk\n");
#endif
			exit(0);
		case 'h': usage(stdout); exit(0);
		case O_DUMP: c->dump = true; break;
		case O_LIST_ATTRS: c->list_attrs = true; break;
		case O_LIST_PROTOS: c->list_protos = true; break;
		case O_PLUGIN_DIR: c->plugin_dir = optarg; break;
		case O_NO_BUILTIN: c->no_builtin = true; break;
		case O_DPDK: c->dpdk = optarg; break;
		default: usage(stderr); return -1;
		}
	}
	if (optind < argc) {
		/* tcpdump style: a trailing expression is the BPF filter */
		static char expr[4096];
		size_t n = 0;
		for (int i = optind; i < argc; i++)
			n += (size_t)snprintf(expr + n, n < sizeof(expr) ? sizeof(expr) - n : 0,
					      "%s%s", i > optind ? " " : "", argv[i]);
		if (n >= sizeof(expr)) {
			fprintf(stderr, "intspect: filter expression too long\n");
			return -1;
		}
		if (c->filter) {
			fprintf(stderr, "intspect: give the filter with -f or as trailing words, not both\n");
			return -1;
		}
		c->filter = expr;
	}
	if (!!c->file + !!c->iface + !!c->udp + !!c->dpdk > 1) {
		fprintf(stderr, "intspect: give one input: -r, -i, -u or --dpdk\n");
		return -1;
	}
	return 0;
}

static struct isp_registry *build_registry(const struct cli *c)
{
	struct isp_registry *reg = isp_registry_new();
	char err[512];

	if (!reg) {
		fprintf(stderr, "intspect: out of memory\n");
		return NULL;
	}
	if (!c->no_builtin && isp_register_builtins(reg) < 0) {
		fprintf(stderr, "intspect: built-in plugins failed to register\n");
		goto fail;
	}
	if (c->plugin_dir) {
		unsigned loaded, skipped;
		if (isp_load_plugin_dir(reg, c->plugin_dir, &loaded, &skipped, err, sizeof(err)) < 0) {
			fprintf(stderr, "intspect: %s\n", err);
			goto fail;
		}
		if (c->verbose)
			fprintf(stderr, "intspect: %u plugins loaded from %s, %u already built in\n",
				loaded, c->plugin_dir, skipped);
	}
	if (isp_registry_finalize(reg, err, sizeof(err)) < 0) {
		fprintf(stderr, "intspect: %s\n", err);
		goto fail;
	}
	for (unsigned i = 0; i < c->noptions; i++) {
		if (isp_registry_option(reg, c->options[i], err, sizeof(err)) < 0) {
			fprintf(stderr, "intspect: -o %s\n", err);
			goto fail;
		}
	}
	return reg;
fail:
	isp_registry_free(reg);
	return NULL;
}

static void list_protocols(const struct isp_registry *reg)
{
	for (uint16_t i = 0; i < reg->nprotos; i++) {
		const struct isp_proto_desc *d = reg->proto[i].desc;
		printf("%-12s %-9s %s\n", d->name, reg->proto[i].origin, d->help ? d->help : "");
		if (d->options_help) {
			const char *s = d->options_help;
			while (*s) {
				const char *nl = strchr(s, '\n');
				size_t n = nl ? (size_t)(nl - s) : strlen(s);
				printf("    -o %s.%.*s\n", d->name, (int)n, s);
				s += n + (nl != NULL);
			}
		}
	}
}

static void print_summary(const struct isp_registry *reg, const struct isp_stats *st,
			  double secs, bool rate)
{
	fprintf(stderr, "intspect: %llu packets (%llu bytes), %llu telemetry items, %llu malformed",
		(unsigned long long)st->packets, (unsigned long long)st->bytes,
		(unsigned long long)st->items, (unsigned long long)st->malformed_packets);
	uint16_t int_id = isp_proto_id(reg, "int"), rep_id = isp_proto_id(reg, "int_report");
	if (int_id != ISP_PROTO_NONE)
		fprintf(stderr, ", int %llu", (unsigned long long)st->decoded[int_id]);
	if (rep_id != ISP_PROTO_NONE)
		fprintf(stderr, ", int_report %llu", (unsigned long long)st->decoded[rep_id]);
	fputc('\n', stderr);
	for (uint16_t i = 0; i < reg->nprotos; i++) {
		for (unsigned v = ISP_ERR_TRUNCATED; v < ISP_VERDICT__COUNT; v++) {
			if (st->malformed[i][v])
				fprintf(stderr, "intspect: malformed %s: %s %llu\n",
					reg->proto[i].desc->name, isp_verdict_name((enum isp_verdict)v),
					(unsigned long long)st->malformed[i][v]);
		}
	}
	if (rate) {
		double pps = secs > 0 ? (double)st->packets / secs : 0;
		fprintf(stderr, "intspect: %.3f s, %.0f packets/s (%.2f Mpps)\n", secs, pps, pps / 1e6);
	}
}

/* Open the channels the rules use and the engine; -1 after a message. */
static int open_rules(struct isp_program *prog, const struct isp_registry *reg,
		      struct isp_channel ***channels, struct isp_engine **engine)
{
	char err[512];

	isp_channels_init();
	*channels = calloc(prog->nchannels ? prog->nchannels : 1, sizeof(**channels));
	if (!*channels)
		return -1;
	for (unsigned i = 0; i < prog->nchannels; i++) {
		if (!prog->channels[i].used)
			continue;
		(*channels)[i] = isp_channel_open(&prog->channels[i].cfg, err, sizeof(err));
		if (!(*channels)[i]) {
			fprintf(stderr, "%s\n", err);
			goto fail;
		}
	}
	isp_program_bind_channels(prog, *channels);
	*engine = isp_engine_new(prog, reg, *channels, err, sizeof(err));
	if (!*engine) {
		fprintf(stderr, "intspect: %s\n", err);
		goto fail;
	}
	return 0;
fail:
	for (unsigned i = 0; i < prog->nchannels; i++)
		if ((*channels)[i])
			isp_channel_close((*channels)[i]);
	free(*channels);
	*channels = NULL;
	return -1;
}

static void print_channels(const struct isp_program *prog, struct isp_channel *const *channels)
{
	for (unsigned i = 0; prog && channels && i < prog->nchannels; i++) {
		if (!channels[i])
			continue;
		struct isp_channel_stats st;
		isp_channel_get_stats(channels[i], &st);
		fprintf(stderr, "intspect: channel %s: %llu records queued, %llu delivered, "
			"%llu dropped, %llu retried, %llu reconnects, %llu acknowledged\n",
			isp_channel_name(channels[i]),
			(unsigned long long)st.queued, (unsigned long long)st.delivered,
			(unsigned long long)st.dropped, (unsigned long long)st.retried,
			(unsigned long long)st.reconnects, (unsigned long long)st.acked);
	}
}

/* Stop every channel at once (deadlines run in parallel), wait for them,
 * print what each delivered and lost, free. */
static void close_rules(const struct isp_program *prog, struct isp_channel **channels,
			struct isp_engine *engine)
{
	isp_engine_free(engine);
	if (!prog || !channels)
		return;
	for (unsigned i = 0; i < prog->nchannels; i++)
		if (channels[i])
			isp_channel_shutdown(channels[i]);
	for (unsigned i = 0; i < prog->nchannels; i++)
		if (channels[i])
			isp_channel_drain(channels[i]);
	print_channels(prog, channels);
	for (unsigned i = 0; i < prog->nchannels; i++)
		if (channels[i])
			isp_channel_close(channels[i]);
	free(channels);
}

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

struct progress {
	double t0;
	struct isp_program *prog;
	struct isp_channel **channels;
};

/* SIGUSR1 while workers read their shares: their counters are theirs
 * until they stop, so the packets read and the channels. */
static void print_progress(void *ctx, uint64_t packets)
{
	const struct progress *pr = ctx;

	fprintf(stderr, "intspect: %llu packets so far, %.3f s\n", (unsigned long long)packets,
		now_sec() - pr->t0);
	print_channels(pr->prog, pr->channels);
}

/* Sources in reverse order: a DPDK port belongs to share 0. */
static void close_sources(struct isp_source **shares, int nshares)
{
	if (nshares == 0)
		isp_source_close(g_source);
	while (nshares-- > 0)
		isp_source_close(shares[nshares]);
	g_source = NULL;
}

int main(int argc, char **argv)
{
	struct cli c = { 0 };
	char err[512];
	int rc = 0;

	if (parse_cli(argc, argv, &c) < 0)
		return 2;
	struct isp_registry *reg = build_registry(&c);
	if (!reg)
		return 2;
	if (c.list_attrs || c.list_protos) {
		if (c.list_protos)
			list_protocols(reg);
		if (c.list_attrs)
			isp_list_attributes(reg, stdout);
		isp_registry_free(reg);
		return 0;
	}
	struct isp_program *prog = NULL;
	/* the diagnostics own the config's file names, which channel error
	 * messages quote: they live as long as the program */
	static struct dsl_diags diags;
	dsl_diags_init(&diags);
	if (c.check_config || c.config) {
		prog = isp_compile_file(&diags, reg, c.check_config ? c.check_config : c.config);
		dsl_print_diags(&diags, stderr);
		if (!prog) {
			isp_registry_free(reg);
			return 2;
		}
		if (c.check_config) {
			printf("%s: %u event reports, %u query reports, %u attributes, %u channels: ok\n",
			       c.check_config, prog->nevents, prog->nqueries, prog->nslots,
			       prog->nchannels);
			isp_program_free(prog);
			isp_registry_free(reg);
			return 0;
		}
		/* the input section, unless the command line says otherwise */
		if (!c.file && !c.iface && !c.udp && !c.dpdk && prog->input_source) {
			if (prog->input_mode && strcmp(prog->input_mode, "live") == 0)
				c.iface = prog->input_source;
			else if (prog->input_mode && strcmp(prog->input_mode, "udp") == 0)
				c.udp = prog->input_source;
			else if (prog->input_mode && strcmp(prog->input_mode, "dpdk") == 0)
				c.dpdk = prog->input_source;
			else
				c.file = prog->input_source;
		}
		if (!c.filter)
			c.filter = prog->input_filter;
	}
	if (!c.file && !c.iface && !c.udp && !c.dpdk) {
		fprintf(stderr, "intspect: no input: give -r FILE, -i IFACE, -u PORT or --dpdk ARGS (see --help)\n");
		isp_program_free(prog);
		isp_registry_free(reg);
		return 2;
	}

	struct isp_source_opts so = { .file = c.file, .iface = c.iface, .udp = c.udp, .dpdk = c.dpdk,
				      .filter = c.filter, .promisc = true };
	/* a live input read by several workers: each reads its own share */
	unsigned nworkers = c.workers ? c.workers : prog && prog->workers ? prog->workers : 1;
	static struct isp_source *shares[64];
	int nshares = 0;
	if (prog && nworkers > 1 && (c.iface || c.udp || c.dpdk) && !c.dump) {
		nshares = isp_source_open_shares(&so, nworkers, shares, err, sizeof(err));
		g_source = nshares > 0 ? shares[0] : NULL;
	} else {
		g_source = isp_source_open(&so, err, sizeof(err));
	}
	if (!g_source) {
		fprintf(stderr, "intspect: %s\n", err);
		isp_program_free(prog);
		isp_registry_free(reg);
		return 1;
	}
	/* what arrives on the report port is a report, whatever the port */
	if (isp_source_udp_port(g_source))
		isp_registry_link(reg, "int_report", ISP_TBL_UDP_PORT, isp_source_udp_port(g_source));
	uint16_t first = isp_source_first_proto(g_source, reg, err, sizeof(err));
	if (first == ISP_PROTO_NONE) {
		fprintf(stderr, "intspect: %s\n", err);
		close_sources(shares, nshares);
		isp_program_free(prog);
		isp_registry_free(reg);
		return 1;
	}
	struct isp_channel **channels = NULL;
	struct isp_engine *engine = NULL;
	/* waiting for a channel would lose packets on a live input */
	for (unsigned i = 0; prog && (c.iface || c.udp || c.dpdk) && i < prog->nchannels; i++) {
		const struct isp_channel_cfg *cc = &prog->channels[i].cfg;
		for (size_t k = 0; prog->channels[i].used && k < cc->nkv; k++) {
			if (strcmp(cc->kv[k].key, "drop-policy") == 0 && strcmp(cc->kv[k].value, "block") == 0) {
				fprintf(stderr, "%s:%d:%d: drop-policy = block is for capture files: on a "
					"live input it would lose packets instead of records\n",
					cc->file ? cc->file : "config", cc->kv[k].line, cc->kv[k].col);
				close_sources(shares, nshares);
				isp_program_free(prog);
				dsl_diags_free(&diags);
				isp_registry_free(reg);
				return 2;
			}
		}
	}
	if (prog && open_rules(prog, reg, &channels, &engine) < 0) {
		close_sources(shares, nshares);
		isp_program_free(prog);
		isp_registry_free(reg);
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGUSR1, on_usr1);       /* tcpdump/Suricata: print the counters now */
	signal(SIGPIPE, SIG_IGN);       /* a closed consumer is an error to count, not a death */

	static char outbuf[1 << 20];
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));

	static struct isp_stats st;
	static struct isp_packet pkt;
	unsigned digits = isp_source_ts_digits(g_source);
	struct parallel par = { 0 };
	double t0 = now_sec();
	if (nshares > 0 && engine) {
		struct progress pr = { t0, prog, channels };
		struct shard_run run = { c.count, &g_stop, &g_print_stats, print_progress, &pr };
		rc = parallel_run_shards(&par, shares, (unsigned)nshares, nworkers, &run, prog, reg,
					 channels, engine, first, &st);
		g_stop = 1;     /* the loop below has nothing left to read */
	}
	if (engine && nworkers > 1 && nshares == 0 &&
	    parallel_start(&par, nworkers, prog, reg, channels, engine, first) < 0) {
		parallel_stop(&par);
		rc = 1;
		g_stop = 1;
	}
	bool wait = !c.iface && !c.udp && !c.dpdk;  /* files: slow the reader, lose nothing */
	while (!g_stop && (!c.count || st.packets < c.count)) {
		if (g_print_stats) {
			g_print_stats = 0;
			print_summary(reg, &st, now_sec() - t0, true);
			if (engine)
				isp_engine_print_stats(engine, stderr);
			print_channels(prog, channels);
		}
		int got = isp_source_next(g_source, &pkt.data, &pkt.caplen, &pkt.wirelen,
					  &pkt.ts_ns, err, sizeof(err));
		if (got == 0)
			break;
		if (got == 2) {         /* live and idle: let windows close */
			if (par.w)
				isp_workers_flush(par.w);
			if (par.w && cli_wall_ns() >= par.next_tick && par.next_tick)
				parallel_tick(&par, prog, engine, cli_wall_ns());
			else if (engine && !par.w)
				isp_engine_tick(engine, cli_wall_ns());
			continue;
		}
		if (got < 0) {
			fprintf(stderr, "intspect: %s\n", err);
			rc = 1;
			break;
		}
		pkt.index = st.packets + 1;
		isp_dissect(reg, &pkt, first, &st);
		if (par.w) {
			if (par.next_tick == 0)
				par.next_tick = parallel_window_end(prog, pkt.ts_ns);
			else if (pkt.ts_ns >= par.next_tick)
				parallel_tick(&par, prog, engine, pkt.ts_ns);
		}
		do {
			if (c.dump)
				isp_dump_packet(reg, &pkt, digits, stdout);
			if (engine)
				isp_engine_packet(engine, &pkt);
			if (par.w)
				isp_workers_dispatch(par.w, isp_workers_pick(par.w, &pkt), &pkt, wait);
		} while (isp_dissect_next_report(reg, &pkt, &st));
	}
	if (par.w) {
		parallel_tick(&par, prog, engine, UINT64_MAX);  /* every open window */
		if (isp_workers_dropped(par.w))
			fprintf(stderr, "intspect: %llu packets dropped: the workers were too slow\n",
				(unsigned long long)isp_workers_dropped(par.w));
	}
	if (engine)
		isp_engine_finish(engine);
	double secs = now_sec() - t0;
	fflush(stdout);
	uint64_t krecv = 0, kdrop = 0;
	bool kstats = false;
	for (int i = 0; i < (nshares ? nshares : 1); i++) {
		uint64_t r, d;
		if (isp_source_kernel_stats(nshares ? shares[i] : g_source, &r, &d)) {
			kstats = true;
			krecv += r;
			kdrop += d;
		}
	}
	if (kstats)
		fprintf(stderr, "intspect: %llu packets received by the %s, %llu dropped\n",
			(unsigned long long)krecv, c.dpdk ? "port" : "kernel", (unsigned long long)kdrop);
	print_summary(reg, &st, secs, c.quiet);
	if (engine && par.engines) {
		struct isp_engine *all[65];
		all[0] = engine;
		for (unsigned i = 0; i < par.n; i++)
			all[i + 1] = par.engines[i];
		isp_engine_print_stats_sum((const struct isp_engine *const *)all, par.n + 1, stderr);
	} else if (engine) {
		isp_engine_print_stats(engine, stderr);
	}
	parallel_stop(&par);
	close_rules(prog, channels, engine);
	close_sources(shares, nshares);
	isp_program_free(prog);
	dsl_diags_free(&diags);
	isp_registry_free(reg);
	return rc;
}
