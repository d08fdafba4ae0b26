/*
 * compile.c - sections of a config file to a program: event reports,
 * query reports, and the order in which sections are read (input and
 * globals: settings.c and input.c; output sections: channels.c; metrics:
 * metrics.c). Keys are
 * checked against a table per section, so a misspelt key is an error with
 * a hint, never silently ignored.
 */
#include "compile_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "parse.h"

bool attr_list(struct compiler *c, const struct cfg_kv *kv, int **slots, char ***names,
	       unsigned *n, bool allow_index)
{
	const struct cfg_value *const *items;
	size_t count = list_items(kv->value, &items);

	*slots = calloc(count ? count : 1, sizeof(**slots));
	if (names)
		*names = calloc(count ? count : 1, sizeof(**names));
	if (!*slots || (names && !*names))
		return false;
	*n = 0;
	for (size_t i = 0; i < count; i++) {
		const struct cfg_value *it = items[i];
		if (it->kind == CV_LIST || !it->text) {
			dsl_error(c->d, &it->loc, "'%s' expects attribute names", kv->key);
			return false;
		}
		if (!allow_index && strchr(it->text, '[')) {
			dsl_error(c->d, &it->loc, "'%s' takes whole attributes, without [i]", kv->key);
			return false;
		}
		int slot = compile_slot(c, it->text, &it->loc, NULL, NULL);
		if (slot < 0)
			return false;
		(*slots)[*n] = slot;
		if (names && !((*names)[*n] = strdup(it->text)))
			return false;
		(*n)++;
	}
	return true;
}

bool format_of(struct compiler *c, const struct cfg_kv *kv, enum rec_format *out,
		      unsigned allow)
{
	const char *f;

	if (!kv)
		return true;
	if (!get_string(c, kv, &f))
		return false;
	if (strcasecmp(f, "json") == 0) {
		*out = FMT_JSON;
	} else if (strcasecmp(f, "csv") == 0) {
		*out = FMT_CSV;
	} else if (strcasecmp(f, "intspect-csv") == 0) {
		*out = FMT_CSV_CELLS;
	} else if ((allow & FMT_ALLOW_PARTIAL) && strcasecmp(f, "partial") == 0) {
		*out = FMT_PARTIAL;
	} else if ((allow & FMT_ALLOW_TEMPLATE) && strchr(f, '"')) {
		*out = FMT_TEMPLATE;
	} else {
		dsl_error(c->d, &kv->value->loc, "'%s' expects json, csv%s or intspect-csv%s", kv->key,
			  (allow & FMT_ALLOW_PARTIAL) ? ", partial" : "",
			  (allow & FMT_ALLOW_TEMPLATE) ?
			  " (or a template such as '{\"src\": \"ip.src\"}')" : "");
		return false;
	}
	return true;
}

/* MMT's output-format template: every quoted attribute name is replaced
 * by the attribute's value (JSON-encoded). */
static bool compile_template(struct compiler *c, const struct cfg_kv *kv, struct erule *r)
{
	const char *t = kv->value->text;
	size_t cap = 8;
	const char *lit = t;

	r->tmpl = calloc(cap, sizeof(*r->tmpl));
	if (!r->tmpl)
		return false;
	for (const char *q = strchr(t, '"'); q; q = strchr(q + 1, '"')) {
		const char *end = strchr(q + 1, '"');
		if (!end)
			break;
		char name[128];
		size_t n = (size_t)(end - q - 1);
		struct isp_attr_ref ref;
		char err[200];
		if (n < sizeof(name)) {
			memcpy(name, q + 1, n);
			name[n] = 0;
			if (strchr(name, '.') && isp_attr_lookup(c->reg, name, &ref, err, sizeof(err)) == 0) {
				if (r->ntmpl + 2 > cap) {
					cap *= 2;
					struct tmpl_part *np = realloc(r->tmpl, cap * sizeof(*np));
					if (!np)
						return false;
					r->tmpl = np;
				}
				int slot = compile_slot(c, name, &kv->value->loc, NULL, NULL);
				if (slot < 0)
					return false;
				r->tmpl[r->ntmpl].text = strndup(lit, (size_t)(q - lit));
				r->tmpl[r->ntmpl].slot = slot;
				r->ntmpl++;
				lit = end + 1;
			}
		}
		q = end;
	}
	if (r->ntmpl + 1 > cap) {
		struct tmpl_part *np = realloc(r->tmpl, (cap + 1) * sizeof(*np));
		if (!np)
			return false;
		r->tmpl = np;
	}
	r->tmpl[r->ntmpl].text = strdup(lit);
	r->tmpl[r->ntmpl].slot = -1;
	r->ntmpl++;
	return true;
}

