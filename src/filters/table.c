/*
 * table.c - see table.h.
 */
#include "table.h"

#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define BLOCK (256u * 1024u)

struct arena_block {
	struct arena_block *next;
	size_t size;
	_Alignas(16) uint8_t data[];
};

void *arena_alloc(struct arena *a, size_t n)
{
	/* 8 is all the states need (no member is wider; 128-bit sums are
	 * kept as two words); 16 would add 8 bytes to many entries */
	n = (n + 7) & ~(size_t)7;
	if (!a->cur || a->used + n > a->cur->size) {
		/* the next kept block, or a new one */
		struct arena_block *b = a->cur ? a->cur->next : a->head;
		if (!b || b->size < n) {
			size_t size = n > BLOCK ? n : BLOCK;
			b = malloc(sizeof(*b) + size);
			if (!b)
				return NULL;
			b->size = size;
			if (a->cur) {
				b->next = a->cur->next;
				a->cur->next = b;
			} else {
				b->next = a->head;
				a->head = b;
			}
		}
		a->cur = b;
		a->used = 0;
	}
	void *p = a->cur->data + a->used;
	a->used += n;
	memset(p, 0, n);
	return p;
}

void *arena_alloc_cb(void *ctx, size_t n)
{
	return arena_alloc(ctx, n);
}

void arena_reset(struct arena *a)
{
	a->cur = NULL;
	a->used = 0;
}

void arena_free(struct arena *a)
{
	struct arena_block *b = a->head;

	while (b) {
		struct arena_block *next = b->next;
		free(b);
		b = next;
	}
	memset(a, 0, sizeof(*a));
}

uint64_t table_hash(const void *key, size_t len)
{
	return XXH3_64bits(key, len);
}

int table_init(struct table *t, uint32_t max, size_t state_size, size_t key_max, bool evicts)
{
	uint32_t cap = 16;

	memset(t, 0, sizeof(*t));
	while (cap < max * 2u && cap < (1u << 30))
		cap <<= 1;
	t->slot = calloc(cap, sizeof(*t->slot));
	t->order = calloc(max, sizeof(*t->order));
	if (!t->slot || !t->order) {
		table_free(t);
		return -1;
	}
	t->mask = cap - 1;
	t->max = max;
	t->state_size = (state_size + 7) & ~(size_t)7;
	t->key_max = key_max;
	t->entry_size = sizeof(struct tentry) + t->state_size + key_max;
	t->evicts = evicts;
	return 0;
}

void table_free(struct table *t)
{
	free(t->slot);
	free(t->order);
	arena_free(&t->mem);
	memset(t, 0, sizeof(*t));
}

void table_clear(struct table *t)
{
	if (t->count)
		memset(t->slot, 0, ((size_t)t->mask + 1) * sizeof(*t->slot));
	t->count = 0;
	t->free = NULL;
	arena_reset(&t->mem);
}

/* Backward-shift deletion keeps probe sequences unbroken. */
static void remove_at(struct table *t, uint32_t i)
{
	uint32_t j = i;

	t->slot[i] = NULL;
	for (;;) {
		j = (j + 1) & t->mask;
		struct tentry *e = t->slot[j];
		if (!e)
			return;
		uint32_t home = (uint32_t)e->hash & t->mask;
		/* move e back to i if i lies between its home and j (cyclically) */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			t->slot[i] = e;
			t->slot[j] = NULL;
			i = j;
		}
	}
}

static struct tentry *evict_one(struct table *t, uint64_t hash)
{
	/* the least recently seen among a few entries in insertion order
	 * around a pseudo-random point: O(1), close to LRU in practice */
	uint32_t start = (uint32_t)(hash >> 32) % t->count, victim = start;
	for (uint32_t k = 1; k < 8 && k < t->count; k++) {
		uint32_t idx = (start + k) % t->count;
		if (*tentry_seen(t->order[idx]) < *tentry_seen(t->order[victim]))
			victim = idx;
	}
	struct tentry *e = t->order[victim];
	uint32_t i = (uint32_t)e->hash & t->mask;
	while (t->slot[i] != e)
		i = (i + 1) & t->mask;
	remove_at(t, i);
	/* keep insertion order dense: the last entry takes the victim's place */
	t->order[victim] = t->order[--t->count];
	t->order[victim]->order = victim;
	t->evictions++;
	return e;
}

