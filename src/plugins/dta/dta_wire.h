/*
 * dta_wire.h - a decoded DTA report's fields (README.md, "Wire format"),
 * read from the bytes dta.c's decoder checked: what the plugin's getters
 * and the collector (src/filters/dta.c) both read, so the layout is
 * written once. The decoder leaves struct dta_state in its layer.
 */
#ifndef ISP_DTA_WIRE_H
#define ISP_DTA_WIRE_H

#include <stdint.h>
#include <string.h>

#include "../../core/cursor.h"

enum {
	DTA_OP_KEY_WRITE = 1, DTA_OP_APPEND, DTA_OP_KEY_INCREMENT, DTA_OP_POSTCARDER,
	DTA_OP_SKETCH_MERGE,
};

#define DTA_F_IMMEDIATE 0x80
#define DTA_F_RETRANSMIT 0x40

/* The layer state dta.c's decoder leaves (isp_layer.st). */
struct dta_state {
	uint8_t hdr;            /* base header bytes: 3, or 2 */
	uint8_t opcode;
	uint16_t data_off;      /* data or counters, from the layer start */
	uint32_t data_len;      /* their bytes */
};

struct dta_report {
	uint8_t opcode, flags, has_seq, seq;
	uint8_t redundancy;     /* Key-Write, Key-Increment */
	uint8_t hop;            /* Postcarder */
	const uint8_t *key;     /* its 4 bytes (Key-Write, Key-Increment, Postcarder) */
	uint32_t list;          /* Append */
	uint64_t counter;       /* Key-Increment */
	uint16_t sketch, reporter, epoch, column, columns;      /* Sketch-Merge */
	const uint8_t *data;    /* data words or counters, big-endian */
	uint32_t data_len;
};

/* h: the report's first byte (the layer's), s: its layer state. */
static inline void dta_report_of(const uint8_t *h, const struct dta_state *s,
				 struct dta_report *r)
{
	const uint8_t *b = h + s->hdr;

	memset(r, 0, sizeof(*r));
	r->opcode = s->opcode;
	r->has_seq = s->hdr == 3;
	r->seq = r->has_seq ? h[1] : 0;
	r->flags = h[s->hdr - 1];
	r->data = h + s->data_off;
	r->data_len = s->data_len;
	switch (s->opcode) {
	case DTA_OP_KEY_WRITE:
		r->redundancy = b[0];
		r->key = b + 1;
		break;
	case DTA_OP_APPEND:
		r->list = isp_be32(b);
		break;
	case DTA_OP_KEY_INCREMENT:
		r->redundancy = b[0];
		r->key = b + 1;
		r->counter = (uint64_t)isp_be32(b + 5) << 32 | isp_be32(b + 9);
		break;
	case DTA_OP_POSTCARDER:
		r->key = b;
		r->hop = b[4];
		break;
	case DTA_OP_SKETCH_MERGE:
		r->sketch = isp_be16(b);
		r->reporter = isp_be16(b + 2);
		r->epoch = isp_be16(b + 4);
		r->column = isp_be16(b + 6);
		r->columns = isp_be16(b + 8);
		break;
	}
}

#endif
