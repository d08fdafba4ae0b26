/*
 * dissect.h - runs the plugin chain over one packet.
 *
 * The chain starts at the protocol the capture's link type names and asks
 * each decoder for the next one, until a decoder names none, a decoder fails
 * (counted per protocol and reason) or ISP_MAX_LAYERS is reached. Nothing is
 * copied or allocated: layers record offsets into the caller's buffer.
 */
#ifndef ISP_DISSECT_H
#define ISP_DISSECT_H

#include "registry.h"

/* Per-worker counters; plain integers because one thread owns them. */
struct isp_stats {
	uint64_t packets;
	uint64_t bytes;
	uint64_t items;               /* packets + extra coalesced reports */
	uint64_t malformed_packets;
	uint64_t decoded[ISP_MAX_PROTOS];
	uint64_t malformed[ISP_MAX_PROTOS][ISP_VERDICT__COUNT];
};

/* Dissect p (data, caplen, wirelen, ts_ns, index set by the caller) starting
 * with protocol `first`. Returns the number of layers decoded. A record
 * with an impossible original length is refused (isp_dissect_refused). */
unsigned isp_dissect(const struct isp_registry *reg, struct isp_packet *p,
		     uint16_t first, struct isp_stats *st);

/* true when isp_dissect refused the record itself (its wire length is
 * below its captured length or above ISP_MAX_WIRE_LEN): counted as a
 * packet and as malformed (meta.bad_wire_len), but not as an item or in
 * the bytes, and the caller hands it to no rule and no dump. */
static inline bool isp_dissect_refused(const struct isp_packet *p)
{
	return p->malformed == ISP_ERR_BAD_WIRE_LEN;
}

/* For a packet that holds several coalesced telemetry reports: re-dissect
 * the next one in place. false when there is none left (most packets:
 * asked inline). */
bool isp_dissect_next_report_slow(const struct isp_registry *reg,
				  struct isp_packet *p, struct isp_stats *st);

/* Whether p holds a coalesced report after the current one (what
 * isp_dissect_next_report would go on to). */
static inline bool isp_dissect_has_next_report(const struct isp_packet *p)
{
	return p->report_layer != 0xff && p->report_index + 1 < p->report_count &&
	       p->report_next_off != 0;
}

static inline bool isp_dissect_next_report(const struct isp_registry *reg,
					   struct isp_packet *p, struct isp_stats *st)
{
	/* the whole test inline: a v2.0 report alone in its packet (most
	 * of them) also marks its layer */
	if (!isp_dissect_has_next_report(p))
		return false;
	return isp_dissect_next_report_slow(reg, p, st);
}

const char *isp_verdict_name(enum isp_verdict v);

/* Merge counters (for multi-worker totals). */
void isp_stats_add(struct isp_stats *to, const struct isp_stats *from);

#endif
