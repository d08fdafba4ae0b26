/*
 * tcfg.h - build an output section from "key=value" strings for the
 * channel and file tests, with known positions so error messages can be
 * checked exactly: the section is at test.conf:1:1, the i-th key (from 0)
 * at line i+2, column 3.
 */
#ifndef ISP_TEST_TCFG_H
#define ISP_TEST_TCFG_H

#include <stddef.h>

#include "../../outputs/channel.h"

/* isp_channel_open of a channel named "t" of `type` with keys `kvs`
 * (NULL-terminated "key=value"; at most 16). */
struct isp_channel *tcfg_open(const char *type, const char *const *kvs,
			      char *err, size_t errlen);
/* The same with a first key (e.g. "port=6379") before the extra ones
 * (NULL-terminated; at most 15). */
struct isp_channel *tcfg_open_with(const char *type, const char *first,
				   const char *const *extra, char *err, size_t errlen);
/* isp_channel_check of the same section: 0, or -1 with the message. */
int tcfg_check(const char *type, const char *const *kvs, char *err, size_t errlen);

/* What the code under test says on stderr, from tcfg_stderr_begin on: so
 * far (tcfg_stderr_peek, into buf), or all of it when tcfg_stderr_end
 * gives stderr back (malloc'd, and still shown in the test's log). */
void tcfg_stderr_begin(void);
void tcfg_stderr_peek(char *buf, size_t size);
char *tcfg_stderr_end(void);

#endif
