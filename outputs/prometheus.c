/*
 * prometheus.c - the Prometheus channel (prometheus-output): records in
 * line protocol go into a table of series (prometheus_series.c), served
 * with the program's own counters on an HTTP endpoint that Prometheus
 * scrapes (prometheus_http.c).
 *
 *   prometheus-output prom {
 *     listen = "127.0.0.1:9464"    # ADDRESS:PORT ([v6]:PORT); port 0: any
 *     path = "/metrics"
 *     max-series = 10000           # more are refused and counted
 *     prefix = "intspect_"         # of every series the records make
 *     self-metrics = true          # packets, malformed, rules, channels, ...
 *   }
 *
 * Open binds the address, so a port in use is an error at `listen`;
 * intspect -T checks the keys and binds nothing.
 */
#include <arpa/inet.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "builtin.h"
#include "kv.h"
#include "prometheus_int.h"

#define DEFAULT_LISTEN "127.0.0.1:9464"
#define DEFAULT_MAX_SERIES 10000

/* ---- the exposition writer ---- */

static void text_put(struct isp_prom_text *t, const char *s, size_t n)
{
	if (t->oom || isp_bytes_room(&t->b, n + 1) != 0) {
		t->oom = true;
		return;
	}
	memcpy(t->b.p + t->b.len, s, n);
	t->b.len += n;
}

static void text_puts(struct isp_prom_text *t, const char *s)
{
	text_put(t, s, strlen(s));
}

void isp_prom_family(struct isp_prom_text *t, const char *name, const char *type,
		     const char *help)
{
	text_puts(t, "# HELP ");
	text_puts(t, name);
	text_puts(t, " ");
	text_puts(t, help);
	text_puts(t, "\n# TYPE ");
	text_puts(t, name);
	text_puts(t, " ");
	text_puts(t, type);
	text_puts(t, "\n");
}

static void put_labels(struct isp_prom_text *t, unsigned nlabels, va_list ap)
{
	for (unsigned i = 0; i < nlabels; i++) {
		const char *k = va_arg(ap, const char *);
		const char *v = va_arg(ap, const char *);
		text_puts(t, i ? "," : "{");
		text_puts(t, k);
		text_puts(t, "=\"");
		for (; *v; v++) {
			if (*v == '\\' || *v == '"')
				text_put(t, "\\", 1);
			if (*v == '\n')
				text_put(t, "\\n", 2);
			else
				text_put(t, v, 1);
		}
		text_puts(t, "\"");
	}
	if (nlabels)
		text_puts(t, "}");
}

void isp_prom_sample(struct isp_prom_text *t, const char *name, uint64_t v,
		     unsigned nlabels, ...)
{
	char num[32];
	va_list ap;

	text_puts(t, name);
	va_start(ap, nlabels);
	put_labels(t, nlabels, ap);
	va_end(ap);
	int n = snprintf(num, sizeof(num), " %llu\n", (unsigned long long)v);
	text_put(t, num, (size_t)n);
}

void isp_prom_sample_real(struct isp_prom_text *t, const char *name, double v,
			  unsigned nlabels, ...)
{
	char num[40];
	va_list ap;

	text_puts(t, name);
	va_start(ap, nlabels);
	put_labels(t, nlabels, ap);
	va_end(ap);
	if (isnan(v))
		text_puts(t, " NaN\n");
	else if (isinf(v))
		text_puts(t, v > 0 ? " +Inf\n" : " -Inf\n");
	else {
		int n = snprintf(num, sizeof(num), " %.17g\n", v);
		text_put(t, num, (size_t)n);
	}
}

/* ---- the program's counters ---- */

static pthread_mutex_t self_mu = PTHREAD_MUTEX_INITIALIZER;
static isp_prom_self_fn self_fn;
static void *self_ctx;

void isp_prom_set_self(isp_prom_self_fn fn, void *ctx)
{
	pthread_mutex_lock(&self_mu);
	self_fn = fn;
	self_ctx = ctx;
	pthread_mutex_unlock(&self_mu);
}