/* ---- reports ---- */

/* The record key of an event without delta-key (Kafka partitioning): the
 * flow's addresses. */
void event_flow_slots(struct compiler *c, struct erule *r, const struct dsl_loc *loc)
{
	static const char *const flow_attrs[] = { "ip.src", "ip.dst", "ipv6.src", "ipv6.dst" };

	for (unsigned k = 0; k < 4; k++) {
		struct isp_attr_ref ref;
		char err[200];
		if (isp_attr_lookup(c->reg, flow_attrs[k], &ref, err, sizeof(err)) == 0) {
			int slot = compile_slot(c, flow_attrs[k], loc, NULL, NULL);
			if (slot >= 0)
				r->flow_slots[r->nflow++] = slot;
		}
	}
}

/* timestamp = capture | report | ingress | egress: the attribute whose
 * value stamps a rule's records (event.c record_time). */
bool compile_timestamp(struct compiler *c, const struct cfg_kv *kv, struct erule *r)
{
	static const char *const words[] = { "capture", "report", "ingress", "egress", NULL };
	static const char *const attrs[] = { NULL, "int_report.ingress_time",
					     "int.hop_ingress_times", "int.hop_egress_times" };
	const char *w;

	r->time_slot = -1;
	if (!kv)
		return true;
	if (!get_string(c, kv, &w))
		return false;
	for (unsigned i = 0; words[i]; i++) {
		if (strcmp(w, words[i]) != 0)
			continue;
		if (attrs[i])
			r->time_slot = compile_slot(c, attrs[i], &kv->value->loc, NULL, NULL);
		r->time_last = i == 3;
		return !attrs[i] || r->time_slot >= 0;
	}
	const char *hint = closest_word(w, words);
	dsl_error(c->d, &kv->value->loc, "timestamp: unknown '%s'%s%s%s; known: capture, report, "
		  "ingress, egress", w, hint ? " (did you mean '" : "", hint ? hint : "",
		  hint ? "'?)" : "");
	return false;
}

void free_erule(struct erule *r)
{
	free(r->fmts.of);
	free(r->name);
	free(r->text);
	cx_free(r->where);
	free(r->delta_slots);
	free(r->key_slots);
	free(r->attr_slots);
	for (unsigned k = 0; r->attr_names && k < r->nattr; k++)
		free(r->attr_names[k]);
	free(r->attr_names);
	for (unsigned k = 0; k < r->ntmpl; k++)
		free(r->tmpl[k].text);
	free(r->tmpl);
	free(r->channels);
	free(r->reads.slot);
}

/* enable = false (as get_bool reads it), without a diagnostic */
bool section_disabled(const struct cfg_section *s)
{
	const struct cfg_kv *kv = find_kv(s, "enable");
	const char *t = kv && kv->value->kind != CV_LIST ? kv->value->text : NULL;

	return t && (!strcasecmp(t, "false") || !strcasecmp(t, "no") || !strcasecmp(t, "off") ||
		     !strcmp(t, "0"));
}

bool section_enabled(struct compiler *c, const struct cfg_section *s, bool *enabled)
{
	const struct cfg_kv *kv = find_kv(s, "enable");

	*enabled = true;        /* unlike MMT (false), a rule written is a rule wanted */
	return !kv || get_bool(c, kv, enabled);
}

bool report_tail(struct compiler *c, const struct cfg_section *s, unsigned allow,
		 enum rec_format *format, bool *format_set, int **channels, unsigned *nchannels,
		 char **name, char **text)
{
	const struct cfg_kv *kv = find_kv(s, "output-format");
	bool ok = true;

	if (kv) {
		ok &= format_of(c, kv, format, allow);
		*format_set = true;
	}
	ok &= channel_list(c, find_kv(s, "output-channel"), channels, nchannels);
	if (!(*name = strdup(s->name)) || !(*text = section_text(s, NULL)))
		ok = false;
	return ok;
}

/* Report names key records and channels (%r): one rule each, whatever
 * section made it (a metrics section makes several). */
