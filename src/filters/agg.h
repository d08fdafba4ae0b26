/*
 * agg.h - report functions of query reports: the state one function keeps
 * for one group (and one hop), its update, its merge with another partial
 * state (for per-worker partials), and its result.
 *
 * avg and var keep exact 128-bit sums of integer values (the same result
 * in any order and over any split between workers), Welford's running
 * variance on doubles once a float appears (merged with Chan's formula):
 * O(1) memory, population variance as MMT-Probe reports it. first/last keep the
 * packet order (index) so merged partials keep the right one. diff(x)
 * feeds x - previous x of the same group to the function around it.
 */
#ifndef ISP_FILTERS_AGG_H
#define ISP_FILTERS_AGG_H

#include <stdbool.h>
#include <stdint.h>

#include "expr.h"
#include "program.h"
#include "qsketch.h"
#include "table.h"

/* One state per group, item and hop: kept small (64 bytes), since a
 * million groups are a million of them per item. */
struct agg_state {
	uint64_t n;
	union {
		struct { double f; int64_t i; uint8_t is_float; } sum;
		/* avg, var: 128-bit Σx and Σx² of integers, or (after a float)
		 * mean and m2 as doubles in their first 8 bytes */
		struct { uint64_t s1[2], s2[2]; uint8_t is_float; } m;
		struct {
			union {
				struct xval v;
				/* first/last of a string: its first 22 characters */
				struct { uint8_t k; char text[23]; } str;
			} u;
			uint64_t order;
		} val;
		struct qsketch *q;
	} a;
	/* diff(): the previous value (numbers only) */
	struct { union { int64_t i; double f; } u; uint8_t is_float, has; } prev;
};

/* Add one value (already through diff() if any). `order` is the packet
 * position for first/last. The arena provides sketches. */
void agg_update(struct agg_state *s, const struct qitem *it, const struct xval *v,
		uint64_t order, struct arena *mem);

/* diff(): turn v into the difference to the previous value; false for the
 * first value of a group. */
bool agg_diff(struct agg_state *s, struct xval *v);

/* Combine a partial state into another. */
void agg_merge(struct agg_state *to, const struct agg_state *from, const struct qitem *it,
	       struct arena *mem);

/* The result; false when there is none (no value added). window_s is the
 * window length in seconds (rate). */
bool agg_result(const struct agg_state *s, const struct qitem *it, double window_s,
		struct xval *out);

/* The text of a string result kept in the state. */
static inline const char *agg_result_str(const struct agg_state *s)
{
	return s->a.val.u.str.text;
}

#endif
