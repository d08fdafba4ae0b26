/*
 * redis.c - channel type "redis": each record is one Redis command, PUBLISH
 * to a channel (the default, as MMT-Probe), LPUSH/RPUSH onto a list or XADD
 * to a stream, pipelined: a whole batch is written before its replies are
 * read, so a batch costs one round trip, not one per record.
 *
 * Keys: hostname/server (a value with '/' is a Unix socket), port,
 * channel/key (may hold %r, the record's report name), mode, stream-maxlen,
 * stream-field, password, username, database, connect-timeout-ms,
 * command-timeout-ms, tls and its files (outputs/README.md, "Type redis";
 * TLS: redis_tls.c).
 *
 * Failure model. The socket is non-blocking and every wait is a poll()
 * against a deadline: a batch waits at most command-timeout-ms for its
 * replies, and a reconnection at most connect-timeout-ms for the connect
 * plus command-timeout-ms for AUTH/SELECT/PING, so a dead or frozen server
 * never holds the channel's thread (or a shutdown) for long. A connection
 * error or a timeout closes the connection and reports the records
 * answered so far; the channel layer offers the rest again with backoff,
 * and the next write_batch or flush reconnects. Records sent but
 * unanswered when a connection dies are sent again: delivery is at least
 * once.
 *
 * Replies. An OK reply is an acknowledgement (isp_channel_add_acked). An
 * error reply that retrying cannot fix (WRONGTYPE: the key holds another
 * type; NOPERM: the ACL user may not write it) rejects that record for
 * good: write_batch returns it as done (offering it again would loop
 * forever), then reports it lost (isp_channel_add_lost), which moves it
 * from delivered to dropped; it is logged once per batch and totalled at
 * close. An error that says "not now" (LOADING, BUSY, OOM, READONLY, ...)
 * leaves the record to be retried; the records after it in the same
 * pipeline were executed, so their outcome is remembered (memo) and they
 * are not sent twice.
 */
#include "config.h"        /* HAVE_OPENSSL */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <hiredis/hiredis.h>

#include "builtin.h"
#include "kv.h"
#include "queue.h"

#define REJECT_LOG_NS (1000 * 1000000LL)

#include "redis_int.h"
#ifdef HAVE_OPENSSL
#include "redis_tls.h"
#endif

void say(const struct redis_out *o, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "intspect: channel %s: redis %s: %s\n", o->name, o->where, msg);
}

/* ---- key: the template with %r replaced -------------------------------- */

/* 0, or -1 with a message when the template has another %-sequence. */
int check_template(const char *t, bool *per_report, char *err, size_t errlen)
{
	*per_report = false;
	for (; *t; t++) {
		if (*t != '%')
			continue;
		if (t[1] == 'r') {
			*per_report = true;
		} else if (t[1] == '\0') {
			snprintf(err, errlen, "'%%' at the end of the name: %%r is the "
				 "report name, %%%% a '%%'");
			return -1;
		} else if (t[1] != '%') {
			snprintf(err, errlen, "bad '%%%c' in the name: %%r is the report "
				 "name, %%%% a '%%'", t[1]);
			return -1;
		}
		t++;
	}
	return 0;
}