bool unique_report_name(struct compiler *c, const char *name, const struct dsl_loc *at)
{
	const struct isp_program *p = c->prog;

	/* a name is a line-protocol measurement too: one that starts with #
	 * is a comment to InfluxDB, and no escape carries a backslash before
	 * the space that ends it (InfluxDB 1.x) */
	if (name[0] == '#' || strchr(name, '\\')) {
		dsl_error(c->d, at, "a report's name may not start with '#' nor hold a "
			  "backslash: '%s'", name);
		return false;
	}

	for (unsigned i = 0; i < p->nevents; i++)
		if (strcmp(p->events[i].name, name) == 0)
			goto dup;
	for (unsigned i = 0; i < p->nqueries; i++)
		if (strcmp(p->queries[i].name, name) == 0)
			goto dup;
	for (unsigned i = 0; i < p->nmonitors; i++)
		if (strcmp(p->monitors[i].name, name) == 0)
			goto dup;
	return true;
dup:
	dsl_error(c->d, at, "a report named '%s' is already defined", name);
	return false;
}

bool unique_report(struct compiler *c, const struct cfg_section *s)
{
	return unique_report_name(c, s->name, &s->loc);
}

static bool compile_event(struct compiler *c, const struct cfg_section *s)
{
	static const char *const keys[] = {
		"enable", "event", "delta-cond", "attributes", "output-channel", "output-format",
		"where", "delta-key", "delta-band", "delta-threshold", "keepalive-ms", "max-keys",
		"per-hop", "idle-timeout-ms", "timestamp", NULL
	};
	struct isp_program *p = c->prog;
	bool ok = check_keys(c, s, keys, "an event-report");
	bool enabled;

	if (!s->name) {
		dsl_error(c->d, &s->loc, "an event-report needs a name: event-report NAME { ... }");
		return false;
	}
	if (!unique_report(c, s))
		return false;
	if (!section_enabled(c, s, &enabled))
		return false;
	struct erule r = { .event_slot = -1, .threshold = -1, .max_keys = 65536,
			   .format = p->default_format };
	const struct cfg_kv *kv;
	reads_begin(c, &r.reads);
	if ((kv = find_kv(s, "event"))) {
		const char *name;
		if (get_string(c, kv, &name))
			r.event_slot = compile_slot(c, name, &kv->value->loc, NULL, NULL);
		ok &= r.event_slot >= 0;
	}
	if ((kv = find_kv(s, "where")))
		ok &= compile_where(c, kv->value, &r.where);
	if ((kv = find_kv(s, "delta-cond")))
		ok &= attr_list(c, kv, &r.delta_slots, NULL, &r.ndelta, false);
	if ((kv = find_kv(s, "delta-key")))
		ok &= attr_list(c, kv, &r.key_slots, NULL, &r.nkey, false);
	if ((kv = find_kv(s, "attributes")))
		ok &= attr_list(c, kv, &r.attr_slots, &r.attr_names, &r.nattr, false);
	double d;
	if ((kv = find_kv(s, "delta-band")) && (ok &= get_number(c, kv, 1e-9, 1e18, &d)))
		r.band = d;
	if ((kv = find_kv(s, "delta-threshold")) && (ok &= get_number(c, kv, 0, 1e18, &d)))
		r.threshold = d;
	if (r.band > 0 && r.threshold >= 0) {
		dsl_error(c->d, &kv->loc, "give a delta-band or a delta-threshold, not both");
		ok = false;
	}
	if ((kv = find_kv(s, "keepalive-ms")) && (ok &= get_number(c, kv, 1, 1e12, &d)))
		r.keepalive_ns = (uint64_t)(d * 1e6);
	if ((kv = find_kv(s, "max-keys")) && (ok &= get_number(c, kv, 1, 1 << 26, &d)))
		r.max_keys = (unsigned)d;
	if ((kv = find_kv(s, "per-hop")))
		ok &= get_bool(c, kv, &r.per_hop);
	if ((kv = find_kv(s, "idle-timeout-ms")) && (ok &= get_number(c, kv, 1, 1e12, &d)))
		r.idle_ns = (uint64_t)(d * 1e6);
	ok &= compile_timestamp(c, find_kv(s, "timestamp"), &r);
	if (r.idle_ns && r.ndelta == 0 && ok) {
		dsl_error(c->d, &find_kv(s, "idle-timeout-ms")->loc,
			  "idle-timeout-ms expires the keys of a delta-cond: give one");
		ok = false;
	}
	if (r.threshold >= 0 && r.ndelta > 8) {
		dsl_error(c->d, &s->loc, "delta-threshold compares at most 8 delta-cond attributes");
		ok = false;
	}
	event_flow_slots(c, &r, &s->loc);
	if ((r.band > 0 || r.threshold >= 0) && r.ndelta == 0) {
		const struct cfg_kv *at = find_kv(s, r.band > 0 ? "delta-band" : "delta-threshold");
		dsl_error(c->d, at ? &at->loc : &s->loc, "delta-band and delta-threshold need a delta-cond");
		ok = false;
	}
	if (r.event_slot < 0 && !r.where && ok) {
		dsl_error(c->d, &s->loc, "an event-report needs an event or a where condition");
		ok = false;
	}
	ok &= report_tail(c, s, FMT_ALLOW_TEMPLATE, &r.format, &r.format_set, &r.channels, &r.nchannels, &r.name,
			  &r.text);
	if (ok && r.format == FMT_TEMPLATE)
		ok &= compile_template(c, find_kv(s, "output-format"), &r);
	ok = reads_end(c, ok);
	if (!ok || !enabled) {
		free_erule(&r);
		return ok;
	}
	struct erule *ev = realloc(p->events, (p->nevents + 1) * sizeof(*ev));
	if (!ev)
		return false;
	p->events = ev;
	p->events[p->nevents++] = r;
	return true;
}

