/*
 * event.c - event reports: report a packet when its event attribute is
 * present (and `where` holds) and its delta-cond values changed since the
 * last report of the same delta-key (one global memory without a key,
 * as MMT-Probe keeps).
 *
 * "Changed" is, per rule: any value differs (default); a value moved to
 * another band of width delta-band; a value moved by more than
 * delta-threshold from the last reported one. A new key always reports;
 * keepalive-ms re-reports a key that has not reported for that long.
 * The comparison is against the last *reported* values, so slow drift
 * still reports once it adds up.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/value.h"
#include "engine_int.h"

/* Per-key state (struct ev_key, engine_int.h): signature of the last
 * reported delta values, the last reported values themselves
 * (threshold), and when it reported. */

struct ev_vals {
	uint32_t count;
	uint32_t missing;
	double v[ISP_MAX_HOPS];
};

static size_t key_state_size(const struct erule *r)
{
	return sizeof(struct ev_key) + (r->threshold >= 0 ? r->ndelta * sizeof(struct ev_vals) : 0);
}


/* Is the slot's attribute text-like (an address, a string)? MMT-Probe
 * writes "" for such an attribute when it is absent, 0 for the others. */
static bool slot_is_text(const struct isp_engine *e, int slot)
{
	const struct isp_attr_desc *a = isp_attr_desc_of(e->sc.reg, &e->prog->slots[slot]);

	return a && (a->type == ISP_T_IPV4 || a->type == ISP_T_IPV6 || a->type == ISP_T_MAC ||
		     a->type == ISP_T_STRING);
}

void event_bind(struct isp_engine *e, unsigned i)
{
	const struct erule *r = &e->prog->events[i];
	struct event_state *es = &e->ev[i];

	for (unsigned w = 0; w < 2; w++) {
		struct ev_fields *wf = &es->wf[w];
		wf->n = 0;
		if (r->event_slot >= 0) {
			wf->key[wf->n] = es->event_key;
			wf->slot[wf->n++] = r->event_slot;
		}
		for (unsigned k = 0; k < r->nattr; k++) {
			if (w == 0 && r->attr_slots[k] == r->event_slot)
				continue;       /* written once */
			wf->key[wf->n] = &es->attr_keys[k];
			wf->slot[wf->n++] = r->attr_slots[k];
		}
		for (unsigned k = 0; k < wf->n; k++)
			wf->at[k] = &e->sc.s[wf->slot[k]];
	}
}

int event_init(struct isp_engine *e, unsigned i)
{
	const struct erule *r = &e->prog->events[i];
	struct event_state *es = &e->ev[i];

	es->name_len = strlen(r->name);
	int rc = table_init(&es->keys, r->nkey ? r->max_keys : 1, key_state_size(r),
			    engine_key_max(e, r->key_slots, r->nkey), true);
	if (rc != 0)
		return rc;
	es->event_key = calloc(1, sizeof(*es->event_key));
	if (!es->event_key)
		return -1;
	if (r->event_slot >= 0 &&
	    rec_jkey_make(es->event_key, e->prog->slot_names[r->event_slot]) != 0)
		return -1;
	es->attr_keys = calloc(r->nattr ? r->nattr : 1, sizeof(*es->attr_keys));
	if (!es->attr_keys)
		return -1;
	for (unsigned k = 0; k < r->nattr; k++) {
		if (rec_jkey_make(&es->attr_keys[k], r->attr_names[k]) != 0)
			return -1;
		es->attr_keys[k].mmt_quoted = slot_is_text(e, r->attr_slots[k]);
	}
	if (r->event_slot >= 0)
		es->event_key->mmt_quoted = slot_is_text(e, r->event_slot);
	for (unsigned w = 0; w < 2; w++) {
		struct ev_fields *wf = &es->wf[w];
		wf->key = calloc(r->nattr + 1, sizeof(*wf->key));
		wf->slot = calloc(r->nattr + 1, sizeof(*wf->slot));
		wf->at = calloc(r->nattr + 1, sizeof(*wf->at));
		if (!wf->key || !wf->slot || !wf->at)
			return -1;
	}
	event_bind(e, i);
	if (r->idle_ns) {
		es->key_keys = calloc(r->nkey ? r->nkey : 1, sizeof(*es->key_keys));
		if (!es->key_keys)
			return -1;
		for (unsigned k = 0; k < r->nkey; k++)
			if (rec_jkey_make(&es->key_keys[k], e->prog->slot_names[r->key_slots[k]]) != 0)
				return -1;
	}
	return 0;
}

