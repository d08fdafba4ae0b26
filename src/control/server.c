/*
 * server.c - the control socket (server.h): listening, framing, the
 * token, one thread polling every connection.
 */
#include "server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_CLIENTS 32
#define LINE_MAX_BYTES (1 << 20)

struct client {
	int fd;
	bool tcp;
	bool skipping;          /* past a line too long: drop up to its end */
	char *buf;
	size_t len, cap;
};

struct isp_ctl_server {
	int unix_fd, tcp_fd;
	unsigned port;
	char *path, *token;
	int wake[2];
	int hup[2];             /* SIGHUP: reload */
	isp_ctl_handler handler;
	void *ctx;
	pthread_t thread;
	struct client c[MAX_CLIENTS];
};

json_t *isp_ctl_error(const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return json_pack("{s:b,s:s}", "ok", 0, "error", msg);
}

/* ---- listening ---- */

static int listen_unix(struct isp_ctl_server *s, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };

	if (strlen(path) >= sizeof(a.sun_path)) {
		snprintf(err, errlen, "control socket path too long (%zu bytes, at most %zu): %s",
			 strlen(path), sizeof(a.sun_path) - 1, path);
		return -1;
	}
	strcpy(a.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	/* a socket file someone answers on is another intspect's */
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
		close(fd);
		snprintf(err, errlen, "control socket %s: another process answers on it "
			 "(give control { path = ... } or --control PATH)", path);
		return -1;
	}
	close(fd);
	struct stat sb;
	if (lstat(path, &sb) == 0 && S_ISSOCK(sb.st_mode))
		unlink(path);   /* stale: nobody answers */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		goto fail;
	/* 0600 from the start: no moment where others could connect */
	mode_t old = umask(0177);
	int rc = bind(fd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (rc < 0 || chmod(path, 0600) < 0 || listen(fd, 16) < 0) {
		int e = errno;
		close(fd);
		errno = e;
		goto fail;
	}
	s->unix_fd = fd;
	return 0;
fail:
	snprintf(err, errlen, "control socket %s: %s", path, strerror(errno));
	return -1;
}

