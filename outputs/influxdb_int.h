/*
 * influxdb_int.h - what the three parts of the InfluxDB channel share: the
 * writer (influxdb.c: batches into POSTs or datagrams, outcomes, counters),
 * the HTTP/1.1 client (influxdb_http.c: connection, request, response) and
 * the set-up (influxdb_open.c: keys, the first request, close).
 */
#ifndef ISP_OUTPUTS_INFLUXDB_INT_H
#define ISP_OUTPUTS_INFLUXDB_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bytes.h"
#include "channel.h"
#include "kv.h"

enum ifx_transport { IFX_HTTP, IFX_UDP };

#define IFX_UDP_MAX 65507               /* 65535 - 20 (IPv4) - 8 (UDP) */

/* A growable byte string. */

struct ifx_out;
/* Compress o->body into o->zbody (gzip); -1: out of memory or zlib. */
int ifx_gzip(struct ifx_out *o);

/* An HTTP response, as far as the channel needs it. */
struct ifx_resp {
	int status;
	char error[400];        /* X-Influxdb-Error, the body's "error", or the body */
	char *body;             /* the body (NUL-terminated), in the client's buffer */
	size_t body_len;
};

struct ifx_out {
	char *name;                     /* channel name, for messages */
	enum ifx_transport transport;
	char *host;
	char port[8];
	char *db, *rp;                  /* rp NULL: the database's default */
	char *auth;                     /* "Basic ..." or NULL */
	unsigned timeout_ms;
	bool create_db;
	bool gzip;                      /* bodies sent gzip-compressed */
	bool gz_now;                    /* the request being built is */
	void *zs;                       /* its z_stream, reset per request */
	struct isp_bytes zbody;         /* the compressed body */
	uint64_t raw_bytes, gz_bytes;   /* line protocol, and what went out for it */
	size_t max_body, udp_payload;
	struct isp_channel *ch;
	char where[300];                /* "127.0.0.1:8086", for messages */
	char host_hdr[300];             /* Host: */
	char *write_path;               /* /write?db=...&precision=ns[&rp=...] */

	/* the connection (a connected UDP socket with udp) */
	int fd;                         /* -1: none */
	unsigned requests;              /* answered on this connection */
	bool connected_once;            /* later connections count as reconnects */
	bool reached;                   /* the server answered (udp: a socket) */
	bool ever_up;                   /* it took a write */
	bool down;                      /* an outage was said; say its end */
	int64_t next_probe_ns;          /* flush: no probe before */
	char last_err[300];             /* why the last attempt failed */

	struct isp_bytes head, body, in;  /* request head, request body, response */

	/* records refused (by the server, or not sendable): returned as done
	 * by write_batch, reported lost at the next call */
	uint64_t lost_pending;
	uint64_t rejected;              /* by the server, in all */
	uint64_t rejected_unlogged;
	int64_t reject_logged_ns;
	uint64_t unsendable;            /* records no request or datagram can carry */
	uint64_t udp_refused;           /* ICMP port unreachable seen */
};

/* influxdb.c */
void ifx_say(const struct ifx_out *o, const char *fmt, ...) ISP_KV_PRINTF(2, 3);
/* The server answered a request (or, over UDP, a socket is ready): the
 * channel reached its service (isp_channel_note_up). */
void ifx_reached(struct ifx_out *o);
/* It took a write (or the empty one of open and flush): say the end of an
 * outage. */
void ifx_now_up(struct ifx_out *o);
/* Not now: remember why, say it once per outage. */
void ifx_outage(struct ifx_out *o, const char *why);
/* UDP: a connected socket (counted as a reconnect after the first); 0, or
 * -1 after ifx_outage. */
int ifx_udp_connect(struct ifx_out *o);
/* The empty write that checks server, credentials, database and retention
 * policy (and creates the database with create-database): 0 reached and
 * writable, 1 reached and refused (resp says why), -1 not reached (why). */
int ifx_probe(struct ifx_out *o, struct ifx_resp *resp, char *why, size_t whylen);

/* influxdb_http.c: the HTTP/1.1 client. A request on the open connection
 * (a new one if there is none, or if a kept-alive one turns out closed),
 * the whole exchange bounded by timeout-ms after connecting. 0 with the
 * response, or -1 with why (the connection is then closed). */
int ifx_http_request(struct ifx_out *o, const char *method, const char *path,
		     const char *body, size_t len, struct ifx_resp *resp,
		     char *why, size_t whylen);
/* Resolve and connect a socket of `type` (SOCK_STREAM, SOCK_DGRAM) within
 * timeout-ms: the fd, or -1 with why. */
int ifx_connect(struct ifx_out *o, int type, char *why, size_t whylen);
void ifx_disconnect(struct ifx_out *o);
/* An idle kept-alive connection the server closed: close it. */
void ifx_http_check_idle(struct ifx_out *o);
/* Percent-encode s (a query-string value) onto b; -1: out of memory. */
int ifx_urlencode(struct isp_bytes *b, const char *s);
/* "Basic " + base64(user:password), malloc'd. */
char *ifx_basic_auth(const char *user, const char *password);

/* influxdb_open.c */
int ifx_open(void **state, const struct isp_channel_cfg *cfg, int *bad_kv,
	     char *err, size_t errlen);
void ifx_close(void *state);

#endif
