/*
 * tcfg.c - output sections from strings for the tests (tcfg.h).
 */
#include "tcfg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXKV 16

/* The section of "key=value" strings, then what `use` does with it. */
static void *with_section(const char *type, const char *const *kvs,
			  void *(*use)(const struct isp_channel_cfg *, char *, size_t),
			  char *err, size_t errlen)
{
	struct isp_kv kv[MAXKV];
	char buf[MAXKV][512];
	size_t n = 0;

	for (; kvs && kvs[n]; n++) {
		char *eq;

		if (n == MAXKV)
			abort();
		snprintf(buf[n], sizeof(buf[n]), "%s", kvs[n]);
		eq = strchr(buf[n], '=');
		if (!eq)
			abort();
		*eq = '\0';
		kv[n] = (struct isp_kv){ buf[n], eq + 1, (int)n + 2, 3 };
	}

	struct isp_channel_cfg cfg = {
		.name = "t", .type = type, .kv = kv, .nkv = n,
		.file = "test.conf", .line = 1, .col = 1,
	};

	err[0] = '\0';
	/* what use returns (a channel, or a flag), not cfg */
	// cppcheck-suppress returnDanglingLifetime
	return use(&cfg, err, errlen);
}

static void *open_use(const struct isp_channel_cfg *cfg, char *err, size_t errlen)
{
	return isp_channel_open(cfg, err, errlen);
}

/* isp_channel_check's 0 or -1, carried as a pointer */
static char checked_ok;

static void *check_use(const struct isp_channel_cfg *cfg, char *err, size_t errlen)
{
	return isp_channel_check(cfg, err, errlen) == 0 ? &checked_ok : NULL;
}

struct isp_channel *tcfg_open(const char *type, const char *const *kvs,
			      char *err, size_t errlen)
{
	return with_section(type, kvs, open_use, err, errlen);
}

int tcfg_check(const char *type, const char *const *kvs, char *err, size_t errlen)
{
	return with_section(type, kvs, check_use, err, errlen) ? 0 : -1;
}

struct isp_channel *tcfg_open_with(const char *type, const char *first,
				   const char *const *extra, char *err, size_t errlen)
{
	const char *kvs[MAXKV + 1];
	size_t n = 0;

	kvs[n++] = first;
	for (; extra && *extra && n < MAXKV; extra++)
		kvs[n++] = *extra;
	kvs[n] = NULL;
	return tcfg_open(type, kvs, err, errlen);
}

static int saved_err = -1;
static char cap_path[64];

void tcfg_stderr_begin(void)
{
	int fd;

	snprintf(cap_path, sizeof(cap_path), "/tmp/tcfg_stderr.XXXXXX");
	fd = mkstemp(cap_path);
	if (fd < 0)
		abort();
	fflush(stderr);
	saved_err = dup(2);
	dup2(fd, 2);
	close(fd);
}

void tcfg_stderr_peek(char *buf, size_t size)
{
	FILE *f;
	size_t n = 0;

	fflush(stderr);
	if ((f = fopen(cap_path, "r"))) {
		n = fread(buf, 1, size - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
}

char *tcfg_stderr_end(void)
{
	char *s = malloc(1 << 16);

	if (!s)
		abort();
	tcfg_stderr_peek(s, 1 << 16);
	dup2(saved_err, 2);
	close(saved_err);
	unlink(cap_path);
	fputs(s, stderr);       /* still shown in the test's log */
	return s;
}
