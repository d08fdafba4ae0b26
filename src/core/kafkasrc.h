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
};
void kafka_in_stats(const struct kafka_in *k, struct kafka_in_stats *st);

/* Leave the group (a final commit is the caller's) and free. */
void kafka_in_close(struct kafka_in *k);

#endif
