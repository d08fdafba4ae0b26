/*
 * check_dta_decode.c - the dta decoder (src/plugins/dta/dta.c) through
 * the dissector, on Ethernet/IPv4/UDP packets to port 40040 built byte by
 * byte from README.md's wire format: every opcode's attributes, the
 * 2-byte base header (-o dta.sequence=no), and each malformed case
 * counted under its reason.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

static struct tl_buf t;
static struct isp_packet pkt;
static struct isp_stats st;

static uint16_t dta_id(void)
{
	return isp_proto_id(tl_registry(), "dta");
}

/* Ethernet + IPv4 + UDP to 40040, then the bytes of a report. */
static void report(const uint8_t *b, size_t n)
{
	t.n = 0;
	tl_eth_ipv4_udp(&t, 0, 5555, 40040);
	tl_bytes(&t, b, n);
	tl_fix_lengths(&t, 14);
}

/* Dissect the frame with its first caplen bytes captured (0: all). */
static void dissect(size_t caplen)
{
	memset(&st, 0, sizeof(st));
	memset(&pkt, 0, sizeof(pkt));
	pkt.data = t.b;
	pkt.wirelen = (uint32_t)t.n;
	pkt.caplen = (uint32_t)(caplen ? caplen : t.n);
	pkt.index = 1;
	isp_dissect(tl_registry(), &pkt, isp_proto_id(tl_registry(), "eth"), &st);
}

static void decoded(void)
{
	ck_assert_int_eq(pkt.malformed, 0);
	ck_assert_uint_eq(st.decoded[dta_id()], 1);
	ck_assert_uint_eq(tl_u64(&pkt, "udp.dst_port"), 40040);
}

static void words(const char *name, const uint32_t *want, unsigned n)
{
	struct isp_value v;

	ck_assert_msg(tl_get(&pkt, name, &v), "%s absent", name);
	ck_assert(v.is_array);
	ck_assert_uint_eq(v.count, n);
	for (unsigned i = 0; i < n; i++)
		ck_assert_msg(v.v.arr[i] == want[i], "%s[%u] = %llx, want %x", name, i,
			      (unsigned long long)v.v.arr[i], want[i]);
}

static void absent(const char *const *names)
{
	for (; *names; names++)
		ck_assert_msg(!tl_has(&pkt, *names), "%s present", *names);
}

#define NAMES(...) ((const char *const[]){ __VA_ARGS__, NULL })

START_TEST(key_write)
{
	report((const uint8_t[]){ 1, 42, 0xc3, 3, 0xde, 0xad, 0xbe, 0xef,
				  1, 2, 3, 4, 0xa0, 0xb0, 0xc0, 0xd0, 0, 0, 0, 7 }, 20);
	dissect(0);
	decoded();
	ck_assert_uint_eq(tl_u64(&pkt, "dta.opcode"), 1);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.sequence"), 42);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.flags"), 0xc3);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.immediate"), 1);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.retransmit"), 1);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.priority"), 3);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.redundancy"), 3);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.key"), 0xdeadbeef);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.data_len"), 12);
	words("dta.data", (const uint32_t[]){ 0x01020304, 0xa0b0c0d0, 7 }, 3);
	absent(NAMES("dta.list", "dta.counter", "dta.hop", "dta.sketch", "dta.reporter",
		     "dta.epoch", "dta.column", "dta.columns", "dta.rows", "dta.counters"));
}
END_TEST

/* 40 words: data_len counts them all, dta.data holds the first 32. */
START_TEST(append)
{
	uint8_t b[7 + 160] = { 2, 0, 0x41, 1, 2, 3, 4 };
	uint32_t want[32];

	for (unsigned i = 0; i < 40; i++) {
		uint32_t v = 0x01010101u * i + 0x10000000u;
		b[7 + 4 * i] = (uint8_t)(v >> 24), b[8 + 4 * i] = (uint8_t)(v >> 16);
		b[9 + 4 * i] = (uint8_t)(v >> 8), b[10 + 4 * i] = (uint8_t)v;
		if (i < 32)
			want[i] = v;
	}
	report(b, sizeof(b));
	dissect(0);
	decoded();
	ck_assert_uint_eq(tl_u64(&pkt, "dta.opcode"), 2);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.sequence"), 0);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.immediate"), 0);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.retransmit"), 1);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.priority"), 1);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.list"), 0x01020304);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.data_len"), 160);
	words("dta.data", want, 32);
	absent(NAMES("dta.redundancy", "dta.key", "dta.counter", "dta.hop", "dta.counters"));
}
END_TEST

