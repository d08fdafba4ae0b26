/*
 * pipeline.h - one path for every input, with one worker or many:
 * source -> shares -> workers (dissect, route, rules) -> window merge ->
 * ticks -> drain -> stop, and the counters of each step.
 *
 * One worker: the calling thread reads, dissects and runs the rules.
 *
 * Several workers: each reads its own share of the input, no reader in
 * front. A capture file is shared by batches (batches.h): workers take
 * turns claiming the next few dozen records, and every worker handles
 * items in the order of the file, so state that depends on order (diff(),
 * delta-cond) sees what one worker would. A live input is shared by the
 * kernel or the card (PACKET_FANOUT, SO_REUSEPORT, RSS queues); order is
 * then arrival order per share. Either way each item goes, over the mesh
 * (mesh.h), to the worker that owns each of its keys (ops->route): the
 * same key always lands on the same worker, so no rule state is shared
 * and nothing is locked on the packet path.
 *
 * Ticks close windows at the same point for every worker: on packet time
 * for files (placed in the file's order), on the wall clock for live
 * inputs (a marker on every ring). At a tick every worker closes its
 * windows; the last to arrive merges them (ops->merge) while the others
 * wait. The end of the input is a last tick at UINT64_MAX.
 */
#ifndef ISP_PIPELINE_H
#define ISP_PIPELINE_H

#include <signal.h>
#include <stdio.h>

#include "dissect.h"
#include "source.h"

#define ISP_ROUTE_ALL UINT64_MAX        /* an item for every rule (one worker) */
#define ISP_MAX_WORKERS 64

/* What the pipeline runs on items (the rules, or a dump): one context per
 * worker, made by worker_new. Only `item` is required. */
struct isp_pipeline_ops {
	/* worker i of n (n > 1: closed windows wait for merge); NULL with a
	 * message in err */
	void *(*worker_new)(void *rules, unsigned i, unsigned n, char *err, size_t errlen);
	void (*worker_free)(void *w);
	/* n > 1: where an item goes; dest[k] = what it runs on worker k, 0 =
	 * not sent there (dest has n entries, zeroed by the caller) */
	void (*route)(void *w, const struct isp_packet *p, unsigned n, uint64_t *dest);
	/* n > 1, optional: every rule runs where its item was read (nothing
	 * to route, no order between workers): a capture file's workers
	 * then take its batches in any order and meet only at ticks */
	bool (*local_only)(void *w);
	/* n > 1, optional, capture files: the rules can run where their
	 * items were read provided that what each batch wrote is handed on
	 * in the file's order (batch_commit). Asked of every worker when
	 * local_only is not true; true: they will be run so. bytes_stay:
	 * the items' packet bytes stay readable to the end (a mapped file) */
	bool (*local_in_order)(void *w, bool bytes_stay);
	/* local_in_order: batch_done after each batch the worker ran (what
	 * it wrote waits; at most two batches wait), then batch_commit for
	 * the oldest batch waiting, in the file's order: the call for a batch
	 * comes after the call for the batch before it returned */
	void (*batch_done)(void *w);
	void (*batch_commit)(void *w);
	/* an item, with what route gave for this worker (ISP_ROUTE_ALL alone) */
	void (*item)(void *w, const struct isp_packet *p, uint64_t what);
	/* optional: the same for an item the rules may hold a few items
	 * before running it (they run what they hold first when tick or
	 * publish is called). bytes_stay: its packet bytes stay readable
	 * until the pipeline ends (a mapped capture file); else the rules
	 * copy what they hold. Not for an input whose checkpoints wait for
	 * the rules to hold nothing (Kafka). */
	void (*item_held)(void *w, const struct isp_packet *p, uint64_t what, bool bytes_stay);
	/* optional, n > 1: the item route was last given, on this worker,
	 * to this worker (what route fetched of it is at hand) */
	void (*item_routed)(void *w, const struct isp_packet *p, uint64_t what);
	/* optional, n > 1: the values the rules `what` read of p (route was
	 * just given p), packed into out (at most room bytes), so that the
	 * item travels as them instead of its dissection and bytes; 0: one
	 * of those rules needs the packet, which then travels whole */
	size_t (*pack)(void *w, const struct isp_packet *p, uint64_t what, uint8_t *out, size_t room);
	/* an item as pack made it: vals (len bytes), and p, which gives its
	 * time, position and lengths only (no layer, no byte) */
	void (*item_packed)(void *w, const struct isp_packet *p, const uint8_t *vals, size_t len,
			    uint64_t what);
	/* time has reached now_ns: close the windows that ended */
	void (*tick)(void *w, uint64_t now_ns);
	/* a live input went idle: hand on what waits in batches */
	void (*flush)(void *w);
	/* n > 1, every worker's tick done: merge and write their windows */
	void (*merge)(void *rules, void *const *workers, unsigned n);
	/* optional, n > 1: after merge, on every worker at once: write a
	 * share of what merge left to write (the records of large windows),
	 * until none is left to take; wait(ctx, spins) is one step of a
	 * wait for another worker. Then, on the last worker done, merge_end
	 * (what follows those writes). The workers leave the barrier after. */
	void (*merge_share)(void *rules, void *w, void (*wait)(void *ctx, unsigned *spins),
			    void *ctx);
	void (*merge_end)(void *rules, void *const *workers, unsigned n);
	/* the first time after t at which a window ends; UINT64_MAX: none */
	uint64_t (*window_end)(void *rules, uint64_t t);
	/* on the worker's own thread, when isp_pipeline_sample asks: copy
	 * its counters where another thread may read them (optional) */
	void (*publish)(void *w);
	/* a Kafka input: true while the rules hold what they have not
	 * written (an open window), when no offset may be committed */
	bool (*holding)(void *w);
	/* a Kafka input's partitions are leaving: write now what the rules
	 * hold (open windows, early); final: the input stops, and its open
	 * windows are not finished (others may go on with its partitions) */
	void (*drain)(void *w, bool final);
};

