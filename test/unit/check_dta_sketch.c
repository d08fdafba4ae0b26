/*
 * check_dta_sketch.c - Sketch-Merge stores against switches' sketches
 * built and encoded here as a switch does (src/plugins/dta/README.md):
 * count-min and count sketch estimates from the merged sketch equal the
 * model's and keep their error bounds, HyperLogLog within its standard
 * error, and the protocol of columns: gaps, duplicates, epochs.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dta_models.h"
#include "testlib.h"

/* ---- Sketch-Merge ---- */

/* A switch's sketch, indexed as README "Sketch-Merge" tells switches. */
struct sw {
	enum isp_dta_sketch kind;
	unsigned rows, width;
	uint64_t seed;
	int64_t c[4096];
};

static int cs_sign(const struct sw *w, uint32_t key, unsigned row)
{
	return w->kind == ISP_DTA_COUNT_SKETCH &&
	       (mm64(kb(key), 4, w->seed ^ 0x5bd1e995) >> row & 1) ? -1 : 1;
}

static void sw_add(struct sw *w, uint32_t key)
{
	uint64_t h = mm64(kb(key), 4, w->seed);

	if (w->kind == ISP_DTA_HLL) {
		int b = __builtin_ctz(w->width);
		uint64_t x = h >> b;
		int64_t rank = x ? 1 + __builtin_ctzll(x) : 65 - b, *r = &w->c[h & (w->width - 1)];
		*r = rank > *r ? rank : *r;
		return;
	}
	for (unsigned i = 0; i < w->rows; i++)
		w->c[i * w->width + idx(h, i, w->width)] += cs_sign(w, key, i);
}

/* Columns [col, col + n): big-endian u32, column-major. */
static void sw_encode(const struct sw *w, unsigned col, unsigned n, uint8_t *out)
{
	for (unsigned j = col; j < col + n; j++)
		for (unsigned r = 0; r < w->rows; r++, out += 4) {
			uint32_t v = (uint32_t)w->c[r * w->width + j];
			out[0] = (uint8_t)(v >> 24), out[1] = (uint8_t)(v >> 16);
			out[2] = (uint8_t)(v >> 8), out[3] = (uint8_t)v;
		}
}

/* The store, the switches' sketches, and what merging them must give:
 * the sum of the counters (HyperLogLog: the max). */
static struct sm {
	struct st t;
	struct sw sw[4], merged;
} sm;

static void sm_open(enum isp_dta_sketch kind, unsigned rows, unsigned width, unsigned R)
{
	memset(&sm, 0, sizeof(sm));
	sm.t.c = (struct dta_store_cfg){ .kind = ISP_DTA_SKETCH_MERGE, .seed = 0x5eed + kind,
					 .rows = rows, .columns = width, .sketch_kind = kind,
					 .sketch_id = 9, .reporters = R, .epochs = 4 };
	st_open(&sm.t, "sm");
	sm.merged = (struct sw){ .kind = kind, .rows = rows, .width = width, .seed = 0x5eed + kind };
	for (unsigned r = 0; r < R; r++)
		sm.sw[r] = sm.merged;
}

/* Every reporter's columns in reports of ch, all in a shuffled order:
 * each merges, the epoch completes, its counters are sm.merged's. */
static struct isp_dta_epoch *sm_send_all(unsigned R, unsigned epoch, unsigned ch)
{
	unsigned w = sm.merged.width, rows = sm.merged.rows, n = R * (w / ch), order[1024], miss;
	uint8_t buf[4 * 8 * 1024];
	uint64_t writes = ld(&sm.t.h->writes);

