/*
 * check_int_mmt.c - the attributes intspect has because MMT-DPI's INT
 * plugins have them (int.is_*, int.cg_*, int.hop_l4s_mark_probability,
 * int_report.ip_* / port_*) and the aliases of MMT-DPI's names, on
 * hand-built packets.
 *
 * Every expected value is written into the bytes by the test itself; each
 * attribute is also checked absent where MMT-DPI would not extract it.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "../../src/core/dump.h"

#define IP_OFF 14

static const char *const is_flags[10] = {
	"int.is_switch_id", "int.is_in_egress_port_id", "int.is_hop_latency",
	"int.is_queue_id_occup", "int.is_ingress_time", "int.is_egress_time",
	"int.is_lv2_in_egress_port_id", "int.is_tx_utilize", "int.is_l4s_mark_drop",
	"int.is_cloud_gaming",
};

static const char *const cg_attrs[] = {
	"int.cg_ip_src", "int.cg_ip_dst", "int.cg_nb_pkt_down", "int.cg_mean_pkt_size_down",
	"int.cg_mean_iat_down", "int.cg_sum_pkt_size_down", "int.cg_nb_pkt_up",
	"int.cg_mean_pkt_size_up", "int.cg_mean_iat_up", "int.cg_sum_pkt_size_up",
	"int.cg_sum_ptk_size_up",
};

/* The is_* flags of a packet whose canonical bitmap is `bitmap`: flag i
 * (MMT-DPI's bit 0x8000 >> i) is 1 when set and absent, not 0, when clear. */
static void expect_flags(const struct isp_packet *p, uint16_t bitmap)
{
	struct isp_value v;

	ck_assert_uint_eq(tl_u64(p, "int.instruction_bits"), bitmap);
	for (unsigned i = 0; i < 10; i++) {
		bool set = bitmap & (0x8000u >> i);
		ck_assert_msg(tl_get(p, is_flags[i], &v) == set, "%s %s with bitmap %#x",
			      is_flags[i], set ? "absent" : "present", bitmap);
		if (set) {
			ck_assert_uint_eq(v.type, ISP_T_U8);
			ck_assert_uint_eq(v.v.u, 1);
		}
	}
}

static void expect_no_cg(const struct isp_packet *p)
{
	for (size_t i = 0; i < sizeof(cg_attrs) / sizeof(cg_attrs[0]); i++)
		ck_assert_msg(!tl_has(p, cg_attrs[i]), "%s present", cg_attrs[i]);
}

/* INT v1.0 over UDP: 1 hop of `words` words, each word w + the index. */
static void v10_packet(struct tl_buf *t, uint16_t bitmap, unsigned hop_ml, unsigned words)
{
	t->n = 0;
	tl_eth_ipv4_udp(t, 0x20 << 2, 1, 2);
	tl_be32(t, 0x01000000u | (3 + words) << 8);
	tl_be32(t, 0x10000000u | hop_ml << 8 | 4);
	tl_be32(t, (uint32_t)bitmap << 16);
	for (unsigned w = 0; w < words; w++)
		tl_be32(t, 0x100 + w);
	tl_fix_lengths(t, IP_OFF);
}

