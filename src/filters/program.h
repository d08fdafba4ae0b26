/*
 * program.h - a compiled rule set: what the rule compiler (dsl/compile.c)
 * produces and the filters run. Everything here is read-only once built,
 * so every worker can share one program; per-worker state lives in
 * struct isp_engine (engine.h).
 */
#ifndef ISP_FILTERS_PROGRAM_H
#define ISP_FILTERS_PROGRAM_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/registry.h"
#include "../../outputs/channel.h"
#include "expr.h"
#include "../plugins/dta/store.h"

/* FMT_CSV: MMT-Probe's rows, cell for cell (dsl/README.md); FMT_CSV_CELLS
 * ("intspect-csv"): the same columns, one cell per attribute, typed;
 * FMT_INFLUX: InfluxDB's line protocol. */
/* FMT_PARTIAL: a query window's mergeable per-group states (partial.c;
 * query reports only). */
enum rec_format { FMT_JSON, FMT_CSV, FMT_TEMPLATE, FMT_CSV_CELLS, FMT_INFLUX, FMT_PARTIAL };

/* An output template (MMT's event-report output-format = '{"src": "ip.src"}'):
 * literal text with attribute values spliced in. */
struct tmpl_part {
	char *text;             /* literal text before the value */
	int slot;               /* attribute slot, -1 = none (last part) */
};

enum agg_kind {
	AGG_SUM, AGG_COUNT, AGG_AVG, AGG_VAR, AGG_MIN, AGG_MAX, AGG_FIRST,
	AGG_LAST, AGG_DIFF, AGG_RATE, AGG_PCT,
};

/* One selected value of a query report: AGG(inner(arg)). */
struct qitem {
	char *text;             /* as written: the record key */
	uint8_t agg;            /* enum agg_kind */
	uint8_t diff;           /* the argument is diff(arg) */
	/* sum, avg, count or rate of diff(x), x an attribute (integers): the
	 * differences add up to the window's last x minus its first, so the
	 * group keeps those two ends and their packet order instead of each
	 * previous value, and partial windows merge in any split (agg.h) */
	uint8_t diff_ends;
	uint8_t per_hop;        /* aggregated element by element over hops */
	uint8_t text_result;    /* an address or a string (MMT CSV: "" when absent) */
	uint8_t hop_slot_valid;
	int16_t hop_slot;       /* per-hop slot that gives the hop count */
	double quantile;        /* AGG_PCT */
	struct cx *arg;         /* NULL for count() */
};

/* Every attribute slot a rule reads, listed as it was compiled: what
 * another worker fetches for it when its item travels as values
 * (src/filters/carry.c). known = false: not listed, the item travels
 * whole. */
struct rule_reads {
	int *slot;
	unsigned n;
	bool known;
};

/* The formats a rule's channels take (isp_program_bind_channels): a
 * channel with a format of its own (its format key, or its type's: InfluxDB)
 * gets records in it, the others the rule's. A record is encoded once per
 * format and each encoding goes to its channels. */
struct rule_formats {
	uint8_t *of;            /* per channel of the rule: enum rec_format */
	uint8_t list[6];        /* the distinct formats, the rule's first */
	unsigned n;             /* 0 before binding: every channel, the rule's */
};

/* ms-period = 0 (MMT-Probe: no period): one window for the whole input,
 * [0, 2^62 ns) inside; its records give the times of the first and last
 * packets it counted instead (engine_int.h, query_shown_*). */
#define ISP_PERIOD_WHOLE (UINT64_C(1) << 62)

struct qrule {
	char *name;
	char *text;             /* its section, canonical (hot reload: unchanged?) */
	uint64_t period_ns;     /* tumbling window length; ISP_PERIOD_WHOLE: one */
	struct cx *where;       /* NULL: every packet */
	int *group_slots;
	char **group_names;
	unsigned ngroup;
	struct qitem *items;
	unsigned nitems;
	unsigned max_groups;
	enum rec_format format;
	bool format_set;        /* output-format written in the rule */
	int *channels;          /* indexes into program->channels */
	unsigned nchannels;
	struct rule_formats fmts;
	struct rule_reads reads;
};

struct erule {
	char *name;
	char *text;             /* its section, canonical (a metrics table: and its name) */
	int event_slot;         /* the event attribute: present = trigger; -1 none */
	struct cx *where;
	int *delta_slots;
	unsigned ndelta;
	int *key_slots;         /* delta-key */
	unsigned nkey;
	int flow_slots[4];      /* the record key without delta-key: the flow */
	unsigned nflow;
	double band;            /* delta-band, 0 = off */
	double threshold;       /* delta-threshold, < 0 = off */
	uint64_t keepalive_ns;  /* 0 = off */
	bool per_hop;           /* once per hop, per-hop attributes as that hop's value */
	uint64_t idle_ns;       /* idle-timeout-ms: a key without packets expires; 0 = off */
	int time_slot;          /* timestamp: what stamps a record; -1: the capture time */
	bool time_last;         /* ... its last hop (egress: the sink's), unless per-hop */
	int *attr_slots;        /* attributes reported */
	char **attr_names;
	unsigned nattr;
	unsigned max_keys;
	enum rec_format format;
	bool format_set;        /* output-format written in the rule */
	struct tmpl_part *tmpl;
	unsigned ntmpl;
	int *channels;
	unsigned nchannels;
	struct rule_formats fmts;
	struct rule_reads reads;
};

