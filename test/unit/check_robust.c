/*
 * check_robust.c - every prefix of every test capture, and every single-byte
 * mutation of it, dissects without reading past the captured bytes (the
 * suite runs under ASan+UBSan) and with every attribute fetched (a sum of
 * a per-hop attribute equal to its elements added up, a per-hop
 * attribute's text the same as its array's). Each
 * capture starts at the protocol of its link type, as intspect starts it.
 */
#include <check.h>
#include <dirent.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "../../src/core/source.h"

static uint16_t first;          /* the current capture's first protocol */

/* An ISP_SUM_OF attribute (ref r, its value v when present) is present
 * exactly when the per-hop attribute it names is, and equals the sum of
 * that one's available elements: what the rules' slot cache computes it
 * from when they read both. */
static void check_sum_of(const struct isp_packet *p, struct isp_attr_ref r, bool present,
			 const struct isp_value *v)
{
	const struct isp_registry *reg = tl_registry();
	const struct isp_proto_desc *d = reg->proto[r.proto].desc;
	const char *full = isp_attr_sum_of(&d->attrs[r.attr]);
	size_t pl = strlen(d->name);

	if (!full)
		return;
	ck_assert(strncmp(full, d->name, pl) == 0 && full[pl] == '.');
	r.attr = 0;
	while (d->attrs[r.attr].name && strcmp(d->attrs[r.attr].name, full + pl + 1) != 0)
		r.attr++;
	ck_assert_ptr_nonnull(d->attrs[r.attr].name);
	ck_assert(d->attrs[r.attr].per_hop);

	struct isp_value hv;
	bool hpresent = isp_attr_get(reg, p, &r, &hv);
	ck_assert_int_eq(present, hpresent);
	if (!present)
		return;
	uint64_t sum = 0;
	for (unsigned h = 0; h < hv.count; h++)
		if (!(hv.missing >> h & 1))
			sum += hv.v.arr[h];
	ck_assert(!v->is_array && !(v->missing & 1));
	ck_assert_uint_eq(v->v.u, sum);
}

/* An attribute's put (isp_put_fn) writes exactly the numbers of its
 * getter's array, in path order and in the wire's, each in decimal
 * (printf's, not the writer's code) and followed by a comma; or NULL
 * exactly when the getter has no array to give, no hop, or a hop whose
 * value is unavailable: what the record writers fall back on. */
static void check_put(const struct isp_packet *p, struct isp_attr_ref r, bool present,
		      const struct isp_value *v)
{
	const struct isp_registry *reg = tl_registry();
	static struct jsonw_top kept;   /* across calls, as a writer keeps it */
	static isp_put_fn puts[ISP_MAX_PROTOS][256];    /* looked up once */
	static bool looked[ISP_MAX_PROTOS][256];
	char got[ISP_MAX_HOPS * (JSONW_U64_MAX + 1) + 1], want[sizeof(got)];

	if (r.attr >= 256)
		return;
	if (!looked[r.proto][r.attr]) {
		puts[r.proto][r.attr] = isp_attr_put_of(reg, &r);
		looked[r.proto][r.attr] = true;
	}
	isp_put_fn put = puts[r.proto][r.attr];
	if (!put)
		return;
	/* plain tests, ck_abort_msg on a failure only: a Check assertion
	 * that passes still costs a write to its parent, and this runs for
	 * every attribute of every prefix and mutation */
	const char *name = reg->proto[r.proto].desc->attrs[r.attr].name;
	uintptr_t arg = reg->proto[r.proto].desc->attrs[r.attr].arg;
	const struct isp_layer *l = present ? isp_attr_layer(p, &r) : NULL;
	if (!present || !l || v->count == 0 || v->missing) {
		struct jsonw_top top = { 0 };
		if (l && put(p, l, arg, got, 0, &top) != NULL)
			ck_abort_msg("%s: put wrote what its getter has not", name);
		return;
	}
	for (unsigned order = 0; order < 2; order++) {
		size_t n = 0;
		for (unsigned k = 0; k < v->count; k++) {
			unsigned h = order ? v->count - 1 - k : k;
			n += (size_t)snprintf(want + n, sizeof(want) - n, "%llu,",
					      (unsigned long long)v->v.arr[h]);
		}
		struct jsonw_top fresh = { 0 };
		for (unsigned t = 0; t < 2; t++) {
			char *end = put(p, l, arg, got, order ? ISP_PUT_WIRE_ORDER : 0,
					t ? &kept : &fresh);
			if (!end || (size_t)(end - got) != n || memcmp(got, want, n) != 0)
				ck_abort_msg("%s: put wrote %.*s, its getter has %.*s", name,
					     end ? (int)(end - got) : 4, end ? got : "NULL",
					     (int)n, want);
		}
	}
}

