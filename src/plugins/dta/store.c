/*
 * store.c - see store.h; the layout is dta_store.h's.
 */
#include "store.h"
#include "../../core/cursor.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

struct dta_store {
	struct isp_dta_header *h;
	uint64_t bytes;
	bool shared;
	/* Sketch-Merge: one merge at a time (a new epoch clears a slot), and
	 * the column each reporter was last NACKed for, per epoch slot */
	pthread_mutex_t mu;
	uint16_t *nacked;
};

static uint64_t epoch_bytes(const struct dta_store_cfg *c)
{
	uint64_t b = sizeof(struct isp_dta_epoch) + ((uint64_t)c->reporters * 2 + 7) / 8 * 8 +
		     ((uint64_t)c->reporters * c->columns + 63) / 64 * 8 +
		     (uint64_t)c->rows * c->columns * 8;
	return (b + 63) / 64 * 64;
}

uint64_t dta_store_bytes(const struct dta_store_cfg *c)
{
	uint64_t data = 0;

	switch (c->kind) {
	case ISP_DTA_KEY_WRITE:
		data = c->slots * (8 + c->value_bytes);
		break;
	case ISP_DTA_APPEND:
		data = (uint64_t)c->lists * (sizeof(struct isp_dta_list_head) +
					     (uint64_t)c->entries * (8 + c->value_bytes));
		break;
	case ISP_DTA_KEY_INCREMENT:
		data = (uint64_t)c->rows * c->columns * 8;
		break;
	case ISP_DTA_SKETCH_MERGE:
		data = c->epochs * epoch_bytes(c);
		break;
	}
	return ISP_DTA_HEADER_BYTES + data;
}

static void fill_header(struct isp_dta_header *h, const struct dta_store_cfg *c, uint64_t bytes)
{
	h->magic = ISP_DTA_MAGIC;
	h->layout = ISP_DTA_LAYOUT;
	h->kind = c->kind;
	h->answer_any = c->answer_any;
	h->file_bytes = bytes;
	h->data_off = ISP_DTA_HEADER_BYTES;
	h->seed = c->seed;
	snprintf(h->name, sizeof(h->name), "%s", c->name ? c->name : "");
	h->value_bytes = c->value_bytes;
	h->redundancy = c->redundancy;
	h->slots = c->slots;
	h->lists = c->lists;
	h->entries = c->entries;
	h->rows = c->rows;
	h->columns = c->columns;
	h->sketch_kind = c->sketch_kind;
	h->sketch_id = c->sketch_id;
	h->reporters = c->reporters;
	h->epochs = c->epochs;
	h->epoch_bytes = c->kind == ISP_DTA_SKETCH_MERGE ? epoch_bytes(c) : 0;
}

/* persist: the file at path when it is a ready store of the same shape. */
static void *reopen(const struct dta_store_cfg *c, uint64_t bytes)
{
	struct isp_dta_header want;
	int fd = open(c->path, O_RDWR | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_size != bytes) {
		close(fd);
		return NULL;
	}
	void *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return NULL;
	memset(&want, 0, sizeof(want));
	fill_header(&want, c, bytes);
	struct isp_dta_header *h = m;
	/* the shape: every field from magic to epoch_bytes but ready */
	if (isp_dta_invalid(m, bytes) || h->kind != want.kind || h->seed != want.seed ||
	    memcmp(&h->value_bytes, &want.value_bytes,
		   offsetof(struct isp_dta_header, writes) -
		   offsetof(struct isp_dta_header, value_bytes)) != 0) {
		munmap(m, bytes);
		return NULL;
	}
	/* how it is read is not its shape: this config's holds */
	h->answer_any = want.answer_any;
	memcpy(h->name, want.name, sizeof(h->name));
	return m;
}

struct dta_store *dta_store_open(const struct dta_store_cfg *c, char *err, size_t errlen)
{
	uint64_t bytes = dta_store_bytes(c);
	struct dta_store *s = calloc(1, sizeof(*s));
	char tmp[4200];
	void *m = NULL;

