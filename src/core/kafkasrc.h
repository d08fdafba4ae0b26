/*
 * kafkasrc.h - a Kafka consumer in a consumer group (librdkafka), for the
 * inputs that read a topic: telemetry reports (-k, input { mode = kafka })
 * and partial windows (--merge, mode = kafka-partials).
 *
 * Offsets are never committed by librdkafka on its own: the owner calls
 * kafka_in_commit once what it derived from the messages read so far is
 * safe (written and acknowledged), so a crash replays rather than loses.
 */
#ifndef ISP_KAFKASRC_H
#define ISP_KAFKASRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kafka_in;

/* "BROKERS/TOPIC[@GROUP]" (BROKERS as librdkafka's bootstrap.servers):
 * parsed into the caller's buffers; -1 with a message. */
int kafka_in_parse(const char *spec, char *brokers, size_t nb, char *topic, size_t nt,
		   char *group, size_t ng, char *err, size_t errlen);

/* Whether librdkafka takes each property ("name=value"): 0, or -1 with
 * its message (nothing connects). */
int kafka_in_check_props(const char *const *props, unsigned nprops, char *err, size_t errlen);

/* Join group (default "intspect") on topic; props: librdkafka
 * properties as "name=value" (security.protocol, sasl.*, ssl.*, ...). New
 * groups start at the earliest offset. NULL with a message. */
struct kafka_in *kafka_in_open(const char *brokers, const char *topic, const char *group,
			       const char *const *props, unsigned nprops, char *err, size_t errlen);

/* Next message: 1 (data valid until the next call; ts_ns the message's
 * timestamp, or a header "ts_ns" when the producer wrote one), 2 nothing
 * within timeout_ms, -1 a fatal error (message in err). */
int kafka_in_next(struct kafka_in *k, const uint8_t **data, size_t *len, uint64_t *ts_ns,
		  int timeout_ms, char *err, size_t errlen);

/* Commit the offsets after every message kafka_in_next gave so far
 * (synchronously). 0, or -1 (counted; the next commit covers them). */
int kafka_in_commit(struct kafka_in *k);

struct kafka_in_stats {
	uint64_t consumed, committed, commit_failures, assigned, revoked;
	uint64_t replayed;      /* read again: at offsets this process had read (a partition back) */
};
void kafka_in_stats(const struct kafka_in *k, struct kafka_in_stats *st);

/* Leave the group (a final commit is the caller's) and free. */
void kafka_in_close(struct kafka_in *k);

/* ---- telemetry reports from a topic, as a packet source (source.c) ----
 *
 * A message is a report as intspect --forward writes it, or a bare UDP
 * payload (sender 0.0.0.0:0, the message's timestamp). Either is handed
 * on behind a synthesized IPv4 + UDP header to `port`, as the UDP
 * listener does. The forwarded frame (big-endian):
 *
 *   0  "ISPF"            4  version 1          5  flags, 0
 *   6  sender UDP port   8  destination port (0: the reader's report port)
 *  10  0 (2 bytes)      12  sender IPv4       16  receive time, ns since 1970
 *  24  the UDP payload
 *
 * Offsets: the pipeline marks checkpoints (kafka_src_checkpoint) where
 * the rules hold nothing of what was read; a checkpoint is committed once
 * the channels settled what had been queued by then (the callbacks). A
 * partition revoked by a rebalance: next returns 3 ("write what you hold
 * now"), the pipeline does and marks a checkpoint, and the next call
 * commits it and lets the partitions go.
 */
#define ISP_KAFKA_TIMEOUT_MS 10
#define FORWARD_MAGIC "ISPF"
#define FORWARD_VERSION 1
#define FORWARD_HEADER 24

struct kafka_src;

struct kafka_src_opts {
	const char *spec;               /* BROKERS/TOPIC[@GROUP] */
	const char *const *props;       /* "name=value" */
	unsigned nprops;
	uint16_t port;                  /* the report port the datagrams go to */
	/* what the channels were given so far (up to max counters), and
	 * whether they delivered or dropped all of that */
	unsigned (*mark)(void *ctx, uint64_t *mark, unsigned max);
	bool (*settled)(void *ctx, const uint64_t *mark, unsigned n);
	void *ctx;
};

struct kafka_src *kafka_src_open(const struct kafka_src_opts *o, char *err, size_t errlen);
/* 1 a packet, 2 idle, 3 partitions are being revoked (write what the
 * rules hold, checkpoint), 0 stopped, -1 error. */
int kafka_src_next(struct kafka_src *k, const uint8_t **data, uint32_t *caplen,
		   uint32_t *wirelen, uint64_t *ts_ns, char *err, size_t errlen);
/* What was read is safe once settled (with_current: the packet just
 * given too). force: even if one was marked a moment ago. */
void kafka_src_checkpoint(struct kafka_src *k, bool with_current, bool force);
void kafka_src_stop(struct kafka_src *k);
uint16_t kafka_src_port(const struct kafka_src *k);
void kafka_src_stats(const struct kafka_src *k, struct kafka_in_stats *st);
/* The last checkpoint committed once settled (waiting up to a few
 * seconds), then leave the group. */
void kafka_src_close(struct kafka_src *k);
/* librdkafka's version, for -V. */
const char *kafka_src_version(void);

#endif
