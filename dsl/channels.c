/*
 * channels.c - output sections: each becomes a channel of the program,
 * its keys and values checked by the channel type's own open in check
 * mode (so -T and a run refuse the same sections with the same words);
 * rules name channels, an unknown one with a suggestion.
 */
#include "compile_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- channels ---- */

static const char *const channel_types[] = { "stdout", "file", "redis", "kafka", "socket", "influxdb",
					      "prometheus", NULL };

bool is_output_section(const struct cfg_section *s, char *type, size_t len)
{
	size_t n = strlen(s->type);

	if (n <= 7 || strcmp(s->type + n - 7, "-output") != 0)
		return false;
	snprintf(type, len, "%.*s", (int)(n - 7), s->type);
	return true;
}

static isp_output_check_fn output_check;

void isp_compile_set_output_check(isp_output_check_fn fn)
{
	output_check = fn;
}

/* Every key and value, by the channel type's own open in check mode: -T
 * and a run refuse the same sections with the same words. */
static bool check_channel(struct compiler *c, const struct cfg_section *s,
			  const struct isp_channel_cfg *cfg)
{
	char msg[512];
	int pos[2];

	if (!output_check || output_check(cfg, pos, msg, sizeof(msg)) == 0)
		return true;
	struct dsl_loc loc = s->loc;

	for (size_t i = 0; i < s->nkvs; i++)
		if (s->kvs[i]->loc.line == pos[0] && s->kvs[i]->loc.col == pos[1])
			loc = s->kvs[i]->loc;
	dsl_error(c->d, &loc, "%s", msg);
	return false;
}

/* A section ignored_section warned about in the first pass. */
bool is_ignored_type(const char *type)
{
	static const char *const types[] = {
		"session-report", "micro-flows", "security", "reconstruct-data", "radius-report",
		"mongodb-output", "mqtt-output", "dynamic-config", "system-report", "behaviour",
		"dump-pcap", "session-timeout", "data-output", NULL
	};

	for (const char *const *t = types; *t; t++)
		if (strcmp(*t, type) == 0)
			return true;
	return false;
}

bool add_channel(struct compiler *c, const struct cfg_section *s, const char *type,
		 const char *file)
{
	struct isp_program *p = c->prog;
	bool known = false;

	for (const char *const *t = channel_types; *t; t++)
		known |= strcmp(*t, type) == 0;
	if (!known) {
		const char *hint = closest_word(type, channel_types);
		dsl_error(c->d, &s->loc, "unknown output type '%s'%s%s%s", s->type,
			  hint ? "; did you mean '" : "", hint ? hint : "", hint ? "-output'?" : "");
		return false;
	}
	char *name = strdup(s->name ? s->name : type);
	char *type_copy = strdup(type);
	if (!name || !type_copy) {
		free(name);
		free(type_copy);
		return false;
	}
	for (unsigned i = 0; i < p->nchannels; i++) {
		if (strcmp(p->channels[i].cfg.name, name) == 0) {
			dsl_error(c->d, &s->loc, "a channel named '%s' is already defined", name);
			free(name);
			free(type_copy);
			return false;
		}
	}
	struct program_channel *ch = realloc(p->channels, (p->nchannels + 1) * sizeof(*ch));
	if (!ch) {
		free(name);
		free(type_copy);
		return false;
	}
	p->channels = ch;
	ch = &p->channels[p->nchannels++];
	memset(ch, 0, sizeof(*ch));
	ch->name = name;
	ch->type = type_copy;
	/* the output section's cache-period counts too (hot reload) */
	const struct cfg_kv *cp = c->cache_period;
	char *extra = NULL;
	if (cp && cp->value->text && (extra = malloc(strlen(cp->value->text) + 16)))
		snprintf(extra, strlen(cp->value->text) + 16, "/%s", cp->value->text);
	ch->text = section_text(s, extra);
	free(extra);
	if (!ch->text)
		return false;
	/* one more for MMT-Probe's output.cache-period of a file output */
	const struct cfg_kv *period = strcmp(type, "file") == 0 ? file_cache_period(c, s) : NULL;
	struct isp_kv *kv = calloc(s->nkvs + 1, sizeof(*kv));
	if (!kv)
		return false;
	for (size_t i = 0; i < s->nkvs; i++) {
		const struct cfg_kv *k = s->kvs[i];
		kv[i].key = k->key;
		kv[i].value = k->value->kind == CV_LIST ? "" : k->value->text;
		kv[i].line = k->loc.line;
		kv[i].col = k->loc.col;
		if (k->subkey) {
			/* property "compression.type" = "lz4" reaches the channel as
			 * the key "property.compression.type" */
			size_t n = strlen(k->key) + strlen(k->subkey) + 2;
			char *joined = malloc(n);
			if (!joined) {
				free(kv);
				return false;
			}
			snprintf(joined, n, "%s.%s", k->key, k->subkey);
			free(k->key);
			((struct cfg_kv *)k)->key = joined;
			kv[i].key = joined;
		}
	}
	size_t nkv = s->nkvs;
	if (period)
		kv[nkv++] = (struct isp_kv){ "cache-period", period->value->text,
					     period->loc.line, period->loc.col };
	ch->cfg.name = name;
	ch->cfg.type = type_copy;
	ch->cfg.kv = kv;
	ch->cfg.nkv = nkv;
	ch->cfg.file = file;
	ch->cfg.line = s->loc.line;
	ch->cfg.col = s->loc.col;
	return check_channel(c, s, &ch->cfg);
}

