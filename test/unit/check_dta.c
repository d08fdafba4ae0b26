/*
 * check_dta.c - the DTA stores (src/plugins/dta/store.c writes them,
 * dta_store.h reads them) against models written here from
 * src/plugins/dta/README.md: a dictionary and the slot each copy lands
 * in (Key-Write), the paper's queryability formula, positions of a ring
 * (Append), exact counts and the count-min bound (Key-Increment), a store
 * reopened, and writers racing a reader (shared stores). Sketch-Merge:
 * check_dta_sketch.c; what both share: dta_models.h.
 */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dta_models.h"
#include "testlib.h"
START_TEST(murmur_reference)
{
	uint8_t b[32];

	rng_state = 1;
	for (size_t len = 0; len <= sizeof(b); len++) {
		for (size_t i = 0; i < len; i++)
			b[i] = (uint8_t)rng();
		uint64_t seed = rng();
		ck_assert_uint_eq(isp_dta_murmur64a(b, len, seed), mm64(b, len, seed));
		ck_assert_uint_eq(isp_dta_index(seed, (unsigned)len % 8, 1024), idx(seed, (unsigned)len % 8, 1024));
	}
}
END_TEST

/* ---- Key-Write ---- */

static void kw_val(uint32_t k, unsigned gen, uint32_t *w, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		w[i] = k * 2654435761u + gen * 0x01000193u + i * 0x9e3779b9u + 1;
}

/* 1,000 keys (a third written again, with 2 of 4 words) in 2^16 slots,
 * N = 2, against a dictionary and the owner of each slot: a key answers
 * with the copies it still holds (majority: both), with its last value
 * and zeros beyond it; a key never written gets nothing. */
START_TEST(kw_dictionary)
{
	struct st any = { .c = { .kind = ISP_DTA_KEY_WRITE, .seed = 0x5eed, .value_bytes = 16,
				 .redundancy = 2, .slots = 1u << 16, .answer_any = true } };
	struct st maj = any;
	const unsigned n = 1000;
	static uint32_t owner[1u << 16], dict[1000][4];
	uint32_t w[4], got[4];

	maj.c.answer_any = false;
	st_open(&any, "kw_any");
	st_open(&maj, "kw_maj");
	memset(owner, 0, sizeof(owner));
	for (unsigned gen = 0; gen < 2; gen++)
		for (uint32_t k = 0; k < n; k++) {
			if (gen && k % 3)
				continue;
			unsigned nw = gen ? 2 : 4;
			kw_val(k, gen, w, nw);
			memset(dict[k], 0, sizeof(dict[k]));
			memcpy(dict[k], w, 4 * nw);
			dta_kw_write(any.s, kb(k), 4, 2, w, nw);
			dta_kw_write(maj.s, kb(k), 4, 2, w, nw);
			for (unsigned i = 0; i < 2; i++)
				owner[kslot(k, i, 0x5eed, 1u << 16)] = k + 1;
		}
	unsigned full = 0;
	for (uint32_t k = 0; k < n; k++) {
		unsigned held = 0;
		for (unsigned i = 0; i < 2; i++)
			held += owner[kslot(k, i, 0x5eed, 1u << 16)] == k + 1;
		full += held == 2;
		memset(got, 0xee, sizeof(got));
		EXPECT(isp_dta_kw_get(any.h, kb(k), 4, got) == held);
		EXPECT(!held || !memcmp(got, dict[k], 16));
		memset(got, 0xee, sizeof(got));
		EXPECT(isp_dta_kw_get(maj.h, kb(k), 4, got) == (held == 2 ? 2 : 0));
		EXPECT(held < 2 || !memcmp(got, dict[k], 16));
	}
	for (uint32_t k = n; k < 2 * n; k++)
		EXPECT(!isp_dta_kw_get(any.h, kb(k), 4, got) && !isp_dta_kw_get(maj.h, kb(k), 4, got));
	/* many at a time (37 keys: two whole batches and a part), written
	 * and unwritten ones: the answers of one at a time */
	for (uint32_t at = 0; at + 37 <= 2 * n; at += 111) {
		uint8_t keys[37][4];
		uint32_t vals[37][4];
		unsigned found[37];
		for (unsigned i = 0; i < 37; i++)
			memcpy(keys[i], kb(at + i), 4);
		isp_dta_kw_get_many(any.h, keys, 4, 37, &vals[0][0], found);
		for (unsigned i = 0; i < 37; i++) {
			unsigned one = isp_dta_kw_get(any.h, keys[i], 4, got);
			EXPECT(found[i] == one && (!one || !memcmp(vals[i], got, 16)));
		}
	}
	EXPECTED();
	ck_assert_uint_ge(full, 900);          /* ~97% at this load */
	ck_assert_uint_eq(ld(&any.h->writes), n + (n + 2) / 3);
	st_close(&any);
	st_close(&maj);
}
END_TEST

