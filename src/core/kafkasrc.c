/*
 * kafkasrc.c - see kafkasrc.h.
 */
#include "kafkasrc.h"

#include <librdkafka/rdkafka.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_PARTITIONS 1024
/* next_ordered: how long a partition with more to fetch is waited for,
 * and how recent a message must be to wait for one read to its end */
#define ORDER_WAIT_NS 500000000u
#define ORDER_SLACK_NS 250000000u

/* A partition read on its own (ordered delivery): its queue and the
 * message at its head. */
#define PART_BATCH 256                 /* messages taken from a partition's queue at once */

struct part {
	rd_kafka_queue_t *q;
	rd_kafka_message_t *head;
	rd_kafka_message_t **buf;       /* taken, not handed out: buf[at .. n) */
	unsigned at, n;
	uint64_t ts;                    /* the head's time */
	uint64_t last;                  /* the time of the last message it gave (0: none) */
	uint64_t empty_since;           /* waited for since (0: not waiting) */
};

struct kafka_in {
	rd_kafka_t *rk;
	rd_kafka_message_t *msg;        /* the one handed out, freed at the next call */
	/* the next offset of each partition, once read (-1: nothing read) */
	int64_t next[MAX_PARTITIONS];
	int64_t done[MAX_PARTITIONS];   /* committed */
	int64_t seen[MAX_PARTITIONS];   /* the next offset after the furthest read, ever */
	int cur_part;                   /* the message handed out last (-1: none) */
	int64_t cur_off;
	char topic[256];
	/* a packet source lets a revocation wait until what it read of the
	 * partitions is written and committed (kafka_src) */
	bool defer_revoke;
	bool closing;                   /* leaving: commits are the owner's, done */
	rd_kafka_topic_partition_list_t *revoking;
	/* ordered delivery: each partition's queue apart, the oldest head
	 * first (reports of all partitions in time order) */
	bool ordered;
	struct part *part;              /* MAX_PARTITIONS */
	int asg[MAX_PARTITIONS];
	unsigned nasg;
	unsigned since_poll;            /* messages handed out since the consumer's poll */
	struct kafka_in_stats st;
};

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A message's time: the forwarded frame's, else the broker's timestamp
 * (ms), else 0. */
static uint64_t msg_ts(const rd_kafka_message_t *m)
{
	const uint8_t *b = m->payload;

	if (m->len >= FORWARD_HEADER && memcmp(b, FORWARD_MAGIC, 4) == 0 && b[4] == FORWARD_VERSION) {
		uint64_t v = 0;
		for (unsigned i = 16; i < 24; i++)
			v = v << 8 | b[i];
		return v;
	}
	rd_kafka_timestamp_type_t tt;
	int64_t ms = rd_kafka_message_timestamp(m, &tt);
	return ms > 0 ? (uint64_t)ms * 1000000u : 0;
}

static int commit_positions(struct kafka_in *k, const int64_t *pos, bool sync);
static void on_commit(rd_kafka_t *rk, rd_kafka_resp_err_t e,
		      rd_kafka_topic_partition_list_t *offsets, void *opaque);

static void part_free(struct part *pt)
{
	if (pt->head)
		rd_kafka_message_destroy(pt->head);
	for (unsigned i = pt->at; i < pt->n; i++)
		rd_kafka_message_destroy(pt->buf[i]);
	if (pt->q)
		rd_kafka_queue_destroy(pt->q);
	free(pt->buf);
	memset(pt, 0, sizeof(*pt));
}

/* Let revoked partitions go: their positions are forgotten, so that they
 * start again from the group's offsets if they come back. */
static void let_go(struct kafka_in *k, const rd_kafka_topic_partition_list_t *parts)
{
	for (int i = 0; i < parts->cnt; i++) {
		int p = parts->elems[i].partition;
		if (p < 0 || p >= MAX_PARTITIONS)
			continue;
		k->next[p] = k->done[p] = -1;
		if (!k->ordered)
			continue;
		/* what it held is read again by the next owner */
		part_free(&k->part[p]);
		for (unsigned j = 0; j < k->nasg; j++)
			if (k->asg[j] == p)
				k->asg[j--] = k->asg[--k->nasg];
	}
	if (k->cur_part >= 0 && k->next[k->cur_part] < 0)
		k->cur_part = -1;
	rd_kafka_assign(k->rk, NULL);
}

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

