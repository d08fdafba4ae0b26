/*
 * influxdb_http.c - the InfluxDB channel's HTTP/1.1 client: just what
 * POST /write and POST /query need, over one kept-alive TCP connection.
 *
 * Every wait is a poll() on a non-blocking socket against a deadline: a
 * connection takes at most timeout-ms (all the addresses of the name
 * included), and a request, from its first byte sent to its response's
 * last byte read, at most timeout-ms more. A kept-alive connection the
 * server closed while idle is noticed before it is used (readable with
 * nothing asked: its FIN, or data nobody asked for); one that turns out
 * closed during the request, before any byte of a response, is replaced
 * by a new connection and the request sent once more (InfluxDB may have
 * stored the points: writing the same points again stores nothing new,
 * a point being its measurement, tags and timestamp). Responses are read
 * whole (Content-Length, chunked, or until the server closes), at most
 * 1 MiB; any other failure closes the connection, and the next request
 * opens one (counted in reconnects).
 */
#include "config.h"     /* PACKAGE_VERSION */

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "influxdb_int.h"
#include "queue.h"      /* isp_now_ns */

#define RESP_MAX (1u << 20)             /* the largest response read */
#define HEAD_MAX (64u << 10)            /* the largest response head */

/* ---- helpers ---------------------------------------------------------------- */


int ifx_urlencode(struct isp_bytes *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	if (isp_bytes_room(b, strlen(s) * 3 + 1) != 0)
		return -1;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~') {
			b->p[b->len++] = (char)c;
		} else {
			b->p[b->len++] = '%';
			b->p[b->len++] = hex[c >> 4];
			b->p[b->len++] = hex[c & 15];
		}
	}
	b->p[b->len] = '\0';
	return 0;
}

char *ifx_basic_auth(const char *user, const char *password)
{
	static const char b64[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t lu = strlen(user), lp = strlen(password), n = lu + 1 + lp, k = 6;
	unsigned char *in = malloc(n + 1);
	char *out = malloc(6 + (n + 2) / 3 * 4 + 1);

	if (!in || !out) {
		free(in);
		free(out);
		return NULL;
	}
	memcpy(in, user, lu);
	in[lu] = ':';
	memcpy(in + lu + 1, password, lp);
	memcpy(out, "Basic ", 6);
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) |
			     (i + 2 < n ? in[i + 2] : 0);

		out[k++] = b64[v >> 18 & 63];
		out[k++] = b64[v >> 12 & 63];
		out[k++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
		out[k++] = i + 2 < n ? b64[v & 63] : '=';
	}
	out[k] = '\0';
	free(in);
	return out;
}

/* ---- connecting ------------------------------------------------------------ */

int ifx_connect(struct ifx_out *o, int type, char *why, size_t whylen)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC, .ai_socktype = type, .ai_flags = AI_NUMERICSERV,
	};
	struct addrinfo *ai = NULL;
	int64_t deadline = isp_now_ns() + (int64_t)o->timeout_ms * 1000000;
	int rc = getaddrinfo(o->host, o->port, &hints, &ai), fd = -1, e = 0, one = 1;

	if (rc != 0) {
		snprintf(why, whylen, "cannot resolve %s: %s", o->host,
			 rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		return -1;
	}
	/* Every address within the one timeout ("localhost" may be ::1 first
	 * and the server listen on 127.0.0.1 only). */
	for (struct addrinfo *a = ai; a && fd < 0; a = a->ai_next) {
		socklen_t elen = sizeof(e);

		fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0) {
			e = errno;
			continue;
		}
		if (type == SOCK_STREAM) {
			/* a request goes out in one piece: Nagle would only delay it */
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
		}
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0)
			break;
		e = errno;
		if (e == EINPROGRESS || e == EINTR) {
			if (!isp_wait_fd(fd, POLLOUT, deadline))
				e = ETIMEDOUT;
			else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &elen) != 0)
				e = errno;
			if (e == 0)
				break;
		}
		close(fd);
		fd = -1;
		if (e == ETIMEDOUT)
			break;
	}
	freeaddrinfo(ai);
	if (fd < 0) {
		if (e == ETIMEDOUT)
			snprintf(why, whylen, "connect: no connection within %u ms", o->timeout_ms);
		else
			snprintf(why, whylen, "connect: %s", strerror(e));
	}
	return fd;
}

