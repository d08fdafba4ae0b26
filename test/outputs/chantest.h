/*
 * chantest.h - helpers shared by the channel-layer tests (check_queue,
 * check_channel): open a "fake" channel (fake.h) from key strings, submit
 * formatted records, read counters, and the "hold the first record" trick:
 * submit one record and wait until the fake is blocked inside write_batch
 * holding it, so that the queue then holds exactly what the test puts
 * there, independent of thread timing.
 */
#ifndef ISP_TEST_CHANTEST_H
#define ISP_TEST_CHANTEST_H

#include <stdbool.h>

#include "../../outputs/channel.h"

/* The last isp_channel_open error message. */
extern char ct_err[1024];

/* isp_channel_open via tcfg_open; NULL with ct_err on error. */
struct isp_channel *ct_open_type(const char *type, const char *const *kvs);
/* A "fake" channel; fails the test if it does not open. */
struct isp_channel *ct_open(const char *const *kvs);
/* Submit a record (report "rep", key "k") with printf-formatted text. */
bool ct_put(struct isp_channel *ch, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
struct isp_channel_stats ct_stats(const struct isp_channel *ch);
double ct_now_ms(void);
void ct_sleep_ms(unsigned ms);
/* Fail the test unless queued == delivered + dropped + queue_depth. */
void ct_check_invariant(const struct isp_channel *ch);
/* Block the fake, submit "r0" and wait until the fake holds it. */
void ct_hold_first(struct isp_channel *ch);

#endif
