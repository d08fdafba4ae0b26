/*
 * prometheus_series.c - the Prometheus channel's series: records in (the
 * line protocol intspect writes, src/filters/record_influx.c), the latest
 * value of each series out, in the text exposition format.
 *
 * A record `REPORT,TAG=V,... FIELD=VALUE,... TS` sets, for each numeric
 * field, the gauge PREFIX + REPORT + "_" + FIELD with the tags as labels;
 * a per-hop field `NAME.N` is the gauge of NAME with the label hop="N".
 * Names are reduced to Prometheus' alphabet (a run of other characters
 * becomes one underscore: `avg(int.hop_latencies)` gives
 * `avg_int_hop_latencies`). A string field has no sample (counted). A
 * record with the field `expired` (an event key that went silent) removes
 * every series its report and tags made. The timestamp is not exported:
 * Prometheus stamps a sample with the time of its scrape.
 *
 * Series are kept up to max-series; a record that would create more sets
 * the series that exist and counts the others refused. Memory grows with
 * the series, on the channel's thread, never on the packet path.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prometheus_int.h"

#define MAX_TAGS 64
#define MAX_FIELDS 1024

static uint32_t hash_bytes(const char *s, size_t n)
{
	uint32_t h = 2166136261u;       /* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

/* Room for element n of an array of *cap elements of `size` bytes,
 * doubled when full (first: its first size); -1: out of memory. */
static int grow(void *arr, uint32_t n, uint32_t *cap, size_t size, uint32_t first)
{
	void **a = arr;

	if (n < *cap)
		return 0;
	uint32_t c = *cap ? 2 * *cap : first;
	void *p = realloc(*a, (size_t)c * size);
	if (!p)
		return -1;
	*a = p;
	*cap = c;
	return 0;
}

static int list_push(struct prom_list *l, uint32_t v)
{
	if (grow(&l->v, l->n, &l->cap, sizeof(*l->v), 4) != 0)
		return -1;
	l->v[l->n++] = v;
	return 0;
}

/* ---- hash indexes: chains of indices through each entry's `next` ---- */

/* Grow a chained index to twice `want` heads when it is full: -1 OOM. */
static int index_room(uint32_t **heads, uint32_t *nheads, uint32_t want)
{
	if (want <= *nheads)
		return 0;
	uint32_t n = *nheads ? *nheads : 64;
	while (n < want)
		n *= 2;
	uint32_t *h = malloc((size_t)n * sizeof(*h));
	if (!h)
		return -1;
	memset(h, 0xff, (size_t)n * sizeof(*h));        /* PROM_NONE */
	free(*heads);
	*heads = h;
	*nheads = n;
	return 1;       /* the caller re-links its entries */
}

int prom_table_init(struct prom_table *t, const char *prefix, size_t max_series)
{
	memset(t, 0, sizeof(*t));
	t->prefix = prefix;
	t->max_series = max_series;
	t->free_head = PROM_NONE;
	t->free_group = PROM_NONE;
	if (index_room(&t->idx_s, &t->nidx_s, 64) < 0 || index_room(&t->idx_f, &t->nidx_f, 64) < 0 ||
	    index_room(&t->idx_g, &t->nidx_g, 64) < 0)
		return -1;
	return 0;
}

void prom_table_free(struct prom_table *t)
{
	for (uint32_t i = 0; i < t->ns; i++)
		free(t->s[i].text);
	for (uint32_t i = 0; i < t->nf; i++) {
		free(t->f[i].name);
		free(t->f[i].help);
		free(t->f[i].series.v);
	}
	for (uint32_t i = 0; i < t->ng; i++) {
		free(t->g[i].key);
		free(t->g[i].series.v);
	}
	free(t->s);
	free(t->f);
	free(t->g);
	free(t->idx_s);
	free(t->idx_f);
	free(t->idx_g);
	free(t->scratch.p);
	free(t->names.p);
	memset(t, 0, sizeof(*t));
}

