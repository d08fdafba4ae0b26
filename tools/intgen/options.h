/*
 * options.h - intgen configuration and command-line parsing.
 */
#ifndef INTGEN_OPTIONS_H
#define INTGEN_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

enum ig_format { FMT_MD, FMT_MX, FMT_REPORT, FMT_DTA };

/* INT specification versions; the order matters (comparisons). */
enum ig_intver { IV_05, IV_10, IV_20, IV_21 };

enum ig_transport { TR_UDP, TR_TCP, TR_VXLAN_GPE, TR_GENEVE, TR_GRE };

enum ig_l4 { L4_UDP, L4_TCP, L4_MIX };

#define IG_MAX_HOPS 32
#define IG_MAX_COALESCE 32
#define IG_MAX_SIZE 9000
#define IG_MAX_FLOWS (1u << 22)

/* --dta-op: the values 1..5 are the DTA opcodes themselves. */
enum ig_dta_op { DOP_MIX, DOP_KEYWRITE, DOP_APPEND, DOP_INCREMENT,
		 DOP_POSTCARD, DOP_SKETCH };

enum ig_dta_sketch { DSK_COUNT_MIN, DSK_COUNT_SKETCH, DSK_HLL };

/* --format dta (see dta_opts.c for the limits and README.md for the
 * meaning of each option). */
struct ig_dta {
	bool given;           /* some --dta-* option was used */
	uint16_t port;        /* UDP destination port */
	unsigned shards;      /* destination 10.0.100.(1 + shard) */
	enum ig_dta_op op;
	unsigned reporters;
	uint32_t keys;        /* distinct keys */
	unsigned words;       /* data words of Key-Write and Append */
	uint32_t lists;
	unsigned redundancy;
	bool no_seq;          /* 2-byte base header */
	bool retransmit;      /* flag 0x40 */
	int priority;         /* 0..3, or -1 = uniform mix */
	double immediate;     /* fraction with flag 0x80 */
	unsigned hops;        /* Postcarder hops 0..hops-1 */
	double loss, reorder; /* network faults on the first transmission */
	/* Sketch-Merge */
	bool sketch_given;    /* a sketch-only option was used */
	bool rows_given;
	enum ig_dta_sketch sketch;
	uint16_t sketch_id;
	unsigned rows;
	uint32_t width;       /* power of 2 */
	uint64_t hash_seed;
	uint32_t epochs;
	uint64_t items;       /* stream items per reporter per epoch */
	unsigned chunk;       /* columns per report */
	/* live reporter */
	const char *send;     /* --send HOST[:PORT], NULL: pcap only */
	uint16_t nack_port;
	unsigned linger_ms;
};

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
	bool pps_set;         /* --pps given (send mode has its own default) */
	struct ig_dta dta;    /* --format dta */
};

/* Parse argv into cfg, applying the per-version defaults. Prints a message
 * to stderr and returns -1 on an invalid combination; returns 1 when the
 * program should exit successfully (--help, --version), 0 to run. */
int options_parse(struct ig_config *cfg, int argc, char **argv);

/* INT version as the text used on the command line ("0.5", ...). */
const char *intver_name(enum ig_intver v);

/* Parsing helpers shared with dta_opts.c. Each prints a message to stderr
 * and returns -1 on an invalid value. pick returns the index of s in the
 * NULL-terminated names; fail prints "intgen: msg" and returns -1. */
int parse_u64(const char *s, uint64_t *out, uint64_t min, uint64_t max,
	      const char *what);
int parse_double(const char *s, double *out, double min, const char *what);
int pick(const char *s, const char *const *names, const char *what);
int fail(const char *msg);

#endif
