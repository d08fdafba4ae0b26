/*
 * kafkasrc.c - see kafkasrc.h.
 */
#include "kafkasrc.h"

#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PARTITIONS 1024

struct kafka_in {
	rd_kafka_t *rk;
	rd_kafka_message_t *msg;        /* the one handed out, freed at the next call */
	/* the next offset of each partition, once read (-1: nothing read) */
	int64_t next[MAX_PARTITIONS];
	int64_t done[MAX_PARTITIONS];   /* committed */
	char topic[256];
	struct kafka_in_stats st;
};

int kafka_in_parse(const char *spec, char *brokers, size_t nb, char *topic, size_t nt,
		   char *group, size_t ng, char *err, size_t errlen)
{
	const char *slash = strrchr(spec, '/');
	const char *at = slash ? strchr(slash, '@') : NULL;

	if (!slash || slash == spec || !slash[1] || slash[1] == '@' || (at && !at[1])) {
		snprintf(err, errlen, "'%s': expected BROKERS/TOPIC[@GROUP], e.g. "
			 "localhost:9092/int-reports@collectors", spec);
		return -1;
	}
	size_t lb = (size_t)(slash - spec), lt = at ? (size_t)(at - slash - 1) : strlen(slash + 1);
	if (lb >= nb || lt >= nt || (at && strlen(at + 1) >= ng)) {
		snprintf(err, errlen, "'%s': too long", spec);
		return -1;
	}
	memcpy(brokers, spec, lb);
	brokers[lb] = 0;
	memcpy(topic, slash + 1, lt);
	topic[lt] = 0;
	snprintf(group, ng, "%s", at ? at + 1 : "");
	return 0;
}

static void on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t e,
			 rd_kafka_topic_partition_list_t *parts, void *opaque)
{
	struct kafka_in *k = opaque;

	if (e == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
		k->st.assigned += (uint64_t)parts->cnt;
		rd_kafka_assign(rk, parts);
		return;
	}
	/* revoked: what was read of them is committed first (the caller's
	 * records of it are out: kafka_in_next is called between items) */
	k->st.revoked += (uint64_t)parts->cnt;
	kafka_in_commit(k);
	rd_kafka_assign(rk, NULL);
}

struct kafka_in *kafka_in_open(const char *brokers, const char *topic, const char *group,
			       const char *const *props, unsigned nprops, char *err, size_t errlen)
{
	struct kafka_in *k = calloc(1, sizeof(*k));
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	char why[512];

	if (!k || !conf) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	for (unsigned i = 0; i < MAX_PARTITIONS; i++)
		k->next[i] = k->done[i] = -1;
	snprintf(k->topic, sizeof(k->topic), "%s", topic);
	const char *base[][2] = {
		{ "bootstrap.servers", brokers }, { "group.id", group && *group ? group : "intspect" },
		{ "enable.auto.commit", "false" }, { "auto.offset.reset", "earliest" },
		{ "enable.partition.eof", "false" },
	};
	for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
		if (rd_kafka_conf_set(conf, base[i][0], base[i][1], why, sizeof(why)) != RD_KAFKA_CONF_OK) {
			snprintf(err, errlen, "Kafka input: %s", why);
			goto fail;
		}
	for (unsigned i = 0; i < nprops; i++) {
		char name[128];
		const char *eq = strchr(props[i], '=');
		if (!eq || (size_t)(eq - props[i]) >= sizeof(name)) {
			snprintf(err, errlen, "Kafka input: '%s': expected name=value", props[i]);
			goto fail;
		}
		memcpy(name, props[i], (size_t)(eq - props[i]));
		name[eq - props[i]] = 0;
		if (rd_kafka_conf_set(conf, name, eq + 1, why, sizeof(why)) != RD_KAFKA_CONF_OK) {
			snprintf(err, errlen, "Kafka input: %s", why);
			goto fail;
		}
	}
	rd_kafka_conf_set_opaque(conf, k);
	rd_kafka_conf_set_rebalance_cb(conf, on_rebalance);
	if (!(k->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, why, sizeof(why)))) {
		snprintf(err, errlen, "Kafka input: %s", why);
		goto fail;
	}
	conf = NULL;
	rd_kafka_poll_set_consumer(k->rk);
	rd_kafka_topic_partition_list_t *t = rd_kafka_topic_partition_list_new(1);
	rd_kafka_topic_partition_list_add(t, topic, RD_KAFKA_PARTITION_UA);
	rd_kafka_resp_err_t e = rd_kafka_subscribe(k->rk, t);
	rd_kafka_topic_partition_list_destroy(t);
	if (e) {
		snprintf(err, errlen, "Kafka input: subscribe to %s: %s", topic, rd_kafka_err2str(e));
		goto fail;
	}
	return k;
