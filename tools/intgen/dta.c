/*
 * dta.c - DTA report generator and encoder (see dta.h).
 */
#include "dta.h"

#include <stdlib.h>
#include <string.h>

#include "dta_hash.h"
#include "dta_opts.h"
#include "headers.h"
#include "wire.h"

#define DTA_COUNTER_MAX 1000u

/* The murmur3 finaliser: a bijection of 32-bit values, so distinct key
 * indices give distinct keys without a duplicate check. */
static uint32_t fmix32(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x85ebca6bu;
	x ^= x >> 13;
	x *= 0xc2b2ae35u;
	x ^= x >> 16;
	return x;
}

int dta_gen_init(struct dta_gen *g, const struct ig_config *cfg)
{
	const struct ig_dta *d = &cfg->dta;

	memset(g, 0, sizeof(*g));
	g->cfg = cfg;
	/* Its own stream: --dta-loss and --dta-reorder draw elsewhere, so the
	 * reports of a seed are the same with or without network faults. */
	rng_seed(&g->rng, cfg->seed ^ 0xD7A0D7A0D7A0D7A0ull);
	g->keys = malloc((size_t)d->keys * sizeof(*g->keys));
	g->made = calloc(d->reporters, sizeof(*g->made));
	if (!g->keys || !g->made)
		return -1;
	/* i -> a*i + c (a odd) and fmix32 are both bijections of u32. */
	uint32_t a = (uint32_t)rng_next(&g->rng) | 1u;
	uint32_t c = (uint32_t)rng_next(&g->rng);
	for (uint32_t i = 0; i < d->keys; i++)
		g->keys[i] = fmix32(a * i + c);
	g->max_words = DTA_MAX_WORDS;
	if (d->op == DOP_SKETCH) {
		if (d->chunk * d->rows > g->max_words)
			g->max_words = d->chunk * d->rows;
		if (dta_sketch_init(&g->sk, cfg, g->keys))
			return -1;
	}
	return 0;
}

void dta_gen_free(struct dta_gen *g)
{
	dta_sketch_free(&g->sk);
	free(g->made);
	free(g->keys);
	memset(g, 0, sizeof(*g));
}

static unsigned shard_of(const struct ig_dta *d, uint32_t key)
{
	uint8_t kb[4];

	if (d->shards == 1)
		return 0;
	put32(kb, key);
	return crc32_ieee(kb, 4) % d->shards;
}

/* Fields every opcode has: flags, the reporter's sequence number. */
static void base_fields(struct dta_gen *g, struct dta_report *rep, unsigned r)
{
	const struct ig_dta *d = &g->cfg->dta;
	unsigned prio = d->priority < 0 ? (unsigned)rng_below(&g->rng, 4)
					: (unsigned)d->priority;
	bool imm = d->immediate > 0 && rng_unit(&g->rng) < d->immediate;

	rep->flags = (uint8_t)((imm ? DTA_FLAG_IMMEDIATE : 0) |
			       (d->retransmit ? DTA_FLAG_RETRANSMIT : 0) | prio);
	rep->reporter = (uint16_t)r;
	rep->number = g->made[r]++;
	rep->seq = (uint8_t)rep->number;
	g->total++;
}

static void random_words(struct dta_gen *g, struct dta_report *rep, unsigned n)
{
	rep->nwords = n;
	for (unsigned i = 0; i < n; i++)
		rep->words[i] = (uint32_t)rng_next(&g->rng);
}

static uint32_t draw_key(struct dta_gen *g)
{
	return g->keys[rng_below(&g->rng, g->cfg->dta.keys)];
}

static int next_plain(struct dta_gen *g, struct dta_report *rep)
{
	const struct ig_dta *d = &g->cfg->dta;

	if (g->total >= g->cfg->count)
		return 0;
	unsigned r = (unsigned)rng_below(&g->rng, d->reporters);
	rep->opcode = d->op == DOP_MIX ? (uint8_t)(1 + rng_below(&g->rng, 4))
				       : (uint8_t)d->op;
	base_fields(g, rep, r);
	switch (rep->opcode) {
	case DTA_OP_KEYWRITE:
		rep->redundancy = (uint8_t)d->redundancy;
		rep->key = draw_key(g);
		random_words(g, rep, d->words);
		rep->shard = shard_of(d, rep->key);
		break;
	case DTA_OP_APPEND:
		rep->list = (uint32_t)rng_below(&g->rng, d->lists);
		random_words(g, rep, d->words);
		rep->shard = shard_of(d, rep->list);
		break;
	case DTA_OP_INCREMENT:
		rep->redundancy = (uint8_t)d->redundancy;
		rep->key = draw_key(g);
		rep->counter = rng_range(&g->rng, 1, DTA_COUNTER_MAX);
		rep->shard = shard_of(d, rep->key);
		break;
	default: /* Postcarder */
		rep->key = draw_key(g);
		rep->hop = (uint8_t)rng_below(&g->rng, d->hops);
		random_words(g, rep, 1);
		rep->shard = shard_of(d, rep->key);
		break;
	}
	return 1;
}

