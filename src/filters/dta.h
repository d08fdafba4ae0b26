/*
 * dta.h - the DTA collector in the rule engine (dta.c: reports into
 * stores, stores fed by rules; dta_query.c: queries on the stores).
 */
#ifndef ISP_FILTERS_DTA_H
#define ISP_FILTERS_DTA_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../core/plugin.h"
#include "../core/registry.h"
#include "../plugins/dta/store.h"
#include "program.h"

/* A worker's counters, summed over workers for stats (all uint64_t). */
struct dta_counts {
	uint64_t reports[6];    /* by opcode (1..5) */
	uint64_t applied;       /* written, appended, counted, merged */
	uint64_t unstored;      /* no store takes their kind (or sketch id) */
	uint64_t rejected;      /* do not fit their store (value, list, hop, shape) */
	uint64_t shed[4];       /* by priority, under overload */
	uint64_t immediate;     /* with the immediate flag */
	uint64_t duplicates;    /* retransmittable reports that came before */
	uint64_t gaps;          /* sequence gaps found (each NACKed) */
	uint64_t column_gaps;   /* Sketch-Merge columns found missing (NACKed) */
	uint64_t nacks;         /* NACKs sent */
	uint64_t nack_errors;   /* NACKs the socket refused */
	uint64_t resyncs;       /* reporters that started their sequence again */
	uint64_t abandoned;     /* sequences given up: missing past the lag */
	uint64_t late;          /* reports of a sequence given up, come after all */
	uint64_t untracked;     /* reports of reporters beyond max-reporters */
	uint64_t rule_writes;   /* values rules wrote into stores */
	uint64_t reporters;     /* reporters tracked now */
};

struct isp_engine;

/* The collector of engine e (nothing when the program has no store);
 * stores by program store index; nack: send NACKs. 0, or -1 out of memory. */
int dta_engine_new(struct isp_engine *e, const struct isp_registry *reg,
		   struct dta_store *const *stores, bool nack);
void dta_engine_free(struct isp_engine *e);
/* Is p a DTA report this engine's collector takes? */
bool dta_takes(const struct isp_engine *e, const struct isp_packet *p);
/* Its reporter's hash (the route to the worker that tracks it). */
uint64_t dta_route_hash(struct isp_engine *e, const struct isp_packet *p);
void dta_packet(struct isp_engine *e, const struct isp_packet *p);
void dta_rules(struct isp_engine *e, const struct isp_packet *p);
/* Appends waiting in the batch go to their store. */
void dta_flush(struct isp_engine *e);
/* Time passes: NACKs that no report can trigger (a Sketch-Merge
 * reporter gone quiet before its last column). With Sketch-Merge stores
 * and NACKs, ticks come at least every DTA_TICK_NS. */
#define DTA_TICK_NS 20000000ull
void dta_tick(struct isp_engine *e, uint64_t now_ns);
void dta_publish(struct isp_engine *e);
void dta_counts_add(const struct isp_engine *e, bool published, struct dta_counts *sum);

/* A rule-fed store's key bytes for one attribute value, appended at len
 * (store.h's encoding: numbers 8 bytes big-endian, IPv6 16, MAC 6,
 * strings with their 0, arrays a count byte then 8 bytes an element).
 * The new length, or 0 when it does not fit. */
size_t dta_key_put(uint8_t *buf, size_t len, size_t cap, const struct isp_value *v);

/* ---- stores of a run (opened once, shared by every engine) ---- */

/* Open every store of prog; workers > 1: written by several threads.
 * NULL with a message. keep: the stores of a previous program (old), the
 * same objects in the new array when their section did not change (hot
 * reload). */
struct dta_store **dta_stores_open(const struct isp_program *prog, unsigned workers,
				   const struct isp_program *old, struct dta_store *const *keep,
				   char *err, size_t errlen);
/* Close the n stores of an array but those also in others (m), free it. */
void dta_stores_release(struct dta_store **stores, unsigned n, struct dta_store *const *others,
			unsigned m);

/*
 * A query on a store (the control socket's dta command): op "get",
 * "poll", "estimate", "cardinality", "info"; args as the user wrote them.
 * 0 with a JSON object in *json (malloc'd), or -1 with a message.
 */
int dta_query(const struct isp_program *prog, const struct isp_registry *reg,
	      struct dta_store *const *stores, const char *op, const char *store,
	      const char *const *args, unsigned nargs, char **json, char *err, size_t errlen);

/* One line per store and one for the collector's counters. */
void dta_print_stats(const struct isp_program *prog, struct dta_store *const *stores,
		     const struct dta_counts *c, FILE *out);

#endif
