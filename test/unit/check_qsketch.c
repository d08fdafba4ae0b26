/*
 * check_qsketch.c - the quantile sketch: exact for small groups, within
 * 1/32 of a true sample value past that (on both sides of 0), clamped to
 * [min, max], merging
 * two sketches equals adding everything to one, and memory grows with
 * what a sketch holds (nothing for two values, a narrow range of
 * counters for values close together).
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "../../src/filters/qsketch.h"
#include "testlib.h"

/* The sketch's blocks, freed at the end of each test (as an arena is). */
static void *blocks[4096];
static size_t nblocks, allocated;

static void *alloc(void *ctx, size_t n)
{
	(void)ctx;
	ck_assert_uint_lt(nblocks, sizeof(blocks) / sizeof(blocks[0]));
	allocated += n;
	return blocks[nblocks++] = calloc(1, n);
}

static void free_blocks(void)
{
	while (nblocks)
		free(blocks[--nblocks]);
	allocated = 0;
}

/* Fails on any allocation: a sketch must stay as it was. */
static void *no_alloc(void *ctx, size_t n)
{
	(void)ctx;
	(void)n;
	return NULL;
}

static int64_t true_rank(int64_t *v, size_t n, double q)
{
	/* nearest rank over sorted values */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
			int64_t t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	size_t r = (size_t)ceil(q * (double)n);
	return v[(r ? r : 1) - 1];
}

START_TEST(small_groups_are_exact)
{
	struct qsketch q = { 0 };
	int64_t vals[] = { 1163, 1480, 2231 };

	for (unsigned i = 0; i < 2; i++)
		ck_assert_int_eq(qs_add(&q, vals[i], alloc, NULL), 0);
	ck_assert_uint_eq(allocated, 0);        /* two values: in the struct */
	ck_assert_uint_eq(qs_quantile(&q, 0.5), 1163);
	ck_assert_uint_eq(qs_quantile(&q, 1.0), 1480);
	ck_assert_int_eq(qs_add(&q, vals[2], alloc, NULL), 0);
	ck_assert(!qs_bucketed(&q));
	ck_assert_uint_eq(qs_quantile(&q, 0.5), 1480);
	ck_assert_uint_eq(qs_quantile(&q, 0.99), 2231);
	ck_assert_uint_eq(qs_quantile(&q, 0.0), 1163);
	ck_assert_uint_eq(qs_min(&q), 1163);
	ck_assert_uint_eq(qs_max(&q), 2231);
	/* up to QS_SMALL values stay exact, the next one goes into buckets */
	for (unsigned i = 3; i < QS_SMALL; i++)
		ck_assert_int_eq(qs_add(&q, 5000 + i, alloc, NULL), 0);
	ck_assert(!qs_bucketed(&q));
	ck_assert_uint_eq(qs_quantile(&q, 1.0), 5000 + QS_SMALL - 1);
	ck_assert_int_eq(qs_add(&q, 7, alloc, NULL), 0);
	ck_assert(qs_bucketed(&q));
	ck_assert_uint_eq(q.n, QS_SMALL + 1);
	ck_assert_uint_eq(qs_min(&q), 7);
	ck_assert_uint_eq(qs_quantile(&q, 0.0), 7);
	free_blocks();
}
END_TEST

/* Values close together take a few counters; the range widens as values
 * spread, up to every bucket, and a failed allocation changes nothing. */
