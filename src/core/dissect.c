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
	};
	return (unsigned)v < ISP_VERDICT__COUNT ? names[v] : "?";
}

static uint8_t instance_of(const struct isp_packet *p, uint16_t proto, unsigned n)
{
	uint8_t k = 1;

	for (unsigned i = 0; i < n; i++)
		k += p->layer[i].proto == proto;
	return k;
}

/* After a heuristic candidate declined: fall back to the port tables. */
static void next_by_ports(struct isp_dissect *d)
{
	enum isp_table t = d->l4_is_tcp ? ISP_TBL_TCP_PORT : ISP_TBL_UDP_PORT;

	isp_next_by(d, t, d->l4_dport);
	if (d->next == ISP_PROTO_NONE)
		isp_next_by(d, t, d->l4_sport);
}

static void run_chain(const struct isp_registry *reg, struct isp_packet *p,
		      struct isp_stats *st, struct isp_dissect *d,
		      uint16_t proto, uint32_t off, uint32_t end)
{
	while (proto != ISP_PROTO_NONE) {
		if (p->nlayers >= ISP_MAX_LAYERS) {
			p->malformed = ISP_ERR_DEPTH;
			p->malformed_proto = proto;
			st->malformed[proto][ISP_ERR_DEPTH]++;
			return;
		}
		unsigned n = p->nlayers;
		struct isp_layer *l = &p->layer[n];
		l->proto = proto;
		l->instance = instance_of(p, proto, n);
		l->version = 0;
		l->off = off;
		l->len = 0;
		l->end = end;

		uint16_t parent_proto = n ? p->layer[n - 1].proto : ISP_PROTO_NONE;
		bool heuristic = false;
		if (parent_proto != ISP_PROTO_NONE) {
			const struct isp_proto *pp = &reg->proto[parent_proto];
			for (unsigned i = 0; i < pp->nheur; i++)
				heuristic |= pp->heur[i] == proto;
		}

		d->next = ISP_PROTO_NONE;
		d->next_off = UINT32_MAX;
		d->next_end = UINT32_MAX;
		enum isp_verdict v = reg->proto[proto].desc->decode(d, l);
		if (v == ISP_NOT_MINE) {
			if (heuristic) {
				next_by_ports(d);
				if (d->next != proto) {
					proto = d->next;
					continue;
				}
			}
			return; /* an unknown payload, not an error */
		}
		if (v != ISP_OK) {
			p->malformed = (uint8_t)v;
			p->malformed_proto = proto;
			st->malformed[proto][v]++;
			return;
		}
		st->decoded[proto]++;
		p->nlayers++;
		off = d->next_off != UINT32_MAX ? d->next_off : l->off + l->len;
		end = d->next_end != UINT32_MAX ? d->next_end : l->end;
		if (off > end)
			return;
		proto = d->next;
	}
}

static void dissect_init(struct isp_dissect *d, const struct isp_registry *reg,
			 struct isp_packet *p)
{
	memset(d, 0, sizeof(*d));
	d->pkt = p;
	d->reg = reg;
}

unsigned isp_dissect(const struct isp_registry *reg, struct isp_packet *p,
		     uint16_t first, struct isp_stats *st)
{
	struct isp_dissect d;

	dissect_init(&d, reg, p);
	p->nlayers = 0;
	p->report_index = 0;
	p->report_count = 1;
	p->report_layer = 0xff;
	p->report_next_off = 0;
	p->malformed = 0;
	st->packets++;
	st->items++;
	st->bytes += p->wirelen;
	run_chain(reg, p, st, &d, first, 0, p->caplen);
	if (p->malformed)
		st->malformed_packets++;
	return p->nlayers;
}

bool isp_dissect_next_report(const struct isp_registry *reg,
			     struct isp_packet *p, struct isp_stats *st)
{
	if (p->report_layer == 0xff || p->report_index + 1 >= p->report_count ||
	    p->report_next_off == 0)
		return false;

	struct isp_dissect d;
	const struct isp_layer *rl = &p->layer[p->report_layer];
	uint16_t proto = rl->proto;
	uint32_t off = rl->off, end = rl->end;

	/* The report decoder runs again on the same header and, seeing
	 * report_index > 0, picks the individual report at report_next_off. */
	dissect_init(&d, reg, p);
	p->nlayers = p->report_layer;
	p->report_index++;
	p->malformed = 0;
	st->items++;
	run_chain(reg, p, st, &d, proto, off, end);
	if (p->malformed)
		st->malformed_packets++;
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
