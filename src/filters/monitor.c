/*
 * monitor.c - flow monitors (flow-monitor NAME { ... }): SDN-Mon's
 * monitoring table on the match fields the operator chose.
 *
 * A packet whose match fields are all present belongs to the flow of
 * their values. A flow in the table counts the packet: packets, bytes
 * (the packet's length on the wire), first and last seen, the counters
 * the monitor adds (sum or max of an attribute), and the same in the
 * buffer slot of its sub-interval (query-interval / buffer long). A flow
 * not in the table is sampled by a hash of its key, so the decision is
 * the same on every worker and in every run, and costs a table miss and
 * a compare, less than the Bloom filter lookup SDN-Mon pays to remember
 * a random decision. The counting Bloom filter holds the flows an
 * operator removed, so that their packets cost one filter lookup.
 *
 * At the end of each interval the monitor writes one record per flow that
 * had packets in it (every flow with report-unchanged), in the order of
 * their first packets, and at each sub-interval it compares its size with
 * overflow-threshold: one overflow record a crossing. With several
 * workers a flow lives on the owner of its key and the engine that
 * merges writes every worker's flows in the same order, so the records
 * do not depend on the number of workers.
 */
#include <stdlib.h>
#include <string.h>

#include "../core/value.h"
#include "engine.h"
#include "engine_int.h"

/* An entry's state; then nvals u64: the counters since the first packet,
 * then per buffer slot packets, bytes and each counter. */
struct mon_entry {
	uint64_t first_order;   /* position of its first packet: record order */
	uint64_t first_seen;
	uint64_t packets, bytes;
	uint64_t qi;            /* the interval its buffer holds */
	uint64_t vals[];
};

static size_t slot_vals(const struct mrule *r)
{
	return 2 + r->ncounters;
}

/* A hash for the sampling decision, independent of the bits that place
 * the key in tables and route it to a worker (splitmix64's finaliser). */
static uint64_t sample_mix(uint64_t h)
{
	h ^= 0x6a09e667f3bcc909u;
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9u;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebu;
	return (h ^ (h >> 31)) >> 11;   /* 53 bits */
}

static uint64_t sample_threshold(double ratio)
{
	return ratio >= 1 ? UINT64_C(1) << 53 : (uint64_t)(ratio * (double)(UINT64_C(1) << 53));
}

int monitor_init(struct isp_engine *e, unsigned i)
{
	const struct mrule *r = &e->prog->monitors[i];
	struct monitor_state *ms = &e->mon[i];

	ms->nvals = r->ncounters + (size_t)r->nbuf * slot_vals(r);
	int rc = table_init(&ms->entries, r->max_entries,
			    sizeof(struct mon_entry) + ms->nvals * sizeof(uint64_t),
			    engine_key_max(e, r->match_slots, r->nmatch), true);
	if (rc != 0)
		return rc;
	if (cbloom_init(&ms->excluded, r->bloom_cells, r->bloom_hashes) != 0)
		return -1;
	ms->sampling = r->sampling;
	ms->sample_below = sample_threshold(r->sampling);
	ms->interval_ns = r->interval_ns;
	ms->sub_ns = r->interval_ns / r->nbuf;
	ms->overflow = r->overflow;
	ms->cur.start = MON_NONE;
	ms->match_keys = calloc(r->nmatch, sizeof(*ms->match_keys));
	if (!ms->match_keys)
		return -1;
	for (unsigned k = 0; k < r->nmatch; k++)
		if (rec_jkey_make(&ms->match_keys[k], r->match_names[k]) != 0)
			return -1;
	/* every record has these fields: their keys once, not escaped for
	 * each record (and the buffer names not printed for each) */
	size_t nb = slot_vals(r);
	ms->buffer_names = calloc(nb ? nb : 1, sizeof(*ms->buffer_names));
	ms->field_keys = calloc(MON_KEY_COUNTERS + r->ncounters + nb, sizeof(*ms->field_keys));
	if (!ms->buffer_names || !ms->field_keys)
		return -1;
	static const char *const fixed[MON_KEY_COUNTERS] = {
		"interval_start", "packets", "bytes", "first_seen", "last_seen",
	};
	for (unsigned k = 0; k < MON_KEY_COUNTERS; k++)
		if (rec_jkey_make(&ms->field_keys[ms->nfield_keys++], fixed[k]) != 0)
			return -1;
	for (unsigned c = 0; c < r->ncounters; c++)
		if (rec_jkey_make(&ms->field_keys[ms->nfield_keys++], r->counters[c].text) != 0)
			return -1;
	for (size_t k = 0; k < nb; k++) {
		snprintf(ms->buffer_names[k], sizeof(ms->buffer_names[k]), "buffer.%s",
			 k == 0 ? "packets" : k == 1 ? "bytes" : r->counters[k - 2].text);
		if (rec_jkey_make(&ms->field_keys[ms->nfield_keys++], ms->buffer_names[k]) != 0)
			return -1;
	}
	return 0;
}

