/*
 * socket_open.c - the socket channel's keys, open and close (socket.c
 * writes).
 *
 * The keys are intspect's and MMT-Probe's: type names in any case
 * (MMT-Probe's UNIX, TCP, INTERNET, UDP, BOTH next to intspect's udp, tcp,
 * unix, unix-dgram), descriptor for path, server-address (MMT-Probe's older
 * name) for hostname. MMT-Probe writes port, hostname and descriptor
 * whatever the type, so a key the type does not use is accepted and
 * ignored and its sections run unchanged. Unlike MMT-Probe, type has no
 * default (its default, BOTH, needs two readers; see outputs/README.md).
 */
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "kv.h"
#include "socket_int.h"

#define WAIT_MAX_MS 1000                /* longest wait for room per batch */
#define DEFAULT_UNIX_PATH "/tmp/probe-output.sock"      /* MMT-Probe's */

static const char *const kind_names[] = { "udp", "tcp", "unix", "unix-dgram", "both" };

static void conn_free(struct sock_conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	if (c->ai)
		freeaddrinfo(c->ai);
	free(c->host);
	free(c->port);
}

static void sock_free(struct sock_out *o)
{
	for (unsigned i = 0; i < o->nconn; i++)
		conn_free(&o->conn[i]);
	free(o->name);
	free(o);
}

void isp_sock_close(void *state)
{
	struct sock_out *o = state;

	for (unsigned i = 0; i < o->nconn; i++) {
		struct sock_conn *c = &o->conn[i];

		/* A line cut by the shutdown deadline: end it, so the reader
		 * does not glue it to whatever it reads next. */
		if (c->fd >= 0 && c->partial) {
			ssize_t w = send(c->fd, "\n", 1, MSG_NOSIGNAL | MSG_DONTWAIT);

			(void)w;
		}
		if (!c->connected_once)
			fprintf(stderr, "intspect: channel %s: never connected%s%s\n", o->name,
				c->last_err[0] ? ": " : "", c->last_err);
	}
	if (o->oversize)
		fprintf(stderr, "intspect: channel %s: %llu records too large for a "
			"datagram were not sent (counted as delivered)\n", o->name,
			(unsigned long long)o->oversize);
	sock_free(o);
}

/* type = ...: ours and MMT-Probe's words, any case; -1 with a message. */
static int parse_kind(const struct isp_kv *kv, enum sock_kind *out,
		      char *err, size_t errlen)
{
	static const struct { const char *word; int kind; } words[] = {
		{ "udp", K_UDP }, { "tcp", K_TCP }, { "internet", K_TCP },
		{ "unix", K_UNIX }, { "unix-dgram", K_UNIX_DGRAM }, { "both", K_BOTH },
	};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (strcasecmp(kv->value, words[i].word) == 0) {
			*out = (enum sock_kind)words[i].kind;
			return 0;
		}
	}
	snprintf(err, errlen, "bad value '%s' for type: expected udp, tcp, unix, "
		 "unix-dgram or both (or MMT-Probe's UDP, TCP, INTERNET, UNIX, BOTH)",
		 kv->value);
	return -1;
}

/* Two keys for one setting (ours and MMT-Probe's): the second is refused. */
static int alias(const struct isp_kv *kv, int i, int *seen, const char **value,
		 const char *ours, const char *theirs, char *err, size_t errlen)
{
	if (*seen >= 0) {
		snprintf(err, errlen, "'%s' and '%s' are the same setting (%s is "
			 "MMT-Probe's name); give one", ours, theirs, theirs);
		return -1;
	}
	*seen = i;
	*value = kv->value;
	return 0;
}

static int set_unix(struct sock_conn *c, const char *path, char *err, size_t errlen)
{
	c->kind = K_UNIX;
	if (path[0] == '\0' || strlen(path) >= sizeof(c->sun.sun_path)) {
		snprintf(err, errlen, "bad Unix socket path '%s': 1 to %zu bytes", path,
			 sizeof(c->sun.sun_path) - 1);
		return -1;
	}
	c->sun.sun_family = AF_UNIX;
	memcpy(c->sun.sun_path, path, strlen(path) + 1);
	return 0;
}

static int set_inet(struct sock_conn *c, const char *host, unsigned port,
		    char *err, size_t errlen)
{
	c->kind = K_TCP;
	if (host[0] == '\0') {
		snprintf(err, errlen, "'hostname' is empty");
		return -1;
	}
	c->host = strdup(host);
	c->port = malloc(8);
	if (!c->host || !c->port) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	snprintf(c->port, 8, "%u", port);
	return 0;
}

