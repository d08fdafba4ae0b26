/*
 * table.h - the keyed state tables of the filters (query groups, event
 * delta keys, flow monitors): open addressing on a 64-bit hash of the key
 * bytes, entries carved from a region reserved at init and reused, so a
 * steady stream of packets allocates nothing (also the arenas of the
 * per-hop states). Bounded: at most `max` entries.
 * A table that evicts reuses removed entries, so its entries come in two
 * sizes, each on its own free list: room for a short key (TABLE_SHORT_KEY
 * bytes) or for the longest; one that does not (query groups, cleared each
 * window) sizes each entry by its key: a per-hop or string key may take
 * 260 bytes and is most often a tenth of that.
 */
#ifndef ISP_FILTERS_TABLE_H
#define ISP_FILTERS_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Bump allocator in 256 KiB blocks; reset keeps the blocks. */
struct arena {
	struct arena_block *head, *cur;
	size_t used;            /* in cur */
};

void *arena_alloc(struct arena *a, size_t n);   /* 8-byte aligned, zeroed */
/* The same as a callback (ctx is the arena), for modules that take one. */
void *arena_alloc_cb(void *ctx, size_t n);
void arena_reset(struct arena *a);
void arena_free(struct arena *a);

/*
 * An entry: its tag, then the caller's state (state_size bytes), then the
 * key bytes. In a table that evicts, the word before the entry is its last
 * use (tentry_seen) and the 4 bytes before that its position in insertion
 * order; query groups (a million of them) need neither.
 */
#define TABLE_SHORT_KEY 64
struct tentry {
	uint64_t tag;           /* the key's hash << 16 | the key's length */
};

#define TENTRY_KEY_MAX 0xffffu

static inline uint32_t tentry_keylen(const struct tentry *e)
{
	return (uint32_t)(e->tag & TENTRY_KEY_MAX);
}

/* Packet time of the entry's last use: tables that evict only. */
static inline uint64_t *tentry_seen(struct tentry *e)
{
	return (uint64_t *)(void *)e - 1;
}

/*
 * The entries live in one region reserved at init (max entries of the
 * largest size, address space only: a page is memory once written), so
 * a slot holds a 4-byte reference (the entry's offset in 8-byte units; 0:
 * empty) instead of an 8-byte pointer, as DPDK's rte_hash keeps key
 * indexes. At a load of at most one half, that halves the slot array.
 */
struct table {
	uint32_t *slot;         /* open addressing, capacity mask+1 */
	uint32_t cap_max;       /* the capacity max entries need, where growth stops */
	uint8_t *base;          /* the region */
	size_t reserved, used;  /* bytes of the region; used: in insertion order */
	uint32_t mask;
	uint32_t count, max;
	size_t state_size, key_max;
	/* a table that evicts: the sizes of its entries (with the 16 bytes
	 * before each), for a key of at most short_key bytes and for the
	 * longest; short_key 0: one size (keys are never longer) */
	size_t entry_size, short_size;
	uint32_t short_key;
	bool evicts;            /* table_get may evict */
	uint32_t *order;        /* a table that evicts: its entries, insertion order */
	uint32_t free, free_short;      /* removed entries of each size, for the next ones */
	uint64_t evictions, overflows;
};

/* -1: out of memory; -2: the region would pass 32 GiB (more than a
 * 4-byte reference reaches), too many entries of too long keys. */
int table_init(struct table *t, uint32_t max, size_t state_size, size_t key_max, bool evicts);
void table_free(struct table *t);
/* A table that holds few entries at a time (cleared and filled again
 * from the start: a batch's) keeps its region in small pages: a huge
 * page cost 2 MiB zeroed at its first entry (of 2 workers' run of 2M
 * packets, 3% of the samples went to zeroing 4 of them). */
void table_small_pages(struct table *t);

static inline void *tentry_state(struct tentry *e)
{
	return (uint8_t *)e + sizeof(struct tentry);
}

static inline uint8_t *tentry_key(const struct table *t, struct tentry *e)
{
	return (uint8_t *)e + sizeof(struct tentry) + t->state_size;
}