static double as_double(const struct isp_value *v, unsigned k)
{
	uint64_t raw = v->is_array ? v->v.arr[k] : v->v.u;

	return v->type == ISP_T_TIMESTAMP ? (double)(raw / 1000u) : (double)raw;
}

/*
 * Signature of the delta values as they are: per value a word of its
 * presence, length and missing mask, then its words as they are held, all
 * hashed at once. Only ever compared with another of these, so it needs
 * none of a key's narrowing (engine_key: 4 or 8 bytes an element, chosen
 * element by element), which cost half the signature. false: none present.
 */
static bool delta_sig_plain(struct isp_engine *e, const struct erule *r,
			    const struct isp_packet *p, uint64_t *sig)
{
	uint8_t *buf = e->keybuf;
	const bool hops = e->hop >= 0;
	size_t len = 0;
	bool any = false;

	for (unsigned i = 0; i < r->ndelta; i++) {
		const struct isp_value *v = engine_get_in(e, p, r->delta_slots[i], hops);
		uint64_t head = 0;
		size_t n = 0;
		const void *body = NULL;

		if (v) {
			any = true;
			if (v->is_array) {
				body = v->v.arr;
				n = (size_t)v->count * 8;
			} else if (v->type == ISP_T_STRING) {
				body = v->v.str;
				n = strnlen(v->v.str, ISP_STR_MAX);
			} else if (v->type == ISP_T_IPV6 || v->type == ISP_T_MAC) {
				body = v->v.ip6;
				n = 16;
			} else {
				body = &v->v.u;
				n = 8;
			}
			/* the words' length in the head: values of any kind
			 * follow one another without ambiguity */
			head = 1 | (uint64_t)v->is_array << 1 | (uint64_t)n << 8 |
			       (uint64_t)v->missing << 32;
		}
		if (len + 8 + n > sizeof(e->keybuf))
			break;          /* as engine_key: the values that fit */
		memcpy(buf + len, &head, 8);
		if (n)
			memcpy(buf + len + 8, body, n);
		len += 8 + n;
	}
	*sig = table_hash(buf, len);
	return any;
}

/* Signature of the delta values (or of their bands). false: none present. */
static bool delta_signature(struct isp_engine *e, const struct erule *r,
			    const struct isp_packet *p, uint64_t *sig)
{
	uint8_t *buf = e->keybuf;
	size_t len = 0;
	bool any = false;

	if (r->band <= 0)
		return delta_sig_plain(e, r, p, sig);
	for (unsigned i = 0; i < r->ndelta; i++) {
		const struct isp_value *v = engine_get(e, p, r->delta_slots[i]);
		if (len + 1 + 8 * (ISP_MAX_HOPS + 2) > sizeof(e->keybuf))
			break;
		buf[len++] = v != NULL;
		if (!v)
			continue;
		any = true;
		unsigned n = v->is_array ? v->count : 1;
		buf[len++] = (uint8_t)n;
		for (unsigned k = 0; k < n; k++) {
			bool missing = v->missing & (UINT32_C(1) << k);
			int64_t band = missing ? INT64_MIN : (int64_t)floor(as_double(v, k) / r->band);
			memcpy(buf + len, &band, 8);
			len += 8;
		}
	}
	*sig = table_hash(buf, len);
	return any;
}

static void load_values(struct isp_engine *e, const struct erule *r, const struct isp_packet *p,
			struct ev_vals *out)
{
	for (unsigned i = 0; i < r->ndelta; i++) {
		const struct isp_value *v = engine_get(e, p, r->delta_slots[i]);
		struct ev_vals *o = &out[i];
		o->count = v ? (v->is_array ? v->count : 1) : 0;
		o->missing = v ? v->missing : 0;
		for (unsigned k = 0; k < o->count; k++)
			o->v[k] = as_double(v, k);
	}
}

