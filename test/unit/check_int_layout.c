/*
 * check_int_layout.c - INT per-hop layouts and header fields, on
 * hand-built packets: the tables the decoder reads against the layout rules
 * they are made from, the header's flag bits, the most hops a packet may
 * have, and HopML shorter than the bitmap's fields.
 *
 * Every expected value is written into the bytes by the test itself.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "../../src/plugins/int/int_layout.h"

#define IP_OFF 14

/* The per-layout rows the decoder keeps (int_fo_rows), int_field_find
 * and the hop sizes it reads from a table (int_hop_bytes) agree with the
 * layout rules they are derived from, for every layout, bitmap and field. */
START_TEST(layout_rows)
{
	int_layout_init();
	for (unsigned k = 0; k < INT_LAYOUT__COUNT; k++) {
		for (unsigned b = 0; b <= 0xffff; b++) {
			uint64_t row = int_fo_row((enum int_layout_kind)k, (uint16_t)b);
			unsigned hop = int_hop_size((enum int_layout_kind)k, (uint16_t)b);
			if (hop != int_hop_size_rule((enum int_layout_kind)k, (uint16_t)b))
				ck_abort_msg("layout %u bitmap %#x: hop size %u, want %u", k, b, hop,
					     int_hop_size_rule((enum int_layout_kind)k, (uint16_t)b));
			for (unsigned bit = 0; bit <= INT_BIT_L4S; bit++) {
				enum int_layout_kind kk = (enum int_layout_kind)k;
				unsigned want_size = bit == INT_BIT_L4S ?
					(int_has_l4s_word(kk, (uint16_t)b) ? 4 : 0) :
					(b & isp_bit16(bit) ? int_field_size(kk, bit) : 0);
				unsigned off = 0, size = 0;
				bool found = int_field_find(row, kk, (uint16_t)b, bit, &off, &size);
				if (found != (want_size != 0) ||
				    (found && (size != want_size ||
					       off != int_field_offset(kk, (uint16_t)b, bit))))
					ck_abort_msg("layout %u bitmap %#x bit %u: found %d off %u size %u, "
						     "want size %u off %u", k, b, bit, found, off, size,
						     want_size, int_field_offset(kk, (uint16_t)b, bit));
			}
		}
	}
}
END_TEST

/* The header's flag bits, each alone and all together, in every family:
 * v0.5 (C, E), v1.0 (C, E, M), v2 (D, E, M), and v0.5's pre-release (Ver
 * 2 · Rep 2 · C · E, here with GEANT's first nibble 4); a bit the family
 * has not is absent. Zero hops: the header alone. */
/* The packet's bytes in *tb, the caller's: getters read them when asked. */
static void flags_packet(struct isp_packet *p, struct isp_stats *st, struct tl_buf *tb,
			 unsigned family, uint32_t flag_bits)
{
	struct tl_buf t = { .n = 0 };

	if (family == 0 || family == 3) {
		tl_eth_ipv4_tcp(&t, 0x20 << 2);
		tl_be32(&t, 0x01000000u | (1 + 2 + 1) << 8);
		/* InsCnt 2, Max 8, Total 0 */
		tl_be32(&t, (family == 3 ? 0x40000000u : 0) | flag_bits | 2u << 16 | 8u << 8);
		tl_be32(&t, 0xa0000000u);
		tl_be32(&t, 0x06005000u | 3);
		tl_fix_lengths(&t, IP_OFF);
	} else if (family == 1) {
		tl_eth_ipv4_udp(&t, 0x20 << 2, 1000, 2000);
		tl_be32(&t, 0x01000000u | (1 + 2) << 8);
		tl_be32(&t, 0x10000000u | flag_bits | 3u << 8);
		tl_be32(&t, 0xb0000000u);
		tl_fix_lengths(&t, IP_OFF);
	} else {
		tl_eth_ipv4_udp(&t, 0x20 << 2, 1000, 2000);
		tl_be32(&t, 0x10000000u | 3u << 16 | 0x11 << 2);
		tl_be32(&t, 0x20000000u | flag_bits | 3u << 8);
		tl_be32(&t, 0xb000abcdu);
		tl_be32(&t, 0x12343456u);
		tl_fix_lengths(&t, IP_OFF);
	}
	*tb = t;
	tl_dissect(p, st, tb->b, tb->n, NULL);
	ck_assert_int_eq(p->malformed, 0);
	ck_assert_uint_eq(tl_u64(p, "int.num_hop"), 0);
}