/* A key b != a whose n copies share exactly one slot with a's. */
static uint32_t kw_collider(uint32_t a, unsigned n, uint64_t seed, uint64_t slots)
{
	for (uint32_t b = a + 1; b < a + 100000; b++) {
		unsigned shared = 0;
		for (unsigned i = 0; i < n; i++)
			for (unsigned j = 0; j < n; j++)
				shared += kslot(a, i, seed, slots) == kslot(b, j, seed, slots);
		if (shared == 1)
			return b;
	}
	ck_abort_msg("no colliding key");
	return 0;
}

/* N = 3, majority: one copy overwritten by another key (or by a write of
 * one copy) leaves 2 of 3: answered. N = 2: one copy left is no majority,
 * but answer = any answers it. */
START_TEST(kw_majority)
{
	struct st t3 = { .c = { .kind = ISP_DTA_KEY_WRITE, .seed = 77, .value_bytes = 8,
				.redundancy = 3, .slots = 64 } };
	uint32_t va[2] = { 0xa1, 0xa2 }, va2[2] = { 0xb1, 0xb2 }, vb[2] = { 0xc1, 0xc2 }, got[2];

	st_open(&t3, "kw3");
	dta_kw_write(t3.s, kb(1), 4, 3, va, 2);
	dta_kw_write(t3.s, kb(1), 4, 1, va2, 2);        /* copy 0 only */
	ck_assert_uint_eq(isp_dta_kw_get(t3.h, kb(1), 4, got), 2);
	ck_assert_mem_eq(got, va, 8);                   /* what most copies hold */
	dta_kw_write(t3.s, kb(1), 4, 3, va2, 2);
	ck_assert_uint_eq(isp_dta_kw_get(t3.h, kb(1), 4, got), 3);
	ck_assert_mem_eq(got, va2, 8);
	uint32_t b = kw_collider(1, 3, 77, 64);
	dta_kw_write(t3.s, kb(b), 4, 3, vb, 2);
	ck_assert_uint_eq(isp_dta_kw_get(t3.h, kb(1), 4, got), 2);
	ck_assert_mem_eq(got, va2, 8);
	ck_assert_uint_eq(isp_dta_kw_get(t3.h, kb(b), 4, got), 3);
	ck_assert_mem_eq(got, vb, 8);
	st_close(&t3);

	struct st maj = { .c = { .kind = ISP_DTA_KEY_WRITE, .seed = 78, .value_bytes = 8,
				 .redundancy = 2, .slots = 64 } };
	struct st any = maj;
	any.c.answer_any = true;
	st_open(&maj, "kw2m");
	st_open(&any, "kw2a");
	b = kw_collider(5, 2, 78, 64);
	for (int i = 0; i < 2; i++) {
		struct st *t = i ? &any : &maj;
		dta_kw_write(t->s, kb(5), 4, 2, va, 2);
		dta_kw_write(t->s, kb(b), 4, 2, vb, 2);
		ck_assert_uint_eq(isp_dta_kw_get(t->h, kb(b), 4, got), 2);
		ck_assert_mem_eq(got, vb, 8);
	}
	ck_assert_uint_eq(isp_dta_kw_get(maj.h, kb(5), 4, got), 0);
	ck_assert_uint_eq(isp_dta_kw_get(any.h, kb(5), 4, got), 1);
	ck_assert_mem_eq(got, va, 8);
	st_close(&maj);
	st_close(&any);

	/* a slot written 2^31 times: its version wraps past 0 ("never
	 * written" to readers), the value stays readable */
	struct st w = { .c = { .kind = ISP_DTA_KEY_WRITE, .seed = 79, .value_bytes = 8,
			       .redundancy = 2, .slots = 64 } };
	st_open(&w, "kwwrap");
	dta_kw_write(w.s, kb(9), 4, 2, va, 2);
	uint64_t hh = isp_dta_murmur64a(kb(9), 4, 79);
	for (unsigned i = 0; i < 2; i++)
		atomic_store((_Atomic uint32_t *)isp_dta_kw_slot(w.h, hh, i), UINT32_MAX - 1);
	dta_kw_write(w.s, kb(9), 4, 2, vb, 2);
	for (unsigned i = 0; i < 2; i++)
		ck_assert_uint_eq(atomic_load((_Atomic uint32_t *)isp_dta_kw_slot(w.h, hh, i)), 2);
	ck_assert_uint_eq(isp_dta_kw_get(w.h, kb(9), 4, got), 2);
	ck_assert_mem_eq(got, vb, 8);
	st_close(&w);
}
END_TEST

