/*
 * agg.c - report functions.
 */
#include "agg.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define ROUND8(x) (((x) + 7u) & ~(size_t)7u)

_Static_assert(sizeof(struct agg_state) <= 64, "agg_state: one cache line");

static double num(const struct xval *v)
{
	double f = 0;

	xval_number(v, &f);
	return f;
}

/*
 * Exact moments of integer values (sum and sum of squares in 128 bits):
 * avg and var then come out the same whatever the order of the values and
 * however they were split between workers. A float value switches the
 * state to doubles (Welford for var) for good.
 */
typedef __int128 i128;

static i128 load128(const uint64_t w[2])
{
	i128 v;

	memcpy(&v, w, sizeof(v));
	return v;
}

static void store128(uint64_t w[2], i128 v)
{
	memcpy(w, &v, sizeof(v));
}

/* Switch an exact state (n values, differences from `shift`: 0 for avg,
 * which keeps no shift) to mean and m2 in doubles. */
static void moments_to_float(struct agg_state *s, int64_t shift)
{
	if (s->is_float)
		return;
	long double n = (long double)s->n, s1 = (long double)load128(s->a.m.s1);
	long double s2 = (long double)load128(s->a.m.s2);
	double mean = n > 0 ? (double)((long double)shift + s1 / n) : 0;
	double m2 = n > 0 ? (double)(s2 - s1 * s1 / n) : 0;
	s->is_float = 1;
	memcpy(s->a.m.s1, &mean, sizeof(mean));
	memcpy(s->a.m.s2, &m2, sizeof(m2));
}

static double fget(const uint64_t w[2])
{
	double d;

	memcpy(&d, w, sizeof(d));
	return d;
}

static void fset(uint64_t w[2], double d)
{
	memcpy(w, &d, sizeof(d));
}

bool agg_diff(struct agg_state *s, struct xval *v)
{
	bool was = s->prev.has;
	struct xval cur = *v;

	if (was) {
		if (cur.k == XK_INT && !s->prev.is_float) {
			v->u.i = (int64_t)((uint64_t)cur.u.i - (uint64_t)s->prev.u.i);
		} else {
			double prev = s->prev.is_float ? s->prev.u.f : (double)s->prev.u.i;
			v->k = XK_FLOAT;
			v->u.f = num(&cur) - prev;
		}
	}
	s->prev.has = 1;
	s->prev.is_float = cur.k != XK_INT;
	if (cur.k == XK_INT)
		s->prev.u.i = cur.u.i;
	else
		s->prev.u.f = num(&cur);
	return was;
}

static void keep_value(struct agg_state *s, const struct xval *v, uint64_t order)
{
	s->a.val.order = order;
	if (v->k == XK_STR) {   /* the text itself: the packet's is gone later */
		s->a.val.u.str.k = XK_STR;
		snprintf(s->a.val.u.str.text, sizeof(s->a.val.u.str.text), "%s", v->u.s ? v->u.s : "");
		return;
	}
	s->a.val.u.v = *v;
}

static bool less(const struct xval *a, const struct xval *b)
{
	if (a->k == XK_INT && b->k == XK_INT)
		return a->u.i < b->u.i;
	return num(a) < num(b);
}

/* ---- the functions, one row each ---- */

#define KEPT(upto) ((uint16_t)ROUND8(upto))

static bool upd_none(struct agg_state *s, const struct xval *v, uint64_t order, struct arena *mem)
{
	(void)s, (void)v, (void)order, (void)mem;
	return true;
}

static bool upd_sum(struct agg_state *s, const struct xval *v, uint64_t order, struct arena *mem)
{
	(void)order, (void)mem;
	if (v->k == XK_INT && !s->is_float) {
		s->a.sum.u.i += v->u.i;
		return true;
	}
	if (!s->is_float) {
		s->a.sum.u.f = (double)s->a.sum.u.i;
		s->is_float = 1;
	}
	s->a.sum.u.f += num(v);
	return true;
}

/* Welford on doubles: one more value x in a state already in doubles. */
static void welford_add(struct agg_state *s, double x)
{
	double mean = fget(s->a.m.s1), delta = x - mean;

	mean += delta / (double)(s->n + 1);
	fset(s->a.m.s1, mean);
	fset(s->a.m.s2, fget(s->a.m.s2) + delta * (x - mean));
}

