/*
 * table.c - see table.h.
 */
#include "table.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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

/* The region's reach: 2^32 references of 8 bytes. */
#define REGION_MAX ((size_t)1 << 35)

static inline size_t round8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static inline uint32_t ref_of(const struct table *t, const struct tentry *e)
{
	return (uint32_t)(((const uint8_t *)e - t->base) >> 3);
}

/*
 * A table that evicts: the entry's position in `order`, before its last
 * use. So an entry (8-byte aligned) has 12 bytes before it, and the
 * region's first starts 12 bytes in (offset 0 is the empty slot's).
 */
#define EVICT_HEAD 12u

static inline uint32_t *pos_of(struct tentry *e)
{
	return (uint32_t *)(void *)((uint8_t *)e - EVICT_HEAD);
}

static inline size_t region_start(const struct table *t)
{
	return t->evicts ? EVICT_HEAD : 8;
}

/* A table that evicts: the free list of entries the size of one with a key
 * of len bytes. */
static inline uint32_t *free_list(struct table *t, size_t len)
{
	return t->short_key && len <= t->short_key ? &t->free_short : &t->free;
}

/*
 * The slot array grows with the entries (doubled when a quarter full), up to
 * the capacity `max` needs: a table allowed millions of keys that holds
 * thousands keeps its slots in the cache (a 4M-key bound had every lookup
 * miss twice in a 32 MiB array, half the time of a keyed event). Large
 * arrays ask for huge pages: a lookup is then no TLB miss either.
 */
#define SLOTS_FIRST 1024u

static uint32_t *slots_new(uint32_t cap)
{
	size_t bytes = (size_t)cap * sizeof(uint32_t);
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	if (bytes >= (2u << 20))
		madvise(p, bytes, MADV_HUGEPAGE);
	return p;
}

static void slots_free(uint32_t *slot, uint32_t cap)
{
	if (slot)
		munmap(slot, (size_t)cap * sizeof(uint32_t));
}

/* Double the slot array and place every entry again; false when out of
 * memory (the table then takes no key past half full). */
static bool grow(struct table *t)
{
	uint32_t cap = (t->mask + 1) * 2, mask = cap - 1;
	uint32_t *slot = slots_new(cap);

	if (!slot)
		return false;
	for (uint32_t i = 0; i <= t->mask; i++) {
		uint32_t r = t->slot[i];
		if (!r)
			continue;
		uint32_t j = (uint32_t)(table_entry(t, r)->tag >> 16) & mask;
		while (slot[j])
			j = (j + 1) & mask;
		slot[j] = r;
	}
	slots_free(t->slot, t->mask + 1);
	t->slot = slot;
	t->mask = mask;
	return true;
}

