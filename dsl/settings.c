/*
 * settings.c - the global settings, the input and output sections, and the
 * sections of MMT-Probe's configuration that are not intspect's job.
 *
 * An MMT-Probe configuration file runs unchanged: every key of its global
 * settings, input and output sections is accepted (MMT-Probe 1.6's
 * src/configure.c); what intspect does not do is named in one warning, so
 * that `intspect -T` lists it and a run says it once.
 */
#include "compile_int.h"
#include "../src/core/udpsrc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- MMT-Probe's sections outside intspect's job ---- */

static const struct {
	const char *section, *what;
} outside[] = {
	{ "session-report", "session reports" },
	{ "micro-flows", "micro-flow reports" },
	{ "security", "MMT-Security rules" },
	{ "reconstruct-data", "HTTP and FTP data reconstruction" },
	{ "radius-report", "RADIUS reports" },
	{ "mongodb-output", "MongoDB output" },
	{ "mqtt-output", "MQTT output" },
	{ "dynamic-config", "control socket" },
	{ "system-report", "CPU and memory reports" },
	{ "behaviour", "behaviour analysis files" },
	{ "dump-pcap", "packet dumps" },
	{ "session-timeout", "session timeouts" },
	{ "data-output", "user-agent parsing" },
};

bool ignored_section(struct compiler *c, const struct cfg_section *s)
{
	for (size_t i = 0; i < sizeof(outside) / sizeof(outside[0]); i++) {
		if (strcmp(s->type, outside[i].section) != 0)
			continue;
		const struct cfg_kv *en = find_kv(s, "enable");
		bool off = en && en->value->text && (strcasecmp(en->value->text, "false") == 0 ||
						     strcasecmp(en->value->text, "no") == 0 ||
						     strcasecmp(en->value->text, "off") == 0);

		dsl_warning(c->d, &s->loc, "section '%s%s%s' ignored: MMT-Probe's %s %s not "
			    "part of intspect%s", s->type, s->name ? " " : "", s->name ? s->name : "",
			    outside[i].what, outside[i].what[strlen(outside[i].what) - 1] == 's' ?
			    "are" : "is", off ? " (disabled here anyway)" : "");
		return true;
	}
	return false;
}

bool ignored_channel(const char *name)
{
	return strcmp(name, "mongodb") == 0 || strcmp(name, "mqtt") == 0;
}

/* ---- global settings ---- */

/* MMT-Probe's global keys that ask for what intspect does not do; a value
 * equal to MMT-Probe's default asks for nothing. */
static const struct {
	const char *key, *unasked;      /* unasked: the value that asks nothing */
} global_ignored[] = {
	{ "stack-offset", "0" },
	{ "license", "" },
	{ "enable-proto-without-session-report", "false" },
	{ "enable-ip-fragmentation-report", "false" },
	{ "enable-ip-defragmentation", "false" },
	{ "enable-tcp-reassembly", "false" },
	{ "enable-report-version-info", "false" },
	{ "stats-period", NULL },
	{ "thread-queue", "0" },
	{ "logfile", "" },
	{ "loglevel", NULL },
};

bool compile_global(struct compiler *c, const struct cfg_section *s)
{
	static const char *const keys[] = {
		"probe-id", "source-name", "thread-nb", "stack-type", "stack-offset", "license",
		"enable-proto-without-session-report", "enable-ip-fragmentation-report",
		"enable-ip-defragmentation", "enable-tcp-reassembly", "enable-report-version-info",
		"stats-period", "thread-queue", "logfile", "loglevel", NULL
	};
	struct isp_program *p = c->prog;
	bool ok = check_keys(c, s, keys, "the global settings");
	const struct cfg_kv *kv;
	const char *str;
	double d;

	if ((kv = find_kv(s, "probe-id")) && (ok &= get_number(c, kv, 0, 4294967295.0, &d)))
		p->probe_id = (unsigned)d;
	if ((kv = find_kv(s, "source-name")) && (ok &= get_string(c, kv, &str))) {
		free(p->source_name);   /* an included file may set it again */
		ok &= (p->source_name = strdup(str)) != NULL;
	}
	if ((kv = find_kv(s, "thread-nb")) && (ok &= get_number(c, kv, 0, 64, &d)))
		p->workers = (unsigned)d;
	if ((kv = find_kv(s, "stats-period")))
		ok &= get_number(c, kv, 0, 86400, &d);
	/* stack-type: 1 Ethernet and 624 Linux cooked capture are what the
	 * capture's header says anyway; another root protocol is not taken */
	if ((kv = find_kv(s, "stack-type")) && (ok &= get_number(c, kv, 0, 65535, &d)) &&
	    d != 1 && d != 624)
		dsl_warning(c->d, &kv->loc, "stack-type %g ignored: intspect takes the link "
			    "type from the capture (Ethernet, Linux cooked, raw IP, NULL/LOOP)", d);

	/* one warning names every key that asks for something not done */
	char names[512] = "";
	size_t n = 0;
	const struct cfg_kv *first = NULL;
	for (size_t i = 0; i < sizeof(global_ignored) / sizeof(global_ignored[0]); i++) {
		kv = find_kv(s, global_ignored[i].key);
		if (!kv || (global_ignored[i].unasked && kv->value->text &&
			    strcasecmp(kv->value->text, global_ignored[i].unasked) == 0))
			continue;
		if (!first || kv->loc.line < first->loc.line)
			first = kv;
		int w = snprintf(names + n, sizeof(names) - n, "%s%s", n ? ", " : "", kv->key);
		n += w > 0 && (size_t)w < sizeof(names) - n ? (size_t)w : 0;
	}
	if (first)
		dsl_warning(c->d, &first->loc, "MMT-Probe settings ignored (intspect does not have "
			    "these features): %s", names);
	return ok;
}

