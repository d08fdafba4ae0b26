/*
 * check_pipeline.c - the pipeline on capture files read as shares (mapped
 * pcap, and pcapng read through libpcap): every item reaches the worker
 * its route names, exactly once, in the order of the file; ticks come at
 * the same point of the file for every worker and the merge runs with all
 * of them held there; -c counts the same packets; a stop asked mid-run
 * leaves no record half handled; the mesh keeps order when a full ring
 * spills into memory.
 */
#include <stdio.h>
#include <stdlib.h>

#include "testlib.h"
#include "../../src/core/mesh.h"
#include "../../src/core/pipeline.h"

#define NW 3
#define MAX_ITEMS 20000

struct wctx {
	unsigned id;
	uint16_t ip4, ip6;
	uint64_t items, misrouted, disorder, bad_what, ticks, last_tick;
	uint64_t last_order;
};

static struct wctx g_w[ISP_MAX_WORKERS];
static uint64_t g_period;
static uint64_t g_ts[MAX_ITEMS];        /* every item's time, in file order */
static uint64_t g_rec[MAX_ITEMS];       /* ... and its record (1-based) */
static uint64_t g_nitems;
static uint64_t g_merges, g_merge_bad;
static bool g_everywhere;
static bool g_local;            /* ops.local_only: no route, any worker */

static const char *capture(const char *name)
{
	static char path[512];
	const char *top = getenv("top_srcdir");

	snprintf(path, sizeof(path), "%s/test/data/%s", top ? top : ".", name);
	return path;
}

/* Items of a capture by a plain loop: their times, for the ticks. */
static void scan(const char *name)
{
	const struct isp_registry *reg = tl_registry();
	struct isp_source_opts o = { .file = capture(name) };
	char err[256];
	struct isp_source *s = isp_source_open(&o, err, sizeof(err));
	static struct isp_packet p;
	static struct isp_stats st;

	ck_assert_msg(s != NULL, "%s", err);
	g_nitems = 0;
	for (uint64_t rec = 1;
	     isp_source_next(s, &p.data, &p.caplen, &p.wirelen, &p.ts_ns, err, sizeof(err)) == 1;
	     rec++) {
		isp_dissect(reg, &p, isp_proto_id(reg, "eth"), &st);
		do {
			ck_assert_uint_lt(g_nitems, MAX_ITEMS);
			g_rec[g_nitems] = rec;
			g_ts[g_nitems++] = p.ts_ns;
		} while (isp_dissect_next_report(reg, &p, &st));
	}
	isp_source_close(s);
	/* about eight windows over the file */
	g_period = (g_ts[g_nitems - 1] - g_ts[0]) / 8 + 1;
}

static void *worker_new(void *rules, unsigned i, unsigned n, char *err, size_t errlen)
{
	const struct isp_registry *reg = tl_registry();

	(void)rules;
	(void)n;
	(void)err;
	(void)errlen;
	g_w[i] = (struct wctx){ .id = i, .ip4 = isp_proto_id(reg, "ip"),
				.ip6 = isp_proto_id(reg, "ipv6") };
	return &g_w[i];
}

static void route_everywhere(void *w, const struct isp_packet *p, unsigned n, uint64_t *dest)
{
	(void)w;
	(void)p;
	for (unsigned k = 0; k < n; k++)
		dest[k] = UINT64_C(1) << k;
}

static void item(void *ctx, const struct isp_packet *p, uint64_t what)
{
	struct wctx *w = ctx;
	uint64_t order = p->index << 8 | p->report_index;

	w->items++;
	if (order <= w->last_order)
		w->disorder++;
	w->last_order = order;
	if (g_everywhere) {
		if (what != UINT64_C(1) << w->id)
			w->bad_what++;
	} else {
		if (!g_local && isp_item_hash(p, w->ip4, w->ip6) % NW != w->id)
			w->misrouted++;
		if (what != ISP_ROUTE_ALL)
			w->bad_what++;
	}
}

static void tick(void *ctx, uint64_t now)
{
	struct wctx *w = ctx;

	w->ticks++;
	w->last_tick = now;
}

/* Every worker is held at this tick: each has handled exactly the items
 * before it in the file, and no other. */
