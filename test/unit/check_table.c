/*
 * check_table.c - the keyed state tables (src/filters/table.c) against a
 * plain model: every key inserted is found with its state, until removed
 * or evicted; a table that does not evict walks its entries in insertion
 * order and refuses one past max; a table that evicts keeps max entries,
 * replaces one it was sampling, and removes entries anywhere with probe
 * sequences left whole (backward-shift deletion, the free list); keys
 * longer than the table's longest are cut the same way each time; the
 * slot array grows with the entries, up to what max needs; a
 * table past the region's 32 GiB is refused.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/filters/table.h"
#include "testlib.h"

/* Key i: 4 to 40 bytes, all distinct (the index leads); with long_keys,
 * every third one 65 to 264 bytes (past a short entry's room). */
static bool long_keys;

static size_t key_of(uint32_t i, uint8_t *k)
{
	size_t len = long_keys && i % 3 == 0 ? 65 + i % 200 : 4 + i % 37;

	memcpy(k, &i, 4);
	for (size_t b = 4; b < len; b++)
		k[b] = (uint8_t)(i * 31 + b);
	return len;
}

static struct tentry *put(struct table *t, uint32_t i, uint64_t now, bool *created)
{
	uint8_t k[300];
	size_t len = key_of(i, k);

	return table_get(t, k, len, now, true, created);
}

static struct tentry *find(const struct table *t, uint32_t i)
{
	uint8_t k[300];
	size_t len = key_of(i, k);

	return table_find_hashed(t, k, len, table_hash(k, len));
}

START_TEST(grouping_table_in_insertion_order)
{
	struct table t;
	const uint32_t max = 5000;
	bool created;

	ck_assert_int_eq(table_init(&t, max, 12, 40, false), 0);
	for (int round = 0; round < 2; round++) {
		for (uint32_t i = 0; i < max; i++) {
			struct tentry *e = put(&t, i * 7 + (uint32_t)round, 0, &created);
			ck_assert_ptr_nonnull(e);
			ck_assert(created);
			memcpy(tentry_state(e), &i, 4);
		}
		/* again: the same entries */
		for (uint32_t i = 0; i < max; i++) {
			struct tentry *e = put(&t, i * 7 + (uint32_t)round, 0, &created);
			ck_assert(!created);
			ck_assert_mem_eq(tentry_state(e), &i, 4);
			ck_assert_ptr_eq(find(&t, i * 7 + (uint32_t)round), e);
		}
		ck_assert_ptr_null(put(&t, 999999, 0, &created));
		ck_assert_uint_eq(t.overflows, (uint64_t)round + 1);
		ck_assert_ptr_null(find(&t, 999999));
		uint32_t n = 0;
		for (struct tentry *e = NULL; (e = table_next(&t, e)) != NULL; n++) {
			uint8_t k[64];
			size_t len = key_of(n * 7 + (uint32_t)round, k);
			ck_assert_uint_eq(tentry_keylen(e), len);
			ck_assert_mem_eq(tentry_key(&t, e), k, len);
			ck_assert_mem_eq(tentry_state(e), &n, 4);
		}
		ck_assert_uint_eq(n, max);
		table_clear(&t);
		ck_assert_ptr_null(table_next(&t, NULL));
		ck_assert_ptr_null(find(&t, (uint32_t)round));
	}
	table_free(&t);
}
END_TEST

/* Random inserts, lookups and removals in a table that evicts, checked
 * against which keys the model says are in. */