	for (unsigned k = 0; k < rows * w; k++) {
		sm.merged.c[k] = 0;
		for (unsigned r = 0; r < R; r++)
			sm.merged.c[k] = sm.merged.kind != ISP_DTA_HLL ? sm.merged.c[k] + sm.sw[r].c[k] :
					 sm.sw[r].c[k] > sm.merged.c[k] ? sm.sw[r].c[k] : sm.merged.c[k];
	}
	for (unsigned i = 0; i < n; i++)
		order[i] = i;
	for (unsigned i = n - 1; i > 0; i--) {
		unsigned j = (unsigned)(rng() % (i + 1)), x = order[i];
		order[i] = order[j], order[j] = x;
	}
	for (unsigned i = 0; i < n; i++) {
		unsigned r = order[i] / (w / ch), col = order[i] % (w / ch) * ch;
		sw_encode(&sm.sw[r], col, ch, buf);
		enum dta_sm_result res = dta_sm_merge(sm.t.s, r, epoch, col, ch, rows, buf, &miss);
		ck_assert_msg(res == DTA_SM_MERGED || res == DTA_SM_GAP, "report %u: %d", i, res);
	}
	struct isp_dta_epoch *e = isp_dta_find_epoch(sm.t.h, epoch);
	ck_assert_ptr_nonnull(e);
	ck_assert_uint_eq(ld32(&e->complete), R);
	ck_assert_uint_eq(ld(&sm.t.h->writes), writes + R * w);
	for (unsigned k = 0; k < rows * w; k++)
		EXPECT(ldi(&isp_dta_epoch_counters(sm.t.h, e)[k]) == sm.merged.c[k]);
	EXPECTED();
	return e;
}

/* The README's answer from the merged sketch: count-min the minimum
 * over the rows, count sketch the median of the signed counters. */