void table_remove(struct table *t, struct tentry *e)
{
	uint32_t i = (uint32_t)e->hash & t->mask;

	while (t->slot[i] != e)
		i = (i + 1) & t->mask;
	remove_at(t, i);
	uint32_t at = e->order;
	t->order[at] = t->order[--t->count];
	t->order[at]->order = at;
	/* the next free entry is kept where the entry's hash was */
	memcpy(&e->hash, &t->free, sizeof(t->free));
	t->free = e;
}

/* table_get and table_get_hashed, inlined in both: the hot path of every
 * rule with keys pays for no extra call. */
static inline __attribute__((always_inline)) struct tentry *
get(struct table *t, const void *key, size_t len, uint64_t h, uint64_t now, bool evict_lru,
    bool *created)
{
	uint32_t i = (uint32_t)h & t->mask;

	*created = false;
	if (len > t->key_max)
		len = t->key_max;
	for (struct tentry *e; (e = t->slot[i]) != NULL; i = (i + 1) & t->mask) {
		if (e->hash == h && e->keylen == len && memcmp(tentry_key(t, e), key, len) == 0) {
			if (t->evicts)
				*tentry_seen(e) = now;
			return e;
		}
	}
	struct tentry *e;
	if (t->count >= t->max) {
		if (!evict_lru || !t->evicts) {
			t->overflows++;
			return NULL;
		}
		e = evict_one(t, h);
		/* the slot found above may have moved: probe again */
		i = (uint32_t)h & t->mask;
		while (t->slot[i])
			i = (i + 1) & t->mask;
	} else if (t->free) {
		e = t->free;    /* removed: entry_size, as every entry of its table */
		memcpy(&t->free, &e->hash, sizeof(t->free));
	} else {
		uint8_t *m = arena_alloc(&t->mem, t->evicts ? sizeof(uint64_t) + t->entry_size :
					 sizeof(struct tentry) + t->state_size + len);
		if (!m) {
			t->overflows++;
			return NULL;
		}
		e = (struct tentry *)(void *)(t->evicts ? m + sizeof(uint64_t) : m);
	}
	memset(e, 0, sizeof(*e) + t->state_size);
	e->hash = h;
	e->keylen = (uint32_t)len;
	if (t->evicts)
		*tentry_seen(e) = now;
	e->order = t->count;
	memcpy(tentry_key(t, e), key, len);
	t->slot[i] = e;
	t->order[t->count++] = e;
	*created = true;
	return e;
}

struct tentry *table_get(struct table *t, const void *key, size_t len, uint64_t now,
			 bool evict_lru, bool *created)
{
	return get(t, key, len, table_hash(key, len), now, evict_lru, created);
}

struct tentry *table_get_hashed(struct table *t, const void *key, size_t len, uint64_t h,
				uint64_t now, bool evict_lru, bool *created)
{
	return get(t, key, len, h, now, evict_lru, created);
}

struct tentry *table_find_hashed(const struct table *t, const void *key, size_t len, uint64_t h)
{
	if (len > t->key_max)
		len = t->key_max;
	for (uint32_t i = (uint32_t)h & t->mask; t->slot[i]; i = (i + 1) & t->mask) {
		struct tentry *e = t->slot[i];
		if (e->hash == h && e->keylen == len &&
		    memcmp((const uint8_t *)e + sizeof(struct tentry) + t->state_size, key, len) == 0)
			return e;
	}
	return NULL;
}
