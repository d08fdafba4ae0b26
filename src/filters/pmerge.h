/*
 * pmerge.h - the merge stage: partial windows of several instances
 * (output-format = partial, one JSON record per line or message) combined
 * per rule, window and group, and written as one instance on the whole
 * input would write them.
 *
 * A window closes when every instance has said it closed it (its
 * watermark, or its end), counting `merge { instances = N }` instances
 * (or those seen so far), or `lateness-ms` after the first instance said
 * so. Windows are written in the order one instance writes them (by
 * end, then rule): a complete window waits for the earlier ones. A
 * partial of a window already written is late: counted and dropped, or
 * with `late = correct` folded into the window (kept lateness-ms after it
 * was written) and its group written again, "type":"correction".
 */
#ifndef ISP_FILTERS_PMERGE_H
#define ISP_FILTERS_PMERGE_H

#include <stdint.h>
#include <stdio.h>

#include "../../outputs/channel.h"
#include "../core/registry.h"
#include "program.h"

struct isp_pmerge;

struct isp_pmerge_stats {
	uint64_t records;       /* lines or messages read */
	uint64_t groups;        /* partial groups folded */
	uint64_t watermarks;    /* watermarks, starts and ends */
	uint64_t windows;       /* windows written */
	uint64_t forced;        /* of them, closed by lateness before every instance */
	uint64_t late;          /* partials of a window already written: dropped */
	uint64_t corrections;   /* ... or folded in, its group written again (late = correct) */
	uint64_t malformed;     /* not a partial record (not JSON, a field missing) */
	uint64_t unknown;       /* of a report this config has no query-report for */
	uint64_t mismatched;    /* of a rule whose select, group-by or period differ */
	unsigned instances;     /* distinct instances seen */
	unsigned open;          /* windows open now */
};

struct isp_pmerge *isp_pmerge_new(const struct isp_program *prog, const struct isp_registry *reg,
				  struct isp_channel **channels, char *err, size_t errlen);
/* Wait for n instances when the config does not say (merge { instances }):
 * the number of files of an offline merge. */
void isp_pmerge_expect(struct isp_pmerge *m, unsigned n);
/* One partial record; now_ns: a monotonic clock (lateness), 0 for none
 * (files: the instances' own pace, no lateness). */
void isp_pmerge_feed(struct isp_pmerge *m, const char *text, size_t len, uint64_t now_ns);
/* Close the windows whose time has come (call it when idle too). */
void isp_pmerge_tick(struct isp_pmerge *m, uint64_t now_ns);
/* The input ended: write every open window. */
void isp_pmerge_finish(struct isp_pmerge *m);
void isp_pmerge_stats(const struct isp_pmerge *m, struct isp_pmerge_stats *st);
/* The merge's counters, then one line per rule, on out. */
void isp_pmerge_print_stats(const struct isp_pmerge *m, FILE *out);
void isp_pmerge_free(struct isp_pmerge *m);

#endif
