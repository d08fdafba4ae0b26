/*
 * dta_bench.c - the DTA stores' writers (src/plugins/dta/store.c) and
 * readers (dta_store.h) on one thread, against a floor: the same loop that
 * only hashes the key (MurmurHash64A) and touches a random slot of the
 * same mapping. bench/dta.sh builds it, runs it and takes the medians.
 *
 *   gcc -std=gnu11 -O2 -march=x86-64-v2 -Wall -Wextra -Werror -I. \
 *       -o /tmp/dta_bench bench/dta_bench.c src/plugins/dta/store.c -lpthread -lm
 *   dta_bench [--rates] [--table] [--quick] [-t SECONDS] [--dir DIR] [--only TEXT]
 *             [--ops N]
 *
 * --rates (the default with no mode) prints one line per figure,
 * "dta LABEL: X M/s" (millions of operations per second of the thread's
 * CPU time: per core),
 * sometimes followed by a note in parentheses. --table prints the
 * Key-Write queryability against the load factor beside DTA's model.
 * -t: seconds each figure runs (default 0.3; --quick 0.02), its figure
 * the median of 5 slices. --dir: where the store files go (default
 * /dev/shm, else $TMPDIR, else /tmp); they are removed at exit. --only:
 * the figures whose label contains TEXT (for perf on one loop). --ops N:
 * each figure runs N operations (rounded up to 16384) instead of a time,
 * for instruction counts (two callgrind runs, N and 2N: the difference).
 *
 * Keys are distinct random-looking 4-byte values (a bijection of their
 * index), passed as 4 bytes like a DTA report's. Every store is created
 * with dta_store_open and written through store.c, as intspect does.
 */
#include "src/plugins/dta/store.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHUNK 16384u            /* operations between two clock reads */
#define NKEYS (1u << 20)        /* the key array (4 MiB, read in order) */

static double budget = 0.3;
static char path[4096];
static volatile uint64_t sink;  /* keeps what the loops compute alive */

/* The thread's CPU time: figures per second of a core, whatever else
 * the machine runs (on a shared machine the wall clock counts the time
 * another process held the core). */
