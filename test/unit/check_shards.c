/*
 * check_shards.c - workers that read their own share: every item reaches
 * the worker that owns its monitored flow, exactly once, whichever share
 * read it; the shared callback sees every item; ticks are barriers at
 * which no worker reads. Shares here are capture files (one per worker,
 * one worker with none), so the test needs no interface.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "testlib.h"
#include "../../src/core/shards.h"
#include "../../src/core/source.h"
#include "../../src/core/workers.h"

#define NW 3

struct owner_ctx {
	unsigned id;
	uint16_t ip4, ip6;
	uint64_t items, misrouted, ticks;
	uint64_t last_tick;
};

static uint64_t shared_items;   /* under the shards' lock */

static void on_packet(void *ctx, const struct isp_packet *p)
{
	struct owner_ctx *o = ctx;

	o->items++;
	if (isp_item_owner(p, o->ip4, o->ip6, NW) != o->id)
		o->misrouted++;
}

static void on_tick(void *ctx, uint64_t now)
{
	struct owner_ctx *o = ctx;

	o->ticks++;
	o->last_tick = now;
}

static void on_shared(void *ctx, const struct isp_packet *p)
{
	(void)ctx;
	(void)p;
	shared_items++;
}

static const char *capture(const char *name)
{
	static char path[2][512];
	static unsigned k;
	const char *top = getenv("top_srcdir");

	k ^= 1;
	snprintf(path[k], sizeof(path[k]), "%s/test/data/%s", top ? top : ".", name);
	return path[k];
}

static struct isp_source *open_file(const char *name)
{
	struct isp_source_opts o = { .file = capture(name) };
	char err[256];
	struct isp_source *s = isp_source_open(&o, err, sizeof(err));

	ck_assert_msg(s != NULL, "%s", err);
	return s;
}

/* Items of a capture, counted by a plain loop. */
static uint64_t items_of(const char *name)
{
	const struct isp_registry *reg = tl_registry();
	struct isp_source *s = open_file(name);
	static struct isp_packet p;
	static struct isp_stats st;
	uint64_t n = 0;
	char err[256];

	while (isp_source_next(s, &p.data, &p.caplen, &p.wirelen, &p.ts_ns, err, sizeof(err)) == 1) {
		isp_dissect(reg, &p, isp_proto_id(reg, "eth"), &st);
		do
			n++;
		while (isp_dissect_next_report(reg, &p, &st));
	}
	isp_source_close(s);
	return n;
}

static const char *const files[2] = { "gen-report-v2.0-coalesced.pcap", "gen-mesh-inline.pcap" };

START_TEST(every_item_reaches_its_owner_once)
{
	const struct isp_registry *reg = tl_registry();
	struct isp_source *src[2] = { open_file(files[0]), open_file(files[1]) };
	struct owner_ctx oc[NW];
	void *ctx[NW];
	struct isp_shard_ops ops = { on_packet, on_tick, on_shared };
	uint64_t expect = items_of(files[0]) + items_of(files[1]);

	shared_items = 0;
	for (unsigned i = 0; i < NW; i++) {
		oc[i] = (struct owner_ctx){ .id = i, .ip4 = isp_proto_id(reg, "ip"),
					    .ip6 = isp_proto_id(reg, "ipv6") };
		ctx[i] = &oc[i];
	}
	/* rings that hold everything: nothing may be dropped */
	struct isp_shards *sh = isp_shards_start(NW, src, 2, reg, isp_proto_id(reg, "eth"), &ops,
						 ctx, NULL, 4u << 20);
	ck_assert_ptr_nonnull(sh);
	while (!isp_shards_ended(sh)) {
		struct timespec nap = { 0, 1000000 };
		nanosleep(&nap, NULL);
	}
	ck_assert_ptr_null(isp_shards_error(sh));
	isp_shards_stop_reading(sh);
	isp_shards_tick(sh, UINT64_MAX);        /* everything in flight is handled */
	isp_shards_resume(sh);
	uint64_t got = 0;
	for (unsigned i = 0; i < NW; i++) {
		ck_assert_uint_eq(oc[i].misrouted, 0);
		ck_assert_uint_eq(oc[i].ticks, 1);
		got += oc[i].items;
	}
	ck_assert_uint_gt(expect, 800);
	ck_assert_uint_eq(isp_shards_dropped(sh), 0);
	ck_assert_uint_eq(got, expect);
	ck_assert_uint_eq(shared_items, expect);
	ck_assert_uint_gt(oc[2].items, 0);      /* the worker without a share got its flows */
	struct isp_stats st = { 0 };
	isp_shards_stats(sh, &st);
	ck_assert_uint_eq(st.items, expect);
	ck_assert_uint_eq(isp_shards_packets(sh), st.packets);
	isp_shards_stop(sh);
	isp_source_close(src[1]);
	isp_source_close(src[0]);
}
END_TEST

START_TEST(ticks_pause_every_worker)
{
	const struct isp_registry *reg = tl_registry();
	struct isp_source *src[2] = { open_file(files[1]), open_file(files[0]) };
	struct owner_ctx oc[2];
	void *ctx[2] = { &oc[0], &oc[1] };
	struct isp_shard_ops ops = { on_packet, on_tick, NULL };

	for (unsigned i = 0; i < 2; i++)
		oc[i] = (struct owner_ctx){ .id = 99 };         /* owners not checked here */
	/* small rings: they wrap many times; a full one drops, counted */
	struct isp_shards *sh = isp_shards_start(2, src, 2, reg, isp_proto_id(reg, "eth"), &ops,
						 ctx, NULL, 32u << 10);
	ck_assert_ptr_nonnull(sh);
	for (uint64_t t = 1; t <= 5; t++) {
		isp_shards_tick(sh, t * 1000);
		uint64_t before = isp_shards_packets(sh);
		struct timespec nap = { 0, 5000000 };
		nanosleep(&nap, NULL);
		/* held at the barrier: nothing read, every tick handled */
		ck_assert_uint_eq(isp_shards_packets(sh), before);
		ck_assert_uint_eq(oc[0].ticks, t);
		ck_assert_uint_eq(oc[1].ticks, t);
		ck_assert_uint_eq(oc[0].last_tick, t * 1000);
		isp_shards_resume(sh);
		nanosleep(&nap, NULL);  /* let them read between ticks */
	}
	while (!isp_shards_ended(sh))
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	isp_shards_stop_reading(sh);
	isp_shards_tick(sh, UINT64_MAX);
	isp_shards_resume(sh);
	ck_assert_uint_eq(oc[0].ticks + oc[1].ticks, 12);
	ck_assert_uint_eq(oc[0].items + oc[1].items + isp_shards_dropped(sh),
			  items_of(files[0]) + items_of(files[1]));
	ck_assert_uint_gt(oc[0].items + oc[1].items, 0);
	isp_shards_stop(sh);
	isp_source_close(src[1]);
	isp_source_close(src[0]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("shards");
	TCase *tc = tcase_create("mesh");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, every_item_reaches_its_owner_once);
	tcase_add_test(tc, ticks_pause_every_worker);
	suite_add_tcase(s, tc);
	return tl_run_suite(s);
}
