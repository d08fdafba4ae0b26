/*
 * parser.y - grammar of config files and of the expressions written in
 * their strings. One grammar, two entry tokens: START_CONFIG for a file,
 * START_EXPR for an expression. It only builds trees; meaning is checked
 * by the semantic pass (sema.c).
 */
%define api.pure full
%define api.prefix {dsl_yy}
%define parse.error detailed
%define parse.lac full
%locations
%param {void *scanner}
%parse-param {struct dsl_parse *ps}

%code requires {
#include "ast.h"
struct dsl_parse;
struct dsl_vec { void **v; size_t n; };
}

%code provides {
void dsl_yyerror(DSL_YYLTYPE *loc, void *scanner, struct dsl_parse *ps, const char *msg);
int dsl_yylex(DSL_YYSTYPE *lval, DSL_YYLTYPE *lloc, void *scanner);
}

%code {
#include <stdlib.h>
#include <string.h>

#include "parse.h"

static struct dsl_loc mkloc(struct dsl_parse *ps, const DSL_YYLTYPE *l)
{
	struct dsl_loc d = { ps->file, l->first_line, l->first_column,
			     l->last_line == l->first_line ? l->last_column : l->first_column + 1 };
	return d;
}

static int push(struct dsl_vec *v, void *item)
{
	void **n = realloc(v->v, (v->n + 1) * sizeof(*n));
	if (!n)
		return -1;
	n[v->n++] = item;
	v->v = n;
	return 0;
}

static struct cfg_value *value(struct dsl_parse *ps, enum cfg_vkind k, char *text,
			       const DSL_YYLTYPE *l)
{
	struct cfg_value *v = calloc(1, sizeof(*v));
	if (!v) {
		free(text);
		return NULL;
	}
	v->kind = k;
	v->text = text;
	v->loc = mkloc(ps, l);
	return v;
}

static struct ex_node *node(struct dsl_parse *ps, enum ex_kind k, const DSL_YYLTYPE *l)
{
	struct ex_node *n = calloc(1, sizeof(*n));
	if (n) {
		n->kind = k;
		n->loc = mkloc(ps, l);
		n->index = -1;
		n->prefix = -1;
	}
	return n;
}

static struct ex_node *binary(struct dsl_parse *ps, enum ex_op op, struct ex_node *a,
			      struct ex_node *b, const DSL_YYLTYPE *l)
{
	struct ex_node *n = node(ps, EX_BIN, l);
	if (n) {
		n->op = op;
		n->a = a;
		n->b = b;
	}
	return n;
}

static void free_vec_values(struct dsl_vec *v)
{
	for (size_t i = 0; i < v->n; i++)
		cfg_value_free(v->v[i]);
	free(v->v);
}

static void free_vec_kvs(struct dsl_vec *v)
{
	for (size_t i = 0; i < v->n; i++)
		cfg_kv_free(v->v[i]);
	free(v->v);
}

static void free_vec_ex(struct dsl_vec *v)
{
	for (size_t i = 0; i < v->n; i++)
		ex_free(v->v[i]);
	free(v->v);
}

#define OOM(x) do { if (!(x)) { dsl_yyerror(&yylloc, scanner, ps, "out of memory"); YYABORT; } } while (0)
}

%union {
	char *str;
	uint64_t u;
	double f;
	struct cfg_value *val;
	struct cfg_kv *kv;
	struct cfg_section *sec;
	struct ex_node *ex;
	struct dsl_vec vals;
	struct dsl_vec kvlist;
	struct dsl_vec exs;
}

%token END 0 "end of input"
%token START_CONFIG START_EXPR
%token <str> STRING NUMBER IDENT ATTR NAME ADDR XSTRING
%token <u> INTEGER
%token <f> FLOAT
%token INCLUDE
%token LEX_ERROR "invalid character"
%token AND "and" OR "or" NOT "not" IN "in"
%token EQ "==" NE "!=" LE "<=" GE ">="

