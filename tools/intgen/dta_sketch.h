/*
 * dta_sketch.h - the reporters' local sketches for Sketch-Merge reports
 * and the exact per-key counts they summarise (the truth a test compares
 * the collector's estimates with).
 *
 * The indexing follows src/plugins/dta/README.md ("Sketch-Merge"):
 * h = MurmurHash64A(4-byte big-endian key, seed), h1 = h mod 2^32,
 * h2 = (h >> 32) | 1, row i at (h1 + i*h2) mod width; the count sketch
 * sign is bit i of MurmurHash64A(key, seed ^ 0x5bd1e995); HyperLogLog
 * register h mod 2^b takes the rank of h >> b.
 */
#ifndef INTGEN_DTA_SKETCH_H
#define INTGEN_DTA_SKETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "options.h"
#include "rng.h"

/* One epoch's exact counts: the keys (by index) that occurred, in key
 * index order. */
struct dta_truth {
	uint32_t *idx;
	uint64_t *count;
	size_t n;
	uint64_t total;
};

struct dta_sketch {
	const struct ig_dta *d;
	uint32_t *cells;      /* rows x width, column-major: [col * rows + row] */
	uint64_t *h, *hsign;  /* per key index: the two hashes of its key */
	uint64_t *count;      /* per key index: this epoch, all reporters */
	struct dta_truth *truth; /* per epoch */
	uint32_t epoch;       /* the epoch being reported */
	unsigned reporter;    /* the reporter being reported */
	uint32_t next_col;    /* its next column; width = none left */
	bool started;
};

/* Allocate for the shape in cfg->dta and hash every key. -1 when out of
 * memory. */
int dta_sketch_init(struct dta_sketch *s, const struct ig_config *cfg,
		    const uint32_t *keys);
void dta_sketch_free(struct dta_sketch *s);

/* Draw reporter s->reporter's stream of --dta-items keys for epoch
 * s->epoch from rng, fill s->cells with its sketch and add the stream to
 * the epoch's counts; after the last reporter, the counts become
 * s->truth[epoch]. -1 when out of memory. */
int dta_sketch_fill(struct dta_sketch *s, struct rng *rng);

/* Exposed for the self-checks: the row-i index and the count sketch sign
 * (+1 or -1) of a key hash, and the HyperLogLog rank of h for 2^b
 * registers. */
uint32_t dta_sketch_index(uint64_t h, unsigned row, uint32_t width);
unsigned dta_hll_rank(uint64_t h, unsigned b);

#endif
