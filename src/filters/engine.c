/*
 * engine.c - per-packet dispatch to the rules, keys, record emission.
 */
#include "engine.h"
#include "engine_int.h"
#include "query_int.h"
#include "dta.h"

#include "../core/mesh.h"
#include "../core/value.h"

#include <stdlib.h>
#include <string.h>

/* Does query report i keep state that depends on the order of its items?
 * (diff() does, but for the functions that keep only its ends) */
static bool query_needs_order(const struct qrule *r)
{
	for (unsigned k = 0; k < r->nitems; k++)
		if ((r->items[k].diff || r->items[k].agg == AGG_DIFF) && !r->items[k].diff_ends)
			return true;
	return false;
}

/* Which rules are routed by their key (engine.h): bits and routes. -1
 * out of memory; -2 more routed rules than bits, for a partial engine
 * (one engine alone runs every rule whatever its bit). */
static int routes_init(struct isp_engine *e)
{
	const struct isp_program *prog = e->prog;
	unsigned n = 0, wanted = 0;

	e->qbit = calloc(prog->nqueries ? prog->nqueries : 1, sizeof(*e->qbit));
	e->ebit = calloc(prog->nevents ? prog->nevents : 1, sizeof(*e->ebit));
	e->mbit = calloc(prog->nmonitors ? prog->nmonitors : 1, sizeof(*e->mbit));
	e->routes = calloc(prog->nevents + prog->nqueries + prog->nmonitors + 1, sizeof(*e->routes));
	if (!e->qbit || !e->ebit || !e->mbit || !e->routes)
		return -1;
	e->lead = -1;
	for (unsigned i = 0; i < prog->nevents; i++) {
		const struct erule *r = &prog->events[i];
		wanted += r->ndelta > 0;
		if (r->ndelta == 0 || n >= ROUTE_MAX) {
			e->ebit[i] = ROUTE_REST;
			e->has_rest = true;
			continue;
		}
		e->routes[n] = (struct route){ r->key_slots, r->nkey, r->event_slot,
					       r->per_hop ? r : NULL };
		e->ebit[i] = UINT64_C(1) << n++;
	}
	for (unsigned i = 0; i < prog->nqueries; i++) {
		const struct qrule *r = &prog->queries[i];
		wanted += query_needs_order(r);
		if (!query_needs_order(r)) {
			/* its windows merge at ticks whatever worker saw what:
			 * no item needs to move for it */
			e->qbit[i] = ROUTE_LOCAL;
			e->has_local = true;
			continue;
		}
		if (n >= ROUTE_MAX) {
			e->qbit[i] = ROUTE_REST;
			e->has_rest = true;
			continue;
		}
		e->routes[n] = (struct route){ r->group_slots, r->ngroup, -1, NULL };
		e->qbit[i] = UINT64_C(1) << n++;
	}
	/* a flow monitor's table is per flow of its match fields */
	for (unsigned i = 0; i < prog->nmonitors; i++) {
		const struct mrule *r = &prog->monitors[i];
		wanted++;
		if (n >= ROUTE_MAX) {
			e->mbit[i] = ROUTE_REST;
			e->has_rest = true;
			continue;
		}
		e->routes[n] = (struct route){ r->match_slots, r->nmatch, -1, NULL };
		e->mbit[i] = UINT64_C(1) << n++;
	}
	e->nroutes = n;
	/* stores fed by rules run with the rest (their writes need no order) */
	for (unsigned i = 0; i < prog->ndta; i++)
		if (prog->dta_stores[i].nkey || prog->dta_stores[i].nvalue)
			e->has_rest = true;
	/* the rest goes with the first key that spreads (one memory for all
	 * would put everything on one worker), so a rule set with one keyed
	 * rule sends an item to one worker only */
	for (unsigned k = 0; k < n && e->lead < 0; k++)
		if (e->routes[k].nslots && !e->routes[k].per_hop)
			e->lead = (int)k;       /* one owner an item, not one a hop */
	return e->partial && wanted > ROUTE_MAX ? -2 : 0;
}