/* ---- input ---- */

static bool set_text(struct compiler *c, const struct cfg_kv *kv, char **field)
{
	const char *str;

	if (!get_string(c, kv, &str))
		return false;
	free(*field);           /* a later section wins */
	return (*field = strdup(str)) != NULL;
}

/* control { path = ...; tcp = ...; token = ...; enable = ... }: the
 * control socket (src/control/README.md). */
bool compile_control(struct compiler *c, const struct cfg_section *s)
{
	static const char *const keys[] = { "enable", "path", "tcp", "token", NULL };
	struct isp_program *p = c->prog;
	bool ok = check_keys(c, s, keys, "the control section");
	const struct cfg_kv *kv;
	bool on = true;

	if ((kv = find_kv(s, "enable")))
		ok &= get_bool(c, kv, &on);
	p->control = on ? 1 : -1;
	if ((kv = find_kv(s, "path")))
		ok &= set_text(c, kv, &p->control_path);
	if ((kv = find_kv(s, "tcp")))
		ok &= set_text(c, kv, &p->control_tcp);
	if ((kv = find_kv(s, "token")))
		ok &= set_text(c, kv, &p->control_token);
	if (ok && p->control_tcp && (!p->control_token || !*p->control_token)) {
		dsl_error(c->d, &find_kv(s, "tcp")->loc, "a TCP control port needs a token: "
			  "control { token = \"...\" }");
		ok = false;
	}
	return ok;
}

/* merge { instances = N; lateness-ms = N; late = drop | correct }: how a
 * merge stage combines partial windows (src/filters/pmerge.c). */
bool compile_merge(struct compiler *c, const struct cfg_section *s)
{
	static const char *const keys[] = { "instances", "lateness-ms", "late", NULL };
	struct isp_program *p = c->prog;
	bool ok = check_keys(c, s, keys, "the merge section");
	const struct cfg_kv *kv;
	const char *str;
	double d;

	if ((kv = find_kv(s, "instances")) && (ok &= get_number(c, kv, 1, 4096, &d)))
		p->merge_instances = (unsigned)d;
	if ((kv = find_kv(s, "lateness-ms")) && (ok &= get_number(c, kv, 0, 86400000, &d)))
		p->merge_lateness_ms = (unsigned)d;
	if ((kv = find_kv(s, "late")) && (ok &= get_string(c, kv, &str))) {
		if (strcasecmp(str, "correct") == 0 || strcasecmp(str, "drop") == 0) {
			p->merge_late_correct = strcasecmp(str, "correct") == 0;
		} else {
			dsl_error(c->d, &kv->value->loc, "late expects drop or correct");
			ok = false;
		}
	}
	return ok;
}

