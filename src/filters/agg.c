/*
 * agg.c - report functions.
 */
#include "agg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static double num(const struct xval *v)
{
	double f = 0;

	xval_number(v, &f);
	return f;
}

bool agg_diff(struct agg_state *s, struct xval *v)
{
	if (!s->has_prev) {
		s->prev = *v;
		s->has_prev = 1;
		return false;
	}
	struct xval cur = *v;
	if (cur.k == XK_INT && s->prev.k == XK_INT) {
		v->u.i = (int64_t)((uint64_t)cur.u.i - (uint64_t)s->prev.u.i);
	} else {
		v->k = XK_FLOAT;
		v->u.f = num(&cur) - num(&s->prev);
	}
	s->prev = cur;
	return true;
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
			s->a.sum.i += v->u.i;
		} else {
			if (!s->a.sum.is_float) {
				s->a.sum.f = (double)s->a.sum.i;
				s->a.sum.is_float = 1;
			}
			s->a.sum.f += num(v);
		}
		break;
	case AGG_AVG:
		s->a.sum.f += num(v);
		break;
	case AGG_VAR: {
		double x = num(v), delta = x - s->a.w.mean;
		s->a.w.mean += delta / (double)(s->n + 1);
		s->a.w.m2 += delta * (x - s->a.w.mean);
		break;
	}
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
		if (!s->a.q && !(s->a.q = arena_alloc(mem, sizeof(*s->a.q))))
			return; /* out of memory: the value is not counted */
		double f = num(v);
		if (qs_add(s->a.q, f <= 0 ? 0 : f >= 1.8e19 ? UINT64_MAX : (uint64_t)llround(f),
			   arena_alloc_cb, mem) != 0)
			return;
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
			to->a.sum.i += from->a.sum.i;
		} else {
			double a = to->a.sum.is_float ? to->a.sum.f : (double)to->a.sum.i;
			double b = from->a.sum.is_float ? from->a.sum.f : (double)from->a.sum.i;
			to->a.sum.f = a + b;
			to->a.sum.is_float = 1;
		}
		break;
	case AGG_AVG:
		to->a.sum.f += from->a.sum.f;
		break;
	case AGG_VAR: {
		/* Chan et al.: combine two Welford partials */
		double na = (double)to->n, nb = (double)from->n, n = na + nb;
		double delta = from->a.w.mean - to->a.w.mean;
		to->a.w.mean += delta * nb / n;
		to->a.w.m2 += from->a.w.m2 + delta * delta * na * nb / n;
		break;
	}
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
		if (!to->a.q && !(to->a.q = arena_alloc(mem, sizeof(*to->a.q))))
			return;
		if (from->a.q)
			qs_merge(to->a.q, from->a.q, arena_alloc_cb, mem);
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
			out->u.f = s->a.sum.f;
		} else {
			out->k = XK_INT;
			out->u.i = s->a.sum.i;
		}
		return true;
	case AGG_RATE:
		out->k = XK_FLOAT;
		out->u.f = (it->arg ? (s->a.sum.is_float ? s->a.sum.f : (double)s->a.sum.i)
				    : (double)s->n) / window_s;
		return true;
	case AGG_AVG:
		out->k = XK_FLOAT;
		out->u.f = s->a.sum.f / (double)s->n;
		return true;
	case AGG_VAR:
		out->k = XK_FLOAT;
		out->u.f = s->a.w.m2 / (double)s->n;
		return true;
	case AGG_MIN:
	case AGG_MAX:
	case AGG_FIRST:
	case AGG_LAST:
	case AGG_DIFF:
		*out = s->a.val.u.v;
		return true;
	case AGG_PCT:
		if (!s->a.q)
			return false;
		out->k = XK_INT;
		out->u.i = (int64_t)qs_quantile(s->a.q, it->quantile);
		return true;
	}
	return false;
}
