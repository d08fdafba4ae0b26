/*
 * value.h - attribute values as text: JSON (dump, records) and plain.
 */
#ifndef ISP_VALUE_H
#define ISP_VALUE_H

#include "jsonw.h"
#include "plugin.h"

/* Text of one scalar element (addresses as text). Returns its length. */
size_t isp_value_text(const struct isp_value *v, uint64_t elem, char *out, size_t cap);

/* Write a value as JSON: numbers, strings, arrays; null where missing.
 * ts_digits: decimals of timestamps. */
void isp_value_json(struct jsonw *w, const struct isp_value *v, unsigned ts_digits);

#endif