START_TEST(header_flag_bits)
{
	static const char *const names[4] = { "int.c_bit", "int.e_bit", "int.m_bit", "int.d_bit" };
	/* per family, the word-0 bit of each name (0: the family has none) */
	static const uint32_t bit[4][4] = {
		{ 0x02000000u, 0x01000000u, 0, 0 },                     /* v0.5 */
		{ 0x02000000u, 0x01000000u, 0x00800000u, 0 },           /* v1.0 */
		{ 0, 0x04000000u, 0x02000000u, 0x08000000u },           /* v2 */
		{ 0x08000000u, 0x04000000u, 0, 0 },                     /* v0.5 pre-release */
	};
	static const unsigned version[4] = { 0, 1, 2, 4 };

	for (unsigned family = 0; family < 4; family++) {
		uint32_t all = 0;
		for (unsigned f = 0; f < 4; f++)
			all |= bit[family][f];
		/* each bit alone, then all of them, then none */
		for (unsigned set = 0; set < 6; set++) {
			uint32_t on = set < 4 ? bit[family][set] : set == 4 ? all : 0;
			struct isp_packet p;
			struct isp_stats st = { 0 };
			struct tl_buf t;

			if (set < 4 && !on)
				continue;
			flags_packet(&p, &st, &t, family, on);
			ck_assert_uint_eq(tl_u64(&p, "int.version"), version[family]);
			for (unsigned f = 0; f < 4; f++) {
				if (!bit[family][f]) {
					ck_assert_msg(!tl_has(&p, names[f]),
						      "family %u: %s present", family, names[f]);
					continue;
				}
				ck_assert_msg(tl_u64(&p, names[f]) == !!(on & bit[family][f]),
					      "family %u, bits %#x: %s = %llu", family, on, names[f],
					      (unsigned long long)tl_u64(&p, names[f]));
			}
		}
	}
}
END_TEST

/* 32 hops (the most a packet may have): hop 31's missing bit is the top
 * one; int.latency leaves the unavailable hops out. v1.0, bitmap 0xB000
 * (switch ID, latency, queue: 12 bytes a hop). */
START_TEST(thirty_two_hops)
{
	struct tl_buf t = { .n = 0 };
	struct isp_packet p;
	struct isp_stats st = { 0 };
	uint64_t sw[32], lat[32], occ[32], sum = 0;
	uint32_t lat_missing = 0, occ_missing = 0;

	tl_eth_ipv4_udp(&t, 0x20 << 2, 1000, 2000);
	tl_be32(&t, 0x01000000u | (1 + 2 + 32 * 3) << 8);
	tl_be32(&t, 0x10000000u | 3u << 8);
	tl_be32(&t, 0xb0000000u);
	for (int i = 31; i >= 0; i--) {                   /* last hop first */
		bool lat_na = i == 0 || i == 31 || i == 17;
		bool occ_na = i == 5;
		sw[i] = 1000 + (uint32_t)i;
		lat[i] = 10u * (uint32_t)i + 1;
		occ[i] = 0x100u + (uint32_t)i;
		tl_be32(&t, (uint32_t)sw[i]);
		tl_be32(&t, lat_na ? 0xffffffffu : (uint32_t)lat[i]);
		tl_be32(&t, (uint32_t)i << 24 | (occ_na ? 0xffffffu : (uint32_t)occ[i]));
		lat_missing |= (uint32_t)lat_na << i;
		occ_missing |= (uint32_t)occ_na << i;
		sum += lat_na ? 0 : lat[i];
	}
	tl_fix_lengths(&t, IP_OFF);
	tl_dissect(&p, &st, t.b, t.n, NULL);

	ck_assert_int_eq(p.malformed, 0);
	ck_assert_uint_eq(tl_u64(&p, "int.num_hop"), 32);
	tl_expect_array(&p, "int.hop_switch_ids", sw, 32, 0);
	tl_expect_array(&p, "int.hop_latencies", lat, 32, lat_missing);
	tl_expect_array(&p, "int.hop_queue_occups", occ, 32, occ_missing);
	ck_assert_uint_eq(tl_u64(&p, "int.latency"), sum);
	ck_assert(!tl_has(&p, "int.hop_ingress_times"));
}
END_TEST

/* HopML shorter than the bitmap's fields (2 words for 4): the fields that
 * fit in a block are read, the others are absent, int.latency too. */
START_TEST(fields_beyond_hop_ml)
{
	struct tl_buf t = { .n = 0 };
	struct isp_packet p;
	struct isp_stats st = { 0 };

	tl_eth_ipv4_udp(&t, 0x20 << 2, 1000, 2000);
	tl_be32(&t, 0x01000000u | (1 + 2 + 3 * 2) << 8);
	tl_be32(&t, 0x10000000u | 2u << 8);
	tl_be32(&t, 0xf0000000u);
	for (int i = 2; i >= 0; i--) {
		tl_be32(&t, 100 + (uint32_t)i);
		tl_be32(&t, (uint32_t)i << 16 | 7);
	}
	tl_fix_lengths(&t, IP_OFF);
	tl_dissect(&p, &st, t.b, t.n, NULL);

	ck_assert_int_eq(p.malformed, 0);
	ck_assert_uint_eq(tl_u64(&p, "int.num_hop"), 3);
	ck_assert_uint_eq(tl_u64(&p, "int.hop_ml_mismatch"), 1);
	const uint64_t sw[] = { 100, 101, 102 }, in[] = { 0, 1, 2 }, eg[] = { 7, 7, 7 };
	tl_expect_array(&p, "int.hop_switch_ids", sw, 3, 0);
	tl_expect_array(&p, "int.hop_ingress_port_ids", in, 3, 0);
	tl_expect_array(&p, "int.hop_egress_port_ids", eg, 3, 0);
	ck_assert(!tl_has(&p, "int.hop_latencies"));
	ck_assert(!tl_has(&p, "int.hop_queue_occups"));
	ck_assert(!tl_has(&p, "int.latency"));
}
END_TEST