%type <val> value
%type <vals> items
%type <kvlist> kvs
%type <exs> args
%type <kv> kv
%type <sec> section
%type <ex> expr primary

%destructor { free($$); } <str>
%destructor { cfg_value_free($$); } <val>
%destructor { cfg_kv_free($$); } <kv>
%destructor { cfg_section_free($$); } <sec>
%destructor { ex_free($$); } <ex>
%destructor { free_vec_values(&$$); } <vals>
%destructor { free_vec_kvs(&$$); } <kvlist>
%destructor { free_vec_ex(&$$); } <exs>

%left OR
%left AND
%precedence NOT
%nonassoc EQ NE '<' LE '>' GE IN
%left '+' '-'
%left '*' '/' '%'
%precedence UMINUS

%%

top
	: START_CONFIG config
	| START_EXPR expr               { ps->expr = $2; }
	;

config
	: %empty
	| config section
	  {
		struct cfg_file *f = ps->cfg;
		struct cfg_section **s = realloc(f->sections, (f->nsections + 1) * sizeof(*s));
		if (!s) { cfg_section_free($2); OOM(0); }
		s[f->nsections++] = $2;
		f->sections = s;
	  }
	| config kv sep
	  {
		/* top-level `key = value` (MMT's probe-id, thread-nb, ...) go to
		 * one "global" section */
		struct cfg_file *f = ps->cfg;
		struct cfg_section *g = NULL;
		for (size_t i = 0; i < f->nsections; i++)
			if (strcmp(f->sections[i]->type, "global") == 0 && !f->sections[i]->name)
				g = f->sections[i];
		if (!g) {
			g = calloc(1, sizeof(*g));
			struct cfg_section **s = g ? realloc(f->sections, (f->nsections + 1) * sizeof(*s)) : NULL;
			if (!g || !s || !(g->type = strdup("global"))) {
				if (s) f->sections = s;
				cfg_section_free(g); cfg_kv_free($2); OOM(0);
			}
			g->loc = $2->loc;
			s[f->nsections++] = g;
			f->sections = s;
		}
		struct cfg_kv **kvs = realloc(g->kvs, (g->nkvs + 1) * sizeof(*kvs));
		if (!kvs) { cfg_kv_free($2); OOM(0); }
		kvs[g->nkvs++] = $2;
		g->kvs = kvs;
	  }
	| config INCLUDE STRING
	  {
		struct cfg_value *v = value(ps, CV_STRING, $3, &@3);
		OOM(v);
		/* an include is a section of type "include": the driver splices
		 * the included file's sections in its place */
		struct cfg_section *s = calloc(1, sizeof(*s));
		if (!s) { cfg_value_free(v); OOM(0); }
		s->type = strdup("include");
		s->name = strdup(v->text);
		s->loc = mkloc(ps, &@2);
		cfg_value_free(v);
		struct cfg_file *f = ps->cfg;
		struct cfg_section **arr = realloc(f->sections, (f->nsections + 1) * sizeof(*arr));
		if (!arr || !s->type || !s->name) { free(arr == f->sections ? NULL : arr); cfg_section_free(s); OOM(0); }
		arr[f->nsections++] = s;
		f->sections = arr;
	  }
	;

section
	: IDENT '{' kvs '}'
	  {
		$$ = calloc(1, sizeof(*$$));
		if (!$$) { free($1); free_vec_kvs(&$3); OOM(0); }
		$$->type = $1; $$->loc = mkloc(ps, &@1);
		$$->kvs = (struct cfg_kv **)$3.v; $$->nkvs = $3.n;
	  }
	| IDENT IDENT '{' kvs '}'
	  {
		$$ = calloc(1, sizeof(*$$));
		if (!$$) { free($1); free($2); free_vec_kvs(&$4); OOM(0); }
		$$->type = $1; $$->name = $2; $$->loc = mkloc(ps, &@1);
		$$->kvs = (struct cfg_kv **)$4.v; $$->nkvs = $4.n;
	  }
	| IDENT STRING '{' kvs '}'
	  {
		$$ = calloc(1, sizeof(*$$));
		if (!$$) { free($1); free($2); free_vec_kvs(&$4); OOM(0); }
		$$->type = $1; $$->name = $2; $$->loc = mkloc(ps, &@1);
		$$->kvs = (struct cfg_kv **)$4.v; $$->nkvs = $4.n;
	  }
	;

