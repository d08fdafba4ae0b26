/*
 * check_file.c - the "file" and "stdout" channel types: exact contents,
 * appending, size and time rotation (names and contents), write errors
 * (full disk, deleted directory) retried and counted, and key errors with
 * their line:col.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../outputs/channel.h"
#include "tcfg.h"

static char err[1024];
static char dir[64];
static char path[128];
static char kv_path[160];

static void setup(void)
{
	umask(022);
	snprintf(dir, sizeof(dir), "/tmp/check_file.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.jsonl", dir);
	snprintf(kv_path, sizeof(kv_path), "path=%s", path);
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

static struct isp_channel *must_open(const char *type, const char *const *kvs)
{
	struct isp_channel *ch = tcfg_open(type, kvs, err, sizeof(err));

	ck_assert_msg(ch != NULL, "open failed: %s", err);
	return ch;
}

static void put(struct isp_channel *ch, const char *text)
{
	struct isp_record r = { .text = text, .len = strlen(text) };

	ck_assert(isp_channel_submit(ch, &r));
}

/* Whole file as a string; NULL if it does not exist. */
static char *slurp(const char *p)
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

static struct isp_channel_stats stats(const struct isp_channel *ch)
{
	struct isp_channel_stats st;

	isp_channel_get_stats(ch, &st);
	return st;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Poll a counter for up to 5 s. */
static bool wait_stat(const struct isp_channel *ch, size_t offset, uint64_t min)
{
	for (int i = 0; i < 5000; i++) {
		struct isp_channel_stats st = stats(ch);
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

/* ---- contents ------------------------------------------------------------- */

START_TEST(writes_exact_records)
{
	const char *kvs[] = { kv_path, NULL };
	struct isp_channel *ch;
	struct stat st;
	char *got;

	ch = must_open("file", kvs);
	put(ch, "{\"a\":1}");
	put(ch, "");
	put(ch, "1,2,\"x y\"");
	put(ch, "{\"last\":true}");
	isp_channel_close(ch);
	got = slurp(path);
	ck_assert_str_eq(got, "{\"a\":1}\n\n1,2,\"x y\"\n{\"last\":true}\n");
	free(got);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0644);

	/* Reopening appends. */
	ch = must_open("file", kvs);
	put(ch, "again");
	isp_channel_close(ch);
	got = slurp(path);
	ck_assert_str_eq(got, "{\"a\":1}\n\n1,2,\"x y\"\n{\"last\":true}\nagain\n");
	free(got);
}
END_TEST

/* Line i of the size tests: "%07u" then 993 letters: 1001 bytes with '\n'. */
static void line_of(unsigned i, char *buf)
{
	snprintf(buf, 8, "%07u", i);
	memset(buf + 7, 'a' + (int)(i % 26), 993);
	buf[1000] = '\0';
}

/* The file `p` holds lines first..first+count-1. */
static void check_lines(const char *p, unsigned first, unsigned count)
{
	char *got = slurp(p), want[1001];
	struct stat st;

	ck_assert_msg(got != NULL, "%s missing", p);
	ck_assert_uint_eq(strlen(got), count * 1001u);
	for (unsigned i = 0; i < count; i++) {
		line_of(first + i, want);
		ck_assert(memcmp(got + i * 1001u, want, 1000) == 0);
		ck_assert_int_eq(got[i * 1001u + 1000], '\n');
	}
	free(got);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_le(st.st_size, 1 << 20);
}

START_TEST(rotates_by_size)
{
	const char *kvs[] = { kv_path, "rotate-mb=1", "keep=2", "batch=100", NULL };
	struct isp_channel *ch = must_open("file", kvs);
	char line[1001], name[160];

	for (unsigned i = 0; i < 4000; i++) {
		line_of(i, line);
		put(ch, line);
	}
	isp_channel_close(ch);
	/* 1047 lines of 1001 bytes fit in 1 MiB: files of 0-1046 (rotated
	 * out: keep = 2), 1047-2093, 2094-3140, and 3141-3999 live. */
	check_lines(path, 3141, 859);
	snprintf(name, sizeof(name), "%s.1", path);
	check_lines(name, 2094, 1047);
	snprintf(name, sizeof(name), "%s.2", path);
	check_lines(name, 1047, 1047);
	snprintf(name, sizeof(name), "%s.3", path);
	ck_assert_int_ne(access(name, F_OK), 0);
}
END_TEST

START_TEST(rotate_keep_zero_deletes)
{
	const char *kvs[] = { kv_path, "rotate-mb=1", "keep=0", NULL };
	struct isp_channel *ch = must_open("file", kvs);
	char line[1001], name[160];

	for (unsigned i = 0; i < 2000; i++) {
		line_of(i, line);
		put(ch, line);
	}
	isp_channel_close(ch);
	check_lines(path, 1047, 953);
	snprintf(name, sizeof(name), "%s.1", path);
	ck_assert_int_ne(access(name, F_OK), 0);
}
END_TEST

START_TEST(rotates_by_time)
{
	const char *kvs[] = { kv_path, "rotate-sec=1", "flush-ms=20", NULL };
	struct isp_channel *ch = must_open("file", kvs);
	char name[160], *got;

	put(ch, "first");
	WAIT(ch, delivered, 1);
	sleep_ms(1150);
	put(ch, "second");
	isp_channel_close(ch);
	snprintf(name, sizeof(name), "%s.1", path);
	got = slurp(name);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, "first\n");
	free(got);
	got = slurp(path);
	ck_assert_str_eq(got, "second\n");
	free(got);
}
END_TEST

/* ---- failures --------------------------------------------------------------- */

START_TEST(disk_full_retried_then_dropped)
{
	const char *kvs[] = { "path=/dev/full", "shutdown-ms=60", NULL };
	struct isp_channel *ch;

	if (access("/dev/full", W_OK) != 0)
		return;
	ch = must_open("file", kvs);
	put(ch, "a");
	put(ch, "b");
	WAIT(ch, retried, 1);
	isp_channel_drain(ch);

	struct isp_channel_stats st = stats(ch);

	ck_assert_uint_eq(st.delivered, 0);
	ck_assert_uint_eq(st.dropped, 2);
	ck_assert_uint_eq(st.queue_depth, 0);
	ck_assert_uint_eq(st.queued, st.delivered + st.dropped + st.queue_depth);
	isp_channel_close(ch);
}
END_TEST

START_TEST(deleted_directory_recovers)
{
	char sub[96], p[128], kp[160], *got;
	const char *kvs[] = { kp, "flush-ms=10", NULL };
	struct isp_channel *ch;

	snprintf(sub, sizeof(sub), "%s/sub", dir);
	snprintf(p, sizeof(p), "%s/out", sub);
	snprintf(kp, sizeof(kp), "path=%s", p);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	ch = must_open("file", kvs);
	put(ch, "a");
	WAIT(ch, delivered, 1);
	ck_assert_int_eq(unlink(p), 0);
	ck_assert_int_eq(rmdir(sub), 0);
	sleep_ms(60);                   /* a flush notices, reopening fails */
	put(ch, "b");
	WAIT(ch, retried, 1);
	ck_assert_uint_eq(stats(ch).delivered, 1);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	WAIT(ch, delivered, 2);
	ck_assert_uint_ge(stats(ch).reconnects, 1);
	isp_channel_close(ch);
	got = slurp(p);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, "b\n");
	free(got);
}
END_TEST