struct isp_engine *isp_engine_new(const struct isp_program *prog, const struct isp_registry *reg,
				  struct isp_channel **channels, bool partial, char *err,
				  size_t errlen)
{
	struct isp_engine *e = calloc(1, sizeof(*e));

	if (!e)
		goto oom;
	pthread_mutex_init(&e->pub_mu, NULL);
	pthread_mutex_init(&e->ctl_mu, NULL);
	e->prog = prog;
	e->channels = channels;
	e->partial = partial;
	e->rec.iso_sec = -1;
	e->ip4 = isp_proto_id(reg, "ip");
	e->ip6 = isp_proto_id(reg, "ipv6");
	e->hop = -1;
	e->nworkers = 1;
	for (unsigned i = 0; i < prog->nevents; i++) {
		if (prog->events[i].per_hop && !e->hopval &&
		    !(e->hopval = calloc(prog->nslots ? prog->nslots : 1, sizeof(*e->hopval))))
			goto oom;
	}
	if (slot_cache_init(&e->sc, reg, prog->slots, prog->nslots) != 0)
		goto oom;
	if (!(e->pub = calloc(prog->nevents + prog->nqueries + prog->nmonitors + 1, sizeof(*e->pub))))
		goto oom;
	if (!(e->saved_bit = calloc(prog->nevents + prog->nqueries + prog->nmonitors + 1,
				    sizeof(*e->saved_bit))))
		goto oom;
	e->ev = calloc(prog->nevents ? prog->nevents : 1, sizeof(*e->ev));
	e->q = calloc(prog->nqueries ? prog->nqueries : 1, sizeof(*e->q));
	e->mon = calloc(prog->nmonitors ? prog->nmonitors : 1, sizeof(*e->mon));
	if (!e->ev || !e->q || !e->mon)
		goto oom;
	int rc = routes_init(e);
	if (rc == -2) {
		snprintf(err, errlen, "more than %d rules keep per-key state (delta-cond, diff(), "
			 "flow monitors): run them on one worker", ROUTE_MAX);
		isp_engine_free(e);
		return NULL;
	}
	if (rc != 0 || carry_init(e) != 0)
		goto oom;
	const char *rule = NULL, *kind = NULL, *what = NULL;
	for (unsigned i = 0; i < prog->nevents && !rule; i++)
		if ((rc = event_init(e, i)) != 0)
			rule = prog->events[i].name, kind = "event-report", what = "max-keys";
	for (unsigned i = 0; i < prog->nqueries && !rule; i++)
		if ((rc = query_init(e, i)) != 0)
			rule = prog->queries[i].name, kind = "query-report", what = "max-groups";
	for (unsigned i = 0; i < prog->nmonitors && !rule; i++)
		if ((rc = monitor_init(e, i)) != 0)
			rule = prog->monitors[i].name, kind = "flow-monitor", what = "max-entries";
	if (rc == -2) {
		snprintf(err, errlen, "%s %s: %s times the size of an entry with the longest key "
			 "is more than the 32 GiB a table reaches: lower %s", kind, rule, what, what);
		isp_engine_free(e);
		return NULL;
	}
	if (rule || ahead_init(e) != 0)
		goto oom;
	/* several workers share each channel: hand records over in batches
	 * (one lock for many), not one at a time */
	if (partial && channels && prog->nchannels) {
		e->stage = calloc(prog->nchannels, sizeof(*e->stage));
		if (!e->stage)
			goto oom;
		for (unsigned i = 0; i < prog->nchannels; i++)
			if (channels[i] && isp_channel_stage_init(&e->stage[i], channels[i], 64 * 1024) != 0)
				goto oom;
	}
	return e;
oom:
	snprintf(err, errlen, "out of memory for the rule state");
	isp_engine_free(e);
	return NULL;
}