static inline struct tentry *table_entry(const struct table *t, uint32_t ref)
{
	return (struct tentry *)(void *)(t->base + ((size_t)ref << 3));
}

/* Entry k (< count) in insertion order of a table that evicts. */
static inline struct tentry *table_at(const struct table *t, uint32_t k)
{
	return table_entry(t, t->order[k]);
}

/* The entries of a table that does not evict, in insertion order: e NULL
 * for the first; NULL after the last. */
static inline struct tentry *table_next(const struct table *t, struct tentry *e)
{
	size_t at = e ? (size_t)((uint8_t *)e - t->base) +
		((sizeof(*e) + t->state_size + tentry_keylen(e) + 7) & ~(size_t)7) : 8;
	return at < t->used ? (struct tentry *)(void *)(t->base + at) : NULL;
}

uint64_t table_hash(const void *key, size_t len);

/*
 * Find the entry of a key, or insert it (state zeroed, *created = true).
 * When the table is full: with evict_lru (in a table made to evict), the
 * least recently seen entry of a small sample is replaced (counted in
 * evictions); otherwise NULL (counted in overflows). A key longer than
 * the table's longest is cut to it.
 */
struct tentry *table_get(struct table *t, const void *key, size_t len, uint64_t now,
			 bool evict_lru, bool *created);
/* The same with the caller's hash of the key: a table whose placement
 * does not show in any output (query groups) may use a cheaper one, as
 * long as every key of that table is hashed the same way. */
struct tentry *table_get_hashed(struct table *t, const void *key, size_t len, uint64_t h,
				uint64_t now, bool evict_lru, bool *created);

/* Whether two keys of len bytes are equal: 8 bytes at a time, the last 8
 * overlapping the ones before. Keys are most often 10 to 50 bytes, where
 * a call of memcmp cost more than the compare. */
static inline bool table_key_eq(const uint8_t *a, const uint8_t *b, size_t len)
{
	if (len < 8)
		return memcmp(a, b, len) == 0;
	uint64_t x, y, d = 0;
	for (size_t i = 0; i + 8 < len; i += 8) {
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		d |= x ^ y;
	}
	memcpy(&x, a + len - 8, 8);
	memcpy(&y, b + len - 8, 8);
	return (d | (x ^ y)) == 0;
}

/* The entry of a key hashed as the table's keys are (table_hash, or the
 * caller's for table_get_hashed), or NULL: nothing inserted, nothing
 * evicted, the last use left as it was. Inline: the hit that most packets
 * look up, without the call of table_get's insertion path. */
static inline struct tentry *table_find_hashed(const struct table *t, const void *key, size_t len,
					       uint64_t h)
{
	if (len > t->key_max)
		len = t->key_max;
	uint64_t tag = h << 16 | len;
	for (uint32_t i = (uint32_t)h & t->mask, r; (r = t->slot[i]) != 0; i = (i + 1) & t->mask) {
		struct tentry *e = table_entry(t, r);
		if (e->tag == tag && table_key_eq(tentry_key(t, e), key, len))
			return e;
	}
	return NULL;
}

/* Prefetching a lookup ahead of it: the key's slot, then (once that has
 * come) the entry the slot holds. Hints only: the table may change
 * before the lookup. */
static inline void table_prefetch_slot(const struct table *t, uint64_t h)
{
	__builtin_prefetch(&t->slot[(uint32_t)h & t->mask]);
}

static inline void table_prefetch_entry(const struct table *t, uint64_t h)
{
	uint32_t r = t->slot[(uint32_t)h & t->mask];

	if (r) {
		struct tentry *e = table_entry(t, r);
		__builtin_prefetch((const uint8_t *)e - 12, 1);        /* the words before */
		__builtin_prefetch(e, 1);                               /* the tag, the state */
		__builtin_prefetch(tentry_key(t, e));
	}
}

/* Remove one entry of an evicting table (its memory serves the next
 * insertion). The entry last in insertion order takes its place there, so
 * a caller walking table_at while removing walks from the end. */
void table_remove(struct table *t, struct tentry *e);
/* Remove every entry (the memory is kept). */
void table_clear(struct table *t);

#endif
