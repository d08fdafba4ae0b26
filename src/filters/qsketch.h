/*
 * qsketch.h - bounded-memory quantile sketch for p50/p90/p99.
 *
 * Signed 64-bit values (differences and expressions go below 0). Up to
 * QS_SMALL values are kept as they are, so a group with a few packets
 * (the common case with many groups) has exact quantiles. Past that,
 * log-linear buckets (HDR-histogram style) on each side of 0: values
 * from -32 to 31 are exact, others fall in one of 16 buckets per power
 * of two of their magnitude, so a quantile is within 1/32 (about 3%) of a
 * true sample value, and never below the smallest or above the largest
 * value added. Mergeable by adding counters.
 *
 * Memory grows with what a group holds, since a million groups hold a
 * million sketches: the first QS_INLINE values live in the 24-byte
 * struct itself (no allocation), the next ones in a block of QS_SMALL
 * values, and the counters cover only the range of buckets the values
 * fell in (widened as needed, at most QS_BUCKETS). Blocks come from the
 * caller's allocator (an arena freed as a whole: a block outgrown is not
 * given back, which costs at most as much again as the final counters).
 */
#ifndef ISP_QSKETCH_H
#define ISP_QSKETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QS_EXACT 32u
#define QS_SUB 16u
/* buckets of one sign: magnitudes below 2^63, 16 for each power of two
 * from 2^5 up */
#define QS_HALF (QS_EXACT + (63u - 5u) * QS_SUB)
/* bucket QS_HALF + k holds values >= 0, QS_HALF - 1 - k their mirror
 * below 0 (-1 - x for x >= 0), so bucket order is value order */
#define QS_BUCKETS (2u * QS_HALF)
#define QS_SMALL 8u
#define QS_INLINE 2u

typedef void *(*qs_alloc_fn)(void *ctx, size_t n);     /* zeroed memory or NULL */

struct qs_big;

struct qsketch {
	uint64_t n;             /* values added */
	union {
		int64_t v[QS_INLINE];   /* n <= QS_INLINE: the values */
		struct qs_big *big;     /* n > QS_INLINE */
	} u;
};

/* Add a value; -1 when a block could not be allocated (the value is then
 * not counted and the sketch is unchanged). A zeroed struct is empty. */
int qs_add(struct qsketch *q, int64_t v, qs_alloc_fn alloc, void *ctx);
/* Add everything `from` holds (from is not changed and keeps its blocks). */
int qs_merge(struct qsketch *to, const struct qsketch *from, qs_alloc_fn alloc, void *ctx);
/* What a sketch holds, to write it out (a partial window): exact values
 * (count == NULL: values[0 .. n-1]), or counters of buckets lo .. lo +
 * cap - 1 with the extremes. Valid until the sketch changes. */
struct qs_view {
	uint64_t n;
	const int64_t *values;
	const uint32_t *count;
	unsigned lo, cap;
	int64_t min, max;
};
void qs_view(const struct qsketch *q, struct qs_view *v);
/* Merge bucket counters read back (what qs_view gave for a bucketed
 * sketch) into `to`; -1 when they are not a bucketed sketch's (buckets out
 * of range, min above max, QS_SMALL values or fewer) or out of memory. */
int qs_merge_view(struct qsketch *to, const struct qs_view *v, qs_alloc_fn alloc, void *ctx);
/* Value at quantile q in [0, 1], nearest rank (0 for an empty sketch). */
int64_t qs_quantile(const struct qsketch *q, double quantile);

/* For tests: the extremes (0 when empty), and whether values went into
 * buckets (no longer exact) and how many counters that takes. */
int64_t qs_min(const struct qsketch *q);
int64_t qs_max(const struct qsketch *q);
bool qs_bucketed(const struct qsketch *q);
unsigned qs_counters(const struct qsketch *q);

/* Bucket of a value and the value a bucket stands for (exposed for tests). */
unsigned qs_bucket(int64_t v);
int64_t qs_bucket_value(unsigned b);

#endif