/* delta-threshold: any value moved by more than the threshold, or
 * appeared, disappeared, or changed its hop count. */
static bool beyond_threshold(const struct erule *r, const struct ev_vals *old,
			     const struct ev_vals *cur)
{
	for (unsigned i = 0; i < r->ndelta; i++) {
		if (old[i].count != cur[i].count || old[i].missing != cur[i].missing)
			return true;
		for (unsigned k = 0; k < cur[i].count; k++)
			if (!(cur[i].missing & (UINT32_C(1) << k)) &&
			    fabs(cur[i].v[k] - old[i].v[k]) > r->threshold)
				return true;
	}
	return false;
}

/* A 32-bit timestamp (v0.5 and v1.0 carry 4 bytes) into the capture
 * time's epoch: the time nearest to `now` with those low 32 bits. */
static uint64_t widen32(uint64_t t, uint64_t now)
{
	const uint64_t wrap = UINT64_C(1) << 32;

	if (t >= wrap)
		return t;
	uint64_t w = (now & ~(wrap - 1)) | t;
	if (w > now && w - now > wrap / 2 && w >= wrap)
		w -= wrap;
	else if (w < now && now - w > wrap / 2)
		w += wrap;
	return w;
}

/* What stamps a record of r: the capture time, or its `timestamp`
 * attribute (a per-hop rule: the hop's value; else hop 0's, or the last
 * hop's for egress); the capture time when that is absent. */
static uint64_t record_time_of(struct isp_engine *e, const struct erule *r,
			       const struct isp_packet *p);

/* Inline for the usual rule, stamped with the capture time. */
static inline uint64_t record_time(struct isp_engine *e, const struct erule *r,
				   const struct isp_packet *p)
{
	return r->time_slot < 0 ? p->ts_ns : record_time_of(e, r, p);
}

static uint64_t record_time_of(struct isp_engine *e, const struct erule *r,
			       const struct isp_packet *p)
{
	const struct isp_value *v = engine_get(e, p, r->time_slot);
	uint64_t t;

	if (!v)
		return p->ts_ns;
	if (v->is_array) {
		unsigned k = r->time_last && v->count ? v->count - 1u : 0;
		if (!v->count || (v->missing & (UINT32_C(1) << k)))
			return p->ts_ns;
		t = v->v.arr[k];
	} else {
		t = v->v.u;
	}
	return widen32(t, p->ts_ns);
}

/* Line protocol: the delta-key's values are the tags, the event and the
 * attributes the fields (an attribute that is a tag is not repeated). */
static void write_influx(struct isp_engine *e, const struct erule *r, const struct isp_packet *p)
{
	struct rec *rec = &e->rec;
	char *const *names = e->prog->slot_names;

	/* InfluxDB keeps one point a series and time: the reports coalesced
	 * in one packet (its time) are told apart by their index, in ns */
	rec_influx_begin(rec, r->name, record_time(e, r, p) + p->report_index);
	for (unsigned k = 0; k < r->nkey; k++)
		rec_influx_tag(rec, names[r->key_slots[k]], engine_get(e, p, r->key_slots[k]));
	for (int i = -1; i < (int)r->nattr; i++) {
		int slot = i < 0 ? r->event_slot : r->attr_slots[i];
		if (slot < 0 || (i >= 0 && slot == r->event_slot))
			continue;
		bool tag = false;
		for (unsigned k = 0; k < r->nkey; k++)
			tag |= r->key_slots[k] == slot;
		if (!tag)
			rec_influx_field(rec, names[slot], engine_get(e, p, slot));
	}
}

static void write_record(struct isp_engine *e, unsigned ri, const struct isp_packet *p,
			 enum rec_format format)
{
	const struct erule *r = &e->prog->events[ri];
	const struct event_state *es = &e->ev[ri];
	struct rec *rec = &e->rec;
	const struct isp_program *prog = e->prog;

