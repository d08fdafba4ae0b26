/*
 * rules_int.h - the rule engines of a run (rules.c), as control.c reaches
 * them. The API is engine.h.
 */
#ifndef ISP_FILTERS_RULES_INT_H
#define ISP_FILTERS_RULES_INT_H

#include <stdatomic.h>

#include "engine_int.h"

struct isp_rules {
	const struct isp_program *prog;
	const struct isp_registry *reg;
	struct isp_channel **channels;
	struct isp_engine *merger;              /* several workers only */
	struct isp_engine *worker[ISP_MAX_WORKERS];
	unsigned n;
	/* each flow monitor's tick period now (set-interval changes it);
	 * read by whichever thread places ticks */
	_Atomic uint64_t *mon_period;
};

#endif
