/*
 * qsketch.h - bounded-memory quantile sketch for p50/p90/p99.
 *
 * Log-linear buckets (HDR-histogram style): values below 32 are exact,
 * larger ones fall in one of 16 buckets per power of two, so a reported
 * quantile is within 1/32 (about 3%) of a true sample value, and never
 * below the smallest or above the largest value added. Fixed size
 * (976 counters), no allocation after creation, mergeable by adding
 * counters (per-worker partial results combine exactly).
 */
#ifndef ISP_QSKETCH_H
#define ISP_QSKETCH_H

#include <stdint.h>

#define QS_EXACT 32u
#define QS_SUB 16u
#define QS_BUCKETS (QS_EXACT + (64u - 5u) * QS_SUB)

struct qsketch {
	uint64_t n;
	uint64_t min, max;      /* exact: a quantile never leaves [min, max] */
	uint32_t count[QS_BUCKETS];
};

void qs_add(struct qsketch *q, uint64_t v);
void qs_merge(struct qsketch *to, const struct qsketch *from);
/* Value at quantile q in [0, 1] (0 for an empty sketch). */
uint64_t qs_quantile(const struct qsketch *q, double quantile);

/* Bucket of a value and the value a bucket stands for (exposed for tests). */
unsigned qs_bucket(uint64_t v);
uint64_t qs_bucket_value(unsigned b);

#endif
