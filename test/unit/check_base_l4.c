/*
 * check_base_l4.c - unit tests of the base protocol plugins above IP (UDP,
 * TCP, VXLAN, VXLAN-GPE, Geneve, GRE) and of every decoder's error paths,
 * on packets built byte by byte (see check_base.c).
 */
#include "basetest.h"

START_TEST(test_udp_fields)
{
	struct pkt b;

	pkt_init(&b);
	eth_ip4(&b, 0, 17, IP_A, IP_B);
	pkt_udp(&b, 0x1234, 0xabcd, 0xbeef);
	pkt_bytes(&b, PAYLOAD, 5);
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 3);
	EXPECT_OK();
	EXPECT_U("udp.src_port", 0x1234);
	EXPECT_U("udp.dst_port", 0xabcd);
	EXPECT_U("udp.len", 13);
	EXPECT_U("udp.checksum", 0xbeef);
	ck_assert_uint_eq(pk.layer[2].end, b.len);

	/* length 0 (offload, jumbogram): trust the capture */
	pkt_put16(&b, 14 + 20 + 4, 0);
	ck_assert_uint_eq(run(&b), 3);
	EXPECT_OK();
	EXPECT_U("udp.len", 0);
	ck_assert_uint_eq(pk.layer[2].end, b.len);
}
END_TEST

START_TEST(test_tcp_fields_and_options)
{
	struct pkt_tcp t = {
		.sport = 43210, .dport = 443, .seq = 0xdeadbeef, .ack = 0x01020304,
		.flags = 0x100 | 0x040 | 0x010 | 0x002,   /* NS ECE ACK SYN */
		.window = 64240, .csum = 0x1a2b, .urgent = 7,
		.mss = 1460, .wscale = 7, .sack_ok = true,
		.ts = true, .tsval = 0x11223344, .tsecr = 0x55667788,
	};
	struct pkt b;

	pkt_init(&b);
	eth_ip4(&b, 0, 6, IP_A, IP_B);
	pkt_tcp(&b, &t);
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 3);
	EXPECT_OK();
	EXPECT_U("tcp.src_port", 43210);
	EXPECT_U("tcp.dst_port", 443);
	EXPECT_U("tcp.seq_nb", 0xdeadbeef);
	EXPECT_U("tcp.ack_nb", 0x01020304);
	EXPECT_U("tcp.data_offset", 10);        /* 20 + 4 + 2 + 10 + 4 bytes */
	EXPECT_U("tcp.flags", 0x152);
	EXPECT_U("tcp.syn", 1);
	EXPECT_U("tcp.ack", 1);
	EXPECT_U("tcp.fin", 0);
	EXPECT_U("tcp.rst", 0);
	EXPECT_U("tcp.window", 64240);
	EXPECT_U("tcp.checksum", 0x1a2b);
	EXPECT_U("tcp.urgent_ptr", 7);
	EXPECT_U("tcp.mss", 1460);
	EXPECT_U("tcp.wscale", 7);
	EXPECT_U("tcp.sack_permitted", 1);
	EXPECT_U("tcp.ts_val", 0x11223344);
	EXPECT_U("tcp.ts_ecr", 0x55667788);
	ck_assert_uint_eq(pk.layer[2].len, 40);
	EXPECT_STR("meta.proto_hierarchy", "eth.ip.tcp");
}
END_TEST

START_TEST(test_tcp_no_options)
{
	struct pkt b;

	pkt_init(&b);
	eth_ip4(&b, 0, 6, IP_A, IP_B);
	pkt_tcp(&b, &(struct pkt_tcp){ .sport = 80, .dport = 1025, .seq = 1, .ack = 2,
				       .flags = 0x001 | 0x004 | 0x008, /* FIN RST PSH */
				       .window = 0xffff, .wscale = -1 });
	pkt_bytes(&b, PAYLOAD, 8);
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 3);
	EXPECT_OK();
	EXPECT_U("tcp.data_offset", 5);
	EXPECT_U("tcp.flags", 0x00d);
	EXPECT_U("tcp.fin", 1);
	EXPECT_U("tcp.rst", 1);
	EXPECT_U("tcp.syn", 0);
	EXPECT_U("tcp.ack", 0);
	EXPECT_U("tcp.window", 0xffff);
	EXPECT_ABSENT("tcp.mss");
	EXPECT_ABSENT("tcp.wscale");
	EXPECT_ABSENT("tcp.sack_permitted");
	EXPECT_ABSENT("tcp.ts_val");
	EXPECT_ABSENT("tcp.ts_ecr");
}
END_TEST