	if (format == FMT_INFLUX) {
		write_influx(e, r, p);
		return;
	}
	if (format == FMT_TEMPLATE) {
		/* MMT: the template is written as is, values spliced in */
		jsonw_init(&rec->w, rec_out(rec), REC_MAX - 1);
		rec->csv = true;        /* no enclosing object */
		rec->mmt = false;
		for (unsigned i = 0; i < r->ntmpl; i++) {
			jsonw_raw(&rec->w, r->tmpl[i].text, strlen(r->tmpl[i].text));
			if (r->tmpl[i].slot < 0)
				continue;
			const struct isp_value *v = engine_get(e, p, r->tmpl[i].slot);
			rec->w.need_comma = false;
			if (v)
				isp_value_json(&rec->w, v, 6);
			else
				jsonw_null(&rec->w);
		}
		return;
	}
	rec_begin(rec, rec_style_of(format), r->name, "event", 1000, prog->probe_id,
		  prog->source_name, record_time(e, r, p));
	/* the fields, listed at start-up (MMT-Probe writes every attribute
	 * listed, the event's too), gathered and written REC_BATCH at a time
	 * (rec_fields); a per-hop rule writes each value as the hop has it */
	const struct ev_fields *wf = &es->wf[rec->mmt];
	const struct rec_jkey *const *key = wf->key;
	const int *slot = wf->slot;
	struct slot *const *at = wf->at;
	struct slot_cache *const sc = &e->sc;
	const struct isp_value *v[REC_BATCH];
	if (e->hop < 0 && (rec->mmt || !rec->csv)) {
		rec_slot_fields(rec, key, at, wf->n, sc, p);
	} else {
		for (unsigned left = wf->n, n; left; left -= n, key += n, slot += n, at += n) {
			n = left < REC_BATCH ? left : REC_BATCH;
			if (e->hop < 0) {
				for (unsigned i = 0; i < n; i++)
					v[i] = slot_value(sc, p, at[i]);
			} else {
				for (unsigned i = 0; i < n; i++)
					v[i] = engine_get_in(e, p, slot[i], true);
			}
			rec_fields(rec, key, v, n);
		}
	}
	/* MMT-Probe puts a comma after the event's value, then the
	 * attributes: with none, the row ends with an empty cell */
	if (rec->mmt && !r->nattr && r->event_slot >= 0)
		jsonw_raw(&rec->w, ",", 1);
}

/* The records of rule i for p, one per format (its key text in
 * e->keytext, kl bytes); inline in event_run, as it was before records
 * could also be written at a commit (event_write_records). */
static inline __attribute__((always_inline)) void
write_records(struct isp_engine *e, unsigned i, const struct isp_packet *p, size_t kl)
{
	const struct erule *r = &e->prog->events[i];
	struct event_state *es = &e->ev[i];

	for (unsigned f = 0, nf = rule_nformats(&r->fmts); f < nf; f++) {
		engine_emit_begin(e, r->name, es->name_len, e->keytext, kl, r->channels, r->nchannels,
				  &r->fmts, f);
		write_record(e, i, p, rule_format_at(&r->fmts, r->format, f));
		engine_emit(e, r->name, e->keytext, kl, r->channels, r->nchannels, &r->fmts, f,
			    &es->st);
	}
}

/* The item's delta-key bytes and their hash for a table of rule i: the
 * key built ahead (ahead.c), or built now, cut to what the table keeps
 * and hashed as table_get does. */
static inline const uint8_t *item_key(struct isp_engine *e, unsigned i, const struct isp_packet *p,
				      bool hops, const struct table *t, size_t *klen, uint64_t *h)
{
	const struct erule *r = &e->prog->events[i];
	const uint8_t *key;

	if (!hops && (key = engine_take_prepared(e, i, &e->ev[i].st.ahead, klen, h)))
		return key;
	size_t n = r->nkey ? engine_key(e, p, r->key_slots, r->nkey, e->keybuf,
					sizeof(e->keybuf)) : 0;
	*klen = n < t->key_max ? n : t->key_max;
	*h = table_hash(e->keybuf, *klen);
	return e->keybuf;
}

