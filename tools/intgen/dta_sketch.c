/*
 * dta_sketch.c - local sketches of the Sketch-Merge reporters (see
 * dta_sketch.h).
 */
#include "dta_sketch.h"

#include <stdlib.h>
#include <string.h>

#include "dta_hash.h"
#include "wire.h"

#define SIGN_SEED_XOR 0x5bd1e995ull

/* A few keys are much more frequent than the rest, as in real traffic:
 * heavy hitters are what count-min answers well and what a test wants
 * to see estimated close to the truth. */
#define HEAVY_KEYS 8u
#define HEAVY_ONE_IN 4u

uint32_t dta_sketch_index(uint64_t h, unsigned row, uint32_t width)
{
	uint64_t h1 = h & 0xFFFFFFFFu, h2 = (h >> 32) | 1;

	/* width is a power of 2, so reducing mod 2^64 first is harmless */
	return (uint32_t)((h1 + (uint64_t)row * h2) & (width - 1));
}

unsigned dta_hll_rank(uint64_t h, unsigned b)
{
	uint64_t w = b < 64 ? h >> b : 0;
	unsigned r = 1;

	if (!w)
		return 65 - b;
	while (!(w & 1)) {
		w >>= 1;
		r++;
	}
	return r;
}

static unsigned log2u(uint32_t v)
{
	unsigned b = 0;

	while (v > 1) {
		v >>= 1;
		b++;
	}
	return b;
}

int dta_sketch_init(struct dta_sketch *s, const struct ig_config *cfg,
		    const uint32_t *keys)
{
	const struct ig_dta *d = &cfg->dta;
	size_t cells = (size_t)d->rows * d->width;

	memset(s, 0, sizeof(*s));
	s->d = d;
	s->cells = calloc(cells, sizeof(*s->cells));
	s->h = malloc((size_t)d->keys * sizeof(*s->h));
	s->hsign = malloc((size_t)d->keys * sizeof(*s->hsign));
	s->count = calloc(d->keys, sizeof(*s->count));
	s->truth = calloc(d->epochs, sizeof(*s->truth));
	if (!s->cells || !s->h || !s->hsign || !s->count || !s->truth)
		return -1;
	for (uint32_t i = 0; i < d->keys; i++) {
		uint8_t kb[4];

		put32(kb, keys[i]); /* the key as sent: big-endian */
		s->h[i] = murmur64a(kb, 4, d->hash_seed);
		s->hsign[i] = murmur64a(kb, 4, d->hash_seed ^ SIGN_SEED_XOR);
	}
	return 0;
}

void dta_sketch_free(struct dta_sketch *s)
{
	if (s->truth && s->d)
		for (uint32_t e = 0; e < s->d->epochs; e++) {
			free(s->truth[e].idx);
			free(s->truth[e].count);
		}
	free(s->truth);
	free(s->count);
	free(s->hsign);
	free(s->h);
	free(s->cells);
	memset(s, 0, sizeof(*s));
}

static void update(struct dta_sketch *s, uint32_t k)
{
	const struct ig_dta *d = s->d;
	uint64_t h = s->h[k];
	unsigned rows = d->rows;

	if (d->sketch == DSK_HLL) {
		unsigned b = log2u(d->width);
		uint32_t reg = (uint32_t)(h & (d->width - 1));
		unsigned rank = dta_hll_rank(h, b);

		if (s->cells[reg] < rank)
			s->cells[reg] = rank;
		return;
	}
	for (unsigned i = 0; i < rows; i++) {
		uint32_t *c = &s->cells[(size_t)dta_sketch_index(h, i, d->width) * rows + i];

		if (d->sketch == DSK_COUNT_SKETCH && ((s->hsign[k] >> i) & 1))
			*c -= 1; /* two's complement, as sent */
		else
			*c += 1;
	}
}

/* Move the epoch's counts to its truth record, in key index order. */
static int close_epoch(struct dta_sketch *s)
{
	struct dta_truth *t = &s->truth[s->epoch];
	size_t n = 0;

	for (uint32_t i = 0; i < s->d->keys; i++)
		n += s->count[i] != 0;
	t->idx = malloc((n ? n : 1) * sizeof(*t->idx));
	t->count = malloc((n ? n : 1) * sizeof(*t->count));
	if (!t->idx || !t->count)
		return -1;
	for (uint32_t i = 0; i < s->d->keys; i++) {
		if (!s->count[i])
			continue;
		t->idx[t->n] = i;
		t->count[t->n++] = s->count[i];
		t->total += s->count[i];
		s->count[i] = 0;
	}
	return 0;
}

int dta_sketch_fill(struct dta_sketch *s, struct rng *rng)
{
	const struct ig_dta *d = s->d;
	uint32_t heavy = d->keys < HEAVY_KEYS ? d->keys : HEAVY_KEYS;

	memset(s->cells, 0, (size_t)d->rows * d->width * sizeof(*s->cells));
	for (uint64_t i = 0; i < d->items; i++) {
		uint32_t k;

		if (rng_one_in(rng, HEAVY_ONE_IN))
			k = (uint32_t)rng_below(rng, heavy);
		else
			k = (uint32_t)rng_below(rng, d->keys);
		update(s, k);
		s->count[k]++;
	}
	if (s->reporter + 1 == d->reporters)
		return close_epoch(s);
	return 0;
}
