/*
 * check_base_link.c - unit tests of the link layers other than Ethernet
 * (Linux cooked capture v1 and v2, raw IP, BSD NULL and OpenBSD LOOP), of
 * the link-type table that picks a capture's first protocol, and of the
 * records the dissector refuses for their wire length. Packets are built
 * byte by byte; every expected value is one the test wrote.
 */
#include "basetest.h"

#include "../../src/core/source.h"

static const uint8_t ADDR8[8] = { 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7 };

/* Dissect b from the protocol the link table names for `linktype`. */
static unsigned run_link(const struct pkt *b, unsigned linktype)
{
	uint8_t id = reg->table[ISP_TBL_LINKTYPE][linktype];

	ck_assert_msg(id != 0xff, "no protocol for link type %u", linktype);
	return run_raw(b->buf, b->len, b->len, reg->proto[id].desc->name);
}

/* IPv4 + UDP 1111 -> 2222 + 4 bytes of payload, after what b holds. */
static void ip4_udp(struct pkt *b)
{
	pkt_ipv4(b, &(struct pkt_ipv4){ .ttl = 5, .proto = 17, .src = IP_A, .dst = IP_B });
	pkt_udp(b, 1111, 2222, 0);
	pkt_bytes(b, PAYLOAD, 4);
	pkt_finish(b);
}

static void ip6_udp(struct pkt *b)
{
	struct pkt_ipv6 ip = { .tclass = 0x80, .flow = 0x12345, .next = 17, .hop_limit = 7 };

	memcpy(ip.src, IP6_A, 16);
	memcpy(ip.dst, IP6_B, 16);
	pkt_ipv6(b, &ip);
	pkt_udp(b, 3333, 4444, 0);
	pkt_bytes(b, PAYLOAD, 4);
	pkt_finish(b);
}

/* SLL v1 header: packet type, ARPHRD type, address length, 8 address
 * bytes (the first halen of ADDR8, zeros after), protocol. */
static void sll(struct pkt *b, uint16_t pkttype, uint16_t hatype, uint16_t halen, uint16_t proto)
{
	uint8_t addr[8] = { 0 };

	memcpy(addr, ADDR8, halen < 8 ? halen : 8);
	pkt_u16(b, pkttype);
	pkt_u16(b, hatype);
	pkt_u16(b, halen);
	pkt_bytes(b, addr, 8);
	pkt_u16(b, proto);
}

static void sll2(struct pkt *b, uint16_t proto, uint32_t ifindex, uint16_t hatype,
		 uint8_t pkttype, uint8_t halen)
{
	uint8_t addr[8] = { 0 };

	memcpy(addr, ADDR8, halen < 8 ? halen : 8);
	pkt_u16(b, proto);
	pkt_u16(b, 0);
	pkt_u32(b, ifindex);
	pkt_u16(b, hatype);
	pkt_u8(b, pkttype);
	pkt_u8(b, halen);
	pkt_bytes(b, addr, 8);
}

/* ---- the link-type table ------------------------------------------------ */

START_TEST(test_linktype_table)
{
	static const struct { unsigned lt; const char *proto; } c[] = {
		{ 0, "null" }, { 1, "eth" }, { 101, "raw" }, { 108, "loop" },
		{ 113, "sll" }, { 228, "ip" }, { 229, "ipv6" }, { 276, "sll2" },
	};
	for (unsigned i = 0; i < sizeof c / sizeof c[0]; i++)
		ck_assert_msg(reg->table[ISP_TBL_LINKTYPE][c[i].lt] == pid(c[i].proto),
			      "link type %u is not %s", c[i].lt, c[i].proto);
	ck_assert_uint_eq(reg->table[ISP_TBL_LINKTYPE][147], 0xff);    /* USER0 */
	/* libpcap's DLT_RAW (12; 14 on OpenBSD) is LINKTYPE_RAW */
	ck_assert_int_eq(isp_source_linktype_of_dlt(12), 101);
	ck_assert_int_eq(isp_source_linktype_of_dlt(14), 101);
	ck_assert_int_eq(isp_source_linktype_of_dlt(101), 101);
	ck_assert_int_eq(isp_source_linktype_of_dlt(1), 1);
	ck_assert_int_eq(isp_source_linktype_of_dlt(113), 113);
	ck_assert_int_eq(isp_source_linktype_of_dlt(276), 276);
	ck_assert_int_eq(isp_source_linktype_of_dlt(0), 0);
}
END_TEST

/* ---- Linux cooked capture ----------------------------------------------- */