/* Append, room already made. */
static void buf_put(struct isp_bytes *b, const void *s, size_t n)
{
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

/* Append "<c><decimal n>\r\n" (a RESP array or bulk length), room made
 * for 24 bytes. */
static void buf_len(struct isp_bytes *b, char c, size_t n)
{
	char tmp[24];
	int i = (int)sizeof(tmp);

	tmp[--i] = '\n';
	tmp[--i] = '\r';
	do
		tmp[--i] = (char)('0' + n % 10);
	while ((n /= 10) > 0);
	tmp[--i] = c;
	buf_put(b, tmp + i, sizeof(tmp) - (size_t)i);
}

/* Append a RESP bulk string; -1: out of memory. */
static int buf_bulk(struct isp_bytes *b, const char *s, size_t n)
{
	if (isp_bytes_room(b, n + 26) != 0)
		return -1;
	buf_len(b, '$', n);
	buf_put(b, s, n);
	buf_put(b, "\r\n", 2);
	return 0;
}

/* The command up to the record, in RESP, for the current key. Formatting
 * here rather than with redisAppendCommandArgv saves an allocation and a
 * printf-style pass per record (a quarter of the channel thread's time at
 * a million records a second). */
static int build_head(struct redis_out *o)
{
	static const char *const cmd[] = { "PUBLISH", "LPUSH", "RPUSH", "XADD" };
	int argc = o->mode != MODE_XADD ? 3 : o->maxlen[0] ? 8 : 5;
	struct isp_bytes *h = &o->head;
	int rc;

	h->len = 0;
	if (isp_bytes_room(h, 24) != 0)
		return -1;
	buf_len(h, '*', (size_t)argc);
	rc = buf_bulk(h, cmd[o->mode], strlen(cmd[o->mode]));
	rc |= buf_bulk(h, o->key.p, o->key.len);
	if (o->mode == MODE_XADD && o->maxlen[0]) {
		rc |= buf_bulk(h, "MAXLEN", 6);
		rc |= buf_bulk(h, "~", 1);
		rc |= buf_bulk(h, o->maxlen, strlen(o->maxlen));
	}
	if (o->mode == MODE_XADD) {
		rc |= buf_bulk(h, "*", 1);
		rc |= buf_bulk(h, o->field, strlen(o->field));
	}
	return rc ? -1 : 0;
}

/* Expand the template for `report` and rebuild the head; the last
 * expansion is reused, since one report's records come in runs. -1: out of
 * memory. */
static int key_for(struct redis_out *o, const char *report)
{
	if (!report)
		report = "";
	if (o->key_report && (!o->per_report || strcmp(o->key_report, report) == 0))
		return 0;
	free(o->key_report);
	if (!(o->key_report = strdup(report)))
		return -1;
	o->key.len = 0;
	if (isp_bytes_room(&o->key, 1) != 0)
		goto oom;
	for (const char *t = o->tmpl; *t; t++) {
		const char *s = t;
		size_t n = 1;           /* '%%' keeps one '%' */

		if (t[0] == '%' && t[1] == 'r') {
			s = report;
			n = strlen(report);
		}
		if (isp_bytes_room(&o->key, n) != 0)
			goto oom;
		buf_put(&o->key, s, n);
		t += t[0] == '%';
	}
	if (build_head(o) == 0)
		return 0;
oom:
	free(o->key_report);
	o->key_report = NULL;   /* expand again next time */
	return -1;
}

/* ---- connection ------------------------------------------------------- */

void close_conn(struct redis_out *o)
{
#ifdef HAVE_OPENSSL
	redis_tls_close(o->tconn);
	o->tconn = NULL;
#endif
	redisFree(o->c);
	o->c = NULL;
}

static void drop_conn(struct redis_out *o, const char *why)
{
	if (!o->c)
		return;
	if (!o->down)
		say(o, "%s; records wait in the queue, reconnecting", why);
	o->down = true;
	close_conn(o);
}

static bool obuf_pending(const redisContext *c)
{
	return c->obuf && sdslen(c->obuf) > 0;
}

/* hiredis's own reads and writes, or through the TLS session. */
static int buf_write(struct redis_out *o, int *done)
{
#ifdef HAVE_OPENSSL
	if (o->tconn)
		return redis_tls_write(o->tconn, o->c, done) == 0 ? REDIS_OK : REDIS_ERR;
#endif
	return redisBufferWrite(o->c, done);
}

static int buf_read(struct redis_out *o)
{
#ifdef HAVE_OPENSSL
	if (o->tconn)
		return redis_tls_read(o->tconn, o->c) == 0 ? REDIS_OK : REDIS_ERR;
#endif
	return redisBufferRead(o->c);
}

/* Bytes the TLS session holds already (no poll shows them). */
static bool tls_pending(const struct redis_out *o)
{
#ifdef HAVE_OPENSSL
	return o->tconn && redis_tls_pending(o->tconn);
#else
	(void)o;
	return false;
#endif
}

/* The TLS session's last read needs the socket writable to go on. */
static bool tls_read_wants_write(const struct redis_out *o)
{
#ifdef HAVE_OPENSSL
	return o->tconn && redis_tls_wants_write(o->tconn) && !obuf_pending(o->c);
#else
	(void)o;
	return false;
#endif
}

/*
 * Write what is buffered and read `want` replies, calling on_reply for each
 * in order, until done or `deadline`. 0, or -1 with the reason in why (the
 * caller then closes the connection: a pipeline cut in the middle cannot
 * be resumed).
 */
static int pump(struct redis_out *o, size_t want, int64_t deadline,
		void (*on_reply)(struct redis_out *, redisReply *, void *), void *arg,
		char *why, size_t whylen)
{
	redisContext *c = o->c;
	int done = 0;

	if (obuf_pending(c) && buf_write(o, &done) != REDIS_OK)
		goto ioerr;
	while (want > 0) {
		void *r = NULL;

		if (redisGetReplyFromReader(c, &r) != REDIS_OK)
			goto ioerr;
		if (r) {
			on_reply(o, r, arg);
			freeReplyObject(r);
			want--;
			continue;
		}
		if (tls_pending(o)) {
			if (buf_read(o) != REDIS_OK)
				goto ioerr;
			continue;
		}

		int64_t left = deadline - isp_now_ns();
		struct pollfd p = { .fd = c->fd, .events = POLLIN };

		if (left <= 0) {
			snprintf(why, whylen, "no reply within %u ms", o->command_ms);
			return -1;
		}
		bool read_on_out = tls_read_wants_write(o);
		if (obuf_pending(c) || read_on_out)
			p.events |= POLLOUT;
		int rc = poll(&p, 1, (int)((left + 999999) / 1000000));

		if (rc < 0 && errno != EINTR) {
			snprintf(why, whylen, "poll: %s", strerror(errno));
			return -1;
		}
		if (rc <= 0)
			continue;
		if ((p.revents & POLLOUT) && !read_on_out && buf_write(o, &done) != REDIS_OK)
			goto ioerr;
		if (((p.revents & (POLLIN | POLLHUP | POLLERR)) ||
		     (read_on_out && (p.revents & POLLOUT))) && buf_read(o) != REDIS_OK)
			goto ioerr;
	}
	return 0;
ioerr:
	snprintf(why, whylen, "%s", c->errstr[0] ? c->errstr : "connection error");
	return -1;
}

/* Replies to the commands of a new connection, in order. */
struct hs_reply {
	const char *cmd[3];             /* "AUTH", "SELECT", "PING" */
	int n, bad;                     /* replies seen; index of the first error, -1 */
	char err[200];
};

static void on_handshake(struct redis_out *o, redisReply *r, void *arg)
{
	struct hs_reply *h = arg;

	(void)o;
	if (r->type == REDIS_REPLY_ERROR && h->bad < 0) {
		h->bad = h->n;
		snprintf(h->err, sizeof(h->err), "%s: %s", h->cmd[h->n],
			 r->str ? r->str : "error");
	}
	h->n++;
}

/* Wait for a non-blocking connect; 0 or -1 with why. */
static int wait_connected(struct redis_out *o, char *why, size_t whylen)
{
	struct pollfd p = { .fd = o->c->fd, .events = POLLOUT };
	int64_t deadline = isp_now_ns() + (int64_t)o->connect_ms * 1000000;
	int rc, soerr = 0;
	socklen_t len = sizeof(soerr);

	do {
		int64_t left = deadline - isp_now_ns();

		if (left <= 0) {
			snprintf(why, whylen, "no connection within %u ms", o->connect_ms);
			return -1;
		}
		rc = poll(&p, 1, (int)((left + 999999) / 1000000));
	} while (rc == 0 || (rc < 0 && errno == EINTR));
	if (rc < 0 || getsockopt(o->c->fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0)
		soerr = errno;
	if (soerr) {
		snprintf(why, whylen, "%s", strerror(soerr));
		return -1;
	}
	return 0;
}

/*
 * Connect, AUTH, SELECT, and PING (so that a connection counts as up only
 * once the server answers). 0, or -1 with the reason in why; *auth_err is
 * set when the server refused AUTH or SELECT (a configuration mistake, not
 * an outage).
 */
int try_connect(struct redis_out *o, bool *auth_err, char *why, size_t whylen)
{
	struct hs_reply h = { .bad = -1 };

	*auth_err = false;
	o->c = o->unix_sock ? redisConnectUnixNonBlock(o->host)
			    : redisConnectNonBlock(o->host, o->port);
	if (!o->c) {
		snprintf(why, whylen, "out of memory");
		return -1;
	}
	if (o->c->err) {
		snprintf(why, whylen, "%s", o->c->errstr);
		goto fail;
	}
	if (wait_connected(o, why, whylen) != 0)
		goto fail;
	if (!o->unix_sock)
		redisEnableKeepAlive(o->c);     /* notice a peer gone while idle */
#ifdef HAVE_OPENSSL
	if (o->tls && !(o->tconn = redis_tls_connect(o->tls, o->c->fd,
						     isp_now_ns() + (int64_t)o->connect_ms * 1000000,
						     auth_err, why, whylen)))
		goto fail;
#endif
	if (o->password) {
		if (o->user)
			redisAppendCommand(o->c, "AUTH %s %s", o->user, o->password);
		else
			redisAppendCommand(o->c, "AUTH %s", o->password);
		h.cmd[h.n++] = "AUTH";
	}
	if (o->db >= 0) {
		redisAppendCommand(o->c, "SELECT %lld", o->db);
		h.cmd[h.n++] = "SELECT";
	}
	redisAppendCommand(o->c, "PING");
	h.cmd[h.n++] = "PING";
	size_t want = (size_t)h.n;

	h.n = 0;
	if (pump(o, want, isp_now_ns() + (int64_t)o->command_ms * 1000000,
		 on_handshake, &h, why, whylen) != 0) {
#ifdef HAVE_OPENSSL
		/* TLS 1.3: a refused client certificate is an alert read here */
		*auth_err = o->tconn && redis_tls_refused(o->tconn);
#endif
		goto fail;
	}
	if (h.bad >= 0) {
		snprintf(why, whylen, "%s", h.err);
		*auth_err = strcmp(h.cmd[h.bad], "PING") != 0;
		goto fail;
	}
	return 0;
fail:
	close_conn(o);
	return -1;
}

/* Connected afterwards? Logs the first failure of an outage and its end. */
static bool ensure_conn(struct redis_out *o)
{
	char why[256];
	bool auth_err;

	if (o->c)
		return true;
	if (try_connect(o, &auth_err, why, sizeof(why)) != 0) {
		if (!o->down)
			say(o, "%s; records wait in the queue, reconnecting", why);
		o->down = true;
		return false;
	}
	if (o->down)
		say(o, o->ever_connected ? "connected again" : "connected");
	if (o->ever_connected && o->ch)
		isp_channel_add_reconnects(o->ch, 1);
	o->ever_connected = true;
	if (o->ch)
		isp_channel_note_up(o->ch);
	o->down = false;
	return true;
}

/* ---- writing ------------------------------------------------------------ */

/* The replies come in the order of the ST_SENT records. */
struct batch_ctx { size_t next, n; bool has_err; };

/* Errors after which the same command may succeed later. */
static bool transient(const char *e)
{
	static const char *const words[] = {
		"LOADING", "BUSY", "TRYAGAIN", "MASTERDOWN", "READONLY", "OOM",
		"NOREPLICAS", "CLUSTERDOWN", "NOAUTH", "MISCONF", NULL
	};

	if (strncmp(e, "ERR max number of clients", 25) == 0)
		return true;    /* the server is about to close: reconnect */

	for (const char *const *w = words; *w; w++) {
		size_t n = strlen(*w);

		if (strncmp(e, *w, n) == 0 && (e[n] == ' ' || e[n] == '\0'))
			return true;
	}
	return false;
}

static void on_record_reply(struct redis_out *o, redisReply *r, void *arg)
{
	struct batch_ctx *b = arg;

	while (b->next < b->n && o->st[b->next] != ST_SENT)
		b->next++;
	if (b->next == b->n)
		return;                 /* cannot happen: one reply per command */
	if (r->type != REDIS_REPLY_ERROR) {
		o->st[b->next++] = ST_OK;
		return;
	}

	const char *e = r->str ? r->str : "error";
	bool again = transient(e);

	o->st[b->next++] = again ? ST_RETRY : ST_REJECTED;
	if (!b->has_err)
		snprintf(o->first_err, sizeof(o->first_err), "%s%s", e,
			 again ? " (will retry)" : "");
	b->has_err = true;
}

static uint64_t text_hash(const struct isp_record *r)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < r->len; i++)
		h = (h ^ (unsigned char)r->text[i]) * 1099511628211ull;
	return h ^ r->len;
}

