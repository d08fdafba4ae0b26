/*
 * testlib.c - see testlib.h.
 */
#include "testlib.h"
#include "../check_run.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

struct isp_registry *tl_registry(void)
{
	static struct isp_registry *reg;
	char err[256];

	if (!reg) {
		reg = isp_registry_new();
		ck_assert_ptr_nonnull(reg);
		ck_assert_int_eq(isp_register_builtins(reg), 0);
		ck_assert_int_eq(isp_registry_finalize(reg, err, sizeof(err)), 0);
	}
	return reg;
}

int tl_run_suite(Suite *s)
{
	return check_run(s, CK_NOFORK);
}

void tl_dissect(struct isp_packet *p, struct isp_stats *st, const uint8_t *b,
		size_t len, const char *first)
{
	struct isp_registry *reg = tl_registry();

	memset(p, 0, sizeof(*p));
	p->data = b;
	p->caplen = p->wirelen = (uint32_t)len;
	p->index = 1;
	uint16_t id = isp_proto_id(reg, first ? first : "eth");
	ck_assert_uint_ne(id, ISP_PROTO_NONE);
	isp_dissect(reg, p, id, st);
}

bool tl_get(const struct isp_packet *p, const char *name, struct isp_value *v)
{
	struct isp_attr_ref r;
	char err[256];

	if (isp_attr_lookup(tl_registry(), name, &r, err, sizeof(err)) != 0)
		ck_abort_msg("%s", err);
	return isp_attr_get(tl_registry(), p, &r, v);
}

uint64_t tl_u64(const struct isp_packet *p, const char *name)
{
	struct isp_value v;

	if (!tl_get(p, name, &v))
		ck_abort_msg("attribute %s absent", name);
	ck_assert_msg(!v.is_array, "%s is an array", name);
	return v.v.u;
}

bool tl_has(const struct isp_packet *p, const char *name)
{
	struct isp_value v;

	return tl_get(p, name, &v);
}

void tl_expect_array(const struct isp_packet *p, const char *name,
		     const uint64_t *want, unsigned n, uint32_t missing)
{
	struct isp_value v;

	ck_assert_msg(tl_get(p, name, &v), "%s absent", name);
	ck_assert_msg(v.is_array, "%s not an array", name);
	ck_assert_uint_eq(v.count, n);
	ck_assert_uint_eq(v.missing, missing);
	for (unsigned i = 0; i < n; i++)
		if (!(missing & (1u << i)))
			ck_assert_msg(v.v.arr[i] == want[i], "%s[%u] = %llu, want %llu", name, i,
				      (unsigned long long)v.v.arr[i], (unsigned long long)want[i]);
}

void tl_u8(struct tl_buf *t, unsigned v)
{
	ck_assert_uint_lt(t->n, sizeof(t->b));
	t->b[t->n++] = (uint8_t)v;
}

void tl_be16(struct tl_buf *t, unsigned v)
{
	tl_u8(t, v >> 8);
	tl_u8(t, v);
}

void tl_be24(struct tl_buf *t, uint32_t v)
{
	tl_u8(t, v >> 16);
	tl_be16(t, v & 0xffff);
}

void tl_be32(struct tl_buf *t, uint32_t v)
{
	tl_be16(t, v >> 16);
	tl_be16(t, v & 0xffff);
}

void tl_be64(struct tl_buf *t, uint64_t v)
{
	tl_be32(t, (uint32_t)(v >> 32));
	tl_be32(t, (uint32_t)v);
}

void tl_bytes(struct tl_buf *t, const void *p, size_t n)
{
	ck_assert_uint_le(t->n + n, sizeof(t->b));
	memcpy(t->b + t->n, p, n);
	t->n += n;
}

void tl_eth_ipv4_udp(struct tl_buf *t, uint8_t tos, uint16_t sport, uint16_t dport)
{
	static const uint8_t macs[12] = { 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2 };

	tl_bytes(t, macs, 12);
	tl_be16(t, 0x0800);
	tl_u8(t, 0x45);
	tl_u8(t, tos);
	tl_be16(t, 0);          /* total length: fixed later */
	tl_be32(t, 0);
	tl_u8(t, 64);
	tl_u8(t, 17);
	tl_be16(t, 0);
	tl_be32(t, 0x0a000001);
	tl_be32(t, 0x0a000002);
	tl_be16(t, sport);
	tl_be16(t, dport);
	tl_be16(t, 0);          /* UDP length: fixed later */
	tl_be16(t, 0);
}

void tl_fix_lengths(struct tl_buf *t, size_t ip_off)
{
	size_t ip_len = t->n - ip_off;
	size_t udp_off = ip_off + (t->b[ip_off] & 0x0f) * 4u;

	t->b[ip_off + 2] = (uint8_t)(ip_len >> 8);
	t->b[ip_off + 3] = (uint8_t)ip_len;
	if (t->b[ip_off + 9] != 17)
		return;         /* no UDP Length to fix */
	t->b[udp_off + 4] = (uint8_t)((t->n - udp_off) >> 8);
	t->b[udp_off + 5] = (uint8_t)(t->n - udp_off);
}

void tl_eth_ipv4_tcp(struct tl_buf *t, uint8_t tos)
{
	tl_eth_ipv4_udp(t, tos, 0, 0);
	t->n -= 8;
	t->b[14 + 9] = 6;
	tl_be16(t, 40000);
	tl_be16(t, 5555);
	tl_be32(t, 1);
	tl_be32(t, 0);
	tl_be16(t, 0x5018);
	tl_be16(t, 1024);
	tl_be32(t, 0);
}
