/*
 * check_keys.c - the key bytes of event, query and monitor tables (and of
 * partial windows' "key"): each kind of value against bytes written here
 * by hand from the layout in src/filters/engine_int.h, read back to the
 * same value, and every cut or mislabelled key read as absent, never as
 * a part of a value. And the first word of a report function's state,
 * which the in-place paths read as n | is_float << 63, and the functions
 * of diff() that keep the window's ends, split and merged.
 */
#include <stdio.h>
#include <string.h>

#include "testlib.h"
#include "../../src/filters/engine.h"
#include "../../src/filters/agg.h"
#include "../../src/filters/engine_int.h"

static struct isp_value scalar(uint8_t type, uint64_t u, uint32_t missing)
{
	struct isp_value v;

	memset(&v, 0, sizeof(v));
	v.type = type;
	v.v.u = u;
	v.missing = missing;
	return v;
}

static struct isp_value hops(uint8_t type, const uint64_t *x, unsigned n, uint32_t missing)
{
	struct isp_value v;

	memset(&v, 0, sizeof(v));
	v.type = type;
	v.is_array = 1;
	v.count = (uint8_t)n;
	v.missing = missing;
	memcpy(v.v.arr, x, n * sizeof(x[0]));
	return v;
}

/* v's key bytes equal want[0..n), read back equal to v, and each shorter
 * cut of them reads as absent. */
