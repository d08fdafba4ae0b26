/*
 * prometheus.h - what the Prometheus channel (prometheus-output) offers
 * beyond the channel API: a way for the program to add its own counters
 * to every scrape, and the writer of the text exposition format they are
 * written with.
 *
 * The channel keeps the latest value of each series its records carry
 * (prometheus.c) and serves them, with those counters, on an HTTP
 * endpoint (prometheus_http.c). Format: Prometheus' text exposition
 * format 0.0.4 — "# HELP", "# TYPE", then `name{label="value",...} value`
 * lines, every series of a family together.
 */
#ifndef ISP_OUTPUTS_PROMETHEUS_H
#define ISP_OUTPUTS_PROMETHEUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bytes.h"

/* The text of one scrape. */
struct isp_prom_text {
	struct isp_bytes b;
	bool oom;               /* a write did not fit: the scrape fails (500) */
};

/* A family: its HELP and TYPE lines ("counter", "gauge"). Name and help
 * are the program's own (no escaping needed beyond what is done). */
void isp_prom_family(struct isp_prom_text *t, const char *name, const char *type,
		     const char *help);
/* A sample of the last family: nlabels pairs of (name, value) strings
 * follow v; the values are escaped here. */
void isp_prom_sample(struct isp_prom_text *t, const char *name, uint64_t v,
		     unsigned nlabels, ...);
/* The same for a real value (NaN and infinities as Prometheus writes them). */
void isp_prom_sample_real(struct isp_prom_text *t, const char *name, double v,
			  unsigned nlabels, ...);

/* The program's counters: fn writes them into t on a scrape, on the
 * channel's HTTP thread, so it must only read what is safe from another
 * thread. Set once what fn reads exists; set NULL before it goes away
 * (this waits for a scrape that is writing them). Every Prometheus
 * channel serves them unless its section says self-metrics = false. */
typedef void (*isp_prom_self_fn)(void *ctx, struct isp_prom_text *t);
void isp_prom_set_self(isp_prom_self_fn fn, void *ctx);

#endif
