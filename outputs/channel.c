/*
 * channel.c - channel types registry, output-section parsing, and the
 * per-channel delivery thread (channel.h).
 *
 * The thread is the queue's only consumer: it takes a batch, offers it to
 * the type's write_batch until every record is delivered (backing off 10 ms
 * doubling to 1 s while nothing goes through), flushes at least every
 * flush-ms, and at shutdown keeps going until the queue is empty or the
 * deadline passes, then counts what is left as dropped. Producers only
 * touch the queue, so a dead service costs them nothing but drops.
 */
#include "config.h"        /* HAVE_RDKAFKA, ... */
#include "channel.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef HAVE_HIREDIS
#include <hiredis/hiredis.h>
#include "redis_tls.h"
#endif
#ifdef HAVE_RDKAFKA
#include <librdkafka/rdkafka.h>
#endif

#include "builtin.h"
#include "kv.h"
#include "queue.h"

#define MAX_TYPES 32
#define BACKOFF_MIN_NS (10 * 1000000LL)
#define BACKOFF_MAX_NS (1000 * 1000000LL)

/* What producers read on every record (ops, q, p) comes first and is
 * never written once open; the counters and the thread's batch, written
 * by both sides, start on lines of their own (struct isp_counters keeps
 * producers' and the thread's counters apart too), so a record's submit
 * does not wait for a line the channel's thread has just written. */
struct isp_channel {
	char *name;
	const struct isp_channel_ops *ops;
	struct isp_queue *q;            /* NULL when disabled */
	void *state;
	struct isp_channel_params p;
	struct isp_counters cnt;
	_Alignas(ISP_CACHE_LINE) struct isp_qbatch batch;        /* the thread's */
	pthread_t thread;
	bool started, joined, shut;     /* owner's thread only */
	_Atomic bool stopping;
	_Atomic int64_t deadline_ns;
	_Atomic uint64_t lost;          /* isp_channel_add_lost: in cnt.delivered,
					 * reported as dropped */
	_Atomic bool up;                /* isp_channel_note_up was called */
};

/* ---- registry ------------------------------------------------------------ */

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static const struct isp_channel_ops *types[MAX_TYPES];
static size_t ntypes;
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

int isp_channel_register_type(const struct isp_channel_ops *ops)
{
	int rc = -1;

	if (!ops || !ops->type || !ops->open || !ops->write_batch)
		return -1;
	pthread_mutex_lock(&reg_mu);
	if (ntypes < MAX_TYPES) {
		rc = 0;
		for (size_t i = 0; i < ntypes; i++)
			if (strcmp(types[i]->type, ops->type) == 0)
				rc = -1;
		if (rc == 0)
			types[ntypes++] = ops;
	}
	pthread_mutex_unlock(&reg_mu);
	return rc;
}

static void register_builtins(void)
{
	isp_channel_register_type(&isp_stdout_ops);
	isp_channel_register_type(&isp_file_ops);
#ifdef HAVE_RDKAFKA
	isp_channel_register_type(&isp_kafka_ops);
#endif
#ifdef HAVE_HIREDIS
	isp_channel_register_type(&isp_redis_ops);
#endif
	isp_channel_register_type(&isp_socket_ops);
	isp_channel_register_type(&isp_influxdb_ops);
	isp_channel_register_type(&isp_prometheus_ops);
}

void isp_channels_init(void)
{
	pthread_once(&builtin_once, register_builtins);
}

void isp_channels_describe(FILE *out)
{
	fprintf(out, "  outputs: stdout, file, socket (unix, tcp, udp)\n");
	fprintf(out, "  influxdb output: line protocol over HTTP/1.1 or UDP (InfluxDB 1.x /write)\n");
	fprintf(out, "  prometheus output: an HTTP endpoint, text exposition format 0.0.4\n");
#if defined(HAVE_HIREDIS) && defined(HAVE_OPENSSL)
	fprintf(out, "  redis output: hiredis %d.%d.%d, TLS with %s\n", HIREDIS_MAJOR, HIREDIS_MINOR,
		HIREDIS_PATCH, redis_tls_version());
#elif defined(HAVE_HIREDIS)
	fprintf(out, "  redis output: hiredis %d.%d.%d, no TLS (configure found no OpenSSL)\n",
		HIREDIS_MAJOR, HIREDIS_MINOR, HIREDIS_PATCH);
#else
	fprintf(out, "  redis output: not built (configure found no hiredis)\n");
#endif
#ifdef HAVE_RDKAFKA
	fprintf(out, "  kafka output: librdkafka %s\n", rd_kafka_version_str());
#else
	fprintf(out, "  kafka output: not built (configure found no librdkafka)\n");
#endif
}

