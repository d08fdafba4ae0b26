/*
 * model.h - the values one generated telemetry item carries.
 *
 * An item is produced once (model_*), then handed unchanged to the byte
 * encoders (frame.c, report.c) and to the expected-values writer
 * (expect.c). Field values are stored exactly as they go on the wire,
 * already reduced to the field width; an "unavailable" field holds the
 * all-ones value of its width. Keeping one source of truth is what makes
 * the pcap and the expect file agree by construction.
 */
#ifndef INTGEN_MODEL_H
#define INTGEN_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "options.h"
#include "rng.h"

struct ig_flow {
	uint32_t index;
	bool v6;
	uint8_t src[16], dst[16]; /* IPv4 uses the first 4 bytes */
	uint8_t proto;            /* 17 or 6 */
	uint16_t sport, dport;
	uint8_t dscp;             /* original DSCP saved in the INT headers */
};

/* One hop's metadata; hop[0] of an item is the first hop on the path. */
struct ig_hop {
	uint32_t switch_id;
	uint16_t in_port, eg_port;
	uint32_t latency;
	uint8_t queue_id;
	uint32_t queue_occ;       /* 24 bits */
	uint64_t ts_in, ts_eg;    /* 32 or 48 significant bits, see ts_bytes */
	uint32_t lv2_in, lv2_eg;  /* v1.0+ bit 6 */
	uint32_t v05_qcong;       /* v0.5 bit 6: queue ID 8 + congestion 24 */
	uint32_t tx_util;
	uint8_t buffer_id;
	uint32_t buffer_occ;      /* 24 bits */
	uint16_t l4s_mark, l4s_drop;
	uint32_t cksum;
};

/* Sink/report metadata (telemetry report optional fields). */
struct ig_repmd {
	uint16_t in_port, eg_port;
	uint32_t latency;
	uint8_t queue_id;
	uint32_t queue_occ;
	uint64_t ts_in, ts_eg;    /* v2.0 8-byte; v0.5/v1.0 use the low 32 bits */
	uint32_t lv2_in, lv2_eg;
	uint32_t tx_util;
	uint8_t buffer_id;
	uint32_t buffer_occ;
	uint8_t drop_reason;
};

struct ig_item {
	uint64_t ts_ns;           /* packet (capture) time */
	struct ig_flow flow;
	bool has_int;             /* false: plain inner packet in a report */
	bool mx;                  /* INT-MX header only, no stack */
	uint8_t md_version;       /* version field written in the MD header */
	uint16_t bitmap;
	uint8_t ts_bytes;         /* 4 (v0.5/v1.0) or 8 (v2.x, L4S) */
	bool l4s;                 /* p4-int-l4s layout (16-bit level-2 ports) */
	unsigned nhops;
	uint8_t hop_ml;           /* as written (L4S: real words - 1) */
	uint8_t hop_words;        /* real per-hop words */
	uint8_t max_hops;         /* v0.5 MaxHopCnt / initial remaining count */
	uint8_t remaining;
	bool e_flag;
	struct ig_hop hop[IG_MAX_HOPS];

	/* reports */
	uint32_t node_id;
	uint8_t hw_id;
	uint32_t seq;
	uint8_t inner_kind;       /* v0.5 NProto, v1.0 NProt, v2.0 InType */
	bool dropped, congested;
	struct ig_repmd rep;

	unsigned payload_len;     /* inner application payload bytes */
};

struct ig_model {
	const struct ig_config *cfg;
	struct rng rng;
	uint32_t seq[65536];      /* per reporting node */
	/* --flow-order shuffle: a permutation of the flows, drawn again at
	 * the start of every round of cfg->flows items */
	uint32_t *perm;
	uint64_t drawn;           /* items made so far */
};

/* -1 when the permutation of --flow-order shuffle cannot be allocated. */
int model_init(struct ig_model *m, const struct ig_config *cfg);
void model_free(struct ig_model *m);

/* Fill it with a fresh INT item (flow, hops, header fields) for packet time
 * ts_ns. with_int=false leaves a plain flow packet (report inner only). */
void model_item(struct ig_model *m, struct ig_item *it, uint64_t ts_ns,
		bool with_int);

/* Add report fields (node, hw_id, sequence, metadata, inner kind) to an
 * item made by model_item. leader == NULL: the item starts a report packet
 * and advances its node's sequence number; otherwise (2nd..Kth coalesced
 * v2.0 report) node, hw_id and sequence are copied from leader. */
void model_report(struct ig_model *m, struct ig_item *it,
		  const struct ig_item *leader);

/* Switch ID of hop h on flow f's path: distinct along a path, stable per
 * flow, never all-ones. */
uint32_t model_path_switch(uint32_t flow, unsigned h);

/* Per-hop metadata words for a bitmap (v0.5 InsCnt, v1.0/v2.x HopML), as
 * the hop really writes them. */
unsigned model_hop_words(enum ig_intver v, bool l4s, uint16_t bitmap);

/* Telemetry report v2.0 metadata words for RepMdBits (bit 0 = MSB;
 * bits 4-6 are 8 bytes, the others 4). */
unsigned model_rep_md_words(uint16_t bits);

#endif
