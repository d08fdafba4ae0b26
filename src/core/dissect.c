/*
 * dissect.c - the decode loop.
 */
#include "dissect.h"

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

/*
 * The state of one run of the chain: one pointer to all of it keeps the
 * loop's live values few across the decoder calls. Layers are not
 * numbered as they come (isp_layer_instance counts, for the few that ask).
 */
struct chain {
	struct isp_dissect d;
	const struct isp_registry *reg;
	struct isp_stats *st;
};

_Static_assert(ISP_MAX_PROTOS <= 64, "isp_packet.protos is a 64-bit set");

/* Start a run over the layers the packet keeps (0, or those before a
 * coalescing report): the innermost-layer index of them. */
static inline __attribute__((always_inline)) void
chain_init(struct chain *c, const struct isp_registry *reg, struct isp_packet *p,
	   struct isp_stats *st)
{
	memset(&c->d, 0, sizeof(c->d));
	c->d.pkt = p;
	c->d.reg = reg;
	c->d.tables = (const uint8_t (*)[65536])reg->table;
	c->d.heur = reg->heur;
	c->reg = reg;
	c->st = st;
	p->protos = 0;
	for (unsigned i = 0; i < p->nlayers; i++) {
		uint16_t proto = p->layer[i].proto;
		p->protos |= UINT64_C(1) << proto;
		p->last[proto] = (uint8_t)i;
	}
}

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

/* After a heuristic candidate declined: fall back to the port tables, by
 * destination port only (isp_next_l4 says why). */
static void next_by_ports(struct isp_dissect *d)
{
	enum isp_table t = d->l4_is_tcp ? ISP_TBL_TCP_PORT : ISP_TBL_UDP_PORT;

	isp_next_by(d, t, d->l4_dport);
}

static void fail(struct chain *c, struct isp_packet *p, uint16_t proto, enum isp_verdict v)
{
	p->malformed = (uint8_t)v;
	p->malformed_proto = proto;
	c->st->malformed[proto][v]++;
}

/*
 * Few values live across the decoder's call (the chain, the packet, the
 * layer and its index): the others are read back from the layer, so the
 * loop spills nothing to the stack. Inline in both callers: the call and
 * the registers saved for it are once a packet, not once more.
 */
static inline __attribute__((always_inline)) void
run_chain(struct chain *c, struct isp_packet *p, uint16_t proto, uint32_t off, uint32_t end)
{
	struct isp_dissect *d = &c->d;
	isp_decode_fn const *decode = c->reg->decode;
	uint64_t *decoded = c->st->decoded;
	unsigned n = p->nlayers;
	struct isp_layer *l = &p->layer[n];

	for (;; l++) {
		if (proto == ISP_PROTO_NONE)
			return;
		if (n >= ISP_MAX_LAYERS) {
			fail(c, p, proto, ISP_ERR_DEPTH);
			return;
		}
		l->proto = proto;
		l->spare = 0;
		l->version = 0;
		l->off = off;
		l->len = 0;
		l->end = end;

		d->next = ISP_PROTO_NONE;
		enum isp_verdict v = decode[proto](d, l);
		proto = l->proto;
		if (__builtin_expect(v == ISP_OK, 1)) {
			off = l->off + l->len;
			end = l->end;
		} else if (v == ISP_OK_AT) {
			off = d->next_off;
			end = d->next_end;
		} else {
			/* only a heuristic child may decline; whether this one
			 * was is asked here, not for every layer */
			if (v != ISP_NOT_MINE) {
				fail(c, p, proto, v);
				return;
			}
			if (!is_heuristic_child(c->reg, p, n, proto)) {
				/* a port match that is not the protocol (a plain
				 * datagram to a report port): not an error, counted
				 * apart from malformed */
				c->st->malformed[proto][ISP_NOT_MINE]++;
				return;
			}
			next_by_ports(d);
			if (d->next == proto)
				return;
			/* the same layer again, where it was: a decoder that
			 * declines leaves its layer's bounds alone (read back
			 * rather than kept across the call) */
			proto = d->next;
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

unsigned isp_dissect(const struct isp_registry *reg, struct isp_packet *p,
		     uint16_t first, struct isp_stats *st)
{
	struct chain c;

	p->nlayers = 0;
	p->report_index = 0;
	p->report_count = 1;
	p->report_layer = 0xff;
	p->report_next_off = 0;
	p->report_inner = 0;
	p->malformed = 0;
	chain_init(&c, reg, p, st);
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
	st->items++;
	st->bytes += p->wirelen;
	run_chain(&c, p, first, 0, p->caplen);
	if (p->malformed)
		st->malformed_packets++;
	return p->nlayers;
}

bool isp_dissect_next_report_slow(const struct isp_registry *reg,
				  struct isp_packet *p, struct isp_stats *st)
{
	if (!isp_dissect_has_next_report(p))
		return false;

	struct chain c;
	const struct isp_layer *rl = &p->layer[p->report_layer];
	uint16_t proto = rl->proto;
	uint32_t off = rl->off, end = rl->end;

	/* The report decoder runs again on the same header and, seeing
	 * report_index > 0, picks the individual report at report_next_off. */
	p->nlayers = p->report_layer;
	p->report_index++;
	p->malformed = 0;
	chain_init(&c, reg, p, st);
	st->items++;
	run_chain(&c, p, proto, off, end);
	if (p->malformed)
		st->malformed_packets++;
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