static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* murmur3's finaliser: a bijection of the 32-bit integers */
static uint32_t fmix32(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

static uint32_t own_value(uint32_t key)
{
	return key * 0x9e3779b1u + 1;
}

static void cleanup(void)
{
	if (path[0])
		unlink(path);
}

static void on_signal(int sig)
{
	cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

static struct dta_store *open_store(struct dta_store_cfg *c)
{
	char err[256];
	struct dta_store *s;

	c->name = "bench";
	c->path = path;
	if (!(s = dta_store_open(c, err, sizeof(err)))) {
		fprintf(stderr, "dta_bench: %s\n", err);
		exit(1);
	}
	dta_store_clear(s);     /* every page faulted in before the clock starts */
	return s;
}

static struct dta_store *kw_store_v(unsigned slots_log2, unsigned n, bool answer_any,
				     unsigned value_bytes)
{
	struct dta_store_cfg c = {
		.kind = ISP_DTA_KEY_WRITE, .value_bytes = value_bytes, .redundancy = n,
		.slots = UINT64_C(1) << slots_log2, .answer_any = answer_any,
	};
	return open_store(&c);
}

static struct dta_store *kw_store(unsigned slots_log2, unsigned n, bool answer_any)
{
	return kw_store_v(slots_log2, n, answer_any, 4);
}

/* ---- what one timed step does: CHUNK operations from index i ---- */

struct ctx {
	struct dta_store *s;
	struct isp_dta_header *h;
	const uint32_t *keys;
	uint32_t mask;                  /* keys used: mask + 1, a power of 2 */
	unsigned n;                     /* Key-Write copies, floor slots */
	unsigned batch;                 /* Append */
	uint32_t list;
	uint64_t cursor;                /* poll */
	uint64_t hits;                  /* queries answered with the key's own value */
	uint64_t queries;
	unsigned epoch, reporter, column;       /* Sketch-Merge */
	const uint8_t *counters;
};

static uint64_t step_hash(struct ctx *c, uint64_t i)
{
	uint64_t acc = 0;

	for (uint32_t j = 0; j < CHUNK; j++) {
		uint32_t k = c->keys[(i + j) & c->mask];
		acc += isp_dta_murmur64a(&k, 4, c->h->seed);
	}
	sink += acc;
	return CHUNK;
}

/* the floor: hash, then read-modify-write the value of n slots */
static uint64_t step_touch(struct ctx *c, uint64_t i)
{
	const struct isp_dta_header *h = c->h;
	uint8_t *data = isp_dta_data(h);
	size_t sb = isp_dta_slot_bytes(h);

	for (uint32_t j = 0; j < CHUNK; j++) {
		uint32_t k = c->keys[(i + j) & c->mask];
		uint64_t hh = isp_dta_murmur64a(&k, 4, h->seed);
		for (unsigned r = 0; r < c->n; r++) {
			uint32_t *v = (uint32_t *)(void *)(data + isp_dta_index(hh, r, h->slots) * sb + 8);
			*v += k;
		}
	}
	return CHUNK;
}

static uint64_t step_kw_write(struct ctx *c, uint64_t i)
{
	for (uint32_t j = 0; j < CHUNK; j++) {
		uint32_t k = c->keys[(i + j) & c->mask], v = own_value(k);
		dta_kw_write(c->s, &k, 4, c->n, &v, 1);
	}
	return CHUNK;
}

/* Postcarder: key i's hop i mod 4 */
static uint64_t step_kw_postcard(struct ctx *c, uint64_t i)
{
	for (uint32_t j = 0; j < CHUNK; j++) {
		uint32_t k = c->keys[(i + j) & c->mask];
		dta_kw_postcard(c->s, &k, 4, (unsigned)(i + j) & 3, k);
	}
	return CHUNK;
}

static uint64_t step_kw_get(struct ctx *c, uint64_t i)
{
	uint64_t hits = 0;

	for (uint32_t j = 0; j < CHUNK; j++) {
		uint32_t k = c->keys[(i + j) & c->mask], v = 0;
		if (isp_dta_kw_get(c->h, &k, 4, &v))
			hits += v == own_value(k);
	}
	c->hits += hits;
	c->queries += CHUNK;
	return CHUNK;
}

/* the same keys, ISP_DTA_BATCH at a time (isp_dta_kw_get_many) */
static uint64_t step_kw_get_many(struct ctx *c, uint64_t i)
{
	uint32_t k[ISP_DTA_BATCH], v[ISP_DTA_BATCH];
	unsigned found[ISP_DTA_BATCH];
	uint64_t hits = 0;

	for (uint32_t j = 0; j < CHUNK; j += ISP_DTA_BATCH) {
		for (unsigned b = 0; b < ISP_DTA_BATCH; b++)
			k[b] = c->keys[(i + j + b) & c->mask];
		isp_dta_kw_get_many(c->h, k, 4, ISP_DTA_BATCH, v, found);
		for (unsigned b = 0; b < ISP_DTA_BATCH; b++)
			hits += found[b] && v[b] == own_value(k[b]);
	}
	c->hits += hits;
	c->queries += CHUNK;
	return CHUNK;
}

static uint64_t step_append(struct ctx *c, uint64_t i)
{
	uint32_t vals[16];

	for (unsigned b = 0; b < c->batch; b++)
		vals[b] = (uint32_t)i + b;
	for (uint32_t j = 0; j < CHUNK; j++) {
		vals[0] = (uint32_t)(i + j);
		dta_append(c->s, c->list, vals, c->batch);
		c->list = (c->list + 1) & (c->h->lists - 1);
	}
	return (uint64_t)CHUNK * c->batch;
}

static uint64_t step_poll(struct ctx *c, uint64_t i)
{
	uint32_t out[256];
	uint64_t n = 0, lost;

	(void)i;
	while (n < CHUNK) {
		unsigned got = isp_dta_poll(c->h, 0, &c->cursor, (uint8_t *)out, 256, &lost);
		if (!got)
			c->cursor = 0;  /* read the whole ring: again from the oldest */
		sink += out[0];
		n += got;
	}
	return n;
}

static uint64_t step_ki_add(struct ctx *c, uint64_t i)
{
	for (uint32_t j = 0; j < CHUNK; j++) {
		uint32_t k = c->keys[(i + j) & c->mask];
		dta_ki_add(c->s, &k, 4, 1);
	}
	return CHUNK;
}

static uint64_t step_ki_est(struct ctx *c, uint64_t i)
{
	uint64_t acc = 0;

	for (uint32_t j = 0; j < CHUNK; j++) {
		uint32_t k = c->keys[(i + j) & c->mask];
		acc += isp_dta_ki_estimate(c->h, &k, 4);
	}
	sink += acc;
	return CHUNK;
}

/* one report of 16 columns a call; reporters in turn, then the next epoch */
static uint64_t step_sm(struct ctx *c, uint64_t i)
{
	const struct isp_dta_header *h = c->h;
	const unsigned per = 16;
	uint64_t cols = 0;
	unsigned missing;

	(void)i;
	for (uint32_t j = 0; j < CHUNK / per; j++) {
		enum dta_sm_result r = dta_sm_merge(c->s, c->reporter, c->epoch & 0xffff, c->column,
						    per, h->rows, c->counters, &missing);
		if (r != DTA_SM_MERGED) {
			fprintf(stderr, "dta_bench: sketch-merge: unexpected result %d\n", (int)r);
			exit(1);
		}
		cols += per;
		if ((c->column += per) == h->columns) {
			c->column = 0;
			if (++c->reporter == h->reporters) {
				c->reporter = 0;
				c->epoch++;
			}
		}
	}
	return cols;
}

static uint64_t fixed_ops;      /* --ops: run each figure this many operations */

/* Operations per second of step: a tenth of the budget to warm up, then
 * the median of 5 slices of a fifth of the budget each (a slice another
 * process disturbed does not move it). With --ops, just the operations
 * (for callgrind: two counts, their difference). */
static double rate(uint64_t (*step)(struct ctx *, uint64_t), struct ctx *c)
{
	double r[5], t0 = now(), t;
	uint64_t i = 0;

	if (fixed_ops) {
		uint64_t ops = 0;
		while (ops < fixed_ops) {
			ops += step(c, i);
			i += CHUNK;
		}
		return (double)ops / (now() - t0);
	}
	do {
		step(c, i);
		i += CHUNK;
	} while (now() - t0 < budget / 10);
	for (unsigned k = 0; k < 5; k++) {
		uint64_t ops = 0;
		t0 = now();
		do {
			ops += step(c, i);
			i += CHUNK;
		} while ((t = now()) - t0 < budget / 5);
		r[k] = (double)ops / (t - t0);
	}
	for (unsigned a = 1; a < 5; a++)
		for (unsigned b = a; b > 0 && r[b - 1] > r[b]; b--) {
			double x = r[b];
			r[b] = r[b - 1];
			r[b - 1] = x;
		}
	return r[2];
}

static const char *only;        /* --only: the figures whose label has it */

static bool want(const char *label)
{
	return !only || strstr(label, only);
}

/* Measure and print one figure: "dta LABEL: X M/s  NOTE". */
static void fig(const char *label, uint64_t (*step)(struct ctx *, uint64_t), struct ctx *c,
		const char *note)
{
	double per_s = rate(step, c);

	printf("dta %s: %.2f M/s%s%s\n", label, per_s / 1e6, note ? "  " : "", note ? note : "");
	fflush(stdout);
}

static void rates(const uint32_t *keys)
{
	static const unsigned ns[] = { 1, 2, 4 };
	char label[160], note[96];
	struct ctx c = { .keys = keys, .mask = NKEYS - 1 };

	/* the floor, in a Key-Write store's own mapping (same pages, same TLB) */
	for (unsigned a = 0; a < 4; a++) {
		c.n = a ? ns[a - 1] : 0;
		if (a)
			snprintf(label, sizeof(label), "floor hash+touch N=%u slots=2^20", c.n);
		else
			snprintf(label, sizeof(label), "floor hash-only key=4B");
		if (!want(label))
			continue;
		c.s = kw_store(20, 1, true);
		c.h = dta_store_header(c.s);
		fig(label, a ? step_touch : step_hash, &c, a == 0 ? "(MurmurHash64A of the key, no memory)" :
		    a == 1 ? "(the floor)" : NULL);
		dta_store_close(c.s);
	}

	/* Key-Write inserts: the store's redundancy N, 2^20 keys in turn */
	for (unsigned sh = 0; sh < 2; sh++)
		for (unsigned a = 0; a < 3; a++) {
			c.n = ns[a];
			snprintf(label, sizeof(label), "keywrite-insert N=%u shared=%s value=4B slots=2^20",
				 c.n, sh ? "true" : "false");
			if (!want(label))
				continue;
			c.s = kw_store(20, c.n, true);
			c.h = dta_store_header(c.s);
			dta_store_set_shared(c.s, sh);
			fig(label, step_kw_write, &c, NULL);
			dta_store_close(c.s);
		}

	/* Postcarder reports into a Key-Write store of 4 words */
	for (unsigned sh = 0; sh < 2; sh++) {
		c.n = 2;
		snprintf(label, sizeof(label), "keywrite-postcard N=2 shared=%s value=16B hops=4 slots=2^20",
			 sh ? "true" : "false");
		if (!want(label))
			continue;
		c.s = kw_store_v(20, 2, true, 16);
		c.h = dta_store_header(c.s);
		dta_store_set_shared(c.s, sh);
		fig(label, step_kw_postcard, &c, NULL);
		dta_store_close(c.s);
	}

	/* Key-Write queries: W = M/2 keys written once, then queried in turn */
	for (unsigned a = 0; a < 3; a++) {
		struct ctx q = { .keys = keys, .mask = (NKEYS >> 1) - 1, .n = ns[a] };
		char many[160];
		snprintf(label, sizeof(label), "keywrite-query N=%u W/M=0.5 value=4B slots=2^20", q.n);
		snprintf(many, sizeof(many), "keywrite-query-many N=%u batch=%u W/M=0.5 value=4B "
			 "slots=2^20", q.n, ISP_DTA_BATCH);
		if (!want(label) && !want(many))
			continue;
		q.s = kw_store(20, q.n, true);
		q.h = dta_store_header(q.s);
		for (uint64_t i = 0; i <= q.mask; i += CHUNK)
			step_kw_write(&q, i);
		/* what a query answers, over one pass of the W keys (a timed run
		 * may cover only the oldest) */
		for (uint64_t i = 0; i <= q.mask; i += CHUNK)
			step_kw_get(&q, i);
		snprintf(note, sizeof(note), "(answer any: %.1f%% of the keys get their own value)",
			 100.0 * (double)q.hits / (double)q.queries);
		uint64_t pass_hits = q.hits;
		if (want(label))
			fig(label, step_kw_get, &q, note);
		if (want(many)) {
			q.hits = 0;
			for (uint64_t i = 0; i <= q.mask; i += CHUNK)
				step_kw_get_many(&q, i);
			/* the same answers as one key at a time */
			if (q.hits != pass_hits) {
				fprintf(stderr, "dta_bench: batched queries answered %llu, not %llu\n",
					(unsigned long long)q.hits, (unsigned long long)pass_hits);
				exit(1);
			}
			fig(many, step_kw_get_many, &q, note);
		}
		dta_store_close(q.s);
	}

	/* Append: 4 lists of 65536 entries, written in turn */
	for (unsigned sh = 0; sh < 2; sh++)
		for (unsigned b = 1; b <= 16; b += 15) {
			struct dta_store_cfg ac = { .kind = ISP_DTA_APPEND, .value_bytes = 4, .lists = 4,
						    .entries = 65536 };
			snprintf(label, sizeof(label), "append-entries batch=%u shared=%s value=4B lists=4",
				 b, sh ? "true" : "false");
			if (!want(label))
				continue;
			c.s = open_store(&ac);
			c.h = dta_store_header(c.s);
			dta_store_set_shared(c.s, sh);
			c.batch = b;
			c.list = 0;
			fig(label, step_append, &c, NULL);
			dta_store_close(c.s);
		}
	if (want("poll-entries max=256 value=4B entries=65536")) {
		struct dta_store_cfg ac = { .kind = ISP_DTA_APPEND, .value_bytes = 4, .lists = 1,
					    .entries = 65536 };
		uint32_t v[16];
		c.s = open_store(&ac);
		c.h = dta_store_header(c.s);
		for (uint32_t i = 0; i < 65536; i += 16) {
			for (unsigned b = 0; b < 16; b++)
				v[b] = i + b;
			dta_append(c.s, 0, v, 16);
		}
		c.cursor = 0;
		fig("poll-entries max=256 value=4B entries=65536", step_poll, &c,
		    "(a ring of 65536 written entries, read again and again)");
		dta_store_close(c.s);
	}

	/* Key-Increment: count-min 4 x 2^16 (2 MiB) */
	for (unsigned a = 0; a < 3; a++) {
		struct dta_store_cfg kc = { .kind = ISP_DTA_KEY_INCREMENT, .rows = 4, .columns = 65536 };
		if (a < 2)
			snprintf(label, sizeof(label), "keyincrement-update rows=4 columns=2^16 shared=%s",
				 a ? "true" : "false");
		else
			snprintf(label, sizeof(label), "keyincrement-estimate rows=4 columns=2^16");
		if (!want(label))
			continue;
		c.s = open_store(&kc);
		c.h = dta_store_header(c.s);
		dta_store_set_shared(c.s, a == 1);
		if (a == 2)     /* counts to estimate */
			for (uint64_t i = 0; i < NKEYS; i += CHUNK)
				step_ki_add(&c, i);
		fig(label, a < 2 ? step_ki_add : step_ki_est, &c, NULL);
		dta_store_close(c.s);
	}

	/* Sketch-Merge: count-min 4 x 1024, 4 reporters, 2 epoch slots */
	if (want("sketchmerge-columns count-min rows=4 columns=1024 per-report=16 reporters=4")) {
		struct dta_store_cfg sc = { .kind = ISP_DTA_SKETCH_MERGE, .rows = 4, .columns = 1024,
					    .sketch_kind = ISP_DTA_COUNT_MIN, .sketch_id = 1,
					    .reporters = 4, .epochs = 2 };
		uint8_t counters[16 * 4 * 4];
		for (unsigned i = 0; i < sizeof(counters); i++)
			counters[i] = (uint8_t)(i % 4 == 3 ? fmix32(i) : 0);  /* small counts */
		c.s = open_store(&sc);
		c.h = dta_store_header(c.s);
		c.counters = counters;
		c.epoch = c.reporter = c.column = 0;
		fig("sketchmerge-columns count-min rows=4 columns=1024 per-report=16 reporters=4",
		    step_sm, &c, "(a new epoch clears its slot: counted)");
		dta_store_close(c.s);
	}

	/* beyond the last-level cache: 2^24 slots (192 MiB) */
	for (unsigned a = 0; a < 2; a++) {
		const char *l = a ? "keywrite-insert N=2 shared=false value=4B slots=2^24" :
			"floor hash+touch N=2 slots=2^24";
		if (!want(l))
			continue;
		c.n = 2;
		c.s = kw_store(24, 2, true);
		c.h = dta_store_header(c.s);
		fig(l, a ? step_kw_write : step_touch, &c, a ? NULL : "(192 MiB: beyond the caches)");
		dta_store_close(c.s);
	}
}

/* ---- queryability against the load factor ---- */

/* DTA's model: a key after t more writes of N copies into M slots */
static double model(double t, unsigned n, double m)
{
	return 1 - pow(1 - exp(-t * n / m), n);
}

static void table(unsigned trials)
{
	static const double wm[] = { 0.1, 0.25, 0.5, 1, 2 };
	static const unsigned ns[] = { 1, 2, 4 };
	const unsigned mlog = 18, probes = 1024;
	const double m = (double)(1u << mlog);
	double after[5][3], after_model[5][3], all[5][3], all_model[5][3];

	for (unsigned a = 0; a < 3; a++) {
		unsigned n = ns[a];
		struct dta_store *s = kw_store(mlog, n, true);
		struct isp_dta_header *h = dta_store_header(s);
		for (unsigned w = 0; w < 5; w++) {
			uint64_t wr = (uint64_t)(wm[w] * m), p_ok = 0, a_ok = 0;
			for (unsigned t = 0; t < trials; t++) {
				/* keys: fmix32 of distinct numbers, a fresh range per trial */
				uint32_t base = (t * 5 + w) * 0x01000000u;
				dta_store_clear(s);
				for (uint64_t i = 0; i < probes + wr; i++) {
					uint32_t k = fmix32(base + (uint32_t)i), v = own_value(k);
					dta_kw_write(s, &k, 4, n, &v, 1);
				}
				for (uint64_t i = 0; i < probes + wr; i++) {
					uint32_t k = fmix32(base + (uint32_t)i), v = 0;
					bool ok = isp_dta_kw_get(h, &k, 4, &v) && v == own_value(k);
					if (i < probes)
						p_ok += ok;
					else
						a_ok += ok;
				}
			}
			after[w][a] = (double)p_ok / ((double)probes * trials);
			all[w][a] = (double)a_ok / ((double)wr * trials);
			/* the models at the keys' exact ages (writes after each) */
			double sp = 0, sa = 0;
			for (uint64_t i = 0; i < probes; i++)
				sp += model((double)(wr + probes - 1 - i), n, m);
			for (uint64_t i = 0; i < wr; i++)
				sa += model((double)(wr - 1 - i), n, m);
			after_model[w][a] = sp / probes;
			all_model[w][a] = sa / (double)wr;
		}
		dta_store_close(s);
	}
	printf("# Key-Write queryability, answer any, M = 2^%u slots, 4-byte values, %u trial%s:\n"
	       "# the fraction of keys a query answers with their own value, beside DTA's model\n"
	       "# P = 1 - (1 - e^(-WN/M))^N.\n"
	       "# after-W: %u keys followed by W writes of other keys (the model's case);\n"
	       "# all-W: every one of the W keys written (ages 0..W-1, the model averaged)\n",
	       mlog, trials, trials > 1 ? "s" : "", probes);
	for (unsigned k = 0; k < 2; k++)
		for (unsigned w = 0; w < 5; w++) {
			printf("dta queryability %s W/M=%-4g:", k ? "all-W  " : "after-W", wm[w]);
			for (unsigned a = 0; a < 3; a++)
				printf("  N=%u %.4f (model %.4f)", ns[a], k ? all[w][a] : after[w][a],
				       k ? all_model[w][a] : after_model[w][a]);
			printf("\n");
		}
}

static void usage(void)
{
	fprintf(stderr, "usage: dta_bench [--rates] [--table] [--quick] [-t SECONDS] [--dir DIR]\n"
			"                 [--only TEXT] [--ops N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	bool do_rates = false, do_table = false, quick = false, secs = false;
	const char *dir = NULL;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--rates") == 0)
			do_rates = true;
		else if (strcmp(argv[i], "--table") == 0)
			do_table = true;
		else if (strcmp(argv[i], "--quick") == 0)
			quick = true;
		else if (strcmp(argv[i], "-t") == 0 && i + 1 < argc)
			budget = atof(argv[++i]), secs = true;
		else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
			dir = argv[++i];
		else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
			only = argv[++i];
		else if (strcmp(argv[i], "--ops") == 0 && i + 1 < argc)
			fixed_ops = strtoull(argv[++i], NULL, 0);
		else
			usage();
	}
	if (!(budget > 0))
		usage();
	if (quick && !secs)
		budget = 0.02;
	if (!do_rates && !do_table)
		do_rates = true;
	if (!dir)
		dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" :
		      getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	snprintf(path, sizeof(path), "%s/dta_bench.%ld.dta", dir, (long)getpid());
	atexit(cleanup);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);

	if (do_rates) {
		uint32_t *keys = malloc(NKEYS * sizeof(*keys));
		if (!keys) {
			fprintf(stderr, "dta_bench: out of memory\n");
			return 1;
		}
		for (uint32_t i = 0; i < NKEYS; i++)
			keys[i] = fmix32(i ^ 0x5eed0000u);
		printf("# dta_bench: millions of operations per second of one thread's CPU time; stores in %s\n",
		       dir);
		rates(keys);
		free(keys);
	}
	if (do_table)
		table(quick ? 1 : 8);
	return 0;
}
