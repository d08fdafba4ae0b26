/*
 * channel.h - output channels: where encoded records go.
 *
 * A record is encoded once (JSON or CSV text, one line, no trailing
 * newline) by the engine and handed to every channel of its report with
 * isp_channel_submit(). Each channel owns a bounded queue and a thread:
 * submit never blocks the packet path (unless the channel's policy is
 * "block", allowed for file input only) and never drops silently — every
 * record is counted as queued, then delivered or dropped.
 *
 * A channel type is a vtable (isp_channel_ops) registered by name: "stdout",
 * "file" here; "redis", "kafka", "socket" plug in the same way. The
 * contract a type implements is written down in outputs/README.md; the
 * helpers a type's open uses to check its keys are in outputs/kv.h.
 */
#ifndef ISP_CHANNEL_H
#define ISP_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* One configuration key of an output section, with its position in the
 * config file so a channel can report "file:line:col: message". */
struct isp_kv {
	const char *key;
	const char *value;      /* text as written (strings unquoted) */
	int line, col;
};

enum isp_drop_policy { ISP_DROP_NEWEST, ISP_DROP_OLDEST, ISP_BLOCK };

/* The generic keys, parsed by isp_channel_open (defaults in brackets). */
struct isp_channel_params {
	bool enable;                    /* [true] */
	size_t queue_records;           /* [65536] records waiting, batch excluded */
	size_t queue_bytes;             /* [64 MiB] bytes of the queue's ring */
	enum isp_drop_policy policy;    /* [drop-newest] */
	size_t batch;                   /* [256] most records per write_batch */
	unsigned flush_ms;              /* [100] flush at least this often */
	unsigned shutdown_ms;           /* [5000] delivery deadline at close */
	int format;                     /* enum isp_record_format [json] */
	bool format_set;                /* the section gave format */
};

/* What a channel's records are: the format key (json, csv: MMT-Probe's
 * rows, intspect-csv: one typed cell per value, influx: InfluxDB line
 * protocol), or the one format its type takes (isp_channel_ops.format). */
enum isp_record_format { ISP_REC_JSON, ISP_REC_CSV, ISP_REC_INTSPECT_CSV, ISP_REC_INFLUX };

struct isp_channel;

struct isp_channel_cfg {
	const char *name;       /* what rules name in output-channel = {...} */
	const char *type;       /* "stdout", "file", ... */
	const struct isp_kv *kv;
	size_t nkv;
	const char *file;       /* config file name, for messages */
	int line, col;          /* where the section starts (0: unknown) */

	/* Set by isp_channel_open in the copy it gives the type's open
	 * (callers leave them zero): kv then holds only the type's own keys,
	 * the generic ones having been consumed. */
	const struct isp_channel_params *params;
	struct isp_channel *channel;    /* for isp_channel_add_*() */
	/* Set by isp_channel_check: validate every key and value as open
	 * does, then return 0 with *state NULL before connecting, creating
	 * or opening anything (intspect -T: one validation path). */
	bool check_only;
	int *err_pos;           /* isp_channel_check: line and col of an error */
};

/* A record as queued: text plus what some channels route by. In a batch
 * given to write_batch, report, key and text are NUL-terminated. */
struct isp_record {
	const char *report;     /* report name (NULL: "") */
	const char *key;        /* partition/group key text ("" or NULL if none) */
	size_t key_len;
	const char *text;       /* encoded record, no newline */
	size_t len;
	/* text[len] is '\n', and the next record of the batch, if lined too,
	 * starts right after it (a batch taken for a type with `lines`) */
	bool lined;
};

/* Counters, readable at any time (relaxed atomics inside). At any time
 * queued == delivered + dropped + queue_depth (exactly so once the
 * channel is quiet or closed; a read racing a submit may lag by one). */
struct isp_channel_stats {
	uint64_t queued;        /* handed to submit (including those it dropped) */
	uint64_t delivered;     /* accepted by write_batch */
	uint64_t acked;         /* acknowledged by the service (Kafka) */
	uint64_t retried;       /* records offered again after a short write_batch */
	uint64_t dropped;       /* lost: queue full, evicted, too big, disabled,
				 * or undelivered at the close deadline */
	uint64_t reconnects;    /* reported by the type (reopen, reconnect) */
	uint64_t queue_depth;   /* waiting now, including the batch being written */
};

/*
 * Channel type. Methods run on the channel's own thread, except open and
 * close (caller's thread). write_batch returns how many records of the
 * batch it has delivered; fewer means "retry the rest later" (the queue
 * keeps them and counts the retry). The rest is offered again, first and in
 * the same order, so a type may remember a record it wrote in part.
 * write_batch and flush must return in bounded time (use timeouts):
 * close waits for them. flush and close may be NULL.
 */
