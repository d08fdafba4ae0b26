/*
 * metrics.c - the metrics { ... } section: INTCollector's network metric
 * tables, as the event reports they stand for (dsl/README.md, "Metric
 * tables"). Each table is one event report keyed by what does not change
 * (the flow, a switch's port or queue) with a delta-cond on the metric:
 * a new key reports, a significant change reports (the metric's band or
 * threshold, else any change), push-interval-ms re-reports a live key,
 * idle-timeout-ms expires a silent one. Switch tables are per hop.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compile_int.h"

#define FLOW "ip.src", "ip.dst", "ipv6.src", "ipv6.dst", "ip.proto", "udp.src_port", \
	"udp.dst_port", "tcp.src_port", "tcp.dst_port"

struct metric_table {
	const char *name;       /* in tables = {...}; the report is NAME_<name> */
	const char *report;
	bool per_hop;
	const char *metric;     /* <metric>-band, <metric>-threshold; NULL: exact */
	const char *keys[12];   /* delta-key */
	const char *cond[3];    /* delta-cond; the first is the event */
	const char *extra[3];   /* written too */
};

static const struct metric_table tables[] = {
	{ "flow-path", "flow_path", false, NULL,
	  { FLOW }, { "int.hop_switch_ids" }, { NULL } },
	{ "flow-latency", "flow_latency", false, "latency",
	  { FLOW }, { "int.latency" }, { NULL } },
	{ "flow-hop-latency", "flow_hop_latency", true, "hop-latency",
	  { FLOW, "int.hop_switch_ids" }, { "int.hop_latencies" }, { NULL } },
	{ "egress", "egress_tx", true, "tx-utilization",
	  { "int.hop_switch_ids", "int.hop_egress_port_ids" }, { "int.hop_tx_utilizes" }, { NULL } },
	{ "queue", "queue_occupancy", true, "queue-occupancy",
	  { "int.hop_switch_ids", "int.hop_queue_ids" }, { "int.hop_queue_occups" }, { NULL } },
	{ "queue-congestion", "queue_congestion", true, "queue-congestion",
	  { "int.hop_switch_ids", "int.hop_congestion_queue_ids" }, { "int.hop_congestions" },
	  { NULL } },
	{ "l4s", "l4s", true, "l4s",
	  { "int.hop_switch_ids", "int.hop_queue_ids" }, { "int.hop_l4s_mark", "int.hop_l4s_drop" },
	  { NULL } },
};
#define NTABLES (sizeof(tables) / sizeof(tables[0]))

static const char *const metric_keys[] = {
	"enable", "tables", "output-channel", "push-interval-ms", "idle-timeout-ms", "max-keys",
	"latency-band", "latency-threshold", "hop-latency-band", "hop-latency-threshold",
	"tx-utilization-band", "tx-utilization-threshold", "queue-occupancy-band",
	"queue-occupancy-threshold", "queue-congestion-band", "queue-congestion-threshold",
	"l4s-band", "l4s-threshold", "timestamp", NULL
};

/* Slots of a NULL-ended list of names, appended to *slots. */
static bool add_slots(struct compiler *c, const char *const *names, const struct dsl_loc *loc,
		      int **slots, char ***out_names, unsigned *n)
{
	for (; *names; names++) {
		int slot = compile_slot(c, *names, loc, NULL, NULL);
		if (slot < 0)
			return false;
		int *ns = realloc(*slots, (*n + 1) * sizeof(*ns));
		if (!ns)
			return false;
		*slots = ns;
		ns[*n] = slot;
		if (out_names) {
			char **nn = realloc(*out_names, (*n + 1) * sizeof(*nn));
			if (!nn)
				return false;
			*out_names = nn;
			if (!(nn[*n] = strdup(*names)))
				return false;
		}
		(*n)++;
	}
	return true;
}

static bool table_wanted(struct compiler *c, const struct cfg_kv *kv, const char *name, bool *ok)
{
	if (!kv)
		return true;
	const struct cfg_value *v = kv->value;
	const struct cfg_value *const *items = v->kind == CV_LIST ?
		(const struct cfg_value *const *)v->items : &v;
	size_t n = v->kind == CV_LIST ? v->nitems : 1;
	bool found = false;

	for (size_t i = 0; i < n; i++) {
		const char *t = items[i]->text;
		size_t k = 0;
		while (k < NTABLES && (!t || strcmp(t, tables[k].name) != 0))
			k++;
		if (k == NTABLES) {
			static const char *names[NTABLES + 1];
			for (size_t j = 0; j < NTABLES; j++)
				names[j] = tables[j].name;
			const char *hint = t ? closest_word(t, names) : NULL;
			dsl_error(c->d, &items[i]->loc, "unknown metric table '%s'%s%s%s; known: flow-path, "
				  "flow-latency, flow-hop-latency, egress, queue, queue-congestion, l4s",
				  t ? t : "?", hint ? " (did you mean '" : "", hint ? hint : "",
				  hint ? "'?)" : "");
			*ok = false;
			return false;
		}
		found |= strcmp(t, name) == 0;
	}
	return found;
}

