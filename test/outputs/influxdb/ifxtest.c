/*
 * ifxtest.c - the test HTTP server and channel helpers of check_influxdb
 * (ifxtest.h).
 */
#include <arpa/inet.h>
#include <check.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../tcfg.h"
#include "ifxtest.h"

struct server srv;
char err[1024];

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

/* ---- the test's HTTP server ------------------------------------------------ */



/* Read until "\r\n\r\n" and the body; false when the peer closed. */
static bool read_request(int fd, struct request *rq)
{
	char *b = malloc(1 << 22), *he = NULL, *p;
	size_t n = 0, need = 0;

	for (;;) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };

		if (he && n >= need)
			break;
		if (poll(&pf, 1, 50) <= 0) {
			if (srv.stop)
				goto gone;
			continue;
		}
		ssize_t r = recv(fd, b + n, (1 << 22) - 1 - n, 0);

		if (r <= 0)
			goto gone;
		n += (size_t)r;
		b[n] = '\0';
		if (!he && (he = strstr(b, "\r\n\r\n"))) {
			char *cl = strcasestr(b, "\r\ncontent-length:");

			need = (size_t)(he - b) + 4 + (cl && cl < he ? strtoul(cl + 17, NULL, 10) : 0);
		}
	}
	*he = '\0';
	sscanf(b, "%7s", rq->method);
	p = strchr(b, ' ');
	rq->path = strndup(p + 1, strcspn(p + 1, " "));
	p = strcasestr(b, "\r\nauthorization: ");
	rq->auth = p ? strndup(p + 17, strcspn(p + 17, "\r")) : NULL;
	p = strcasestr(b, "\r\ncontent-encoding: ");
	rq->encoding = p ? strndup(p + 20, strcspn(p + 20, "\r")) : NULL;
	rq->body_len = need - (size_t)(he - b) - 4;
	/* binary (gzip) bodies too: copied whole, NUL added */
	if ((rq->body = malloc(rq->body_len + 1))) {
		memcpy(rq->body, he + 4, rq->body_len);
		rq->body[rq->body_len] = '\0';
	}
	free(b);
	return true;
gone:
	free(b);
	return false;
}

static void send_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = send(fd, s, n, MSG_NOSIGNAL);

		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static void respond(int fd, const struct answer *a)
{
	char body[1024] = "", head[2048];
	size_t bl;
	int hl;

	if (a->body)
		snprintf(body, sizeof(body), "%s", a->body);
	else if (a->error)
		snprintf(body, sizeof(body), "{\"error\":\"%s\"}", a->error);
	bl = strlen(body);
	hl = snprintf(head, sizeof(head), "HTTP/1.1 %d X\r\nContent-Type: application/json\r\n"
		      "X-Influxdb-Version: 1.6.7\r\n", a->status);
	if (a->error && !a->chunked)
		hl += snprintf(head + hl, sizeof(head) - (size_t)hl, "X-Influxdb-Error: %s\r\n",
			       a->error);
	if (a->chunked) {
		hl += snprintf(head + hl, sizeof(head) - (size_t)hl,
			       "Transfer-Encoding: chunked\r\n\r\n%zx\r\n%.*s\r\n%zx\r\n%s\r\n0\r\n\r\n",
			       bl / 2, (int)(bl / 2), body, bl - bl / 2, body + bl / 2);
		send_all(fd, head, (size_t)hl);
		return;
	}
	if (a->status != 204)
		hl += snprintf(head + hl, sizeof(head) - (size_t)hl, "Content-Length: %zu\r\n", bl);
	hl += snprintf(head + hl, sizeof(head) - (size_t)hl, "\r\n%s", a->status != 204 ? body : "");
	send_all(fd, head, (size_t)hl);
}

static void *serve(void *arg)
{
	(void)arg;
	while (!srv.stop) {
		struct pollfd pf = { .fd = srv.lfd, .events = POLLIN };

		if (poll(&pf, 1, 50) <= 0)
			continue;
		int fd = accept(srv.lfd, NULL, NULL);

		if (fd < 0)
			continue;
		pthread_mutex_lock(&srv.mu);
		srv.conns++;
		pthread_mutex_unlock(&srv.mu);
		for (;;) {
			struct request rq = { 0 };
			const struct answer *a;

			if (!read_request(fd, &rq))
				break;
			pthread_mutex_lock(&srv.mu);
			a = srv.next < srv.nscript ? &srv.script[srv.next++] : &srv.dflt;
			rq.status = a->status;
			if (srv.nreq < MAXREQ)
				srv.req[srv.nreq++] = rq;
			pthread_mutex_unlock(&srv.mu);
			if (a->delay_ms)
				sleep_ms(a->delay_ms);
			if (a->status == 0)
				break;
			respond(fd, a);
			if (a->close)
				break;
		}
		close(fd);
	}
	return NULL;
}

