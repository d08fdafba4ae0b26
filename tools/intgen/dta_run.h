/*
 * dta_run.h - --format dta: draw the reports, pass them through the
 * simulated network (--dta-loss, --dta-reorder) to the pcap and/or the
 * live sender, and write the expected values.
 */
#ifndef INTGEN_DTA_RUN_H
#define INTGEN_DTA_RUN_H

#include "options.h"

/* The whole run; returns the exit status (0, or 1 on an I/O error). */
int dta_run(const struct ig_config *cfg);

#endif
