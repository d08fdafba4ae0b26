/*
 * qsketch.c - the log-linear quantile sketch.
 */
#include "qsketch.h"

#include <math.h>

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

void qs_add(struct qsketch *q, uint64_t v)
{
	if (q->n == 0 || v < q->min)
		q->min = v;
	if (q->n == 0 || v > q->max)
		q->max = v;
	q->count[qs_bucket(v)]++;
	q->n++;
}

static uint64_t clamp(const struct qsketch *q, uint64_t v)
{
	return v < q->min ? q->min : v > q->max ? q->max : v;
}

void qs_merge(struct qsketch *to, const struct qsketch *from)
{
	if (from->n == 0)
		return;
	if (to->n == 0 || from->min < to->min)
		to->min = from->min;
	if (to->n == 0 || from->max > to->max)
		to->max = from->max;
	for (unsigned i = 0; i < QS_BUCKETS; i++)
		to->count[i] += from->count[i];
	to->n += from->n;
}

uint64_t qs_quantile(const struct qsketch *q, double quantile)
{
	if (q->n == 0)
		return 0;
	if (quantile < 0)
		quantile = 0;
	if (quantile > 1)
		quantile = 1;
	/* nearest-rank: the smallest value with at least ceil(q*n) samples <= it */
	uint64_t rank = (uint64_t)ceil(quantile * (double)q->n);
	if (rank == 0)
		rank = 1;
	uint64_t seen = 0;
	for (unsigned i = 0; i < QS_BUCKETS; i++) {
		seen += q->count[i];
		if (seen >= rank)
			return clamp(q, qs_bucket_value(i));
	}
	return q->max;
}
