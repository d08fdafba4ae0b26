/*
 * check_qsketch.c - the quantile sketch: exact for small groups, within
 * 1/32 of a true sample value past that, clamped to [min, max], and
 * merging two sketches equals adding everything to one.
 */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "../../src/filters/qsketch.h"
#include "testlib.h"

static void *alloc(void *ctx, size_t n)
{
	(void)ctx;
	return calloc(1, n);    /* each test frees the buckets it made */
}

static uint64_t true_rank(uint64_t *v, size_t n, double q)
{
	/* nearest rank over sorted values */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
			uint64_t t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	size_t r = (size_t)ceil(q * (double)n);
	return v[(r ? r : 1) - 1];
}

START_TEST(small_groups_are_exact)
{
	struct qsketch q = { 0 };
	uint64_t vals[] = { 1163, 1480, 2231 };

	for (unsigned i = 0; i < 3; i++)
		ck_assert_int_eq(qs_add(&q, vals[i], alloc, NULL), 0);
	ck_assert_ptr_null(q.count);
	ck_assert_uint_eq(qs_quantile(&q, 0.5), 1480);
	ck_assert_uint_eq(qs_quantile(&q, 0.99), 2231);
	ck_assert_uint_eq(qs_quantile(&q, 0.0), 1163);
}
END_TEST

START_TEST(large_groups_within_one_32nd)
{
	struct qsketch q = { 0 };
	uint64_t v[5000], copy[5000];
	uint64_t x = 88172645463325252ull;

	for (unsigned i = 0; i < 5000; i++) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		v[i] = copy[i] = x % 10000000u;
		qs_add(&q, v[i], alloc, NULL);
	}
	ck_assert_ptr_nonnull(q.count);
	const double qs[] = { 0.5, 0.9, 0.99 };
	for (unsigned k = 0; k < 3; k++) {
		uint64_t want = true_rank(copy, 5000, qs[k]);
		uint64_t got = qs_quantile(&q, qs[k]);
		double err = fabs((double)got - (double)want) / (double)want;
		ck_assert_msg(err <= 1.0 / 32, "q%.2f: %llu vs %llu", qs[k],
			      (unsigned long long)got, (unsigned long long)want);
	}
	ck_assert_uint_le(qs_quantile(&q, 1.0), q.max);
	free(q.count);
}
END_TEST

START_TEST(merge_equals_one_sketch)
{
	struct qsketch a = { 0 }, b = { 0 }, all = { 0 };

	for (uint64_t i = 0; i < 300; i++) {
		uint64_t v = i * 37 % 1000 + 5;
		qs_add(i % 3 ? &a : &b, v, alloc, NULL);
		qs_add(&all, v, alloc, NULL);
	}
	ck_assert_int_eq(qs_merge(&a, &b, alloc, NULL), 0);
	ck_assert_uint_eq(a.n, all.n);
	ck_assert_uint_eq(a.min, all.min);
	ck_assert_uint_eq(a.max, all.max);
	for (double q = 0.05; q < 1; q += 0.05)
		ck_assert_uint_eq(qs_quantile(&a, q), qs_quantile(&all, q));
	/* two small ones stay small and exact */
	struct qsketch c = { 0 }, d = { 0 };
	qs_add(&c, 10, alloc, NULL);
	qs_add(&d, 20, alloc, NULL);
	qs_merge(&c, &d, alloc, NULL);
	ck_assert_ptr_null(c.count);
	ck_assert_uint_eq(qs_quantile(&c, 1.0), 20);
	free(a.count);
	free(b.count);
	free(all.count);
}
END_TEST

START_TEST(buckets)
{
	for (uint64_t v = 0; v < 32; v++)
		ck_assert_uint_eq(qs_bucket_value(qs_bucket(v)), v);
	for (uint64_t v = 32; v < 1000000; v = v * 3 / 2 + 1) {
		uint64_t r = qs_bucket_value(qs_bucket(v));
		ck_assert_msg(fabs((double)r - (double)v) / (double)v <= 1.0 / 32, "%llu -> %llu",
			      (unsigned long long)v, (unsigned long long)r);
	}
	ck_assert_uint_lt(qs_bucket(UINT64_MAX), QS_BUCKETS);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("qsketch");
	TCase *tc = tcase_create("sketch");

	tcase_add_test(tc, small_groups_are_exact);
	tcase_add_test(tc, large_groups_within_one_32nd);
	tcase_add_test(tc, merge_equals_one_sketch);
	tcase_add_test(tc, buckets);
	suite_add_tcase(s, tc);
	return tl_run_suite(s);
}