/* The flags follow int.instruction_bits in every version and dialect. */
START_TEST(is_flags_every_version)
{
	struct tl_buf t;
	struct isp_packet p;
	struct isp_stats st = { 0 };

	/* v1.0: bits 0-5, 6 words */
	v10_packet(&t, 0xfc00, 6, 6);
	tl_dissect(&p, &st, t.b, t.n, NULL);
	ck_assert_int_eq(p.malformed, 0);
	expect_flags(&p, 0xfc00);

	/* v0.5 (tail): bit 6 is queue congestion there, still "bit 6" */
	t.n = 0;
	tl_eth_ipv4_udp(&t, 0x20 << 2, 1, 2);
	tl_be32(&t, 0x01000000u | (3 + 2 + 1) << 8);
	tl_be32(&t, 0x00000000u | 2u << 16 | 8u << 8 | 1);  /* InsCnt 2, max 8, total 1 */
	tl_be32(&t, 0x82000000u);
	tl_be32(&t, 42);
	tl_be32(&t, 0x03000010u);
	tl_be32(&t, 0x11000002u);                           /* tail */
	tl_fix_lengths(&t, IP_OFF);
	tl_dissect(&p, &st, t.b, t.n, NULL);
	ck_assert_int_eq(p.malformed, 0);
	ck_assert_uint_eq(tl_u64(&p, "int.version"), 0);
	expect_flags(&p, 0x8200);

	/* v2.x: bit 8 is the buffer word, yet MMT-DPI's L4S flag is its bit */
	t.n = 0;
	tl_eth_ipv4_udp(&t, 0x20 << 2, 1, 2);
	tl_be32(&t, 0x10000000u | (3 + 2) << 16);           /* type 1, header + 1 hop */
	tl_be32(&t, 0x20000000u | 2u << 8 | 8);             /* HopML 2 */
	tl_be32(&t, 0x80800000u);
	tl_be32(&t, 0);
	tl_be32(&t, 7);
	tl_be32(&t, 0x01000005u);
	tl_fix_lengths(&t, IP_OFF);
	tl_dissect(&p, &st, t.b, t.n, NULL);
	ck_assert_int_eq(p.malformed, 0);
	ck_assert_uint_eq(tl_u64(&p, "int.num_hop"), 1);
	expect_flags(&p, 0x8080);
	ck_assert(!tl_has(&p, "int.hop_l4s_mark"));

	/* GEANT: bitmap 0x00cc on the wire, 0xcc00 canonical (8-byte
	 * timestamps): the wire's 0x0080 and 0x0040 are not flags */
	v10_packet(&t, 0x00cc, 6, 6);
	tl_dissect(&p, &st, t.b, t.n, NULL);
	ck_assert_int_eq(p.malformed, 0);
	ck_assert_uint_eq(tl_u64(&p, "int.wire_instruction_bits"), 0x00cc);
	expect_flags(&p, 0xcc00);

	/* INT-MX: the instruction header alone */
	t.n = 0;
	tl_eth_ipv4_udp(&t, 0x20 << 2, 1, 2);
	tl_be32(&t, 0x30000000u | 3u << 16);
	tl_be32(&t, 0x20000000u);
	tl_be32(&t, 0x00400000u);
	tl_be32(&t, 0);
	tl_fix_lengths(&t, IP_OFF);
	tl_dissect(&p, &st, t.b, t.n, NULL);
	ck_assert_int_eq(p.malformed, 0);
	expect_flags(&p, 0x0040);
	expect_no_cg(&p);           /* the flag without the L4S layout's block */

	/* no INT: no flag */
	t.n = 0;
	tl_eth_ipv4_udp(&t, 0, 1, 2);
	tl_fix_lengths(&t, IP_OFF);
	tl_dissect(&p, &st, t.b, t.n, NULL);
	for (unsigned i = 0; i < 10; i++)
		ck_assert(!tl_has(&p, is_flags[i]));
}
END_TEST

/* p4-int-l4s hop (mask 0xFFFF, 11 words): the TX-utilization word is also
 * the mark probability; absent in any other layout. */