/* Append the record's command to o->out; -1: out of memory. */
static int append_record(struct redis_out *o, const struct isp_record *r)
{
	if (key_for(o, r->report) != 0 ||
	    isp_bytes_room(&o->out, o->head.len + r->len + 26) != 0)
		return -1;
	buf_put(&o->out, o->head.p, o->head.len);
	buf_len(&o->out, '$', r->len);
	buf_put(&o->out, r->text, r->len);
	buf_put(&o->out, "\r\n", 2);
	return 0;
}

/* Log a batch's error replies: once per batch, and at most once a second
 * (a misconfigured key would otherwise log every batch). */
static void note_refused(struct redis_out *o, size_t n, size_t total)
{
	int64_t now = isp_now_ns();

	o->refused_unlogged += n;
	if (now - o->reject_logged_ns < REJECT_LOG_NS)
		return;
	say(o, "%zu of a batch of %zu records refused (%llu since the last "
	      "message): %s", n, total, (unsigned long long)o->refused_unlogged,
	      o->first_err);
	o->refused_unlogged = 0;
	o->reject_logged_ns = now;
}

static bool is_done(unsigned char s)
{
	return s == ST_OK || s == ST_REJECTED || s == ST_DONE_OK || s == ST_DONE_REJ;
}

/*
 * After a batch's replies: the records from the first that are done
 * (acknowledged or refused for good) are returned as delivered; the
 * outcome of the executed ones after the first left is kept in the memo
 * for when the layer offers them again. Acknowledgements are counted as
 * they arrive, refusals once their record has been returned.
 */
