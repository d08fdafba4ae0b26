/*
 * compile_expr.c - type checking and compilation of expressions: where
 * conditions and select items.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "compile_int.h"
#include "parse.h"
#include "../src/filters/agg.h"

static const char *ty_name(enum ty t)
{
	static const char *const n[] = { "?", "number", "IPv4 address", "IPv6 address",
					 "MAC address", "string" };
	return n[t];
}

void reads_begin(struct compiler *c, struct rule_reads *reads)
{
	*reads = (struct rule_reads){ 0 };
	c->reads = reads;
}

bool reads_end(struct compiler *c, bool ok)
{
	if (c->reads && ok)
		c->reads->known = true;
	c->reads = NULL;
	return ok;
}

/* Slot into the rule's reads; false when out of memory. */
static bool reads_add(struct compiler *c, int slot)
{
	struct rule_reads *r = c->reads;

	if (!r)
		return true;
	for (unsigned i = 0; i < r->n; i++)
		if (r->slot[i] == slot)
			return true;
	int *s = realloc(r->slot, (r->n + 1) * sizeof(*s));
	if (!s)
		return false;
	r->slot = s;
	s[r->n++] = slot;
	return true;
}

static int slot_of_name(struct compiler *c, const char *name, const struct dsl_loc *loc,
			bool *per_hop, enum ty *ty);

int compile_slot(struct compiler *c, const char *name, const struct dsl_loc *loc,
		 bool *per_hop, enum ty *ty)
{
	int slot = slot_of_name(c, name, loc, per_hop, ty);

	if (slot >= 0 && !reads_add(c, slot))
		return -1;
	return slot;
}

static int slot_of_name(struct compiler *c, const char *name, const struct dsl_loc *loc,
			bool *per_hop, enum ty *ty)
{
	struct isp_program *p = c->prog;
	struct isp_attr_ref ref;
	char err[256];

	if (isp_attr_lookup(c->reg, name, &ref, err, sizeof(err)) != 0) {
		dsl_error(c->d, loc, "%s", err);
		return -1;
	}
	const struct isp_attr_desc *a = isp_attr_desc_of(c->reg, &ref);
	if (per_hop)
		*per_hop = a->per_hop;
	if (ty) {
		switch (a->type) {
		case ISP_T_IPV4: *ty = TY_ADDR4; break;
		case ISP_T_IPV6: *ty = TY_ADDR6; break;
		case ISP_T_MAC: *ty = TY_MAC; break;
		case ISP_T_STRING: *ty = TY_STR; break;
		default: *ty = TY_NUM; break;
		}
	}
	for (unsigned i = 0; i < p->nslots; i++)
		if (strcmp(p->slot_names[i], name) == 0)
			return (int)i;
	if (p->nslots >= 32000) {
		dsl_error(c->d, loc, "too many distinct attributes");
		return -1;
	}
	struct isp_attr_ref *refs = realloc(p->slots, (p->nslots + 1) * sizeof(*refs));
	if (!refs)
		return -1;
	p->slots = refs;
	char **names = realloc(p->slot_names, (p->nslots + 1) * sizeof(*names));
	if (!names)
		return -1;
	p->slot_names = names;
	if (!(names[p->nslots] = strdup(name)))
		return -1;
	refs[p->nslots] = ref;
	return (int)p->nslots++;
}

static struct cx *new_cx(enum cx_op op)
{
	struct cx *x = calloc(1, sizeof(*x));

	if (x) {
		x->op = (uint8_t)op;
		x->prefix = 255;
		x->slot = -1;
		x->hop_slot = -1;
		x->index = CX_SCALAR;
	}
	return x;
}

static bool fail(struct typed *t)
{
	cx_free(t->cx);
	t->cx = NULL;
	t->ty = TY_ERR;
	return false;
}

static bool parse_addr(struct compiler *c, const struct ex_node *e, struct cx *x)
{
	char buf[64];
	const char *slash = strchr(e->name, '/');
	size_t n = slash ? (size_t)(slash - e->name) : strlen(e->name);

	if (n >= sizeof(buf))
		goto bad;
	memcpy(buf, e->name, n);
	buf[n] = 0;
	if (inet_pton(AF_INET, buf, x->k.u.a6) == 1) {
		x->k.k = XK_ADDR4;
		uint32_t a;
		memcpy(&a, x->k.u.a6, 4);
		x->k.u.a4 = ntohl(a);
	} else if (inet_pton(AF_INET6, buf, x->k.u.a6) == 1) {
		x->k.k = XK_ADDR6;
	} else {
		goto bad;
	}
	if (slash) {
		long pl = strtol(slash + 1, NULL, 10);
		if (pl < 0 || pl > (x->k.k == XK_ADDR4 ? 32 : 128)) {
			dsl_error(c->d, &e->loc, "prefix length /%ld out of range", pl);
			return false;
		}
		x->prefix = (uint8_t)pl;
	}
	return true;
bad:
	dsl_error(c->d, &e->loc, "'%s' is not an IPv4 or IPv6 address", e->name);
	return false;
}

