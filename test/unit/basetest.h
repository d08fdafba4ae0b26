/*
 * basetest.h - what the base-plugin unit tests share: a registry, a packet,
 * the frame builders' glue and the expectation helpers (static inline: each
 * test program takes what it uses).
 */
#ifndef ISP_BASETEST_H
#define ISP_BASETEST_H

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/core/dissect.h"
#include "../../src/core/registry.h"
#include "../check_run.h"
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

static inline uint16_t pid(const char *name)
{
	uint16_t id = isp_proto_id(reg, name);

	ck_assert_msg(id != ISP_PROTO_NONE, "protocol %s not registered", name);
	return id;
}

static inline unsigned run_raw(const uint8_t *data, size_t caplen, size_t wirelen,
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

static inline unsigned run(const struct pkt *b)
{
	return run_raw(b->buf, b->len, b->len, "eth");
}

static inline bool fetch(const char *name, struct isp_value *v, int line)
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
static inline void expect_u(const char *name, uint64_t exp, int line)
{
	struct isp_value v;

	ck_assert_msg(fetch(name, &v, line), "line %d: %s is absent", line, name);
	ck_assert_msg(!v.is_array && v.missing == 0, "line %d: %s not a plain scalar", line, name);
	ck_assert_msg(v.v.u == exp, "line %d: %s = %#" PRIx64 ", expected %#" PRIx64,
		      line, name, v.v.u, exp);
}

#define EXPECT_ABSENT(name) expect_absent(name, __LINE__)
static inline void expect_absent(const char *name, int line)
{
	struct isp_value v;

	ck_assert_msg(!fetch(name, &v, line), "line %d: %s present (%#" PRIx64 ")",
		      line, name, v.v.u);
}

#define EXPECT_BYTES(name, exp, n) expect_bytes(name, exp, n, __LINE__)
static inline void expect_bytes(const char *name, const uint8_t *exp, size_t n, int line)
{
	struct isp_value v;

	ck_assert_msg(fetch(name, &v, line), "line %d: %s is absent", line, name);
	const uint8_t *got = n == 6 ? v.v.mac : v.v.ip6;
	ck_assert_msg(memcmp(got, exp, n) == 0, "line %d: %s differs", line, name);
}

#define EXPECT_STR(name, exp) expect_str(name, exp, __LINE__)
static inline void expect_str(const char *name, const char *exp, int line)
{
	struct isp_value v;

	ck_assert_msg(fetch(name, &v, line), "line %d: %s is absent", line, name);
	ck_assert_msg(strcmp(v.v.str, exp) == 0, "line %d: %s = \"%s\", expected \"%s\"",
		      line, name, v.v.str, exp);
}

#define EXPECT_OK() expect_ok(__LINE__)
static inline void expect_ok(int line)
{
	ck_assert_msg(pk.malformed == 0, "line %d: malformed %s in %s", line,
		      isp_verdict_name((enum isp_verdict)pk.malformed),
		      reg->proto[pk.malformed_proto].desc->name);
	ck_assert_msg(st.malformed_packets == 0, "line %d: malformed packet counted", line);
}

/* The packet failed in `proto` for `why`, and exactly that one counter moved. */
#define EXPECT_MALFORMED(proto, why) expect_malformed(proto, why, __LINE__)
static inline void expect_malformed(const char *proto, enum isp_verdict why, int line)
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
static inline void eth_ip4(struct pkt *b, uint8_t tos, uint8_t proto, uint32_t src, uint32_t dst)
{
	struct pkt_ipv4 ip = { .tos = tos, .id = 0x4242, .ttl = 64, .proto = proto,
			       .src = src, .dst = dst };

	pkt_eth(b, MAC_D, MAC_S, 0x0800);
	pkt_ipv4(b, &ip);
}

static const uint8_t PAYLOAD[8] = { 'p', 'a', 'y', 'l', 'o', 'a', 'd', '!' };

/* ---- Ethernet and VLAN -------------------------------------------------- */

static inline size_t eth_ip6(struct pkt *b, uint8_t tclass, uint32_t flow, uint8_t next)
{
	struct pkt_ipv6 ip = { .tclass = tclass, .flow = flow, .next = next, .hop_limit = 33 };

	memcpy(ip.src, IP6_A, 16);
	memcpy(ip.dst, IP6_B, 16);
	pkt_eth(b, MAC_D, MAC_S, 0x86dd);
	return pkt_ipv6(b, &ip);
}

/* A registry with the built-ins, for main(); NULL on failure. */
static inline int basetest_setup(void)
{
	char err[256];

	reg = isp_registry_new();
	return reg && isp_register_builtins(reg) == 0 &&
	       isp_registry_finalize(reg, err, sizeof err) == 0 ? 0 : -1;
}

static inline int basetest_run(Suite *s)
{
	int rc = check_run(s, CK_FORK_GETENV);

	isp_registry_free(reg);
	return rc;
}

#endif