void monitor_free(struct isp_engine *e, unsigned i)
{
	struct monitor_state *ms = &e->mon[i];

	table_free(&ms->entries);
	cbloom_free(&ms->excluded);
	for (unsigned k = 0; ms->match_keys && k < e->prog->monitors[i].nmatch; k++)
		rec_jkey_free(&ms->match_keys[k]);
	free(ms->match_keys);
	for (unsigned k = 0; k < ms->nfield_keys; k++)
		rec_jkey_free(&ms->field_keys[k]);
	free(ms->field_keys);
	free(ms->buffer_names);
	free(ms->emit);
}

/* A counter's contribution of one packet: its value, or over the hops
 * of a per-hop attribute the sum or the largest. false: absent. */
static bool counter_value(const struct isp_value *v, bool is_max, uint64_t *out)
{
	if (!v->is_array) {
		if (v->missing & 1)
			return false;
		*out = v->v.u;
		return true;
	}
	uint64_t acc = 0;
	bool any = false;
	for (unsigned h = 0; h < v->count && h < ISP_MAX_HOPS; h++) {
		if (v->missing & (UINT32_C(1) << h))
			continue;
		uint64_t x = v->v.arr[h];
		acc = is_max ? (x > acc ? x : acc) : acc + x;
		any = true;
	}
	*out = acc;
	return any;
}

/* The interval that holds t, with the settings as they are now: an
 * interval keeps its length once open (set-interval acts on the next). */
static void open_interval(struct monitor_state *ms, uint64_t t)
{
	ms->cur.len = ms->interval_ns;
	ms->cur.sub = ms->sub_ns;
	ms->cur.start = t / ms->cur.len * ms->cur.len;
}

static void count(struct isp_engine *e, const struct mrule *r, struct monitor_state *ms,
		  struct mon_entry *en, const struct isp_packet *p)
{
	if (ms->cur.start == MON_NONE)
		open_interval(ms, p->ts_ns);
	if (en->qi != ms->cur.start) {
		memset(en->vals + r->ncounters, 0, (ms->nvals - r->ncounters) * sizeof(uint64_t));
		en->qi = ms->cur.start;
	}
	/* a packet stamped before its interval (shares of a live input do
	 * not keep time order) counts in its first slot */
	uint64_t start = ms->cur.start;
	uint64_t s = p->ts_ns > start ? (p->ts_ns - start) / ms->cur.sub : 0;
	if (s >= r->nbuf)
		s = r->nbuf - 1;
	uint64_t *slot = en->vals + r->ncounters + s * slot_vals(r);
	if (en->packets == 0) {         /* new, or added by the operator */
		en->first_order = p->index << 8 | p->report_index;
		en->first_seen = p->ts_ns;
	}
	en->packets++;
	en->bytes += p->wirelen;
	slot[0]++;
	slot[1] += p->wirelen;
	for (unsigned c = 0; c < r->ncounters; c++) {
		const struct isp_value *v = slot_get(&e->sc, p, (unsigned)r->counters[c].slot);
		uint64_t x;
		if (!v || !counter_value(v, r->counters[c].is_max, &x))
			continue;
		if (r->counters[c].is_max) {
			if (x > en->vals[c])
				en->vals[c] = x;
			if (x > slot[2 + c])
				slot[2 + c] = x;
		} else {
			en->vals[c] += x;
			slot[2 + c] += x;
		}
	}
}

