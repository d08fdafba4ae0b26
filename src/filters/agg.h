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
 * feeds x - previous x of the same group to the function around it;
 * sum, avg, count and rate of diff(x), x an attribute, keep the window's
 * first and last x instead (the differences add up to last - first), so
 * that they too merge in any split.
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
 * (56 bytes). A group keeps only the part its function uses
 * (agg_state_size: from 8 bytes for count() to 56 with diff()), since a
 * million groups are a million of them per item and hop: copy it in and
 * out with agg_load/agg_store around a call. */
struct agg_state {
	/* the values counted, and whether sum, avg or var went to floats:
	 * one word (a flag of its own was 8 bytes of padding in every
	 * group's state, and every hop's) */
	uint64_t n : 63;
	uint64_t is_float : 1;
	union {
		/* sum, rate: integers until a float appears */
		struct { union { double f; int64_t i; } u; } sum;
		/* avg: 128-bit Σx of integers, or (after a float) the mean as
		 * a double in its first 8 bytes. var: Σd and Σd² of the
		 * differences d = x − shift from its first value (timestamps
		 * and other large values close together: small squares,
		 * exact), or mean and m2 as doubles. avg needs no more than
		 * s1, so the rest comes after it */
		struct { uint64_t s1[2]; uint64_t s2[2]; int64_t shift; } m;
		struct {
			union {
				struct xval v;
				/* first/last of a string: its first 22 characters */
				struct { uint8_t k; char text[23]; } str;
			} u;
			uint64_t order;         /* first/last only */
		} val;
		struct qsketch q;
		/* f(diff(x)) of an attribute (qitem.diff_ends): the window's
		 * first and last x and their packet order; n counts the x */
		struct { uint64_t first_order, last_order; int64_t first, last; } ends;
	} a;
	/* diff(): the previous value (numbers only) */
	struct { union { int64_t i; double f; } u; uint8_t is_float, has; } prev;
};

/* Bytes of the state a group keeps for the item (a multiple of 8). */
size_t agg_state_size(const struct qitem *it);

struct arena;

/*
 * The report functions, one row each (as Suricata's keyword table): the
 * name a select uses, its kind, what it keeps, its in-place integer path,
 * and how it updates, merges two partial states and gives its result.
 * Row k is the function of kind k; more quantiles follow; a NULL name
 * ends the table. The compiler, the query filter and the merge all read
 * this table: a new function is one row and its three calls.
 */
struct agg_func {
	const char *name;
	uint8_t kind;           /* enum agg_kind */
	double quantile;        /* AGG_PCT */
	bool any_type;          /* works on addresses and strings too */
	uint8_t fast;           /* enum agg_fast */
	uint16_t kept;          /* bytes of agg_state it uses (diff() keeps all) */
	/* false: not counted (out of memory for a sketch) */
	bool (*update)(struct agg_state *s, const struct xval *v, uint64_t order,
		       struct arena *mem);
	bool (*merge)(struct agg_state *to, const struct agg_state *from, struct arena *mem);
	bool (*result)(const struct agg_state *s, const struct qitem *it, double window_s,
		       struct xval *out);
};

extern const struct agg_func agg_funcs[];

/* The function a select names, or NULL. */
const struct agg_func *agg_func_named(const char *name);

static inline void agg_load(struct agg_state *s, const void *kept, size_t size)
{
	memset(s, 0, sizeof(*s));
	memcpy(s, kept, size);
}

static inline void agg_store(void *kept, const struct agg_state *s, size_t size)
{
	memcpy(kept, s, size);
}

/*
 * The common case without the copy: an integer into a kept state, read
 * and written in place, only at the fields agg_update would change within
 * the kept bytes; the same result as agg_load, agg_update, agg_store, at a
 * tenth of the instructions (a query report runs this for every function
 * of every packet). Functions that keep more than numbers (percentiles,
 * diff() as the outer function) have no fast path: AGF_NONE.
 */
enum agg_fast {
	AGF_NONE, AGF_COUNT, AGF_SUM, AGF_AVG, AGF_VAR, AGF_MIN, AGF_MAX, AGF_FIRST, AGF_LAST,
	AGF_ENDS,       /* qitem.diff_ends: the window's first and last x */
};

/* The fast path of an item's function (enum agg_fast). */
uint8_t agg_fast_op(const struct qitem *it);

#define AGG_AT(field) offsetof(struct agg_state, field)

/*
 * The in-place paths read n and is_float as the state's first word: the
 * psABIs of x86-64 and AArch64 allocate bit-fields from the least
 * significant bit on little-endian machines, so is_float is its top bit
 * and n the rest (test/unit/check_keys checks it), and one more value is
 * the word plus one.
 */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "agg_state's first word is read as n | is_float << 63: little-endian only"
#endif
#define AGG_FLOAT_BIT (UINT64_C(1) << 63)

static inline uint64_t agg_kept_u64(const uint8_t *k, size_t off)
{
	uint64_t v;

	memcpy(&v, k + off, sizeof(v));
	return v;
}

static inline void agg_kept_set_u64(uint8_t *k, size_t off, uint64_t v)
{
	memcpy(k + off, &v, sizeof(v));
}

/* One more value counted in a kept state, nothing else changed. */
static inline void agg_kept_count(uint8_t *k)
{
	agg_kept_set_u64(k, 0, agg_kept_u64(k, 0) + 1);
}

