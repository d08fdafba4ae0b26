/*
 * dta.c - the dta-store NAME { ... } and dta { ... } sections (dsl/README.md,
 * "DTA stores"), compiled to struct dta_def and struct dta_settings that
 * src/filters/dta.c runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"

static const char *const store_keys[] = {
	"enable", "type", "file", "persist", "seed", "slots", "redundancy", "value-bytes",
	"answer", "lists", "entries", "rows", "columns", "sketch", "sketch-id", "reporters",
	"epochs", "dta-reports", "key", "value", "list", "increment", "where", NULL
};

static const char *const kind_names[] = {
	[ISP_DTA_KEY_WRITE] = "key-write", [ISP_DTA_APPEND] = "append",
	[ISP_DTA_KEY_INCREMENT] = "key-increment", [ISP_DTA_SKETCH_MERGE] = "sketch-merge",
};

void free_dta_def(struct dta_def *d)
{
	free(d->name);
	free(d->text);
	free(d->path);
	free(d->key_slots);
	free(d->value_slots);
	cx_free(d->where);
}

/* A word from a set: its index in names (NULL entries skipped), or -1
 * with an error listing them. */
static int word_of(struct compiler *c, const struct cfg_kv *kv, const char *const *names,
		   unsigned n)
{
	const char *w;
	char list[160] = "";

	if (!get_string(c, kv, &w))
		return -1;
	for (unsigned i = 0; i < n; i++)
		if (names[i] && strcmp(w, names[i]) == 0)
			return (int)i;
	for (unsigned i = 0; i < n; i++)
		if (names[i])
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 list[0] ? ", " : "", names[i]);
	dsl_error(c->d, &kv->value->loc, "'%s' is one of %s, not '%s'", kv->key, list, w);
	return -1;
}

/* A power of two in [min, max]: another number is an error that names
 * the nearest ones (a size the user should choose, not one made up). */
static bool get_pow2(struct compiler *c, const struct cfg_section *s, const char *key,
		     uint64_t min, uint64_t max, uint64_t *out)
{
	const struct cfg_kv *kv = find_kv(s, key);
	double d;

	if (!kv)
		return true;
	if (!get_number(c, kv, (double)min, (double)max, &d))
		return false;
	uint64_t v = (uint64_t)d, p = 1;
	while (p < v)
		p <<= 1;
	if (p != v || d != (double)v) {
		dsl_error(c->d, &kv->value->loc, "'%s' must be a power of 2 (%llu or %llu)", key,
			  (unsigned long long)(p >> 1), (unsigned long long)p);
		return false;
	}
	*out = v;
	return true;
}

static bool get_u(struct compiler *c, const struct cfg_section *s, const char *key, double min,
		  double max, uint32_t *out)
{
	const struct cfg_kv *kv = find_kv(s, key);
	double d;

	if (!kv)
		return true;
	if (!get_number(c, kv, min, max, &d))
		return false;
	if (d != (double)(uint32_t)d) {
		dsl_error(c->d, &kv->value->loc, "'%s' must be a whole number", key);
		return false;
	}
	*out = (uint32_t)d;
	return true;
}

/* Keys that only one kind takes. */
static bool only_for(struct compiler *c, const struct cfg_section *s, enum isp_dta_kind kind)
{
	static const struct { const char *key; uint8_t kinds; } own[] = {
		{ "slots", 1 << 1 }, { "redundancy", 1 << 1 }, { "answer", 1 << 1 },
		{ "value-bytes", 1 << 1 | 1 << 2 }, { "lists", 1 << 2 }, { "entries", 1 << 2 },
		{ "list", 1 << 2 }, { "rows", 1 << 3 | 1 << 5 }, { "columns", 1 << 3 | 1 << 5 },
		{ "increment", 1 << 3 }, { "sketch", 1 << 5 }, { "sketch-id", 1 << 5 },
		{ "reporters", 1 << 5 }, { "epochs", 1 << 5 }, { "value", 1 << 1 | 1 << 2 },
		{ "key", 1 << 1 | 1 << 3 },
	};
	bool ok = true;

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
		const struct cfg_kv *kv = find_kv(s, own[i].key);
		if (kv && !(own[i].kinds >> kind & 1)) {
			dsl_error(c->d, &kv->loc, "'%s' does not apply to a %s store", own[i].key,
				  kind_names[kind]);
			ok = false;
		}
	}
	return ok;
}

