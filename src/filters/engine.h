/*
 * engine.h - the rules at run time: what the pipeline (src/core/pipeline.h)
 * runs on items, one engine per worker.
 *
 * Time is packet time (capture timestamps), so a file gives the same
 * records however fast and on however many workers it is read; a live
 * input also closes windows on the wall clock when idle.
 *
 * With several workers, each rule whose state depends on the order of its
 * key's items runs on the owner of that key: an event report with
 * delta-cond (its delta-key, or one memory for all), a query report with
 * diff() (its group-by). Everything else (stateless events, query windows,
 * which merge) runs with the first of those keys, or with the monitored
 * flow. The decision comes from what the rules keep, never from names.
 */
#ifndef ISP_FILTERS_ENGINE_H
#define ISP_FILTERS_ENGINE_H

#include <stdio.h>

#include "../core/pipeline.h"
#include "../../outputs/channel.h"
#include "program.h"

struct isp_rules;

/* Once the channels are open, before isp_rules_new: rules without
 * output-format take their first channel's `format`. */
void isp_program_bind_channels(struct isp_program *prog, struct isp_channel *const *channels);

/* Whether one worker's state for prog can be made (a rule's table within
 * what a table reaches): 0, or -1 with a message. Made and freed. */
int isp_rules_check(const struct isp_program *prog, const struct isp_registry *reg, char *err,
		    size_t errlen);

/* The rules of prog writing to channels (opened, by program channel index,
 * not owned); NULL with a message. */
struct isp_rules *isp_rules_new(const struct isp_program *prog, const struct isp_registry *reg,
				struct isp_channel **channels, char *err, size_t errlen);

/* What the pipeline calls; the rules pointer is the pipeline's `rules`. */
extern const struct isp_pipeline_ops isp_rules_ops;

/* One line per rule: matched, records, dropped, ... over every worker:
 * the counters now (on the rules' one thread, or once the pipeline
 * stopped), or as last published (any thread; see isp_rules_counts). */
void isp_rules_print_stats(const struct isp_rules *r, bool published, FILE *out);

/* A rule's counters over every worker. */
struct isp_rule_count {
	const char *kind;       /* "event", "query" or "monitor" */
	const char *name;
	uint64_t matched;       /* packets that passed where/event */
	uint64_t records;       /* records produced */
	uint64_t dropped;       /* records a channel refused, or too large */
	uint64_t evicted;       /* event keys evicted (max-keys) */
	uint64_t expired;       /* event keys expired (idle-timeout-ms) */
	uint64_t ahead;         /* items whose key was looked up ahead (large tables) */
	uint64_t overflows;     /* query packets beyond max-groups; monitor overflow records */
	uint64_t windows;       /* query windows, monitor intervals closed */
	bool expires;           /* the event has idle-timeout-ms */
	/* flow monitors */
	uint64_t flows;         /* entries created */
	uint64_t sampled_out;   /* packets of flows not sampled */
	uint64_t excluded;      /* packets of flows the operator removed */
	uint64_t entries;       /* entries in the tables now */
};

/* The counters as the workers last published them (isp_pipeline_sample
 * asks them to), from any thread while the pipeline runs: one per rule,
 * event reports, query reports, then flow monitors, up to max in out. Returns the number
 * of rules. */
unsigned isp_rules_counts(const struct isp_rules *r, struct isp_rule_count *out, unsigned max);

/* ---- the control socket's requests on running rules (control.c) ---- */

enum isp_ctl_op {
	ISP_CTL_ENABLE, ISP_CTL_DISABLE,        /* any rule */
	ISP_CTL_RESET,                          /* flow monitors: */
	ISP_CTL_SAMPLING,                       /* number: the ratio */
	ISP_CTL_INTERVAL,                       /* number: query-interval in ms */
	ISP_CTL_OVERFLOW,                       /* number: overflow-threshold (0: off) */
	ISP_CTL_ENTRY_ADD, ISP_CTL_ENTRY_REMOVE,
	ISP_CTL_GET,                            /* key optional */
};

struct isp_ctl_request {
	enum isp_ctl_op op;
	const char *name;       /* the rule or flow monitor */
	double number;
	/* a flow: one value per match attribute, as text ("10.0.0.1", "5000",
	 * a per-hop attribute's values "1,2,3") */
	const char *const *key;
	unsigned nkey;
};

/*
 * Run a request on every worker, between two of its items, and wait
 * (about 2 s at most) until each applied it; pl wakes them. 0 with a JSON
 * object in *json (malloc'd: what it did, get's flows as records), or -1
 * with a message.
 */
int isp_rules_control(struct isp_rules *r, struct isp_pipeline *pl,
		      const struct isp_ctl_request *q, char **json, char *err, size_t errlen);

/*
 * Hot reload: run prog (compiled on the running program's attribute
 * slots: isp_compile_file_on) writing to channels (opened, bound: a
 * channel whose section did not change is the same object) instead of
 * the running rules, swapped at one point for every worker (between two
 * items with one worker; at a tick barrier with several, on a live input
 * only). Rules whose section did not change keep their state; rules that
 * went write what they hold first. 0 once swapped; -1 with a message and
 * nothing changed. Neither prog nor channels are owned; the old ones are
 * no longer used once it returns 0.
 */
int isp_rules_swap(struct isp_rules *r, struct isp_pipeline *pl, const struct isp_program *prog,
		   struct isp_channel **channels, char *err, size_t errlen);

/* The input is live: DTA NACKs go out unless the config says nack = off
 * (nack = auto, the default, sends none for a capture file). Before the
 * pipeline opens. */
void isp_rules_set_live(struct isp_rules *r, bool live);

/* A DTA store query (dta_query in dta.h: op get, poll, estimate,
 * cardinality, info), from any thread. 0 with JSON in *json, or -1. */
int isp_rules_dta(struct isp_rules *r, const char *op, const char *store,
		  const char *const *args, unsigned nargs, char **json, char *err, size_t errlen);

void isp_rules_free(struct isp_rules *r);

#endif
