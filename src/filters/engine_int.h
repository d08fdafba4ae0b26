/*
 * engine_int.h - inside the rule engine (engine.c, event.c, query.c,
 * rules.c): one engine per worker, owning its slot cache, its event and
 * query state and its record buffer. The API is engine.h.
 */
#ifndef ISP_FILTERS_ENGINE_INT_H
#define ISP_FILTERS_ENGINE_INT_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../outputs/channel.h"
#include "bloom.h"
#include "program.h"
#include "record.h"
#include "table.h"

struct rule_stats {
	uint64_t matched;       /* packets that passed where/event */
	uint64_t records;       /* records produced */
	uint64_t dropped;       /* records a channel refused or too large */
	uint64_t evictions;     /* event keys evicted (max-keys) */
	uint64_t overflows;     /* query groups not created (max-groups) */
	uint64_t windows;       /* query windows flushed */
	uint64_t expired;       /* event keys idle for idle-timeout-ms (also records) */
	uint64_t ahead;         /* items whose key was looked up ahead (ahead.c) */
	/* flow monitors: windows count intervals, overflows overflow records */
	uint64_t flows;         /* entries created */
	uint64_t sampled_out;   /* packets of flows not sampled */
	uint64_t excluded;      /* packets of flows removed by the operator */
	uint64_t entries;       /* entries now (a gauge) */
};

struct event_state {
	struct table keys;
	/* several workers whose events are settled in order (event_batch.c):
	 * a worker's keys of the batch it runs and of the one it finished,
	 * not committed yet (the engine's log_cur: the one it runs); the
	 * merger's [0], every key's delta memory as the batches committed so
	 * far left it */
	struct table settle[2];
	/* JSON keys escaped once; on the heap, as everything wf points to:
	 * the state moves to another engine on reload (swap.c) */
	struct rec_jkey *event_key;
	struct rec_jkey *attr_keys;
	struct rec_jkey *key_keys;      /* the delta-key's, for expiry records */
	/* a record's fields in order, keys and slots: [0] the event's
	 * attribute once (JSON, CSV cells), [1] every one listed (MMT-Probe's
	 * rows) */
	struct ev_fields {
		const struct rec_jkey **key;
		int *slot;
		struct slot **at;       /* the slots' addresses in e->sc */
		unsigned n;
	} wf[2];
	struct rule_stats st;
	size_t name_len;                /* the rule's name's, for records written in place */
	uint8_t wants_key;              /* 0: not asked yet; 1: no; 2: a channel routes by it */
	/* settled in order (event_batch.c): a key's first item in a batch
	 * keeps its dissection rather than its record, written at the
	 * commit if it reports; chosen when fewer than half of the last
	 * batch's did and the packets' bytes stay */
	bool defer_first;
};

struct query_state {
	struct table groups;
	struct arena hops;      /* per-hop state arrays and sketches of the window */
	uint64_t win_start, win_end;   /* current window [start, end), 0 = none */
	/* a rule of one window for the whole input (ISP_PERIOD_WHOLE): the
	 * packet times its window counted, [seen_lo, seen_hi] (seen_lo >
	 * seen_hi: none), which its records give as the window */
	bool whole;
	uint64_t seen_lo, seen_hi;
	uint64_t flushes;       /* MMT's report counter */
	size_t entry_state;     /* bytes of per-group state */
	uint32_t *cell_off;     /* per select item: where its cell is in the group */
	uint16_t *cell_size;    /* per select item: bytes of its kept agg_state (per hop) */
	struct qplan *plan;     /* how each item is updated (query.c), one block */
	struct rec_jkey *group_keys, *item_keys;
	/* ,"window_start":S,"window_end":E of the window being written: the
	 * same text in every group's record (win_text_len 0: none yet) */
	uint64_t win_text_start, win_text_end;
	size_t win_text_len;
	char win_text[80];
	uint8_t wants_key;      /* as an event's: 0 not asked, 1 no, 2 yes */
	bool ts_order;          /* partial windows: first/last by packet time */
	bool correction;        /* a merge writes a group again ("type":"correction") */
	uint64_t partial_last;  /* partial windows: the end of the last one written */
	bool partial_started;   /* partial windows: the start record went */
	/* partial windows written early (query_drain, or the input went
	 * back in time): groups per window end, counted at its watermark */
	struct { uint64_t end, groups; } drained[8];
	unsigned ndrained;
	struct rule_stats st;
	/* partial mode (a worker): the last closed window, waiting for the merger */
	struct table done;
	struct arena done_hops;
	uint64_t done_start, done_end;
	uint64_t done_lo, done_hi;      /* its seen_lo, seen_hi */
	bool has_done;
};