static void merge(void *rules, void *const *workers, unsigned n)
{
	uint64_t ts = ((struct wctx *)workers[0])->last_tick, got = 0, want = 0;

	(void)rules;
	for (unsigned k = 0; k < n; k++) {
		const struct wctx *w = workers[k];
		got += w->items;
		if (w->ticks != g_merges + 1 || w->last_tick != ts)
			g_merge_bad++;
	}
	for (uint64_t i = 0; i < g_nitems; i++)
		want += g_ts[i] < ts;
	if (g_everywhere)
		want *= n;
	if (got != want)
		g_merge_bad++;
	g_merges++;
}

static uint64_t window_end(void *rules, uint64_t t)
{
	(void)rules;
	return (t / g_period + 1) * g_period;
}

static const struct isp_pipeline_ops ops = {
	.worker_new = worker_new, .item = item, .tick = tick, .merge = merge,
	.window_end = window_end,
};

static struct isp_pipeline *open_file(const char *name, unsigned n, uint64_t count,
				      const struct isp_pipeline_ops *o)
{
	struct isp_pipeline_opts po = { .src = { .file = capture(name) }, .workers = n,
					.count = count, .ops = o };
	char err[256];
	struct isp_pipeline *pl = isp_pipeline_open(tl_registry(), &po, err, sizeof(err));

	ck_assert_msg(pl != NULL, "%s", err);
	return pl;
}

static void run_file(const char *name, unsigned n, const struct isp_pipeline_ops *o)
{
	g_merges = g_merge_bad = 0;
	struct isp_pipeline *pl = open_file(name, n, 0, o);
	ck_assert_int_eq(isp_pipeline_run(pl, NULL), 0);
	uint64_t got = 0;
	for (unsigned i = 0; i < n; i++) {
		ck_assert_uint_eq(g_w[i].misrouted, 0);
		ck_assert_uint_eq(g_w[i].disorder, 0);
		ck_assert_uint_eq(g_w[i].bad_what, 0);
		ck_assert_uint_eq(g_w[i].ticks, g_merges);
		ck_assert_uint_eq(g_w[i].last_tick, UINT64_MAX);
		got += g_w[i].items;
	}
	ck_assert_uint_eq(g_merge_bad, 0);
	ck_assert_uint_ge(g_merges, 8);         /* the windows, and the end */
	ck_assert_uint_eq(got, g_everywhere ? g_nitems * n : g_nitems);
	struct isp_stats st = { 0 };
	isp_pipeline_stats(pl, &st);
	ck_assert_uint_eq(st.items, g_nitems);
	ck_assert_uint_eq(isp_pipeline_packets(pl), st.packets);
	isp_pipeline_close(pl);
}

/* mapped; the same records in pcapng (libpcap, bytes copied per batch) */
static const char *const files[3] = { "gen-mesh-reports.pcap", "gen-mesh-inline.pcap",
				      "gen-mesh-reports.pcapng" };

START_TEST(every_item_reaches_its_owner_once_in_order)
{
	scan(files[_i]);
	ck_assert_uint_gt(g_nitems, 100);
	g_everywhere = false;
	run_file(files[_i], NW, &ops);
	for (unsigned i = 0; i < NW; i++)
		ck_assert_uint_gt(g_w[i].items, 0);
}
END_TEST

START_TEST(an_item_for_several_owners_reaches_each)
{
	struct isp_pipeline_ops o = ops;

	scan(files[_i]);
	o.route = route_everywhere;
	g_everywhere = true;
	run_file(files[_i], 4, &o);
	g_everywhere = false;
}
END_TEST

static bool local_only(void *w)
{
	(void)w;
	return true;
}

/* Rules that need no order between workers: batches taken in any order,
 * each item once, where it was read (each worker's in the file's order),
 * and still every tick with every worker holding exactly the items
 * before it (merge); with every batch a tick of its own too. */
START_TEST(local_rules_take_batches_in_any_order)
{
	struct isp_pipeline_ops o = ops;

	scan(files[_i]);
	o.local_only = local_only;
	g_local = true;
	run_file(files[_i], NW, &o);
	run_file(files[_i], 2, &o);
	uint64_t period = g_period;
	g_period = 1;   /* a window's end at every packet */
	run_file(files[_i], NW, &o);
	g_period = period;
	struct isp_pipeline *pl = open_file(files[_i], 2, 321, &o);
	ck_assert_int_eq(isp_pipeline_run(pl, NULL), 0);
	struct isp_stats st = { 0 };
	isp_pipeline_stats(pl, &st);
	ck_assert_uint_eq(st.packets, 321);
	isp_pipeline_close(pl);
	g_local = false;
}
END_TEST