/*
 * Queryability (answer = any) against the DTA paper's model: a copy
 * survives the N·a copies written after it with probability e^(-Na/M),
 * a key of age a answers with 1 - (1 - e^(-Na/M))^N. The oldest keys
 * (age ~ W) are measured against it, all W keys against its mean over
 * their ages. No query ever answers a wrong value; keys never written
 * never answer.
 */
START_TEST(kw_queryability)
{
	const uint64_t M = 1u << 16;
	const double loads[] = { 0.1, 0.5, 1.0, 2.0 };
	const unsigned ns[] = { 1, 2, 4 };

	for (unsigned ni = 0; ni < 3; ni++) {
		unsigned N = ns[ni];
		struct st t = { .c = { .kind = ISP_DTA_KEY_WRITE, .seed = 0xabc + N, .value_bytes = 8,
				       .redundancy = N, .slots = M, .answer_any = true } };
		st_open(&t, "kwq");
		for (unsigned li = 0; li < 4; li++) {
			uint32_t W = (uint32_t)(loads[li] * (double)M), K = W / 8, w[2], got[2];
			uint64_t ok = 0, ok_old = 0, wrong = 0;
			double model = 0, model_old = 0;
			dta_store_clear(t.s);
			for (uint32_t i = 0; i < W; i++) {
				uint32_t k = i * 0x9e3779b1u + li;
				w[0] = k ^ 0xa5a5a5a5u, w[1] = ~i;
				dta_kw_write(t.s, kb(k), 4, N, w, 2);
			}
			for (uint32_t i = 0; i < W; i++) {
				uint32_t k = i * 0x9e3779b1u + li;
				double p = 1 - pow(1 - exp(-(double)N * (W - 1 - i) / (double)M), N);
				model += p;
				model_old += i < K ? p : 0;
				if (isp_dta_kw_get(t.h, kb(k), 4, got) == 0)
					continue;
				bool right = got[0] == (k ^ 0xa5a5a5a5u) && got[1] == ~i;
				wrong += !right;
				ok += right;
				ok_old += right && i < K;
			}
			model /= W;
			model_old /= K;
			double f = (double)ok / W, fo = (double)ok_old / K;
			double paper = 1 - pow(1 - exp(-(double)N * W / (double)M), N);
			double tol = fmax(0.02, 5 * sqrt(model * (1 - model) / W));
			double tol_old = fmax(0.02, 5 * sqrt(model_old * (1 - model_old) / K));
			printf("kw N=%u W/M=%.1f: all %.4f (model %.4f), oldest %u: %.4f (model %.4f, "
			       "1-(1-e^-WN/M)^N %.4f)\n", N, loads[li], f, model, K, fo, model_old, paper);
			ck_assert_msg(fabs(f - model) <= tol, "N=%u W/M=%g: %.4f vs %.4f", N, loads[li], f, model);
			ck_assert_msg(fabs(fo - model_old) <= tol_old, "N=%u W/M=%g oldest: %.4f vs %.4f", N,
				      loads[li], fo, model_old);
			ck_assert_uint_eq(wrong, 0);
			for (uint32_t i = W; i < W + 20000; i++)
				EXPECT(!isp_dta_kw_get(t.h, kb(i * 0x9e3779b1u + li), 4, got));
			EXPECTED();
		}
		st_close(&t);
	}
}
END_TEST

/* ---- Postcarder ---- */

/* Each hop sets its word in the key's value as a copy of the key holds
 * it (zeros when none does: a slot of another key is reset), written to
 * every copy; a hop beyond the value is rejected and changes nothing. */
