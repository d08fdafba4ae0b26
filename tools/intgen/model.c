/*
 * model.c - random but realistic telemetry values for one item.
 *
 * Values follow what real INT switches emit: a flow keeps its path (switch
 * and port IDs are derived from the flow index, not drawn per packet),
 * latencies are a few hundred nanoseconds with occasional spikes,
 * timestamps increase along the path and egress - ingress equals the hop
 * latency, and queue occupancies sometimes use all 24 bits so decoders
 * that keep only 16 are caught.
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>

#define TS48_MASK 0xFFFFFFFFFFFFull
#define TS32_MASK 0xFFFFFFFFull

/* Prime > IG_MAX_HOPS: hop h -> (a + h*b) mod P is injective for h < P. */
#define PATH_PRIME 65521u

int model_init(struct ig_model *m, const struct ig_config *cfg)
{
	memset(m, 0, sizeof(*m));
	m->cfg = cfg;
	rng_seed(&m->rng, cfg->seed);
	if (!cfg->flow_shuffle)
		return 0;
	m->perm = malloc((size_t)cfg->flows * sizeof(*m->perm));
	if (!m->perm)
		return -1;
	for (uint32_t i = 0; i < cfg->flows; i++)
		m->perm[i] = i;
	return 0;
}

void model_free(struct ig_model *m)
{
	free(m->perm);
	m->perm = NULL;
}

/* The flow index of the next item. Random draws (the default) repeat
 * flows long before every flow has appeared (N draws from N flows reach
 * only 63% of them); a shuffled round reaches each flow exactly once, so
 * a capture of k*N items has exactly N flows of k items each. */
static uint32_t next_flow(struct ig_model *m)
{
	uint32_t n = m->cfg->flows;

	if (!m->perm)
		return (uint32_t)rng_below(&m->rng, n);
	uint64_t k = m->drawn++ % n;
	if (k == 0) {           /* a new round: Fisher-Yates */
		for (uint32_t i = n - 1; i > 0; i--) {
			uint32_t j = (uint32_t)rng_below(&m->rng, (uint64_t)i + 1);
			uint32_t t = m->perm[i];
			m->perm[i] = m->perm[j];
			m->perm[j] = t;
		}
	}
	return m->perm[k];
}

uint32_t model_path_switch(uint32_t flow, unsigned h)
{
	uint64_t x = mix64(flow);
	uint32_t a = (uint32_t)(x % PATH_PRIME);
	uint32_t b = 1 + (uint32_t)((x >> 32) % (PATH_PRIME - 1));

	return 1 + (uint32_t)((a + (uint64_t)h * b) % PATH_PRIME);
}

unsigned model_hop_words(enum ig_intver v, bool l4s, uint16_t bitmap)
{
	unsigned words = 0;
	unsigned last = l4s ? 7 : 15; /* the L4S switch ignores bits 8-15 */

	for (unsigned b = 0; b <= last; b++) {
		if (!(bitmap & (0x8000u >> b)))
			continue;
		if (b == 6 && l4s)
			words += 1; /* p4-int-l4s: 16-bit level-2 ports */
		else if (b == 6 && v >= IV_10)
			words += 2; /* level-2 ingress + egress port IDs */
		else if ((b == 4 || b == 5) && (v >= IV_20 || l4s))
			words += 2; /* 8-byte timestamps (the L4S switch too) */
		else
			words += 1;
	}
	if (l4s && (bitmap & 0x00F0))
		words += 1; /* nb_mark + nb_drop */
	return words;
}

unsigned model_rep_md_words(uint16_t bits)
{
	unsigned w = 0;

	for (unsigned b = 1; b <= 15; b++)
		if (bits & (0x8000u >> b))
			w += (b >= 4 && b <= 6) ? 2 : 1; /* 8-byte fields */
	return w;
}

/* Largest hop count whose stack still fits the length fields of the
 * chosen encapsulation (8-bit shim Length, 5-bit Geneve option length,
 * and for v2.0 reports the 8-bit Report Length around the whole packet). */
