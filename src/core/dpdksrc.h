/*
 * dpdksrc.h - a DPDK port as a packet source (only when built with DPDK).
 */
#ifndef ISP_DPDKSRC_H
#define ISP_DPDKSRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dpdk_src;

/* Start the EAL with these arguments (as on a DPDK command line) and the
 * first port with up to `queues` RX queues; returns the reader of queue 0,
 * which owns the port. NULL with a message in err. */
struct dpdk_src *dpdk_src_open(const char *eal_args, unsigned queues, char *err, size_t errlen);
/* RX queues the port got (at most what was asked, at least 1). */
unsigned dpdk_src_queues(const struct dpdk_src *s);
/* A reader of queue q (0 < q < dpdk_src_queues); close it before queue 0's. */
struct dpdk_src *dpdk_src_queue(struct dpdk_src *first, unsigned q);
/* 1: a packet (valid until the next call), 2: none yet, 0: stopped. */
int dpdk_src_next(struct dpdk_src *s, const uint8_t **data, uint32_t *caplen,
		  uint32_t *wirelen, uint64_t *ts_ns, char *err, size_t errlen);
void dpdk_src_stop(struct dpdk_src *s);
/* the port's counters, from queue 0's reader (0 from the others) */
void dpdk_src_stats(struct dpdk_src *s, uint64_t *received, uint64_t *dropped);
void dpdk_src_close(struct dpdk_src *s);

/* The DPDK library version, e.g. "DPDK 22.11.4". */
const char *dpdk_src_version(void);

#endif