START_TEST(postcarder)
{
	struct st t = { .c = { .kind = ISP_DTA_KEY_WRITE, .seed = 9, .value_bytes = 16,
			       .redundancy = 2, .slots = 64, .answer_any = true } };
	uint32_t got[4], full[4] = { 1, 2, 3, 4 };

	st_open(&t, "pc");
	ck_assert(dta_kw_postcard(t.s, kb(3), 4, 0, 0x11));
	ck_assert(dta_kw_postcard(t.s, kb(3), 4, 2, 0x33));
	ck_assert_uint_eq(isp_dta_kw_get(t.h, kb(3), 4, got), 2);
	ck_assert_mem_eq(got, ((uint32_t[]){ 0x11, 0, 0x33, 0 }), 16);
	ck_assert(!dta_kw_postcard(t.s, kb(3), 4, 4, 0x55));
	ck_assert_uint_eq(ld(&t.h->rejected), 1);
	ck_assert_uint_eq(ld(&t.h->writes), 2);
	ck_assert_uint_eq(isp_dta_kw_get(t.h, kb(3), 4, got), 2);
	ck_assert_mem_eq(got, ((uint32_t[]){ 0x11, 0, 0x33, 0 }), 16);

	dta_kw_write(t.s, kb(3), 4, 2, full, 4);
	ck_assert(dta_kw_postcard(t.s, kb(3), 4, 1, 7));
	ck_assert_uint_eq(isp_dta_kw_get(t.h, kb(3), 4, got), 2);
	ck_assert_mem_eq(got, ((uint32_t[]){ 1, 7, 3, 4 }), 16);
	uint32_t b = kw_collider(3, 2, 9, 64);
	ck_assert(dta_kw_postcard(t.s, kb(b), 4, 3, 0x44));
	ck_assert_uint_eq(isp_dta_kw_get(t.h, kb(b), 4, got), 2);
	ck_assert_mem_eq(got, ((uint32_t[]){ 0, 0, 0, 0x44 }), 16);
	ck_assert_uint_eq(isp_dta_kw_get(t.h, kb(3), 4, got), 1);  /* its other copy */
	ck_assert_mem_eq(got, ((uint32_t[]){ 1, 7, 3, 4 }), 16);
	/* the next hop of key 3 starts from the copy that is still its own */
	ck_assert(dta_kw_postcard(t.s, kb(3), 4, 2, 0x66));
	ck_assert_uint_eq(isp_dta_kw_get(t.h, kb(3), 4, got), 2);
	ck_assert_mem_eq(got, ((uint32_t[]){ 1, 7, 0x66, 4 }), 16);
	ck_assert_uint_eq(isp_dta_kw_get(t.h, kb(b), 4, got), 1);
	ck_assert_mem_eq(got, ((uint32_t[]){ 0, 0, 0, 0x44 }), 16);
	st_close(&t);
}
END_TEST

/* ---- Append ---- */

static unsigned poll_all(struct st *t, uint32_t list, uint64_t *cur, uint32_t *out, unsigned max,
			 uint64_t *lost)
{
	return isp_dta_poll(t->h, list, cur, (uint8_t *)out, max, lost);
}

/* Entries come back in order from a cursor; one lapped by more than the
 * ring loses exactly the entries overwritten and resumes at head -
 * entries; n entries at once are n positions; a list beyond lists is
 * rejected. Entry i of a list holds { i, ~i }. */