/* Options behind NOPs, and a malformed option that must end the walk
 * without reading past the header. */
START_TEST(test_tcp_odd_options)
{
	static const uint8_t opts[12] = {
		1, 1, 1, 3, 3, 14,              /* NOP NOP NOP WS=14 */
		2, 4, 0x05, 0xb4,               /* MSS 1460 */
		0, 0,                           /* EOL */
	};
	struct pkt b;

	pkt_init(&b);
	eth_ip4(&b, 0, 6, IP_A, IP_B);
	size_t t = pkt_tcp(&b, &(struct pkt_tcp){ .sport = 1, .dport = 2, .wscale = -1 });
	pkt_bytes(&b, opts, sizeof opts);
	b.buf[t + 12] = (20 + sizeof opts) / 4 << 4;
	pkt_finish(&b);
	run(&b);
	EXPECT_OK();
	EXPECT_U("tcp.data_offset", 8);
	EXPECT_U("tcp.wscale", 14);
	EXPECT_U("tcp.mss", 1460);
	EXPECT_ABSENT("tcp.sack_permitted");

	/* an option whose length runs past the header */
	b.buf[t + 20 + 6] = 8;                  /* "timestamp" */
	b.buf[t + 20 + 7] = 10;                 /* 10 bytes from offset 6 of 12 */
	run(&b);
	EXPECT_OK();
	EXPECT_U("tcp.wscale", 14);
	EXPECT_ABSENT("tcp.ts_val");
	EXPECT_ABSENT("tcp.mss");

	/* an MSS option of the wrong length is not an MSS */
	b.buf[t + 20 + 6] = 2;
	b.buf[t + 20 + 7] = 3;
	run(&b);
	EXPECT_OK();
	EXPECT_ABSENT("tcp.mss");
}
END_TEST

/* ---- tunnels ------------------------------------------------------------ */

/* Inner Ethernet + IPv4 + UDP after a tunnel header. */
static void inner_eth_ip_udp(struct pkt *b)
{
	pkt_eth(b, MAC_D2, MAC_S2, 0x0800);
	pkt_ipv4(b, &(struct pkt_ipv4){ .ttl = 5, .proto = 17, .src = IP_C, .dst = IP_D });
	pkt_udp(b, 7, 9, 0);
	pkt_bytes(b, PAYLOAD, 8);
}

START_TEST(test_vxlan)
{
	struct pkt b;

	pkt_init(&b);
	eth_ip4(&b, 0, 17, IP_A, IP_B);
	pkt_udp(&b, 49152, 4789, 0);
	size_t vx = pkt_vxlan(&b, 0x08, 0x123456);
	inner_eth_ip_udp(&b);
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 7);
	EXPECT_OK();
	EXPECT_U("vxlan.flags", 0x08);
	EXPECT_U("vxlan.vni", 0x123456);
	EXPECT_BYTES("eth.1.src", MAC_S, 6);
	EXPECT_BYTES("eth.2.src", MAC_S2, 6);
	EXPECT_BYTES("eth.src", MAC_S2, 6);     /* innermost */
	EXPECT_BYTES("eth.2.dst", MAC_D2, 6);
	EXPECT_U("ip.1.src", IP_A);
	EXPECT_U("ip.src", IP_C);
	EXPECT_U("ip.2.dst", IP_D);
	EXPECT_U("udp.1.dst_port", 4789);
	EXPECT_U("udp.dst_port", 9);
	EXPECT_STR("meta.proto_hierarchy", "eth.ip.udp.vxlan.eth.ip.udp");

	/* the reserved byte after the VNI is not part of it */
	b.buf[vx + 4] = 0xff; b.buf[vx + 5] = 0xff; b.buf[vx + 6] = 0xff;
	b.buf[vx + 7] = 0xab;
	run(&b);
	EXPECT_U("vxlan.vni", 0xffffff);
	b.buf[vx + 4] = 0x00; b.buf[vx + 5] = 0x00; b.buf[vx + 6] = 0x01;
	run(&b);
	EXPECT_U("vxlan.vni", 1);
}
END_TEST

