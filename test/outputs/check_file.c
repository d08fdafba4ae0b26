/*
 * check_file.c - the "file" channel type with `path`: exact contents,
 * appending, size and time rotation (names and contents, keep and its
 * default, a record larger than rotate-mb alone), a renamed file opened
 * again, write errors (full disk, deleted directory) retried and counted,
 * and key errors with their line:col. MMT-Probe's layout (output-dir):
 * check_file_mmt.c; the type stdout: check_stdout.c.
 */
#include "tfile.h"

/* ---- contents ------------------------------------------------------------- */

START_TEST(writes_exact_records)
{
	const char *kvs[] = { kv_path, NULL };
	struct isp_channel *ch;
	struct stat st;
	char *got;

	ch = tcheck_open("file", kvs);
	tcheck_put(ch, "{\"a\":1}");
	tcheck_put(ch, "");
	tcheck_put(ch, "1,2,\"x y\"");
	tcheck_put(ch, "{\"last\":true}");
	isp_channel_close(ch);
	got = slurp(path);
	ck_assert_str_eq(got, "{\"a\":1}\n\n1,2,\"x y\"\n{\"last\":true}\n");
	free(got);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0644);

	/* Reopening appends. */
	ch = tcheck_open("file", kvs);
	tcheck_put(ch, "again");
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
	struct isp_channel *ch = tcheck_open("file", kvs);
	char line[1001], name[160];

	for (unsigned i = 0; i < 4000; i++) {
		line_of(i, line);
		tcheck_put(ch, line);
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
	struct isp_channel *ch = tcheck_open("file", kvs);
	char line[1001], name[160];

	for (unsigned i = 0; i < 2000; i++) {
		line_of(i, line);
		tcheck_put(ch, line);
	}
	isp_channel_close(ch);
	check_lines(path, 1047, 953);
	snprintf(name, sizeof(name), "%s.1", path);
	ck_assert_int_ne(access(name, F_OK), 0);
}
END_TEST

/* A record larger than rotate-mb gets a file of its own: the file before
 * it rotates out, and so does the big one at the next record. */
START_TEST(rotate_big_record_alone)
{
	const char *kvs[] = { kv_path, "rotate-mb=1", NULL };
	struct isp_channel *ch = tcheck_open("file", kvs);
	size_t big = 3u << 19;          /* 1.5 MiB */
	char *line = malloc(big + 1), name[160], *got;

	ck_assert_ptr_nonnull(line);
	memset(line, 'x', big);
	line[big] = 0;
	tcheck_put(ch, "a");
	tcheck_put(ch, line);
	tcheck_put(ch, "b");
	isp_channel_close(ch);
	snprintf(name, sizeof(name), "%s.2", path);
	got = slurp(name);
	ck_assert_str_eq(got, "a\n");
	free(got);
	snprintf(name, sizeof(name), "%s.1", path);
	got = slurp(name);
	ck_assert_uint_eq(strlen(got), big + 1);
	ck_assert_int_eq(memcmp(got, line, big), 0);
	free(got);
	got = slurp(path);
	ck_assert_str_eq(got, "b\n");
	free(got);
	free(line);
}
END_TEST

/* keep's default: 10 rotated files, the eleventh falls off. */
START_TEST(rotate_keep_default_ten)
{
	const char *kvs[] = { kv_path, "rotate-mb=1", NULL };
	struct isp_channel *ch = tcheck_open("file", kvs);
	char line[1001], name[160];

	for (unsigned i = 0; i < 12 * 1047 + 1; i++) {       /* 12 files and a line */
		line_of(i, line);
		tcheck_put(ch, line);
	}
	isp_channel_close(ch);
	check_lines(path, 12 * 1047, 1);
	for (unsigned k = 1; k <= 10; k++) {
		snprintf(name, sizeof(name), "%s.%u", path, k);
		check_lines(name, (12 - k) * 1047, 1047);
	}
	snprintf(name, sizeof(name), "%s.11", path);
	ck_assert_int_ne(access(name, F_OK), 0);
}
END_TEST

/* A file renamed under the channel (logrotate): the next flush opens path
 * again, counted in reconnects; the renamed file keeps what it had. */
START_TEST(renamed_file_reopened)
{
	const char *kvs[] = { kv_path, "flush-ms=10", NULL };
	struct isp_channel *ch = tcheck_open("file", kvs);
	char old[160], *got;

	tcheck_put(ch, "a");
	WAIT(ch, delivered, 1);
	snprintf(old, sizeof(old), "%s.old", path);
	ck_assert_int_eq(rename(path, old), 0);
	WAIT(ch, reconnects, 1);
	tcheck_put(ch, "b");
	WAIT(ch, delivered, 2);
	isp_channel_close(ch);
	got = slurp(old);
	ck_assert_str_eq(got, "a\n");
	free(got);
	got = slurp(path);
	ck_assert_str_eq(got, "b\n");
	free(got);
}
END_TEST

START_TEST(rotates_by_time)
{
	const char *kvs[] = { kv_path, "rotate-sec=1", "flush-ms=20", NULL };
	struct isp_channel *ch = tcheck_open("file", kvs);
	char name[160], *got;

	tcheck_put(ch, "first");
	WAIT(ch, delivered, 1);
	sleep_ms(1150);
	tcheck_put(ch, "second");
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
	ch = tcheck_open("file", kvs);
	tcheck_put(ch, "a");
	tcheck_put(ch, "b");
	WAIT(ch, retried, 1);
	isp_channel_drain(ch);

	struct isp_channel_stats st = tcheck_stats(ch);

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
	ch = tcheck_open("file", kvs);
	tcheck_put(ch, "a");
	WAIT(ch, delivered, 1);
	ck_assert_int_eq(unlink(p), 0);
	ck_assert_int_eq(rmdir(sub), 0);
	sleep_ms(60);                   /* a flush notices, reopening fails */
	tcheck_put(ch, "b");
	WAIT(ch, retried, 1);
	ck_assert_uint_eq(tcheck_stats(ch).delivered, 1);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	WAIT(ch, delivered, 2);
	ck_assert_uint_ge(tcheck_stats(ch).reconnects, 1);
	isp_channel_close(ch);
	got = slurp(p);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, "b\n");
	free(got);
}
END_TEST

/* ---- keys ------------------------------------------------------------------ */

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
		     "path, rotate-mb, rotate-sec, keep, output-dir, output-file, "
		     "sample-file, retain-files, cache-period");
	expect_error("file", b, "test.conf:1:1: a file output needs 'path' (one file), "
		     "or 'output-dir' and 'output-file' (MMT-Probe's timestamped files)");
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

int main(void)
{
	Suite *s = suite_create("file");
	TCase *tc = tcase_create("file");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, writes_exact_records);
	tcase_add_test(tc, rotates_by_size);
	tcase_add_test(tc, rotate_keep_zero_deletes);
	tcase_add_test(tc, rotate_big_record_alone);
	tcase_add_test(tc, rotate_keep_default_ten);
	tcase_add_test(tc, renamed_file_reopened);
	tcase_add_test(tc, rotates_by_time);
	tcase_add_test(tc, disk_full_retried_then_dropped);
	tcase_add_test(tc, deleted_directory_recovers);
	tcase_add_test(tc, key_errors);
	suite_add_tcase(s, tc);
	return check_run(s, CK_FORK_GETENV);
}
