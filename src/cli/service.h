/*
 * service.h - a pid file and a syslog copy of the messages (service.c).
 */
#ifndef ISP_CLI_SERVICE_H
#define ISP_CLI_SERVICE_H

/* Write the process id to path (removed by service_end); -1 after a
 * message. */
int service_pidfile(const char *path);
/* From now on every line written to stderr also goes to syslog (daemon
 * facility); -1 after a message. */
int service_syslog(void);
/* Become user (its uid, gid and groups) for good, as tcpdump's -Z does:
 * root only; -1 after a message. */
int service_run_as(const char *user);
/* Remove the pid file, flush and stop the syslog copy. */
void service_end(void);

#endif
