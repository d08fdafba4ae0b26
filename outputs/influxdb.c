/*
 * influxdb.c - channel type "influxdb": records of InfluxDB line protocol
 * (one line each, written so by the engine for every rule that writes to
 * such a channel) to an InfluxDB 1.x server, over HTTP (POST /write, the
 * default) or to its UDP listener. This part writes; the HTTP client is
 * influxdb_http.c, keys, open and close influxdb_open.c.
 *
 * HTTP. A batch (up to `batch` records) is one POST /write?db=&precision=ns
 * of its lines joined by '\n', or several when it is larger than max-body
 * bytes. The status decides what became of the records:
 *   2xx                    delivered;
 *   400, 413, other 3xx and 4xx   refused for good: InfluxDB stored the lines it
 *                          could (a 400 is a "partial write") but does not
 *                          say which, so the whole request counts as
 *                          dropped (returned as done, then reported lost:
 *                          offering it again would fail again), said with
 *                          the server's text at most once a second, and
 *                          totalled at close;
 *   404 database not found dropped the same way, naming the database; with
 *                          create-database = true, the database is created
 *                          and the request sent again;
 *   500 retention policy not found   dropped the same way;
 *   401, 403, 408, 429, other 5xx,   not now: the records are left to the
 *   no answer (refused, reset, timeout)   channel layer, which offers them
 *                          again with its backoff; the outage is said once,
 *                          and its end.
 * A request sent again after a lost answer may store its points twice over:
 * InfluxDB keeps one point per measurement, tag set and timestamp, so the
 * second write replaces the first with the same values.
 *
 * UDP. Lines are packed into datagrams of at most udp-payload bytes (a line
 * longer than that goes alone, up to 65507 bytes; a longer one cannot be
 * sent and is counted dropped) and sent on a connected socket. There is no
 * acknowledgement: delivered means sent. An ICMP port unreachable (nothing
 * listens) shows as ECONNREFUSED on a later send; that datagram is sent
 * again, the earlier ones are lost unseen.
 *
 * A record that is not one line (empty, or with a line break) would be no
 * point or two: it is not sent and counts as dropped.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "builtin.h"
#include "influxdb_int.h"
#include "queue.h"      /* isp_now_ns */

#define REJECT_LOG_NS (1000 * 1000000LL)
#define PROBE_EVERY_NS (1000 * 1000000LL)
#define UDP_REFUSED_MAX 3               /* ICMP errors in a row before backing off */

void ifx_say(const struct ifx_out *o, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "intspect: channel %s: influxdb %s: %s\n", o->name, o->where, msg);
}


/* ---- states: up, down ---------------------------------------------------------- */

void ifx_reached(struct ifx_out *o)
{
	if (!o->reached && o->ch)
		isp_channel_note_up(o->ch);
	o->reached = true;
}

void ifx_now_up(struct ifx_out *o)
{
	if (o->down)
		ifx_say(o, o->ever_up ? "writing again" : "connected");
	o->down = false;
	o->ever_up = true;
	o->last_err[0] = '\0';
}

void ifx_outage(struct ifx_out *o, const char *why)
{
	snprintf(o->last_err, sizeof(o->last_err), "%s", why);
	if (!o->down)
		ifx_say(o, "%s; records wait in the queue, retrying", why);
	o->down = true;
}

/* Refused records that write_batch has returned: report them lost (they
 * move from delivered to dropped), now that the layer counted them. */
static void report_lost(struct ifx_out *o)
{
	if (o->lost_pending && o->ch)
		isp_channel_add_lost(o->ch, o->lost_pending);
	o->lost_pending = 0;
}

/* n records refused by the server, with its reason: counted, said at most
 * once a second. */
static void refused(struct ifx_out *o, size_t n, const char *what)
{
	int64_t now = isp_now_ns();

	o->lost_pending += n;
	o->rejected += n;
	o->rejected_unlogged += n;
	if (now - o->reject_logged_ns < REJECT_LOG_NS && o->reject_logged_ns)
		return;
	if (o->rejected_unlogged > n)
		ifx_say(o, "%s (%llu since the last message)", what,
			(unsigned long long)o->rejected_unlogged);
	else
		ifx_say(o, "%s", what);
	o->rejected_unlogged = 0;
	o->reject_logged_ns = now;
}

