/*
 * redis_tls.c - see redis_tls.h.
 */
#include "redis_tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hiredis/sds.h>

#include "queue.h"        /* isp_now_ns */

struct redis_tls {
	SSL_CTX *ctx;
	char *name;             /* checked in the certificate */
	bool name_is_ip;        /* an address: checked, not sent as SNI */
	bool verify;
};

struct redis_tls_conn {
	SSL *ssl;
	bool want_write;
	bool refused;           /* a TLS protocol failure (redis_tls_refused) */
};

/* OpenSSL's reason for the last failure ("key values mismatch", not its
 * "error:05800074:x509 certificate routines::" prefix), or `fallback`. */
static void ssl_reason(char *out, size_t len, const char *fallback)
{
	unsigned long e = ERR_peek_last_error();
	const char *r = e ? ERR_reason_error_string(e) : NULL;

	snprintf(out, len, "%s", r ? r : fallback);
	ERR_clear_error();
}

/* A file the settings name, readable? OpenSSL's own word for a missing
 * file is "system lib". */
static bool readable(const char *path, const char *what, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");

	if (f) {
		fclose(f);
		return true;
	}
	snprintf(err, errlen, "cannot load %s %s: %s", what, path, strerror(errno));
	return false;
}

static bool is_ip(const char *s)
{
	unsigned char buf[16];

	return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

struct redis_tls *redis_tls_new(const struct redis_tls_cfg *cfg, const char *host, int *bad,
				char *err, size_t errlen)
{
	struct redis_tls *t = calloc(1, sizeof(*t));
	char why[256];

	*bad = -1;
	if (!t || !(t->name = strdup(cfg->server_name ? cfg->server_name : host))) {
		free(t);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	t->name_is_ip = is_ip(t->name);
	t->verify = cfg->verify;
	ERR_clear_error();
	t->ctx = SSL_CTX_new(TLS_client_method());
	if (!t->ctx) {
		ssl_reason(why, sizeof(why), "cannot start TLS");
		snprintf(err, errlen, "TLS: %s", why);
		goto fail;
	}
	SSL_CTX_set_min_proto_version(t->ctx, TLS1_2_VERSION);
	/* hiredis may move and grow its output buffer between two tries of
	 * one write; partial writes let it shrink from the front */
	SSL_CTX_set_mode(t->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
			 SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	if (cfg->ca_file || cfg->ca_dir) {
		*bad = 0;
		if (cfg->ca_file && !readable(cfg->ca_file, "the CA certificates", err, errlen))
			goto fail;
		if (SSL_CTX_load_verify_locations(t->ctx, cfg->ca_file, cfg->ca_dir) != 1) {
			*bad = 0;
			ssl_reason(why, sizeof(why), "cannot read");
			snprintf(err, errlen, "cannot load the CA certificates %s: %s",
				 cfg->ca_file ? cfg->ca_file : cfg->ca_dir, why);
			goto fail;
		}
	} else {
		SSL_CTX_set_default_verify_paths(t->ctx);
	}
	if (cfg->cert_file) {
		*bad = 1;
		if (!readable(cfg->cert_file, "the certificate", err, errlen))
			goto fail;
		if (SSL_CTX_use_certificate_chain_file(t->ctx, cfg->cert_file) != 1) {
			ssl_reason(why, sizeof(why), "cannot read");
			snprintf(err, errlen, "cannot load the certificate %s: %s", cfg->cert_file, why);
			goto fail;
		}
		const char *key = cfg->key_file ? cfg->key_file : cfg->cert_file;
		*bad = cfg->key_file ? 2 : 1;
		if (!readable(key, "the private key", err, errlen))
			goto fail;
		if (SSL_CTX_use_PrivateKey_file(t->ctx, key, SSL_FILETYPE_PEM) != 1 ||
		    SSL_CTX_check_private_key(t->ctx) != 1) {
			ssl_reason(why, sizeof(why), "cannot read");
			snprintf(err, errlen, "cannot load the private key %s: %s", key, why);
			goto fail;
		}
	}
	*bad = -1;
	SSL_CTX_set_verify(t->ctx, t->verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, NULL);
	return t;
fail:
	redis_tls_free(t);
	return NULL;
}

const char *redis_tls_version(void)
{
	return OpenSSL_version(OPENSSL_VERSION);
}

void redis_tls_free(struct redis_tls *t)
{
	if (!t)
		return;
	SSL_CTX_free(t->ctx);
	free(t->name);
	free(t);
}

/* Why a handshake failed: the certificate check's verdict when it was
 * the certificate, else OpenSSL's reason. */
static void handshake_reason(SSL *ssl, int rc, char *why, size_t whylen, bool *cert_err)
{
	int e = SSL_get_error(ssl, rc);
	long v = SSL_get_verify_result(ssl);
	char r[200];

	if (v != X509_V_OK) {
		*cert_err = true;
		ERR_clear_error();
		snprintf(why, whylen, "TLS: the server's certificate: %s",
			 X509_verify_cert_error_string(v));
	} else if (e == SSL_ERROR_SSL) {
		/* the protocol failed (the server refused our certificate, or
		 * does not speak TLS): settings to fix, not an outage */
		*cert_err = true;
		ssl_reason(r, sizeof(r), "handshake failed");
		snprintf(why, whylen, "TLS: %s", r);
	} else {
		ssl_reason(r, sizeof(r), errno ? strerror(errno) : "the server closed the connection");
		snprintf(why, whylen, "TLS handshake: %s", r);
	}
}

/* TLS 1.3 ends the client's handshake before the server has checked the
 * client's certificate: its verdict comes next, an alert or the session
 * tickets an OpenSSL server sends at once. Waiting for it (SSL_peek:
 * nothing consumed) makes a refusal a clear error at connect rather than
 * a reset on the first write. 0, or -1 with why. */
#define SETTLE_NS 200000000     /* a server that sends no ticket: 0.2 s at most */

static int settle(struct redis_tls_conn *s, int fd, int64_t deadline_ns, bool *cert_err,
		  char *why, size_t whylen)
{
	int64_t until = isp_now_ns() + SETTLE_NS;
	char b[1];

	if (SSL_version(s->ssl) < TLS1_3_VERSION)
		return 0;
	if (until > deadline_ns)
		until = deadline_ns;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int64_t left = until - isp_now_ns();
	if (left <= 0 || poll(&p, 1, (int)((left + 999999) / 1000000)) <= 0)
		return 0;       /* nothing said: refusals come at once */
	ERR_clear_error();
	errno = 0;
	int n = SSL_peek(s->ssl, b, sizeof(b));
	if (n > 0)
		return 0;
	int e = SSL_get_error(s->ssl, n);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
		return 0;       /* the tickets: accepted */
	if (e == SSL_ERROR_SSL) {
		char r[100];
		*cert_err = true;
		ssl_reason(r, sizeof(r), "refused");
		snprintf(why, whylen, "TLS: the server ended the session: %s", r);
	} else {
		snprintf(why, whylen, "TLS: the server closed the connection after the handshake");
	}
	return -1;
}

struct redis_tls_conn *redis_tls_connect(struct redis_tls *t, int fd, int64_t deadline_ns,
					 bool *cert_err, char *why, size_t whylen)
{
	struct redis_tls_conn *s = calloc(1, sizeof(*s));

	*cert_err = false;
	ERR_clear_error();
	if (!s || !(s->ssl = SSL_new(t->ctx)) || SSL_set_fd(s->ssl, fd) != 1 ||
	    SSL_set_app_data(s->ssl, s) != 1) {
		snprintf(why, whylen, "TLS: out of memory");
		goto fail;
	}
	if (t->verify) {
		X509_VERIFY_PARAM *p = SSL_get0_param(s->ssl);
		if ((t->name_is_ip ? X509_VERIFY_PARAM_set1_ip_asc(p, t->name) :
		     X509_VERIFY_PARAM_set1_host(p, t->name, 0)) != 1) {
			snprintf(why, whylen, "TLS: cannot check the name %s", t->name);
			goto fail;
		}
	}
	if (!t->name_is_ip)
		SSL_set_tlsext_host_name(s->ssl, t->name);
	for (;;) {
		errno = 0;
		int rc = SSL_connect(s->ssl);
		if (rc == 1)
			return settle(s, fd, deadline_ns, cert_err, why, whylen) == 0 ? s :
				(redis_tls_close(s), NULL);
		int e = SSL_get_error(s->ssl, rc);
		if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
			handshake_reason(s->ssl, rc, why, whylen, cert_err);
			goto fail;
		}
		struct pollfd p = { .fd = fd, .events = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT };
		int64_t left = deadline_ns - isp_now_ns();
		if (left <= 0) {
			snprintf(why, whylen, "no TLS handshake within the connect timeout");
			goto fail;
		}
		if (poll(&p, 1, (int)((left + 999999) / 1000000)) < 0 && errno != EINTR) {
			snprintf(why, whylen, "poll: %s", strerror(errno));
			goto fail;
		}
	}
fail:
	redis_tls_close(s);
	return NULL;
}

void redis_tls_close(struct redis_tls_conn *s)
{
	if (!s)
		return;
	SSL_free(s->ssl);       /* no close_notify: the socket closes with hiredis's context */
	free(s);
}

/* TLS 1.3 finishes the client's handshake before the server checks its
 * certificate: a refusal comes as an alert on the first read. */
static void s_refused_mark(SSL *ssl, int e)
{
	struct redis_tls_conn *s = SSL_get_app_data(ssl);

	if (s && e == SSL_ERROR_SSL)
		s->refused = true;
}

static int io_error(redisContext *c, SSL *ssl, int rc, const char *what)
{
	int e = SSL_get_error(ssl, rc);
	char r[88];     /* c->errstr holds 128 */

	c->err = e == SSL_ERROR_ZERO_RETURN ? REDIS_ERR_EOF : REDIS_ERR_IO;
	s_refused_mark(ssl, e);
	if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && errno == 0)) {
		snprintf(c->errstr, sizeof(c->errstr), "Server closed the connection");
	} else if (e == SSL_ERROR_SSL) {
		ssl_reason(r, sizeof(r), "error");
		snprintf(c->errstr, sizeof(c->errstr), "TLS: the server ended the session: %s", r);
	} else {
		ssl_reason(r, sizeof(r), errno ? strerror(errno) : "error");
		snprintf(c->errstr, sizeof(c->errstr), "TLS %s: %s", what, r);
	}
	return -1;
}

