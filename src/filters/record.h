/*
 * record.h - encoding report records, once, as JSON or CSV.
 *
 * JSON (EVE-like): {"report":NAME,"type":"event"|"query","ts":ISO-8601 UTC
 * with microseconds,"time":seconds.micro, then the record's fields}.
 * CSV (MMT-Probe's column order): type id (1000 event, 999 query), probe
 * id, "source", sec.usec, "report", then the values: as MMT-Probe writes
 * them (REC_MMT_CSV, record_mmt.c), or one typed cell each (REC_CSV_CELLS).
 * InfluxDB's line protocol: record_influx.c.
 */
#ifndef ISP_FILTERS_RECORD_H
#define ISP_FILTERS_RECORD_H

#include <string.h>

#include "../core/jsonw.h"
#include "expr.h"

/* Pieces of a value written straight into a buffer with room for them,
 * the same in JSON and in CSV: six digits of microseconds (as jsonw_time
 * and the "ts" text write them), nanoseconds as SECONDS.MICROSECONDS, an
 * IPv4 address as "a.b.c.d" with its quotes. Each returns the end. */
static inline void rec_put_us(char *o, uint32_t us)
{
	jsonw_put2(o, us / 10000);
	jsonw_put4(o + 2, us % 10000);
}

static inline char *rec_put_seconds(char *o, uint64_t ns)
{
	o += jsonw_utoa(ns / 1000000000u, o);
	*o++ = '.';
	rec_put_us(o, (uint32_t)(ns % 1000000000u / 1000u));
	return o + 6;
}

static inline char *rec_put_ipv4_quoted(char *o, uint32_t a)
{
	*o++ = '"';
	for (int shift = 24; shift > 0; shift -= 8) {
		o += jsonw_utoa4(o, a >> shift & 0xff);
		*o++ = '.';
	}
	o += jsonw_utoa4(o, a & 0xff);
	*o++ = '"';
	return o;
}

#define REC_MAX (64 * 1024)
#define SEC_TIME_MID 10         /* strlen("Z\",\"time\":") */
/* Prepared JSON heads kept per writer (one per report that writes
 * through it; more reports than this still work, they prepare again). */
#define REC_HEADS 8
#define REC_HEAD_MAX 96

/* A report's constant JSON head, {"report":NAME,"type":TYPE,"ts":" escaped
 * once: keyed by the pointers, which belong to the program and outlive
 * the writer. */
struct rec_head {
	const char *report, *type;
	size_t len;
	char text[REC_HEAD_MAX];
};

/* A CSV row's cells before its time (type id, probe id, quoted source)
 * and after it (quoted report name), made once: the source is a path,
 * quoted character by character. */
#define REC_CSV_HEAD_MAX 224
struct rec_csv_head {
	const char *report, *source;
	unsigned type_id, probe_id;
	size_t pre, post;       /* text = pre bytes, then post bytes */
	char text[REC_CSV_HEAD_MAX];
};

enum rec_style { REC_JSON, REC_MMT_CSV, REC_CSV_CELLS };

struct rec {
	struct jsonw w;
	char *out;                      /* where the next record goes: REC_MAX
					   bytes of a channel's queue, or NULL
					   for buf (rec_target) */
	char buf[REC_MAX];
	bool csv;                       /* either CSV style */
	bool mmt;                       /* REC_MMT_CSV */
	bool influx;                    /* between rec_influx_begin and end */
	unsigned influx_fields;
	uint64_t influx_ts;
	/* ISO-8601 of the last second formatted (records come in bursts),
	 * and what of a JSON head depends on that second only:
	 * `YYYY-MM-DDTHH:MM:SS.` and `Z","time":SECONDS.` */
	int64_t iso_sec;
	char iso[32];
	char sec_ts[32], sec_time[48];  /* sec_time: the seconds' digits from SEC_TIME_MID */
	size_t sec_ts_len, sec_time_len;
	struct rec_head heads[REC_HEADS];
	unsigned head_next;             /* the next entry to replace */
	struct rec_csv_head csv_heads[REC_HEADS];
	unsigned csv_head_next;
	struct jsonw_top top;           /* per-hop timestamps' common digits */
};

/* rec_put_seconds, the seconds' digits copied from those kept for the
 * JSON head's "time" when ns is in their second (a record's own time and
 * meta.timestamp, usually): at most 22 bytes written, as rec_put_seconds. */
static inline __attribute__((always_inline)) char *rec_put_seconds_kept(const struct rec *r, char *o,
									 uint64_t ns)
{
	size_t n = r->sec_time_len - SEC_TIME_MID;      /* digits and '.' */

	if ((int64_t)(ns / 1000000000u) != r->iso_sec || r->sec_time_len == 0 || n > 16)
		return rec_put_seconds(o, ns);
	memcpy(o, r->sec_time + SEC_TIME_MID, 16);
	rec_put_us(o + n, (uint32_t)(ns % 1000000000u / 1000u));
	return o + n + 6;
}

