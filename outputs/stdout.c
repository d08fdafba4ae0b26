/*
 * stdout.c - channel type "stdout": each record and a newline on standard
 * output, one write per batch.
 *
 * Writes go straight to file descriptor 1, not through stdio, so a batch is
 * one system call and nothing sits in a buffer the channel does not
 * control; a short write resumes mid-line (fdlines.h). A closed pipe
 * (EPIPE, with SIGPIPE ignored by the program) or a non-blocking stdout that
 * is full is retried with backoff, then dropped and counted like any other
 * dead consumer. No keys besides the generic ones.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "builtin.h"
#include "fdlines.h"
#include "kv.h"

struct stdout_out {
	int fd;
	size_t partial;         /* bytes of the first pending line written */
	uint64_t bytes;
};

static int stdout_open(void **state, const struct isp_channel_cfg *cfg,
		       int *bad_kv, char *err, size_t errlen)
{
	static const char *const known[] = { NULL };
	struct stdout_out *o;

	if (isp_kv_check_known(cfg, known, bad_kv, err, errlen) != 0)
		return -1;
	o = calloc(1, sizeof(*o));
	if (!o) {
		*bad_kv = -1;
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	o->fd = STDOUT_FILENO;
	*state = o;
	return 0;
}

static size_t stdout_write(void *state, const struct isp_record *recs, size_t n)
{
	struct stdout_out *o = state;
	int e;

	return isp_fd_write_lines(o->fd, recs, n, &o->partial, &o->bytes, &e);
}

static void stdout_close(void *state)
{
	struct stdout_out *o = state;

	/* A line cut by the shutdown deadline: end it so the next writer to
	 * stdout does not continue it. */
	if (o->partial) {
		ssize_t w = write(o->fd, "\n", 1);

		(void)w;
	}
	free(o);
}

const struct isp_channel_ops isp_stdout_ops = {
	.type = "stdout",
	.open = stdout_open,
	.write_batch = stdout_write,
	.flush = NULL,
	.close = stdout_close,
	.lines = true,
};