static bool compile_node(struct compiler *c, const struct ex_node *e, bool allow_hop,
			 struct typed *out);

static enum cx_op cmp_op(enum ex_op op)
{
	switch (op) {
	case OP_EQ: return CX_EQ;
	case OP_NE: return CX_NE;
	case OP_LT: return CX_LT;
	case OP_LE: return CX_LE;
	case OP_GT: return CX_GT;
	case OP_GE: return CX_GE;
	case OP_ADD: return CX_ADD;
	case OP_SUB: return CX_SUB;
	case OP_MUL: return CX_MUL;
	case OP_DIV: return CX_DIV;
	case OP_MOD: return CX_MOD;
	case OP_AND: return CX_AND;
	default: return CX_OR;
	}
}

static bool comparable(enum ty a, enum ty b)
{
	return a == b;
}

static void merge_hop(struct typed *out, const struct typed *a, const struct typed *b)
{
	out->per_hop = a->per_hop || (b && b->per_hop);
	out->hop_slot = a->hop_slot >= 0 ? a->hop_slot : b ? b->hop_slot : -1;
}

static bool compile_binary(struct compiler *c, const struct ex_node *e, bool allow_hop,
			   struct typed *out)
{
	struct typed a = { 0 }, b = { 0 };

	if (!compile_node(c, e->a, allow_hop, &a))
		return fail(&a);
	if (!compile_node(c, e->b, allow_hop, &b)) {
		fail(&a);
		return fail(&b);
	}
	out->cx = new_cx(cmp_op(e->op));
	if (!out->cx) {
		fail(&a);
		return fail(&b);
	}
	out->cx->a = a.cx;
	out->cx->b = b.cx;
	merge_hop(out, &a, &b);
	switch (e->op) {
	case OP_AND:
	case OP_OR:
		out->ty = TY_NUM;
		return true;
	case OP_EQ: case OP_NE: case OP_LT: case OP_LE: case OP_GT: case OP_GE:
		if (!comparable(a.ty, b.ty)) {
			dsl_error(c->d, &e->loc, "cannot compare %s with %s", ty_name(a.ty), ty_name(b.ty));
			return fail(out);
		}
		if (b.cx->op == CX_CONST && b.cx->prefix != 255 && e->op != OP_EQ && e->op != OP_NE) {
			dsl_error(c->d, &e->loc, "a network prefix can only be matched with == or !=");
			return fail(out);
		}
		out->ty = TY_NUM;
		return true;
	default:
		if (a.ty != TY_NUM || b.ty != TY_NUM) {
			dsl_error(c->d, &e->loc, "'%s' needs numbers, not %s and %s", ex_op_text(e->op),
				  ty_name(a.ty), ty_name(b.ty));
			return fail(out);
		}
		out->ty = TY_NUM;
		return true;
	}
}

static bool compile_call(struct compiler *c, const struct ex_node *e, bool allow_hop,
			 struct typed *out)
{
	(void)allow_hop;
	if (strcmp(e->name, "any") == 0 || strcmp(e->name, "all") == 0) {
		if (e->nargs != 1) {
			dsl_error(c->d, &e->loc, "%s() takes one condition over per-hop attributes", e->name);
			return fail(out);
		}
		struct typed a = { 0 };
		if (!compile_node(c, e->args[0], true, &a))
			return fail(&a);
		if (!a.per_hop || a.hop_slot < 0) {
			dsl_error(c->d, &e->loc, "%s() needs a per-hop attribute such as int.hop_latencies",
				  e->name);
			fail(&a);
			return fail(out);
		}
		out->cx = new_cx(e->name[1] == 'n' ? CX_ANY : CX_ALL);
		if (!out->cx)
			return fail(&a);
		out->cx->a = a.cx;
		out->cx->hop_slot = (int16_t)a.hop_slot;
		out->ty = TY_NUM;
		out->per_hop = false;
		out->hop_slot = -1;
		return true;
	}
	if (agg_func_named(e->name)) {
		dsl_error(c->d, &e->loc, "%s() is a report function: use it in a query report's select",
			  e->name);
		return fail(out);
	}
	static const char *const known[] = { "any", "all", NULL };
	const char *hint = closest_word(e->name, known);
	dsl_error(c->d, &e->loc, "unknown function '%s'%s%s%s", e->name,
		  hint ? "; did you mean '" : "", hint ? hint : "", hint ? "'?" : "");
	return fail(out);
}