/* Bit 15, the checksum complement of v1.0 and v2.x, is reserved in v0.5:
 * its word is stepped over, not shown under that name. Bitmap 0x8001, 2
 * hops (switch IDs 7 then 8 on the path). */
START_TEST(v05_bit15_reserved)
{
	for (unsigned v10 = 0; v10 < 2; v10++) {
		struct tl_buf t = { .n = 0 };
		struct isp_packet p;
		struct isp_stats st = { 0 };

		if (!v10) {
			tl_eth_ipv4_tcp(&t, 0x20 << 2);
			tl_be32(&t, 0x01000000u | (1 + 2 + 2 * 2 + 1) << 8);
			tl_be32(&t, 2u << 16 | 8u << 8 | 2);    /* InsCnt 2, Max 8, Total 2 */
		} else {
			tl_eth_ipv4_udp(&t, 0x20 << 2, 1000, 2000);
			tl_be32(&t, 0x01000000u | (1 + 2 + 2 * 2) << 8);
			tl_be32(&t, 0x10000000u | 2u << 8 | 6); /* HopML 2, 6 remaining */
		}
		tl_be32(&t, 0x80010000u);
		for (unsigned i = 2; i-- > 0;) {                /* last hop first */
			tl_be32(&t, 7 + i);
			tl_be32(&t, 0xc0000000u + i);
		}
		if (!v10) {
			tl_be32(&t, 0x06005000u);
			tl_fix_lengths(&t, IP_OFF);
		} else {
			tl_fix_lengths(&t, IP_OFF);
		}
		tl_dissect(&p, &st, t.b, t.n, NULL);

		ck_assert_int_eq(p.malformed, 0);
		const uint64_t sw[] = { 7, 8 }, csum[] = { 0xc0000000u, 0xc0000001u };
		tl_expect_array(&p, "int.hop_switch_ids", sw, 2, 0);
		if (v10)
			tl_expect_array(&p, "int.hop_checksum_complements", csum, 2, 0);
		else
			ck_assert(!tl_has(&p, "int.hop_checksum_complements"));
	}
}
END_TEST

/* The v2.x shim's NPT says what its last 16 bits hold: 0 the original
 * DSCP (byte 3, upper 6 bits), 1 the original UDP or TCP destination port
 * (bytes 2-3), 2 the original IP protocol (byte 3): each attribute is
 * there for its NPT alone. One hop, switch ID only. */
START_TEST(v2_shim_npt)
{
	const uint32_t low[3] = { 0x11u << 2, 0x1234u, 17u };

	for (unsigned npt = 0; npt < 3; npt++) {
		struct tl_buf t = { .n = 0 };
		struct isp_packet p;
		struct isp_stats st = { 0 };

		tl_eth_ipv4_udp(&t, 0x20 << 2, 1000, 2000);
		tl_be32(&t, 0x10000000u | npt << 26 | (3 + 1) << 16 | low[npt]);
		tl_be32(&t, 0x20000000u | 1u << 8 | 62);       /* v2, HopML 1 */
		tl_be32(&t, 0x80000000u);                       /* switch ID */
		tl_be32(&t, 0);
		tl_be32(&t, 42);
		tl_fix_lengths(&t, IP_OFF);
		tl_dissect(&p, &st, t.b, t.n, NULL);

		ck_assert_int_eq(p.malformed, 0);
		ck_assert_uint_eq(tl_u64(&p, "int.num_hop"), 1);
		ck_assert_uint_eq(tl_u64(&p, "int.npt"), npt);
		ck_assert(tl_has(&p, "int.orig_dscp") == (npt == 0));
		ck_assert(tl_has(&p, "int.orig_port") == (npt == 1));
		ck_assert(tl_has(&p, "int.orig_proto") == (npt == 2));
		if (npt == 0)
			ck_assert_uint_eq(tl_u64(&p, "int.orig_dscp"), 0x11);
		if (npt == 1)
			ck_assert_uint_eq(tl_u64(&p, "int.orig_port"), 0x1234);
		if (npt == 2)
			ck_assert_uint_eq(tl_u64(&p, "int.orig_proto"), 17);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("int_layout");
	TCase *tc = tcase_create("layout");

	tcase_add_test(tc, layout_rows);
	tcase_add_test(tc, header_flag_bits);
	tcase_add_test(tc, thirty_two_hops);
	tcase_add_test(tc, fields_beyond_hop_ml);
	tcase_add_test(tc, v05_bit15_reserved);
	tcase_add_test(tc, v2_shim_npt);
	suite_add_tcase(s, tc);
	return tl_run_suite(s);
}