kvs
	: %empty                        { $$.v = NULL; $$.n = 0; }
	| kvs kv sep                    { $$ = $1; if (push(&$$, $2)) { cfg_kv_free($2); free_vec_kvs(&$$); OOM(0); } }
	;

sep
	: %empty
	| ';'
	| ','
	;

kv
	: IDENT '=' value
	  {
		$$ = calloc(1, sizeof(*$$));
		if (!$$) { free($1); cfg_value_free($3); OOM(0); }
		$$->key = $1; $$->value = $3; $$->loc = mkloc(ps, &@1);
	  }
	| IDENT STRING '=' value
	  {
		$$ = calloc(1, sizeof(*$$));
		if (!$$) { free($1); free($2); cfg_value_free($4); OOM(0); }
		$$->key = $1; $$->subkey = $2; $$->value = $4; $$->loc = mkloc(ps, &@1);
	  }
	;

value
	: STRING                        { $$ = value(ps, CV_STRING, $1, &@1); OOM($$); }
	| NUMBER                        { $$ = value(ps, CV_NUMBER, $1, &@1); OOM($$); }
	| IDENT                         { $$ = value(ps, CV_IDENT, $1, &@1); OOM($$); }
	| '{' '}'                       { $$ = value(ps, CV_LIST, NULL, &@1); OOM($$); }
	| '{' items opt_comma '}'
	  {
		$$ = value(ps, CV_LIST, NULL, &@1);
		if (!$$) { free_vec_values(&$2); OOM(0); }
		$$->items = (struct cfg_value **)$2.v; $$->nitems = $2.n;
	  }
	;

items
	: value                         { $$.v = NULL; $$.n = 0; if (push(&$$, $1)) { cfg_value_free($1); OOM(0); } }
	| items ',' value               { $$ = $1; if (push(&$$, $3)) { cfg_value_free($3); free_vec_values(&$$); OOM(0); } }
	;

opt_comma
	: %empty
	| ','
	;

expr
	: expr OR expr                  { $$ = binary(ps, OP_OR, $1, $3, &@2); OOM($$); }
	| expr AND expr                 { $$ = binary(ps, OP_AND, $1, $3, &@2); OOM($$); }
	| NOT expr                      { $$ = node(ps, EX_NOT, &@1); if (!$$) { ex_free($2); OOM(0); } $$->a = $2; }
	| expr EQ expr                  { $$ = binary(ps, OP_EQ, $1, $3, &@2); OOM($$); }
	| expr NE expr                  { $$ = binary(ps, OP_NE, $1, $3, &@2); OOM($$); }
	| expr '<' expr                 { $$ = binary(ps, OP_LT, $1, $3, &@2); OOM($$); }
	| expr LE expr                  { $$ = binary(ps, OP_LE, $1, $3, &@2); OOM($$); }
	| expr '>' expr                 { $$ = binary(ps, OP_GT, $1, $3, &@2); OOM($$); }
	| expr GE expr                  { $$ = binary(ps, OP_GE, $1, $3, &@2); OOM($$); }
	| expr '+' expr                 { $$ = binary(ps, OP_ADD, $1, $3, &@2); OOM($$); }
	| expr '-' expr                 { $$ = binary(ps, OP_SUB, $1, $3, &@2); OOM($$); }
	| expr '*' expr                 { $$ = binary(ps, OP_MUL, $1, $3, &@2); OOM($$); }
	| expr '/' expr                 { $$ = binary(ps, OP_DIV, $1, $3, &@2); OOM($$); }
	| expr '%' expr                 { $$ = binary(ps, OP_MOD, $1, $3, &@2); OOM($$); }
	| '-' expr %prec UMINUS         { $$ = node(ps, EX_NEG, &@1); if (!$$) { ex_free($2); OOM(0); } $$->a = $2; }
	| expr IN '{' args '}'
	  {
		struct ex_node *list = node(ps, EX_LIST, &@3);
		if (!list) { ex_free($1); free_vec_ex(&$4); OOM(0); }
		list->args = (struct ex_node **)$4.v; list->nargs = $4.n;
		$$ = node(ps, EX_IN, &@2);
		if (!$$) { ex_free($1); ex_free(list); OOM(0); }
		$$->a = $1; $$->b = list;
	  }
	| primary
	;