static void fetch_all(const struct isp_packet *p)
{
	const struct isp_registry *reg = tl_registry();
	struct isp_value v;

	for (uint16_t i = 0; i < reg->nprotos; i++) {
		const struct isp_proto_desc *d = reg->proto[i].desc;
		for (uint16_t a = 0; d->attrs && d->attrs[a].name; a++) {
			for (uint8_t inst = 0; inst <= 2; inst++) {
				struct isp_attr_ref r = { i, inst, a };
				bool present = isp_attr_get(reg, p, &r, &v);
				if (present && v.is_array)
					ck_assert_uint_le(v.count, ISP_MAX_HOPS);
				check_sum_of(p, r, present, &v);
				check_put(p, r, present, &v);
			}
		}
	}
}

/* Dissect a private heap copy of exactly n bytes, so ASan sees any
 * read past the end. */
static void dissect_copy(const uint8_t *b, size_t n, uint32_t wirelen, struct isp_stats *st)
{
	uint8_t *copy = malloc(n ? n : 1);
	struct isp_packet p;

	ck_assert_ptr_nonnull(copy);
	memcpy(copy, b, n);
	memset(&p, 0, sizeof(p));
	p.data = copy;
	p.caplen = (uint32_t)n;
	p.wirelen = wirelen;
	p.index = 1;
	isp_dissect(tl_registry(), &p, first, st);
	do
		fetch_all(&p);
	while (isp_dissect_next_report(tl_registry(), &p, st));
	free(copy);
}

static unsigned for_each_capture(void (*fn)(const uint8_t *, size_t))
{
	const char *top = getenv("top_srcdir") ? getenv("top_srcdir") : ".";
	char dir[1024], path[2048], err[PCAP_ERRBUF_SIZE];
	unsigned n = 0;

	snprintf(dir, sizeof(dir), "%s/test/data", top);
	DIR *dp = opendir(dir);
	ck_assert_msg(dp != NULL, "no %s", dir);
	struct dirent *de;
	while ((de = readdir(dp)) != NULL) {
		size_t len = strlen(de->d_name);
		if (len < 5 || strcmp(de->d_name + len - 5, ".pcap") != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		pcap_t *pc = pcap_open_offline(path, err);
		ck_assert_msg(pc != NULL, "%s", err);
		int lt = isp_source_linktype_of_dlt(pcap_datalink(pc));
		ck_assert_msg(lt >= 0 && lt < 65536, "%s: link type %d", path, lt);
		first = tl_registry()->table[ISP_TBL_LINKTYPE][lt];
		ck_assert_msg(first != 0xff, "%s: link type %d not decoded", path, lt);
		struct pcap_pkthdr *h;
		const u_char *d;
		unsigned k = 0;
		while (pcap_next_ex(pc, &h, &d) == 1 && k++ < 64) {
			fn(d, h->caplen);
			n++;
		}
		pcap_close(pc);
	}
	closedir(dp);
	return n;
}

static void prefixes(const uint8_t *b, size_t n)
{
	struct isp_stats st = { 0 };

	for (size_t k = 0; k <= n; k++)
		dissect_copy(b, k, (uint32_t)n, &st);
	ck_assert_uint_eq(st.packets, n + 1);
}

START_TEST(every_prefix)
{
	ck_assert_uint_gt(for_each_capture(prefixes), 0);
}
END_TEST

static void mutations(const uint8_t *b, size_t n)
{
	static const uint8_t values[] = { 0x00, 0xff, 0x01, 0x80, 0x7f, 0x10, 0x3f };
	struct isp_stats st = { 0 };
	uint8_t *m = malloc(n ? n : 1);

	ck_assert_ptr_nonnull(m);
	for (size_t i = 0; i < n; i++) {
		for (size_t v = 0; v < sizeof(values); v++) {
			memcpy(m, b, n);
			m[i] = values[v];
			dissect_copy(m, n, (uint32_t)n, &st);
		}
	}
	free(m);
}

START_TEST(every_byte_mutated)
{
	ck_assert_uint_gt(for_each_capture(mutations), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("robust");
	TCase *tc = tcase_create("bounds");

	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, every_prefix);
	tcase_add_test(tc, every_byte_mutated);
	suite_add_tcase(s, tc);
	return tl_run_suite(s);
}
