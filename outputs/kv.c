/*
 * kv.c - parsing and checking output-section keys (see kv.h).
 *
 * Strict on purpose: a typo in a config key or value must stop the start
 * with a message that points at it, not silently fall back to a default.
 */
#include "kv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const isp_channel_generic_keys[] = {
	"enable", "queue-records", "queue-bytes", "drop-policy", "batch",
	"flush-ms", "shutdown-ms", "format", NULL
};

/* Append to err without overrunning it (truncation is acceptable). */
static void append(char *err, size_t errlen, size_t *off, const char *fmt, ...)
	ISP_KV_PRINTF(4, 5);
static void append(char *err, size_t errlen, size_t *off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*off >= errlen)
		return;
	va_start(ap, fmt);
	n = vsnprintf(err + *off, errlen - *off, fmt, ap);
	va_end(ap);
	if (n > 0)
		*off += (size_t)n;
}

/* Edit distance, capped: only near misses matter for a suggestion. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[64], i, j;

	if (la >= 63 || lb >= 63)
		return 99;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static bool in_list(const char *const *list, const char *s)
{
	for (; list && *list; list++)
		if (strcmp(*list, s) == 0)
			return true;
	return false;
}

static void nearest(const char *const *list, const char *s,
		    const char **best, size_t *bestd)
{
	for (; list && *list; list++) {
		size_t d = distance(s, *list);

		if (d < *bestd) {
			*bestd = d;
			*best = *list;
		}
	}
}

int isp_kv_check_known(const struct isp_channel_cfg *cfg,
		       const char *const *known, int *bad_kv,
		       char *err, size_t errlen)
{
	for (size_t i = 0; i < cfg->nkv; i++) {
		const char *k = cfg->kv[i].key;

		for (size_t j = 0; j < i; j++) {
			if (strcmp(cfg->kv[j].key, k) == 0) {
				*bad_kv = (int)i;
				snprintf(err, errlen,
					 "duplicate key '%s' (first at line %d)",
					 k, cfg->kv[j].line);
				return -1;
			}
		}
		if (in_list(known, k))
			continue;

		const char *best = NULL;
		size_t bestd = 3, off = 0;

		nearest(isp_channel_generic_keys, k, &best, &bestd);
		nearest(known, k, &best, &bestd);
		/* Two edits turn "path" into "batch": not a near miss. */
		if (2 * bestd >= strlen(k))
			best = NULL;
		*bad_kv = (int)i;
		append(err, errlen, &off, "unknown key '%s' for a%s %s output",
		       k, strchr("aeiou", cfg->type[0]) ? "n" : "", cfg->type);
		if (best)
			append(err, errlen, &off, " (did you mean '%s'?)", best);
		append(err, errlen, &off, "; known:");
		for (const char *const *g = isp_channel_generic_keys; *g; g++)
			append(err, errlen, &off, " %s,", *g);
		for (const char *const *t = known; t && *t; t++)
			append(err, errlen, &off, " %s,", *t);
		if (off > 0 && off <= errlen)
			err[off - 1] = '\0';      /* the last comma */
		return -1;
	}
	return 0;
}

int isp_kv_find(const struct isp_channel_cfg *cfg, const char *key)
{
	for (size_t i = 0; i < cfg->nkv; i++)
		if (strcmp(cfg->kv[i].key, key) == 0)
			return (int)i;
	return -1;
}

/* Digits only: strtoull alone would take "-1", " 7" and "0x10". */
static bool parse_u64(const char *s, const char **end, uint64_t *out)
{
	uint64_t v = 0;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (v > (UINT64_MAX - d) / 10)
			return false;
		v = v * 10 + d;
	}
	*end = s;
	*out = v;
	return true;
}