/* A flow monitor's own counter: sum or max of a numeric attribute (a
 * per-hop one: over its hops). */
struct mcounter {
	char *text;             /* as written: "sum(int.latency)" */
	int slot;
	bool is_max;
};

/* flow-monitor NAME { ... }: SDN-Mon's monitoring table on chosen match
 * fields (src/filters/monitor.c). The sampling ratio, interval and
 * overflow threshold here are the configured ones; each engine keeps its
 * own copy, which the control API may change while it runs. */
struct mrule {
	char *name;
	char *text;             /* its section, canonical */
	struct cx *where;
	int *match_slots;
	char **match_names;
	unsigned nmatch;
	double sampling;        /* (0, 1]: a new flow is monitored with this probability */
	uint64_t bloom_cells;   /* excluded flows' counting filter: cells (a power of 2) */
	unsigned bloom_hashes;
	unsigned nbuf;          /* Sb: sub-intervals kept per entry, <= ISP_MAX_HOPS */
	uint64_t interval_ns;   /* query-interval (ΔTq); a sub-interval is interval_ns / nbuf */
	struct mcounter *counters;
	unsigned ncounters;
	uint64_t overflow;      /* overflow-threshold, 0 = off */
	unsigned max_entries;   /* per worker */
	bool report_unchanged;
	enum rec_format format;
	bool format_set;
	int *channels;
	unsigned nchannels;
	struct rule_formats fmts;
};

/* dta-store NAME { ... }: a DTA store (src/plugins/dta/README.md) that
 * takes DTA reports of its kind, or values from rules (key/value). */
struct dta_def {
	char *name;
	char *text;             /* its section, canonical */
	char *path;
	struct dta_store_cfg cfg;       /* cfg.name and cfg.path are name and path */
	bool reports;           /* DTA reports of its kind land here */
	int *key_slots;         /* fed by rules: the key, */
	unsigned nkey;
	int *value_slots;       /* the value (key-write, append), */
	unsigned nvalue;
	int inc_slot;           /* the increment (key-increment; -1: 1 an item), */
	uint32_t list;          /* the list (append), */
	struct cx *where;       /* and when */
};

/* dta { ... }: what the collector does beside the stores. */
struct dta_settings {
	int nack;               /* 1 on, -1 off, 0 auto (live inputs) */
	uint16_t nack_port;
	bool shed;              /* shed low priorities under overload */
	unsigned max_reporters; /* tracked per worker */
};

struct program_channel {
	struct isp_channel_cfg cfg;     /* keys point into the config tree */
	char *name, *type;              /* owned; cfg.name and cfg.type */
	char *text;                     /* its section, canonical (hot reload) */
	bool used;
};

struct isp_program {
	struct isp_attr_ref *slots;
	char **slot_names;
	unsigned nslots;
	struct erule *events;
	unsigned nevents;
	struct qrule *queries;
	unsigned nqueries;
	struct mrule *monitors;
	unsigned nmonitors;
	struct program_channel *channels;
	unsigned nchannels;
	struct dta_def *dta_stores;
	unsigned ndta;
	struct dta_settings dta;
	/* globals */
	unsigned probe_id;
	unsigned workers;       /* thread-nb (0: not set) */
	char *source_name;      /* CSV's "source" column: source-name, else the
				 * input (isp_program_input), as MMT-Probe's */
	enum rec_format default_format;
	/* input section */
	char *input_mode;       /* "file", "live", "udp", "kafka", "kafka-partials" or NULL */
	char *input_source;
	char *input_filter;
	char *input_dpdk;       /* dpdk-option: EAL arguments (mode = dpdk) */
	int input_snaplen;      /* snap-len, 0: the default */
	int input_buffer_mb;    /* buffer-size, rounded up to MiB; 0: default */
	int input_timeout_ms;   /* timeout, 0: the default */
	char *input_topic, *input_group;        /* mode = kafka, kafka-partials */
	char *input_kafka;      /* mode = kafka: BROKERS/TOPIC[@GROUP] (isp_program_input) */
	/* merge section: how partial windows of several instances combine */
	unsigned merge_instances;       /* 0: every instance seen so far */
	unsigned merge_lateness_ms;     /* a window waits this long for slow instances */
	bool merge_late_correct;        /* late = correct: fold late partials, write again */
	/* control section: 1 on, -1 off, 0 not written (on for live inputs) */
	int control;
	char *control_path, *control_tcp, *control_token;
	/* the config tree the channel configs point into */
	void *cfg_tree;
};

void isp_program_free(struct isp_program *p);

#endif