/* avg: Σx (128 bits: no integer overflows it), or the mean in doubles */
static bool upd_avg(struct agg_state *s, const struct xval *v, uint64_t order,
		    struct arena *mem)
{
	(void)order, (void)mem;
	if (v->k == XK_INT && !s->is_float) {
		store128(s->a.m.s1, load128(s->a.m.s1) + v->u.i);
		return true;
	}
	moments_to_float(s, 0);
	welford_add(s, num(v));
	return true;
}

/* var: Σd and Σd² of d = x − shift, exactly while they fit in 128 bits */
static bool upd_var(struct agg_state *s, const struct xval *v, uint64_t order,
		    struct arena *mem)
{
	(void)order, (void)mem;
	if (v->k == XK_INT && !s->is_float) {
		if (s->n == 0)
			s->a.m.shift = v->u.i;
		i128 d = (i128)v->u.i - s->a.m.shift, s1, s2, sq;
		if (!__builtin_add_overflow(load128(s->a.m.s1), d, &s1) &&
		    !__builtin_mul_overflow(d, d, &sq) &&
		    !__builtin_add_overflow(load128(s->a.m.s2), sq, &s2)) {
			store128(s->a.m.s1, s1);
			store128(s->a.m.s2, s2);
			return true;
		}
	}
	moments_to_float(s, s->a.m.shift);
	welford_add(s, num(v));
	return true;
}

static bool upd_min(struct agg_state *s, const struct xval *v, uint64_t order, struct arena *mem)
{
	(void)mem;
	if (s->n == 0 || less(v, &s->a.val.u.v))
		keep_value(s, v, order);
	return true;
}

static bool upd_max(struct agg_state *s, const struct xval *v, uint64_t order, struct arena *mem)
{
	(void)mem;
	if (s->n == 0 || less(&s->a.val.u.v, v))
		keep_value(s, v, order);
	return true;
}

static bool upd_first(struct agg_state *s, const struct xval *v, uint64_t order, struct arena *mem)
{
	(void)mem;
	if (s->n == 0 || order < s->a.val.order)
		keep_value(s, v, order);
	return true;
}

static bool upd_last(struct agg_state *s, const struct xval *v, uint64_t order, struct arena *mem)
{
	(void)mem;
	if (s->n == 0 || order >= s->a.val.order)
		keep_value(s, v, order);
	return true;
}

/* f(diff(x)) as the window's ends (qitem.diff_ends): integers only (an
 * attribute's numbers), in any order of arrival */
static bool upd_ends(struct agg_state *s, const struct xval *v, uint64_t order, struct arena *mem)
{
	(void)mem;
	if (v->k != XK_INT)
		return false;
	if (s->n == 0 || order < s->a.ends.first_order) {
		s->a.ends.first = v->u.i;
		s->a.ends.first_order = order;
	}
	if (s->n == 0 || order >= s->a.ends.last_order) {
		s->a.ends.last = v->u.i;
		s->a.ends.last_order = order;
	}
	return true;
}

static bool upd_pct(struct agg_state *s, const struct xval *v, uint64_t order, struct arena *mem)
{
	(void)order;
	int64_t x;
	if (v->k == XK_INT) {
		x = v->u.i;     /* not through a double: ns timestamps are past 2^53 */
	} else {
		/* a fraction counts as the nearest whole number */
		double f = num(v);
		x = f != f ? 0 : f <= -9.2e18 ? INT64_MIN : f >= 9.2e18 ? INT64_MAX : llround(f);
	}
	/* out of memory: the value is not counted */
	return qs_add(&s->a.q, x, arena_alloc_cb, mem) == 0;
}

static bool merge_none(struct agg_state *to, const struct agg_state *from, struct arena *mem)
{
	(void)to, (void)from, (void)mem;
	return true;
}

static bool merge_sum(struct agg_state *to, const struct agg_state *from, struct arena *mem)
{
	(void)mem;
	if (!to->is_float && !from->is_float) {
		to->a.sum.u.i += from->a.sum.u.i;
		return true;
	}
	double a = to->is_float ? to->a.sum.u.f : (double)to->a.sum.u.i;
	double b = from->is_float ? from->a.sum.u.f : (double)from->a.sum.u.i;
	to->a.sum.u.f = a + b;
	to->is_float = 1;
	return true;
}

