/*
 * options.c - command line (getopt_long) and validation of combinations.
 */
#define _POSIX_C_SOURCE 200809L

#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dta_opts.h"
#include "model.h"

#define INTGEN_VERSION "1.0"

/* IEEE 802 "Local Experimental EtherType 1": the INT spec leaves the GRE
 * protocol type as TBD_INT, so use the value reserved for experiments. */
#define DEFAULT_GRE_PROTO 0x88B5
#define DEFAULT_GENEVE_CLASS 0x0103

enum {
	OPT_SEED = 256, OPT_FORMAT, OPT_INTVER, OPT_TRANSPORT, OPT_HOPS,
	OPT_BITMAP, OPT_FLOWS, OPT_IPV6, OPT_SIZE, OPT_DIALECT, OPT_REPVER,
	OPT_REPPORT, OPT_COALESCE, OPT_REPMD, OPT_MALFORMED, OPT_UNAVAIL,
	OPT_TSSTART, OPT_PPS, OPT_NSEC, OPT_GREPROTO, OPT_GENEVECLASS,
	OPT_INNERL4, OPT_NPROTO, OPT_REPINNER, OPT_FLOWORDER, OPT_VERSION
};

static const struct option long_opts[] = {
	{ "output", required_argument, NULL, 'o' },
	{ "expect", required_argument, NULL, 'e' },
	{ "count", required_argument, NULL, 'n' },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "int-version", required_argument, NULL, OPT_INTVER },
	{ "transport", required_argument, NULL, OPT_TRANSPORT },
	{ "hops", required_argument, NULL, OPT_HOPS },
	{ "bitmap", required_argument, NULL, OPT_BITMAP },
	{ "flows", required_argument, NULL, OPT_FLOWS },
	{ "flow-order", required_argument, NULL, OPT_FLOWORDER },
	{ "ipv6", no_argument, NULL, OPT_IPV6 },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "dialect", required_argument, NULL, OPT_DIALECT },
	{ "report-version", required_argument, NULL, OPT_REPVER },
	{ "report-port", required_argument, NULL, OPT_REPPORT },
	{ "coalesce", required_argument, NULL, OPT_COALESCE },
	{ "rep-md-bits", required_argument, NULL, OPT_REPMD },
	{ "report-nproto", required_argument, NULL, OPT_NPROTO },
	{ "report-inner", required_argument, NULL, OPT_REPINNER },
	{ "malformed", optional_argument, NULL, OPT_MALFORMED },
	{ "unavailable", no_argument, NULL, OPT_UNAVAIL },
	{ "ts-start", required_argument, NULL, OPT_TSSTART },
	{ "pps", required_argument, NULL, OPT_PPS },
	{ "nanosecond", no_argument, NULL, OPT_NSEC },
	{ "gre-proto", required_argument, NULL, OPT_GREPROTO },
	{ "geneve-class", required_argument, NULL, OPT_GENEVECLASS },
	{ "inner-l4", required_argument, NULL, OPT_INNERL4 },
	DTA_LONG_OPTS,
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 }
};

static void usage(FILE *fp)
{
	fputs(
"usage: intgen -o OUT.pcap [-e EXPECT.jsonl] [-n COUNT] [--seed S]\n"
"  --format md|mx|report|dta      inline INT-MD (default), INT-MX, telemetry\n"
"                                 reports, DTA reports (options below)\n"
"  --int-version 0.5|1.0|2.0|2.1  default 1.0 (mx: 2.1; report: 0.5/1.0/2.1 to\n"
"                                 match --report-version)\n"
"  --transport udp|tcp|vxlan-gpe|geneve|gre   default udp (DSCP 0x20 marks INT)\n"
"  --hops N | --hops MIN-MAX      hops per packet, 1..32 (default 3)\n"
"  --bitmap 0xFC00                instruction bitmap, bit 0 = MSB\n"
"                                 (default 0xFC00; 0xFFFF with --dialect l4s)\n"
"  --flows N                      distinct inner 5-tuples (default 64)\n"
"  --flow-order random|shuffle    each item draws its flow (default), or every\n"
"                                 flow once per N items, in a random order\n"
"  --ipv6                         inner packets are IPv6\n"
"  --size BYTES                   pad payload so frames are about BYTES (default 230)\n"
"  --dialect l4s                  p4-int-l4s: v1.0 layout + nb_mark/nb_drop word,\n"
"                                 HopML one short\n"
"  --inner-l4 udp|tcp|mix         inner flow L4 behind tunnels (default udp)\n"
"  --report-version 0.5|1.0|2.0   with --format report (default 2.0)\n"
"  --report-port P                report UDP destination port (default 32766)\n"
"  --coalesce K                   v2.0: K individual reports per packet (default 1)\n"
"  --rep-md-bits 0x....           v1.0 6-bit / v2.0 16-bit RepMdBits\n"
"                                 (defaults 0x3D / 0x7D00)\n"
"  --report-nproto 0|1|2|4        v0.5 NProto; 4: Host-INT, the IPv4 packet without\n"
"                                 Ethernet (default: mix of 0, 1 and 2)\n"
"  --report-inner int|plain       inner packet carries INT-MD (default) or not\n"
"  --malformed[=FRACTION]         emit broken packets (default fraction 0.02)\n"
"  --unavailable                  1 in 50 hop values all-ones (unavailable)\n"
"  --ts-start SEC --pps RATE      timestamps (default 1700000000, 1e6 pps)\n"
"  --nanosecond                   nanosecond pcap magic\n"
"  --gre-proto 0xXXXX             GRE protocol type for INT (default 0x88B5)\n"
"  --geneve-class 0xXXXX          Geneve option class for INT (default 0x0103)\n",
	      fp);
	dta_usage(fp);
}

