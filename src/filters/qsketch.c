/*
 * qsketch.c - the quantile sketch (see qsketch.h for its three stages).
 */
#include "qsketch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define INL_COUNTERS (QS_SMALL * 2u)    /* uint32 counters in the values' room */

/* Past QS_INLINE values. */
struct qs_big {
	int64_t min, max;      /* once bucketed (exact values: computed) */
	uint32_t *count;        /* NULL: exact, s.small holds the values; else
				 * the counters of buckets lo .. lo + cap - 1 */
	uint16_t lo, cap;
	/* the exact values, then (when the range is narrow) the counters:
	 * a group whose values stay within 16 buckets needs no more memory */
	union {
		int64_t small[QS_SMALL];
		uint32_t count[INL_COUNTERS];
	} s;
};

/* The bucket of a magnitude below 2^63, from 0 to QS_HALF - 1. */
static unsigned magnitude_bucket(uint64_t m)
{
	if (m < QS_EXACT)
		return (unsigned)m;
	unsigned e = 63u - (unsigned)__builtin_clzll(m);        /* 5 .. 62 */
	unsigned sub = (unsigned)(m >> (e - 4)) & (QS_SUB - 1);  /* next 4 bits */
	return QS_EXACT + (e - 5) * QS_SUB + sub;
}

static uint64_t magnitude_value(unsigned b)
{
	if (b < QS_EXACT)
		return b;
	unsigned e = (b - QS_EXACT) / QS_SUB + 5, sub = (b - QS_EXACT) % QS_SUB;
	uint64_t lo = (UINT64_C(1) << e) | ((uint64_t)sub << (e - 4));
	uint64_t width = UINT64_C(1) << (e - 4);
	return lo + (width - 1) / 2;    /* the middle of the bucket */
}

/* Below 0 the magnitude is -1 - v (~v): INT64_MIN's is below 2^63 too. */
unsigned qs_bucket(int64_t v)
{
	return v >= 0 ? QS_HALF + magnitude_bucket((uint64_t)v)
		      : QS_HALF - 1u - magnitude_bucket(~(uint64_t)v);
}

int64_t qs_bucket_value(unsigned b)
{
	return b >= QS_HALF ? (int64_t)magnitude_value(b - QS_HALF)
			    : (int64_t)~magnitude_value(QS_HALF - 1u - b);
}

/* The exact values of a sketch that is not bucketed (n <= QS_SMALL). */
static const int64_t *values(const struct qsketch *q)
{
	return q->n <= QS_INLINE ? q->u.v : q->u.big->s.small;
}

static bool bucketed(const struct qsketch *q)
{
	return q->n > QS_INLINE && q->u.big->count;
}

/*
 * Make the counters of a bucketed b cover buckets [blo, bhi]. All or
 * nothing: on failure b is unchanged. The range at least doubles when it
 * grows, so the blocks left behind add up to less than the last one.
 */
static int cover(struct qs_big *b, unsigned blo, unsigned bhi, qs_alloc_fn alloc, void *ctx)
{
	unsigned lo = b->lo, hi = b->lo + b->cap - 1u;

	if (blo >= lo && bhi <= hi)
		return 0;
	unsigned nlo = blo < lo ? blo : lo, nhi = bhi > hi ? bhi : hi;
	unsigned need = nhi - nlo + 1u, cap = 2u * b->cap;
	if (cap < need)
		cap = need;
	if (cap > QS_BUCKETS)
		cap = QS_BUCKETS;
	/* widen on the side that grew: values keep drifting that way */
	if (blo < lo)
		nlo = nhi + 1u >= cap ? nhi + 1u - cap : 0;
	else if (nlo + cap > QS_BUCKETS)
		nlo = QS_BUCKETS - cap;
	uint32_t *n = alloc(ctx, cap * sizeof(*n));
	if (!n)
		return -1;
	memcpy(n + (b->lo - nlo), b->count, b->cap * sizeof(*n));
	b->count = n;
	b->lo = (uint16_t)nlo;
	b->cap = (uint16_t)cap;
	return 0;
}

