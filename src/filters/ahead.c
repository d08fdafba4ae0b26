/*
 * ahead.c - looking a few items ahead, so that the key lookups of
 * tables too large for the cache overlap instead of following each other.
 *
 * A per-key rule looks its key up once an item: with a million keys,
 * the table's slot and entry are two loads from memory (57% of the
 * time of a per-flow event on a million flows, perf). For an item the
 * pipeline lets it hold (ops.item_held), the engine keeps a copy of the
 * item's dissection (its head and used layers, a few hundred bytes) and,
 * unless they stay readable (a mapped capture file), of its bytes; builds
 * its keys and asks for their slots; AHEAD_ENTRY items later, for the
 * entries those slots hold; and runs the rules AHEAD_HOLD items later, on
 * keys and hashes already built. The order of the items is kept: whatever
 * comes between two items (a tick, a publish, a control command, the end)
 * runs the held items first (engine_ahead_drain).
 *
 * It starts once a table holds AHEAD_MIN_KEYS keys: below that the
 * lookups hit the cache, and the copy would cost more than it hides.
 */
#include <stdlib.h>
#include <string.h>

#include "engine_int.h"

/* A rule's keys are built ahead when its table keeps at most this many
 * bytes of a key (a 5-tuple takes 31, a switch path and its queue ids of
 * up to 32 hops 524, a string 257). */
#define AHEAD_KEY_MAX 1024
/* The ring of held items (a power of two, above AHEAD_HOLD); items
 * between asking for a key's slot and for its entry, and for a query
 * group's per-hop states (the third load of its chain); items held before
 * one runs. Measured on a million flows (2M packets, this 2-core VM,
 * interleaved runs): holding 2 items ran the event 1.1x as fast as
 * before, 3 to 7 items 1.3-1.5x; 4, with the entries asked for 2 items
 * after the slots, was the steadiest. Asking for the per-hop states made
 * the per-flow query 1.06x faster (9 pairs, each 1.02x or more); other
 * distances could not be told apart from the noise. */
#define AHEAD_RING 8
#ifndef AHEAD_ENTRY
#define AHEAD_ENTRY 2
#endif
#ifndef AHEAD_STATE
#define AHEAD_STATE 3
#endif
#ifndef AHEAD_HOLD
#define AHEAD_HOLD 4
#endif
/* 16K keys of ~100 bytes are more than this machine's 2 MiB of L2 */
#define AHEAD_MIN_KEYS 16384
#define AHEAD_RECHECK 1024      /* items between two looks at the tables' sizes */
/* A packet whose bytes do not stay (a live input, a UDP datagram, a
 * batch of standard input) is held in a copy of at most this many bytes;
 * a longer one runs at once, after what is held. */
#define AHEAD_BYTES 2048

struct ahead_item {
	uint64_t what;
	uint8_t *bytes;                 /* AHEAD_BYTES: a copy of a packet's bytes */
	struct ahead_key key[AHEAD_RULES];
	struct isp_packet p;            /* the head and the used layers only */
};

struct ahead {
	unsigned head, n;               /* the oldest held item, how many */
	unsigned nrules;
	/* the rules whose keys are built (events, queries at nevents + their
	 * index, flow monitors after them) and their tables */
	unsigned rule[AHEAD_RULES];
	struct table *table[AHEAD_RULES];
	uint8_t *keys;                  /* every held item's key bytes */
	bool qhops[AHEAD_RULES];        /* a query with per-hop functions */
	unsigned nqhops;
	struct ahead_item item[AHEAD_RING];
};