static enum rec_format format_of_channel(int f)
{
	switch (f) {
	case ISP_REC_CSV: return FMT_CSV;
	case ISP_REC_INTSPECT_CSV: return FMT_CSV_CELLS;
	case ISP_REC_INFLUX: return FMT_INFLUX;
	default: return FMT_JSON;
	}
}

/* The rule's format, and each channel's (struct rule_formats). */
static void bind_formats(enum rec_format *format, bool format_set, const int *chans,
			 unsigned nchans, struct rule_formats *f,
			 struct isp_channel *const *channels)
{
	/* a rule without output-format takes its first channel's format
	 * key (MMT-Probe's output { format = csv }), unless that is line
	 * protocol: a channel's own encoding, not the rule's */
	if (!format_set && nchans && channels[chans[0]] &&
	    isp_channel_format_set(channels[chans[0]]) &&
	    isp_channel_format(channels[chans[0]]) != ISP_REC_INFLUX)
		*format = format_of_channel(isp_channel_format(channels[chans[0]]));
	free(f->of);
	f->of = nchans ? calloc(nchans, 1) : NULL;
	f->n = 0;
	if (nchans && !f->of)
		return;         /* every channel takes the rule's format */
	f->list[f->n++] = (uint8_t)*format;
	for (unsigned c = 0; c < nchans; c++) {
		const struct isp_channel *ch = channels[chans[c]];
		enum rec_format cf = ch && isp_channel_format_set(ch) ?
				     format_of_channel(isp_channel_format(ch)) : *format;
		f->of[c] = (uint8_t)cf;
		bool known = false;
		for (unsigned k = 0; k < f->n; k++)
			known |= f->list[k] == cf;
		if (!known && f->n < sizeof(f->list))
			f->list[f->n++] = (uint8_t)cf;
	}
}

void isp_program_bind_channels(struct isp_program *prog, struct isp_channel *const *channels)
{
	for (unsigned i = 0; i < prog->nevents; i++) {
		struct erule *r = &prog->events[i];
		bind_formats(&r->format, r->format_set, r->channels, r->nchannels, &r->fmts,
			     channels);
	}
	for (unsigned i = 0; i < prog->nqueries; i++) {
		struct qrule *r = &prog->queries[i];
		bind_formats(&r->format, r->format_set, r->channels, r->nchannels, &r->fmts,
			     channels);
	}
	for (unsigned i = 0; i < prog->nmonitors; i++) {
		struct mrule *r = &prog->monitors[i];
		bind_formats(&r->format, r->format_set, r->channels, r->nchannels, &r->fmts,
			     channels);
	}
}

/* An item whose values in the slot cache are its own (fetched or carried). */
static void engine_run(struct isp_engine *e, const struct isp_packet *p, uint64_t what)
{
	const struct isp_program *prog = e->prog;

	if (p->ts_ns > e->last_ts)
		e->last_ts = p->ts_ns;
	for (unsigned i = 0; i < prog->nqueries; i++)
		if (what & e->qbit[i])
			query_packet(e, i, p);
	for (unsigned i = 0; i < prog->nevents; i++)
		if (what & e->ebit[i])
			event_packet(e, i, p);
	for (unsigned i = 0; i < prog->nmonitors; i++)
		if (what & e->mbit[i])
			monitor_packet(e, i, p);
	if (e->dta) {
		if ((what & ROUTE_DTA) && dta_takes(e, p))
			dta_packet(e, p);
		if (what & ROUTE_REST)
			dta_rules(e, p);
	}
}

void isp_engine_item(struct isp_engine *e, const struct isp_packet *p, uint64_t what)
{
	slot_cache_next(&e->sc);
	engine_run(e, p, what);
}

void isp_engine_item_routed(struct isp_engine *e, const struct isp_packet *p, uint64_t what)
{
	engine_run(e, p, what);         /* the values route fetched are this item's */
}

/* The owner among n of a key hash: its high bits, since tables index
 * their buckets with the low ones (an owner's keys would share them). */
