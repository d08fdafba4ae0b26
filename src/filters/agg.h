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
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "expr.h"
#include "program.h"
#include "qsketch.h"
#include "table.h"

/* One state per group, item and hop, as the functions below work on it
 * (64 bytes). A group keeps only the part its function uses
 * (agg_state_size: from 8 bytes for count() to 64 with diff()), since a
 * million groups are a million of them per item and hop: copy it in and
 * out with agg_load/agg_store around a call. */
struct agg_state {
	uint64_t n;
	union {
		/* sum, rate: integers until a float appears */
		struct { union { double f; int64_t i; } u; uint8_t is_float; } sum;
		/* avg, var: 128-bit Σx and Σx² of integers, or (after a float)
		 * mean and m2 as doubles in their first 8 bytes; avg needs
		 * neither Σx² nor m2, so they come last */
		struct { uint64_t s1[2]; uint8_t is_float; uint64_t s2[2]; } m;
		struct {
			union {
				struct xval v;
				/* first/last of a string: its first 22 characters */
				struct { uint8_t k; char text[23]; } str;
			} u;
			uint64_t order;         /* first/last only */
		} val;
		struct qsketch q;
	} a;
	/* diff(): the previous value (numbers only) */
	struct { union { int64_t i; double f; } u; uint8_t is_float, has; } prev;
};

/* Bytes of the state a group keeps for the item (a multiple of 8). */
size_t agg_state_size(const struct qitem *it);

static inline void agg_load(struct agg_state *s, const void *kept, size_t size)
{
	memset(s, 0, sizeof(*s));
	memcpy(s, kept, size);
}

static inline void agg_store(void *kept, const struct agg_state *s, size_t size)
{
	memcpy(kept, s, size);
}

/* Add one value (already through diff() if any). `order` is the packet
 * position for first/last. The arena provides the sketches' blocks. */
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