START_TEST(l4s_mark_probability)
{
	struct tl_buf t = { .n = 0 };
	struct isp_packet p;
	struct isp_stats st = { 0 };
	char err[256];

	tl_eth_ipv4_udp(&t, 0x20 << 2, 1, 2);
	tl_be32(&t, 0x01000000u | (3 + 3 * 11) << 8);
	tl_be32(&t, 0x10000000u | 10u << 8);
	tl_be32(&t, 0xffff0000u);
	for (int i = 2; i >= 0; i--) {          /* last hop first */
		for (unsigned w = 0; w < 9; w++)
			tl_be32(&t, (uint32_t)(i * 16 + w));
		tl_be32(&t, i == 1 ? 0xffffffffu : 1000u + (uint32_t)i); /* probability */
		tl_be32(&t, 0x00050006u);
	}
	tl_fix_lengths(&t, IP_OFF);
	tl_dissect(&p, &st, t.b, t.n, NULL);
	ck_assert_int_eq(p.malformed, 0);
	const uint64_t prob[] = { 1000, 0, 1002 };
	tl_expect_array(&p, "int.hop_l4s_mark_probability", prob, 3, 1u << 1);
	tl_expect_array(&p, "int.hop_tx_utilizes", prob, 3, 1u << 1);
	expect_flags(&p, 0xffff);
	expect_no_cg(&p);           /* HopML 10 does not count a block */

	/* the same dialect forced, bits 0 and 8 only: no TX word */
	ck_assert_int_eq(isp_registry_option(tl_registry(), "int.dialect=l4s", err, sizeof(err)), 0);
	v10_packet(&t, 0x8080, 1, 2);
	tl_dissect(&p, &st, t.b, t.n, NULL);
	ck_assert_int_eq(isp_registry_option(tl_registry(), "int.dialect=auto", err, sizeof(err)), 0);
	ck_assert_int_eq(p.malformed, 0);
	const uint64_t mark[] = { 0 }, drop[] = { 0x101 };
	tl_expect_array(&p, "int.hop_l4s_drop", drop, 1, 0);
	tl_expect_array(&p, "int.hop_l4s_mark", mark, 1, 0);
	ck_assert(!tl_has(&p, "int.hop_l4s_mark_probability"));
	ck_assert(!tl_has(&p, "int.hop_tx_utilizes"));

	/* v1.0 proper with the TX bit: utilization, not a probability */
	v10_packet(&t, 0x0100, 1, 1);
	tl_dissect(&p, &st, t.b, t.n, NULL);
	ck_assert_int_eq(p.malformed, 0);
	ck_assert_uint_eq(tl_u64(&p, "int.hop_ml_mismatch"), 0);
	const uint64_t tx[] = { 0x100 };
	tl_expect_array(&p, "int.hop_tx_utilizes", tx, 1, 0);
	ck_assert(!tl_has(&p, "int.hop_l4s_mark_probability"));
}
END_TEST

struct cg_block {
	uint32_t ip1, ip2;
	uint16_t nb_up, nb_down;
	uint32_t size_up, size_down, iat_up, iat_down;
};

static void put_cg(struct tl_buf *t, const struct cg_block *c)
{
	tl_be32(t, c->ip1);
	tl_be32(t, c->ip2);
	tl_be16(t, c->nb_up);
	tl_be16(t, c->nb_down);
	tl_be32(t, c->size_up);
	tl_be32(t, c->size_down);
	tl_be32(t, c->iat_up);
	tl_be32(t, c->iat_down);
}

/* L4S layout, bitmap 0xA040 (switch, latency, cloud gaming): switch,
 * latency, mark/drop word, then the 28-byte block = 10 words, which HopML
 * says. Two hops; the block read is the first on the wire (last hop). */
static size_t cg_packet(struct tl_buf *t, unsigned hop_ml, const struct cg_block *last,
			const struct cg_block *first)
{
	unsigned words = hop_ml == 10 ? 10 : 3;

	t->n = 0;
	tl_eth_ipv4_udp(t, 0x20 << 2, 1, 2);
	tl_be32(t, 0x01000000u | (3 + 2 * words) << 8);
	tl_be32(t, 0x10000000u | hop_ml << 8 | 3);
	tl_be32(t, 0xa0400000u);
	for (int i = 1; i >= 0; i--) {
		tl_be32(t, 70 + (uint32_t)i);           /* switch */
		tl_be32(t, 500 + (uint32_t)i);          /* latency */
		tl_be32(t, 0x00030004u);                /* mark 3, drop 4 */
		if (words == 10)
			put_cg(t, i == 1 ? last : first);
	}
	tl_fix_lengths(t, IP_OFF);
	return t->n;
}