bool compile_metrics(struct compiler *c, const struct cfg_section *s)
{
	struct isp_program *p = c->prog;
	bool ok = check_keys(c, s, metric_keys, "a metrics section");
	bool enabled;
	double d;
	uint64_t keepalive = 0, idle = 0;
	unsigned max_keys = 65536;
	const struct cfg_kv *kv;

	if (!section_enabled(c, s, &enabled))
		return false;
	if ((kv = find_kv(s, "push-interval-ms")) && (ok &= get_number(c, kv, 1, 1e12, &d)))
		keepalive = (uint64_t)(d * 1e6);
	if ((kv = find_kv(s, "idle-timeout-ms")) && (ok &= get_number(c, kv, 1, 1e12, &d)))
		idle = (uint64_t)(d * 1e6);
	if ((kv = find_kv(s, "max-keys")) && (ok &= get_number(c, kv, 1, 1 << 26, &d)))
		max_keys = (unsigned)d;
	const struct cfg_kv *tables_kv = find_kv(s, "tables");

	/* every table's keys are checked, whether its table is chosen or not:
	 * a mistake in one must not wait until the table is */
	for (size_t t = 0; t < NTABLES; t++) {
		char key[64];
		if (!tables[t].metric)
			continue;
		snprintf(key, sizeof(key), "%s-band", tables[t].metric);
		if ((kv = find_kv(s, key)))
			ok &= get_number(c, kv, 1e-9, 1e18, &d);
		snprintf(key, sizeof(key), "%s-threshold", tables[t].metric);
		if ((kv = find_kv(s, key)))
			ok &= get_number(c, kv, 0, 1e18, &d);
	}
	for (size_t t = 0; t < NTABLES && ok; t++) {
		const struct metric_table *mt = &tables[t];
		if (!table_wanted(c, tables_kv, mt->name, &ok))
			continue;
		struct erule r = { .event_slot = -1, .threshold = -1, .max_keys = max_keys,
				   .format = p->default_format, .per_hop = mt->per_hop,
				   .keepalive_ns = keepalive, .idle_ns = idle };
		char name[128], key[64];
		snprintf(name, sizeof(name), "%s%s%s", s->name ? s->name : "", s->name ? "_" : "",
			 mt->report);
		if (!unique_report_name(c, name, &s->loc))
			return false;
		reads_begin(c, &r.reads);
		ok &= (r.name = strdup(name)) != NULL;
		ok = ok && add_slots(c, mt->keys, &s->loc, &r.key_slots, NULL, &r.nkey);
		ok = ok && add_slots(c, mt->cond, &s->loc, &r.delta_slots, NULL, &r.ndelta);
		/* written: the key, the metric, and the rest */
		ok = ok && add_slots(c, mt->keys, &s->loc, &r.attr_slots, &r.attr_names, &r.nattr);
		ok = ok && add_slots(c, mt->cond, &s->loc, &r.attr_slots, &r.attr_names, &r.nattr);
		ok = ok && add_slots(c, mt->extra, &s->loc, &r.attr_slots, &r.attr_names, &r.nattr);
		if (ok)
			r.event_slot = r.delta_slots[0];
		if (mt->metric) {
			snprintf(key, sizeof(key), "%s-band", mt->metric);
			if ((kv = find_kv(s, key)) && (ok &= get_number(c, kv, 1e-9, 1e18, &d)))
				r.band = d;
			snprintf(key, sizeof(key), "%s-threshold", mt->metric);
			if ((kv = find_kv(s, key)) && (ok &= get_number(c, kv, 0, 1e18, &d)))
				r.threshold = d;
			if (r.band > 0 && r.threshold >= 0) {
				dsl_error(c->d, &kv->loc, "%s: give a band or a threshold, not both",
					  mt->metric);
				ok = false;
			}
		}
		ok &= compile_timestamp(c, find_kv(s, "timestamp"), &r);
		event_flow_slots(c, &r, &s->loc);
		ok &= channel_list(c, find_kv(s, "output-channel"), &r.channels, &r.nchannels);
		ok = ok && (r.text = section_text(s, name)) != NULL;
		ok = reads_end(c, ok);
		if (!ok || !enabled) {
			free_erule(&r);
			continue;
		}
		struct erule *ev = realloc(p->events, (p->nevents + 1) * sizeof(*ev));
		if (!ev) {
			free_erule(&r);
			return false;
		}
		p->events = ev;
		p->events[p->nevents++] = r;
	}
	return ok;
}