static bool compile_node(struct compiler *c, const struct ex_node *e, bool allow_hop,
			 struct typed *out)
{
	memset(out, 0, sizeof(*out));
	out->hop_slot = -1;
	switch (e->kind) {
	case EX_NUM:
		out->cx = new_cx(CX_CONST);
		if (!out->cx)
			return fail(out);
		if (e->is_float) {
			out->cx->k.k = XK_FLOAT;
			out->cx->k.u.f = e->f;
		} else {
			if (e->u > INT64_MAX) {
				dsl_error(c->d, &e->loc, "number too large");
				return fail(out);
			}
			out->cx->k.k = XK_INT;
			out->cx->k.u.i = (int64_t)e->u;
		}
		out->ty = TY_NUM;
		return true;
	case EX_STR:
		out->cx = new_cx(CX_CONST);
		if (!out->cx)
			return fail(out);
		out->cx->k.k = XK_STR;
		out->cx->k.u.s = strdup(e->name);
		out->ty = TY_STR;
		return out->cx->k.u.s != NULL || fail(out);
	case EX_ADDR:
		out->cx = new_cx(CX_CONST);
		if (!out->cx || !parse_addr(c, e, out->cx))
			return fail(out);
		out->ty = out->cx->k.k == XK_ADDR4 ? TY_ADDR4 : TY_ADDR6;
		return true;
	case EX_ATTR: {
		bool per_hop;
		enum ty ty;
		int slot = compile_slot(c, e->name, &e->loc, &per_hop, &ty);
		if (slot < 0)
			return fail(out);
		out->cx = new_cx(CX_ATTR);
		if (!out->cx)
			return fail(out);
		out->cx->slot = (int16_t)slot;
		out->ty = ty;
		if (per_hop) {
			if (e->index >= ISP_MAX_HOPS) {
				dsl_error(c->d, &e->loc, "hop index %d is beyond the %d hops kept",
					  e->index, ISP_MAX_HOPS);
				return fail(out);
			}
			if (e->index >= 0) {
				out->cx->index = (int16_t)e->index;
			} else if (allow_hop) {
				out->cx->index = CX_HOP_CURRENT;
				out->per_hop = true;
				out->hop_slot = slot;
			} else {
				dsl_error(c->d, &e->loc, "'%s' has one value per hop: write %s[i], "
					  "any(...) or all(...)", e->name, e->name);
				return fail(out);
			}
		} else if (e->index >= 0) {
			dsl_error(c->d, &e->loc, "'%s' is not a per-hop attribute and cannot be indexed",
				  e->name);
			return fail(out);
		}
		return true;
	}
	case EX_BIN:
		return compile_binary(c, e, allow_hop, out);
	case EX_NOT:
	case EX_NEG: {
		struct typed a = { 0 };
		if (!compile_node(c, e->a, allow_hop, &a))
			return fail(&a);
		if (e->kind == EX_NEG && a.ty != TY_NUM) {
			dsl_error(c->d, &e->loc, "'-' needs a number, not %s", ty_name(a.ty));
			fail(&a);
			return fail(out);
		}
		out->cx = new_cx(e->kind == EX_NOT ? CX_NOT : CX_NEG);
		if (!out->cx)
			return fail(&a);
		out->cx->a = a.cx;
		out->ty = TY_NUM;
		merge_hop(out, &a, NULL);
		return true;
	}
	case EX_IN: {
		struct typed a = { 0 };
		if (!compile_node(c, e->a, allow_hop, &a))
			return fail(&a);
		out->cx = new_cx(CX_IN);
		if (!out->cx)
			return fail(&a);
		out->cx->a = a.cx;
		merge_hop(out, &a, NULL);
		out->ty = TY_NUM;
		const struct ex_node *list = e->b;
		out->cx->args = calloc(list->nargs ? list->nargs : 1, sizeof(*out->cx->args));
		if (!out->cx->args)
			return fail(out);
		for (size_t i = 0; i < list->nargs; i++) {
			struct typed it = { 0 };
			if (!compile_node(c, list->args[i], allow_hop, &it))
				return fail(out);
			out->cx->args[out->cx->nargs++] = it.cx;
			if (!comparable(a.ty, it.ty)) {
				dsl_error(c->d, &list->args[i]->loc, "cannot compare %s with %s",
					  ty_name(a.ty), ty_name(it.ty));
				return fail(out);
			}
		}
		return true;
	}
	case EX_CALL:
		return compile_call(c, e, allow_hop, out);
	case EX_LIST:
		break;
	}
	dsl_error(c->d, &e->loc, "unexpected expression");
	return fail(out);
}

