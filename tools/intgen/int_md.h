/*
 * int_md.h - INT shim, metadata header, hop stack and v0.5 tail encoders.
 *
 * Byte layouts follow the INT specifications (shim, metadata header,
 * per-hop fields of v0.5, v1.0, v2.1, and the L4S dialect). The layout is
 * chosen by the configured INT version (and the L4S dialect), while the
 * version *field* written is it->md_version, so dialects that mix the two
 * can be produced.
 */
#ifndef INTGEN_INT_MD_H
#define INTGEN_INT_MD_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "options.h"

#define INT_TYPE_MD 1
#define INT_TYPE_MX 3

/* Bytes of the MD (or MX) header: 8 for v0.5/v1.0/L4S, 12 for v2.x. */
size_t int_md_hdr_len(const struct ig_config *cfg);

/* Bytes of the hop stack (0 for INT-MX). */
size_t int_stack_len(const struct ig_item *it);

/* Write the metadata header followed by the hop stack (last hop first).
 * Returns the bytes written: int_md_hdr_len + int_stack_len. */
size_t int_write_md(uint8_t *p, const struct ig_config *cfg,
		    const struct ig_item *it);

/* INT over TCP/UDP: the 4-byte shim (§2). Length covers what the version
 * says (v0.5 includes the tail, v1.0 the shim, v2.x neither). */
size_t int_write_shim_l4(uint8_t *p, const struct ig_config *cfg,
			 const struct ig_item *it);

/* v0.5 tail header: next protocol, original destination port, DSCP. */
size_t int_write_tail_v05(uint8_t *p, const struct ig_item *it);
#define INT_TAIL_LEN 4

/* INT shim after a VXLAN-GPE header; next_proto names what follows the
 * INT stack (0x03 = Ethernet). */
size_t int_write_shim_gpe(uint8_t *p, const struct ig_config *cfg,
			  const struct ig_item *it, uint8_t next_proto);

/* VXLAN-GPE Next Protocol value announcing INT for the version. */
uint8_t int_gpe_next_proto(enum ig_intver v);

/* INT shim for GRE (v2.x): Type, G=1 (source inserted GRE), Length
 * (MD header + stack), Next Protocol as an EtherType. */
size_t int_write_shim_gre(uint8_t *p, const struct ig_item *it,
			  const struct ig_config *cfg, uint16_t ethertype);

#define INT_SHIM_LEN 4

#endif
