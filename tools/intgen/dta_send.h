/*
 * dta_send.h - the live DTA reporter (--send HOST[:PORT]): the reports go
 * out as UDP datagrams, one socket per reporter, paced at --pps, and the
 * NACKs the collector sends back are answered by retransmitting
 * (src/plugins/dta/README.md, "NACKs").
 *
 * Single-threaded: NACKs are read with poll() while waiting for the next
 * report's time slot, and after the last report until --linger ms pass
 * without one.
 */
#ifndef INTGEN_DTA_SEND_H
#define INTGEN_DTA_SEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dta.h"
#include "options.h"

struct dta_sender;

struct dta_send_stats {
	uint64_t nacks;         /* NACKs received and understood */
	uint64_t bad_nacks;     /* datagrams on a NACK port that were not */
	uint64_t retransmitted; /* reports sent again */
};

/* Resolve cfg->dta.send and open the sockets. NULL after a message. */
struct dta_sender *dta_send_open(const struct ig_config *cfg);

/* First transmission of rep, whose DTA bytes are p[0..len): wait for its
 * slot at --pps (serving NACKs meanwhile) and send it, or, when the
 * network loses it (lost), only remember it. Either way it joins its
 * reporter's history of the last 256 reports, which NACKs resend from.
 * -1 on a send error (after a message). */
int dta_send_first(struct dta_sender *s, const struct dta_report *rep,
		   const uint8_t *p, size_t len, bool lost);

/* Serve NACKs until none has arrived for --linger ms. -1 on an error. */
int dta_send_linger(struct dta_sender *s);

/* Close the sockets and free; st (may be NULL) receives the counts. */
void dta_send_close(struct dta_sender *s, struct dta_send_stats *st);

#endif