START_TEST(cloud_gaming_block)
{
	struct tl_buf t;
	struct isp_packet p;
	struct isp_stats st = { 0 };
	struct isp_value v;
	const struct cg_block last = {
		0xc0a80001, 0x0a000002, 3, 4, 3000, 4001, 30, 0x10000000,
	};
	const struct cg_block first = { 1, 2, 5, 6, 7, 8, 9, 10 };

	cg_packet(&t, 10, &last, &first);
	tl_dissect(&p, &st, t.b, t.n, NULL);
	ck_assert_int_eq(p.malformed, 0);
	ck_assert_uint_eq(tl_u64(&p, "int.num_hop"), 2);
	const uint64_t sw[] = { 70, 71 }, lat[] = { 500, 501 };
	tl_expect_array(&p, "int.hop_switch_ids", sw, 2, 0);
	tl_expect_array(&p, "int.hop_latencies", lat, 2, 0);
	expect_flags(&p, 0xa040);
	ck_assert(tl_get(&p, "int.cg_ip_src", &v));
	ck_assert_uint_eq(v.type, ISP_T_IPV4);
	ck_assert_uint_eq(v.v.u, 0xc0a80001);       /* 192.168.0.1 */
	ck_assert_uint_eq(tl_u64(&p, "int.cg_ip_dst"), 0x0a000002);
	ck_assert_uint_eq(tl_u64(&p, "int.cg_nb_pkt_up"), 3);
	ck_assert_uint_eq(tl_u64(&p, "int.cg_nb_pkt_down"), 4);
	ck_assert_uint_eq(tl_u64(&p, "int.cg_sum_pkt_size_up"), 3000);
	ck_assert_uint_eq(tl_u64(&p, "int.cg_sum_ptk_size_up"), 3000);
	ck_assert_uint_eq(tl_u64(&p, "int.cg_sum_pkt_size_down"), 4001);
	ck_assert_uint_eq(tl_u64(&p, "int.cg_mean_pkt_size_up"), 1000);
	ck_assert_uint_eq(tl_u64(&p, "int.cg_mean_pkt_size_down"), 1000); /* 4001 / 4 */
	ck_assert_uint_eq(tl_u64(&p, "int.cg_mean_iat_up"), 30 * 64 / 3);
	/* 2^28 units of 64 us over 4 packets: 2^32 us, past 32 bits */
	ck_assert_uint_eq(tl_u64(&p, "int.cg_mean_iat_down"), UINT64_C(1) << 32);

	/* 0 and 1 packet: the detector's defaults */
	const struct cg_block empty = { 0, 0, 1, 0, 1500, 0, 77, 0 };
	cg_packet(&t, 10, &empty, &first);
	tl_dissect(&p, &st, t.b, t.n, NULL);
	ck_assert_int_eq(p.malformed, 0);
	ck_assert_uint_eq(tl_u64(&p, "int.cg_mean_iat_down"), 32960);
	ck_assert_uint_eq(tl_u64(&p, "int.cg_mean_iat_up"), 16448);
	ck_assert_uint_eq(tl_u64(&p, "int.cg_mean_pkt_size_down"), 0);
	ck_assert_uint_eq(tl_u64(&p, "int.cg_mean_pkt_size_up"), 1500);

	/* every prefix, from a heap copy of exactly that size: nothing read
	 * past the end, and the block only ever whole */
	size_t n = cg_packet(&t, 10, &last, &first);
	for (size_t k = 0; k <= n; k++) {
		uint8_t *copy = malloc(k ? k : 1);
		ck_assert_ptr_nonnull(copy);
		memcpy(copy, t.b, k);
		tl_dissect(&p, &st, copy, k, NULL);
		if (tl_get(&p, "int.cg_mean_iat_down", &v))
			ck_assert_uint_eq(v.v.u, UINT64_C(1) << 32);
		for (size_t a = 0; a < sizeof(cg_attrs) / sizeof(cg_attrs[0]); a++)
			tl_get(&p, cg_attrs[a], &v);
		free(copy);
	}

	/* HopML without the block (3 words): the flag, no block, whether
	 * read as v1.0 (the lengths agree) or as the L4S dialect forced */
	char err[256];
	for (int forced = 0; forced <= 1; forced++) {
		if (forced)
			ck_assert_int_eq(isp_registry_option(tl_registry(), "int.dialect=l4s",
							     err, sizeof(err)), 0);
		cg_packet(&t, 3, &last, &first);
		tl_dissect(&p, &st, t.b, t.n, NULL);
		ck_assert_int_eq(isp_registry_option(tl_registry(), "int.dialect=auto",
						     err, sizeof(err)), 0);
		ck_assert_int_eq(p.malformed, 0);
		ck_assert_uint_eq(tl_u64(&p, "int.num_hop"), 2);
		tl_expect_array(&p, "int.hop_switch_ids", sw, 2, 0);
		ck_assert_uint_eq(tl_u64(&p, "int.is_cloud_gaming"), 1);
		ck_assert(tl_has(&p, "int.hop_l4s_mark") == (forced == 1));
		expect_no_cg(&p);
	}

	/* the bit in a spec layout (v2.x: reserved, 4 bytes): no block */
	t.n = 0;
	tl_eth_ipv4_udp(&t, 0x20 << 2, 1, 2);
	tl_be32(&t, 0x10000000u | (3 + 2) << 16);
	tl_be32(&t, 0x20000000u | 2u << 8 | 8);
	tl_be32(&t, 0x80400000u);
	tl_be32(&t, 0);
	tl_be32(&t, 7);
	tl_be32(&t, 0xdeadbeefu);
	tl_fix_lengths(&t, IP_OFF);
	tl_dissect(&p, &st, t.b, t.n, NULL);
	ck_assert_int_eq(p.malformed, 0);
	ck_assert_uint_eq(tl_u64(&p, "int.is_cloud_gaming"), 1);
	expect_no_cg(&p);
}
END_TEST

