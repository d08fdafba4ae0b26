/*
 * expr.c - evaluation of compiled expressions.
 */
#include "expr.h"

#include <stdlib.h>
#include <string.h>

/*
 * The slot whose elements slot i adds up, when its attribute is marked
 * ISP_SUM_OF and the per-hop attribute it names, on the same layer (same
 * protocol and instance), is a slot too: the rules read it anyway, so the
 * sum costs an add a hop rather than a second read of the hops. -1 when
 * not (the attribute's own getter then computes it).
 */
static int sum_source(const struct isp_registry *reg, const struct isp_attr_ref *refs,
		      unsigned n, unsigned i)
{
	const char *full = isp_attr_sum_of(isp_attr_desc_of(reg, &refs[i]));
	const char *proto = reg->proto[refs[i].proto].desc->name;
	size_t pl = strlen(proto);

	if (!full || strncmp(full, proto, pl) != 0 || full[pl] != '.')
		return -1;
	const char *name = full + pl + 1;
	size_t nl = strcspn(name, " ");
	for (unsigned j = 0; j < n; j++) {
		const struct isp_attr_desc *b = isp_attr_desc_of(reg, &refs[j]);
		if (refs[j].proto == refs[i].proto && refs[j].instance == refs[i].instance &&
		    b->per_hop && strncmp(b->name, name, nl) == 0 && b->name[nl] == 0)
			return (int)j;
	}
	return -1;
}

int slot_cache_init(struct slot_cache *sc, const struct isp_registry *reg,
		    const struct isp_attr_ref *refs, unsigned n)
{
	sc->reg = reg;
	sc->refs = refs;
	sc->n = n;
	sc->gen = 1;
	sc->s = calloc(n ? n : 1, sizeof(*sc->s));
	if (!sc->s)
		return -1;
	for (unsigned i = 0; i < n; i++) {
		const struct isp_attr_desc *a = isp_attr_desc_of(reg, &refs[i]);
		struct slot *s = &sc->s[i];
		s->from = refs[i].proto == reg->meta ? SLOT_META : SLOT_LAYER;
		s->instance = refs[i].instance;
		s->proto = refs[i].proto;
		s->type = a->type;
		s->get = a->get;
		s->arg = a->arg;
	}
	for (unsigned i = 0; i < n; i++) {
		int j = sum_source(reg, refs, n, i);
		if (j >= 0) {
			sc->s[i].from = SLOT_SUM;
			sc->s[i].sum_of = &sc->s[j];
		}
	}
	/* a record writes these straight from the packet (event.c) */
	for (unsigned i = 0; i < n; i++) {
		const struct isp_attr_desc *a = isp_attr_desc_of(reg, &refs[i]);
		struct slot *s = &sc->s[i];
		bool numbers = a->type <= ISP_T_U64;

		if (s->from == SLOT_LAYER && s->instance == 0 && a->per_hop && numbers)
			s->put = isp_attr_put_of(reg, &refs[i]);
	}
	return 0;
}

bool slot_sum(struct slot_cache *sc, const struct isp_packet *p, struct slot *s)
{
	const struct isp_value *a = slot_value(sc, p, s->sum_of);

	if (!a || !a->is_array)
		return false;
	uint64_t sum = 0;
	if (!a->missing) {      /* every hop with a value, the usual case */
		for (unsigned h = 0, n = a->count; h < n; h++)
			sum += a->v.arr[h];
	} else {                /* the hops with a value, as set bits */
		uint32_t have = ~a->missing & (uint32_t)((UINT64_C(1) << a->count) - 1);
		for (; have; have &= have - 1)
			sum += a->v.arr[__builtin_ctz(have)];
	}
	return isp_val_scalar(&s->v, s->type, sum);
}

void slot_cache_free(struct slot_cache *sc)
{
	free(sc->s);
	sc->s = NULL;
}


