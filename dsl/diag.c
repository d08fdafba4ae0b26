/*
 * diag.c - error records and their printing with carets.
 */
#include "diag.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void dsl_diags_init(struct dsl_diags *d)
{
	memset(d, 0, sizeof(*d));
}

void dsl_diags_free(struct dsl_diags *d)
{
	struct dsl_source *s = d->sources;

	while (s) {
		struct dsl_source *next = s->next;
		free(s->file);
		free(s->text);
		free(s);
		s = next;
	}
	free(d->v);
	memset(d, 0, sizeof(*d));
}

static void add_diag(struct dsl_diags *d, const struct dsl_loc *loc, bool warning,
		     const char *fmt, va_list ap)
{
	if (d->n == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 8;
		struct dsl_diag *v = realloc(d->v, cap * sizeof(*v));
		if (!v)
			return;
		d->v = v;
		d->cap = cap;
	}
	struct dsl_diag *e = &d->v[d->n++];
	if (loc)
		e->loc = *loc;
	else
		memset(&e->loc, 0, sizeof(e->loc));
	/* a disabled rule is never run: what is wrong in it (an MMT-Probe
	 * rule on a protocol intspect does not decode) is said, not fatal */
	bool demoted = !warning && d->demote;
	e->warning = warning || demoted;
	d->errors += !e->warning;
	size_t k = demoted ? (size_t)snprintf(e->msg, sizeof(e->msg), "in a disabled rule: ") : 0;
	vsnprintf(e->msg + k, sizeof(e->msg) - k, fmt, ap);
}

void dsl_verror(struct dsl_diags *d, const struct dsl_loc *loc, const char *fmt, va_list ap)
{
	add_diag(d, loc, false, fmt, ap);
}

void dsl_warning(struct dsl_diags *d, const struct dsl_loc *loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	add_diag(d, loc, true, fmt, ap);
	va_end(ap);
}

void dsl_error(struct dsl_diags *d, const struct dsl_loc *loc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	dsl_verror(d, loc, fmt, ap);
	va_end(ap);
}

static struct dsl_source *add_source(struct dsl_diags *d, const char *name, char *text,
				     size_t len)
{
	struct dsl_source *s = calloc(1, sizeof(*s));

	if (!s || !(s->file = strdup(name))) {
		free(s);
		free(text);
		return NULL;
	}
	s->text = text;
	s->len = len;
	s->next = d->sources;
	d->sources = s;
	return s;
}

struct dsl_source *dsl_source_mem(struct dsl_diags *d, const char *name,
				  const char *text, size_t len)
{
	char *copy = malloc(len + 1);

	if (!copy)
		return NULL;
	memcpy(copy, text, len);
	copy[len] = 0;
	return add_source(d, name, copy, len);
}

struct dsl_source *dsl_source_load(struct dsl_diags *d, const char *path,
				   const struct dsl_source *includer,
				   const struct dsl_loc *include_loc)
{
	FILE *f = fopen(path, "rb");
	struct stat st;

	if (!f) {
		dsl_error(d, include_loc, "cannot open '%s': %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > (64 << 20)) {
		dsl_error(d, include_loc, "'%s' is not a config file (a regular file up to 64 MiB)", path);
		fclose(f);
		return NULL;
	}
	/* an include cycle: the same file already on the include chain */
	for (const struct dsl_source *s = includer; s; s = s->includer) {
		struct stat other;
		if (stat(s->file, &other) == 0 && other.st_ino == st.st_ino && other.st_dev == st.st_dev) {
			dsl_error(d, include_loc, "'%s' includes itself (through %s)", path, s->file);
			fclose(f);
			return NULL;
		}
	}
	size_t cap = 4096, len = 0;
	char *text = malloc(cap);
	size_t got;
	while (text && (got = fread(text + len, 1, cap - len - 1, f)) > 0) {
		len += got;
		if (len + 1 == cap) {
			char *t = realloc(text, cap * 2);
			if (!t) {
				free(text);
				text = NULL;
				break;
			}
			text = t;
			cap *= 2;
		}
	}
	fclose(f);
	if (!text) {
		dsl_error(d, include_loc, "'%s': out of memory", path);
		return NULL;
	}
	text[len] = 0;
	struct dsl_source *s = add_source(d, path, text, len);
	if (s) {
		s->includer = includer;
		if (include_loc)
			s->include_loc = *include_loc;
	}
	return s;
}

static const struct dsl_source *find_source(const struct dsl_diags *d, const char *file)
{
	for (const struct dsl_source *s = d->sources; s; s = s->next)
		if (file && strcmp(s->file, file) == 0)
			return s;
	return NULL;
}

static void print_line(const struct dsl_source *s, const struct dsl_loc *loc, FILE *out)
{
	const char *p = s->text, *end = s->text + s->len;

	for (int line = 1; line < loc->line && p < end; p++)
		if (*p == '\n')
			line++;
	if (p >= end && loc->line > 1)
		return;
	const char *eol = memchr(p, '\n', (size_t)(end - p));
	if (!eol)
		eol = end;
	fprintf(out, "  %.*s\n  ", (int)(eol - p), p);
	for (int c = 1; c < loc->col && p + c - 1 < eol; c++)
		fputc(p[c - 1] == '\t' ? '\t' : ' ', out);
	fputc('^', out);
	for (int c = loc->col + 1; c < loc->end_col && p + c - 1 < eol; c++)
		fputc('~', out);
	fputc('\n', out);
}

static int by_position(const void *a, const void *b)
{
	const struct dsl_diag *x = a, *y = b;
	int f = strcmp(x->loc.file ? x->loc.file : "", y->loc.file ? y->loc.file : "");

	if (f)
		return f;
	if (x->loc.line != y->loc.line)
		return x->loc.line - y->loc.line;
	return x->loc.col - y->loc.col;
}

void dsl_print_diags(struct dsl_diags *d, FILE *out)
{
	/* in file order, as a reader goes through the file */
	if (d->n > 1)
		qsort(d->v, d->n, sizeof(*d->v), by_position);
	for (size_t i = 0; i < d->n; i++) {
		const struct dsl_diag *e = &d->v[i];
		const struct dsl_source *s = find_source(d, e->loc.file);
		for (const struct dsl_source *inc = s; inc && inc->includer; inc = inc->includer)
			fprintf(out, "In file included from %s:%d:%d\n", inc->include_loc.file,
				inc->include_loc.line, inc->include_loc.col);
		const char *what = e->warning ? "warning" : "error";
		if (e->loc.file)
			fprintf(out, "%s:%d:%d: %s: %s\n", e->loc.file, e->loc.line, e->loc.col,
				what, e->msg);
		else
			fprintf(out, "%s: %s\n", what, e->msg);
		if (s && e->loc.line > 0 && !e->warning)       /* a warning: one line */
			print_line(s, &e->loc, out);
	}
}