	if (!s || snprintf(tmp, sizeof(tmp), "%s.%ld.new", c->path, (long)getpid()) >=
		  (int)sizeof(tmp)) {
		free(s);
		snprintf(err, errlen, "dta-store %s: out of memory, or path too long", c->name);
		return NULL;
	}
	if (c->persist)
		m = reopen(c, bytes);
	if (!m) {
		/* a new file under a temporary name, renamed once ready */
		int fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0 ||
		    (m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
			snprintf(err, errlen, "dta-store %s: %s: %s", c->name, c->path, strerror(errno));
			if (fd >= 0) {
				close(fd);
				unlink(tmp);
			}
			free(s);
			return NULL;
		}
		close(fd);
		fill_header(m, c, bytes);
		atomic_store_explicit(&((struct isp_dta_header *)m)->ready, 1, memory_order_release);
		if (rename(tmp, c->path) != 0) {
			snprintf(err, errlen, "dta-store %s: %s: %s", c->name, c->path, strerror(errno));
			unlink(tmp);
			munmap(m, bytes);
			free(s);
			return NULL;
		}
	}
	s->h = m;
	s->bytes = bytes;
	pthread_mutex_init(&s->mu, NULL);
	if (c->kind == ISP_DTA_SKETCH_MERGE &&
	    !(s->nacked = calloc((size_t)c->reporters * c->epochs, sizeof(*s->nacked)))) {
		dta_store_close(s);
		snprintf(err, errlen, "dta-store %s: out of memory", c->name);
		return NULL;
	}
	return s;
}

void dta_store_close(struct dta_store *s)
{
	if (!s)
		return;
	munmap(s->h, s->bytes);
	pthread_mutex_destroy(&s->mu);
	free(s->nacked);
	free(s);
}

struct isp_dta_header *dta_store_header(struct dta_store *s)
{
	return s->h;
}

void dta_store_set_shared(struct dta_store *s, bool shared)
{
	s->shared = shared;
}

void dta_store_clear(struct dta_store *s)
{
	pthread_mutex_lock(&s->mu);
	memset(isp_dta_data(s->h), 0, s->bytes - s->h->data_off);
	if (s->nacked)
		memset(s->nacked, 0, (size_t)s->h->reporters * s->h->epochs * sizeof(*s->nacked));
	pthread_mutex_unlock(&s->mu);
}

/* A counter of the header: an atomic add only when several threads write
 * (a locked add on every write costs more than the write of a value). */
static inline void tally(const struct dta_store *s, _Atomic uint64_t *c, uint64_t n)
{
	if (s->shared)
		atomic_fetch_add_explicit(c, n, memory_order_relaxed);
	else
		atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + n,
				      memory_order_relaxed);
}

void dta_store_reject(struct dta_store *s)
{
	tally(s, &s->h->rejected, 1);
}

/* ---- Key-Write ---- */

/* A slot's version is its writer's lock: odd while written. */
static inline uint32_t slot_lock(struct dta_store *s, _Atomic uint32_t *ver)
{
	uint32_t v = atomic_load_explicit(ver, memory_order_relaxed);

	if (!s->shared) {
		atomic_store_explicit(ver, v + 1, memory_order_relaxed);
		ISP_DTA_FENCE(memory_order_release);
		return v;
	}
	for (;;) {
		if (!(v & 1) && atomic_compare_exchange_weak_explicit(ver, &v, v + 1,
								      memory_order_acquire,
								      memory_order_relaxed))
			return v;
		v = atomic_load_explicit(ver, memory_order_relaxed);
	}
}

/* 0 is "never written" to readers: the version wraps past it (after 2^31
 * writes of one slot) to 2 */
static inline void slot_unlock(_Atomic uint32_t *ver, uint32_t v)
{
	uint32_t next = v + 2;

	atomic_store_explicit(ver, next ? next : 2, memory_order_release);
}