START_TEST(append_ring)
{
	struct st t = { .c = { .kind = ISP_DTA_APPEND, .value_bytes = 8, .lists = 3, .entries = 8 } };
	uint32_t v[2 * 32], out[2 * 64];
	uint64_t cur = 0, lost = 99;

	st_open(&t, "ap");
	for (uint32_t i = 0; i < 5; i++)
		ck_assert(dta_append(t.s, 1, (uint32_t[]){ i, ~i }, 1));
	ck_assert_uint_eq(poll_all(&t, 1, &cur, out, 64, &lost), 5);
	ck_assert_uint_eq(lost, 0);
	ck_assert_uint_eq(cur, 5);
	for (uint32_t i = 0; i < 5; i++)
		ck_assert(out[2 * i] == i && out[2 * i + 1] == ~i);
	ck_assert_uint_eq(poll_all(&t, 1, &cur, out, 64, &lost), 0);
	ck_assert_uint_eq(cur, 5);
	for (uint32_t i = 5; i < 25; i++)
		ck_assert(dta_append(t.s, 1, (uint32_t[]){ i, ~i }, 1));
	/* head 25: positions 17..24 kept, 5..16 lost */
	ck_assert_uint_eq(poll_all(&t, 1, &cur, out, 3, &lost), 3);
	ck_assert_uint_eq(lost, 12);
	ck_assert_uint_eq(cur, 20);
	for (uint32_t i = 0; i < 3; i++)
		ck_assert(out[2 * i] == 17 + i && out[2 * i + 1] == ~(17 + i));
	ck_assert_uint_eq(poll_all(&t, 1, &cur, out, 64, &lost), 5);
	ck_assert_uint_eq(lost, 0);
	ck_assert_uint_eq(cur, 25);
	ck_assert_uint_eq(out[2 * 4], 24);
	uint64_t c0 = 0;                        /* from the start: the 8 newest */
	ck_assert_uint_eq(poll_all(&t, 1, &c0, out, 64, &lost), 8);
	ck_assert_uint_eq(lost, 17);
	ck_assert_uint_eq(out[0], 17);
	uint64_t seq;                           /* the layout: seq = position + 1 */
	memcpy(&seq, isp_dta_entry(t.h, 1, 24), 8);
	ck_assert_uint_eq(seq, 25);
	ck_assert_uint_eq(ld(&isp_dta_heads(t.h)[1].head), 25);

	/* a batch of 5, then one of 12 (more than the ring) */
	for (uint32_t i = 0; i < 17; i++)
		v[2 * i] = 100 + i, v[2 * i + 1] = ~(100 + i);
	ck_assert(dta_append(t.s, 2, v, 5));
	c0 = 0;
	ck_assert_uint_eq(poll_all(&t, 2, &c0, out, 64, &lost), 5);
	ck_assert_mem_eq(out, v, 5 * 8);
	ck_assert(dta_append(t.s, 2, v + 10, 12));      /* positions 5..16 */
	ck_assert_uint_eq(poll_all(&t, 2, &c0, out, 64, &lost), 8);
	ck_assert_uint_eq(lost, 4);
	ck_assert_uint_eq(c0, 17);
	ck_assert_mem_eq(out, v + 10 + 8, 8 * 8);      /* the batch's last 8 */
	c0 = 0;
	ck_assert_uint_eq(poll_all(&t, 0, &c0, out, 64, &lost), 0);    /* untouched */
	ck_assert_uint_eq(lost, 0);

	ck_assert(!dta_append(t.s, 3, v, 4));
	ck_assert_uint_eq(ld(&t.h->rejected), 4);
	ck_assert_uint_eq(ld(&t.h->writes), 25 + 5 + 12);
	st_close(&t);
}
END_TEST

/* ---- Key-Increment ---- */

/* A Zipf-like stream of 200,000 increments of 1-4 over 20,000 keys:
 * every estimate is the minimum of the key's counter in each row (README
 * indexing), never below the true count; each row sums to the total;
 * keys off by more than e/columns x total are at most e^-rows. */
START_TEST(ki_count_min)
{
	struct st t = { .c = { .kind = ISP_DTA_KEY_INCREMENT, .seed = 31, .rows = 4, .columns = 1024 } };
	enum { KEYS = 20000, EVENTS = 200000 };
	static uint64_t truth[KEYS];
	uint64_t total = 0;

	st_open(&t, "ki");
	rng_state = 7;
	memset(truth, 0, sizeof(truth));
	for (unsigned e = 0; e < EVENTS; e++) {
		uint32_t k = zipf_key(KEYS);
		uint64_t v = 1 + rng() % 4;
		truth[k] += v, total += v;
		dta_ki_add(t.s, kb(k), 4, v);
	}
	const _Atomic uint64_t *cnt = (const _Atomic uint64_t *)isp_dta_data(t.h);
	for (unsigned r = 0; r < 4; r++) {
		uint64_t sum = 0;
		for (unsigned j = 0; j < 1024; j++)
			sum += ld(&cnt[r * 1024 + j]);
		ck_assert_uint_eq(sum, total);
	}
	double bound = exp(1) / 1024 * (double)total;
	unsigned over = 0;
	for (unsigned k = 0; k < KEYS; k++) {
		uint64_t est = isp_dta_ki_estimate(t.h, kb(k), 4);
		EXPECT(est >= truth[k]);
		over += (double)(est - truth[k]) > bound;
		uint64_t h = mm64(kb(k), 4, 31), m = UINT64_MAX;     /* the README's rows */
		for (unsigned r = 0; r < 4; r++) {
			uint64_t x = ld(&cnt[r * 1024 + idx(h, r, 1024)]);
			m = x < m ? x : m;
		}
		EXPECT(m == est);
	}
	EXPECTED();
	printf("ki: %u of %u keys above e/w x total (%.0f)\n", over, (unsigned)KEYS, bound);
	ck_assert_msg((double)over / KEYS <= exp(-4) + 0.005, "%u keys over the bound", over);
	ck_assert_uint_eq(ld(&t.h->writes), EVENTS);
	dta_store_clear(t.s);
	ck_assert_uint_eq(isp_dta_ki_estimate(t.h, kb(0), 4), 0);
	dta_ki_add(t.s, kb(1), 4, UINT64_C(1) << 40);
	dta_ki_add(t.s, kb(1), 4, 3);
	ck_assert_uint_eq(isp_dta_ki_estimate(t.h, kb(1), 4), (UINT64_C(1) << 40) + 3);
	st_close(&t);
}
END_TEST

