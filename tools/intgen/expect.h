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
	int fresh; /* the next key opens an object: no comma before it */
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

/* Building blocks for other line formats (dta_run.c): expect_begin, then
 * the keys in order, then expect_end. A line may be any length: the
 * nested-object writers make room as they go. */
void expect_begin(struct expect_writer *w);
void expect_end(struct expect_writer *w);
void expect_kv_u64(struct expect_writer *w, const char *key, uint64_t v);
void expect_kv_bool(struct expect_writer *w, const char *key, int v);
void expect_kv_str(struct expect_writer *w, const char *key, const char *s);
void expect_kv_ipv4(struct expect_writer *w, const char *key,
		    const uint8_t a[4]);
/* "key":[v0,v1,...] of n <= 4096 numbers */
void expect_kv_u32s(struct expect_writer *w, const char *key,
		    const uint32_t *v, size_t n);
/* "key":{ ... } with expect_kv_* members in between */
void expect_obj_begin(struct expect_writer *w, const char *key);
void expect_obj_end(struct expect_writer *w);

/* Flush, close, free. Returns 0, or -1 if any write failed. */
int expect_close(struct expect_writer *w);

#endif