/* A record that is not one line of line protocol, or too long for any
 * datagram: not sent, counted dropped. */
static bool sendable(const struct isp_record *r)
{
	return r->len > 0 && !memchr(r->text, '\n', r->len);
}

static void unsendable(struct ifx_out *o, const struct isp_record *r, const char *why)
{
	if (o->unsendable++ == 0)
		ifx_say(o, "a record of %zu bytes %s: not sent, counted dropped (said once)",
			r->len, why);
	o->lost_pending++;
}

/* ---- HTTP ----------------------------------------------------------------------- */

static bool db_not_found(const struct ifx_resp *r)
{
	return r->status == 404 && strstr(r->error, "database not found");
}

/* CREATE DATABASE "db": 0, or -1 with why. */
static int create_database(struct ifx_out *o, char *why, size_t whylen)
{
	struct isp_bytes q = { 0 }, path = { 0 };
	struct ifx_resp r;
	int rc = -1;

	if (isp_bytes_room(&q, strlen(o->db) * 2 + 32) == 0) {
		q.len = (size_t)sprintf(q.p, "CREATE DATABASE \"");
		for (const char *s = o->db; *s; s++) {
			if (*s == '"' || *s == '\\')
				q.p[q.len++] = '\\';
			q.p[q.len++] = *s;
		}
		q.p[q.len++] = '"';
		q.p[q.len] = '\0';
		if (isp_bytes_room(&path, 12) == 0) {
			path.len = (size_t)sprintf(path.p, "/query?q=");
			if (ifx_urlencode(&path, q.p) == 0)
				rc = 0;
		}
	}
	if (rc != 0) {
		snprintf(why, whylen, "out of memory");
	} else if (ifx_http_request(o, "POST", path.p, "", 0, &r, why, whylen) != 0) {
		rc = -1;
	} else if (r.status / 100 != 2 || strstr(r.body, "\"error\"")) {
		char e[300] = "";

		if (r.status / 100 == 2)        /* 200 with {"results":[{"error":...}]} */
			snprintf(e, sizeof(e), "%s", strstr(r.body, "\"error\""));
		snprintf(why, whylen, "CREATE DATABASE: HTTP %d: %s", r.status,
			 r.status / 100 == 2 ? e : r.error);
		rc = -1;
	} else {
		ifx_say(o, "created database \"%s\"", o->db);
	}
	free(q.p);
	free(path.p);
	return rc;
}

int ifx_probe(struct ifx_out *o, struct ifx_resp *resp, char *why, size_t whylen)
{
	/* An empty write: InfluxDB checks the credentials, the database and
	 * the retention policy, and stores nothing. */
	if (ifx_http_request(o, "POST", o->write_path, "", 0, resp, why, whylen) != 0)
		return -1;
	if (db_not_found(resp) && o->create_db) {
		if (create_database(o, why, whylen) != 0)
			return -1;
		if (ifx_http_request(o, "POST", o->write_path, "", 0, resp, why, whylen) != 0)
			return -1;
	}
	if (resp->status / 100 == 2)
		return 0;
	snprintf(why, whylen, "HTTP %d: %s", resp->status, resp->error);
	return 1;
}

enum outcome { OUT_OK, OUT_DROPPED, OUT_RETRY };

