/*
 * event_batch.c - event reports with several workers on a capture file,
 * run where their items were read and settled in the file's order.
 *
 * Routed to the owner of its key (engine.c), each item of a per-key
 * event crossed cores, and that crossing cost about what the event's own
 * work does: 2 workers ran the delta event at 1.0-1.3x one. Here every
 * worker runs every event on the batches it takes, with a delta memory
 * of its own batch (event_state.settle). Of each key, only the first
 * item in a batch cannot be decided there: it reports when the key is
 * new or its signature differs from the one the batches before left.
 * Its record is written all the same, marked with the key's entry. When
 * the batch's turn comes (the pipeline commits batches in the file's
 * order), the worker looks each of its batch's keys up in the merger's
 * memory (what one worker's would hold at that point), settles the
 * key's first item, leaves the key's last signature there, and hands its
 * records on in order, but for those of first items that did not report.
 * A worker runs its next batch while one waits for its turn (two logs,
 * two batch memories). Where most first items stayed quiet in its last
 * batch and the packets' bytes stay (a mapped file), a first item keeps
 * its dissection instead of its record, written at the commit if it
 * reports: a key that rarely changes is then formatted only when it does.
 *
 * That is exact for a plain or banded delta: signatures are equal or not,
 * so comparing an item with the item before it is comparing it with the
 * last one reported. It is not for delta-threshold (a drift since the
 * last report), keepalive-ms (the last report's time) or idle-timeout-ms
 * (sweeps between items): rule sets with those route their items as
 * before. A table that evicts (max-keys) does so when batches commit, so
 * its records may differ from one worker's, as when items are routed.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../../outputs/qrec.h"
#include "engine_int.h"

/* The keys a batch's memory holds (a table refuses new keys past half
 * its max): a batch of packets of several reports and many per-hop keys. */
#define BATCH_KEYS (1u << 19)
/* Keys of the merger's memory asked for this many keys ahead, once it is
 * larger than the caches (as ahead.c does for items). */
#define SETTLE_AHEAD 8
#define SETTLE_FAR 16384

/* A worker's log is two arrays: the records' bytes, each laid out as a
 * channel's queue holds it (outputs/qrec.h), so that a run of committed
 * records goes into its queue in one copy; and a head a record, in the
 * same order: its bytes in the first array (rounded to QALIGN), its
 * text's length (0: too large), the entry of the first item it waits on
 * (0: none), its key's length, format and rule. */
struct log_head {
	uint32_t size;
	uint32_t len;
	uint32_t cond;
	uint16_t keylen;
	uint16_t format;        /* DEFERRED: a first item kept dissected */
	uint16_t rule;
	uint16_t hop;           /* DEFERRED: the hop of a per-hop rule, or NO_HOP */
};
#define DEFERRED 0xffffu
#define NO_HOP 0xffffu
/* A first item kept dissected: its key text, then the packet's head and
 * layers (its bytes stay where they are), rounded to QALIGN. */
static inline size_t deferred_size(size_t keylen, size_t len)
{
	return (keylen + len + QALIGN - 1) & ~(size_t)(QALIGN - 1);
}
/* A first item kept dissected (after the key text): the packet's head,
 * then its layers; its bytes stay where they are. */
#define PKT_HEAD offsetof(struct isp_packet, layer)

bool event_batch_possible(const struct isp_engine *e)
{
	const struct isp_program *prog = e->prog;

	if (e->dta || prog->nmonitors || !prog->nevents)
		return false;
	for (unsigned i = 0; i < prog->nqueries; i++)
		if (e->qbit[i] != ROUTE_LOCAL)
			return false;   /* its diff() needs its items in order */
	for (unsigned i = 0; i < prog->nevents; i++) {
		const struct erule *r = &prog->events[i];
		if (r->ndelta && (r->threshold >= 0 || r->keepalive_ns || r->idle_ns))
			return false;
	}
	return true;
}

