/*
 * dump.h - one JSON object per packet (or per coalesced report) with every
 * attribute the packet has, keyed by full attribute name (--dump).
 */
#ifndef ISP_DUMP_H
#define ISP_DUMP_H

#include <stdio.h>

#include "registry.h"

/* Write the dump of a dissected packet as one line to out. */
void isp_dump_packet(const struct isp_registry *reg, const struct isp_packet *p,
		     unsigned ts_digits, FILE *out);

/* Print every attribute with its type and meaning (--list-attributes). */
void isp_list_attributes(const struct isp_registry *reg, FILE *out);

#endif