bool xval_from_value(const struct isp_value *v, int hop, struct xval *out)
{
	uint64_t raw;

	if (v->is_array) {
		if (hop < 0 || hop >= v->count || (v->missing & (UINT32_C(1) << hop)))
			return false;
		raw = v->v.arr[hop];
	} else {
		if (v->missing & 1)
			return false;
		raw = v->v.u;
	}
	switch (v->type) {
	case ISP_T_IPV4:
		out->k = XK_ADDR4;
		out->u.a4 = (uint32_t)raw;
		return true;
	case ISP_T_IPV6:
		out->k = XK_ADDR6;
		memcpy(out->u.a6, v->v.ip6, 16);
		return true;
	case ISP_T_MAC:
		out->k = XK_MAC;
		memset(out->u.a6, 0, 16);
		memcpy(out->u.a6, v->v.mac, 6);
		return true;
	case ISP_T_STRING:
		out->k = XK_STR;
		out->u.s = v->v.str;
		return true;
	case ISP_T_TIMESTAMP:
		out->k = XK_INT;
		out->u.i = (int64_t)(raw / 1000u); /* microseconds */
		return true;
	default:
		out->k = XK_INT;
		out->u.i = (int64_t)raw;
		return true;
	}
}

bool xval_number(const struct xval *v, double *f)
{
	if (v->k == XK_INT)
		*f = (double)v->u.i;
	else if (v->k == XK_FLOAT)
		*f = v->u.f;
	else
		return false;
	return true;
}

static bool prefix_match(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;

	if (memcmp(a, b, whole) != 0)
		return false;
	if (!rest)
		return true;
	uint8_t mask = (uint8_t)(0xff << (8 - rest));
	return (a[whole] & mask) == (b[whole] & mask);
}

/* Equality with CIDR constants on the right: 10.0.0.0/8 matches inside. */
static int compare(const struct xval *x, const struct xval *y, uint8_t prefix, bool *ok)
{
	*ok = true;
	if (x->k == XK_ADDR4 && y->k == XK_ADDR4) {
		uint32_t mask = prefix >= 32 ? 0xffffffffu : prefix == 0 ? 0 : ~(0xffffffffu >> prefix);
		uint32_t a = x->u.a4 & mask, b = y->u.a4 & mask;
		return a < b ? -1 : a > b;
	}
	if ((x->k == XK_ADDR6 && y->k == XK_ADDR6) || (x->k == XK_MAC && y->k == XK_MAC)) {
		if (prefix <= 128 && prefix_match(x->u.a6, y->u.a6, prefix))
			return 0;
		/* without a prefix (255), or outside it: the whole address */
		int c = memcmp(x->u.a6, y->u.a6, 16);
		return c < 0 ? -1 : c > 0;
	}
	if (x->k == XK_STR && y->k == XK_STR)
		return strcmp(x->u.s, y->u.s);
	if (x->k == XK_INT && y->k == XK_INT)
		return x->u.i < y->u.i ? -1 : x->u.i > y->u.i;
	double a, b;
	if (xval_number(x, &a) && xval_number(y, &b))
		return a < b ? -1 : a > b;
	*ok = false;
	return 0;
}

static bool arith(enum cx_op op, const struct xval *x, const struct xval *y, struct xval *out)
{
	if (x->k == XK_INT && y->k == XK_INT) {
		int64_t a = x->u.i, b = y->u.i;
		out->k = XK_INT;
		switch (op) {
		case CX_ADD: out->u.i = (int64_t)((uint64_t)a + (uint64_t)b); return true;
		case CX_SUB: out->u.i = (int64_t)((uint64_t)a - (uint64_t)b); return true;
		case CX_MUL: out->u.i = (int64_t)((uint64_t)a * (uint64_t)b); return true;
		case CX_DIV:
			if (b == 0 || (a == INT64_MIN && b == -1))
				return false;
			/* integer division would surprise in rules: divide as reals */
			out->k = XK_FLOAT;
			out->u.f = (double)a / (double)b;
			return true;
		case CX_MOD:
			if (b == 0 || (a == INT64_MIN && b == -1))
				return false;
			out->u.i = a % b;
			return true;
		default:
			return false;
		}
	}
	double a, b;
	if (!xval_number(x, &a) || !xval_number(y, &b))
		return false;
	out->k = XK_FLOAT;
	switch (op) {
	case CX_ADD: out->u.f = a + b; return true;
	case CX_SUB: out->u.f = a - b; return true;
	case CX_MUL: out->u.f = a * b; return true;
	case CX_DIV: if (b == 0) return false; out->u.f = a / b; return true;
	default: return false;
	}
}

static bool boolean(struct xval *out, bool v)
{
	out->k = XK_INT;
	out->u.i = v;
	return true;
}

