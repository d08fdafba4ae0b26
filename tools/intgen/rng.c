/*
 * rng.c - xoshiro256** (Blackman & Vigna) with splitmix64 seeding.
 */
#include "rng.h"

uint64_t mix64(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ULL;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	return x ^ (x >> 31);
}

void rng_seed(struct rng *r, uint64_t seed)
{
	/* splitmix64 never yields an all-zero state, which xoshiro forbids. */
	for (int i = 0; i < 4; i++) {
		seed += 0x9E3779B97F4A7C15ULL;
		r->s[i] = mix64(seed);
	}
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t rng_below(struct rng *r, uint64_t n)
{
	if (n == 0)
		return 0;
	/* Lemire's multiply-shift would need 128-bit arithmetic; the modulo
	 * bias of a 64-bit draw against test-sized ranges is negligible. */
	return rng_next(r) % n;
}

uint64_t rng_range(struct rng *r, uint64_t lo, uint64_t hi)
{
	if (hi - lo == UINT64_MAX)
		return rng_next(r);
	return lo + rng_below(r, hi - lo + 1);
}

int rng_one_in(struct rng *r, uint64_t n)
{
	return rng_below(r, n) == 0;
}

double rng_unit(struct rng *r)
{
	return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}
