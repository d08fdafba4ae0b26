/*
 * store.h - the writers of the DTA stores (README.md, "Stores"): one
 * shared-memory file per store, laid out as dta_store.h says, written by
 * every worker at once (atomics; a slot's version as a writer's lock) or
 * by one (plain stores: set_shared false).
 *
 * Values are 32-bit words in host order; keys are byte strings (a DTA
 * report's: its 4 bytes as sent).
 */
#ifndef ISP_DTA_STORE_WRITER_H
#define ISP_DTA_STORE_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dta_store.h"

struct dta_store_cfg {
	const char *name;
	const char *path;
	enum isp_dta_kind kind;
	uint64_t seed;
	uint32_t value_bytes;           /* Key-Write, Append */
	uint32_t redundancy;            /* Key-Write */
	uint64_t slots;                 /* Key-Write */
	bool answer_any;
	uint32_t lists, entries;        /* Append */
	uint32_t rows, columns;         /* Key-Increment, Sketch-Merge */
	enum isp_dta_sketch sketch_kind;
	uint32_t sketch_id, reporters, epochs;
	bool persist;                   /* reopen a file of the same shape, keep it */
};

struct dta_store;

/* Bytes the file of cfg takes. */
uint64_t dta_store_bytes(const struct dta_store_cfg *cfg);

/* Create the file (a new one replaces an older one atomically: readers of
 * the old keep what they mapped), or with persist reopen it when its
 * shape is the same. NULL with a message. */
struct dta_store *dta_store_open(const struct dta_store_cfg *cfg, char *err, size_t errlen);
void dta_store_close(struct dta_store *s);      /* the file stays */

struct isp_dta_header *dta_store_header(struct dta_store *s);
/* Several threads write it (atomic read-modify-writes), or one. */
void dta_store_set_shared(struct dta_store *s, bool shared);
/* Zero the data (control: reset), counters kept. One writer at a time:
 * call it where no worker writes. */
void dta_store_clear(struct dta_store *s);

/* A report that does not fit the store's shape, refused before it reached
 * one of the writers below (which count their own): counted in the
 * header, where readers see it. */
void dta_store_reject(struct dta_store *s);

/* Key-Write: copies (1..redundancy) slots of key get words (nwords, the
 * rest of the value zero). */
void dta_kw_write(struct dta_store *s, const void *key, size_t len, unsigned copies,
		  const uint32_t *words, unsigned nwords);
/* Postcarder: word hop of key's value; false (rejected) when hop is
 * beyond the value. */
bool dta_kw_postcard(struct dta_store *s, const void *key, size_t len, unsigned hop,
		     uint32_t word);

/* Append: n entries of value_bytes (host-order words, n × value_bytes)
 * to list, reserved at once; false (rejected) when the list does not
 * exist. Entries with fewer words than the value are zero-padded by the
 * caller. */
bool dta_append(struct dta_store *s, uint32_t list, const uint32_t *values, unsigned n);

/* Key-Increment: count-min add of v on every row. */
void dta_ki_add(struct dta_store *s, const void *key, size_t len, uint64_t v);

/* Sketch-Merge of one report: counters (big-endian u32, column-major,
 * ncols × rows). The outcome, and with DTA_SM_GAP the first missing
 * column of this reporter in *missing. */
enum dta_sm_result {
	DTA_SM_MERGED,          /* every column new */
	DTA_SM_GAP,             /* merged; a column before it is missing */
	DTA_SM_DUPLICATE,       /* some or all columns came before (not merged again) */
	DTA_SM_STALE,           /* an epoch older than the one in its slot */
	DTA_SM_SHAPE,           /* reporter, columns or rows outside the store */
};
enum dta_sm_result dta_sm_merge(struct dta_store *s, unsigned reporter, unsigned epoch,
				unsigned column, unsigned ncols, unsigned rows,
				const uint8_t *counters, unsigned *missing);
/* A reporter's first missing column in an epoch, or -1 when it sent them
 * all (or the epoch's slot holds another epoch). */
int dta_sm_next(struct dta_store *s, unsigned reporter, unsigned epoch);

#endif
