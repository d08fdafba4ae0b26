/*
 * qsketch.h - bounded-memory quantile sketch for p50/p90/p99.
 *
 * Up to QS_SMALL values are kept as they are (a group with a few packets,
 * the common case with many groups, costs 96 bytes and its quantiles are
 * exact). Past that, log-linear buckets (HDR-histogram style): values
 * below 32 are exact, larger ones fall in one of 16 buckets per power of
 * two, so a quantile is within 1/32 (about 3%) of a true sample value, and
 * never below the smallest or above the largest value added. Fixed size
 * (976 counters, allocated once, through the caller's allocator), no
 * allocation after that, mergeable by adding counters.
 */
#ifndef ISP_QSKETCH_H
#define ISP_QSKETCH_H

#include <stddef.h>
#include <stdint.h>

#define QS_EXACT 32u
#define QS_SUB 16u
#define QS_BUCKETS (QS_EXACT + (64u - 5u) * QS_SUB)
#define QS_SMALL 8u

typedef void *(*qs_alloc_fn)(void *ctx, size_t n);     /* zeroed memory or NULL */

struct qsketch {
	uint64_t n;
	uint64_t min, max;      /* exact: a quantile never leaves [min, max] */
	uint64_t small[QS_SMALL];
	uint32_t *count;        /* QS_BUCKETS counters once past QS_SMALL values */
};

/* Add a value; false when the buckets could not be allocated (the value
 * is then not counted). */
int qs_add(struct qsketch *q, uint64_t v, qs_alloc_fn alloc, void *ctx);
int qs_merge(struct qsketch *to, const struct qsketch *from, qs_alloc_fn alloc, void *ctx);
/* Value at quantile q in [0, 1], nearest rank (0 for an empty sketch). */
uint64_t qs_quantile(const struct qsketch *q, double quantile);

/* Bucket of a value and the value a bucket stands for (exposed for tests). */
unsigned qs_bucket(uint64_t v);
uint64_t qs_bucket_value(unsigned b);

#endif
