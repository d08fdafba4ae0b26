/*
 * tfile.h - what the file channel's Check programs share (check_file.c,
 * check_file_mmt.c): a fresh directory a test (setup, teardown), its
 * `path=` and `output-dir=` keys, a file read whole, a counter awaited,
 * and a key error expected with its message.
 */
#ifndef ISP_TEST_TFILE_H
#define ISP_TEST_TFILE_H

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../outputs/channel.h"
#include "tcheck.h"
#include "../check_run.h"


static char err[1024] __attribute__((unused));
static char dir[64];
static char path[128] __attribute__((unused));
static char kv_path[160] __attribute__((unused));
static char kv_dir[96] __attribute__((unused));

static inline void setup(void)
{
	umask(022);
	snprintf(dir, sizeof(dir), "/tmp/check_file.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.jsonl", dir);
	snprintf(kv_path, sizeof(kv_path), "path=%s", path);
	snprintf(kv_dir, sizeof(kv_dir), "output-dir=%s", dir);
}

static inline void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

/* Whole file as a string; NULL if it does not exist. */
static inline char *slurp(const char *p)
{
	FILE *f = fopen(p, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static inline void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Poll a counter for up to 5 s. */
static inline bool wait_stat(const struct isp_channel *ch, size_t offset, uint64_t min)
{
	for (int i = 0; i < 5000; i++) {
		struct isp_channel_stats st = tcheck_stats(ch);
		uint64_t v;

		memcpy(&v, (const char *)&st + offset, sizeof(v));
		if (v >= min)
			return true;
		sleep_ms(1);
	}
	return false;
}

#define WAIT(ch, field, min) \
	ck_assert(wait_stat(ch, offsetof(struct isp_channel_stats, field), min))

static inline void expect_error(const char *type, const char *const *kvs, const char *want)
{
	ck_assert_ptr_null(tcfg_open(type, kvs, err, sizeof(err)));
	ck_assert_str_eq(err, want);
}

#endif
