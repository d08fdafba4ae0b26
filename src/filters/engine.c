/*
 * engine.c - per-packet dispatch to the rules, keys, record emission.
 */
#include "engine.h"

#include "../core/value.h"

#include <stdlib.h>
#include <string.h>

struct isp_engine *isp_engine_new(const struct isp_program *prog, const struct isp_registry *reg,
				  struct isp_channel **channels, char *err, size_t errlen)
{
	struct isp_engine *e = calloc(1, sizeof(*e));

	if (!e)
		goto oom;
	e->prog = prog;
	e->channels = channels;
	e->rec.iso_sec = -1;
	if (slot_cache_init(&e->sc, reg, prog->slots, prog->nslots) != 0)
		goto oom;
	e->ev = calloc(prog->nevents ? prog->nevents : 1, sizeof(*e->ev));
	e->q = calloc(prog->nqueries ? prog->nqueries : 1, sizeof(*e->q));
	if (!e->ev || !e->q)
		goto oom;
	for (unsigned i = 0; i < prog->nevents; i++)
		if (event_init(e, i) != 0)
			goto oom;
	for (unsigned i = 0; i < prog->nqueries; i++)
		if (query_init(e, i) != 0)
			goto oom;
	return e;
oom:
	snprintf(err, errlen, "out of memory for the rule state");
	isp_engine_free(e);
	return NULL;
}

void isp_program_bind_channels(struct isp_program *prog, struct isp_channel *const *channels)
{
	/* a rule without output-format takes its first channel's format key */
	for (unsigned i = 0; i < prog->nevents; i++) {
		struct erule *r = &prog->events[i];
		if (!r->format_set && r->nchannels && channels[r->channels[0]] &&
		    isp_channel_wants_csv(channels[r->channels[0]]))
			r->format = FMT_CSV;
	}
	for (unsigned i = 0; i < prog->nqueries; i++) {
		struct qrule *r = &prog->queries[i];
		if (!r->format_set && r->nchannels && channels[r->channels[0]] &&
		    isp_channel_wants_csv(channels[r->channels[0]]))
			r->format = FMT_CSV;
	}
}

void isp_engine_packet(struct isp_engine *e, const struct isp_packet *p)
{
	const struct isp_program *prog = e->prog;

	slot_cache_next(&e->sc);
	e->order++;
	if (p->ts_ns > e->last_ts)
		e->last_ts = p->ts_ns;
	for (unsigned i = 0; i < prog->nqueries; i++)
		query_packet(e, i, p);
	for (unsigned i = 0; i < prog->nevents; i++)
		event_packet(e, i, p);
}

void isp_engine_tick(struct isp_engine *e, uint64_t now_ns)
{
	for (unsigned i = 0; i < e->prog->nqueries; i++)
		query_advance(e, i, now_ns);
}

void isp_engine_finish(struct isp_engine *e)
{
	for (unsigned i = 0; i < e->prog->nqueries; i++)
		query_flush(e, i);
}

void isp_engine_print_stats(const struct isp_engine *e, FILE *out)
{
	for (unsigned i = 0; i < e->prog->nevents; i++) {
		const struct rule_stats *s = &e->ev[i].st;
		fprintf(out, "intspect: event-report %s: %llu matched, %llu records, %llu dropped, "
			"%llu keys evicted\n", e->prog->events[i].name,
			(unsigned long long)s->matched, (unsigned long long)s->records,
			(unsigned long long)s->dropped,
			(unsigned long long)e->ev[i].keys.evictions);
	}
	for (unsigned i = 0; i < e->prog->nqueries; i++) {
		const struct rule_stats *s = &e->q[i].st;
		fprintf(out, "intspect: query-report %s: %llu matched, %llu windows, %llu records, "
			"%llu dropped, %llu packets beyond max-groups\n", e->prog->queries[i].name,
			(unsigned long long)s->matched, (unsigned long long)s->windows,
			(unsigned long long)s->records, (unsigned long long)s->dropped,
			(unsigned long long)e->q[i].groups.overflows);
	}
}

