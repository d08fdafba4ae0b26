/*
 * check_base.c - unit tests of the base protocol plugins, layers 2 and 3
 * (Ethernet, VLAN, IPv4, IPv6) on packets built byte by byte. Every
 * expected value is a constant the test wrote into the packet (or derives
 * from one by the protocol's own definition), so a decoder that reads the
 * wrong bits or offsets fails here. Layer 4 and tunnels: check_base_l4.c.
 */
#include "basetest.h"

START_TEST(test_eth_fields)
{
	struct pkt b;

	pkt_init(&b);
	eth_ip4(&b, 0, 17, IP_A, IP_B);
	pkt_udp(&b, 1111, 2222, 0);
	pkt_bytes(&b, PAYLOAD, 4);
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 3);
	EXPECT_OK();
	EXPECT_BYTES("eth.dst", MAC_D, 6);
	EXPECT_BYTES("eth.src", MAC_S, 6);
	EXPECT_U("eth.ethertype", 0x0800);
	EXPECT_STR("meta.proto_hierarchy", "eth.ip.udp");
	EXPECT_U("meta.caplen", b.len);
	EXPECT_U("meta.packet_len", b.len);
	EXPECT_U("meta.packet_index", 1);
	EXPECT_ABSENT("meta.malformed");
	ck_assert_uint_eq(st.decoded[pid("eth")], 1);
	ck_assert_uint_eq(st.decoded[pid("ip")], 1);
	ck_assert_uint_eq(st.decoded[pid("udp")], 1);
}
END_TEST

START_TEST(test_eth_unknown_ethertype)
{
	struct pkt b;

	pkt_init(&b);
	pkt_eth(&b, MAC_S, MAC_D, 0x88cc);      /* LLDP: no plugin, not an error */
	pkt_fill(&b, 0x02, 46);
	ck_assert_uint_eq(run(&b), 1);
	EXPECT_OK();
	EXPECT_BYTES("eth.dst", MAC_S, 6);
	EXPECT_BYTES("eth.src", MAC_D, 6);
	EXPECT_U("eth.ethertype", 0x88cc);
	EXPECT_STR("meta.proto_hierarchy", "eth");
	EXPECT_ABSENT("ip.src");
}
END_TEST

START_TEST(test_vlan_single)
{
	/* pcp/dei/vid combinations whose bits would bleed into each other */
	static const struct { unsigned pcp, dei, vid; } c[] = {
		{ 5, 1, 0x123 }, { 7, 0, 0xfff }, { 0, 1, 0x001 }, { 2, 0, 0xabc },
	};
	for (unsigned i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct pkt b;

		pkt_init(&b);
		pkt_eth(&b, MAC_D, MAC_S, 0x8100);
		pkt_vlan(&b, c[i].pcp, c[i].dei, c[i].vid, 0x0800);
		pkt_ipv4(&b, &(struct pkt_ipv4){ .ttl = 1, .proto = 17, .src = IP_A, .dst = IP_B });
		pkt_udp(&b, 53, 33000, 0);
		pkt_finish(&b);
		ck_assert_uint_eq(run(&b), 4);
		EXPECT_OK();
		EXPECT_U("eth.ethertype", 0x8100);
		EXPECT_U("vlan.pcp", c[i].pcp);
		EXPECT_U("vlan.dei", c[i].dei);
		EXPECT_U("vlan.vid", c[i].vid);
		EXPECT_U("vlan.ethertype", 0x0800);
		EXPECT_U("ip.src", IP_A);
		EXPECT_U("udp.src_port", 53);
		EXPECT_STR("meta.proto_hierarchy", "eth.vlan.ip.udp");
	}
}
END_TEST