static int64_t sm_model_estimate(uint32_t key)
{
	const struct sw *m = &sm.merged;
	uint64_t h = mm64(kb(key), 4, m->seed);
	int64_t v[8] = { 0 };

	for (unsigned i = 0; i < m->rows; i++) {
		int64_t x = cs_sign(m, key, i) * m->c[i * m->width + idx(h, i, m->width)];
		unsigned j = i;
		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	return m->kind == ISP_DTA_COUNT_MIN ? v[0] : v[m->rows / 2];
}

/*
 * R switches' count-min sketches or count sketches (signed counters, two's
 * complement on the wire) of Zipf-like streams, merged: every estimate is
 * the README's answer from the summed sketches; count-min never below the
 * true count and above it by e/width x total for at most ~e^-rows of the
 * keys; count sketch within 3 sqrt(F2 / width) for all but ~1% (Chebyshev
 * per row, median of 5). A column sent again changes nothing and counts
 * as a duplicate.
 */
static void sm_frequency(enum isp_dta_sketch kind, unsigned rows, unsigned R, unsigned epoch)
{
	enum { KEYS = 4000 };
	static int64_t truth[KEYS];
	int64_t total = 0;
	double f2 = 0;
	unsigned miss, over = 0, neg = 0;
	uint8_t buf[4 * 8 * 16];

	sm_open(kind, rows, 512, R);
	memset(truth, 0, sizeof(truth));
	rng_state = 11 + kind;
	for (unsigned r = 0; r < R; r++)
		for (unsigned i = 0; i < 25000; i++) {
			uint32_t k = zipf_key(KEYS);
			sw_add(&sm.sw[r], k);
			truth[k]++, total++;
		}
	struct isp_dta_epoch *e = sm_send_all(R, epoch, 16);
	for (unsigned k = 0; k < rows * 512; k++)
		neg += sm.merged.c[k] < 0;
	ck_assert(kind == ISP_DTA_COUNT_MIN ? neg == 0 : neg > 200);
	for (uint32_t k = 0; k < KEYS; k++)
		f2 += (double)truth[k] * (double)truth[k];
	double bound = kind == ISP_DTA_COUNT_MIN ? exp(1) / 512 * (double)total : 3 * sqrt(f2 / 512);
	for (uint32_t k = 0; k < KEYS; k++) {
		int64_t est = isp_dta_sm_estimate(sm.t.h, e, kb(k));
		EXPECT(est == sm_model_estimate(k));
		EXPECT(kind != ISP_DTA_COUNT_MIN || est >= truth[k]);
		over += fabs((double)(est - truth[k])) > bound;
	}
	EXPECTED();
	printf("sm %s: %u of %u keys off by more than %.0f\n",
	       kind == ISP_DTA_COUNT_MIN ? "count-min" : "count sketch", over, (unsigned)KEYS, bound);
	ck_assert_uint_le(over, KEYS * (kind == ISP_DTA_COUNT_MIN ? exp(-(double)rows) + 0.01 : 0.03));
	sw_encode(&sm.sw[R - 1], 32, 16, buf);
	ck_assert_int_eq(dta_sm_merge(sm.t.s, R - 1, epoch, 32, 16, rows, buf, &miss), DTA_SM_DUPLICATE);
	for (unsigned k = 0; k < rows * 512; k++)
		EXPECT(ldi(&isp_dta_epoch_counters(sm.t.h, e)[k]) == sm.merged.c[k]);
	EXPECTED();
	ck_assert_uint_eq(ld(&sm.t.h->duplicates), 16);
	ck_assert_uint_eq(ld32(&e->complete), R);
	ck_assert_uint_eq(ld(&sm.t.h->writes), R * 512);
	st_close(&sm.t);
}

START_TEST(sm_count_min) { sm_frequency(ISP_DTA_COUNT_MIN, 3, 4, 7); }
END_TEST

START_TEST(sm_count_sketch) { sm_frequency(ISP_DTA_COUNT_SKETCH, 5, 3, 100); }
END_TEST

/* HyperLogLog (Flajolet et al.: alpha m^2 / sum 2^-r, linear counting
 * m ln(m / zeros) up to 5/2 m) of the merged registers. */
static double hll_model(const struct sw *m)
{
	double sum = 0, n = m->width;
	unsigned zeros = 0;

	for (unsigned j = 0; j < m->width; j++)
		sum += ldexp(1, -(int)m->c[j]), zeros += m->c[j] == 0;
	double est = 0.7213 / (1 + 1.079 / n) * n * n / sum;
	return est <= 2.5 * n && zeros ? n * log(n / zeros) : est;
}

/* 4 switches' HyperLogLogs of overlapping key sets (every key seen by
 * at least one, twice): the estimate is the model's of the max-merged
 * registers, within 3 x 1.04/sqrt(m) of the exact distinct count, from
 * linear counting's range to HLL's. */
START_TEST(sm_hll)
{
	const unsigned card[] = { 200, 1500, 5000, 100000 };
	enum { R = 4 };

	sm_open(ISP_DTA_HLL, 1, 1024, R);
	rng_state = 13;
	for (unsigned ei = 0; ei < 4; ei++) {
		for (unsigned r = 0; r < R; r++)
			memset(sm.sw[r].c, 0, sizeof(sm.sw[r].c));
		for (uint32_t k = 0; k < card[ei]; k++) {
			uint64_t m = rng();
			for (unsigned r = 0; r < R; r++)
				if (k % R == r || (m >> r & 1)) {
					sw_add(&sm.sw[r], k * 0x9e3779b1u + ei);
					sw_add(&sm.sw[r], k * 0x9e3779b1u + ei);
				}
		}
		struct isp_dta_epoch *e = sm_send_all(R, 1 + ei, 64);
		double est = isp_dta_sm_cardinality(sm.t.h, e), rel = fabs(est / card[ei] - 1);
		printf("sm hll: %u distinct, estimate %.1f (%.2f%%)\n", card[ei], est, 100 * rel);
		ck_assert_double_eq_tol(est, hll_model(&sm.merged), 1e-9 * est);
		ck_assert_msg(rel <= 3 * 1.04 / 32, "%u distinct: %.1f", card[ei], est);
	}
	ck_assert_ptr_eq(isp_dta_find_epoch(sm.t.h, -1), isp_dta_find_epoch(sm.t.h, 4));
	st_close(&sm.t);
}
END_TEST

/* Counter of a hand-made report: reporter, column, row. */
static uint32_t cval(unsigned rep, unsigned col, unsigned row)
{
	return 1 + rep * 1000 + col * 10 + row;
}

static bool arrived[2][64];

static enum dta_sm_result sm_cols(unsigned rep, unsigned epoch, unsigned col, unsigned n,
				  unsigned rows, unsigned *missing)
{
	uint8_t buf[4 * 3 * 64] = { 0 }, *p = buf;

	for (unsigned j = col; j < col + n && j < 64; j++)
		for (unsigned r = 0; r < rows; r++, p += 4) {
			uint32_t v = cval(rep, j, r);
			p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
		}
	*missing = 0xdead;
	enum dta_sm_result res = dta_sm_merge(sm.t.s, rep, epoch, col, n, rows, buf, missing);
	if (res <= DTA_SM_DUPLICATE)
		for (unsigned j = col; j < col + n; j++)
			arrived[rep][j] = true;
	return res;
}

/* The epoch's counters are the sum of the columns that arrived, once. */
static void sm_check(unsigned epoch)
{
	struct isp_dta_epoch *e = isp_dta_find_epoch(sm.t.h, epoch);

	ck_assert_ptr_nonnull(e);
	for (unsigned r = 0; r < 2; r++)
		for (unsigned j = 0; j < 64; j++) {
			int64_t want = (arrived[0][j] ? cval(0, j, r) : 0) + (arrived[1][j] ? cval(1, j, r) : 0);
			EXPECT(ldi(&isp_dta_epoch_counters(sm.t.h, e)[r * 64 + j]) == want);
		}
	EXPECTED();
}

/* Gaps NACKed once each with the first missing column, duplicates not
 * merged again, completion, stale and newer epochs (16-bit wrap), shape
 * errors. */
START_TEST(sm_protocol)
{
	unsigned miss;

	sm_open(ISP_DTA_COUNT_MIN, 2, 64, 2);
	memset(arrived, 0, sizeof(arrived));
	ck_assert_int_eq(sm_cols(0, 5, 0, 4, 2, &miss), DTA_SM_MERGED);
	ck_assert_int_eq(sm_cols(0, 5, 8, 4, 2, &miss), DTA_SM_GAP);
	ck_assert_uint_eq(miss, 4);
	ck_assert_int_eq(sm_cols(0, 5, 12, 4, 2, &miss), DTA_SM_MERGED);      /* same gap */
	ck_assert_int_eq(sm_cols(0, 5, 4, 4, 2, &miss), DTA_SM_MERGED);
	ck_assert_int_eq(sm_cols(0, 5, 20, 4, 2, &miss), DTA_SM_GAP);
	ck_assert_uint_eq(miss, 16);
	ck_assert_int_eq(sm_cols(0, 5, 16, 8, 2, &miss), DTA_SM_MERGED);      /* 20-23 again */
	ck_assert_uint_eq(ld(&sm.t.h->duplicates), 4);
	ck_assert_int_eq(sm_cols(0, 5, 16, 4, 2, &miss), DTA_SM_DUPLICATE);
	ck_assert_uint_eq(ld(&sm.t.h->duplicates), 8);
	ck_assert_int_eq(sm_cols(1, 5, 4, 4, 2, &miss), DTA_SM_GAP);
	ck_assert_uint_eq(miss, 0);
	ck_assert_int_eq(sm_cols(1, 5, 0, 4, 2, &miss), DTA_SM_MERGED);
	struct isp_dta_epoch *e = isp_dta_find_epoch(sm.t.h, 5);
	ck_assert_uint_eq(ld32(&e->complete), 0);
	ck_assert_int_eq(sm_cols(0, 5, 24, 40, 2, &miss), DTA_SM_MERGED);
	ck_assert_uint_eq(ld32(&e->complete), 1);
	ck_assert_int_eq(sm_cols(1, 5, 8, 56, 2, &miss), DTA_SM_MERGED);
	ck_assert_uint_eq(ld32(&e->complete), 2);
	ck_assert_uint_eq(ld(&sm.t.h->writes), 128);
	sm_check(5);

	ck_assert_int_eq(sm_cols(0, 1, 0, 4, 2, &miss), DTA_SM_STALE);        /* slot 1 too */
	ck_assert_uint_eq(ld(&sm.t.h->stale), 1);
	ck_assert_int_eq(sm_cols(0, 5, 0, 4, 3, &miss), DTA_SM_SHAPE);        /* rows */
	ck_assert_int_eq(sm_cols(2, 5, 0, 4, 2, &miss), DTA_SM_SHAPE);        /* reporter */
	ck_assert_int_eq(sm_cols(0, 5, 62, 4, 2, &miss), DTA_SM_SHAPE);       /* columns */
	ck_assert_int_eq(sm_cols(0, 5, 0, 0, 2, &miss), DTA_SM_SHAPE);
	ck_assert_uint_eq(ld(&sm.t.h->rejected), 4);
	sm_check(5);
	ck_assert_uint_eq(ld32(&e->complete), 2);

	memset(arrived, 0, sizeof(arrived));    /* a newer epoch clears the slot */
	ck_assert_int_eq(sm_cols(1, 9, 0, 4, 2, &miss), DTA_SM_MERGED);
	ck_assert_ptr_null(isp_dta_find_epoch(sm.t.h, 5));
	sm_check(9);
	ck_assert_uint_eq(ld32(&isp_dta_find_epoch(sm.t.h, 9)->complete), 0);
	ck_assert_int_eq(sm_cols(1, 9, 8, 4, 2, &miss), DTA_SM_GAP);  /* its NACKs start over */
	ck_assert_uint_eq(miss, 4);
	/* go-back-N refills 4-5 but loses 6-7 again; its column 8 came
	 * before: a duplicate NACKs nothing, so the next new column does */
	ck_assert_int_eq(sm_cols(1, 9, 4, 2, 2, &miss), DTA_SM_MERGED);
	ck_assert_int_eq(sm_cols(1, 9, 8, 1, 2, &miss), DTA_SM_DUPLICATE);
	ck_assert_int_eq(sm_cols(1, 9, 12, 1, 2, &miss), DTA_SM_GAP);
	ck_assert_uint_eq(miss, 6);
	ck_assert_int_eq(sm_cols(0, 5, 0, 4, 2, &miss), DTA_SM_STALE);
	ck_assert_uint_eq(ld(&sm.t.h->stale), 2);
	sm_check(9);

	ck_assert_int_eq(sm_cols(0, 65535, 0, 4, 2, &miss), DTA_SM_MERGED);   /* slot 3 */
	ck_assert_int_eq(sm_cols(0, 3, 0, 4, 2, &miss), DTA_SM_MERGED);       /* after the wrap */
	ck_assert_ptr_null(isp_dta_find_epoch(sm.t.h, 65535));
	ck_assert_ptr_nonnull(isp_dta_find_epoch(sm.t.h, 3));
	ck_assert_int_eq(sm_cols(0, 65535, 4, 4, 2, &miss), DTA_SM_STALE);
	ck_assert_uint_eq(ld(&sm.t.h->stale), 3);
	ck_assert_ptr_eq(isp_dta_find_epoch(sm.t.h, -1), isp_dta_find_epoch(sm.t.h, 9));
	st_close(&sm.t);
}
END_TEST


int main(void)
{
	Suite *s = suite_create("dta_sketch");
	TCase *tc = tcase_create("sketch-merge");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, sm_count_min);
	tcase_add_test(tc, sm_count_sketch);
	tcase_add_test(tc, sm_hll);
	tcase_add_test(tc, sm_protocol);
	suite_add_tcase(s, tc);
	return tl_run_suite(s);
}