static bool hops_any_all(const struct cx *e, struct cx_ctx *c, struct xval *out)
{
	const struct isp_value *v = slot_get(c->sc, c->pkt, (unsigned)e->hop_slot);

	if (!v || !v->is_array)
		return false;
	int saved = c->hop;
	bool any = false, all = true;
	for (int i = 0; i < v->count; i++) {
		c->hop = i;
		bool t = cx_true(e->a, c);
		any |= t;
		all &= t;
		if (e->op == CX_ANY ? any : !all)
			break;
	}
	c->hop = saved;
	return boolean(out, e->op == CX_ANY ? any : all);
}

bool cx_eval(const struct cx *e, struct cx_ctx *c, struct xval *out)
{
	struct xval x, y;
	bool ok;

	switch ((enum cx_op)e->op) {
	case CX_CONST:
		*out = e->k;
		return true;
	case CX_ATTR: {
		const struct isp_value *v = slot_get(c->sc, c->pkt, (unsigned)e->slot);
		if (!v)
			return false;
		int hop = e->index == CX_HOP_CURRENT ? c->hop : e->index;
		return xval_from_value(v, hop, out);
	}
	case CX_PRESENT: {
		const struct isp_value *v = slot_get(c->sc, c->pkt, (unsigned)e->slot);
		if (!v || e->index == CX_SCALAR)
			return boolean(out, v != NULL);
		return boolean(out, xval_from_value(v, e->index, &x));  /* hop there, available */
	}
	case CX_EQ: case CX_NE: case CX_LT: case CX_LE: case CX_GT: case CX_GE: {
		if (!cx_eval(e->a, c, &x) || !cx_eval(e->b, c, &y))
			return boolean(out, false);
		uint8_t prefix = e->b->op == CX_CONST ? e->b->prefix : 255;
		int r = compare(&x, &y, prefix, &ok);
		if (!ok)
			return boolean(out, false);
		switch (e->op) {
		case CX_EQ: return boolean(out, r == 0);
		case CX_NE: return boolean(out, r != 0);
		case CX_LT: return boolean(out, r < 0);
		case CX_LE: return boolean(out, r <= 0);
		case CX_GT: return boolean(out, r > 0);
		default: return boolean(out, r >= 0);
		}
	}
	case CX_ADD: case CX_SUB: case CX_MUL: case CX_DIV: case CX_MOD:
		if (!cx_eval(e->a, c, &x) || !cx_eval(e->b, c, &y))
			return false;
		return arith((enum cx_op)e->op, &x, &y, out);
	case CX_AND:
		return boolean(out, cx_true(e->a, c) && cx_true(e->b, c));
	case CX_OR:
		return boolean(out, cx_true(e->a, c) || cx_true(e->b, c));
	case CX_NOT:
		return boolean(out, !cx_true(e->a, c));
	case CX_NEG:
		if (!cx_eval(e->a, c, &x))
			return false;
		if (x.k == XK_INT) {
			out->k = XK_INT;
			out->u.i = (int64_t)(0 - (uint64_t)x.u.i);
			return true;
		}
		if (x.k == XK_FLOAT) {
			out->k = XK_FLOAT;
			out->u.f = -x.u.f;
			return true;
		}
		return false;
	case CX_IN:
		if (!cx_eval(e->a, c, &x))
			return boolean(out, false);
		for (unsigned i = 0; i < e->nargs; i++) {
			if (!cx_eval(e->args[i], c, &y))
				continue;
			uint8_t prefix = e->args[i]->op == CX_CONST ? e->args[i]->prefix : 255;
			if (compare(&x, &y, prefix, &ok) == 0 && ok)
				return boolean(out, true);
		}
		return boolean(out, false);
	case CX_ANY:
	case CX_ALL:
		return hops_any_all(e, c, out);
	}
	return false;
}

bool cx_true(const struct cx *e, struct cx_ctx *c)
{
	struct xval v;
	double f;

	if (!cx_eval(e, c, &v))
		return false;
	if (v.k == XK_INT)
		return v.u.i != 0;
	if (xval_number(&v, &f))
		return f != 0;
	return true;    /* an address or string that is present */
}

void cx_free(struct cx *e)
{
	if (!e)
		return;
	if (e->op == CX_CONST && e->k.k == XK_STR)
		free((char *)e->k.u.s);
	cx_free(e->a);
	cx_free(e->b);
	for (unsigned i = 0; i < e->nargs; i++)
		cx_free(e->args[i]);
	free(e->args);
	free(e);
}
