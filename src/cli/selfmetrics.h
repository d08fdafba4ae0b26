/*
 * selfmetrics.h - intspect's own counters for Prometheus scrapes
 * (selfmetrics.c).
 */
#ifndef ISP_CLI_SELFMETRICS_H
#define ISP_CLI_SELFMETRICS_H

#include <pthread.h>

#include "../../outputs/channel.h"
#include "../core/pipeline.h"
#include "../core/registry.h"

struct isp_rules;
struct isp_prom_text;

/* What a scrape reads: it must outlive isp_prom_set_self(NULL, NULL). */
struct self_metrics {
	const struct isp_registry *reg;
	struct isp_pipeline *pl;
	const struct isp_rules *rules;          /* NULL: no rules */
	struct isp_channel *const *channels;    /* by program channel index */
	unsigned nchannels;
	double start_time;                      /* seconds since the epoch */
	pthread_mutex_t *mu;                    /* held to read channels: a reload changes them */
};

/* An isp_prom_self_fn: ctx is a struct self_metrics. */
void self_metrics_write(void *ctx, struct isp_prom_text *t);

#endif
