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
	const struct cfg_kv *cache_period;      /* output { cache-period } */
	struct rule_reads *reads;       /* the rule being compiled: every slot it names */
};

/* Between them, every slot compile_slot gives goes into *reads (listed
 * once); reads_end marks the list complete when the rule compiled. */
void reads_begin(struct compiler *c, struct rule_reads *reads);
bool reads_end(struct compiler *c, bool ok);

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

/* ---- value helpers (compile.c): an error record when they fail ---- */
const struct cfg_kv *find_kv(const struct cfg_section *s, const char *key);
bool check_keys(struct compiler *c, const struct cfg_section *s,
		const char *const *known, const char *what);
bool get_bool(struct compiler *c, const struct cfg_kv *kv, bool *out);
bool get_whole(struct compiler *c, const struct cfg_kv *kv, uint64_t min, uint64_t max,
	       uint64_t *out);
bool get_number(struct compiler *c, const struct cfg_kv *kv, double min, double max,
		double *out);
bool get_string(struct compiler *c, const struct cfg_kv *kv, const char **out);
/* output-format's value; `allow`: which formats beyond json, csv and
 * intspect-csv the section takes. */
#define FMT_ALLOW_TEMPLATE 1u   /* event reports: MMT's templates */
#define FMT_ALLOW_PARTIAL 2u    /* query reports: mergeable partial windows */
bool format_of(struct compiler *c, const struct cfg_kv *kv, enum rec_format *out,
	       unsigned allow);

/* ---- settings.c: the global settings, input and output sections, and
 * MMT-Probe's sections outside intspect's job ---- */
bool compile_global(struct compiler *c, const struct cfg_section *s);
bool compile_input(struct compiler *c, const struct cfg_section *s);
bool compile_output(struct compiler *c, const struct cfg_section *s);
bool compile_control(struct compiler *c, const struct cfg_section *s);
bool compile_merge(struct compiler *c, const struct cfg_section *s);
/* An MMT-Probe section intspect does not implement: a warning, true. */
bool ignored_section(struct compiler *c, const struct cfg_section *s);
/* An output-channel name of such a section (mongodb, mqtt). */
bool ignored_channel(const char *name);
/* MMT-Probe's output.cache-period for a file-output written MMT-style, or
 * NULL: the compiler hands it to the file channel as its own key. */
const struct cfg_kv *file_cache_period(const struct compiler *c, const struct cfg_section *s);

/* Suggest the closest of `known` to `word` (edit distance <= 3), or NULL. */
const char *closest_word(const char *word, const char *const *known);

/* channels.c: output sections and the channels rules name */
bool is_output_section(const struct cfg_section *s, char *type, size_t len);
bool is_ignored_type(const char *type);
bool add_channel(struct compiler *c, const struct cfg_section *s, const char *type,
		 const char *file);
bool channel_list(struct compiler *c, const struct cfg_kv *kv, int **out, unsigned *n);
/* compile.c: a value's items (a list, or the value alone) */
size_t list_items(const struct cfg_value *v, const struct cfg_value *const **items);
/* compile.c, for metrics.c: an erule's memory; enable */
void free_erule(struct erule *r);
bool section_disabled(const struct cfg_section *s);
bool section_enabled(struct compiler *c, const struct cfg_section *s, bool *enabled);
void event_flow_slots(struct compiler *c, struct erule *r, const struct dsl_loc *loc);
bool compile_timestamp(struct compiler *c, const struct cfg_kv *kv, struct erule *r);
/* compile.c: a list of whole attributes (slots, and names when wanted);
 * report names unique over every kind of report */
bool attr_list(struct compiler *c, const struct cfg_kv *kv, int **slots, char ***names,
	       unsigned *n, bool allow_index);
bool unique_report(struct compiler *c, const struct cfg_section *s);
bool unique_report_name(struct compiler *c, const char *name, const struct dsl_loc *at);
/* A section as canonical text (type, name, extra, keys and values, no
 * locations): equal texts, the same rule (hot reload). malloc'd. */
char *section_text(const struct cfg_section *s, const char *extra);
/* What every report section ends with: output-format (FMT_ALLOW_...),
 * output-channel, its name and its text. */
bool report_tail(struct compiler *c, const struct cfg_section *s, unsigned allow,
		 enum rec_format *format, bool *format_set, int **channels, unsigned *nchannels,
		 char **name, char **text);
/* monitor.c: a flow-monitor { ... } section; a monitor's memory */
bool compile_monitor(struct compiler *c, const struct cfg_section *s);
void free_mrule(struct mrule *r);
/* dta.c: dta-store NAME { ... } and dta { ... } sections; a store's memory */
bool compile_dta_store(struct compiler *c, const struct cfg_section *s);
bool compile_dta_settings(struct compiler *c, const struct cfg_section *s);
void free_dta_def(struct dta_def *d);
/* metrics.c: a metrics { ... } section, as the event reports it stands for */
bool compile_metrics(struct compiler *c, const struct cfg_section *s);

#endif