START_TEST(test_vlan_qinq)
{
	struct pkt b;

	pkt_init(&b);
	pkt_eth(&b, MAC_D, MAC_S, 0x88a8);
	pkt_vlan(&b, 3, 0, 100, 0x8100);        /* service tag */
	pkt_vlan(&b, 6, 1, 4000, 0x0800);       /* customer tag */
	pkt_ipv4(&b, &(struct pkt_ipv4){ .ttl = 9, .proto = 17, .src = IP_C, .dst = IP_D });
	pkt_udp(&b, 1, 2, 0);
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 5);
	EXPECT_OK();
	EXPECT_U("vlan.1.vid", 100);
	EXPECT_U("vlan.1.pcp", 3);
	EXPECT_U("vlan.1.dei", 0);
	EXPECT_U("vlan.1.ethertype", 0x8100);
	EXPECT_U("vlan.2.vid", 4000);
	EXPECT_U("vlan.2.pcp", 6);
	EXPECT_U("vlan.2.dei", 1);
	EXPECT_U("vlan.2.ethertype", 0x0800);
	EXPECT_U("vlan.vid", 4000);             /* no instance: the innermost tag */
	EXPECT_U("vlan.pcp", 6);
	EXPECT_ABSENT("vlan.3.vid");
	EXPECT_U("ip.src", IP_C);
	EXPECT_STR("meta.proto_hierarchy", "eth.vlan.vlan.ip.udp");

	/* the older 0x9100 outer TPID */
	pkt_put16(&b, 12, 0x9100);
	ck_assert_uint_eq(run(&b), 5);
	EXPECT_U("vlan.1.vid", 100);
	EXPECT_U("vlan.2.vid", 4000);
}
END_TEST

/* ---- IPv4 --------------------------------------------------------------- */

START_TEST(test_ipv4_fields_and_options)
{
	/* Router Alert (4 bytes) and three NOPs: 7 bytes, padded to 8 */
	static const uint8_t opts[] = { 0x94, 0x04, 0x00, 0x00, 0x01, 0x01, 0x01 };
	struct pkt_ipv4 ip = { .tos = 0xb9, .id = 0x1c46, .flags = 2, .ttl = 0x3f,
			       .proto = 17, .src = IP_A, .dst = IP_B,
			       .opts = opts, .optlen = sizeof opts };
	struct pkt b;

	pkt_init(&b);
	pkt_eth(&b, MAC_D, MAC_S, 0x0800);
	size_t ipoff = pkt_ipv4(&b, &ip);
	pkt_udp(&b, 1111, 2222, 0x5a5a);
	pkt_bytes(&b, PAYLOAD, 4);
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 3);
	EXPECT_OK();
	EXPECT_U("ip.version", 4);
	EXPECT_U("ip.header_len", 7);           /* 20 + 8 bytes of options */
	EXPECT_U("ip.options_len", 8);
	EXPECT_U("ip.tos", 0xb9);
	EXPECT_U("ip.dscp", 0x2e);              /* 0xb9 >> 2: EF */
	EXPECT_U("ip.ecn", 1);                  /* ECT(1) */
	EXPECT_U("ip.tot_len", 28 + 8 + 4);
	EXPECT_U("ip.identification", 0x1c46);
	EXPECT_U("ip.df", 1);
	EXPECT_U("ip.mf", 0);
	EXPECT_U("ip.frag_offset", 0);
	EXPECT_U("ip.ttl", 0x3f);
	EXPECT_U("ip.proto", 17);
	EXPECT_U("ip.src", IP_A);
	EXPECT_U("ip.dst", IP_B);
	/* the checksum attribute is the header's: it must verify */
	struct isp_value v;
	ck_assert(fetch("ip.checksum", &v, __LINE__));
	ck_assert_uint_eq(v.v.u, (uint64_t)(b.buf[ipoff + 10] << 8 | b.buf[ipoff + 11]));
	ck_assert_uint_eq(pkt_csum_fold(b.buf + ipoff, 28), 0xffff);
	/* UDP was found after the options */
	EXPECT_U("udp.src_port", 1111);
	EXPECT_U("udp.dst_port", 2222);
	EXPECT_U("udp.len", 12);
	EXPECT_U("udp.checksum", 0x5a5a);
	ck_assert_uint_eq(pk.layer[1].len, 28);
	ck_assert_uint_eq(pk.layer[2].off, 14 + 28);
}
END_TEST