int redis_tls_write(struct redis_tls_conn *s, redisContext *c, int *done)
{
	size_t len = c->obuf ? sdslen(c->obuf) : 0;

	if (c->err)
		return -1;
	s->want_write = false;
	if (len > 0) {
		ERR_clear_error();
		errno = 0;
		int n = SSL_write(s->ssl, c->obuf, len > INT_MAX ? INT_MAX : (int)len);
		if (n > 0) {
			if ((size_t)n == len) {
				sdsfree(c->obuf);
				c->obuf = sdsempty();
				if (!c->obuf) {
					c->err = REDIS_ERR_OOM;
					snprintf(c->errstr, sizeof(c->errstr), "Out of memory");
					return -1;
				}
			} else {
				sdsrange(c->obuf, n, -1);
			}
		} else {
			int e = SSL_get_error(s->ssl, n);
			if (e == SSL_ERROR_WANT_WRITE)
				s->want_write = true;
			else if (e != SSL_ERROR_WANT_READ)
				return io_error(c, s->ssl, n, "write");
		}
	}
	if (done)
		*done = sdslen(c->obuf) == 0;
	return 0;
}

int redis_tls_read(struct redis_tls_conn *s, redisContext *c)
{
	char buf[16 * 1024];

	if (c->err)
		return -1;
	s->want_write = false;
	ERR_clear_error();
	errno = 0;
	int n = SSL_read(s->ssl, buf, sizeof(buf));
	if (n > 0) {
		if (redisReaderFeed(c->reader, buf, (size_t)n) != REDIS_OK) {
			c->err = c->reader->err;
			snprintf(c->errstr, sizeof(c->errstr), "%s", c->reader->errstr);
			return -1;
		}
		return 0;
	}
	int e = SSL_get_error(s->ssl, n);
	if (e == SSL_ERROR_WANT_READ)
		return 0;
	if (e == SSL_ERROR_WANT_WRITE) {
		s->want_write = true;
		return 0;
	}
	return io_error(c, s->ssl, n, "read");
}

bool redis_tls_pending(const struct redis_tls_conn *s)
{
	return SSL_has_pending(s->ssl) == 1;
}

bool redis_tls_refused(const struct redis_tls_conn *s)
{
	return s->refused;
}

bool redis_tls_wants_write(const struct redis_tls_conn *s)
{
	return s->want_write;
}

int redis_tls_idle_ok(struct redis_tls_conn *s, char *why, size_t whylen)
{
	char b[1];

	ERR_clear_error();
	errno = 0;
	int n = SSL_read(s->ssl, b, sizeof(b));
	if (n > 0) {
		snprintf(why, whylen, "unexpected data from the server");
		return 0;
	}
	int e = SSL_get_error(s->ssl, n);
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
		return 1;       /* TLS's own records: a session ticket */
	if (e == SSL_ERROR_ZERO_RETURN || (e == SSL_ERROR_SYSCALL && errno == 0))
		snprintf(why, whylen, "Server closed the connection");
	else
		ssl_reason(why, whylen, "TLS error");
	return 0;
}