/* A value attribute becomes 32-bit words: it must be a number or an address. */
static bool value_types(struct compiler *c, const struct cfg_kv *kv, unsigned n)
{
	const struct cfg_value *const *items;
	size_t count = list_items(kv->value, &items);

	for (unsigned i = 0; i < n && i < count; i++) {
		enum ty ty;
		compile_slot(c, items[i]->text, &items[i]->loc, NULL, &ty);
		if (ty == TY_STR) {
			dsl_error(c->d, &items[i]->loc, "%s is a string: a store value holds "
				  "numbers and addresses, as 32-bit words", items[i]->text);
			return false;
		}
	}
	return true;
}

static bool compile_feed(struct compiler *c, const struct cfg_section *s, struct dta_def *r)
{
	const struct cfg_kv *kv;
	bool ok = true;

	if ((kv = find_kv(s, "key")))
		ok &= attr_list(c, kv, &r->key_slots, NULL, &r->nkey, false);
	if ((kv = find_kv(s, "value")) && (ok &= attr_list(c, kv, &r->value_slots, NULL,
							     &r->nvalue, false)))
		ok &= value_types(c, kv, r->nvalue);
	r->inc_slot = -1;
	if ((kv = find_kv(s, "increment"))) {
		const char *a;
		enum ty ty;
		if ((ok &= get_string(c, kv, &a)) &&
		    (r->inc_slot = compile_slot(c, a, &kv->value->loc, NULL, &ty)) >= 0 &&
		    ty != TY_NUM) {
			dsl_error(c->d, &kv->value->loc, "increment: %s is not a number", a);
			ok = false;
		}
		ok &= r->inc_slot >= 0;
	}
	if ((kv = find_kv(s, "where")))
		ok &= compile_where(c, kv->value, &r->where);
	bool fed = r->nkey || r->nvalue || find_kv(s, "increment") || find_kv(s, "list") ||
		   r->where;
	enum isp_dta_kind k = r->cfg.kind;
	if (fed && k == ISP_DTA_SKETCH_MERGE) {
		dsl_error(c->d, &s->loc, "a sketch-merge store takes DTA reports only");
		return false;
	}
	if (fed && ((k != ISP_DTA_APPEND && !r->nkey) || (k != ISP_DTA_KEY_INCREMENT && !r->nvalue))) {
		dsl_error(c->d, &s->loc, "a %s store fed by rules needs %s", kind_names[k],
			  k == ISP_DTA_APPEND ? "value = {...}" : k == ISP_DTA_KEY_INCREMENT ?
			  "key = {...}" : "key = {...} and value = {...}");
		return false;
	}
	r->reports = !fed;
	if ((kv = find_kv(s, "dta-reports")))
		ok &= get_bool(c, kv, &r->reports);
	return ok;
}

/* One store of each kind takes the DTA reports (a sketch: one per id),
 * and a file holds one store. */