/* Report v1.0 around Ethernet + IPv4 (with an option) + TCP or UDP. */
static void report_packet(struct tl_buf *t, uint8_t l4proto, bool ipv6)
{
	t->n = 0;
	tl_eth_ipv4_udp(t, 0, 5000, 6000);
	tl_be32(t, 0x14000000u | 3u);          /* Ver 1, Length 4 words, NProt 0, hw_id 3 */
	tl_be32(t, 0x01020304u);               /* switch ID */
	tl_be32(t, 9);                         /* sequence */
	tl_be32(t, 0xfedcba98u);               /* ingress time, ns */
	size_t inner = t->n;
	static const uint8_t macs[12] = { 2, 0, 0, 0, 0, 3, 2, 0, 0, 0, 0, 4 };
	tl_bytes(t, macs, 12);
	if (ipv6) {
		tl_be16(t, 0x86dd);
		tl_be32(t, 0x60000000u);
		tl_be16(t, 8);
		tl_u8(t, 17);
		tl_u8(t, 64);
		for (int i = 0; i < 8; i++)
			tl_be32(t, 0x20010db8u + (uint32_t)i);
		tl_be16(t, 1111);
		tl_be16(t, 2222);
		tl_be16(t, 8);
		tl_be16(t, 0);
		return;
	}
	tl_be16(t, 0x0800);
	size_t ip = t->n;
	tl_u8(t, 0x46);                        /* IHL 6: a 4-byte option */
	tl_u8(t, 0);
	tl_be16(t, 0);
	tl_be32(t, 0);
	tl_u8(t, 64);
	tl_u8(t, l4proto);
	tl_be16(t, 0);
	tl_be32(t, 0xc0000201u);               /* 192.0.2.1 */
	tl_be32(t, 0xc6336402u);               /* 198.51.100.2 */
	tl_be32(t, 0x01010101u);               /* NOP option */
	tl_be16(t, 0xa1b2);                    /* source port 41394 */
	tl_be16(t, 0x0050);                    /* destination port 80 */
	if (l4proto == 6) {
		tl_be32(t, 1);
		tl_be32(t, 0);
		tl_be16(t, 0x5002);
		tl_be16(t, 1024);
		tl_be32(t, 0);
	} else {
		tl_be16(t, 8);
		tl_be16(t, 0);
	}
	size_t ip_len = t->n - ip;
	t->b[ip + 2] = (uint8_t)(ip_len >> 8);
	t->b[ip + 3] = (uint8_t)ip_len;
	(void)inner;
}