int parse_u64(const char *s, uint64_t *out, uint64_t min, uint64_t max,
	      const char *what)
{
	char *end;

	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-' || v < min || v > max) {
		fprintf(stderr, "intgen: invalid %s '%s' (%llu..%llu)\n", what, s,
			(unsigned long long)min, (unsigned long long)max);
		return -1;
	}
	*out = v;
	return 0;
}

int parse_double(const char *s, double *out, double min, const char *what)
{
	char *end;

	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= min)) {
		fprintf(stderr, "intgen: invalid %s '%s'\n", what, s);
		return -1;
	}
	*out = v;
	return 0;
}

/* Map s to the index of the matching name, or -1 with a message. */
int pick(const char *s, const char *const *names, const char *what)
{
	for (int i = 0; names[i]; i++)
		if (!strcmp(s, names[i]))
			return i;
	fprintf(stderr, "intgen: unknown %s '%s'\n", what, s);
	return -1;
}

const char *intver_name(enum ig_intver v)
{
	static const char *const n[] = { "0.5", "1.0", "2.0", "2.1" };
	return n[v];
}

static int parse_hops(const char *s, struct ig_config *cfg)
{
	char buf[32];
	const char *dash = strchr(s, '-');
	uint64_t lo, hi;

	if (!dash) {
		if (parse_u64(s, &lo, 1, IG_MAX_HOPS, "--hops"))
			return -1;
		cfg->hops_min = cfg->hops_max = (unsigned)lo;
		return 0;
	}
	size_t n = (size_t)(dash - s);
	if (n == 0 || n >= sizeof(buf)) {
		fprintf(stderr, "intgen: invalid --hops '%s'\n", s);
		return -1;
	}
	memcpy(buf, s, n);
	buf[n] = 0;
	if (parse_u64(buf, &lo, 1, IG_MAX_HOPS, "--hops minimum") ||
	    parse_u64(dash + 1, &hi, 1, IG_MAX_HOPS, "--hops maximum"))
		return -1;
	if (lo > hi) {
		fprintf(stderr, "intgen: --hops %s: minimum above maximum\n", s);
		return -1;
	}
	cfg->hops_min = (unsigned)lo;
	cfg->hops_max = (unsigned)hi;
	return 0;
}

int fail(const char *msg)
{
	fprintf(stderr, "intgen: %s\n", msg);
	return -1;
}

