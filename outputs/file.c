/*
 * file.c - channel type "file": records as lines (JSON lines or CSV, as
 * encoded; nothing is re-encoded here) appended to one file, with rotation.
 *
 * Keys: path (required), rotate-mb (rotate before the file would exceed N
 * MiB; 0 = never), rotate-sec (rotate every N seconds; 0 = never), keep
 * (rotated files kept, default 10; 0 deletes instead). Rotation renames
 * path.(keep-1) -> path.keep, ..., path -> path.1, then reopens path: the
 * logrotate numbering operators already read.
 *
 * Failure model: a write error (full disk, I/O error) returns "not
 * delivered" and the channel layer retries with backoff and counts it; a
 * line cut by a short write is completed on the retry (fdlines.h). Every
 * flush checks that `path` is still the open file; when it was removed or
 * renamed (logrotate, a deleted directory), the file is reopened (counted as
 * a reconnect) and, while that fails, nothing is reported delivered, so the
 * records wait in the queue instead of vanishing into an unlinked inode.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtin.h"
#include "fdlines.h"
#include "kv.h"
#include "queue.h"

#define ROTATE_HOLDOFF_NS (1000 * 1000000LL)

struct file_out {
	char *path;
	char *name_a, *name_b;          /* room for "path.N" */
	uint64_t rotate_bytes;          /* 0: no size rotation */
	int64_t rotate_ns;              /* 0: no time rotation */
	unsigned keep;
	int fd;                         /* -1: lost, reopen before writing */
	dev_t dev;
	ino_t ino;
	uint64_t size;
	int64_t opened_ns;
	int64_t rotate_after_ns;        /* holdoff after a failed rename */
	size_t partial;                 /* bytes of the first pending line written */
	struct isp_fdstage stage;       /* a batch's lines, for one write */
	struct isp_channel *ch;
};

static int open_path(struct file_out *o)
{
	struct stat st;
	int fd = open(o->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0) {
		close(fd);
		return -1;
	}
	o->fd = fd;
	o->dev = st.st_dev;
	o->ino = st.st_ino;
	o->size = (uint64_t)st.st_size;
	o->opened_ns = isp_now_ns();
	/* A line begun in a file that is gone is written whole again. */
	o->partial = 0;
	return 0;
}

static void close_fd(struct file_out *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
}

static int reopen(struct file_out *o)
{
	if (open_path(o) != 0)
		return -1;
	if (o->ch)
		isp_channel_add_reconnects(o->ch, 1);
	return 0;
}

static void rotate(struct file_out *o)
{
	int rc = 0;

	close_fd(o);
	if (o->keep == 0) {
		rc = unlink(o->path);
	} else {
		for (unsigned i = o->keep - 1; i >= 1; i--) {
			sprintf(o->name_a, "%s.%u", o->path, i);
			sprintf(o->name_b, "%s.%u", o->path, i + 1);
			rename(o->name_a, o->name_b);   /* gaps are fine */
		}
		sprintf(o->name_a, "%s.1", o->path);
		rc = rename(o->path, o->name_a);
	}
	/* If the live file could not be moved we append to it again; wait a
	 * while before trying, or every batch would try. */
	if (rc != 0 && errno != ENOENT)
		o->rotate_after_ns = isp_now_ns() + ROTATE_HOLDOFF_NS;
	open_path(o);                           /* fd -1 on failure */
}

static bool may_rotate(const struct file_out *o)
{
	return o->fd >= 0 && o->size > 0 && o->partial == 0 &&
	       isp_now_ns() >= o->rotate_after_ns;
}

static void rotate_by_time(struct file_out *o)
{
	if (o->rotate_ns && may_rotate(o) &&
	    isp_now_ns() - o->opened_ns >= o->rotate_ns)
		rotate(o);
}

static void file_free(struct file_out *o)
{
	close_fd(o);
	isp_fdstage_free(&o->stage);
	free(o->path);
	free(o->name_a);
	free(o->name_b);
	free(o);
}

