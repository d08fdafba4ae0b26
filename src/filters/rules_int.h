/*
 * rules_int.h - the rule engines of a run (rules.c), as control.c and
 * swap.c reach them. The API is engine.h.
 */
#ifndef ISP_FILTERS_RULES_INT_H
#define ISP_FILTERS_RULES_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "dta.h"
#include "engine_int.h"

/* What threads that place ticks read (window_end): a program and each
 * flow monitor's tick period now (set-interval changes it). One per rule
 * set; a swap publishes a new one, the old stay until the end. */
struct rules_gen {
	const struct isp_program *prog;
	struct rules_gen *older;
	_Atomic uint64_t period[];
};

/* A worker's context for the pipeline: its engine, which a swap replaces. */
struct rules_worker {
	struct isp_rules *r;
	struct isp_engine *e;
};

enum { SWAP_NONE, SWAP_PENDING, SWAP_RUNNING, SWAP_DONE };

struct isp_rules {
	const struct isp_program *prog;
	const struct isp_registry *reg;
	struct isp_channel **channels;
	struct isp_engine *merger;              /* several workers only */
	bool sharing;                           /* a merge left records for every worker */
	struct isp_engine *worker[ISP_MAX_WORKERS];
	struct rules_worker rw[ISP_MAX_WORKERS];
	unsigned n;
	_Atomic(struct rules_gen *) gen;
	/* counters readers (any thread) against a swap: the engines and
	 * the program they read stay while they hold it */
	pthread_mutex_t mu;
	/* a swap waiting for the workers (swap.c) */
	_Atomic int swap_state;
	struct isp_engine *next_worker[ISP_MAX_WORKERS], *next_merger;
	const struct isp_program *next_prog;
	struct isp_channel **next_channels;
	struct rules_gen *next_gen;
	/* DTA stores of prog (opened with the first worker), and of next_prog */
	struct dta_store **stores, **next_stores;
	bool live;                              /* NACKs in auto mode */
};

struct rules_gen *rules_gen_new(const struct isp_program *prog);
/* An engine of prog for the rules r, with its DTA collector on stores. */
struct isp_engine *rules_engine_new(struct isp_rules *r, const struct isp_program *prog,
				    struct isp_channel **channels, struct dta_store *const *stores,
				    bool partial, char *err, size_t errlen);
/* On the thread that may swap (a worker between items, or the one that
 * merges at a barrier with the others held): run a pending swap. */
void rules_swap_here(struct isp_rules *r);
/* An engine's counters where isp_rules_counts reads them (its thread). */
void rules_publish_engine(struct isp_engine *e);

#endif
