/*
 * shards.h - workers that each read their own share of a live input.
 *
 * A live input opened in shares (PACKET_FANOUT sockets, SO_REUSEPORT UDP
 * sockets, DPDK RX queues: see isp_source_open_shares) is read by one
 * thread per share, with no reader in front. Each thread dissects its
 * packets; an item (a packet, or one report of a coalesced report) whose
 * monitored flow belongs to it is handled in place, without a copy; any
 * other is copied to its owner over an N x N mesh of SPSC rings. The
 * kernel or the card spreads by the outer flow, the mesh then gives every
 * monitored flow to one thread, as isp_workers_pick does for one reader.
 *
 * Ticks are aligned barriers: every thread sends a marker on each of its
 * rings, handles what came before the markers of all the others, runs the
 * tick callback and waits while the caller merges their windows.
 */
#ifndef ISP_SHARDS_H
#define ISP_SHARDS_H

#include "dissect.h"

struct isp_source;
struct isp_shards;

struct isp_shard_ops {
	/* an item whose flow this shard owns */
	void (*packet)(void *ctx, const struct isp_packet *p);
	/* a tick: time has reached now_ns (close windows) */
	void (*tick)(void *ctx, uint64_t now_ns);
	/* every item, once, under a lock (rules that need one owner); may be
	 * NULL */
	void (*shared)(void *shared_ctx, const struct isp_packet *p);
};

/*
 * Start n threads; thread i reads src[i] when i < nsrc (a DPDK port may
 * give fewer queues than workers; the others only take items from the
 * mesh). ctx[i] is thread i's callback context. ring_bytes per ring.
 */
struct isp_shards *isp_shards_start(unsigned n, struct isp_source *const *src, unsigned nsrc,
				    const struct isp_registry *reg, uint16_t first_proto,
				    const struct isp_shard_ops *ops, void *const *ctx,
				    void *shared_ctx, size_t ring_bytes);

/* Packets read so far, over all shares (for -c and progress). */
uint64_t isp_shards_packets(const struct isp_shards *s);

/* Packets read so far from share i. */
uint64_t isp_shards_share_packets(const struct isp_shards *s, unsigned i);

/* true once every share has reached its end (or failed: see error). */
bool isp_shards_ended(const struct isp_shards *s);

/* The first read error of any share, or NULL. */
const char *isp_shards_error(const struct isp_shards *s);

/*
 * A barrier at now_ns: returns once every thread has handled everything
 * before its tick and the tick; they wait until isp_shards_resume, so the
 * caller may read their rule state (merge windows) in between.
 */
void isp_shards_tick(struct isp_shards *s, uint64_t now_ns);
void isp_shards_resume(struct isp_shards *s);

/* Stop reading (sources are broken out of blocking reads) and wait until
 * every thread has. Items already read are still handled. */
void isp_shards_stop_reading(struct isp_shards *s);

/* Add every share's dissection counters into st. Only once stopped. */
void isp_shards_stats(const struct isp_shards *s, struct isp_stats *st);

/* Items dropped because a ring of the mesh was full. */
uint64_t isp_shards_dropped(const struct isp_shards *s);

/* Stop reading, drain, join, free. The sources stay the caller's. */
void isp_shards_stop(struct isp_shards *s);

#endif