void monitor_packet(struct isp_engine *e, unsigned i, const struct isp_packet *p)
{
	const struct mrule *r = &e->prog->monitors[i];
	struct monitor_state *ms = &e->mon[i];

	if (r->where) {
		struct cx_ctx ctx = { &e->sc, p, -1 };
		if (!cx_true(r->where, &ctx))
			return;
	}
	for (unsigned k = 0; k < r->nmatch; k++)
		if (!slot_get(&e->sc, p, (unsigned)r->match_slots[k]))
			return;         /* not a flow of this monitor */
	ms->st.matched++;
	size_t klen;
	uint64_t h;
	const uint8_t *key = engine_take_prepared(e, e->prog->nevents + e->prog->nqueries + i,
						  &ms->st.ahead, &klen, &h);
	if (!key) {
		key = e->keybuf;
		klen = engine_key(e, p, r->match_slots, r->nmatch, e->keybuf, sizeof(e->keybuf));
		h = table_hash(e->keybuf, klen);
	}
	struct tentry *te = table_find_hashed(&ms->entries, key, klen, h);
	if (te) {
		if (p->ts_ns > *tentry_seen(te))
			*tentry_seen(te) = p->ts_ns;
	} else {
		if (cbloom_has(&ms->excluded, h)) {
			ms->st.excluded++;
			return;
		}
		if (sample_mix(h) >= ms->sample_below) {
			ms->st.sampled_out++;
			return;
		}
		bool created;
		te = table_get_hashed(&ms->entries, key, klen, h, p->ts_ns, true, &created);
		if (!te)
			return;
		struct mon_entry *en = tentry_state(te);
		en->qi = MON_NONE;
		ms->st.flows++;
	}
	count(e, r, ms, tentry_state(te), p);
}

void monitor_reset(struct isp_engine *e, unsigned i)
{
	struct monitor_state *ms = &e->mon[i];

	table_clear(&ms->entries);
	cbloom_clear(&ms->excluded);
}

/* ---- records ---- */

static void u64_value(struct isp_value *v, uint64_t x)
{
	v->type = ISP_T_U64;
	v->is_array = 0;
	v->count = 0;
	v->missing = 0;
	v->v.u = x;
}

/* Slot values of the buffer as an array: element k of each slot. */
static void buffer_array(const struct mrule *r, const struct mon_entry *en, bool current,
			 unsigned k, struct isp_value *v)
{
	memset(v, 0, offsetof(struct isp_value, v));
	v->type = ISP_T_U64;
	v->is_array = 1;
	v->count = (uint8_t)r->nbuf;
	for (unsigned s = 0; s < r->nbuf; s++)
		v->v.arr[s] = current ? en->vals[r->ncounters + s * slot_vals(r) + k] : 0;
}

static void field(struct rec *rec, const struct rec_jkey *k, const struct isp_value *v)
{
	if (rec->mmt) {
		rec_key_prepared(rec, k);
		rec_value(rec, v);
	} else {
		rec_field(rec, k, v);   /* the same text, in one go */
	}
}

/* A field of a rare record (an overflow): its key by name */
static void named_field(struct rec *rec, const char *name, const struct isp_value *v)
{
	rec_key(rec, name);
	rec_value(rec, v);
}

/* A buffer array: MMT's CSV takes one cell per slot, in time order (its
 * arrays otherwise run last hop first). */