static void free_qrule(struct qrule *r)
{
	free(r->fmts.of);
	free(r->name);
	free(r->text);
	cx_free(r->where);
	free(r->group_slots);
	for (unsigned i = 0; r->group_names && i < r->ngroup; i++)
		free(r->group_names[i]);
	free(r->group_names);
	for (unsigned i = 0; i < r->nitems; i++) {
		free(r->items[i].text);
		cx_free(r->items[i].arg);
	}
	free(r->items);
	free(r->channels);
	free(r->reads.slot);
}

static bool compile_query(struct compiler *c, const struct cfg_section *s)
{
	static const char *const keys[] = {
		"enable", "ms-period", "select", "where", "group-by", "output-channel",
		"output-format", "max-groups", NULL
	};
	struct isp_program *p = c->prog;
	bool ok = check_keys(c, s, keys, "a query-report");
	bool enabled;

	if (!s->name) {
		dsl_error(c->d, &s->loc, "a query-report needs a name: query-report NAME { ... }");
		return false;
	}
	if (!unique_report(c, s))
		return false;
	if (!section_enabled(c, s, &enabled))
		return false;
	struct qrule r = { .period_ns = 1000000000ull, .max_groups = 65536,
			   .format = p->default_format };
	const struct cfg_kv *kv;
	double d;
	reads_begin(c, &r.reads);
	/* 0: MMT-Probe's "no period", one window to the end of the input */
	if ((kv = find_kv(s, "ms-period")) && (ok &= get_number(c, kv, 0, 1e12, &d))) {
		r.period_ns = d > 0 ? (uint64_t)(d * 1e6) : ISP_PERIOD_WHOLE;
		if (r.period_ns == 0) {         /* windows of 0 ns: none can be cut */
			dsl_error(c->d, &kv->value->loc, "'ms-period' below 1 ns (0.000001): "
				  "write 0 for one window of the whole input");
			ok = false;
		}
	}
	if ((kv = find_kv(s, "max-groups")) && (ok &= get_number(c, kv, 1, 1 << 26, &d)))
		r.max_groups = (unsigned)d;
	if ((kv = find_kv(s, "where")))
		ok &= compile_where(c, kv->value, &r.where);
	if ((kv = find_kv(s, "group-by"))) {
		ok &= attr_list(c, kv, &r.group_slots, &r.group_names, &r.ngroup, false);
		if (ok && r.ngroup > 16) {
			dsl_error(c->d, &kv->value->loc, "group-by takes at most 16 attributes");
			ok = false;
		}
	}
	kv = find_kv(s, "select");
	if (!kv) {
		dsl_error(c->d, &s->loc, "a query-report needs select = {...}");
		ok = false;
	} else {
		const struct cfg_value *const *items;
		size_t n = list_items(kv->value, &items);
		r.items = calloc(n ? n : 1, sizeof(*r.items));
		if (!r.items)
			ok = false;
		for (size_t i = 0; r.items && i < n; i++) {
			if (compile_select_item(c, items[i], &r.items[r.nitems]))
				r.nitems++;
			else
				ok = false;
		}
		if (n == 0) {
			dsl_error(c->d, &kv->value->loc, "select is empty");
			ok = false;
		}
	}
	ok &= report_tail(c, s, FMT_ALLOW_PARTIAL, &r.format, &r.format_set, &r.channels,
			  &r.nchannels, &r.name, &r.text);
	for (unsigned k = 0; ok && r.format == FMT_PARTIAL && k < r.nitems; k++) {
		/* a difference needs the group's packets in order, on one
		 * instance; but for the functions that keep the window's ends */
		if ((r.items[k].diff || r.items[k].agg == AGG_DIFF) && !r.items[k].diff_ends) {
			dsl_error(c->d, &find_kv(s, "output-format")->value->loc,
				  "output-format = partial cannot carry '%s': diff() needs every "
				  "packet of its group in order, which instances split by flow do "
				  "not see (sum, avg, count and rate of diff() of an attribute "
				  "can be carried)", r.items[k].text);
			ok = false;
		}
	}
	ok = reads_end(c, ok);
	if (!ok || !enabled) {
		free_qrule(&r);
		return ok;
	}
	struct qrule *q = realloc(p->queries, (p->nqueries + 1) * sizeof(*q));
	if (!q) {
		free_qrule(&r);
		return false;
	}
	p->queries = q;
	p->queries[p->nqueries++] = r;
	return true;
}