START_TEST(report_inner_flow)
{
	struct tl_buf t;
	struct isp_packet p;
	struct isp_stats st = { 0 };
	struct isp_value v;

	for (int tcp = 0; tcp <= 1; tcp++) {
		report_packet(&t, tcp ? 6 : 17, false);
		tl_fix_lengths(&t, IP_OFF);
		tl_dissect(&p, &st, t.b, t.n, NULL);
		ck_assert_int_eq(p.malformed, 0);
		ck_assert(tl_get(&p, "int_report.ip_src", &v));
		ck_assert_uint_eq(v.type, ISP_T_IPV4);
		/* network order read as such: 192.0.2.1, not MMT-DPI's 1.2.0.192 */
		ck_assert_uint_eq(v.v.u, 0xc0000201u);
		ck_assert_uint_eq(tl_u64(&p, "int_report.ip_dst"), 0xc6336402u);
		ck_assert_uint_eq(tl_u64(&p, "int_report.port_src"), 0xa1b2);
		ck_assert_uint_eq(tl_u64(&p, "int_report.port_dst"), 80);
		ck_assert_uint_eq(tl_u64(&p, "int_report.ip_src"), tl_u64(&p, "ip.src"));
		/* the aliases read what their attributes read */
		ck_assert_uint_eq(tl_u64(&p, "int_report.switch_id"), 0x01020304u);
		ck_assert_uint_eq(tl_u64(&p, "int_report.node_id"), 0x01020304u);
		ck_assert_uint_eq(tl_u64(&p, "int_report.sink_time"), 0xfedcba98u);
		ck_assert_uint_eq(tl_u64(&p, "int_report.ingress_time"), 0xfedcba98u);
	}

	/* an inner TCP header the reporter cut (the report's own lengths
	 * whole): the address, not the ports */
	report_packet(&t, 6, false);
	t.n -= 8;
	tl_fix_lengths(&t, IP_OFF);
	tl_dissect(&p, &st, t.b, t.n, NULL);
	ck_assert_int_eq(p.malformed, ISP_ERR_TRUNCATED);
	ck_assert_uint_eq(tl_u64(&p, "int_report.ip_src"), 0xc0000201u);
	ck_assert(!tl_has(&p, "int_report.port_src"));
	ck_assert(!tl_has(&p, "int_report.port_dst"));

	/* neither UDP nor TCP inside */
	report_packet(&t, 132, false);
	tl_fix_lengths(&t, IP_OFF);
	tl_dissect(&p, &st, t.b, t.n, NULL);
	ck_assert_uint_eq(tl_u64(&p, "int_report.ip_dst"), 0xc6336402u);
	ck_assert(!tl_has(&p, "int_report.port_dst"));

	/* IPv6 inside: MMT-DPI has no value either */
	report_packet(&t, 17, true);
	tl_fix_lengths(&t, IP_OFF);
	tl_dissect(&p, &st, t.b, t.n, NULL);
	ck_assert_int_eq(p.malformed, 0);
	ck_assert(tl_has(&p, "ipv6.src"));
	ck_assert(!tl_has(&p, "int_report.ip_src"));
	ck_assert(!tl_has(&p, "int_report.port_src"));

	/* the outer IPv4 and UDP of a packet without a report are not it */
	t.n = 0;
	tl_eth_ipv4_udp(&t, 0, 1, 2);
	tl_fix_lengths(&t, IP_OFF);
	tl_dissect(&p, &st, t.b, t.n, NULL);
	ck_assert(!tl_has(&p, "int_report.ip_src"));
}
END_TEST

/* Every attribute MMT-DPI's int and int_report plugins register has a
 * name here (mmt-dpi proto_int.c, proto_int_report.c). */
START_TEST(mmt_names)
{
	static const char *const names[] = {
		"int.instruction_bits", "int.num_hop", "int.latency", "int.hop_switch_ids",
		"int.hop_ingress_port_ids", "int.hop_egress_port_ids", "int.hop_latencies",
		"int.hop_queue_ids", "int.hop_queue_occups", "int.hop_ingress_times",
		"int.hop_egress_times", "int.hop_lv2_ingress_port_ids",
		"int.hop_lv2_egress_port_ids", "int.hop_tx_utilizes", "int.hop_l4s_mark",
		"int.hop_l4s_drop", "int.hop_l4s_mark_probability",
		"int_report.switch_id", "int_report.hw_id", "int_report.seq_num",
		"int_report.ip_src", "int_report.ip_dst", "int_report.port_src",
		"int_report.port_dst", "int_report.sink_time",
	};
	struct isp_attr_ref r;
	char err[256];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		ck_assert_msg(isp_attr_lookup(tl_registry(), names[i], &r, err, sizeof(err)) == 0,
			      "%s", err);
	for (size_t i = 0; i < 10; i++)
		ck_assert_int_eq(isp_attr_lookup(tl_registry(), is_flags[i], &r, err, sizeof(err)), 0);
	for (size_t i = 0; i < sizeof(cg_attrs) / sizeof(cg_attrs[0]); i++)
		ck_assert_int_eq(isp_attr_lookup(tl_registry(), cg_attrs[i], &r, err, sizeof(err)), 0);
}
END_TEST

