/*
 * commands.c - the control socket's commands (commands.h). Counters are
 * read as the workers publish them (isp_pipeline_sample), changes go to
 * every worker through isp_rules_control: nothing here touches a worker's
 * state.
 */
#include "commands.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../filters/engine.h"
#include "server.h"

#define SAMPLE_WAIT_MS 200

static const char *const commands[] = {
	"help", "stats", "rules", "enable", "disable", "reset", "set-sampling", "set-interval",
	"set-overflow", "entry-add", "entry-remove", "get", "reload", "monitor-add",
	"monitor-remove", "dta", NULL,
};

static json_t *ok(void)
{
	return json_pack("{s:b}", "ok", 1);
}

static json_t *dissection(const struct isp_ctl_run *run)
{
	const struct isp_registry *reg = run->reg;
	struct isp_stats *st = calloc(1, sizeof(*st));
	uint64_t per[ISP_MAX_WORKERS] = { 0 };
	unsigned n = isp_pipeline_workers(run->pl);

	if (!st)
		return NULL;
	unsigned answered = isp_pipeline_sample(run->pl, st, per, SAMPLE_WAIT_MS);
	json_t *o = json_pack("{s:I,s:I,s:I,s:I,s:I,s:i}", "packets", (json_int_t)st->packets,
			      "bytes", (json_int_t)st->bytes, "items", (json_int_t)st->items,
			      "malformed_packets", (json_int_t)st->malformed_packets,
			      "items_dropped", (json_int_t)isp_pipeline_dropped(run->pl),
			      "workers_answered", (int)answered);
	json_t *dec = json_object(), *mal = json_object(), *w = json_array();
	for (uint16_t i = 0; i < reg->nprotos; i++) {
		const char *name = reg->proto[i].desc->name;
		json_object_set_new(dec, name, json_integer((json_int_t)st->decoded[i]));
		json_t *why = NULL;
		for (unsigned v = ISP_ERR_TRUNCATED; v < ISP_VERDICT__COUNT; v++) {
			if (!st->malformed[i][v])
				continue;
			if (!why)
				why = json_object();
			json_object_set_new(why, isp_verdict_name((enum isp_verdict)v),
					    json_integer((json_int_t)st->malformed[i][v]));
		}
		if (why)
			json_object_set_new(mal, name, why);
	}
	for (unsigned i = 0; i < n; i++)
		json_array_append_new(w, json_pack("{s:i,s:I,s:I}", "worker", (int)i, "packets",
						   (json_int_t)per[i], "items",
						   (json_int_t)isp_pipeline_worker_items(run->pl, i)));
	json_object_set_new(o, "decoded", dec);
	json_object_set_new(o, "malformed", mal);
	json_object_set_new(o, "workers", w);
	free(st);
	return o;
}

static json_t *rule_list(const struct isp_ctl_run *run)
{
	json_t *a = json_array();
	unsigned n = run->rules ? isp_rules_counts(run->rules, NULL, 0) : 0;

	if (!run->rules)
		return a;
	struct isp_rule_count *c = calloc(n + 1, sizeof(*c));

	if (!c || !a) {
		free(c);
		return a;
	}
	unsigned got = isp_rules_counts(run->rules, c, n);        /* a reload may change n */
	n = got < n ? got : n;
	for (unsigned i = 0; i < n; i++) {
		json_t *r = json_pack("{s:s,s:s,s:b,s:I,s:I,s:I}", "kind", c[i].kind, "name",
				      c[i].name, "enabled", run->enabled[i], "matched",
				      (json_int_t)c[i].matched, "records", (json_int_t)c[i].records,
				      "dropped", (json_int_t)c[i].dropped);
		switch (c[i].kind[0]) {
		case 'e':
			json_object_set_new(r, "keys_evicted", json_integer((json_int_t)c[i].evicted));
			json_object_set_new(r, "keys_expired", json_integer((json_int_t)c[i].expired));
			break;
		case 'q':
			json_object_set_new(r, "windows", json_integer((json_int_t)c[i].windows));
			json_object_set_new(r, "beyond_max_groups",
					    json_integer((json_int_t)c[i].overflows));
			break;
		default:
			json_object_set_new(r, "flows", json_integer((json_int_t)c[i].flows));
			json_object_set_new(r, "entries", json_integer((json_int_t)c[i].entries));
			json_object_set_new(r, "sampled_out_packets",
					    json_integer((json_int_t)c[i].sampled_out));
			json_object_set_new(r, "excluded_packets",
					    json_integer((json_int_t)c[i].excluded));
			json_object_set_new(r, "evicted", json_integer((json_int_t)c[i].evicted));
			json_object_set_new(r, "intervals", json_integer((json_int_t)c[i].windows));
			json_object_set_new(r, "overflows", json_integer((json_int_t)c[i].overflows));
			break;
		}
		json_array_append_new(a, r);
	}
	free(c);
	return a;
}

