/*
 * check_influxdb_answers.c - outputs/README.md's table of InfluxDB's
 * answers, row by row, for the answers check_influxdb.c does not meet:
 * 413, a redirection (not followed), another 4xx and 500 "retention
 * policy not found" drop the request's records, said with the status and
 * never sent again; 401, 403, 408, 429 and another 5xx are "not now": the
 * records wait, are offered again, and are delivered once the server
 * answers 204. Against the HTTP server inside the test (ifxtest.c), which
 * answers the second request as the case says (the first, the channel's
 * own check at open, 204).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ifxtest.h"
#include "../../check_run.h"

/* One request of 5 records answered `a`, then 204 to everything. */
static void answered(struct answer a, struct isp_channel_stats *st, char **log)
{
	const struct answer script[] = { { .status = 204 }, a };
	const char *kv[] = { "database=db", NULL };
	struct isp_channel *ch;

	server_start(script, 2, A204);
	cap_start();
	ch = must_open(srv.port, kv);
	put_n(ch, 0, 5);
	isp_channel_drain(ch);
	*st = stats(ch);
	isp_channel_close(ch);
	*log = cap_end();
}

/* Dropped: the request counted dropped, not retried, not sent again,
 * the status said with the server's text, and the total at close. */
static void expect_dropped(struct answer a, const char *said)
{
	struct isp_channel_stats st;
	char *log;

	answered(a, &st, &log);
	ck_assert_msg(st.queued == 5 && st.delivered == 0 && st.dropped == 5 && st.retried == 0,
		      "HTTP %d: queued %llu delivered %llu dropped %llu retried %llu", a.status,
		      (unsigned long long)st.queued, (unsigned long long)st.delivered,
		      (unsigned long long)st.dropped, (unsigned long long)st.retried);
	ck_assert_msg(nrequests() == 2, "HTTP %d: %zu requests", a.status, nrequests());
	ck_assert_msg(strstr(log, said) != NULL, "HTTP %d: expected '%s' in: %s", a.status, said,
		      log);
	ck_assert_msg(strstr(log, "5 record(s) refused by the server in all (counted dropped)"),
		      "HTTP %d: log: %s", a.status, log);
	free(log);
	server_stop();
}

/* Not now: offered again and delivered, each record once, the outage said
 * with its status and its end. */
static void expect_retried(struct answer a, const char *said)
{
	struct isp_channel_stats st;
	char *log;

	answered(a, &st, &log);
	ck_assert_msg(st.queued == 5 && st.delivered == 5 && st.dropped == 0 && st.retried >= 5,
		      "HTTP %d: queued %llu delivered %llu dropped %llu retried %llu", a.status,
		      (unsigned long long)st.queued, (unsigned long long)st.delivered,
		      (unsigned long long)st.dropped, (unsigned long long)st.retried);
	ck_assert_str_eq(bodies(204), expect_n(0, 5));
	ck_assert_msg(strstr(log, said) && strstr(log, "; records wait in the queue, retrying") &&
		      strstr(log, "writing again"), "HTTP %d: expected '%s' in: %s", a.status,
		      said, log);
	free(log);
	server_stop();
}

START_TEST(too_large_413)
{
	/* said in the channel's words: what to change */
	expect_dropped((struct answer){ .status = 413, .error = "Request Entity Too Large" },
		       " bytes is too large for the server (its max-body-size): 5 record(s) "
		       "dropped; lower max-body");
}
END_TEST

START_TEST(redirect_not_followed)
{
	expect_dropped((struct answer){ .status = 301, .body = "moved" }, "HTTP 301");
}
END_TEST

START_TEST(other_4xx)
{
	expect_dropped((struct answer){ .status = 422, .error = "unprocessable" },
		       "HTTP 422: unprocessable");
}
END_TEST

START_TEST(retention_policy_not_found)
{
	expect_dropped((struct answer){ .status = 500,
					.error = "retention policy not found: week" },
		       "HTTP 500: retention policy not found: week");
}
END_TEST

START_TEST(not_now)
{
	static const struct {
		int status;
		const char *error;
	} rows[] = {
		{ 401, "authorization failed" }, { 403, "forbidden" }, { 408, "timeout" },
		{ 429, "too many requests" }, { 502, "bad gateway" },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char said[64];

		snprintf(said, sizeof(said), "HTTP %d: %s", rows[i].status, rows[i].error);
		expect_retried((struct answer){ .status = rows[i].status, .error = rows[i].error },
			       said);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("influxdb_answers");
	TCase *tc = tcase_create("influxdb_answers");

	isp_channels_init();
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, too_large_413);
	tcase_add_test(tc, redirect_not_followed);
	tcase_add_test(tc, other_4xx);
	tcase_add_test(tc, retention_policy_not_found);
	tcase_add_test(tc, not_now);
	suite_add_tcase(s, tc);
	return check_run(s, CK_FORK_GETENV);
}
