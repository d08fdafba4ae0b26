/*
 * kafka.c - channel type "kafka": each record is one Kafka message, sent
 * with a librdkafka producer. Keys and behaviour: outputs/README.md, "Type
 * `kafka`".
 *
 * Accounting. write_batch hands records to librdkafka (which copies them),
 * so "delivered" first means "in librdkafka's queue". The broker's answer
 * comes later as a delivery report, served by rd_kafka_poll on the
 * channel's thread: a success counts `acked`; a failure (after librdkafka's
 * own retries, at the latest message.timeout.ms) moves the record from
 * delivered to dropped with isp_channel_add_lost. Failures are reported
 * at the next write_batch/flush/finish, never inside the write_batch that
 * produced the record, because the channel layer counts that batch as
 * delivered only when write_batch returns. At shutdown, finish waits for
 * the outstanding reports until the channel's deadline, then purges what
 * is left and counts it as dropped (the broker may have stored some of
 * those: at-least-once is all a purge can promise). So once the channel
 * is drained, delivered == acked and nothing is unaccounted for.
 *
 * A producer that hits a fatal error (idempotence broken beyond repair)
 * refuses every record; flush then replaces it with a new one (counted as
 * a reconnect). What the dead one held is purged and counted as dropped;
 * the records it refused stay in the channel's queue for the new one.
 */
#include <errno.h>
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "builtin.h"
#include "kv.h"
#include "queue.h"

#define TOPIC_MAX 249           /* Kafka's limit on a topic name */
#define FULL_WAIT_MS 100        /* queue full: wait this long for reports once */

struct topic {                  /* a report's topic (topic = "...%r...") */
	char *report;
	rd_kafka_topic_t *rkt;
};

struct kafka_out {
	rd_kafka_t *rk;
	rd_kafka_conf_t *conf;          /* a copy, for replacing a dead producer */
	struct isp_channel *ch;
	char *name;                     /* channel name, for messages */
	char *topic;                    /* topic, maybe with %r */
	bool per_report;                /* topic has %r */
	bool keyed;                     /* key = group */
	rd_kafka_topic_t *rkt;          /* the topic when not per report */
	struct topic *topics;           /* per report, looked up by name */
	size_t ntopics, captopics, last;
	char tname[TOPIC_MAX + 1];

	/* Channel thread only (delivery reports are served by its polls). */
	uint64_t produced;              /* records librdkafka accepted */
	uint64_t acked, failed;         /* delivery reports */
	uint64_t acked_told, failed_told;
	bool down;                      /* all brokers down since the last ack */
	int said[8];                    /* errors printed since the last ack */
	size_t nsaid;
	char why[256];                  /* last delivery failure */
};

/* ---- librdkafka callbacks (served on the channel's thread by poll) ------- */

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	struct kafka_out *o = opaque;

	(void)rk;
	if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
		if (!o->acked)  /* a broker is reached once it acknowledged */
			isp_channel_note_up(o->ch);
		o->acked++;
		o->nsaid = 0;           /* the next outage is said again */
		if (o->down) {          /* the cluster came back */
			o->down = false;
			isp_channel_add_reconnects(o->ch, 1);
		}
		return;
	}
	o->failed++;
	snprintf(o->why, sizeof(o->why), "%s", rd_kafka_err2str(m->err));
}

static void on_error(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
	struct kafka_out *o = opaque;

	(void)rk;
	if (err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN)
		o->down = true;
	/* librdkafka repeats errors while they last (every reconnection):
	 * say each kind once until records go through again. */
	for (size_t i = 0; i < o->nsaid; i++)
		if (o->said[i] == err)
			return;
	if (o->nsaid < sizeof(o->said) / sizeof(o->said[0]))
		o->said[o->nsaid++] = err;
	fprintf(stderr, "intspect: channel %s: kafka: %s\n", o->name, reason);
}

/* Called from librdkafka's threads: only the channel name is read.
 * Connection failures ("FAIL") also come as errors, said by on_error. */
static void on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
	const struct kafka_out *o = rd_kafka_opaque(rk);

	if (level <= 4 && strcmp(fac, "FAIL") != 0)     /* LOG_WARNING and worse */
		fprintf(stderr, "intspect: channel %s: kafka %s: %s\n",
			o ? o->name : "?", fac, buf);
}