START_TEST(test_sll_fields)
{
	struct pkt b;

	pkt_init(&b);
	sll(&b, 4, 1, 6, 0x0800);
	ip4_udp(&b);
	ck_assert_uint_eq(run_link(&b, 113), 3);
	EXPECT_OK();
	EXPECT_STR("meta.proto_hierarchy", "sll.ip.udp");
	EXPECT_U("sll.pkttype", 4);
	EXPECT_U("sll.hatype", 1);
	EXPECT_U("sll.halen", 6);
	EXPECT_STR("sll.addr", "a0:a1:a2:a3:a4:a5");
	EXPECT_U("sll.protocol", 0x0800);
	EXPECT_U("ip.src", IP_A);
	EXPECT_U("udp.dst_port", 2222);
	EXPECT_U("meta.packet_len", b.len);
}
END_TEST

START_TEST(test_sll_addresses)
{
	/* halen 0 (loopback), 8 (the room there is), 20 (cut to the 8) */
	static const struct { uint16_t halen; const char *text; } c[] = {
		{ 0, "" }, { 8, "a0:a1:a2:a3:a4:a5:a6:a7" }, { 20, "a0:a1:a2:a3:a4:a5:a6:a7" },
	};
	for (unsigned i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct pkt b;

		pkt_init(&b);
		sll(&b, 0, 772, c[i].halen, 0x86dd);
		ip6_udp(&b);
		ck_assert_uint_eq(run_link(&b, 113), 3);
		EXPECT_OK();
		EXPECT_U("sll.halen", c[i].halen);
		EXPECT_STR("sll.addr", c[i].text);
		EXPECT_U("sll.hatype", 772);
		EXPECT_STR("meta.proto_hierarchy", "sll.ipv6.udp");
		EXPECT_U("ipv6.flow_label", 0x12345);
	}
}
END_TEST

START_TEST(test_sll_not_an_ethertype)
{
	struct pkt b;

	/* 0x0004: Linux's 802.2 LLC pseudo-type, whatever follows */
	pkt_init(&b);
	sll(&b, 0, 1, 6, 0x0004);
	ip4_udp(&b);
	ck_assert_uint_eq(run_link(&b, 113), 1);
	EXPECT_OK();
	EXPECT_U("sll.protocol", 4);
	EXPECT_ABSENT("ip.src");
	/* a netlink device: the field is a netlink family, 0x0800 or not */
	pkt_init(&b);
	sll(&b, 4, 824, 0, 0x0800);
	ip4_udp(&b);
	ck_assert_uint_eq(run_link(&b, 113), 1);
	EXPECT_OK();
	EXPECT_STR("meta.proto_hierarchy", "sll");
}
END_TEST

START_TEST(test_sll2_fields)
{
	struct pkt b;

	pkt_init(&b);
	sll2(&b, 0x86dd, 0x01020304, 1, 3, 6);
	ip6_udp(&b);
	ck_assert_uint_eq(run_link(&b, 276), 3);
	EXPECT_OK();
	EXPECT_STR("meta.proto_hierarchy", "sll2.ipv6.udp");
	EXPECT_U("sll2.protocol", 0x86dd);
	EXPECT_U("sll2.ifindex", 0x01020304);
	EXPECT_U("sll2.hatype", 1);
	EXPECT_U("sll2.pkttype", 3);
	EXPECT_U("sll2.halen", 6);
	EXPECT_STR("sll2.addr", "a0:a1:a2:a3:a4:a5");
	EXPECT_U("udp.src_port", 3333);

	/* the protocol is the first field: what v1 reads at 14 is address */
	pkt_init(&b);
	sll2(&b, 0x0800, 9, 1, 0, 8);
	ip4_udp(&b);
	ck_assert_uint_eq(run_link(&b, 276), 3);
	EXPECT_U("sll2.halen", 8);
	EXPECT_STR("sll2.addr", "a0:a1:a2:a3:a4:a5:a6:a7");
	EXPECT_U("ip.dst", IP_B);
}
END_TEST

START_TEST(test_sll_truncated)
{
	struct pkt b;

	pkt_init(&b);
	sll(&b, 0, 1, 6, 0x0800);
	ck_assert_uint_eq(run_raw(b.buf, 15, 15, "sll"), 0);
	EXPECT_MALFORMED("sll", ISP_ERR_TRUNCATED);
	EXPECT_ABSENT("sll.protocol");
	pkt_init(&b);
	sll2(&b, 0x0800, 1, 1, 0, 6);
	ck_assert_uint_eq(run_raw(b.buf, 19, 19, "sll2"), 0);
	EXPECT_MALFORMED("sll2", ISP_ERR_TRUNCATED);
	/* the header alone: sll2 decoded, the IPv4 it names is short */
	ck_assert_uint_eq(run_raw(b.buf, 20, 20, "sll2"), 1);
	EXPECT_MALFORMED("ip", ISP_ERR_TRUNCATED);
	EXPECT_U("sll2.ifindex", 1);
}
END_TEST