/* ---- names ---- */

/* The word an operator of a select's expression becomes in a field's
 * name (its length in *len), or NULL: `sum(x > 5)` and `sum(x <= 5)` must
 * not both be sum_x_5. */
static const char *operator_word(const char *s, size_t n, size_t *len)
{
	static const struct { const char *op, *word; } ops[] = {
		{ ">=", "ge" }, { "<=", "le" }, { "==", "eq" }, { "!=", "ne" }, { "&&", "and" },
		{ "||", "or" }, { ">", "gt" }, { "<", "lt" }, { "+", "plus" }, { "-", "minus" },
		{ "*", "mul" }, { "/", "div" }, { "%", "mod" }, { "!", "not" },
	};

	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		size_t m = strlen(ops[k].op);
		if (m <= n && !memcmp(s, ops[k].op, m)) {
			*len = m;
			return ops[k].word;
		}
	}
	return NULL;
}

/* Append s[0..n) to b in Prometheus' name alphabet: [a-zA-Z0-9_], a run
 * of anything else one underscore, none at the end; with `words`, an
 * operator is its word between underscores. */
static void put_name(struct isp_bytes *b, const char *s, size_t n, bool words, bool *oom)
{
	if (isp_bytes_room(b, 7 * n + 1) != 0) {        /* "-" is "_minus_" at most */
		*oom = true;
		return;
	}
	bool under = b->len > 0 && b->p[b->len - 1] == '_';
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
		size_t len;
		const char *w = words ? operator_word(s + i, n - i, &len) : NULL;
		if (ok) {
			b->p[b->len++] = c;
			under = false;
		} else if (w) {
			if (!under)
				b->p[b->len++] = '_';
			memcpy(b->p + b->len, w, strlen(w));
			b->len += strlen(w);
			b->p[b->len++] = '_';
			under = true;
			i += len - 1;
		} else if (!under) {
			b->p[b->len++] = '_';
			under = true;
		}
	}
	while (b->len > 0 && b->p[b->len - 1] == '_' && n)
		b->len--;
}

/* A label value or HELP text: backslash, quote (label values only) and
 * line feed escaped. */
static void put_escaped(struct isp_bytes *b, const char *s, size_t n, bool quote, bool *oom)
{
	if (isp_bytes_room(b, 2 * n + 1) != 0) {
		*oom = true;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '\\' || (quote && c == '"')) {
			b->p[b->len++] = '\\';
			b->p[b->len++] = c;
		} else if (c == '\n') {
			b->p[b->len++] = '\\';
			b->p[b->len++] = 'n';
		} else {
			b->p[b->len++] = c;
		}
	}
}