static unsigned owner_of(uint64_t h, unsigned n)
{
	return (unsigned)(((h >> 32) * n) >> 32);
}

const struct isp_value *engine_hop_value(struct isp_engine *e, const struct isp_value *v,
					 int slot)
{
	unsigned h = (unsigned)e->hop;

	_Static_assert(ISP_MAX_HOPS <= 32, "one missing bit per hop");
	if (h >= v->count || h >= ISP_MAX_HOPS || (v->missing >> h & 1))
		return NULL;
	struct isp_value *o = &e->hopval[slot];
	o->type = v->type;
	o->is_array = 0;
	o->count = 0;
	o->missing = 0;
	o->v.u = v->v.arr[h];
	return o;
}

unsigned engine_rule_hops(struct isp_engine *e, const struct erule *r, const struct isp_packet *p)
{
	unsigned nh = 0;

	for (int i = -1; i < (int)(r->nkey + r->ndelta + r->nattr); i++) {
		int slot = i < 0 ? r->event_slot :
			   (unsigned)i < r->nkey ? r->key_slots[i] :
			   (unsigned)i < r->nkey + r->ndelta ? r->delta_slots[i - (int)r->nkey] :
			   r->attr_slots[i - (int)(r->nkey + r->ndelta)];
		if (slot < 0)
			continue;
		const struct isp_value *v = slot_get(&e->sc, p, (unsigned)slot);
		if (v && v->is_array && v->count > nh)
			nh = v->count;
	}
	return nh < ISP_MAX_HOPS ? nh : ISP_MAX_HOPS;
}

/* A route's key hash: its values mixed directly when they are numbers or
 * per-hop arrays of them (most keys: addresses, ports, ids, switch paths),
 * else its key bytes hashed. The same on every worker, which is all
 * routing needs; equal keys (engine_key) have equal counts, missing hops
 * and values, so they mix the same. */
static inline bool route_mixes(const struct isp_value *v)
{
	return !v || v->is_array || (v->type != ISP_T_STRING && v->type != ISP_T_IPV6 &&
				     v->type != ISP_T_MAC);
}

static inline uint64_t route_mix_word(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0xbf58476d1ce4e5b9u;
	return h ^ h >> 31;
}

static inline uint64_t route_mix(uint64_t h, const struct isp_value *v, unsigned i)
{
	if (!v)
		return route_mix_word(h, 0x5bd1e995u + i);
	if (!v->is_array)
		return route_mix_word(h, v->v.u);
	/* an array key's owner without its bytes, which the owner builds
	 * for its table anyway (built here too, they cost ~160 a route) */
	unsigned n = v->count < ISP_MAX_HOPS ? v->count : ISP_MAX_HOPS;
	uint32_t missing = v->missing;
	h = route_mix_word(h, (uint64_t)n << 32 | missing);
	if (!missing) {         /* every hop there, the usual case */
		for (unsigned k = 0; k < n; k++)
			h = route_mix_word(h, v->v.arr[k]);
		return h;
	}
	for (unsigned k = 0; k < n; k++)
		h = route_mix_word(h, missing >> k & 1 ? 0x5bd1e995u : v->v.arr[k]);
	return h;
}

static uint64_t route_hash(struct isp_engine *e, const struct isp_packet *p,
			   const struct route *rt)
{
	uint64_t h = 0x9e3779b97f4a7c15u;

	for (unsigned i = 0; i < rt->nslots; i++) {
		const struct isp_value *v = engine_get(e, p, rt->slots[i]);
		if (!route_mixes(v))
			return table_hash(e->keybuf, engine_key(e, p, rt->slots, rt->nslots,
								e->keybuf, sizeof(e->keybuf)));
		h = route_mix(h, v, i);
	}
	return h * 0x94d049bb133111ebu;
}