/* An interval of a flow monitor: [start, start + len), in sub-intervals
 * of sub. */
struct mon_iv {
	uint64_t start, len, sub;
};

/* A flow monitor on one engine (monitor.c): its table, the flows an
 * operator removed, and its settings as they are now. */
struct monitor_state {
	struct table entries;
	struct cbloom excluded;
	uint64_t sample_below;  /* a new flow is sampled when its mixed hash is below */
	double sampling;
	uint64_t interval_ns, sub_ns, overflow;
	struct mon_iv cur;      /* the open interval; start MON_NONE before a packet */
	struct mon_iv done;     /* partial: the interval closed for the merger */
	bool has_done;
	bool over;              /* above overflow-threshold (one record a crossing) */
	size_t nvals;           /* u64 values of an entry after its head */
	struct rec_jkey *match_keys;
	/* the other fields' keys (MON_KEY_*, then the counters', then the
	 * buffer arrays'), and the buffer arrays' names: made once */
	struct rec_jkey *field_keys;
	unsigned nfield_keys;
	char (*buffer_names)[160];
	struct tentry **emit;   /* an interval's entries, sorted (monitor_emit) */
	size_t emit_cap;
	struct rule_stats st;
};
#define MON_NONE UINT64_MAX
/* monitor_state.field_keys: these first, then the counters' and buffers' */
enum { MON_KEY_INTERVAL_START, MON_KEY_PACKETS, MON_KEY_BYTES, MON_KEY_FIRST_SEEN,
       MON_KEY_LAST_SEEN, MON_KEY_COUNTERS };

/*
 * A rule whose state must see its key's items in order, on one worker: it
 * is routed to the owner of its key. Bit r of an item's `what` runs route
 * r; ROUTE_REST runs every other rule.
 */
struct route {
	const int *slots;       /* the key: delta-key or group-by */
	unsigned nslots;
	int event_slot;         /* an event's trigger: items without it go nowhere */
	const struct erule *per_hop;    /* a per-hop event: a key, an owner, per hop */
};

#define ROUTE_REST (UINT64_C(1) << 63)
#define ROUTE_DTA (UINT64_C(1) << 62)   /* a DTA report: to its reporter's owner */
/* Query reports whose windows merge in any split (no diff()): run by the
 * worker that dissected the item, which keeps it where it is. */
#define ROUTE_LOCAL (UINT64_C(1) << 61)
#define ENGINE_CTL_MAX 16
struct ctl_cmd;
#define ROUTE_MAX 61

/* An item's key of an event rule, built ahead (ahead.c). */
#define AHEAD_RULES 8
#define AHEAD_NONE 0xffff       /* len: the rule does not run on the item */
struct ahead_key {
	uint64_t hash;          /* the table's hash of the bytes */
	uint16_t len;
	uint8_t *bytes;         /* room for the table's longest key */
};