/* Chan et al.: combine two Welford partials (both in doubles) */
static void chan_merge(struct agg_state *to, const struct agg_state *f)
{
	double na = (double)to->n, nb = (double)f->n, n = na + nb;

	if (n == 0)
		return;
	double delta = fget(f->a.m.s1) - fget(to->a.m.s1);
	fset(to->a.m.s1, fget(to->a.m.s1) + delta * nb / n);
	fset(to->a.m.s2, fget(to->a.m.s2) + fget(f->a.m.s2) + delta * delta * na * nb / n);
}

static bool merge_avg(struct agg_state *to, const struct agg_state *from, struct arena *mem)
{
	(void)mem;
	if (!to->is_float && !from->is_float) {
		store128(to->a.m.s1, load128(to->a.m.s1) + load128(from->a.m.s1));
		return true;
	}
	struct agg_state f = *from;
	moments_to_float(to, 0);
	moments_to_float(&f, 0);
	chan_merge(to, &f);
	return true;
}

/* from's differences taken from to's shift: Σ(d + δ) = Σd + nδ and
 * Σ(d + δ)² = Σd² + 2δΣd + nδ², δ = from's shift − to's */
static bool var_rebase(const struct agg_state *to, const struct agg_state *from, i128 *s1,
		       i128 *s2)
{
	i128 delta = (i128)from->a.m.shift - to->a.m.shift, n = (i128)from->n;
	i128 nd, cross, sq;

	*s1 = load128(from->a.m.s1);
	*s2 = load128(from->a.m.s2);
	return !__builtin_mul_overflow(n, delta, &nd) &&
	       !__builtin_mul_overflow(*s1, delta, &cross) &&
	       !__builtin_mul_overflow(cross, 2, &cross) &&
	       !__builtin_mul_overflow(nd, delta, &sq) &&
	       !__builtin_add_overflow(*s2, cross, s2) &&
	       !__builtin_add_overflow(*s2, sq, s2) &&
	       !__builtin_add_overflow(*s1, nd, s1);
}

static bool merge_var(struct agg_state *to, const struct agg_state *from, struct arena *mem)
{
	(void)mem;
	/* (agg_merge takes an empty side as the other one) */
	if (!to->is_float && !from->is_float) {
		i128 s1, s2, a1, a2;
		if (var_rebase(to, from, &s1, &s2) &&
		    !__builtin_add_overflow(load128(to->a.m.s1), s1, &a1) &&
		    !__builtin_add_overflow(load128(to->a.m.s2), s2, &a2)) {
			store128(to->a.m.s1, a1);
			store128(to->a.m.s2, a2);
			return true;
		}
	}
	struct agg_state f = *from;
	moments_to_float(to, to->a.m.shift);
	moments_to_float(&f, f.a.m.shift);
	chan_merge(to, &f);
	return true;
}

static bool merge_min(struct agg_state *to, const struct agg_state *from, struct arena *mem)
{
	(void)mem;
	if (less(&from->a.val.u.v, &to->a.val.u.v))
		to->a = from->a;
	return true;
}

static bool merge_max(struct agg_state *to, const struct agg_state *from, struct arena *mem)
{
	(void)mem;
	if (less(&to->a.val.u.v, &from->a.val.u.v))
		to->a = from->a;
	return true;
}

static bool merge_first(struct agg_state *to, const struct agg_state *from, struct arena *mem)
{
	(void)mem;
	if (from->a.val.order < to->a.val.order)
		to->a = from->a;
	return true;
}

static bool merge_last(struct agg_state *to, const struct agg_state *from, struct arena *mem)
{
	(void)mem;
	if (from->a.val.order > to->a.val.order)
		to->a = from->a;
	return true;
}

static bool merge_ends(struct agg_state *to, const struct agg_state *from, struct arena *mem)
{
	(void)mem;
	if (from->a.ends.first_order < to->a.ends.first_order) {
		to->a.ends.first = from->a.ends.first;
		to->a.ends.first_order = from->a.ends.first_order;
	}
	if (from->a.ends.last_order > to->a.ends.last_order) {
		to->a.ends.last = from->a.ends.last;
		to->a.ends.last_order = from->a.ends.last_order;
	}
	return true;
}

