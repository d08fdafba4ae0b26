/*
 * agg.c - report functions.
 */
#include "agg.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define ROUND8(x) (((x) + 7u) & ~(size_t)7u)

_Static_assert(sizeof(struct agg_state) == 64, "agg_state: one cache line");

size_t agg_state_size(const struct qitem *it)
{
	if (it->diff || it->agg == AGG_DIFF)
		return sizeof(struct agg_state);        /* prev comes last */
	switch ((enum agg_kind)it->agg) {
	case AGG_COUNT:
		return offsetof(struct agg_state, a);   /* n only */
	case AGG_SUM:
	case AGG_RATE:
		return ROUND8(offsetof(struct agg_state, a.sum.is_float) + 1);
	case AGG_AVG:
		return ROUND8(offsetof(struct agg_state, a.m.is_float) + 1);
	case AGG_VAR:
		return ROUND8(offsetof(struct agg_state, a.m.s2) + 2 * sizeof(uint64_t));
	case AGG_MIN:
	case AGG_MAX:
		return ROUND8(offsetof(struct agg_state, a.val.order));
	case AGG_FIRST:
	case AGG_LAST:
		return ROUND8(offsetof(struct agg_state, a.val.order) + sizeof(uint64_t));
	case AGG_PCT:
		return ROUND8(offsetof(struct agg_state, a.q) + sizeof(struct qsketch));
	case AGG_DIFF:
		break;
	}
	return sizeof(struct agg_state);
}

uint8_t agg_fast_op(const struct qitem *it)
{
	switch ((enum agg_kind)it->agg) {
	case AGG_COUNT: return AF_COUNT;
	case AGG_SUM: case AGG_RATE: return AF_SUM;
	case AGG_AVG: return AF_AVG;
	case AGG_VAR: return AF_VAR;
	case AGG_MIN: return AF_MIN;
	case AGG_MAX: return AF_MAX;
	case AGG_FIRST: return AF_FIRST;
	case AGG_LAST: return AF_LAST;
	case AGG_DIFF: case AGG_PCT: break;
	}
	return AF_NONE;
}

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