/* A textbook header: 45 00 00 73 00 00 40 00 40 11 b8 61 c0 a8 00 01
 * c0 a8 00 c7, decoded as a raw IPv4 capture (link type 228). */
START_TEST(test_ipv4_reference_header)
{
	static const uint8_t hdr[20] = {
		0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
		0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
	};
	uint8_t pktb[0x73] = { 0 };

	memcpy(pktb, hdr, sizeof hdr);
	/* UDP 53 -> 53, length 0x73 - 20 = 95 */
	pktb[20] = 0; pktb[21] = 53; pktb[22] = 0; pktb[23] = 53;
	pktb[24] = 0; pktb[25] = 95;
	ck_assert_uint_eq(run_raw(pktb, sizeof pktb, sizeof pktb, "ip"), 2);
	EXPECT_OK();
	EXPECT_U("ip.version", 4);
	EXPECT_U("ip.header_len", 5);
	EXPECT_U("ip.options_len", 0);
	EXPECT_U("ip.tos", 0);
	EXPECT_U("ip.tot_len", 0x73);
	EXPECT_U("ip.identification", 0);
	EXPECT_U("ip.df", 1);
	EXPECT_U("ip.mf", 0);
	EXPECT_U("ip.ttl", 64);
	EXPECT_U("ip.proto", 17);
	EXPECT_U("ip.checksum", 0xb861);
	EXPECT_U("ip.src", 0xc0a80001);
	EXPECT_U("ip.dst", 0xc0a800c7);
	EXPECT_U("udp.len", 95);
	EXPECT_STR("meta.proto_hierarchy", "ip.udp");
	ck_assert_uint_eq(pkt_csum_fold(hdr, 20), 0xffff);
}
END_TEST

START_TEST(test_ipv4_dscp_ecn)
{
	static const uint8_t tos[] = { 0x00, 0x03, 0xfc, 0x01, 0x02, 0xb8, 0x5d };

	for (unsigned i = 0; i < sizeof tos; i++) {
		struct pkt b;

		pkt_init(&b);
		eth_ip4(&b, tos[i], 17, IP_A, IP_B);
		pkt_udp(&b, 7, 7, 0);
		pkt_finish(&b);
		run(&b);
		EXPECT_OK();
		EXPECT_U("ip.tos", tos[i]);
		EXPECT_U("ip.dscp", tos[i] >> 2);
		EXPECT_U("ip.ecn", tos[i] & 3);
	}
}
END_TEST