/* Several workers settling events in order (event_batch.c): the key's
 * memory in this worker's batch. The key's first item here reports or
 * not once the batch before is committed (*cond: its entry, to settle);
 * each later one reports when its signature differs from the item's
 * before, which is what comparing with the last reported one gives
 * (without a threshold, an item that does not report has its
 * signature). */
static inline __attribute__((always_inline)) bool
batch_key(struct isp_engine *e, unsigned i, const struct isp_packet *p, bool hops, uint64_t sig,
	  uint32_t *cond)
{
	struct event_state *es = &e->ev[i];
	struct table *t = &es->settle[e->log_cur];
	size_t klen;
	uint64_t h;
	bool created;
	const uint8_t *key = item_key(e, i, p, hops, t, &klen, &h);
	struct tentry *te = table_get_hashed(t, key, klen, h, p->ts_ns, false, &created);
	if (!te) {              /* more keys in one batch than it holds: counted */
		es->st.dropped++;
		return false;
	}
	struct ev_first *f = tentry_state(te);
	f->last_ts = p->ts_ns;
	if (created) {
		f->hash = h;
		f->first_sig = f->last_sig = sig;
		*cond = (uint32_t)(((uint8_t *)te - t->base) >> 3);
		return true;
	}
	bool fire = sig != f->last_sig;
	f->last_sig = sig;
	return fire;
}

/* The rule on one item, or on one hop of it (hops: e->hop is set).
 * Inlined into both callers, so that an item-wide rule reads its slots as
 * it did before per-hop rules existed. */
static inline __attribute__((always_inline)) void
event_run(struct isp_engine *e, unsigned i, const struct isp_packet *p, const bool hops)
{
	const struct erule *r = &e->prog->events[i];
	struct event_state *es = &e->ev[i];

	if (r->event_slot >= 0 && !engine_get_in(e, p, r->event_slot, hops))
		return;
	es->st.matched++;

	bool fire = true;
	struct ev_key *k = NULL;
	uint64_t sig = 0;
	uint32_t cond = 0;
	struct ev_vals cur[8];
	bool thr = r->threshold >= 0 && r->ndelta <= 8;
	if (r->ndelta && e->settle) {
		if (!delta_signature(e, r, p, &sig) || !batch_key(e, i, p, hops, sig, &cond))
			return;
	} else if (r->ndelta) {
		if (!delta_signature(e, r, p, &sig))
			return;         /* none of the delta attributes: nothing to compare */
		bool created;
		size_t klen;
		uint64_t h;
		const uint8_t *key = item_key(e, i, p, hops, &es->keys, &klen, &h);
		struct tentry *te = table_get_hashed(&es->keys, key, klen, h, p->ts_ns, true,
						     &created);
		if (!te)
			return;
		k = tentry_state(te);
		if (thr)
			load_values(e, r, p, cur);
		if (!created) {
			if (thr)
				fire = beyond_threshold(r, (struct ev_vals *)(k + 1), cur);
			else
				fire = sig != k->sig;
			if (!fire && r->keepalive_ns && p->ts_ns >= k->last_report + r->keepalive_ns)
				fire = true;
		}
	}
	if (!fire)
		return;
	if (k) {
		k->sig = sig;
		k->last_report = p->ts_ns;
		if (thr)
			memcpy(k + 1, cur, r->ndelta * sizeof(struct ev_vals));
	}
	size_t kl = 0;
	/* asked at the first record: the engine's channels are open and stay */
	if (!es->wants_key)
		es->wants_key = engine_channels_use_key(e, r->channels, r->nchannels) ? 2 : 1;
	if (es->wants_key == 1)
		e->keytext[0] = 0;
	else if (r->nkey)
		kl = engine_key_text(e, p, r->key_slots, r->nkey, e->keytext, sizeof(e->keytext));
	else
		kl = engine_key_text(e, p, r->flow_slots, r->nflow, e->keytext, sizeof(e->keytext));
	/* settled in order: into the log, until the batch is committed */
	if (e->settle) {
		e->log_cond = cond;
		e->log_rule = (uint16_t)i;
		if (cond && es->defer_first && event_log_defer(e, i, p, kl))
			return;
		e->logging = true;
	}
	write_records(e, i, p, kl);
	e->logging = false;
}