/* Write the next records at out (REC_MAX bytes; NULL: the writer's own
 * buffer). rec_begin and the other openers start there. */
static inline void rec_target(struct rec *r, char *out)
{
	r->out = out;
}

static inline char *rec_out(struct rec *r)
{
	return r->out ? r->out : r->buf;
}

void rec_begin(struct rec *r, enum rec_style style, const char *report, const char *type,
	       unsigned type_id, unsigned probe_id, const char *source, uint64_t ts_ns);
/* A field: key (JSON only) and value. */
void rec_key(struct rec *r, const char *key);

/* A key escaped once, ahead of the packets ("name":). text[-1] is a
 * comma, and the text is followed by zeros up to REC_JKEY_PAD bytes, so
 * that a field is written with one fixed-size copy (rec_field). */
struct rec_jkey {
	char *text;
	size_t len;
	bool mmt_quoted;        /* MMT CSV: the attribute is text-like, so
				 * its absence is "" rather than 0 */
};
#define REC_JKEY_PAD 32
int rec_jkey_make(struct rec_jkey *k, const char *name);
void rec_jkey_free(struct rec_jkey *k);
void rec_key_prepared(struct rec *r, const struct rec_jkey *k);
void rec_xval(struct rec *r, const struct xval *v, const char *str_override);
/* An xval as JSON into any writer (str: the text of a kept string). */
void xval_json(struct jsonw *w, const struct xval *v, const char *str);
void rec_null(struct rec *r);
void rec_time(struct rec *r, const char *key, uint64_t ns);
/* The same with a prepared key (rec_jkey_make). */
void rec_time_prepared(struct rec *r, const struct rec_jkey *k, uint64_t ns);
void rec_value(struct rec *r, const struct isp_value *v);  /* attribute value as is */
/* rec_key_prepared(k) then rec_value(v), or rec_null() when v is NULL:
 * the same text, written in one go for JSON (the per-packet event
 * record is all such fields). */
void rec_field(struct rec *r, const struct rec_jkey *k, const struct isp_value *v);
/* rec_field for each of n fields, in order (key[i] and v[i], v[i] NULL:
 * null), without a call and a room check per field when the buffer has
 * room for the largest of them all. Keys and values apart: a caller's
 * keys are listed once, and only its values change a record. */
#define REC_BATCH 32    /* fields a caller gathers for one rec_fields */
void rec_fields(struct rec *r, const struct rec_jkey *const *key,
		const struct isp_value *const *v, unsigned n);
/* rec_fields of slots' values, from sc for packet p: a per-hop attribute
 * that no rule read in the packet is written by its put (isp_put_fn)
 * straight from the packet when it can, JSON and MMT's CSV, instead of
 * filling its array to read it back. */
void rec_slot_fields(struct rec *r, const struct rec_jkey *const *key, struct slot *const *at,
		     unsigned n, struct slot_cache *sc, const struct isp_packet *p);
/* A value given as JSON text (arrays built by the caller): JSON as is,
 * CSV as one cell. */
void rec_json_cell(struct rec *r, const char *json, size_t n);
/* MMT-Probe's cells (record_mmt.c): a field with its comma; a result
 * (after rec_key_prepared); an absent value; a quoted string. */
void rec_mmt_field(struct rec *r, const struct rec_jkey *k, const struct isp_value *v);
/* rec_slot_fields' MMT CSV: put's hops as cells, the last hop first. */
void rec_mmt_slot_fields(struct rec *r, struct slot *const *at, const struct rec_jkey *const *key,
			 unsigned n, struct slot_cache *sc, const struct isp_packet *p);
/* rec_mmt_field for each of n fields, numbers without a call a field. */
void rec_mmt_fields(struct rec *r, const struct rec_jkey *const *key,
		    const struct isp_value *const *v, unsigned n);
void rec_mmt_xval(struct rec *r, const struct xval *v, const char *str);
void rec_mmt_absent(struct rec *r, bool quoted);
void rec_mmt_string(struct rec *r, const char *s, size_t n);
/* The separator between two cells of one value (per-hop results). */
void rec_cell_sep(struct rec *r);

/* InfluxDB line protocol (record_influx.c): begin (measurement and
 * timestamp), the tags, then the fields; rec_end finishes it, and gives 0
 * for a record without any field. Absent values are left out. A per-hop
 * array field is one field per hop, name.0, name.1, ... */
void rec_influx_begin(struct rec *r, const char *measurement, uint64_t ts_ns);
void rec_influx_tag(struct rec *r, const char *name, const struct isp_value *v);
void rec_influx_field(struct rec *r, const char *name, const struct isp_value *v);
/* A computed value (a query's result; hop >= 0: of that hop). */
void rec_influx_xfield(struct rec *r, const char *name, int hop, const struct xval *v,
		       const char *str);
size_t rec_influx_end(struct rec *r);

/* Finish; returns the text length, 0 when it did not fit. */
size_t rec_end(struct rec *r);

#endif