int ifx_gzip(struct ifx_out *o)
{
	z_stream *z = o->zs;

	if (!z) {
		if (!(z = calloc(1, sizeof(*z))))
			return -1;
		/* level 1: most of the gain on repetitive lines, at little CPU;
		 * windowBits 15 + 16: a gzip header and trailer */
		if (deflateInit2(z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
			free(z);
			return -1;
		}
		o->zs = z;
	} else if (deflateReset(z) != Z_OK) {
		return -1;
	}
	size_t bound = deflateBound(z, (uLong)o->body.len);
	o->zbody.len = 0;
	if (isp_bytes_room(&o->zbody, bound) != 0)
		return -1;
	z->next_in = (Bytef *)o->body.p;
	z->avail_in = (uInt)o->body.len;
	z->next_out = (Bytef *)o->zbody.p;
	z->avail_out = (uInt)bound;
	if (deflate(z, Z_FINISH) != Z_STREAM_END)
		return -1;
	o->zbody.len = bound - z->avail_out;
	return 0;
}

/* POST o->body (gzip-compressed with gzip = true), n records: what became
 * of them. */
static enum outcome post(struct ifx_out *o, size_t n)
{
	struct ifx_resp r;
	char why[512], what[768];
	const char *body = o->body.p;
	size_t len = o->body.len;
	int s;

	if (o->gzip) {
		if (ifx_gzip(o) != 0) {
			refused(o, n, "gzip failed (out of memory)");
			return OUT_DROPPED;
		}
		body = o->zbody.p;
		len = o->zbody.len;
		o->raw_bytes += o->body.len;
		o->gz_bytes += len;
	}
	for (int attempt = 0;; attempt++) {
		o->gz_now = o->gzip;
		int rc = ifx_http_request(o, "POST", o->write_path, body, len, &r, why, sizeof(why));
		o->gz_now = false;
		if (rc != 0) {
			ifx_outage(o, why);
			return OUT_RETRY;
		}
		if (!db_not_found(&r) || !o->create_db || attempt > 0)
			break;
		if (create_database(o, why, sizeof(why)) != 0) {
			ifx_outage(o, why);
			return OUT_RETRY;
		}
	}
	s = r.status;
	if (s / 100 == 2) {
		ifx_now_up(o);
		return OUT_OK;
	}
	if (s == 401 || s == 403 || s == 408 || s == 429 ||
	    (s / 100 == 5 && !strstr(r.error, "retention policy not found"))) {
		snprintf(why, sizeof(why), "HTTP %d: %s", s, r.error);
		ifx_outage(o, why);
		return OUT_RETRY;
	}
	/* The server answered, and will answer the same again: the records
	 * are dropped rather than retried for ever. */
	if (db_not_found(&r))
		snprintf(what, sizeof(what), "database \"%s\" not found: %zu record(s) dropped "
			 "(CREATE DATABASE \"%s\", or create-database = true)", o->db, n, o->db);
	else if (s == 413)
		snprintf(what, sizeof(what), "HTTP 413: a request of %zu bytes is too large for "
			 "the server (its max-body-size): %zu record(s) dropped; lower max-body",
			 o->body.len, n);
	else if (s == 400 && n > 1)
		snprintf(what, sizeof(what), "HTTP 400: %s: InfluxDB stored the valid lines of "
			 "these %zu but says not which, so all count as dropped", r.error, n);
	else
		snprintf(what, sizeof(what), "HTTP %d: %s: %zu record(s) dropped", s, r.error, n);
	if (o->down)            /* it answers: the outage is over */
		ifx_say(o, "answering again");
	o->down = false;
	refused(o, n, what);
	return OUT_DROPPED;
}

static size_t http_write(struct ifx_out *o, const struct isp_record *recs, size_t n)
{
	size_t done = 0;

	while (done < n) {
		size_t k = done;

		o->body.len = 0;
		for (; k < n; k++) {
			const struct isp_record *r = &recs[k];

			if (!sendable(r)) {
				if (k > done)
					break;          /* sent after the request */
				unsendable(o, r, "is not one line of line protocol");
				done++;
				continue;
			}
			if (o->body.len && o->body.len + 1 + r->len > o->max_body)
				break;
			if (isp_bytes_room(&o->body, r->len + 2) != 0)
				break;          /* out of memory: what is there */
			if (o->body.len)
				o->body.p[o->body.len++] = '\n';
			memcpy(o->body.p + o->body.len, r->text, r->len);
			o->body.len += r->len;
		}
		if (k == done) {
			if (done < n)
				break;          /* out of memory: later */
			continue;               /* unsendable ones only */
		}
		if (post(o, k - done) == OUT_RETRY)
			break;
		done = k;
	}
	/* a record far above max-body must not pin its memory */
	if (o->body.cap > 2 * o->max_body + 65536) {
		free(o->body.p);
		o->body = (struct isp_bytes){ 0 };
	}
	return done;
}

/* ---- UDP ------------------------------------------------------------------------ */

int ifx_udp_connect(struct ifx_out *o)
{
	char why[300];

	o->fd = ifx_connect(o, SOCK_DGRAM, why, sizeof(why));
	if (o->fd < 0) {
		ifx_outage(o, why);
		return -1;
	}
	if (o->connected_once && o->ch)
		isp_channel_add_reconnects(o->ch, 1);
	o->connected_once = true;
	/* UDP cannot tell whether anyone listens: a socket with a route is
	 * as far as it goes. */
	ifx_reached(o);
	ifx_now_up(o);
	return 0;
}

/* Send o->body as one datagram: 1 sent, 0 not now (the layer backs off),
 * -1 refused by an ICMP error (send again). */
static int udp_send(struct ifx_out *o, int64_t deadline)
{
	char why[300];

	for (;;) {
		if (send(o->fd, o->body.p, o->body.len, MSG_NOSIGNAL | MSG_DONTWAIT) >= 0)
			return 1;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			struct pollfd p = { .fd = o->fd, .events = POLLOUT };
			int64_t left = deadline - isp_now_ns();

			if (left <= 0 || poll(&p, 1, (int)((left + 999999) / 1000000)) <= 0)
				return 0;
			continue;
		}
		if (errno == ECONNREFUSED) {
			if (o->udp_refused++ == 0)
				ifx_say(o, "ICMP port unreachable: nothing listens on UDP port %s "
					"(the datagrams sent meanwhile are lost; said once)", o->port);
			return -1;
		}
		snprintf(why, sizeof(why), "send: %s", strerror(errno));
		ifx_outage(o, why);
		ifx_disconnect(o);
		return 0;
	}
}