struct isp_engine {
	const struct isp_program *prog;
	struct slot_cache sc;
	struct event_state *ev;
	struct query_state *q;
	struct monitor_state *mon;
	struct dta_engine *dta;         /* the DTA collector (dta.c), or NULL */
	struct isp_channel **channels;  /* by program channel index (NULL = unused) */
	struct isp_channel_stage *stage;        /* partial: records in batches, by index */
	struct rec rec;
	struct isp_channel *direct;     /* e->rec is being written in its queue */
	bool partial;                   /* one of several workers: windows go to the merger */
	uint64_t *qbit, *ebit, *mbit;   /* per query, event, monitor: its bit in `what` */
	struct route *routes;
	unsigned nroutes;
	int lead;                       /* the route whose owner runs the rest; -1: the flow */
	bool has_rest;                  /* some rule is not routed */
	bool has_local;                 /* some rule runs where its item was dissected */
	uint16_t ip4, ip6;
	uint64_t last_ts;
	uint64_t tick_now;              /* the time of the last tick */
	/* per-hop rules: the hop being run (-1: none), and each slot's value
	 * at that hop (engine_get) */
	int hop;
	struct isp_value *hopval;
	unsigned self, nworkers;        /* this worker among nworkers */
	struct isp_engine *merger;      /* several workers: the one that merges */
	/* counters as last published (rules.c: publish, isp_rules_counts):
	 * per event report, then per query report; under pub_mu */
	pthread_mutex_t pub_mu;
	struct rule_stats *pub;
	/* control requests waiting for this engine's thread (control.c);
	 * a disabled rule's bit, kept while its bit in qbit/ebit/mbit is 0 */
	pthread_mutex_t ctl_mu;
	struct ctl_cmd *ctl_q[ENGINE_CTL_MAX];
	unsigned ctl_n;
	uint64_t *saved_bit;
	/* items to other workers as values (carry.c): the route bits whose
	 * rules list what they read, the slots of the last `what` packed */
	uint64_t carry_bits, carry_what;
	int *carry_list;
	unsigned ncarry;
	uint32_t *carry_mark, carry_stamp;
	uint64_t carry_bad;             /* packed items that did not parse: none */
	uint8_t keybuf[16 * (6 + 8 * ISP_MAX_HOPS) + ISP_STR_MAX * 16];
	char keytext[1024];
	/* items held to look their keys up ahead (ahead.c), or NULL; the
	 * keys of the item being run, or NULL; per event rule, its place
	 * among the keys (-1: none) */
	struct ahead *ahead;
	const struct ahead_key *prep;
	int8_t *ahead_pos;
	bool ahead_on;                  /* a table is large: items are held */
	unsigned ahead_recheck;         /* items until ahead_on is asked again */
	/* the merger: merged windows written by every worker (query_share.c);
	 * a worker: the records of its slice, before their turn */
	struct query_share *share;
	bool share_final;               /* the share ends the input: partial ends after */
	char *slice;
	size_t slice_len, slice_cap;
	/* events settled in order (event_batch.c): the worker runs them on
	 * its own batches, writing their records into a log (logging: the
	 * record being written goes there, conditional on the first item
	 * of its key in the batch, log_cond) until the batch is committed.
	 * Two logs: the batch it runs (log_cur) and one finished, waiting
	 * for its turn (log_pending: how many wait, at most 2 between a
	 * batch's end and the commit the pipeline then makes). */
	bool settle;
	bool settle_refs;               /* the packets' bytes stay: first items may wait dissected */
	bool logging;
	bool committing;                /* writing a batch's records in its turn */
	uint32_t log_cond;
	uint16_t log_rule;
	uint16_t log_keylen;            /* UINT16_MAX: no room, the record goes aside */
	uint8_t log_cur, log_pending;
	struct settle_log {
		char *buf;              /* the records' bytes (event_batch.c) */
		size_t len, cap;
		char *heads;            /* a head a record */
		size_t nheads, heads_cap;
	} log[2];
};

/* channels: opened channels by program channel index (the engine does not
 * own them). partial: one of several workers (closed query windows wait
 * for the merger). NULL with a message on failure. */
struct isp_engine *isp_engine_new(const struct isp_program *prog, const struct isp_registry *reg,
				  struct isp_channel **channels, bool partial, char *err,
				  size_t errlen);
/* An item, running the rules `what` names (ROUTE_REST, route bits). */
void isp_engine_item(struct isp_engine *e, const struct isp_packet *p, uint64_t what);
/* An item that may be held a few items, while the keys of the next ones
 * are looked up (ahead.c), and run before anything that is not an item
 * (engine_ahead_drain); its packet bytes are copied unless they stay
 * readable to the end of the input (a mapped file). Inline: most items of most rule sets are not
 * held (no table is large), and pay two tests. */
void engine_ahead_recheck(struct isp_engine *e);
void isp_engine_item_held(struct isp_engine *e, const struct isp_packet *p, uint64_t what,
			  bool bytes_stay);
