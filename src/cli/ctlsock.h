/*
 * ctlsock.h - intspect's control socket for a run (ctlsock.c).
 */
#ifndef ISP_CLI_CTLSOCK_H
#define ISP_CLI_CTLSOCK_H

#include <stdbool.h>

#include "../control/commands.h"
#include "../control/server.h"

#define ISP_RUN_DIR "/run/intspect"

/* Start the control socket of a run: cli_path (--control; "none": off),
 * else the config's control section, else the default one for a live
 * input. With rules and no socket, the server's thread still runs, for
 * SIGHUP. NULL when there is nothing to run, or after a message on stderr
 * (the run goes on without it). path_out: the Unix socket's path, or "". */
struct isp_ctl_server *cli_control_start(const char *cli_path, const struct isp_program *prog,
					 bool live, const char *user, struct isp_ctl_run *run,
					 char *path_out, size_t path_len);

#endif