static const struct isp_channel_ops *find_type(const char *name, char *known,
					       size_t knownlen)
{
	const struct isp_channel_ops *ops = NULL;
	size_t off = 0;

	known[0] = '\0';
	pthread_mutex_lock(&reg_mu);
	for (size_t i = 0; i < ntypes; i++) {
		if (strcmp(types[i]->type, name) == 0)
			ops = types[i];
		if (off < knownlen) {
			int n = snprintf(known + off, knownlen - off, "%s%s",
					 i ? ", " : "", types[i]->type);
			off += n > 0 ? (size_t)n : 0;
		}
	}
	pthread_mutex_unlock(&reg_mu);
	return ops;
}

/* ---- generic keys ---------------------------------------------------------- */

static const struct isp_channel_params defaults = {
	.enable = true,
	.queue_records = 65536,
	.queue_bytes = 64u << 20,
	.policy = ISP_DROP_NEWEST,
	.batch = 256,
	.flush_ms = 100,
	.shutdown_ms = 5000,
	.format = 0,
};

static const char *record_format_name(enum isp_record_format f)
{
	static const char *const names[] = { "json", "csv", "intspect-csv", "influx" };
	return (unsigned)f < sizeof(names) / sizeof(names[0]) ? names[f] : "?";
}

/* Index in isp_channel_generic_keys, or -1. */
static int generic_index(const char *key)
{
	for (int i = 0; isp_channel_generic_keys[i]; i++)
		if (strcmp(isp_channel_generic_keys[i], key) == 0)
			return i;
	return -1;
}

static int parse_generic(int which, const struct isp_kv *kv,
			 struct isp_channel_params *p, char *msg, size_t len)
{
	static const char *const policies[] = {
		"drop-newest", "drop-oldest", "block", NULL
	};
	static const char *const formats[] = { "json", "csv", "intspect-csv", "influx", NULL };
	uint64_t v = 0;
	int e = 0, rc;

	switch (which) {
	case 0:
		return isp_kv_bool(kv, &p->enable, msg, len);
	case 1:
		rc = isp_kv_uint(kv, 1, 1u << 30, &v, msg, len);
		p->queue_records = (size_t)v;
		return rc;
	case 2:
		rc = isp_kv_size(kv, ISP_QUEUE_MIN_BYTES, 2ull << 30, &v, msg, len);
		p->queue_bytes = (size_t)v;
		return rc;
	case 3:
		rc = isp_kv_enum(kv, policies, &e, msg, len);
		p->policy = (enum isp_drop_policy)e;
		return rc;
	case 4:
		rc = isp_kv_uint(kv, 1, 65536, &v, msg, len);
		p->batch = (size_t)v;
		return rc;
	case 5:
		rc = isp_kv_uint(kv, 1, 3600000, &v, msg, len);
		p->flush_ms = (unsigned)v;
		return rc;
	case 6:
		rc = isp_kv_uint(kv, 0, 3600000, &v, msg, len);
		p->shutdown_ms = (unsigned)v;
		return rc;
	default:
		rc = isp_kv_enum(kv, formats, &e, msg, len);
		p->format = e;
		p->format_set = true;
		return rc;
	}
}

/* ---- the delivery thread ---------------------------------------------------- */