START_TEST(test_ipv4_fragments)
{
	struct pkt b;
	struct pkt_ipv4 ip = { .id = 0xabcd, .flags = 1, .frag_off = 185, .ttl = 64,
			       .proto = 17, .src = IP_A, .dst = IP_B };

	/* a later fragment: its payload starts mid-datagram, no UDP header */
	pkt_init(&b);
	pkt_eth(&b, MAC_D, MAC_S, 0x0800);
	pkt_ipv4(&b, &ip);
	pkt_fill(&b, 0x11, 24);
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 2);
	EXPECT_OK();
	EXPECT_U("ip.mf", 1);
	EXPECT_U("ip.df", 0);
	EXPECT_U("ip.frag_offset", 185);
	EXPECT_U("ip.identification", 0xabcd);
	EXPECT_ABSENT("udp.src_port");
	EXPECT_STR("meta.proto_hierarchy", "eth.ip");

	/* the first fragment does carry the UDP header */
	pkt_init(&b);
	ip.frag_off = 0;
	pkt_eth(&b, MAC_D, MAC_S, 0x0800);
	pkt_ipv4(&b, &ip);
	pkt_udp(&b, 4000, 4001, 0);
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 3);
	EXPECT_U("ip.mf", 1);
	EXPECT_U("ip.frag_offset", 0);
	EXPECT_U("udp.dst_port", 4001);

	/* whose UDP Length is the whole datagram's, past the fragment: what
	 * the fragment carries is cut by the fragmentation, not a lie */
	pkt_init(&b);
	pkt_eth(&b, MAC_D, MAC_S, 0x0800);
	pkt_ipv4(&b, &ip);
	size_t udp = pkt_udp(&b, 4000, 4001, 0);
	pkt_fill(&b, 0x22, 40);
	pkt_finish(&b);
	pkt_put16(&b, udp + 4, 3000);
	ck_assert_uint_eq(run(&b), 3);
	EXPECT_OK();
	EXPECT_U("udp.len", 3000);
	EXPECT_STR("meta.proto_hierarchy", "eth.ip.udp");

	/* the highest offset, to catch a field one bit short */
	pkt_init(&b);
	ip.flags = 0;
	ip.frag_off = 0x1fff;
	pkt_eth(&b, MAC_D, MAC_S, 0x0800);
	pkt_ipv4(&b, &ip);
	pkt_fill(&b, 0, 8);
	pkt_finish(&b);
	run(&b);
	EXPECT_U("ip.frag_offset", 0x1fff);
	EXPECT_U("ip.mf", 0);
	EXPECT_U("ip.df", 0);
}
END_TEST

/* Ethernet pads frames to 60 bytes: the padding belongs to no layer. */
START_TEST(test_ipv4_ethernet_padding)
{
	struct pkt b;

	/* UDP to the VXLAN port with an empty payload, padding that would
	 * read as a VXLAN header and an inner frame */
	pkt_init(&b);
	eth_ip4(&b, 0, 17, IP_A, IP_B);
	pkt_udp(&b, 40000, 4789, 0);
	pkt_finish(&b);
	ck_assert_uint_eq(b.len, 42);
	pkt_u32(&b, 0x08000000);
	pkt_u32(&b, 0x00abcd00);
	pkt_fill(&b, 0xee, 10);
	run(&b);
	ck_assert_uint_eq(pk.caplen, 60);
	EXPECT_U("ip.tot_len", 28);
	EXPECT_U("udp.len", 8);
	ck_assert_uint_eq(pk.layer[1].end, 42);
	ck_assert_uint_eq(pk.layer[2].end, 42);
	EXPECT_ABSENT("vxlan.vni");
	EXPECT_ABSENT("eth.2.src");

	/* a TCP segment without data and padding that reads as an INT shim:
	 * DSCP 0x20 makes INT detection look at the TCP payload */
	pkt_init(&b);
	eth_ip4(&b, 0x80, 6, IP_A, IP_B);
	pkt_tcp(&b, &(struct pkt_tcp){ .sport = 5001, .dport = 5002, .flags = 0x010,
				       .window = 100, .wscale = -1 });
	pkt_finish(&b);
	ck_assert_uint_eq(b.len, 54);
	static const uint8_t pad[6] = { 0x01, 0x00, 0x03, 0x00, 0x00, 0x00 };
	pkt_bytes(&b, pad, sizeof pad);
	ck_assert_uint_eq(run(&b), 3);
	EXPECT_OK();
	ck_assert_uint_eq(pk.layer[1].end, 54);
	ck_assert_uint_eq(pk.layer[2].end, 54);
	EXPECT_STR("meta.proto_hierarchy", "eth.ip.tcp");

	/* a 6-byte UDP payload plus 12 bytes of padding */
	pkt_init(&b);
	eth_ip4(&b, 0, 17, IP_A, IP_B);
	pkt_udp(&b, 1000, 2000, 0);
	pkt_bytes(&b, PAYLOAD, 6);
	pkt_finish(&b);
	pkt_fill(&b, 0, 60 - b.len);
	run(&b);
	EXPECT_OK();
	EXPECT_U("udp.len", 14);
	ck_assert_uint_eq(pk.layer[2].end, 48);
}
END_TEST

