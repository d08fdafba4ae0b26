/*
 * dta_query.c - the stores of a run: opened once for every engine, kept
 * across a hot reload when their section did not change, queried (the
 * control socket's dta command) with the readers of dta_store.h, as any
 * other process would, and counted.
 */
#include "dta.h"
#include "engine_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct dta_store **dta_stores_open(const struct isp_program *prog, unsigned workers,
				   const struct isp_program *old, struct dta_store *const *keep,
				   char *err, size_t errlen)
{
	struct dta_store **s = calloc(prog->ndta ? prog->ndta : 1, sizeof(*s));

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (unsigned i = 0; i < prog->ndta; i++) {
		const struct dta_def *d = &prog->dta_stores[i];
		for (unsigned k = 0; old && keep && k < old->ndta && !s[i]; k++)
			if (keep[k] && strcmp(old->dta_stores[k].text, d->text) == 0)
				s[i] = keep[k];
		if (!s[i]) {
			struct dta_store_cfg c = d->cfg;
			c.name = d->name;
			c.path = d->path;
			if (!(s[i] = dta_store_open(&c, err, errlen))) {
				dta_stores_release(s, prog->ndta, keep, old ? old->ndta : 0);
				return NULL;
			}
		}
		dta_store_set_shared(s[i], workers > 1);
	}
	return s;
}

void dta_stores_release(struct dta_store **stores, unsigned n, struct dta_store *const *others,
			unsigned m)
{
	for (unsigned i = 0; stores && i < n; i++) {
		bool shared = false;
		for (unsigned k = 0; others && k < m; k++)
			shared |= others[k] == stores[i];
		if (!shared)
			dta_store_close(stores[i]);
	}
	free(stores);
}

static const char *const kind_names[] = {
	[ISP_DTA_KEY_WRITE] = "key-write", [ISP_DTA_APPEND] = "append",
	[ISP_DTA_KEY_INCREMENT] = "key-increment", [ISP_DTA_SKETCH_MERGE] = "sketch-merge",
};
static const char *const sketch_names[] = { "", "count-min", "count-sketch", "hll" };

static bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;

	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || v > max)
		return false;
	*out = v;
	return true;
}

/* The key bytes of a query: a report key (one 32-bit number), or one
 * value per key attribute of a store rules feed. 0 with a message. */
static size_t query_key(const struct isp_program *prog, const struct isp_registry *reg,
			const struct dta_def *d, const char *const *args, unsigned nargs,
			uint8_t *key, size_t cap, char *err, size_t errlen)
{
	if (!d->nkey) {
		uint64_t k;
		if (nargs != 1 || !parse_u64(args[0], UINT32_MAX, &k)) {
			snprintf(err, errlen, "store %s takes DTA reports: its key is one 32-bit "
				 "number", d->name);
			return 0;
		}
		key[0] = (uint8_t)(k >> 24), key[1] = (uint8_t)(k >> 16);
		key[2] = (uint8_t)(k >> 8), key[3] = (uint8_t)k;
		return 4;
	}
	if (nargs != d->nkey) {
		snprintf(err, errlen, "store %s's key has %u values (%s...), not %u", d->name,
			 d->nkey, prog->slot_names[d->key_slots[0]], nargs);
		return 0;
	}
	size_t len = 0;
	for (unsigned k = 0; k < nargs; k++) {
		const struct isp_attr_desc *a = isp_attr_desc_of(reg, &prog->slots[d->key_slots[k]]);
		struct isp_value v;
		if (!engine_parse_value(a, args[k], &v)) {
			snprintf(err, errlen, "'%s' is not a value of %s", args[k],
				 prog->slot_names[d->key_slots[k]]);
			return 0;
		}
		if (!(len = dta_key_put(key, len, cap, &v))) {
			snprintf(err, errlen, "key too long");
			return 0;
		}
	}
	return len;
}

static void words_json(FILE *f, const uint32_t *w, unsigned n)
{
	fputc('[', f);
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "%s%u", i ? "," : "", w[i]);
	fputc(']', f);
}

/* ",NAME":V with V a count: above 2^63 - 1, which JSON readers such as
 * Jansson (intspect-ctl) refuse as an integer, in the exponent form */
static void put_count(FILE *f, const char *name, uint64_t v)
{
	if (v <= (uint64_t)INT64_MAX)
		fprintf(f, ",\"%s\":%llu", name, (unsigned long long)v);
	else
		fprintf(f, ",\"%s\":%.17g", name, (double)v);
}

/* A JSON string: a file name may hold quotes, backslashes, controls */
static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

