/*
 * ctlsock.c - where intspect's control socket listens (ctlsock.h): the
 * command line, else the config's control section, else, for a live
 * input, the run directory (/run/intspect as root, $XDG_RUNTIME_DIR or
 * /tmp otherwise).
 */
#include "ctlsock.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The default socket path, its directory made when missing. */
static const char *default_path(char *buf, size_t n)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	const char *sd = getenv("RUNTIME_DIRECTORY");   /* systemd's RuntimeDirectory= */

	if (sd && *sd && !strchr(sd, ':'))
		snprintf(buf, n, "%s/control.sock", sd);
	else if (geteuid() == 0)
		snprintf(buf, n, "%s/control.sock", ISP_RUN_DIR);
	else if (xdg && *xdg)
		snprintf(buf, n, "%s/intspect.sock", xdg);
	else
		snprintf(buf, n, "/tmp/intspect-%u.sock", (unsigned)geteuid());
	if (geteuid() == 0 && !(sd && *sd) && mkdir(ISP_RUN_DIR, 0755) < 0 && errno != EEXIST)
		return NULL;
	return buf;
}

struct isp_ctl_server *cli_control_start(const char *cli_path, const struct isp_program *prog,
					 bool live, const char *user, struct isp_ctl_run *run,
					 char *path_out, size_t path_len)
{
	struct isp_ctl_server_cfg cfg = { NULL, NULL, NULL };
	char buf[256], err[512];
	bool by_default = false;

	path_out[0] = 0;
	bool off = (cli_path && strcmp(cli_path, "none") == 0) || (prog && prog->control < 0);
	if (off) {
		/* no socket; the thread still reloads on SIGHUP */
	} else if (cli_path) {
		cfg.path = cli_path;
	} else if (prog && prog->control_path) {
		cfg.path = prog->control_path;
	} else if (live || (prog && prog->control > 0)) {
		cfg.path = default_path(buf, sizeof(buf));
		by_default = true;
	}
	if (!off && prog && prog->control_tcp) {
		cfg.tcp = prog->control_tcp;
		cfg.token = prog->control_token;
	}
	if (!cfg.path && !cfg.tcp && !prog)
		return NULL;    /* nothing to steer or reload */
	struct isp_ctl_server *s = isp_ctl_server_start(&cfg, isp_ctl_handle, run, err, sizeof(err));
	if (!s && by_default && strstr(err, "another process answers")) {
		/* another intspect has the default: this one takes its own */
		char *dot = strrchr(buf, '.');
		snprintf(dot ? dot : buf + strlen(buf), sizeof(buf) - (size_t)(dot ? dot - buf : 0),
			 ".%ld.sock", (long)getpid());
		s = isp_ctl_server_start(&cfg, isp_ctl_handle, run, err, sizeof(err));
		if (s)
			fprintf(stderr, "intspect: note: the default control socket is in use; this "
				"one listens on %s\n", cfg.path);
	}
	if (!s) {
		fprintf(stderr, "intspect: %s: running without a control socket\n", err);
		if (!prog)
			return NULL;
		/* the thread without a socket: SIGHUP still reloads */
		cfg = (struct isp_ctl_server_cfg){ NULL, NULL, NULL };
		return isp_ctl_server_start(&cfg, isp_ctl_handle, run, err, sizeof(err));
	}
	if (cfg.path) {
		snprintf(path_out, path_len, "%s", cfg.path);
		/* -Z: the user it runs as may use it */
		struct passwd *pw = user ? getpwnam(user) : NULL;
		if (pw && chown(cfg.path, pw->pw_uid, pw->pw_gid) < 0)
			fprintf(stderr, "intspect: control socket %s: chown to %s: %s\n", cfg.path,
				user, strerror(errno));
		/* and intspect's own run directory, so that the socket can be
		 * removed at exit by the user it then runs as */
		size_t rl = strlen(ISP_RUN_DIR);
		if (pw && by_default && !strncmp(cfg.path, ISP_RUN_DIR, rl) && cfg.path[rl] == '/' &&
		    chown(ISP_RUN_DIR, pw->pw_uid, pw->pw_gid) < 0)
			fprintf(stderr, "intspect: %s: chown to %s: %s\n", ISP_RUN_DIR, user,
				strerror(errno));
	}
	return s;
}
