/*
 * reload.c - hot reload of a run's rules (reload.h): compile the file
 * again on the running program's attribute slots, keep every channel
 * whose section did not change (its connection and queue), open the new
 * ones, swap the rules at one point for every worker (isp_rules_swap),
 * then close the channels no rule writes to any more.
 */
#include "reload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runchan.h"

/* What a reload replaced, kept to the end: counters' names point into
 * programs, channel messages into the diagnostics' file names. */
struct cli_retired {
	struct isp_program *prog;
	struct dsl_diags *diags;
	struct cli_retired *next;
};

static char *error_json(const char *msg)
{
	size_t n = strlen(msg);
	char *out = malloc(2 * n + 64), *o = out;

	if (!out)
		return NULL;
	o += sprintf(o, "{\"ok\":false,\"error\":\"");
	for (const char *s = msg; *s; s++) {
		if (*s == '"' || *s == '\\') {
			*o++ = '\\';
			*o++ = *s;
		} else if (*s == '\n') {
			*o++ = '\\';
			*o++ = 'n';
		} else if ((unsigned char)*s >= 0x20) {
			*o++ = *s;
		}
	}
	strcpy(o, "\"}");
	return out;
}

/* The compiler's messages as one text (first lines only). */
static char *diag_text(struct dsl_diags *d)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	dsl_print_diags(d, f);
	fclose(f);
	if (buf && len > 2000)
		strcpy(buf + 1990, " ...");
	return buf;
}

static bool same_rule_name(const struct isp_program *p, const char *name, unsigned *at)
{
	unsigned k = 0;

	for (unsigned i = 0; i < p->nevents; i++, k++)
		if (strcmp(p->events[i].name, name) == 0)
			return *at = k, true;
	for (unsigned i = 0; i < p->nqueries; i++, k++)
		if (strcmp(p->queries[i].name, name) == 0)
			return *at = k, true;
	for (unsigned i = 0; i < p->nmonitors; i++, k++)
		if (strcmp(p->monitors[i].name, name) == 0)
			return *at = k, true;
	return false;
}

static const char *rule_name(const struct isp_program *p, unsigned k)
{
	if (k < p->nevents)
		return p->events[k].name;
	k -= p->nevents;
	if (k < p->nqueries)
		return p->queries[k].name;
	return p->monitors[k - p->nqueries].name;
}

static const char *rule_text(const struct isp_program *p, unsigned k)
{
	if (k < p->nevents)
		return p->events[k].text;
	k -= p->nevents;
	if (k < p->nqueries)
		return p->queries[k].text;
	return p->monitors[k - p->nqueries].text;
}

/* New channels: the running one of the same section, else opened. NULL
 * after a message in err; reused[i]: old channel i goes on. */
static struct isp_channel **channels_for(const struct cli_rules *cr, const struct isp_program *np,
					 bool *reused, unsigned *opened, char *err, size_t errlen)
{
	const struct isp_program *op = cr->prog;
	struct isp_channel **ch = calloc(np->nchannels + 1, sizeof(*ch));
	bool *mine = calloc(np->nchannels + 1, sizeof(*mine));

	*opened = 0;
	if (!ch || !mine)
		goto oom;
	for (unsigned j = 0; j < np->nchannels; j++) {
		if (!np->channels[j].used)
			continue;
		for (unsigned i = 0; i < op->nchannels && !ch[j]; i++) {
			if (cr->channels[i] && !reused[i] && op->channels[i].text &&
			    np->channels[j].text &&
			    strcmp(op->channels[i].text, np->channels[j].text) == 0) {
				ch[j] = cr->channels[i];
				reused[i] = true;
			}
		}
		if (ch[j])
			continue;
		if (!(ch[j] = isp_channel_open(&np->channels[j].cfg, err, errlen)))
			goto fail;
		mine[j] = true;
		(*opened)++;
	}
	free(mine);
	return ch;
oom:
	snprintf(err, errlen, "out of memory");
fail:
	for (unsigned j = 0; ch && j < np->nchannels; j++)
		if (mine && mine[j])
			isp_channel_close(ch[j]);
	free(ch);
	free(mine);
	return NULL;
}

/* The rules from the file, the monitors added and without those removed,
 * swapped in; op names it in the messages. */
/* The added sections as pairs of a name ("monitor-add NAME", for their
 * messages) and a text, NULL-ended. */
static const char **added_pairs(const struct cli_rules *cr)
{
	const char **p = calloc(2 * cr->nadded + 2, sizeof(*p));

	for (unsigned i = 0; p && i < cr->nadded; i++) {
		p[2 * i] = cr->added[i].label;
		p[2 * i + 1] = cr->added[i].text;
	}
	return p;
}