/* One property into conf: 0, or -1 with librdkafka's message. */
static int set_prop(rd_kafka_conf_t *conf, const char *prop, char *err, size_t errlen)
{
	char name[128], why[512];
	const char *eq = strchr(prop, '=');

	if (!eq || (size_t)(eq - prop) >= sizeof(name)) {
		snprintf(err, errlen, "Kafka input: '%s': expected name=value", prop);
		return -1;
	}
	memcpy(name, prop, (size_t)(eq - prop));
	name[eq - prop] = 0;
	if (rd_kafka_conf_set(conf, name, eq + 1, why, sizeof(why)) != RD_KAFKA_CONF_OK) {
		snprintf(err, errlen, "Kafka input: %s", why);
		return -1;
	}
	return 0;
}

int kafka_in_check_props(const char *const *props, unsigned nprops, char *err, size_t errlen)
{
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	int rc = 0;

	if (!conf) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (unsigned i = 0; i < nprops && rc == 0; i++)
		rc = set_prop(conf, props[i], err, errlen);
	rd_kafka_conf_destroy(conf);
	return rc;
}

static void on_rebalance(rd_kafka_t *rk, rd_kafka_resp_err_t e,
			 rd_kafka_topic_partition_list_t *parts, void *opaque)
{
	struct kafka_in *k = opaque;

	if (e == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
		k->st.assigned += (uint64_t)parts->cnt;
		/* each partition's queue apart before anything is fetched, so
		 * that no message goes to the consumer's queue */
		for (int i = 0; k->ordered && i < parts->cnt; i++) {
			int p = parts->elems[i].partition;
			if (p < 0 || p >= MAX_PARTITIONS || k->part[p].q)
				continue;
			rd_kafka_queue_t *q = rd_kafka_queue_get_partition(rk, parts->elems[i].topic, p);
			rd_kafka_message_t **buf = calloc(PART_BATCH, sizeof(*buf));
			if (!q || !buf) {
				if (q)
					rd_kafka_queue_destroy(q);
				free(buf);
				continue;       /* (then it feeds the consumer's queue) */
			}
			rd_kafka_queue_forward(q, NULL);
			k->part[p] = (struct part){ .q = q, .buf = buf };
			k->asg[k->nasg++] = p;
		}
		rd_kafka_assign(rk, parts);
		return;
	}
	k->st.revoked += (uint64_t)parts->cnt;
	if (k->defer_revoke && !k->closing) {
		/* the owner writes what it holds first (kafka_src_next) */
		if (k->revoking)
			rd_kafka_topic_partition_list_destroy(k->revoking);
		k->revoking = rd_kafka_topic_partition_list_copy(parts);
		return;
	}
	/* what was read of them is committed first (the merge: whatever it
	 * read is in its windows or written) */
	if (!k->closing)
		kafka_in_commit(k);
	let_go(k, parts);
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
		k->next[i] = k->done[i] = k->seen[i] = -1;
	k->cur_part = -1;
	snprintf(k->topic, sizeof(k->topic), "%s", topic);
	const char *base[][2] = {
		{ "bootstrap.servers", brokers }, { "group.id", group && *group ? group : "intspect" },
		{ "enable.auto.commit", "false" }, { "auto.offset.reset", "earliest" },
		{ "enable.partition.eof", "false" },
		/* an empty partition answers within this: below ORDER_WAIT_NS */
		{ "fetch.wait.max.ms", "100" },
	};
	for (size_t i = 0; i < sizeof(base) / sizeof(base[0]); i++)
		if (rd_kafka_conf_set(conf, base[i][0], base[i][1], why, sizeof(why)) != RD_KAFKA_CONF_OK) {
			snprintf(err, errlen, "Kafka input: %s", why);
			goto fail;
		}
	for (unsigned i = 0; i < nprops; i++)
		if (set_prop(conf, props[i], err, errlen) < 0)
			goto fail;
	rd_kafka_conf_set_opaque(conf, k);
	rd_kafka_conf_set_rebalance_cb(conf, on_rebalance);
	rd_kafka_conf_set_offset_commit_cb(conf, on_commit);
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

/* An error message: 0 to go on (transient: librdkafka retries), -1 fatal. */
static int on_error_msg(const rd_kafka_message_t *m, char *err, size_t errlen)
{
	switch (m->err) {
	case RD_KAFKA_RESP_ERR__PARTITION_EOF:
	case RD_KAFKA_RESP_ERR__TRANSPORT:
	case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
	case RD_KAFKA_RESP_ERR__UNKNOWN_TOPIC:          /* not made yet: it may come */
	case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
		return 0;
	default:
		snprintf(err, errlen, "Kafka input: %s", rd_kafka_message_errstr(m));
		return -1;
	}
}

/* Hand out m (the caller's until the next call). */
static int give(struct kafka_in *k, rd_kafka_message_t *m, const uint8_t **data, size_t *len,
		uint64_t *ts_ns)
{
	k->msg = m;
	if (m->partition >= 0 && m->partition < MAX_PARTITIONS) {
		k->next[m->partition] = m->offset + 1;
		k->cur_part = m->partition;
		k->cur_off = m->offset;
		if (m->offset < k->seen[m->partition])
			k->st.replayed++;
		else
			k->seen[m->partition] = m->offset + 1;
	}
	k->st.consumed++;
	*data = m->payload;
	*len = m->len;
	*ts_ns = msg_ts(m);
	return 1;
}

/* A message of the consumer's own queue: an error or an event (its
 * rebalances run in the poll), or a message of a partition whose queue
 * could not be set apart. 0, or -1 fatal. */
static int consumer_msg(struct kafka_in *k, rd_kafka_message_t *e, char *err, size_t errlen)
{
	int rc = e->err ? on_error_msg(e, err, errlen) : 0;

	if (!e->err && e->partition >= 0 && e->partition < MAX_PARTITIONS &&
	    !k->part[e->partition].head && k->part[e->partition].q) {
		k->part[e->partition].head = e;
		k->part[e->partition].ts = msg_ts(e);
		return 0;
	}
	rd_kafka_message_destroy(e);
	return rc;
}

/* The partition's next message into its head, from what was taken or
 * its queue (waiting up to wait_ms). -1: a fatal error. */
static int fill(struct part *pt, int wait_ms, char *err, size_t errlen)
{
	while (!pt->head) {
		if (pt->at == pt->n) {
			ssize_t got = rd_kafka_consume_batch_queue(pt->q, wait_ms, pt->buf, PART_BATCH);
			pt->at = 0;
			pt->n = got > 0 ? (unsigned)got : 0;
			if (!pt->n)
				return 0;
			wait_ms = 0;
		}
		rd_kafka_message_t *h = pt->buf[pt->at++];
		if (h->err) {
			int rc = on_error_msg(h, err, errlen);
			rd_kafka_message_destroy(h);
			if (rc < 0)
				return -1;
			continue;
		}
		pt->head = h;
		pt->ts = msg_ts(h);
	}
	return 0;
}

/* Nothing more in the partition for now: it was read up to the end of
 * its log as the last fetch saw it (then there is nothing older to wait
 * for). */
static bool caught_up(const struct kafka_in *k, int p)
{
	int64_t lo, hi;

	if (rd_kafka_get_watermark_offsets(k->rk, k->topic, p, &lo, &hi) != RD_KAFKA_RESP_ERR_NO_ERROR ||
	    hi < 0)
		return false;
	return k->next[p] >= 0 ? k->next[p] >= hi : lo >= hi;
}

/*
 * Ordered: the oldest head of the partitions, once no partition without a
 * message can still bring an older one. A partition's messages come in
 * time order (one forwarder, or one sink, per flow), so an empty one can
 * only bring messages at or after the last it gave (`last`). It waits
 * for the message at the head if that is younger than `last`:
 * - read to the end of its log (the last fetch's high watermark): only
 *   what a producer is sending now can come, so it holds back messages
 *   less than ORDER_SLACK_NS old by the clock (a topic read behind is
 *   older than that: not held);
 * - with more to fetch: until its fetch comes back, at most ORDER_WAIT_NS
 *   (then it is passed over until it has a message again).
 */
static int next_ordered(struct kafka_in *k, const uint8_t **data, size_t *len, uint64_t *ts_ns,
			int timeout_ms, char *err, size_t errlen)
{
	uint64_t start = 0;

	for (;;) {
		/* rebalances and errors come through the consumer's queue: now
		 * and then, and whenever a partition is waited for */
		if (++k->since_poll >= PART_BATCH || start) {
			k->since_poll = 0;
			rd_kafka_message_t *e;
			while ((e = rd_kafka_consumer_poll(k->rk, 0)))
				if (consumer_msg(k, e, err, errlen) < 0)
					return -1;
		}
		if (k->revoking)
			return 2;
		int best = -1, wait_for = -1;
		for (unsigned j = 0; j < k->nasg; j++) {
			struct part *pt = &k->part[k->asg[j]];
			if (fill(pt, 0, err, errlen) < 0)
				return -1;
			if (pt->head && (best < 0 || pt->ts < k->part[best].ts))
				best = k->asg[j];
		}
		uint64_t now = now_ns(), wall = 0;
		for (unsigned j = 0; best >= 0 && j < k->nasg; j++) {
			struct part *pt = &k->part[k->asg[j]];
			if (pt->head) {
				pt->empty_since = 0;
				continue;
			}
			if (pt->last && k->part[best].ts <= pt->last)
				continue;       /* nothing it brings can be older */
			if (caught_up(k, k->asg[j])) {
				if (!wall)
					wall = wall_ns();
				if (k->part[best].ts + ORDER_SLACK_NS <= wall)
					continue;
				wait_for = k->asg[j];
				break;
			}
			if (!pt->empty_since)
				pt->empty_since = now;
			if (now - pt->empty_since < ORDER_WAIT_NS) {
				wait_for = k->asg[j];
				break;
			}
		}
		if (best >= 0 && wait_for < 0) {
			struct part *pt = &k->part[best];
			rd_kafka_message_t *m = pt->head;
			pt->head = NULL;
			pt->last = pt->ts;
			return give(k, m, data, len, ts_ns);
		}
		if (!start)
			start = now;
		else if (now - start >= (uint64_t)timeout_ms * 1000000u)
			return 2;
		/* a millisecond for the partition waited for (or any event) */
		if (wait_for >= 0) {
			/* (one message: a batch waits for the whole timeout) */
			struct part *pt = &k->part[wait_for];
			rd_kafka_message_t *h = rd_kafka_consume_queue(pt->q, 1);
			if (h && h->err) {
				int rc = on_error_msg(h, err, errlen);
				rd_kafka_message_destroy(h);
				if (rc < 0)
					return -1;
			} else if (h) {
				pt->head = h;
				pt->ts = msg_ts(h);
			}
		} else {
			rd_kafka_message_t *e = rd_kafka_consumer_poll(k->rk, 1);
			if (e && consumer_msg(k, e, err, errlen) < 0)
				return -1;
		}
	}
}

int kafka_in_next(struct kafka_in *k, const uint8_t **data, size_t *len, uint64_t *ts_ns,
		  int timeout_ms, char *err, size_t errlen)
{
	if (k->msg) {
		rd_kafka_message_destroy(k->msg);
		k->msg = NULL;
	}
	if (k->ordered)
		return next_ordered(k, data, len, ts_ns, timeout_ms, err, errlen);
	for (;;) {
		rd_kafka_message_t *m = rd_kafka_consumer_poll(k->rk, timeout_ms);
		if (!m)
			return 2;
		if (!m->err)
			return give(k, m, data, len, ts_ns);
		int rc = on_error_msg(m, err, errlen);
		rd_kafka_message_destroy(m);
		if (rc < 0)
			return -1;
		return 2;
	}
}

int kafka_in_commit(struct kafka_in *k)
{
	return commit_positions(k, k->next, true);
}

/* Commit pos[]: synchronously (a revocation, the end: every partition's,
 * and the result known), or not (on the way: only what moved; a failure
 * is counted by on_commit and the next commit covers it). */
static int commit_positions(struct kafka_in *k, const int64_t *pos, bool sync)
{
	rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(8);
	unsigned n = 0;

	for (int p = 0; p < MAX_PARTITIONS; p++) {
		/* (a partition let go since: not ours to commit) */
		if (pos[p] < 0 || k->next[p] < 0 || (!sync && pos[p] <= k->done[p]))
			continue;
		rd_kafka_topic_partition_list_add(l, k->topic, p)->offset = pos[p];
		n++;
	}
	int rc = 0;
	if (n) {
		rd_kafka_resp_err_t e = rd_kafka_commit(k->rk, l, !sync);
		if (e) {
			k->st.commit_failures++;
			rc = -1;
		} else {
			for (int i = 0; i < l->cnt; i++)
				k->done[l->elems[i].partition] = l->elems[i].offset;
			k->st.committed++;
		}
	}
	rd_kafka_topic_partition_list_destroy(l);
	return rc;
}

/* An asynchronous commit's answer (served by the consumer's poll). */
static void on_commit(rd_kafka_t *rk, rd_kafka_resp_err_t e,
		      rd_kafka_topic_partition_list_t *offsets, void *opaque)
{
	struct kafka_in *k = opaque;

	(void)rk, (void)offsets;
	if (e && e != RD_KAFKA_RESP_ERR__NO_OFFSET)
		k->st.commit_failures++;
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
	if (k->revoking) {
		rd_kafka_topic_partition_list_destroy(k->revoking);
		k->revoking = NULL;
	}
	k->closing = true;
	/* (its revocation lets the partitions go: let_go) */
	rd_kafka_consumer_close(k->rk);
	for (unsigned j = 0; k->part && j < k->nasg; j++)
		part_free(&k->part[k->asg[j]]);
	rd_kafka_destroy(k->rk);
	free(k->part);
	free(k);
}

/* ---- telemetry reports from a topic (kafkasrc.h) ---- */

#define HEADROOM 28             /* IPv4 (20) + UDP (8) in front of each payload */
#define PAYLOAD_MAX (65535 - HEADROOM)
#define MARKS 64
#define CHECKPOINT_EVERY_NS 20000000u
#define SETTLE_WAIT_MS 15000

struct kafka_src {
	struct kafka_in *in;
	struct kafka_src_opts o;
	uint8_t buf[HEADROOM + PAYLOAD_MAX];
	int64_t ckpt[MAX_PARTITIONS];
	bool has_ckpt;
	uint64_t mark[MARKS];
	unsigned nmark;
	uint64_t ckpt_ns;
	bool flushing;                  /* next returned 3 for the revocation waiting */
	_Atomic int stop;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct kafka_src *kafka_src_open(const struct kafka_src_opts *o, char *err, size_t errlen)
{
	char brokers[512], topic[256], group[256];
	struct kafka_src *k;

	if (kafka_in_parse(o->spec, brokers, sizeof(brokers), topic, sizeof(topic), group,
			   sizeof(group), err, errlen) < 0)
		return NULL;
	if (!(k = calloc(1, sizeof(*k)))) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	k->o = *o;
	if (!k->o.port)
		k->o.port = 32766;
	if (!(k->in = kafka_in_open(brokers, topic, group, o->props, o->nprops, err, errlen))) {
		free(k);
		return NULL;
	}
	k->in->defer_revoke = true;
	/* reports of all its partitions in time order */
	if (!(k->in->part = calloc(MAX_PARTITIONS, sizeof(*k->in->part)))) {
		kafka_in_close(k->in);
		free(k);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	k->in->ordered = true;
	return k;
}

static bool settled(struct kafka_src *k)
{
	return !k->o.settled || k->o.settled(k->o.ctx, k->mark, k->nmark);
}

static void try_commit(struct kafka_src *k, bool sync)
{
	if (k->has_ckpt && settled(k) && commit_positions(k->in, k->ckpt, sync) == 0)
		k->has_ckpt = false;
}

/* Wait (bounded) until the checkpoint is settled, and commit it. */
static void commit_waiting(struct kafka_src *k)
{
	for (unsigned ms = 0; k->has_ckpt && !settled(k) && ms < SETTLE_WAIT_MS; ms += 10)
		usleep(10000);
	try_commit(k, true);
}

void kafka_src_checkpoint(struct kafka_src *k, bool with_current, bool force)
{
	uint64_t now = mono_ns();

	if (!force && (k->has_ckpt || now - k->ckpt_ns < CHECKPOINT_EVERY_NS))
		return;
	memcpy(k->ckpt, k->in->next, sizeof(k->ckpt));
	if (!with_current && k->in->cur_part >= 0)
		k->ckpt[k->in->cur_part] = k->in->cur_off;
	k->nmark = k->o.mark ? k->o.mark(k->o.ctx, k->mark, MARKS) : 0;
	k->has_ckpt = true;
	k->ckpt_ns = now;
}

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

int kafka_src_next(struct kafka_src *k, const uint8_t **data, uint32_t *caplen,
		   uint32_t *wirelen, uint64_t *ts_ns, char *err, size_t errlen)
{
	for (;;) {
		if (atomic_load_explicit(&k->stop, memory_order_relaxed))
			return 0;
		try_commit(k, false);
		if (k->in->revoking) {
			if (!k->flushing) {
				k->flushing = true;
				return 3;       /* the rules write what they hold */
			}
			/* written, and a checkpoint marked: commit, let go */
			commit_waiting(k);
			let_go(k->in, k->in->revoking);
			rd_kafka_topic_partition_list_destroy(k->in->revoking);
			k->in->revoking = NULL;
			k->flushing = false;
			continue;
		}
		const uint8_t *m;
		size_t len;
		uint64_t ts;
		int rc = kafka_in_next(k->in, &m, &len, &ts, ISP_KAFKA_TIMEOUT_MS, err, errlen);
		if (rc != 1) {
			if (rc == 2 && k->in->revoking)
				continue;
			return rc;
		}
		uint32_t addr = 0;
		unsigned sport = 0, dport = 0;
		if (len >= FORWARD_HEADER && memcmp(m, FORWARD_MAGIC, 4) == 0 &&
		    m[4] == FORWARD_VERSION) {
			sport = (unsigned)m[6] << 8 | m[7];
			dport = (unsigned)m[8] << 8 | m[9];
			addr = (uint32_t)m[12] << 24 | (uint32_t)m[13] << 16 | (uint32_t)m[14] << 8 | m[15];
			ts = 0;
			for (unsigned i = 16; i < 24; i++)
				ts = ts << 8 | m[i];
			m += FORWARD_HEADER;
			len -= FORWARD_HEADER;
		}
		if (!ts) {
			struct timespec now;
			clock_gettime(CLOCK_REALTIME, &now);
			ts = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
		}
		size_t keep = len > PAYLOAD_MAX ? PAYLOAD_MAX : len;
		uint8_t *p = k->buf;
		memcpy(p + HEADROOM, m, keep);
		/* IPv4 (sender -> 127.0.0.1), UDP (sender port -> the report port) */
		memset(p, 0, HEADROOM);
		p[0] = 0x45;
		put16(p + 2, (unsigned)(HEADROOM + keep));
		p[6] = 0x40;
		p[8] = 64;
		p[9] = 17;
		put16(p + 12, addr >> 16);
		put16(p + 14, addr & 0xffff);
		p[16] = 127;
		p[19] = 1;
		put16(p + 20, sport);
		put16(p + 22, dport ? dport : k->o.port);
		put16(p + 24, (unsigned)(8 + keep));
		*data = p;
		*caplen = (uint32_t)(HEADROOM + keep);
		*wirelen = (uint32_t)(HEADROOM + (len > PAYLOAD_MAX ? len + 1 : len));
		*ts_ns = ts;
		return 1;
	}
}

void kafka_src_stop(struct kafka_src *k)
{
	atomic_store_explicit(&k->stop, 1, memory_order_relaxed);
}

uint16_t kafka_src_port(const struct kafka_src *k)
{
	return k->o.port;
}

void kafka_src_stats(const struct kafka_src *k, struct kafka_in_stats *st)
{
	kafka_in_stats(k->in, st);
}

void kafka_src_close(struct kafka_src *k)
{
	if (!k)
		return;
	/* the pipeline ended: everything read is written */
	kafka_src_checkpoint(k, true, true);
	bool ok = !k->has_ckpt || settled(k);
	commit_waiting(k);
	struct kafka_in_stats st = k->in->st;
	fprintf(stderr, "intspect: kafka input %s: %llu messages consumed (%llu read again), %llu "
		"partitions assigned, %llu revoked, %llu offset commits (%llu failed)%s\n",
		k->in->topic, (unsigned long long)st.consumed, (unsigned long long)st.replayed,
		(unsigned long long)st.assigned, (unsigned long long)st.revoked,
		(unsigned long long)st.committed, (unsigned long long)st.commit_failures,
		ok || !k->has_ckpt ? "" : "; the channels did not settle: the last offsets "
		"are not committed (read again by the next run)");
	kafka_in_close(k->in);
	free(k);
}

const char *kafka_src_version(void)
{
	return rd_kafka_version_str();
}