/* A store's shape: what its kind uses, as its section names it */
static void put_shape(FILE *f, const struct isp_dta_header *h)
{
	switch (h->kind) {
	case ISP_DTA_KEY_WRITE:
		put_count(f, "slots", h->slots);
		put_count(f, "redundancy", h->redundancy);
		put_count(f, "value_bytes", h->value_bytes);
		fprintf(f, ",\"answer\":\"%s\"", h->answer_any ? "any" : "majority");
		break;
	case ISP_DTA_APPEND:
		put_count(f, "lists", h->lists);
		put_count(f, "entries", h->entries);
		put_count(f, "value_bytes", h->value_bytes);
		break;
	case ISP_DTA_KEY_INCREMENT:
		put_count(f, "rows", h->rows);
		put_count(f, "columns", h->columns);
		break;
	case ISP_DTA_SKETCH_MERGE:
		fprintf(f, ",\"sketch\":\"%s\"", sketch_names[h->sketch_kind]);
		put_count(f, "sketch_id", h->sketch_id);
		put_count(f, "rows", h->rows);
		put_count(f, "columns", h->columns);
		put_count(f, "reporters", h->reporters);
		put_count(f, "epochs", h->epochs);
		break;
	}
	put_count(f, "seed", h->seed);
}

static int epoch_arg(const char *const *args, unsigned nargs, unsigned at, int64_t *epoch,
		     char *err, size_t errlen)
{
	uint64_t e;

	*epoch = -1;
	if (nargs <= at)
		return 0;
	if (nargs > at + 1 || !parse_u64(args[at], 65535, &e)) {
		snprintf(err, errlen, "an epoch is a number from 0 to 65535");
		return -1;
	}
	*epoch = (int64_t)e;
	return 0;
}

static int query_on(const struct isp_program *prog, const struct isp_registry *reg,
		    const struct dta_def *d, const struct isp_dta_header *h, const char *op,
		    const char *const *args, unsigned nargs, FILE *f, char *err, size_t errlen)
{
	uint8_t key[1024];
	size_t klen;
	int64_t epoch;

	fprintf(f, "{\"op\":\"dta %s\",\"store\":", op);
	put_string(f, d->name);
	fprintf(f, ",\"type\":\"%s\"", kind_names[h->kind]);
	if (strcmp(op, "get") == 0 && h->kind == ISP_DTA_KEY_WRITE) {
		uint32_t v[ISP_DTA_MAX_WORDS];
		if (!(klen = query_key(prog, reg, d, args, nargs, key, sizeof(key), err, errlen)))
			return -1;
		unsigned agree = isp_dta_kw_get(h, key, klen, v);
		fprintf(f, ",\"found\":%s,\"copies\":%u,\"redundancy\":%u", agree ? "true" : "false",
			agree, h->redundancy);
		if (agree) {
			fputs(",\"value\":", f);
			words_json(f, v, h->value_bytes / 4);
		}
	} else if (strcmp(op, "estimate") == 0 && h->kind == ISP_DTA_KEY_INCREMENT) {
		if (!(klen = query_key(prog, reg, d, args, nargs, key, sizeof(key), err, errlen)))
			return -1;
		put_count(f, "estimate", isp_dta_ki_estimate(h, key, klen));
	} else if (strcmp(op, "poll") == 0 && h->kind == ISP_DTA_APPEND) {
		uint64_t list, cursor = 0, max = 256, lost;
		if (nargs < 1 || nargs > 3 || !parse_u64(args[0], h->lists - 1, &list) ||
		    (nargs > 1 && !parse_u64(args[1], UINT64_MAX, &cursor)) ||
		    (nargs > 2 && !parse_u64(args[2], 65536, &max))) {
			snprintf(err, errlen, "dta poll %s LIST [CURSOR [MAX]]: a list from 0 to %u, "
				 "a cursor, at most 65536 entries", d->name, h->lists - 1);
			return -1;
		}
		uint8_t *buf = malloc((size_t)max * h->value_bytes + 1);
		if (!buf)
			return snprintf(err, errlen, "out of memory"), -1;
		unsigned n = isp_dta_poll(h, (uint32_t)list, &cursor, buf, (unsigned)max, &lost);
		fprintf(f, ",\"list\":%llu", (unsigned long long)list);
		put_count(f, "cursor", cursor);
		put_count(f, "lost", lost);
		fputs(",\"entries\":[", f);
		for (unsigned i = 0; i < n; i++) {
			fputs(i ? "," : "", f);
			words_json(f, (const uint32_t *)(buf + (size_t)i * h->value_bytes),
				   h->value_bytes / 4);
		}
		fputc(']', f);
		free(buf);
	} else if (h->kind == ISP_DTA_SKETCH_MERGE &&
		   (strcmp(op, "estimate") == 0 || strcmp(op, "cardinality") == 0)) {
		bool card = op[0] == 'c';
		if (card != (h->sketch_kind == ISP_DTA_HLL)) {
			snprintf(err, errlen, "store %s is a %s sketch: ask it for %s", d->name,
				 sketch_names[h->sketch_kind], card ? "an estimate" : "its cardinality");
			return -1;
		}
		/* KEY [EPOCH]: the key alone goes to query_key, which refuses none */
		if (!card && !(klen = query_key(prog, reg, d, args, nargs ? 1 : 0, key, sizeof(key),
						err, errlen)))
			return -1;
		if (epoch_arg(args, nargs, card ? 0 : 1, &epoch, err, errlen) < 0)
			return -1;
		struct isp_dta_epoch *e = isp_dta_find_epoch(h, epoch);
		if (!e) {
			fputs(",\"found\":false", f);
		} else {
			fprintf(f, ",\"found\":true,\"epoch\":%u,\"complete\":%u,\"reporters\":%u",
				atomic_load(&e->epoch) - 1, atomic_load(&e->complete), h->reporters);
			double c = card ? isp_dta_sm_cardinality(h, e) : 0;
			if (card && c < 9007199254740992.0)     /* 2^53: a whole number */
				fprintf(f, ",\"cardinality\":%.0f", c);
			else if (card)                          /* JSON's exponent form */
				fprintf(f, ",\"cardinality\":%.17g", c);
			else
				fprintf(f, ",\"estimate\":%lld", (long long)isp_dta_sm_estimate(h, e, key));
		}
	} else if (strcmp(op, "info") == 0) {
		put_shape(f, h);
	} else {
		snprintf(err, errlen, "a %s store does not answer '%s' (get: key-write; poll: append; "
			 "estimate: key-increment, count-min and count-sketch; cardinality: hll; "
			 "info: any)", kind_names[h->kind], op);
		return -1;
	}
	fputs(",\"file\":", f);
	put_string(f, d->path);
	put_count(f, "writes", atomic_load(&h->writes));
	put_count(f, "rejected", atomic_load(&h->rejected));
	put_count(f, "duplicates", atomic_load(&h->duplicates));
	put_count(f, "stale", atomic_load(&h->stale));
	fputc('}', f);
	return 0;
}