START_TEST(count_stops_at_the_same_packet)
{
	struct isp_pipeline *pl = open_file(files[_i], 2, 123, &ops);

	g_merges = 0;
	ck_assert_int_eq(isp_pipeline_run(pl, NULL), 0);
	struct isp_stats st = { 0 };
	isp_pipeline_stats(pl, &st);
	ck_assert_uint_eq(st.packets, 123);
	isp_pipeline_close(pl);
}
END_TEST

/* isp_pipeline_break (as a signal or a broken channel) while worker 0
 * handles an item a third into the file, the others wherever they are:
 * the batches read so far are handled, and nothing else, so the items
 * handled are exactly those of the records up to the last one handled:
 * none missing on a worker that stopped earlier. */
static struct isp_pipeline *g_pl;
static uint64_t g_break_rec;

static void item_then_break(void *ctx, const struct isp_packet *p, uint64_t what)
{
	struct wctx *w = ctx;

	item(ctx, p, what);
	if (w->id == 0 && p->index >= g_break_rec && g_break_rec) {
		g_break_rec = 0;
		isp_pipeline_break(g_pl);
	}
}

static void merge_count(void *rules, void *const *workers, unsigned n)
{
	(void)rules;
	(void)workers;
	(void)n;
	g_merges++;
}

START_TEST(a_stop_leaves_no_record_half_handled)
{
	struct isp_pipeline_ops o = ops;

	scan(files[_i]);
	o.item = item_then_break;
	o.merge = merge_count;
	g_merges = 0;
	g_break_rec = g_rec[g_nitems - 1] / 3;
	g_pl = open_file(files[_i], NW, 0, &o);
	isp_pipeline_run(g_pl, NULL);
	uint64_t got = 0, last = 0;
	for (unsigned i = 0; i < NW; i++) {
		ck_assert_uint_eq(g_w[i].misrouted, 0);
		ck_assert_uint_eq(g_w[i].disorder, 0);
		got += g_w[i].items;
		if (g_w[i].last_order >> 8 > last)
			last = g_w[i].last_order >> 8;
	}
	uint64_t want = 0;
	for (uint64_t k = 0; k < g_nitems; k++)
		want += g_rec[k] <= last;
	ck_assert_uint_eq(g_break_rec, 0);      /* asked */
	ck_assert_uint_gt(g_merges, 0);         /* the end's, at least */
	ck_assert_uint_eq(got, want);
	isp_pipeline_close(g_pl);
}
END_TEST

START_TEST(a_full_ring_spills_in_order)
{
	struct isp_mesh *m = isp_mesh_new(2, 64 * 1024);
	uint64_t sent = 0, seen = 0;

	ck_assert_ptr_nonnull(m);
	for (int round = 0; round < 3; round++) {
		struct spsc_msg *msg;
		/* fill the ring, then the receiver moves it aside, and again */
		while ((msg = isp_mesh_reserve(m, 0, 1, 40, false))) {
			msg->kind = SPSC_BATCH;
			msg->aux = sent++;
			isp_mesh_publish(m, 0, 1, msg);
		}
		isp_mesh_flush(m, 0);
		isp_mesh_spill(m, 1);
	}
	for (int k = 0; k < 10; k++) {  /* some left in the ring itself */
		struct spsc_msg *msg = isp_mesh_reserve(m, 0, 1, 40, false);
		ck_assert_ptr_nonnull(msg);
		msg->kind = SPSC_BATCH;
		msg->aux = sent++;
		isp_mesh_publish_now(m, 0, 1, msg);
	}
	ck_assert_uint_gt(isp_mesh_spilled(m), 1000);
	struct spsc_msg *msg;
	while ((msg = isp_mesh_peek(m, 0, 1))) {
		ck_assert_uint_eq(msg->aux, seen);
		seen++;
		isp_mesh_release(m, 0, 1, msg);
	}
	ck_assert_uint_eq(seen, sent);
	isp_mesh_free(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pipeline");
	TCase *tc = tcase_create("files");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, every_item_reaches_its_owner_once_in_order, 0, 3);
	tcase_add_loop_test(tc, an_item_for_several_owners_reaches_each, 0, 3);
	tcase_add_loop_test(tc, local_rules_take_batches_in_any_order, 0, 3);
	tcase_add_loop_test(tc, count_stops_at_the_same_packet, 0, 3);
	tcase_add_loop_test(tc, a_stop_leaves_no_record_half_handled, 0, 3);
	tcase_add_test(tc, a_full_ring_spills_in_order);
	suite_add_tcase(s, tc);
	return tl_run_suite(s);
}
