/*
 * chantest.c - helpers of the channel-layer tests (chantest.h).
 */
#include "chantest.h"

#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fake.h"
#include "tcfg.h"

char ct_err[1024];

struct isp_channel *ct_open_type(const char *type, const char *const *kvs)
{
	return tcfg_open(type, kvs, ct_err, sizeof(ct_err));
}

struct isp_channel *ct_open(const char *const *kvs)
{
	struct isp_channel *ch = ct_open_type("fake", kvs);

	ck_assert_msg(ch != NULL, "open failed: %s", ct_err);
	return ch;
}

bool ct_put(struct isp_channel *ch, const char *fmt, ...)
{
	char text[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);

	struct isp_record r = { .report = "rep", .key = "k", .key_len = 1,
				.text = text, .len = (size_t)n };

	return isp_channel_submit(ch, &r);
}

struct isp_channel_stats ct_stats(const struct isp_channel *ch)
{
	struct isp_channel_stats st;

	isp_channel_get_stats(ch, &st);
	return st;
}

double ct_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void ct_sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

void ct_check_invariant(const struct isp_channel *ch)
{
	struct isp_channel_stats st = ct_stats(ch);

	ck_assert_uint_eq(st.queued, st.delivered + st.dropped + st.queue_depth);
}

void ct_hold_first(struct isp_channel *ch)
{
	fake_set_block(true);
	ck_assert(ct_put(ch, "r0"));
	ck_assert(fake_wait_in_write());
}
