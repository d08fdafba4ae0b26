/*
 * dta_opts.h - the --format dta options (DTA reports, sketches, the live
 * reporter). Kept apart from options.c so that file stays about INT.
 */
#ifndef INTGEN_DTA_OPTS_H
#define INTGEN_DTA_OPTS_H

#include <stdio.h>

#include "options.h"

/* getopt_long values; options.c hands every value >= OPT_DTA_FIRST to
 * dta_option. */
enum {
	OPT_DTA_FIRST = 512,
	OPT_DTA_PORT = OPT_DTA_FIRST, OPT_DTA_SHARDS, OPT_DTA_OP,
	OPT_DTA_REPORTERS, OPT_DTA_KEYS, OPT_DTA_WORDS, OPT_DTA_LISTS,
	OPT_DTA_REDUNDANCY, OPT_DTA_NOSEQ, OPT_DTA_RETRANSMIT,
	OPT_DTA_NORETRANSMIT, OPT_DTA_PRIORITY, OPT_DTA_IMMEDIATE,
	OPT_DTA_HOPS, OPT_DTA_LOSS, OPT_DTA_REORDER, OPT_DTA_SKETCH,
	OPT_DTA_SKETCHID, OPT_DTA_ROWS, OPT_DTA_WIDTH, OPT_DTA_SEED,
	OPT_DTA_EPOCHS, OPT_DTA_ITEMS, OPT_DTA_CHUNK, OPT_DTA_SEND,
	OPT_DTA_NACKPORT, OPT_DTA_LINGER
};

/* Entries for options.c's struct option table (needs <getopt.h>). */
#define DTA_LONG_OPTS \
	{ "dta-port", required_argument, NULL, OPT_DTA_PORT }, \
	{ "dta-shards", required_argument, NULL, OPT_DTA_SHARDS }, \
	{ "dta-op", required_argument, NULL, OPT_DTA_OP }, \
	{ "dta-reporters", required_argument, NULL, OPT_DTA_REPORTERS }, \
	{ "dta-keys", required_argument, NULL, OPT_DTA_KEYS }, \
	{ "dta-words", required_argument, NULL, OPT_DTA_WORDS }, \
	{ "dta-lists", required_argument, NULL, OPT_DTA_LISTS }, \
	{ "dta-redundancy", required_argument, NULL, OPT_DTA_REDUNDANCY }, \
	{ "dta-no-seq", no_argument, NULL, OPT_DTA_NOSEQ }, \
	{ "dta-retransmit", no_argument, NULL, OPT_DTA_RETRANSMIT }, \
	{ "dta-no-retransmit", no_argument, NULL, OPT_DTA_NORETRANSMIT }, \
	{ "dta-priority", required_argument, NULL, OPT_DTA_PRIORITY }, \
	{ "dta-immediate", required_argument, NULL, OPT_DTA_IMMEDIATE }, \
	{ "dta-hops", required_argument, NULL, OPT_DTA_HOPS }, \
	{ "dta-loss", required_argument, NULL, OPT_DTA_LOSS }, \
	{ "dta-reorder", required_argument, NULL, OPT_DTA_REORDER }, \
	{ "dta-sketch", required_argument, NULL, OPT_DTA_SKETCH }, \
	{ "dta-sketch-id", required_argument, NULL, OPT_DTA_SKETCHID }, \
	{ "dta-rows", required_argument, NULL, OPT_DTA_ROWS }, \
	{ "dta-width", required_argument, NULL, OPT_DTA_WIDTH }, \
	{ "dta-seed", required_argument, NULL, OPT_DTA_SEED }, \
	{ "dta-epochs", required_argument, NULL, OPT_DTA_EPOCHS }, \
	{ "dta-items", required_argument, NULL, OPT_DTA_ITEMS }, \
	{ "dta-chunk", required_argument, NULL, OPT_DTA_CHUNK }, \
	{ "send", required_argument, NULL, OPT_DTA_SEND }, \
	{ "nack-port", required_argument, NULL, OPT_DTA_NACKPORT }, \
	{ "linger", required_argument, NULL, OPT_DTA_LINGER }

/* Limits. A reporter's UDP source port is 50000 + r, so r < 15536. A
 * Sketch-Merge report must fit one UDP datagram (65507 bytes). */
#define DTA_MAX_REPORTERS 15536u
#define DTA_MAX_KEYS (1u << 24)
#define DTA_MAX_WORDS 32u
#define DTA_MAX_ROWS 64u          /* count sketch signs are bits of a u64 */
#define DTA_MAX_WIDTH 65536u      /* columns are numbered with a u16 */
#define DTA_MAX_CHUNK_WORDS 16000u

void dta_defaults(struct ig_dta *d);

/* Apply one --dta-* (or --send, --nack-port, --linger) option.
 * Returns 0, or -1 after printing a message. */
int dta_option(struct ig_config *cfg, int c, const char *arg);

/* Cross-option checks and defaults once the command line is read; called
 * for --format dta or when a DTA option was given. 0 or -1. */
int dta_finish(struct ig_config *cfg);

void dta_usage(FILE *fp);

#endif
