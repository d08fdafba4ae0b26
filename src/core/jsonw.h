/*
 * jsonw.h - append-only JSON text into a caller's buffer, no allocation.
 *
 * The buffer is sized for the largest object intspect writes (a packet
 * dump with every attribute); writes past the end are dropped and flagged
 * so a caller can report instead of emitting a cut object.
 */
#ifndef ISP_JSONW_H
#define ISP_JSONW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jsonw {
	char *buf;
	size_t len, cap;
	bool overflow;
	bool need_comma;
};

void jsonw_init(struct jsonw *w, char *buf, size_t cap);
void jsonw_raw(struct jsonw *w, const char *s, size_t n);
void jsonw_object_begin(struct jsonw *w);
void jsonw_object_end(struct jsonw *w);
void jsonw_array_begin(struct jsonw *w);
void jsonw_array_end(struct jsonw *w);
/* Key of the next member; parts are concatenated ("ip" "." "src"). */
void jsonw_key3(struct jsonw *w, const char *a, const char *b, const char *c);
void jsonw_u64(struct jsonw *w, uint64_t v);
void jsonw_null(struct jsonw *w);
/* A value already in JSON text (a number, an array built elsewhere). */
void jsonw_value_text(struct jsonw *w, const char *s, size_t n);
void jsonw_string(struct jsonw *w, const char *s);
/* Seconds with `digits` decimals from nanoseconds. */
void jsonw_time(struct jsonw *w, uint64_t ns, unsigned digits);

#endif