/* ---- raw IP ------------------------------------------------------------- */

START_TEST(test_raw_versions)
{
	struct pkt b;

	pkt_init(&b);
	ip4_udp(&b);
	ck_assert_uint_eq(run_link(&b, 101), 3);
	EXPECT_OK();
	EXPECT_STR("meta.proto_hierarchy", "raw.ip.udp");
	EXPECT_U("raw.version", 4);
	EXPECT_U("ip.src", IP_A);
	/* LINKTYPE_IPV4 is the same bytes, without the raw layer */
	ck_assert_uint_eq(run_link(&b, 228), 2);
	EXPECT_STR("meta.proto_hierarchy", "ip.udp");
	EXPECT_ABSENT("raw.version");

	pkt_init(&b);
	ip6_udp(&b);
	ck_assert_uint_eq(run_link(&b, 101), 3);
	EXPECT_OK();
	EXPECT_STR("meta.proto_hierarchy", "raw.ipv6.udp");
	EXPECT_U("raw.version", 6);
	EXPECT_BYTES("ipv6.src", IP6_A, 16);
	ck_assert_uint_eq(run_link(&b, 229), 2);
	EXPECT_STR("meta.proto_hierarchy", "ipv6.udp");
}
END_TEST

START_TEST(test_raw_errors)
{
	struct pkt b;

	pkt_init(&b);
	ip4_udp(&b);
	b.buf[0] = 0x55;        /* version 5 */
	ck_assert_uint_eq(run_link(&b, 101), 0);
	EXPECT_MALFORMED("raw", ISP_ERR_BAD_VERSION);
	ck_assert_uint_eq(run_raw(b.buf, 0, 0, "raw"), 0);
	EXPECT_MALFORMED("raw", ISP_ERR_TRUNCATED);
	/* one byte: raw names IPv4, which is then short */
	b.buf[0] = 0x45;
	ck_assert_uint_eq(run_raw(b.buf, 1, 1, "raw"), 1);
	EXPECT_MALFORMED("ip", ISP_ERR_TRUNCATED);
	EXPECT_U("raw.version", 4);
}
END_TEST

/* ---- NULL and LOOP ------------------------------------------------------ */