void dta_kw_write(struct dta_store *s, const void *key, size_t len, unsigned copies,
		  const uint32_t *words, unsigned nwords)
{
	struct isp_dta_header *h = s->h;
	uint64_t hh = isp_dta_murmur64a(key, len, h->seed);
	uint32_t check = isp_dta_check(hh);
	size_t sb = isp_dta_slot_bytes(h), vb = h->value_bytes;
	size_t nb = (size_t)nwords * 4 < vb ? (size_t)nwords * 4 : vb;

	if (copies > h->redundancy)
		copies = h->redundancy;
	for (unsigned i = 1; i < copies; i++)  /* their misses overlap */
		ISP_DTA_PREFETCH(isp_dta_kw_slot(h, hh, i));
	for (unsigned i = 0; i < copies; i++) {
		uint8_t *slot = isp_dta_data(h) + isp_dta_index(hh, i, h->slots) * sb;
		_Atomic uint32_t *ver = (_Atomic uint32_t *)slot;
		uint32_t v = slot_lock(s, ver);
		memcpy(slot + 4, &check, 4);
		isp_dta_copy_words(slot + 8, words, (unsigned)(nb / 4));
		for (size_t b = nb; b < vb; b += 4)
			memset(slot + 8 + b, 0, 4);
		slot_unlock(ver, v);
	}
	tally(s, &h->writes, 1);
}

bool dta_kw_postcard(struct dta_store *s, const void *key, size_t len, unsigned hop,
		     uint32_t word)
{
	struct isp_dta_header *h = s->h;

	if ((size_t)hop * 4 >= h->value_bytes) {
		tally(s, &h->rejected, 1);
		return false;
	}
	uint64_t hh = isp_dta_murmur64a(key, len, h->seed), idx[ISP_DTA_MAX_N];
	uint32_t check = isp_dta_check(hh), had, ver[ISP_DTA_MAX_N];
	uint8_t value[4 * ISP_DTA_MAX_WORDS];
	size_t sb = isp_dta_slot_bytes(h);
	unsigned n = 0, words = h->value_bytes / 4;
	bool base = false;

	/* every copy's slot, in index order (two writers lock in the same
	 * order), each once */
	for (unsigned i = 0; i < h->redundancy; i++) {
		uint64_t x = isp_dta_index(hh, i, h->slots);
		unsigned at = n;
		while (at > 0 && idx[at - 1] > x)
			at--;
		if (at > 0 && idx[at - 1] == x)
			continue;
		ISP_DTA_PREFETCH(isp_dta_data(h) + x * sb);
		for (unsigned j = n; j > at; j--)
			idx[j] = idx[j - 1];
		idx[at] = x;
		n++;
	}
	for (unsigned i = 0; i < n; i++)
		ver[i] = slot_lock(s, (_Atomic uint32_t *)(isp_dta_data(h) + idx[i] * sb));
	/* the value as a copy of this key holds it (a copy another key took
	 * over is not this key's): the hop's word set in it */
	for (unsigned i = 0; i < n && !base; i++) {
		uint8_t *slot = isp_dta_data(h) + idx[i] * sb;
		memcpy(&had, slot + 4, 4);
		if (ver[i] != 0 && had == check) {
			isp_dta_copy_words(value, slot + 8, words);
			base = true;
		}
	}
	if (!base)
		memset(value, 0, sizeof(value));
	memcpy(value + 4 * (size_t)hop, &word, 4);
	for (unsigned i = 0; i < n; i++) {
		uint8_t *slot = isp_dta_data(h) + idx[i] * sb;
		memcpy(slot + 4, &check, 4);
		isp_dta_copy_words(slot + 8, value, words);
		slot_unlock((_Atomic uint32_t *)slot, ver[i]);
	}
	tally(s, &h->writes, 1);
	return true;
}

/* ---- Append ---- */

