/*
 * malformed.h - what the parts of the generated malformed corpus share:
 * the registry, the verdict of a mutant as the core counts it, and the
 * tally of passed and failed checks.
 */
#ifndef ISP_TEST_MALFORMED_H
#define ISP_TEST_MALFORMED_H

#include <stdbool.h>
#include <stdint.h>

#include "../../src/core/dissect.h"
#include "../../src/core/registry.h"

extern struct isp_registry *reg;
extern unsigned pass, fail;

const char *pname(uint16_t id);

/* Every malformed count of st, NOT_MINE (counted apart) left out. */
unsigned long counted_malformed(const struct isp_stats *st);

/* 5. INT header fields and 6. telemetry report fields (int_fields.c):
 * every INT layer and report of a well-formed packet mutated field by
 * field, each mutant against a model of the specifications. */
void int_fields(const char *what, const uint8_t *d, uint32_t n, uint16_t first);
void int_fields_summary(void);

/* 7. The carriers' length fields (base_fields.c). */
void base_fields(const char *what, const uint8_t *d, uint32_t n, uint16_t first);
void base_fields_summary(void);

#endif
