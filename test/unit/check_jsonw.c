/*
 * check_jsonw.c - the record writers' decimal numbers (jsonw_utoa and its
 * pieces) against a digit-by-digit reference: every value of the fixed
 * 8-digit chunk, every power of ten and of two and their neighbours up to
 * UINT64_MAX, and pseudo-random values of every length; jsonw_utoa_top on
 * all of them in turn and on timestamp-like runs that cross its top part.
 * jsonw_g15 against the C library's "%.15g": random bit patterns, random
 * values of every decade, whole numbers, exact ties and the neighbours of
 * every power of ten.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#include "../../src/core/jsonw.h"
#include "testlib.h"

/* The reference: digits from the back, one division each. */
static size_t ref_utoa(uint64_t v, char *out)
{
	char tmp[JSONW_U64_MAX];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

/* One top part for every check, kept from number to number as a record
 * writer keeps it (zeroed, as in a writer's zeroed memory). */
static struct jsonw_top top;

static void check_text(uint64_t v, const char *want, size_t wn, bool through_top)
{
	char got[JSONW_U64_MAX + 8];

	memset(got, '#', sizeof(got));
	size_t gn = through_top ? jsonw_utoa_top(v, got, &top) : jsonw_utoa(v, got);
	if (gn != wn || memcmp(got, want, wn) != 0) {
		got[gn < sizeof(got) ? gn : sizeof(got) - 1] = 0;
		ck_abort_msg("%llu written as \"%s\" (%zu characters)%s",
			     (unsigned long long)v, got, gn, through_top ? " through top" : "");
	}
}

static void same_as_ref(uint64_t v)
{
	char want[JSONW_U64_MAX + 1];
	size_t wn = ref_utoa(v, want);

	want[wn] = 0;
	check_text(v, want, wn, false);
	check_text(v, want, wn, true);
	check_text(v, want, wn, true);  /* the top part v left */
}

/* The 8 digits below a 64-bit number's top part, leading zeros kept. */
START_TEST(fixed_eight_digits_every_value)
{
	char got[8], want[9];

	for (uint32_t v = 0; v < 100000000u; v++) {
		jsonw_put8(got, v);
		/* the reference's digits, zero-padded, compared only where a
		 * digit could differ from the previous value's */
		if (v % 100 == 0 || v < 100) {
			uint32_t x = v;
			for (int i = 7; i >= 0; i--, x /= 10)
				want[i] = (char)('0' + x % 10);
		} else {
			want[6] = (char)('0' + v % 100 / 10);
			want[7] = (char)('0' + v % 10);
		}
		if (memcmp(got, want, 8) != 0) {
			want[8] = 0;
			ck_abort_msg("%u written as %.8s, not %s", v, got, want);
		}
	}
}
END_TEST

START_TEST(powers_and_neighbours)
{
	uint64_t p = 1;

	for (int k = 0; k < 20; k++, p *= 10) {
		same_as_ref(p);
		same_as_ref(p - 1);
		same_as_ref(p + 1);
		same_as_ref(p * 2 - 1);
		same_as_ref(p * 5);
		same_as_ref(p * 9 + (p - 1));        /* all nines */
	}
	for (int k = 0; k < 64; k++) {
		uint64_t b = UINT64_C(1) << k;
		same_as_ref(b);
		same_as_ref(b - 1);
		same_as_ref(b + 1);
	}
	same_as_ref(UINT64_MAX);
	same_as_ref(UINT64_MAX - 1);
	same_as_ref(UINT32_MAX);
	same_as_ref((uint64_t)UINT32_MAX + 1);
	/* where the top part's own writer changes: 10^8 · 2^32 and past */
	same_as_ref(UINT64_C(429496729600000000) - 1);
	same_as_ref(UINT64_C(429496729600000000));
	same_as_ref(UINT64_C(429496729599999999) + 100000000u);
}
END_TEST

/* Nanosecond timestamps a few microseconds apart, up and down, across
 * the top parts' boundaries (multiples of 10^8) and back. */
START_TEST(top_across_boundaries)
{
	const uint64_t bases[] = { UINT64_C(172615600000000), (uint64_t)UINT32_MAX + 1,
				   UINT64_C(1700000000000000000), UINT64_C(429496729600000000),
				   UINT64_MAX - 200000000u };
	uint64_t x = 12345;

	for (size_t b = 0; b < sizeof(bases) / sizeof(bases[0]); b++) {
		uint64_t edge = bases[b] / 100000000u * 100000000u;
		for (int i = 0; i < 20000; i++) {
			x = x * UINT64_C(6364136223846793005) + 1442695040888963407u;
			uint64_t d = (x >> 40) % 20000;
			uint64_t v = x >> 63 ? edge + d : edge - 1 - d;
			if (v > (uint64_t)UINT32_MAX)
				same_as_ref(v);
		}
		same_as_ref(edge);
		same_as_ref(edge - 1);
		same_as_ref(edge + 99999999u);
		same_as_ref(edge + 100000000u);
	}
}
END_TEST

START_TEST(every_length_random)
{
	uint64_t x = UINT64_C(0x9e3779b97f4a7c15);

	for (int i = 0; i < 2000000; i++) {
		/* xorshift64*, then cut to a random number of bits so that
		 * every length of number is as common as another */
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		uint64_t r = x * UINT64_C(2685821657736338717);
		unsigned bits = (unsigned)(r >> 58);     /* 0..63 */
		same_as_ref(bits ? r >> (64 - bits) : r & 1);
		same_as_ref(r);
	}
}
END_TEST

/* ---- jsonw_g15 ---- */

static uint64_t g15_rng = UINT64_C(0x2545f4914f6cdd1d);

static uint64_t next_random(void)
{
	g15_rng ^= g15_rng >> 12;
	g15_rng ^= g15_rng << 25;
	g15_rng ^= g15_rng >> 27;
	return g15_rng * UINT64_C(2685821657736338717);
}

static void same_as_printf(double v)
{
	char want[64], got[JSONW_G15_MAX + 8];
	int wn = snprintf(want, sizeof(want), "%.15g", v);

	memset(got, '#', sizeof(got));
	size_t gn = jsonw_g15(got, v);
	if (gn != (size_t)wn || memcmp(got, want, gn) != 0) {
		got[gn < sizeof(got) ? gn : sizeof(got) - 1] = 0;
		ck_abort_msg("%a written as \"%s\", printf wrote \"%s\"", v, got, want);
	}
}

START_TEST(g15_random_bits)
{
	for (int i = 0; i < 1000000; i++) {
		uint64_t b = next_random();
		double v;
		memcpy(&v, &b, sizeof(v));
		same_as_printf(v);
	}
}
END_TEST

/* Every decade the fast path takes and those around it, as a random
 * mantissa times a power of ten, and the shapes results take: whole
 * numbers, halves, thirds. */
START_TEST(g15_random_decades)
{
	for (int i = 0; i < 1000000; i++) {
		uint64_t r = next_random();
		int e = (int)(r % 26) - 7;              /* 10^-7 .. 10^18 */
		double m = (double)(next_random() >> 11) / 9007199254740992.0;   /* [0, 1) */
		double v = m * pow(10, e);
		same_as_printf(v);
		same_as_printf(-v);
		same_as_printf((double)(r >> (r & 63)));
		same_as_printf((double)(r >> 14) / 3.0);
		same_as_printf((double)((r >> 13) | 1) / 2.0);
		same_as_printf((double)(r >> 30) / 1024.0);
	}
}
END_TEST

/* Exact ties at the 16th digit (rounded to even, as printf does) and the
 * values either side of every power of ten. */
START_TEST(g15_ties_and_powers)
{
	/* n + 0.5 with n of 15 digits: its 16th digit a 5 and nothing after */
	for (int i = 0; i < 200000; i++) {
		uint64_t n = UINT64_C(100000000000000) + next_random() % UINT64_C(900000000000000);
		same_as_printf((double)n + 0.5);
	}
	/* odd multiples of small powers of two: short exact decimals */
	for (int t = 0; t <= 70; t++)
		for (uint64_t j = 1; j < 4000; j += 2)
			same_as_printf(ldexp((double)j, -t));
	/* odd j * 2^(e-15) with 5^(14-e) dividing j: a tie at every exponent */
	for (int e = -4; e <= 14; e++) {
		uint64_t five = 1;
		for (int k = 0; k < 14 - e && five < UINT64_C(1) << 50; k++)
			five *= 5;
		for (uint64_t j = 1; j < 200000; j += 2)
			same_as_printf(ldexp((double)(five * j), e - 15));
	}
	for (int e = -8; e <= 17; e++) {
		double p = pow(10, e);
		double lo = p, hi = p;
		for (int k = 0; k < 2000; k++) {
			same_as_printf(lo);
			same_as_printf(hi);
			lo = nextafter(lo, 0);
			hi = nextafter(hi, INFINITY);
		}
		/* 9.99999999999999949... and its neighbours: rounds up a digit */
		double nine = p * 0.99999999999999995;
		for (int k = -50; k <= 50; k++)
			same_as_printf(nine + k * p * 1e-17);
	}
	same_as_printf(0.0);
	same_as_printf(-0.0);
	same_as_printf(1e-4);
	same_as_printf(1e15);
	same_as_printf(123456789012345.5);
	same_as_printf(123456789012344.5);
}
END_TEST

/* jsonw_itoa against "%lld" */
START_TEST(itoa_signed)
{
	for (int i = 0; i < 1000000; i++) {
		uint64_t r = next_random();
		int64_t v = (int64_t)(r >> (r & 63));
		if (r & 64)
			v = -v;
		if (i == 0)
			v = INT64_MIN;
		char want[32], got[32];
		int wn = snprintf(want, sizeof(want), "%lld", (long long)v);
		size_t gn = jsonw_itoa(v, got);
		ck_assert_uint_eq(gn, (size_t)wn);
		ck_assert_int_eq(memcmp(got, want, gn), 0);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("jsonw");
	TCase *tc = tcase_create("numbers");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, fixed_eight_digits_every_value);
	tcase_add_test(tc, powers_and_neighbours);
	tcase_add_test(tc, top_across_boundaries);
	tcase_add_test(tc, every_length_random);
	tcase_add_test(tc, g15_random_bits);
	tcase_add_test(tc, g15_random_decades);
	tcase_add_test(tc, g15_ties_and_powers);
	tcase_add_test(tc, itoa_signed);
	suite_add_tcase(s, tc);
	return tl_run_suite(s);
}