START_TEST(counters_follow_the_range)
{
	struct qsketch q = { 0 };

	for (uint64_t i = 0; i < 1000; i++)
		ck_assert_int_eq(qs_add(&q, 1000 + i % 40, alloc, NULL), 0);
	ck_assert(qs_bucketed(&q));
	ck_assert_uint_le(qs_counters(&q), 16);
	size_t before = allocated;
	ck_assert_uint_eq(qs_quantile(&q, 0.5), qs_bucket_value(qs_bucket(1019)));

	/* out of range, no memory: refused, nothing changed */
	struct qsketch copy = q;
	ck_assert_int_eq(qs_add(&q, 1u << 30, no_alloc, NULL), -1);
	ck_assert_uint_eq(q.n, copy.n);
	ck_assert_uint_eq(qs_max(&q), 1039);
	ck_assert_uint_eq(qs_quantile(&q, 1.0), 1039);

	ck_assert_int_eq(qs_add(&q, 1u << 30, alloc, NULL), 0);
	ck_assert_int_eq(qs_add(&q, 0, alloc, NULL), 0);
	ck_assert_int_eq(qs_add(&q, INT64_MAX, alloc, NULL), 0);
	ck_assert_uint_le(qs_counters(&q), QS_BUCKETS);
	ck_assert_uint_gt(allocated, before);
	ck_assert_uint_eq(qs_quantile(&q, 0.0), 0);
	ck_assert_int_eq(qs_quantile(&q, 1.0), qs_bucket_value(qs_bucket(INT64_MAX)));
	ck_assert_uint_eq(qs_quantile(&q, 0.5), qs_bucket_value(qs_bucket(1019)));
	/* geometric growth: what was left behind is less than what is in use */
	ck_assert_uint_le(allocated, 2 * (qs_counters(&q) * sizeof(uint32_t)) + 512);
	/* and the other end: every bucket of both signs */
	ck_assert_int_eq(qs_add(&q, INT64_MIN, alloc, NULL), 0);
	ck_assert_uint_eq(qs_counters(&q), QS_BUCKETS);
	ck_assert_int_eq(qs_quantile(&q, 0.0), qs_bucket_value(qs_bucket(INT64_MIN)));
	ck_assert_int_eq(qs_min(&q), INT64_MIN);
	ck_assert_int_eq(qs_max(&q), INT64_MAX);
	free_blocks();
}
END_TEST

/* xorshift values in [-range, range) */
static int64_t next_signed(uint64_t *x, int64_t range)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return (int64_t)(*x % (uint64_t)(2 * range)) - range;
}

START_TEST(large_groups_within_one_32nd)
{
	/* values from 0 up, then values on both sides of 0 (differences) */
	const int64_t lows[] = { 0, -10000000 };
	const double qs[] = { 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99 };

	for (unsigned t = 0; t < 2; t++) {
		struct qsketch q = { 0 };
		int64_t copy[5000];
		uint64_t x = 88172645463325252ull;
		for (unsigned i = 0; i < 5000; i++) {
			copy[i] = lows[t] + (next_signed(&x, 5000000) + 5000000) * (t ? 2 : 1);
			ck_assert_int_eq(qs_add(&q, copy[i], alloc, NULL), 0);
		}
		ck_assert(qs_bucketed(&q));
		for (unsigned k = 0; k < sizeof(qs) / sizeof(qs[0]); k++) {
			int64_t want = true_rank(copy, 5000, qs[k]);
			int64_t got = qs_quantile(&q, qs[k]);
			ck_assert_msg((got < 0) == (want < 0) &&
				      fabs((double)got - (double)want) <= fabs((double)want) / 32,
				      "q%.2f: %lld vs %lld", qs[k], (long long)got, (long long)want);
		}
		ck_assert_int_le(qs_quantile(&q, 1.0), qs_max(&q));
		ck_assert_int_ge(qs_quantile(&q, 0.0), qs_min(&q));
		free_blocks();
	}
}
END_TEST

START_TEST(merge_equals_one_sketch)
{
	struct qsketch a = { 0 }, b = { 0 }, all = { 0 };

	for (int64_t i = 0; i < 300; i++) {
		int64_t v = i * 37 % 1000 - 400;
		qs_add(i % 3 ? &a : &b, v, alloc, NULL);
		qs_add(&all, v, alloc, NULL);
	}
	ck_assert_int_eq(qs_merge(&a, &b, alloc, NULL), 0);
	ck_assert_uint_eq(a.n, all.n);
	ck_assert_uint_eq(qs_min(&a), qs_min(&all));
	ck_assert_uint_eq(qs_max(&a), qs_max(&all));
	for (double q = 0.05; q < 1; q += 0.05)
		ck_assert_uint_eq(qs_quantile(&a, q), qs_quantile(&all, q));
	/* what a partial window carries (the view) merges to the same */
	struct qsketch back = { 0 };
	struct qs_view view;
	qs_view(&all, &view);
	ck_assert_ptr_nonnull(view.count);
	ck_assert_int_eq(qs_merge_view(&back, &view, alloc, NULL), 0);
	ck_assert_int_eq(qs_min(&back), -400);
	for (double q = 0.05; q < 1; q += 0.05)
		ck_assert_int_eq(qs_quantile(&back, q), qs_quantile(&all, q));
	/* two small ones stay small and exact */
	struct qsketch c = { 0 }, d = { 0 };
	qs_add(&c, 10, alloc, NULL);
	qs_add(&d, 20, alloc, NULL);
	qs_merge(&c, &d, alloc, NULL);
	ck_assert(!qs_bucketed(&c));
	ck_assert_uint_eq(qs_quantile(&c, 1.0), 20);
	free_blocks();
}
END_TEST

