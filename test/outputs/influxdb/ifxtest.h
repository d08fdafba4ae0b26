/*
 * ifxtest.h - what check_influxdb's cases share: a small HTTP server on
 * loopback (a thread) that answers each request as the case scripts and
 * records what it was sent, and helpers to open an influxdb channel on
 * it, submit records, read counters and capture stderr.
 */
#ifndef ISP_TEST_IFXTEST_H
#define ISP_TEST_IFXTEST_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "../../../outputs/channel.h"

/* One answer: a status, an error (X-Influxdb-Error and {"error":...}) or
 * a raw body, sent chunked or not, after a delay; then the connection is
 * closed or not. Status 0: the connection is closed without an answer. */
struct answer {
	int status;
	const char *error;
	const char *body;
	bool chunked;
	unsigned delay_ms;
	bool close;
};

struct request {
	char method[8];
	char *path, *body, *auth, *encoding;      /* encoding: Content-Encoding */
	size_t body_len;
	int status;             /* what it was answered */
};

#define MAXREQ 512

struct server {
	int lfd, port;
	pthread_t thread;
	pthread_mutex_t mu;
	volatile bool stop;
	const struct answer *script;    /* answered in turn, then dflt */
	size_t nscript, next;
	struct answer dflt;
	struct request req[MAXREQ];
	size_t nreq;
	int conns;
};

extern struct server srv;
extern char err[1024];

static const struct answer A204 = { .status = 204 };

void sleep_ms(unsigned ms);
double now_s(void);
void server_start(const struct answer *script, size_t n, struct answer dflt);
void server_stop(void);
char *bodies(int status);
size_t nrequests(void);
void wait_requests(size_t n);
struct isp_channel *open_on(int port, const char *const *extra);
struct isp_channel *must_open(int port, const char *const *extra);
void put(struct isp_channel *ch, const char *text);
void put_n(struct isp_channel *ch, int from, int to);
char *expect_n(int from, int to);
struct isp_channel_stats stats(const struct isp_channel *ch);
void cap_start(void);
char *cap_end(void);
int dead_port(void);

#endif
