/*
 * service.c - what running as a daemon asks of the command: a pid file
 * where no service manager tracks the process, and a copy of the messages
 * in syslog.
 *
 * Every message of intspect goes to stderr (the CLI's, the channels'
 * threads', the config's diagnostics), which journald already collects
 * under systemd. --syslog copies them to syslog too without touching each
 * writer: stderr becomes a pipe whose reader thread writes each line to
 * the original stderr and to syslog(LOG_DAEMON).
 */
#include "service.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <sys/file.h>
#include <unistd.h>

/* ---- pid file ---- */

static const char *pid_path;
static int pid_fd = -1;         /* open, locked, while the file is ours */

/* The pid file, locked for the life of the process (flock: the lock goes
 * with the process, so a file left by one that died takes the next): a
 * second instance given the same file is refused and leaves it alone. */
int service_pidfile(const char *path)
{
	char b[32];
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0) {
		fprintf(stderr, "intspect: --pidfile %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		ssize_t n = errno == EWOULDBLOCK ? pread(fd, b, sizeof(b) - 1, 0) : -1;
		b[n > 0 ? n : 0] = 0;
		b[strcspn(b, "\n")] = 0;
		if (n > 0)
			fprintf(stderr, "intspect: --pidfile %s: held by a running intspect (pid %s)\n",
				path, b);
		else
			fprintf(stderr, "intspect: --pidfile %s: %s\n", path,
				strerror(errno == EWOULDBLOCK ? EBUSY : errno));
		close(fd);
		return -1;
	}
	int n = snprintf(b, sizeof(b), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) != 0 || pwrite(fd, b, (size_t)n, 0) != n) {
		fprintf(stderr, "intspect: --pidfile %s: %s\n", path, strerror(errno));
		close(fd);
		unlink(path);
		return -1;
	}
	pid_fd = fd;
	pid_path = path;
	return 0;
}

/* ---- privileges ---- */

int service_run_as(const char *user)
{
	struct passwd *pw = getpwnam(user);

	if (!pw) {
		fprintf(stderr, "intspect: -Z %s: no such user\n", user);
		return -1;
	}
	if (geteuid() != 0) {
		if (geteuid() == pw->pw_uid)
			return 0;       /* already that user */
		fprintf(stderr, "intspect: -Z %s: only root can change user\n", user);
		return -1;
	}
	/* the pid file stays the process's: if its directory will not let
	 * the user remove it at exit, it can at least empty it */
	if (pid_path && chown(pid_path, pw->pw_uid, pw->pw_gid) != 0)
		fprintf(stderr, "intspect: --pidfile %s: %s\n", pid_path, strerror(errno));
	/* groups, then the group, then the user: each needs the privilege
	 * the next one gives up. glibc applies them to every thread (the
	 * channels' are running). */
	if (initgroups(pw->pw_name, pw->pw_gid) != 0 || setgid(pw->pw_gid) != 0 ||
	    setuid(pw->pw_uid) != 0) {
		fprintf(stderr, "intspect: -Z %s: %s\n", user, strerror(errno));
		return -1;
	}
	if (pw->pw_uid != 0 && setuid(0) == 0) {
		fprintf(stderr, "intspect: -Z %s: root could be regained; stopping\n", user);
		return -1;
	}
	fprintf(stderr, "intspect: running as %s (uid %u, gid %u)\n", pw->pw_name,
		(unsigned)pw->pw_uid, (unsigned)pw->pw_gid);
	return 0;
}

/* ---- syslog copy of stderr ---- */

static int saved_stderr = -1;
static int pipe_rd = -1;
static pthread_t tee_thread;

/* The messages carry no level: their words say it. Errors stop the run
 * or lose records; warnings are what a channel retries or a config
 * ignores; the rest (counters) is information. */
static int severity(const char *msg, size_t m)
{
	static const char *const errs[] = { "error", "never connected", "lost records", NULL };
	static const char *const warns[] = { "warning", "refused", "reconnecting", "failed", NULL };

	for (const char *const *w = errs; *w; w++)
		if (memmem(msg, m, *w, strlen(*w)))
			return LOG_ERR;
	for (const char *const *w = warns; *w; w++)
		if (memmem(msg, m, *w, strlen(*w)))
			return LOG_WARNING;
	return LOG_INFO;
}

/* A line to both places; syslog gets it without the "intspect: " prefix,
 * which openlog's ident already says. */
static void emit(const char *line, size_t n)
{
	const char *msg = line;
	size_t m = n;

	if (write(saved_stderr, line, n) < 0) {
		/* stderr gone (a closed terminal): syslog still gets it */
	}
	if (m && msg[m - 1] == '\n')
		m--;
	if (m >= 10 && memcmp(msg, "intspect: ", 10) == 0) {
		msg += 10;
		m -= 10;
	}
	syslog(severity(msg, m), "%.*s", (int)m, msg);
}

static void *tee_run(void *arg)
{
	char buf[4096];
	size_t len = 0;

	(void)arg;
	for (;;) {
		ssize_t r = read(pipe_rd, buf + len, sizeof(buf) - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
		size_t start = 0;
		for (size_t i = 0; i < len; i++) {
			if (buf[i] == '\n') {
				emit(buf + start, i + 1 - start);
				start = i + 1;
			}
		}
		if (start == 0 && len == sizeof(buf)) {
			emit(buf, len);         /* a line longer than the buffer */
			start = len;
		}
		memmove(buf, buf + start, len - start);
		len -= start;
	}
	if (len)
		emit(buf, len);
	return NULL;
}

int service_syslog(void)
{
	int p[2];
	sigset_t all, old;

	openlog("intspect", LOG_PID, LOG_DAEMON);
	fflush(stderr);
	if (pipe(p) != 0 || (saved_stderr = dup(STDERR_FILENO)) < 0) {
		fprintf(stderr, "intspect: --syslog: %s\n", strerror(errno));
		return -1;
	}
	fcntl(saved_stderr, F_SETFD, FD_CLOEXEC);
	fcntl(p[0], F_SETFD, FD_CLOEXEC);
	pipe_rd = p[0];
	/* signals belong to the main thread */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&tee_thread, NULL, tee_run, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		close(p[0]);
		close(p[1]);
		fprintf(stderr, "intspect: --syslog: cannot start its thread\n");
		return -1;
	}
	dup2(p[1], STDERR_FILENO);
	close(p[1]);
	setvbuf(stderr, NULL, _IOLBF, 0);
	return 0;
}

void service_end(void)
{
	if (pid_path && unlink(pid_path) != 0 && ftruncate(pid_fd, 0) != 0)
		fprintf(stderr, "intspect: --pidfile %s: cannot remove it: %s\n", pid_path,
			strerror(errno));
	pid_path = NULL;
	if (pid_fd >= 0)
		close(pid_fd);  /* the lock goes with it, once the file is gone */
	pid_fd = -1;
	if (saved_stderr >= 0) {
		/* the last lines out, then stderr is the original again */
		fflush(stderr);
		dup2(saved_stderr, STDERR_FILENO);      /* closes the pipe's write end */
		pthread_join(tee_thread, NULL);
		close(pipe_rd);
		close(saved_stderr);
		saved_stderr = -1;
		closelog();
	}
}