/* ---- persist ---- */

/* Reopened with persist and the same shape, a store keeps its values and
 * counters; another shape (or no persist) makes a fresh file. */
START_TEST(persist_reopen)
{
	struct st t = { .c = { .kind = ISP_DTA_KEY_WRITE, .seed = 4, .value_bytes = 8, .redundancy = 2,
			       .slots = 256, .answer_any = true, .persist = true } };
	uint32_t got[6], had[20][2];
	unsigned copies[20], kept = 0;

	st_open(&t, "persist");
	for (uint32_t k = 0; k < 20; k++)
		dta_kw_write(t.s, kb(k), 4, 2, (uint32_t[]){ k, ~k }, 2);
	for (uint32_t k = 0; k < 20; k++)
		kept += (copies[k] = isp_dta_kw_get(t.h, kb(k), 4, had[k])) > 0;
	ck_assert_uint_ge(kept, 15);
	dta_store_close(t.s);
	st_open(&t, "persist");
	ck_assert_uint_eq(ld(&t.h->writes), 20);
	for (uint32_t k = 0; k < 20; k++) {
		ck_assert_uint_eq(isp_dta_kw_get(t.h, kb(k), 4, got), copies[k]);
		if (copies[k])
			ck_assert(got[0] == k && got[1] == ~k && !memcmp(got, had[k], 8));
	}
	dta_store_close(t.s);
	/* the answer is not the shape: the values stay, the new answer holds
	 * (what readers, intspect-ctl among them, read from the header) */
	t.c.answer_any = false;
	st_open(&t, "persist");
	ck_assert_uint_eq(ld(&t.h->writes), 20);
	ck_assert_uint_eq(t.h->answer_any, 0);
	dta_store_close(t.s);
	t.c.answer_any = true;

	t.c.value_bytes = 24, t.c.slots = 128;  /* another shape, the same bytes */
	st_open(&t, "persist");
	ck_assert_uint_eq(t.h->value_bytes, 24);
	ck_assert_uint_eq(t.h->slots, 128);
	ck_assert_uint_eq(ld(&t.h->writes), 0);
	for (uint32_t k = 0; k < 20; k++)
		ck_assert_uint_eq(isp_dta_kw_get(t.h, kb(k), 4, got), 0);
	dta_kw_write(t.s, kb(1), 4, 2, (uint32_t[]){ 1, 2, 3, 4 }, 4);
	dta_store_close(t.s);
	t.c.seed = 5;                           /* the seed is part of it */
	st_open(&t, "persist");
	ck_assert_uint_eq(t.h->seed, 5);
	ck_assert_uint_eq(isp_dta_kw_get(t.h, kb(1), 4, got), 0);
	dta_kw_write(t.s, kb(1), 4, 2, (uint32_t[]){ 1, 2, 3, 4 }, 4);
	dta_store_close(t.s);
	t.c.persist = false;
	st_open(&t, "persist");
	ck_assert_uint_eq(isp_dta_kw_get(t.h, kb(1), 4, got), 0);
	st_close(&t);
}
END_TEST

/* ---- shared stores: 2 writers, 1 reader ---- */

enum { CC_WORDS = 32, CC_KEYS = 12, CC_BURST = 25000, CC_AP_STEPS = 10000, CC_STEPS = 200000,
       CC_READS = 10000 };

static struct {
	struct st kw, ki, ap, ring;
	_Atomic unsigned writers, started, failed, reads;
	uint32_t iters[2];
} cc;

/* Entries of 8 words (w + 1) << 28 | n, n = 1, 2, ... per writer and list. */
static void cc_append(struct st *t, uint32_t w, uint32_t *n, unsigned count)
{
	uint32_t v[4 * 8];

	for (unsigned b = 0; b < count; b++, (*n)++)
		for (unsigned j = 0; j < 8; j++)
			v[b * 8 + j] = (w + 1) << 28 | *n;
	cc.failed += !dta_append(t->s, 0, v, count);
}

