/*
 * selfmetrics.c - intspect's own counters on every Prometheus scrape
 * (prometheus-output, outputs/prometheus.h): what the summary at exit and
 * SIGUSR1 print, read while the pipeline runs without a race (the workers
 * publish their counters when asked: isp_pipeline_sample, and the
 * channels' are atomics).
 *
 * Counters end in _total. A malformed reason appears once it happened;
 * every protocol, rule, channel and worker appears from the start, so a
 * rate() over a series that stays at 0 is 0, not absent.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "../../outputs/prometheus.h"
#include "../filters/engine.h"
#include "selfmetrics.h"

#define SAMPLE_WAIT_MS 100      /* a worker waiting at a tick answers late */

static void counter(struct isp_prom_text *t, const char *name, const char *help, uint64_t v)
{
	isp_prom_family(t, name, "counter", help);
	isp_prom_sample(t, name, v, 0);
}

static void dissection(struct isp_prom_text *t, const struct self_metrics *m)
{
	const struct isp_registry *reg = m->reg;
	struct isp_stats *st = calloc(1, sizeof(*st));
	uint64_t per[ISP_MAX_WORKERS] = { 0 };
	unsigned n = isp_pipeline_workers(m->pl);

	if (!st)
		return;
	isp_pipeline_sample(m->pl, st, per, SAMPLE_WAIT_MS);
	counter(t, "intspect_packets_total", "Packets read", st->packets);
	counter(t, "intspect_bytes_total", "Bytes of the packets read (wire length)", st->bytes);
	counter(t, "intspect_telemetry_items_total",
		"Telemetry items: packets, plus the reports coalesced after the first", st->items);
	counter(t, "intspect_malformed_packets_total", "Packets with a malformed layer",
		st->malformed_packets);
	isp_prom_family(t, "intspect_decoded_total", "counter", "Layers decoded, per protocol");
	for (uint16_t i = 0; i < reg->nprotos; i++)
		isp_prom_sample(t, "intspect_decoded_total", st->decoded[i], 1, "protocol",
				reg->proto[i].desc->name);
	isp_prom_family(t, "intspect_malformed_total", "counter",
			"Malformed layers, per protocol and reason");
	for (uint16_t i = 0; i < reg->nprotos; i++)
		for (unsigned v = ISP_ERR_TRUNCATED; v < ISP_VERDICT__COUNT; v++)
			if (st->malformed[i][v])
				isp_prom_sample(t, "intspect_malformed_total", st->malformed[i][v], 2,
						"protocol", reg->proto[i].desc->name, "reason",
						isp_verdict_name((enum isp_verdict)v));
	isp_prom_family(t, "intspect_workers", "gauge", "Workers running the rules");
	isp_prom_sample(t, "intspect_workers", n, 0);
	isp_prom_family(t, "intspect_worker_packets_total", "counter",
			"Packets each worker read (its share)");
	for (unsigned i = 0; i < n; i++) {
		char id[16];
		snprintf(id, sizeof(id), "%u", i);
		isp_prom_sample(t, "intspect_worker_packets_total", per[i], 1, "worker", id);
	}
	isp_prom_family(t, "intspect_worker_items_total", "counter",
			"Items each worker ran the rules on (by owner of their keys)");
	for (unsigned i = 0; i < n; i++) {
		char id[16];
		snprintf(id, sizeof(id), "%u", i);
		isp_prom_sample(t, "intspect_worker_items_total", isp_pipeline_worker_items(m->pl, i),
				1, "worker", id);
	}
	counter(t, "intspect_items_dropped_total",
		"Items lost on their way to the worker that owns their key (a full ring)",
		isp_pipeline_dropped(m->pl));
	free(st);
}

/* One family of the rule counters; `kind` NULL: every rule. */
static void rule_family_typed(struct isp_prom_text *t, const struct isp_rule_count *c,
			      unsigned n, const char *name, const char *type, const char *help,
			      const char *kind, size_t field)
{
	isp_prom_family(t, name, type, help);
	for (unsigned i = 0; i < n; i++)
		if (!kind || c[i].kind[0] == kind[0])
			isp_prom_sample(t, name, *(const uint64_t *)((const char *)&c[i] + field), 2,
					"kind", c[i].kind, "rule", c[i].name);
}

static void rule_family(struct isp_prom_text *t, const struct isp_rule_count *c, unsigned n,
			const char *name, const char *help, const char *kind, size_t field)
{
	rule_family_typed(t, c, n, name, "counter", help, kind, field);
}