/* A capture cut by the snap length is not malformed. */
START_TEST(test_ipv4_snaplen)
{
	struct pkt b;

	pkt_init(&b);
	eth_ip4(&b, 0, 17, IP_A, IP_B);
	pkt_udp(&b, 1000, 2000, 0);
	pkt_fill(&b, 0x33, 200);
	pkt_finish(&b);
	ck_assert_uint_eq(run_raw(b.buf, 62, b.len, "eth"), 3);
	EXPECT_OK();
	EXPECT_U("ip.tot_len", 228);
	EXPECT_U("udp.len", 208);
	EXPECT_U("meta.caplen", 62);
	EXPECT_U("meta.packet_len", 242);
	ck_assert_uint_eq(pk.layer[2].end, 62);
}
END_TEST

/* ---- IPv6 --------------------------------------------------------------- */


START_TEST(test_ipv6_fields_ext_headers)
{
	static const uint8_t router_alert[4] = { 0x05, 0x02, 0x00, 0x00 };
	struct pkt b;

	pkt_init(&b);
	eth_ip6(&b, 0xb9, 0xabcde, 0);          /* 0: hop-by-hop follows */
	pkt_ipv6_opts(&b, 44, router_alert, sizeof router_alert);
	pkt_ipv6_frag(&b, 17, 0, true, 0x12345678);
	pkt_udp(&b, 5000, 7000, 0x0102);
	pkt_bytes(&b, PAYLOAD, 8);
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 3);
	EXPECT_OK();
	EXPECT_U("eth.ethertype", 0x86dd);
	EXPECT_U("ipv6.version", 6);
	EXPECT_U("ipv6.traffic_class", 0xb9);
	EXPECT_U("ipv6.dscp", 0x2e);
	EXPECT_U("ipv6.ecn", 1);
	EXPECT_U("ipv6.flow_label", 0xabcde);
	EXPECT_U("ipv6.payload_len", 8 + 8 + 8 + 8);
	EXPECT_U("ipv6.next_header", 17);       /* after the extension headers */
	EXPECT_U("ipv6.hop_limit", 33);
	EXPECT_U("ipv6.ext_len", 16);
	EXPECT_BYTES("ipv6.src", IP6_A, 16);
	EXPECT_BYTES("ipv6.dst", IP6_B, 16);
	EXPECT_U("udp.src_port", 5000);
	EXPECT_U("udp.dst_port", 7000);
	EXPECT_U("udp.len", 16);
	EXPECT_U("udp.checksum", 0x0102);
	EXPECT_STR("meta.proto_hierarchy", "eth.ipv6.udp");
	ck_assert_uint_eq(pk.layer[2].off, 14 + 40 + 16);
}
END_TEST

/* Routing, destination options and AH (whose length is in 4-byte units). */
START_TEST(test_ipv6_more_ext_headers)
{
	static const uint8_t pad4[4] = { 1, 2, 0, 0 };  /* PadN of 4 */
	struct pkt b;

	pkt_init(&b);
	eth_ip6(&b, 0, 0, 43);
	pkt_u8(&b, 60);                         /* routing: next = dest. options */
	pkt_u8(&b, 0);                          /* 8 bytes */
	pkt_u8(&b, 4);                          /* type 4 (SRH), segments left 0 */
	pkt_u8(&b, 0);
	pkt_u32(&b, 0);
	pkt_ipv6_opts(&b, 51, pad4, sizeof pad4);       /* 8 bytes */
	pkt_u8(&b, 17);                         /* AH: next = UDP */
	pkt_u8(&b, 4);                          /* (4 + 2) * 4 = 24 bytes */
	pkt_u16(&b, 0);
	pkt_u32(&b, 0x00001000);                /* SPI */
	pkt_u32(&b, 1);                         /* sequence */
	pkt_fill(&b, 0xcc, 12);                 /* ICV */
	pkt_udp(&b, 3000, 3001, 0);
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 3);
	EXPECT_OK();
	EXPECT_U("ipv6.next_header", 17);
	EXPECT_U("ipv6.ext_len", 8 + 8 + 24);
	EXPECT_U("udp.src_port", 3000);
	EXPECT_U("udp.dst_port", 3001);
	ck_assert_uint_eq(pk.layer[2].off, 14 + 40 + 40);
}
END_TEST

