/*
 * redis_open.c - setting up the Redis channel: its keys (checked with
 * line:col and did-you-mean), the first connection, and closing.
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

#include "redis_int.h"
#include "redis_tls.h"

/* ---- open / close -------------------------------------------------------- */

static void redis_free(struct redis_out *o)
{
	if (o->c)
		close_conn(o);
#ifdef HAVE_OPENSSL
	redis_tls_free(o->tls);
#endif
	free(o->name);
	free(o->host);
	free(o->user);
	free(o->password);
	free(o->field);
	free(o->tmpl);
	free(o->key.p);
	free(o->head.p);
	free(o->out.p);
	free(o->key_report);
	free(o->st);
	free(o->memo);
	free(o);
}

void redis_close(void *state)
{
	struct redis_out *o = state;

	if (o->rejected)
		say(o, "%llu record(s) refused by the server in all (counted "
		      "dropped)", (unsigned long long)o->rejected);
	redis_free(o);
}

/* Both spellings of one setting given: name the first. */
static int alias_clash(const struct isp_channel_cfg *cfg, const char *a,
		       const char *b, int *bad_kv, char *err, size_t errlen)
{
	int ia = isp_kv_find(cfg, a), ib = isp_kv_find(cfg, b);

	if (ia < 0 || ib < 0)
		return 0;
	*bad_kv = ia > ib ? ia : ib;
	snprintf(err, errlen, "'%s' and '%s' are the same setting (first at line %d)",
		 cfg->kv[*bad_kv].key, cfg->kv[ia > ib ? ib : ia].key,
		 cfg->kv[ia > ib ? ib : ia].line);
	return -1;
}

/* A name, address, key or field: empty is a mistake, not a default. */
static const char *value_of(const struct isp_channel_cfg *cfg, const char *key)
{
	int i = isp_kv_find(cfg, key);

	return i >= 0 ? cfg->kv[i].value : NULL;
}

static int nonempty(const struct isp_kv *kv, char *err, size_t errlen)
{
	if (kv->value[0])
		return 0;
	snprintf(err, errlen, "%s must not be empty", kv->key);
	return -1;
}