static int listen_tcp(struct isp_ctl_server *s, const char *spec, char *err, size_t errlen)
{
	char host[64] = "127.0.0.1";
	const char *colon = strrchr(spec, ':');
	const char *port = colon ? colon + 1 : spec;
	struct sockaddr_in a = { .sin_family = AF_INET };
	char *end;

	if (colon && (size_t)(colon - spec) < sizeof(host)) {
		memcpy(host, spec, (size_t)(colon - spec));
		host[colon - spec] = 0;
	}
	long p = strtol(port, &end, 10);
	if (!*port || *end || p < 0 || p > 65535 || inet_pton(AF_INET, host, &a.sin_addr) != 1) {
		snprintf(err, errlen, "control tcp '%s': expected [IPv4-ADDRESS:]PORT", spec);
		return -1;
	}
	a.sin_port = htons((uint16_t)p);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 16) < 0) {
		snprintf(err, errlen, "control tcp %s: %s", spec, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	socklen_t len = sizeof(a);
	getsockname(fd, (struct sockaddr *)&a, &len);
	s->port = ntohs(a.sin_port);
	s->tcp_fd = fd;
	return 0;
}

/* ---- serving ---- */

char *isp_ctl_text(json_t *resp)
{
	char *text = resp ? json_dumps(resp, JSON_COMPACT) : NULL;

	json_decref(resp);
	return text;
}

#define SEND_WHOLE_NS (5 * 1000000000LL)   /* for a whole response line */

static long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

/* One response line (text: malloc'd, freed here; NULL: out of memory).
 * false when it did not go out whole: the peer went away, or read it too
 * slowly (5 s for the whole line, each send bounded by SO_SNDTIMEO), and
 * is to be dropped; a line cut short would run into the next one, and
 * the others wait for this thread meanwhile. */
static bool send_line(struct client *c, char *text)
{
	if (!text)
		text = strdup("{\"ok\":false,\"error\":\"out of memory\"}");
	if (!text)
		return false;
	size_t n = strlen(text), off = 0;
	long long deadline = now_ns() + SEND_WHOLE_NS;
	text[n] = '\n';         /* the room of its NUL */
	while (off <= n) {
		ssize_t w = send(c->fd, text + off, n + 1 - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0 || now_ns() > deadline)
			break;
		off += (size_t)w;
	}
	free(text);
	return off > n;
}

/* Constant time: a wrong token says nothing of how much of it was right. */
static bool same_token(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char diff = la != lb;

	for (size_t i = 0; i < lb; i++)
		diff |= (unsigned char)(a[i % (la ? la : 1)] ^ b[i]);
	return diff == 0 && la;
}

static char *serve_line(struct isp_ctl_server *s, struct client *c, const char *line,
			size_t len)
{
	json_error_t je;
	json_t *req = json_loadb(line, len, JSON_REJECT_DUPLICATES, &je);

	if (!req)
		return isp_ctl_text(isp_ctl_error("not JSON (column %d): %s", je.column, je.text));
	json_t *resp;
	if (!json_is_object(req)) {
		resp = isp_ctl_error("a request is a JSON object: {\"cmd\": \"stats\"}");
	} else if (c->tcp && (!json_is_string(json_object_get(req, "token")) ||
			      !same_token(json_string_value(json_object_get(req, "token")), s->token))) {
		resp = isp_ctl_error(json_object_get(req, "token") ? "wrong token" :
				     "a request on TCP needs \"token\"");
	} else if (!json_is_string(json_object_get(req, "cmd"))) {
		resp = isp_ctl_error("a request needs \"cmd\": a command name (\"help\" lists them)");
	} else {
		json_object_del(req, "token");
		char *text = s->handler(s->ctx, req);
		json_decref(req);
		return text;
	}
	json_decref(req);
	return isp_ctl_text(resp);
}

static void drop_client(struct client *c)
{
	close(c->fd);
	free(c->buf);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

static char *too_long(void)
{
	return isp_ctl_text(isp_ctl_error("request longer than %d bytes: ignored", LINE_MAX_BYTES));
}

/* Read what came; answer every whole line. false: the peer closed. */
static bool read_client(struct isp_ctl_server *s, struct client *c)
{
	if (c->cap - c->len < 4096) {
		size_t want = c->cap ? c->cap * 2 : 8192;
		char *grown = realloc(c->buf, want);
		if (!grown)
			return false;
		c->buf = grown;
		c->cap = want;
	}
	ssize_t n = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return true;
	if (n <= 0)
		return false;
	c->len += (size_t)n;
	size_t start = 0;
	for (char *nl; (nl = memchr(c->buf + start, '\n', c->len - start));) {
		size_t end = (size_t)(nl - c->buf);
		if (c->skipping)
			c->skipping = false;
		else if (end - start > LINE_MAX_BYTES) {
			/* whole in one read, too long all the same */
			if (!send_line(c, too_long()))
				return false;
		} else if (end > start && !send_line(c, serve_line(s, c, c->buf + start, end - start)))
			return false;   /* dropped, its other requests with it */
		start = end + 1;
	}
	memmove(c->buf, c->buf + start, c->len - start);
	c->len -= start;
	if (c->len > LINE_MAX_BYTES) {
		if (!c->skipping && !send_line(c, too_long()))
			return false;
		c->skipping = true;
		c->len = 0;
	}
	return true;
}

static void accept_on(struct isp_ctl_server *s, int lfd, bool tcp)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

	if (fd < 0)
		return;
	struct timeval tv = { 5, 0 };   /* a client that stops reading cannot hold us */
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	for (unsigned i = 0; i < MAX_CLIENTS; i++) {
		if (s->c[i].fd < 0) {
			s->c[i] = (struct client){ .fd = fd, .tcp = tcp };
			return;
		}
	}
	struct client tmp = { .fd = fd };
	send_line(&tmp, isp_ctl_text(isp_ctl_error("too many control connections (%d): try "
						   "again", MAX_CLIENTS)));
	close(fd);
}

static void reload_on_hup(struct isp_ctl_server *s)
{
	json_t *req = json_pack("{s:s}", "cmd", "reload");

	if (!req)
		return;
	/* a reload says how it went on stderr; a refusal before it (no
	 * config to read again) only in its answer, which nobody reads */
	char *resp = s->handler(s->ctx, req);
	json_t *r = resp ? json_loads(resp, 0, NULL) : NULL;
	const char *why = json_string_value(json_object_get(r, "error"));
	if (why && !json_is_true(json_object_get(r, "ok")) && strncmp(why, "reload: ", 8) == 0)
		fprintf(stderr, "intspect: SIGHUP: %s\n", why);
	json_decref(r);
	free(resp);
	json_decref(req);
}

void isp_ctl_server_hup(struct isp_ctl_server *s)
{
	if (s && write(s->hup[1], "h", 1) < 0)
		return;         /* full: one is waiting already */
}

static void *serve(void *arg)
{
	struct isp_ctl_server *s = arg;
	struct pollfd p[MAX_CLIENTS + 4];

	for (;;) {
		unsigned n = 0;
		p[n++] = (struct pollfd){ s->wake[0], POLLIN, 0 };
		p[n++] = (struct pollfd){ s->unix_fd, POLLIN, 0 };
		p[n++] = (struct pollfd){ s->tcp_fd, POLLIN, 0 };
		for (unsigned i = 0; i < MAX_CLIENTS; i++)
			p[n++] = (struct pollfd){ s->c[i].fd, POLLIN, 0 };
		p[n++] = (struct pollfd){ s->hup[0], POLLIN, 0 };
		if (poll(p, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		if (p[0].revents)
			return NULL;
		if (p[3 + MAX_CLIENTS].revents & POLLIN) {
			char b[16];
			if (read(s->hup[0], b, sizeof(b)) > 0)
				reload_on_hup(s);
		}
		if (p[1].revents & POLLIN)
			accept_on(s, s->unix_fd, false);
		if (p[2].revents & POLLIN)
			accept_on(s, s->tcp_fd, true);
		for (unsigned i = 0; i < MAX_CLIENTS; i++)
			if (p[3 + i].fd >= 0 && p[3 + i].revents && s->c[i].fd == p[3 + i].fd &&
			    !read_client(s, &s->c[i]))
				drop_client(&s->c[i]);
	}
}

struct isp_ctl_server *isp_ctl_server_start(const struct isp_ctl_server_cfg *cfg,
					    isp_ctl_handler handler, void *ctx, char *err,
					    size_t errlen)
{
	struct isp_ctl_server *s = calloc(1, sizeof(*s));

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	s->unix_fd = s->tcp_fd = s->wake[0] = s->wake[1] = s->hup[0] = s->hup[1] = -1;
	for (unsigned i = 0; i < MAX_CLIENTS; i++)
		s->c[i].fd = -1;
	s->handler = handler;
	s->ctx = ctx;
	if (cfg->tcp && (!cfg->token || !*cfg->token)) {
		snprintf(err, errlen, "control tcp %s: a token is required (control { token = ... })",
			 cfg->tcp);
		goto fail;
	}
	if ((cfg->path && (!(s->path = strdup(cfg->path)) ||
			   listen_unix(s, cfg->path, err, errlen) < 0)) ||
	    (cfg->tcp && (!(s->token = strdup(cfg->token)) ||
			  listen_tcp(s, cfg->tcp, err, errlen) < 0)))
		goto fail;
	if (pipe2(s->wake, O_CLOEXEC) < 0 || pipe2(s->hup, O_CLOEXEC | O_NONBLOCK) < 0 ||
	    pthread_create(&s->thread, NULL, serve, s) != 0) {
		snprintf(err, errlen, "control socket: %s", strerror(errno));
		goto fail;
	}
	return s;
fail:
	if (s->unix_fd >= 0) {
		close(s->unix_fd);
		unlink(s->path);
	}
	if (s->tcp_fd >= 0)
		close(s->tcp_fd);
	for (int i = 0; i < 2; i++) {
		if (s->wake[i] >= 0)
			close(s->wake[i]);
		if (s->hup[i] >= 0)
			close(s->hup[i]);
	}
	free(s->path);
	free(s->token);
	free(s);
	return NULL;
}

unsigned isp_ctl_server_port(const struct isp_ctl_server *s)
{
	return s ? s->port : 0;
}

void isp_ctl_server_stop(struct isp_ctl_server *s)
{
	if (!s)
		return;
	if (write(s->wake[1], "x", 1) == 1)
		pthread_join(s->thread, NULL);
	for (unsigned i = 0; i < MAX_CLIENTS; i++)
		if (s->c[i].fd >= 0)
			drop_client(&s->c[i]);
	if (s->unix_fd >= 0) {
		close(s->unix_fd);
		unlink(s->path);
	}
	if (s->tcp_fd >= 0)
		close(s->tcp_fd);
	close(s->wake[0]);
	close(s->wake[1]);
	close(s->hup[0]);
	close(s->hup[1]);
	free(s->path);
	free(s->token);
	free(s);
}