/* Defaults that depend on other options, then cross-option checks. */
static int finish(struct ig_config *cfg, bool ver_set, bool bitmap_set,
		  bool repmd_set)
{
	if (cfg->format == FMT_DTA || cfg->dta.given)
		return dta_finish(cfg);
	if (!cfg->out_path)
		return fail("-o OUT.pcap is required (see --help)");
	if (!ver_set) {
		if (cfg->format == FMT_MX)
			cfg->int_ver = IV_21;
		else if (cfg->format == FMT_REPORT)
			cfg->int_ver = cfg->report_ver == 0 ? IV_05 :
				       cfg->report_ver == 1 ? IV_10 : IV_21;
	}
	if (!bitmap_set)
		cfg->bitmap = cfg->l4s ? 0xFFFF : 0xFC00;
	if (cfg->bitmap == 0)
		return fail("--bitmap must request at least one field");
	if (!repmd_set)
		cfg->rep_md_bits = cfg->report_ver == 1 ? 0x3D : 0x7D00;

	if (cfg->format == FMT_MX && cfg->int_ver != IV_21)
		return fail("--format mx needs --int-version 2.1 (INT-MX is new in v2.1)");
	if (cfg->l4s) {
		if (cfg->format == FMT_MX)
			return fail("--dialect l4s is an INT-MD dialect");
		if (cfg->int_ver == IV_05)
			return fail("--dialect l4s uses v1.0 headers; --int-version 0.5 is not allowed");
		if (cfg->transport != TR_UDP && cfg->transport != TR_TCP)
			return fail("--dialect l4s runs over --transport udp or tcp only");
	}
	if ((cfg->transport == TR_GRE || cfg->transport == TR_GENEVE) &&
	    (cfg->int_ver < IV_20 || cfg->l4s))
		return fail("INT over GRE and Geneve exists from --int-version 2.0 on");
	if (cfg->format != FMT_REPORT) {
		if (cfg->coalesce != 1)
			return fail("--coalesce applies to --format report only");
		if (!cfg->report_inner_int)
			return fail("--report-inner applies to --format report only");
	}
	if (cfg->format == FMT_REPORT) {
		if (cfg->coalesce > 1 && cfg->report_ver != 2)
			return fail("--coalesce needs --report-version 2.0");
		if (cfg->report_nproto >= 0 && cfg->report_ver != 0)
			return fail("--report-nproto applies to --report-version 0.5");
		if (cfg->report_nproto == 4 && cfg->ipv6 &&
		    (cfg->transport == TR_UDP || cfg->transport == TR_TCP))
			return fail("--report-nproto 4 (Host-INT) reports an IPv4 packet: not with --ipv6");
		if (cfg->report_ver == 1 && cfg->rep_md_bits > 0x3F)
			return fail("--rep-md-bits: v1.0 RepMdBits is a 6-bit field (0..0x3F)");
		if (cfg->report_ver == 2 && (cfg->rep_md_bits & 0x8000))
			return fail("--rep-md-bits: v2.0 bit 0 (0x8000) is reserved; the node ID is in the group header");
	}
	if (cfg->transport == TR_GENEVE && cfg->format != FMT_MX) {
		/* One hop must fit the 5-bit option length with the header. */
		if (3 + model_hop_words(cfg->int_ver, false, cfg->bitmap) > 31)
			return fail("--bitmap too large for one Geneve option (31 words)");
	}
	return 0;
}

