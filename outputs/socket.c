/*
 * socket.c - channel type "socket": records sent to a reader that listens
 * on UDP, TCP, a Unix stream socket or a Unix datagram socket (socat, a log
 * shipper, a dashboard's ingest).
 *
 * Framing: every record is followed by '\n'. On stream sockets (tcp, unix)
 * that is what separates records; on datagram sockets (udp, unix-dgram)
 * each record is one datagram, and the newline makes a reader that copies
 * datagrams to a terminal or a file (socat, nc -u) show one record per line
 * while a reader that parses datagrams just strips it.
 *
 * Failure model. Nothing connects at open, so intspect can start before its
 * reader; write_batch and flush connect, each attempt bounded by
 * connect-timeout-ms. Sockets are non-blocking and a full socket is waited
 * for with poll(), at most min(flush-ms, 1 s) per write_batch: a reader
 * that stops reading costs the channel thread bounded time and the packet
 * path nothing (records wait in the queue under its drop policy). A peer
 * that closes or resets loses the connection: what went out is reported
 * delivered, the rest is offered again by the channel layer with backoff,
 * and the next write_batch or flush reconnects (counted in reconnects). A
 * line cut by a full socket resumes mid-record on the retry; a line cut by a
 * lost connection is sent whole on the next one (the new reader never saw
 * its beginning). Every send uses MSG_NOSIGNAL: a dead reader is an error
 * to count, never a SIGPIPE.
 *
 * TCP has no application acknowledgements: "delivered" means handed to the
 * kernel. A reader that closes cleanly is noticed before the next write (its
 * FIN is pending on our socket), so nothing is written into a connection
 * already closed; what sat unread in the socket buffers when a reader died
 * is lost, as with any TCP sender. UDP has no delivery at all: an ICMP port
 * unreachable (ECONNREFUSED on the next send) is not fatal, it moves to the
 * hostname's next address if it has several, and sending goes on.
 */
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
#include <sys/un.h>
#include <unistd.h>

#include "builtin.h"
#include "kv.h"
#include "queue.h"

#define UDP_MAX_PAYLOAD 65507           /* 65535 - 20 (IPv4) - 8 (UDP) */
#define NIOV 1024                       /* Linux's IOV_MAX */
#define NMSG 256                        /* datagrams per sendmmsg */
#define WAIT_MAX_MS 1000                /* longest wait for room per batch */
#define FLUSH_CONNECT_HOLDOFF_NS (1000 * 1000000LL)
#define DEFAULT_UNIX_PATH "/tmp/probe-output.sock"      /* MMT-Probe's */

enum sock_kind { K_UDP, K_TCP, K_UNIX, K_UNIX_DGRAM };

static const char *const kind_names[] = { "udp", "tcp", "unix", "unix-dgram" };

struct sock_out {
	enum sock_kind kind;
	char *host, *port;              /* udp, tcp */
	struct sockaddr_un sun;         /* unix, unix-dgram */
	int connect_ms, wait_ms, sndbuf;
	int fd;                         /* -1: not connected */
	bool connected_once;            /* later connections are reconnects */
	size_t partial;                 /* stream: bytes of the first pending line sent */
	struct addrinfo *ai, *ai_cur;   /* udp/tcp: addresses, the one in use */
	int64_t flush_connect_ns;       /* flush does not try to connect before */
	uint64_t oversize;              /* records too large for a datagram */
	char *name;
	char last_err[192];
	struct isp_channel *ch;
};

/* ---- waiting and connecting ------------------------------------------------ */

/* poll() for `events` until the CLOCK_MONOTONIC time `deadline`; revents,
 * or 0 once the time is up. */
static int wait_until(int fd, short events, int64_t deadline)
{
	for (;;) {
		int64_t left = deadline - isp_now_ns();
		struct pollfd p = { .fd = fd, .events = events };

		if (left <= 0)
			return 0;
		int r = poll(&p, 1, (int)((left + 999999) / 1000000));

		if (r > 0)
			return p.revents;
		if (r == 0 || errno != EINTR)
			return 0;
	}
}

static void set_err(struct sock_out *o, const char *what, int e)
{
	if (o->kind == K_UNIX || o->kind == K_UNIX_DGRAM)
		snprintf(o->last_err, sizeof(o->last_err), "%s %s: %s", what,
			 o->sun.sun_path, strerror(e));
	else
		snprintf(o->last_err, sizeof(o->last_err), "%s %s port %s: %s",
			 what, o->host, o->port, strerror(e));
}