START_TEST(test_ipv6_tclass_flow_bits)
{
	/* all-ones neighbours: a field read one bit off picks them up */
	struct pkt b;

	pkt_init(&b);
	eth_ip6(&b, 0x03, 0xfffff, 59);         /* 59: no next header */
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 2);
	EXPECT_OK();
	EXPECT_U("ipv6.traffic_class", 0x03);
	EXPECT_U("ipv6.dscp", 0);
	EXPECT_U("ipv6.ecn", 3);
	EXPECT_U("ipv6.flow_label", 0xfffff);
	EXPECT_U("ipv6.next_header", 59);
	EXPECT_U("ipv6.ext_len", 0);
	EXPECT_U("ipv6.payload_len", 0);

	pkt_init(&b);
	eth_ip6(&b, 0xfc, 0x00001, 59);
	pkt_finish(&b);
	run(&b);
	EXPECT_U("ipv6.traffic_class", 0xfc);
	EXPECT_U("ipv6.dscp", 0x3f);
	EXPECT_U("ipv6.ecn", 0);
	EXPECT_U("ipv6.flow_label", 1);
}
END_TEST

START_TEST(test_ipv6_later_fragment)
{
	struct pkt b;

	pkt_init(&b);
	eth_ip6(&b, 0, 0, 44);
	pkt_ipv6_frag(&b, 17, 100, false, 7);
	pkt_fill(&b, 0x44, 16);                 /* mid-datagram bytes, no UDP header */
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 2);
	EXPECT_OK();
	EXPECT_U("ipv6.next_header", 17);
	EXPECT_U("ipv6.ext_len", 8);
	EXPECT_ABSENT("udp.src_port");
	EXPECT_STR("meta.proto_hierarchy", "eth.ipv6");

	/* the data of a later fragment is no extension header, even when its
	 * fragment header names one (the first fragment has them) */
	pkt_init(&b);
	eth_ip6(&b, 0, 0, 44);
	pkt_ipv6_frag(&b, 60, 100, false, 7);
	pkt_u8(&b, 17);
	pkt_u8(&b, 0xff);                       /* would be 2 KiB of options */
	pkt_fill(&b, 0x44, 14);
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 2);
	EXPECT_OK();
	EXPECT_U("ipv6.next_header", 60);
	EXPECT_U("ipv6.ext_len", 8);

	/* the first fragment (offset 0, M) carries the UDP header, whose
	 * Length is the whole datagram's */
	pkt_init(&b);
	eth_ip6(&b, 0, 0, 44);
	pkt_ipv6_frag(&b, 17, 0, true, 7);
	size_t udp = pkt_udp(&b, 4000, 4001, 0);
	pkt_fill(&b, 0x22, 40);
	pkt_finish(&b);
	pkt_put16(&b, udp + 4, 3000);
	ck_assert_uint_eq(run(&b), 3);
	EXPECT_OK();
	EXPECT_U("udp.len", 3000);
	EXPECT_STR("meta.proto_hierarchy", "eth.ipv6.udp");
}
END_TEST

