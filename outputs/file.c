/*
 * file.c - channel type "file": records as lines (JSON lines or CSV, as
 * encoded; nothing is re-encoded here) appended to files, in one of two
 * layouts chosen by the keys:
 *
 * - path (intspect's): one file, rotated by size (rotate-mb) or age
 *   (rotate-sec) logrotate-style: path.(keep-1) -> path.keep, ..., path ->
 *   path.1, then path is reopened; keep = 0 deletes instead. The numbering
 *   operators already read.
 * - output-dir and output-file (MMT-Probe's file-output): files named
 *   <output-dir>/<sec>.<usec>_0_<output-file> after the wall-clock time of
 *   their creation. With sample-file (the default) a new file starts every
 *   cache-period seconds; the file left gets an empty "<name>.sem" when it
 *   holds a record, or is deleted when it holds none, so a reader (such as
 *   MMT-Operator) takes only files whose .sem exists, and those are
 *   complete; retain-files = N then keeps the newest N .sem-marked files of
 *   the directory. The id is 0 because one channel serves every worker
 *   (MMT-Probe has a file per worker thread, numbered from 1).
 *
 * Failure model: a write error (full disk, I/O error) returns "not
 * delivered" and the channel layer retries with backoff and counts it; a
 * line cut by a short write is completed on the retry (fdlines.h), and a
 * file is never left (rotated, sealed) in the middle of a line. Every flush
 * checks that the file is still the one open; when it was removed or
 * renamed (logrotate, a deleted directory), a file is opened again (the
 * same path, or a new timestamped name; counted as a reconnect) and, while
 * that fails, nothing is reported delivered, so the records wait in the
 * queue instead of vanishing into an unlinked inode.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "builtin.h"
#include "fdlines.h"
#include "kv.h"
#include "queue.h"

#define ROTATE_HOLDOFF_NS (1000 * 1000000LL)
#define SEM ".sem"

struct file_out {
	char *path;                     /* the file written: `path`, or the
					 * current timestamped name */
	char *name_a, *name_b;          /* room for "path.N", "name.sem" */
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
	struct isp_channel *ch;
	/* MMT-Probe's layout (output-dir): dir is NULL in the path layout. */
	char *dir;                      /* ends with '/' */
	char *base;                     /* output-file */
	bool sample;                    /* sample-file: a file per cache-period */
	int64_t sample_ns;              /* cache-period */
	unsigned retain;                /* retain-files; 0 keeps all */
	char *chname;                   /* for messages */
	int failing;                    /* the errno of an outage said, 0: none */
};

/* The output-dir layout: the next file's name, from the wall clock (the
 * name is what readers sort by; the period itself is timed on the
 * monotonic clock, which a clock step does not stretch). */
static void next_name(struct file_out *o)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	sprintf(o->path, "%s%lld.%06ld_0_%s", o->dir, (long long)ts.tv_sec,
		ts.tv_nsec / 1000, o->base);
}

