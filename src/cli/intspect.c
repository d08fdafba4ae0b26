/*
 * intspect.c - the command line: options in, a pipeline out, the summary.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <unistd.h>

#include <pcap/pcap.h>

#include "config.h"
#include "../core/dissect.h"
#include "../core/dump.h"
#include "../core/pipeline.h"
#include "../core/registry.h"
#include "../filters/bloom.h"
#include "checkconf.h"
#include "ctlsock.h"
#include "forward.h"
#include "merge.h"
#include "reload.h"
#include "runchan.h"
#include "../filters/engine.h"
#include "../../dsl/compile.h"
#include "../../outputs/channel.h"
#include "../../outputs/prometheus.h"
#include "selfmetrics.h"
#include "service.h"
#include "usage.h"

#define MAX_OPTIONS 64

static struct isp_pipeline *g_pipeline;
static volatile sig_atomic_t g_print_stats;
#define EXIT_LOST 3     /* a channel dropped records or never connected */

static volatile sig_atomic_t g_stop;    /* a stop before the pipeline was open */
static struct isp_ctl_server *volatile g_ctl_server;    /* SIGHUP reloads through it */
static struct self_metrics *g_self;
static struct isp_ctl_run g_ctl_run;

static void on_hup(int sig)
{
	(void)sig;
	isp_ctl_server_hup(g_ctl_server);
}

/* After a rebuild, on the control thread: the run's views of the program
 * and channels follow. */
static char *rebuilt(struct cli_rules *cr, char *resp)
{
	/* the commands run on this thread: no lock for them */
	g_ctl_run.prog = cr->prog;
	g_ctl_run.channels = cr->channels;
	g_ctl_run.nchannels = cr->prog->nchannels;
	g_ctl_run.enabled = cr->enabled;
	pthread_mutex_lock(&cr->mu);
	if (g_self) {
		g_self->channels = cr->channels;
		g_self->nchannels = cr->prog->nchannels;
	}
	pthread_mutex_unlock(&cr->mu);
	return resp;
}

/* The control socket's `reload` (and SIGHUP). */
static char *reload_cb(void *ctx)
{
	return rebuilt(ctx, cli_reload(ctx));
}

/* monitor-add, monitor-remove */
static char *monitor_cb(void *ctx, const char *name, const char *body)
{
	return rebuilt(ctx, cli_monitor_edit(ctx, name, body));
}

static void on_usr1(int sig)
{
	(void)sig;
	g_print_stats = 1;      /* the pipeline calls back: no stdio in a handler */
}

static volatile sig_atomic_t g_signals;         /* SIGINT and SIGTERM so far */
static volatile sig_atomic_t g_draining;        /* the input ended: the channels drain */

/* SIGINT, SIGTERM: the first ends the input (open windows flushed, each
 * channel given its shutdown-ms to deliver, a producer blocked on a full
 * queue too); the next one, or the first once the channels drain, stops
 * the channels at once, what they hold counted dropped; one more is the
 * default death. */
static void on_signal(int sig)
{
	(void)sig;
	if (g_signals++ == 0 && !g_draining) {
		g_stop = 1;
		isp_channels_stop_asked();
		isp_pipeline_break(g_pipeline);
		return;
	}
	isp_channels_hurry();
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
}

struct cli {
	const char *file, *iface, *udp, *dpdk, *filter, *plugin_dir, *config, *check_config;
	const char *pidfile;
	const char *control;    /* --control PATH */
	const char *user;       /* -Z: after the input is open */
	bool use_syslog;
	unsigned long long count;
	unsigned workers;
	bool dump, quiet, list_attrs, list_protos, no_builtin, verbose, allow_drops;
	const char *options[MAX_OPTIONS];
	unsigned noptions;
	struct cli_merge merge;         /* --merge */
	bool merging;
	const char *kafka;              /* -k BROKERS/TOPIC[@GROUP] */
	const char *kafka_props[MAX_OPTIONS];   /* --kafka-property */
	unsigned nkafka_props;
	const char *forward;            /* --forward kafka:BROKERS/TOPIC */
};

/* -V: the version and every optional part, with its library's version,
 * so a bug report says what the binary can do. */