static void buffer_field(struct rec *rec, const struct rec_jkey *k, const struct isp_value *v)
{
	if (!rec->mmt) {
		field(rec, k, v);
		return;
	}
	for (unsigned s = 0; s < v->count; s++) {
		struct isp_value one;
		u64_value(&one, v->v.arr[s]);
		field(rec, k, &one);
	}
}

static void write_entry(struct isp_engine *out, unsigned i, struct tentry *te,
			const struct mon_iv *iv, const struct isp_value *keys, enum rec_format format)
{
	const struct mrule *r = &out->prog->monitors[i];
	const struct monitor_state *ms = &out->mon[i];
	const struct mon_entry *en = tentry_state(te);
	const struct rec_jkey *fk = ms->field_keys;
	struct rec *rec = &out->rec;
	const bool current = en->qi == iv->start;
	const uint64_t end = iv->start + iv->len;
	struct isp_value v;

	if (format == FMT_INFLUX) {
		rec_influx_begin(rec, r->name, end);
		for (unsigned k = 0; k < r->nmatch; k++)
			rec_influx_tag(rec, r->match_names[k], &keys[k]);
		u64_value(&v, en->packets);
		rec_influx_field(rec, "packets", &v);
		u64_value(&v, en->bytes);
		rec_influx_field(rec, "bytes", &v);
		v.type = ISP_T_TIMESTAMP;
		v.v.u = en->first_seen;
		if (en->packets)
			rec_influx_field(rec, "first_seen", &v);
		v.v.u = *tentry_seen(te);
		if (en->packets)
			rec_influx_field(rec, "last_seen", &v);
		for (unsigned c = 0; c < r->ncounters; c++) {
			u64_value(&v, en->vals[c]);
			rec_influx_field(rec, r->counters[c].text, &v);
		}
		for (unsigned k = 0; k < slot_vals(r); k++) {
			buffer_array(r, en, current, k, &v);
			rec_influx_field(rec, ms->buffer_names[k], &v);
		}
		return;
	}
	rec_begin(rec, rec_style_of(format), r->name, "flow", 1002, out->prog->probe_id,
		  out->prog->source_name, end);
	rec_time_prepared(rec, &fk[MON_KEY_INTERVAL_START], iv->start);
	for (unsigned k = 0; k < r->nmatch; k++)
		rec_field(rec, &ms->match_keys[k], &keys[k]);
	u64_value(&v, en->packets);
	field(rec, &fk[MON_KEY_PACKETS], &v);
	u64_value(&v, en->bytes);
	field(rec, &fk[MON_KEY_BYTES], &v);
	if (en->packets) {
		rec_time_prepared(rec, &fk[MON_KEY_FIRST_SEEN], en->first_seen);
		rec_time_prepared(rec, &fk[MON_KEY_LAST_SEEN], *tentry_seen(te));
	} else {                /* added by the operator, no packet yet */
		rec_key_prepared(rec, &fk[MON_KEY_FIRST_SEEN]);
		rec_null(rec);
		rec_key_prepared(rec, &fk[MON_KEY_LAST_SEEN]);
		rec_null(rec);
	}
	for (unsigned c = 0; c < r->ncounters; c++) {
		u64_value(&v, en->vals[c]);
		field(rec, &fk[MON_KEY_COUNTERS + c], &v);
	}
	for (unsigned k = 0; k < slot_vals(r); k++) {
		buffer_array(r, en, current, k, &v);
		buffer_field(rec, &fk[MON_KEY_COUNTERS + r->ncounters + k], &v);
	}
}

static int by_first_order(const void *a, const void *b)
{
	const struct mon_entry *x = tentry_state(*(struct tentry *const *)a);
	const struct mon_entry *y = tentry_state(*(struct tentry *const *)b);

	return x->first_order < y->first_order ? -1 : x->first_order > y->first_order;
}

/* The match values of an entry (every engine's table has the same entry
 * layout), and their text in e->keytext; its length. */
