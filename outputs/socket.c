/*
 * socket.c - channel type "socket": records sent to a reader that listens
 * on UDP, TCP, a Unix stream socket or a Unix datagram socket (socat, a log
 * shipper, a dashboard's ingest), or to two readers at once (MMT-Probe's
 * BOTH: a Unix stream socket and TCP). This half writes; keys, open and
 * close are in socket_open.c.
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
 *
 * BOTH: a record is delivered once both connections have sent it whole.
 * Each connection goes as far as it can; the one further on remembers how
 * far (sock_conn.ahead) and does not send those records again when the
 * channel layer offers the rest. A reader that is away thus holds the
 * records in the queue, as with one connection, where its drop policy
 * counts what overflows: no record is reported delivered that one reader
 * did not get.
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "builtin.h"
#include "bytes.h"
#include "fdlines.h"
#include "queue.h"
#include "socket_int.h"

#define UDP_MAX_PAYLOAD 65507           /* 65535 - 20 (IPv4) - 8 (UDP) */
#define NIOV 1024                       /* Linux's IOV_MAX */
#define NMSG 256                        /* datagrams per sendmmsg */
#define FLUSH_CONNECT_HOLDOFF_NS (1000 * 1000000LL)

/* ---- waiting and connecting ------------------------------------------------ */


static void set_err(struct sock_conn *c, const char *what, int e)
{
	if (c->kind == K_UNIX || c->kind == K_UNIX_DGRAM)
		snprintf(c->last_err, sizeof(c->last_err), "%s %s: %s", what,
			 c->sun.sun_path, strerror(e));
	else
		snprintf(c->last_err, sizeof(c->last_err), "%s %s port %s: %s",
			 what, c->host, c->port, strerror(e));
}

/* One socket connected to sa within `deadline`; the fd, or -1 with *e set. */
static int connect_addr(const struct sock_out *o, const struct sock_conn *c,
			const struct sockaddr *sa, socklen_t len, int type,
			int64_t deadline, int *e)
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
	if (c->kind == K_TCP)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, sa, len) == 0)
		return fd;
	*e = errno;
	if (*e == EINPROGRESS || *e == EINTR) {
		if (!isp_wait_fd(fd, POLLOUT, deadline))
			*e = ETIMEDOUT;
		else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, e, &elen) != 0)
			*e = errno;
		if (*e == 0)
			return fd;
	}
	close(fd);
	return -1;
}

/* Done at every connection rather than once, so a name that moves is
 * followed. */
int isp_sock_resolve(struct sock_conn *c)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC,
		.ai_socktype = c->kind == K_TCP ? SOCK_STREAM : SOCK_DGRAM,
		.ai_flags = AI_NUMERICSERV,
	};
	struct addrinfo *ai = NULL;
	int rc = getaddrinfo(c->host, c->port, &hints, &ai);

	if (rc != 0) {
		snprintf(c->last_err, sizeof(c->last_err), "cannot resolve %s: %s",
			 c->host, rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		return rc;
	}
	if (c->ai)
		freeaddrinfo(c->ai);
	c->ai = c->ai_cur = ai;
	return 0;
}

static void connected(struct sock_out *o, struct sock_conn *c, int fd)
{
	bool all = true;

	c->fd = fd;
	c->partial = 0;
	if (c->connected_once && o->ch)
		isp_channel_add_reconnects(o->ch, 1);
	c->connected_once = true;
	/* The channel reached its service once it reached every reader: with
	 * one missing, nothing would be delivered. */
	for (unsigned i = 0; i < o->nconn; i++)
		all &= o->conn[i].connected_once;
	if (all && o->ch)
		isp_channel_note_up(o->ch);
}