int ahead_init(struct isp_engine *e)
{
	const struct isp_program *prog = e->prog;
	const unsigned ne = prog->nevents, nq = prog->nqueries;
	unsigned rule[AHEAD_RULES], n = 0, nrules = ne + nq + prog->nmonitors;

	for (unsigned i = 0; i < prog->nevents && n < AHEAD_RULES; i++) {
		const struct erule *r = &prog->events[i];
		if (r->ndelta && r->nkey && !r->per_hop && e->ev[i].keys.key_max <= AHEAD_KEY_MAX)
			rule[n++] = i;
	}
	for (unsigned i = 0; i < nq && n < AHEAD_RULES; i++)
		if (prog->queries[i].ngroup && e->q[i].groups.key_max <= AHEAD_KEY_MAX)
			rule[n++] = ne + i;
	for (unsigned i = 0; i < prog->nmonitors && n < AHEAD_RULES; i++)
		if (prog->monitors[i].nmatch && e->mon[i].entries.key_max <= AHEAD_KEY_MAX)
			rule[n++] = ne + nq + i;
	if (!n)
		return 0;
	if (!(e->ahead = calloc(1, sizeof(*e->ahead))) ||
	    !(e->ahead_pos = malloc(nrules * sizeof(*e->ahead_pos))))
		return -1;
	memset(e->ahead_pos, 0xff, nrules * sizeof(*e->ahead_pos));
	struct ahead *a = e->ahead;
	size_t room = 0;
	for (unsigned k = 0; k < n; k++) {
		unsigned i = rule[k];
		a->rule[k] = i;
		a->table[k] = i < ne ? &e->ev[i].keys : i < ne + nq ? &e->q[i - ne].groups :
			      &e->mon[i - ne - nq].entries;
		e->ahead_pos[i] = (int8_t)k;
		room += a->table[k]->key_max;
		for (unsigned j = 0; i >= ne && i < ne + nq && j < prog->queries[i - ne].nitems; j++)
			a->qhops[k] |= prog->queries[i - ne].items[j].per_hop;
		a->nqhops += a->qhops[k];
	}
	a->nrules = n;
	if (!(a->keys = malloc(AHEAD_RING * (room + AHEAD_BYTES))))
		return -1;
	uint8_t *at = a->keys;
	for (unsigned j = 0; j < AHEAD_RING; j++) {
		for (unsigned k = 0; k < n; k++, at += a->table[k - 1]->key_max)
			a->item[j].key[k].bytes = at;
		a->item[j].bytes = at;
		at += AHEAD_BYTES;
	}
	return 0;
}

void ahead_free(struct isp_engine *e)
{
	if (e->ahead)
		free(e->ahead->keys);
	free(e->ahead);
	free(e->ahead_pos);
	e->ahead = NULL;
	e->ahead_pos = NULL;
}

/* Is some table of a rule built ahead large enough to miss the cache? */
static bool ahead_worth(const struct isp_engine *e)
{
	const struct ahead *a = e->ahead;

	for (unsigned k = 0; k < a->nrules; k++)
		if (a->table[k]->count >= AHEAD_MIN_KEYS)
			return true;
	return false;
}

static void run_oldest(struct isp_engine *e)
{
	struct ahead *a = e->ahead;
	struct ahead_item *it = &a->item[a->head];

	a->head = (a->head + 1) & (AHEAD_RING - 1);
	a->n--;
	e->prep = it->key;
	isp_engine_item(e, &it->p, it->what);
	e->prep = NULL;
}

void engine_ahead_drain(struct isp_engine *e)
{
	if (!e->ahead)
		return;
	while (e->ahead->n)
		run_oldest(e);
}

bool engine_ahead_holds(const struct isp_engine *e)
{
	return e->ahead && e->ahead->n;
}

/* Hold item p: its keys built and their slots asked for, the entries of
 * an item held before asked for, the oldest run past AHEAD_HOLD. */
