/*
 * usage.h - intspect's --help text.
 */
#ifndef ISP_CLI_USAGE_H
#define ISP_CLI_USAGE_H

#include <stdio.h>

void cli_usage(FILE *out);

#endif
