/*
 * frame.h - build one monitored packet: the flow's packet with INT inline
 * (TCP/UDP, VXLAN-GPE, Geneve or GRE), or without INT when a telemetry
 * report carries a plain inner packet.
 */
#ifndef INTGEN_FRAME_H
#define INTGEN_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"
#include "options.h"

/* Where the INT bytes ended up, for deliberate corruption (--malformed). */
struct frame_info {
	size_t len;      /* bytes written */
	size_t int_off;  /* first INT byte (shim, or Geneve option header) */
	size_t int_len;  /* INT bytes including shim and v0.5 tail */
	size_t len_off;  /* offset of the INT length byte to corrupt */
	size_t tun_off;  /* Geneve base header offset (0 if none) */
};

/* Bytes frame_build will write for it (it->payload_len included). with_l2
 * false omits the leading Ethernet header (reports with IP inner type). */
size_t frame_len(const struct ig_config *cfg, const struct ig_item *it,
		 bool with_l2);

/* Write the packet at p (room for frame_len bytes is the caller's job).
 * fi may be NULL. Returns the bytes written. */
size_t frame_build(uint8_t *p, const struct ig_config *cfg,
		   const struct ig_item *it, bool with_l2,
		   struct frame_info *fi);

#endif