static size_t settle(struct redis_out *o, const struct isp_record *recs, size_t n)
{
	size_t k, ok = 0, rej = 0, again = 0;

	for (k = 0; k < n && is_done(o->st[k]); k++)
		o->lost_pending += o->st[k] == ST_REJECTED || o->st[k] == ST_DONE_REJ;
	for (size_t j = 0; j < n; j++) {
		unsigned char s = o->st[j];

		ok += s == ST_OK;
		rej += s == ST_REJECTED;
		again += s == ST_RETRY;
		if (j < k)
			continue;
		o->memo[j - k] = s == ST_OK || s == ST_DONE_OK ? ST_DONE_OK :
				 s == ST_REJECTED || s == ST_DONE_REJ ? ST_DONE_REJ : 0;
		if (o->memo[j - k])
			o->memo_n = j - k + 1;
	}
	if (o->memo_n) {
		o->memo_len = recs[k].len;
		o->memo_hash = text_hash(&recs[k]);
	}
	if (ok && o->ch)
		isp_channel_add_acked(o->ch, ok);
	o->rejected += rej;
	if (rej || again)
		note_refused(o, rej + again, n);
	return k;
}

/* Refused records the layer has counted delivered (write_batch returned
 * them): report them lost, so they end up in dropped. */
static void report_lost(struct redis_out *o)
{
	if (o->lost_pending && o->ch)
		isp_channel_add_lost(o->ch, o->lost_pending);
	o->lost_pending = 0;
}