/* Switch an exact state (n values) to mean and m2 in doubles. */
static void moments_to_float(struct agg_state *s)
{
	if (s->a.m.is_float)
		return;
	long double n = (long double)s->n, s1 = (long double)load128(s->a.m.s1);
	long double s2 = (long double)load128(s->a.m.s2);
	double mean = n > 0 ? (double)(s1 / n) : 0, m2 = n > 0 ? (double)(s2 - s1 * s1 / n) : 0;
	s->a.m.is_float = 1;
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

void agg_update(struct agg_state *s, const struct qitem *it, const struct xval *v,
		uint64_t order, struct arena *mem)
{
	if (!v) {               /* count(), rate(): packets only */
		s->n++;
		return;
	}
	switch ((enum agg_kind)it->agg) {
	case AGG_COUNT:
		break;
	case AGG_SUM:
	case AGG_RATE:
		if (v->k == XK_INT && !s->a.sum.is_float) {
			s->a.sum.u.i += v->u.i;
		} else {
			if (!s->a.sum.is_float) {
				s->a.sum.u.f = (double)s->a.sum.u.i;
				s->a.sum.is_float = 1;
			}
			s->a.sum.u.f += num(v);
		}
		break;
	case AGG_AVG:
	case AGG_VAR:
		if (v->k == XK_INT && !s->a.m.is_float) {
			i128 x = v->u.i;
			store128(s->a.m.s1, load128(s->a.m.s1) + x);
			store128(s->a.m.s2, load128(s->a.m.s2) + x * x);
		} else {
			/* Welford on doubles */
			moments_to_float(s);
			double x = num(v), mean = fget(s->a.m.s1), delta = x - mean;
			mean += delta / (double)(s->n + 1);
			fset(s->a.m.s1, mean);
			fset(s->a.m.s2, fget(s->a.m.s2) + delta * (x - mean));
		}
		break;
	case AGG_MIN:
		if (s->n == 0 || less(v, &s->a.val.u.v))
			keep_value(s, v, order);
		break;
	case AGG_MAX:
		if (s->n == 0 || less(&s->a.val.u.v, v))
			keep_value(s, v, order);
		break;
	case AGG_FIRST:
		if (s->n == 0 || order < s->a.val.order)
			keep_value(s, v, order);
		break;
	case AGG_LAST:
	case AGG_DIFF:
		if (s->n == 0 || order >= s->a.val.order)
			keep_value(s, v, order);
		break;
	case AGG_PCT: {
		double f = num(v);
		if (qs_add(&s->a.q, f <= 0 ? 0 : f >= 1.8e19 ? UINT64_MAX : (uint64_t)llround(f),
			   arena_alloc_cb, mem) != 0)
			return; /* out of memory: the value is not counted */
		break;
	}
	}
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
	switch ((enum agg_kind)it->agg) {
	case AGG_COUNT:
		break;
	case AGG_SUM:
	case AGG_RATE:
		if (!to->a.sum.is_float && !from->a.sum.is_float) {
			to->a.sum.u.i += from->a.sum.u.i;
		} else {
			double a = to->a.sum.is_float ? to->a.sum.u.f : (double)to->a.sum.u.i;
			double b = from->a.sum.is_float ? from->a.sum.u.f : (double)from->a.sum.u.i;
			to->a.sum.u.f = a + b;
			to->a.sum.is_float = 1;
		}
		break;
	case AGG_AVG:
	case AGG_VAR:
		if (!to->a.m.is_float && !from->a.m.is_float) {
			store128(to->a.m.s1, load128(to->a.m.s1) + load128(from->a.m.s1));
			store128(to->a.m.s2, load128(to->a.m.s2) + load128(from->a.m.s2));
		} else {
			/* Chan et al.: combine two Welford partials */
			struct agg_state f = *from;
			moments_to_float(to);
			moments_to_float(&f);
			double na = (double)to->n, nb = (double)f.n, n = na + nb;
			double delta = fget(f.a.m.s1) - fget(to->a.m.s1);
			fset(to->a.m.s1, fget(to->a.m.s1) + delta * nb / n);
			fset(to->a.m.s2, fget(to->a.m.s2) + fget(f.a.m.s2) + delta * delta * na * nb / n);
		}
		break;
	case AGG_MIN:
		if (less(&from->a.val.u.v, &to->a.val.u.v))
			to->a = from->a;
		break;
	case AGG_MAX:
		if (less(&to->a.val.u.v, &from->a.val.u.v))
			to->a = from->a;
		break;
	case AGG_FIRST:
		if (from->a.val.order < to->a.val.order)
			to->a = from->a;
		break;
	case AGG_LAST:
	case AGG_DIFF:
		if (from->a.val.order > to->a.val.order)
			to->a = from->a;
		break;
	case AGG_PCT:
		/* (never copied whole: from's blocks belong to a worker's
		 * arena, reset once merged) */
		if (qs_merge(&to->a.q, &from->a.q, arena_alloc_cb, mem) != 0)
			return;
		break;
	}
	to->n += from->n;
}

bool agg_result(const struct agg_state *s, const struct qitem *it, double window_s,
		struct xval *out)
{
	if (s->n == 0 && it->agg != AGG_COUNT)
		return false;
	switch ((enum agg_kind)it->agg) {
	case AGG_COUNT:
		out->k = XK_INT;
		out->u.i = (int64_t)s->n;
		return true;
	case AGG_SUM:
		if (s->a.sum.is_float) {
			out->k = XK_FLOAT;
			out->u.f = s->a.sum.u.f;
		} else {
			out->k = XK_INT;
			out->u.i = s->a.sum.u.i;
		}
		return true;
	case AGG_RATE:
		out->k = XK_FLOAT;
		out->u.f = (it->arg ? (s->a.sum.is_float ? s->a.sum.u.f : (double)s->a.sum.u.i)
				    : (double)s->n) / window_s;
		return true;
	case AGG_AVG:
		out->k = XK_FLOAT;
		out->u.f = s->a.m.is_float ? fget(s->a.m.s1)
					   : (double)((long double)load128(s->a.m.s1) / (long double)s->n);
		return true;
	case AGG_VAR:
		out->k = XK_FLOAT;
		if (s->a.m.is_float) {
			out->u.f = fget(s->a.m.s2) / (double)s->n;
		} else {
			/* (n Σx² − (Σx)²) / n², exactly while it fits in 128 bits */
			i128 n = (i128)s->n, s1 = load128(s->a.m.s1), s2 = load128(s->a.m.s2);
			i128 num;
			if (!__builtin_mul_overflow(n, s2, &num) && !__builtin_sub_overflow(num, s1 * s1, &num))
				out->u.f = (double)((long double)num / ((long double)s->n * (long double)s->n));
			else
				out->u.f = (double)(((long double)s2 - (long double)s1 * (long double)s1 /
						     (long double)s->n) / (long double)s->n);
		}
		return true;
	case AGG_MIN:
	case AGG_MAX:
	case AGG_FIRST:
	case AGG_LAST:
	case AGG_DIFF:
		*out = s->a.val.u.v;
		return true;
	case AGG_PCT:
		if (s->a.q.n == 0)
			return false;
		out->k = XK_INT;
		out->u.i = (int64_t)qs_quantile(&s->a.q, it->quantile);
		return true;
	}
	return false;
}