static unsigned max_fit_hops(const struct ig_config *cfg, unsigned words)
{
	unsigned fixed, limit = 255, n;

	if (words == 0)
		return 0;
	if (cfg->int_ver == IV_05 && !cfg->l4s)
		fixed = cfg->transport == TR_VXLAN_GPE ? 3 : 4; /* shim, MD (2), tail */
	else
		fixed = 3; /* v1.0: shim + MD (2); v2.x: MD (3), shim not counted */
	if (cfg->transport == TR_GENEVE)
		limit = 31;
	n = (limit - fixed) / words;
	if (cfg->format == FMT_REPORT && cfg->report_ver == 2) {
		/* Report Length <= 254 words = 2 + metadata + inner packet;
		 * keep 32 words for the inner packet's other headers and 5
		 * for shim, MD header and tail. */
		unsigned room = 252 - model_rep_md_words(cfg->rep_md_bits) - 32 - 5;
		if (room / words < n)
			n = room / words;
	}
	return n > IG_MAX_HOPS ? IG_MAX_HOPS : n;
}

static void make_flow(struct ig_model *m, struct ig_flow *f)
{
	const struct ig_config *cfg = m->cfg;
	uint32_t i = next_flow(m);
	uint32_t host = i + 1;

	memset(f, 0, sizeof(*f));
	f->index = i;
	f->v6 = cfg->ipv6;
	if (f->v6) {
		/* 2001:db8:1::<host> -> 2001:db8:2::<host> */
		static const uint8_t pfx[6] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0 };
		memcpy(f->src, pfx, 6);
		memcpy(f->dst, pfx, 6);
		f->src[5] = 1;
		f->dst[5] = 2;
		for (int k = 0; k < 4; k++) {
			f->src[12 + k] = (uint8_t)(host >> (24 - 8 * k));
			f->dst[12 + k] = (uint8_t)(host >> (24 - 8 * k));
		}
	} else {
		/* 10.1.0.0 + host -> 10.128.0.0 + host */
		uint32_t s = 0x0A010000u + host, d = 0x0A800000u + host;
		for (int k = 0; k < 4; k++) {
			f->src[k] = (uint8_t)(s >> (24 - 8 * k));
			f->dst[k] = (uint8_t)(d >> (24 - 8 * k));
		}
	}
	if (cfg->transport == TR_UDP)
		f->proto = 17;
	else if (cfg->transport == TR_TCP)
		f->proto = 6;
	else if (cfg->inner_l4 == L4_MIX)
		f->proto = (i & 1) ? 6 : 17;
	else
		f->proto = cfg->inner_l4 == L4_TCP ? 6 : 17;
	f->sport = (uint16_t)(10000 + i % 50000);
	f->dport = (uint16_t)(5000 + (i * 7u) % 1000);
	f->dscp = (i % 5 == 0) ? 46 : (i % 5 == 1) ? 10 : 0;
}

static uint32_t occupancy(struct rng *r)
{
	if (rng_one_in(r, 25))
		return (uint32_t)rng_range(r, 0x100000, 0xFFFFFE); /* needs 24 bits */
	if (rng_one_in(r, 8))
		return (uint32_t)rng_below(r, 0x10000);
	return (uint32_t)rng_below(r, 2000);
}

static uint32_t hop_latency(struct rng *r)
{
	if (rng_one_in(r, 1000))
		return (uint32_t)rng_range(r, 200000, 5000000);
	if (rng_one_in(r, 20))
		return (uint32_t)rng_range(r, 3000, 200000);
	return (uint32_t)rng_range(r, 300, 3000);
}