static size_t decode_key(struct isp_engine *e, unsigned i, struct tentry *te,
			 struct isp_value *keys)
{
	const struct mrule *r = &e->prog->monitors[i];
	const uint8_t *kb = tentry_key(&e->mon[i].entries, te), *kend = kb + tentry_keylen(te);
	size_t kl = 0;

	e->keytext[0] = 0;
	for (unsigned j = 0; j < r->nmatch; j++) {
		const struct isp_attr_desc *a =
			isp_attr_desc_of(e->sc.reg, &e->prog->slots[r->match_slots[j]]);
		bool present = false;
		kb = engine_key_value(kb, kend, a->type, a->per_hop, &keys[j], &present);
		if (j)
			engine_text_append(e->keytext, sizeof(e->keytext), &kl, "|", NULL);
		engine_text_append(e->keytext, sizeof(e->keytext), &kl, NULL, &keys[j]);
	}
	return kl;
}

size_t monitor_entry_json(struct isp_engine *e, unsigned i, struct tentry *te)
{
	const struct monitor_state *ms = &e->mon[i];
	struct mon_iv iv = ms->cur;
	struct isp_value keys[16];

	if (iv.start == MON_NONE)
		iv = (struct mon_iv){ 0, ms->interval_ns, ms->sub_ns };
	decode_key(e, i, te, keys);
	write_entry(e, i, te, &iv, keys, FMT_JSON);
	return rec_end(&e->rec);
}

void monitor_set(struct isp_engine *e, unsigned i, int op, double value)
{
	struct monitor_state *ms = &e->mon[i];

	switch (op) {
	case ISP_CTL_SAMPLING:
		ms->sampling = value;
		ms->sample_below = sample_threshold(value);
		break;
	case ISP_CTL_INTERVAL:
		ms->interval_ns = (uint64_t)(value * 1e6);
		ms->sub_ns = ms->interval_ns / e->prog->monitors[i].nbuf;
		break;
	case ISP_CTL_OVERFLOW:
		ms->overflow = (uint64_t)value;
		ms->over = false;
		break;
	}
}

unsigned monitor_add_entry(struct isp_engine *e, unsigned i, const uint8_t *key, size_t klen,
			   uint64_t h)
{
	struct monitor_state *ms = &e->mon[i];
	bool created = false;
	struct tentry *te = table_get_hashed(&ms->entries, key, klen, h, e->last_ts, true, &created);

	if (!te || !created)
		return 0;
	struct mon_entry *en = tentry_state(te);
	en->qi = MON_NONE;
	en->first_order = UINT64_MAX;   /* written after the flows with packets */
	ms->st.flows++;
	return 1;
}

/* The records of interval iv: the flows of every engine in src that had
 * packets in it (all with report-unchanged), in the order of their first
 * packets, written by out. */
static void emit_interval(struct isp_engine *out, unsigned i, struct isp_engine *const *src,
			  unsigned n, const struct mon_iv *iv)
{
	const struct mrule *r = &out->prog->monitors[i];
	struct monitor_state *ms = &out->mon[i];
	size_t total = 0, m = 0;

	for (unsigned w = 0; w < n; w++)
		total += src[w]->mon[i].entries.count;
	if (total > ms->emit_cap) {
		struct tentry **grown = realloc(ms->emit, total * sizeof(*grown));
		if (!grown) {
			ms->st.dropped += total;        /* counted, never silent */
			return;
		}
		ms->emit = grown;
		ms->emit_cap = total;
	}
	for (unsigned w = 0; w < n; w++) {
		const struct table *t = &src[w]->mon[i].entries;
		for (uint32_t k = 0; k < t->count; k++) {
			struct tentry *te = table_at(t, k);
			const struct mon_entry *en = tentry_state(te);
			if (en->qi == iv->start || r->report_unchanged)
				ms->emit[m++] = te;
		}
	}
	qsort(ms->emit, m, sizeof(*ms->emit), by_first_order);
	struct isp_value keys[16];
	for (size_t k = 0; k < m; k++) {
		struct tentry *te = ms->emit[k];
		size_t kl = decode_key(out, i, te, keys);
		for (unsigned f = 0, nf = rule_nformats(&r->fmts); f < nf; f++) {
			write_entry(out, i, te, iv, keys, rule_format_at(&r->fmts, r->format, f));
			engine_emit(out, r->name, out->keytext, kl, r->channels, r->nchannels,
				    &r->fmts, f, &ms->st);
		}
	}
	ms->st.windows++;
}