/* Each alias names an attribute of the same protocol with its type,
 * getter and arg; the dump leaves it out, the list says what it is. */
START_TEST(aliases)
{
	const struct isp_registry *reg = tl_registry();
	unsigned n = 0;
	char full[128], err[256];

	for (uint16_t i = 0; i < reg->nprotos; i++) {
		const struct isp_proto_desc *d = reg->proto[i].desc;
		for (const struct isp_attr_desc *a = d->attrs; a && a->name; a++) {
			if (!isp_attr_is_alias(a))
				continue;
			const char *target = a->help + strlen(ISP_ALIAS_PREFIX);
			size_t len = strcspn(target, ", ");
			ck_assert_uint_lt(len, sizeof(full));
			memcpy(full, target, len);
			full[len] = 0;
			struct isp_attr_ref r;
			ck_assert_msg(isp_attr_lookup(reg, full, &r, err, sizeof(err)) == 0, "%s", err);
			const struct isp_attr_desc *tgt = isp_attr_desc_of(reg, &r);
			ck_assert_uint_eq(r.proto, i);
			ck_assert(!isp_attr_is_alias(tgt));
			ck_assert(tgt->get == a->get && tgt->arg == a->arg);
			ck_assert_uint_eq(tgt->type, a->type);
			ck_assert_uint_eq(tgt->per_hop, a->per_hop);
			n++;
		}
	}
	ck_assert_uint_eq(n, 4);    /* switch_id, sink_time, cg_sum_ptk_size_up, meta.utime */

	struct tl_buf t;
	struct isp_packet p;
	struct isp_stats st = { 0 };
	char *text = NULL;
	size_t size = 0;
	report_packet(&t, 17, false);
	tl_fix_lengths(&t, IP_OFF);
	tl_dissect(&p, &st, t.b, t.n, NULL);
	FILE *f = open_memstream(&text, &size);
	ck_assert_ptr_nonnull(f);
	isp_dump_packet(reg, &p, 6, f);
	isp_list_attributes(reg, f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "\"int_report.node_id\":16909060"));
	ck_assert_ptr_nonnull(strstr(text, "\"int_report.ip_src\":\"192.0.2.1\""));
	ck_assert_ptr_null(strstr(text, "\"int_report.switch_id\""));
	ck_assert_ptr_null(strstr(text, "\"int_report.sink_time\""));
	ck_assert_ptr_nonnull(strstr(text, "alias of int_report.node_id"));
	ck_assert_ptr_nonnull(strstr(text, "alias of int.cg_sum_pkt_size_up"));
	free(text);
}
END_TEST

/* INT v2.x: a stack that is not a whole number of hops (shim Length one
 * word more, HopML past the stack) is bad_length; an instruction header
 * version other than 2 under a v2.x shim is bad_version. */
