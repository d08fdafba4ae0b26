/*
 * pipeline_int.h - inside the pipeline (pipeline.c: open, run, close, the
 * barrier; pipeline_file.c: capture files as ordered shares;
 * pipeline_live.c: live inputs read in shares). The API is pipeline.h.
 */
#ifndef ISP_PIPELINE_INT_H
#define ISP_PIPELINE_INT_H

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>

#include "batches.h"
#include "dissect.h"
#include "mesh.h"
#include "pipeline.h"
#include "spsc.h"

#define VALS_MAX 4096           /* an item's values, most: larger ones go whole */
#define AHEAD 8                 /* files: own batches dissected ahead of handling */

struct worker {
	struct isp_pipeline *pl;
	unsigned id;
	void *ctx;
	struct isp_source *src;         /* its share of a live input, or NULL */
	pthread_t thread;
	bool started;
	bool reading;                   /* its own view of `live` */
	uint64_t local;                 /* packets of its share */
	struct isp_packet own;          /* read by this worker */
	struct isp_dissect dis;         /* own's dissection context (isp_dissect_start) */
	struct isp_packet peer;         /* dissected by another */
	struct isp_stats st;            /* of the packets it dissected */
	struct isp_batch batch[AHEAD];  /* own batches read, not yet handled */
	struct isp_fifo defer;          /* their items, handled after earlier batches */
	uint64_t dest[ISP_MAX_WORKERS];
	uint64_t pend[2];               /* pl->commits: batches run, not committed */
	unsigned npend;
	uint8_t vals[VALS_MAX];         /* an item's values (ops.pack), before they go */
	/* items sent to another worker or set aside: as values, dissected
	 * (read once the workers have stopped) */
	uint64_t moved_values, moved_whole;
	char err[256];
	/* counters published for isp_pipeline_sample: copied by the worker
	 * itself when asked (pl_publish), read by any thread under snap_mu */
	pthread_mutex_t snap_mu;
	struct isp_stats snap;
	uint64_t snap_seen;             /* the last request it answered (its own view) */
	_Atomic uint64_t snap_done;     /* the same, for the sampler */
	uint64_t handled;               /* items it ran the rules on */
	_Alignas(64) _Atomic uint64_t packets;
	_Atomic uint64_t items;         /* `handled`, for the report */
	_Atomic uint64_t ticks_done;
	_Atomic bool live;              /* still reading its share */
	_Atomic bool failed;
	_Atomic bool finished;
};

struct isp_pipeline {
	const struct isp_registry *reg;
	struct isp_pipeline_ops ops;
	bool has_ops;
	void *rules;
	unsigned n;
	uint16_t first;
	uint16_t ip4, ip6;
	struct isp_source *src[ISP_MAX_WORKERS];
	unsigned nsrc;
	int wake[ISP_MAX_WORKERS];      /* eventfds that end a live source's wait; -1 */
	bool ordered;                   /* a capture file read in batches */
	bool local;                     /* ... in any order (ops.local_only) */
	bool commits;                   /* ... each batch committed in order (ops.batch_commit) */
	bool by_ref;                    /* items point into the source's bytes */
	bool port_counters;             /* DPDK: the port counts, not the kernel */
	uint64_t count;
	struct isp_batches *batches;
	struct isp_mesh *mesh;
	void *ctxs[ISP_MAX_WORKERS];
	char err[256];
	/* the barrier at a tick: the last to arrive merges */
	_Alignas(64) _Atomic unsigned arrived;
	_Atomic unsigned shared;        /* ... then done with ops.merge_share */
	_Atomic uint64_t gen;
	/* pl->commits: the next batch to commit */
	_Alignas(64) _Atomic uint64_t commit_turn;
	/* live inputs: ticks the controller asks for */
	_Alignas(64) _Atomic uint64_t tick_req;
	_Atomic uint64_t tick_ts;
	_Atomic bool tick_now;          /* isp_pipeline_barrier_soon: a tick at once */
	_Atomic bool stop_reading;
	_Atomic bool quit;
	_Atomic bool broken;
	_Atomic int go;                 /* 1: every worker started; -1: not all */
	_Atomic uint64_t dropped;
	/* isp_pipeline_sample: requests, one sampler at a time */
	_Atomic uint64_t snap_req;
	pthread_mutex_t sample_mu;
	sem_t ended;                    /* posted by each worker as it finishes */
	uint64_t ticks;                 /* asked (controller's side) */
	struct worker w[];
};

/* Route an item and hand it to every worker named: the others over the
 * mesh (wait: for room, else drop and count), this one in place, or set
 * aside until the batches before its own are handled. */
void pl_dispatch(struct worker *me, const struct isp_packet *p, bool in_place, bool wait);
/* Run the rules on an item message (its values, or its dissection read
 * back into `into`), and count it handled. */
void pl_item_msg(struct worker *me, struct isp_packet *into, const struct spsc_msg *m);
/* One step of a wait (spills the worker's inbound rings past a while). */
void pl_wait_step(void *ctx, unsigned *spins);
/* Close windows at ts; the last worker to arrive merges them all. */
void pl_barrier(struct worker *me, uint64_t ts);
/* Publish the worker's counters (on its own thread) for a sampler. */
void pl_publish(struct worker *me);
/* ... when a sampler asked since the last time: one relaxed load. */
static inline void pl_maybe_publish(struct worker *me)
{
	if (atomic_load_explicit(&me->pl->snap_req, memory_order_relaxed) != me->snap_seen)
		pl_publish(me);
}
/* A worker's life on a capture file, on a live share. */
void pl_run_ordered(struct worker *me);
void pl_run_local(struct worker *me);
void pl_run_live(struct worker *me);

#endif