static bool unique_store(struct compiler *c, const struct cfg_section *s, const struct dta_def *r)
{
	const struct isp_program *p = c->prog;

	for (unsigned i = 0; i < p->ndta; i++) {
		const struct dta_def *o = &p->dta_stores[i];
		if (strcmp(o->name, r->name) == 0) {
			dsl_error(c->d, &s->loc, "a dta-store named '%s' is already defined", r->name);
			return false;
		}
		if (strcmp(o->path, r->path) == 0) {
			dsl_error(c->d, &s->loc, "dta-store %s: its file %s is dta-store %s's",
				  r->name, r->path, o->name);
			return false;
		}
		if (!o->reports || !r->reports || o->cfg.kind != r->cfg.kind)
			continue;
		if (r->cfg.kind == ISP_DTA_SKETCH_MERGE && o->cfg.sketch_id != r->cfg.sketch_id)
			continue;
		dsl_error(c->d, &s->loc, "dta-store %s: dta-store %s already takes the DTA "
			  "%s reports%s (set dta-reports = false on one)", r->name, o->name,
			  kind_names[r->cfg.kind],
			  r->cfg.kind == ISP_DTA_SKETCH_MERGE ? " of this sketch-id" : "");
		return false;
	}
	return true;
}

bool compile_dta_store(struct compiler *c, const struct cfg_section *s)
{
	static const char *const sketches[] = {
		[ISP_DTA_COUNT_MIN] = "count-min", [ISP_DTA_COUNT_SKETCH] = "count-sketch",
		[ISP_DTA_HLL] = "hll",
	};
	static const char *const answers[] = { "majority", "any" };
	struct isp_program *p = c->prog;
	const struct cfg_kv *kv;
	bool enabled, ok;
	int k;

	if (!s->name) {
		dsl_error(c->d, &s->loc, "a dta-store needs a name: dta-store NAME { type = ... }");
		return false;
	}
	ok = check_keys(c, s, store_keys, "a dta-store");
	if (!section_enabled(c, s, &enabled))
		return false;
	if (!(kv = find_kv(s, "type"))) {
		dsl_error(c->d, &s->loc, "a dta-store needs type = key-write, append, key-increment "
			  "or sketch-merge");
		return false;
	}
	if ((k = word_of(c, kv, kind_names, 6)) < 0)
		return false;
	struct dta_def r = {
		.cfg = { .kind = (enum isp_dta_kind)k, .value_bytes = 4, .redundancy = 2, .answer_any = true,
			 .slots = 1u << 20, .lists = 1, .entries = 4096, .rows = 4, .columns = 65536,
			 .sketch_kind = ISP_DTA_COUNT_MIN, .reporters = 64, .epochs = 2 },
		.inc_slot = -1,
	};
	if (r.cfg.kind == ISP_DTA_SKETCH_MERGE)
		r.cfg.columns = 1024;
	ok &= only_for(c, s, r.cfg.kind);
	const char *path = NULL;
	char def[320];
	if ((kv = find_kv(s, "file")))
		ok &= get_string(c, kv, &path);
	if (!path) {
		snprintf(def, sizeof(def), "/dev/shm/intspect.%s.dta", s->name);
		path = def;
	}
	if ((kv = find_kv(s, "persist")))
		ok &= get_bool(c, kv, &r.cfg.persist);
	if ((kv = find_kv(s, "seed")))
		ok &= get_whole(c, kv, 0, UINT64_MAX, &r.cfg.seed);
	ok &= get_pow2(c, s, "slots", 2, UINT64_C(1) << 34, &r.cfg.slots);
	ok &= get_u(c, s, "redundancy", 1, ISP_DTA_MAX_N, &r.cfg.redundancy);
	if ((kv = find_kv(s, "value-bytes")) &&
	    (ok &= get_u(c, s, "value-bytes", 4, 4 * ISP_DTA_MAX_WORDS, &r.cfg.value_bytes)) &&
	    r.cfg.value_bytes % 4) {
		dsl_error(c->d, &kv->value->loc, "value-bytes must be a multiple of 4 (32-bit words)");
		ok = false;
	}
	if ((kv = find_kv(s, "answer")) && (k = word_of(c, kv, answers, 2)) >= 0)
		r.cfg.answer_any = k == 1;
	ok &= !kv || k >= 0;
	ok &= get_u(c, s, "lists", 1, 1 << 20, &r.cfg.lists);
	uint64_t v = r.cfg.entries;
	ok &= get_pow2(c, s, "entries", 2, 1u << 24, &v);
	r.cfg.entries = (uint32_t)v;
	ok &= get_u(c, s, "rows", 1, r.cfg.kind == ISP_DTA_SKETCH_MERGE ? 64 : ISP_DTA_MAX_N,
		    &r.cfg.rows);
	v = r.cfg.columns;
	ok &= get_pow2(c, s, "columns", 2, r.cfg.kind == ISP_DTA_SKETCH_MERGE ? 32768 : 1u << 30,
		       &v);
	r.cfg.columns = (uint32_t)v;
	if ((kv = find_kv(s, "sketch")) && (k = word_of(c, kv, sketches, 4)) >= 0)
		r.cfg.sketch_kind = (enum isp_dta_sketch)k;
	ok &= !kv || k >= 0;
	ok &= get_u(c, s, "reporters", 1, 4096, &r.cfg.reporters);
	ok &= get_u(c, s, "epochs", 1, 64, &r.cfg.epochs);
	if (r.cfg.kind == ISP_DTA_SKETCH_MERGE) {
		if (!(kv = find_kv(s, "sketch-id"))) {
			dsl_error(c->d, &s->loc, "a sketch-merge store needs sketch-id = N: the "
				  "sketch field of the reports it takes");
			ok = false;
		} else {
			ok &= get_u(c, s, "sketch-id", 0, 65535, &r.cfg.sketch_id);
		}
		if (r.cfg.sketch_kind == ISP_DTA_HLL && find_kv(s, "rows") && r.cfg.rows != 1) {
			dsl_error(c->d, &find_kv(s, "rows")->value->loc,
				  "an hll sketch has one row of registers (rows = 1)");
			ok = false;
		}
		if (r.cfg.sketch_kind == ISP_DTA_HLL)
			r.cfg.rows = 1;
	}
	uint64_t list;
	if ((kv = find_kv(s, "list")) && (ok &= get_whole(c, kv, 0, UINT32_MAX, &list)))
		r.list = (uint32_t)list;
	ok &= compile_feed(c, s, &r);
	if (ok && r.cfg.kind == ISP_DTA_APPEND && !r.reports && r.list >= r.cfg.lists) {
		dsl_error(c->d, &find_kv(s, "list")->value->loc, "list %u is not one of the "
			  "store's %u lists (0 to %u)", r.list, r.cfg.lists, r.cfg.lists - 1);
		ok = false;
	}
	r.name = strdup(s->name);
	r.path = strdup(path);
	r.text = section_text(s, NULL);
	if (!r.name || !r.path || !r.text)
		ok = false;
	ok = ok && unique_store(c, s, &r);
	if (!ok || !enabled) {
		free_dta_def(&r);
		return ok;
	}
	struct dta_def *m = realloc(p->dta_stores, (p->ndta + 1) * sizeof(*m));
	if (!m) {
		free_dta_def(&r);
		return false;
	}
	p->dta_stores = m;
	p->dta_stores[p->ndta++] = r;
	return true;
}

bool compile_dta_settings(struct compiler *c, const struct cfg_section *s)
{
	static const char *const keys[] = { "nack", "nack-port", "shed", "max-reporters", NULL };
	static const char *const nacks[] = { "off", "auto", "on" };
	struct dta_settings *t = &c->prog->dta;
	const struct cfg_kv *kv;
	bool ok = check_keys(c, s, keys, "the dta section");
	double d;
	int k;

	if ((kv = find_kv(s, "nack")) && (ok &= (k = word_of(c, kv, nacks, 3)) >= 0))
		t->nack = k - 1;
	if ((kv = find_kv(s, "nack-port")) && (ok &= get_number(c, kv, 1, 65535, &d)))
		t->nack_port = (uint16_t)d;
	if ((kv = find_kv(s, "shed")))
		ok &= get_bool(c, kv, &t->shed);
	if ((kv = find_kv(s, "max-reporters")) && (ok &= get_number(c, kv, 1, 1 << 20, &d)))
		t->max_reporters = (unsigned)d;
	return ok;
}
