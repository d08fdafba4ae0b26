/*
 * expect.h - the expected-values file: one JSON object per line per
 * telemetry item, keyed by intspect attribute names (see README.md for
 * the contract the decoder tests rely on).
 */
#ifndef INTGEN_EXPECT_H
#define INTGEN_EXPECT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"
#include "options.h"

struct expect_writer {
	FILE *fp;
	char *buf;
	size_t len, cap;
	int error; /* sticky */
};

/* Create (truncate) path. Returns 0, or -1 with errno set. */
int expect_open(struct expect_writer *w, const char *path);

/* One line for an item of packet pkt_index (1-based). in_report: the item
 * is the inner packet of a telemetry report (adds int_report.* keys). */
void expect_item(struct expect_writer *w, const struct ig_config *cfg,
		 uint64_t pkt_index, const struct ig_item *it, int in_report);

/* {"meta.packet_index": N, "malformed": "reason"} */
void expect_malformed(struct expect_writer *w, uint64_t pkt_index,
		      const char *reason);

/* Flush, close, free. Returns 0, or -1 if any write failed. */
int expect_close(struct expect_writer *w);

#endif