/* Replace fields by all-ones, per instruction, 1 time in 50. */
static void mark_unavailable(struct rng *r, struct ig_hop *h, uint16_t bitmap,
			     bool l4s)
{
	for (unsigned b = 0; b <= 8; b++) {
		if (!(bitmap & (0x8000u >> b)) || !rng_one_in(r, 50))
			continue;
		switch (b) {
		case 0: h->switch_id = 0xFFFFFFFFu; break;
		case 1: h->in_port = h->eg_port = 0xFFFF; break;
		case 2: h->latency = 0xFFFFFFFFu; break;
		case 3: h->queue_id = 0xFF; h->queue_occ = 0xFFFFFF; break;
		case 4: h->ts_in = UINT64_MAX; break;
		case 5: h->ts_eg = UINT64_MAX; break;
		case 6:
			h->lv2_in = h->lv2_eg = 0xFFFFFFFFu;
			h->v05_qcong = 0xFFFFFFFFu;
			break;
		case 7: h->tx_util = 0xFFFFFFFFu; break;
		case 8: h->buffer_id = 0xFF; h->buffer_occ = 0xFFFFFF; break;
		}
	}
	if (l4s && (bitmap & 0x00F0) && rng_one_in(r, 50))
		h->l4s_mark = h->l4s_drop = 0xFFFF;
}

void model_item(struct ig_model *m, struct ig_item *it, uint64_t ts_ns,
		bool with_int)
{
	const struct ig_config *cfg = m->cfg;
	struct rng *r = &m->rng;

	it->ts_ns = ts_ns;
	make_flow(m, &it->flow);
	it->has_int = with_int;
	it->mx = cfg->format == FMT_MX;
	it->bitmap = cfg->bitmap;
	it->md_version = cfg->int_ver == IV_05 ? 0 : cfg->int_ver == IV_10 ? 1 : 2;
	it->ts_bytes = (cfg->int_ver >= IV_20 || cfg->l4s) ? 8 : 4;
	it->l4s = cfg->l4s;
	it->hop_words = (uint8_t)model_hop_words(cfg->int_ver, cfg->l4s, it->bitmap);
	it->hop_ml = it->hop_words;
	if (cfg->l4s && (it->bitmap & 0x00F0))
		it->hop_ml = (uint8_t)(it->hop_words - 1); /* as the real switch */
	it->nhops = 0;
	it->e_flag = false;
	it->max_hops = it->remaining = 0;
	it->payload_len = 0;
	if (!with_int || it->mx)
		return;

	unsigned fit = max_fit_hops(cfg, it->hop_words);
	unsigned n = (unsigned)rng_range(r, cfg->hops_min, cfg->hops_max);
	unsigned initial;
	if (n > fit) {
		/* The source budgeted fewer hops than the path has: the
		 * extra hops could not push and set E (spec §E bit). */
		n = fit;
		it->e_flag = true;
		initial = n;
	} else {
		initial = n + (unsigned)rng_below(r, 5);
		if (initial > fit)
			initial = fit;
	}
	it->nhops = n;
	it->max_hops = (uint8_t)initial;
	it->remaining = (uint8_t)(initial - n);

	/* Walk the path forwards so timestamps grow hop by hop and the
	 * last egress lands just before the capture time. */
	uint32_t lat[IG_MAX_HOPS], link[IG_MAX_HOPS];
	uint64_t total = 0;
	for (unsigned h = 0; h < n; h++) {
		lat[h] = hop_latency(r);
		link[h] = (uint32_t)rng_range(r, 200, 3000);
		total += lat[h] + link[h];
	}
	uint64_t mask = it->ts_bytes == 8 ? TS48_MASK : TS32_MASK;
	uint64_t t = ts_ns - total;
	uint64_t fmix = mix64((uint64_t)it->flow.index ^ 0x5eed);

	for (unsigned h = 0; h < n; h++) {
		struct ig_hop *hp = &it->hop[h];
		uint64_t pm = mix64(fmix + h);

		hp->switch_id = model_path_switch(it->flow.index, h);
		hp->in_port = (uint16_t)(1 + pm % 64);
		hp->eg_port = (uint16_t)(1 + (pm >> 16) % 64);
		hp->latency = lat[h];
		hp->queue_id = cfg->l4s ? (uint8_t)rng_below(r, 2)
					: (uint8_t)rng_below(r, 8);
		hp->queue_occ = occupancy(r);
		hp->ts_in = t & mask;
		hp->ts_eg = (t + lat[h]) & mask;
		t += lat[h] + link[h];
		hp->lv2_in = 0x10000u + (uint32_t)((pm >> 32) % 4096);
		hp->lv2_eg = 0x10000u + (uint32_t)((pm >> 44) % 4096);
		hp->v05_qcong = (uint32_t)hp->queue_id << 24 |
				(uint32_t)rng_below(r, 0x10000);
		hp->tx_util = cfg->l4s ? (uint32_t)rng_below(r, 65536)
				       : (uint32_t)rng_below(r, 1000000);
		hp->buffer_id = (uint8_t)rng_below(r, 4);
		hp->buffer_occ = occupancy(r);
		hp->l4s_mark = hp->queue_id == 1 ? (uint16_t)rng_below(r, 64) : 0;
		hp->l4s_drop = rng_one_in(r, 10) ? (uint16_t)rng_range(r, 1, 9) : 0;
		hp->cksum = (uint32_t)rng_next(r);
		if (cfg->unavailable)
			mark_unavailable(r, hp, it->bitmap, cfg->l4s);
	}
}