/* The attribute slots of base, first and in the same order. */
static bool copy_slots(struct isp_program *p, const struct isp_program *base)
{
	if (!base || !base->nslots)
		return true;
	p->slots = malloc(base->nslots * sizeof(*p->slots));
	p->slot_names = calloc(base->nslots, sizeof(*p->slot_names));
	if (!p->slots || !p->slot_names)
		return false;
	memcpy(p->slots, base->slots, base->nslots * sizeof(*p->slots));
	for (unsigned i = 0; i < base->nslots; i++) {
		if (!(p->slot_names[i] = strdup(base->slot_names[i])))
			return false;
		p->nslots = i + 1;
	}
	return true;
}

static bool skipped(const struct cfg_section *s, const char *const *skip)
{
	for (; skip && *skip; skip++)
		if (s->name && strcmp(s->name, *skip) == 0)
			return true;
	return false;
}

static struct isp_program *compile_tree(struct dsl_diags *d, const struct isp_registry *reg,
					struct cfg_file *f, const struct isp_program *base)
{
	struct isp_program *p = calloc(1, sizeof(*p));
	struct compiler c = { .d = d, .reg = reg, .prog = p };
	bool ok = true;

	if (!p) {
		cfg_file_free(f);
		return NULL;
	}
	if (!copy_slots(p, base)) {
		p->cfg_tree = f;
		isp_program_free(p);
		return NULL;
	}
	p->cfg_tree = f;
	p->default_format = FMT_JSON;
	p->merge_lateness_ms = 5000;
	p->dta = (struct dta_settings){ .nack = 0, .nack_port = 40044, .shed = true,
					.max_reporters = 4096 };
	/* the output section first (file channels take its cache-period),
	 * then globals, input and channels: reports refer to them */
	for (size_t i = 0; i < f->nsections; i++)
		if (strcmp(f->sections[i]->type, "output") == 0)
			ok &= compile_output(&c, f->sections[i]);
	for (size_t i = 0; i < f->nsections; i++) {
		const struct cfg_section *s = f->sections[i];
		char type[64];
		if (strcmp(s->type, "global") == 0)
			ok &= compile_global(&c, s);
		else if (strcmp(s->type, "input") == 0)
			ok &= compile_input(&c, s);
		else if (strcmp(s->type, "control") == 0)
			ok &= compile_control(&c, s);
		else if (strcmp(s->type, "merge") == 0)
			ok &= compile_merge(&c, s);
		else if (strcmp(s->type, "dta") == 0)
			ok &= compile_dta_settings(&c, s);
		else if (ignored_section(&c, s))
			continue;
		else if (strcmp(s->type, "output") && is_output_section(s, type, sizeof(type)))
			ok &= add_channel(&c, s, type, s->loc.file);
	}
	for (size_t i = 0; i < f->nsections; i++) {
		const struct cfg_section *s = f->sections[i];
		char type[64];
		bool (*rule)(struct compiler *, const struct cfg_section *) =
			!strcmp(s->type, "event-report") ? compile_event :
			!strcmp(s->type, "metrics") ? compile_metrics :
			!strcmp(s->type, "query-report") ? compile_query :
			!strcmp(s->type, "flow-monitor") ? compile_monitor : NULL;
		if (rule) {
			/* a rule with enable = false is checked, and what is wrong
			 * in it said as warnings: it never runs */
			bool off = section_disabled(s);
			d->demote += off;
			bool rok = rule(&c, s);
			d->demote -= off;
			ok &= rok || off;
		} else if (strcmp(s->type, "dta-store") == 0) {
			ok &= compile_dta_store(&c, s);
		} else if (strcmp(s->type, "global") && strcmp(s->type, "input") &&
			   strcmp(s->type, "control") && strcmp(s->type, "dta") &&
			   strcmp(s->type, "merge") &&
			   strcmp(s->type, "output") && !is_output_section(s, type, sizeof(type)) &&
			   !is_ignored_type(s->type)) {
			static const char *const known[] = {
				"event-report", "query-report", "metrics", "flow-monitor", "dta-store", "dta",
				"control", "input", "merge",
				"output", "file-output", "redis-output", "kafka-output",
				"socket-output", "stdout-output", "influxdb-output", NULL
			};
			const char *hint = closest_word(s->type, known);
			dsl_error(d, &s->loc, "unknown section '%s'%s%s%s", s->type,
				  hint ? "; did you mean '" : "", hint ? hint : "", hint ? "'?" : "");
			ok = false;
		}
	}
	if (!ok || d->errors) {
		isp_program_free(p);
		return NULL;
	}
	return p;
}