static inline void hold(struct isp_engine *e, struct ahead *a, const struct isp_packet *p,
			uint64_t what, bool bytes_stay)
{
	struct ahead_item *it = &a->item[(a->head + a->n) & (AHEAD_RING - 1)];
	memcpy(&it->p, p, offsetof(struct isp_packet, layer));
	if (!bytes_stay) {
		memcpy(it->bytes, p->data, p->caplen);
		it->p.data = it->bytes;
	}
	memcpy(it->p.layer, p->layer, p->nlayers * sizeof(p->layer[0]));
	it->p.protos = p->protos;
	memcpy(it->p.last, p->last, sizeof(p->last));
	it->what = what;
	slot_cache_next(&e->sc);
	const unsigned ne = e->prog->nevents, nq = e->prog->nqueries;
	for (unsigned k = 0; k < a->nrules; k++) {
		unsigned i = a->rule[k];
		struct ahead_key *key = &it->key[k];
		key->len = AHEAD_NONE;
		size_t max = a->table[k]->key_max, len;
		if (i < ne) {
			/* as event_run: the key built whole, cut to what the
			 * table keeps, then hashed (table_get) */
			const struct erule *r = &e->prog->events[i];
			if (!(what & e->ebit[i]))
				continue;
			len = engine_key(e, &it->p, r->key_slots, r->nkey, e->keybuf, sizeof(e->keybuf));
			len = len < max ? len : max;
			memcpy(key->bytes, e->keybuf, len);
			key->len = (uint16_t)len;
			key->hash = table_hash(key->bytes, len);
		} else if (i < ne + nq) {
			if (!(what & e->qbit[i - ne]))
				continue;
			key->len = (uint16_t)query_group_key(e, i - ne, &it->p, key->bytes, max,
							     &key->hash);
		} else {
			/* as monitor_packet: the whole key hashed, the table
			 * keeping what fits */
			const struct mrule *r = &e->prog->monitors[i - ne - nq];
			if (!(what & e->mbit[i - ne - nq]))
				continue;
			len = engine_key(e, &it->p, r->match_slots, r->nmatch, e->keybuf,
					 sizeof(e->keybuf));
			key->hash = table_hash(e->keybuf, len);
			len = len < max ? len : max;
			memcpy(key->bytes, e->keybuf, len);
			key->len = (uint16_t)len;
		}
		table_prefetch_slot(a->table[k], key->hash);
	}
	a->n++;
	if (a->n > AHEAD_ENTRY) {
		/* its slot asked for AHEAD_ENTRY items ago: here by now */
		const struct ahead_item *b = &a->item[(a->head + a->n - 1 - AHEAD_ENTRY) & (AHEAD_RING - 1)];
		for (unsigned k = 0; k < a->nrules; k++)
			if (b->key[k].len != AHEAD_NONE)
				table_prefetch_entry(a->table[k], b->key[k].hash);
	}
	if (a->nqhops && a->n > AHEAD_STATE) {
		/* its entry asked for before: a query's per-hop states */
		const struct ahead_item *b = &a->item[(a->head + a->n - 1 - AHEAD_STATE) & (AHEAD_RING - 1)];
		for (unsigned k = 0; k < a->nrules; k++)
			if (a->qhops[k] && b->key[k].len != AHEAD_NONE)
				query_prefetch_group(e, a->rule[k] - ne, b->key[k].bytes, b->key[k].len,
						     b->key[k].hash);
	}
	if (a->n > AHEAD_HOLD)
		run_oldest(e);
}

void engine_ahead_recheck(struct isp_engine *e)
{
	e->ahead_recheck = AHEAD_RECHECK;
	e->ahead_on = e->ahead && ahead_worth(e);
	if (!e->ahead_on)
		engine_ahead_drain(e);  /* the tables shrank: nothing held */
}

void isp_engine_item_held(struct isp_engine *e, const struct isp_packet *p, uint64_t what,
			  bool bytes_stay)
{
	if (!bytes_stay && p->caplen > AHEAD_BYTES) {
		engine_ahead_drain(e);  /* too long to copy: now, in its turn */
		isp_engine_item(e, p, what);
		return;
	}
	hold(e, e->ahead, p, what, bytes_stay);
}
