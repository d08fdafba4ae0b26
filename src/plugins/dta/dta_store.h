/*
 * dta_store.h - the memory layout of intspect's DTA stores, and the
 * functions that read them (src/plugins/dta/README.md, "Stores").
 *
 * Self-contained (C11, no intspect header, no library): an application
 * includes it, maps a store file read-only (mmap), checks it with
 * isp_dta_invalid and queries it
 * while intspect writes. Every read is lock-free: a Key-Write slot carries
 * a version a reader checks before and after (odd: being written), an
 * Append entry its position, stored after its value.
 */
#ifndef ISP_DTA_STORE_H
#define ISP_DTA_STORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define ISP_DTA_MAGIC   UINT64_C(0x3130415444505349)   /* "ISPDTA01" read little-endian */
#define ISP_DTA_LAYOUT  2u
#define ISP_DTA_HEADER_BYTES 4096u
#define ISP_DTA_MAX_WORDS 32u          /* value words (value_bytes / 4) */
#define ISP_DTA_MAX_N   8u             /* Key-Write copies, count-min rows */
#define ISP_DTA_CHECK_SEED UINT64_C(0xc2b2ae3d27d4eb4f)
#define ISP_DTA_SIGN_SEED  UINT64_C(0x5bd1e995)

/* The seqlocks' fences. ThreadSanitizer does not model fences (GCC
 * refuses them under -fsanitize=thread): there a compiler barrier stands
 * in, which is what an acquire or release fence compiles to on x86 anyway.
 * The stores are never checked under ThreadSanitizer; this only lets a
 * sanitized intspect build. */
#if defined(__SANITIZE_THREAD__)
#define ISP_DTA_FENCE(order) atomic_signal_fence(order)
#else
#define ISP_DTA_FENCE(order) atomic_thread_fence(order)
#endif

enum isp_dta_kind {
	ISP_DTA_KEY_WRITE = 1, ISP_DTA_APPEND = 2, ISP_DTA_KEY_INCREMENT = 3,
	ISP_DTA_SKETCH_MERGE = 5,
};

enum isp_dta_sketch { ISP_DTA_COUNT_MIN = 1, ISP_DTA_COUNT_SKETCH = 2, ISP_DTA_HLL = 3 };

/* At offset 0 of the file; the data starts at data_off. */
struct isp_dta_header {
	uint64_t magic;
	uint32_t layout;                /* ISP_DTA_LAYOUT */
	uint32_t kind;                  /* enum isp_dta_kind */
	_Atomic uint32_t ready;         /* 1 once the writer initialised it */
	uint32_t answer_any;            /* Key-Write: 1 any valid copy, 0 a majority */
	uint64_t file_bytes, data_off;
	uint64_t seed;
	char name[64];
	/* shape (what the kind uses; the others 0) */
	uint32_t value_bytes;           /* Key-Write, Append: 4 × words */
	uint32_t redundancy;            /* Key-Write: copies N */
	uint64_t slots;                 /* Key-Write: a power of 2 */
	uint32_t lists;                 /* Append */
	uint32_t entries;               /* Append: per list, a power of 2 */
	uint32_t rows;                  /* Key-Increment, Sketch-Merge */
	uint32_t columns;               /* ditto: a power of 2 */
	uint32_t sketch_kind;           /* Sketch-Merge: enum isp_dta_sketch */
	uint32_t sketch_id;
	uint32_t reporters, epochs;
	uint64_t epoch_bytes;           /* Sketch-Merge: one epoch slot */
	/* the writer's counters (relaxed atomics) */
	_Atomic uint64_t writes;        /* values written, appended, counted, merged */
	_Atomic uint64_t rejected;      /* reports that do not fit the store's shape */
	_Atomic uint64_t duplicates;    /* Sketch-Merge columns that came again */
	_Atomic uint64_t stale;         /* Sketch-Merge reports of an epoch gone */
};

/* ---- hashing: MurmurHash64A (Austin Appleby, public domain) ---- */

