/*
 * int_state.h - what the INT decoder leaves in its layer for the getters,
 * and the INT detection settings.
 */
#ifndef ISP_INT_STATE_H
#define ISP_INT_STATE_H

#include <stddef.h>
#include <string.h>

#include "int_layout.h"

enum int_mode { INT_MODE_MD = 1, INT_MODE_DST = 2, INT_MODE_MX = 3 };

#define SHIM_LEN 4  /* every shim: the decoder checks it, the getters read it */

/* Offsets are relative to the layer start (which may hold a probe marker).
 * The fields the per-hop getters read come first (int_state_load_hops). */
struct int_state {
	uint64_t fo;            /* int_fo_row(layout, bitmap) */
	uint16_t stack_off;     /* first (= last-hop) block */
	uint16_t bitmap;        /* canonical: MSB = bit 0 */
	uint8_t nhops;          /* <= ISP_MAX_HOPS (set_hops) */
	uint8_t stride;         /* bytes per hop block as decoded */
	uint8_t layout;         /* enum int_layout_kind */
	uint8_t family;         /* 0: v0.5, 1: v1.0, 2: v2.x (header layout) */
	/* the rest */
	uint16_t shim_off;
	uint16_t md_off;        /* instruction header */
	uint16_t tail_off;      /* v0.5 tail, 0 = none */
	uint16_t wire_bitmap;   /* as on the wire (GEANT puts it in the low byte) */
	uint8_t mode;           /* enum int_mode */
	uint8_t version;        /* MD header version field as written */
	uint8_t hop_ml;         /* HopML (v1.0/v2) or InsCnt (v0.5), as written */
	uint8_t hop_cnt;        /* RemainingHopCnt (v1.0/v2), TotalHopCnt (v0.5) */
	uint8_t max_hop_cnt;    /* v0.5 */
	uint8_t flags;          /* INT_F_* */
	uint8_t carrier;
	uint8_t probe;          /* a probe marker precedes the shim */
};

/* M, E and C in the order of the headers' bits (v1.0: C · E · M, v2: D ·
 * E · M), so that a decoder takes them with one shift and mask */
#define INT_F_M 0x01        /* MTU exceeded */
#define INT_F_E 0x02        /* hop count exceeded */
#define INT_F_C 0x04        /* copy (v0.5/v1.0) */
#define INT_F_D 0x08        /* discard (v2) */
_Static_assert(INT_F_M == 1 && INT_F_E == 2 && INT_F_C == 4,
	       "int_decode.c takes C · E · M as the header's three bits");
#define INT_F_SWAPPED 0x10  /* bitmap was found in the low byte */
#define INT_F_HOPML_MISMATCH 0x20 /* HopML disagrees with the bitmap */

_Static_assert(sizeof(struct int_state) <= sizeof(union isp_layer_state),
	       "int_state must fit a layer");

static inline void int_state_load(const struct isp_layer *l, struct int_state *s)
{
	memcpy(s, l->st.b, sizeof(*s));
}

/* Only the fields up to `family`, the rest of s left unset: what the
 * per-hop getters read, 16 bytes the compiler keeps in registers (a copy of
 * the whole state goes through the stack, on every per-hop attribute). */
static inline void int_state_load_hops(const struct isp_layer *l, struct int_state *s)
{
	memcpy(s, l->st.b, offsetof(struct int_state, shim_off));
}

static inline void int_state_store(struct isp_layer *l, const struct int_state *s)
{
	memcpy(l->st.b, s, sizeof(*s));
}

/* Detection settings, set by options before any packet is read. */
#define INT_MAX_DSCP 8
enum int_dialect { INT_DIALECT_AUTO, INT_DIALECT_L4S };

struct int_config {
	unsigned ndscp;
	uint8_t dscp_value[INT_MAX_DSCP], dscp_mask[INT_MAX_DSCP];
	uint64_t dscp_set;      /* bit v set: DSCP v matches one of the above */
	bool probe_marker_set;
	uint64_t probe_marker;
	uint8_t dialect;
	bool structural_in_reports;
};

extern struct int_config int_cfg;

/* Decode an INT header at l (carrier in d->carrier). */
enum isp_verdict int_decode(struct isp_dissect *d, struct isp_layer *l);

#endif
