/*
 * table.h - the keyed state tables of the filters (query groups, event
 * delta keys): open addressing on a 64-bit hash of the key bytes, fixed
 * entry size, entries carved from big blocks and reused, so a steady
 * stream of packets allocates nothing. Bounded: at most `max` entries.
 * A table that evicts reuses an evicted entry in place, so its entries
 * have room for the longest key; one that does not (query groups, cleared
 * each window) sizes each entry by its key: a per-hop or string key may
 * take 260 bytes and is most often a tenth of that.
 */
#ifndef ISP_FILTERS_TABLE_H
#define ISP_FILTERS_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

struct tentry {
	uint64_t hash;
	uint32_t keylen;
	uint32_t order;         /* position in insertion order */
	/* then: the caller's state (state_size bytes), then the key bytes;
	 * in a table that evicts, the word before the entry is its last use
	 * (tentry_seen): query groups (a million of them) need none */
};

/* Packet time of the entry's last use: tables that evict only. */
static inline uint64_t *tentry_seen(struct tentry *e)
{
	return (uint64_t *)(void *)e - 1;
}

struct table {
	struct tentry **slot;   /* open addressing, capacity mask+1 */
	uint32_t mask;
	uint32_t count, max;
	size_t state_size, key_max, entry_size;   /* entry_size: with key_max */
	bool evicts;            /* table_get may evict: entries of entry_size */
	struct tentry **order;  /* insertion order (for deterministic output) */
	struct arena mem;       /* entries (an evicted entry is reused in place) */
	struct tentry *free;    /* removed entries, for the next insertions */
	uint64_t evictions, overflows;
};

int table_init(struct table *t, uint32_t max, size_t state_size, size_t key_max, bool evicts);
void table_free(struct table *t);

static inline void *tentry_state(struct tentry *e)
{
	return (uint8_t *)e + sizeof(struct tentry);
}

static inline uint8_t *tentry_key(struct table *t, struct tentry *e)
{
	return (uint8_t *)e + sizeof(struct tentry) + t->state_size;
}

uint64_t table_hash(const void *key, size_t len);

/*
 * Find the entry of a key, or insert it (state zeroed, *created = true).
 * When the table is full: with evict_lru (in a table made to evict), the
 * least recently seen entry of a small sample is replaced (counted in
 * evictions); otherwise NULL (counted in overflows).
 */
struct tentry *table_get(struct table *t, const void *key, size_t len, uint64_t now,
			 bool evict_lru, bool *created);
/* The same with the caller's hash of the key: a table whose placement
 * does not show in any output (query groups) may use a cheaper one, as
 * long as every key of that table is hashed the same way. */
struct tentry *table_get_hashed(struct table *t, const void *key, size_t len, uint64_t h,
				uint64_t now, bool evict_lru, bool *created);

/* The entry of a key hashed by table_hash, or NULL: nothing inserted,
 * nothing evicted, the last use left as it was. */
struct tentry *table_find_hashed(const struct table *t, const void *key, size_t len, uint64_t h);

/* Remove one entry of an evicting table (its memory serves the next
 * insertion). The entry last in insertion order takes its place there, so
 * a caller walking `order` while removing walks it from the end. */
void table_remove(struct table *t, struct tentry *e);
/* Remove every entry (the memory is kept). */
void table_clear(struct table *t);

#endif