/* Writer w: CC_BURST single entries to ap, then steps i = 1, 2, ... (at
 * least CC_STEPS, and until the reader saw CC_READS values and ring
 * entries): key (7i + w) mod 12 gets 32 words key << 24 | i; key
 * i mod 1000 gets 1 + (i + w) mod 3; batches of 1 + i mod 4 entries go to
 * ap (the first CC_AP_STEPS steps: ap never wraps) and, writer 0 only,
 * to ring (256 entries, lapped all the time). Two writers never share a
 * ring that wraps: one lapping the other within a ring is a known race
 * of dta_append (a late writer rewrites a newer entry with its old seq). */
static void *cc_writer(void *arg)
{
	uint32_t w = (uint32_t)(uintptr_t)arg, v[CC_WORDS], n = 1, nr = 1, i;

	atomic_fetch_add(&cc.started, 1);
	while (atomic_load(&cc.started) < 2)
		;
	while (n <= CC_BURST)
		cc_append(&cc.ap, w, &n, 1);
	for (i = 1; i <= CC_STEPS || (atomic_load(&cc.reads) < CC_READS && i < 1 << 22); i++) {
		uint32_t k = (i * 7 + w) % CC_KEYS;
		for (unsigned j = 0; j < CC_WORDS; j++)
			v[j] = k << 24 | i;
		dta_kw_write(cc.kw.s, kb(k), 4, 2, v, CC_WORDS);
		dta_ki_add(cc.ki.s, kb(i % 1000), 4, 1 + (i + w) % 3);
		if (i <= CC_AP_STEPS)
			cc_append(&cc.ap, w, &n, 1 + i % 4);
		if (w == 0)
			cc_append(&cc.ring, w, &nr, 1 + i % 4);
	}
	cc.iters[w] = i - 1;
	atomic_fetch_sub(&cc.writers, 1);
	return NULL;
}

struct cc_reader {
	struct st *t;
	uint64_t cur, read, lost, torn, order;
	uint32_t last[3];
};

/* One poll: entries never torn, each writer's n strictly increasing. */
static unsigned cc_poll(struct cc_reader *r)
{
	uint32_t out[256 * 8];
	uint64_t lost;
	unsigned n = isp_dta_poll(r->t->h, 0, &r->cur, (uint8_t *)out, 256, &lost);

	r->lost += lost, r->read += n;
	for (unsigned i = 0; i < n; i++) {
		uint32_t *e = out + 8 * i, w = e[0] >> 28;
		for (unsigned j = 1; j < 8; j++)
			r->torn += e[j] != e[0];
		EXPECT(w == 1 || w == 2);
		w = w == 2 ? 2 : 1;
		r->order += (e[0] & 0xfffffff) <= r->last[w];
		r->last[w] = e[0] & 0xfffffff;
	}
	return n;
}

/* Key-Write: a value read is never torn (all words equal) and is its
 * key's, and no slot is left torn; Append: entries never torn, in order,
 * read + lost = head (nothing lost where the ring never wrapped);
 * count-min: exact row sums after the join. */