static inline void engine_item_held(struct isp_engine *e, const struct isp_packet *p,
				    uint64_t what, bool bytes_stay)
{
	if (__builtin_expect(e->ahead_recheck-- == 0, 0))
		engine_ahead_recheck(e);
	if (e->ahead_on)
		isp_engine_item_held(e, p, what, bytes_stay);
	else
		isp_engine_item(e, p, what);
}
int ahead_init(struct isp_engine *e);
void ahead_free(struct isp_engine *e);
void engine_ahead_drain(struct isp_engine *e);
bool engine_ahead_holds(const struct isp_engine *e);
/* The key built ahead for the item being run of rule i (event i, query
 * i - nevents, flow monitor i - nevents - nqueries), or NULL. */
static inline const struct ahead_key *engine_prepared_key(const struct isp_engine *e, unsigned i)
{
	if (__builtin_expect(!e->prep, 1) || e->ahead_pos[i] < 0)
		return NULL;
	const struct ahead_key *k = &e->prep[e->ahead_pos[i]];
	return k->len != AHEAD_NONE ? k : NULL;
}
/* The same for a rule's lookup: its key bytes, with their length and
 * hash, counted in *ahead; NULL (nothing set) when not built ahead. */
static inline const uint8_t *engine_take_prepared(const struct isp_engine *e, unsigned i,
						  uint64_t *ahead, size_t *len, uint64_t *hash)
{
	const struct ahead_key *k = engine_prepared_key(e, i);

	if (__builtin_expect(!k, 1))
		return NULL;
	++*ahead;
	*len = k->len;
	*hash = k->hash;
	return k->bytes;
}
/* Several workers: the item route was last called for, on this engine,
 * whose values route fetched are at hand. */
void isp_engine_item_routed(struct isp_engine *e, const struct isp_packet *p, uint64_t what);
/* Items as values (carry.c). carry_init after the routes; pack: the
 * values the rules `what` read of p into out (room bytes), 0 when one of
 * them needs the packet or they do not fit; item_packed: run the rules
 * `what` on them, p giving the item's time and position only. */
int carry_init(struct isp_engine *e);
void carry_free(struct isp_engine *e);
size_t isp_engine_pack(struct isp_engine *e, const struct isp_packet *p, uint64_t what,
		       uint8_t *out, size_t room);
void isp_engine_item_packed(struct isp_engine *e, const struct isp_packet *p,
			    const uint8_t *vals, size_t len, uint64_t what);
/* Where an item goes among n workers (see struct route). */
/* Every rule runs where its item was read (query reports whose windows
 * merge from any split): nothing to route, no order between workers. */
bool isp_engine_local_only(const struct isp_engine *e);
void isp_engine_route(struct isp_engine *e, const struct isp_packet *p, unsigned n,
		      uint64_t *dest);
/* Close the windows that ended by now_ns (a partial engine keeps them for
 * the merger; UINT64_MAX: every window). */
void isp_engine_tick(struct isp_engine *e, uint64_t now_ns);
/* Hand staged records to their channels (partial engines stage them). */
void isp_engine_flush(struct isp_engine *e);
/* An open query window holds what is not written yet. */
bool isp_engine_holding(const struct isp_engine *e);
/* Write what open query windows hold now (query_drain). */
void isp_engine_drain(struct isp_engine *e, bool final);
/* With every worker at a barrier: merge their closed windows, write them. */
void isp_engine_merge_windows(struct isp_engine *merger, struct isp_engine *const *workers,
			      unsigned n);
/* The same in three steps, so that every worker writes records: merge
 * (true: large windows are left to write), then on every worker at once
 * isp_engine_merge_share (its engine me), then once isp_engine_merge_end. */
bool isp_engine_merge_begin(struct isp_engine *merger, struct isp_engine *const *workers,
			    unsigned n);
void isp_engine_merge_share(struct isp_engine *merger, struct isp_engine *me,
			    void (*wait)(void *ctx, unsigned *spins), void *ctx);
void isp_engine_merge_end(struct isp_engine *merger);
/* The input ended: every partial rule says so (one worker, or the merger
 * once every worker reached the end). */
void engine_partial_ends(struct isp_engine *e);
/* The first time after t at which a query window ends; UINT64_MAX: none. */
uint64_t isp_engine_window_end(const struct isp_program *prog, uint64_t t);
void isp_engine_free(struct isp_engine *e);