void event_write_records(struct isp_engine *e, unsigned i, const struct isp_packet *p, size_t kl)
{
	write_records(e, i, p, kl);
}

void event_packet(struct isp_engine *e, unsigned i, const struct isp_packet *p)
{
	const struct erule *r = &e->prog->events[i];
	struct cx_ctx ctx = { &e->sc, p, -1 };

	if (r->where && !cx_true(r->where, &ctx))
		return;         /* per item, per-hop rule or not */
	if (!r->per_hop) {
		event_run(e, i, p, false);
		return;
	}
	unsigned nh = engine_rule_hops(e, r, p);
	for (unsigned h = 0; h < nh; h++) {
		e->hop = (int)h;
		if (engine_hop_is_mine(e, p, i))
			event_run(e, i, p, true);
	}
	e->hop = -1;
}

uint64_t event_sweep_period(const struct erule *r)
{
	if (!r->idle_ns)
		return 0;
	return r->idle_ns / 4 > 1000000 ? r->idle_ns / 4 : 1000000;
}

/* An expired key's record: the rule's name, type "expired", the sweep's
 * time, the delta-key's values and the key's last packet time (line
 * protocol: the values as tags, fields expired=1i and last_seen). */
static void write_expired(struct isp_engine *e, unsigned i, struct tentry *te, uint64_t now,
			  enum rec_format format)
{
	const struct erule *r = &e->prog->events[i];
	struct event_state *es = &e->ev[i];
	struct rec *rec = &e->rec;
	const struct isp_program *prog = e->prog;
	const uint8_t *kb = tentry_key(&es->keys, te), *kend = kb + tentry_keylen(te);
	struct isp_value v;

	if (format == FMT_INFLUX)
		rec_influx_begin(rec, r->name, now);
	else
		rec_begin(rec, rec_style_of(format == FMT_TEMPLATE ? FMT_JSON : format), r->name,
			  "expired", 1001, prog->probe_id, prog->source_name, now);
	for (unsigned k = 0; k < r->nkey; k++) {
		const struct isp_attr_desc *a = isp_attr_desc_of(e->sc.reg, &prog->slots[r->key_slots[k]]);
		bool present = false;
		/* a per-hop rule keys by each hop's value, a scalar */
		kb = engine_key_value(kb, kend, a->type, a->per_hop && !r->per_hop, &v, &present);
		if (format == FMT_INFLUX) {
			rec_influx_tag(rec, prog->slot_names[r->key_slots[k]], present ? &v : NULL);
		} else if (rec->mmt) {
			rec_mmt_field(rec, &es->key_keys[k], present ? &v : NULL);
		} else {
			rec_key_prepared(rec, &es->key_keys[k]);
			if (present)
				rec_value(rec, &v);
			else
				rec_null(rec);
		}
	}
	if (format == FMT_INFLUX) {
		struct isp_value one = { .type = ISP_T_U8 }, last = { .type = ISP_T_TIMESTAMP };
		one.v.u = 1;
		last.v.u = *tentry_seen(te);
		rec_influx_field(rec, "expired", &one);
		rec_influx_field(rec, "last_seen", &last);
	} else {
		rec_time(rec, "last_seen", *tentry_seen(te));
	}
}

void event_expire(struct isp_engine *e, unsigned i, uint64_t now)
{
	const struct erule *r = &e->prog->events[i];
	struct event_state *es = &e->ev[i];
	struct table *t = &es->keys;

	if (now < r->idle_ns)
		return;
	/* from the end: a removal moves the last entry into the hole */
	for (uint32_t k = t->count; k-- > 0;) {
		struct tentry *te = table_at(t, k);
		if (*tentry_seen(te) > now - r->idle_ns)
			continue;
		e->keytext[0] = 0;
		for (unsigned f = 0, nf = rule_nformats(&r->fmts); f < nf; f++) {
			write_expired(e, i, te, now, rule_format_at(&r->fmts, r->format, f));
			engine_emit(e, r->name, e->keytext, 0, r->channels, r->nchannels, &r->fmts, f,
				    &es->st);
		}
		es->st.expired++;
		table_remove(t, te);
	}
}
