/*
 * values.c - the keys of a section and their values, read as a key wants
 * them (a boolean as libconfuse reads it, a number in its range, a whole
 * number kept exactly, a string, a list), each mistake a file:line:col
 * error with the key's name.
 */
#include "compile_int.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- value helpers ---- */

const struct cfg_kv *find_kv(const struct cfg_section *s, const char *key)
{
	const struct cfg_kv *found = NULL;

	for (size_t i = 0; i < s->nkvs; i++)
		if (strcmp(s->kvs[i]->key, key) == 0)
			found = s->kvs[i];      /* the last one wins, as in MMT */
	return found;
}

bool check_keys(struct compiler *c, const struct cfg_section *s,
		       const char *const *known, const char *what)
{
	bool ok = true;

	for (size_t i = 0; i < s->nkvs; i++) {
		const char *k = s->kvs[i]->key;
		bool found = false;
		for (const char *const *n = known; *n; n++)
			found |= strcmp(*n, k) == 0;
		if (found)
			continue;
		const char *hint = closest_word(k, known);
		/* the whole list ends the message, as the output types' do:
		 * the reader sees the choices, and the manual's test reads
		 * the section's keys from here (test/doc/man.sh) */
		char list[512] = "";
		size_t n = 0;
		for (const char *const *kk = known; *kk; kk++) {
			int w = snprintf(list + n, sizeof(list) - n, "%s%s", n ? ", " : "", *kk);
			if (w < 0 || (size_t)w >= sizeof(list) - n) {
				list[n] = '\0';        /* whole names only */
				break;
			}
			n += (size_t)w;
		}
		dsl_error(c->d, &s->kvs[i]->loc, "unknown key '%s' in %s%s%s%s; known: %s", k, what,
			  hint ? "; did you mean '" : "", hint ? hint : "", hint ? "'?" : "", list);
		ok = false;
	}
	return ok;
}

bool get_bool(struct compiler *c, const struct cfg_kv *kv, bool *out)
{
	const struct cfg_value *v = kv->value;

	if (v->kind != CV_LIST && v->text) {
		/* libconfuse's words (MMT-Probe), any case */
		if (strcasecmp(v->text, "true") == 0 || strcasecmp(v->text, "yes") == 0 ||
		    strcasecmp(v->text, "on") == 0 || strcmp(v->text, "1") == 0) {
			*out = true;
			return true;
		}
		if (strcasecmp(v->text, "false") == 0 || strcasecmp(v->text, "no") == 0 ||
		    strcasecmp(v->text, "off") == 0 || strcmp(v->text, "0") == 0) {
			*out = false;
			return true;
		}
	}
	dsl_error(c->d, &v->loc, "'%s' expects true or false", kv->key);
	return false;
}

bool get_number(struct compiler *c, const struct cfg_kv *kv, double min, double max,
		       double *out)
{
	const struct cfg_value *v = kv->value;
	char *end;

	if (v->kind == CV_LIST || !v->text)
		goto bad;
	errno = 0;
	double d = strtod(v->text, &end);
	if (errno || end == v->text || *end)
		goto bad;
	if (d < min || d > max) {
		/* whole bounds written whole (4294967295, not 4.29497e+09) */
		dsl_error(c->d, &v->loc, "'%s' must be between %.15g and %.15g", kv->key, min, max);
		return false;
	}
	*out = d;
	return true;
bad:
	dsl_error(c->d, &v->loc, "'%s' expects a number", kv->key);
	return false;
}

/* A whole number kept exactly (a 64-bit seed is past a double's 53 bits):
 * decimal or 0x hexadecimal, from min to max. */
bool get_whole(struct compiler *c, const struct cfg_kv *kv, uint64_t min, uint64_t max,
	       uint64_t *out)
{
	const struct cfg_value *v = kv->value;
	char *end;

	if (v->kind == CV_LIST || !v->text || !isdigit((unsigned char)v->text[0]))
		goto bad;
	errno = 0;
	/* 010 is ten, not octal eight: 0x for hexadecimal only */
	bool hex = v->text[0] == '0' && (v->text[1] == 'x' || v->text[1] == 'X');
	unsigned long long x = strtoull(v->text, &end, hex ? 16 : 10);
	if (errno == ERANGE || end == v->text || *end)
		goto bad;
	if (x < min || x > max) {
		dsl_error(c->d, &v->loc, "'%s' must be between %llu and %llu", kv->key,
			  (unsigned long long)min, (unsigned long long)max);
		return false;
	}
	*out = x;
	return true;
bad:
	dsl_error(c->d, &v->loc, "'%s' expects a whole number", kv->key);
	return false;
}

bool get_string(struct compiler *c, const struct cfg_kv *kv, const char **out)
{
	if (kv->value->kind == CV_LIST) {
		dsl_error(c->d, &kv->value->loc, "'%s' expects one value, not a list", kv->key);
		return false;
	}
	*out = kv->value->text;
	return true;
}

/* A list value; a single value counts as a list of one. */
size_t list_items(const struct cfg_value *v, const struct cfg_value *const **items)
{
	static const struct cfg_value *one[1];

	if (v->kind == CV_LIST) {
		*items = (const struct cfg_value *const *)v->items;
		return v->nitems;
	}
	one[0] = v;
	*items = one;
	return 1;
}