START_TEST(test_vxlan_gpe)
{
	struct pkt b;

	/* next protocol 1: IPv4 */
	pkt_init(&b);
	eth_ip4(&b, 0, 17, IP_A, IP_B);
	pkt_udp(&b, 49153, 4790, 0);
	pkt_vxlan_gpe(&b, 0x0c, 1, 0x00abcd);
	pkt_ipv4(&b, &(struct pkt_ipv4){ .ttl = 5, .proto = 17, .src = IP_C, .dst = IP_D });
	pkt_udp(&b, 7, 9, 0);
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 6);
	EXPECT_OK();
	EXPECT_U("vxlan_gpe.flags", 0x0c);
	EXPECT_U("vxlan_gpe.next_protocol", 1);
	EXPECT_U("vxlan_gpe.vni", 0xabcd);
	EXPECT_U("ip.src", IP_C);
	EXPECT_STR("meta.proto_hierarchy", "eth.ip.udp.vxlan_gpe.ip.udp");

	/* next protocol 3: Ethernet */
	pkt_init(&b);
	eth_ip4(&b, 0, 17, IP_A, IP_B);
	pkt_udp(&b, 49153, 4790, 0);
	pkt_vxlan_gpe(&b, 0x0c, 3, 0xfedcba);
	inner_eth_ip_udp(&b);
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 7);
	EXPECT_U("vxlan_gpe.next_protocol", 3);
	EXPECT_U("vxlan_gpe.vni", 0xfedcba);
	EXPECT_BYTES("eth.2.src", MAC_S2, 6);
	EXPECT_STR("meta.proto_hierarchy", "eth.ip.udp.vxlan_gpe.eth.ip.udp");

	/* next protocol 2: IPv6 */
	pkt_init(&b);
	eth_ip4(&b, 0, 17, IP_A, IP_B);
	pkt_udp(&b, 49153, 4790, 0);
	pkt_vxlan_gpe(&b, 0x0c, 2, 1);
	struct pkt_ipv6 ip6 = { .next = 59, .hop_limit = 1 };
	memcpy(ip6.src, IP6_B, 16);
	pkt_ipv6(&b, &ip6);
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 5);
	EXPECT_BYTES("ipv6.src", IP6_B, 16);
	EXPECT_STR("meta.proto_hierarchy", "eth.ip.udp.vxlan_gpe.ipv6");

	/* an unassigned next protocol ends the chain without an error */
	pkt_init(&b);
	eth_ip4(&b, 0, 17, IP_A, IP_B);
	pkt_udp(&b, 49153, 4790, 0);
	pkt_vxlan_gpe(&b, 0x0c, 0x7f, 2);
	pkt_fill(&b, 0, 16);
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 4);
	EXPECT_OK();
	EXPECT_U("vxlan_gpe.next_protocol", 0x7f);
}
END_TEST

START_TEST(test_geneve_options)
{
	static const uint8_t opt_data[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct pkt b;

	pkt_init(&b);
	eth_ip4(&b, 0, 17, IP_A, IP_B);
	pkt_udp(&b, 49154, 6081, 0);
	size_t g = pkt_geneve(&b, false, true, 0x6558, 0xfedcba);
	pkt_geneve_opt(&b, g, 0x0102, 0x80, opt_data, sizeof opt_data);
	pkt_geneve_opt(&b, g, 0xffff, 0x01, NULL, 0);
	inner_eth_ip_udp(&b);
	pkt_finish(&b);
	ck_assert_uint_eq(b.buf[g], 4);         /* builder: 3 + 1 option words */
	ck_assert_uint_eq(run(&b), 7);
	EXPECT_OK();
	EXPECT_U("geneve.version", 0);
	EXPECT_U("geneve.opt_len", 4);
	EXPECT_U("geneve.oam", 0);
	EXPECT_U("geneve.critical", 1);
	EXPECT_U("geneve.protocol", 0x6558);
	EXPECT_U("geneve.vni", 0xfedcba);
	EXPECT_U("geneve.has_int", 0);
	EXPECT_BYTES("eth.2.src", MAC_S2, 6);   /* found after the options */
	EXPECT_U("ip.src", IP_C);
	EXPECT_STR("meta.proto_hierarchy", "eth.ip.udp.geneve.eth.ip.udp");
	ck_assert_uint_eq(pk.layer[3].len, 8 + 16);

	/* OAM flag, no options, an IPv4 payload */
	pkt_init(&b);
	eth_ip4(&b, 0, 17, IP_A, IP_B);
	pkt_udp(&b, 49154, 6081, 0);
	pkt_geneve(&b, true, false, 0x0800, 7);
	pkt_ipv4(&b, &(struct pkt_ipv4){ .ttl = 5, .proto = 17, .src = IP_D, .dst = IP_C });
	pkt_udp(&b, 7, 9, 0);
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 6);
	EXPECT_OK();
	EXPECT_U("geneve.opt_len", 0);
	EXPECT_U("geneve.oam", 1);
	EXPECT_U("geneve.critical", 0);
	EXPECT_U("geneve.protocol", 0x0800);
	EXPECT_U("geneve.vni", 7);
	EXPECT_U("ip.src", IP_D);
	EXPECT_STR("meta.proto_hierarchy", "eth.ip.udp.geneve.ip.udp");
}
END_TEST