/* Reserved flag bits (5-2) set: ignored by immediate, retransmit, priority. */
START_TEST(key_increment)
{
	report((const uint8_t[]){ 3, 255, 0x3e, 2, 0x0a, 0x0b, 0x0c, 0x0d,
				  1, 2, 3, 4, 5, 6, 7, 8 }, 16);
	dissect(0);
	decoded();
	ck_assert_uint_eq(tl_u64(&pkt, "dta.opcode"), 3);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.sequence"), 255);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.flags"), 0x3e);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.immediate"), 0);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.retransmit"), 0);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.priority"), 2);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.redundancy"), 2);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.key"), 0x0a0b0c0d);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.counter"), 0x0102030405060708ull);
	absent(NAMES("dta.data", "dta.data_len", "dta.list", "dta.hop", "dta.counters"));
}
END_TEST

/* Ethernet padding to 60 bytes after the datagram is not body. */
START_TEST(postcarder)
{
	report((const uint8_t[]){ 4, 1, 0x80, 0x11, 0x22, 0x33, 0x44, 5, 0xca, 0xfe, 0xf0, 0x0d }, 12);
	tl_bytes(&t, "\0\0\0\0\0\0", 6);
	dissect(0);
	decoded();
	ck_assert_uint_eq(tl_u64(&pkt, "dta.opcode"), 4);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.immediate"), 1);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.key"), 0x11223344);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.hop"), 5);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.data_len"), 4);
	words("dta.data", (const uint32_t[]){ 0xcafef00d }, 1);
	absent(NAMES("dta.redundancy", "dta.counter", "dta.list", "dta.counters"));
}
END_TEST

/* 2 columns of 3 rows; the reserved field is ignored. */
START_TEST(sketch_merge)
{
	report((const uint8_t[]){ 5, 9, 0x40, 0, 7, 0, 3, 0xff, 0xfe, 0, 16, 0, 2, 0xff, 0xff,
				  0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3,
				  0xff, 0xff, 0xff, 0xff, 0x80, 0, 0, 0, 0, 0, 1, 0 }, 39);
	dissect(0);
	decoded();
	ck_assert_uint_eq(tl_u64(&pkt, "dta.opcode"), 5);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.sketch"), 7);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.reporter"), 3);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.epoch"), 0xfffe);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.column"), 16);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.columns"), 2);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.rows"), 3);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.data_len"), 24);
	words("dta.counters", (const uint32_t[]){ 1, 2, 3, 0xffffffff, 0x80000000, 0x100 }, 6);
	absent(NAMES("dta.data", "dta.key", "dta.redundancy", "dta.list", "dta.hop"));
}
END_TEST

static void sequence_yes(void)
{
	char err[256];

	ck_assert_int_eq(isp_registry_option(tl_registry(), "dta.sequence=yes", err, sizeof(err)), 0);
}

/* The 2-byte base header: opcode, flags; every field one byte earlier. */
START_TEST(no_sequence)
{
	char err[256];

	ck_assert_int_eq(isp_registry_option(tl_registry(), "dta.sequence=maybe", err, sizeof(err)), -1);
	ck_assert_int_eq(isp_registry_option(tl_registry(), "dta.sequence=no", err, sizeof(err)), 0);
	report((const uint8_t[]){ 1, 0x82, 1, 0, 0, 0, 9, 0, 0, 1, 0 }, 11);
	dissect(0);
	decoded();
	ck_assert(!tl_has(&pkt, "dta.sequence"));
	ck_assert_uint_eq(tl_u64(&pkt, "dta.flags"), 0x82);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.immediate"), 1);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.priority"), 2);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.redundancy"), 1);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.key"), 9);
	words("dta.data", (const uint32_t[]){ 0x100 }, 1);
	report((const uint8_t[]){ 4, 0, 0, 0, 0, 8, 2, 0, 0, 0, 5 }, 11);
	dissect(0);
	decoded();
	ck_assert_uint_eq(tl_u64(&pkt, "dta.key"), 8);
	ck_assert_uint_eq(tl_u64(&pkt, "dta.hop"), 2);
	words("dta.data", (const uint32_t[]){ 5 }, 1);
	/* a 3-byte-header Postcarder is one byte too long now */
	report((const uint8_t[]){ 4, 7, 0, 0, 0, 0, 8, 2, 0, 0, 0, 5 }, 12);
	dissect(0);
	ck_assert_int_eq(pkt.malformed, ISP_ERR_BAD_LENGTH);
	sequence_yes();
}
END_TEST

