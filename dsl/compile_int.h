/*
 * compile_int.h - inside the compiler (compile.c, compile_expr.c); the API
 * is compile.h.
 */
#ifndef ISP_DSL_COMPILE_INT_H
#define ISP_DSL_COMPILE_INT_H

#include "compile.h"

struct compiler {
	struct dsl_diags *d;
	const struct isp_registry *reg;
	struct isp_program *prog;
};

enum ty { TY_ERR, TY_NUM, TY_ADDR4, TY_ADDR6, TY_MAC, TY_STR };

struct typed {
	struct cx *cx;
	enum ty ty;
	bool per_hop;           /* refers to the current hop somewhere */
	int hop_slot;           /* one per-hop slot inside, or -1 */
};

/* Slot of an attribute name (shared by every rule); -1 with an error. */
int compile_slot(struct compiler *c, const char *name, const struct dsl_loc *loc,
		 bool *per_hop, enum ty *ty);

/* Expression in a string value. allow_hop: per-hop attributes may stand
 * for "the current hop" (aggregation arguments). */
bool compile_expr_string(struct compiler *c, const struct cfg_value *v, bool allow_hop,
			 struct typed *out);

/* `where`: a presence list (MMT) or a boolean expression string. NULL with
 * no error when there is no condition. */
bool compile_where(struct compiler *c, const struct cfg_value *v, struct cx **out);

/* One select item: "avg(diff(meta.timestamp))", "ip.src" (= last), ... */
bool compile_select_item(struct compiler *c, const struct cfg_value *v, struct qitem *out);

/* Suggest the closest of `known` to `word` (edit distance <= 3), or NULL. */
const char *closest_word(const char *word, const char *const *known);

#endif