bool event_batch_start(struct isp_engine *e, bool bytes_stay)
{
	struct isp_engine *m = e->merger;

	if (!m || !event_batch_possible(e))
		return false;
	for (unsigned i = 0; i < e->prog->nevents; i++) {
		const struct erule *r = &e->prog->events[i];
		if (!r->ndelta)
			continue;
		for (unsigned b = 0; b < 2; b++) {
			if (e->ev[i].settle[b].base)
				continue;
			if (table_init(&e->ev[i].settle[b], BATCH_KEYS, sizeof(struct ev_first),
				       e->ev[i].keys.key_max, false) != 0)
				return false;
			table_small_pages(&e->ev[i].settle[b]);
		}
		/* the merger's memory is the one a single worker keeps */
		if (!m->ev[i].settle[0].base &&
		    table_init(&m->ev[i].settle[0], r->nkey ? r->max_keys : 1, sizeof(struct ev_key),
			       m->ev[i].keys.key_max, true) != 0)
			return false;
	}
	e->settle = true;
	e->settle_refs = bytes_stay;
	return true;
}

void event_batch_free(struct isp_engine *e)
{
	for (unsigned i = 0; e->ev && i < e->prog->nevents; i++)
		for (unsigned b = 0; b < 2; b++)
			table_free(&e->ev[i].settle[b]);
	for (unsigned b = 0; b < 2; b++) {
		free(e->log[b].buf);
		free(e->log[b].heads);
		e->log[b] = (struct settle_log){ 0 };
	}
}

/* Room in the log for one more entry of at most `need` bytes. */
static bool log_room(struct settle_log *l, size_t need)
{
	return engine_buf_room(&l->buf, &l->cap, l->len, need, 1u << 20) &&
	       engine_buf_room((char **)&l->heads, &l->heads_cap, l->nheads * sizeof(struct log_head),
			       sizeof(struct log_head), 1u << 14);
}

static void log_push(struct settle_log *l, struct log_head h)
{
	memcpy(&((struct log_head *)(void *)l->heads)[l->nheads++], &h, sizeof(h));
	l->len += h.size;
}

void event_log_begin(struct isp_engine *e, const char *report, size_t rl, const char *key,
		     size_t keylen)
{
	struct settle_log *l = &e->log[e->log_cur];

	if (!log_room(l, rec_size(rl, keylen, REC_MAX))) {
		e->log_keylen = UINT16_MAX;     /* written aside, counted dropped */
		rec_target(&e->rec, NULL);
		return;
	}
	e->log_keylen = (uint16_t)keylen;
	rec_target(&e->rec, qrec_open(l->buf + l->len, report, rl, key, keylen));
}

void event_log_end(struct isp_engine *e, size_t len, unsigned which, struct rule_stats *st)
{
	struct settle_log *l = &e->log[e->log_cur];

	rec_target(&e->rec, NULL);
	if (e->log_keylen == UINT16_MAX) {
		st->dropped += which == 0;
		return;
	}
	log_push(l, (struct log_head){ (uint32_t)qrec_close(l->buf + l->len, len), (uint32_t)len,
				       e->log_cond, e->log_keylen, (uint16_t)which, e->log_rule,
				       0 });
}

bool event_log_defer(struct isp_engine *e, unsigned i, const struct isp_packet *p, size_t keylen)
{
	struct settle_log *l = &e->log[e->log_cur];
	const size_t layers = p->nlayers * sizeof(p->layer[0]);
	const size_t len = PKT_HEAD + layers + sizeof(p->protos) + sizeof(p->last);

	if (!log_room(l, deferred_size(keylen, len)))
		return false;
	char *at = l->buf + l->len;
	memcpy(at, e->keytext, keylen);
	at += keylen;
	memcpy(at, p, PKT_HEAD);
	memcpy(at + PKT_HEAD, p->layer, layers);
	memcpy(at + PKT_HEAD + layers, &p->protos, sizeof(p->protos));
	memcpy(at + PKT_HEAD + layers + sizeof(p->protos), p->last, sizeof(p->last));
	log_push(l, (struct log_head){ (uint32_t)deferred_size(keylen, len), (uint32_t)len,
				       e->log_cond, (uint16_t)keylen, DEFERRED, (uint16_t)i,
				       e->hop < 0 ? NO_HOP : (uint16_t)e->hop });
	return true;
}