static json_t *channel_list(const struct isp_ctl_run *run)
{
	json_t *a = json_array();

	for (unsigned i = 0; i < run->nchannels; i++) {
		struct isp_channel_stats st;
		if (!run->channels[i])
			continue;
		isp_channel_get_stats(run->channels[i], &st);
		json_array_append_new(a, json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "name",
						   isp_channel_name(run->channels[i]),
						   "queued", (json_int_t)st.queued,
						   "delivered", (json_int_t)st.delivered,
						   "dropped", (json_int_t)st.dropped,
						   "retried", (json_int_t)st.retried,
						   "acknowledged", (json_int_t)st.acked,
						   "reconnects", (json_int_t)st.reconnects,
						   "queue_depth", (json_int_t)st.queue_depth));
	}
	return a;
}

static json_t *stats(const struct isp_ctl_run *run)
{
	json_t *o = dissection(run);

	if (!o)
		return NULL;
	json_object_set_new(o, "rules", rule_list(run));
	json_object_set_new(o, "channels", channel_list(run));
	json_object_set_new(o, "ok", json_true());
	return o;
}

/* ---- changes ---- */

static const struct {
	const char *cmd;
	enum isp_ctl_op op;
	const char *number;     /* the request's key for the number, NULL: none */
} changes[] = {
	{ "enable", ISP_CTL_ENABLE, NULL }, { "disable", ISP_CTL_DISABLE, NULL },
	{ "reset", ISP_CTL_RESET, NULL }, { "set-sampling", ISP_CTL_SAMPLING, "ratio" },
	{ "set-interval", ISP_CTL_INTERVAL, "ms" }, { "set-overflow", ISP_CTL_OVERFLOW, "threshold" },
	{ "entry-add", ISP_CTL_ENTRY_ADD, NULL }, { "entry-remove", ISP_CTL_ENTRY_REMOVE, NULL },
	{ "get", ISP_CTL_GET, NULL },
};

/* A key part as text: a string as is, a number in decimal, an array of
 * numbers (a per-hop attribute) joined by commas. */
static bool key_text(const json_t *v, char *out, size_t cap)
{
	if (json_is_string(v))
		return (size_t)snprintf(out, cap, "%s", json_string_value(v)) < cap;
	if (json_is_integer(v))
		return (size_t)snprintf(out, cap, "%lld", (long long)json_integer_value(v)) < cap;
	if (!json_is_array(v))
		return false;
	size_t len = 0, i;
	json_t *x;
	out[0] = 0;
	json_array_foreach(v, i, x) {
		if (!json_is_integer(x))
			return false;
		int w = snprintf(out + len, cap - len, "%s%lld", i ? "," : "",
				 (long long)json_integer_value(x));
		if (w < 0 || (size_t)w >= cap - len)
			return false;
		len += (size_t)w;
	}
	return true;
}

static int rule_index(const struct isp_program *prog, const char *name)
{
	unsigned k = 0;

	for (unsigned i = 0; i < prog->nevents; i++, k++)
		if (strcmp(prog->events[i].name, name) == 0)
			return (int)k;
	for (unsigned i = 0; i < prog->nqueries; i++, k++)
		if (strcmp(prog->queries[i].name, name) == 0)
			return (int)k;
	for (unsigned i = 0; i < prog->nmonitors; i++, k++)
		if (strcmp(prog->monitors[i].name, name) == 0)
			return (int)k;
	return -1;
}