bool compile_input(struct compiler *c, const struct cfg_section *s)
{
	static const char *const keys[] = { "mode", "source", "filter", "pcap-filter", "snap-len",
					    "buffer-size", "timeout", "port", "dpdk-option", "topic",
					    "group", NULL };
	struct isp_program *p = c->prog;
	bool ok = check_keys(c, s, keys, "the input section");
	const struct cfg_kv *kv;
	const char *str;
	double d;

	if ((kv = find_kv(s, "mode")) && (ok &= get_string(c, kv, &str))) {
		static const char *const modes[][2] = {
			{ "offline", "file" }, { "file", "file" }, { "online", "live" },
			{ "live", "live" }, { "udp", "udp" }, { "dpdk", "dpdk" },
			{ "kafka", "kafka" }, { "kafka-partials", "kafka-partials" },
		};
		const char *mode = NULL;
		for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
			if (strcasecmp(str, modes[i][0]) == 0)
				mode = modes[i][1];
		free(p->input_mode);
		p->input_mode = NULL;
		if (mode) {
			ok &= (p->input_mode = strdup(mode)) != NULL;
		} else {
			dsl_error(c->d, &kv->value->loc,
				  "mode expects offline (file), online (live), udp, dpdk, kafka "
				  "or kafka-partials");
			ok = false;
		}
	}
	if ((kv = find_kv(s, "source")))
		ok &= set_text(c, kv, &p->input_source);
	if ((kv = find_kv(s, "port")) && (ok &= get_number(c, kv, 1, 65535, &d))) {
		/* input { mode = udp; port = 32766 } */
		char b[16];
		snprintf(b, sizeof(b), "%u", (unsigned)d);
		free(p->input_source);
		ok &= (p->input_source = strdup(b)) != NULL;
	}
	if (find_kv(s, "filter") && find_kv(s, "pcap-filter")) {
		dsl_error(c->d, &find_kv(s, "pcap-filter")->loc,
			  "'filter' and 'pcap-filter' are the same setting: give one");
		ok = false;
	} else if ((kv = find_kv(s, "filter")) || (kv = find_kv(s, "pcap-filter"))) {
		ok &= set_text(c, kv, &p->input_filter);
	}
	if ((kv = find_kv(s, "dpdk-option")))
		ok &= set_text(c, kv, &p->input_dpdk);
	if ((kv = find_kv(s, "topic")))
		ok &= set_text(c, kv, &p->input_topic);
	if ((kv = find_kv(s, "group")))
		ok &= set_text(c, kv, &p->input_group);
	/* what a run would refuse when it opens the input (-T says it too) */
	char why[256];
	if (ok && p->input_mode && strcmp(p->input_mode, "udp") == 0 && p->input_source &&
	    udp_src_check_spec(p->input_source, why, sizeof(why)) < 0) {
		/* (an earlier input section may have set it) */
		kv = find_kv(s, "source") ? find_kv(s, "source") : find_kv(s, "port");
		dsl_error(c->d, kv ? &kv->value->loc : &s->loc, "%s", why);
		ok = false;
	}
	if (ok && p->input_mode && p->input_filter && *p->input_filter &&
	    (strcmp(p->input_mode, "udp") == 0 || strncmp(p->input_mode, "kafka", 5) == 0)) {
		kv = find_kv(s, "filter") ? find_kv(s, "filter") : find_kv(s, "pcap-filter");
		dsl_error(c->d, kv ? &kv->value->loc : &s->loc, "a BPF filter does not apply to a%s input",
			  p->input_mode[0] == 'u' ? " UDP" : " Kafka");
		ok = false;
	}
	if (ok && p->input_mode && strncmp(p->input_mode, "kafka", 5) == 0 &&
	    (!p->input_source || !p->input_topic)) {
		dsl_error(c->d, &s->loc, "a Kafka input needs source = \"BROKERS\" and topic = "
			  "\"TOPIC\"");
		ok = false;
	}
	/* MMT-Probe's units: bytes, milliseconds; 0 leaves the default */
	if ((kv = find_kv(s, "snap-len")) && (ok &= get_number(c, kv, 0, 262144, &d)))
		p->input_snaplen = (int)d;
	if ((kv = find_kv(s, "buffer-size")) && (ok &= get_number(c, kv, 0, 1u << 31, &d)))
		p->input_buffer_mb = d > 0 ? (int)((d + (1 << 20) - 1) / (1 << 20)) : 0;
	if ((kv = find_kv(s, "timeout")) && (ok &= get_number(c, kv, 0, 60000, &d)))
		p->input_timeout_ms = (int)d;
	return ok;
}

/* ---- output ---- */

bool compile_output(struct compiler *c, const struct cfg_section *s)
{
	static const char *const keys[] = { "format", "enable", "cache-max", "cache-period", NULL };
	const struct cfg_kv *kv;
	bool ok = check_keys(c, s, keys, "the output section");
	double d;

	if ((kv = find_kv(s, "format")))
		ok &= format_of(c, kv, &c->prog->default_format, 0);
	/* cache-max sizes MMT-Probe's MongoDB batches only: nothing to do */
	if ((kv = find_kv(s, "cache-max")))
		ok &= get_number(c, kv, 0, 1e9, &d);
	if ((kv = find_kv(s, "cache-period")) && (ok &= get_number(c, kv, 1, 86400, &d)))
		c->cache_period = kv;
	return ok;
}

const struct cfg_kv *file_cache_period(const struct compiler *c, const struct cfg_section *s)
{
	if (!c->cache_period || find_kv(s, "cache-period") ||
	    (!find_kv(s, "output-file") && !find_kv(s, "output-dir")))
		return NULL;
	return c->cache_period;
}