/* A first item kept dissected that reports: its records, now. */
static void write_deferred(struct isp_engine *e, const struct log_head *h, const char *key)
{
	struct isp_packet p;
	const char *at = key + h->keylen;

	memcpy(&p, at, PKT_HEAD);
	const size_t layers = p.nlayers * sizeof(p.layer[0]);
	memcpy(p.layer, at + PKT_HEAD, layers);
	memcpy(&p.protos, at + PKT_HEAD + layers, sizeof(p.protos));
	memcpy(p.last, at + PKT_HEAD + layers + sizeof(p.protos), sizeof(p.last));
	memcpy(e->keytext, key, h->keylen);
	slot_cache_next(&e->sc);        /* a new item for the slots */
	e->hop = h->hop == NO_HOP ? -1 : (int)h->hop;
	event_write_records(e, h->rule, &p, h->keylen);
	e->hop = -1;
}

/* Rule i's keys of batch buffer b against the merger's memory: which
 * first items report, and each key's last signature left there. */
static void settle_keys(struct isp_engine *e, struct isp_engine *m, unsigned i, unsigned b)
{
	struct table *mine = &e->ev[i].settle[b], *all = &m->ev[i].settle[0];
	const uint64_t evicted = all->evictions;
	const bool far = all->count >= SETTLE_FAR;
	struct tentry *lead = NULL, *mid = NULL;
	bool mid_on = far;      /* mid: NULL before the first key, not past the last */
	uint32_t fired = 0;

	/* two stages, as ahead.c: a key's slot asked for 2 * SETTLE_AHEAD
	 * keys ahead, then its entry, through the slot come by then,
	 * SETTLE_AHEAD keys ahead */
	for (unsigned k = 0; far && k < 2 * SETTLE_AHEAD && (lead = table_next(mine, lead)); k++) {
		table_prefetch_slot(all, ((struct ev_first *)tentry_state(lead))->hash);
		if (k >= SETTLE_AHEAD && (mid = table_next(mine, mid)))
			table_prefetch_entry(all, ((struct ev_first *)tentry_state(mid))->hash);
	}
	for (struct tentry *te = table_next(mine, NULL); te; te = table_next(mine, te)) {
		struct ev_first *f = tentry_state(te);
		if (lead && (lead = table_next(mine, lead)))
			table_prefetch_slot(all, ((struct ev_first *)tentry_state(lead))->hash);
		if (mid_on && (mid_on = (mid = table_next(mine, mid)) != NULL))
			table_prefetch_entry(all, ((struct ev_first *)tentry_state(mid))->hash);
		bool created;
		struct tentry *g = table_get_hashed(all, tentry_key(mine, te), tentry_keylen(te),
						    f->hash, f->last_ts, true, &created);
		if (!g) {
			f->fire = false;
			continue;
		}
		struct ev_key *k = tentry_state(g);
		f->fire = created || k->sig != f->first_sig;
		fired += f->fire;
		k->sig = f->last_sig;
		k->last_report = f->last_ts;
	}
	e->ev[i].st.evictions += all->evictions - evicted;
	/* most first items quiet (keys that keep their values): the next
	 * batch keeps them dissected, written only if they report; most
	 * reporting (new keys, changes): written as they come, on each core */
	e->ev[i].defer_first = e->settle_refs && 2 * fired < mine->count;
}

void event_batch_done(struct isp_engine *e)
{
	engine_ahead_drain(e);          /* what it holds is of this batch */
	e->log_pending++;
	e->log_cur ^= 1;
}

/* Committed records bound for one channel, one after the other in the
 * log: copied into its queue at once, with one check of the lease and
 * one publication (a reserve and a commit a record cost 120 instructions
 * a record of the delta event on (c), which writes a record for 83% of
 * its packets). At most RUN_BYTES, so that a run finds room in one piece
 * after the queue's head. */
