/*
 * bloom.c - counting Bloom filter (bloom.h).
 */
#include "bloom.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int cbloom_init(struct cbloom *b, uint64_t m, unsigned k)
{
	uint64_t cells = 64;

	while (cells < m && cells < (UINT64_C(1) << 40))
		cells <<= 1;
	memset(b, 0, sizeof(*b));
	b->cells = calloc(cells / 2, 1);
	if (!b->cells)
		return -1;
	b->mask = cells - 1;
	b->k = k < 1 ? 1 : k > 16 ? 16 : k;
	return 0;
}

void cbloom_free(struct cbloom *b)
{
	free(b->cells);
	memset(b, 0, sizeof(*b));
}

void cbloom_clear(struct cbloom *b)
{
	if (b->cells)
		memset(b->cells, 0, (size_t)(b->mask + 1) / 2);
	b->keys = 0;
}

/* The i-th position: h1 + i*h2, h2 odd so the k positions differ
 * whatever the table size. */
static inline uint64_t pos(const struct cbloom *b, uint64_t h, unsigned i)
{
	uint64_t h1 = h, h2 = (h >> 32 | h << 32) * 0x9e3779b97f4a7c15u | 1;

	return (h1 + i * h2) & b->mask;
}

static inline unsigned get(const struct cbloom *b, uint64_t at)
{
	return (b->cells[at >> 1] >> ((at & 1) * 4)) & 15u;
}

static inline void put(struct cbloom *b, uint64_t at, unsigned v)
{
	unsigned shift = (unsigned)(at & 1) * 4;

	b->cells[at >> 1] = (uint8_t)((b->cells[at >> 1] & ~(15u << shift)) | v << shift);
}

bool cbloom_has(const struct cbloom *b, uint64_t h)
{
	if (!b->keys)
		return false;
	for (unsigned i = 0; i < b->k; i++)
		if (!get(b, pos(b, h, i)))
			return false;
	return true;
}

void cbloom_add(struct cbloom *b, uint64_t h)
{
	for (unsigned i = 0; i < b->k; i++) {
		uint64_t at = pos(b, h, i);
		unsigned v = get(b, at);
		if (v < 15)
			put(b, at, v + 1);
	}
	b->keys++;
}

bool cbloom_del(struct cbloom *b, uint64_t h)
{
	if (!cbloom_has(b, h))
		return false;
	for (unsigned i = 0; i < b->k; i++) {
		uint64_t at = pos(b, h, i);
		unsigned v = get(b, at);
		if (v < 15)     /* saturated: other keys may count on it */
			put(b, at, v - 1);
	}
	b->keys--;
	return true;
}

double cbloom_fp_rate(uint64_t m, unsigned k, uint64_t n)
{
	return pow(1.0 - exp(-(double)k * (double)n / (double)m), (double)k);
}

uint64_t cbloom_capacity(uint64_t m, unsigned k, double p)
{
	return (uint64_t)(-(double)m / k * log(1.0 - pow(p, 1.0 / k)));
}
