/*
 * diag.h - error records for the config language.
 *
 * Errors are collected, not printed where they are found: the parser, the
 * semantic pass and the channel set-up all add records, and the caller
 * prints them as
 *     file:line:col: error: message
 *       <source line>
 *       ^~~~
 * (with "In file included from file:line:col" for includes).
 */
#ifndef ISP_DSL_DIAG_H
#define ISP_DSL_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "ast.h"

/* A loaded file: its text stays alive for the carets. */
struct dsl_source {
	char *file;
	char *text;
	size_t len;
	struct dsl_source *next;
	const struct dsl_source *includer;
	struct dsl_loc include_loc;
};

struct dsl_diag {
	struct dsl_loc loc;
	bool warning;           /* accepted, but the user should know */
	char msg[512];          /* room for a key list ("; known: ...") */
};

struct dsl_diags {
	struct dsl_diag *v;
	size_t n, cap;
	size_t errors;          /* records that are errors, not warnings */
	unsigned demote;        /* > 0: errors are warnings (a disabled rule) */
	struct dsl_source *sources;     /* owned list of loaded files */
};

void dsl_diags_init(struct dsl_diags *d);
void dsl_diags_free(struct dsl_diags *d);

#if defined(__GNUC__)
#define DSL_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define DSL_PRINTF(a, b)
#endif

void dsl_error(struct dsl_diags *d, const struct dsl_loc *loc, const char *fmt, ...) DSL_PRINTF(3, 4);
void dsl_verror(struct dsl_diags *d, const struct dsl_loc *loc, const char *fmt, va_list ap);
/* Printed as "file:line:col: warning: message"; the config stays valid. */
void dsl_warning(struct dsl_diags *d, const struct dsl_loc *loc, const char *fmt, ...) DSL_PRINTF(3, 4);

/* Read a file into a new source (NULL and an error record on failure). */
struct dsl_source *dsl_source_load(struct dsl_diags *d, const char *path,
				   const struct dsl_source *includer,
				   const struct dsl_loc *include_loc);
/* A source from memory (tests, fuzzing). */
struct dsl_source *dsl_source_mem(struct dsl_diags *d, const char *name,
				  const char *text, size_t len);

void dsl_print_diags(struct dsl_diags *d, FILE *out);

#endif