static int file_open(void **state, const struct isp_channel_cfg *cfg,
		     int *bad_kv, char *err, size_t errlen)
{
	static const char *const known[] = {
		"path", "rotate-mb", "rotate-sec", "keep", NULL
	};
	uint64_t mb = 0, sec = 0, keep = 10;
	struct file_out *o;
	int ip;

	if (isp_kv_check_known(cfg, known, bad_kv, err, errlen) != 0)
		return -1;
	for (size_t i = 0; i < cfg->nkv; i++) {
		const struct isp_kv *kv = &cfg->kv[i];
		int rc = 0;

		*bad_kv = (int)i;
		if (strcmp(kv->key, "rotate-mb") == 0)
			rc = isp_kv_uint(kv, 0, 1u << 20, &mb, err, errlen);
		else if (strcmp(kv->key, "rotate-sec") == 0)
			rc = isp_kv_uint(kv, 0, 366u * 86400, &sec, err, errlen);
		else if (strcmp(kv->key, "keep") == 0)
			rc = isp_kv_uint(kv, 0, 1000, &keep, err, errlen);
		if (rc != 0)
			return -1;
	}
	ip = isp_kv_find(cfg, "path");
	*bad_kv = ip;
	if (ip < 0 || cfg->kv[ip].value[0] == '\0') {
		snprintf(err, errlen, "a file output needs a non-empty 'path'");
		return -1;
	}
	if (cfg->check_only) {
		*bad_kv = -1;
		return 0;       /* -T creates no file */
	}

	o = calloc(1, sizeof(*o));
	if (!o) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	o->fd = -1;
	o->path = strdup(cfg->kv[ip].value);
	if (o->path) {
		o->name_a = malloc(strlen(o->path) + 16);
		o->name_b = malloc(strlen(o->path) + 16);
	}
	if (!o->path || !o->name_a || !o->name_b || isp_fdstage_init(&o->stage) != 0) {
		file_free(o);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	o->rotate_bytes = mb << 20;
	o->rotate_ns = (int64_t)sec * 1000000000;
	o->keep = (unsigned)keep;
	o->ch = cfg->channel;
	if (open_path(o) != 0) {
		snprintf(err, errlen, "cannot open '%s': %s", o->path, strerror(errno));
		file_free(o);
		return -1;
	}
	*bad_kv = -1;
	*state = o;
	return 0;
}

static size_t file_write(void *state, const struct isp_record *recs, size_t n)
{
	struct file_out *o = state;
	size_t i = 0;

	if (o->fd < 0 && reopen(o) != 0)
		return 0;
	rotate_by_time(o);
	while (i < n) {
		if (o->rotate_bytes && o->size + recs[i].len + 1 > o->rotate_bytes &&
		    may_rotate(o))
			rotate(o);
		if (o->fd < 0)
			return i;

		/* As many lines as fit below the size limit, in one writev. */
		size_t j = i + 1;

		if (!o->rotate_bytes) {
			j = n;
		} else {
			uint64_t acc = o->size + recs[i].len + 1 - o->partial;

			while (j < n && acc + recs[j].len + 1 <= o->rotate_bytes)
				acc += recs[j++].len + 1;
		}

		uint64_t wrote = 0;
		int e;
		size_t k = isp_fd_write_lines(o->fd, &o->stage, recs + i, j - i,
					      &o->partial, &wrote, &e);

		o->size += wrote;
		i += k;
		if (e)
			return i;
	}
	return n;
}

static int file_flush(void *state)
{
	struct file_out *o = state;
	struct stat st;

	if (o->fd >= 0 && (stat(o->path, &st) != 0 || st.st_ino != o->ino ||
			   st.st_dev != o->dev))
		close_fd(o);            /* moved or removed under us */
	if (o->fd < 0 && reopen(o) != 0)
		return -1;
	rotate_by_time(o);
	return 0;
}

static void file_close(void *state)
{
	struct file_out *o = state;

	/* A line cut by the shutdown deadline: end it so the file stays one
	 * record per line for whoever appends next. */
	if (o->partial && o->fd >= 0) {
		ssize_t w = write(o->fd, "\n", 1);

		(void)w;
	}
	file_free(o);
}

const struct isp_channel_ops isp_file_ops = {
	.type = "file",
	.open = file_open,
	.write_batch = file_write,
	.flush = file_flush,
	.close = file_close,
};