void prom_scrape(struct prom_out *o, struct isp_prom_text *t)
{
	/* intspect's own families first, apart: a record's family of the
	 * same name (a flow monitor named "monitor" gives entries) is then
	 * written as NAME_record, never as a second block of one name */
	struct isp_prom_text mine = { 0 };
	pthread_mutex_lock(&o->mu);
	uint64_t series = o->table.live, refused = o->table.refused;
	uint64_t removed = o->table.removed, strings = o->table.not_numeric;
	uint64_t superseded = o->table.superseded, collided = o->table.collided;
	uint64_t unparsable = o->table.unparsable;
	pthread_mutex_unlock(&o->mu);
	if (o->self) {
		pthread_mutex_lock(&self_mu);
		if (self_fn)
			self_fn(self_ctx, &mine);
		pthread_mutex_unlock(&self_mu);
	}
	/* the channel's own, by its name */
	const struct { const char *name, *type, *help; uint64_t v; } own[] = {
		{ "intspect_prometheus_series", "gauge", "Series the channel holds from records",
		  series },
		{ "intspect_prometheus_series_refused_total", "counter",
		  "Series not created because max-series was reached", refused },
		{ "intspect_prometheus_series_expired_total", "counter",
		  "Series removed because their key expired (idle-timeout-ms)", removed },
		{ "intspect_prometheus_series_superseded_total", "counter",
		  "Series removed because a later record of their key had no value for them",
		  superseded },
		{ "intspect_prometheus_fields_collided_total", "counter",
		  "Record fields left out because another field of the record has their series' name",
		  collided },
		{ "intspect_prometheus_fields_not_numeric_total", "counter",
		  "Record fields with a string value, which make no sample", strings },
		{ "intspect_prometheus_records_unparsable_total", "counter",
		  "Records that were not line protocol", unparsable },
		{ "intspect_prometheus_scrapes_total", "counter", "Scrapes answered, this one included",
		  atomic_load_explicit(&o->scrapes, memory_order_relaxed) + 1 },
	};
	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++) {
		isp_prom_family(&mine, own[i].name, own[i].type, own[i].help);
		isp_prom_sample(&mine, own[i].name, own[i].v, 1, "channel", o->name);
	}
	pthread_mutex_lock(&o->mu);
	prom_table_text(&o->table, t, &mine);
	pthread_mutex_unlock(&o->mu);
	if (mine.oom || isp_bytes_room(&t->b, mine.b.len) != 0) {
		t->oom = true;
	} else if (mine.b.len) {
		memcpy(t->b.p + t->b.len, mine.b.p, mine.b.len);
		t->b.len += mine.b.len;
	}
	free(mine.b.p);
}

/* ---- the channel ---- */

static size_t prom_write_batch(void *state, const struct isp_record *recs, size_t n)
{
	struct prom_out *o = state;
	uint64_t lost = 0;

	pthread_mutex_lock(&o->mu);
	for (size_t i = 0; i < n; i++)
		if (prom_table_record(&o->table, recs[i].text, recs[i].len) != 0)
			lost++;
	pthread_mutex_unlock(&o->mu);
	/* out of memory: taken, not retried; counted lost at the next flush */
	o->lost += lost;
	return n;
}

static int prom_flush(void *state)
{
	struct prom_out *o = state;

	if (o->lost) {
		isp_channel_add_lost(o->ch, o->lost);
		o->lost = 0;
	}
	return 0;
}

static void prom_free(struct prom_out *o)
{
	if (o->listen_fd >= 0)
		close(o->listen_fd);
	for (int i = 0; i < 2; i++)
		if (o->wake[i] >= 0)
			close(o->wake[i]);
	prom_table_free(&o->table);
	pthread_mutex_destroy(&o->mu);
	free(o->name);
	free(o->path);
	free(o->prefix);
	free(o);
}

static void prom_close(void *state)
{
	struct prom_out *o = state;

	prom_http_stop(o);
	prom_free(o);
}

/* "ADDR:PORT" or "[V6]:PORT" into o->addr; -1 with a message. */
static int parse_listen(struct prom_out *o, const char *s, char *err, size_t errlen)
{
	char host[64];
	const char *colon = strrchr(s, ':');
	size_t hn;
	char *end;

	if (!colon || colon == s || !colon[1]) {
		snprintf(err, errlen, "listen: expected ADDRESS:PORT (e.g. \"%s\" or \"[::1]:9464\"), "
			 "got \"%s\"", DEFAULT_LISTEN, s);
		return -1;
	}
	unsigned long port = strtoul(colon + 1, &end, 10);
	if (*end || port > 65535 || colon[1] == '-' || colon[1] == '+') {
		snprintf(err, errlen, "listen: port must be 0 to 65535, got \"%s\"", colon + 1);
		return -1;
	}
	const char *h = s;
	hn = (size_t)(colon - s);
	if (s[0] == '[' && colon[-1] == ']') {
		h++;
		hn -= 2;
	}
	if (hn >= sizeof(host)) {
		snprintf(err, errlen, "listen: address too long");
		return -1;
	}
	memcpy(host, h, hn);
	host[hn] = 0;
	struct sockaddr_in *a4 = (struct sockaddr_in *)&o->addr;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&o->addr;
	memset(&o->addr, 0, sizeof(o->addr));
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons((uint16_t)port);
		o->addrlen = sizeof(*a4);
	} else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons((uint16_t)port);
		o->addrlen = sizeof(*a6);
	} else {
		snprintf(err, errlen, "listen: \"%s\" is not a numeric IPv4 or IPv6 address "
			 "(0.0.0.0 or [::] for every interface)", host);
		return -1;
	}
	snprintf(o->where, sizeof(o->where), "%s", s);
	return 0;
}