void ifx_disconnect(struct ifx_out *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	o->requests = 0;
}

void ifx_http_check_idle(struct ifx_out *o)
{
	struct pollfd p = { .fd = o->fd, .events = POLLIN };

	/* Between requests the server has nothing to say: readable means its
	 * FIN (a restart, an idle timeout) or something no request asked for;
	 * either way the connection cannot be trusted. */
	if (o->fd >= 0 && poll(&p, 1, 0) > 0)
		ifx_disconnect(o);
}

/* ---- the response ------------------------------------------------------------ */

/* Chunked body from `p` (n bytes): -1 malformed, 0 incomplete, else the
 * bytes it takes; with `out`, the chunks' data is copied there (may be p:
 * it only moves down) and *outlen set. */
static long dechunk(char *p, size_t n, char *out, size_t *outlen)
{
	size_t i = 0, d = 0;

	for (;;) {
		char *eol = memmem(p + i, n - i, "\r\n", 2), *end;
		unsigned long long size;

		if (!eol)
			return n - i > 64 ? -1 : 0;
		size = strtoull(p + i, &end, 16);
		if (end == p + i || (end != eol && *end != ';' && *end != ' '))
			return -1;
		i = (size_t)(eol - p) + 2;
		if (size == 0)
			break;
		if (size > RESP_MAX)
			return -1;
		if (n - i < size + 2)
			return 0;
		if (memcmp(p + i + size, "\r\n", 2) != 0)
			return -1;
		if (out)
			memmove(out + d, p + i, size);
		d += size;
		i += size + 2;
	}
	/* trailer lines, up to an empty one */
	for (;;) {
		char *eol = memmem(p + i, n - i, "\r\n", 2);

		if (!eol)
			return 0;
		if (eol == p + i)
			break;
		i = (size_t)(eol - p) + 2;
	}
	if (outlen)
		*outlen = d;
	return (long)(i + 2);
}

/* The header `name` of the head [p, end) (end: after the last header
 * line's CR LF): its value (trimmed) in v, or false. */
static bool header(const char *p, const char *end, const char *name, char *v, size_t vlen)
{
	size_t nl = strlen(name);
	const char *l = memmem(p, (size_t)(end - p), "\r\n", 2);     /* the status line's end */

	while (l && l + 2 < end) {
		const char *s = l + 2, *e = memmem(s, (size_t)(end - s), "\r\n", 2);

		if (!e)
			break;
		if ((size_t)(e - s) > nl && s[nl] == ':' && strncasecmp(s, name, nl) == 0) {
			const char *a = s + nl + 1;
			size_t k;

			while (a < e && (*a == ' ' || *a == '\t'))
				a++;
			k = (size_t)(e - a);
			while (k && (a[k - 1] == ' ' || a[k - 1] == '\t'))
				k--;
			if (k >= vlen)
				k = vlen - 1;
			memcpy(v, a, k);
			v[k] = '\0';
			return true;
		}
		l = e;
	}
	return false;
}

/* The error text of a body: {"error":"..."} unescaped, or the text. */
static void body_error(const char *b, size_t n, char *out, size_t outlen)
{
	const char *s = memmem(b, n, "\"error\":\"", 9);
	size_t k = 0;

	if (s) {
		for (s += 9; s < b + n && *s != '"' && k + 1 < outlen; s++) {
			if (*s == '\\' && s + 1 < b + n) {
				s++;
				out[k++] = *s == 'n' || *s == 't' ? ' ' : *s;
			} else {
				out[k++] = *s;
			}
		}
	} else {
		for (size_t i = 0; i < n && k + 1 < outlen; i++)
			out[k++] = b[i] == '\n' || b[i] == '\r' ? ' ' : b[i];
		while (k && out[k - 1] == ' ')
			k--;
	}
	out[k] = '\0';
}

/* Parse o->in: 1 a whole response (resp filled, *keep: the connection
 * stays open), 0 more bytes needed, -1 not an HTTP response. eof: the
 * server closed. */
