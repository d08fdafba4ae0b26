/*
 * workers.h - worker threads fed by the reader through SPSC rings.
 *
 * The reader dissects each packet once (to find the monitored flow of a
 * telemetry report: its inner addresses, not the sink-to-collector pair)
 * and hands each item (a packet, or one individual report of a coalesced
 * report) to the worker of its flow, with its dissection: the worker
 * reads the item from its copy in the ring and calls the `packet`
 * callback without dissecting again; the rule engine
 * behind the callback is the worker's own, so no state is shared on the
 * packet path. Ticks are barriers: every worker has handled everything
 * before the tick, and the tick itself, when isp_workers_tick returns.
 */
#ifndef ISP_WORKERS_H
#define ISP_WORKERS_H

#include "dissect.h"

struct isp_workers;

struct isp_worker_ops {
	/* an item of a dissected packet (layers of that item only) */
	void (*packet)(void *ctx, const struct isp_packet *p);
	/* a tick: time has reached now_ns (close windows) */
	void (*tick)(void *ctx, uint64_t now_ns);
};

struct spsc_msg;

/* The owner among n of a dissected item: a symmetric hash of its innermost
 * address pair (ip4, ip6: the address layers' protocol ids), so both
 * directions of a flow go to one worker. */
unsigned isp_item_owner(const struct isp_packet *p, uint16_t ip4, uint16_t ip6, unsigned n);
/* The symmetric hash itself (0 for an item without addresses). */
uint64_t isp_item_hash(const struct isp_packet *p, uint16_t ip4, uint16_t ip6);

/* An item into a ring message of isp_item_msg_size bytes (a copy of its
 * bytes and of its dissection), and back: the receiver's packet points
 * into the message, which must stay until it is handled. */
size_t isp_item_msg_size(const struct isp_packet *p);
void isp_item_to_msg(struct spsc_msg *m, const struct isp_packet *p);
void isp_item_from_msg(struct isp_packet *p, const struct spsc_msg *m);

/* Start n workers; ctx[i] is worker i's callback context. ring_bytes per
 * worker. NULL on failure. */
struct isp_workers *isp_workers_start(unsigned n, const struct isp_registry *reg,
				      uint16_t first_proto, const struct isp_worker_ops *ops,
				      void *const *ctx, size_t ring_bytes);

/* The worker of a dissected item (isp_item_owner). */
unsigned isp_workers_pick(const struct isp_workers *w, const struct isp_packet *p);

/*
 * Hand an item to worker i (the packet's bytes are copied). When the ring
 * is full: wait if `wait` (capture files), else drop it and count it.
 * Returns false when dropped.
 */
bool isp_workers_dispatch(struct isp_workers *w, unsigned i, const struct isp_packet *p,
			  bool wait);

/* Make every item handed over visible to the workers now (items go in
 * batches): call it when the input goes idle. */
void isp_workers_flush(struct isp_workers *w);

/* Broadcast a tick and wait until every worker has handled it. */
void isp_workers_tick(struct isp_workers *w, uint64_t now_ns);

/* Items dropped because a worker's ring was full. */
uint64_t isp_workers_dropped(const struct isp_workers *w);

/* Let the workers drain their rings, stop and join them, free. */
void isp_workers_stop(struct isp_workers *w);

#endif