/* Where the text of a string value starts: after its opening quote. */
static struct dsl_loc string_start(const struct cfg_value *v)
{
	struct dsl_loc at = v->loc;

	if (v->kind == CV_STRING)
		at.col++;
	return at;
}

bool compile_expr_string(struct compiler *c, const struct cfg_value *v, bool allow_hop,
			 struct typed *out)
{
	memset(out, 0, sizeof(*out));
	out->hop_slot = -1;
	if (v->kind == CV_LIST) {
		dsl_error(c->d, &v->loc, "expected one expression, not a list");
		return false;
	}
	struct dsl_loc at = string_start(v);
	struct ex_node *e = dsl_parse_expr(c->d, v->text, &at);
	if (!e)
		return false;
	bool ok = compile_node(c, e, allow_hop, out);
	ex_free(e);
	return ok;
}

bool compile_where(struct compiler *c, const struct cfg_value *v, struct cx **out)
{
	*out = NULL;
	if (v->kind != CV_LIST) {
		struct typed t;
		if (!compile_expr_string(c, v, false, &t))
			return false;
		*out = t.cx;
		return true;
	}
	/* MMT: every listed attribute must be present; items may also be
	 * conditions, all of which must hold */
	for (size_t i = 0; i < v->nitems; i++) {
		const struct cfg_value *it = v->items[i];
		struct dsl_loc at = string_start(it);
		struct ex_node *e = dsl_parse_expr(c->d, it->text ? it->text : "", &at);
		if (!e)
			return false;
		struct cx *x = NULL;
		if (e->kind == EX_ATTR && e->index < 0) {
			int slot = compile_slot(c, e->name, &e->loc, NULL, NULL);
			if (slot >= 0 && (x = new_cx(CX_PRESENT)))
				x->slot = (int16_t)slot;
		} else if (e->kind == EX_ATTR) {
			/* one hop's value: present when that hop has it (its
			 * value may well be 0) */
			struct typed t;
			if (compile_node(c, e, false, &t)) {
				x = t.cx;
				x->op = CX_PRESENT;
			}
		} else {
			struct typed t;
			if (compile_node(c, e, false, &t))
				x = t.cx;
		}
		ex_free(e);
		if (!x)
			return false;
		if (*out) {
			struct cx *and = new_cx(CX_AND);
			if (!and) {
				cx_free(x);
				return false;
			}
			and->a = *out;
			and->b = x;
			*out = and;
		} else {
			*out = x;
		}
	}
	return true;
}

/* ---- select items ---- */

/* The report function names, for a did-you-mean. */
/* Names other tools give to a report function (SQL, pandas, InfluxQL):
 * spelling distance would suggest min for med, so these are looked up. */
static const char *usual_name(const char *name)
{
	static const char *const alias[][2] = {
		{ "med", "p50" }, { "median", "p50" }, { "mean", "avg" }, { "average", "avg" },
		{ "variance", "var" }, { "cnt", "count" }, { "total", "sum" },
		{ "minimum", "min" }, { "maximum", "max" }, { "delta", "diff" },
		{ "difference", "diff" }, { "percentile", "p90" },
	};

	for (size_t i = 0; i < sizeof(alias) / sizeof(alias[0]); i++)
		if (strcasecmp(name, alias[i][0]) == 0)
			return alias[i][1];
	return NULL;
}

static const char *const *agg_names(void)
{
	static const char *names[32];

	if (!names[0]) {
		unsigned n = 0;
		for (const struct agg_func *f = agg_funcs; f->name && n + 1 < 32; f++)
			names[n++] = f->name;
	}
	return names;
}

/* Whether an expression's value may be a fraction: a division (done as
 * reals) or a constant with a fraction anywhere in it. */
static bool may_be_fraction(const struct cx *x)
{
	if (!x)
		return false;
	if (x->op == CX_DIV || (x->op == CX_CONST && x->k.k == XK_FLOAT))
		return true;
	for (unsigned i = 0; i < x->nargs; i++)
		if (may_be_fraction(x->args[i]))
			return true;
	return may_be_fraction(x->a) || may_be_fraction(x->b);
}