/* The same, with or without the flow monitors (whose periods the control
 * socket may change: rules.c keeps them). */
uint64_t engine_window_end(const struct isp_program *prog, uint64_t t, bool monitors);
/* control.c: apply the requests waiting (on the engine's thread); drop
 * them unapplied (the engine goes away). */
void engine_control_apply(struct isp_engine *e);
void engine_control_drop(struct isp_engine *e);

/* internal, shared by event.c and query.c */

/* A slot's value for the rules: as the packet has it, or, while a per-hop
 * rule runs hop e->hop, a per-hop attribute's value at that hop (absent
 * past its hops). */
const struct isp_value *engine_hop_value(struct isp_engine *e, const struct isp_value *v,
					 int slot);
static inline const struct isp_value *engine_get_in(struct isp_engine *e,
						    const struct isp_packet *p, int slot, bool hops)
{
	const struct isp_value *v = slot_get(&e->sc, p, (unsigned)slot);

	if (__builtin_expect(!hops, 1) || !v || !v->is_array)
		return v;
	return engine_hop_value(e, v, slot);
}

/* The same, for a caller that reads many slots: hops = e->hop >= 0, read
 * once (a slot filled through a call makes the compiler load e->hop
 * again otherwise). */
static inline const struct isp_value *engine_get(struct isp_engine *e, const struct isp_packet *p,
						 int slot)
{
	return engine_get_in(e, p, slot, e->hop >= 0);
}
/* The hops a per-hop rule runs on for this item: the most elements of its
 * attributes. */
unsigned engine_rule_hops(struct isp_engine *e, const struct erule *r, const struct isp_packet *p);
/* With several workers, is the hop e->hop of event rule i this worker's
 * (the owner of its key)? */
bool engine_hop_is_mine(struct isp_engine *e, const struct isp_packet *p, unsigned i);
/*
 * Key bytes (engine_key, query.c's group keys, partial windows' "key"):
 * per value a flag byte (KEY_PRESENT, KEY_MISSING: present but
 * unavailable, and the width of what follows), then a number in 4 bytes
 * when it fits and 8 when not, an IPv6 or MAC address in 16, a per-hop
 * array as its count, missing mask and elements of 4 or 8 bytes, a
 * string to its NUL. Binary, so equal values give equal keys without any
 * formatting; as short as the values, since a million keys are kept.
 */
#define KEY_PRESENT 0x01
#define KEY_MISSING 0x02
#define KEY_WIDTH 0x0c
#define KEY_W8 0x00
#define KEY_W4 0x04
#define KEY_W16 0x08

/* Bytes engine_key_scalar takes for v. */
static inline size_t engine_key_scalar_len(const struct isp_value *v, bool wide)
{
	return !v ? 1 : wide ? 17 : v->v.u >> 32 ? 9 : 5;
}

/* A value that is not an array or a string (or its absence: NULL) at
 * out; wide: an IPv6 or MAC address. Its length. */
static inline size_t engine_key_scalar(uint8_t *out, const struct isp_value *v, bool wide)
{
	if (!v) {
		out[0] = 0;
		return 1;
	}
	if (wide) {
		out[0] = KEY_PRESENT | KEY_W16;
		memcpy(out + 1, v->v.ip6, 16);
		return 17;
	}
	uint8_t flag = KEY_PRESENT | (v->missing & 1 ? KEY_MISSING : 0);
	if (v->v.u >> 32) {
		out[0] = flag | KEY_W8;
		memcpy(out + 1, &v->v.u, 8);
		return 9;
	}
	uint32_t x = (uint32_t)v->v.u;
	out[0] = flag | KEY_W4;
	memcpy(out + 1, &x, 4);
	return 5;
}

/* The most key bytes a value of this type takes (not a string's). */
static inline size_t engine_key_width(uint8_t type, bool per_hop)
{
	size_t w = type == ISP_T_IPV6 || type == ISP_T_MAC ? 16 :
		   type == ISP_T_U64 || type == ISP_T_TIMESTAMP ? 8 : 4;
	return per_hop ? 6 + (w > 8 ? 8 : w) * ISP_MAX_HOPS : 1 + w;
}

