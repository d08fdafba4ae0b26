/*
 * check_base.c - unit tests of the base protocol plugins (Ethernet, VLAN,
 * IPv4, IPv6, UDP, TCP, VXLAN, VXLAN-GPE, Geneve, GRE) on packets built byte
 * by byte. Every expected value is a constant the test wrote into the
 * packet (or derives from one by the protocol's own definition), so a
 * decoder that reads the wrong bits or offsets fails here.
 */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/core/dissect.h"
#include "../../src/core/registry.h"
#include "pktbuild.h"

/* Read-only after main() sets it up, so forked test cases share it. */
static struct isp_registry *reg;
static struct isp_packet pk;
static struct isp_stats st;

static const uint8_t MAC_D[6] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55 };
static const uint8_t MAC_S[6] = { 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb };
static const uint8_t MAC_D2[6] = { 0x02, 0xde, 0xad, 0x00, 0x00, 0x01 };
static const uint8_t MAC_S2[6] = { 0x02, 0xbe, 0xef, 0x00, 0x00, 0x02 };
#define IP_A 0x0a010203u        /* 10.1.2.3 */
#define IP_B 0xc0a80405u        /* 192.168.4.5 */
#define IP_C 0xac100001u        /* 172.16.0.1 */
#define IP_D 0xac100002u        /* 172.16.0.2 */
static const uint8_t IP6_A[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x01 };
static const uint8_t IP6_B[16] = { 0x20, 0x01, 0x0d, 0xb8, 0xff, [14] = 0xab, [15] = 0x02 };

/* ---- helpers ------------------------------------------------------------ */

static uint16_t pid(const char *name)
{
	uint16_t id = isp_proto_id(reg, name);

	ck_assert_msg(id != ISP_PROTO_NONE, "protocol %s not registered", name);
	return id;
}

static unsigned run_raw(const uint8_t *data, size_t caplen, size_t wirelen,
			const char *first)
{
	memset(&pk, 0, sizeof(pk));
	memset(&st, 0, sizeof(st));
	pk.data = data;
	pk.caplen = (uint32_t)caplen;
	pk.wirelen = (uint32_t)wirelen;
	pk.index = 1;
	return isp_dissect(reg, &pk, pid(first), &st);
}

static unsigned run(const struct pkt *b)
{
	return run_raw(b->buf, b->len, b->len, "eth");
}

static bool fetch(const char *name, struct isp_value *v, int line)
{
	struct isp_attr_ref r;
	char err[256];

	ck_assert_msg(isp_attr_lookup(reg, name, &r, err, sizeof err) == 0,
		      "line %d: lookup %s: %s", line, name, err);
	memset(v, 0xa5, sizeof(*v));
	bool ok = isp_attr_get(reg, &pk, &r, v);
	if (ok)
		ck_assert_msg(v->type == isp_attr_desc_of(reg, &r)->type,
			      "line %d: %s has type %u, declared %u", line, name,
			      v->type, isp_attr_desc_of(reg, &r)->type);
	return ok;
}

#define EXPECT_U(name, exp) expect_u(name, (uint64_t)(exp), __LINE__)
static void expect_u(const char *name, uint64_t exp, int line)
{
	struct isp_value v;

	ck_assert_msg(fetch(name, &v, line), "line %d: %s is absent", line, name);
	ck_assert_msg(!v.is_array && v.missing == 0, "line %d: %s not a plain scalar", line, name);
	ck_assert_msg(v.v.u == exp, "line %d: %s = %#" PRIx64 ", expected %#" PRIx64,
		      line, name, v.v.u, exp);
}

#define EXPECT_ABSENT(name) expect_absent(name, __LINE__)
static void expect_absent(const char *name, int line)
{
	struct isp_value v;

	ck_assert_msg(!fetch(name, &v, line), "line %d: %s present (%#" PRIx64 ")",
		      line, name, v.v.u);
}

#define EXPECT_BYTES(name, exp, n) expect_bytes(name, exp, n, __LINE__)
static void expect_bytes(const char *name, const uint8_t *exp, size_t n, int line)
{
	struct isp_value v;

	ck_assert_msg(fetch(name, &v, line), "line %d: %s is absent", line, name);
	const uint8_t *got = n == 6 ? v.v.mac : v.v.ip6;
	ck_assert_msg(memcmp(got, exp, n) == 0, "line %d: %s differs", line, name);
}

#define EXPECT_STR(name, exp) expect_str(name, exp, __LINE__)
static void expect_str(const char *name, const char *exp, int line)
{
	struct isp_value v;

	ck_assert_msg(fetch(name, &v, line), "line %d: %s is absent", line, name);
	ck_assert_msg(strcmp(v.v.str, exp) == 0, "line %d: %s = \"%s\", expected \"%s\"",
		      line, name, v.v.str, exp);
}

#define EXPECT_OK() expect_ok(__LINE__)
static void expect_ok(int line)
{
	ck_assert_msg(pk.malformed == 0, "line %d: malformed %s in %s", line,
		      isp_verdict_name((enum isp_verdict)pk.malformed),
		      reg->proto[pk.malformed_proto].desc->name);
	ck_assert_msg(st.malformed_packets == 0, "line %d: malformed packet counted", line);
}

