/*
 * check_stdout.c - the "stdout" channel type: its lines in order into a
 * file; whole, once each and in order through short writes to a
 * non-blocking pipe that holds a page. And fdlines (shared with "file")
 * on records that were not taken as lines: written with writev, mixed
 * with a lined run, resumed mid-line after a short write.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../outputs/channel.h"
#include "../../outputs/fdlines.h"
#include "tcheck.h"
#include "../check_run.h"

/* The whole of file fd from its start, NUL-terminated. */
static char *read_all(int fd)
{
	off_t n = lseek(fd, 0, SEEK_END);
	char *buf = malloc((size_t)n + 1);

	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(pread(fd, buf, (size_t)n, 0), n);
	buf[n] = '\0';
	return buf;
}

START_TEST(stdout_lines)
{
	const char *kvs[] = { "batch=2", NULL };
	struct isp_channel *ch;
	char path[] = "/tmp/check_stdout.XXXXXX";
	int fd, saved;
	char *got;

	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	saved = dup(STDOUT_FILENO);
	ck_assert_int_ge(dup2(fd, STDOUT_FILENO), 0);
	ch = tcheck_open("stdout", kvs);
	tcheck_put(ch, "one");
	tcheck_put(ch, "two");
	tcheck_put(ch, "three");
	isp_channel_close(ch);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	got = read_all(fd);
	close(fd);
	unlink(path);
	ck_assert_str_eq(got, "one\ntwo\nthree\n");
	free(got);
}
END_TEST

/* The read end of a pipe, read to its end into a buffer. */
struct drain {
	int fd;
	char *buf;
	size_t len, cap;
};

static void *drain_pipe(void *arg)
{
	struct drain *d = arg;

	for (;;) {
		if (d->cap - d->len < 4096) {
			d->cap = d->cap ? 2 * d->cap : 1 << 20;
			d->buf = realloc(d->buf, d->cap);
			if (!d->buf)
				return NULL;
		}
		ssize_t r = read(d->fd, d->buf + d->len, 4096);

		if (r <= 0)
			return NULL;
		d->len += (size_t)r;
	}
}

/* Line i of stdout_short_writes (6 to 705 bytes, unterminated): its
 * length. */
static size_t short_line(char *line, unsigned i)
{
	size_t len = 6 + (i * 7919u) % 700;
	int n = snprintf(line, 8, "%05u:", i);

	for (size_t j = (size_t)n; j < len; j++)
		line[j] = (char)('a' + (i + j) % 26);
	return len;
}

/* stdout a non-blocking pipe that holds a page: most writes of a batch
 * stop short, mid-line, or find the pipe full; the lines still arrive
 * whole, once each, in order. */
START_TEST(stdout_short_writes)
{
	const char *kvs[] = { "shutdown-ms=60000", NULL };
	enum { N = 3000 };
	struct drain d = { 0 };
	struct isp_channel *ch;
	pthread_t th;
	int fds[2], saved;
	char line[800];

	ck_assert_int_eq(pipe(fds), 0);
	(void)fcntl(fds[1], F_SETPIPE_SZ, 4096);        /* at least a page */
	ck_assert_int_eq(fcntl(fds[1], F_SETFL, O_NONBLOCK), 0);
	d.fd = fds[0];
	ck_assert_int_eq(pthread_create(&th, NULL, drain_pipe, &d), 0);
	saved = dup(STDOUT_FILENO);
	ck_assert_int_ge(dup2(fds[1], STDOUT_FILENO), 0);
	close(fds[1]);
	ch = tcheck_open("stdout", kvs);
	for (unsigned i = 0; i < N; i++) {
		line[short_line(line, i)] = '\0';
		tcheck_put(ch, line);
	}
	isp_channel_drain(ch);

	struct isp_channel_stats st = tcheck_stats(ch);

	isp_channel_close(ch);
	dup2(saved, STDOUT_FILENO);     /* the pipe's last writer gone */
	close(saved);
	pthread_join(th, NULL);
	ck_assert_uint_eq(st.delivered, N);
	ck_assert_uint_eq(st.dropped, 0);
	ck_assert_uint_gt(st.retried, 0);       /* the pipe was full */
	ck_assert_ptr_nonnull(d.buf);

	size_t at = 0;

	for (unsigned i = 0; i < N; i++) {
		size_t len = short_line(line, i);

		line[len] = '\n';
		ck_assert_msg(at + len + 1 <= d.len && memcmp(d.buf + at, line, len + 1) == 0,
			      "line %u not found whole at byte %zu", i, at);
		at += len + 1;
	}
	ck_assert_uint_eq(at, d.len);
	close(fds[0]);
	free(d.buf);
}
END_TEST