/* Connect; 0, or -1 with last_err set (the channel layer backs off). */
static int sock_connect(struct sock_out *o, struct sock_conn *c)
{
	int64_t deadline = isp_now_ns() + (int64_t)o->connect_ms * 1000000;
	int fd, e = 0;

	if (c->kind == K_UNIX || c->kind == K_UNIX_DGRAM) {
		fd = connect_addr(o, c, (const struct sockaddr *)&c->sun, sizeof(c->sun),
				  c->kind == K_UNIX ? SOCK_STREAM : SOCK_DGRAM,
				  deadline, &e);
		if (fd < 0) {
			set_err(c, "connect to", e);
			return -1;
		}
		connected(o, c, fd);
		return 0;
	}
	if (isp_sock_resolve(c) != 0)
		return -1;
	/* TCP tries every address within the one timeout ("localhost" may be
	 * ::1 first and the reader listen on 127.0.0.1 only). UDP cannot tell
	 * whether anyone listens: it takes the first and moves on when an
	 * ICMP port unreachable comes back (dgram_write). */
	for (struct addrinfo *a = c->ai; a; a = a->ai_next) {
		fd = connect_addr(o, c, a->ai_addr, a->ai_addrlen, a->ai_socktype,
				  deadline, &e);
		if (fd >= 0) {
			c->ai_cur = a;
			connected(o, c, fd);
			return 0;
		}
		if (c->kind == K_UDP || e == ETIMEDOUT)
			break;
	}
	set_err(c, "connect to", e);
	return -1;
}

/* The connection is unusable: close it; the next write or flush
 * reconnects. A line begun on it is sent whole on the next one. */
static void lost(struct sock_conn *c, const char *what, int e)
{
	set_err(c, what, e);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->partial = 0;
}

/* TCP: has the reader closed (its FIN is pending) or reset? Checked before
 * writing because the first send after a close succeeds and its data is
 * lost. Whatever the reader sent us is read and ignored. A reader that
 * shuts down only its sending side is taken for gone. Unix stream sockets
 * need no check: a send to a closed peer fails at once (EPIPE). */