static int parse(struct ifx_out *o, bool eof, struct ifx_resp *resp, bool *keep)
{
	char *p = o->in.p, *he, v[64];
	size_t n = o->in.len, hl, avail, blen;
	long long clen = -1;
	bool chunked, close_after;

	for (;;) {
		if (n < 12)
			return eof && n ? -1 : 0;
		if (memcmp(p, "HTTP/1.", 7) != 0 || p[8] != ' ' ||
		    p[9] < '1' || p[9] > '5' || p[10] < '0' || p[10] > '9' ||
		    p[11] < '0' || p[11] > '9')
			return -1;
		he = memmem(p, n, "\r\n\r\n", 4);
		if (!he)
			return n > HEAD_MAX || eof ? -1 : 0;
		resp->status = (p[9] - '0') * 100 + (p[10] - '0') * 10 + (p[11] - '0');
		hl = (size_t)(he - p) + 4;
		if (resp->status >= 200)
			break;
		/* 100 Continue and the like: skip (not asked for, but allowed) */
		memmove(p, p + hl, n - hl);
		n -= hl;
		o->in.len = n;
	}
	chunked = header(p, he + 2, "transfer-encoding", v, sizeof(v)) && strcasestr(v, "chunked");
	if (header(p, he + 2, "content-length", v, sizeof(v)))
		clen = strtoll(v, NULL, 10);
	close_after = p[7] == '0';      /* HTTP/1.0: unless it says keep-alive */
	if (header(p, he + 2, "connection", v, sizeof(v)))
		close_after = strcasestr(v, "close") || (p[7] == '0' && !strcasestr(v, "keep-alive"));
	resp->error[0] = '\0';
	header(p, he + 2, "x-influxdb-error", resp->error, sizeof(resp->error));

	avail = n - hl;
	if (resp->status == 204 || resp->status == 304) {
		blen = 0;
		if (avail)
			close_after = true;     /* more than asked for */
	} else if (chunked) {
		long used = dechunk(p + hl, avail, NULL, NULL);

		if (used < 0 || (used == 0 && eof))
			return -1;
		if (used == 0)
			return 0;
		dechunk(p + hl, avail, p + hl, &blen);
		if ((size_t)used != avail)
			close_after = true;
	} else if (clen >= 0) {
		if (clen > RESP_MAX)
			return -1;
		if (avail < (size_t)clen)
			return eof ? -1 : 0;
		blen = (size_t)clen;
		if (avail != blen)
			close_after = true;
	} else {
		if (!eof)
			return 0;       /* the body ends when the server closes */
		blen = avail;
		close_after = true;
	}
	/* room for the NUL was made when reading */
	resp->body = p + hl;
	resp->body_len = blen;
	resp->body[blen] = '\0';
	if (!resp->error[0] && resp->status >= 300)
		body_error(resp->body, blen, resp->error, sizeof(resp->error));
	*keep = !close_after;
	return 1;
}

/* ---- one exchange ------------------------------------------------------------- */

static int build_head(struct ifx_out *o, const char *method, const char *path, size_t len)
{
	int n;

	o->head.len = 0;
	for (int pass = 0; pass < 2; pass++) {
		n = snprintf(o->head.p, o->head.cap,
			     "%s %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: intspect/%s\r\n"
			     "Accept: application/json\r\n"
			     "Content-Type: text/plain; charset=utf-8\r\n"
			     "Content-Length: %zu\r\n%s%s%s%s\r\n",
			     method, path, o->host_hdr, PACKAGE_VERSION, len,
			     o->gz_now ? "Content-Encoding: gzip\r\n" : "",
			     o->auth ? "Authorization: " : "", o->auth ? o->auth : "",
			     o->auth ? "\r\n" : "");
		if (n < 0)
			return -1;
		if ((size_t)n < o->head.cap) {
			o->head.len = (size_t)n;
			return 0;
		}
		if (isp_bytes_room(&o->head, (size_t)n + 1) != 0)
			return -1;
	}
	return -1;
}

/* Send the request and read its response on o->fd. 0, or -1 with why;
 * *nothing: the server sent no byte of a response (a kept-alive
 * connection that was closed). */