struct isp_pipeline_opts {
	struct isp_source_opts src;
	unsigned workers;               /* 0 or 1: the calling thread alone */
	uint64_t count;                 /* stop after this many packets; 0: all */
	const struct isp_pipeline_ops *ops;     /* NULL: decode only */
	void *rules;
};

/* What the caller's signal handlers set, and how progress is shown. */
struct isp_pipeline_ctl {
	volatile sig_atomic_t *print_stats;     /* SIGUSR1: call progress */
	void (*progress)(void *ctx, uint64_t packets);
	void *ctx;
};

struct isp_pipeline;

/* Open the input (in shares when several workers read a live input) and
 * make the workers' contexts. NULL with a message. */
struct isp_pipeline *isp_pipeline_open(struct isp_registry *reg, const struct isp_pipeline_opts *o,
				       char *err, size_t errlen);

/* Run to the end of the input, a stop or the count; every window closed.
 * 0, or 1 after a read error (isp_pipeline_error). */
int isp_pipeline_run(struct isp_pipeline *pl, const struct isp_pipeline_ctl *ctl);

/* Several workers on a live input: ask for a tick now, so that every
 * worker soon meets at a barrier (ops->merge runs with all of them held:
 * the rules can be swapped there). true when one comes, or when there is
 * one worker (ops->publish runs between two items); false for a capture
 * file read by several workers, whose ticks sit at points of the file. */
bool isp_pipeline_barrier_soon(struct isp_pipeline *pl);

/* Stop reading (safe in a signal handler): what was read is still handled. */
void isp_pipeline_break(struct isp_pipeline *pl);

const char *isp_pipeline_error(const struct isp_pipeline *pl);
unsigned isp_pipeline_workers(const struct isp_pipeline *pl);
void *isp_pipeline_worker(const struct isp_pipeline *pl, unsigned i);
/* Decimals the input's timestamps deserve. */
unsigned isp_pipeline_ts_digits(const struct isp_pipeline *pl);
/* Packets read so far (any thread). */
uint64_t isp_pipeline_packets(const struct isp_pipeline *pl);
/* Dissection counters over every worker (once run returned). */
void isp_pipeline_stats(const struct isp_pipeline *pl, struct isp_stats *st);
/* The same while it runs, from any thread: every worker is asked to
 * publish its counters (and its ops->publish) at its next batch, and the
 * published ones are summed into st. A worker that does not answer within
 * wait_ms (waiting at a tick) counts with what it published last, so the
 * sums never go back. Returns how many workers answered in time. */
unsigned isp_pipeline_sample(struct isp_pipeline *pl, struct isp_stats *st,
			     uint64_t *worker_packets, unsigned wait_ms);
/* Items worker i ran the rules on, as of the last isp_pipeline_sample
 * (an item whose keys have several owners counts on each). */
uint64_t isp_pipeline_worker_items(struct isp_pipeline *pl, unsigned i);
/* Items dropped on the way to their worker (a full ring), any thread. */
uint64_t isp_pipeline_dropped(const struct isp_pipeline *pl);
/* How the input was shared, what the mesh spilled or dropped, and the
 * kernel's or the port's counters, one line each. */
void isp_pipeline_report(const struct isp_pipeline *pl, FILE *out);

void isp_pipeline_close(struct isp_pipeline *pl);

#endif
