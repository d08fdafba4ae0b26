/*
 * prometheus_http.c - the Prometheus channel's HTTP endpoint: one thread,
 * one connection at a time (Prometheus scrapes a target with one request
 * per interval), each with a deadline so a client that stalls cannot hold
 * it.
 *
 *   GET or HEAD <path>   200, text exposition format 0.0.4
 *   another path         404, naming the one served
 *   another method       405 (Allow: GET, HEAD)
 *   no request in time, or a head past 8 KiB: 408 / 431 / 400
 *
 * Responses carry Content-Length and close the connection.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prometheus_int.h"

#define HEAD_MAX 8192
#define CLIENT_MS 5000

/* Send all of s before the deadline; false if the client is gone or slow. */
static bool send_all(int fd, const char *s, size_t n, int64_t deadline)
{
	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);
		if (w > 0) {
			s += w;
			n -= (size_t)w;
		} else if (w < 0 && errno == EINTR) {
			continue;
		} else if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!(isp_wait_fd(fd, POLLOUT, deadline) & POLLOUT))
				return false;
		} else {
			return false;
		}
	}
	return true;
}

static void respond(int fd, int status, const char *reason, const char *extra,
		    const char *type, const char *body, size_t len, bool head_only, int64_t deadline)
{
	char head[512];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%s"
			 "Connection: close\r\n\r\n", status, reason, type, len, extra ? extra : "");

	if (send_all(fd, head, (size_t)n, deadline) && !head_only && len)
		send_all(fd, body, len, deadline);
}

static void respond_text(int fd, int status, const char *reason, const char *extra,
			 const char *msg, int64_t deadline)
{
	respond(fd, status, reason, extra, "text/plain; charset=utf-8", msg, strlen(msg), false,
		deadline);
}

/* Read the request head (up to the blank line): its length, 0 if the
 * client closed or was too slow, -1 if it is too large. */
static ssize_t read_head(int fd, char *buf, size_t cap, int64_t deadline)
{
	size_t n = 0;

	for (;;) {
		ssize_t r = recv(fd, buf + n, cap - 1 - n, 0);
		if (r > 0) {
			n += (size_t)r;
			buf[n] = 0;
			if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))
				return (ssize_t)n;
			if (n == cap - 1)
				return -1;
			continue;
		}
		if (r == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if ((errno != EAGAIN && errno != EWOULDBLOCK) ||
		    !(isp_wait_fd(fd, POLLIN, deadline) & (POLLIN | POLLHUP)))
			return 0;
	}
}

static void serve(struct prom_out *o, int fd)
{
	int64_t deadline = isp_now_ns() + (int64_t)CLIENT_MS * 1000000;
	char buf[HEAD_MAX];
	ssize_t n = read_head(fd, buf, sizeof(buf), deadline);

	if (n <= 0) {
		if (n < 0)
			respond_text(fd, 431, "Request Header Fields Too Large", NULL,
				     "request head past 8 KiB\n", deadline);
		atomic_fetch_add_explicit(&o->bad_requests, 1, memory_order_relaxed);
		return;
	}
	/* METHOD SP TARGET SP VERSION */
	char *sp1 = strchr(buf, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	char *eol = strpbrk(buf, "\r\n");
	if (!sp1 || !sp2 || sp2 > eol || strncmp(sp2 + 1, "HTTP/1.", 7) != 0) {
		respond_text(fd, 400, "Bad Request", NULL, "expected an HTTP/1.x request line\n",
			     deadline);
		atomic_fetch_add_explicit(&o->bad_requests, 1, memory_order_relaxed);
		return;
	}
	*sp1 = *sp2 = 0;
	char *query = strchr(sp1 + 1, '?');
	if (query)
		*query = 0;
	bool get = !strcmp(buf, "GET"), head = !strcmp(buf, "HEAD");
	if (!get && !head) {
		respond_text(fd, 405, "Method Not Allowed", "Allow: GET, HEAD\r\n",
			     "only GET and HEAD\n", deadline);
		atomic_fetch_add_explicit(&o->bad_requests, 1, memory_order_relaxed);
		return;
	}
	if (strcmp(sp1 + 1, o->path) != 0) {
		char msg[300];
		snprintf(msg, sizeof(msg), "not found: the metrics are at %s\n", o->path);
		respond_text(fd, 404, "Not Found", NULL, msg, deadline);
		atomic_fetch_add_explicit(&o->bad_requests, 1, memory_order_relaxed);
		return;
	}
	struct isp_prom_text t = { 0 };
	prom_scrape(o, &t);
	if (t.oom) {
		respond_text(fd, 500, "Internal Server Error", NULL, "out of memory\n", deadline);
	} else {
		respond(fd, 200, "OK", NULL, "text/plain; version=0.0.4; charset=utf-8", t.b.p,
			t.b.len, head, deadline);
		atomic_fetch_add_explicit(&o->scrapes, 1, memory_order_relaxed);
	}
	free(t.b.p);
}

static void *run(void *arg)
{
	struct prom_out *o = arg;

	for (;;) {
		struct pollfd p[2] = { { .fd = o->listen_fd, .events = POLLIN },
				       { .fd = o->wake[0], .events = POLLIN } };
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		int fd = accept4(o->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			continue;       /* a client gone before accept, or no fd left */
		serve(o, fd);
		close(fd);
	}
	return NULL;
}

int prom_http_start(struct prom_out *o, char *err, size_t errlen)
{
	int one = 1;
	sigset_t all, old;

	o->listen_fd = socket(o->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (o->listen_fd < 0) {
		snprintf(err, errlen, "listen: socket: %s", strerror(errno));
		return -1;
	}
	setsockopt(o->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(o->listen_fd, (struct sockaddr *)&o->addr, o->addrlen) != 0 ||
	    listen(o->listen_fd, 16) != 0) {
		snprintf(err, errlen, "listen: cannot serve %s: %s", o->where, strerror(errno));
		return -1;
	}
	if (o->addr.ss_family == AF_INET ? !((struct sockaddr_in *)&o->addr)->sin_port
					 : !((struct sockaddr_in6 *)&o->addr)->sin6_port) {
		/* port 0: say the one the kernel chose */
		struct sockaddr_storage a;
		socklen_t len = sizeof(a);
		char host[INET6_ADDRSTRLEN];
		if (getsockname(o->listen_fd, (struct sockaddr *)&a, &len) == 0) {
			bool v4 = a.ss_family == AF_INET;
			const void *ip = v4 ? (const void *)&((struct sockaddr_in *)&a)->sin_addr
					    : (const void *)&((struct sockaddr_in6 *)&a)->sin6_addr;
			unsigned port = ntohs(v4 ? ((struct sockaddr_in *)&a)->sin_port
						 : ((struct sockaddr_in6 *)&a)->sin6_port);
			inet_ntop(a.ss_family, ip, host, sizeof(host));
			snprintf(o->where, sizeof(o->where), v4 ? "%s:%u" : "[%s]:%u", host, port);
		}
	}
	if (pipe2(o->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	/* signals stay with the program's threads */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&o->thread, NULL, run, o);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		snprintf(err, errlen, "cannot start its thread: %s", strerror(rc));
		return -1;
	}
	o->started = true;
	return 0;
}

void prom_http_stop(struct prom_out *o)
{
	if (!o->started)
		return;
	ssize_t w;
	do
		w = write(o->wake[1], "", 1);
	while (w < 0 && errno == EINTR);
	pthread_join(o->thread, NULL);
	o->started = false;
}