#define RUN_BYTES (4u * 1024u)
struct commit_run {
	struct isp_channel *ch;
	int at;                         /* the channel's index */
	const struct log_head *first;   /* its records' heads, in a row */
	const char *bytes;
	size_t n, len;
};

static void commit_one(struct isp_engine *e, const struct log_head *h, const char *at)
{
	const struct erule *r = &e->prog->events[h->rule];
	struct event_state *es = &e->ev[h->rule];
	const struct isp_record rec = qrec_read(at);

	engine_emit_copy(e, r->name, es->name_len, rec.key, rec.key_len, rec.text, h->len,
			 r->channels, r->nchannels, &r->fmts, h->format, &es->st);
}

static void run_flush(struct isp_engine *e, struct commit_run *run)
{
	if (!run->n)
		return;
	if (e->stage && e->stage[run->at].n)
		isp_channel_stage_flush(&e->stage[run->at]);    /* staged first */
	if (isp_channel_write_held(run->ch, e, run->bytes, run->len, run->n)) {
		for (size_t i = 0; i < run->n; i++)
			e->ev[run->first[i].rule].st.records += run->first[i].format == 0;
	} else {                /* no room at once: one by one, the policy's way */
		const char *at = run->bytes;
		for (size_t i = 0; i < run->n; at += run->first[i++].size)
			commit_one(e, &run->first[i], at);
	}
	run->n = 0;
}

/* A committed record: onto the run of its channel when it has one
 * channel that takes its encoding, else handed over as it is. */
static void run_add(struct isp_engine *e, struct commit_run *run, const struct log_head *h,
		    const char *at)
{
	const struct erule *r = &e->prog->events[h->rule];
	struct isp_channel *ch;

	if (h->len == 0 || r->nchannels != 1 || !takes_encoding(&r->fmts, 0, h->format) ||
	    !e->channels || !(ch = e->channels[r->channels[0]])) {
		run_flush(e, run);
		commit_one(e, h, at);
		return;
	}
	if (run->n && (run->ch != ch || run->first + run->n != h || run->len + h->size > RUN_BYTES))
		run_flush(e, run);
	if (!run->n) {
		run->ch = ch;
		run->at = r->channels[0];
		run->first = h;
		run->bytes = at;
		run->len = 0;
	}
	run->n++;
	run->len += h->size;
}

void event_batch_commit(struct isp_engine *e)
{
	const struct isp_program *prog = e->prog;
	struct commit_run run = { .n = 0 };

	if (!e->log_pending)
		return;
	/* the oldest waiting: with two, the one the next batch would reuse */
	const unsigned b = e->log_pending == 2 ? e->log_cur : e->log_cur ^ 1u;
	struct settle_log *l = &e->log[b];
	for (unsigned i = 0; i < prog->nevents; i++)
		if (e->ev[i].settle[b].count)
			settle_keys(e, e->merger, i, b);
	const struct log_head *heads = (const struct log_head *)(void *)l->heads;
	const char *at = l->buf;
	for (size_t k = 0; k < l->nheads; at += heads[k++].size) {
		const struct log_head *h = &heads[k];
		struct event_state *es = &e->ev[h->rule];
		if (h->cond &&
		    !((struct ev_first *)tentry_state(table_entry(&es->settle[b], h->cond)))->fire)
			continue;
		if (h->format == DEFERRED) {
			run_flush(e, &run);
			e->committing = true;   /* into its channel's queue, as below */
			write_deferred(e, h, at);
			e->committing = false;
			continue;
		}
		run_add(e, &run, h, at);
	}
	run_flush(e, &run);
	l->len = 0;
	l->nheads = 0;
	for (unsigned i = 0; i < prog->nevents; i++)
		table_clear(&e->ev[i].settle[b]);
	e->log_pending--;
	/* this batch's records reach the channels before the next batch's */
	isp_engine_flush(e);
}