struct isp_channel_ops {
	const char *type;
	/* Validate cfg and set up; -1 with "line:col: message"-ready text in
	 * err and *bad_kv = index of the offending key in cfg->kv (or -1).
	 * cfg and its strings live only during the call. */
	int (*open)(void **state, const struct isp_channel_cfg *cfg,
		    int *bad_kv, char *err, size_t errlen);
	size_t (*write_batch)(void *state, const struct isp_record *recs, size_t n);
	/* Called at least every flush-ms, busy or idle, and once before close:
	 * push out buffered data, check connections, rotate, poll. */
	int (*flush)(void *state);
	void (*close)(void *state);
	/* ---- records lost after write_batch (Kafka delivery reports) ----
	 * Optional, for types that hold records after write_batch until the
	 * service acknowledges them: called once on the channel's thread after
	 * the last flush (queue empty or shutdown deadline reached). Wait until
	 * deadline_ns (CLOCK_MONOTONIC) for the acknowledgements, then report
	 * what is still unacknowledged with isp_channel_add_lost, so that the
	 * counters are final when isp_channel_drain returns. */
	void (*finish)(void *state, int64_t deadline_ns);
	/* The type reaches a service and says so with isp_channel_note_up:
	 * a channel that never did is reported (isp_channel_never_connected). */
	bool connects;
	/* ... and at close it says itself why it never did (with the last
	 * error): the caller does not say it again. */
	bool says_never_connected;
	/* Nonzero: the only record format the type takes (ISP_REC_INFLUX for
	 * InfluxDB); its channels have it without a format key, and another
	 * format key is an error. */
	enum isp_record_format format;
	/* The type writes each record as a line: the batches it is given
	 * hold the records' texts as lines, one after the other in one buffer
	 * (each `lined`; report and key NULL), which it can write as they are
	 * (fdlines.h) instead of copying them again. */
	bool lines;
};

/* Register a channel type (built-ins are registered by isp_channels_init).
 * ops must outlive every channel of the type. -1 if the name is taken or
 * the table is full. Thread-safe. */
int isp_channel_register_type(const struct isp_channel_ops *ops);
/* Register "stdout" and "file"; idempotent, thread-safe, and implied by
 * isp_channel_open. */
void isp_channels_init(void);
/* One line per output type compiled in (or not), with its library's
 * version: for -V. */
void isp_channels_describe(FILE *out);

/*
 * Create a channel from an output section. Generic keys every channel
 * accepts: enable (true|false), queue-records (default 65536), queue-bytes
 * (default 64 MiB; suffixes k, M, G), drop-policy
 * (drop-newest|drop-oldest|block), batch (records per write, default 256),
 * flush-ms (default 100), shutdown-ms (flush deadline at exit, default
 * 5000), format (json|csv). The other keys go to the type's open. A channel
 * with enable = false opens nothing and drops (counts) what it is given.
 * Returns NULL with a message (prefixed "file:line:col: ") in err.
 */
struct isp_channel *isp_channel_open(const struct isp_channel_cfg *cfg,
				     char *err, size_t errlen);
/* Everything isp_channel_open checks (generic keys, the type's keys and
 * values), through the same code, without opening anything: 0, or -1 with
 * the same message open would give. */
int isp_channel_check(const struct isp_channel_cfg *cfg, char *err, size_t errlen);
/* The same, with the message unprefixed and its position in pos[0] (line)
 * and pos[1] (col), 0 when it has none: for the config compiler. */
int isp_channel_check_at(const struct isp_channel_cfg *cfg, int pos[2],
			 char *err, size_t errlen);
/* A type that connects (ops->connects) and never reached its service
 * since open (a dead Redis, a reader never listening). */
bool isp_channel_never_connected(const struct isp_channel *ch);
/* Whether its close says why (ops->says_never_connected). */
bool isp_channel_says_never_connected(const struct isp_channel *ch);

const char *isp_channel_name(const struct isp_channel *ch);
/* The channel's record format (enum isp_record_format): its format key,
 * its type's own format, else json. */
int isp_channel_format(const struct isp_channel *ch);
/* Did the section give the format key (or does the type impose one)? A
 * rule writes its own format to a channel that did not. */
bool isp_channel_format_set(const struct isp_channel *ch);
bool isp_channel_enabled(const struct isp_channel *ch);
/* Does the channel read isp_record.key? false for a disabled channel and
 * for the built-in types that never do (stdout, file, socket, redis,
 * influxdb), so a producer may skip building the key text (an empty key
 * is then queued); true for any other type. */
bool isp_channel_uses_key(const struct isp_channel *ch);