START_TEST(int_v2_lengths_and_version)
{
	struct tl_buf t = { .n = 0 };
	struct isp_packet p;
	struct isp_stats st = { 0 };
	/* {shim length words, HopML, MD version, verdict, hops} */
	static const unsigned cases[][5] = {
		{ 3 + 4, 2, 2, ISP_OK, 2 },
		{ 3 + 5, 2, 2, ISP_ERR_BAD_LENGTH, 0 },         /* a word more */
		{ 3 + 4, 3, 2, ISP_ERR_BAD_LENGTH, 0 },         /* 12-byte hops in 16 */
		{ 3 + 4, 31, 2, ISP_ERR_BAD_LENGTH, 0 },        /* HopML past the stack */
		{ 3 + 4, 2, 1, ISP_ERR_BAD_VERSION, 0 },
		{ 3 + 4, 2, 3, ISP_ERR_BAD_VERSION, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		t.n = 0;
		tl_eth_ipv4_udp(&t, 0x20 << 2, 1000, 2000);
		tl_be32(&t, 0x10000000u | cases[i][0] << 16);
		tl_be32(&t, cases[i][2] << 28 | cases[i][1] << 8 | 8);
		tl_be32(&t, 0xc0000000u);              /* switch ID, ports */
		tl_be32(&t, 0);
		for (unsigned w = 0; w < 5; w++)        /* 4 words of stack, 1 of payload */
			tl_be32(&t, 100 + w);
		tl_fix_lengths(&t, IP_OFF);
		tl_dissect(&p, &st, t.b, t.n, NULL);
		ck_assert_msg(p.malformed == (int)cases[i][3], "case %zu: %d", i, p.malformed);
		if (cases[i][3] == ISP_OK)
			ck_assert_uint_eq(tl_u64(&p, "int.num_hop"), cases[i][4]);
	}
}
END_TEST

START_TEST(attribute_names)
{
	struct isp_attr_ref r;
	char err[256];

	ck_assert_int_eq(isp_attr_lookup(tl_registry(), "ip.2.src", &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.instance, 2);
	ck_assert_int_eq(isp_attr_lookup(tl_registry(), "int.hop_latency", &r, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, "did you mean 'int.hop_latencies'") != NULL, "%s", err);
	ck_assert_int_eq(isp_attr_lookup(tl_registry(), "ip.0.src", &r, err, sizeof(err)), -1);
	ck_assert_int_eq(isp_attr_lookup(tl_registry(), "nosuch", &r, err, sizeof(err)), -1);
}
END_TEST

/* The hints' edit distance computes only a band of the table: below 4 it
 * must equal the whole table's Levenshtein distance, and be 4 or more
 * (99) exactly when that is; random words over 3 letters, so that near
 * and far pairs both occur. */
static unsigned levenshtein(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned d[16][16];

	for (size_t i = 0; i <= la; i++)
		d[i][0] = (unsigned)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			unsigned x = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (d[i - 1][j] + 1 < x)
				x = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < x)
				x = d[i][j - 1] + 1;
			d[i][j] = x;
		}
	return d[la][lb];
}

START_TEST(edit_distance_band)
{
	char a[16], b[16];
	unsigned seed = 1;

	for (int t = 0; t < 200000; t++) {
		size_t la = (seed = seed * 1103515245 + 12345) >> 16 & 15, lb = (seed >> 20) % 15;
		la = la > 14 ? 14 : la;
		for (size_t i = 0; i < la; i++)
			a[i] = (char)('a' + ((seed = seed * 1103515245 + 12345) >> 16) % 3);
		for (size_t i = 0; i < lb; i++)
			b[i] = (char)('a' + ((seed = seed * 1103515245 + 12345) >> 16) % 3);
		a[la] = b[lb] = 0;
		unsigned want = levenshtein(a, b), got = isp_edit_distance(a, b);
		ck_assert_msg(want < 4 ? got == want : got >= 4, "'%s' '%s': %u, want %u", a, b, got,
			      want);
	}
	ck_assert_uint_eq(isp_edit_distance("int.hop_latency", "int.hop_latencies"), 3);
	ck_assert_uint_ge(isp_edit_distance("ip.src", "int.hop_latencies"), 4);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("int_mmt");
	TCase *tc = tcase_create("mmt");

	tcase_add_test(tc, is_flags_every_version);
	tcase_add_test(tc, l4s_mark_probability);
	tcase_add_test(tc, cloud_gaming_block);
	tcase_add_test(tc, report_inner_flow);
	tcase_add_test(tc, mmt_names);
	tcase_add_test(tc, aliases);
	tcase_add_test(tc, attribute_names);
	tcase_add_test(tc, edit_distance_band);
	tcase_add_test(tc, int_v2_lengths_and_version);
	suite_add_tcase(s, tc);
	return tl_run_suite(s);
}
