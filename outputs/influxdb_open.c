/*
 * influxdb_open.c - setting up the InfluxDB channel: its keys (checked with
 * line:col and did-you-mean), the first request, and closing.
 *
 * Over HTTP, open sends an empty write (POST /write with no line): InfluxDB
 * checks the credentials, the database and the retention policy, and stores
 * nothing. A refusal of those is a mistake in the file and stops the start
 * at its key (a missing database is created instead with create-database =
 * true); a server that is down or failing is not: one line on stderr, and
 * the records wait in the queue. Check mode (intspect -T) stops before
 * connecting; it resolves the host name, as a name that does not exist is
 * a mistake in the file too.
 */
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include "influxdb_int.h"
#include "kv.h"

#define DEFAULT_MAX_BODY (1u << 20)
#define DEFAULT_UDP_PAYLOAD 1400

static void ifx_free(struct ifx_out *o)
{
	if (o->fd >= 0)
		close(o->fd);
	free(o->name);
	free(o->host);
	free(o->db);
	free(o->rp);
	free(o->auth);
	free(o->write_path);
	free(o->head.p);
	free(o->body.p);
	free(o->in.p);
	free(o->zbody.p);
	if (o->zs) {
		deflateEnd(o->zs);
		free(o->zs);
	}
	free(o);
}

void ifx_close(void *state)
{
	struct ifx_out *o = state;

	if (o->rejected)
		ifx_say(o, "%llu record(s) refused by the server in all (counted dropped)",
			(unsigned long long)o->rejected);
	if (o->unsendable > 1)
		ifx_say(o, "%llu record(s) could not be sent in all (counted dropped)",
			(unsigned long long)o->unsendable);
	if (o->udp_refused)
		ifx_say(o, "%llu send(s) refused by an ICMP port unreachable in all",
			(unsigned long long)o->udp_refused);
	if (!o->reached)
		ifx_say(o, "never connected%s%s", o->last_err[0] ? ": " : "", o->last_err);
	if (o->gzip && o->raw_bytes)
		ifx_say(o, "gzip: %llu bytes of line protocol sent as %llu (%.1f%%)",
			(unsigned long long)o->raw_bytes, (unsigned long long)o->gz_bytes,
			100.0 * (double)o->gz_bytes / (double)o->raw_bytes);
	ifx_free(o);
}

static int nonempty(const struct isp_kv *kv, char *err, size_t errlen)
{
	if (kv->value[0])
		return 0;
	snprintf(err, errlen, "%s must not be empty", kv->key);
	return -1;
}

static char *dup_or_null(const char *s, bool *oom)
{
	char *d = s ? strdup(s) : NULL;

	*oom |= s && !d;
	return d;
}

/* /write?db=DB&precision=ns[&rp=RP], malloc'd; NULL: out of memory. */
static char *write_path(const char *db, const char *rp)
{
	struct isp_bytes b = { 0 };

	if (isp_bytes_room(&b, 64) != 0)
		return NULL;
	b.len = (size_t)sprintf(b.p, "/write?db=");
	if (ifx_urlencode(&b, db) != 0 || isp_bytes_room(&b, 24) != 0)
		goto oom;
	b.len += (size_t)sprintf(b.p + b.len, "&precision=ns%s", rp ? "&rp=" : "");
	if (rp && ifx_urlencode(&b, rp) != 0)
		goto oom;
	return b.p;
oom:
	free(b.p);
	return NULL;
}