int options_parse(struct ig_config *cfg, int argc, char **argv)
{
	static const char *const formats[] = { "md", "mx", "report", "dta", NULL };
	static const char *const versions[] = { "0.5", "1.0", "2.0", "2.1", NULL };
	static const char *const transports[] = { "udp", "tcp", "vxlan-gpe",
						  "geneve", "gre", NULL };
	static const char *const repvers[] = { "0.5", "1.0", "2.0", NULL };
	static const char *const l4s[] = { "udp", "tcp", "mix", NULL };
	static const char *const inner[] = { "int", "plain", NULL };
	static const char *const orders[] = { "random", "shuffle", NULL };
	bool ver_set = false, bitmap_set = false, repmd_set = false;
	uint64_t u;
	double d;
	int c, i;

	memset(cfg, 0, sizeof(*cfg));
	cfg->count = 1000;
	cfg->seed = 1;
	cfg->format = FMT_MD;
	cfg->int_ver = IV_10;
	cfg->transport = TR_UDP;
	cfg->hops_min = cfg->hops_max = 3;
	cfg->flows = 64;
	cfg->size = 230;
	cfg->report_ver = 2;
	cfg->report_port = 32766;
	cfg->coalesce = 1;
	cfg->report_nproto = -1;
	cfg->report_inner_int = true;
	cfg->ts_start_ns = 1700000000ull * 1000000000ull;
	cfg->pps = 1e6;
	cfg->gre_proto = DEFAULT_GRE_PROTO;
	cfg->geneve_class = DEFAULT_GENEVE_CLASS;
	cfg->inner_l4 = L4_UDP;
	dta_defaults(&cfg->dta);

	opterr = 1;
	while ((c = getopt_long(argc, argv, "o:e:n:h", long_opts, NULL)) != -1) {
		if (c >= OPT_DTA_FIRST) {
			if (dta_option(cfg, c, optarg))
				return -1;
			continue;
		}
		switch (c) {
		case 'o': cfg->out_path = optarg; break;
		case 'e': cfg->expect_path = optarg; break;
		case 'n':
			if (parse_u64(optarg, &cfg->count, 0, UINT32_MAX, "-n COUNT"))
				return -1;
			break;
		case OPT_SEED:
			if (parse_u64(optarg, &cfg->seed, 0, UINT64_MAX, "--seed"))
				return -1;
			break;
		case OPT_FORMAT:
			if ((i = pick(optarg, formats, "--format")) < 0)
				return -1;
			cfg->format = (enum ig_format)i;
			break;
		case OPT_INTVER:
			if ((i = pick(optarg, versions, "--int-version")) < 0)
				return -1;
			cfg->int_ver = (enum ig_intver)i;
			ver_set = true;
			break;
		case OPT_TRANSPORT:
			if ((i = pick(optarg, transports, "--transport")) < 0)
				return -1;
			cfg->transport = (enum ig_transport)i;
			break;
		case OPT_HOPS:
			if (parse_hops(optarg, cfg))
				return -1;
			break;
		case OPT_BITMAP:
			if (parse_u64(optarg, &u, 0, 0xFFFF, "--bitmap"))
				return -1;
			cfg->bitmap = (uint16_t)u;
			bitmap_set = true;
			break;
		case OPT_FLOWS:
			if (parse_u64(optarg, &u, 1, IG_MAX_FLOWS, "--flows"))
				return -1;
			cfg->flows = (uint32_t)u;
			break;
		case OPT_FLOWORDER:
			if ((i = pick(optarg, orders, "--flow-order")) < 0)
				return -1;
			cfg->flow_shuffle = i == 1;
			break;
		case OPT_IPV6: cfg->ipv6 = true; break;
		case OPT_SIZE:
			if (parse_u64(optarg, &u, 0, IG_MAX_SIZE, "--size"))
				return -1;
			cfg->size = (unsigned)u;
			break;
		case OPT_DIALECT:
			if (strcmp(optarg, "l4s"))
				return fail("--dialect: only 'l4s' is known");
			cfg->l4s = true;
			break;
		case OPT_REPVER:
			if ((i = pick(optarg, repvers, "--report-version")) < 0)
				return -1;
			cfg->report_ver = i;
			break;
		case OPT_REPPORT:
			if (parse_u64(optarg, &u, 1, 65535, "--report-port"))
				return -1;
			cfg->report_port = (uint16_t)u;
			break;
		case OPT_COALESCE:
			if (parse_u64(optarg, &u, 1, IG_MAX_COALESCE, "--coalesce"))
				return -1;
			cfg->coalesce = (unsigned)u;
			break;
		case OPT_REPMD:
			if (parse_u64(optarg, &u, 0, 0xFFFF, "--rep-md-bits"))
				return -1;
			cfg->rep_md_bits = (uint16_t)u;
			repmd_set = true;
			break;
		case OPT_NPROTO:
			if (parse_u64(optarg, &u, 0, 4, "--report-nproto"))
				return -1;
			if (u == 3)
				return fail("--report-nproto: 0, 1, 2 or 4 (v0.5 defines no 3)");
			cfg->report_nproto = (int)u;
			break;
		case OPT_REPINNER:
			if ((i = pick(optarg, inner, "--report-inner")) < 0)
				return -1;
			cfg->report_inner_int = i == 0;
			break;
		case OPT_MALFORMED:
			cfg->malformed = 0.02;
			if (optarg) {
				if (parse_double(optarg, &d, 0.0, "--malformed"))
					return -1;
				if (d > 1.0)
					return fail("--malformed: a fraction from 0 to 1");
				cfg->malformed = d;
			}
			break;
		case OPT_UNAVAIL: cfg->unavailable = true; break;
		case OPT_TSSTART:
			if (parse_double(optarg, &d, 0.0, "--ts-start"))
				return -1;
			if (d > 4e9) /* pcap record seconds are 32-bit */
				return fail("--ts-start: seconds since the epoch, below 2^32");
			cfg->ts_start_ns = (uint64_t)(d * 1e9 + 0.5);
			break;
		case OPT_PPS:
			if (parse_double(optarg, &d, 1e-3, "--pps"))
				return -1;
			cfg->pps = d;
			cfg->pps_set = true;
			break;
		case OPT_NSEC: cfg->nanosec = true; break;
		case OPT_GREPROTO:
			if (parse_u64(optarg, &u, 0x0600, 0xFFFF, "--gre-proto"))
				return -1;
			cfg->gre_proto = (uint16_t)u;
			break;
		case OPT_GENEVECLASS:
			if (parse_u64(optarg, &u, 0, 0xFFFF, "--geneve-class"))
				return -1;
			cfg->geneve_class = (uint16_t)u;
			break;
		case OPT_INNERL4:
			if ((i = pick(optarg, l4s, "--inner-l4")) < 0)
				return -1;
			cfg->inner_l4 = (enum ig_l4)i;
			break;
		case 'h':
			usage(stdout);
			return 1;
		case OPT_VERSION:
			puts("intgen " INTGEN_VERSION);
			return 1;
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "intgen: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	return finish(cfg, ver_set, bitmap_set, repmd_set);
}