int table_init(struct table *t, uint32_t max, size_t state_size, size_t key_max, bool evicts)
{
	uint32_t cap = 16;

	memset(t, 0, sizeof(*t));
	if (key_max > TENTRY_KEY_MAX)
		key_max = TENTRY_KEY_MAX;
	t->max = max;
	t->state_size = round8(state_size);
	t->key_max = key_max;
	t->evicts = evicts;
	/* an entry that evicts: its position, its last use, the entry (its
	 * sizes multiples of 8, from 12 bytes in: every entry stays aligned) */
	size_t head = evicts ? EVICT_HEAD : 0;
	t->entry_size = round8(head + sizeof(struct tentry) + t->state_size + key_max);
	/* offset 0 is the empty slot's reference: the first 8 bytes stay unused */
	t->reserved = region_start(t) + (size_t)max * t->entry_size;
	/*
	 * Keys far shorter than the longest (a path of 3 hops under a bound
	 * of 32) get entries of their own size: 4 to 10 times fewer bytes to
	 * miss in. Each size has its free list, and entries of a size are
	 * only ever as many as the most keys of that size held at once, so
	 * max of each bounds the region; past the region's reach, one size.
	 */
	if (evicts && key_max > 2 * TABLE_SHORT_KEY) {
		size_t short_size = round8(head + sizeof(struct tentry) + t->state_size +
					   TABLE_SHORT_KEY);
		size_t both = region_start(t) + (size_t)max * (t->entry_size + short_size);
		if (both <= REGION_MAX) {
			t->short_key = TABLE_SHORT_KEY;
			t->short_size = short_size;
			t->reserved = both;
		}
	}
	if (t->reserved > REGION_MAX)
		return -2;
	while (cap < max * 2u && cap < (1u << 30))
		cap <<= 1;
	t->cap_max = cap;
	if (cap > SLOTS_FIRST)
		cap = SLOTS_FIRST;
	t->slot = slots_new(cap);
	t->mask = cap - 1;
	/* mapped, as the region: pages only as entries come (calloc zeroed
	 * 16 MiB up front for 4M keys, and each worker's table and the
	 * merger's have one) */
	if (evicts) {
		void *o = mmap(NULL, (size_t)max * sizeof(*t->order), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		t->order = o == MAP_FAILED ? NULL : o;
	}
	t->base = mmap(NULL, t->reserved, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (t->base == MAP_FAILED)
		t->base = NULL;
	else
		madvise(t->base, t->reserved, MADV_HUGEPAGE);
	if (!t->slot || (evicts && !t->order) || !t->base) {
		table_free(t);
		return -1;
	}
	t->used = region_start(t);
	return 0;
}

void table_free(struct table *t)
{
	if (t->slot)
		slots_free(t->slot, t->mask + 1);
	if (t->order)
		munmap(t->order, (size_t)t->max * sizeof(*t->order));
	if (t->base)
		munmap(t->base, t->reserved);
	memset(t, 0, sizeof(*t));
}

void table_small_pages(struct table *t)
{
	if (t->base)
		madvise(t->base, t->reserved, MADV_NOHUGEPAGE);
}

void table_clear(struct table *t)
{
	if (t->count)
		memset(t->slot, 0, ((size_t)t->mask + 1) * sizeof(*t->slot));
	t->count = 0;
	t->free = t->free_short = 0;
	t->used = region_start(t);
}

/* Backward-shift deletion keeps probe sequences unbroken. */
static void remove_at(struct table *t, uint32_t i)
{
	uint32_t j = i;

	t->slot[i] = 0;
	for (;;) {
		j = (j + 1) & t->mask;
		uint32_t r = t->slot[j];
		if (!r)
			return;
		uint32_t home = (uint32_t)(table_entry(t, r)->tag >> 16) & t->mask;
		/* move it back to i if i lies between its home and j (cyclically) */
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			t->slot[i] = r;
			t->slot[j] = 0;
			i = j;
		}
	}
}

static uint32_t slot_of(const struct table *t, struct tentry *e)
{
	uint32_t r = ref_of(t, e), i = (uint32_t)(e->tag >> 16) & t->mask;

	while (t->slot[i] != r)
		i = (i + 1) & t->mask;
	return i;
}

/* Take entry `at` out of insertion order: the last one takes its place. */
static void unorder(struct table *t, uint32_t at)
{
	t->order[at] = t->order[--t->count];
	*pos_of(table_at(t, at)) = at;
}

static struct tentry *evict_one(struct table *t, uint64_t hash)
{
	/* the least recently seen among a few entries in insertion order
	 * around a pseudo-random point: O(1), close to LRU in practice */
	uint32_t start = (uint32_t)(hash >> 32) % t->count, victim = start;
	for (uint32_t k = 1; k < 8 && k < t->count; k++) {
		uint32_t idx = (start + k) % t->count;
		if (*tentry_seen(table_at(t, idx)) < *tentry_seen(table_at(t, victim)))
			victim = idx;
	}
	struct tentry *e = table_at(t, victim);
	t->evictions++;
	return e;
}

void table_remove(struct table *t, struct tentry *e)
{
	uint32_t *fl = free_list(t, tentry_keylen(e));

	remove_at(t, slot_of(t, e));
	unorder(t, *pos_of(e));
	/* the next free entry is kept in the tag */
	e->tag = *fl;
	*fl = ref_of(t, e);
}

/* Where a new key of hash h goes. */
static inline uint32_t empty_slot(const struct table *t, uint64_t h)
{
	uint32_t i = (uint32_t)h & t->mask;

	while (t->slot[i])
		i = (i + 1) & t->mask;
	return i;
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
	uint64_t tag = h << 16 | len;
	for (uint32_t r; (r = t->slot[i]) != 0; i = (i + 1) & t->mask) {
		struct tentry *e = table_entry(t, r);
		if (e->tag == tag && table_key_eq(tentry_key(t, e), key, len)) {
			if (t->evicts)
				*tentry_seen(e) = now;
			return e;
		}
	}
	if (t->count < t->max && t->mask + 1 < t->cap_max &&
	    4 * ((uint64_t)t->count + 1) > (uint64_t)t->mask + 1) {
		/* a quarter full: grow (fewer collisions, each a miss on an
		 * entry), then find the new entry's slot again */
		if (grow(t)) {
			i = empty_slot(t, h);
		} else if (2 * ((uint64_t)t->count + 1) > (uint64_t)t->mask + 1) {
			t->overflows++;         /* no memory to grow: at most half full */
			return NULL;
		}
	}
	struct tentry *e;
	if (t->count >= t->max) {
		if (!evict_lru || !t->evicts) {
			t->overflows++;
			return NULL;
		}
		table_remove(t, evict_one(t, h));
		i = empty_slot(t, h);   /* the one found above may have moved */
	}
	uint32_t *fl = t->evicts ? free_list(t, len) : NULL;
	if (fl && *fl) {
		e = table_entry(t, *fl);        /* removed, of this size */
		*fl = (uint32_t)e->tag;
	} else {
		/* the region has room: at most max entries of each size */
		size_t size = !t->evicts ? round8(sizeof(*e) + t->state_size + len) :
			      fl == &t->free_short ? t->short_size : t->entry_size;
		e = (struct tentry *)(void *)(t->base + t->used + (t->evicts ? EVICT_HEAD : 0));
		t->used += size;
	}
	memset(e, 0, sizeof(*e) + t->state_size);
	e->tag = tag;
	memcpy(tentry_key(t, e), key, len);
	if (t->evicts) {
		*tentry_seen(e) = now;
		*pos_of(e) = t->count;
		t->order[t->count] = ref_of(t, e);
	}
	t->slot[i] = ref_of(t, e);
	t->count++;
	*created = true;
	return e;
}

struct tentry *table_get(struct table *t, const void *key, size_t len, uint64_t now,
			 bool evict_lru, bool *created)
{
	if (len > t->key_max)
		len = t->key_max;       /* hashed as it is kept */
	return get(t, key, len, table_hash(key, len), now, evict_lru, created);
}

struct tentry *table_get_hashed(struct table *t, const void *key, size_t len, uint64_t h,
				uint64_t now, bool evict_lru, bool *created)
{
	return get(t, key, len, h, now, evict_lru, created);
}