/* Opt Len is 6 bits: 32 words of options need its top bit. */
START_TEST(test_geneve_long_options)
{
	static uint8_t big[124];
	struct pkt b;

	memset(big, 0x5c, sizeof big);
	pkt_init(&b);
	eth_ip4(&b, 0, 17, IP_A, IP_B);
	pkt_udp(&b, 49154, 6081, 0);
	size_t g = pkt_geneve(&b, false, false, 0x6558, 0x424242);
	pkt_geneve_opt(&b, g, 0x0102, 0x11, big, sizeof big);   /* 1 + 31 words */
	inner_eth_ip_udp(&b);
	pkt_finish(&b);
	ck_assert_uint_eq(b.buf[g], 32);
	ck_assert_uint_eq(run(&b), 7);
	EXPECT_OK();
	EXPECT_U("geneve.opt_len", 32);
	EXPECT_U("geneve.vni", 0x424242);
	EXPECT_BYTES("eth.2.src", MAC_S2, 6);
	ck_assert_uint_eq(pk.layer[3].len, 8 + 128);
}
END_TEST

/* An INT option (class 0x0103) becomes its own layer before the inner frame. */
START_TEST(test_geneve_int_option)
{
	/* v2 instruction header, no hops: Ver 2, HopML 0, RemainingHopCnt 5 */
	static const uint8_t md[12] = { 0x20, 0x00, 0x00, 0x05 };
	static const uint8_t other[4] = { 9, 9, 9, 9 };
	struct pkt b;

	pkt_init(&b);
	eth_ip4(&b, 0, 17, IP_A, IP_B);
	pkt_udp(&b, 49154, 6081, 0);
	size_t g = pkt_geneve(&b, false, false, 0x6558, 0x000100);
	pkt_geneve_opt(&b, g, 0x0001, 0x02, other, sizeof other);
	pkt_geneve_opt(&b, g, 0x0103, 0x00, md, sizeof md);
	inner_eth_ip_udp(&b);
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 8);
	EXPECT_OK();
	EXPECT_U("geneve.has_int", 1);
	EXPECT_U("geneve.opt_len", 2 + 4);
	EXPECT_U("geneve.vni", 0x100);
	EXPECT_U("int.version", 2);
	EXPECT_U("int.num_hop", 0);
	EXPECT_BYTES("eth.2.src", MAC_S2, 6);
	EXPECT_STR("meta.proto_hierarchy", "eth.ip.udp.geneve.int.eth.ip.udp");
}
END_TEST

START_TEST(test_gre_key_seq)
{
	struct pkt_gre g = { .key = true, .seq = true, .proto = 0x0800,
			     .key_val = 0xdeadbeef, .seq_val = 42 };
	struct pkt b;

	pkt_init(&b);
	eth_ip4(&b, 0, 47, IP_A, IP_B);
	pkt_gre(&b, &g);
	pkt_ipv4(&b, &(struct pkt_ipv4){ .ttl = 5, .proto = 17, .src = IP_C, .dst = IP_D });
	pkt_udp(&b, 7, 9, 0);
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 5);
	EXPECT_OK();
	EXPECT_U("gre.flags", 0x3000);
	EXPECT_U("gre.protocol", 0x0800);
	EXPECT_U("gre.key", 0xdeadbeef);
	EXPECT_U("gre.seq_num", 42);
	EXPECT_U("ip.1.proto", 47);
	EXPECT_U("ip.src", IP_C);
	EXPECT_STR("meta.proto_hierarchy", "eth.ip.gre.ip.udp");

	/* with a checksum in front, key and sequence move by 4 bytes */
	pkt_init(&b);
	g.csum = true;
	g.csum_val = 0x1111;
	eth_ip4(&b, 0, 47, IP_A, IP_B);
	pkt_gre(&b, &g);
	inner_eth_ip_udp(&b);
	b.buf[14 + 20 + 2] = 0x65;              /* protocol 0x6558: Ethernet */
	b.buf[14 + 20 + 3] = 0x58;
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 6);
	EXPECT_OK();
	EXPECT_U("gre.flags", 0xb000);
	EXPECT_U("gre.protocol", 0x6558);
	EXPECT_U("gre.key", 0xdeadbeef);
	EXPECT_U("gre.seq_num", 42);
	EXPECT_BYTES("eth.2.src", MAC_S2, 6);
	EXPECT_STR("meta.proto_hierarchy", "eth.ip.gre.eth.ip.udp");
}
END_TEST