/* A 128-bit sum kept as two words (low first), plus y. Word by word:
 * GCC takes a 64-bit value widened to 128 bits through the stack. */
static inline void agg_kept_add128(uint8_t *k, size_t off, int64_t y)
{
	uint64_t lo = agg_kept_u64(k, off), sum = lo + (uint64_t)y;
	uint64_t high = y < 0 ? UINT64_MAX : 0;         /* y's high word */

	agg_kept_set_u64(k, off, sum);
	agg_kept_set_u64(k, off + 8, agg_kept_u64(k, off + 8) + high + (sum < lo));
}

/* Add the integer x at packet order `order`; false when the state needs
 * the general path (it went to floats, or holds a non-integer min/max). */
static inline bool agg_update_int(uint8_t *k, unsigned op, int64_t x, uint64_t order)
{
	uint64_t word = agg_kept_u64(k, 0);     /* n and is_float */
	uint64_t n = word & ~AGG_FLOAT_BIT;

	switch ((enum agg_fast)op) {
	case AGF_NONE:
		return false;
	case AGF_COUNT:
		break;
	case AGF_SUM:
		if (word & AGG_FLOAT_BIT)
			return false;
		/* (as unsigned: the same two's-complement wrap, defined) */
		agg_kept_set_u64(k, AGG_AT(a.sum.u.i),
				 agg_kept_u64(k, AGG_AT(a.sum.u.i)) + (uint64_t)x);
		break;
	case AGF_AVG:
		if (word & AGG_FLOAT_BIT)
			return false;
		agg_kept_add128(k, AGG_AT(a.m.s1), x);
		break;
	case AGF_VAR: {
		if (word & AGG_FLOAT_BIT)
			return false;
		if (!n)
			agg_kept_set_u64(k, AGG_AT(a.m.shift), (uint64_t)x);
		int64_t d64;
		if (__builtin_sub_overflow(x, (int64_t)agg_kept_u64(k, AGG_AT(a.m.shift)), &d64))
			return false;   /* the general path */
		__int128 s2;
		memcpy(&s2, k + AGG_AT(a.m.s2), sizeof(s2));
		/* |d| <= 2^63: d² <= 2^126, and Σd stays below 2^127 for
		 * any count; Σd² is the one that may pass 128 bits */
		if (__builtin_add_overflow(s2, (__int128)d64 * d64, &s2))
			return false;   /* past 128 bits: the general path goes to doubles */
		memcpy(k + AGG_AT(a.m.s2), &s2, sizeof(s2));
		agg_kept_add128(k, AGG_AT(a.m.s1), d64);
		break;
	}
	case AGF_MIN:
	case AGF_MAX:
		if (n) {
			if (k[AGG_AT(a.val.u.v.k)] != XK_INT)
				return false;   /* compared as numbers: the general path */
			int64_t cur = (int64_t)agg_kept_u64(k, AGG_AT(a.val.u.v.u.i));
			if (op == AGF_MIN ? !(x < cur) : !(cur < x))
				break;
		}
		/* (min and max do not keep the order) */
		k[AGG_AT(a.val.u.v.k)] = XK_INT;
		agg_kept_set_u64(k, AGG_AT(a.val.u.v.u.i), (uint64_t)x);
		break;
	case AGF_ENDS:
		if (!n || order < agg_kept_u64(k, AGG_AT(a.ends.first_order))) {
			agg_kept_set_u64(k, AGG_AT(a.ends.first), (uint64_t)x);
			agg_kept_set_u64(k, AGG_AT(a.ends.first_order), order);
		}
		if (!n || order >= agg_kept_u64(k, AGG_AT(a.ends.last_order))) {
			agg_kept_set_u64(k, AGG_AT(a.ends.last), (uint64_t)x);
			agg_kept_set_u64(k, AGG_AT(a.ends.last_order), order);
		}
		break;
	case AGF_FIRST:
	case AGF_LAST:
		if (n) {
			uint64_t kept_order = agg_kept_u64(k, AGG_AT(a.val.order));
			if (op == AGF_FIRST ? !(order < kept_order) : order < kept_order)
				break;
		}
		k[AGG_AT(a.val.u.v.k)] = XK_INT;
		agg_kept_set_u64(k, AGG_AT(a.val.u.v.u.i), (uint64_t)x);
		agg_kept_set_u64(k, AGG_AT(a.val.order), order);
		break;
	}
	agg_kept_set_u64(k, 0, word + 1);       /* n + 1: n < 2^63 - 1 */
	return true;
}

/* diff() of an integer in place (agg_diff's integer case): -1 when the
 * previous value was a float (nothing changed: the general path), 0 for
 * the group's first value (kept; nothing to add), 1 with *x replaced by its
 * difference to the previous value. */
static inline int agg_diff_int(uint8_t *k, int64_t *x)
{
	uint8_t has = k[AGG_AT(prev.has)];

	if (has && k[AGG_AT(prev.is_float)])
		return -1;
	uint64_t prev = agg_kept_u64(k, AGG_AT(prev.u.i));
	agg_kept_set_u64(k, AGG_AT(prev.u.i), (uint64_t)*x);
	k[AGG_AT(prev.has)] = 1;
	k[AGG_AT(prev.is_float)] = 0;
	if (!has)
		return 0;
	*x = (int64_t)((uint64_t)*x - prev);
	return 1;
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