static bool valid_prefix(const char *p)
{
	for (const char *c = p; *c; c++) {
		bool alpha = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_';
		if (!alpha && !(c > p && *c >= '0' && *c <= '9'))
			return false;
	}
	return true;
}

static int parse_keys(struct prom_out *o, const struct isp_channel_cfg *cfg, int *bad_kv,
		      char *err, size_t errlen)
{
	const char *listen = DEFAULT_LISTEN, *path = "/metrics", *prefix = "intspect_";
	uint64_t v;

	o->self = true;
	o->max_series = DEFAULT_MAX_SERIES;
	for (size_t i = 0; i < cfg->nkv; i++) {
		const struct isp_kv *kv = &cfg->kv[i];
		int rc = 0;

		*bad_kv = (int)i;
		if (!strcmp(kv->key, "listen")) {
			listen = kv->value;
		} else if (!strcmp(kv->key, "path")) {
			path = kv->value;
			if (path[0] != '/' || strpbrk(path, " ?#\t\r\n")) {
				snprintf(err, errlen, "path must start with '/' and hold no space, "
					 "'?' or '#', got \"%s\"", path);
				return -1;
			}
		} else if (!strcmp(kv->key, "max-series")) {
			rc = isp_kv_uint(kv, 1, 10000000, &v, err, errlen);
			o->max_series = (size_t)v;
		} else if (!strcmp(kv->key, "prefix")) {
			prefix = kv->value;
			if (!valid_prefix(prefix)) {
				snprintf(err, errlen, "prefix must be letters, digits and '_', not "
					 "starting with a digit, got \"%s\"", prefix);
				return -1;
			}
		} else if (!strcmp(kv->key, "self-metrics")) {
			rc = isp_kv_bool(kv, &o->self, err, errlen);
		}
		if (rc != 0)
			return -1;
	}
	*bad_kv = isp_kv_find(cfg, "listen");
	if (parse_listen(o, listen, err, errlen) != 0)
		return -1;
	*bad_kv = -1;
	if (!(o->path = strdup(path)) || !(o->prefix = strdup(prefix))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

static int prom_open(void **state, const struct isp_channel_cfg *cfg, int *bad_kv, char *err,
		     size_t errlen)
{
	static const char *const known[] = {
		"listen", "path", "max-series", "prefix", "self-metrics", NULL
	};
	struct prom_out *o;

	*bad_kv = -1;
	if (isp_kv_check_known(cfg, known, bad_kv, err, errlen) != 0)
		return -1;
	if (!(o = calloc(1, sizeof(*o))) || !(o->name = strdup(cfg->name ? cfg->name : "prometheus"))) {
		free(o);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	o->listen_fd = -1;
	o->wake[0] = o->wake[1] = -1;
	o->ch = cfg->channel;
	pthread_mutex_init(&o->mu, NULL);
	if (parse_keys(o, cfg, bad_kv, err, errlen) != 0) {
		prom_free(o);
		return -1;
	}
	if (cfg->check_only) {          /* -T binds nothing */
		prom_free(o);
		return 0;
	}
	if (prom_table_init(&o->table, o->prefix, o->max_series) != 0) {
		prom_free(o);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (prom_http_start(o, err, errlen) != 0) {
		*bad_kv = isp_kv_find(cfg, "listen");
		prom_free(o);
		return -1;
	}
	fprintf(stderr, "intspect: channel %s: serving http://%s%s\n", o->name, o->where, o->path);
	*state = o;
	return 0;
}

const struct isp_channel_ops isp_prometheus_ops = {
	.type = "prometheus",
	.open = prom_open,
	.write_batch = prom_write_batch,
	.flush = prom_flush,
	.close = prom_close,
	.format = ISP_REC_INFLUX,
};