START_TEST(test_gre_optional_absent)
{
	struct pkt b;

	/* sequence only */
	pkt_init(&b);
	eth_ip4(&b, 0, 47, IP_A, IP_B);
	pkt_gre(&b, &(struct pkt_gre){ .seq = true, .proto = 0x0800, .seq_val = 7 });
	pkt_ipv4(&b, &(struct pkt_ipv4){ .ttl = 5, .proto = 17, .src = IP_C, .dst = IP_D });
	pkt_udp(&b, 7, 9, 0);
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 5);
	EXPECT_OK();
	EXPECT_U("gre.flags", 0x1000);
	EXPECT_U("gre.seq_num", 7);
	EXPECT_ABSENT("gre.key");

	/* no optional fields */
	pkt_init(&b);
	eth_ip4(&b, 0, 47, IP_A, IP_B);
	pkt_gre(&b, &(struct pkt_gre){ .proto = 0x0800 });
	pkt_ipv4(&b, &(struct pkt_ipv4){ .ttl = 5, .proto = 17, .src = IP_C, .dst = IP_D });
	pkt_udp(&b, 7, 9, 0);
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 5);
	EXPECT_U("gre.flags", 0);
	EXPECT_ABSENT("gre.key");
	EXPECT_ABSENT("gre.seq_num");
	EXPECT_U("ip.src", IP_C);

	/* RFC 1701's routing bit: a routing list this decoder does not walk
	 * follows; unsupported, not its words read as the payload */
	pkt_init(&b);
	eth_ip4(&b, 0, 47, IP_A, IP_B);
	size_t gre = pkt_gre(&b, &(struct pkt_gre){ .proto = 0x0800 });
	pkt_ipv4(&b, &(struct pkt_ipv4){ .ttl = 5, .proto = 17, .src = IP_C, .dst = IP_D });
	pkt_finish(&b);
	pkt_put16(&b, gre, 0x4000);
	ck_assert_uint_eq(run(&b), 2);
	EXPECT_STR("meta.malformed", "gre.unsupported");
}
END_TEST

/* ---- error paths -------------------------------------------------------- */

START_TEST(test_err_eth_truncated)
{
	struct pkt b;

	pkt_init(&b);
	pkt_eth(&b, MAC_D, MAC_S, 0x0800);
	ck_assert_uint_eq(run_raw(b.buf, 13, 13, "eth"), 0);
	EXPECT_MALFORMED("eth", ISP_ERR_TRUNCATED);
	EXPECT_ABSENT("eth.src");
	EXPECT_STR("meta.proto_hierarchy", "");
}
END_TEST

START_TEST(test_err_vlan_truncated)
{
	struct pkt b;

	pkt_init(&b);
	pkt_eth(&b, MAC_D, MAC_S, 0x8100);
	pkt_u16(&b, 0x0064);
	pkt_u8(&b, 0x08);                       /* 3 of the tag's 4 bytes */
	ck_assert_uint_eq(run(&b), 1);
	EXPECT_MALFORMED("vlan", ISP_ERR_TRUNCATED);
	EXPECT_U("eth.ethertype", 0x8100);      /* layers before the failure stay */
	EXPECT_ABSENT("vlan.vid");
}
END_TEST