/* Every split of the same values, whatever stage each part is at (in the
 * struct, exact in a block, in buckets), merges to what one sketch of all
 * the values gives: the merged windows of several workers are the same
 * records as one worker's. */
START_TEST(merge_any_stage)
{
	const unsigned sizes[] = { 0, 1, 2, 3, 5, 8, 9, 30 };
	const unsigned ns = sizeof(sizes) / sizeof(sizes[0]);

	for (unsigned i = 0; i < ns; i++)
		for (unsigned j = 0; j < ns; j++) {
			struct qsketch a = { 0 }, b = { 0 }, all = { 0 };
			uint64_t x = 7 + i * 31 + j;
			for (unsigned k = 0; k < sizes[i] + sizes[j]; k++) {
				x = x * 6364136223846793005ull + 1442695040888963407ull;
				/* from -30 to 4999, so parts fall below 0 only */
				int64_t v = (int64_t)((x >> 33) % (k % 3 ? 5030 : 60)) - 30;
				ck_assert_int_eq(qs_add(k < sizes[i] ? &a : &b, v, alloc, NULL), 0);
				ck_assert_int_eq(qs_add(&all, v, alloc, NULL), 0);
			}
			ck_assert_int_eq(qs_merge(&a, &b, alloc, NULL), 0);
			ck_assert_uint_eq(a.n, all.n);
			ck_assert(qs_bucketed(&a) == qs_bucketed(&all));
			ck_assert_uint_eq(qs_min(&a), qs_min(&all));
			ck_assert_uint_eq(qs_max(&a), qs_max(&all));
			for (double q = 0; q <= 1.0; q += 0.05)
				ck_assert_msg(qs_quantile(&a, q) == qs_quantile(&all, q),
					      "%u+%u values, q%.2f", sizes[i], sizes[j], q);
			free_blocks();
		}
}
END_TEST

START_TEST(buckets)
{
	/* -32 .. 31 exact, each in its own bucket, in value order */
	for (int64_t v = -32; v < 32; v++) {
		ck_assert_int_eq(qs_bucket_value(qs_bucket(v)), v);
		ck_assert_uint_eq(qs_bucket(v), QS_HALF + v);
	}
	for (int64_t v = 32; v < INT64_MAX / 3; v = v * 3 / 2 + 1)
		for (int s = -1; s <= 1; s += 2) {
			int64_t r = qs_bucket_value(qs_bucket(s * v));
			ck_assert_msg(fabs((double)r - (double)(s * v)) / (double)v <= 1.0 / 32,
				      "%lld -> %lld", (long long)(s * v), (long long)r);
		}
	ck_assert_uint_eq(qs_bucket(INT64_MAX), QS_BUCKETS - 1);
	ck_assert_uint_eq(qs_bucket(INT64_MIN), 0);
	ck_assert_int_lt(qs_bucket_value(0), -(INT64_MAX / 32) * 31);
	/* neighbours: no value's bucket is below a smaller value's */
	unsigned last = 0;
	for (int64_t v = -70000; v < 70000; v++) {
		ck_assert_uint_ge(qs_bucket(v), last);
		last = qs_bucket(v);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("qsketch");
	TCase *tc = tcase_create("sketch");

	tcase_add_test(tc, small_groups_are_exact);
	tcase_add_test(tc, counters_follow_the_range);
	tcase_add_test(tc, merge_any_stage);
	tcase_add_test(tc, large_groups_within_one_32nd);
	tcase_add_test(tc, merge_equals_one_sketch);
	tcase_add_test(tc, buckets);
	suite_add_tcase(s, tc);
	return tl_run_suite(s);
}