static void put_raw(struct isp_bytes *b, const char *s, size_t n, bool *oom)
{
	if (isp_bytes_room(b, n + 1) != 0) {
		*oom = true;
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

/* ---- line protocol ---- */

struct span {
	const char *p;
	size_t n;
};

struct lp_field {
	struct span key;        /* unescaped, in the scratch buffer */
	struct span value;      /* as written */
	bool string;
};

struct lp {
	struct span measurement;
	struct span tags_text;          /* ",k=v,..." as written: the group */
	struct span tag_key[MAX_TAGS], tag_val[MAX_TAGS];
	unsigned ntags;
	struct lp_field field[MAX_FIELDS];
	unsigned nfields;
};

/* Read an element up to an unescaped character of `stop` (or the end),
 * unescaping `\c` for c in `esc` into out (room for n bytes). */
static const char *lp_element(const char *p, const char *end, const char *stop,
			      const char *esc, char *out, size_t *outn)
{
	size_t k = 0;

	while (p < end && !strchr(stop, *p)) {
		if (*p == '\\' && p + 1 < end && strchr(esc, p[1]))
			p++;
		out[k++] = *p++;
	}
	*outn = k;
	return p;
}

/* Split one line; false when it is not line protocol as intspect writes it. */
static bool lp_parse(const char *line, size_t len, char *buf, struct lp *l)
{
	const char *p = line, *end = line + len;
	char *o = buf;
	size_t n;

	memset(l, 0, offsetof(struct lp, tag_key));
	l->ntags = l->nfields = 0;
	p = lp_element(p, end, ", ", ", ", o, &n);
	if (n == 0)
		return false;
	l->measurement = (struct span){ o, n };
	o += n;
	l->tags_text.p = p;
	while (p < end && *p == ',') {
		if (l->ntags == MAX_TAGS)
			return false;
		p = lp_element(p + 1, end, "=, ", ", =", o, &n);
		if (p >= end || *p != '=' || n == 0)
			return false;
		l->tag_key[l->ntags] = (struct span){ o, n };
		o += n;
		p = lp_element(p + 1, end, ", ", ", =", o, &n);
		l->tag_val[l->ntags++] = (struct span){ o, n };
		o += n;
	}
	l->tags_text.n = (size_t)(p - l->tags_text.p);
	if (p >= end || *p != ' ')
		return false;
	do {
		if (l->nfields == MAX_FIELDS)
			return false;
		struct lp_field *f = &l->field[l->nfields++];
		f->string = false;      /* l is reused: the last record's may be set */
		p = lp_element(p + 1, end, "=, ", ", =", o, &n);
		if (p >= end || *p != '=' || n == 0)
			return false;
		f->key = (struct span){ o, n };
		o += n;
		p++;
		const char *v = p;
		if (p < end && *p == '"') {
			for (p++; p < end && *p != '"'; p++)
				if (*p == '\\' && p + 1 < end)
					p++;
			if (p >= end)
				return false;
			p++;
			f->string = true;
		} else {
			while (p < end && *p != ',' && *p != ' ')
				p++;
		}
		f->value = (struct span){ v, (size_t)(p - v) };
		if (f->value.n == 0)
			return false;
	} while (p < end && *p == ',');
	return p == end || *p == ' ';  /* the timestamp follows, or nothing */
}

/* A field's value: false for a string or something unreadable. */
static bool lp_number(const struct lp_field *f, bool *is_int, int64_t *iv, double *fv)
{
	char num[64];
	const char *s = f->value.p;
	size_t n = f->value.n;
	char *e;

	if (f->string || n >= sizeof(num))
		return false;
	memcpy(num, s, n);
	num[n] = 0;
	if (!strcmp(num, "t") || !strcmp(num, "true") || !strcmp(num, "T") || !strcmp(num, "TRUE") ||
	    !strcmp(num, "f") || !strcmp(num, "false") || !strcmp(num, "F") || !strcmp(num, "FALSE")) {
		*is_int = true;
		*iv = num[0] == 't' || num[0] == 'T';
		return true;
	}
	errno = 0;
	if (num[n - 1] == 'i') {
		num[n - 1] = 0;
		long long v = strtoll(num, &e, 10);
		*is_int = true;
		*iv = v;
		return e != num && !*e && errno == 0;
	}
	*is_int = false;
	*fv = strtod(num, &e);
	return e != num && !*e;
}

/* ---- the table ---- */

static void relink_series(struct prom_table *t)
{
	for (uint32_t i = 0; i < t->ns; i++) {
		if (!t->s[i].text)
			continue;
		uint32_t *h = &t->idx_s[t->s[i].hash & (t->nidx_s - 1)];
		t->s[i].next = *h;
		*h = i;
	}
}

static uint32_t find_family(struct prom_table *t, const char *name, size_t n, uint32_t hash)
{
	for (uint32_t i = t->idx_f[hash & (t->nidx_f - 1)]; i != PROM_NONE; i = t->f[i].next)
		if (t->f[i].hash == hash && strlen(t->f[i].name) == n && !memcmp(t->f[i].name, name, n))
			return i;
	return PROM_NONE;
}

static uint32_t add_family(struct prom_table *t, const char *name, size_t n, uint32_t hash,
			   const struct lp *l, const struct span *field)
{
	struct isp_bytes help = { 0 };
	bool oom = false;

	if (grow(&t->f, t->nf, &t->capf, sizeof(*t->f), 16) != 0)
		return PROM_NONE;
	int r = index_room(&t->idx_f, &t->nidx_f, t->nf + 1);
	if (r < 0)
		return PROM_NONE;
	if (r > 0)
		for (uint32_t i = 0; i < t->nf; i++) {
			uint32_t *h = &t->idx_f[t->f[i].hash & (t->nidx_f - 1)];
			t->f[i].next = *h;
			*h = i;
		}
	put_raw(&help, "intspect report ", 16, &oom);
	put_escaped(&help, l->measurement.p, l->measurement.n, false, &oom);
	put_raw(&help, ", field ", 8, &oom);
	put_escaped(&help, field->p, field->n, false, &oom);
	put_raw(&help, "", 1, &oom);
	char *nm = malloc(n + 1);
	if (oom || !nm) {
		free(help.p);
		free(nm);
		return PROM_NONE;
	}
	memcpy(nm, name, n);
	nm[n] = 0;
	struct prom_family *f = &t->f[t->nf];
	*f = (struct prom_family){ .name = nm, .help = help.p, .hash = hash };
	uint32_t *h = &t->idx_f[hash & (t->nidx_f - 1)];
	f->next = *h;
	*h = t->nf;
	return t->nf++;
}

static uint32_t find_group(struct prom_table *t, const char *key, size_t n, uint32_t hash)
{
	for (uint32_t i = t->idx_g[hash & (t->nidx_g - 1)]; i != PROM_NONE; i = t->g[i].next)
		if (t->g[i].hash == hash && t->g[i].key_len == n && !memcmp(t->g[i].key, key, n))
			return i;
	return PROM_NONE;
}

static void unlink_group(struct prom_table *t, uint32_t gi)
{
	uint32_t *p = &t->idx_g[t->g[gi].hash & (t->nidx_g - 1)];

	while (*p != gi)
		p = &t->g[*p].next;
	*p = t->g[gi].next;
	free(t->g[gi].key);
	t->g[gi].key = NULL;
	t->g[gi].series.n = 0;
	t->g[gi].next = t->free_group;
	t->free_group = gi;
}

static uint32_t add_group(struct prom_table *t, const char *key, size_t n, uint32_t hash)
{
	uint32_t gi = t->free_group;
	char *k = malloc(n ? n : 1);

	if (!k)
		return PROM_NONE;
	memcpy(k, key, n);
	if (gi != PROM_NONE) {
		t->free_group = t->g[gi].next;
	} else {
		if (grow(&t->g, t->ng, &t->capg, sizeof(*t->g), 16) != 0) {
			free(k);
			return PROM_NONE;
		}
		int r = index_room(&t->idx_g, &t->nidx_g, t->ng + 1);
		if (r < 0) {
			free(k);
			return PROM_NONE;
		}
		if (r > 0)
			for (uint32_t i = 0; i < t->ng; i++) {
				if (!t->g[i].key)
					continue;
				uint32_t *h = &t->idx_g[t->g[i].hash & (t->nidx_g - 1)];
				t->g[i].next = *h;
				*h = i;
			}
		gi = t->ng++;
		t->g[gi].series = (struct prom_list){ 0 };
	}
	struct prom_group *g = &t->g[gi];
	g->key = k;
	g->key_len = n;
	g->hash = hash;
	g->series.n = 0;
	uint32_t *h = &t->idx_g[hash & (t->nidx_g - 1)];
	g->next = *h;
	*h = gi;
	return gi;
}

/* The series whose text is s[0..n), created (in family fi and group gi)
 * when absent and there is room; PROM_NONE: refused or out of memory. */
static uint32_t series_at(struct prom_table *t, const char *s, size_t n, uint32_t fi,
			  uint32_t gi, bool *oom)
{
	uint32_t hash = hash_bytes(s, n);

	for (uint32_t i = t->idx_s[hash & (t->nidx_s - 1)]; i != PROM_NONE; i = t->s[i].next)
		if (t->s[i].hash == hash && !strncmp(t->s[i].text, s, n) && !t->s[i].text[n])
			return i;
	if (t->live >= t->max_series) {
		t->refused++;
		return PROM_NONE;
	}
	uint32_t si = t->free_head;
	if (si == PROM_NONE) {
		if (grow(&t->s, t->ns, &t->caps, sizeof(*t->s), 64) != 0)
			goto oom;
		int r = index_room(&t->idx_s, &t->nidx_s, t->ns + 1);
		if (r < 0)
			goto oom;
		if (r > 0)
			relink_series(t);
		si = t->ns++;
		t->s[si].text = NULL;
	} else {
		t->free_head = t->s[si].next;
	}
	struct prom_series *x = &t->s[si];
	if (!(x->text = malloc(n + 1)))
		goto oom_slot;
	memcpy(x->text, s, n);
	x->text[n] = 0;
	x->hash = hash;
	x->record = 0;
	x->family = fi;
	x->group = gi;
	x->at_family = t->f[fi].series.n;
	x->at_group = t->g[gi].series.n;
	if (list_push(&t->f[fi].series, si) != 0) {
		free(x->text);
		goto oom_slot;
	}
	if (list_push(&t->g[gi].series, si) != 0) {
		t->f[fi].series.n--;
		free(x->text);
		goto oom_slot;
	}
	uint32_t *h = &t->idx_s[hash & (t->nidx_s - 1)];
	x->next = *h;
	*h = si;
	t->live++;
	return si;
oom_slot:
	x->text = NULL;
	x->next = t->free_head;
	t->free_head = si;
oom:
	*oom = true;
	return PROM_NONE;
}

static void list_remove(struct prom_table *t, struct prom_list *l, uint32_t at, bool family)
{
	uint32_t last = l->v[--l->n];

	if (at < l->n) {
		l->v[at] = last;
		if (family)
			t->s[last].at_family = at;
		else
			t->s[last].at_group = at;
	}
}

/* Remove series si from the index, its family and its group. */
static void remove_series(struct prom_table *t, uint32_t si)
{
	struct prom_series *x = &t->s[si];
	uint32_t *p = &t->idx_s[x->hash & (t->nidx_s - 1)];

	while (*p != si)
		p = &t->s[*p].next;
	*p = x->next;
	list_remove(t, &t->f[x->family].series, x->at_family, true);
	list_remove(t, &t->g[x->group].series, x->at_group, false);
	free(x->text);
	x->text = NULL;
	x->next = t->free_head;
	t->free_head = si;
	t->live--;
}

/* Remove every series of group gi, and the group. */
static void remove_group(struct prom_table *t, uint32_t gi)
{
	while (t->g[gi].series.n) {
		remove_series(t, t->g[gi].series.v[t->g[gi].series.n - 1]);
		t->removed++;
	}
	unlink_group(t, gi);
}

/* The series of group gi that record `record` did not set: gone. */
static void remove_unset(struct prom_table *t, uint32_t gi, uint64_t record)
{
	for (uint32_t k = t->g[gi].series.n; k-- > 0;) {
		uint32_t si = t->g[gi].series.v[k];
		if (t->s[si].record != record) {
			remove_series(t, si);   /* moves the last one to k: seen already */
			t->superseded++;
		}
	}
}

/* Is the label name at b[at..b->len) one of those from lab0 on? */
static bool label_taken(const struct isp_bytes *b, size_t lab0, size_t at)
{
	size_t len = b->len - at;

	if (len == 3 && !memcmp(b->p + at, "hop", 3))
		return true;    /* the per-hop label */
	for (size_t q = lab0; q + len < at; q++)
		if ((b->p[q - 1] == '{' || b->p[q - 1] == ',') && !memcmp(b->p + q, b->p + at, len) &&
		    b->p[q + len] == '=')
			return true;
	return false;
}

/* Labels of a series: the tags (names reduced to the alphabet; a name
 * already used gets _N, N the tag's position), then hop when given. */
static void put_labels(struct isp_bytes *b, const struct lp *l, const struct span *hop,
		       bool *oom)
{
	size_t lab0 = b->len + 1;
	bool any = false;

	for (unsigned i = 0; i < l->ntags; i++) {
		put_raw(b, any ? "," : "{", 1, oom);
		size_t at = b->len;
		if (l->tag_key[i].p[0] >= '0' && l->tag_key[i].p[0] <= '9')
			put_raw(b, "_", 1, oom);
		put_name(b, l->tag_key[i].p, l->tag_key[i].n, false, oom);
		if (*oom)
			return;
		if (b->len == at || label_taken(b, lab0, at)) {
			char suffix[16];
			put_raw(b, suffix, (size_t)snprintf(suffix, sizeof(suffix), "_%u", i + 1), oom);
		}
		put_raw(b, "=\"", 2, oom);
		put_escaped(b, l->tag_val[i].p, l->tag_val[i].n, true, oom);
		put_raw(b, "\"", 1, oom);
		any = true;
	}
	if (hop) {
		put_raw(b, any ? ",hop=\"" : "{hop=\"", 6, oom);
		put_raw(b, hop->p, hop->n, oom);
		put_raw(b, "\"", 1, oom);
		any = true;
	}
	if (any)
		put_raw(b, "}", 1, oom);
}

/* `NAME.N` (N digits): NAME in base, N in hop; else the whole name. */
static bool split_hop(const struct span *key, struct span *base, struct span *hop)
{
	size_t i = key->n;

	while (i > 0 && key->p[i - 1] >= '0' && key->p[i - 1] <= '9')
		i--;
	if (i == key->n || i < 2 || key->p[i - 1] != '.') {
		*base = *key;
		return false;
	}
	*base = (struct span){ key->p, i - 1 };
	*hop = (struct span){ key->p + i, key->n - i };
	return true;
}

static bool is_expiry(const struct lp *l)
{
	for (unsigned i = 0; i < l->nfields; i++)
		if (l->field[i].key.n == 7 && !memcmp(l->field[i].key.p, "expired", 7) &&
		    !l->field[i].string)
			return true;
	return false;
}

int prom_table_record(struct prom_table *t, const char *line, size_t len)
{
	static _Thread_local struct lp l;
	struct isp_bytes *b = &t->scratch;
	bool oom = false;

	/* unescaped names are never longer than the line; they stay put */
	if (isp_bytes_room(&t->names, len + 1) != 0)
		return -1;
	if (!lp_parse(line, len, t->names.p, &l)) {
		t->unparsable++;
		return 0;
	}
	/* the group: measurement and tags as written */
	b->len = 0;
	put_raw(b, l.measurement.p, l.measurement.n, &oom);
	put_raw(b, "", 1, &oom);
	put_raw(b, l.tags_text.p, l.tags_text.n, &oom);
	if (oom)
		return -1;
	uint32_t ghash = hash_bytes(b->p, b->len);
	uint32_t gi = find_group(t, b->p, b->len, ghash);
	if (is_expiry(&l)) {
		if (gi != PROM_NONE)
			remove_group(t, gi);
		return 0;
	}
	if (gi == PROM_NONE && (gi = add_group(t, b->p, b->len, ghash)) == PROM_NONE)
		return -1;
	uint64_t record = ++t->records;
	for (unsigned i = 0; i < l.nfields; i++) {
		const struct lp_field *f = &l.field[i];
		bool is_int;
		int64_t iv = 0;
		double fv = 0;
		if (!lp_number(f, &is_int, &iv, &fv)) {
			t->not_numeric++;
			continue;
		}
		struct span base, hop;
		bool per_hop = split_hop(&f->key, &base, &hop);
		/* the family's name, then the series' text after it */
		b->len = 0;
		put_raw(b, t->prefix, strlen(t->prefix), &oom);
		/* a name starts with a letter or _ (prefix = "", report "5g") */
		if (b->len == 0 && l.measurement.p[0] >= '0' && l.measurement.p[0] <= '9')
			put_raw(b, "_", 1, &oom);
		put_name(b, l.measurement.p, l.measurement.n, false, &oom);
		put_raw(b, "_", 1, &oom);
		put_name(b, base.p, base.n, true, &oom);
		if (oom)
			return -1;
		size_t nlen = b->len;
		uint32_t fhash = hash_bytes(b->p, nlen);
		uint32_t fi = find_family(t, b->p, nlen, fhash);
		if (fi == PROM_NONE && (fi = add_family(t, b->p, nlen, fhash, &l, &base)) == PROM_NONE)
			return -1;
		put_labels(b, &l, per_hop ? &hop : NULL, &oom);
		if (oom)
			return -1;
		uint32_t si = series_at(t, b->p, b->len, fi, gi, &oom);
		if (oom)
			return -1;
		if (si == PROM_NONE)
			continue;
		if (t->s[si].record == record) {
			/* two fields of the record have one name (past the
			 * operator words): the first one's value stays */
			t->collided++;
			continue;
		}
		t->s[si].record = record;
		t->s[si].is_int = is_int;
		t->s[si].iv = iv;
		t->s[si].fv = fv;
	}
	remove_unset(t, gi, record);
	if (t->g[gi].series.n == 0)     /* nothing kept: no empty group left */
		unlink_group(t, gi);
	return 0;
}

/* Does `text` (exposition text) have a family named `name`? */
static bool has_family(const struct isp_prom_text *text, const char *name)
{
	size_t n = strlen(name);
	const char *p = text->b.p, *end = p ? p + text->b.len : NULL;

	for (; p && p < end; p++) {
		p = memmem(p, (size_t)(end - p), "# TYPE ", 7);
		if (!p)
			return false;
		if ((p == text->b.p || p[-1] == '\n') && (size_t)(end - p) > 7 + n &&
		    !memcmp(p + 7, name, n) && p[7 + n] == ' ')
			return true;
	}
	return false;
}

void prom_table_text(const struct prom_table *t, struct isp_prom_text *out,
		     const struct isp_prom_text *reserved)
{
	char name[512];

	for (uint32_t fi = 0; fi < t->nf; fi++) {
		const struct prom_family *f = &t->f[fi];
		if (!f->series.n)
			continue;
		size_t flen = strlen(f->name);
		bool renamed = reserved && has_family(reserved, f->name) &&
			       flen + 8 < sizeof(name);
		if (renamed)
			snprintf(name, sizeof(name), "%s_record", f->name);
		isp_prom_family(out, renamed ? name : f->name, "gauge", f->help);
		for (uint32_t k = 0; k < f->series.n; k++) {
			const struct prom_series *x = &t->s[f->series.v[k]];
			char num[40];
			int n = x->is_int ? snprintf(num, sizeof(num), " %" PRId64 "\n", x->iv)
					  : snprintf(num, sizeof(num), " %.17g\n", x->fv);
			if (renamed) {  /* the series' text starts with its family's name */
				put_raw(&out->b, name, flen + 7, &out->oom);
				put_raw(&out->b, x->text + flen, strlen(x->text + flen), &out->oom);
			} else {
				put_raw(&out->b, x->text, strlen(x->text), &out->oom);
			}
			put_raw(&out->b, num, (size_t)n, &out->oom);
		}
	}
}