static void peer_gone(struct sock_conn *c)
{
	char buf[4096];

	if (c->fd < 0 || c->kind != K_TCP)
		return;
	for (int i = 0; i < 16; i++) {
		ssize_t r = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (r > 0)
			continue;
		if (r == 0) {
			lost(c, "closed by", EPIPE);
			return;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			lost(c, "receive from", errno);
		return;
	}
}

/* ---- writing --------------------------------------------------------------- */

static size_t stream_write(struct sock_conn *c, const struct isp_record *recs,
			   size_t n, int64_t deadline)
{
	static char nl = '\n';
	struct iovec iov[NIOV];
	size_t done = 0;

	while (done < n) {
		struct msghdr m = { .msg_iov = iov };
		size_t cnt = 0;

		size_t run = isp_lined_run(recs, done, n, c->partial);

		if (run) {      /* lines as they were taken: one segment */
			iov[0].iov_base = (void *)(recs[done].text + c->partial);
			iov[cnt++].iov_len = run;
		}
		for (size_t i = done; !run && i < n && cnt + 2 <= NIOV; i++) {
			size_t skip = i == done ? c->partial : 0;

			if (skip < recs[i].len) {
				iov[cnt].iov_base = (void *)(recs[i].text + skip);
				iov[cnt++].iov_len = recs[i].len - skip;
			}
			iov[cnt].iov_base = &nl;
			iov[cnt++].iov_len = 1;
		}
		m.msg_iovlen = cnt;

		ssize_t w = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				/* Room or an error: the next send tells. */
				if (!isp_wait_fd(c->fd, POLLOUT, deadline))
					return done;    /* resumes at c->partial */
				continue;
			}
			lost(c, "send to", errno);
			return done;
		}
		for (size_t left = (size_t)w; left > 0;) {
			size_t rest = recs[done].len + 1 - c->partial;

			if (left >= rest) {
				left -= rest;
				c->partial = 0;
				done++;
			} else {
				c->partial += left;
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

static bool fits(const struct sock_conn *c, const struct isp_record *r)
{
	return c->kind != K_UDP || r->len + 1 <= UDP_MAX_PAYLOAD;
}

/* UDP after an ICMP port unreachable: the next address of the name, if it
 * has another (the error was about an earlier datagram; this one was not
 * sent and is sent again). */
static void udp_next_address(struct sock_out *o, struct sock_conn *c)
{
	struct addrinfo *a = c->ai_cur && c->ai_cur->ai_next ? c->ai_cur->ai_next : c->ai;
	int64_t deadline = isp_now_ns() + (int64_t)o->connect_ms * 1000000;
	int e = 0, fd;

	if (!a || a == c->ai_cur)
		return;
	fd = connect_addr(o, c, a->ai_addr, a->ai_addrlen, a->ai_socktype, deadline, &e);
	if (fd < 0)
		return;
	close(c->fd);
	c->fd = fd;
	c->ai_cur = a;
}

static size_t dgram_write(struct sock_out *o, struct sock_conn *c,
			  const struct isp_record *recs, size_t n, int64_t deadline)
{
	static char nl = '\n';
	struct mmsghdr mm[NMSG];
	struct iovec iov[NMSG][2];
	size_t done = 0;
	int refused = 0;

	while (done < n) {
		unsigned cnt = 0;

		if (!fits(c, &recs[done])) {
			too_big(o, &recs[done++]);
			continue;
		}
		for (size_t i = done; i < n && cnt < NMSG && fits(c, &recs[i]); i++, cnt++) {
			bool lined = recs[i].lined;     /* its newline after it */

			iov[cnt][0].iov_base = (void *)recs[i].text;
			iov[cnt][0].iov_len = recs[i].len + lined;
			iov[cnt][1].iov_base = &nl;
			iov[cnt][1].iov_len = 1;
			memset(&mm[cnt], 0, sizeof(mm[cnt]));
			mm[cnt].msg_hdr.msg_iov = iov[cnt];
			mm[cnt].msg_hdr.msg_iovlen = lined ? 1 : 2;
		}

		int w = sendmmsg(c->fd, mm, cnt, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w > 0) {
			done += (size_t)w;
			refused = 0;
			continue;
		}
		if (w == 0 || errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			if (!isp_wait_fd(c->fd, POLLOUT, deadline))
				return done;
			continue;
		}
		if (errno == EMSGSIZE) {        /* unix-dgram: above the socket's limit */
			too_big(o, &recs[done++]);
			continue;
		}
		if (errno == ECONNREFUSED && c->kind == K_UDP) {
			set_err(c, "send to", errno);
			/* Each ICMP error is reported once; a run of them with
			 * nothing sent in between is left to the backoff. */
			if (++refused > 3)
				return done;
			udp_next_address(o, c);
			continue;
		}
		lost(c, "send to", errno);
		return done;
	}
	return done;
}

/* What one connection sends of recs[0..n): records sent whole. */
static size_t conn_write(struct sock_out *o, struct sock_conn *c,
			 const struct isp_record *recs, size_t n, int64_t deadline)
{
	peer_gone(c);
	if (c->fd < 0 && sock_connect(o, c) != 0)
		return 0;
	if (c->kind == K_TCP || c->kind == K_UNIX)
		return stream_write(c, recs, n, deadline);
	return dgram_write(o, c, recs, n, deadline);
}

/* Delivered: what every connection has sent. The wait for room is shared
 * (one deadline per batch), so two connections take no longer than one. */
static size_t sock_write(void *state, const struct isp_record *recs, size_t n)
{
	struct sock_out *o = state;
	int64_t deadline = isp_now_ns() + (int64_t)o->wait_ms * 1000000;
	size_t least = n;

	for (unsigned i = 0; i < o->nconn; i++) {
		struct sock_conn *c = &o->conn[i];
		/* The layer offers at least the records not delivered, among
		 * them those this connection sent: ahead <= n. */
		size_t done = c->ahead < n ? c->ahead : n;

		if (done < n)
			done += conn_write(o, c, recs + done, n - done, deadline);
		c->ahead = done;
		if (done < least)
			least = done;
	}
	for (unsigned i = 0; i < o->nconn; i++)
		o->conn[i].ahead -= least;
	return least;
}

/* Notice a reader that left while idle, and reconnect; a failed attempt
 * holds further tries from flush off for a second (write_batch has the
 * channel layer's backoff). */
static int sock_flush(void *state)
{
	struct sock_out *o = state;
	int64_t now = isp_now_ns();
	int rc = 0;

	for (unsigned i = 0; i < o->nconn; i++) {
		struct sock_conn *c = &o->conn[i];

		peer_gone(c);
		if (c->fd >= 0)
			continue;
		if (now < c->flush_connect_ns) {
			rc = -1;
		} else if (sock_connect(o, c) != 0) {
			c->flush_connect_ns = now + FLUSH_CONNECT_HOLDOFF_NS;
			rc = -1;
		}
	}
	return rc;
}

const struct isp_channel_ops isp_socket_ops = {
	.type = "socket",
	.open = isp_sock_open,
	.write_batch = sock_write,
	.flush = sock_flush,
	.close = isp_sock_close,
	.lines = true,
	.connects = true,
	.says_never_connected = true,
};
