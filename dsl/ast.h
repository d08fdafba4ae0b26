/*
 * ast.h - the syntax trees the parser builds: config files (sections of
 * key = value pairs) and the expressions written inside select/where/...
 * strings. Every node carries its location for "file:line:col" messages.
 * Trees are built once at start-up (malloc is fine here) and freed with
 * the matching *_free function.
 */
#ifndef ISP_DSL_AST_H
#define ISP_DSL_AST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dsl_loc {
	const char *file;       /* owned by the dsl_source */
	int line, col;          /* 1-based, of the first character */
	int end_col;            /* column after the last character on that line */
};

/* ---- config ---- */

enum cfg_vkind { CV_STRING, CV_NUMBER, CV_IDENT, CV_LIST };

struct cfg_value {
	enum cfg_vkind kind;
	char *text;             /* unquoted string, number or identifier text */
	struct dsl_loc loc;
	struct cfg_value **items; /* CV_LIST */
	size_t nitems;
};

struct cfg_kv {
	char *key;
	char *subkey;           /* `property "compression.type" = "lz4"` */
	struct cfg_value *value;
	struct dsl_loc loc;
};

struct cfg_section {
	char *type;             /* event-report, query-report, redis-output, ... */
	char *name;             /* NULL when unnamed */
	struct dsl_loc loc;
	struct cfg_kv **kvs;
	size_t nkvs;
};

struct cfg_file {
	struct cfg_section **sections;
	size_t nsections;
};

void cfg_value_free(struct cfg_value *v);
void cfg_kv_free(struct cfg_kv *kv);
void cfg_section_free(struct cfg_section *s);
void cfg_file_free(struct cfg_file *f);

/* ---- expressions ---- */

enum ex_kind {
	EX_ATTR,                /* name; index >= 0 for attr[i] */
	EX_NUM,
	EX_STR,
	EX_ADDR,                /* IPv4/IPv6 literal, optional /prefix */
	EX_CALL,                /* name(args) */
	EX_BIN,                 /* a op b */
	EX_NOT,
	EX_NEG,
	EX_IN,                  /* a in { args } */
	EX_LIST,                /* { args } (only under EX_IN) */
};

enum ex_op {
	OP_NONE, OP_OR, OP_AND, OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE,
	OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD,
};

struct ex_node {
	enum ex_kind kind;
	enum ex_op op;
	struct dsl_loc loc;
	char *name;             /* attribute or function name, string text */
	bool is_float;
	uint64_t u;             /* integer literal */
	double f;               /* float literal */
	uint8_t addr[16];       /* EX_ADDR, network order */
	uint8_t addr_v6;
	int prefix;             /* EX_ADDR: -1 = none */
	int index;              /* EX_ATTR: -1 = none */
	struct ex_node *a, *b;
	struct ex_node **args;
	size_t nargs;
};

void ex_free(struct ex_node *n);
const char *ex_op_text(enum ex_op op);

#endif