/* Each malformed report: its bytes, the bytes of it captured (0: all)
 * and the reason it is counted under. */
static const struct bad {
	const char *what;
	uint8_t b[28];
	size_t n, keep;
	enum isp_verdict v;
} bads[] = {
	{ "opcode 0", { 0, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1 }, 12, 0, ISP_ERR_BAD_VERSION },
	{ "opcode 6", { 6, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1 }, 12, 0, ISP_ERR_BAD_VERSION },
	{ "key-write 5 data bytes", { 1, 1, 0, 1, 0, 0, 0, 1, 1, 2, 3, 4, 5 }, 13, 0, ISP_ERR_BAD_LENGTH },
	{ "key-write no data", { 1, 1, 0, 1, 0, 0, 0, 1 }, 8, 0, ISP_ERR_BAD_LENGTH },
	{ "key-write redundancy 0", { 1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1 }, 12, 0, ISP_ERR_BAD_LENGTH },
	{ "append 3 data bytes", { 2, 1, 0, 0, 0, 0, 1, 1, 2, 3 }, 10, 0, ISP_ERR_BAD_LENGTH },
	{ "append no data", { 2, 1, 0, 0, 0, 0, 1 }, 7, 0, ISP_ERR_BAD_LENGTH },
	{ "key-increment 14 bytes", { 3, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0 }, 17, 0,
	  ISP_ERR_BAD_LENGTH },
	{ "key-increment 12 bytes", { 3, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0 }, 15, 0,
	  ISP_ERR_BAD_LENGTH },
	{ "key-increment redundancy 0", { 3, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1 }, 16, 0,
	  ISP_ERR_BAD_LENGTH },
	{ "postcarder 10 bytes", { 4, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0 }, 13, 0, ISP_ERR_BAD_LENGTH },
	{ "sketch columns 0", { 5, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1 },
	  23, 0, ISP_ERR_BAD_LENGTH },
	{ "sketch 12 bytes, 2 columns", { 5, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0,
					  0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1 }, 27, 0, ISP_ERR_BAD_LENGTH },
	{ "sketch no counters", { 5, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0 }, 15, 0,
	  ISP_ERR_BAD_LENGTH },
	{ "header only", { 1, 1 }, 2, 0, ISP_ERR_BAD_LENGTH },
	/* the snap length cut it: whole words left, or the fixed part cut */
	{ "key-write cut", { 1, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3 }, 20, 12,
	  ISP_ERR_TRUNCATED },
	{ "sketch cut", { 5, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2 }, 23, 19,
	  ISP_ERR_TRUNCATED },
	{ "key-increment cut", { 3, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1 }, 16, 8,
	  ISP_ERR_TRUNCATED },
	{ "header cut", { 1, 1, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1 }, 12, 2, ISP_ERR_TRUNCATED },
};

START_TEST(malformed)
{
	const struct bad *b = &bads[_i];

	report(b->b, b->n);
	dissect(b->keep ? 42 + b->keep : 0);
	ck_assert_msg(pkt.malformed == b->v, "%s: verdict %u, want %u", b->what, pkt.malformed, b->v);
	ck_assert_uint_eq(pkt.malformed_proto, dta_id());
	ck_assert_uint_eq(st.malformed[dta_id()][b->v], 1);
	ck_assert_uint_eq(st.decoded[dta_id()], 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dta_decode");
	TCase *tc = tcase_create("decode");

	tcase_add_checked_fixture(tc, NULL, sequence_yes);
	tcase_add_test(tc, key_write);
	tcase_add_test(tc, append);
	tcase_add_test(tc, key_increment);
	tcase_add_test(tc, postcarder);
	tcase_add_test(tc, sketch_merge);
	tcase_add_test(tc, no_sequence);
	tcase_add_loop_test(tc, malformed, 0, (int)(sizeof(bads) / sizeof(bads[0])));
	suite_add_tcase(s, tc);
	return tl_run_suite(s);
}