/* Sketch mode: epoch by epoch, each reporter draws its stream, then
 * sends its whole sketch, --dta-chunk columns per report. */
static int next_sketch(struct dta_gen *g, struct dta_report *rep)
{
	const struct ig_dta *d = &g->cfg->dta;
	struct dta_sketch *s = &g->sk;

	if (!s->started || s->next_col >= d->width) {
		if (s->started && ++s->reporter == d->reporters) {
			s->reporter = 0;
			s->epoch++;
		}
		if (s->epoch >= d->epochs)
			return 0;
		s->started = true;
		s->next_col = 0;
		if (dta_sketch_fill(s, &g->rng))
			return -1;
	}
	uint32_t left = d->width - s->next_col;
	unsigned cols = left < d->chunk ? (unsigned)left : d->chunk;

	rep->opcode = DTA_OP_SKETCH;
	base_fields(g, rep, s->reporter);
	rep->sketch = d->sketch_id;
	rep->epoch = (uint16_t)s->epoch;
	rep->column = (uint16_t)s->next_col;
	rep->columns = (uint16_t)cols;
	rep->rows = (uint16_t)d->rows;
	rep->nwords = cols * d->rows;
	/* A copy: the next reporter's sketch overwrites the cells while the
	 * driver may still hold this report (--dta-reorder). */
	memcpy(rep->words, &s->cells[(size_t)s->next_col * d->rows],
	       rep->nwords * sizeof(*rep->words));
	rep->shard = 0; /* a sketch lives on one collector */
	s->next_col += cols;
	return 1;
}

int dta_gen_next(struct dta_gen *g, struct dta_report *rep)
{
	uint32_t *words = rep->words;

	memset(rep, 0, sizeof(*rep));
	rep->words = words;
	if (g->cfg->dta.op == DOP_SKETCH)
		return next_sketch(g, rep);
	return next_plain(g, rep);
}

static size_t put_words(uint8_t *p, const struct dta_report *rep)
{
	for (unsigned i = 0; i < rep->nwords; i++)
		put32(p + 4 * i, rep->words[i]);
	return 4u * rep->nwords;
}

size_t dta_payload(uint8_t *p, const struct ig_config *cfg,
		   const struct dta_report *rep)
{
	uint8_t *s = p;

	*p++ = rep->opcode;
	if (!cfg->dta.no_seq)
		*p++ = rep->seq;
	*p++ = rep->flags;
	switch (rep->opcode) {
	case DTA_OP_KEYWRITE:
		put8(p, rep->redundancy);
		put32(p + 1, rep->key);
		p += 5;
		p += put_words(p, rep);
		break;
	case DTA_OP_APPEND:
		put32(p, rep->list);
		p += 4;
		p += put_words(p, rep);
		break;
	case DTA_OP_INCREMENT:
		put8(p, rep->redundancy);
		put32(p + 1, rep->key);
		put64(p + 5, rep->counter);
		p += 13;
		break;
	case DTA_OP_POSTCARD:
		put32(p, rep->key);
		put8(p + 4, rep->hop);
		put32(p + 5, rep->words[0]);
		p += 9;
		break;
	case DTA_OP_SKETCH:
		put16(p, rep->sketch);
		put16(p + 2, rep->reporter);
		put16(p + 4, rep->epoch);
		put16(p + 6, rep->column);
		put16(p + 8, rep->columns);
		put16(p + 10, 0); /* reserved */
		p += 12;
		p += put_words(p, rep);
		break;
	}
	return (size_t)(p - s);
}

void dta_reporter_ip(unsigned r, uint8_t ip[4])
{
	ip[0] = 10;
	ip[1] = 0;
	ip[2] = (uint8_t)(r / 250);
	ip[3] = (uint8_t)(r % 250 + 1);
}

void dta_dest_ip(unsigned shard, uint8_t ip[4])
{
	ip[0] = 10;
	ip[1] = 0;
	ip[2] = 100;
	ip[3] = (uint8_t)(1 + shard);
}

size_t dta_frame(uint8_t *p, const struct ig_config *cfg,
		 const struct dta_report *rep)
{
	uint8_t src[4], dst[4];
	uint8_t *ip, *udp, *s = p;

	dta_reporter_ip(rep->reporter, src);
	dta_dest_ip(rep->shard, dst);
	p += hdr_eth(p, 0xD7A00000u | rep->shard, 0xD7A10000u | rep->reporter,
		     ETHERTYPE_IPV4);
	ip = p;
	/* IP ID counts the reporter's datagrams, as a real sender's would */
	p += hdr_ipv4(p, 0, 17, src, dst, (uint16_t)rep->number, 64);
	udp = p;
	p += hdr_udp(p, (uint16_t)(DTA_SRC_PORT_BASE + rep->reporter),
		     cfg->dta.port);
	p += dta_payload(p, cfg, rep);
	udp_finish(udp, (size_t)(p - udp), ip, false, true);
	ipv4_finish(ip, (size_t)(p - ip));
	return (size_t)(p - s);
}