static inline uint64_t isp_dta_murmur64a(const void *key, size_t len, uint64_t seed)
{
	const uint64_t m = UINT64_C(0xc6a4a7935bd1e995);
	const unsigned r = 47;
	const uint8_t *p = (const uint8_t *)key;
	uint64_t h = seed ^ (len * m);

	for (; len >= 8; len -= 8, p += 8) {
		/* little-endian on every host, written out so that compilers
		 * make it one load on little-endian ones */
		uint64_t k = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
			     (uint64_t)p[3] << 24 | (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 |
			     (uint64_t)p[6] << 48 | (uint64_t)p[7] << 56;
		k *= m;
		k ^= k >> r;
		k *= m;
		h ^= k;
		h *= m;
	}
	if (len) {
		uint64_t t = 0;
		if (len >= 4) {         /* a DTA key: 4 bytes, one load on most hosts */
			t = (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 |
			    (uint64_t)p[3] << 24;
			for (unsigned i = 4; i < len; i++)
				t |= (uint64_t)p[i] << (8 * i);
		} else {
			for (unsigned i = 0; i < len; i++)
				t |= (uint64_t)p[i] << (8 * i);
		}
		h ^= t;
		h *= m;
	}
	h ^= h >> r;
	h *= m;
	h ^= h >> r;
	return h;
}

/* Index of copy or row i: Kirsch-Mitzenmacher double hashing. */
static inline uint64_t isp_dta_index(uint64_t h, unsigned i, uint64_t size)
{
	return ((h & 0xffffffffu) + (uint64_t)i * ((h >> 32) | 1)) & (size - 1);
}

/* A Key-Write slot's checksum, from the key's hash h: murmur3's fmix64
 * of h ^ ISP_DTA_CHECK_SEED, its high 32 bits (never 0). fmix64 is a
 * bijection in which every output bit depends on every input bit, so two
 * keys that share slots (their hashes agree on the index bits only) have
 * equal checksums with probability 2^-32; the public DTA code takes both
 * from one CRC, which leaves a few bits. One hash pass serves both. */
static inline uint32_t isp_dta_check(uint64_t h)
{
	h ^= ISP_DTA_CHECK_SEED;
	h ^= h >> 33;
	h *= UINT64_C(0xff51afd7ed558ccd);
	h ^= h >> 33;
	h *= UINT64_C(0xc4ceb9fe1a85ec53);
	h ^= h >> 33;
	uint32_t c = (uint32_t)(h >> 32);
	return c ? c : 1;
}

/* Sharding across collectors: CRC-32 (IEEE 802.3, zlib's) of the key,
 * modulo the number of collectors, as DTA's reporters choose theirs. */
static inline uint32_t isp_dta_crc32(const void *key, size_t len)
{
	const uint8_t *p = (const uint8_t *)key;
	uint32_t c = 0xffffffffu;

	while (len--) {
		c ^= *p++;
		for (unsigned k = 0; k < 8; k++)
			c = c >> 1 ^ (0xedb88320u & (0u - (c & 1)));
	}
	return ~c;
}

static inline unsigned isp_dta_shard(const void *key, size_t len, unsigned collectors)
{
	return collectors ? isp_dta_crc32(key, len) % collectors : 0;
}

/* ---- the layout of each kind ---- */

struct isp_dta_list_head {              /* Append: one 64-byte line per list */
	_Atomic uint64_t head;
	uint64_t pad[7];
};

static inline size_t isp_dta_slot_bytes(const struct isp_dta_header *h)
{
	return 8 + h->value_bytes;
}

static inline uint8_t *isp_dta_data(const struct isp_dta_header *h)
{
	return (uint8_t *)h + h->data_off;
}

/* Append: list heads first, then each list's ring of entries. */
static inline struct isp_dta_list_head *isp_dta_heads(const struct isp_dta_header *h)
{
	return (struct isp_dta_list_head *)isp_dta_data(h);
}

static inline uint8_t *isp_dta_entry(const struct isp_dta_header *h, uint32_t list, uint64_t pos)
{
	size_t eb = 8 + h->value_bytes;
	return isp_dta_data(h) + (size_t)h->lists * sizeof(struct isp_dta_list_head) +
	       ((size_t)list * h->entries + (pos & (h->entries - 1))) * eb;
}

/* Sketch-Merge epoch slot: epoch u32, complete u32, next u16 × reporters
 * (rounded to 8 bytes), received bits (reporters × columns, in u64
 * words), counters i64 × rows × columns. */
struct isp_dta_epoch {
	_Atomic uint32_t epoch;         /* epoch + 1; 0 empty */
	_Atomic uint32_t complete;
};

static inline size_t isp_dta_next_off(void) { return sizeof(struct isp_dta_epoch); }
static inline size_t isp_dta_bits_off(const struct isp_dta_header *h)
{
	return isp_dta_next_off() + ((size_t)h->reporters * 2 + 7) / 8 * 8;
}
static inline size_t isp_dta_counters_off(const struct isp_dta_header *h)
{
	return isp_dta_bits_off(h) + ((size_t)h->reporters * h->columns + 63) / 64 * 8;
}
static inline struct isp_dta_epoch *isp_dta_epoch_slot(const struct isp_dta_header *h, unsigned i)
{
	return (struct isp_dta_epoch *)(isp_dta_data(h) + (size_t)i * h->epoch_bytes);
}
static inline _Atomic int64_t *isp_dta_epoch_counters(const struct isp_dta_header *h,
						      struct isp_dta_epoch *e)
{
	return (_Atomic int64_t *)((uint8_t *)e + isp_dta_counters_off(h));
}

/* Whether a mapped file is a store this header can read: 0, or a reason. */
static inline const char *isp_dta_invalid(const void *map, size_t bytes)
{
	const struct isp_dta_header *h = (const struct isp_dta_header *)map;

	if (bytes < ISP_DTA_HEADER_BYTES || h->magic != ISP_DTA_MAGIC)
		return "not an intspect DTA store";
	if (h->layout != ISP_DTA_LAYOUT)
		return "a store layout this reader does not know";
	if (!atomic_load_explicit(&h->ready, memory_order_acquire))
		return "the store is being created";
	if (h->file_bytes > bytes || h->data_off != ISP_DTA_HEADER_BYTES)
		return "the store file is shorter than its header says";
	return NULL;
}

/* ---- queries ---- */

#if defined(__GNUC__)
#define ISP_DTA_PREFETCH(p) __builtin_prefetch((p), 0, 3)
#else
#define ISP_DTA_PREFETCH(p) ((void)(p))
#endif

/* n 32-bit words: a value is a few words, copied inline for the common
 * sizes rather than by a call of a variable size */
static inline void isp_dta_copy_words(void *to, const void *from, unsigned n)
{
	switch (n) {            /* sizes the compiler copies inline */
	case 1: memcpy(to, from, 4); break;
	case 2: memcpy(to, from, 8); break;
	case 4: memcpy(to, from, 16); break;
	default: memcpy(to, from, (size_t)n * 4);
	}
}

static inline bool isp_dta_equal_words(const void *a, const void *b, unsigned n)
{
	switch (n) {
	case 1: return !memcmp(a, b, 4);
	case 2: return !memcmp(a, b, 8);
	case 4: return !memcmp(a, b, 16);
	default: return !memcmp(a, b, (size_t)n * 4);
	}
}

static inline uint8_t *isp_dta_kw_slot(const struct isp_dta_header *h, uint64_t hh, unsigned i)
{
	return isp_dta_data(h) + isp_dta_index(hh, i, h->slots) * isp_dta_slot_bytes(h);
}

/* Ask for the N slots of a key's hash at once, so that their cache
 * misses overlap instead of following each other. */
static inline void isp_dta_kw_prefetch(const struct isp_dta_header *h, uint64_t hh)
{
	for (unsigned i = 0; i < h->redundancy && i < ISP_DTA_MAX_N; i++)
		ISP_DTA_PREFETCH(isp_dta_kw_slot(h, hh, i));
}

/* The answer from the slots of hash hh for checksum check (see
 * isp_dta_kw_get). */
static inline unsigned isp_dta_kw_read(const struct isp_dta_header *h, uint64_t hh,
				       uint32_t check, uint32_t *value)
{
	uint32_t vals[ISP_DTA_MAX_N][ISP_DTA_MAX_WORDS];
	unsigned nvalid = 0, n = h->redundancy, best = 0, best_i = 0;
	unsigned words = h->value_bytes / 4 <= ISP_DTA_MAX_WORDS ? h->value_bytes / 4 : ISP_DTA_MAX_WORDS;

	for (unsigned i = 0; i < n && i < ISP_DTA_MAX_N; i++) {
		uint8_t *s = isp_dta_kw_slot(h, hh, i);
		_Atomic uint32_t *ver = (_Atomic uint32_t *)s;
		for (unsigned tries = 0; tries < 64; tries++) {
			uint32_t v0 = atomic_load_explicit(ver, memory_order_acquire);
			if (v0 == 0)
				break;                  /* never written */
			if (v0 & 1)
				continue;               /* being written: again */
			uint32_t c;
			memcpy(&c, s + 4, 4);
			isp_dta_copy_words(vals[nvalid], s + 8, words);
			ISP_DTA_FENCE(memory_order_acquire);
			if (atomic_load_explicit(ver, memory_order_relaxed) != v0)
				continue;
			if (c == check)
				nvalid++;
			break;
		}
	}
	if (nvalid == 1) {                      /* the common answer: no vote */
		best = 1;
	} else {
		for (unsigned i = 0; i < nvalid; i++) {
			unsigned agree = 0;
			for (unsigned j = 0; j < nvalid; j++)
				agree += isp_dta_equal_words(vals[i], vals[j], words);
			if (agree > best)
				best = agree, best_i = i;
		}
	}
	if (!best || (!h->answer_any && 2 * best <= n))
		return 0;
	isp_dta_copy_words(value, vals[best_i], words);
	return best;
}

/*
 * Key-Write: the value of key (len bytes) into value (value_bytes).
 * Returns the copies that agree on it (>= 1), 0 when the store has no
 * answer (answer = majority: fewer than a majority of the N agree).
 */
static inline unsigned isp_dta_kw_get(const struct isp_dta_header *h, const void *key,
				      size_t len, uint32_t *value)
{
	uint64_t hh = isp_dta_murmur64a(key, len, h->seed);

	isp_dta_kw_prefetch(h, hh);
	return isp_dta_kw_read(h, hh, isp_dta_check(hh), value);
}

/*
 * Key-Write, many keys: n keys of len bytes each, one after the other;
 * key i's value into values + i × value_bytes, its answer (what
 * isp_dta_kw_get returns) into found[i]. The slots of ISP_DTA_BATCH keys
 * are asked for before the first is read, so a query waits for memory
 * about once per batch rather than once per key.
 */
#define ISP_DTA_BATCH 16u
static inline void isp_dta_kw_get_many(const struct isp_dta_header *h, const void *keys,
				       size_t len, unsigned n, uint32_t *values, unsigned *found)
{
	const uint8_t *k = (const uint8_t *)keys;
	uint8_t *out = (uint8_t *)values;
	uint64_t hh[ISP_DTA_BATCH];

	for (unsigned at = 0; at < n; at += ISP_DTA_BATCH) {
		unsigned m = n - at < ISP_DTA_BATCH ? n - at : ISP_DTA_BATCH;
		for (unsigned i = 0; i < m; i++) {
			hh[i] = isp_dta_murmur64a(k + (size_t)(at + i) * len, len, h->seed);
			isp_dta_kw_prefetch(h, hh[i]);
		}
		for (unsigned i = 0; i < m; i++)
			found[at + i] = isp_dta_kw_read(h, hh[i], isp_dta_check(hh[i]),
							(uint32_t *)(void *)(out + (size_t)(at + i) *
									     h->value_bytes));
	}
}

/*
 * Append: up to max entries of a list from *cursor (a position; 0 = the
 * oldest kept), values into out (max × value_bytes). *cursor moves past
 * what was read; *lost counts entries overwritten before they were read.
 * Returns the entries read.
 */
static inline unsigned isp_dta_poll(const struct isp_dta_header *h, uint32_t list,
				    uint64_t *cursor, uint8_t *out, unsigned max, uint64_t *lost)
{
	uint64_t head = atomic_load_explicit(&isp_dta_heads(h)[list].head, memory_order_acquire);
	uint64_t c = *cursor;
	unsigned n = 0;

	*lost = 0;
	if (head > h->entries && c < head - h->entries) {
		*lost = head - h->entries - c;
		c = head - h->entries;
	}
	for (; c < head && n < max; c++) {
		uint8_t *e = isp_dta_entry(h, list, c);
		_Atomic uint64_t *seq = (_Atomic uint64_t *)e;
		uint64_t s0 = atomic_load_explicit(seq, memory_order_acquire);
		if (s0 < c + 1)
			break;                  /* reserved, not yet written */
		memcpy(out + (size_t)n * h->value_bytes, e + 8, h->value_bytes);
		ISP_DTA_FENCE(memory_order_acquire);
		if (s0 != c + 1 || atomic_load_explicit(seq, memory_order_relaxed) != c + 1) {
			(*lost)++;              /* lapped under the reader */
			continue;
		}
		n++;
	}
	*cursor = c;
	return n;
}

/* Key-Increment: the count-min estimate of key. */
static inline uint64_t isp_dta_ki_estimate(const struct isp_dta_header *h, const void *key,
					   size_t len)
{
	uint64_t hh = isp_dta_murmur64a(key, len, h->seed), best = UINT64_MAX;
	const _Atomic uint64_t *cnt = (const _Atomic uint64_t *)isp_dta_data(h);

	for (unsigned i = 0; i < h->rows; i++) {
		uint64_t v = atomic_load_explicit(&cnt[(size_t)i * h->columns +
						       isp_dta_index(hh, i, h->columns)],
						  memory_order_relaxed);
		if (v < best)
			best = v;
	}
	return h->rows ? best : 0;
}

/* Sketch-Merge: the slot holding epoch (or, epoch < 0, the newest), or NULL. */
static inline struct isp_dta_epoch *isp_dta_find_epoch(const struct isp_dta_header *h,
						       int64_t epoch)
{
	struct isp_dta_epoch *best = NULL;
	uint32_t best_e = 0;

	for (unsigned i = 0; i < h->epochs; i++) {
		struct isp_dta_epoch *e = isp_dta_epoch_slot(h, i);
		uint32_t v = atomic_load_explicit(&e->epoch, memory_order_acquire);
		if (!v)
			continue;
		if (epoch >= 0 && v == (uint32_t)epoch + 1)
			return e;
		/* newest by 16-bit serial arithmetic */
		if (epoch < 0 && (!best || (int16_t)(uint16_t)(v - best_e) > 0))
			best = e, best_e = v;
	}
	return best;
}

/* Sketch-Merge, count-min or count sketch: the frequency estimate of a
 * 4-byte key (big-endian, as the switches hash it). */
static inline int64_t isp_dta_sm_estimate(const struct isp_dta_header *h,
					  const struct isp_dta_epoch *e, const uint8_t key[4])
{
	const _Atomic int64_t *c = isp_dta_epoch_counters(h, (struct isp_dta_epoch *)e);
	uint64_t hh = isp_dta_murmur64a(key, 4, h->seed);
	uint64_t sign = isp_dta_murmur64a(key, 4, h->seed ^ ISP_DTA_SIGN_SEED);
	int64_t v[64] = { 0 };
	unsigned n = h->rows < 64 ? h->rows : 64;

	for (unsigned i = 0; i < n; i++) {
		int64_t x = atomic_load_explicit(&c[(size_t)i * h->columns +
						     isp_dta_index(hh, i, h->columns)],
						 memory_order_relaxed);
		v[i] = h->sketch_kind == ISP_DTA_COUNT_SKETCH && (sign >> i & 1) ? -x : x;
	}
	if (!n)
		return 0;
	if (h->sketch_kind != ISP_DTA_COUNT_SKETCH) {
		int64_t m = v[0];
		for (unsigned i = 1; i < n; i++)
			m = v[i] < m ? v[i] : m;
		return m;
	}
	for (unsigned i = 1; i < n; i++)        /* median: insertion sort */
		for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
			int64_t t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return n & 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Sketch-Merge, HyperLogLog: the cardinality estimate (Flajolet et al.,
 * with linear counting below 5/2 m). */
static inline double isp_dta_sm_cardinality(const struct isp_dta_header *h,
					    const struct isp_dta_epoch *e)
{
	const _Atomic int64_t *c = isp_dta_epoch_counters(h, (struct isp_dta_epoch *)e);
	double m = h->columns, sum = 0, alpha;
	unsigned zeros = 0;

	for (uint32_t j = 0; j < h->columns; j++) {
		int64_t r = atomic_load_explicit(&c[j], memory_order_relaxed);
		r = r < 0 ? 0 : r > 64 ? 64 : r;
		zeros += r == 0;
		/* 2^r in two halves: r may be 64 */
		sum += 1.0 / ((double)(UINT64_C(1) << r / 2) * (double)(UINT64_C(1) << (r - r / 2)));
	}
	alpha = m <= 16 ? 0.673 : m <= 32 ? 0.697 : m <= 64 ? 0.709 : 0.7213 / (1 + 1.079 / m);
	double est = alpha * m * m / sum;
	if (est <= 2.5 * m && zeros) {
		double ratio = m / zeros, ln = 0;
		/* ln(ratio) without libm: halve to [1, 2), then
		 * ln x = 2 atanh((x-1)/(x+1)), whose series converges fast there */
		for (; ratio >= 2; ratio /= 2)
			ln += 0.69314718055994531;
		double y = (ratio - 1) / (ratio + 1), y2 = y * y, term = y, at = 0;
		for (unsigned k = 1; k < 40; k += 2, term *= y2)
			at += term / k;
		est = m * (ln + 2 * at);
	}
	return est;
}

#endif
