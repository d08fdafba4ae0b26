/*
 * bloom.h - a counting Bloom filter: 4-bit counters, two to a byte, k
 * positions from one 64-bit key hash (Kirsch and Mitzenmacher's double
 * hashing). Counters let a key be taken out again; a counter that
 * reached 15 stays there (taking keys out of it could forget another).
 * A flow monitor keeps the flows an operator removed in one (monitor.c).
 */
#ifndef ISP_FILTERS_BLOOM_H
#define ISP_FILTERS_BLOOM_H

#include <stdbool.h>
#include <stdint.h>

struct cbloom {
	uint8_t *cells;         /* m 4-bit counters */
	uint64_t mask;          /* m - 1, m a power of two */
	unsigned k;
	uint64_t keys;          /* keys added and not taken out */
};

/* m: counters, rounded up to a power of two (at least 64); k: 1..16. */
int cbloom_init(struct cbloom *b, uint64_t m, unsigned k);
void cbloom_free(struct cbloom *b);
void cbloom_clear(struct cbloom *b);
bool cbloom_has(const struct cbloom *b, uint64_t h);
void cbloom_add(struct cbloom *b, uint64_t h);
/* Take a key out; false (and nothing changed) when it was not in. */
bool cbloom_del(struct cbloom *b, uint64_t h);

/* The false-positive rate of m counters and k hashes holding n keys,
 * (1 - e^(-kn/m))^k, and how many keys it holds before that reaches p. */
double cbloom_fp_rate(uint64_t m, unsigned k, uint64_t n);
uint64_t cbloom_capacity(uint64_t m, unsigned k, double p);

#endif