static void *run(void *arg)
{
	struct isp_channel *ch = arg;
	struct isp_qbatch *b = &ch->batch;
	const int64_t flush_ns = (int64_t)ch->p.flush_ms * 1000000;
	int64_t backoff = BACKOFF_MIN_NS, deadline = INT64_MAX;
	int64_t next_flush = isp_now_ns() + flush_ns;
	uint64_t delivered = 0, retried = 0;
	bool stopping = false;
	size_t off = 0;                 /* first undelivered record of b */

	b->n = 0;
	for (;;) {
		if (!stopping && atomic_load_explicit(&ch->stopping, memory_order_acquire)) {
			stopping = true;
			deadline = atomic_load_explicit(&ch->deadline_ns, memory_order_relaxed);
		}

		int64_t now = isp_now_ns();

		if (stopping && (now >= deadline || isp_channels_hurried()))
			break;
		if (now >= next_flush) {
			if (ch->ops->flush)
				ch->ops->flush(ch->state);
			next_flush = isp_now_ns() + flush_ns;
		}
		if (off == b->n) {
			off = 0;
			/* 0: nothing waiting (timeout, or kicked with an empty
			 * queue), so a stopping channel is drained. */
			if (isp_queue_take(ch->q, b, next_flush < deadline ?
					   next_flush : deadline) == 0) {
				if (stopping)
					break;
				continue;
			}
		}

		size_t left = b->n - off;
		size_t k = ch->ops->write_batch(ch->state, b->recs + off, left);

		if (k > left)
			k = left;
		if (k) {
			off += k;
			delivered += k;
			atomic_store_explicit(&ch->cnt.delivered, delivered,
					      memory_order_release);
			backoff = BACKOFF_MIN_NS;
		}
		if (off == b->n)
			continue;
		retried += b->n - off;
		atomic_store_explicit(&ch->cnt.retried, retried, memory_order_relaxed);
		if (k == 0) {
			/* Nothing went through: back off, but wake for a
			 * shutdown to learn its deadline. */
			int64_t until = isp_now_ns() + backoff;

			isp_queue_sleep(ch->q, until < deadline ? until : deadline,
					!stopping);
			backoff = backoff * 2 > BACKOFF_MAX_NS ? BACKOFF_MAX_NS : backoff * 2;
		}
	}
	if (b->n > off)
		atomic_fetch_add_explicit(&ch->cnt.dropped, b->n - off,
					  memory_order_release);
	b->n = 0;
	isp_queue_kill(ch->q);
	if (ch->ops->flush)
		ch->ops->flush(ch->state);
	if (ch->ops->finish)    /* acknowledgements still outstanding (Kafka) */
		ch->ops->finish(ch->state, deadline);
	return NULL;
}

/* ---- open / close --------------------------------------------------------- */

static void channel_free(struct isp_channel *ch)
{
	isp_queue_free(ch->q);
	isp_qbatch_free(&ch->batch);
	free(ch->name);
	free(ch);
}