START_TEST(test_err_ipv4_truncated)
{
	struct pkt b;

	pkt_init(&b);
	eth_ip4(&b, 0, 17, IP_A, IP_B);
	pkt_finish(&b);
	ck_assert_uint_eq(run_raw(b.buf, 14 + 19, 14 + 19, "eth"), 1);
	EXPECT_MALFORMED("ip", ISP_ERR_TRUNCATED);

	/* IHL 15 (40 bytes of options) but only 30 header bytes captured */
	static uint8_t opts[40];
	memset(opts, 1, sizeof opts);           /* NOPs */
	pkt_init(&b);
	pkt_eth(&b, MAC_D, MAC_S, 0x0800);
	pkt_ipv4(&b, &(struct pkt_ipv4){ .ttl = 1, .proto = 17, .opts = opts, .optlen = 40 });
	pkt_finish(&b);
	ck_assert_uint_eq(b.buf[14], 0x4f);
	ck_assert_uint_eq(run_raw(b.buf, 14 + 30, b.len, "eth"), 1);
	EXPECT_MALFORMED("ip", ISP_ERR_TRUNCATED);
}
END_TEST

START_TEST(test_err_ipv4_bad_length)
{
	struct pkt b;

	pkt_init(&b);
	eth_ip4(&b, 0, 17, IP_A, IP_B);
	pkt_udp(&b, 1, 2, 0);
	pkt_finish(&b);

	b.buf[14] = 0x44;                       /* IHL 4: 16 bytes < 20 */
	ck_assert_uint_eq(run(&b), 1);
	EXPECT_MALFORMED("ip", ISP_ERR_BAD_LENGTH);
	b.buf[14] = 0x40;                       /* IHL 0 */
	run(&b);
	EXPECT_MALFORMED("ip", ISP_ERR_BAD_LENGTH);

	b.buf[14] = 0x45;
	pkt_put16(&b, 14 + 2, 19);              /* total length below the header */
	ck_assert_uint_eq(run(&b), 1);
	EXPECT_MALFORMED("ip", ISP_ERR_BAD_LENGTH);

	b.buf[14] = 0x46;                       /* 24-byte header, total 20 */
	pkt_put16(&b, 14 + 2, 20);
	run(&b);
	EXPECT_MALFORMED("ip", ISP_ERR_BAD_LENGTH);
}
END_TEST

START_TEST(test_err_ip_version)
{
	struct pkt b;

	/* IPv6 bytes behind EtherType 0x0800 */
	pkt_init(&b);
	pkt_eth(&b, MAC_D, MAC_S, 0x0800);
	pkt_ipv6(&b, &(struct pkt_ipv6){ .next = 59, .hop_limit = 1 });
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 1);
	EXPECT_MALFORMED("ip", ISP_ERR_BAD_VERSION);

	/* IPv4 bytes behind EtherType 0x86dd */
	pkt_init(&b);
	pkt_eth(&b, MAC_D, MAC_S, 0x86dd);
	pkt_ipv4(&b, &(struct pkt_ipv4){ .ttl = 1, .proto = 17 });
	pkt_fill(&b, 0, 20);
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 1);
	EXPECT_MALFORMED("ipv6", ISP_ERR_BAD_VERSION);

	/* version 5 with an otherwise valid IPv4 header */
	pkt_init(&b);
	eth_ip4(&b, 0, 17, IP_A, IP_B);
	pkt_finish(&b);
	b.buf[14] = 0x55;
	run(&b);
	EXPECT_MALFORMED("ip", ISP_ERR_BAD_VERSION);
}
END_TEST

START_TEST(test_err_ipv6_truncated)
{
	static const uint8_t ra[4] = { 0x05, 0x02, 0x00, 0x00 };
	struct pkt b;

	pkt_init(&b);
	eth_ip6(&b, 0, 0, 59);
	pkt_finish(&b);
	ck_assert_uint_eq(run_raw(b.buf, 14 + 39, 14 + 39, "eth"), 1);
	EXPECT_MALFORMED("ipv6", ISP_ERR_TRUNCATED);

	/* hop-by-hop header cut after 4 of its 8 bytes */
	pkt_init(&b);
	eth_ip6(&b, 0, 0, 0);
	pkt_ipv6_opts(&b, 17, ra, sizeof ra);
	pkt_finish(&b);
	ck_assert_uint_eq(run_raw(b.buf, b.len - 4, b.len, "eth"), 1);
	EXPECT_MALFORMED("ipv6", ISP_ERR_TRUNCATED);

	/* hop-by-hop length says 16 bytes, 8 are there: in a whole packet
	 * the length lies, in a cut one it was cut */
	pkt_init(&b);
	eth_ip6(&b, 0, 0, 0);
	size_t h = pkt_ipv6_opts(&b, 17, ra, sizeof ra);
	pkt_finish(&b);
	b.buf[h + 1] = 1;
	run(&b);
	EXPECT_MALFORMED("ipv6", ISP_ERR_BAD_LENGTH);
	pkt_put16(&b, 14 + 4, (unsigned)(b.len - 14 - 40 + 8));
	run_raw(b.buf, b.len, b.len + 8, "eth");
	EXPECT_MALFORMED("ipv6", ISP_ERR_TRUNCATED);
}
END_TEST

