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

#include <stddef.h>
#include <string.h>

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

/* ---- the chain, inline: isp_dissect, or a read loop that takes it whole ---- */

/* The fields of a dissection context that stay from packet to packet
 * (no decoder writes them): set once by a loop that dissects many packets
 * into p, which hands the context to isp_dissect_inline. */
static inline void isp_dissect_start(struct isp_dissect *d, const struct isp_registry *reg,
				     struct isp_packet *p)
{
	memset(d, 0, sizeof(*d));
	d->pkt = p;
	d->reg = reg;
	d->tables = (const uint8_t (*)[65536])reg->table;
	d->heur = reg->heur;
}

/* Start a run over the layers the packet keeps (0, or those before a
 * coalescing report): the context's per-packet fields zeroed, the
 * innermost-layer index of the layers kept. */
static inline __attribute__((always_inline)) void
isp_chain_init(struct isp_dissect *d, struct isp_packet *p)
{
	_Static_assert(offsetof(struct isp_dissect, next) == 4 * sizeof(void *),
		       "the fields before next are isp_dissect_start's");
	memset((char *)d + offsetof(struct isp_dissect, next), 0,
	       sizeof(*d) - offsetof(struct isp_dissect, next));
	p->protos = 0;
	for (unsigned i = 0; i < p->nlayers; i++) {
		uint16_t proto = p->layer[i].proto;
		p->protos |= UINT64_C(1) << proto;
		p->last[proto] = (uint8_t)i;
	}
}

/* A layer's rare outcomes, apart (dissect.c): a failure (counted; the
 * packet marked) or a heuristic child that declined. The protocol to try
 * at the same layer, or ISP_PROTO_NONE to stop. */
__attribute__((cold)) uint16_t isp_chain_odd(struct isp_dissect *d, uint64_t *decoded,
					     unsigned n, uint16_t proto, enum isp_verdict v);

/* A layer's proto, with its spare and version 0: one store where the host
 * is little-endian (proto, below 2^16, has the zeros above it). */
static inline __attribute__((always_inline)) void
isp_layer_head(struct isp_layer *l, unsigned proto)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	_Static_assert(offsetof(struct isp_layer, proto) == 0 &&
		       offsetof(struct isp_layer, spare) == 2 &&
		       offsetof(struct isp_layer, version) == 3, "isp_layer's head");
	uint32_t head = proto;

	memcpy(l, &head, sizeof(head));
#else
	l->proto = (uint16_t)proto;
	l->spare = 0;
	l->version = 0;
#endif
}

/* d->next = ISP_PROTO_NONE before a decoder: where the host is
 * little-endian, one 8-byte store of an immediate that also zeroes the
 * padding and next_off after it (read only after ISP_OK_AT, which sets
 * it), instead of a 16-bit immediate moved through a register. */
static inline __attribute__((always_inline)) void isp_next_none(struct isp_dissect *d)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	_Static_assert(offsetof(struct isp_dissect, next_off) ==
		       offsetof(struct isp_dissect, next) + 4, "next, padding, next_off");
	uint64_t none = ISP_PROTO_NONE;

	memcpy((char *)d + offsetof(struct isp_dissect, next), &none, sizeof(none));
#else
	d->next = ISP_PROTO_NONE;
#endif
}

/*
 * Few values live across the decoder's call (the packet, the layer and
 * its index, the tables): the others are read back from the layer, so the
 * loop spills nothing to the stack.
 */
static inline __attribute__((always_inline)) void
isp_run_chain(struct isp_dissect *d, const struct isp_registry *reg, struct isp_packet *p,
	      struct isp_stats *st, unsigned proto, uint32_t off, uint32_t end)
{
	isp_decode_fn const *decode = reg->decode;
	uint64_t *decoded = st->decoded;
	unsigned n = p->nlayers;
	struct isp_layer *l = &p->layer[n];

	for (; proto < ISP_MAX_PROTOS; l++) {  /* NONE, or a table's none */
		if (n >= ISP_MAX_LAYERS) {
			isp_chain_odd(d, decoded, n, (uint16_t)proto, ISP_ERR_DEPTH);
			return;
		}
		isp_layer_head(l, proto);
		l->off = off;
		l->len = 0;
		l->end = end;

		isp_next_none(d);
		enum isp_verdict v = decode[proto](d, l);
		proto = l->proto;
		if (__builtin_expect(v == ISP_OK, 1)) {
			off = l->off + l->len;
			end = l->end;
		} else if (v == ISP_OK_AT) {
			off = d->next_off;
			end = d->next_end;
		} else {
			/* the same layer again, where it was, or none: a
			 * decoder that declines leaves its layer's bounds
			 * alone (read back rather than kept across the call) */
			proto = isp_chain_odd(d, decoded, n, (uint16_t)proto, v);
			off = l->off;
			end = l->end;
			l--;
			continue;
		}
		decoded[proto]++;
		p->protos |= UINT64_C(1) << proto;
		p->last[proto] = (uint8_t)n;
		p->nlayers = (uint8_t)++n;
		if (off > end)
			return;
		proto = d->next;
	}
}

/* isp_dissect itself, for the loop that reads most packets: d from
 * isp_dissect_start(d, reg, p). */
static inline __attribute__((always_inline)) unsigned
isp_dissect_inline(struct isp_dissect *d, const struct isp_registry *reg,
		   struct isp_packet *p, uint16_t first, struct isp_stats *st)
{
	p->nlayers = 0;
	p->report_index = 0;
	p->report_count = 1;
	p->report_layer = 0xff;
	p->report_next_off = 0;
	p->report_inner = 0;
	p->malformed = 0;
	isp_chain_init(d, p);
	st->packets++;
	/* A record that says fewer bytes were on the wire than it holds, or
	 * more than any link carries, is corrupt: its bytes and its length
	 * mean nothing, so it is counted and neither decoded nor summed. */
	if (p->wirelen < p->caplen || p->wirelen > ISP_MAX_WIRE_LEN) {
		p->malformed = ISP_ERR_BAD_WIRE_LEN;
		p->malformed_proto = reg->meta;
		st->malformed[reg->meta][ISP_ERR_BAD_WIRE_LEN]++;
		st->malformed_packets++;
		return 0;
	}
	st->bytes += p->wirelen;
	isp_run_chain(d, reg, p, st, first, 0, p->caplen);
	/* apart from bytes: the two adds side by side were made one vector
	 * add of five instructions */
	st->items++;
	return p->nlayers;
}

/* Merge counters (for multi-worker totals). */
void isp_stats_add(struct isp_stats *to, const struct isp_stats *from);

#endif
