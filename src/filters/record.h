/*
 * record.h - encoding report records, once, as JSON or CSV.
 *
 * JSON (EVE-like): {"report":NAME,"type":"event"|"query","ts":ISO-8601 UTC
 * with microseconds,"time":seconds.micro, then the record's fields}.
 * CSV (MMT-Probe's column order): type id (1000 event, 999 query), probe
 * id, "source", sec.usec, "report", then the values.
 */
#ifndef ISP_FILTERS_RECORD_H
#define ISP_FILTERS_RECORD_H

#include "../core/jsonw.h"
#include "expr.h"

#define REC_MAX (64 * 1024)

struct rec {
	struct jsonw w;
	char buf[REC_MAX];
	bool csv;
	/* ISO-8601 of the last second formatted (records come in bursts) */
	int64_t iso_sec;
	char iso[32];
};

void rec_begin(struct rec *r, bool csv, const char *report, const char *type,
	       unsigned type_id, unsigned probe_id, const char *source, uint64_t ts_ns);
/* A field: key (JSON only) and value. */
void rec_key(struct rec *r, const char *key);

/* A key escaped once, ahead of the packets ("name":). */
struct rec_jkey {
	char *text;
	size_t len;
};
int rec_jkey_make(struct rec_jkey *k, const char *name);
void rec_jkey_free(struct rec_jkey *k);
void rec_key_prepared(struct rec *r, const struct rec_jkey *k);
void rec_xval(struct rec *r, const struct xval *v, const char *str_override);
/* An xval as JSON into any writer (str: the text of a kept string). */
void xval_json(struct jsonw *w, const struct xval *v, const char *str);
void rec_null(struct rec *r);
void rec_time(struct rec *r, const char *key, uint64_t ns);
void rec_value(struct rec *r, const struct isp_value *v);  /* attribute value as is */
/* A value given as JSON text (arrays built by the caller): JSON as is,
 * CSV as one cell. */
void rec_json_cell(struct rec *r, const char *json, size_t n);
/* Finish; returns the text length, 0 when it did not fit. */
size_t rec_end(struct rec *r);

#endif