static bool merge_pct(struct agg_state *to, const struct agg_state *from, struct arena *mem)
{
	/* (never copied whole: from's blocks belong to a worker's arena,
	 * reset once merged) */
	return qs_merge(&to->a.q, &from->a.q, arena_alloc_cb, mem) == 0;
}

static bool res_count(const struct agg_state *s, const struct qitem *it, double window_s,
		      struct xval *out)
{
	(void)it, (void)window_s;
	out->k = XK_INT;
	out->u.i = (int64_t)s->n;
	return true;
}

static bool res_sum(const struct agg_state *s, const struct qitem *it, double window_s,
		    struct xval *out)
{
	(void)it, (void)window_s;
	if (s->is_float) {
		out->k = XK_FLOAT;
		out->u.f = s->a.sum.u.f;
	} else {
		out->k = XK_INT;
		out->u.i = s->a.sum.u.i;
	}
	return true;
}

static bool res_rate(const struct agg_state *s, const struct qitem *it, double window_s,
		     struct xval *out)
{
	if (!(window_s > 0))    /* a whole-input window of one packet time */
		return false;
	out->k = XK_FLOAT;
	out->u.f = (it->arg ? (s->is_float ? s->a.sum.u.f : (double)s->a.sum.u.i)
			    : (double)s->n) / window_s;
	return true;
}

static bool res_avg(const struct agg_state *s, const struct qitem *it, double window_s,
		    struct xval *out)
{
	(void)it, (void)window_s;
	out->k = XK_FLOAT;
	out->u.f = s->is_float ? fget(s->a.m.s1)
				   : (double)((long double)load128(s->a.m.s1) / (long double)s->n);
	return true;
}

static bool res_var(const struct agg_state *s, const struct qitem *it, double window_s,
		    struct xval *out)
{
	(void)it, (void)window_s;
	out->k = XK_FLOAT;
	if (s->is_float) {
		out->u.f = fget(s->a.m.s2) / (double)s->n;
		return true;
	}
	/* (n Σd² − (Σd)²) / n², exactly while it fits in 128 bits (the
	 * variance of the differences d = x − shift is x's) */
	i128 n = (i128)s->n, s1 = load128(s->a.m.s1), s2 = load128(s->a.m.s2);
	i128 num, sq;
	if (!__builtin_mul_overflow(n, s2, &num) && !__builtin_mul_overflow(s1, s1, &sq) &&
	    !__builtin_sub_overflow(num, sq, &num))
		out->u.f = (double)((long double)num / ((long double)s->n * (long double)s->n));
	else
		out->u.f = (double)(((long double)s2 - (long double)s1 * (long double)s1 /
				     (long double)s->n) / (long double)s->n);
	return true;
}

static bool res_value(const struct agg_state *s, const struct qitem *it, double window_s,
		      struct xval *out)
{
	(void)it, (void)window_s;
	*out = s->a.val.u.v;
	return true;
}

static bool res_pct(const struct agg_state *s, const struct qitem *it, double window_s,
		    struct xval *out)
{
	(void)window_s;
	if (s->a.q.n == 0)
		return false;
	out->k = XK_INT;
	out->u.i = qs_quantile(&s->a.q, it->quantile);
	return true;
}

#define SUM_KEPT KEPT(offsetof(struct agg_state, a.sum.u) + sizeof(uint64_t))
#define VAL_KEPT KEPT(offsetof(struct agg_state, a.val.order))
#define ORDER_KEPT KEPT(offsetof(struct agg_state, a.val.order) + sizeof(uint64_t))
#define PCT_KEPT KEPT(offsetof(struct agg_state, a.q) + sizeof(struct qsketch))
#define PCT(name, q) { name, AGG_PCT, q, false, AGF_NONE, PCT_KEPT, upd_pct, merge_pct, res_pct }

