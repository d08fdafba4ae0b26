/*
 * control.c - requests of the control socket on the running rules
 * (engine.h: isp_rules_control). A request becomes a command posted to
 * every engine's mailbox; each worker applies it on its own thread between
 * two items, when the pipeline asks it to publish its counters
 * (isp_pipeline_sample), so nothing on the packet path takes a lock or
 * reads a flag. The caller waits until every worker applied it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/value.h"
#include "engine.h"
#include "engine_int.h"
#include "rules_int.h"

#define CTL_WAIT_MS 2000

struct ctl_cmd {
	enum isp_ctl_op op;
	char kind;                      /* 'e'vent, 'q'uery, 'm'onitor */
	unsigned index;
	double number;
	bool has_key;
	struct isp_value vals[16];      /* the key's values, in match order */
	unsigned nvals;
	uint8_t key[16 * (6 + 8 * ISP_MAX_HOPS) + ISP_STR_MAX * 16];
	size_t klen;
	uint64_t h;
	_Atomic unsigned refs;          /* the caller and each mailbox holding it */
	_Atomic unsigned acks;
	/* per engine (workers by id): what it did, and get's entries as JSON */
	uint64_t count[ISP_MAX_WORKERS];
	char *out[ISP_MAX_WORKERS];
	size_t outlen[ISP_MAX_WORKERS];
};

static void cmd_put(struct ctl_cmd *c)
{
	if (atomic_fetch_sub(&c->refs, 1) != 1)
		return;
	for (unsigned i = 0; i < ISP_MAX_WORKERS; i++)
		free(c->out[i]);
	free(c);
}

/* ---- on the engine's thread ---- */

static uint64_t *bit_of(struct isp_engine *e, char kind, unsigned i)
{
	return kind == 'e' ? &e->ebit[i] : kind == 'q' ? &e->qbit[i] : &e->mbit[i];
}

static void set_enabled(struct isp_engine *e, const struct ctl_cmd *c, bool on)
{
	const struct isp_program *prog = e->prog;
	unsigned at = c->kind == 'e' ? c->index : c->kind == 'q' ? prog->nevents + c->index :
		      prog->nevents + prog->nqueries + c->index;
	uint64_t *bit = bit_of(e, c->kind, c->index);

	/* a rule runs when an item's `what` has its bit: 0 never matches */
	if (!on && *bit) {
		e->saved_bit[at] = *bit;
		*bit = 0;
	} else if (on && !*bit) {
		*bit = e->saved_bit[at];
	}
}

/* get: one flow as a JSON object (the record it would write now) */
static void append_entry(struct isp_engine *e, const struct ctl_cmd *c, struct tentry *te,
			 char **out, size_t *len, size_t *cap)
{
	size_t n = monitor_entry_json(e, c->index, te);

	if (*len + n + 2 > *cap) {
		size_t want = (*cap ? *cap * 2 : 4096) + n;
		char *grown = realloc(*out, want);
		if (!grown)
			return;
		*out = grown;
		*cap = want;
	}
	if (*len)
		(*out)[(*len)++] = ',';
	memcpy(*out + *len, e->rec.w.buf, n);
	*len += n;
	(*out)[*len] = 0;
}