/*
 * Move the exact values of b (n of them) into counters covering them and
 * buckets [blo, bhi] too (what is about to be added). Nothing changes on
 * failure.
 */
static int promote(struct qs_big *b, uint64_t n, unsigned blo, unsigned bhi,
		   qs_alloc_fn alloc, void *ctx)
{
	int64_t v[QS_SMALL], mn = INT64_MAX, mx = INT64_MIN;
	unsigned lo = blo, hi = bhi;

	memcpy(v, b->s.small, n * sizeof(v[0]));
	for (uint64_t i = 0; i < n; i++) {
		unsigned k = qs_bucket(v[i]);
		lo = k < lo ? k : lo;
		hi = k > hi ? k : hi;
		mn = v[i] < mn ? v[i] : mn;
		mx = v[i] > mx ? v[i] : mx;
	}
	unsigned cap = hi - lo + 1u;
	uint32_t *count;
	if (cap <= INL_COUNTERS) {
		cap = INL_COUNTERS;
		if (lo + cap > QS_BUCKETS)
			lo = QS_BUCKETS - cap;
		count = b->s.count;
	} else if (!(count = alloc(ctx, cap * sizeof(*count)))) {
		return -1;
	}
	memset(b->s.count, 0, sizeof(b->s.count));
	for (uint64_t i = 0; i < n; i++)
		count[qs_bucket(v[i]) - lo]++;
	b->count = count;
	b->lo = (uint16_t)lo;
	b->cap = (uint16_t)cap;
	b->min = mn;
	b->max = mx;
	return 0;
}

/* Room for `more` values past the inline ones: the block of exact values
 * (on failure nothing changes). */
static int ensure_big(struct qsketch *q, uint64_t more, qs_alloc_fn alloc, void *ctx)
{
	if (q->n > QS_INLINE || q->n + more <= QS_INLINE)
		return 0;
	struct qs_big *b = alloc(ctx, sizeof(*b));
	if (!b)
		return -1;
	memcpy(b->s.small, q->u.v, q->n * sizeof(q->u.v[0]));
	q->u.big = b;
	return 0;
}

int qs_add(struct qsketch *q, int64_t v, qs_alloc_fn alloc, void *ctx)
{
	if (ensure_big(q, 1, alloc, ctx) != 0)
		return -1;
	if (q->n < QS_INLINE) {
		q->u.v[q->n++] = v;
		return 0;
	}
	struct qs_big *b = q->u.big;
	unsigned k = qs_bucket(v);
	if (!b->count && q->n < QS_SMALL) {
		b->s.small[q->n++] = v;
		return 0;
	}
	if (!b->count ? promote(b, q->n, k, k, alloc, ctx) : cover(b, k, k, alloc, ctx))
		return -1;
	b->count[k - b->lo]++;
	b->min = v < b->min ? v : b->min;
	b->max = v > b->max ? v : b->max;
	q->n++;
	return 0;
}

int qs_merge(struct qsketch *to, const struct qsketch *from, qs_alloc_fn alloc, void *ctx)
{
	if (from->n == 0)
		return 0;
	if (!bucketed(from) && to->n + from->n <= QS_SMALL && !bucketed(to)) {
		/* still exact: the values side by side */
		if (ensure_big(to, from->n, alloc, ctx) != 0)
			return -1;
		int64_t *dst = to->n + from->n <= QS_INLINE ? to->u.v : to->u.big->s.small;
		memcpy(dst + to->n, values(from), from->n * sizeof(*dst));
		to->n += from->n;
		return 0;
	}
	/* the buckets from's values fall in */
	const struct qs_big *fb = from->n > QS_INLINE ? from->u.big : NULL;
	unsigned blo = QS_BUCKETS, bhi = 0;
	int64_t mn = qs_min(from), mx = qs_max(from);
	if (fb && fb->count) {
		for (unsigned i = 0; i < fb->cap; i++)
			if (fb->count[i]) {
				unsigned k = fb->lo + i;
				blo = k < blo ? k : blo;
				bhi = k;
			}
	} else {
		blo = qs_bucket(mn);
		bhi = qs_bucket(mx);
	}
	if (ensure_big(to, QS_SMALL, alloc, ctx) != 0)
		return -1;
	struct qs_big *tb = to->u.big;
	if (!tb->count ? promote(tb, to->n, blo, bhi, alloc, ctx) : cover(tb, blo, bhi, alloc, ctx))
		return -1;
	if (fb && fb->count) {
		for (unsigned i = 0; i < fb->cap; i++)     /* empty ones may lie outside */
			if (fb->count[i])
				tb->count[fb->lo + i - tb->lo] += fb->count[i];
	} else {
		const int64_t *v = values(from);
		for (uint64_t i = 0; i < from->n; i++)
			tb->count[qs_bucket(v[i]) - tb->lo]++;
	}
	/* promote set min/max from to's values (or left them for an empty to) */
	if (to->n == 0 || mn < tb->min)
		tb->min = mn;
	if (to->n == 0 || mx > tb->max)
		tb->max = mx;
	to->n += from->n;
	return 0;
}