unsigned engine_owner_of_values(const struct isp_engine *e, const struct isp_value *vals,
				unsigned n, const uint8_t *key, size_t klen)
{
	uint64_t h = 0x9e3779b97f4a7c15u;

	if (e->nworkers < 2)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		if (!route_mixes(&vals[i]))
			return owner_of(table_hash(key, klen), e->nworkers);
		h = route_mix(h, &vals[i], i);
	}
	return owner_of(h * 0x94d049bb133111ebu, e->nworkers);
}

bool engine_hop_is_mine(struct isp_engine *e, const struct isp_packet *p, unsigned i)
{
	uint64_t bit = e->ebit[i];

	if (e->nworkers < 2 || bit == ROUTE_REST || e->settle)
		return true;
	return owner_of(route_hash(e, p, &e->routes[__builtin_ctzll(bit)]), e->nworkers) == e->self;
}

bool isp_engine_local_only(const struct isp_engine *e)
{
	return e->nroutes == 0 && !e->dta && !e->has_rest;
}

void isp_engine_route(struct isp_engine *e, const struct isp_packet *p, unsigned n,
		      uint64_t *dest)
{
	unsigned lead = n;

	slot_cache_next(&e->sc);
	for (unsigned k = 0; k < e->nroutes; k++) {
		const struct route *rt = &e->routes[k];
		if (rt->per_hop) {
			/* every owner of a hop's key gets the item, and runs
			 * the hops it owns (engine_hop_is_mine) */
			unsigned nh = engine_rule_hops(e, rt->per_hop, p);
			for (unsigned h = 0; h < nh; h++) {
				e->hop = (int)h;
				if (rt->event_slot < 0 || engine_get(e, p, rt->event_slot))
					dest[owner_of(route_hash(e, p, rt), n)] |= UINT64_C(1) << k;
			}
			e->hop = -1;
			continue;
		}
		/* an event fires on its attribute: absent with its protocol, a
		 * test of one bit (fetching it here would fetch it twice, the
		 * owner fetching it again) */
		bool fires = rt->event_slot < 0 || slot_may_be_present(&e->sc, p, (unsigned)rt->event_slot);
		if (!fires && (int)k != e->lead)
			continue;       /* the event will not look at it */
		unsigned to = owner_of(route_hash(e, p, rt), n);
		if (fires)
			dest[to] |= UINT64_C(1) << k;
		if ((int)k == e->lead)
			lead = to;
	}
	if (e->dta && dta_takes(e, p))
		dest[owner_of(dta_route_hash(e, p), n)] |= ROUTE_DTA;
	if (e->has_local)
		dest[e->self < n ? e->self : 0] |= ROUTE_LOCAL;
	if (!e->has_rest)
		return;
	if (lead == n)          /* no spreading key: the monitored flow */
		lead = owner_of(isp_item_hash(p, e->ip4, e->ip6), n);
	dest[lead] |= ROUTE_REST;
}

void isp_engine_tick(struct isp_engine *e, uint64_t now_ns)
{
	engine_ahead_drain(e);          /* the items before the tick */
	e->tick_now = now_ns;
	for (unsigned i = 0; i < e->prog->nmonitors; i++)
		monitor_tick(e, i, now_ns);
	for (unsigned i = 0; i < e->prog->nqueries; i++)
		query_advance(e, i, now_ns);
	for (unsigned i = 0; i < e->prog->nevents; i++)
		if (e->prog->events[i].idle_ns && now_ns != UINT64_MAX)
			event_expire(e, i, now_ns);     /* the end of the input is not idleness */
	dta_tick(e, now_ns);
	if (now_ns == UINT64_MAX && !e->partial)
		engine_partial_ends(e);
	isp_engine_flush(e);
}

void engine_partial_ends(struct isp_engine *e)
{
	for (unsigned i = 0; i < e->prog->nqueries; i++)
		if (e->q[i].ts_order)
			partial_watermark(e, i, UINT64_MAX, 0);
}

