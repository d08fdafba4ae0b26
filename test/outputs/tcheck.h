/*
 * tcheck.h - what the channel type tests (check_file, check_stdout) do
 * with a channel, through Check's assertions: open it, submit a record,
 * read its counters.
 */
#ifndef ISP_TEST_TCHECK_H
#define ISP_TEST_TCHECK_H

#include <check.h>
#include <string.h>

#include "tcfg.h"

/* tcfg_open, or the test fails with the message. */
static inline struct isp_channel *tcheck_open(const char *type, const char *const *kvs)
{
	char err[1024];
	struct isp_channel *ch = tcfg_open(type, kvs, err, sizeof(err));

	ck_assert_msg(ch != NULL, "open failed: %s", err);
	return ch;
}

/* Submit a record of text (no report or key); the test fails if refused. */
static inline void tcheck_put(struct isp_channel *ch, const char *text)
{
	struct isp_record r = { .text = text, .len = strlen(text) };

	ck_assert(isp_channel_submit(ch, &r));
}

static inline struct isp_channel_stats tcheck_stats(const struct isp_channel *ch)
{
	struct isp_channel_stats st;

	isp_channel_get_stats(ch, &st);
	return st;
}

#endif
