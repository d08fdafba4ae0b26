/*
 * forward.h - intspect as a forwarder (--forward kafka:BROKERS/TOPIC):
 * every datagram read (the UDP payload behind the outermost UDP header)
 * published as one Kafka message in the frame kafkasrc.h describes, keyed
 * by its monitored flow, so that the consumers of a topic (intspect -k)
 * each hold every report of the flows of their partitions.
 */
#ifndef ISP_CLI_FORWARD_H
#define ISP_CLI_FORWARD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../core/pipeline.h"
#include "../../outputs/channel.h"

struct cli_forward {
	struct isp_channel *ch;
	uint16_t udp, ip4, ip6, dta;    /* protocol ids */
	uint64_t forwarded, no_udp, dropped;
	uint8_t frame[24 + 65536];
};

/* Open the Kafka channel of spec; -1 with a message on stderr. A capture
 * file waits for the channel (drop-policy = block); a live input drops
 * what the channel's queue cannot hold, counted. */
int cli_forward_open(struct cli_forward *f, const char *spec, const struct isp_registry *reg,
		     bool file_input);
extern const struct isp_pipeline_ops cli_forward_ops;
/* Drain and close the channel, say what was forwarded; the number of
 * channels that lost records (0 or 1). */
unsigned cli_forward_close(struct cli_forward *f, FILE *out);

#endif