static int exchange(struct ifx_out *o, const char *method, const char *path,
		    const char *body, size_t len, struct ifx_resp *resp, bool *keep,
		    bool *nothing, char *why, size_t whylen)
{
	int64_t deadline = isp_now_ns() + (int64_t)o->timeout_ms * 1000000;
	size_t sent = 0, total;
	bool eof = false;

	*nothing = true;
	if (build_head(o, method, path, len) != 0) {
		snprintf(why, whylen, "out of memory");
		*nothing = false;
		return -1;
	}
	total = o->head.len + len;
	while (sent < total) {
		struct iovec iov[2];
		struct msghdr m = { .msg_iov = iov };
		ssize_t w;

		if (sent < o->head.len) {
			iov[0] = (struct iovec){ o->head.p + sent, o->head.len - sent };
			iov[1] = (struct iovec){ (void *)body, len };
			m.msg_iovlen = len ? 2 : 1;
		} else {
			iov[0] = (struct iovec){ (void *)(body + (sent - o->head.len)),
						 total - sent };
			m.msg_iovlen = 1;
		}
		w = sendmsg(o->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w >= 0) {
			sent += (size_t)w;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			if (!isp_wait_fd(o->fd, POLLOUT, deadline)) {
				snprintf(why, whylen, "request not sent within %u ms", o->timeout_ms);
				*nothing = false;
				return -1;
			}
			continue;
		}
		snprintf(why, whylen, "send: %s", strerror(errno));
		return -1;
	}

	o->in.len = 0;
	for (;;) {
		ssize_t r;
		int rc;

		if (o->in.len) {
			rc = parse(o, eof, resp, keep);
			if (rc > 0)
				return 0;
			if (rc < 0) {
				snprintf(why, whylen, "not an HTTP response (%.40s...)", o->in.p);
				for (char *c = why; *c; c++)
					*c = *c == '\r' || *c == '\n' ? ' ' : *c;
				*nothing = false;
				return -1;
			}
		}
		if (eof) {
			snprintf(why, whylen, "connection closed by the server%s",
				 o->in.len ? " in the middle of a response" : "");
			*nothing = o->in.len == 0;
			return -1;
		}
		if (o->in.len >= RESP_MAX) {
			snprintf(why, whylen, "response larger than %u bytes", RESP_MAX);
			*nothing = false;
			return -1;
		}
		if (isp_bytes_room(&o->in, 16384 + 1) != 0) {
			snprintf(why, whylen, "out of memory");
			*nothing = false;
			return -1;
		}
		r = recv(o->fd, o->in.p + o->in.len, o->in.cap - o->in.len - 1, MSG_DONTWAIT);
		if (r > 0) {
			o->in.len += (size_t)r;
			*nothing = false;
			continue;
		}
		if (r == 0) {
			eof = true;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			if (!isp_wait_fd(o->fd, POLLIN, deadline)) {
				snprintf(why, whylen, "no response within %u ms", o->timeout_ms);
				*nothing = false;
				return -1;
			}
			continue;
		}
		snprintf(why, whylen, "receive: %s", strerror(errno));
		return -1;
	}
}

int ifx_http_request(struct ifx_out *o, const char *method, const char *path,
		     const char *body, size_t len, struct ifx_resp *resp,
		     char *why, size_t whylen)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		bool keep = false, nothing = false, reused;

		ifx_http_check_idle(o);
		if (o->fd < 0) {
			o->fd = ifx_connect(o, SOCK_STREAM, why, whylen);
			if (o->fd < 0)
				return -1;
			if (o->connected_once && o->ch)
				isp_channel_add_reconnects(o->ch, 1);
			o->connected_once = true;
		}
		reused = o->requests > 0;
		if (exchange(o, method, path, body, len, resp, &keep, &nothing, why, whylen) == 0) {
			ifx_reached(o);
			o->requests++;
			if (!keep)
				ifx_disconnect(o);
			return 0;
		}
		ifx_disconnect(o);
		/* A kept-alive connection closed before it answered: the
		 * request is sent once more, on a new connection. */
		if (!reused || !nothing)
			return -1;
	}
	return -1;
}
