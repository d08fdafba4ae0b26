/*
 * dissect.c - the decode loop's rare outcomes and counters (the loop is
 * inline in dissect.h).
 */
#include "dissect.h"

#include <stddef.h>
#include <string.h>

const char *isp_verdict_name(enum isp_verdict v)
{
	static const char *const names[ISP_VERDICT__COUNT] = {
		[ISP_OK] = "ok",
		[ISP_NOT_MINE] = "not_mine",
		[ISP_ERR_TRUNCATED] = "truncated",
		[ISP_ERR_BAD_LENGTH] = "bad_length",
		[ISP_ERR_BAD_VERSION] = "bad_version",
		[ISP_ERR_HOP_OVERFLOW] = "hop_overflow",
		[ISP_ERR_UNSUPPORTED] = "unsupported",
		[ISP_ERR_DEPTH] = "too_deep",
		[ISP_ERR_BAD_WIRE_LEN] = "bad_wire_len",
	};
	return (unsigned)v < ISP_VERDICT__COUNT ? names[v] : "?";
}

_Static_assert(ISP_MAX_PROTOS <= 64, "isp_packet.protos is a 64-bit set");

/* Whether proto was tried below layer n-1 as a heuristic (INT by DSCP). */
static bool is_heuristic_child(const struct isp_registry *reg, const struct isp_packet *p,
			       unsigned n, uint16_t proto)
{
	if (n == 0)
		return false;
	const struct isp_heuristics *h = &reg->heur[p->layer[n - 1].proto];
	for (unsigned i = 0; i < h->n; i++)
		if (h->id[i] == proto)
			return true;
	return false;
}

/* The counters are found from their decoded[]: the chain keeps that
 * pointer only, one value fewer across the decoders' calls. */
uint16_t isp_chain_odd(struct isp_dissect *d, uint64_t *decoded, unsigned n,
		       uint16_t proto, enum isp_verdict v)
{
	struct isp_stats *st = (struct isp_stats *)(void *)((char *)decoded -
							     offsetof(struct isp_stats, decoded));
	struct isp_packet *p = d->pkt;

	/* only a heuristic child may decline; whether this one was is asked
	 * here, not for every layer */
	if (v != ISP_NOT_MINE) {
		p->malformed = (uint8_t)v;
		p->malformed_proto = proto;
		st->malformed[proto][v]++;
		st->malformed_packets++;
		return ISP_PROTO_NONE;
	}
	if (!is_heuristic_child(d->reg, p, n, proto)) {
		/* a port match that is not the protocol (a plain datagram to
		 * a report port): not an error, counted apart from malformed */
		st->malformed[proto][ISP_NOT_MINE]++;
		return ISP_PROTO_NONE;
	}
	/* fall back to the port tables, by destination port only
	 * (isp_next_l4 says why) */
	isp_next_by(d, d->l4_is_tcp ? ISP_TBL_TCP_PORT : ISP_TBL_UDP_PORT, d->l4_dport);
	return d->next == proto ? ISP_PROTO_NONE : d->next;
}

unsigned isp_dissect(const struct isp_registry *reg, struct isp_packet *p,
		     uint16_t first, struct isp_stats *st)
{
	struct isp_dissect d;

	isp_dissect_start(&d, reg, p);
	return isp_dissect_inline(&d, reg, p, first, st);
}

bool isp_dissect_next_report_slow(const struct isp_registry *reg,
				  struct isp_packet *p, struct isp_stats *st)
{
	if (!isp_dissect_has_next_report(p))
		return false;

	struct isp_dissect d;
	const struct isp_layer *rl = &p->layer[p->report_layer];
	uint16_t proto = rl->proto;
	uint32_t off = rl->off, end = rl->end;

	/* The report decoder runs again on the same header and, seeing
	 * report_index > 0, picks the individual report at report_next_off. */
	p->nlayers = p->report_layer;
	p->report_index++;
	p->malformed = 0;
	isp_dissect_start(&d, reg, p);
	isp_chain_init(&d, p);
	st->items++;
	isp_run_chain(&d, reg, p, st, proto, off, end);
	return true;
}

bool isp_region_cut_slow(const struct isp_dissect *d, const struct isp_layer *l)
{
	const struct isp_packet *p = d->pkt;
	bool inner = p->report_inner && l->off >= p->report_inner;

	if (d->in_fragment)
		return true;
	if (!inner && p->caplen >= p->wirelen)
		return false;
	/* Whole when an enclosing IP header (inside the report's inner
	 * packet, for a layer there) declares an end that the bytes of its
	 * own region hold (not only the packet's: in a coalesced report the
	 * next reports follow) and the region does not pass. The layers
	 * decoded so far had their fixed headers checked: the length fields
	 * are there. */
	uint32_t from = inner ? p->report_inner : 0;
	for (unsigned i = 0; i < p->nlayers; i++) {
		const struct isp_layer *x = &p->layer[i];
		uint32_t len;
		if (x == l || x->off < from || x->off > l->off)
			continue;
		if (x->proto == d->reg->ip4)
			len = isp_be16(p->data + x->off + 2);
		else if (x->proto == d->reg->ip6)
			len = isp_be16(p->data + x->off + 4) ? 40u + isp_be16(p->data + x->off + 4) : 0;
		else
			continue;
		if (len && x->off + len <= x->end && x->off + len >= l->end)
			return false;
	}
	return true;
}

void isp_stats_add(struct isp_stats *to, const struct isp_stats *from)
{
	to->packets += from->packets;
	to->bytes += from->bytes;
	to->items += from->items;
	to->malformed_packets += from->malformed_packets;
	for (unsigned i = 0; i < ISP_MAX_PROTOS; i++) {
		to->decoded[i] += from->decoded[i];
		for (unsigned v = 0; v < ISP_VERDICT__COUNT; v++)
			to->malformed[i][v] += from->malformed[i][v];
	}
}