/* Parse the keys into o; -1 with *bad_kv and a message. */
static int parse_keys(struct redis_out *o, const struct isp_channel_cfg *cfg,
		      int *bad_kv, char *err, size_t errlen)
{
	static const char *const modes[] = {
		"channel", "publish", "list", "lpush", "rpush", "xadd", "stream", NULL
	};
	static const enum redis_mode mode_of[] = {
		MODE_PUBLISH, MODE_PUBLISH, MODE_LPUSH, MODE_LPUSH, MODE_RPUSH,
		MODE_XADD, MODE_XADD
	};
	const char *host = "127.0.0.1", *tmpl = "report", *field = "record";
	const char *user = NULL, *pass = NULL;
	uint64_t v;
	int m, i_maxlen = -1, i_field = -1, i_user = -1, i_tlsopt = -1;
	bool tls = false;
	struct redis_tls_cfg tcfg = { .verify = true }, *tc = &tcfg;

	for (size_t i = 0; i < cfg->nkv; i++) {
		const struct isp_kv *kv = &cfg->kv[i];
		const char *k = kv->key;
		int rc = 0;

		*bad_kv = (int)i;
		if (!strcmp(k, "hostname") || !strcmp(k, "server")) {
			host = kv->value;
			rc = nonempty(kv, err, errlen);
		} else if (!strcmp(k, "port")) {
			rc = isp_kv_uint(kv, 1, 65535, &v, err, errlen);
			o->port = (int)v;
		} else if (!strcmp(k, "channel") || !strcmp(k, "key")) {
			tmpl = kv->value;
			rc = nonempty(kv, err, errlen);
			if (rc == 0)
				rc = check_template(tmpl, &o->per_report, err, errlen);
		} else if (!strcmp(k, "mode")) {
			rc = isp_kv_enum(kv, modes, &m, err, errlen);
			o->mode = rc == 0 ? mode_of[m] : o->mode;
		} else if (!strcmp(k, "stream-maxlen")) {
			rc = isp_kv_uint(kv, 1, (uint64_t)LLONG_MAX, &v, err, errlen);
			snprintf(o->maxlen, sizeof(o->maxlen), "%llu", (unsigned long long)v);
			i_maxlen = (int)i;
		} else if (!strcmp(k, "stream-field")) {
			field = kv->value;
			i_field = (int)i;
			rc = nonempty(kv, err, errlen);
		} else if (!strcmp(k, "password")) {
			pass = kv->value;
		} else if (!strcmp(k, "username")) {
			user = kv->value;
			i_user = (int)i;
		} else if (!strcmp(k, "database")) {
			rc = isp_kv_uint(kv, 0, INT_MAX, &v, err, errlen);
			o->db = (long long)v;
		} else if (!strcmp(k, "connect-timeout-ms")) {
			rc = isp_kv_uint(kv, 1, 600000, &v, err, errlen);
			o->connect_ms = (unsigned)v;
		} else if (!strcmp(k, "command-timeout-ms")) {
			rc = isp_kv_uint(kv, 1, 600000, &v, err, errlen);
			o->command_ms = (unsigned)v;
		} else if (!strcmp(k, "tls")) {
			rc = isp_kv_bool(kv, &tls, err, errlen);
		} else if (!strncmp(k, "tls-", 4)) {
			if (i_tlsopt < 0)
				i_tlsopt = (int)i;
			if (!strcmp(k, "tls-verify"))
				rc = isp_kv_bool(kv, &tc->verify, err, errlen);
			else
				rc = nonempty(kv, err, errlen);
		}
		if (rc != 0)
			return -1;
	}
	*bad_kv = i_maxlen >= 0 ? i_maxlen : i_field;
	if (o->mode != MODE_XADD && *bad_kv >= 0) {
		snprintf(err, errlen, "%s applies to mode = xadd only",
			 cfg->kv[*bad_kv].key);
		return -1;
	}
	*bad_kv = i_user;
	if (user && !pass) {
		snprintf(err, errlen, "username needs a password");
		return -1;
	}
	*bad_kv = i_tlsopt;
	if (i_tlsopt >= 0 && !tls) {
		snprintf(err, errlen, "%s needs tls = yes", cfg->kv[i_tlsopt].key);
		return -1;
	}
	*bad_kv = isp_kv_find(cfg, "tls");
	if (tls && strchr(host, '/')) {
		snprintf(err, errlen, "tls applies to a TCP connection, not to a Unix socket");
		return -1;
	}
	if (tls) {
		static const char *const files[] = { "tls-ca-cert-file", "tls-cert-file", "tls-key-file" };
		int bad = -1;

		tc->ca_file = value_of(cfg, "tls-ca-cert-file");
		tc->ca_dir = value_of(cfg, "tls-ca-cert-dir");
		tc->cert_file = value_of(cfg, "tls-cert-file");
		tc->key_file = value_of(cfg, "tls-key-file");
		tc->server_name = value_of(cfg, "tls-server-name");
		if (tc->key_file && !tc->cert_file) {
			*bad_kv = isp_kv_find(cfg, "tls-key-file");
			snprintf(err, errlen, "tls-key-file needs tls-cert-file");
			return -1;
		}
#ifdef HAVE_OPENSSL
		o->tls = redis_tls_new(tc, host, &bad, err, errlen);
		if (!o->tls) {
			if (bad == 0 && !tc->ca_file)
				*bad_kv = isp_kv_find(cfg, "tls-ca-cert-dir");
			else if (bad >= 0)
				*bad_kv = isp_kv_find(cfg, files[bad]);
			return -1;
		}
#else
		(void)files, (void)bad;
		snprintf(err, errlen, "this intspect was built without OpenSSL: no TLS for Redis "
			 "(Debian: libssl-dev, then configure again)");
		return -1;
#endif
	}
	*bad_kv = -1;
	o->unix_sock = strchr(host, '/') != NULL;
	if (o->unix_sock)
		snprintf(o->where, sizeof(o->where), "%s", host);
	else
		snprintf(o->where, sizeof(o->where), "%s:%d", host, o->port);
	o->host = strdup(host);
	o->tmpl = strdup(tmpl);
	o->field = strdup(field);
	o->user = user ? strdup(user) : NULL;
	o->password = pass ? strdup(pass) : NULL;
	if (!o->host || !o->tmpl || !o->field || (user && !o->user) ||
	    (pass && !o->password)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

int redis_open(void **state, const struct isp_channel_cfg *cfg,
		      int *bad_kv, char *err, size_t errlen)
{
	static const char *const known[] = {
		"hostname", "server", "port", "channel", "key", "mode",
		"stream-maxlen", "stream-field", "password", "username",
		"database", "connect-timeout-ms", "command-timeout-ms", "tls", "tls-ca-cert-file",
		"tls-ca-cert-dir", "tls-cert-file", "tls-key-file", "tls-server-name", "tls-verify",
		NULL
	};
	struct redis_out *o;
	char why[256];
	bool auth_err;

	*bad_kv = -1;
	if (isp_kv_check_known(cfg, known, bad_kv, err, errlen) != 0 ||
	    alias_clash(cfg, "hostname", "server", bad_kv, err, errlen) != 0 ||
	    alias_clash(cfg, "channel", "key", bad_kv, err, errlen) != 0)
		return -1;
	o = calloc(1, sizeof(*o));
	if (!o) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	o->port = 6379;
	o->db = -1;
	o->connect_ms = 1000;
	o->command_ms = 2000;
	o->mode = MODE_PUBLISH;
	o->ch = cfg->channel;
	o->cap = cfg->params && cfg->params->batch ? cfg->params->batch : 65536;
	o->name = strdup(cfg->name ? cfg->name : "redis");
	o->st = malloc(o->cap);
	o->memo = malloc(o->cap);
	if (!o->name || !o->st || !o->memo) {
		redis_free(o);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (parse_keys(o, cfg, bad_kv, err, errlen) != 0) {
		redis_free(o);
		return -1;
	}
	if (cfg->check_only) {  /* -T connects to nothing */
		redis_free(o);
		return 0;
	}
	/* A server that is down may come up later (records wait in the
	 * queue); a refused AUTH or SELECT will not fix itself. */
	if (try_connect(o, &auth_err, why, sizeof(why)) != 0) {
		if (auth_err) {
			int ip = isp_kv_find(cfg, "password");

			*bad_kv = strncmp(why, "SELECT", 6) == 0 || ip < 0 ?
				  isp_kv_find(cfg, "database") : ip;
			if (strncmp(why, "TLS", 3) == 0)
				*bad_kv = isp_kv_find(cfg, "tls");
			snprintf(err, errlen, "redis %s: %s", o->where, why);
			redis_free(o);
			return -1;
		}
		say(o, "%s; records wait in the queue, reconnecting", why);
		o->down = true;
	} else {
		o->ever_connected = true;
		if (o->ch)
			isp_channel_note_up(o->ch);
	}
	*state = o;
	return 0;
}