static size_t udp_write(struct ifx_out *o, const struct isp_record *recs, size_t n)
{
	int64_t deadline = isp_now_ns() + (int64_t)o->timeout_ms * 1000000;
	size_t done = 0;
	int refusals = 0;

	if (o->fd < 0 && ifx_udp_connect(o) != 0)
		return 0;
	while (done < n) {
		size_t k = done;

		o->body.len = 0;
		for (; k < n; k++) {
			const struct isp_record *r = &recs[k];
			bool ok = sendable(r) && r->len <= IFX_UDP_MAX;

			if (!ok) {
				if (k > done)
					break;
				unsendable(o, r, sendable(r) ? "does not fit in a datagram" :
					   "is not one line of line protocol");
				done++;
				continue;
			}
			if (o->body.len && o->body.len + 1 + r->len > o->udp_payload)
				break;
			if (o->body.len)
				o->body.p[o->body.len++] = '\n';
			memcpy(o->body.p + o->body.len, r->text, r->len);
			o->body.len += r->len;
		}
		if (k == done) {
			if (done < n)
				break;
			continue;
		}
		int rc = udp_send(o, deadline);

		if (rc == 0)
			break;
		if (rc < 0) {
			if (++refusals > UDP_REFUSED_MAX)
				break;
			continue;               /* the same datagram again */
		}
		refusals = 0;
		if (o->down)
			ifx_now_up(o);
		done = k;
	}
	return done;
}

/* ---- the channel ---------------------------------------------------------------- */

static size_t ifx_write(void *state, const struct isp_record *recs, size_t n)
{
	struct ifx_out *o = state;

	report_lost(o);         /* the previous call has returned */
	return o->transport == IFX_UDP ? udp_write(o, recs, n) : http_write(o, recs, n);
}

static int ifx_flush(void *state)
{
	struct ifx_out *o = state;
	int64_t now = isp_now_ns();

	report_lost(o);         /* the last flush comes after the last write */
	if (o->transport == IFX_UDP)
		return o->fd >= 0 ? 0 : -1;
	ifx_http_check_idle(o);
	/* Down, or never reached, with nothing to write: see whether the
	 * server is back (at most once a second), so that the end of an
	 * outage is said, and a run without records knows it was reached. */
	if ((o->down || !o->reached) && now >= o->next_probe_ns) {
		struct ifx_resp r;
		char why[512];

		o->next_probe_ns = now + PROBE_EVERY_NS;
		if (ifx_probe(o, &r, why, sizeof(why)) == 0)
			ifx_now_up(o);
		else
			ifx_outage(o, why);
	}
	return o->down ? -1 : 0;
}

const struct isp_channel_ops isp_influxdb_ops = {
	.type = "influxdb",
	.open = ifx_open,
	.write_batch = ifx_write,
	.flush = ifx_flush,
	.close = ifx_close,
	.connects = true,
	.says_never_connected = true,
	.format = ISP_REC_INFLUX,
};