static int open_path(struct file_out *o)
{
	struct stat st;
	int fd;

	if (o->dir)
		next_name(o);
	fd = open(o->path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
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

/* A write or an open failed with e: said once an outage (a full disk
 * fails every retry), with what happens to the records. */
static void outage(struct file_out *o, const char *what, int e)
{
	if (o->failing)
		return;
	o->failing = e ? e : EIO;
	fprintf(stderr, "intspect: channel %s: cannot %s '%s': %s; records wait in the queue, "
		"retrying\n", o->chname, what, o->path, strerror(o->failing));
}

static void recovered(struct file_out *o)
{
	if (!o->failing)
		return;
	o->failing = 0;
	fprintf(stderr, "intspect: channel %s: writing '%s' again\n", o->chname, o->path);
}

static int reopen(struct file_out *o)
{
	if (open_path(o) != 0) {
		outage(o, "open", errno);
		return -1;
	}
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

/* ---- MMT-Probe's layout: .sem markers and retention -------------------------- */

/* The file just closed (o->path): marked ready with an empty .sem when it
 * holds a record (every record is a line, so any byte means one), deleted
 * when it holds none, as MMT-Probe does. */
static void seal(struct file_out *o)
{
	int fd;

	if (o->size == 0) {
		unlink(o->path);
		return;
	}
	sprintf(o->name_a, "%s" SEM, o->path);
	fd = open(o->name_a, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		/* The file is complete but no reader will take it: say so,
		 * as nothing else would. */
		fprintf(stderr, "intspect: channel %s: cannot create '%s': %s\n",
			o->chname, o->name_a, strerror(errno));
		return;
	}
	close(fd);
}

/* A marker written by this layout: "<digits>.<digits>_..." ending in .sem.
 * Other .sem files in the directory are not ours to delete. */
static int is_marker(const struct dirent *d)
{
	const char *s = d->d_name;
	size_t len = strlen(s), i = 0;

	if (len <= strlen(SEM) || strcmp(s + len - strlen(SEM), SEM) != 0)
		return 0;
	while (s[i] >= '0' && s[i] <= '9')
		i++;
	if (i == 0 || s[i++] != '.')
		return 0;
	while (s[i] >= '0' && s[i] <= '9')
		i++;
	return s[i] == '_';
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(struct dirent *const *)a)->d_name,
		      (*(struct dirent *const *)b)->d_name);
}

/* retain-files: keep the newest N marked files of the directory, all
 * channels' and processes' together as MMT-Probe does (the names start with
 * the creation time, so their order is the files' age: alphabetical until
 * the seconds gain a digit in 2286). The .sem goes first, so a reader
 * never takes a file being deleted. Runs once per cache-period, not per
 * record: the listing's allocations are fine here. */
static void prune(struct file_out *o)
{
	struct dirent **list = NULL;
	int n;

	if (!o->sample || o->retain == 0)
		return;
	n = scandir(o->dir, &list, is_marker, NULL);
	if (n < 0)
		return;
	qsort(list, (size_t)n, sizeof(*list), by_name);
	for (int i = 0; i < n; i++) {
		if ((unsigned)(n - i) > o->retain) {
			size_t len = strlen(o->dir) + strlen(list[i]->d_name) + 1;
			char *p = malloc(len);

			if (p) {
				snprintf(p, len, "%s%s", o->dir, list[i]->d_name);
				if (unlink(p) == 0 || errno == ENOENT) {
					p[len - 1 - strlen(SEM)] = '\0';
					unlink(p);
				}
				free(p);
			}
		}
		free(list[i]);
	}
	free(list);
}

/* sample-file: every cache-period, the next file (never in the middle of
 * a line: a line cut by a short write is finished first). A new file that
 * cannot be created leaves fd -1: records wait, flush tries again. */
static void next_sample(struct file_out *o)
{
	if (!o->dir || !o->sample || o->fd < 0 || o->partial ||
	    isp_now_ns() - o->opened_ns < o->sample_ns)
		return;
	close_fd(o);
	seal(o);
	prune(o);
	open_path(o);
}

/* ---- open ------------------------------------------------------------------ */

static void file_free(struct file_out *o)
{
	close_fd(o);
	free(o->path);
	free(o->name_a);
	free(o->name_b);
	free(o->dir);
	free(o->base);
	free(o->chname);
	free(o);
}

struct file_keys {
	uint64_t mb, sec, keep, retain, period;
	bool sample;
	int ip, idir, ifile;            /* index of path, output-dir, output-file */
};

/* Which layout, and keys of the other one refused; -1 with err, *bad_kv. */
static int check_layout(const struct isp_channel_cfg *cfg, struct file_keys *k,
			int *bad_kv, char *err, size_t errlen)
{
	static const char *const path_only[] = { "rotate-mb", "rotate-sec", "keep", NULL };
	static const char *const dir_only[] = { "sample-file", "retain-files", NULL };
	int i;

	k->ip = isp_kv_find(cfg, "path");
	k->idir = isp_kv_find(cfg, "output-dir");
	k->ifile = isp_kv_find(cfg, "output-file");
	if (k->ip >= 0) {
		if ((i = k->idir) >= 0 || (i = k->ifile) >= 0) {
			*bad_kv = i;
			snprintf(err, errlen, "'path' and '%s' name the files in two ways "
				 "(one file, or MMT-Probe's timestamped files in a directory): "
				 "give path, or output-dir and output-file", cfg->kv[i].key);
			return -1;
		}
		for (const char *const *key = dir_only; *key; key++) {
			if ((i = isp_kv_find(cfg, *key)) >= 0) {
				*bad_kv = i;
				snprintf(err, errlen, "'%s' applies to output-dir and output-file "
					 "(MMT-Probe's timestamped files), not to 'path'", *key);
				return -1;
			}
		}
		*bad_kv = k->ip;
		if (cfg->kv[k->ip].value[0] == '\0') {
			snprintf(err, errlen, "a file output needs a non-empty 'path'");
			return -1;
		}
		return 0;
	}
	if (k->idir < 0 && k->ifile < 0) {
		*bad_kv = -1;
		snprintf(err, errlen, "a file output needs 'path' (one file), or 'output-dir' "
			 "and 'output-file' (MMT-Probe's timestamped files)");
		return -1;
	}
	for (const char *const *key = path_only; *key; key++) {
		if ((i = isp_kv_find(cfg, *key)) >= 0) {
			*bad_kv = i;
			snprintf(err, errlen, "'%s' applies to 'path'; with output-dir a new file "
				 "starts every cache-period seconds (sample-file)", *key);
			return -1;
		}
	}
	if (k->ifile < 0 || k->idir < 0) {
		*bad_kv = k->ifile < 0 ? k->idir : k->ifile;
		snprintf(err, errlen, k->ifile < 0 ?
			 "'output-dir' needs 'output-file' (the files' base name)" :
			 "'output-file' needs 'output-dir' (the files' directory)");
		return -1;
	}
	return 0;
}

/* output-dir and output-file: values, and the directory exists (checked in
 * check mode too: a run would fail on it). */
static int check_dir(const struct isp_channel_cfg *cfg, const struct file_keys *k,
		     int *bad_kv, char *err, size_t errlen)
{
	const char *dir = cfg->kv[k->idir].value, *base = cfg->kv[k->ifile].value;
	struct stat st;

	*bad_kv = k->ifile;
	if (base[0] == '\0' || strchr(base, '/')) {
		snprintf(err, errlen, "bad value '%s' for output-file: expected a file "
			 "name, without '/'", base);
		return -1;
	}
	*bad_kv = k->idir;
	if (dir[0] == '\0') {
		snprintf(err, errlen, "'output-dir' is empty");
		return -1;
	}
	if (stat(dir, &st) != 0) {
		snprintf(err, errlen, "output-dir '%s': %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "output-dir '%s' is not a directory", dir);
		return -1;
	}
	return 0;
}

/* path: its directory exists and may be written, checked the same way
 * with -T (which creates nothing) and before a run opens the file, so
 * both refuse the same path in the same words. */
static int check_path(const struct isp_channel_cfg *cfg, const struct file_keys *k,
		      int *bad_kv, char *err, size_t errlen)
{
	const char *path = cfg->kv[k->ip].value, *slash = strrchr(path, '/');
	char dir[4096];
	struct stat st;

	*bad_kv = k->ip;
	if (path[0] == '\0') {
		snprintf(err, errlen, "a file output needs a non-empty 'path'");
		return -1;
	}
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	errno = 0;
	if (stat(dir, &st) != 0 || (!S_ISDIR(st.st_mode) && (errno = ENOTDIR)) ||
	    access(dir, W_OK | X_OK) != 0) {
		snprintf(err, errlen, "cannot open '%s': %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int parse_keys(const struct isp_channel_cfg *cfg, struct file_keys *k,
		      int *bad_kv, char *err, size_t errlen)
{
	*k = (struct file_keys){ .keep = 10, .period = 5, .sample = true };
	for (size_t i = 0; i < cfg->nkv; i++) {
		const struct isp_kv *kv = &cfg->kv[i];
		int rc = 0;

		*bad_kv = (int)i;
		if (strcmp(kv->key, "rotate-mb") == 0)
			rc = isp_kv_uint(kv, 0, 1u << 20, &k->mb, err, errlen);
		else if (strcmp(kv->key, "rotate-sec") == 0)
			rc = isp_kv_uint(kv, 0, 366u * 86400, &k->sec, err, errlen);
		else if (strcmp(kv->key, "keep") == 0)
			rc = isp_kv_uint(kv, 0, 1000, &k->keep, err, errlen);
		else if (strcmp(kv->key, "sample-file") == 0)
			rc = isp_kv_bool(kv, &k->sample, err, errlen);
		else if (strcmp(kv->key, "retain-files") == 0)
			rc = isp_kv_uint(kv, 0, 65535, &k->retain, err, errlen);
		else if (strcmp(kv->key, "cache-period") == 0)
			rc = isp_kv_uint(kv, 1, 366u * 86400, &k->period, err, errlen);
		if (rc != 0)
			return -1;
	}
	if (check_layout(cfg, k, bad_kv, err, errlen) != 0)
		return -1;
	if (k->ip < 0 && check_dir(cfg, k, bad_kv, err, errlen) != 0)
		return -1;
	if (k->ip >= 0 && check_path(cfg, k, bad_kv, err, errlen) != 0)
		return -1;
	return 0;
}

/* Names and buffers of either layout; -1 when out of memory. */
static int alloc_names(struct file_out *o, const struct isp_channel_cfg *cfg,
		       const struct file_keys *k)
{
	size_t room;

	if (k->ip >= 0) {
		o->path = strdup(cfg->kv[k->ip].value);
		if (!o->path)
			return -1;
		room = strlen(o->path) + 16;            /* ".N" */
	} else {
		const char *dir = cfg->kv[k->idir].value;
		size_t dl = strlen(dir);

		o->base = strdup(cfg->kv[k->ifile].value);
		o->dir = malloc(dl + 2);
		if (!o->base || !o->dir)
			return -1;
		/* MMT-Probe appends the '/' the value may lack. */
		snprintf(o->dir, dl + 2, "%s%s", dir, dir[dl - 1] == '/' ? "" : "/");
		/* "<sec>.<usec>_0_": 20 digits, '.', 6, "_0_" */
		room = strlen(o->dir) + 32 + strlen(o->base);
		o->path = malloc(room);
		if (!o->path)
			return -1;
		room += strlen(SEM);
	}
	o->name_a = malloc(room);
	o->name_b = malloc(room);
	o->chname = strdup(cfg->name ? cfg->name : "file");
	return o->name_a && o->name_b && o->chname ? 0 : -1;
}

static int file_open(void **state, const struct isp_channel_cfg *cfg,
		     int *bad_kv, char *err, size_t errlen)
{
	static const char *const known[] = {
		"path", "rotate-mb", "rotate-sec", "keep",
		"output-dir", "output-file", "sample-file", "retain-files",
		"cache-period", NULL
	};
	struct file_keys k;
	struct file_out *o;

	if (isp_kv_check_known(cfg, known, bad_kv, err, errlen) != 0)
		return -1;
	if (parse_keys(cfg, &k, bad_kv, err, errlen) != 0)
		return -1;
	if (cfg->check_only) {
		*bad_kv = -1;
		return 0;       /* -T creates no file */
	}

	o = calloc(1, sizeof(*o));
	if (!o) {
		*bad_kv = -1;
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	o->fd = -1;
	if (alloc_names(o, cfg, &k) != 0) {
		file_free(o);
		*bad_kv = -1;
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* cache-period is MMT-Probe's output-section key that the config
	 * compiler copies into every file section: the path layout has it
	 * too, and does not use it. */
	o->rotate_bytes = k.mb << 20;
	o->rotate_ns = (int64_t)k.sec * 1000000000;
	o->keep = (unsigned)k.keep;
	o->sample = k.sample;
	o->sample_ns = (int64_t)k.period * 1000000000;
	o->retain = (unsigned)k.retain;
	o->ch = cfg->channel;
	if (open_path(o) != 0) {
		*bad_kv = k.ip >= 0 ? k.ip : k.idir;
		snprintf(err, errlen, "cannot open '%s': %s", o->path, strerror(errno));
		file_free(o);
		return -1;
	}
	*bad_kv = -1;
	*state = o;
	return 0;
}

/* ---- writing ---------------------------------------------------------------- */

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
		size_t k = isp_fd_write_lines(o->fd, recs + i, j - i,
					      &o->partial, &wrote, &e);

		o->size += wrote;
		i += k;
		if (e) {
			outage(o, "write", e);
			return i;
		}
	}
	recovered(o);
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
	next_sample(o);
	return o->fd >= 0 ? 0 : -1;
}

static void file_close(void *state)
{
	struct file_out *o = state;

	/* A line cut at exit (by the shutdown deadline, or by a disk still
	 * full): its record is counted dropped, so its bytes go too, and the
	 * file holds whole records only, one a line, for whoever reads or
	 * appends next. Writing the rest could fail again; a truncation
	 * cannot run out of space. */
	if (o->partial && o->fd >= 0) {
		off_t end = lseek(o->fd, 0, SEEK_END);

		if (end >= (off_t)o->partial && ftruncate(o->fd, end - (off_t)o->partial) != 0)
			fprintf(stderr, "intspect: channel %s: cannot remove the cut last line of "
				"'%s': %s\n", o->chname, o->path, strerror(errno));
	}
	/* The last sample is sealed like the others (a lost file, fd -1,
	 * has nothing to seal). */
	if (o->dir && o->sample && o->fd >= 0) {
		close_fd(o);
		seal(o);
	}
	if (o->dir)
		prune(o);
	file_free(o);
}

const struct isp_channel_ops isp_file_ops = {
	.type = "file",
	.open = file_open,
	.write_batch = file_write,
	.flush = file_flush,
	.close = file_close,
	.lines = true,
};