void model_report(struct ig_model *m, struct ig_item *it,
		  const struct ig_item *leader)
{
	const struct ig_config *cfg = m->cfg;
	struct rng *r = &m->rng;
	struct ig_repmd *rm = &it->rep;
	uint64_t mask = cfg->report_ver == 2 ? TS48_MASK : TS32_MASK;

	if (leader) {
		/* Coalesced v2.0 reports share the group header. */
		it->node_id = leader->node_id;
		it->hw_id = leader->hw_id;
		it->seq = leader->seq;
	} else {
		unsigned sink = it->nhops ? it->nhops - 1 : 0;
		it->node_id = model_path_switch(it->flow.index, sink);
		it->hw_id = (uint8_t)(it->node_id & 0x3F);
		it->seq = m->seq[it->node_id & 0xFFFF]++;
		if (cfg->report_ver == 2)
			it->seq &= 0x3FFFFF;
	}

	/* the header the reported packet starts with: a tunnel's outer IPv4
	 * header, or the flow's own */
	bool starts_v6 = it->flow.v6 && (cfg->transport == TR_UDP || cfg->transport == TR_TCP);
	switch (cfg->report_ver) {
	case 0:
		if (cfg->report_nproto >= 0) {
			it->inner_kind = (uint8_t)cfg->report_nproto;
		} else {
			uint64_t d = rng_below(r, 10);
			it->inner_kind = d < 5 ? 0 : d < 9 ? 2 : 1;
		}
		it->dropped = it->inner_kind == 1;
		break;
	case 1:
		it->inner_kind = rng_one_in(r, 4) ? (starts_v6 ? 2 : 1) : 0;
		it->dropped = (cfg->rep_md_bits & 0x02) != 0;
		break;
	default:
		it->inner_kind = rng_one_in(r, 4) ? (starts_v6 ? 5 : 4) : 3;
		it->dropped = (cfg->rep_md_bits & 0x0001) != 0;
		break;
	}
	it->congested = rng_one_in(r, 10);

	rm->in_port = (uint16_t)rng_range(r, 1, 64);
	rm->eg_port = (uint16_t)rng_range(r, 1, 64);
	if (it->nhops) {
		/* The sink's own view matches the last hop it pushed. */
		rm->in_port = it->hop[it->nhops - 1].in_port;
		rm->eg_port = it->hop[it->nhops - 1].eg_port;
		if (rm->in_port == 0xFFFF)
			rm->in_port = rm->eg_port = 1;
	}
	rm->latency = hop_latency(r);
	rm->queue_id = (uint8_t)rng_below(r, 8);
	rm->queue_occ = occupancy(r);
	rm->ts_in = (it->ts_ns - rm->latency) & mask;
	rm->ts_eg = it->ts_ns & mask;
	rm->lv2_in = 0x10000u + rm->in_port;
	rm->lv2_eg = 0x10000u + rm->eg_port;
	rm->tx_util = (uint32_t)rng_below(r, 1000000);
	rm->buffer_id = (uint8_t)rng_below(r, 4);
	rm->buffer_occ = occupancy(r);
	rm->drop_reason = (uint8_t)rng_range(r, 1, 80);
}
