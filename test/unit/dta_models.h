/*
 * dta_models.h - what the DTA store tests (check_dta.c, check_dta_sketch.c)
 * share: MurmurHash64A and the double-hashing index written again from
 * their definitions (src/plugins/dta/README.md), so a store that hashes or
 * indexes differently from what the README promises fails; a random
 * stream; a store made and removed per test; counted expectations.
 */
#ifndef ISP_TEST_DTA_MODELS_H
#define ISP_TEST_DTA_MODELS_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../src/plugins/dta/store.h"


/* MurmurHash64A (Austin Appleby), 8-byte blocks read little-endian. */
static inline uint64_t mm64(const void *key, size_t len, uint64_t seed)
{
	const uint64_t m = UINT64_C(0xc6a4a7935bd1e995);
	const uint8_t *d = key, *t = d + len / 8 * 8;
	uint64_t h = seed ^ (len * m);

	for (; d < t; d += 8) {
		uint64_t k = 0;
		for (int i = 7; i >= 0; i--)
			k = k << 8 | d[i];
		k *= m;
		k ^= k >> 47;
		k *= m;
		h ^= k;
		h *= m;
	}
	switch (len & 7) {
	case 7: h ^= (uint64_t)t[6] << 48; /* fallthrough */
	case 6: h ^= (uint64_t)t[5] << 40; /* fallthrough */
	case 5: h ^= (uint64_t)t[4] << 32; /* fallthrough */
	case 4: h ^= (uint64_t)t[3] << 24; /* fallthrough */
	case 3: h ^= (uint64_t)t[2] << 16; /* fallthrough */
	case 2: h ^= (uint64_t)t[1] << 8; /* fallthrough */
	case 1: h ^= (uint64_t)t[0]; h *= m;
	}
	h ^= h >> 47;
	h *= m;
	return h ^ (h >> 47);
}

/* Copy or row i of hash h in a table of size entries (README). */
static inline uint64_t idx(uint64_t h, unsigned i, uint64_t size)
{
	return ((h & 0xffffffffu) + (uint64_t)i * ((h >> 32) | 1)) % size;
}

static uint64_t rng_state;
static inline uint64_t rng(void)           /* splitmix64 */
{
	uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	return z ^ (z >> 31);
}

/* A Zipf-like key: small keys far more often. */
static inline uint32_t zipf_key(unsigned keys)
{
	double u = (double)(rng() >> 11) / 9007199254740992.0;
	return (uint32_t)(keys * u * u * u);
}

/* A DTA key: its 4 bytes as sent (big-endian). */
static inline const uint8_t *kb(uint32_t k)
{
	static _Thread_local uint8_t b[4];
	b[0] = (uint8_t)(k >> 24), b[1] = (uint8_t)(k >> 16), b[2] = (uint8_t)(k >> 8), b[3] = (uint8_t)k;
	return b;
}

/* The slot of copy i of key k. */
static inline uint64_t kslot(uint32_t k, unsigned i, uint64_t seed, uint64_t slots)
{
	return idx(mm64(kb(k), 4, seed), i, slots);
}

struct st {
	struct dta_store_cfg c;
	char path[128];
	struct dta_store *s;
	struct isp_dta_header *h;
};

static inline void st_open(struct st *t, const char *tag)
{
	char err[256];

	snprintf(t->path, sizeof(t->path), "/tmp/check_dta.%d.%s.dta", (int)getpid(), tag);
	t->c.name = tag;
	t->c.path = t->path;
	t->s = dta_store_open(&t->c, err, sizeof(err));
	ck_assert_msg(t->s != NULL, "%s", err);
	t->h = dta_store_header(t->s);
	ck_assert_ptr_null(isp_dta_invalid(t->h, dta_store_bytes(&t->c)));
}

static inline void st_close(struct st *t)
{
	dta_store_close(t->s);
	unlink(t->path);
}

/* A counter of the store (relaxed: the test is its only writer, or joined them). */
static inline uint64_t ld(const _Atomic uint64_t *p) { return atomic_load_explicit(p, memory_order_relaxed); }
static inline uint32_t ld32(const _Atomic uint32_t *p) { return atomic_load_explicit(p, memory_order_relaxed); }
static inline int64_t ldi(const _Atomic int64_t *p) { return atomic_load_explicit(p, memory_order_relaxed); }

/* Checks inside loops of 10^4-10^5 (Check records every assertion that
 * passes, too slow there): count what fails, keep the first, then
 * EXPECTED() asserts none did. */
static unsigned fails;
static char first_fail[160];
#define EXPECT(c) ((c) ? (void)0 : expect_failed(#c, __LINE__))
#define EXPECTED()                                                                        \
	do {                                                                              \
		unsigned failed_ = fails;                                                 \
		fails = 0;                                                                \
		ck_assert_msg(failed_ == 0, "%u checks failed, the first: %s", failed_, first_fail); \
	} while (0)

static inline void expect_failed(const char *what, int line)
{
	if (!fails++)
		snprintf(first_fail, sizeof(first_fail), "line %d: %s", line, what);
}


#endif
