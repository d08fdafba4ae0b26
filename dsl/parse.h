/*
 * parse.h - parsing config files and expression strings.
 */
#ifndef ISP_DSL_PARSE_H
#define ISP_DSL_PARSE_H

#include "ast.h"
#include "diag.h"

/* State shared by the scanner and the parser of one text. */
struct dsl_parse {
	struct dsl_diags *diags;
	const struct dsl_source *src;
	const char *file;
	int start_token;        /* first token handed to the parser */
	int line, col;          /* scanner position */
	int lex_reported;       /* the scanner recorded an error for its last token */
	int cmt_line, cmt_col;  /* where an open comment started */
#define DSL_MAX_DEPTH 16
	int depth;              /* '{' not yet closed, and where they opened */
	int open_line[DSL_MAX_DEPTH], open_col[DSL_MAX_DEPTH];
	/* expression in a string: column of each character of the unescaped
	 * text in the file (escapes take two columns there), or NULL */
	const int *xmap;
	size_t xidx, xlen;
	/* results */
	struct cfg_file *cfg;
	struct ex_node *expr;
	struct cfg_value **includes; /* include "file" statements, in order */
	size_t nincludes;
};

/*
 * Parse a config file and, recursively, what it includes (depth 8, no
 * cycles). Sections of included files come first at their include point.
 * Returns NULL when any error was recorded in diags.
 */
struct cfg_file *dsl_parse_config(struct dsl_diags *diags, const char *path);
struct cfg_file *dsl_parse_config_mem(struct dsl_diags *diags, const char *name,
				      const char *text, size_t len);

/*
 * Parse the expression in a string value; `at` is where the string's text
 * starts in the file (after the quote) so errors point into the string.
 */
struct ex_node *dsl_parse_expr(struct dsl_diags *diags, const char *text,
			       const struct dsl_loc *at);

#endif