static void af(struct pkt *b, uint32_t v, bool little)
{
	if (little) {
		uint8_t le[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
		pkt_bytes(b, le, 4);
	} else {
		pkt_u32(b, v);
	}
}

START_TEST(test_null_families)
{
	/* AF_INET6 of Linux, OpenBSD/NetBSD, FreeBSD, macOS; either order */
	static const uint32_t v6[] = { 10, 24, 28, 30 };
	for (int little = 0; little <= 1; little++) {
		struct pkt b;

		pkt_init(&b);
		af(&b, 2, little);
		ip4_udp(&b);
		ck_assert_uint_eq(run_link(&b, 0), 3);
		EXPECT_OK();
		EXPECT_STR("meta.proto_hierarchy", "null.ip.udp");
		EXPECT_U("null.family", 2);
		for (unsigned i = 0; i < sizeof v6 / sizeof v6[0]; i++) {
			pkt_init(&b);
			af(&b, v6[i], little);
			ip6_udp(&b);
			ck_assert_uint_eq(run_link(&b, 0), 3);
			EXPECT_OK();
			EXPECT_STR("meta.proto_hierarchy", "null.ipv6.udp");
			EXPECT_U("null.family", v6[i]);
		}
	}
}
END_TEST

START_TEST(test_null_other_family)
{
	struct pkt b;

	pkt_init(&b);
	af(&b, 7, true);        /* another family: the layer alone, no error */
	ip4_udp(&b);
	ck_assert_uint_eq(run_link(&b, 0), 1);
	EXPECT_OK();
	EXPECT_U("null.family", 7);
	EXPECT_ABSENT("ip.src");
	ck_assert_uint_eq(run_raw(b.buf, 3, 3, "null"), 0);
	EXPECT_MALFORMED("null", ISP_ERR_TRUNCATED);
}
END_TEST

START_TEST(test_loop_families)
{
	struct pkt b;

	pkt_init(&b);
	af(&b, 2, false);
	ip4_udp(&b);
	ck_assert_uint_eq(run_link(&b, 108), 3);
	EXPECT_OK();
	EXPECT_STR("meta.proto_hierarchy", "loop.ip.udp");
	EXPECT_U("loop.family", 2);
	pkt_init(&b);
	af(&b, 24, false);
	ip6_udp(&b);
	ck_assert_uint_eq(run_link(&b, 108), 3);
	EXPECT_STR("meta.proto_hierarchy", "loop.ipv6.udp");
	EXPECT_U("loop.family", 24);
	/* network order only: a little-endian 2 is another family */
	pkt_init(&b);
	af(&b, 2, true);
	ip4_udp(&b);
	ck_assert_uint_eq(run_link(&b, 108), 1);
	EXPECT_OK();
	EXPECT_U("loop.family", 0x02000000);
	ck_assert_uint_eq(run_raw(b.buf, 3, 3, "loop"), 0);
	EXPECT_MALFORMED("loop", ISP_ERR_TRUNCATED);
}
END_TEST

/* ---- records refused for their wire length ------------------------------ */

static void expect_refused(int line)
{
	ck_assert_msg(isp_dissect_refused(&pk), "line %d: not refused", line);
	ck_assert_msg(pk.nlayers == 0, "line %d: %u layers", line, pk.nlayers);
	ck_assert_msg(st.packets == 1 && st.items == 0 && st.bytes == 0,
		      "line %d: packets %" PRIu64 ", items %" PRIu64 ", bytes %" PRIu64,
		      line, st.packets, st.items, st.bytes);
	expect_malformed("meta", ISP_ERR_BAD_WIRE_LEN, line);
	expect_absent("eth.src", line);
	ck_assert_uint_eq(st.decoded[pid("eth")], 0);
}

START_TEST(test_wire_len)
{
	struct pkt b;

	pkt_init(&b);
	eth_ip4(&b, 0, 17, IP_A, IP_B);
	pkt_udp(&b, 1, 2, 0);
	pkt_finish(&b);
	/* the original length below the captured one */
	ck_assert_uint_eq(run_raw(b.buf, b.len, b.len - 1, "eth"), 0);
	expect_refused(__LINE__);
	ck_assert_str_eq(isp_verdict_name(ISP_ERR_BAD_WIRE_LEN), "bad_wire_len");
	/* above 262144 */
	ck_assert_uint_eq(run_raw(b.buf, b.len, ISP_MAX_WIRE_LEN + 1, "eth"), 0);
	expect_refused(__LINE__);
	ck_assert_uint_eq(run_raw(b.buf, b.len, UINT32_MAX, "eth"), 0);
	expect_refused(__LINE__);
	/* equal, or cut by a snap length up to 262144: decoded */
	ck_assert_uint_eq(run_raw(b.buf, b.len, b.len, "eth"), 3);
	EXPECT_OK();
	ck_assert(!isp_dissect_refused(&pk));
	ck_assert_uint_eq(run_raw(b.buf, b.len, ISP_MAX_WIRE_LEN, "eth"), 3);
	EXPECT_OK();
	EXPECT_U("meta.packet_len", ISP_MAX_WIRE_LEN);
	ck_assert_uint_eq(st.bytes, ISP_MAX_WIRE_LEN);
	ck_assert_uint_eq(st.items, 1);
	/* an empty record with a wire length is only cut */
	ck_assert_uint_eq(run_raw(b.buf, 0, 64, "eth"), 0);
	EXPECT_MALFORMED("eth", ISP_ERR_TRUNCATED);
}
END_TEST

static Suite *link_suite(void)
{
	Suite *s = suite_create("base_link");
	TCase *tc;

	tc = tcase_create("linktype");
	tcase_add_test(tc, test_linktype_table);
	suite_add_tcase(s, tc);
	tc = tcase_create("sll");
	tcase_add_test(tc, test_sll_fields);
	tcase_add_test(tc, test_sll_addresses);
	tcase_add_test(tc, test_sll_not_an_ethertype);
	tcase_add_test(tc, test_sll2_fields);
	tcase_add_test(tc, test_sll_truncated);
	suite_add_tcase(s, tc);
	tc = tcase_create("raw_null_loop");
	tcase_add_test(tc, test_raw_versions);
	tcase_add_test(tc, test_raw_errors);
	tcase_add_test(tc, test_null_families);
	tcase_add_test(tc, test_null_other_family);
	tcase_add_test(tc, test_loop_families);
	suite_add_tcase(s, tc);
	tc = tcase_create("records");
	tcase_add_test(tc, test_wire_len);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	if (basetest_setup() != 0) {
		fprintf(stderr, "check_base_link: registry setup failed\n");
		return 1;
	}
	return basetest_run(link_suite());
}