static int start_thread(struct isp_channel *ch)
{
	sigset_t all, old;
	char tname[16];
	int rc;

	/* Signals belong to the main loop, not to output threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&ch->thread, NULL, run, ch);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return -1;
	snprintf(tname, sizeof(tname), "isp:%s", ch->name);
	pthread_setname_np(ch->thread, tname);
	ch->started = true;
	return 0;
}

struct isp_channel *isp_channel_open(const struct isp_channel_cfg *cfg,
				     char *err, size_t errlen)
{
	const struct isp_channel_ops *ops;
	struct isp_channel *ch = NULL;
	struct isp_kv *tkv = NULL;
	size_t *map = NULL, ntkv = 0;
	char msg[768], known[256];

	isp_channels_init();
	if (errlen)
		err[0] = '\0';
	ops = find_type(cfg->type ? cfg->type : "", known, sizeof(known));
	if (!ops) {
		isp_kv_errorf(err, errlen, cfg, NULL,
			      "output '%s': unknown type '%s'; known: %s",
			      cfg->name ? cfg->name : "", cfg->type ? cfg->type : "",
			      known);
		return NULL;
	}
	/* aligned_alloc: the struct is aligned to cache lines (a size that
	 * is a multiple of the alignment, as the struct's is) */
	ch = aligned_alloc(_Alignof(struct isp_channel), sizeof(*ch));
	if (ch)
		memset(ch, 0, sizeof(*ch));
	tkv = calloc(cfg->nkv + 1, sizeof(*tkv));
	map = calloc(cfg->nkv + 1, sizeof(*map));
	if (!ch || !tkv || !map || !(ch->name = strdup(cfg->name ? cfg->name : "")))
		goto nomem;
	ch->ops = ops;
	ch->p = defaults;

	for (size_t i = 0; i < cfg->nkv; i++) {
		const struct isp_kv *kv = &cfg->kv[i];
		int g = generic_index(kv->key);

		for (size_t j = 0; j < i; j++) {
			if (strcmp(cfg->kv[j].key, kv->key) == 0) {
				isp_kv_errorf(err, errlen, cfg, kv,
					      "duplicate key '%s' (first at line %d)",
					      kv->key, cfg->kv[j].line);
				goto fail;
			}
		}
		if (g < 0) {
			map[ntkv] = i;
			tkv[ntkv++] = *kv;
		} else if (parse_generic(g, kv, &ch->p, msg, sizeof(msg)) != 0) {
			isp_kv_errorf(err, errlen, cfg, kv, "%s", msg);
			goto fail;
		}
	}

	if (ops->format) {
		/* the type takes one format: it is the channel's */
		for (size_t i = 0; i < cfg->nkv; i++) {
			const struct isp_kv *kv = &cfg->kv[i];
			if (strcmp(kv->key, "format") == 0 && ch->p.format != (int)ops->format) {
				isp_kv_errorf(err, errlen, cfg, kv,
					      "a%s %s output writes format = %s only",
					      strchr("aeiou", ops->type[0]) ? "n" : "", ops->type,
					      record_format_name(ops->format));
				goto fail;
			}
		}
		ch->p.format = (int)ops->format;
		ch->p.format_set = true;
	}
	if (ch->p.enable) {
		struct isp_channel_cfg tcfg = *cfg;
		int bad = -1;

		tcfg.kv = tkv;
		tcfg.nkv = ntkv;
		tcfg.params = &ch->p;
		tcfg.channel = ch;
		msg[0] = '\0';
		if (ops->open(&ch->state, &tcfg, &bad, msg, sizeof(msg)) != 0) {
			isp_kv_errorf(err, errlen, cfg,
				      bad >= 0 && (size_t)bad < ntkv ? &cfg->kv[map[bad]] : NULL,
				      "%s", msg[0] ? msg : "cannot open the output");
			goto fail;
		}
		if (cfg->check_only) {
			if (ch->state && ops->close)    /* a type that opened anyway */
				ops->close(ch->state);
			ch->state = NULL;
			goto checked;
		}
		ch->q = isp_queue_new(ch->p.queue_records, ch->p.queue_bytes,
				      ch->p.policy, &ch->cnt);
		if (ch->q) {    /* a busy producer wakes the thread once a batch */
			isp_queue_set_wake(ch->q, ch->p.batch);
			isp_queue_set_grace(ch->q, (int64_t)ch->p.shutdown_ms * 1000000);
		}
		bool ready = ch->q && isp_qbatch_init(&ch->batch, ch->p.batch,
						      ch->p.queue_bytes) == 0;

		if (ready)
			ch->batch.lines = ops->lines;
		if (!ready || start_thread(ch) != 0) {
			if (ops->close)
				ops->close(ch->state);
			goto nomem;
		}
	}
checked:
	free(tkv);
	free(map);
	return ch;

nomem:
	isp_kv_errorf(err, errlen, cfg, NULL, "output '%s': out of memory or threads",
		      cfg->name ? cfg->name : "");
fail:
	if (ch)
		channel_free(ch);
	free(tkv);
	free(map);
	return NULL;
}

int isp_channel_check(const struct isp_channel_cfg *cfg, char *err, size_t errlen)
{
	struct isp_channel_cfg c = *cfg;
	struct isp_channel *ch;

	c.check_only = true;
	if (!(ch = isp_channel_open(&c, err, errlen)))
		return -1;
	channel_free(ch);       /* no queue, no thread, no state */
	return 0;
}

