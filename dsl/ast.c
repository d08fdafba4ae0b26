/*
 * ast.c - freeing syntax trees, operator names.
 */
#include "ast.h"

#include <stdlib.h>

void cfg_value_free(struct cfg_value *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->nitems; i++)
		cfg_value_free(v->items[i]);
	free(v->items);
	free(v->text);
	free(v);
}

void cfg_kv_free(struct cfg_kv *kv)
{
	if (!kv)
		return;
	free(kv->key);
	free(kv->subkey);
	cfg_value_free(kv->value);
	free(kv);
}

void cfg_section_free(struct cfg_section *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nkvs; i++)
		cfg_kv_free(s->kvs[i]);
	free(s->kvs);
	free(s->type);
	free(s->name);
	free(s);
}

void cfg_file_free(struct cfg_file *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nsections; i++)
		cfg_section_free(f->sections[i]);
	free(f->sections);
	free(f);
}

void ex_free(struct ex_node *n)
{
	if (!n)
		return;
	ex_free(n->a);
	ex_free(n->b);
	for (size_t i = 0; i < n->nargs; i++)
		ex_free(n->args[i]);
	free(n->args);
	free(n->name);
	free(n);
}

const char *ex_op_text(enum ex_op op)
{
	static const char *const t[] = {
		[OP_NONE] = "?", [OP_OR] = "or", [OP_AND] = "and", [OP_EQ] = "==",
		[OP_NE] = "!=", [OP_LT] = "<", [OP_LE] = "<=", [OP_GT] = ">",
		[OP_GE] = ">=", [OP_ADD] = "+", [OP_SUB] = "-", [OP_MUL] = "*",
		[OP_DIV] = "/", [OP_MOD] = "%",
	};
	return (unsigned)op < sizeof(t) / sizeof(t[0]) ? t[op] : "?";
}
