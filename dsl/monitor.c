/*
 * monitor.c - the flow-monitor NAME { ... } section: SDN-Mon's monitoring
 * table on match fields the operator chooses (dsl/README.md, "Flow
 * monitors"), compiled to a struct mrule that src/filters/monitor.c runs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"

static const char *const monitor_keys[] = {
	"enable", "match", "where", "sampling", "bloom-bits", "bloom-hashes", "buffer",
	"query-interval", "counters", "overflow-threshold", "max-entries", "report-unchanged",
	"output-channel", "output-format", NULL
};

void free_mrule(struct mrule *r)
{
	free(r->fmts.of);
	free(r->name);
	free(r->text);
	cx_free(r->where);
	free(r->match_slots);
	for (unsigned k = 0; r->match_names && k < r->nmatch; k++)
		free(r->match_names[k]);
	free(r->match_names);
	for (unsigned k = 0; k < r->ncounters; k++)
		free(r->counters[k].text);
	free(r->counters);
	free(r->channels);
}

/* "sum(attr)" or "max(attr)" of a numeric attribute. */
static bool compile_counter(struct compiler *c, const struct cfg_value *v, struct mcounter *out)
{
	char fn[8], attr[128];
	int used = 0;

	if (v->kind == CV_LIST || !v->text) {
		dsl_error(c->d, &v->loc, "'counters' expects strings such as \"sum(int.latency)\"");
		return false;
	}
	if (sscanf(v->text, " %7[a-z] ( %127[A-Za-z0-9_.] ) %n", fn, attr, &used) != 2 ||
	    v->text[used] != '\0' || (strcmp(fn, "sum") && strcmp(fn, "max"))) {
		dsl_error(c->d, &v->loc, "counter '%s': write sum(ATTRIBUTE) or max(ATTRIBUTE)",
			  v->text);
		return false;
	}
	enum ty ty;
	out->slot = compile_slot(c, attr, &v->loc, NULL, &ty);
	if (out->slot < 0)
		return false;
	if (ty != TY_NUM) {
		dsl_error(c->d, &v->loc, "counter '%s': %s is not a number", v->text, attr);
		return false;
	}
	out->is_max = fn[0] == 'm';
	return (out->text = strdup(v->text)) != NULL;
}

static bool compile_counters(struct compiler *c, const struct cfg_kv *kv, struct mrule *r)
{
	const struct cfg_value *const *items;
	size_t n = list_items(kv->value, &items);

	if (n > 16) {
		dsl_error(c->d, &kv->value->loc, "a flow monitor keeps at most 16 counters");
		return false;
	}
	r->counters = calloc(n ? n : 1, sizeof(*r->counters));
	if (!r->counters)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!compile_counter(c, items[i], &r->counters[r->ncounters]))
			return false;
		r->ncounters++;
	}
	return true;
}

bool compile_monitor(struct compiler *c, const struct cfg_section *s)
{
	struct isp_program *p = c->prog;
	bool ok = check_keys(c, s, monitor_keys, "a flow-monitor");
	bool enabled;

	if (!s->name) {
		dsl_error(c->d, &s->loc, "a flow-monitor needs a name: flow-monitor NAME { ... }");
		return false;
	}
	if (!unique_report(c, s) || !section_enabled(c, s, &enabled))
		return false;
	struct mrule r = { .sampling = 1, .bloom_cells = 1u << 20, .bloom_hashes = 4, .nbuf = 4,
			   .interval_ns = 1000000000ull, .max_entries = 262144,
			   .format = p->default_format };
	const struct cfg_kv *kv;
	double d;

	if (!(kv = find_kv(s, "match"))) {
		dsl_error(c->d, &s->loc, "a flow-monitor needs match = {\"ATTRIBUTE\", ...}: "
			  "the fields that make its flows");
		ok = false;
	} else if ((ok &= attr_list(c, kv, &r.match_slots, &r.match_names, &r.nmatch, false)) &&
		   (r.nmatch == 0 || r.nmatch > 16)) {
		dsl_error(c->d, &kv->value->loc, "match takes 1 to 16 attributes");
		ok = false;
	}
	if ((kv = find_kv(s, "where")))
		ok &= compile_where(c, kv->value, &r.where);
	if ((kv = find_kv(s, "sampling")) && (ok &= get_number(c, kv, 0, 1, &d))) {
		if (d <= 0) {
			dsl_error(c->d, &kv->value->loc, "sampling must be above 0 (1: every flow)");
			ok = false;
		}
		r.sampling = d;
	}
	if ((kv = find_kv(s, "bloom-bits")) && (ok &= get_number(c, kv, 64, 1u << 31, &d))) {
		/* a power of two: an index is a mask of the hash */
		uint64_t cells = 64;
		while (cells < (uint64_t)d)
			cells <<= 1;
		r.bloom_cells = cells;
	}
	if ((kv = find_kv(s, "bloom-hashes")) && (ok &= get_number(c, kv, 1, 16, &d)))
		r.bloom_hashes = (unsigned)d;
	if ((kv = find_kv(s, "buffer")) && (ok &= get_number(c, kv, 1, ISP_MAX_HOPS, &d)))
		r.nbuf = (unsigned)d;
	if ((kv = find_kv(s, "query-interval")) && (ok &= get_number(c, kv, 1, 1e9, &d)))
		r.interval_ns = (uint64_t)(d * 1e6);
	if ((kv = find_kv(s, "counters")))
		ok &= compile_counters(c, kv, &r);
	if ((kv = find_kv(s, "overflow-threshold")) && (ok &= get_number(c, kv, 1, 1 << 30, &d)))
		r.overflow = (uint64_t)d;
	if ((kv = find_kv(s, "max-entries")) && (ok &= get_number(c, kv, 1, 1 << 26, &d)))
		r.max_entries = (unsigned)d;
	if ((kv = find_kv(s, "report-unchanged")))
		ok &= get_bool(c, kv, &r.report_unchanged);
	if (ok && r.interval_ns % r.nbuf) {
		kv = find_kv(s, "buffer");
		dsl_error(c->d, kv ? &kv->value->loc : &s->loc, "query-interval (%llu ms) is not a "
			  "whole number of buffer sub-intervals (buffer = %u): each is "
			  "query-interval / buffer", (unsigned long long)(r.interval_ns / 1000000),
			  r.nbuf);
		ok = false;
	}
	ok &= report_tail(c, s, 0, &r.format, &r.format_set, &r.channels, &r.nchannels, &r.name,
			  &r.text);
	if (!ok || !enabled) {
		free_mrule(&r);
		return ok;
	}
	struct mrule *m = realloc(p->monitors, (p->nmonitors + 1) * sizeof(*m));
	if (!m) {
		free_mrule(&r);
		return false;
	}
	p->monitors = m;
	p->monitors[p->nmonitors++] = r;
	return true;
}