/* The largest key bytes these slots can make (table entries are sized by it). */
size_t engine_key_max(const struct isp_engine *e, const int *slots, unsigned n);
size_t engine_key(struct isp_engine *e, const struct isp_packet *p, const int *slots,
		  unsigned n, uint8_t *buf, size_t cap);
/* The same bytes from values (the control socket's keys), and the worker
 * among e->nworkers that owns a route's key of these values and bytes. */
size_t engine_key_of_values(const struct isp_value *vals, unsigned n, uint8_t *buf, size_t cap);
unsigned engine_owner_of_values(const struct isp_engine *e, const struct isp_value *vals,
				unsigned n, const uint8_t *key, size_t klen);
/* A value from its text as attribute a has it ("10.0.0.1", "5000", a
 * per-hop attribute's "1,2,3"); false when it does not read as one. */
bool engine_parse_value(const struct isp_attr_desc *a, const char *text, struct isp_value *v);
/* Append text, or a value's text (arrays as JSON), to out (NUL-kept). */
void engine_text_append(char *out, size_t cap, size_t *len, const char *text,
			const struct isp_value *v);
/* Text of the values of slots joined by '|' (the record key). */
size_t engine_key_text(struct isp_engine *e, const struct isp_packet *p, const int *slots,
		       unsigned n, char *out, size_t cap);
/* Before writing a record (emit.c): when it goes to one channel only,
 * write it in that channel's queue if there is room at once. Then write
 * it (rec_begin ... ) and engine_emit it, with nothing pushed to that
 * channel in between. */
void engine_emit_begin(struct isp_engine *e, const char *report, size_t report_len,
		       const char *key, size_t keylen, const int *channels, unsigned nchannels,
		       const struct rule_formats *f, unsigned which);
/* Does channel i of a rule take the encoding `which` of its formats? */
static inline bool takes_encoding(const struct rule_formats *f, unsigned i, unsigned which)
{
	return f->n <= 1 || !f->of || f->of[i] == f->list[which];
}
/* Does one of these channels route by a record's key (Kafka)? Its text
 * costs as much as the record's head, and files, stdout, sockets and
 * Redis never read it. */
bool engine_channels_use_key(const struct isp_engine *e, const int *channels, unsigned n);
/* engine_emit for a record written elsewhere (len bytes at rec, 0: it did
 * not fit, counted dropped), handed to the channels' queues. */
void engine_emit_bytes(struct isp_engine *e, const char *report, const char *key, size_t keylen,
		       const char *rec, size_t len, const int *channels, unsigned nchannels,
		       const struct rule_formats *f, unsigned which, struct rule_stats *st);
/* Room for `need` bytes after `len` in a buffer that doubles (from
 * `first`) when full: false when out of memory, the buffer as it was.
 * The workers' buffers of records written ahead of their turn
 * (query_share.c's slices, event_batch.c's logs). */
static inline bool engine_buf_room(char **buf, size_t *cap, size_t len, size_t need, size_t first)
{
	if (len + need <= *cap)
		return true;
	size_t c = *cap ? *cap : first;
	while (c < len + need)
		c *= 2;
	char *b = realloc(*buf, c);
	if (!b)
		return false;
	*buf = b;
	*cap = c;
	return true;
}

/* A record written before (len bytes at rec) to its channels: one copy
 * straight into the queue of a rule's one channel, after what this
 * engine staged for it; else as engine_emit_bytes. */
void engine_emit_copy(struct isp_engine *e, const char *report, size_t report_len, const char *key,
		      size_t keylen, const char *rec, size_t len, const int *channels,
		      unsigned nchannels, const struct rule_formats *f, unsigned which,
		      struct rule_stats *st);
/* Send the record just written (e->rec) to the rule's channels that take
 * its encoding: f->list[which] (all of them when the rule has one format). */
void engine_emit(struct isp_engine *e, const char *report, const char *key, size_t keylen,
		 const int *channels, unsigned nchannels, const struct rule_formats *f,
		 unsigned which, struct rule_stats *st);
/* The rules' state: 0, -1 out of memory, -2 a table past its reach
 * (table_init). */