static char *rebuild(struct cli_rules *cr, const char *what)
{
	struct dsl_diags *d = calloc(1, sizeof(*d));
	char err[1024], *out;

	if (!d)
		return NULL;
	dsl_diags_init(d);
	if (!cr->config || !cr->rules) {
		free(d);
		snprintf(err, sizeof(err), "%s: intspect runs without a config file (-C)", what);
		return error_json(err);
	}
	const char **extra = added_pairs(cr);
	const struct isp_compile_more more = { cr->prog, extra, (const char *const *)cr->skip };
	struct isp_program *np = extra ? isp_compile_file_on(d, cr->reg, cr->config, &more) : NULL;
	free(extra);
	if (!np) {
		char *text = diag_text(d);
		fprintf(stderr, "intspect: %s refused, the running rules go on:\n%s", what,
			text ? text : "");
		snprintf(err, sizeof(err), "%s refused, the running rules go on: %s", what,
			 text ? text : "");
		free(text);
		dsl_diags_free(d);
		free(d);
		return error_json(err);
	}
	dsl_print_diags(d, stderr);     /* warnings */
	const struct isp_program *op = cr->prog;
	bool *reused = calloc(op->nchannels + 1, sizeof(*reused));
	unsigned nrules = np->nevents + np->nqueries + np->nmonitors, opened = 0;
	bool *enabled = calloc(nrules + 1, sizeof(*enabled));
	struct cli_retired *ret = calloc(1, sizeof(*ret));
	struct isp_channel **nch = NULL;
	if (!reused || !enabled || !ret ||
	    !(nch = channels_for(cr, np, reused, &opened, err, sizeof(err))))
		goto refused;
	isp_program_bind_channels(np, nch);
	if (isp_rules_swap(cr->rules, cr->pl, np, nch, err, sizeof(err)) != 0) {
		for (unsigned j = 0; j < np->nchannels; j++) {
			bool old = false;
			for (unsigned i = 0; i < op->nchannels; i++)
				old |= nch[j] && cr->channels[i] == nch[j];
			if (nch[j] && !old)
				isp_channel_close(nch[j]);
		}
		free(nch);
		nch = NULL;
		goto refused;
	}
	/* swapped: count what stayed, close what no rule writes to */
	unsigned kept = 0, same_name = 0;
	for (unsigned k = 0; k < nrules; k++) {
		unsigned at;
		enabled[k] = true;
		if (!same_rule_name(op, rule_name(np, k), &at))
			continue;
		same_name++;
		bool unchanged = rule_text(op, at) && strcmp(rule_text(op, at), rule_text(np, k)) == 0;
		kept += unchanged;
		if (unchanged)
			enabled[k] = cr->enabled[at];
	}
	unsigned onrules = op->nevents + op->nqueries + op->nmonitors;
	struct isp_channel **gone = calloc(op->nchannels + 1, sizeof(*gone));
	unsigned closed = 0;
	for (unsigned i = 0; gone && i < op->nchannels; i++) {
		if (cr->channels[i] && !reused[i]) {
			gone[i] = cr->channels[i];
			closed++;
		}
	}
	pthread_mutex_lock(&cr->mu);
	struct isp_channel **old_channels = cr->channels;
	bool *old_enabled = cr->enabled;
	ret->prog = cr->prog;
	ret->diags = NULL;
	ret->next = cr->retired;
	cr->retired = ret;
	cr->prog = np;
	cr->channels = nch;
	cr->enabled = enabled;
	cr->reloads++;
	pthread_mutex_unlock(&cr->mu);
	if (gone)
		cr->lossy += cli_close_channels(op, gone);
	free(old_channels);
	free(old_enabled);
	free(reused);
	/* the diagnostics own the file names of the new program's channel
	 * messages: kept with it, the first one's by main */
	struct cli_retired *keep = calloc(1, sizeof(*keep));
	if (keep) {
		keep->diags = d;
		keep->next = cr->retired;
		cr->retired = keep;
	}
	fprintf(stderr, "intspect: %s of %s: %u rules (%u unchanged, %u changed, %u new, %u "
		"gone), channels: %u opened, %u closed\n", what, cr->config, nrules, kept,
		same_name - kept, nrules - same_name, onrules - same_name, opened, closed);
	out = malloc(320);
	if (out)
		snprintf(out, 320, "{\"ok\":true,\"op\":\"%s\",\"rules\":%u,\"unchanged\":%u,"
			 "\"changed\":%u,\"new\":%u,\"gone\":%u,\"channels_opened\":%u,"
			 "\"channels_closed\":%u}", what, nrules, kept, same_name - kept,
			 nrules - same_name, onrules - same_name, opened, closed);
	if (!keep) {
		dsl_diags_free(d);
		free(d);
	}
	return out;
refused:
	fprintf(stderr, "intspect: %s of %s refused, the running rules go on: %s\n", what,
		cr->config, err);
	free(reused);
	free(enabled);
	free(ret);
	isp_program_free(np);
	dsl_diags_free(d);
	free(d);
	char msg[1200];
	snprintf(msg, sizeof(msg), "%s refused, the running rules go on: %s", what, err);
	return error_json(msg);
}

char *cli_reload(struct cli_rules *cr)
{
	return rebuild(cr, "reload");
}