bool compile_select_item(struct compiler *c, const struct cfg_value *v, struct qitem *out)
{
	memset(out, 0, sizeof(*out));
	out->hop_slot = -1;
	if (v->kind == CV_LIST) {
		dsl_error(c->d, &v->loc, "expected a select expression, not a list");
		return false;
	}
	out->text = strdup(v->text);
	if (!out->text)
		return false;
	struct dsl_loc at = string_start(v);
	struct ex_node *e = dsl_parse_expr(c->d, v->text, &at);
	if (!e) {
		free(out->text);
		out->text = NULL;
		return false;
	}

	const struct ex_node *arg = e;
	const struct agg_func *fn = NULL;
	if (e->kind == EX_CALL) {
		fn = agg_func_named(e->name);
		if (!fn) {
			const char *hint = usual_name(e->name);
			if (!hint)
				hint = closest_word(e->name, agg_names());
			/* every name, as an unknown key lists the keys (the
			 * manual's test reads them here: test/doc/man.sh) */
			char list[256] = "";
			size_t len = 0;
			for (const char *const *nm = agg_names(); *nm; nm++) {
				int w = snprintf(list + len, sizeof(list) - len, "%s%s()",
						 len ? ", " : "", *nm);
				if (w < 0 || (size_t)w >= sizeof(list) - len) {
					list[len] = '\0';
					break;
				}
				len += (size_t)w;
			}
			dsl_error(c->d, &e->loc, "unknown report function '%s'%s%s%s; known: %s",
				  e->name, hint ? "; did you mean '" : "", hint ? hint : "",
				  hint ? "'?" : "", list);
			goto bad;
		}
		if (e->nargs > 1 || (e->nargs == 0 && fn->kind != AGG_COUNT &&
				     fn->kind != AGG_RATE)) {
			dsl_error(c->d, &e->loc, "%s() takes one argument", e->name);
			goto bad;
		}
		arg = e->nargs ? e->args[0] : NULL;
		out->agg = fn->kind;
		out->quantile = fn->quantile;
	} else {
		out->agg = AGG_LAST;    /* a bare attribute means last() (MMT) */
	}
	if (arg && arg->kind == EX_CALL && strcmp(arg->name, "diff") == 0) {
		if (out->agg == AGG_DIFF) {
			dsl_error(c->d, &arg->loc, "diff(diff(...)) is not supported");
			goto bad;
		}
		if (arg->nargs != 1) {
			dsl_error(c->d, &arg->loc, "diff() takes one argument");
			goto bad;
		}
		out->diff = 1;
		arg = arg->args[0];
	}
	if (arg && arg->kind == EX_CALL && agg_func_named(arg->name)) {
		dsl_error(c->d, &arg->loc, "%s() cannot be nested here (only diff() can be inside "
			  "another function)", arg->name);
		goto bad;
	}
	if (arg) {
		struct typed t;
		if (!compile_node(c, arg, true, &t))
			goto bad;
		out->arg = t.cx;
		out->per_hop = t.per_hop;
		/* first, last, min, max of an address or a string give one */
		out->text_result = t.ty != TY_NUM && (!fn || fn->any_type) && !out->diff;
		out->hop_slot = (int16_t)t.hop_slot;
		out->hop_slot_valid = t.hop_slot >= 0;
		bool any_type = !fn || fn->any_type;
		if (t.ty != TY_NUM && (!any_type || out->diff)) {
			dsl_error(c->d, &arg->loc, "%s%s needs numbers, not %s",
				  out->diff ? "diff" : e->name, "()", ty_name(t.ty));
			goto bad;
		}
		/* the quantile sketch holds whole numbers: said where the values
		 * may be fractions (attributes, their differences and integer
		 * arithmetic give none) */
		if (out->agg == AGG_PCT && may_be_fraction(t.cx))
			dsl_warning(c->d, &e->loc, "%s() of an expression that may give "
				    "fractions: a fraction counts as the nearest whole number", e->name);
		/* an attribute's numbers are integers (xval_from_value) */
		out->diff_ends = out->diff && t.cx->op == CX_ATTR &&
				 (out->agg == AGG_SUM || out->agg == AGG_AVG ||
				  out->agg == AGG_COUNT || out->agg == AGG_RATE);
	}
	ex_free(e);
	return true;
bad:
	ex_free(e);
	free(out->text);
	out->text = NULL;
	cx_free(out->arg);
	out->arg = NULL;
	return false;
}

/* ---- hints ---- */

const char *closest_word(const char *word, const char *const *known)
{
	const char *best = NULL;
	unsigned bd = 4;

	for (; *known; known++) {
		unsigned d = isp_edit_distance(word, *known);
		if (d < bd) {
			bd = d;
			best = *known;
		}
	}
	return best;
}