/* One socket connected to sa within `deadline`; the fd, or -1 with *e set. */
static int connect_addr(const struct sock_out *o, const struct sockaddr *sa,
			socklen_t len, int type, int64_t deadline, int *e)
{
	int fd = socket(sa->sa_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int one = 1;
	socklen_t elen = sizeof(*e);

	if (fd < 0) {
		*e = errno;
		return -1;
	}
	if (o->sndbuf)
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &o->sndbuf, sizeof(o->sndbuf));
	/* Records are already gathered into one send per batch; Nagle would
	 * only hold the last one back. */
	if (o->kind == K_TCP)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, sa, len) == 0)
		return fd;
	*e = errno;
	if (*e == EINPROGRESS || *e == EINTR) {
		if (!wait_until(fd, POLLOUT, deadline))
			*e = ETIMEDOUT;
		else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, e, &elen) != 0)
			*e = errno;
		if (*e == 0)
			return fd;
	}
	close(fd);
	return -1;
}

/* (Re)resolve hostname:port; 0, or getaddrinfo's error with last_err set.
 * Done at every connection rather than once, so a name that moves is
 * followed. */
static int resolve(struct sock_out *o)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = o->kind == K_TCP ? SOCK_STREAM : SOCK_DGRAM,
		.ai_flags = AI_NUMERICSERV,
	};
	struct addrinfo *ai = NULL;
	int rc = getaddrinfo(o->host, o->port, &hints, &ai);

	if (rc != 0) {
		snprintf(o->last_err, sizeof(o->last_err), "cannot resolve %s: %s",
			 o->host, rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		return rc;
	}
	if (o->ai)
		freeaddrinfo(o->ai);
	o->ai = o->ai_cur = ai;
	return 0;
}

static void connected(struct sock_out *o, int fd)
{
	o->fd = fd;
	o->partial = 0;
	if (o->connected_once && o->ch)
		isp_channel_add_reconnects(o->ch, 1);
	o->connected_once = true;
	if (o->ch)
		isp_channel_note_up(o->ch);
}

/* Connect; 0, or -1 with last_err set (the channel layer backs off). */
static int sock_connect(struct sock_out *o)
{
	int64_t deadline = isp_now_ns() + (int64_t)o->connect_ms * 1000000;
	int fd, e = 0;

	if (o->kind == K_UNIX || o->kind == K_UNIX_DGRAM) {
		fd = connect_addr(o, (const struct sockaddr *)&o->sun, sizeof(o->sun),
				  o->kind == K_UNIX ? SOCK_STREAM : SOCK_DGRAM,
				  deadline, &e);
		if (fd < 0) {
			set_err(o, "connect to", e);
			return -1;
		}
		connected(o, fd);
		return 0;
	}
	if (resolve(o) != 0)
		return -1;
	/* TCP tries every address within the one timeout ("localhost" may be
	 * ::1 first and the reader listen on 127.0.0.1 only). UDP cannot tell
	 * whether anyone listens: it takes the first and moves on when an
	 * ICMP port unreachable comes back (dgram_write). */
	for (struct addrinfo *a = o->ai; a; a = a->ai_next) {
		fd = connect_addr(o, a->ai_addr, a->ai_addrlen, a->ai_socktype,
				  deadline, &e);
		if (fd >= 0) {
			o->ai_cur = a;
			connected(o, fd);
			return 0;
		}
		if (o->kind == K_UDP || e == ETIMEDOUT)
			break;
	}
	set_err(o, "connect to", e);
	return -1;
}

/* The connection is unusable: close it; the next write or flush
 * reconnects. A line begun on it is sent whole on the next one. */
static void lost(struct sock_out *o, const char *what, int e)
{
	set_err(o, what, e);
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	o->partial = 0;
}

/* TCP: has the reader closed (its FIN is pending) or reset? Checked before
 * writing because the first send after a close succeeds and its data is
 * lost. Whatever the reader sent us is read and ignored. A reader that
 * shuts down only its sending side is taken for gone. Unix stream sockets
 * need no check: a send to a closed peer fails at once (EPIPE). */