bool isp_engine_holding(const struct isp_engine *e)
{
	if (engine_ahead_holds(e))
		return true;
	for (unsigned i = 0; i < e->prog->nqueries; i++)
		if (e->q[i].win_end)
			return true;
	return false;
}

void isp_engine_drain(struct isp_engine *e, bool final)
{
	for (unsigned i = 0; i < e->prog->nqueries; i++)
		query_drain(e, i, final);
	isp_engine_flush(e);
}

void isp_engine_flush(struct isp_engine *e)
{
	dta_flush(e);
	for (unsigned i = 0; e->stage && i < e->prog->nchannels; i++)
		if (e->stage[i].ch)
			isp_channel_stage_flush(&e->stage[i]);
}

void isp_engine_merge_windows(struct isp_engine *merger, struct isp_engine *const *workers,
			      unsigned n)
{
	for (unsigned i = 0; i < merger->prog->nmonitors; i++)
		monitor_merge(merger, i, workers, n);
	for (unsigned i = 0; i < merger->prog->nqueries; i++)
		query_merge(merger, i, workers, n);
	if (n && workers[0]->tick_now == UINT64_MAX)
		engine_partial_ends(merger);
}

uint64_t isp_engine_window_end(const struct isp_program *prog, uint64_t t)
{
	return engine_window_end(prog, t, true);
}

uint64_t engine_window_end(const struct isp_program *prog, uint64_t t, bool monitors)
{
	uint64_t next = UINT64_MAX;

	for (unsigned i = 0; i < prog->nqueries; i++) {
		uint64_t p = prog->queries[i].period_ns;
		uint64_t end = (t / p + 1) * p;
		if (end < next)
			next = end;
	}
	/* idle-timeout-ms: a sweep every quarter of it, so a key expires
	 * between 1 and 1.25 idle-timeouts after its last packet */
	for (unsigned i = 0; i < prog->nevents; i++) {
		uint64_t p = event_sweep_period(&prog->events[i]);
		if (p && (t / p + 1) * p < next)
			next = (t / p + 1) * p;
	}
	/* flow monitors: each sub-interval (buffer slots, overflow checks) */
	for (unsigned i = 0; monitors && i < prog->nmonitors; i++) {
		uint64_t p = prog->monitors[i].interval_ns / prog->monitors[i].nbuf;
		if ((t / p + 1) * p < next)
			next = (t / p + 1) * p;
	}
	return next;
}

void isp_engine_free(struct isp_engine *e)
{
	if (!e)
		return;
	dta_engine_free(e);
	carry_free(e);
	ahead_free(e);
	query_share_free(e);
	event_batch_free(e);
	free(e->pub);
	free(e->saved_bit);
	pthread_mutex_destroy(&e->pub_mu);
	engine_control_drop(e);
	pthread_mutex_destroy(&e->ctl_mu);
	for (unsigned i = 0; e->ev && i < e->prog->nevents; i++) {
		const struct erule *r = &e->prog->events[i];
		table_free(&e->ev[i].keys);
		if (e->ev[i].event_key)
			rec_jkey_free(e->ev[i].event_key);
		free(e->ev[i].event_key);
		for (unsigned k = 0; e->ev[i].attr_keys && k < r->nattr; k++)
			rec_jkey_free(&e->ev[i].attr_keys[k]);
		free(e->ev[i].attr_keys);
		for (unsigned w = 0; w < 2; w++) {
			free(e->ev[i].wf[w].key);
			free(e->ev[i].wf[w].slot);
			free(e->ev[i].wf[w].at);
		}
		for (unsigned k = 0; e->ev[i].key_keys && k < r->nkey; k++)
			rec_jkey_free(&e->ev[i].key_keys[k]);
		free(e->ev[i].key_keys);
	}
	for (unsigned i = 0; e->q && i < e->prog->nqueries; i++) {
		const struct qrule *r = &e->prog->queries[i];
		table_free(&e->q[i].groups);
		arena_free(&e->q[i].hops);
		table_free(&e->q[i].done);
		arena_free(&e->q[i].done_hops);
		for (unsigned k = 0; e->q[i].group_keys && k < r->ngroup; k++)
			rec_jkey_free(&e->q[i].group_keys[k]);
		for (unsigned k = 0; e->q[i].item_keys && k < r->nitems; k++)
			rec_jkey_free(&e->q[i].item_keys[k]);
		free(e->q[i].group_keys);
		free(e->q[i].item_keys);
		free(e->q[i].cell_off);
		free(e->q[i].cell_size);
		free(e->q[i].plan);
	}
	for (unsigned i = 0; e->mon && i < e->prog->nmonitors; i++)
		monitor_free(e, i);
	free(e->mon);
	free(e->mbit);
	for (unsigned i = 0; e->stage && i < e->prog->nchannels; i++)
		if (e->stage[i].ch)
			isp_channel_stage_free(&e->stage[i]);
	free(e->stage);
	free(e->ev);
	free(e->q);
	free(e->qbit);
	free(e->ebit);
	free(e->routes);
	free(e->hopval);
	slot_cache_free(&e->sc);
	free(e);
}

