/*
 * rng.h - xoshiro256** seeded by splitmix64.
 *
 * intgen must produce the same bytes for the same --seed on every libc, so
 * it cannot use rand(); xoshiro256** is small, fast and statistically sound
 * for test data.
 */
#ifndef INTGEN_RNG_H
#define INTGEN_RNG_H

#include <stdint.h>

struct rng {
	uint64_t s[4];
};

/* Seed the state from one 64-bit value (any value, including 0, is fine). */
void rng_seed(struct rng *r, uint64_t seed);

/* Next 64 random bits. */
uint64_t rng_next(struct rng *r);

/* Uniform integer in [0, n); n == 0 returns 0. */
uint64_t rng_below(struct rng *r, uint64_t n);

/* Uniform integer in [lo, hi] (inclusive); requires lo <= hi. */
uint64_t rng_range(struct rng *r, uint64_t lo, uint64_t hi);

/* True with probability 1/n (n >= 1). */
int rng_one_in(struct rng *r, uint64_t n);

/* Uniform double in [0, 1). */
double rng_unit(struct rng *r);

/* Stateless 64-bit mixer (splitmix64 finaliser), used to derive per-flow
 * constants such as the switch path without storing them. */
uint64_t mix64(uint64_t x);

#endif