/* Records not taken as lines (each text alone), around a run of lined
 * ones in one buffer: every line once, in order, from byte *partial of
 * the first; the same through a non-blocking pipe that takes part of a
 * line at a time. */
START_TEST(fdlines_unlined_and_lined)
{
	static const char run[] = "cd\nef\n";
	struct isp_record recs[4] = {
		{ .text = "ab", .len = 2 },
		{ .text = run, .len = 2, .lined = true },
		{ .text = run + 3, .len = 2, .lined = true },
		{ .text = "gh", .len = 2 },
	};
	char path[] = "/tmp/check_stdout.XXXXXX";
	size_t partial = 1;
	uint64_t bytes = 0;
	int fd = mkstemp(path), e;

	ck_assert_int_ge(fd, 0);
	ck_assert_uint_eq(isp_fd_write_lines(fd, recs, 4, &partial, &bytes, &e), 4);
	ck_assert_int_eq(e, 0);
	ck_assert_uint_eq(partial, 0);
	ck_assert_uint_eq(bytes, 11);

	char *got = read_all(fd);

	ck_assert_str_eq(got, "b\ncd\nef\ngh\n");
	free(got);
	close(fd);
	unlink(path);

	/* 300 lines of 100 bytes, unlined, into a pipe of a page */
	enum { N = 300, LEN = 100 };
	static char text[N][LEN];
	struct isp_record many[N];
	int fds[2];
	char back[N * (LEN + 1)];
	size_t done = 0, have = 0;

	for (unsigned i = 0; i < N; i++) {
		snprintf(text[i], LEN, "%05u", i);
		memset(text[i] + 5, 'a' + i % 26, LEN - 5);
		many[i] = (struct isp_record){ .text = text[i], .len = LEN };
	}
	ck_assert_int_eq(pipe(fds), 0);
	(void)fcntl(fds[1], F_SETPIPE_SZ, 4096);
	ck_assert_int_eq(fcntl(fds[1], F_SETFL, O_NONBLOCK), 0);
	ck_assert_int_eq(fcntl(fds[0], F_SETFL, O_NONBLOCK), 0);
	partial = 0;
	int rounds = 0;

	while (done < N) {
		done += isp_fd_write_lines(fds[1], many + done, N - done, &partial, &bytes, &e);
		ck_assert(e == 0 || e == EAGAIN);
		ssize_t r;

		while ((r = read(fds[0], back + have, sizeof(back) - have)) > 0)
			have += (size_t)r;
		rounds++;
	}
	ck_assert_int_gt(rounds, 1);            /* short writes happened */
	ck_assert_uint_eq(have, sizeof(back));
	for (unsigned i = 0; i < N; i++) {
		ck_assert(memcmp(back + i * (LEN + 1), text[i], LEN) == 0);
		ck_assert_int_eq(back[i * (LEN + 1) + LEN], '\n');
	}
	close(fds[0]);
	close(fds[1]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("stdout");
	TCase *tc = tcase_create("stdout");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, stdout_lines);
	tcase_add_test(tc, stdout_short_writes);
	tcase_add_test(tc, fdlines_unlined_and_lined);
	suite_add_tcase(s, tc);
	return check_run(s, CK_FORK_GETENV);
}