int isp_kv_uint(const struct isp_kv *kv, uint64_t min, uint64_t max,
		uint64_t *out, char *err, size_t errlen)
{
	const char *end;
	uint64_t v;

	if (!parse_u64(kv->value, &end, &v) || *end || v < min || v > max) {
		snprintf(err, errlen,
			 "bad value '%s' for %s: expected an integer from %llu to %llu",
			 kv->value, kv->key, (unsigned long long)min,
			 (unsigned long long)max);
		return -1;
	}
	*out = v;
	return 0;
}

static void fmt_size(char *b, size_t n, uint64_t v)
{
	static const char units[] = "kMGT";
	int u = -1;

	while (v >= 1024 && v % 1024 == 0 && u < 3) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(b, n, "%llu", (unsigned long long)v);
	else
		snprintf(b, n, "%llu%c", (unsigned long long)v, units[u]);
}

int isp_kv_size(const struct isp_kv *kv, uint64_t min, uint64_t max,
		uint64_t *out, char *err, size_t errlen)
{
	static const struct { const char *sfx; unsigned shift; } sfx[] = {
		{ "", 0 }, { "k", 10 }, { "K", 10 }, { "KiB", 10 },
		{ "M", 20 }, { "MiB", 20 }, { "G", 30 }, { "GiB", 30 },
	};
	const char *end;
	uint64_t v;

	if (parse_u64(kv->value, &end, &v)) {
		for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
			if (strcmp(end, sfx[i].sfx) != 0)
				continue;
			if (v > (UINT64_MAX >> sfx[i].shift))
				break;
			v <<= sfx[i].shift;
			if (v < min || v > max)
				break;
			*out = v;
			return 0;
		}
	}

	char lo[32], hi[32];

	fmt_size(lo, sizeof(lo), min);
	fmt_size(hi, sizeof(hi), max);
	snprintf(err, errlen,
		 "bad value '%s' for %s: expected a size from %s to %s (bytes, or with k, M, G)",
		 kv->value, kv->key, lo, hi);
	return -1;
}

int isp_kv_bool(const struct isp_kv *kv, bool *out, char *err, size_t errlen)
{
	static const char *const words[] = {
		"false", "true", "no", "yes", "off", "on", NULL
	};
	int i;

	for (i = 0; words[i]; i++) {
		if (strcmp(kv->value, words[i]) == 0) {
			*out = i % 2;
			return 0;
		}
	}
	snprintf(err, errlen, "bad value '%s' for %s: expected true or false",
		 kv->value, kv->key);
	return -1;
}

int isp_kv_enum(const struct isp_kv *kv, const char *const *names, int *out,
		char *err, size_t errlen)
{
	size_t off = 0;
	int i;

	for (i = 0; names[i]; i++) {
		if (strcmp(kv->value, names[i]) == 0) {
			*out = i;
			return 0;
		}
	}
	append(err, errlen, &off, "bad value '%s' for %s: expected ",
	       kv->value, kv->key);
	for (i = 0; names[i]; i++)
		append(err, errlen, &off, "%s%s", i == 0 ? "" :
		       names[i + 1] ? ", " : " or ", names[i]);
	return -1;
}

void isp_kv_errorf(char *err, size_t errlen, const struct isp_channel_cfg *cfg,
		   const struct isp_kv *kv, const char *fmt, ...)
{
	const char *file = cfg && cfg->file ? cfg->file : "config";
	size_t off = 0;
	va_list ap;
	int n;

	if (errlen == 0)
		return;
	int line = kv && kv->line > 0 ? kv->line : cfg && cfg->line > 0 ? cfg->line : 0;
	int col = kv && kv->line > 0 ? kv->col : cfg && cfg->line > 0 ? cfg->col : 0;

	if (cfg && cfg->err_pos) {
		cfg->err_pos[0] = line;
		cfg->err_pos[1] = col;
	}
	if (line > 0)
		append(err, errlen, &off, "%s:%d:%d: ", file, line, col);
	else
		append(err, errlen, &off, "%s: ", file);
	if (off >= errlen)
		return;
	va_start(ap, fmt);
	n = vsnprintf(err + off, errlen - off, fmt, ap);
	va_end(ap);
	(void)n;
}