primary
	: INTEGER                       { $$ = node(ps, EX_NUM, &@1); OOM($$); $$->u = $1; $$->f = (double)$1; }
	| FLOAT                         { $$ = node(ps, EX_NUM, &@1); OOM($$); $$->f = $1; $$->is_float = true; }
	| XSTRING                       { $$ = node(ps, EX_STR, &@1); if (!$$) { free($1); OOM(0); } $$->name = $1; }
	| ADDR                          { $$ = node(ps, EX_ADDR, &@1); if (!$$) { free($1); OOM(0); } $$->name = $1; }
	| ATTR                          { $$ = node(ps, EX_ATTR, &@1); if (!$$) { free($1); OOM(0); } $$->name = $1; }
	| ATTR '[' INTEGER ']'
	  {
		$$ = node(ps, EX_ATTR, &@1);
		if (!$$) { free($1); OOM(0); }
		$$->name = $1;
		$$->index = $3 > 1000 ? 1000 : (int)$3;
	  }
	| NAME                          { $$ = node(ps, EX_ATTR, &@1); if (!$$) { free($1); OOM(0); } $$->name = $1; }
	| NAME '(' ')'                  { $$ = node(ps, EX_CALL, &@1); if (!$$) { free($1); OOM(0); } $$->name = $1; }
	| NAME '(' args ')'
	  {
		$$ = node(ps, EX_CALL, &@1);
		if (!$$) { free($1); free_vec_ex(&$3); OOM(0); }
		$$->name = $1; $$->args = (struct ex_node **)$3.v; $$->nargs = $3.n;
	  }
	| '(' expr ')'                  { $$ = $2; }
	;

args
	: expr                          { $$.v = NULL; $$.n = 0; if (push(&$$, $1)) { ex_free($1); OOM(0); } }
	| args ',' expr                 { $$ = $1; if (push(&$$, $3)) { ex_free($3); free_vec_ex(&$$); OOM(0); } }
	;

%%

void dsl_yyerror(DSL_YYLTYPE *loc, void *scanner, struct dsl_parse *ps, const char *msg)
{
	struct dsl_loc l = mkloc(ps, loc);

	(void)scanner;
	if (ps->lex_reported) {         /* the scanner already said what is wrong */
		ps->lex_reported = 0;
		return;
	}
	if (ps->depth > 0 && strstr(msg, "end of input")) {
		int i = ps->depth <= DSL_MAX_DEPTH ? ps->depth - 1 : DSL_MAX_DEPTH - 1;

		if (i > 0)
			dsl_error(ps->diags, &l, "end of file inside a block: the '{' at line %d, "
				  "column %d is not closed (nor the block opened at line %d, column %d)",
				  ps->open_line[i], ps->open_col[i], ps->open_line[0], ps->open_col[0]);
		else
			dsl_error(ps->diags, &l, "end of file inside a block: the '{' at line %d, "
				  "column %d is not closed", ps->open_line[i], ps->open_col[i]);
		return;
	}
	dsl_error(ps->diags, &l, "%s", msg);
}