static bool is_ok(const char *resp)
{
	return resp && strncmp(resp, "{\"ok\":true,", 11) == 0;
}

/* Braces of a section's body balanced outside strings: it cannot close
 * its section and open others. */
static bool balanced(const char *body)
{
	int depth = 0;
	bool quoted = false;

	for (const char *c = body; *c; c++) {
		if (quoted) {
			if (*c == '\\' && c[1])
				c++;
			else if (*c == '"')
				quoted = false;
		} else if (*c == '"') {
			quoted = true;
		} else if (*c == '{') {
			depth++;
		} else if (*c == '}' && --depth < 0) {
			return false;
		}
	}
	return depth == 0 && !quoted;
}

static char *monitor_add(struct cli_rules *cr, const char *name, const char *body)
{
	if (!balanced(body))
		return error_json("monitor-add: the section's braces or quotes do not balance");
	size_t n = strlen(name) + strlen(body) + 32;
	struct cli_added *grown = realloc(cr->added, (cr->nadded + 1) * sizeof(*grown));
	char *text = malloc(n), *copy = strdup(name), *label = malloc(n);
	if (!grown || !text || !copy || !label) {
		free(text);
		free(copy);
		free(label);
		return NULL;
	}
	cr->added = grown;
	/* the body on a line of its own: its messages say line 2 */
	snprintf(text, n, "flow-monitor %s {\n%s\n}\n", name, body);
	snprintf(label, n, "monitor-add %s", name);
	cr->added[cr->nadded++] = (struct cli_added){ copy, text, label };
	char *resp = rebuild(cr, "monitor-add");
	if (!is_ok(resp)) {
		cr->nadded--;
		free(text);
		free(copy);
		free(label);
	}
	return resp;
}

static char *monitor_remove(struct cli_rules *cr, const char *name)
{
	char msg[256];
	unsigned at;

	if (!same_rule_name(cr->prog, name, &at) || at < cr->prog->nevents + cr->prog->nqueries) {
		snprintf(msg, sizeof(msg), "monitor-remove: no flow monitor named '%.64s'", name);
		return error_json(msg);
	}
	for (unsigned i = 0; i < cr->nadded; i++) {
		if (strcmp(cr->added[i].name, name) != 0)
			continue;
		/* one added: its section goes */
		struct cli_added gone = cr->added[i];
		memmove(cr->added + i, cr->added + i + 1, (cr->nadded - i - 1) * sizeof(gone));
		cr->nadded--;
		char *resp = rebuild(cr, "monitor-remove");
		if (is_ok(resp)) {
			free(gone.name);
			free(gone.text);
			free(gone.label);
		} else {
			memmove(cr->added + i + 1, cr->added + i, (cr->nadded - i) * sizeof(gone));
			cr->added[i] = gone;
			cr->nadded++;
		}
		return resp;
	}
	/* one of the file's: left out of every build from now on */
	char **grown = realloc(cr->skip, (cr->nskip + 2) * sizeof(*grown));
	if (!grown)
		return NULL;
	cr->skip = grown;
	if (!(cr->skip[cr->nskip] = strdup(name)))
		return NULL;
	cr->skip[++cr->nskip] = NULL;
	char *resp = rebuild(cr, "monitor-remove");
	if (!is_ok(resp)) {
		free(cr->skip[--cr->nskip]);
		cr->skip[cr->nskip] = NULL;
	}
	return resp;
}

char *cli_monitor_edit(struct cli_rules *cr, const char *name, const char *body)
{
	char msg[256];
	size_t len = strlen(name);

	if (!cr->prog || !cr->rules)
		return error_json("flow monitors: intspect runs without a config file (-C)");
	bool good = len >= 1 && len <= 64;
	for (const char *c = name; *c && good; c++)
		good = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		       (*c >= '0' && *c <= '9') || *c == '_' || *c == '-';
	if (!good) {
		snprintf(msg, sizeof(msg), "a flow monitor's name is 1 to 64 letters, digits, '_' "
			 "or '-': '%.64s'", name);
		return error_json(msg);
	}
	return body ? monitor_add(cr, name, body) : monitor_remove(cr, name);
}

void cli_reload_end(struct cli_rules *cr, const struct isp_program *first)
{
	for (struct cli_retired *r = cr->retired, *next; r; r = next) {
		next = r->next;
		if (r->prog != first)
			isp_program_free(r->prog);
		if (r->diags) {
			dsl_diags_free(r->diags);
			free(r->diags);
		}
		free(r);
	}
	cr->retired = NULL;
	if (cr->prog != first)
		isp_program_free(cr->prog);
	for (unsigned i = 0; i < cr->nadded; i++) {
		free(cr->added[i].name);
		free(cr->added[i].text);
		free(cr->added[i].label);
	}
	free(cr->added);
	for (unsigned i = 0; i < cr->nskip; i++)
		free(cr->skip[i]);
	free(cr->skip);
}