int isp_channel_check_at(const struct isp_channel_cfg *cfg, int pos[2],
			 char *err, size_t errlen)
{
	struct isp_channel_cfg c = *cfg;
	char msg[768];

	pos[0] = pos[1] = 0;
	c.err_pos = pos;
	if (isp_channel_check(&c, msg, sizeof(msg)) == 0)
		return 0;
	/* isp_kv_errorf wrote "file:line:col: " or "file: " first */
	const char *file = cfg->file ? cfg->file : "config";
	int skip = pos[0] > 0 ? snprintf(NULL, 0, "%s:%d:%d: ", file, pos[0], pos[1]) :
		   snprintf(NULL, 0, "%s: ", file);
	snprintf(err, errlen, "%s", skip > 0 && (size_t)skip <= strlen(msg) ? msg + skip : msg);
	return -1;
}

const char *isp_channel_name(const struct isp_channel *ch)
{
	return ch->name;
}

bool isp_channel_format_set(const struct isp_channel *ch)
{
	return ch->p.format_set;
}

int isp_channel_format(const struct isp_channel *ch)
{
	return ch->p.format;
}

bool isp_channel_enabled(const struct isp_channel *ch)
{
	return ch->q != NULL;
}

bool isp_channel_uses_key(const struct isp_channel *ch)
{
	const struct isp_channel_ops *o = ch->ops;

	if (!ch->q)
		return false;
	/* Only Kafka (key = group) and types registered from outside (tests,
	 * plugins) may route by the key. */
	if (o == &isp_stdout_ops || o == &isp_file_ops || o == &isp_socket_ops ||
	    o == &isp_influxdb_ops || o == &isp_prometheus_ops)
		return false;
#ifdef HAVE_HIREDIS
	if (o == &isp_redis_ops)
		return false;
#endif
	return true;
}

bool isp_channel_submit(struct isp_channel *ch, const struct isp_record *r)
{
	if (ch->q)
		return isp_queue_push(ch->q, r);
	atomic_fetch_add_explicit(&ch->cnt.queued, 1, memory_order_release);
	atomic_fetch_add_explicit(&ch->cnt.dropped, 1, memory_order_release);
	return false;
}

char *isp_channel_reserve(struct isp_channel *ch, const void *owner, const char *report,
			  size_t rl, const char *key, size_t kl, size_t text_max)
{
	return ch->q ? isp_queue_reserve(ch->q, owner, report, rl, key, kl, text_max) : NULL;
}

void isp_channel_commit(struct isp_channel *ch, size_t text_len)
{
	isp_queue_commit(ch->q, text_len);
}

bool isp_channel_write_held(struct isp_channel *ch, const void *owner, const void *recs,
			    size_t bytes, size_t n)
{
	return ch->q && isp_queue_write_held(ch->q, owner, recs, bytes, n);
}

void isp_channel_abort(struct isp_channel *ch)
{
	isp_queue_abort(ch->q);
}

int isp_channel_stage_init(struct isp_channel_stage *s, struct isp_channel *ch, size_t bytes)
{
	memset(s, 0, sizeof(*s));
	s->ch = ch;
	s->cap = bytes;
	s->buf = malloc(bytes);
	return s->buf ? 0 : -1;
}

void isp_channel_stage_flush(struct isp_channel_stage *s)
{
	if (!s->n)
		return;
	if (s->ch->q) {
		isp_queue_push_many(s->ch->q, s->rec, s->n, s->refused);
	} else {
		atomic_fetch_add_explicit(&s->ch->cnt.queued, s->n, memory_order_release);
		atomic_fetch_add_explicit(&s->ch->cnt.dropped, s->n, memory_order_release);
		memset(s->refused, 1, s->n * sizeof(s->refused[0]));
	}
	for (unsigned i = 0; i < s->n; i++)
		if (s->refused[i] && s->dropped[i])
			(*s->dropped[i])++;
	s->n = 0;
	s->len = 0;
}