/* Row k is the function of kind k; the other quantiles follow. */
const struct agg_func agg_funcs[] = {
	[AGG_SUM] = { "sum", AGG_SUM, 0, false, AGF_SUM, SUM_KEPT, upd_sum, merge_sum, res_sum },
	[AGG_COUNT] = { "count", AGG_COUNT, 0, true, AGF_COUNT, KEPT(offsetof(struct agg_state, a)),
			upd_none, merge_none, res_count },
	[AGG_AVG] = { "avg", AGG_AVG, 0, false, AGF_AVG,
		      KEPT(offsetof(struct agg_state, a.m.s2)), upd_avg,
		      merge_avg, res_avg },
	[AGG_VAR] = { "var", AGG_VAR, 0, false, AGF_VAR,
		      KEPT(offsetof(struct agg_state, a.m.shift) + sizeof(int64_t)), upd_var,
		      merge_var, res_var },
	[AGG_MIN] = { "min", AGG_MIN, 0, false, AGF_MIN, VAL_KEPT, upd_min, merge_min, res_value },
	[AGG_MAX] = { "max", AGG_MAX, 0, false, AGF_MAX, VAL_KEPT, upd_max, merge_max, res_value },
	[AGG_FIRST] = { "first", AGG_FIRST, 0, true, AGF_FIRST, ORDER_KEPT, upd_first, merge_first,
			res_value },
	[AGG_LAST] = { "last", AGG_LAST, 0, true, AGF_LAST, ORDER_KEPT, upd_last, merge_last,
		       res_value },
	/* diff(x) as the function: the last difference (its state keeps prev) */
	[AGG_DIFF] = { "diff", AGG_DIFF, 0, false, AGF_NONE, sizeof(struct agg_state), upd_last,
		       merge_last, res_value },
	[AGG_RATE] = { "rate", AGG_RATE, 0, false, AGF_SUM, SUM_KEPT, upd_sum, merge_sum, res_rate },
	[AGG_PCT] = PCT("p50", 0.50),
	PCT("p90", 0.90), PCT("p95", 0.95), PCT("p99", 0.99),
	{ NULL, 0, 0, false, 0, 0, NULL, NULL, NULL }
};

_Static_assert(sizeof(agg_funcs) / sizeof(agg_funcs[0]) == AGG_PCT + 5,
	       "agg_funcs: one row per kind, then p90, p95, p99 and the end");

const struct agg_func *agg_func_named(const char *name)
{
	for (const struct agg_func *f = agg_funcs; f->name; f++)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

#define ENDS_KEPT KEPT(offsetof(struct agg_state, a.ends) + sizeof(((struct agg_state *)0)->a.ends))

size_t agg_state_size(const struct qitem *it)
{
	if (it->diff_ends)
		return ENDS_KEPT;
	if (it->diff || it->agg == AGG_DIFF)
		return sizeof(struct agg_state);        /* prev comes last */
	return agg_funcs[it->agg].kept;
}

uint8_t agg_fast_op(const struct qitem *it)
{
	return it->diff_ends ? AGF_ENDS : agg_funcs[it->agg].fast;
}

void agg_update(struct agg_state *s, const struct qitem *it, const struct xval *v,
		uint64_t order, struct arena *mem)
{
	if (it->diff_ends) {
		if (upd_ends(s, v, order, mem))
			s->n++;
		return;
	}
	/* count(), rate(): packets only (no value) */
	if (!v || agg_funcs[it->agg].update(s, v, order, mem))
		s->n++;
}

void agg_merge(struct agg_state *to, const struct agg_state *from, const struct qitem *it,
	       struct arena *mem)
{
	if (from->n == 0)
		return;
	if (to->n == 0 && it->agg != AGG_PCT) {
		*to = *from;
		return;
	}
	if (it->diff_ends ? merge_ends(to, from, mem) : agg_funcs[it->agg].merge(to, from, mem))
		to->n += from->n;
}

/* The state the function would have kept from the differences: n - 1 of
 * them, adding up to last - first (exactly: the sum of avg in 128 bits;
 * of sum and rate in 64, wrapping as the differences added one by one). */
static void ends_to_state(const struct agg_state *s, const struct qitem *it, struct agg_state *t)
{
	memset(t, 0, sizeof(*t));
	t->n = s->n ? s->n - 1 : 0;
	if (it->agg == AGG_AVG)
		store128(t->a.m.s1, (i128)s->a.ends.last - (i128)s->a.ends.first);
	else
		t->a.sum.u.i = (int64_t)((uint64_t)s->a.ends.last - (uint64_t)s->a.ends.first);
}

bool agg_result(const struct agg_state *s, const struct qitem *it, double window_s,
		struct xval *out)
{
	struct agg_state t;

	if (it->diff_ends) {
		ends_to_state(s, it, &t);
		s = &t;
	}
	if (s->n == 0 && it->agg != AGG_COUNT)
		return false;
	return agg_funcs[it->agg].result(s, it, window_s, out);
}