struct isp_program *isp_compile_file(struct dsl_diags *d, const struct isp_registry *reg,
				     const char *path)
{
	struct cfg_file *f = dsl_parse_config(d, path);

	return f ? compile_tree(d, reg, f, NULL) : NULL;
}

struct isp_program *isp_compile_file_on(struct dsl_diags *d, const struct isp_registry *reg,
					const char *path, const struct isp_compile_more *more)
{
	struct cfg_file *f = dsl_parse_config(d, path);

	/* the file's flow monitors removed through the control socket */
	for (size_t i = 0; f && i < f->nsections;) {
		struct cfg_section *s = f->sections[i];
		if (strcmp(s->type, "flow-monitor") == 0 && skipped(s, more->skip)) {
			cfg_section_free(s);
			memmove(f->sections + i, f->sections + i + 1,
				(f->nsections - i - 1) * sizeof(*f->sections));
			f->nsections--;
		} else {
			i++;
		}
	}
	for (const char *const *e = more->extra; f && e && e[0] && e[1]; e += 2) {
		struct cfg_file *x = dsl_parse_config_mem(d, e[0], e[1], strlen(e[1]));
		struct cfg_section **all = x ? realloc(f->sections, (f->nsections + x->nsections) *
						       sizeof(*all) + 1) : NULL;
		if (!all) {
			cfg_file_free(f);
			cfg_file_free(x);
			return NULL;
		}
		memcpy(all + f->nsections, x->sections, x->nsections * sizeof(*all));
		f->sections = all;
		f->nsections += x->nsections;
		x->nsections = 0;       /* they belong to f now */
		cfg_file_free(x);
	}
	return f ? compile_tree(d, reg, f, more->base) : NULL;
}

struct isp_program *isp_compile_mem(struct dsl_diags *d, const struct isp_registry *reg,
				    const char *name, const char *text, size_t len)
{
	struct cfg_file *f = dsl_parse_config_mem(d, name, text, len);

	return f ? compile_tree(d, reg, f, NULL) : NULL;
}

void isp_program_free(struct isp_program *p)
{
	if (!p)
		return;
	for (unsigned i = 0; i < p->nevents; i++)
		free_erule(&p->events[i]);
	free(p->events);
	for (unsigned i = 0; i < p->nqueries; i++)
		free_qrule(&p->queries[i]);
	free(p->queries);
	for (unsigned i = 0; i < p->nmonitors; i++)
		free_mrule(&p->monitors[i]);
	free(p->monitors);
	for (unsigned i = 0; i < p->ndta; i++)
		free_dta_def(&p->dta_stores[i]);
	free(p->dta_stores);
	for (unsigned i = 0; i < p->nchannels; i++) {
		free((void *)p->channels[i].cfg.kv);
		free(p->channels[i].name);
		free(p->channels[i].type);
		free(p->channels[i].text);
	}
	free(p->channels);
	for (unsigned i = 0; i < p->nslots; i++)
		free(p->slot_names[i]);
	free(p->slot_names);
	free(p->slots);
	free(p->source_name);
	free(p->input_mode);
	free(p->input_source);
	free(p->input_filter);
	free(p->input_dpdk);
	free(p->control_path);
	free(p->input_topic);
	free(p->input_group);
	free(p->input_kafka);
	free(p->control_tcp);
	free(p->control_token);
	cfg_file_free(p->cfg_tree);
	free(p);
}