fail:
	if (conf)
		rd_kafka_conf_destroy(conf);
	if (k && k->rk)
		rd_kafka_destroy(k->rk);
	free(k);
	return NULL;
}

int kafka_in_next(struct kafka_in *k, const uint8_t **data, size_t *len, uint64_t *ts_ns,
		  int timeout_ms, char *err, size_t errlen)
{
	for (;;) {
		if (k->msg) {
			rd_kafka_message_destroy(k->msg);
			k->msg = NULL;
		}
		rd_kafka_message_t *m = rd_kafka_consumer_poll(k->rk, timeout_ms);
		if (!m)
			return 2;
		k->msg = m;
		if (m->err) {
			/* transient errors (a broker down) are librdkafka's to retry */
			if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF ||
			    m->err == RD_KAFKA_RESP_ERR__TRANSPORT ||
			    m->err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN)
				return 2;
			if (m->err == RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC ||
			    m->err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART)
				return 2;       /* not made yet: it may come */
			snprintf(err, errlen, "Kafka input: %s", rd_kafka_message_errstr(m));
			return -1;
		}
		if (m->partition >= 0 && m->partition < MAX_PARTITIONS)
			k->next[m->partition] = m->offset + 1;
		k->st.consumed++;
		*data = m->payload;
		*len = m->len;
		rd_kafka_timestamp_type_t tt;
		int64_t ms = rd_kafka_message_timestamp(m, &tt);
		*ts_ns = ms > 0 ? (uint64_t)ms * 1000000u : 0;
		rd_kafka_headers_t *h;
		const void *hv;
		size_t hl;
		if (rd_kafka_message_headers(m, &h) == RD_KAFKA_RESP_ERR_NO_ERROR &&
		    rd_kafka_header_get_last(h, "ts_ns", &hv, &hl) == RD_KAFKA_RESP_ERR_NO_ERROR &&
		    hl == 8) {
			const uint8_t *b = hv;
			uint64_t v = 0;
			for (unsigned i = 0; i < 8; i++)
				v = v << 8 | b[i];
			*ts_ns = v;
		}
		return 1;
	}
}

int kafka_in_commit(struct kafka_in *k)
{
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(8);
	unsigned n = 0;

	for (int p = 0; p < MAX_PARTITIONS; p++) {
		if (k->next[p] < 0 || k->next[p] == k->done[p])
			continue;
		rd_kafka_topic_partition_list_add(l, k->topic, p)->offset = k->next[p];
		n++;
	}
	int rc = 0;
	if (n) {
		rd_kafka_resp_err_t e = rd_kafka_commit(k->rk, l, 0);
		if (e) {
			k->st.commit_failures++;
			rc = -1;
		} else {
			for (int i = 0; i < l->cnt; i++)
				k->done[l->elems[i].partition] = l->elems[i].offset;
			k->st.committed += n;
		}
	}
	rd_kafka_topic_partition_list_destroy(l);
	return rc;
}

void kafka_in_stats(const struct kafka_in *k, struct kafka_in_stats *st)
{
	*st = k->st;
}

void kafka_in_close(struct kafka_in *k)
{
	if (!k)
		return;
	if (k->msg)
		rd_kafka_message_destroy(k->msg);
	rd_kafka_consumer_close(k->rk);
	rd_kafka_destroy(k->rk);
	free(k);
}
