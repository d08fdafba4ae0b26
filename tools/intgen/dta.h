/*
 * dta.h - Direct Telemetry Access reports: the values of one report, the
 * generator that draws them, and their bytes (src/plugins/dta/README.md,
 * "Wire format", is the specification; no intspect code is used).
 *
 * As for INT items, a report is drawn once into struct dta_report and
 * then handed unchanged to the encoder, the sender and the expect writer,
 * so the pcap, the datagrams and the expected values agree by
 * construction.
 */
#ifndef INTGEN_DTA_H
#define INTGEN_DTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dta_sketch.h"
#include "options.h"
#include "rng.h"

#define DTA_OP_KEYWRITE 1
#define DTA_OP_APPEND 2
#define DTA_OP_INCREMENT 3
#define DTA_OP_POSTCARD 4
#define DTA_OP_SKETCH 5

#define DTA_FLAG_IMMEDIATE 0x80
#define DTA_FLAG_RETRANSMIT 0x40

/* Largest DTA payload: the base header, the Sketch-Merge header and
 * DTA_MAX_CHUNK_WORDS counters; the frame adds Ethernet, IPv4 and UDP. */
#define DTA_MAX_PAYLOAD (3 + 12 + 4 * 16000)
#define DTA_MAX_FRAME (14 + 20 + 8 + DTA_MAX_PAYLOAD)

struct dta_report {
	uint8_t opcode;
	uint8_t seq;          /* number mod 256 (not sent with --dta-no-seq) */
	uint8_t flags;
	uint16_t reporter;    /* intgen's reporter index r */
	uint64_t number;      /* reports the reporter made before this one */
	uint8_t redundancy;   /* Key-Write, Key-Increment */
	uint32_t key;         /* Key-Write, Key-Increment, Postcarder */
	uint32_t list;        /* Append */
	uint64_t counter;     /* Key-Increment */
	uint8_t hop;          /* Postcarder */
	uint16_t sketch, epoch, column, columns, rows; /* Sketch-Merge */
	unsigned nwords;      /* data words, or counters (Sketch-Merge) */
	uint32_t *words;      /* the report's own buffer, dta_gen.max_words */
	unsigned shard;       /* destination 10.0.100.(1 + shard) */

	/* what the network did (dta_run.c) */
	bool lost, reordered;
	uint64_t index;       /* 1-based position in the capture, 0 if lost */
};

struct dta_gen {
	const struct ig_config *cfg;
	struct rng rng;
	uint32_t *keys;       /* key index -> key, distinct */
	uint64_t *made;       /* per reporter: reports made */
	uint64_t total;       /* reports made */
	unsigned max_words;   /* capacity a report's words buffer needs */
	struct dta_sketch sk; /* --dta-op sketch */
};

/* -1 when out of memory. */
int dta_gen_init(struct dta_gen *g, const struct ig_config *cfg);
void dta_gen_free(struct dta_gen *g);

/* Draw the next report into rep (rep->words must hold g->max_words).
 * Returns 1, or 0 when the run is complete (-n reports, or every column
 * of every epoch and reporter in sketch mode). */
int dta_gen_next(struct dta_gen *g, struct dta_report *rep);

/* The DTA bytes (the UDP payload) at p, at most DTA_MAX_PAYLOAD. */
size_t dta_payload(uint8_t *p, const struct ig_config *cfg,
		   const struct dta_report *rep);

/* The whole frame, Ethernet / IPv4 / UDP / DTA, at most DTA_MAX_FRAME. */
size_t dta_frame(uint8_t *p, const struct ig_config *cfg,
		 const struct dta_report *rep);

/* Reporter r's address in the capture: 10.0.(r / 250).(r % 250 + 1). */
void dta_reporter_ip(unsigned r, uint8_t ip[4]);

/* Destination of a report in the capture: 10.0.100.(1 + shard). */
void dta_dest_ip(unsigned shard, uint8_t ip[4]);

#define DTA_SRC_PORT_BASE 50000u

#endif