static void rules(struct isp_prom_text *t, const struct self_metrics *m)
{
	unsigned n = isp_rules_counts(m->rules, NULL, 0);
	struct isp_rule_count *c = calloc(n + 1, sizeof(*c));

	if (!c)
		return;
	unsigned got = isp_rules_counts(m->rules, c, n);   /* a reload may change n */
	n = got < n ? got : n;
	rule_family(t, c, n, "intspect_rule_matched_total", "Packets that passed a rule's filter",
		    NULL, offsetof(struct isp_rule_count, matched));
	rule_family(t, c, n, "intspect_rule_records_total", "Records a rule produced", NULL,
		    offsetof(struct isp_rule_count, records));
	rule_family(t, c, n, "intspect_rule_records_dropped_total",
		    "Records of a rule its channels refused, or too large", NULL,
		    offsetof(struct isp_rule_count, dropped));
	rule_family(t, c, n, "intspect_rule_keys_evicted_total",
		    "Event keys evicted to make room (max-keys)", "event",
		    offsetof(struct isp_rule_count, evicted));
	rule_family(t, c, n, "intspect_rule_keys_expired_total",
		    "Event keys expired after idle-timeout-ms", "event",
		    offsetof(struct isp_rule_count, expired));
	rule_family(t, c, n, "intspect_rule_windows_total", "Query windows closed", "query",
		    offsetof(struct isp_rule_count, windows));
	rule_family(t, c, n, "intspect_rule_overflow_packets_total",
		    "Query packets whose group was not created (max-groups)", "query",
		    offsetof(struct isp_rule_count, overflows));
	rule_family(t, c, n, "intspect_monitor_flows_total", "Flows a flow monitor started to count",
		    "monitor", offsetof(struct isp_rule_count, flows));
	rule_family_typed(t, c, n, "intspect_monitor_entries", "gauge",
			  "Flows in a flow monitor's tables now", "monitor",
			  offsetof(struct isp_rule_count, entries));
	rule_family(t, c, n, "intspect_monitor_sampled_out_packets_total",
		    "Packets of flows a flow monitor did not sample", "monitor",
		    offsetof(struct isp_rule_count, sampled_out));
	rule_family(t, c, n, "intspect_monitor_excluded_packets_total",
		    "Packets of flows removed from a flow monitor", "monitor",
		    offsetof(struct isp_rule_count, excluded));
	rule_family(t, c, n, "intspect_monitor_evicted_total",
		    "Flows evicted from a full flow monitor (max-entries)", "monitor",
		    offsetof(struct isp_rule_count, evicted));
	rule_family(t, c, n, "intspect_monitor_intervals_total", "Flow monitor intervals closed",
		    "monitor", offsetof(struct isp_rule_count, windows));
	rule_family(t, c, n, "intspect_monitor_overflows_total",
		    "Times a flow monitor passed its overflow-threshold", "monitor",
		    offsetof(struct isp_rule_count, overflows));
	free(c);
}

static void channel_family(struct isp_prom_text *t, const struct self_metrics *m,
			   const struct isp_channel_stats *st, const char *name, const char *type,
			   const char *help, size_t field)
{
	isp_prom_family(t, name, type, help);
	for (unsigned i = 0; i < m->nchannels; i++)
		if (m->channels[i])
			isp_prom_sample(t, name,
					*(const uint64_t *)((const char *)&st[i] + field), 1,
					"channel", isp_channel_name(m->channels[i]));
}

static void channels(struct isp_prom_text *t, const struct self_metrics *m)
{
	if (m->mu)
		pthread_mutex_lock(m->mu);
	struct isp_channel_stats *st = calloc(m->nchannels + 1, sizeof(*st));

	if (!st) {
		if (m->mu)
			pthread_mutex_unlock(m->mu);
		return;
	}
	for (unsigned i = 0; i < m->nchannels; i++)
		if (m->channels[i])
			isp_channel_get_stats(m->channels[i], &st[i]);
	channel_family(t, m, st, "intspect_channel_records_queued_total", "counter",
		       "Records handed to a channel", offsetof(struct isp_channel_stats, queued));
	channel_family(t, m, st, "intspect_channel_records_delivered_total", "counter",
		       "Records a channel delivered", offsetof(struct isp_channel_stats, delivered));
	channel_family(t, m, st, "intspect_channel_records_dropped_total", "counter",
		       "Records a channel lost (queue full, refused, undelivered)",
		       offsetof(struct isp_channel_stats, dropped));
	channel_family(t, m, st, "intspect_channel_records_retried_total", "counter",
		       "Records offered again after a short write",
		       offsetof(struct isp_channel_stats, retried));
	channel_family(t, m, st, "intspect_channel_records_acknowledged_total", "counter",
		       "Records the service acknowledged (Kafka)",
		       offsetof(struct isp_channel_stats, acked));
	channel_family(t, m, st, "intspect_channel_reconnects_total", "counter",
		       "Reconnections and reopenings", offsetof(struct isp_channel_stats, reconnects));
	channel_family(t, m, st, "intspect_channel_queue_depth", "gauge",
		       "Records waiting in a channel's queue",
		       offsetof(struct isp_channel_stats, queue_depth));
	free(st);
	if (m->mu)
		pthread_mutex_unlock(m->mu);
}

void self_metrics_write(void *ctx, struct isp_prom_text *t)
{
	const struct self_metrics *m = ctx;

	isp_prom_family(t, "intspect_info", "gauge", "The version running");
	isp_prom_sample(t, "intspect_info", 1, 1, "version", PACKAGE_VERSION);
	isp_prom_family(t, "intspect_start_time_seconds", "gauge",
			"When the run started, in seconds since the epoch");
	isp_prom_sample_real(t, "intspect_start_time_seconds", m->start_time, 0);
	dissection(t, m);
	if (m->rules)
		rules(t, m);
	channels(t, m);
}