/* Hand the delivery reports counted so far to the channel. Only between
 * write_batch calls: see the top of the file. */
static void tell(struct kafka_out *o)
{
	if (o->acked > o->acked_told) {
		isp_channel_add_acked(o->ch, o->acked - o->acked_told);
		o->acked_told = o->acked;
	}
	if (o->failed > o->failed_told) {
		isp_channel_add_lost(o->ch, o->failed - o->failed_told);
		o->failed_told = o->failed;
	}
}

/* ---- configuration ---------------------------------------------------------- */

static int conf_set(rd_kafka_conf_t *conf, const char *name, const char *value,
		    char *err, size_t errlen)
{
	char why[512];

	if (rd_kafka_conf_set(conf, name, value, why, sizeof(why)) == RD_KAFKA_CONF_OK)
		return 0;
	snprintf(err, errlen, "%s", why);
	return -1;
}

static char *trim(char *s)
{
	char *e = s + strlen(s);

	while (*s == ' ' || *s == '\t')
		s++;
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		*--e = '\0';
	return s;
}

/* `name=value` lines (blank lines and # or ! comments skipped), passed to
 * librdkafka in order; errors name the file's line. */
static int load_properties(rd_kafka_conf_t *conf, const char *path, bool *idem,
			   char *err, size_t errlen)
{
	char line[4096], why[512];
	unsigned lineno = 0;
	FILE *f = fopen(path, "r");

	if (!f) {
		snprintf(err, errlen, "cannot open properties-file '%s': %s", path,
			 strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s = trim(line), *eq;

		lineno++;
		if (*s == '\0' || *s == '#' || *s == '!')
			continue;
		eq = strchr(s, '=');
		if (!eq) {
			snprintf(err, errlen, "%s:%u: expected name=value", path, lineno);
			fclose(f);
			return -1;
		}
		*eq = '\0';
		s = trim(s);
		if (strcmp(s, "enable.idempotence") == 0)
			*idem = true;
		if (conf_set(conf, s, trim(eq + 1), why, sizeof(why)) != 0) {
			snprintf(err, errlen, "%s:%u: %s: %s", path, lineno, s, why);
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	return 0;
}

/* Letters, digits, '.', '_', '-' (Kafka's topic alphabet) and %r. */
static int check_topic(const char *t, bool *per_report, char *err, size_t errlen)
{
	size_t len = 0;

	*per_report = false;
	for (const char *p = t; *p; p++, len++) {
		if (p[0] == '%' && p[1] == 'r') {
			*per_report = true;
			p++;
			continue;
		}
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '.' || *p == '_' || *p == '-'))
			goto bad;
	}
	if (len == 0 || len > TOPIC_MAX)
		goto bad;
	return 0;
bad:
	snprintf(err, errlen, "bad topic '%s': expected 1 to %d of letters, digits, "
		 "'.', '_', '-', and %%r for the report name", t, TOPIC_MAX);
	return -1;
}

/* The keys intspect names itself (MMT-Probe's, then ours). */
static const char *const known_keys[] = {
	"hostname", "port", "topic", "brokers", "key", "compression", "acks",
	"linger-ms", "properties-file", NULL
};

static bool is_property(const char *key)
{
	return strncmp(key, "property.", 9) == 0 && key[9] != '\0';
}

/* isp_kv_check_known on every key but property.NAME (any librdkafka name). */
static int check_keys(const struct isp_channel_cfg *cfg, int *bad_kv, char *err,
		      size_t errlen)
{
	struct isp_channel_cfg c = *cfg;
	struct isp_kv *kv = calloc(cfg->nkv + 1, sizeof(*kv));
	size_t *map = calloc(cfg->nkv + 1, sizeof(*map));
	int rc = -1;

	if (!kv || !map) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	c.kv = kv;
	c.nkv = 0;
	for (size_t i = 0; i < cfg->nkv; i++) {
		if (strcmp(cfg->kv[i].key, "property") == 0) {
			*bad_kv = (int)i;
			snprintf(err, errlen, "'property' needs a librdkafka property name: "
				 "property \"compression.type\" = \"lz4\"");
			goto out;
		}
		if (!is_property(cfg->kv[i].key)) {
			map[c.nkv] = i;
			kv[c.nkv++] = cfg->kv[i];
		}
	}
	rc = isp_kv_check_known(&c, known_keys, bad_kv, err, errlen);
	if (rc != 0 && *bad_kv >= 0) {
		size_t len = strlen(err);

		*bad_kv = (int)map[*bad_kv];
		if (strstr(err, "; known: "))   /* the list ends the message */
			snprintf(err + len, errlen - len, ", property \"NAME\"");
	}
out:
	free(kv);
	free(map);
	return rc;
}

/*
 * librdkafka configuration from the keys, lowest precedence first: our
 * defaults, properties-file, the named keys, property "x" = y. Fills
 * o->topic, per_report, keyed. -1 with *bad_kv and err.
 */
static int build_conf(struct kafka_out *o, const struct isp_channel_cfg *cfg,
		      rd_kafka_conf_t *conf, int *bad_kv, char *err, size_t errlen)
{
	static const char *const keys[] = { "group", "none", NULL };
	static const char *const codecs[] = { "none", "gzip", "snappy", "lz4", "zstd", NULL };
	static const char *const acks[] = { "all", "1", "0", NULL };
	const char *host = NULL, *brokers = NULL, *topic = "report";
	char msg[512], servers[512], num[32];
	uint64_t port = 9092, v;
	bool idem_set = false, acks_all = true;
	int e = 0, i;

	/* Our defaults. murmur2_random is the Java client's partitioner: a
	 * key lands in the partition a Java producer (Kafka Streams, ...)
	 * would choose, so intspect's topics co-partition with theirs. */
	*bad_kv = -1;
	if (conf_set(conf, "client.id", "intspect", err, errlen) != 0 ||
	    conf_set(conf, "bootstrap.servers", "localhost:9092", err, errlen) != 0 ||
	    conf_set(conf, "partitioner", "murmur2_random", err, errlen) != 0 ||
	    conf_set(conf, "acks", "all", err, errlen) != 0)
		return -1;

	i = isp_kv_find(cfg, "properties-file");
	if (i >= 0) {
		*bad_kv = i;
		if (load_properties(conf, cfg->kv[i].value, &idem_set, err, errlen) != 0)
			return -1;
	}

	for (size_t k = 0; k < cfg->nkv; k++) {
		const struct isp_kv *kv = &cfg->kv[k];
		int rc = 0;

		*bad_kv = (int)k;
		msg[0] = '\0';
		if (strcmp(kv->key, "hostname") == 0) {
			host = kv->value;
			if (!*host) {
				snprintf(err, errlen, "hostname must not be empty");
				return -1;
			}
		} else if (strcmp(kv->key, "port") == 0) {
			rc = isp_kv_uint(kv, 1, 65535, &port, err, errlen);
		} else if (strcmp(kv->key, "brokers") == 0) {
			brokers = kv->value;
			if (!*brokers) {
				snprintf(err, errlen, "brokers must not be empty (host:port,host:port)");
				return -1;
			}
		} else if (strcmp(kv->key, "topic") == 0) {
			topic = kv->value;
			rc = check_topic(topic, &o->per_report, err, errlen);
		} else if (strcmp(kv->key, "key") == 0) {
			rc = isp_kv_enum(kv, keys, &e, err, errlen);
			o->keyed = e == 0;
		} else if (strcmp(kv->key, "compression") == 0) {
			if ((rc = isp_kv_enum(kv, codecs, &e, err, errlen)) == 0)
				rc = conf_set(conf, "compression.codec", codecs[e], err, errlen);
		} else if (strcmp(kv->key, "acks") == 0) {
			if ((rc = isp_kv_enum(kv, acks, &e, err, errlen)) == 0)
				rc = conf_set(conf, "acks", acks[e], err, errlen);
		} else if (strcmp(kv->key, "linger-ms") == 0) {
			if ((rc = isp_kv_uint(kv, 0, 900000, &v, err, errlen)) == 0) {
				snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
				rc = conf_set(conf, "linger.ms", num, err, errlen);
			}
		}
		if (rc != 0)
			return -1;
	}
	*bad_kv = -1;
	if (brokers) {
		snprintf(servers, sizeof(servers), "%s", brokers);
	} else if (host || isp_kv_find(cfg, "port") >= 0) {
		if (!host)
			host = "localhost";
		/* an IPv6 address needs brackets before the port */
		snprintf(servers, sizeof(servers),
			 strchr(host, ':') && host[0] != '[' ? "[%s]:%llu" : "%s:%llu",
			 host, (unsigned long long)port);
	} else {
		servers[0] = '\0';      /* the default or the properties-file's */
	}
	if (servers[0] && conf_set(conf, "bootstrap.servers", servers, err, errlen) != 0)
		return -1;

	/* property "name" = value: verbatim, last word. */
	for (size_t k = 0; k < cfg->nkv; k++) {
		const char *name = cfg->kv[k].key + 9;

		if (!is_property(cfg->kv[k].key))
			continue;
		*bad_kv = (int)k;
		if (strcmp(name, "enable.idempotence") == 0)
			idem_set = true;
		if (conf_set(conf, name, cfg->kv[k].value, msg, sizeof(msg)) != 0) {
			snprintf(err, errlen, "property '%s': %s", name, msg);
			return -1;
		}
	}
	*bad_kv = -1;

	/* Idempotence unless said otherwise: librdkafka's retries (a broker
	 * restart) then neither duplicate nor reorder records. It needs
	 * acks=all, so it is on only then. */
	{
		rd_kafka_topic_conf_t *tc = rd_kafka_conf_get_default_topic_conf(conf);
		size_t n = sizeof(num);

		if (tc && rd_kafka_topic_conf_get(tc, "acks", num, &n) == RD_KAFKA_CONF_OK)
			acks_all = strcmp(num, "-1") == 0 || strcmp(num, "all") == 0;
	}
	if (!idem_set && acks_all &&
	    conf_set(conf, "enable.idempotence", "true", err, errlen) != 0)
		return -1;

	o->topic = strdup(topic);
	if (!o->topic) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* ---- producer and topics ------------------------------------------------- */

static void drop_topics(struct kafka_out *o)
{
	if (o->rkt)
		rd_kafka_topic_destroy(o->rkt);
	o->rkt = NULL;
	for (size_t i = 0; i < o->ntopics; i++) {
		rd_kafka_topic_destroy(o->topics[i].rkt);
		free(o->topics[i].report);
	}
	o->ntopics = 0;
	o->last = 0;
}

/* A producer from o->conf (which stays ours) and, without %r, the topic. */
static int new_producer(struct kafka_out *o, char *err, size_t errlen)
{
	rd_kafka_conf_t *c = rd_kafka_conf_dup(o->conf);

	if (!c) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	o->rk = rd_kafka_new(RD_KAFKA_PRODUCER, c, err, errlen);
	if (!o->rk) {
		rd_kafka_conf_destroy(c);
		return -1;
	}
	if (!o->per_report) {
		o->rkt = rd_kafka_topic_new(o->rk, o->tname, NULL);
		if (!o->rkt) {
			snprintf(err, errlen, "topic '%s': %s", o->tname,
				 rd_kafka_err2str(rd_kafka_last_error()));
			rd_kafka_destroy(o->rk);
			o->rk = NULL;
			return -1;
		}
	}
	return 0;
}

/* topic with %r replaced by the report name; "" when too long. */
static const char *expand(struct kafka_out *o, const char *report)
{
	size_t n = 0;

	for (const char *p = o->topic; *p; p++) {
		bool r = p[0] == '%' && p[1] == 'r';
		size_t len = r ? strlen(report) : 1;

		if (n + len > TOPIC_MAX)
			return "";
		memcpy(o->tname + n, r ? report : p, len);
		n += len;
		p += r;
	}
	o->tname[n] = '\0';
	return o->tname;
}

/* The topic handle of a record; NULL when it cannot have one (counted). */
static rd_kafka_topic_t *topic_of(struct kafka_out *o, const char *report)
{
	struct topic *t;
	const char *name;

	if (!o->per_report)
		return o->rkt;
	if (o->last < o->ntopics && strcmp(o->topics[o->last].report, report) == 0)
		return o->topics[o->last].rkt;
	for (size_t i = 0; i < o->ntopics; i++) {
		if (strcmp(o->topics[i].report, report) == 0) {
			o->last = i;
			return o->topics[i].rkt;
		}
	}
	if (o->ntopics == o->captopics) {
		size_t cap = o->captopics ? 2 * o->captopics : 8;

		t = realloc(o->topics, cap * sizeof(*t));
		if (!t)
			return NULL;
		o->topics = t;
		o->captopics = cap;
	}
	name = expand(o, report);
	t = &o->topics[o->ntopics];
	t->report = strdup(report);
	t->rkt = name[0] && t->report ? rd_kafka_topic_new(o->rk, name, NULL) : NULL;
	if (!t->rkt) {
		free(t->report);
		return NULL;
	}
	o->last = o->ntopics++;
	return t->rkt;
}

static void kafka_free(struct kafka_out *o)
{
	drop_topics(o);
	free(o->topics);
	if (o->rk)
		rd_kafka_destroy(o->rk);
	if (o->conf)
		rd_kafka_conf_destroy(o->conf);
	free(o->topic);
	free(o->name);
	free(o);
}

static int kafka_open(void **state, const struct isp_channel_cfg *cfg,
		      int *bad_kv, char *err, size_t errlen)
{
	struct kafka_out *o;

	if (check_keys(cfg, bad_kv, err, errlen) != 0)
		return -1;
	o = calloc(1, sizeof(*o));
	if (!o || !(o->name = strdup(cfg->name ? cfg->name : "kafka"))) {
		free(o);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	o->ch = cfg->channel;
	o->keyed = true;
	o->conf = rd_kafka_conf_new();
	if (!o->conf || build_conf(o, cfg, o->conf, bad_kv, err, errlen) != 0) {
		kafka_free(o);
		return -1;
	}
	rd_kafka_conf_set_opaque(o->conf, o);
	rd_kafka_conf_set_dr_msg_cb(o->conf, on_delivery);
	rd_kafka_conf_set_error_cb(o->conf, on_error);
	rd_kafka_conf_set_log_cb(o->conf, on_log);
	expand(o, "");          /* the topic without %r */
	*bad_kv = -1;           /* from here on, errors are the section's */
	if (cfg->check_only) {  /* -T starts no producer */
		kafka_free(o);
		return 0;
	}
	if (new_producer(o, err, errlen) != 0) {
		kafka_free(o);
		return -1;
	}
	*state = o;
	return 0;
}

/* ---- the channel's thread ---------------------------------------------------- */

static size_t kafka_write(void *state, const struct isp_record *recs, size_t n)
{
	struct kafka_out *o = state;
	bool waited = false;
	size_t i = 0;
	struct timespec now;
	int64_t ms;

	if (!o->rk)
		return 0;
	tell(o);
	/* The message timestamp (CreateTime), read once per batch rather than
	 * by librdkafka once per record. */
	clock_gettime(CLOCK_REALTIME, &now);
	ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
	while (i < n) {
		const struct isp_record *r = &recs[i];
		rd_kafka_topic_t *rkt = topic_of(o, r->report ? r->report : "");
		const void *key = o->keyed && r->key_len ? r->key : NULL;
		rd_kafka_resp_err_t e;

		if (!rkt) {             /* no topic for it: lost, not retried */
			snprintf(o->why, sizeof(o->why), "no topic for report '%s'",
				 r->report ? r->report : "");
			o->produced++;
			o->failed++;
			i++;
			continue;
		}
		e = rd_kafka_producev(o->rk, RD_KAFKA_V_RKT(rkt),
				      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
				      RD_KAFKA_V_VALUE((void *)r->text, r->len),
				      RD_KAFKA_V_KEY(key, key ? r->key_len : 0),
				      RD_KAFKA_V_TIMESTAMP(ms),
				      RD_KAFKA_V_END);
		if (e == RD_KAFKA_RESP_ERR_NO_ERROR) {
			o->produced++;
			i++;
		} else if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL && !waited) {
			/* Delivery reports free room: serve some, once. */
			rd_kafka_poll(o->rk, FULL_WAIT_MS);
			waited = true;
		} else if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL || e == RD_KAFKA_RESP_ERR__FATAL) {
			break;          /* the channel layer offers the rest again */
		} else {                /* too large, ...: never deliverable */
			snprintf(o->why, sizeof(o->why), "%s", rd_kafka_err2str(e));
			o->produced++;
			o->failed++;
			i++;
		}
	}
	rd_kafka_poll(o->rk, 0);
	return i;
}

/* Replace a producer that had a fatal error; its records are purged and
 * counted as lost. */
static void replace_producer(struct kafka_out *o)
{
	char why[512];

	rd_kafka_fatal_error(o->rk, why, sizeof(why));
	fprintf(stderr, "intspect: channel %s: kafka: fatal error, new producer: %s\n",
		o->name, why);
	rd_kafka_purge(o->rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
	rd_kafka_poll(o->rk, 0);
	drop_topics(o);
	rd_kafka_destroy(o->rk);
	o->rk = NULL;
	/* what the purge did not report is lost all the same */
	o->failed = o->produced - o->acked;
	if (new_producer(o, why, sizeof(why)) != 0) {
		/* Same config as at open: not expected; the channel counts
		 * its records as dropped at shutdown. */
		fprintf(stderr, "intspect: channel %s: kafka: %s\n", o->name, why);
		return;
	}
	o->nsaid = 0;
	isp_channel_add_reconnects(o->ch, 1);
}

static int kafka_flush(void *state)
{
	struct kafka_out *o = state;

	if (!o->rk)
		return -1;
	rd_kafka_poll(o->rk, 0);
	if (rd_kafka_fatal_error(o->rk, NULL, 0) != RD_KAFKA_RESP_ERR_NO_ERROR)
		replace_producer(o);
	tell(o);
	return o->rk ? 0 : -1;
}

static void kafka_finish(void *state, int64_t deadline_ns)
{
	struct kafka_out *o = state;

	while (o->rk && o->produced > o->acked + o->failed) {
		int64_t left = deadline_ns - isp_now_ns();

		if (left <= 0 || isp_channels_hurried())
			break;
		/* flush sends at once (no linger) and serves the reports */
		rd_kafka_flush(o->rk, (int)(left / 1000000 > 100 ? 100 : left / 1000000 + 1));
	}
	if (o->rk && o->produced > o->acked + o->failed) {
		/* The deadline: whatever is still out is dropped. The purge
		 * reports each as failed; poll serves those reports. */
		rd_kafka_purge(o->rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
		for (int k = 0; k < 50 && o->produced > o->acked + o->failed; k++)
			rd_kafka_poll(o->rk, 10);
	}
	if (o->produced > o->acked + o->failed) {
		/* reports that never came: lost too, and no longer awaited */
		o->failed = o->produced - o->acked;
		snprintf(o->why, sizeof(o->why), "not acknowledged at the shutdown deadline");
	}
	if (o->rk && !o->produced) {
		/* Nothing was sent: ask a broker for metadata, so a run that
		 * had no record still says whether the cluster was there. */
		const struct rd_kafka_metadata *md = NULL;
		int64_t left = (deadline_ns - isp_now_ns()) / 1000000;

		if (left > 0 && !isp_channels_hurried() && rd_kafka_metadata(o->rk, 0, NULL, &md,
						  (int)(left < 2000 ? left : 2000)) ==
		    RD_KAFKA_RESP_ERR_NO_ERROR)
			isp_channel_note_up(o->ch);
		if (md)
			rd_kafka_metadata_destroy(md);
	}
	tell(o);
}

static void kafka_close(void *state)
{
	struct kafka_out *o = state;

	kafka_finish(o, 0);     /* a no-op after the channel's finish */
	fprintf(stderr, "intspect: channel %s: kafka: %llu acked, %llu failed%s%s%s\n",
		o->name, (unsigned long long)o->acked, (unsigned long long)o->failed,
		o->failed ? " (last: " : "", o->failed ? o->why : "", o->failed ? ")" : "");
	kafka_free(o);
}

const struct isp_channel_ops isp_kafka_ops = {
	.type = "kafka",
	.open = kafka_open,
	.write_batch = kafka_write,
	.flush = kafka_flush,
	.close = kafka_close,
	.finish = kafka_finish,
	.connects = true,
};