/* The packet failed in `proto` for `why`, and exactly that one counter moved. */
#define EXPECT_MALFORMED(proto, why) expect_malformed(proto, why, __LINE__)
static void expect_malformed(const char *proto, enum isp_verdict why, int line)
{
	uint16_t id = pid(proto);
	uint64_t total = 0;

	ck_assert_msg(pk.malformed == why, "line %d: malformed = %s, expected %s", line,
		      isp_verdict_name((enum isp_verdict)pk.malformed), isp_verdict_name(why));
	ck_assert_msg(pk.malformed_proto == id, "line %d: failed in %s, expected %s", line,
		      reg->proto[pk.malformed_proto].desc->name, proto);
	ck_assert_msg(st.malformed[id][why] == 1, "line %d: st.malformed[%s][%s] = %" PRIu64,
		      line, proto, isp_verdict_name(why), st.malformed[id][why]);
	for (unsigned i = 0; i < ISP_MAX_PROTOS; i++)
		for (unsigned v = 0; v < ISP_VERDICT__COUNT; v++)
			total += st.malformed[i][v];
	ck_assert_msg(total == 1, "line %d: %" PRIu64 " error counters moved", line, total);
	ck_assert_msg(st.malformed_packets == 1, "line %d: malformed_packets = %" PRIu64,
		      line, st.malformed_packets);
	char want[64];
	snprintf(want, sizeof want, "%s.%s", proto, isp_verdict_name(why));
	expect_str("meta.malformed", want, line);
}

/* Ethernet + IPv4 (no options) carrying `proto`; lengths left to finish. */
static void eth_ip4(struct pkt *b, uint8_t tos, uint8_t proto, uint32_t src, uint32_t dst)
{
	struct pkt_ipv4 ip = { .tos = tos, .id = 0x4242, .ttl = 64, .proto = proto,
			       .src = src, .dst = dst };

	pkt_eth(b, MAC_D, MAC_S, 0x0800);
	pkt_ipv4(b, &ip);
}

static const uint8_t PAYLOAD[8] = { 'p', 'a', 'y', 'l', 'o', 'a', 'd', '!' };

/* ---- Ethernet and VLAN -------------------------------------------------- */

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

static size_t eth_ip6(struct pkt *b, uint8_t tclass, uint32_t flow, uint8_t next)
{
	struct pkt_ipv6 ip = { .tclass = tclass, .flow = flow, .next = next, .hop_limit = 33 };

	memcpy(ip.src, IP6_A, 16);
	memcpy(ip.dst, IP6_B, 16);
	pkt_eth(b, MAC_D, MAC_S, 0x86dd);
	return pkt_ipv6(b, &ip);
}

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

	/* hop-by-hop length says 16 bytes, 8 are there */
	pkt_init(&b);
	eth_ip6(&b, 0, 0, 0);
	size_t h = pkt_ipv6_opts(&b, 17, ra, sizeof ra);
	pkt_finish(&b);
	b.buf[h + 1] = 1;
	run(&b);
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
	ck_assert_uint_eq(run_raw(b.buf, b.len - 1, b.len - 1, "eth"), 2);
	EXPECT_MALFORMED("udp", ISP_ERR_TRUNCATED);

	pkt_put16(&b, 14 + 20 + 4, 7);          /* UDP length below its header */
	ck_assert_uint_eq(run(&b), 2);
	EXPECT_MALFORMED("udp", ISP_ERR_BAD_LENGTH);
}
END_TEST

START_TEST(test_err_tcp)
{
	struct pkt b;

	pkt_init(&b);
	eth_ip4(&b, 0, 6, IP_A, IP_B);
	size_t t = pkt_tcp(&b, &(struct pkt_tcp){ .sport = 1, .dport = 2, .wscale = -1 });
	pkt_finish(&b);
	ck_assert_uint_eq(run_raw(b.buf, b.len - 1, b.len - 1, "eth"), 2);
	EXPECT_MALFORMED("tcp", ISP_ERR_TRUNCATED);

	b.buf[t + 12] = 0x40;                   /* data offset 4 */
	ck_assert_uint_eq(run(&b), 2);
	EXPECT_MALFORMED("tcp", ISP_ERR_BAD_LENGTH);

	b.buf[t + 12] = 0xa0;                   /* 40-byte header, 20 captured */
	run(&b);
	EXPECT_MALFORMED("tcp", ISP_ERR_TRUNCATED);
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
	EXPECT_MALFORMED("geneve", ISP_ERR_TRUNCATED);

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
	tcase_add_test(tc, test_err_geneve);
	tcase_add_test(tc, test_err_gre);
	tcase_add_test(tc, test_err_too_deep);
	tcase_add_test(tc, test_counters_accumulate);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	char err[256];

	reg = isp_registry_new();
	if (!reg || isp_register_builtins(reg) != 0 ||
	    isp_registry_finalize(reg, err, sizeof err) != 0) {
		fprintf(stderr, "check_base: registry setup failed\n");
		return 1;
	}
	SRunner *sr = srunner_create(base_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	isp_registry_free(reg);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
