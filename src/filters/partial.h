/*
 * partial.h - partial windows (output-format = partial) read back: what
 * the merge stage (pmerge.c) folds into its own windows. Writing them is
 * query.c's (query_int.h).
 */
#ifndef ISP_FILTERS_PARTIAL_H
#define ISP_FILTERS_PARTIAL_H

#include <jansson.h>
#include <stdint.h>

#include "engine_int.h"
#include "table.h"

#define PARTIAL_VERSION 2

/* What must be equal between the rule that wrote a partial and the rule
 * that merges it: the period, the group-by and the select items. */
uint64_t partial_fingerprint(const struct qrule *r);

/* Fold one partial group record (its parsed JSON) into rule i's window of
 * engine e (one that is not a worker's); *group: the group it went to.
 * Sketches are read through scratch (reset by the caller). 0, or -1 with
 * a message and nothing changed. A full table (max-groups) is counted in
 * the rule's overflows (*group NULL). */
struct qgroup;
int partial_fold(struct isp_engine *e, unsigned i, const json_t *rec, struct arena *scratch,
		 struct qgroup **group, char *err, size_t errlen);

#endif