START_TEST(test_err_udp)
{
	struct pkt b;

	pkt_init(&b);
	eth_ip4(&b, 0, 17, IP_A, IP_B);
	pkt_udp(&b, 1, 2, 0);
	pkt_finish(&b);
	ck_assert_uint_eq(run_raw(b.buf, b.len - 1, b.len, "eth"), 2);
	EXPECT_MALFORMED("udp", ISP_ERR_TRUNCATED);

	pkt_put16(&b, 14 + 20 + 4, 7);          /* UDP length below its header */
	ck_assert_uint_eq(run(&b), 2);
	EXPECT_MALFORMED("udp", ISP_ERR_BAD_LENGTH);

	pkt_put16(&b, 14 + 20 + 4, 9);          /* past the whole datagram */
	ck_assert_uint_eq(run(&b), 2);
	EXPECT_MALFORMED("udp", ISP_ERR_BAD_LENGTH);
	/* ... also past a whole IPv4 datagram, although the capture is cut */
	ck_assert_uint_eq(run_raw(b.buf, b.len, b.len + 10, "eth"), 2);
	/* both lengths past the bytes, the capture cut: a cut, not a lie */
	pkt_put16(&b, 14 + 2, 20 + 9);
	ck_assert_uint_eq(run_raw(b.buf, b.len, b.len + 10, "eth"), 3);
}
END_TEST

START_TEST(test_err_tcp)
{
	struct pkt b;

	pkt_init(&b);
	eth_ip4(&b, 0, 6, IP_A, IP_B);
	size_t t = pkt_tcp(&b, &(struct pkt_tcp){ .sport = 1, .dport = 2, .wscale = -1 });
	pkt_finish(&b);
	ck_assert_uint_eq(run_raw(b.buf, b.len - 1, b.len, "eth"), 2);
	EXPECT_MALFORMED("tcp", ISP_ERR_TRUNCATED);

	b.buf[t + 12] = 0x40;                   /* data offset 4 */
	ck_assert_uint_eq(run(&b), 2);
	EXPECT_MALFORMED("tcp", ISP_ERR_BAD_LENGTH);

	b.buf[t + 12] = 0xa0;                   /* 40-byte header, 20 there: a lie */
	run(&b);
	EXPECT_MALFORMED("tcp", ISP_ERR_BAD_LENGTH);
}
END_TEST

START_TEST(test_err_tunnels_truncated)
{
	static const struct { uint16_t port; const char *proto; } t[] = {
		{ 4789, "vxlan" }, { 4790, "vxlan_gpe" }, { 6081, "geneve" },
	};
	for (unsigned i = 0; i < sizeof t / sizeof t[0]; i++) {
		struct pkt b;

		pkt_init(&b);
		eth_ip4(&b, 0, 17, IP_A, IP_B);
		pkt_udp(&b, 50000, t[i].port, 0);
		pkt_fill(&b, 0, 7);             /* one byte short of 8 */
		pkt_finish(&b);
		ck_assert_uint_eq(run(&b), 3);
		EXPECT_MALFORMED(t[i].proto, ISP_ERR_TRUNCATED);
	}
}
END_TEST

START_TEST(test_err_gre)
{
	struct pkt b;

	pkt_init(&b);
	eth_ip4(&b, 0, 47, IP_A, IP_B);
	pkt_u16(&b, 0);
	pkt_u8(&b, 0x08);                       /* 3 bytes of the 4-byte base */
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 2);
	EXPECT_MALFORMED("gre", ISP_ERR_TRUNCATED);

	/* K and S set, only the key present */
	pkt_init(&b);
	eth_ip4(&b, 0, 47, IP_A, IP_B);
	pkt_u16(&b, 0x3000);
	pkt_u16(&b, 0x0800);
	pkt_u32(&b, 0xdeadbeef);
	pkt_finish(&b);
	run(&b);
	EXPECT_MALFORMED("gre", ISP_ERR_TRUNCATED);

	/* version 1 (PPTP enhanced GRE) is not decoded */
	pkt_init(&b);
	eth_ip4(&b, 0, 47, IP_A, IP_B);
	pkt_u16(&b, 0x2001);
	pkt_u16(&b, 0x880b);
	pkt_u32(&b, 0x00040001);
	pkt_finish(&b);
	run(&b);
	EXPECT_MALFORMED("gre", ISP_ERR_UNSUPPORTED);
}
END_TEST