/* The hint is a section that would define the channel: a near name of
 * one that exists, the bare type for a type's name, else a named one. */
static void undefined_channel(struct compiler *c, const struct cfg_value *item)
{
	const struct isp_program *p = c->prog;
	const char *name = item->text ? item->text : "?";
	const char *names[65] = { 0 };
	unsigned n = 0;

	for (unsigned k = 0; k < p->nchannels && n < 64; k++)
		names[n++] = p->channels[k].cfg.name;
	const char *near = closest_word(name, names);

	for (const char *const *t = channel_types; *t; t++) {
		if (strcmp(*t, name) == 0) {
			dsl_error(c->d, &item->loc, "no output section for channel '%s': "
				  "add a section '%s-output { ... }'", name, name);
			return;
		}
	}
	if (near)
		dsl_error(c->d, &item->loc, "no output section for channel '%s'; did you mean '%s'?",
			  name, near);
	else
		dsl_error(c->d, &item->loc, "no output section for channel '%s': add one named "
			  "after it, e.g. 'redis-output %s { ... }' (or file-, kafka-, socket-output)",
			  name, name);
}

/* The channel names of MMT-Probe's output sections that intspect has. */
static bool mmt_channel_type(const char *name)
{
	static const char *const types[] = { "file", "redis", "kafka", "socket", NULL };

	for (const char *const *t = types; *t; t++)
		if (strcmp(*t, name) == 0)
			return true;
	return false;
}

/* output-channel = {redis, file}: names of output sections, or a type
 * whose section has no name; stdout needs no section. */
bool channel_list(struct compiler *c, const struct cfg_kv *kv, int **out, unsigned *n)
{
	struct isp_program *p = c->prog;
	const struct cfg_value *const *items;
	size_t count = kv ? list_items(kv->value, &items) : 0;

	*n = 0;
	*out = calloc(count ? count : 1, sizeof(**out));
	if (!*out)
		return false;
	if (count == 0) {
		items = NULL;
	}
	for (size_t i = 0; i < count; i++) {
		const char *name = items[i]->text;
		int found = -1;
		for (unsigned k = 0; name && k < p->nchannels; k++)
			if (strcmp(p->channels[k].cfg.name, name) == 0)
				found = (int)k;
		if (found < 0 && name && strcmp(name, "stdout") == 0) {
			struct cfg_section fake = { .type = (char *)"stdout-output", .loc = items[i]->loc };
			if (!add_channel(c, &fake, "stdout", items[i]->loc.file))
				return false;
			found = (int)p->nchannels - 1;
		}
		if (found < 0 && name && ignored_channel(name)) {
			dsl_warning(c->d, &items[i]->loc, "channel '%s' ignored: MMT-Probe's %s "
				    "output is not part of intspect", name,
				    strcmp(name, "mqtt") == 0 ? "MQTT" : "MongoDB");
			continue;
		}
		if (found < 0 && name && mmt_channel_type(name)) {
			/* MMT-Probe has every output section, disabled unless
			 * written: a rule's channel without one gets nothing */
			dsl_warning(c->d, &items[i]->loc, "channel '%s' ignored: no %s-output section "
				    "(MMT-Probe: a channel not enabled); add one for its records",
				    name, name);
			continue;
		}
		if (found < 0) {
			undefined_channel(c, items[i]);
			return false;
		}
		p->channels[found].used = true;
		(*out)[(*n)++] = found;
	}
	if (*n == 0) {          /* no channel named: standard output */
		int found = -1;
		for (unsigned k = 0; k < p->nchannels; k++)
			if (strcmp(p->channels[k].cfg.type, "stdout") == 0)
				found = (int)k;
		if (found < 0) {
			struct cfg_section fake = { .type = (char *)"stdout-output" };
			if (kv)
				fake.loc = kv->loc;
			if (!add_channel(c, &fake, "stdout", NULL))
				return false;
			found = (int)p->nchannels - 1;
		}
		p->channels[found].used = true;
		(*out)[(*n)++] = found;
	}
	return true;
}

