/*
 * fuzz_control.c - libFuzzer target for the control socket's requests
 * (src/control/commands.c, and the checks of src/filters/control.c): each
 * input is split into lines, as the server frames them, and each line that
 * parses as a JSON object with a "cmd" goes to the command handler, against
 * rules compiled once from a config with flow monitors keyed by every kind
 * of value (IPv4, IPv6, MAC, string, numbers, a per-hop array). The rules
 * do not run (no pipeline), so a request is checked all the way to the
 * point where it would be posted to the workers, and refused there.
 *
 * Every response must be a JSON object with "ok"; anything else aborts.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../dsl/compile.h"
#include "../../src/control/commands.h"
#include "../../src/filters/engine.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char conf[] =
	"flow-monitor m4 { match = {\"ip.src\", \"udp.dst_port\"} }\n"
	"flow-monitor m6 { match = {\"ipv6.src\", \"int.hop_switch_ids\"}; buffer = 3;"
	" query-interval = 300 }\n"
	"flow-monitor mm { match = {\"eth.src\", \"meta.proto_hierarchy\"} }\n"
	"event-report e { event = \"int.latency\"; attributes = {\"ip.src\"} }\n"
	"query-report q { select = {\"count()\"} }\n";

static struct isp_registry *reg;
static struct isp_program *prog;
static struct isp_rules *rules;
static struct isp_ctl_run run;
static bool enabled[8];

static void die(const char *what)
{
	fprintf(stderr, "fuzz_control: %s\n", what);
	abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct dsl_diags d;
	char err[256];

	(void)argc;
	(void)argv;
	reg = isp_registry_new();
	if (!reg || isp_register_builtins(reg) != 0 || isp_registry_finalize(reg, err, sizeof err))
		die("registry");
	dsl_diags_init(&d);
	prog = isp_compile_mem(&d, reg, "control.conf", conf, sizeof(conf) - 1);
	if (!prog) {
		dsl_print_diags(&d, stderr);
		die("config");
	}
	dsl_diags_free(&d);
	static struct isp_channel *channels[8];
	if (!(rules = isp_rules_new(prog, reg, channels, err, sizeof err)))
		die(err);
	for (unsigned i = 0; i < 8; i++)
		enabled[i] = true;
	run = (struct isp_ctl_run){ .reg = reg, .rules = rules, .prog = prog,
				    .channels = channels, .nchannels = prog->nchannels,
				    .enabled = enabled };
	return 0;
}

static void one(const char *line, size_t len)
{
	json_t *req = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);

	if (!req)
		return;
	if (json_is_object(req) && json_is_string(json_object_get(req, "cmd"))) {
		char *resp = isp_ctl_handle(&run, req);
		json_t *r = resp ? json_loads(resp, 0, NULL) : NULL;
		if (resp && (!r || !json_is_boolean(json_object_get(r, "ok"))))
			die("a response that is not {\"ok\": ...}");
		json_decref(r);
		free(resp);
	}
	json_decref(req);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *end = s + size;

	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = (size_t)((nl ? nl : end) - s);
		one(s, n);
		s += n + 1;
	}
	return 0;
}