int event_init(struct isp_engine *e, unsigned i);
/* The fields of rule i's records to the slots of e (event_init; again for
 * a kept rule's state handed to a new engine, whose slot cache is its own:
 * the numbers are the same, a reload numbering the running program's
 * attributes first). */
void event_bind(struct isp_engine *e, unsigned i);
/* Rule i's query plan to the slots of e and its program's items, again
 * for a kept rule's state handed to a new engine (query_init made it). */
void query_bind(struct isp_engine *e, unsigned i);
void event_packet(struct isp_engine *e, unsigned i, const struct isp_packet *p);
/* Events settled in order (event_batch.c), for the pipeline's workers on
 * a capture file: whether every rule of e can run so (event reports
 * whose memory is a plain or banded delta, queries that merge from any
 * split, nothing else); event_batch_start makes worker e run so (false:
 * out of memory); event_batch_done ends the batch it runs (what it
 * wrote waits); event_batch_commit hands on what the oldest batch waiting
 * wrote, the first item of each key settled against the merger's
 * memory, in the batch's turn. */
bool event_batch_possible(const struct isp_engine *e);
bool event_batch_start(struct isp_engine *e, bool bytes_stay);
void event_batch_done(struct isp_engine *e);
void event_batch_commit(struct isp_engine *e);
void event_batch_free(struct isp_engine *e);
/* A settled event's first item of a key in a batch into the log as its
 * dissection (its bytes stay), for event_write_records at the commit if
 * it reports (false: no room, write it now). */
bool event_log_defer(struct isp_engine *e, unsigned i, const struct isp_packet *p, size_t keylen);
void event_write_records(struct isp_engine *e, unsigned i, const struct isp_packet *p, size_t kl);
/* A record of a settled event into the worker's log, between
 * engine_emit_begin and engine_emit (emit.c): len its length (rec_end). */
void event_log_begin(struct isp_engine *e, const char *report, size_t rl, const char *key,
		     size_t keylen);
void event_log_end(struct isp_engine *e, size_t len, unsigned which, struct rule_stats *st);
/* A delta memory's state per key (event.c), and the state of a key's
 * first item in a settled batch (event_batch.c). */
struct ev_key {
	uint64_t sig;
	uint64_t last_report;
	/* (a key has reported once it exists: a new key always reports) */
	/* then for delta-threshold: ndelta × (count, missing, values[ISP_MAX_HOPS]) */
};
struct ev_first {
	uint64_t hash;          /* the key's table hash */
	uint64_t first_sig;     /* its first item's signature in the batch */
	uint64_t last_sig;      /* its last item's */
	uint64_t last_ts;
	bool fire;              /* settled: the first item reports */
};
/* idle-timeout-ms: how often keys are swept (0: never), and the sweep at
 * packet time now: a record for each key idle since now - idle, removed. */
uint64_t event_sweep_period(const struct erule *r);
void event_expire(struct isp_engine *e, unsigned i, uint64_t now);
/* A value back from its key bytes (engine_key's, query.c's group keys):
 * where the next value starts (end when these bytes do not read as one:
 * *present is then false). */
const uint8_t *engine_key_value(const uint8_t *k, const uint8_t *end, uint8_t type,
				 bool per_hop, struct isp_value *v, bool *present);
int query_init(struct isp_engine *e, unsigned i);
void query_packet(struct isp_engine *e, unsigned i, const struct isp_packet *p);
/* Query i's group key of p into buf (at most cap bytes; 0 when its
 * longest key is longer) and its table hash: what query_packet looks up. */
size_t query_group_key(struct isp_engine *e, unsigned i, const struct isp_packet *p, uint8_t *buf,
		       size_t cap, uint64_t *hash);
/* Ask for the per-hop states of query i's group of that key (its entry
 * already asked for: the third load of its lookup chain). */
void query_prefetch_group(struct isp_engine *e, unsigned i, const uint8_t *key, size_t len,
			  uint64_t hash);
void query_flush(struct isp_engine *e, unsigned i);
/* Write the groups of rule i's open window now and go on with the window
 * empty (a Kafka input's partitions leaving); its close writes the rest.
 * final (the input stops): a partial window is left unfinished, no
 * watermark (its partitions may go on elsewhere); others close at the
 * end as always. */