/* One record when the flows pass overflow-threshold; again only once they
 * fell to it or below and passed it again. */
static void check_overflow(struct isp_engine *out, unsigned i, uint64_t entries, uint64_t t)
{
	const struct mrule *r = &out->prog->monitors[i];
	struct monitor_state *ms = &out->mon[i];

	if (!ms->overflow)
		return;
	if (entries <= ms->overflow) {
		ms->over = false;
		return;
	}
	if (ms->over)
		return;
	ms->over = true;
	ms->st.overflows++;
	for (unsigned f = 0, nf = rule_nformats(&r->fmts); f < nf; f++) {
		enum rec_format format = rule_format_at(&r->fmts, r->format, f);
		struct isp_value v;
		if (format == FMT_INFLUX)
			rec_influx_begin(&out->rec, r->name, t);
		else
			rec_begin(&out->rec, rec_style_of(format), r->name, "overflow", 1003,
				  out->prog->probe_id, out->prog->source_name, t);
		void (*put)(struct rec *, const char *, const struct isp_value *) =
			format == FMT_INFLUX ? rec_influx_field : named_field;
		u64_value(&v, entries);
		put(&out->rec, "entries", &v);
		u64_value(&v, ms->overflow);
		put(&out->rec, "overflow_threshold", &v);
		out->keytext[0] = 0;
		engine_emit(out, r->name, out->keytext, 0, r->channels, r->nchannels, &r->fmts, f,
			    &ms->st);
	}
}

/* The time an overflow record carries: the sub-interval boundary that the
 * tick at now passed, or at the end of the input the last packet's. */
static uint64_t overflow_time(const struct monitor_state *ms, uint64_t now, uint64_t last_ts)
{
	return now == UINT64_MAX ? last_ts : now / ms->sub_ns * ms->sub_ns;
}

void monitor_tick(struct isp_engine *e, unsigned i, uint64_t now)
{
	struct monitor_state *ms = &e->mon[i];

	ms->has_done = false;
	if (ms->cur.start == MON_NONE)
		return;
	if (now == UINT64_MAX || now >= ms->cur.start + ms->cur.len) {
		if (e->partial) {
			ms->done = ms->cur;
			ms->has_done = true;
		} else {
			emit_interval(e, i, &e, 1, &ms->cur);
		}
		if (now == UINT64_MAX)
			ms->cur.start = MON_NONE;
		else
			open_interval(ms, now);
	}
	if (!e->partial)
		check_overflow(e, i, ms->entries.count, overflow_time(ms, now, e->last_ts));
}

void monitor_merge(struct isp_engine *m, unsigned i, struct isp_engine *const *w, unsigned n)
{
	uint64_t entries = 0, last = 0;
	bool done = false, seen = false;
	struct mon_iv iv = { 0, 0, 0 };

	for (unsigned k = 0; k < n; k++) {
		struct monitor_state *ws = &w[k]->mon[i];
		entries += ws->entries.count;
		if (w[k]->last_ts > last)
			last = w[k]->last_ts;
		if (ws->has_done) {
			done = true;
			iv = ws->done;
		}
		seen |= ws->cur.start != MON_NONE || ws->has_done;
	}
	if (done)
		emit_interval(m, i, w, n, &iv);
	for (unsigned k = 0; k < n; k++)
		w[k]->mon[i].has_done = false;
	/* every worker ticked at the same time */
	if (seen)
		check_overflow(m, i, entries, overflow_time(&m->mon[i], w[0]->tick_now, last));
}