static void print_version(void)
{
	printf("intspect %s\n", PACKAGE_VERSION);
	printf("  %s\n", pcap_lib_version());
	isp_channels_describe(stdout);
	isp_source_describe(stdout);
#if defined(__SANITIZE_ADDRESS__)
	printf("  built with AddressSanitizer\n");
#endif
}

static int parse_cli(int argc, char **argv, struct cli *c)
{
	enum { O_DUMP = 256, O_LIST_ATTRS, O_LIST_PROTOS, O_PLUGIN_DIR, O_NO_BUILTIN, O_DPDK,
	       O_ALLOW_DROPS, O_PIDFILE, O_SYSLOG, O_CONTROL, O_MERGE, O_KAFKA_PROP, O_FORWARD };
	static const struct option longopts[] = {
		{ "dump", no_argument, NULL, O_DUMP },
		{ "allow-drops", no_argument, NULL, O_ALLOW_DROPS },
		{ "pidfile", required_argument, NULL, O_PIDFILE },
		{ "control", required_argument, NULL, O_CONTROL },
		{ "merge", required_argument, NULL, O_MERGE },
		{ "kafka", required_argument, NULL, 'k' },
		{ "kafka-property", required_argument, NULL, O_KAFKA_PROP },
		{ "forward", required_argument, NULL, O_FORWARD },
		{ "syslog", no_argument, NULL, O_SYSLOG },
		{ "user", required_argument, NULL, 'Z' },
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

	while ((ch = getopt_long(argc, argv, "r:i:u:k:f:c:o:C:T:w:Z:qvVh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'r': c->file = optarg; break;
		case 'i': c->iface = optarg; break;
		case 'u': c->udp = optarg; break;
		case 'k': c->kafka = optarg; break;
		case O_KAFKA_PROP:
			if (c->nkafka_props >= MAX_OPTIONS || !strchr(optarg, '=')) {
				fprintf(stderr, "intspect: --kafka-property '%s': expected NAME=VALUE "
					"(at most %d)\n", optarg, MAX_OPTIONS);
				return -1;
			}
			c->kafka_props[c->nkafka_props++] = optarg;
			break;
		case O_FORWARD: c->forward = optarg; break;
		case 'w': {
			char *end;
			unsigned long n = strtoul(optarg, &end, 10);
			if (*end || !isdigit((unsigned char)*optarg) || n == 0 || n > 64) {
				fprintf(stderr, "intspect: -w: '%s' is not a number of workers (1-64)\n", optarg);
				return -1;
			}
			c->workers = (unsigned)n;
			break;
		}
		case 'f': c->filter = optarg; break;
		case 'c': {
			char *end;
			errno = 0;
			/* strtoull takes "-5" as 2^64-5: digits only */
			c->count = strtoull(optarg, &end, 10);
			if (*end || !*optarg || !isdigit((unsigned char)optarg[0]) || errno ||
			    c->count == 0) {
				fprintf(stderr, "intspect: -c: '%s' is not a packet count (1 or more)\n", optarg);
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
			print_version();
			exit(0);
		case 'h': cli_usage(stdout); exit(0);
		case O_DUMP: c->dump = true; break;
		case O_LIST_ATTRS: c->list_attrs = true; break;
		case O_LIST_PROTOS: c->list_protos = true; break;
		case O_PLUGIN_DIR: c->plugin_dir = optarg; break;
		case O_NO_BUILTIN: c->no_builtin = true; break;
		case O_DPDK: c->dpdk = optarg; break;
		case O_ALLOW_DROPS: c->allow_drops = true; break;
		case O_PIDFILE: c->pidfile = optarg; break;
		case O_CONTROL: c->control = optarg; break;
		case O_MERGE:
			if (c->merge.nsrc >= CLI_MERGE_MAX) {
				fprintf(stderr, "intspect: more than %d --merge inputs\n", CLI_MERGE_MAX);
				return -1;
			}
			c->merge.src[c->merge.nsrc++] = optarg;
			c->merging = true;
			break;
		case O_SYSLOG: c->use_syslog = true; break;
		case 'Z': c->user = optarg; break;
		default: cli_usage(stderr); return -1;
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
	if (!!c->file + !!c->iface + !!c->udp + !!c->dpdk + !!c->kafka > 1) {
		fprintf(stderr, "intspect: give one input: -r, -i, -u, -k or --dpdk\n");
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
	/* the installed plugin directory by default: a plugin dropped there
	 * is found (those built in are skipped) */
	const char *dir = c->plugin_dir;
	struct stat st;
	if (!dir && stat(ISP_PLUGIN_DIR, &st) == 0 && S_ISDIR(st.st_mode))
		dir = ISP_PLUGIN_DIR;
	if (dir) {
		unsigned loaded, skipped;
		if (isp_load_plugin_dir(reg, dir, &loaded, &skipped, err, sizeof(err)) < 0) {
			fprintf(stderr, "intspect: %s\n", err);
			goto fail;
		}
		if (c->verbose)
			fprintf(stderr, "intspect: %u plugins loaded from %s, %u already built in\n",
				loaded, dir, skipped);
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

/* Is protocol id a heuristic child of the protocol named parent? */
static bool heuristic_under(const struct isp_registry *reg, uint16_t id, const char *parent)
{
	uint16_t p = isp_proto_id(reg, parent);

	for (unsigned k = 0; p != ISP_PROTO_NONE && k < reg->heur[p].n; k++)
		if (reg->heur[p].id[k] == id)
			return true;
	return false;
}

/* The generic port options of a protocol found by UDP or TCP port (or by
 * a heuristic under them), with the ports it has now: the defaults, or
 * what -o set. */
static void list_port_options(const struct isp_registry *reg, uint16_t id)
{
	static const struct { enum isp_table t; const char *key, *l4; } kinds[] = {
		{ ISP_TBL_UDP_PORT, "udp-ports", "udp" }, { ISP_TBL_TCP_PORT, "tcp-ports", "tcp" },
	};

	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		char ports[256] = "";
		size_t n = 0;

		for (unsigned port = 0; port < 65536; port++) {
			if (reg->table[kinds[k].t][port] != id)
				continue;
			int w = snprintf(ports + n, sizeof(ports) - n, "%s%u", n ? "," : "", port);
			n += w > 0 && (size_t)w < sizeof(ports) - n ? (size_t)w : 0;
		}
		if (!n && !heuristic_under(reg, id, kinds[k].l4))
			continue;
		printf("    -o %s.%s=P,...   %s destination ports that announce it (default %s)\n",
		       reg->proto[id].desc->name, kinds[k].key, kinds[k].l4, n ? ports : "none");
	}
}

static void list_protocols(const struct isp_registry *reg)
{
	for (uint16_t i = 0; i < reg->nprotos; i++) {
		const struct isp_proto_desc *d = reg->proto[i].desc;
		printf("%-12s %-9s %s\n", d->name, reg->proto[i].origin, d->help ? d->help : "");
		list_port_options(reg, i);
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
	for (uint16_t i = 0; i < reg->nprotos; i++) {
		if (st->malformed[i][ISP_NOT_MINE])
			fprintf(stderr, "intspect: %s: %llu packets to its ports were something "
				"else (not counted as malformed)\n", reg->proto[i].desc->name,
				(unsigned long long)st->malformed[i][ISP_NOT_MINE]);
	}
	if (rate) {
		double pps = secs > 0 ? (double)st->packets / secs : 0;
		fprintf(stderr, "intspect: %.3f s, %.0f packets/s (%.2f Mpps)\n", secs, pps, pps / 1e6);
	}
}

/* Open the channels the rules use (the compiler has checked every output
 * section, as -T does); NULL after a message. */
static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* What a run holds, for the callbacks. */
struct run {
	const struct isp_registry *reg;
	struct isp_program *prog;
	struct isp_channel **channels;
	struct isp_rules *rules;
	struct cli_rules *cr;   /* the running program and channels (reload) */
	bool dump;
	double t0;
};

/* --dump, alone or in front of the rules (one worker, so one context). */
static struct dump_ctx {
	const struct run *run;
	void *rules;            /* the rules' worker, or NULL */
} g_dump;

static void *dump_worker_new(void *ctx, unsigned i, unsigned n, char *err, size_t errlen)
{
	const struct run *r = ctx;

	g_dump.run = r;
	if (r->rules && !(g_dump.rules = isp_rules_ops.worker_new(r->rules, i, n, err, errlen)))
		return NULL;
	return &g_dump;
}

static void dump_item(void *ctx, const struct isp_packet *p, uint64_t what)
{
	struct dump_ctx *d = ctx;

	isp_dump_packet(d->run->reg, p, isp_pipeline_ts_digits(g_pipeline), stdout);
	if (d->rules)
		isp_rules_ops.item(d->rules, p, what);
}

static void dump_tick(void *ctx, uint64_t now_ns)
{
	struct dump_ctx *d = ctx;

	if (d->rules)
		isp_rules_ops.tick(d->rules, now_ns);
}

static const struct isp_pipeline_ops dump_ops = {
	.worker_new = dump_worker_new,
	.item = dump_item,
	.tick = dump_tick,
};

/* SIGUSR1: one worker's counters are read between its packets; several
 * workers publish theirs when asked (isp_pipeline_sample), the rules'
 * with them. */
static void progress(void *ctx, uint64_t packets)
{
	const struct run *r = ctx;
	struct isp_stats st = { 0 };

	(void)packets;
	if (isp_pipeline_workers(g_pipeline) == 1) {
		isp_pipeline_stats(g_pipeline, &st);
		print_summary(r->reg, &st, now_sec() - r->t0, true);
		if (r->rules)
			isp_rules_print_stats(r->rules, false, stderr);
	} else {
		isp_pipeline_sample(g_pipeline, &st, NULL, 100);
		print_summary(r->reg, &st, now_sec() - r->t0, true);
		if (r->rules)
			isp_rules_print_stats(r->rules, true, stderr);
	}
	if (r->cr) {
		pthread_mutex_lock(&r->cr->mu);
		cli_print_channels(r->cr->prog, r->cr->channels);
		pthread_mutex_unlock(&r->cr->mu);
	}
}

static void note_cpus(unsigned workers)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (cpus > 0 && workers > (unsigned long)cpus)
		fprintf(stderr, "intspect: note: %u workers share %ld CPUs; with no more workers "
			"than CPUs each has one\n", workers, cpus);
}

/* A Kafka input's commits wait for the channels (src/core/kafkasrc.h). */
static unsigned rec_mark_cb(void *ctx, uint64_t *mark, unsigned max)
{
	struct cli_rules *cr = ctx;

	pthread_mutex_lock(&cr->mu);
	unsigned n = cli_channels_mark(cr->prog, cr->channels, mark, max);
	pthread_mutex_unlock(&cr->mu);
	return n;
}

static bool rec_settled_cb(void *ctx, const uint64_t *mark, unsigned n)
{
	struct cli_rules *cr = ctx;

	pthread_mutex_lock(&cr->mu);
	bool ok = cli_channels_settled(cr->prog, cr->channels, mark, n);
	pthread_mutex_unlock(&cr->mu);
	return ok;
}

/* Everything after the options: the rules, the channels, the pipeline. */
static int run(struct cli *c, struct isp_registry *reg, struct isp_program *prog)
{
	struct run r = { .reg = reg, .prog = prog, .dump = c->dump };
	struct isp_source_opts so = { .file = c->file, .iface = c->iface, .udp = c->udp,
				      .dpdk = c->dpdk, .kafka = c->kafka, .filter = c->filter,
				      .kafka_props = c->kafka_props, .nkafka_props = c->nkafka_props,
				      .promisc = true };
	char err[512];
	int rc = 0;

	if (prog)
		isp_program_input(prog, &so);
	if (!so.file && !so.iface && !so.udp && !so.dpdk && !so.kafka) {
		fprintf(stderr, "intspect: no input: give -r FILE, -i IFACE, -u PORT, -k BROKERS/TOPIC "
			"or --dpdk ARGS (see --help)\n");
		return 2;
	}
	unsigned workers = c->workers ? c->workers : prog && prog->workers ? prog->workers : 1;
	if (!prog || c->dump)
		workers = 1;    /* one dump in packet order; nothing to share without rules */
	/* what is wrong with the input's options is a usage error (2), not a
	 * failing input (1): a service manager must not start it again */
	if (isp_source_check(&so, workers, err, sizeof(err)) < 0) {
		fprintf(stderr, "intspect: %s\n", err);
		return 2;
	}
	if (c->forward && (prog || c->dump)) {
		fprintf(stderr, "intspect: --forward runs no rules and no dump: give it without -C "
			"and --dump\n");
		return 2;
	}
	/* a Kafka input commits its offsets behind what the channels settled */
	static struct cli_rules cr;
	so.rec_mark = rec_mark_cb;
	so.rec_settled = rec_settled_cb;
	so.rec_ctx = &cr;
	static struct cli_forward fwd;
	if (c->forward && cli_forward_open(&fwd, c->forward, reg, so.file != NULL) < 0)
		return 2;
	if (prog && (so.iface || so.udp || so.dpdk) && isp_program_check_live(prog, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	if (prog && cli_check_program(prog, reg, "intspect") < 0)
		return 2;
	if (prog) {
		if (!(r.channels = cli_open_channels(prog)))
			return 2;
		isp_program_bind_channels(prog, r.channels);
		if (!(r.rules = isp_rules_new(prog, reg, r.channels, err, sizeof(err)))) {
			fprintf(stderr, "intspect: %s\n", err);
			cli_close_channels(prog, r.channels);
			return 2;
		}
		isp_rules_set_live(r.rules, so.iface || so.udp || so.dpdk);
	}
	struct isp_pipeline_opts po = { .src = so, .workers = workers, .count = c->count };
	if (c->forward) {
		po.ops = &cli_forward_ops;
		po.rules = &fwd;
		po.workers = 1;
	} else if (c->dump) {
		po.ops = &dump_ops;
		po.rules = &r;
	} else if (r.rules) {
		po.ops = &isp_rules_ops;
		po.rules = r.rules;
	}
	struct isp_pipeline *pl = isp_pipeline_open(reg, &po, err, sizeof(err));
	g_pipeline = pl;
	if (pl && g_stop)
		isp_pipeline_break(pl);
	if (!g_pipeline) {
		fprintf(stderr, "intspect: %s\n", err);
		isp_rules_free(r.rules);
		cli_close_channels(prog, r.channels);
		cli_forward_close(&fwd, stderr);
		return 1;
	}
	if (workers > 1)
		note_cpus(workers);
	/* the control socket (before -Z: its directory may be root's); its
	 * commands act through the same pipeline */
	unsigned nrules = prog ? prog->nevents + prog->nqueries + prog->nmonitors : 0;
	g_ctl_run = (struct isp_ctl_run){ reg, g_pipeline, r.rules, prog, r.channels,
					prog ? prog->nchannels : 0, calloc(nrules + 1, sizeof(bool)),
					prog && !c->dump ? reload_cb : NULL, &cr,
					prog && !c->dump ? monitor_cb : NULL };
	for (unsigned i = 0; g_ctl_run.enabled && i < nrules; i++)
		g_ctl_run.enabled[i] = true;
	cr = (struct cli_rules){ .reg = reg, .config = c->config, .rules = r.rules,
				 .pl = g_pipeline, .prog = prog, .channels = r.channels,
				 .enabled = g_ctl_run.enabled };
	pthread_mutex_init(&cr.mu, NULL);
	r.cr = &cr;
	char ctl_path[256];
	struct isp_ctl_server *ctl_server = !g_ctl_run.enabled ? NULL :
		cli_control_start(c->control, prog, so.iface || so.udp || so.dpdk, c->user,
				  &g_ctl_run, ctl_path, sizeof(ctl_path));
	g_ctl_server = ctl_server;
	if (ctl_server && c->verbose && ctl_path[0])
		fprintf(stderr, "intspect: control socket %s\n", ctl_path);
	/* tcpdump's -Z: the capture sockets, the UDP port, the channels and
	 * the control socket are open; nothing after this needs root */
	if (c->user && service_run_as(c->user) < 0) {
		g_ctl_server = NULL;
		isp_ctl_server_stop(ctl_server);
		free(g_ctl_run.enabled);
		isp_pipeline_close(g_pipeline);
		g_pipeline = NULL;
		isp_rules_free(r.rules);
		cli_close_channels(prog, r.channels);
		return 2;
	}

	static char outbuf[1 << 20];
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	r.t0 = now_sec();
	struct isp_pipeline_ctl ctl = { &g_print_stats, progress, &r };
	/* Prometheus scrapes read the counters while the pipeline runs */
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	static struct self_metrics self;
	pthread_mutex_lock(&cr.mu);     /* a reload on the control thread updates it */
	self = (struct self_metrics){ reg, g_pipeline, r.rules, cr.channels,
				      cr.prog ? cr.prog->nchannels : 0,
				      (double)now.tv_sec + now.tv_nsec / 1e9, &cr.mu };
	g_self = &self;
	pthread_mutex_unlock(&cr.mu);
	isp_prom_set_self(self_metrics_write, &self);
	if (isp_pipeline_run(g_pipeline, &ctl) != 0) {
		fprintf(stderr, "intspect: %s\n", isp_pipeline_error(g_pipeline));
		rc = 1;
	}
	g_ctl_server = NULL;
	isp_ctl_server_stop(ctl_server);
	double secs = now_sec() - r.t0;
	fflush(stdout);
	static struct isp_stats st;
	isp_pipeline_stats(g_pipeline, &st);
	isp_pipeline_report(g_pipeline, stderr);
	print_summary(reg, &st, secs, c->quiet);
	if (r.rules)
		isp_rules_print_stats(r.rules, false, stderr);
	g_draining = 1;
	isp_prom_set_self(NULL, NULL);
	isp_pipeline_close(g_pipeline);
	g_pipeline = NULL;
	isp_rules_free(r.rules);
	/* the channels of the running program (a reload may have replaced
	 * them), and those a reload closed with losses */
	unsigned lossy = cli_close_channels(cr.prog, cr.channels) + cr.lossy +
			 cli_forward_close(&fwd, stderr);
	if (isp_channels_hurried())
		fprintf(stderr, "intspect: stopped at once (signal): what the channels still held is "
			"counted dropped\n");
	free(cr.enabled);
	cli_reload_end(&cr, prog);
	pthread_mutex_destroy(&cr.mu);
	if (lossy && rc == 0 && !c->allow_drops) {
		fprintf(stderr, "intspect: %u channel(s) lost records or never connected: exit status %d "
			"(--allow-drops: 0)\n", lossy, EXIT_LOST);
		rc = EXIT_LOST;
	}
	return rc;
}

int main(int argc, char **argv)
{
	struct cli c = { 0 };

	if (parse_cli(argc, argv, &c) < 0)
		return 2;
	/* first: a signal during set-up is kept (a stop ends the run as soon
	 * as the input is open), never the default death */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGUSR1, on_usr1);       /* tcpdump/Suricata: print the counters now */
	signal(SIGHUP, on_hup);         /* re-read the config (nothing until it runs) */
	signal(SIGPIPE, SIG_IGN);       /* a closed consumer is an error to count, not a death */
	if ((c.use_syslog && service_syslog() < 0) || (c.pidfile && service_pidfile(c.pidfile) < 0)) {
		service_end();
		return 2;
	}
	isp_compile_set_output_check(isp_channel_check_at);
	struct isp_registry *reg = build_registry(&c);
	if (!reg) {
		service_end();
		return 2;
	}
	int rc = 0;
	if (c.list_attrs || c.list_protos) {
		if (c.list_protos)
			list_protocols(reg);
		if (c.list_attrs)
			isp_list_attributes(reg, stdout);
	} else if (c.check_config) {
		rc = cli_check_config(reg, c.check_config);
	} else {
		/* the diagnostics own the config's file names, which channel
		 * error messages quote: they live as long as the program */
		struct dsl_diags diags;
		struct isp_program *prog = NULL;
		dsl_diags_init(&diags);
		if (c.config) {
			prog = isp_compile_file(&diags, reg, c.config);
			dsl_print_diags(&diags, stderr);
		}
		bool merge = c.merging || (prog && prog->input_mode &&
					   strcmp(prog->input_mode, "kafka-partials") == 0);
		c.merge.allow_drops = c.allow_drops;
		if (merge && !prog && !(c.config && !prog)) {
			fprintf(stderr, "intspect: --merge needs the query reports to merge: -C FILE\n");
			rc = 2;
		} else {
			rc = c.config && !prog ? 2 : merge ? cli_merge_run(&c.merge, reg, prog, &g_stop) :
			     run(&c, reg, prog);
		}
		isp_program_free(prog);
		dsl_diags_free(&diags);
	}
	isp_registry_free(reg);
	service_end();
	return rc;
}
