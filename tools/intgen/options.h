/*
 * options.h - intgen configuration and command-line parsing.
 */
#ifndef INTGEN_OPTIONS_H
#define INTGEN_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

enum ig_format { FMT_MD, FMT_MX, FMT_REPORT };

/* INT specification versions; the order matters (comparisons). */
enum ig_intver { IV_05, IV_10, IV_20, IV_21 };

enum ig_transport { TR_UDP, TR_TCP, TR_VXLAN_GPE, TR_GENEVE, TR_GRE };

enum ig_l4 { L4_UDP, L4_TCP, L4_MIX };

#define IG_MAX_HOPS 32
#define IG_MAX_COALESCE 32
#define IG_MAX_SIZE 9000
#define IG_MAX_FLOWS (1u << 22)

struct ig_config {
	const char *out_path;
	const char *expect_path;
	uint64_t count;
	uint64_t seed;
	enum ig_format format;
	enum ig_intver int_ver;
	enum ig_transport transport;
	unsigned hops_min, hops_max;
	uint16_t bitmap;
	uint32_t flows;
	bool flow_shuffle;    /* --flow-order shuffle: each flow once per round */
	bool ipv6;
	unsigned size;
	bool l4s;             /* --dialect l4s */
	int report_ver;       /* 0, 1 or 2 (v0.5, v1.0, v2.0) */
	uint16_t report_port;
	unsigned coalesce;
	uint16_t rep_md_bits; /* v1.0: 6-bit value; v2.0: 16-bit */
	int report_nproto;    /* v0.5 NProto 0/1/2, or -1 = mix */
	bool report_inner_int;/* inner packet carries INT-MD */
	double malformed;     /* fraction of broken packets, 0 = none */
	bool unavailable;
	uint64_t ts_start_ns;
	double pps;
	bool nanosec;
	uint16_t gre_proto;
	uint16_t geneve_class;
	enum ig_l4 inner_l4;  /* inner flow L4 for tunnel transports */
};

/* Parse argv into cfg, applying the per-version defaults. Prints a message
 * to stderr and returns -1 on an invalid combination; returns 1 when the
 * program should exit successfully (--help, --version), 0 to run. */
int options_parse(struct ig_config *cfg, int argc, char **argv);

/* INT version as the text used on the command line ("0.5", ...). */
const char *intver_name(enum ig_intver v);

#endif
