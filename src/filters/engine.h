/*
 * engine.h - runs a compiled program on packets: one engine per worker,
 * owning its slot cache, its event and query state and its record buffer.
 *
 * Time is packet time (capture timestamps), so a file gives the same
 * records however fast it is read; a live source calls isp_engine_tick()
 * with the wall clock when idle so windows close without traffic.
 */
#ifndef ISP_FILTERS_ENGINE_H
#define ISP_FILTERS_ENGINE_H

#include <stdio.h>

#include "../../outputs/channel.h"
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
};

struct event_state {
	struct table keys;
	struct rec_jkey event_key;      /* JSON keys escaped once */
	struct rec_jkey *attr_keys;
	struct rule_stats st;
};

struct query_state {
	struct table groups;
	struct arena hops;      /* per-hop state arrays and sketches of the window */
	uint64_t win_start, win_end;   /* current window [start, end), 0 = none */
	uint64_t flushes;       /* MMT's report counter */
	size_t entry_state;     /* bytes of per-group state */
	uint32_t *cell_off;     /* per select item: where its cell is in the group */
	uint16_t *cell_size;    /* per select item: bytes of its kept agg_state (per hop) */
	struct qplan *plan;     /* how each item is updated (query.c), one block */
	struct rec_jkey *group_keys, *item_keys;
	struct rule_stats st;
	/* partial mode (a worker): the last closed window, waiting for the merger */
	struct table done;
	struct arena done_hops;
	uint64_t done_start, done_end;
	bool has_done;
};

struct isp_engine {
	const struct isp_program *prog;
	struct slot_cache sc;
	struct event_state *ev;
	struct query_state *q;
	struct isp_channel **channels;  /* by program channel index (NULL = unused) */
	struct rec rec;
	bool partial;                   /* a worker: windows go to the merger */
	bool queries_on;                /* runs the query reports on packets */
	uint8_t *events_on;             /* per event report: runs it */
	uint64_t last_ts;
	uint8_t keybuf[16 * (6 + 8 * ISP_MAX_HOPS) + ISP_STR_MAX * 16];
	char keytext[1024];
};

/* channels: opened channels by program channel index (the engine does not
 * own them). NULL with a message on failure. */
struct isp_engine *isp_engine_new(const struct isp_program *prog, const struct isp_registry *reg,
				  struct isp_channel **channels, char *err, size_t errlen);
/* Once the channels are open, before any engine: rules without
 * output-format take their first channel's `format`. */
void isp_program_bind_channels(struct isp_program *prog, struct isp_channel *const *channels);
void isp_engine_packet(struct isp_engine *e, const struct isp_packet *p);

/*
 * Several workers: each runs an engine in partial mode (its closed query
 * windows wait for the merger instead of being written) on the event
 * reports whose state follows the flow; the reader runs one more engine
 * for the other event reports, which merges the workers' windows.
 * `serial` tells which event reports need one owner for their state.
 */
bool isp_event_needs_one_owner(const struct isp_program *prog, unsigned i);
void isp_engine_set_role(struct isp_engine *e, bool worker);
/* Worker, between packets: close the windows that ended by now_ns. */
void isp_engine_close_windows(struct isp_engine *e, uint64_t now_ns);
/* Reader, with every worker quiet: merge and write their closed windows. */
void isp_engine_merge_windows(struct isp_engine *merger, struct isp_engine *const *workers,
			      unsigned n);
void isp_engine_tick(struct isp_engine *e, uint64_t now_ns);
/* End of input or stop: flush every open window. */
void isp_engine_finish(struct isp_engine *e);
void isp_engine_print_stats(const struct isp_engine *e, FILE *out);
void isp_engine_print_stats_sum(const struct isp_engine *const *es, unsigned n, FILE *out);
void isp_engine_free(struct isp_engine *e);

/* internal, shared by event.c and query.c */
/* The largest key bytes these slots can make (table entries are sized by it). */
size_t engine_key_max(const struct isp_engine *e, const int *slots, unsigned n);
size_t engine_key(struct isp_engine *e, const struct isp_packet *p, const int *slots,
		  unsigned n, uint8_t *buf, size_t cap);
/* Append text, or a value's text (arrays as JSON), to out (NUL-kept). */
void engine_text_append(char *out, size_t cap, size_t *len, const char *text,
			const struct isp_value *v);
/* Text of the values of slots joined by '|' (the record key). */
size_t engine_key_text(struct isp_engine *e, const struct isp_packet *p, const int *slots,
		       unsigned n, char *out, size_t cap);
void engine_emit(struct isp_engine *e, const char *report, const char *key, size_t keylen,
		 const int *channels, unsigned nchannels, struct rule_stats *st);
int event_init(struct isp_engine *e, unsigned i);
void event_packet(struct isp_engine *e, unsigned i, const struct isp_packet *p);
int query_init(struct isp_engine *e, unsigned i);
void query_packet(struct isp_engine *e, unsigned i, const struct isp_packet *p);
void query_flush(struct isp_engine *e, unsigned i);
void query_advance(struct isp_engine *e, unsigned i, uint64_t now);
void query_merge(struct isp_engine *m, unsigned i, struct isp_engine *const *w, unsigned n);

#endif
