/*
 * qsketch.c - the quantile sketch.
 */
#include "qsketch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

unsigned qs_bucket(uint64_t v)
{
	if (v < QS_EXACT)
		return (unsigned)v;
	unsigned e = 63u - (unsigned)__builtin_clzll(v);        /* >= 5 */
	unsigned sub = (unsigned)(v >> (e - 4)) & (QS_SUB - 1);  /* next 4 bits */
	return QS_EXACT + (e - 5) * QS_SUB + sub;
}

uint64_t qs_bucket_value(unsigned b)
{
	if (b < QS_EXACT)
		return b;
	unsigned e = (b - QS_EXACT) / QS_SUB + 5, sub = (b - QS_EXACT) % QS_SUB;
	uint64_t lo = (UINT64_C(1) << e) | ((uint64_t)sub << (e - 4));
	uint64_t width = UINT64_C(1) << (e - 4);
	return lo + (width - 1) / 2;    /* the middle of the bucket */
}

/* Move the kept values into buckets. */
static int promote(struct qsketch *q, qs_alloc_fn alloc, void *ctx)
{
	if (q->count)
		return 0;
	q->count = alloc(ctx, QS_BUCKETS * sizeof(*q->count));
	if (!q->count)
		return -1;
	for (uint64_t i = 0; i < q->n && i < QS_SMALL; i++)
		q->count[qs_bucket(q->small[i])]++;
	return 0;
}

int qs_add(struct qsketch *q, uint64_t v, qs_alloc_fn alloc, void *ctx)
{
	if (!q->count && q->n >= QS_SMALL && promote(q, alloc, ctx) != 0)
		return -1;
	if (q->n == 0 || v < q->min)
		q->min = v;
	if (q->n == 0 || v > q->max)
		q->max = v;
	if (q->count)
		q->count[qs_bucket(v)]++;
	else
		q->small[q->n] = v;
	q->n++;
	return 0;
}

int qs_merge(struct qsketch *to, const struct qsketch *from, qs_alloc_fn alloc, void *ctx)
{
	if (from->n == 0)
		return 0;
	if (!from->count && !to->count && to->n + from->n <= QS_SMALL) {
		memcpy(to->small + to->n, from->small, from->n * sizeof(from->small[0]));
	} else {
		if (promote(to, alloc, ctx) != 0)
			return -1;
		if (from->count) {
			for (unsigned i = 0; i < QS_BUCKETS; i++)
				to->count[i] += from->count[i];
		} else {
			for (uint64_t i = 0; i < from->n; i++)
				to->count[qs_bucket(from->small[i])]++;
		}
	}
	if (to->n == 0 || from->min < to->min)
		to->min = from->min;
	if (to->n == 0 || from->max > to->max)
		to->max = from->max;
	to->n += from->n;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t clamp(const struct qsketch *q, uint64_t v)
{
	return v < q->min ? q->min : v > q->max ? q->max : v;
}

uint64_t qs_quantile(const struct qsketch *q, double quantile)
{
	if (q->n == 0)
		return 0;
	if (quantile < 0)
		quantile = 0;
	if (quantile > 1)
		quantile = 1;
	/* nearest rank: the smallest value with at least ceil(q*n) samples <= it */
	uint64_t rank = (uint64_t)ceil(quantile * (double)q->n);
	if (rank == 0)
		rank = 1;
	if (!q->count) {
		uint64_t sorted[QS_SMALL];
		memcpy(sorted, q->small, q->n * sizeof(sorted[0]));
		qsort(sorted, q->n, sizeof(sorted[0]), cmp_u64);
		return sorted[rank - 1];
	}
	uint64_t seen = 0;
	for (unsigned i = 0; i < QS_BUCKETS; i++) {
		seen += q->count[i];
		if (seen >= rank)
			return clamp(q, qs_bucket_value(i));
	}
	return q->max;
}