/* An error response as text. */
static char *fail_text(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *fail_text(const char *fmt, ...)
{
	char msg[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return isp_ctl_text(isp_ctl_error("%s", msg));
}

/* {"ok":true, then the members of a result object: spliced, not parsed. */
static char *ok_with(char *text)
{
	size_t n = strlen(text);
	char *o = malloc(n + 16);

	if (o && n >= 2 && text[0] == '{')
		snprintf(o, n + 16, "{\"ok\":true,%s", text + 1);
	else if (o)
		snprintf(o, n + 16, "{\"ok\":true}");
	free(text);
	return o;
}

static char *change(const struct isp_ctl_run *run, unsigned which, json_t *req)
{
	struct isp_ctl_request q = { .op = changes[which].op };
	const char *cmd = changes[which].cmd;
	json_t *name = json_object_get(req, "name"), *key = json_object_get(req, "key");
	char parts[16][1024];
	const char *ptr[16];

	if (!run->rules)
		return fail_text("%s: no rules run (intspect was started without -C)", cmd);
	if (!json_is_string(name))
		return fail_text("%s needs \"name\": a rule or flow monitor", cmd);
	q.name = json_string_value(name);
	if (changes[which].number) {
		json_t *v = json_object_get(req, changes[which].number);
		if (!json_is_number(v))
			return fail_text("%s needs \"%s\": a number", cmd, changes[which].number);
		q.number = json_number_value(v);
	}
	if (key && !json_is_null(key)) {
		if (!json_is_array(key) || json_array_size(key) > 16)
			return fail_text("%s: \"key\" is an array of the match values, in order",
					     cmd);
		size_t i;
		json_t *x;
		json_array_foreach(key, i, x) {
			if (!key_text(x, parts[i], sizeof(parts[i])))
				return fail_text("%s: key value %zu is not a string, a number or "
						     "an array of numbers", cmd, i + 1);
			ptr[i] = parts[i];
		}
		q.key = ptr;
		q.nkey = (unsigned)json_array_size(key);
	}
	char err[512], *text = NULL;
	if (isp_rules_control(run->rules, run->pl, &q, &text, err, sizeof(err)) != 0)
		return fail_text("%s", err);
	if (q.op == ISP_CTL_ENABLE || q.op == ISP_CTL_DISABLE) {
		int k = rule_index(run->prog, q.name);
		if (k >= 0)
			run->enabled[k] = q.op == ISP_CTL_ENABLE;
	}
	/* spliced, not parsed: a get of every flow is megabytes */
	return ok_with(text);
}

/* dta: {"op": get|poll|estimate|cardinality|info, "store": NAME,
 * "args": [key values, list, cursor, epoch ...]} on the stores. */
static char *dta(const struct isp_ctl_run *run, json_t *req)
{
	const char *op = json_string_value(json_object_get(req, "op"));
	const char *store = json_string_value(json_object_get(req, "store"));
	json_t *args = json_object_get(req, "args");
	char parts[16][1024], err[512], *text;
	const char *ptr[16] = { 0 };
	size_t n = 0, i;
	json_t *x;

	if (!run->rules)
		return fail_text("dta: no rules run (intspect was started without -C)");
	if (!op || !store)
		return fail_text("dta needs \"op\" (get, poll, estimate, cardinality or info) and "
				 "\"store\": a dta-store's name");
	if (args && !json_is_null(args)) {
		if (!json_is_array(args) || json_array_size(args) > 16)
			return fail_text("dta: \"args\" is an array of at most 16 values");
		json_array_foreach(args, i, x) {
			if (!key_text(x, parts[i], sizeof(parts[i])))
				return fail_text("dta: argument %zu is not a string, a number or an "
						 "array of numbers", i + 1);
			ptr[i] = parts[i];
		}
		n = json_array_size(args);
	}
	if (isp_rules_dta(run->rules, op, store, ptr, (unsigned)n, &text, err, sizeof(err)) != 0)
		return fail_text("dta %.32s: %s", op, err);
	return ok_with(text);
}

static json_t *handle(const struct isp_ctl_run *run, json_t *req)
{
	const char *cmd = json_string_value(json_object_get(req, "cmd"));

	if (strcmp(cmd, "help") == 0) {
		json_t *o = ok(), *a = json_array();
		for (const char *const *c = commands; *c; c++)
			json_array_append_new(a, json_string(*c));
		json_object_set_new(o, "commands", a);
		return o;
	}
	if (strcmp(cmd, "stats") == 0)
		return run->pl ? stats(run) : isp_ctl_error("stats: nothing runs");
	if (strcmp(cmd, "rules") == 0) {
		json_t *o = ok();
		struct isp_stats st;
		/* the workers publish their rules' counters now */
		memset(&st, 0, sizeof(st));
		if (run->pl)
			isp_pipeline_sample(run->pl, &st, NULL, SAMPLE_WAIT_MS);
		json_object_set_new(o, "rules", rule_list(run));
		return o;
	}
	char list[512] = "";
	size_t n = 0;
	for (const char *const *c = commands; *c && n < sizeof(list); c++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", n ? ", " : "", *c);
	return isp_ctl_error("unknown command '%.64s'; known: %s", cmd, list);
}

char *isp_ctl_handle(void *ctx, json_t *req)
{
	const struct isp_ctl_run *run = ctx;
	const char *cmd = json_string_value(json_object_get(req, "cmd"));

	for (unsigned i = 0; i < sizeof(changes) / sizeof(changes[0]); i++)
		if (strcmp(cmd, changes[i].cmd) == 0)
			return change(run, i, req);
	if (strcmp(cmd, "dta") == 0)
		return dta(run, req);
	if (strcmp(cmd, "reload") == 0)
		return run->reload ? run->reload(run->reload_ctx) :
		       run->prog ? fail_text("reload: not with --dump (its rules stay those it "
					     "started with)") :
		       fail_text("reload: intspect runs without a config file (-C)");
	if (strcmp(cmd, "monitor-add") == 0 || strcmp(cmd, "monitor-remove") == 0) {
		bool add = cmd[8] == 'a';
		const json_t *name = json_object_get(req, "name"), *body = json_object_get(req, "section");
		if (!run->monitor_edit)
			return fail_text("%s: intspect runs without a config file (-C)", cmd);
		if (!json_is_string(name))
			return fail_text("%s needs \"name\": the flow monitor's", cmd);
		if (add && !json_is_string(body))
			return fail_text("monitor-add needs \"section\": the keys of a flow-monitor "
					 "section, as in a config file (match = {...} ...)");
		return run->monitor_edit(run->reload_ctx, json_string_value(name),
					 add ? json_string_value(body) : NULL);
	}
	return isp_ctl_text(handle(run, req));
}
