/*
 * kv.h - checking the keys of an output section.
 *
 * isp_channel_open and every channel type's open parse "key = value" pairs
 * the same way and report mistakes the same way (unknown key with the list
 * of known ones and a "did you mean", bad numbers with the accepted range,
 * bad enum values with the accepted words), so the helpers live here.
 *
 * Messages are written without a position: the channel layer prefixes
 * "file:line:col: " from the offending key (isp_kv_errorf does it for
 * callers that have the whole cfg).
 */
#ifndef ISP_OUTPUTS_KV_H
#define ISP_OUTPUTS_KV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "channel.h"

#if defined(__GNUC__)
#define ISP_KV_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define ISP_KV_PRINTF(a, b)
#endif

/* The generic keys, NULL-terminated, in the order messages list them. */
extern const char *const isp_channel_generic_keys[];

/*
 * Check that every key of cfg->kv is in `known` (NULL-terminated) and
 * appears once. On failure: -1, *bad_kv = its index, and err says
 * "unknown key 'x' for a T output; known: <generic keys>, <known>" (plus
 * "did you mean 'y'?" for a near miss) or "duplicate key 'x'".
 */
int isp_kv_check_known(const struct isp_channel_cfg *cfg,
		       const char *const *known, int *bad_kv,
		       char *err, size_t errlen);

/* Index of `key` in cfg->kv, or -1. */
int isp_kv_find(const struct isp_channel_cfg *cfg, const char *key);

/* Unsigned decimal integer in [min, max]; -1 and a message otherwise. */
int isp_kv_uint(const struct isp_kv *kv, uint64_t min, uint64_t max,
		uint64_t *out, char *err, size_t errlen);
/* Same with an optional binary suffix: k/K/KiB, M/MiB, G/GiB. */
int isp_kv_size(const struct isp_kv *kv, uint64_t min, uint64_t max,
		uint64_t *out, char *err, size_t errlen);
/* true|false|yes|no|on|off. */
int isp_kv_bool(const struct isp_kv *kv, bool *out, char *err, size_t errlen);
/* One of `names` (NULL-terminated); *out = its index. */
int isp_kv_enum(const struct isp_kv *kv, const char *const *names, int *out,
		char *err, size_t errlen);

/*
 * Write "file:line:col: " + message into err: the position of kv (or of
 * the section when kv is NULL; just "file: " when neither is known).
 */
void isp_kv_errorf(char *err, size_t errlen, const struct isp_channel_cfg *cfg,
		   const struct isp_kv *kv, const char *fmt, ...) ISP_KV_PRINTF(5, 6);

#endif