/*
 * Pipeline the batch: append every record not already handled, write, read
 * one reply per record. Returns the records from the first that are done
 * (acknowledged or rejected for good); the first one left (unanswered or
 * refused for now) and everything after it are offered again by the
 * channel layer, which is when the memo skips those already executed.
 */
static size_t redis_write(void *state, const struct isp_record *recs, size_t n)
{
	struct redis_out *o = state;
	struct batch_ctx b = { .n = n };
	size_t sent = 0;
	char why[256];

	if (n > o->cap)
		n = o->cap;     /* the layer never gives more than `batch` */
	b.n = n;
	report_lost(o);         /* the previous call has returned */
	if (o->memo_n && (recs[0].len != o->memo_len || text_hash(&recs[0]) != o->memo_hash))
		o->memo_n = 0;  /* not the records it was kept for */
	if (!ensure_conn(o))
		return 0;
	o->out.len = 0;
	for (size_t j = 0; j < n; j++) {
		if (j < o->memo_n && o->memo[j]) {
			o->st[j] = o->memo[j];
			continue;
		}
		if (append_record(o, &recs[j]) != 0) {
			/* Out of memory: send what is appended, the rest later. */
			for (; j < n; j++)
				o->st[j] = ST_UNSENT;
			break;
		}
		o->st[j] = ST_SENT;
		sent++;
	}
	o->memo_n = 0;
	if (sent && redisAppendFormattedCommand(o->c, o->out.p, o->out.len) != REDIS_OK) {
		for (size_t j = 0; j < n; j++)
			o->st[j] = o->st[j] == ST_SENT ? ST_UNSENT : o->st[j];
		sent = 0;
	}
	/* A batch is not kept around: a burst must not pin its memory. */
	if (o->out.cap > (1u << 20)) {
		free(o->out.p);
		o->out = (struct isp_bytes){ 0 };
	}
	if (sent && pump(o, sent, isp_now_ns() + (int64_t)o->command_ms * 1000000,
			 on_record_reply, &b, why, sizeof(why)) != 0)
		drop_conn(o, why);
	return settle(o, recs, n);
}

/* Data or EOF on an idle connection: the server closed it (restart,
 * timeout, CLIENT KILL) or sent something no command asked for. Either
 * way the pipeline cannot be trusted: start a new connection. */
static void check_idle(struct redis_out *o)
{
	struct pollfd p = { .fd = o->c->fd, .events = POLLIN };

	if (!tls_pending(o) && poll(&p, 1, 0) <= 0)
		return;
#ifdef HAVE_OPENSSL
	if (o->tconn) {
		char why[200];
		if (!redis_tls_idle_ok(o->tconn, why, sizeof(why)))
			drop_conn(o, why);
		return;
	}
#endif
	drop_conn(o, redisBufferRead(o->c) != REDIS_OK && o->c->errstr[0] ?
		  o->c->errstr : "unexpected data from the server");
}

static int redis_flush(void *state)
{
	struct redis_out *o = state;

	report_lost(o);         /* the last flush comes after the last write */
	if (o->c)
		check_idle(o);
	return ensure_conn(o) ? 0 : -1;
}

const struct isp_channel_ops isp_redis_ops = {
	.type = "redis",
	.open = redis_open,
	.write_batch = redis_write,
	.flush = redis_flush,
	.close = redis_close,
	.connects = true,
};