/* ---- keys ------------------------------------------------------------------ */

static void expect_error(const char *type, const char *const *kvs, const char *want)
{
	ck_assert_ptr_null(tcfg_open(type, kvs, err, sizeof(err)));
	ck_assert_str_eq(err, want);
}

START_TEST(key_errors)
{
	const char *a[] = { kv_path, "rotate-md=5", NULL };
	const char *b[] = { "rotate-mb=5", NULL };
	const char *c[] = { kv_path, "batch=10", "rotate-mb=lots", NULL };
	const char *d[] = { "path=/nonexistent-dir/x/out", NULL };
	const char *e[] = { kv_path, "keep=1001", NULL };
	const char *f[] = { "path=", NULL };
	const char *g[] = { kv_path, NULL };

	expect_error("file", a, "test.conf:3:3: unknown key 'rotate-md' for a file "
		     "output (did you mean 'rotate-mb'?); known: enable, queue-records, "
		     "queue-bytes, drop-policy, batch, flush-ms, shutdown-ms, format, "
		     "path, rotate-mb, rotate-sec, keep");
	expect_error("file", b, "test.conf:1:1: a file output needs a non-empty 'path'");
	expect_error("file", c, "test.conf:4:3: bad value 'lots' for rotate-mb: "
		     "expected an integer from 0 to 1048576");
	expect_error("file", d, "test.conf:2:3: cannot open '/nonexistent-dir/x/out': "
		     "No such file or directory");
	expect_error("file", e, "test.conf:3:3: bad value '1001' for keep: "
		     "expected an integer from 0 to 1000");
	expect_error("file", f, "test.conf:2:3: a file output needs a non-empty 'path'");
	expect_error("stdout", g, "test.conf:2:3: unknown key 'path' for a stdout "
		     "output; known: enable, queue-records, queue-bytes, drop-policy, "
		     "batch, flush-ms, shutdown-ms, format");
	ck_assert_int_ne(access(path, F_OK), 0);    /* nothing was created */
}
END_TEST

START_TEST(stdout_lines)
{
	const char *kvs[] = { "batch=2", NULL };
	struct isp_channel *ch;
	int fd, saved;
	char *got;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	saved = dup(STDOUT_FILENO);
	ck_assert_int_ge(dup2(fd, STDOUT_FILENO), 0);
	close(fd);
	ch = must_open("stdout", kvs);
	put(ch, "one");
	put(ch, "two");
	put(ch, "three");
	isp_channel_close(ch);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	got = slurp(path);
	ck_assert_str_eq(got, "one\ntwo\nthree\n");
	free(got);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("file");
	TCase *tc = tcase_create("file");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, writes_exact_records);
	tcase_add_test(tc, rotates_by_size);
	tcase_add_test(tc, rotate_keep_zero_deletes);
	tcase_add_test(tc, rotates_by_time);
	tcase_add_test(tc, disk_full_retried_then_dropped);
	tcase_add_test(tc, deleted_directory_recovers);
	tcase_add_test(tc, key_errors);
	tcase_add_test(tc, stdout_lines);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
