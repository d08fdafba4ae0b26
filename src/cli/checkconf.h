/*
 * checkconf.h - intspect -T FILE: the config checked as a run checks it,
 * opening nothing; what it holds said (rules, flow monitors' filters, DTA
 * stores' shapes).
 */
#ifndef ISP_CLI_CHECKCONF_H
#define ISP_CLI_CHECKCONF_H

#include "../core/registry.h"

struct isp_program;

/* The exit status: 0 valid, 2 not. */
int cli_check_config(const struct isp_registry *reg, const char *path);

/* What the compiler cannot see and a run would refuse at start, a bad
 * config all the same: a rule's table past what a table reaches (one
 * worker's engine made and freed), a DTA store's directory missing or
 * not writable. 0, or -1 with a message printed (prefixed by `who`). */
int cli_check_program(const struct isp_program *prog, const struct isp_registry *reg,
		      const char *who);

#endif