START_TEST(evicting_table_against_a_model)
{
	enum { MAX = 300, KEYS = 1000 };
	static bool in[KEYS];
	struct table t;
	bool created;
	uint32_t seed = 12345;

	/* _i 0: keys of one size; 1: short and long keys, entries of two
	 * sizes on two free lists */
	long_keys = _i == 1;
	memset(in, 0, sizeof(in));
	ck_assert_int_eq(table_init(&t, MAX, 8, long_keys ? 268 : 40, true), 0);
	ck_assert_uint_eq(t.short_key, long_keys ? TABLE_SHORT_KEY : 0);
	for (uint32_t step = 1; step <= 200000; step++) {
		seed = seed * 1103515245u + 12345u;
		uint32_t i = (seed >> 8) % KEYS;
		if ((seed >> 28) < 3 && in[i]) {
			table_remove(&t, find(&t, i));
			in[i] = false;
		} else {
			uint64_t before = t.evictions;
			struct tentry *e = put(&t, i, step, &created);
			ck_assert_ptr_nonnull(e);
			ck_assert(created == !in[i]);
			if (created)
				memcpy(tentry_state(e), &i, 4);
			if (t.evictions != before) {
				/* the victim is the one key of the model no longer found */
				unsigned gone = 0;
				for (uint32_t k = 0; k < KEYS; k++)
					if (in[k] && k != i && !find(&t, k)) {
						in[k] = false;
						gone++;
					}
				ck_assert_uint_eq(gone, 1);
			}
			in[i] = true;
			ck_assert_uint_eq(*tentry_seen(e), step);
		}
		if (step % 997 == 0 || step < 2000) {
			uint32_t n = 0;
			for (uint32_t k = 0; k < KEYS; k++) {
				struct tentry *e = find(&t, k);
				ck_assert(!e == !in[k]);
				if (e) {
					ck_assert_mem_eq(tentry_state(e), &k, 4);
					n++;
				}
			}
			ck_assert_uint_eq(n, t.count);
			ck_assert_uint_le(t.count, MAX);
			ck_assert_uint_le(t.used, t.reserved);
			/* insertion order holds every entry once */
			for (uint32_t k = 0; k < t.count; k++) {
				uint32_t key;
				memcpy(&key, tentry_key(&t, table_at(&t, k)), 4);
				ck_assert(in[key]);
			}
		}
	}
	ck_assert_uint_gt(t.evictions, 0);
	if (long_keys) {
		/* a short key's entry is its own size: far less than the region
		 * one size for all would have taken */
		ck_assert_uint_lt(t.short_size, t.entry_size / 2);
		ck_assert_uint_le(t.used, 8 + (size_t)MAX * (t.entry_size + t.short_size));
	}
	long_keys = false;
	table_free(&t);
}
END_TEST

/* Eviction takes the least recently used of the entries it samples: a
 * key used at every step survives a stream of new keys. */
START_TEST(eviction_spares_a_busy_key)
{
	struct table t;
	bool created;

	ck_assert_int_eq(table_init(&t, 64, 8, 40, true), 0);
	for (uint32_t i = 1; i <= 10000; i++) {
		ck_assert_ptr_nonnull(put(&t, 0, 2 * i, &created));
		ck_assert(i == 1 ? created : !created);
		ck_assert_ptr_nonnull(put(&t, i, 2 * i + 1, &created));
	}
	ck_assert_uint_eq(t.count, 64);
	ck_assert_uint_eq(t.evictions, 10000 + 1 - 64);
	table_free(&t);
}
END_TEST

/* The slot array starts small and grows as entries come (a table that
 * may hold millions of keys and holds thousands stays in the cache):
 * every key is found after each doubling, removals keep probe sequences
 * whole in a grown table, and growth stops at the capacity max needs,
 * where eviction takes over. */