/* A listening socket on 127.0.0.1, port chosen by the kernel. */
static int listener(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	ck_assert_int_ge(fd, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(fd, 8), 0);
	getsockname(fd, (struct sockaddr *)&a, &len);
	*port = ntohs(a.sin_port);
	return fd;
}

void server_start(const struct answer *script, size_t n, struct answer dflt)
{
	memset(&srv, 0, sizeof(srv));
	pthread_mutex_init(&srv.mu, NULL);
	srv.lfd = listener(&srv.port);
	srv.script = script;
	srv.nscript = n;
	srv.dflt = dflt;
	ck_assert_int_eq(pthread_create(&srv.thread, NULL, serve, NULL), 0);
}

void server_stop(void)
{
	srv.stop = true;
	pthread_join(srv.thread, NULL);
	close(srv.lfd);
	for (size_t i = 0; i < srv.nreq; i++) {
		free(srv.req[i].path);
		free(srv.req[i].body);
		free(srv.req[i].auth);
		free(srv.req[i].encoding);
	}
}

/* The bodies of the write requests answered `status`, each followed by a
 * newline (a static buffer). */
char *bodies(int status)
{
	static char b[1 << 20];
	size_t off = 0;

	pthread_mutex_lock(&srv.mu);
	for (size_t i = 0; i < srv.nreq; i++) {
		if (srv.req[i].status != status || !srv.req[i].body_len ||
		    strncmp(srv.req[i].path, "/write?", 7) != 0)
			continue;
		off += (size_t)snprintf(b + off, sizeof(b) - off, "%s\n", srv.req[i].body);
	}
	pthread_mutex_unlock(&srv.mu);
	b[off] = '\0';
	return b;
}

size_t nrequests(void)
{
	pthread_mutex_lock(&srv.mu);
	size_t n = srv.nreq;
	pthread_mutex_unlock(&srv.mu);
	return n;
}

/* Wait (at most 10 s) until the server has read n requests: a write that
 * must go alone is under way before the next records are queued, however
 * slow a loaded machine makes the channel's thread. */
void wait_requests(size_t n)
{
	for (int i = 0; i < 1000 && nrequests() < n; i++)
		sleep_ms(10);
	ck_assert_uint_ge(nrequests(), n);
}

/* ---- channels, records, stderr ---------------------------------------------- */

/* A channel "t" of type influxdb on the test's server with "key=value"s. */
struct isp_channel *open_on(int port, const char *const *extra)
{
	static char kv_port[32];

	snprintf(kv_port, sizeof(kv_port), "port=%d", port);
	return tcfg_open_with("influxdb", kv_port, extra, err, sizeof(err));
}

struct isp_channel *must_open(int port, const char *const *extra)
{
	struct isp_channel *ch = open_on(port, extra);

	ck_assert_msg(ch != NULL, "open failed: %s", err);
	return ch;
}

void put(struct isp_channel *ch, const char *text)
{
	struct isp_record r = { .report = "m", .text = text, .len = strlen(text) };

	ck_assert(isp_channel_submit(ch, &r));
}

/* Records "m,k=v f=Ii T" for i in [from, to), and the text expected of
 * them, one per line (a static buffer). */
void put_n(struct isp_channel *ch, int from, int to)
{
	char b[64];

	for (int i = from; i < to; i++) {
		snprintf(b, sizeof(b), "m,k=v f=%di %d", i, 1000 + i);
		put(ch, b);
	}
}

char *expect_n(int from, int to)
{
	static char b[1 << 16];
	size_t off = 0;

	for (int i = from; i < to; i++)
		off += (size_t)snprintf(b + off, sizeof(b) - off, "m,k=v f=%di %d\n", i, 1000 + i);
	b[off] = '\0';
	return b;
}

struct isp_channel_stats stats(const struct isp_channel *ch)
{
	struct isp_channel_stats st;

	isp_channel_get_stats(ch, &st);
	return st;
}

/* stderr into a file from here until cap_end, which returns what was
 * written (malloc'd). */
void cap_start(void)
{
	tcfg_stderr_begin();
}

char *cap_end(void)
{
	return tcfg_stderr_end();
}

/* A port where nothing listens (bound, then closed). */
int dead_port(void)
{
	int port, fd = listener(&port);

	close(fd);
	return port;
}

