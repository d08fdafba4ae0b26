/*
 * checkconf.h - intspect -T FILE: the config checked as a run checks it,
 * opening nothing; what it holds said (rules, flow monitors' filters, DTA
 * stores' shapes).
 */
#ifndef ISP_CLI_CHECKCONF_H
#define ISP_CLI_CHECKCONF_H

#include "../core/registry.h"

/* The exit status: 0 valid, 2 not. */
int cli_check_config(const struct isp_registry *reg, const char *path);

#endif
