/*
 * runchan.h - the output channels of a run (runchan.c), shared by the run
 * and by hot reload.
 */
#ifndef ISP_CLI_RUNCHAN_H
#define ISP_CLI_RUNCHAN_H

#include "../../outputs/channel.h"
#include "../filters/program.h"

/* Every channel a rule uses, by program channel index (NULL for the
 * others); NULL after "file:line:col: error: ..." on stderr. */
struct isp_channel **cli_open_channels(const struct isp_program *prog);
/* One line of counters per channel, on stderr. */
void cli_print_channels(const struct isp_program *prog, struct isp_channel *const *channels);
/* Stop every channel at once (deadlines run in parallel), wait for them,
 * print what each delivered and lost, free them and the array. Returns how
 * many enabled channels lost records or never reached their service. */
unsigned cli_close_channels(const struct isp_program *prog, struct isp_channel **channels);

/* What each channel was given so far (one counter per channel, up to
 * max); and whether each then wrote (Kafka: had acknowledged) or dropped
 * all of it: what a Kafka input commits its offsets behind. */
unsigned cli_channels_mark(const struct isp_program *prog, struct isp_channel *const *channels,
			   uint64_t *mark, unsigned max);
bool cli_channels_settled(const struct isp_program *prog, struct isp_channel *const *channels,
			  const uint64_t *mark, unsigned n);

#endif
