/*
 * redis_tls.h - TLS for the Redis channel (OpenSSL). hiredis 0.14, the
 * version Debian 12 ships, has no TLS: the channel keeps hiredis for what
 * it does well (commands formatted into the context's output buffer,
 * replies parsed by its reader) and moves the bytes itself, through an
 * SSL session on the context's socket, where hiredis would read() and
 * write(). Built when configure finds OpenSSL (Debian: libssl-dev).
 */
#ifndef ISP_OUTPUTS_REDIS_TLS_H
#define ISP_OUTPUTS_REDIS_TLS_H

#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct redis_tls;       /* the settings: one per channel */
struct redis_tls_conn;  /* a session: one per connection */

struct redis_tls_cfg {
	const char *ca_file, *ca_dir;   /* NULL: the system's CAs */
	const char *cert_file, *key_file;       /* a client certificate, or NULL */
	const char *server_name;        /* checked and sent (SNI); NULL: the host */
	bool verify;                    /* false: any certificate (tests only) */
};

/* The settings, files read now: NULL with the reason in err and, in
 * *bad, which of the files it was (0 CA, 1 certificate, 2 key, -1 none). */
struct redis_tls *redis_tls_new(const struct redis_tls_cfg *cfg, const char *host, int *bad,
				char *err, size_t errlen);
void redis_tls_free(struct redis_tls *t);
/* "OpenSSL 3.0.19 ..." (intspect -V). */
const char *redis_tls_version(void);

/* A session over the connected socket fd, handshake done before
 * deadline_ns (isp_now_ns). NULL with why; *cert_err when the server's
 * certificate was refused or it refused ours (a setting to fix, not an
 * outage). */
struct redis_tls_conn *redis_tls_connect(struct redis_tls *t, int fd, int64_t deadline_ns,
					 bool *cert_err, char *why, size_t whylen);
void redis_tls_close(struct redis_tls_conn *s);

/* What redisBufferWrite and redisBufferRead do, through the session: 0,
 * or -1 with c->err and c->errstr set. *done: nothing left to write. */
int redis_tls_write(struct redis_tls_conn *s, redisContext *c, int *done);
int redis_tls_read(struct redis_tls_conn *s, redisContext *c);
/* Decrypted bytes waiting in the session (no poll would show them). */
bool redis_tls_pending(const struct redis_tls_conn *s);
/* The last read or write could not go on before the socket is writable
 * (a TLS record half sent): poll for POLLOUT too. */
bool redis_tls_wants_write(const struct redis_tls_conn *s);
/* A read or write failed in TLS itself (an alert: the server refused our
 * certificate), not on the socket. */
bool redis_tls_refused(const struct redis_tls_conn *s);
/* An idle connection was readable: 1 when what came was only TLS's own
 * (a session ticket), 0 when the server closed it or sent data, with
 * why. */
int redis_tls_idle_ok(struct redis_tls_conn *s, char *why, size_t whylen);

#endif