START_TEST(test_ipv6_tcp_no_ext)
{
	struct pkt b;

	pkt_init(&b);
	eth_ip6(&b, 0, 0x12345, 6);
	pkt_tcp(&b, &(struct pkt_tcp){ .sport = 22, .dport = 50000, .flags = 0x018,
				       .window = 1, .wscale = -1 });
	pkt_bytes(&b, PAYLOAD, 3);
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 3);
	EXPECT_OK();
	EXPECT_U("ipv6.next_header", 6);
	EXPECT_U("ipv6.ext_len", 0);
	EXPECT_U("ipv6.payload_len", 23);
	EXPECT_U("tcp.src_port", 22);
	EXPECT_STR("meta.proto_hierarchy", "eth.ipv6.tcp");
}
END_TEST

/* ---- UDP and TCP -------------------------------------------------------- */

/* (the other decoders' errors: check_base_l4.c) */
START_TEST(test_err_geneve)
{
	static const uint8_t data[4] = { 0 };
	struct pkt b;

	/* Opt Len 2 words, one word present */
	pkt_init(&b);
	eth_ip4(&b, 0, 17, IP_A, IP_B);
	pkt_udp(&b, 50000, 6081, 0);
	size_t g = pkt_geneve(&b, false, false, 0x6558, 1);
	pkt_u32(&b, 0x01020000);
	b.buf[g] = 2;
	pkt_finish(&b);
	ck_assert_uint_eq(run(&b), 3);
	EXPECT_MALFORMED("geneve", ISP_ERR_BAD_LENGTH);         /* a whole packet: a lie */

	/* an option longer than Opt Len */
	pkt_init(&b);
	eth_ip4(&b, 0, 17, IP_A, IP_B);
	pkt_udp(&b, 50000, 6081, 0);
	g = pkt_geneve(&b, false, false, 0x6558, 1);
	size_t o = pkt_geneve_opt(&b, g, 0x0102, 1, data, sizeof data);
	pkt_fill(&b, 0, 32);
	pkt_finish(&b);
	b.buf[o + 3] = 2;                       /* 8 bytes of data, 4 in Opt Len */
	run(&b);
	EXPECT_MALFORMED("geneve", ISP_ERR_BAD_LENGTH);

	/* version 1 */
	b.buf[o + 3] = 1;
	b.buf[g] = 0x40 | 2;
	run(&b);
	EXPECT_MALFORMED("geneve", ISP_ERR_BAD_VERSION);
}
END_TEST

static Suite *base_suite(void)
{
	Suite *s = suite_create("base");
	TCase *tc;

	tc = tcase_create("ethernet_vlan");
	tcase_add_test(tc, test_eth_fields);
	tcase_add_test(tc, test_eth_unknown_ethertype);
	tcase_add_test(tc, test_vlan_single);
	tcase_add_test(tc, test_vlan_qinq);
	suite_add_tcase(s, tc);
	tc = tcase_create("ipv4");
	tcase_add_test(tc, test_ipv4_fields_and_options);
	tcase_add_test(tc, test_ipv4_reference_header);
	tcase_add_test(tc, test_ipv4_dscp_ecn);
	tcase_add_test(tc, test_ipv4_fragments);
	tcase_add_test(tc, test_ipv4_ethernet_padding);
	tcase_add_test(tc, test_ipv4_snaplen);
	suite_add_tcase(s, tc);
	tc = tcase_create("ipv6");
	tcase_add_test(tc, test_ipv6_fields_ext_headers);
	tcase_add_test(tc, test_ipv6_more_ext_headers);
	tcase_add_test(tc, test_ipv6_tclass_flow_bits);
	tcase_add_test(tc, test_ipv6_later_fragment);
	tcase_add_test(tc, test_ipv6_tcp_no_ext);
	suite_add_tcase(s, tc);
	tc = tcase_create("errors");
	tcase_add_test(tc, test_err_geneve);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	if (basetest_setup() != 0) {
		fprintf(stderr, "check_base: registry setup failed\n");
		return 1;
	}
	return basetest_run(base_suite());
}
