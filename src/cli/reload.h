/*
 * reload.h - the rule set of a run and its hot reload (reload.c): SIGHUP
 * or the control socket's `reload` re-read the config file; a broken one
 * is refused with its file:line:col errors and the running rules go on.
 */
#ifndef ISP_CLI_RELOAD_H
#define ISP_CLI_RELOAD_H

#include <pthread.h>

#include "../../dsl/compile.h"
#include "../../outputs/channel.h"
#include "../core/pipeline.h"
#include "../filters/engine.h"

struct cli_retired;
struct cli_added {
	char *name, *text, *label;
};

struct cli_rules {
	const struct isp_registry *reg;
	const char *config;             /* the file to read again */
	struct isp_rules *rules;
	struct isp_pipeline *pl;
	/* the running program and its channels: changed by a reload under
	 * mu, which readers on other threads (progress, scrapes) take */
	pthread_mutex_t mu;
	struct isp_program *prog;
	struct isp_channel **channels;
	bool *enabled;                  /* per rule, as the control socket set it */
	struct cli_retired *retired;    /* what reloads replaced: freed at the end */
	unsigned lossy;                 /* channels closed by a reload that lost records */
	unsigned reloads;
	/* flow monitors added and the file's removed (names, NULL-ended)
	 * through the control socket: a reload of the file keeps both */
	struct cli_added *added;        /* name and section text each */
	unsigned nadded;
	char **skip;
	unsigned nskip;
};

/* Reload now (one caller at a time: the control thread). A JSON response
 * (malloc'd): {"ok":true,"op":"reload",...counts} or the errors. */
char *cli_reload(struct cli_rules *cr);

/* monitor-add NAME with its section's body, or monitor-remove NAME (body
 * NULL): the rules rebuilt as by a reload, with that change. A JSON
 * response (malloc'd). */
char *cli_monitor_edit(struct cli_rules *cr, const char *name, const char *body);

/* At the end (the pipeline closed, the rules freed): free what reloads
 * replaced; the caller closes the running channels and frees the first
 * program, which it owns (cr->prog may be a later one: freed here when it
 * is not `first`). */
void cli_reload_end(struct cli_rules *cr, const struct isp_program *first);

#endif
