/*
 * report.h - telemetry report packets (v0.5, v1.0, v2.0) wrapping the
 * monitored packets built by frame.c.
 */
#ifndef INTGEN_REPORT_H
#define INTGEN_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "options.h"

struct report_info {
	size_t len;      /* frame bytes */
	size_t rep_off;  /* first byte after the outer UDP header */
	size_t hdr_len;  /* fixed report header(s) + metadata of the first
			  * report: cutting inside it makes a truncated report */
	size_t len_off;  /* v2.0: Report Length byte of the first report */
	size_t rest;     /* v2.0: words after word 0 available to the first
			  * report before the end of the UDP payload */
};

/* Set items[i].payload_len so the whole report frame is about cfg->size
 * bytes (never below zero payload; v2.0 inner packets word-aligned and
 * small enough for the 8-bit Report Length). */
void report_size_items(const struct ig_config *cfg, struct ig_item *items,
		       unsigned k);

/* Bytes report_build will write. */
size_t report_len(const struct ig_config *cfg, const struct ig_item *items,
		  unsigned k);

/* Write one report packet carrying k items (k > 1 only for v2.0).
 * last_ff: v2.0, give the last report Report Length 0xFF ("to the end of
 * the UDP payload"). Returns the bytes written; ri may be NULL. */
size_t report_build(uint8_t *p, const struct ig_config *cfg,
		    const struct ig_item *items, unsigned k, bool last_ff,
		    struct report_info *ri);

#endif