size_t engine_key_max(const struct isp_engine *e, const int *slots, unsigned n)
{
	size_t max = 0;

	for (unsigned i = 0; i < n; i++) {
		const struct isp_attr_desc *a = isp_attr_desc_of(e->sc.reg, &e->prog->slots[slots[i]]);
		max += a->type == ISP_T_STRING ? 1 + ISP_STR_MAX : engine_key_width(a->type, a->per_hop);
	}
	return max ? max : 1;
}

/* One value's key bytes at buf + len (see engine_int.h); len when they
 * do not fit. */
static inline __attribute__((always_inline)) size_t
key_put(uint8_t *buf, size_t len, size_t cap, const struct isp_value *v)
{
	if (v && v->is_array) {
		/* elements of 4 bytes when every one fits */
		uint64_t all = 0;
		for (unsigned k = 0; k < v->count; k++)
			all |= v->v.arr[k];
		unsigned w = all >> 32 ? 8 : 4;
		size_t need = 6 + v->count * w;
		if (len + need > cap)
			return len;
		buf[len] = (uint8_t)(KEY_PRESENT | (w == 4 ? KEY_W4 : KEY_W8));
		buf[len + 1] = v->count;
		memcpy(buf + len + 2, &v->missing, 4);
		uint8_t *out = buf + len + 6;
		for (unsigned k = 0; k < v->count; k++, out += w) {
			if (w == 4) {
				uint32_t x = (uint32_t)v->v.arr[k];
				memcpy(out, &x, 4);
			} else {
				memcpy(out, &v->v.arr[k], 8);
			}
		}
		return len + need;
	}
	if (v && v->type == ISP_T_STRING) {
		size_t sl = strlen(v->v.str) + 1;
		if (len + 1 + sl > cap)
			return len;
		buf[len] = KEY_PRESENT;
		memcpy(buf + len + 1, v->v.str, sl);
		return len + 1 + sl;
	}
	bool wide = v && (v->type == ISP_T_IPV6 || v->type == ISP_T_MAC);
	if (len + engine_key_scalar_len(v, wide) > cap)
		return len;
	return len + engine_key_scalar(buf + len, v, wide);
}

/*
 * Key bytes of a list of attributes: per attribute a presence byte, then
 * the value's bytes (arrays: count, missing mask, elements). Binary, so
 * equal values give equal keys without any formatting.
 */
size_t engine_key(struct isp_engine *e, const struct isp_packet *p, const int *slots,
		  unsigned n, uint8_t *buf, size_t cap)
{
	size_t len = 0;
	const bool hops = e->hop >= 0;

	for (unsigned i = 0; i < n; i++) {
		size_t next = key_put(buf, len, cap, engine_get_in(e, p, slots[i], hops));
		if (next == len)
			break;
		len = next;
	}
	return len;
}