static void apply(struct isp_engine *e, struct ctl_cmd *c, struct isp_engine *merger)
{
	struct monitor_state *ms = c->kind == 'm' ? &e->mon[c->index] : NULL;
	unsigned self = e->self;
	bool mine = !c->has_key ||
		    engine_owner_of_values(e, c->vals, c->nvals, c->key, c->klen) == self;
	struct tentry *te = ms && c->has_key ?
			    table_find_hashed(&ms->entries, c->key, c->klen, c->h) : NULL;

	switch (c->op) {
	case ISP_CTL_ENABLE:
	case ISP_CTL_DISABLE:
		set_enabled(e, c, c->op == ISP_CTL_ENABLE);
		break;
	case ISP_CTL_RESET:
		c->count[self] = ms->entries.count;
		monitor_reset(e, c->index);
		break;
	case ISP_CTL_SAMPLING:
		monitor_set(e, c->index, ISP_CTL_SAMPLING, c->number);
		break;
	case ISP_CTL_INTERVAL:
	case ISP_CTL_OVERFLOW:
		monitor_set(e, c->index, c->op, c->number);
		if (merger)     /* it writes the records and checks the threshold */
			monitor_set(merger, c->index, c->op, c->number);
		break;
	case ISP_CTL_ENTRY_ADD:
		/* every engine keeps the same filter; the owner the entry */
		cbloom_del(&ms->excluded, c->h);
		if (mine && !te)
			c->count[self] = monitor_add_entry(e, c->index, c->key, c->klen, c->h);
		break;
	case ISP_CTL_ENTRY_REMOVE:
		cbloom_add(&ms->excluded, c->h);
		if (te) {
			table_remove(&ms->entries, te);
			c->count[self] = 1;
		}
		break;
	case ISP_CTL_GET: {
		size_t len = 0, cap = 0;
		if (c->has_key) {
			if (te)
				append_entry(e, c, te, &c->out[self], &len, &cap);
		} else {
			for (uint32_t k = 0; k < ms->entries.count; k++)
				append_entry(e, c, table_at(&ms->entries, k), &c->out[self], &len, &cap);
		}
		c->outlen[self] = len;
		c->count[self] = c->has_key ? te != NULL : ms->entries.count;
		break;
	}
	}
}

void engine_control_apply(struct isp_engine *e)
{
	struct ctl_cmd *q[ENGINE_CTL_MAX];
	unsigned n;

	pthread_mutex_lock(&e->ctl_mu);
	n = e->ctl_n;
	memcpy(q, e->ctl_q, n * sizeof(*q));
	e->ctl_n = 0;
	pthread_mutex_unlock(&e->ctl_mu);
	for (unsigned i = 0; i < n; i++) {
		/* the first worker applies settings to the merger too: no merge
		 * runs while it is here (a merge holds every worker) */
		apply(e, q[i], e->self == 0 ? e->merger : NULL);
		atomic_fetch_add(&q[i]->acks, 1);
		cmd_put(q[i]);
	}
}

void engine_control_drop(struct isp_engine *e)
{
	pthread_mutex_lock(&e->ctl_mu);
	for (unsigned i = 0; i < e->ctl_n; i++)
		cmd_put(e->ctl_q[i]);
	e->ctl_n = 0;
	pthread_mutex_unlock(&e->ctl_mu);
}

/* ---- on the caller's thread ---- */

/* A key part from its text, as the attribute's type has it. */
bool engine_parse_value(const struct isp_attr_desc *a, const char *text, struct isp_value *v)
{
	char *end;

	memset(v, 0, sizeof(*v));
	v->type = a->type;
	if (a->per_hop) {
		/* "1,2,3": the hops' values */
		v->is_array = 1;
		for (const char *s = text; *s;) {
			if (v->count == ISP_MAX_HOPS)
				return false;
			errno = 0;
			v->v.arr[v->count++] = strtoull(s, &end, 0);
			if (errno || end == s || (*end && *end != ','))
				return false;
			s = *end ? end + 1 : end;
		}
		return true;
	}
	switch (a->type) {
	case ISP_T_IPV4: {
		struct in_addr in;
		if (inet_pton(AF_INET, text, &in) != 1)
			return false;
		v->v.u = ntohl(in.s_addr);
		return true;
	}
	case ISP_T_IPV6:
		return inet_pton(AF_INET6, text, v->v.ip6) == 1;
	case ISP_T_MAC:
		return sscanf(text, "%2hhx:%2hhx:%2hhx:%2hhx:%2hhx:%2hhx", &v->v.mac[0], &v->v.mac[1],
			      &v->v.mac[2], &v->v.mac[3], &v->v.mac[4], &v->v.mac[5]) == 6;
	case ISP_T_STRING:
		if (strlen(text) >= ISP_STR_MAX)
			return false;
		strcpy(v->v.str, text);
		return true;
	default:
		errno = 0;
		v->v.u = strtoull(text, &end, 0);
		return !errno && end != text && !*end && *text != '-';
	}
}