static bool peer_gone(struct sock_out *o)
{
	char buf[4096];

	for (int i = 0; i < 16; i++) {
		ssize_t r = recv(o->fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (r > 0)
			continue;
		if (r == 0) {
			lost(o, "closed by", EPIPE);
			return true;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return false;
		lost(o, "receive from", errno);
		return true;
	}
	return false;
}

/* ---- writing --------------------------------------------------------------- */

static size_t stream_write(struct sock_out *o, const struct isp_record *recs,
			   size_t n, int64_t deadline)
{
	static char nl = '\n';
	struct iovec iov[NIOV];
	size_t done = 0;

	while (done < n) {
		struct msghdr m = { .msg_iov = iov };
		size_t cnt = 0;

		for (size_t i = done; i < n && cnt + 2 <= NIOV; i++) {
			size_t skip = i == done ? o->partial : 0;

			if (skip < recs[i].len) {
				iov[cnt].iov_base = (void *)(recs[i].text + skip);
				iov[cnt++].iov_len = recs[i].len - skip;
			}
			iov[cnt].iov_base = &nl;
			iov[cnt++].iov_len = 1;
		}
		m.msg_iovlen = cnt;

		ssize_t w = sendmsg(o->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				/* Room or an error: the next send tells. */
				if (!wait_until(o->fd, POLLOUT, deadline))
					return done;    /* resumes at o->partial */
				continue;
			}
			lost(o, "send to", errno);
			return done;
		}
		for (size_t left = (size_t)w; left > 0;) {
			size_t rest = recs[done].len + 1 - o->partial;

			if (left >= rest) {
				left -= rest;
				o->partial = 0;
				done++;
			} else {
				o->partial += left;
				left = 0;
			}
		}
	}
	return done;
}

/* A record no datagram can carry: not sent, counted and reported (the
 * channel layer counts it delivered: it has left the queue for good). */
static void too_big(struct sock_out *o, const struct isp_record *r)
{
	if (o->oversize++ == 0)
		fprintf(stderr, "intspect: channel %s: a record of %zu bytes does not "
			"fit in one datagram; such records are not sent\n",
			o->name, r->len + 1);
}

static bool fits(const struct sock_out *o, const struct isp_record *r)
{
	return o->kind != K_UDP || r->len + 1 <= UDP_MAX_PAYLOAD;
}

/* UDP after an ICMP port unreachable: the next address of the name, if it
 * has another (the error was about an earlier datagram; this one was not
 * sent and is sent again). */
static void udp_next_address(struct sock_out *o)
{
	struct addrinfo *a = o->ai_cur && o->ai_cur->ai_next ? o->ai_cur->ai_next : o->ai;
	int64_t deadline = isp_now_ns() + (int64_t)o->connect_ms * 1000000;
	int e = 0, fd;

	if (!a || a == o->ai_cur)
		return;
	fd = connect_addr(o, a->ai_addr, a->ai_addrlen, a->ai_socktype, deadline, &e);
	if (fd < 0)
		return;
	close(o->fd);
	o->fd = fd;
	o->ai_cur = a;
}

static size_t dgram_write(struct sock_out *o, const struct isp_record *recs,
			  size_t n, int64_t deadline)
{
	static char nl = '\n';
	struct mmsghdr mm[NMSG];
	struct iovec iov[NMSG][2];
	size_t done = 0;
	int refused = 0;

	while (done < n) {
		unsigned cnt = 0;

		if (!fits(o, &recs[done])) {
			too_big(o, &recs[done++]);
			continue;
		}
		for (size_t i = done; i < n && cnt < NMSG && fits(o, &recs[i]); i++, cnt++) {
			iov[cnt][0].iov_base = (void *)recs[i].text;
			iov[cnt][0].iov_len = recs[i].len;
			iov[cnt][1].iov_base = &nl;
			iov[cnt][1].iov_len = 1;
			memset(&mm[cnt], 0, sizeof(mm[cnt]));
			mm[cnt].msg_hdr.msg_iov = iov[cnt];
			mm[cnt].msg_hdr.msg_iovlen = 2;
		}

		int w = sendmmsg(o->fd, mm, cnt, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w > 0) {
			done += (size_t)w;
			refused = 0;
			continue;
		}
		if (w == 0 || errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			if (!wait_until(o->fd, POLLOUT, deadline))
				return done;
			continue;
		}
		if (errno == EMSGSIZE) {        /* unix-dgram: above the socket's limit */
			too_big(o, &recs[done++]);
			continue;
		}
		if (errno == ECONNREFUSED && o->kind == K_UDP) {
			set_err(o, "send to", errno);
			/* Each ICMP error is reported once; a run of them with
			 * nothing sent in between is left to the backoff. */
			if (++refused > 3)
				return done;
			udp_next_address(o);
			continue;
		}
		lost(o, "send to", errno);
		return done;
	}
	return done;
}

static size_t sock_write(void *state, const struct isp_record *recs, size_t n)
{
	struct sock_out *o = state;
	int64_t deadline;

	if (o->fd >= 0 && o->kind == K_TCP)
		peer_gone(o);
	if (o->fd < 0 && sock_connect(o) != 0)
		return 0;
	deadline = isp_now_ns() + (int64_t)o->wait_ms * 1000000;
	if (o->kind == K_TCP || o->kind == K_UNIX)
		return stream_write(o, recs, n, deadline);
	return dgram_write(o, recs, n, deadline);
}

/* Notice a reader that left while idle, and reconnect; a failed attempt
 * holds further tries from flush off for a second (write_batch has the
 * channel layer's backoff). */
static int sock_flush(void *state)
{
	struct sock_out *o = state;
	int64_t now = isp_now_ns();

	if (o->fd >= 0 && o->kind == K_TCP)
		peer_gone(o);
	if (o->fd >= 0)
		return 0;
	if (now < o->flush_connect_ns)
		return -1;
	if (sock_connect(o) != 0) {
		o->flush_connect_ns = now + FLUSH_CONNECT_HOLDOFF_NS;
		return -1;
	}
	return 0;
}

/* ---- open / close -------------------------------------------------------------- */

static void sock_free(struct sock_out *o)
{
	if (o->fd >= 0)
		close(o->fd);
	if (o->ai)
		freeaddrinfo(o->ai);
	free(o->host);
	free(o->port);
	free(o->name);
	free(o);
}

static void sock_close(void *state)
{
	struct sock_out *o = state;

	/* A line cut by the shutdown deadline: end it, so the reader does
	 * not glue it to whatever it reads next. */
	if (o->fd >= 0 && o->partial) {
		ssize_t w = send(o->fd, "\n", 1, MSG_NOSIGNAL | MSG_DONTWAIT);

		(void)w;
	}
	if (o->oversize)
		fprintf(stderr, "intspect: channel %s: %llu records too large for a "
			"datagram were not sent (counted as delivered)\n", o->name,
			(unsigned long long)o->oversize);
	if (!o->connected_once && o->last_err[0])
		fprintf(stderr, "intspect: channel %s: never connected: %s\n",
			o->name, o->last_err);
	sock_free(o);
}

/* type = ...: ours and MMT-Probe's words, any case; -1 with a message. */
static int parse_kind(const struct isp_kv *kv, enum sock_kind *out,
		      char *err, size_t errlen)
{
	static const struct { const char *word; int kind; } words[] = {
		{ "udp", K_UDP }, { "tcp", K_TCP }, { "internet", K_TCP },
		{ "unix", K_UNIX }, { "unix-dgram", K_UNIX_DGRAM },
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (strcasecmp(kv->value, words[i].word) == 0) {
			*out = (enum sock_kind)words[i].kind;
			return 0;
		}
	}
	if (strcasecmp(kv->value, "both") == 0)
		snprintf(err, errlen, "type %s (MMT-Probe: unix and tcp at once) is not "
			 "supported: write two socket-output sections, one with type = unix "
			 "and one with type = tcp, and name both in output-channel", kv->value);
	else
		snprintf(err, errlen, "bad value '%s' for type: expected udp, tcp, unix or "
			 "unix-dgram (or MMT-Probe's UDP, TCP, INTERNET, UNIX)", kv->value);
	return -1;
}

/* Check the keys into o; -1 with err and *bad_kv. */
static int parse_keys(struct sock_out *o, const struct isp_channel_cfg *cfg,
		      int *bad_kv, char *err, size_t errlen)
{
	uint64_t port = 0, ms = 1000, sndbuf = 0;
	const char *host = "localhost", *path = DEFAULT_UNIX_PATH;
	int it = isp_kv_find(cfg, "type"), ip = -1, ipath = -1;

	*bad_kv = it;
	if (it < 0) {
		/* The section's own position is not known here: point into it. */
		*bad_kv = cfg->nkv ? 0 : -1;
		snprintf(err, errlen, "a socket output needs 'type': udp, tcp, unix or unix-dgram");
		return -1;
	}
	if (parse_kind(&cfg->kv[it], &o->kind, err, errlen) != 0)
		return -1;
	for (size_t i = 0; i < cfg->nkv; i++) {
		const struct isp_kv *kv = &cfg->kv[i];
		int rc = 0;

		*bad_kv = (int)i;
		if (strcmp(kv->key, "port") == 0) {
			rc = isp_kv_uint(kv, 0, 65535, &port, err, errlen);
			ip = (int)i;
		} else if (strcmp(kv->key, "connect-timeout-ms") == 0) {
			rc = isp_kv_uint(kv, 1, 600000, &ms, err, errlen);
		} else if (strcmp(kv->key, "send-buffer") == 0) {
			rc = isp_kv_size(kv, 1024, 1ull << 30, &sndbuf, err, errlen);
		} else if (strcmp(kv->key, "hostname") == 0) {
			host = kv->value;
		} else if (strcmp(kv->key, "path") == 0 ||
			   strcmp(kv->key, "descriptor") == 0) {
			if (ipath >= 0) {
				snprintf(err, errlen, "'path' and 'descriptor' are the same "
					 "setting (descriptor is MMT-Probe's name); give one");
				return -1;
			}
			ipath = (int)i;
			path = kv->value;
		}
		if (rc != 0)
			return -1;
	}
	o->connect_ms = (int)ms;
	o->sndbuf = (int)sndbuf;

	if (o->kind == K_UDP || o->kind == K_TCP) {
		/* MMT-Probe writes every key whatever the type: a port or a
		 * descriptor the type does not use is ignored, not an error. */
		*bad_kv = ip >= 0 ? ip : it;    /* no port: the type wants one */
		if (port == 0) {
			snprintf(err, errlen, "a %s socket output needs 'port' (1 to 65535)",
				 kind_names[o->kind]);
			return -1;
		}
		*bad_kv = isp_kv_find(cfg, "hostname");
		if (host[0] == '\0') {
			snprintf(err, errlen, "'hostname' is empty");
			return -1;
		}
		o->host = strdup(host);
		o->port = malloc(8);
		if (!o->host || !o->port) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		snprintf(o->port, 8, "%u", (unsigned)port);
		return 0;
	}
	*bad_kv = ipath;
	if (path[0] == '\0' || strlen(path) >= sizeof(o->sun.sun_path)) {
		snprintf(err, errlen, "bad Unix socket path '%s': 1 to %zu bytes", path,
			 sizeof(o->sun.sun_path) - 1);
		return -1;
	}
	o->sun.sun_family = AF_UNIX;
	memcpy(o->sun.sun_path, path, strlen(path) + 1);
	return 0;
}

static int sock_open(void **state, const struct isp_channel_cfg *cfg,
		     int *bad_kv, char *err, size_t errlen)
{
	static const char *const known[] = {
		"type", "hostname", "port", "descriptor", "path",
		"connect-timeout-ms", "send-buffer", NULL
	};
	unsigned flush_ms = cfg->params ? cfg->params->flush_ms : 100;
	struct sock_out *o;

	if (isp_kv_check_known(cfg, known, bad_kv, err, errlen) != 0)
		return -1;
	o = calloc(1, sizeof(*o));
	if (!o || !(o->name = strdup(cfg->name ? cfg->name : "socket"))) {
		free(o);
		*bad_kv = -1;
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	o->fd = -1;
	o->ch = cfg->channel;
	o->wait_ms = flush_ms < WAIT_MAX_MS ? (int)flush_ms : WAIT_MAX_MS;
	if (parse_keys(o, cfg, bad_kv, err, errlen) != 0) {
		sock_free(o);
		return -1;
	}
	/* A name that does not exist is a mistake in the file: say so now.
	 * A resolver that is down (EAI_AGAIN) is not: connecting retries. */
	if (o->host && resolve(o) == EAI_NONAME) {
		*bad_kv = isp_kv_find(cfg, "hostname");
		snprintf(err, errlen, "%s", o->last_err);
		sock_free(o);
		return -1;
	}
	o->last_err[0] = '\0';
	*bad_kv = -1;
	*state = o;
	return 0;
}

const struct isp_channel_ops isp_socket_ops = {
	.type = "socket",
	.open = sock_open,
	.write_batch = sock_write,
	.flush = sock_flush,
	.close = sock_close,
	.connects = true,
};
