/*
 * sockutil.c - the socket tests' shared helpers (sockutil.h).
 */
#include "sockutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "../tcfg.h"

char err[1024];
char dir[64], sock_path[96];

void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/check_socket.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(sock_path, sizeof(sock_path), "%s/s.sock", dir);
}

void teardown(void)
{
	unlink(sock_path);
	rmdir(dir);
}

void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

struct isp_channel *must_open(const char *const *kvs)
{
	struct isp_channel *ch = tcfg_open("socket", kvs, err, sizeof(err));

	ck_assert_msg(ch != NULL, "open failed: %s", err);
	return ch;
}

void put(struct isp_channel *ch, const char *text, size_t len)
{
	struct isp_record r = { .text = text, .len = len };

	ck_assert(isp_channel_submit(ch, &r));
}

void put_n(struct isp_channel *ch, int from, int to)
{
	char b[32];

	for (int i = from; i < to; i++) {
		int n = snprintf(b, sizeof(b), "{\"rec\":%d}", i);

		put(ch, b, (size_t)n);
	}
}

/* "{"rec":from}\n" ... for [from, to) */
char *expect_n(int from, int to)
{
	static char b[1 << 16];
	size_t off = 0;

	b[0] = '\0';
	for (int i = from; i < to; i++)
		off += (size_t)snprintf(b + off, sizeof(b) - off, "{\"rec\":%d}\n", i);
	return b;
}

struct isp_channel_stats stats(const struct isp_channel *ch)
{
	struct isp_channel_stats st;

	isp_channel_get_stats(ch, &st);
	return st;
}

bool wait_delivered(const struct isp_channel *ch, uint64_t n)
{
	for (int i = 0; i < 5000; i++) {
		if (stats(ch).delivered >= n)
			return true;
		sleep_ms(1);
	}
	return false;
}

/* ---- readers ------------------------------------------------------------- */

int tcp_listener(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(fd, 4), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*port = ntohs(a.sin_port);
	return fd;
}

int udp_receiver(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				 .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

int udp_port(int fd)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	return ntohs(a.sin_port);
}

int unix_socket(int type, bool listening)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	unlink(sock_path);
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", sock_path);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	if (listening)
		ck_assert_int_eq(listen(fd, 4), 0);
	return fd;
}

int accept_within(int lfd, int ms)
{
	struct pollfd p = { .fd = lfd, .events = POLLIN };

	ck_assert_msg(poll(&p, 1, ms) == 1, "nobody connected within %d ms", ms);
	int fd = accept(lfd, NULL, NULL);

	ck_assert_int_ge(fd, 0);
	return fd;
}

/* Read from a stream until `want` bytes came or `ms` passed; NUL-terminated. */
char *read_stream(int fd, size_t want, int ms)
{
	char *buf = malloc(want + 1);
	size_t got = 0;
	double end = now_s() + ms / 1000.0;

	ck_assert_ptr_nonnull(buf);
	while (got < want && now_s() < end) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 50) <= 0)
			continue;
		ssize_t r = recv(fd, buf + got, want - got, 0);

		if (r <= 0)
			break;
		got += (size_t)r;
	}
	buf[got] = '\0';
	return buf;
}

/* Read `n` datagrams (or what came within `ms`), concatenated. */
char *read_dgrams(int fd, int n, int ms)
{
	static char all[1 << 17];
	char one[1 << 17];
	size_t off = 0;
	double end = now_s() + ms / 1000.0;

	all[0] = '\0';
	for (int i = 0; i < n && now_s() < end;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (poll(&p, 1, 50) <= 0)
			continue;
		ssize_t r = recv(fd, one, sizeof(one), 0);

		ck_assert_int_gt(r, 0);
		ck_assert_uint_lt(off + (size_t)r, sizeof(all));
		memcpy(all + off, one, (size_t)r);
		off += (size_t)r;
		all[off] = '\0';
		i++;
	}
	return all;
}