START_TEST(shared_writers)
{
	pthread_t th[2];
	uint32_t got[CC_WORDS];
	uint64_t kw_reads = 0, torn = 0;
	struct cc_reader ap = { .t = &cc.ap }, ring = { .t = &cc.ring };

	memset(&cc, 0, sizeof(cc));
	cc.kw.c = (struct dta_store_cfg){ .kind = ISP_DTA_KEY_WRITE, .seed = 1, .redundancy = 2,
					  .value_bytes = 4 * CC_WORDS, .slots = 16, .answer_any = true };
	cc.ki.c = (struct dta_store_cfg){ .kind = ISP_DTA_KEY_INCREMENT, .seed = 2, .rows = 2,
					  .columns = 64 };
	cc.ap.c = (struct dta_store_cfg){ .kind = ISP_DTA_APPEND, .value_bytes = 32, .lists = 1,
					  .entries = 1 << 17 };
	cc.ring.c = cc.ap.c;
	cc.ring.c.entries = 256;
	st_open(&cc.kw, "ckw");
	st_open(&cc.ki, "cki");
	st_open(&cc.ap, "cap");
	st_open(&cc.ring, "cring");
	dta_store_set_shared(cc.kw.s, true);
	dta_store_set_shared(cc.ki.s, true);
	dta_store_set_shared(cc.ap.s, true);
	dta_store_set_shared(cc.ring.s, true);
	cc.writers = 2;
	for (uintptr_t w = 0; w < 2; w++)
		ck_assert_int_eq(pthread_create(&th[w], NULL, cc_writer, (void *)w), 0);
	for (bool last_round = false;;) {
		bool done = atomic_load(&cc.writers) == 0;
		for (uint32_t k = 0; k < CC_KEYS; k++) {
			if (!isp_dta_kw_get(cc.kw.h, kb(k), 4, got))
				continue;
			kw_reads++;
			for (unsigned j = 0; j < CC_WORDS; j++)
				torn += got[j] != got[0];
			EXPECT(got[0] >> 24 == k);
		}
		unsigned n = cc_poll(&ap) + cc_poll(&ring);
		if (kw_reads >= CC_READS && ring.read >= CC_READS)
			atomic_store(&cc.reads, CC_READS);
		if (last_round && n == 0)
			break;
		last_round = done;
	}
	for (int w = 0; w < 2; w++)
		pthread_join(th[w], NULL);
	printf("shared: %u + %u steps, %llu key-write reads, entries read %llu + %llu, lost %llu\n",
	       cc.iters[0], cc.iters[1], (unsigned long long)kw_reads, (unsigned long long)ap.read,
	       (unsigned long long)ring.read, (unsigned long long)ring.lost);
	EXPECTED();
	ck_assert_uint_eq(torn + ap.torn + ring.torn, 0);
	ck_assert_uint_eq(ap.order + ring.order, 0);
	ck_assert_uint_eq(cc.failed, 0);
	ck_assert_uint_ge(kw_reads, CC_READS);
	static uint64_t truth[1000];
	uint64_t total = 0, entries = 0, ring_entries = 0;
	memset(truth, 0, sizeof(truth));
	for (uint32_t w = 0; w < 2; w++)
		for (uint32_t i = 1; i <= cc.iters[w]; i++) {
			truth[i % 1000] += 1 + (i + w) % 3, total += 1 + (i + w) % 3;
			entries += i <= CC_AP_STEPS ? 1 + i % 4 : 0;
			ring_entries += w == 0 ? 1 + i % 4 : 0;
		}
	entries += 2 * CC_BURST;
	ck_assert_uint_eq(ld(&isp_dta_heads(cc.ap.h)[0].head), entries);
	ck_assert_uint_eq(ap.read, entries);
	ck_assert_uint_eq(ap.lost, 0);
	ck_assert_uint_eq(ld(&isp_dta_heads(cc.ring.h)[0].head), ring_entries);
	ck_assert_uint_eq(ring.read + ring.lost, ring_entries);
	ck_assert_uint_ge(ring.read, CC_READS);
	ck_assert_uint_eq(ld(&cc.kw.h->writes), cc.iters[0] + cc.iters[1]);
	for (unsigned i = 0; i < 16; i++) {      /* no slot left torn either */
		const uint32_t *slot = (const uint32_t *)(isp_dta_data(cc.kw.h) + i * (8 + 4 * CC_WORDS));
		EXPECT(slot[0] % 2 == 0);
		for (unsigned j = 1; j < CC_WORDS; j++)
			EXPECT(slot[2 + j] == slot[2]);
	}
	const _Atomic uint64_t *cnt = (const _Atomic uint64_t *)isp_dta_data(cc.ki.h);
	for (unsigned r = 0; r < 2; r++) {
		uint64_t sum = 0;
		for (unsigned j = 0; j < 64; j++)
			sum += ld(&cnt[r * 64 + j]);
		ck_assert_uint_eq(sum, total);
	}
	for (uint32_t k = 0; k < 1000; k++)
		EXPECT(isp_dta_ki_estimate(cc.ki.h, kb(k), 4) >= truth[k]);
	EXPECTED();
	st_close(&cc.kw);
	st_close(&cc.ki);
	st_close(&cc.ap);
	st_close(&cc.ring);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dta");
	TCase *tc = tcase_create("stores");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, murmur_reference);
	tcase_add_test(tc, kw_dictionary);
	tcase_add_test(tc, kw_majority);
	tcase_add_test(tc, kw_queryability);
	tcase_add_test(tc, postcarder);
	tcase_add_test(tc, append_ring);
	tcase_add_test(tc, ki_count_min);
	tcase_add_test(tc, persist_reopen);
	tcase_add_test(tc, shared_writers);
	suite_add_tcase(s, tc);
	return tl_run_suite(s);
}