void isp_channel_stage_add(struct isp_channel_stage *s, const struct isp_record *r,
			   uint64_t *dropped)
{
	size_t kl = r->key ? r->key_len : 0, need = kl + r->len;

	if (s->n == ISP_STAGE_RECORDS || s->len + need > s->cap)
		isp_channel_stage_flush(s);
	if (need > s->cap) {    /* larger than the stage: on its own */
		if (!isp_channel_submit(s->ch, r) && dropped)
			(*dropped)++;
		return;
	}
	struct isp_record *c = &s->rec[s->n];
	unsigned char *p = s->buf + s->len;
	/* the report name is the rule's, which outlives the stage */
	c->report = r->report;
	memcpy(p, r->key ? r->key : "", kl);
	c->key = (const char *)p;
	c->key_len = kl;
	memcpy(p + kl, r->text, r->len);
	c->text = (const char *)p + kl;
	c->len = r->len;
	c->lined = false;
	s->dropped[s->n++] = dropped;
	s->len += need;
}

void isp_channel_stage_free(struct isp_channel_stage *s)
{
	if (s->buf)
		isp_channel_stage_flush(s);
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

void isp_channel_get_stats(const struct isp_channel *ch, struct isp_channel_stats *st)
{
	/* dropped and delivered before queued: every record they count was
	 * counted in queued first (release/acquire), so depth is never
	 * negative. */
	uint64_t dropped = atomic_load_explicit(&ch->cnt.dropped, memory_order_acquire);
	uint64_t delivered = atomic_load_explicit(&ch->cnt.delivered, memory_order_acquire);
	uint64_t queued = atomic_load_explicit(&ch->cnt.queued, memory_order_acquire);
	/* Lost after delivery: moved from delivered to dropped (the sum, and
	 * so queue_depth, is unchanged). */
	uint64_t lost = atomic_load_explicit(&ch->lost, memory_order_acquire);

	lost = lost < delivered ? lost : delivered;
	delivered -= lost;
	dropped += lost;
	st->queued = queued;
	st->delivered = delivered;
	st->dropped = dropped;
	st->acked = atomic_load_explicit(&ch->cnt.acked, memory_order_relaxed);
	st->retried = atomic_load_explicit(&ch->cnt.retried, memory_order_relaxed);
	st->reconnects = atomic_load_explicit(&ch->cnt.reconnects, memory_order_relaxed);
	st->queue_depth = queued >= delivered + dropped ? queued - delivered - dropped : 0;
}

void isp_channel_add_acked(struct isp_channel *ch, uint64_t n)
{
	atomic_fetch_add_explicit(&ch->cnt.acked, n, memory_order_relaxed);
}

void isp_channel_add_reconnects(struct isp_channel *ch, uint64_t n)
{
	atomic_fetch_add_explicit(&ch->cnt.reconnects, n, memory_order_relaxed);
}

void isp_channel_note_up(struct isp_channel *ch)
{
	atomic_store_explicit(&ch->up, true, memory_order_relaxed);
}

bool isp_channel_never_connected(const struct isp_channel *ch)
{
	return ch->q && ch->ops->connects &&
	       !atomic_load_explicit(&ch->up, memory_order_relaxed);
}

bool isp_channel_says_never_connected(const struct isp_channel *ch)
{
	return ch->ops->says_never_connected;
}

void isp_channel_add_lost(struct isp_channel *ch, uint64_t n)
{
	atomic_fetch_add_explicit(&ch->lost, n, memory_order_release);
}

void isp_channel_shutdown(struct isp_channel *ch)
{
	if (!ch || ch->shut)
		return;
	ch->shut = true;
	if (!ch->q)
		return;
	atomic_store_explicit(&ch->deadline_ns,
			      isp_now_ns() + (int64_t)ch->p.shutdown_ms * 1000000,
			      memory_order_relaxed);
	atomic_store_explicit(&ch->stopping, true, memory_order_release);
	isp_queue_kick(ch->q);
}

void isp_channel_drain(struct isp_channel *ch)
{
	if (!ch)
		return;
	isp_channel_shutdown(ch);
	if (ch->started && !ch->joined) {
		pthread_join(ch->thread, NULL);
		ch->joined = true;
		/* the counters final: nothing written after the kill uncounted */
		isp_queue_settle(ch->q);
	}
}

void isp_channel_close(struct isp_channel *ch)
{
	if (!ch)
		return;
	isp_channel_drain(ch);
	if (ch->q && ch->ops->close)
		ch->ops->close(ch->state);
	channel_free(ch);
}
