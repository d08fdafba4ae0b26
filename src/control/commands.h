/*
 * commands.h - the control socket's commands on a run (commands.c):
 * counters, rules, flow monitors. README.md in this folder lists them.
 */
#ifndef ISP_CONTROL_COMMANDS_H
#define ISP_CONTROL_COMMANDS_H

#include <jansson.h>

#include "../../outputs/channel.h"
#include "../core/pipeline.h"
#include "../core/registry.h"
#include "../filters/program.h"

struct isp_rules;

/* What the commands act on; it must outlive the server. */
struct isp_ctl_run {
	const struct isp_registry *reg;
	struct isp_pipeline *pl;
	struct isp_rules *rules;                /* NULL: no rules */
	const struct isp_program *prog;         /* NULL: no rules */
	struct isp_channel *const *channels;    /* by program channel index */
	unsigned nchannels;
	bool *enabled;                          /* per rule: events, queries, monitors */
	/* reload: a JSON response (malloc'd); it updates the fields above */
	char *(*reload)(void *ctx);
	void *reload_ctx;
	/* monitor-add (body: the section's keys) and monitor-remove (body
	 * NULL): rebuilt as by a reload; a JSON response (malloc'd) */
	char *(*monitor_edit)(void *ctx, const char *name, const char *body);
};

/* An isp_ctl_handler (server.h): ctx is a struct isp_ctl_run. */
char *isp_ctl_handle(void *ctx, json_t *req);

#endif