START_TEST(slots_grow_with_the_entries)
{
	enum { KEYS = 60000 };
	struct table t;
	bool created;

	for (int evicts = 0; evicts < 2; evicts++) {
		ck_assert_int_eq(table_init(&t, 4000000, 8, 40, evicts), 0);
		ck_assert_uint_eq(t.mask + 1, 1024);
		for (uint32_t i = 0; i < KEYS; i++) {
			struct tentry *e = put(&t, i, i, &created);
			ck_assert_ptr_nonnull(e);
			ck_assert(created);
			memcpy(tentry_state(e), &i, 4);
			ck_assert_uint_ge(t.mask + 1, 4 * t.count);
		}
		ck_assert_uint_lt(t.mask + 1, 16 * KEYS);      /* not sized by max */
		if (evicts)     /* every third key out, anywhere in the grown table */
			for (uint32_t i = 0; i < KEYS; i += 3)
				table_remove(&t, find(&t, i));
		for (uint32_t i = 0; i < KEYS; i++) {
			struct tentry *e = find(&t, i);
			if (evicts && i % 3 == 0) {
				ck_assert_ptr_null(e);
				continue;
			}
			ck_assert_ptr_nonnull(e);
			ck_assert_mem_eq(tentry_state(e), &i, 4);
		}
		table_free(&t);
	}
	/* up to max: growth stops at twice max, eviction goes on */
	ck_assert_int_eq(table_init(&t, 5000, 8, 40, true), 0);
	for (uint32_t i = 0; i < 20000; i++)
		ck_assert_ptr_nonnull(put(&t, i, i, &created));
	ck_assert_uint_eq(t.count, 5000);
	ck_assert_uint_eq(t.mask + 1, 16384);
	ck_assert_uint_eq(t.evictions, 15000);
	for (uint32_t i = 0, n = 0; i < 20000; i++) {
		n += find(&t, i) != NULL;
		if (i == 19999)
			ck_assert_uint_eq(n, 5000);
	}
	table_free(&t);
	/* a grouping table cleared keeps its grown slots, and refills */
	ck_assert_int_eq(table_init(&t, 1000000, 8, 40, false), 0);
	for (int round = 0; round < 2; round++) {
		for (uint32_t i = 0; i < 10000; i++)
			ck_assert_ptr_nonnull(put(&t, i + 7u * round, 0, &created));
		for (uint32_t i = 0; i < 10000; i++)
			ck_assert_ptr_nonnull(find(&t, i + 7u * round));
		table_clear(&t);
		ck_assert_uint_eq(t.count, 0);
		ck_assert_ptr_null(find(&t, 1));
	}
	table_free(&t);
}
END_TEST

START_TEST(long_keys_are_cut_the_same_way)
{
	struct table t;
	uint8_t a[100], b[100];
	bool created;

	memset(a, 7, sizeof(a));
	memcpy(b, a, sizeof(b));
	b[99] = 8;      /* differs past the cut: the same entry */
	ck_assert_int_eq(table_init(&t, 16, 8, 32, false), 0);
	struct tentry *e = table_get(&t, a, sizeof(a), 0, false, &created);
	ck_assert(created);
	ck_assert_uint_eq(tentry_keylen(e), 32);
	ck_assert_ptr_eq(table_get(&t, b, sizeof(b), 0, false, &created), e);
	ck_assert(!created);
	table_free(&t);
}
END_TEST

START_TEST(region_past_its_reach_is_refused)
{
	struct table t;

	/* 2^26 entries of 8 + 600 bytes: 38 GiB */
	ck_assert_int_eq(table_init(&t, 1u << 26, 600, 0, false), -2);
	ck_assert_int_eq(table_init(&t, 1u << 26, 600, 0, true), -2);
	/* 2^26 of 8 + 496: 31.5 GiB of address space, nothing written */
	ck_assert_int_eq(table_init(&t, 1u << 26, 496, 0, false), 0);
	table_free(&t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("table");
	TCase *tc = tcase_create("table");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, grouping_table_in_insertion_order);
	tcase_add_loop_test(tc, evicting_table_against_a_model, 0, 2);
	tcase_add_test(tc, eviction_spares_a_busy_key);
	tcase_add_test(tc, slots_grow_with_the_entries);
	tcase_add_test(tc, long_keys_are_cut_the_same_way);
	tcase_add_test(tc, region_past_its_reach_is_refused);
	suite_add_tcase(s, tc);
	return tl_run_suite(s);
}