void isp_engine_free(struct isp_engine *e)
{
	if (!e)
		return;
	for (unsigned i = 0; e->ev && i < e->prog->nevents; i++) {
		const struct erule *r = &e->prog->events[i];
		table_free(&e->ev[i].keys);
		rec_jkey_free(&e->ev[i].event_key);
		for (unsigned k = 0; e->ev[i].attr_keys && k < r->nattr; k++)
			rec_jkey_free(&e->ev[i].attr_keys[k]);
		free(e->ev[i].attr_keys);
	}
	for (unsigned i = 0; e->q && i < e->prog->nqueries; i++) {
		const struct qrule *r = &e->prog->queries[i];
		table_free(&e->q[i].groups);
		arena_free(&e->q[i].hops);
		for (unsigned k = 0; e->q[i].group_keys && k < r->ngroup; k++)
			rec_jkey_free(&e->q[i].group_keys[k]);
		for (unsigned k = 0; e->q[i].item_keys && k < r->nitems; k++)
			rec_jkey_free(&e->q[i].item_keys[k]);
		free(e->q[i].group_keys);
		free(e->q[i].item_keys);
	}
	free(e->ev);
	free(e->q);
	slot_cache_free(&e->sc);
	free(e);
}

size_t engine_key_max(const struct isp_engine *e, const int *slots, unsigned n)
{
	size_t max = 0;

	for (unsigned i = 0; i < n; i++) {
		const struct isp_attr_desc *a = isp_attr_desc_of(e->sc.reg, &e->prog->slots[slots[i]]);
		max += 1 + (a->per_hop ? 5 + 8u * ISP_MAX_HOPS : a->type == ISP_T_STRING ? ISP_STR_MAX : 16);
	}
	return max ? max : 1;
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

	for (unsigned i = 0; i < n; i++) {
		const struct isp_value *v = slot_get(&e->sc, p, (unsigned)slots[i]);
		size_t need = 1 + (v ? (v->is_array ? 5 + v->count * 8u :
					v->type == ISP_T_STRING ? strlen(v->v.str) + 1 : 16) : 0);
		if (len + need > cap)
			break;
		buf[len++] = v ? 1 : 0;
		if (!v)
			continue;
		if (v->is_array) {
			buf[len++] = v->count;
			memcpy(buf + len, &v->missing, 4);
			len += 4;
			memcpy(buf + len, v->v.arr, v->count * 8u);
			len += v->count * 8u;
		} else if (v->type == ISP_T_STRING) {
			size_t sl = strlen(v->v.str) + 1;
			memcpy(buf + len, v->v.str, sl);
			len += sl;
		} else {
			/* 16 bytes cover IPv6; scalars sit in the first 8 */
			memcpy(buf + len, v->type == ISP_T_IPV6 || v->type == ISP_T_MAC ?
			       (const void *)v->v.ip6 : (const void *)&v->v.u, 16);
			if (v->type != ISP_T_IPV6 && v->type != ISP_T_MAC)
				memset(buf + len + 8, (v->missing & 1), 8);
			len += 16;
		}
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

size_t engine_key_text(struct isp_engine *e, const struct isp_packet *p, const int *slots,
		       unsigned n, char *out, size_t cap)
{
	size_t len = 0;
	bool first = true;

	if (cap)
		out[0] = 0;
	for (unsigned i = 0; i < n; i++) {
		const struct isp_value *v = slot_get(&e->sc, p, (unsigned)slots[i]);
		if (!v)
			continue;
		if (!first)
			engine_text_append(out, cap, &len, "|", NULL);
		engine_text_append(out, cap, &len, NULL, v);
		first = false;
	}
	return len;
}

void engine_emit(struct isp_engine *e, const char *report, const char *key, size_t keylen,
		 const int *channels, unsigned nchannels, struct rule_stats *st)
{
	size_t len = rec_end(&e->rec);

	if (len == 0) {
		st->dropped++;
		return;
	}
	st->records++;
	struct isp_record r = { report, key ? key : "", key ? keylen : 0, e->rec.buf, len };
	for (unsigned i = 0; i < nchannels; i++) {
		struct isp_channel *ch = e->channels ? e->channels[channels[i]] : NULL;
		if (!ch || !isp_channel_submit(ch, &r))
			st->dropped++;
	}
}
