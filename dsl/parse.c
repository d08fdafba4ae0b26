/*
 * parse.c - drives the scanner and parser over files and strings, and
 * splices included files.
 */
#include "parse.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "parser.h"

typedef void *yyscan_t;
int dsl_yylex_init_extra(struct dsl_parse *extra, yyscan_t *scanner);
int dsl_yylex_destroy(yyscan_t scanner);
struct yy_buffer_state *dsl_yy_scan_bytes(const char *bytes, int len, yyscan_t scanner);

#define MAX_INCLUDE_DEPTH 8

static int run(struct dsl_parse *ps, const char *text, size_t len)
{
	yyscan_t sc;

	if (len > INT_MAX || dsl_yylex_init_extra(ps, &sc) != 0)
		return -1;
	dsl_yy_scan_bytes(text, (int)len, sc);
	int rc = dsl_yyparse(sc, ps);
	dsl_yylex_destroy(sc);
	return rc;
}

static struct cfg_file *parse_source(struct dsl_diags *diags, const struct dsl_source *src,
				     int depth);

/* Replace each "include" section by the sections of its file. */
static int splice_includes(struct dsl_diags *diags, struct cfg_file *f,
			   const struct dsl_source *src, int depth)
{
	for (size_t i = 0; i < f->nsections; i++) {
		struct cfg_section *s = f->sections[i];
		if (strcmp(s->type, "include") != 0)
			continue;
		if (depth >= MAX_INCLUDE_DEPTH) {
			dsl_error(diags, &s->loc, "includes nested deeper than %d (a cycle?)",
				  MAX_INCLUDE_DEPTH);
			return -1;
		}
		/* relative paths are relative to the including file */
		char path[4096];
		const char *slash = strrchr(src->file, '/');
		if (s->name[0] != '/' && slash)
			snprintf(path, sizeof(path), "%.*s/%s", (int)(slash - src->file), src->file, s->name);
		else
			snprintf(path, sizeof(path), "%s", s->name);
		struct dsl_source *inc = dsl_source_load(diags, path, src, &s->loc);
		if (!inc)
			return -1;
		struct cfg_file *sub = parse_source(diags, inc, depth + 1);
		if (!sub)
			return -1;
		size_t n = f->nsections - 1 + sub->nsections;
		struct cfg_section **arr = malloc((n ? n : 1) * sizeof(*arr));
		if (!arr) {
			cfg_file_free(sub);
			return -1;
		}
		/* (memcpy of zero elements from a NULL array is undefined) */
		if (i)
			memcpy(arr, f->sections, i * sizeof(*arr));
		if (sub->nsections)
			memcpy(arr + i, sub->sections, sub->nsections * sizeof(*arr));
		if (f->nsections - i - 1)
			memcpy(arr + i + sub->nsections, f->sections + i + 1,
			       (f->nsections - i - 1) * sizeof(*arr));
		cfg_section_free(s);
		free(f->sections);
		f->sections = arr;
		f->nsections = n;
		i += sub->nsections;
		i--;
		free(sub->sections);
		free(sub);
	}
	return 0;
}

static struct cfg_file *parse_source(struct dsl_diags *diags, const struct dsl_source *src,
				     int depth)
{
	struct dsl_parse ps = { .diags = diags, .src = src, .file = src->file,
				.start_token = START_CONFIG, .line = 1, .col = 1 };
	size_t before = diags->errors;

	ps.cfg = calloc(1, sizeof(*ps.cfg));
	if (!ps.cfg)
		return NULL;
	if (run(&ps, src->text, src->len) != 0 || diags->errors > before) {
		if (diags->errors == before)
			dsl_error(diags, NULL, "%s: cannot parse", src->file);
		cfg_file_free(ps.cfg);
		return NULL;
	}
	if (splice_includes(diags, ps.cfg, src, depth) != 0) {
		cfg_file_free(ps.cfg);
		return NULL;
	}
	return ps.cfg;
}

struct cfg_file *dsl_parse_config(struct dsl_diags *diags, const char *path)
{
	struct dsl_source *src = dsl_source_load(diags, path, NULL, NULL);

	return src ? parse_source(diags, src, 0) : NULL;
}

struct cfg_file *dsl_parse_config_mem(struct dsl_diags *diags, const char *name,
				      const char *text, size_t len)
{
	struct dsl_source *src = dsl_source_mem(diags, name, text, len);

	return src ? parse_source(diags, src, 0) : NULL;
}

/*
 * Column in the file of each character of a string's unescaped text, from
 * the file's own bytes at `at` (just after the opening quote). NULL when
 * the source is not known or the string has no escape (columns are then
 * simply consecutive).
 */
static int *column_map(struct dsl_diags *diags, const char *text, const struct dsl_loc *at)
{
	const struct dsl_source *src = NULL;

	if (!at || !at->file)
		return NULL;
	for (const struct dsl_source *s = diags->sources; s; s = s->next)
		if (strcmp(s->file, at->file) == 0)
			src = s;
	if (!src)
		return NULL;
	const char *p = src->text, *end = src->text + src->len;
	for (int line = 1; line < at->line && p < end; p++)
		if (*p == '\n')
			line++;
	if ((size_t)(end - p) < (size_t)at->col)
		return NULL;
	p += at->col - 1;
	size_t n = strlen(text);
	if (!memchr(p, '\\', (size_t)(end - p) < 2 * n + 2 ? (size_t)(end - p) : 2 * n + 2))
		return NULL;
	int *map = malloc((n + 1) * sizeof(*map));
	if (!map)
		return NULL;
	int col = at->col;
	for (size_t i = 0; i <= n; i++) {
		map[i] = col;
		if (p < end && *p == '\\') {
			col += 2;
			p += 2;
		} else {
			col++;
			p++;
		}
	}
	return map;
}

struct ex_node *dsl_parse_expr(struct dsl_diags *diags, const char *text,
			       const struct dsl_loc *at)
{
	struct dsl_parse ps = { .diags = diags, .file = at ? at->file : "<expr>",
				.start_token = START_EXPR,
				.line = at ? at->line : 1, .col = at ? at->col : 1 };
	size_t before = diags->errors;
	int *map = column_map(diags, text, at);

	ps.xmap = map;
	ps.xlen = strlen(text);

	int rc = run(&ps, text, strlen(text));
	free(map);
	if (rc != 0 || diags->errors > before) {
		if (diags->errors == before)
			dsl_error(diags, at, "cannot parse expression '%s'", text);
		ex_free(ps.expr);
		return NULL;
	}
	return ps.expr;
}