bool dta_append(struct dta_store *s, uint32_t list, const uint32_t *values, unsigned n)
{
	struct isp_dta_header *h = s->h;

	if (list >= h->lists) {
		tally(s, &h->rejected, n);
		return false;
	}
	_Atomic uint64_t *head = &isp_dta_heads(h)[list].head;
	uint64_t pos;
	if (s->shared) {
		pos = atomic_fetch_add_explicit(head, n, memory_order_acq_rel);
	} else {
		pos = atomic_load_explicit(head, memory_order_relaxed);
		atomic_store_explicit(head, pos + n, memory_order_release);
	}
	for (unsigned k = 0; k < n; k++) {
		uint8_t *e = isp_dta_entry(h, list, pos + k);
		_Atomic uint64_t *seq = (_Atomic uint64_t *)e;
		/* 0 first: a reader of the entry this one replaces sees it change */
		atomic_store_explicit(seq, 0, memory_order_relaxed);
		ISP_DTA_FENCE(memory_order_release);
		memcpy(e + 8, (const uint8_t *)values + (size_t)k * h->value_bytes, h->value_bytes);
		atomic_store_explicit(seq, pos + k + 1, memory_order_release);
	}
	tally(s, &h->writes, n);
	return true;
}

/* ---- Key-Increment ---- */

void dta_ki_add(struct dta_store *s, const void *key, size_t len, uint64_t v)
{
	struct isp_dta_header *h = s->h;
	uint64_t hh = isp_dta_murmur64a(key, len, h->seed);
	_Atomic uint64_t *cnt = (_Atomic uint64_t *)isp_dta_data(h);

	for (unsigned i = 0; i < h->rows; i++) {
		_Atomic uint64_t *c = &cnt[(size_t)i * h->columns + isp_dta_index(hh, i, h->columns)];
		if (s->shared)
			atomic_fetch_add_explicit(c, v, memory_order_relaxed);
		else
			atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
					      memory_order_relaxed);
	}
	tally(s, &h->writes, 1);
}

/* ---- Sketch-Merge ---- */

static inline uint16_t *next_col(struct isp_dta_epoch *e)
{
	return (uint16_t *)((uint8_t *)e + isp_dta_next_off());
}

static inline uint64_t *recv_bits(const struct isp_dta_header *h, struct isp_dta_epoch *e)
{
	return (uint64_t *)((uint8_t *)e + isp_dta_bits_off(h));
}

static void merge_column(const struct isp_dta_header *h, _Atomic int64_t *cnt, unsigned col,
			 unsigned rows, const uint8_t *w)
{
	for (unsigned r = 0; r < rows; r++, w += 4) {
		_Atomic int64_t *c = &cnt[(size_t)r * h->columns + col];
		int64_t now = atomic_load_explicit(c, memory_order_relaxed), v;
		if (h->sketch_kind == ISP_DTA_HLL) {
			v = (int64_t)isp_be32(w);
			v = v > now ? v : now;
		} else if (h->sketch_kind == ISP_DTA_COUNT_SKETCH) {
			v = now + (int32_t)isp_be32(w);
		} else {
			v = now + (int64_t)isp_be32(w);
		}
		atomic_store_explicit(c, v, memory_order_relaxed);
	}
}

/* A HyperLogLog register holds a rank: at most 64 (65 - b for 2^b
 * registers); a larger one is no HyperLogLog's. */
static bool hll_registers(const struct isp_dta_header *h, const uint8_t *w, unsigned n)
{
	for (unsigned i = 0; h->sketch_kind == ISP_DTA_HLL && i < n; i++, w += 4)
		if (isp_be32(w) > 64)
			return false;
	return true;
}

