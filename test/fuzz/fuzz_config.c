/*
 * fuzz_config.c - libFuzzer target for the rule language (dsl/): scanner,
 * parser, include splicing, semantic checks and compiler.
 *
 * Each input is (1, then 2 or one config of 3, as its length modulo 6 says)
 *
 * 1. compiled as a whole config file from memory (isp_compile_mem), named
 *    as a file of a scratch directory so that `include "NAME"` finds the
 *    few small files written there by LLVMFuzzerInitialize (a valid file,
 *    one with an error, one that includes itself);
 * 2. parsed as an expression (dsl_parse_expr), as written inside a string;
 * 3. written, escaped, into the string values of one of five small configs (event,
 *    where, attributes, delta-cond, output-format template, select,
 *    count(...), group-by, list-form where, a flow monitor's match,
 *    counters and where) and compiled, so the type
 *    checker and the per-key value checks see arbitrary expressions without
 *    the fuzzer having to build the surrounding syntax first.
 *
 * Nothing is printed (the error records are only collected) and everything
 * is freed: a leak is a LeakSanitizer report. The registry is built once.
 *
 * An include is a real file read, so a config that could name a file
 * outside the scratch directory (an include together with a '/' or a '\\'
 * anywhere in the input: absolute paths, "..", escapes) is not compiled as
 * a whole file in step 1: `include "/dev/zero"` would only measure memory.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../dsl/compile.h"
#include "../../dsl/diag.h"
#include "../../dsl/parse.h"
#include "../../src/core/registry.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct isp_registry *reg;
static char dir[64];
static char conf_name[96];

/* Files an input may include (relative to its own name). */
static const struct {
	const char *name;
	const char *text;
} inc_files[] = {
	{ "channels.conf",
	  "file-output traces { path = \"/tmp/fuzz-traces.json\" }\n"
	  "probe-id = 9\n"
	  "event-report to-traces { event = \"ip.src\"; output-channel = {traces} }\n" },
	{ "bad.conf", "event-report x { event = \"int.hop_latency\" }\nquery-report {\n" },
	{ "self.conf", "include \"self.conf\"\n" },
	{ "empty.conf", "" },
};

static void die(const char *what)
{
	fprintf(stderr, "fuzz_config: %s\n", what);
	abort();
}

static void cleanup(void)
{
	char path[160];

	for (size_t i = 0; i < sizeof(inc_files) / sizeof(inc_files[0]); i++) {
		snprintf(path, sizeof path, "%s/%s", dir, inc_files[i].name);
		unlink(path);
	}
	rmdir(dir);
	isp_registry_free(reg);
	reg = NULL;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[256];

	(void)argc;
	(void)argv;
	reg = isp_registry_new();
	if (!reg || isp_register_builtins(reg) != 0)
		die("cannot register the built-in plugins");
	if (isp_registry_finalize(reg, err, sizeof err) != 0)
		die(err);

	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/fuzz_config.XXXXXX",
		 tmp && *tmp && strlen(tmp) < 32 ? tmp : "/tmp");
	if (!mkdtemp(dir))
		die("cannot create a scratch directory");
	for (size_t i = 0; i < sizeof(inc_files) / sizeof(inc_files[0]); i++) {
		char path[160];
		snprintf(path, sizeof path, "%s/%s", dir, inc_files[i].name);
		FILE *f = fopen(path, "wb");
		if (!f || fputs(inc_files[i].text, f) == EOF || fclose(f) != 0)
			die("cannot write the include files");
	}
	snprintf(conf_name, sizeof conf_name, "%s/fuzz.conf", dir);
	atexit(cleanup);
	return 0;
}

static void compile_text(const char *name, const char *text, size_t len)
{
	struct dsl_diags d;

	dsl_diags_init(&d);
	isp_program_free(isp_compile_mem(&d, reg, name, text, len));
	dsl_diags_free(&d);
}

static bool may_include_outside(const uint8_t *data, size_t size)
{
	static const char kw[] = "include";

	if (!memchr(data, '/', size) && !memchr(data, '\\', size))
		return false;
	for (size_t i = 0; i + sizeof kw - 1 <= size; i++)
		if (memcmp(data + i, kw, sizeof kw - 1) == 0)
			return true;
	return false;
}

/* The input as the inside of a "..." config string: the scanner turns \"
 * \\ \n back into the original characters. */
static char *escaped(const char *s, size_t *len)
{
	size_t n = strlen(s);
	char *out = malloc(2 * n + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"' || s[i] == '\\') {
			*o++ = '\\';
			*o++ = s[i];
		} else if (s[i] == '\n') {
			*o++ = '\\';
			*o++ = 'n';
		} else {
			*o++ = s[i];
		}
	}
	*o = 0;
	*len = (size_t)(o - out);
	return out;
}

static void compile_in_strings(const char *text, size_t which)
{
	static const char *const tmpl[] = {
		"event-report e {\n\tevent = \"%s\"\n\twhere = \"%s\"\n"
		"\tattributes = {\"ip.src\", \"%s\"}\n}\n",
		"event-report e {\n\tevent = \"int.latency\"\n\tdelta-cond = {\"%s\"}\n"
		"\tdelta-key = {\"%s\"}\n\toutput-format = \"%s\"\n}\n",
		"query-report q {\n\tselect = {\"%s\", \"count(%s)\"}\n\tgroup-by = {\"%s\"}\n}\n",
		"query-report q {\n\tselect = {\"count()\"}\n\twhere = {\"int.latency\", \"%s\"}\n"
		"\tms-period = %.0s1000\n\tgroup-by = \"%s\"\n}\n",
		"flow-monitor m {\n\tmatch = {\"%s\"}\n\tcounters = {\"%s\"}\n\twhere = \"%s\"\n}\n",
	};
	size_t elen;
	char *e = escaped(text, &elen);

	if (!e)
		return;
	for (size_t i = which; i == which && i < sizeof(tmpl) / sizeof(tmpl[0]); i++) {
		size_t cap = strlen(tmpl[i]) + 3 * elen + 1;
		char *cfg = malloc(cap);
		if (!cfg)
			break;
		int n = snprintf(cfg, cap, tmpl[i], e, e, e);
		if (n > 0 && (size_t)n < cap)
			compile_text("strings.conf", cfg, (size_t)n);
		free(cfg);
	}
	free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 1 << 16)
		return 0;

	/* 1: the input as a config file */
	if (!may_include_outside(data, size))
		compile_text(conf_name, (const char *)data, size);

	/* 2 or 3, one of them a run (the input's length picks which): every
	 * reading of every input was six compilations a run, a sixth of the
	 * runs a second; libFuzzer varies lengths, so each reading is taken */
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	size_t which = size % 6;
	if (which == 5) {       /* 2: the input as an expression (up to its first NUL) */
		struct dsl_diags d;
		struct dsl_loc at = { "expr", 1, 1, 2 };
		dsl_diags_init(&d);
		ex_free(dsl_parse_expr(&d, text, &at));
		dsl_diags_free(&d);
	} else {                /* 3: the input in the string values of a config */
		compile_in_strings(text, which);
	}
	free(text);
	return 0;
}