/* More nested headers than ISP_MAX_LAYERS: counted against the layer that
 * did not fit, keeping the ones that did. */
START_TEST(test_err_too_deep)
{
	struct pkt b;

	pkt_init(&b);
	pkt_eth(&b, MAC_D, MAC_S, 0x8100);
	for (unsigned i = 0; i < ISP_MAX_LAYERS; i++)
		pkt_vlan(&b, 0, 0, i + 1, 0x8100);
	pkt_fill(&b, 0, 4);
	ck_assert_uint_eq(run(&b), ISP_MAX_LAYERS);
	EXPECT_MALFORMED("vlan", ISP_ERR_DEPTH);
	EXPECT_U("vlan.1.vid", 1);
	EXPECT_U("vlan.vid", ISP_MAX_LAYERS - 1);
}
END_TEST

/* Counters add up over several packets through one stats block. */
START_TEST(test_counters_accumulate)
{
	struct pkt good, bad;
	struct isp_stats acc = { 0 };

	pkt_init(&good);
	eth_ip4(&good, 0, 17, IP_A, IP_B);
	pkt_udp(&good, 1, 2, 0);
	pkt_finish(&good);
	pkt_init(&bad);
	eth_ip4(&bad, 0, 17, IP_A, IP_B);
	pkt_finish(&bad);
	bad.buf[14] = 0x43;

	for (unsigned i = 0; i < 3; i++) {
		run(&good);
		isp_stats_add(&acc, &st);
		run(&bad);
		isp_stats_add(&acc, &st);
	}
	ck_assert_uint_eq(acc.packets, 6);
	ck_assert_uint_eq(acc.malformed_packets, 3);
	ck_assert_uint_eq(acc.malformed[pid("ip")][ISP_ERR_BAD_LENGTH], 3);
	ck_assert_uint_eq(acc.decoded[pid("eth")], 6);
	ck_assert_uint_eq(acc.decoded[pid("ip")], 3);
	ck_assert_uint_eq(acc.decoded[pid("udp")], 3);
	ck_assert_uint_eq(acc.bytes, 3 * (good.len + bad.len));
}
END_TEST

/* ---- runner ------------------------------------------------------------- */

static Suite *l4_suite(void)
{
	Suite *s = suite_create("base_l4");
	TCase *tc;

	tc = tcase_create("l4");
	tcase_add_test(tc, test_udp_fields);
	tcase_add_test(tc, test_tcp_fields_and_options);
	tcase_add_test(tc, test_tcp_no_options);
	tcase_add_test(tc, test_tcp_odd_options);
	suite_add_tcase(s, tc);
	tc = tcase_create("tunnels");
	tcase_add_test(tc, test_vxlan);
	tcase_add_test(tc, test_vxlan_gpe);
	tcase_add_test(tc, test_geneve_options);
	tcase_add_test(tc, test_geneve_long_options);
	tcase_add_test(tc, test_geneve_int_option);
	tcase_add_test(tc, test_gre_key_seq);
	tcase_add_test(tc, test_gre_optional_absent);
	suite_add_tcase(s, tc);
	tc = tcase_create("errors");
	tcase_add_test(tc, test_err_eth_truncated);
	tcase_add_test(tc, test_err_vlan_truncated);
	tcase_add_test(tc, test_err_ipv4_truncated);
	tcase_add_test(tc, test_err_ipv4_bad_length);
	tcase_add_test(tc, test_err_ip_version);
	tcase_add_test(tc, test_err_ipv6_truncated);
	tcase_add_test(tc, test_err_udp);
	tcase_add_test(tc, test_err_tcp);
	tcase_add_test(tc, test_err_tunnels_truncated);
	tcase_add_test(tc, test_err_gre);
	tcase_add_test(tc, test_err_too_deep);
	tcase_add_test(tc, test_counters_accumulate);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	if (basetest_setup() != 0) {
		fprintf(stderr, "check_base_l4: registry setup failed\n");
		return 1;
	}
	return basetest_run(l4_suite());
}