void query_drain(struct isp_engine *e, unsigned i, bool final);
/* Close rule i's window when `now` passed its end. Inline: every packet
 * asks, a window's worth of them before the answer changes. */
static inline void query_advance(struct isp_engine *e, unsigned i, uint64_t now)
{
	const struct query_state *qs = &e->q[i];

	if (qs->win_end && now >= qs->win_end)
		query_flush(e, i);
}
void query_merge(struct isp_engine *m, unsigned i, struct isp_engine *const *w, unsigned n);

/* The packet times of a whole-input window: none yet, and one more (or
 * another window's, merged in). */
static inline void query_span_reset(struct query_state *qs)
{
	qs->seen_lo = UINT64_MAX;
	qs->seen_hi = 0;
}

static inline void query_span_add(struct query_state *qs, uint64_t lo, uint64_t hi)
{
	if (lo < qs->seen_lo)
		qs->seen_lo = lo;
	if (hi > qs->seen_hi)
		qs->seen_hi = hi;
}

/* A whole-input window that counted packets (partials of an older
 * intspect carry no span) */
static inline bool query_span_known(const struct query_state *qs)
{
	return qs->whole && qs->seen_lo <= qs->seen_hi;
}

/* The window ends: none open, and no packet time counted */
static inline void query_window_clear(struct query_state *qs)
{
	qs->win_end = 0;
	query_span_reset(qs);
}

/* The window a record gives: [win_start, win_end), or for a whole-input
 * window the first and last packet times it counted (its own bounds,
 * [0, 2^62 ns), say nothing). */
static inline uint64_t query_shown_start(const struct query_state *qs)
{
	return query_span_known(qs) ? qs->seen_lo : qs->win_start;
}

static inline uint64_t query_shown_end(const struct query_state *qs)
{
	return query_span_known(qs) ? qs->seen_hi : qs->win_end;
}

/* Seconds a rate is per: the period, or a whole-input window's span (0
 * for one packet time or none: no rate). */
static inline double query_window_s(const struct query_state *qs, const struct qrule *r)
{
	if (qs->whole)
		return query_span_known(qs) ? (double)(qs->seen_hi - qs->seen_lo) / 1e9 : 0;
	return (double)r->period_ns / 1e9;
}
int monitor_init(struct isp_engine *e, unsigned i);
void monitor_free(struct isp_engine *e, unsigned i);
void monitor_packet(struct isp_engine *e, unsigned i, const struct isp_packet *p);
/* SDN-Mon's reset: every entry and every removed flow forgotten (an
 * interval's records of them are lost with them). */
void monitor_reset(struct isp_engine *e, unsigned i);
/* A setting changed by the control socket (ISP_CTL_SAMPLING, _INTERVAL in
 * ms, _OVERFLOW). */
void monitor_set(struct isp_engine *e, unsigned i, int op, double value);
/* entry-add: a flow without packets yet; 1 when it was not there. */
unsigned monitor_add_entry(struct isp_engine *e, unsigned i, const uint8_t *key, size_t klen,
			   uint64_t h);
/* get: the flow's record as it would be written now, as JSON in e->rec;
 * its length. */
size_t monitor_entry_json(struct isp_engine *e, unsigned i, struct tentry *te);
/* Time reached now: close the interval that ended (one engine alone: its
 * records; partial: kept for the merger), check the overflow threshold. */
void monitor_tick(struct isp_engine *e, unsigned i, uint64_t now);
/* At the barrier: the workers' closed interval and overflow, written by m. */
void monitor_merge(struct isp_engine *m, unsigned i, struct isp_engine *const *w, unsigned n);

/* The record style of a rule's format. */
/* How many encodings a rule's records need (1 before binding), and the
 * format of each. */
static inline unsigned rule_nformats(const struct rule_formats *f)
{
	return f->n ? f->n : 1;
}

static inline enum rec_format rule_format_at(const struct rule_formats *f, enum rec_format rule,
					     unsigned which)
{
	return f->n ? (enum rec_format)f->list[which] : rule;
}

static inline enum rec_style rec_style_of(enum rec_format f)
{
	return f == FMT_CSV ? REC_MMT_CSV : f == FMT_CSV_CELLS ? REC_CSV_CELLS : REC_JSON;
}

#endif