/* Parse the keys into o; -1 with *bad_kv and a message. */
static int parse_keys(struct ifx_out *o, const struct isp_channel_cfg *cfg,
		      int *bad_kv, char *err, size_t errlen)
{
	static const char *const transports[] = { "http", "udp", NULL };
	static const char *const http_only[] = {
		"database", "retention-policy", "user", "password", "create-database",
		"max-body", "gzip", NULL
	};
	const char *host = "127.0.0.1", *db = NULL, *rp = NULL, *user = NULL, *pass = NULL;
	uint64_t v, port = 0;
	int t = IFX_HTTP;
	bool oom = false;

	/* The transport first: which keys apply depends on it. */
	*bad_kv = isp_kv_find(cfg, "transport");
	if (*bad_kv >= 0 && isp_kv_enum(&cfg->kv[*bad_kv], transports, &t, err, errlen) != 0)
		return -1;
	o->transport = (enum ifx_transport)t;
	for (size_t i = 0; i < cfg->nkv; i++) {
		const struct isp_kv *kv = &cfg->kv[i];
		const char *k = kv->key;
		bool b = false;
		int rc = 0;

		*bad_kv = (int)i;
		for (const char *const *h = http_only; *h && o->transport == IFX_UDP; h++) {
			if (strcmp(k, *h) == 0) {
				snprintf(err, errlen, "%s applies to transport = http only%s", k,
					 strcmp(k, "database") == 0 ? " (a UDP listener writes "
					 "into the database of its [[udp]] section)" : "");
				return -1;
			}
		}
		if (!strcmp(k, "host")) {
			host = kv->value;
			rc = nonempty(kv, err, errlen);
		} else if (!strcmp(k, "port")) {
			rc = isp_kv_uint(kv, 1, 65535, &port, err, errlen);
		} else if (!strcmp(k, "database")) {
			db = kv->value;
			rc = nonempty(kv, err, errlen);
		} else if (!strcmp(k, "retention-policy")) {
			rp = kv->value;
			rc = nonempty(kv, err, errlen);
		} else if (!strcmp(k, "user")) {
			user = kv->value;
			rc = nonempty(kv, err, errlen);
		} else if (!strcmp(k, "password")) {
			pass = kv->value;
		} else if (!strcmp(k, "timeout-ms")) {
			rc = isp_kv_uint(kv, 1, 600000, &v, err, errlen);
			o->timeout_ms = (unsigned)v;
		} else if (!strcmp(k, "create-database")) {
			rc = isp_kv_bool(kv, &b, err, errlen);
			o->create_db = b;
		} else if (!strcmp(k, "gzip")) {
			rc = isp_kv_bool(kv, &b, err, errlen);
			o->gzip = b;
		} else if (!strcmp(k, "max-body")) {
			rc = isp_kv_size(kv, 1024, 1ull << 30, &v, err, errlen);
			o->max_body = (size_t)v;
		} else if (!strcmp(k, "udp-payload")) {
			if (o->transport != IFX_UDP) {
				snprintf(err, errlen, "udp-payload applies to transport = udp only");
				return -1;
			}
			rc = isp_kv_size(kv, 512, IFX_UDP_MAX, &v, err, errlen);
			o->udp_payload = (size_t)v;
		}
		if (rc != 0)
			return -1;
	}
	if (o->transport == IFX_HTTP && !db) {
		*bad_kv = -1;
		snprintf(err, errlen, "an influxdb output needs 'database' (the database "
			 "records are written into)");
		return -1;
	}
	if (!user != !pass) {
		*bad_kv = isp_kv_find(cfg, user ? "user" : "password");
		snprintf(err, errlen, user ? "user needs a password" : "password needs a user");
		return -1;
	}
	*bad_kv = -1;
	snprintf(o->port, sizeof(o->port), "%u",
		 port ? (unsigned)port : o->transport == IFX_UDP ? 8089u : 8086u);
	/* an IPv6 address is bracketed in host:port and in Host: */
	snprintf(o->where, sizeof(o->where), strchr(host, ':') ? "[%s]:%s" : "%s:%s",
		 host, o->port);
	if (o->transport == IFX_UDP)
		snprintf(o->where + strlen(o->where), sizeof(o->where) - strlen(o->where),
			 " (udp)");
	snprintf(o->host_hdr, sizeof(o->host_hdr), strchr(host, ':') ? "[%s]:%s" : "%s:%s",
		 host, o->port);
	o->host = dup_or_null(host, &oom);
	o->db = dup_or_null(db, &oom);
	o->rp = dup_or_null(rp, &oom);
	if (user && !oom && !(o->auth = ifx_basic_auth(user, pass)))
		oom = true;
	if (!oom && o->transport == IFX_HTTP && !(o->write_path = write_path(db, rp)))
		oom = true;
	if (oom) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* A refusal of the first request that is a mistake in the file: -1 with
 * the message at its key; 0 for anything else. */
static int fatal_refusal(const struct ifx_out *o, const struct ifx_resp *r,
			 const struct isp_channel_cfg *cfg, int *bad_kv,
			 char *err, size_t errlen)
{
	if (r->status == 404 && strstr(r->error, "database not found")) {
		*bad_kv = isp_kv_find(cfg, "database");
		snprintf(err, errlen, "influxdb %s: database \"%s\" not found (CREATE "
			 "DATABASE \"%s\" first, or create-database = true)", o->where,
			 o->db, o->db);
		return -1;
	}
	if (r->status == 401 || r->status == 403) {
		*bad_kv = isp_kv_find(cfg, "password");
		if (*bad_kv < 0)
			*bad_kv = isp_kv_find(cfg, "user");
		snprintf(err, errlen, "influxdb %s: HTTP %d: %s%s", o->where, r->status,
			 r->error, o->auth ? "" : " (no user and password given)");
		return -1;
	}
	if (strstr(r->error, "retention policy not found")) {
		*bad_kv = isp_kv_find(cfg, "retention-policy");
		snprintf(err, errlen, "influxdb %s: %s", o->where, r->error);
		return -1;
	}
	return 0;
}

int ifx_open(void **state, const struct isp_channel_cfg *cfg,
	     int *bad_kv, char *err, size_t errlen)
{
	static const char *const known[] = {
		"host", "port", "database", "retention-policy", "user", "password",
		"transport", "timeout-ms", "create-database", "max-body", "udp-payload",
		"gzip", NULL
	};
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_flags = AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	struct ifx_out *o;
	struct ifx_resp r;
	char why[512];
	int rc;

	*bad_kv = -1;
	if (isp_kv_check_known(cfg, known, bad_kv, err, errlen) != 0)
		return -1;
	o = calloc(1, sizeof(*o));
	if (!o || !(o->name = strdup(cfg->name ? cfg->name : "influxdb"))) {
		free(o);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	o->fd = -1;
	o->ch = cfg->channel;
	o->timeout_ms = 2000;
	o->max_body = DEFAULT_MAX_BODY;
	o->udp_payload = DEFAULT_UDP_PAYLOAD;
	if (parse_keys(o, cfg, bad_kv, err, errlen) != 0) {
		ifx_free(o);
		return -1;
	}
	/* A name that does not exist is a mistake in the file (said in check
	 * mode too); a resolver that is down (EAI_AGAIN) is not. */
	hints.ai_socktype = o->transport == IFX_UDP ? SOCK_DGRAM : SOCK_STREAM;
	rc = getaddrinfo(o->host, o->port, &hints, &ai);
	if (ai)
		freeaddrinfo(ai);
	if (rc == EAI_NONAME) {
		*bad_kv = isp_kv_find(cfg, "host");
		snprintf(err, errlen, "cannot resolve %s: %s", o->host, gai_strerror(rc));
		ifx_free(o);
		return -1;
	}
	if (cfg->check_only) {          /* -T connects to nothing */
		ifx_free(o);
		return 0;
	}
	if (o->transport == IFX_UDP) {
		/* the largest datagram: one line alone */
		if (isp_bytes_room(&o->body, IFX_UDP_MAX + 1) != 0) {
			ifx_free(o);
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		ifx_udp_connect(o);     /* a failure is said; write retries */
		*state = o;
		return 0;
	}
	rc = ifx_probe(o, &r, why, sizeof(why));
	if (rc == 0) {
		ifx_now_up(o);
	} else if (rc > 0 && fatal_refusal(o, &r, cfg, bad_kv, err, errlen) != 0) {
		ifx_free(o);
		return -1;
	} else {
		ifx_outage(o, why);
	}
	*state = o;
	return 0;
}
