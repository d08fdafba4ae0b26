/*
 * merge.h - intspect as a merge stage (--merge, input { mode =
 * kafka-partials }): partial windows in, merged records out
 * (src/filters/pmerge.h).
 */
#ifndef ISP_CLI_MERGE_H
#define ISP_CLI_MERGE_H

#include <signal.h>

#include "../core/registry.h"
#include "../filters/program.h"

#define CLI_MERGE_MAX 64

struct cli_merge {
	/* files ('-': standard input), read one after the other; or one
	 * kafka:BROKERS/TOPIC[@GROUP]; none: the config's input section */
	const char *src[CLI_MERGE_MAX];
	unsigned nsrc;
	bool allow_drops;
};

/* Run the merge to the end of the files, or until *stop (a Kafka topic).
 * The exit status: 0, 1 an input failed, 2 bad usage, 3 records lost. */
int cli_merge_run(const struct cli_merge *m, const struct isp_registry *reg,
		  struct isp_program *prog, volatile sig_atomic_t *stop);

#endif