/* Rule by name: kind and index; false when there is none. */
static bool find_rule(const struct isp_program *prog, const char *name, char *kind,
		      unsigned *index)
{
	for (unsigned i = 0; i < prog->nevents; i++)
		if (strcmp(prog->events[i].name, name) == 0)
			return *kind = 'e', *index = i, true;
	for (unsigned i = 0; i < prog->nqueries; i++)
		if (strcmp(prog->queries[i].name, name) == 0)
			return *kind = 'q', *index = i, true;
	for (unsigned i = 0; i < prog->nmonitors; i++)
		if (strcmp(prog->monitors[i].name, name) == 0)
			return *kind = 'm', *index = i, true;
	return false;
}

static int fail(char *err, size_t errlen, const char *fmt, const char *a)
{
	snprintf(err, errlen, fmt, a);
	return -1;
}

/* The command of a request, checked; -1 with a message. */
static int build(const struct isp_rules *r, const struct isp_ctl_request *q, struct ctl_cmd *c,
		 char *err, size_t errlen)
{
	const struct isp_program *prog = r->prog;

	c->op = q->op;
	c->number = q->number;
	if (!q->name || !find_rule(prog, q->name, &c->kind, &c->index))
		return fail(err, errlen, "no rule or flow monitor named '%s'",
			    q->name ? q->name : "");
	if (q->op == ISP_CTL_ENABLE || q->op == ISP_CTL_DISABLE)
		return 0;
	if (c->kind != 'm')
		return fail(err, errlen, "'%s' is not a flow monitor", q->name);
	const struct mrule *m = &prog->monitors[c->index];
	switch (q->op) {
	case ISP_CTL_RESET:
		return 0;
	case ISP_CTL_SAMPLING:
		if (!(q->number > 0 && q->number <= 1))
			return fail(err, errlen, "sampling of %s must be above 0 and at most 1", m->name);
		return 0;
	case ISP_CTL_INTERVAL: {
		/* in range before it is converted: 1e30 ms has no uint64_t */
		bool in_range = q->number >= 1 && q->number <= 1e9;
		if (!in_range || (uint64_t)(q->number * 1e6) % m->nbuf) {
			snprintf(err, errlen, "interval of %s: 1 to 1000000000 ms, a whole number of "
				 "its %u buffer sub-intervals", m->name, m->nbuf);
			return -1;
		}
		return 0;
	}
	case ISP_CTL_OVERFLOW:
		if (!(q->number >= 0 && q->number <= (double)(1u << 30)))
			return fail(err, errlen, "overflow threshold of %s: 0 (off) to 1073741824",
				    m->name);
		return 0;
	default:
		break;
	}
	if (!q->key)
		return q->op == ISP_CTL_GET ? 0 :
		       fail(err, errlen, "a key is needed: one value per match attribute of %s",
			    m->name);
	if (q->nkey != m->nmatch) {
		snprintf(err, errlen, "the key of %s has %u values (%s%s): %u given", m->name,
			 m->nmatch, m->match_names[0], m->nmatch > 1 ? ", ..." : "", q->nkey);
		return -1;
	}
	for (unsigned k = 0; k < m->nmatch; k++) {
		const struct isp_attr_desc *a =
			isp_attr_desc_of(r->reg, &prog->slots[m->match_slots[k]]);
		if (!engine_parse_value(a, q->key[k], &c->vals[k])) {
			snprintf(err, errlen, "key value %u of %s: '%.64s' is not a value of %s", k + 1,
				 m->name, q->key[k], m->match_names[k]);
			return -1;
		}
	}
	c->nvals = m->nmatch;
	c->has_key = true;
	c->klen = engine_key_of_values(c->vals, c->nvals, c->key, sizeof(c->key));
	c->h = table_hash(c->key, c->klen);
	return 0;
}

static const char *const op_names[] = {
	[ISP_CTL_ENABLE] = "enable", [ISP_CTL_DISABLE] = "disable", [ISP_CTL_RESET] = "reset",
	[ISP_CTL_SAMPLING] = "set-sampling", [ISP_CTL_INTERVAL] = "set-interval",
	[ISP_CTL_OVERFLOW] = "set-overflow", [ISP_CTL_ENTRY_ADD] = "entry-add",
	[ISP_CTL_ENTRY_REMOVE] = "entry-remove", [ISP_CTL_GET] = "get",
};