static void check_key(const struct isp_value *v, bool per_hop, const uint8_t *want, size_t n)
{
	uint8_t buf[512];
	size_t len = engine_key_of_values(v, 1, buf, sizeof(buf));

	ck_assert_uint_eq(len, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(buf[i] == want[i], "byte %zu: %02x, want %02x", i, buf[i], want[i]);

	struct isp_value back;
	bool present;
	const uint8_t *next = engine_key_value(buf, buf + len, v->type, per_hop, &back, &present);
	ck_assert(present);
	ck_assert_ptr_eq(next, buf + len);
	ck_assert_uint_eq(back.is_array, v->is_array);
	if (v->is_array) {
		ck_assert_uint_eq(back.count, v->count);
		ck_assert_uint_eq(back.missing, v->missing);
		ck_assert_mem_eq(back.v.arr, v->v.arr, v->count * sizeof(uint64_t));
	} else if (v->type == ISP_T_STRING) {
		ck_assert_str_eq(back.v.str, v->v.str);
	} else if (v->type == ISP_T_IPV6 || v->type == ISP_T_MAC) {
		ck_assert_mem_eq(back.v.ip6, v->v.ip6, 16);
	} else {
		ck_assert_uint_eq(back.v.u, v->v.u);
		ck_assert_uint_eq(back.missing, v->missing & 1);
	}
	/* cut: from a copy of exactly that length, so ASan sees any read past */
	for (size_t cut = 1; cut < len; cut++) {
		uint8_t part[512];
		memcpy(part, buf, cut);
		next = engine_key_value(part, part + cut, v->type, per_hop, &back, &present);
		ck_assert_msg(!present, "a key cut to %zu of %zu bytes read as a value", cut, len);
		ck_assert_ptr_eq(next, part + cut);
	}
}

START_TEST(numbers_and_addresses)
{
	/* 10.0.0.1 in host order: 4 bytes, flag present | 4-byte width */
	struct isp_value v = scalar(ISP_T_IPV4, 0x0a000001u, 0);
	check_key(&v, false, (const uint8_t[]){ 0x05, 0x01, 0x00, 0x00, 0x0a }, 5);
	/* an unavailable 32-bit value: flag bit 1 */
	v = scalar(ISP_T_U32, 0xffffffffu, 1);
	check_key(&v, false, (const uint8_t[]){ 0x07, 0xff, 0xff, 0xff, 0xff }, 5);
	/* past 32 bits: 8 bytes, width 0 */
	v = scalar(ISP_T_U64, UINT64_C(0x100000002), 0);
	check_key(&v, false, (const uint8_t[]){ 0x01, 2, 0, 0, 0, 1, 0, 0, 0 }, 9);
	/* a small 64-bit counter takes 4 bytes all the same */
	v = scalar(ISP_T_TIMESTAMP, 7, 0);
	check_key(&v, false, (const uint8_t[]){ 0x05, 7, 0, 0, 0 }, 5);
	/* 2001:db8::1: 16 bytes, width 2 */
	v = scalar(ISP_T_IPV6, 0, 0);
	static const uint8_t a6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	memcpy(v.v.ip6, a6, 16);
	uint8_t want6[17] = { 0x09 };
	memcpy(want6 + 1, a6, 16);
	check_key(&v, false, want6, 17);
	/* a string to its NUL */
	v = scalar(ISP_T_STRING, 0, 0);
	strcpy(v.v.str, "ab");
	check_key(&v, false, (const uint8_t[]){ 0x01, 'a', 'b', 0 }, 4);
}
END_TEST

START_TEST(per_hop_arrays)
{
	/* switch ids 1, 2, 3 (hop 2 unavailable): 4-byte elements */
	const uint64_t ids[] = { 1, 2, 3 };
	struct isp_value v = hops(ISP_T_U32, ids, 3, 1u << 2);
	check_key(&v, true,
		  (const uint8_t[]){ 0x05, 3, 4, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0 }, 18);
	/* one element past 32 bits: all of them take 8 */
	const uint64_t times[] = { 5, UINT64_C(1) << 40 };
	v = hops(ISP_T_TIMESTAMP, times, 2, 0);
	check_key(&v, true,
		  (const uint8_t[]){ 0x01, 2, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0,
				     0 },
		  22);
	/* no hop */
	v = hops(ISP_T_U32, ids, 0, 0);
	check_key(&v, true, (const uint8_t[]){ 0x05, 0, 0, 0, 0, 0 }, 6);
}
END_TEST

START_TEST(absent_and_mislabelled)
{
	uint8_t buf[32];
	struct isp_value back;
	bool present = true;

	/* an absent value is its flag byte alone */
	ck_assert_uint_eq(engine_key_scalar(buf, NULL, false), 1);
	ck_assert_uint_eq(buf[0], 0);
	const uint8_t *next = engine_key_value(buf, buf + 1, ISP_T_IPV4, false, &back, &present);
	ck_assert(!present);
	ck_assert_ptr_eq(next, buf + 1);

	/* 4 bytes read as an IPv6 address, 16 as a number, more hops than
	 * there are, 16-byte hops: not this type's key */
	struct isp_value v = scalar(ISP_T_IPV4, 0x0a000001u, 0);
	size_t len = engine_key_of_values(&v, 1, buf, sizeof(buf));
	engine_key_value(buf, buf + len, ISP_T_IPV6, false, &back, &present);
	ck_assert(!present);
	static const uint8_t wide[18] = { 0x09, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	engine_key_value(wide, wide + 17, ISP_T_U32, false, &back, &present);
	ck_assert(!present);
	static const uint8_t many[6] = { 0x05, ISP_MAX_HOPS + 1, 0, 0, 0, 0 };
	engine_key_value(many, many + 6, ISP_T_U32, true, &back, &present);
	ck_assert(!present);
	engine_key_value(wide, wide + 18, ISP_T_U32, true, &back, &present);
	ck_assert(!present);

	/* two values in a row: the second starts where the first ends */
	struct isp_value two[2] = { scalar(ISP_T_IPV4, 0x0a000001u, 0), scalar(ISP_T_U16, 4789, 0) };
	len = engine_key_of_values(two, 2, buf, sizeof(buf));
	ck_assert_uint_eq(len, 10);
	next = engine_key_value(buf, buf + len, ISP_T_IPV4, false, &back, &present);
	ck_assert(present && back.v.u == 0x0a000001u);
	next = engine_key_value(next, buf + len, ISP_T_U16, false, &back, &present);
	ck_assert(present && back.v.u == 4789);
	ck_assert_ptr_eq(next, buf + len);
}
END_TEST

START_TEST(widest_key_of_a_type)
{
	/* table entries that evict are sized by these */
	ck_assert_uint_eq(engine_key_width(ISP_T_IPV4, false), 5);
	ck_assert_uint_eq(engine_key_width(ISP_T_U16, false), 5);
	ck_assert_uint_eq(engine_key_width(ISP_T_U64, false), 9);
	ck_assert_uint_eq(engine_key_width(ISP_T_TIMESTAMP, false), 9);
	ck_assert_uint_eq(engine_key_width(ISP_T_IPV6, false), 17);
	ck_assert_uint_eq(engine_key_width(ISP_T_MAC, false), 17);
	ck_assert_uint_eq(engine_key_width(ISP_T_U32, true), 6 + 4 * ISP_MAX_HOPS);
	ck_assert_uint_eq(engine_key_width(ISP_T_TIMESTAMP, true), 6 + 8 * ISP_MAX_HOPS);
	/* every value of a type fits its width */
	uint8_t buf[512];
	const uint64_t big[ISP_MAX_HOPS] = { [0] = UINT32_MAX, [ISP_MAX_HOPS - 1] = 1 };
	struct isp_value v = hops(ISP_T_U32, big, ISP_MAX_HOPS, UINT32_MAX);
	ck_assert_uint_le(engine_key_of_values(&v, 1, buf, sizeof(buf)),
			  engine_key_width(ISP_T_U32, true));
	v = scalar(ISP_T_U32, UINT32_MAX, 1);
	ck_assert_uint_le(engine_key_of_values(&v, 1, buf, sizeof(buf)),
			  engine_key_width(ISP_T_U32, false));
	v = scalar(ISP_T_U64, UINT64_MAX, 0);
	ck_assert_uint_le(engine_key_of_values(&v, 1, buf, sizeof(buf)),
			  engine_key_width(ISP_T_U64, false));
}
END_TEST

START_TEST(state_first_word)
{
	struct agg_state s;
	uint64_t w;

	memset(&s, 0, sizeof(s));
	s.n = 5;
	memcpy(&w, &s, sizeof(w));
	ck_assert_uint_eq(w, 5);
	s.is_float = 1;
	memcpy(&w, &s, sizeof(w));
	ck_assert_uint_eq(w, AGG_FLOAT_BIT | 5);
	/* one more value in place: the word plus one */
	agg_kept_count((uint8_t *)&s);
	ck_assert_uint_eq(s.n, 6);
	ck_assert_uint_eq(s.is_float, 1);
	s.n = (UINT64_C(1) << 63) - 2;
	memcpy(&w, &s, sizeof(w));
	ck_assert_uint_eq(w, UINT64_MAX - 1);
}
END_TEST

/*
 * sum, avg, count and rate of diff(x) keep the window's ends (agg.h): fed
 * in any split between workers, each share in order, written in place or
 * the general way, then merged in any order, they must give what the
 * differences taken one by one give (computed here from the sequence).
 */
static uint64_t rnd_state = 88172645463325252u;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

START_TEST(diff_ends_any_split)
{
	enum { N = 200, SHARES = 4 };
	const uint8_t kinds[] = { AGG_SUM, AGG_AVG, AGG_COUNT, AGG_RATE };

	for (unsigned round = 0; round < 300; round++) {
		unsigned n = round < 3 ? round : 1 + (unsigned)(rnd() % N);
		int64_t x[N];
		__int128 sum = 0;
		for (unsigned i = 0; i < n; i++) {
			x[i] = (int64_t)(rnd() % 2000001) - 1000000;
			if (round % 7 == 0)
				x[i] *= 1000000000;     /* beyond 2^53 */
			if (i)
				sum += (__int128)x[i] - x[i - 1];
		}
		for (unsigned kk = 0; kk < sizeof(kinds); kk++) {
			struct qitem it;
			struct cx arg;  /* diff(x) has one (rate reads that it has) */
			memset(&it, 0, sizeof(it));
			memset(&arg, 0, sizeof(arg));
			it.arg = &arg;
			it.agg = kinds[kk];
			it.diff = 1;
			it.diff_ends = 1;
			ck_assert_uint_eq(agg_fast_op(&it), AGF_ENDS);
			size_t size = agg_state_size(&it);
			ck_assert_uint_le(size, sizeof(struct agg_state));
			struct agg_state part[SHARES], all;
			memset(part, 0, sizeof(part));
			memset(&all, 0, sizeof(all));
			/* packet i goes to a share at random; each share sees its
			 * packets in order, share 0 in place, the others the
			 * general way */
			for (unsigned i = 0; i < n; i++) {
				unsigned w = (unsigned)(rnd() % SHARES);
				uint64_t order = (uint64_t)(i + 1) << 8;
				struct xval v = { .k = XK_INT, .u.i = x[i] };
				if (w == 0)
					ck_assert(agg_update_int((uint8_t *)&part[0], AGF_ENDS, x[i], order));
				else
					agg_update(&part[w], &it, &v, order, NULL);
			}
			/* merged in a random order */
			unsigned first = (unsigned)(rnd() % SHARES);
			for (unsigned k = 0; k < SHARES; k++)
				agg_merge(&all, &part[(first + k) % SHARES], &it, NULL);
			ck_assert_uint_eq(all.n, n);
			struct xval out;
			bool got = agg_result(&all, &it, 2.0, &out);
			if (it.agg == AGG_COUNT) {
				ck_assert(got);
				ck_assert_int_eq(out.u.i, n ? n - 1 : 0);
				continue;
			}
			if (n < 2) {
				ck_assert_msg(!got, "no difference: no value");
				continue;
			}
			ck_assert(got);
			if (it.agg == AGG_SUM) {
				ck_assert_int_eq(out.k, XK_INT);
				ck_assert_int_eq(out.u.i, (int64_t)sum);
			} else if (it.agg == AGG_AVG) {
				ck_assert_int_eq(out.k, XK_FLOAT);
				double want = (double)((long double)sum / (long double)(n - 1));
				ck_assert_msg(out.u.f == want, "avg %.17g, want %.17g", out.u.f, want);
			} else {
				ck_assert_msg(out.u.f == (double)(int64_t)sum / 2.0, "rate %.17g", out.u.f);
			}
		}
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("keys");
	TCase *tc = tcase_create("keys");

	tcase_add_test(tc, numbers_and_addresses);
	tcase_add_test(tc, per_hop_arrays);
	tcase_add_test(tc, absent_and_mislabelled);
	tcase_add_test(tc, widest_key_of_a_type);
	tcase_add_test(tc, state_first_word);
	tcase_add_test(tc, diff_ends_any_split);
	suite_add_tcase(s, tc);
	return tl_run_suite(s);
}