int dta_query(const struct isp_program *prog, const struct isp_registry *reg,
	      struct dta_store *const *stores, const char *op, const char *store,
	      const char *const *args, unsigned nargs, char **json, char *err, size_t errlen)
{
	size_t size;
	int rc;

	*json = NULL;
	for (unsigned i = 0; i < prog->ndta; i++) {
		const struct dta_def *d = &prog->dta_stores[i];
		if (strcmp(d->name, store) != 0)
			continue;
		FILE *f = open_memstream(json, &size);
		if (!f)
			return snprintf(err, errlen, "out of memory"), -1;
		rc = query_on(prog, reg, d, dta_store_header(stores[i]), op, args, nargs, f, err,
			      errlen);
		fclose(f);
		if (rc < 0) {
			free(*json);
			*json = NULL;
		}
		return rc;
	}
	snprintf(err, errlen, "no dta-store named '%s'", store);
	return -1;
}

void dta_print_stats(const struct isp_program *prog, struct dta_store *const *stores,
		     const struct dta_counts *c, FILE *out)
{
	if (!prog->ndta)
		return;
	fprintf(out, "dta: %llu reports (%llu key-write, %llu append, %llu key-increment, "
		"%llu postcarder, %llu sketch-merge), %llu applied, %llu without a store, "
		"%llu rejected, %llu shed (priority 0-3: %llu %llu %llu %llu), %llu immediate\n",
		(unsigned long long)(c->reports[1] + c->reports[2] + c->reports[3] + c->reports[4] +
				     c->reports[5]),
		(unsigned long long)c->reports[1], (unsigned long long)c->reports[2],
		(unsigned long long)c->reports[3], (unsigned long long)c->reports[4],
		(unsigned long long)c->reports[5], (unsigned long long)c->applied,
		(unsigned long long)c->unstored, (unsigned long long)c->rejected,
		(unsigned long long)(c->shed[0] + c->shed[1] + c->shed[2] + c->shed[3]),
		(unsigned long long)c->shed[0], (unsigned long long)c->shed[1],
		(unsigned long long)c->shed[2], (unsigned long long)c->shed[3],
		(unsigned long long)c->immediate);
	fprintf(out, "dta: %llu reporters, %llu duplicates, %llu sequence gaps, %llu column gaps, "
		"%llu NACKs sent (%llu failed), %llu given up (%llu came late), %llu resyncs, %llu untracked, "
		"%llu rule writes\n",
		(unsigned long long)c->reporters, (unsigned long long)c->duplicates,
		(unsigned long long)c->gaps, (unsigned long long)c->column_gaps,
		(unsigned long long)c->nacks, (unsigned long long)c->nack_errors,
		(unsigned long long)c->abandoned, (unsigned long long)c->late,
		(unsigned long long)c->resyncs, (unsigned long long)c->untracked,
		(unsigned long long)c->rule_writes);
	for (unsigned i = 0; i < prog->ndta; i++) {
		const struct isp_dta_header *h = dta_store_header(stores[i]);
		fprintf(out, "dta-store %s (%s, %s): %llu writes, %llu rejected, %llu duplicate "
			"columns, %llu stale\n", prog->dta_stores[i].name, kind_names[h->kind],
			prog->dta_stores[i].path, (unsigned long long)atomic_load(&h->writes),
			(unsigned long long)atomic_load(&h->rejected),
			(unsigned long long)atomic_load(&h->duplicates),
			(unsigned long long)atomic_load(&h->stale));
	}
}