/* Check the keys into o; -1 with err and *bad_kv. *ihost: the index of
 * hostname or server-address (-1). */
static int parse_keys(struct sock_out *o, const struct isp_channel_cfg *cfg,
		      int *ihost, int *bad_kv, char *err, size_t errlen)
{
	uint64_t port = 0, ms = 1000, sndbuf = 0;
	const char *host = "localhost", *path = DEFAULT_UNIX_PATH;
	int it = isp_kv_find(cfg, "type"), ip = -1, ipath = -1;
	bool inet, local;

	*ihost = -1;
	*bad_kv = it;
	if (it < 0) {
		/* The section's own position is not known here: point into it. */
		*bad_kv = cfg->nkv ? 0 : -1;
		snprintf(err, errlen, "a socket output needs 'type': udp, tcp, unix, "
			 "unix-dgram or both");
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
		} else if (strcmp(kv->key, "hostname") == 0 ||
			   strcmp(kv->key, "server-address") == 0) {
			rc = alias(kv, (int)i, ihost, &host, "hostname", "server-address",
				   err, errlen);
		} else if (strcmp(kv->key, "path") == 0 ||
			   strcmp(kv->key, "descriptor") == 0) {
			rc = alias(kv, (int)i, &ipath, &path, "path", "descriptor",
				   err, errlen);
		}
		if (rc != 0)
			return -1;
	}
	o->connect_ms = (int)ms;
	o->sndbuf = (int)sndbuf;
	inet = o->kind == K_UDP || o->kind == K_TCP || o->kind == K_BOTH;
	local = o->kind == K_UNIX || o->kind == K_UNIX_DGRAM || o->kind == K_BOTH;

	/* MMT-Probe writes every key whatever the type: a port or a
	 * descriptor the type does not use is ignored, not an error. BOTH
	 * connects the Unix socket first, then TCP (MMT-Probe's order). */
	if (local) {
		struct sock_conn *c = &o->conn[o->nconn++];

		*bad_kv = ipath;
		if (set_unix(c, path, err, errlen) != 0)
			return -1;
		if (o->kind == K_UNIX_DGRAM)
			c->kind = K_UNIX_DGRAM;
	}
	if (inet) {
		struct sock_conn *c = &o->conn[o->nconn++];

		*bad_kv = ip >= 0 ? ip : it;    /* no port: the type wants one */
		if (port == 0) {
			snprintf(err, errlen, "a %s socket output needs 'port' (1 to 65535)%s",
				 kind_names[o->kind], o->kind == K_BOTH ?
				 " for its TCP connection" : "");
			return -1;
		}
		*bad_kv = *ihost;
		if (set_inet(c, host, (unsigned)port, err, errlen) != 0)
			return -1;
		if (o->kind == K_UDP)
			c->kind = K_UDP;
	}
	return 0;
}

int isp_sock_open(void **state, const struct isp_channel_cfg *cfg,
		  int *bad_kv, char *err, size_t errlen)
{
	static const char *const known[] = {
		"type", "hostname", "server-address", "port", "descriptor", "path",
		"connect-timeout-ms", "send-buffer", NULL
	};
	unsigned flush_ms = cfg->params ? cfg->params->flush_ms : 100;
	struct sock_out *o;
	int ihost;

	if (isp_kv_check_known(cfg, known, bad_kv, err, errlen) != 0)
		return -1;
	o = calloc(1, sizeof(*o));
	if (!o || !(o->name = strdup(cfg->name ? cfg->name : "socket"))) {
		free(o);
		*bad_kv = -1;
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	o->conn[0].fd = o->conn[1].fd = -1;
	o->ch = cfg->channel;
	o->wait_ms = flush_ms < WAIT_MAX_MS ? (int)flush_ms : WAIT_MAX_MS;
	if (parse_keys(o, cfg, &ihost, bad_kv, err, errlen) != 0) {
		sock_free(o);
		return -1;
	}
	/* A name that does not exist is a mistake in the file: say so now
	 * (in check mode too). A resolver that is down (EAI_AGAIN) is not:
	 * connecting retries. */
	for (unsigned i = 0; i < o->nconn; i++) {
		struct sock_conn *c = &o->conn[i];

		if (c->host && isp_sock_resolve(c) == EAI_NONAME) {
			*bad_kv = ihost;
			snprintf(err, errlen, "%s", c->last_err);
			sock_free(o);
			return -1;
		}
		c->last_err[0] = '\0';
	}
	*bad_kv = -1;
	if (cfg->check_only) {          /* -T: nothing connects at open anyway */
		sock_free(o);
		return 0;
	}
	*state = o;
	return 0;
}