int64_t qs_min(const struct qsketch *q)
{
	if (q->n == 0)
		return 0;
	if (bucketed(q))
		return q->u.big->min;
	const int64_t *v = values(q);
	int64_t m = v[0];
	for (uint64_t i = 1; i < q->n; i++)
		m = v[i] < m ? v[i] : m;
	return m;
}

int64_t qs_max(const struct qsketch *q)
{
	if (q->n == 0)
		return 0;
	if (bucketed(q))
		return q->u.big->max;
	const int64_t *v = values(q);
	int64_t m = v[0];
	for (uint64_t i = 1; i < q->n; i++)
		m = v[i] > m ? v[i] : m;
	return m;
}

bool qs_bucketed(const struct qsketch *q)
{
	return bucketed(q);
}

unsigned qs_counters(const struct qsketch *q)
{
	return bucketed(q) ? q->u.big->cap : 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

int64_t qs_quantile(const struct qsketch *q, double quantile)
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
	if (!bucketed(q)) {
		int64_t sorted[QS_SMALL];
		memcpy(sorted, values(q), q->n * sizeof(sorted[0]));
		qsort(sorted, q->n, sizeof(sorted[0]), cmp_i64);
		return sorted[rank - 1];
	}
	/* buckets below lo are empty: they add nothing to the running count */
	const struct qs_big *b = q->u.big;
	uint64_t seen = 0;
	for (unsigned i = 0; i < b->cap; i++) {
		seen += b->count[i];
		if (seen >= rank) {
			int64_t v = qs_bucket_value(b->lo + i);
			return v < b->min ? b->min : v > b->max ? b->max : v;
		}
	}
	return b->max;
}

void qs_view(const struct qsketch *q, struct qs_view *v)
{
	memset(v, 0, sizeof(*v));
	v->n = q->n;
	if (!bucketed(q)) {
		v->values = values(q);
		return;
	}
	const struct qs_big *b = q->u.big;
	v->count = b->count;
	v->lo = b->lo;
	v->cap = b->cap;
	v->min = b->min;
	v->max = b->max;
}

int qs_merge_view(struct qsketch *to, const struct qs_view *v, qs_alloc_fn alloc, void *ctx)
{
	uint64_t n = 0;

	if (!v->count || v->cap == 0 || v->lo >= QS_BUCKETS || v->cap > QS_BUCKETS - v->lo ||
	    v->min > v->max || qs_bucket(v->min) < v->lo || qs_bucket(v->max) >= v->lo + v->cap)
		return -1;
	for (unsigned i = 0; i < v->cap; i++)
		n += v->count[i];
	if (n <= QS_SMALL)
		return -1;      /* a bucketed sketch holds more (qs_add) */
	struct qs_big b = { .min = v->min, .max = v->max, .count = (uint32_t *)v->count,
			    .lo = (uint16_t)v->lo, .cap = (uint16_t)v->cap };
	struct qsketch from = { .n = n, .u.big = &b };
	return qs_merge(to, &from, alloc, ctx);
}
