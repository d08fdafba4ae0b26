/*
 * redis_int.h - what the two halves of the Redis channel share: the
 * writer (redis.c: connection, pipelining, replies) and the set-up
 * (redis_open.c: keys, open, close).
 */
#ifndef ISP_OUTPUTS_REDIS_INT_H
#define ISP_OUTPUTS_REDIS_INT_H

#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bytes.h"
#include "channel.h"
#include "kv.h"

struct redis_tls;
struct redis_tls_conn;

enum redis_mode { MODE_PUBLISH, MODE_LPUSH, MODE_RPUSH, MODE_XADD };

/* What became of one record of the batch being written. */
enum rec_state {
	ST_UNSENT,      /* not written, or written and never answered */
	ST_SENT,        /* written, reply pending */
	ST_OK,          /* acknowledged */
	ST_REJECTED,    /* refused for good: not retried, counted lost */
	ST_RETRY,       /* refused for now */
	ST_DONE_OK,     /* acknowledged in an earlier call (memo) */
	ST_DONE_REJ,    /* refused for good in an earlier call (memo) */
};

/* A growable byte string. */

struct redis_out {
	char *name;                     /* channel name, for messages */
	char *host;                     /* or the Unix socket path */
	int port;
	bool unix_sock;
	char *user, *password;          /* NULL: no AUTH */
	long long db;                   /* -1: no SELECT */
	unsigned connect_ms, command_ms;
	enum redis_mode mode;
	char maxlen[24];                /* "" : no MAXLEN */
	char *field;                    /* XADD field name */
	struct isp_channel *ch;

	/* Key: the template, and its expansion for the last report seen;
	 * head: the command in RESP up to the record (for that key); out:
	 * the batch's commands, handed to hiredis in one piece. */
	char *tmpl;
	bool per_report;
	struct isp_bytes key, head, out;
	char *key_report;               /* report name key was expanded for */

	redisContext *c;                /* NULL: not connected */
	struct redis_tls *tls;          /* NULL: no TLS */
	struct redis_tls_conn *tconn;   /* with tls: the session of c */
	bool ever_connected;
	bool down;                      /* an outage was logged; log its end */
	char where[300];                /* "host:port" or the path, for messages */

	unsigned char *st;              /* per record of a batch */
	size_t cap;                     /* = the channel's batch size */
	/* Outcome of records after the first retried one (see write). */
	unsigned char *memo;            /* 0, ST_DONE_OK or ST_DONE_REJ */
	size_t memo_n, memo_len;
	uint64_t memo_hash;
	uint64_t lost_pending;          /* refused, returned, not yet reported */

	uint64_t rejected;              /* refused for good, in all */
	uint64_t refused_unlogged;      /* refusals since the last log line */
	int64_t reject_logged_ns;
	char first_err[200];            /* of the batch being written */
};

void say(const struct redis_out *o, const char *fmt, ...) ISP_KV_PRINTF(2, 3);
int check_template(const char *t, bool *per_report, char *err, size_t errlen);
int try_connect(struct redis_out *o, bool *auth_err, char *why, size_t whylen);
/* Close the connection (and its TLS session), quietly. */
void close_conn(struct redis_out *o);
int redis_open(void **state, const struct isp_channel_cfg *cfg, int *bad_kv, char *err,
	       size_t errlen);
void redis_close(void *state);

#endif