/* The result: {"applied":WORKERS, ...what the command did}. */
static char *result(const struct isp_rules *r, const struct ctl_cmd *c)
{
	uint64_t total = 0;
	size_t size = 256;

	for (unsigned i = 0; i < r->n; i++) {
		total += c->count[i];
		size += c->outlen[i] + 1;
	}
	char *out = malloc(size);
	if (!out)
		return NULL;
	int n = snprintf(out, size, "{\"op\":\"%s\",\"workers\":%u", op_names[c->op], r->n);
	switch (c->op) {
	case ISP_CTL_RESET:
		n += snprintf(out + n, size - (size_t)n, ",\"flows_removed\":%llu",
			      (unsigned long long)total);
		break;
	case ISP_CTL_ENTRY_ADD:
		n += snprintf(out + n, size - (size_t)n, ",\"added\":%s", total ? "true" : "false");
		break;
	case ISP_CTL_ENTRY_REMOVE:
		n += snprintf(out + n, size - (size_t)n, ",\"removed\":%s", total ? "true" : "false");
		break;
	case ISP_CTL_GET:
		n += snprintf(out + n, size - (size_t)n, ",\"flows\":%llu,\"entries\":[",
			      (unsigned long long)total);
		for (unsigned i = 0, first = 1; i < r->n; i++) {
			if (!c->outlen[i])
				continue;
			if (!first)
				out[n++] = ',';
			memcpy(out + n, c->out[i], c->outlen[i]);
			n += (int)c->outlen[i];
			first = 0;
		}
		out[n++] = ']';
		out[n] = 0;
		break;
	default:
		break;
	}
	snprintf(out + n, size - (size_t)n, "}");
	return out;
}

int isp_rules_control(struct isp_rules *r, struct isp_pipeline *pl,
		      const struct isp_ctl_request *q, char **json, char *err, size_t errlen)
{
	struct ctl_cmd *c = calloc(1, sizeof(*c));
	unsigned posted = 0;

	*json = NULL;
	if (!c)
		return fail(err, errlen, "out of memory%s", "");
	if (build(r, q, c, err, errlen) != 0) {
		free(c);
		return -1;
	}
	if (!pl || r->n == 0) {
		free(c);
		return fail(err, errlen, "the rules are not running%s", "");
	}
	atomic_store(&c->refs, 1);
	for (unsigned i = 0; i < r->n; i++) {
		struct isp_engine *e = r->worker[i];
		pthread_mutex_lock(&e->ctl_mu);
		if (e->ctl_n < ENGINE_CTL_MAX) {
			atomic_fetch_add(&c->refs, 1);
			e->ctl_q[e->ctl_n++] = c;
			posted++;
		}
		pthread_mutex_unlock(&e->ctl_mu);
	}
	if (posted < r->n) {
		/* the workers it reached apply it */
		cmd_put(c);
		return fail(err, errlen, "%s", "too many requests waiting for the workers: applied "
			    "on some of them only");
	}
	struct isp_stats st;
	for (unsigned waited = 0; atomic_load(&c->acks) < r->n && waited < CTL_WAIT_MS; waited += 50) {
		memset(&st, 0, sizeof(st));
		isp_pipeline_sample(pl, &st, NULL, 50);
	}
	if (atomic_load(&c->acks) < r->n) {
		snprintf(err, errlen, "%u of %u workers applied it within %d ms; the others will at "
			 "their next packet (the input ended, or a worker waits)",
			 atomic_load(&c->acks), r->n, CTL_WAIT_MS);
		cmd_put(c);
		return -1;
	}
	if (c->op == ISP_CTL_INTERVAL) {
		/* ticks at the new sub-intervals */
		struct rules_gen *g = atomic_load(&r->gen);
		atomic_store(&g->period[c->index],
			     (uint64_t)(c->number * 1e6) / r->prog->monitors[c->index].nbuf);
	}
	*json = result(r, c);
	cmd_put(c);
	return *json ? 0 : fail(err, errlen, "out of memory%s", "");
}