enum dta_sm_result dta_sm_merge(struct dta_store *s, unsigned reporter, unsigned epoch,
				unsigned column, unsigned ncols, unsigned rows,
				const uint8_t *counters, unsigned *missing)
{
	struct isp_dta_header *h = s->h;
	enum dta_sm_result res = DTA_SM_MERGED;
	unsigned slot = epoch % h->epochs, dup = 0;

	if (reporter >= h->reporters || rows != h->rows || ncols == 0 ||
	    column + (uint64_t)ncols > h->columns || !hll_registers(h, counters, ncols * rows)) {
		tally(s, &h->rejected, 1);
		return DTA_SM_SHAPE;
	}
	pthread_mutex_lock(&s->mu);
	struct isp_dta_epoch *e = isp_dta_epoch_slot(h, slot);
	uint32_t have = atomic_load_explicit(&e->epoch, memory_order_relaxed);
	if (have != epoch + 1) {
		/* 16-bit serial arithmetic: a slot holding a newer epoch wins */
		if (have && (int16_t)(uint16_t)(epoch + 1 - have) < 0) {
			pthread_mutex_unlock(&s->mu);
			tally(s, &h->stale, 1);
			return DTA_SM_STALE;
		}
		atomic_store_explicit(&e->epoch, 0, memory_order_release);
		memset((uint8_t *)e + sizeof(*e), 0, h->epoch_bytes - sizeof(*e));
		atomic_store_explicit(&e->complete, 0, memory_order_relaxed);
		memset(s->nacked + (size_t)slot * h->reporters, 0, h->reporters * sizeof(*s->nacked));
		atomic_store_explicit(&e->epoch, epoch + 1, memory_order_release);
	}
	uint64_t *bits = recv_bits(h, e);
	uint16_t *next = next_col(e);
	_Atomic int64_t *cnt = isp_dta_epoch_counters(h, e);
	for (unsigned j = 0; j < ncols; j++) {
		uint64_t b = (uint64_t)reporter * h->columns + column + j;
		if (bits[b / 64] >> (b % 64) & 1) {
			dup++;
			continue;
		}
		bits[b / 64] |= UINT64_C(1) << (b % 64);
		merge_column(h, cnt, column + j, rows, counters + (size_t)j * rows * 4);
	}
	/* a gap is NACKed by a report that brought a new column: one whose
	 * columns all came before returns DTA_SM_DUPLICATE, which no caller
	 * NACKs, so it must not mark the gap NACKed */
	uint16_t *nacked = &s->nacked[(size_t)slot * h->reporters + reporter];
	if (dup < ncols && column > next[reporter] && *nacked != next[reporter] + 1) {
		*missing = next[reporter];
		*nacked = (uint16_t)(next[reporter] + 1);       /* NACKed once per gap */
		res = DTA_SM_GAP;
	}
	unsigned n = next[reporter];
	while (n < h->columns) {
		uint64_t b = (uint64_t)reporter * h->columns + n;
		if (!(bits[b / 64] >> (b % 64) & 1))
			break;
		n++;
	}
	if (n == h->columns && next[reporter] != h->columns)
		atomic_fetch_add_explicit(&e->complete, 1, memory_order_release);
	next[reporter] = (uint16_t)(n < h->columns ? n : h->columns);
	pthread_mutex_unlock(&s->mu);
	if (dup) {
		tally(s, &h->duplicates, dup);
		if (dup == ncols)
			return DTA_SM_DUPLICATE;
	}
	tally(s, &h->writes, ncols - dup);
	return res;
}

int dta_sm_next(struct dta_store *s, unsigned reporter, unsigned epoch)
{
	struct isp_dta_header *h = s->h;

	if (reporter >= h->reporters)
		return -1;
	pthread_mutex_lock(&s->mu);
	struct isp_dta_epoch *e = isp_dta_epoch_slot(h, epoch % h->epochs);
	int n = atomic_load_explicit(&e->epoch, memory_order_relaxed) == epoch + 1 ?
		next_col(e)[reporter] : -1;
	pthread_mutex_unlock(&s->mu);
	return n >= 0 && (unsigned)n < h->columns ? n : -1;
}