size_t engine_key_of_values(const struct isp_value *vals, unsigned n, uint8_t *buf, size_t cap)
{
	size_t len = 0;

	for (unsigned i = 0; i < n; i++) {
		size_t next = key_put(buf, len, cap, &vals[i]);
		if (next == len)
			break;
		len = next;
	}
	return len;
}

void engine_text_append(char *out, size_t cap, size_t *len, const char *text,
			const struct isp_value *v)
{
	if (cap == 0 || *len >= cap - 1)
		return;
	if (text) {
		size_t n = strlen(text);
		if (n > cap - 1 - *len)
			n = cap - 1 - *len;
		memcpy(out + *len, text, n);
		*len += n;
	} else if (v->is_array) {
		struct jsonw w;
		jsonw_init(&w, out + *len, cap - 1 - *len);
		isp_value_json(&w, v, 6);
		*len += w.overflow ? 0 : w.len;
	} else {
		*len += isp_value_text(v, v->v.u, out + *len, cap - *len);
		if (*len > cap - 1)
			*len = cap - 1;
	}
	out[*len] = 0;
}

/* Rebuild a group-by value from its key bytes (see engine_key, or
 * group_key when the rule's keys are `fixed`). */
const uint8_t *engine_key_value(const uint8_t *k, const uint8_t *end, uint8_t type,
				 bool per_hop, struct isp_value *v, bool *present)
{
	memset(v, 0, offsetof(struct isp_value, v) + 16);
	v->type = type;
	*present = false;
	if (k >= end)
		return end;
	uint8_t flag = *k++;
	if (!(flag & KEY_PRESENT))
		return k;
	/* a key that does not read (bytes from a partial window, which
	 * anyone may write) gives an absent value, never a part of one */
	size_t w = (flag & KEY_WIDTH) == KEY_W4 ? 4 : (flag & KEY_WIDTH) == KEY_W16 ? 16 : 8;
	if (per_hop) {
		if (end - k < 5 || *k > ISP_MAX_HOPS || w == 16 ||
		    (size_t)(end - k - 5) < *k * w)
			return end;
		v->is_array = 1;
		v->count = *k++;
		memcpy(&v->missing, k, 4);
		k += 4;
		for (unsigned i = 0; i < v->count; i++, k += w) {
			uint32_t x;
			if (w == 4)
				memcpy(&x, k, 4), v->v.arr[i] = x;
			else
				memcpy(&v->v.arr[i], k, 8);
		}
		*present = true;
		return k;
	}
	if (type == ISP_T_STRING) {
		const uint8_t *z = memchr(k, 0, (size_t)(end - k));
		if (!z || z - k >= ISP_STR_MAX)
			return end;
		memcpy(v->v.str, k, (size_t)(z - k) + 1);
		*present = true;
		return z + 1;
	}
	/* an address takes 16 bytes, a number 4 or 8: anything else is not
	 * this type's key */
	bool wide = type == ISP_T_IPV6 || type == ISP_T_MAC;
	if ((size_t)(end - k) < w || wide != (w == 16))
		return end;
	if (wide) {
		memcpy(v->v.ip6, k, 16);
	} else if (w == 4) {
		uint32_t x;
		memcpy(&x, k, 4);
		v->v.u = x;
	} else {
		memcpy(&v->v.u, k, 8);
	}
	v->missing = flag & KEY_MISSING ? 1 : 0;
	*present = true;
	return k + w;
}

size_t engine_key_text(struct isp_engine *e, const struct isp_packet *p, const int *slots,
		       unsigned n, char *out, size_t cap)
{
	size_t len = 0;
	bool first = true;

	if (cap)
		out[0] = 0;
	for (unsigned i = 0; i < n; i++) {
		const struct isp_value *v = engine_get(e, p, slots[i]);
		if (!v)
			continue;
		if (!first)
			engine_text_append(out, cap, &len, "|", NULL);
		engine_text_append(out, cap, &len, NULL, v);
		first = false;
	}
	return len;
}