/*
 * Queue a copy of the record (r and its strings may be reused on return).
 * Never blocks unless the policy is ISP_BLOCK. Returns false when the
 * record was dropped (counted). Thread-safe; not after close has begun.
 */
bool isp_channel_submit(struct isp_channel *ch, const struct isp_record *r);

/*
 * Write a record straight into the channel's queue, with no copy: room
 * for a text of at most text_max bytes (report and key are copied now),
 * or NULL when it would not go in at once (then isp_channel_submit).
 * Write the text, then commit its length, or abort; submit nothing to
 * this channel in between. `owner`: an address unique to the producer.
 * See isp_queue_reserve.
 */
char *isp_channel_reserve(struct isp_channel *ch, const void *owner, const char *report,
			  size_t rl, const char *key, size_t kl, size_t text_max);
void isp_channel_commit(struct isp_channel *ch, size_t text_len);
void isp_channel_abort(struct isp_channel *ch);

/*
 * Records held back by the producer, laid out as the queue holds them
 * (outputs/qrec.h), copied into the channel's queue at once
 * (isp_queue_write_held): false when none went in (then submit them one
 * by one). `owner` as for reserve.
 */
bool isp_channel_write_held(struct isp_channel *ch, const void *owner, const void *recs,
			    size_t bytes, size_t n);

/*
 * A producer's staging for one channel: records are copied here and handed
 * to the queue in batches, one lock for many, so that several workers
 * writing to one channel do not take turns at its lock per record. A
 * record the queue refuses adds 1 to the counter given with it. One
 * thread per stage; flush before the records must be seen (a tick, idle
 * input, the end), and before close.
 */
#define ISP_STAGE_RECORDS 64
struct isp_channel_stage {
	struct isp_channel *ch;
	unsigned char *buf;
	size_t len, cap;
	unsigned n;
	struct isp_record rec[ISP_STAGE_RECORDS];
	uint64_t *dropped[ISP_STAGE_RECORDS];
	bool refused[ISP_STAGE_RECORDS];
};

/* -1 when out of memory. */
int isp_channel_stage_init(struct isp_channel_stage *s, struct isp_channel *ch, size_t bytes);
void isp_channel_stage_add(struct isp_channel_stage *s, const struct isp_record *r,
			   uint64_t *dropped);
void isp_channel_stage_flush(struct isp_channel_stage *s);
/* Flushes, then frees. */
void isp_channel_stage_free(struct isp_channel_stage *s);

void isp_channel_get_stats(const struct isp_channel *ch, struct isp_channel_stats *st);

/* For types: count service acknowledgements and reconnections. */
void isp_channel_add_acked(struct isp_channel *ch, uint64_t n);
void isp_channel_add_reconnects(struct isp_channel *ch, uint64_t n);
/* For types that connect: the service was reached (any thread). */
void isp_channel_note_up(struct isp_channel *ch);
/* For types with acknowledgements (see finish): n records that write_batch
 * delivered were lost afterwards (the service refused them, or they were
 * unacknowledged at the deadline). They move from delivered to dropped, so
 * queued == delivered + dropped + queue_depth still holds. Only for records
 * of write_batch calls that have returned; from the channel's thread. */
void isp_channel_add_lost(struct isp_channel *ch, uint64_t n);

/*
 * Shutdown. isp_channel_shutdown starts it and returns at once: the thread
 * delivers what is queued until the queue is empty or shutdown-ms has
 * passed, then counts the rest as dropped (so several channels can drain
 * in parallel). isp_channel_drain also waits for that; the counters then
 * are final (queue_depth 0) and stay readable. Both are idempotent; no
 * submit may run during or after them.
 */
void isp_channel_shutdown(struct isp_channel *ch);
void isp_channel_drain(struct isp_channel *ch);

/* Deliver what is queued, waiting at most shutdown-ms (counted from the
 * first shutdown/drain/close), then stop the thread and free everything;
 * what could not be delivered is counted as dropped. NULL is a no-op. */
void isp_channel_close(struct isp_channel *ch);

/*
 * A stop of the process, asked from a signal handler (each one atomic
 * store: async-signal-safe). After isp_channels_stop_asked, a producer
 * blocked for room (drop-policy block) waits at most its queue's grace
 * (its channel's shutdown-ms) from the stop, then
 * drops the record (counted); after isp_channels_hurry it drops it at
 * once, and consumers that see isp_channels_hurried() end their drain now.
 * A stop that never comes costs nothing: a blocked producer looks every
 * 100 ms.
 */
void isp_channels_stop_asked(void);
void isp_channels_hurry(void);
bool isp_channels_hurried(void);

#endif
