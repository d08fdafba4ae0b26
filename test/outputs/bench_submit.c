/*
 * bench_submit.c - cost of isp_channel_submit on the producer side.
 *
 * A channel of a "discard" type (write_batch accepts everything) is fed N
 * records of a given size by P producer threads; prints the producer-side
 * time per record and the counters. Not a test (timing depends on the
 * machine); built by `make check`, run by hand:
 *     test/outputs/bench_submit [records [bytes [producers [queue-bytes
 *                                [drop-policy [copy|inplace]]]]]]
 * inplace: each record written in the queue (isp_channel_reserve and
 * commit, the way the engine hands over a per-packet event record),
 * submitted when reserve declines.
 * A large queue (default 256M) grows during the run as records wait
 * (copies and page faults); a small one with drop-policy=block shows the
 * steady state.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../outputs/channel.h"
#include "tcfg.h"

static size_t discard_write(void *state, const struct isp_record *recs, size_t n)
{
	(void)state;
	(void)recs;
	return n;
}

static int discard_open(void **state, const struct isp_channel_cfg *cfg,
			int *bad_kv, char *err, size_t errlen)
{
	(void)cfg;
	(void)bad_kv;
	(void)err;
	(void)errlen;
	*state = NULL;
	return 0;
}

static const struct isp_channel_ops discard_ops = {
	.type = "discard",
	.open = discard_open,
	.write_batch = discard_write,
};

struct job {
	struct isp_channel *ch;
	unsigned long n;
	size_t bytes;
	bool inplace;
	double ns;
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void *produce(void *arg)
{
	struct job *j = arg;
	char *text = malloc(j->bytes);
	double t0;

	if (!text)
		abort();
	memset(text, 'x', j->bytes);

	struct isp_record r = { .report = "bench", .key = "", .text = text,
				.len = j->bytes };

	t0 = now_ns();
	for (unsigned long i = 0; i < j->n; i++) {
		char *at = j->inplace ? isp_channel_reserve(j->ch, j, "bench", 5, "", 0, j->bytes)
				      : NULL;

		if (at) {
			memcpy(at, text, j->bytes);     /* the encoder's writes */
			isp_channel_commit(j->ch, j->bytes);
		} else {
			isp_channel_submit(j->ch, &r);
		}
	}
	j->ns = now_ns() - t0;
	free(text);
	return NULL;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000000;
	size_t bytes = argc > 2 ? strtoul(argv[2], NULL, 10) : 200;
	unsigned p = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 1;
	char qb[64], dp[64];
	const char *kvs[] = { "queue-records=1048576", qb, dp, NULL };
	struct isp_channel_stats st;
	struct job jobs[64];
	pthread_t t[64];
	char err[512];
	double worst = 0;
	bool inplace = argc > 6 && strcmp(argv[6], "inplace") == 0;

	if (p < 1 || p > 64)
		return 2;
	snprintf(qb, sizeof(qb), "queue-bytes=%s", argc > 4 ? argv[4] : "256M");
	snprintf(dp, sizeof(dp), "drop-policy=%s", argc > 5 ? argv[5] : "drop-newest");
	isp_channel_register_type(&discard_ops);

	struct isp_channel *ch = tcfg_open("discard", kvs, err, sizeof(err));

	if (!ch) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	for (unsigned i = 0; i < p; i++) {
		jobs[i] = (struct job){ ch, n / p, bytes, inplace, 0 };
		pthread_create(&t[i], NULL, produce, &jobs[i]);
	}
	for (unsigned i = 0; i < p; i++) {
		pthread_join(t[i], NULL);
		if (jobs[i].ns > worst)
			worst = jobs[i].ns;
	}
	isp_channel_drain(ch);
	isp_channel_get_stats(ch, &st);
	printf("%u producer(s), %lu records of %zu bytes%s: %.1f ns/record per producer, "
	       "%.2f Mrecords/s total; delivered %llu dropped %llu\n",
	       p, n / p * p, bytes, inplace ? " in place" : "", worst / (double)(n / p), (double)(n / p * p) / worst * 1e3,
	       (unsigned long long)st.delivered, (unsigned long long)st.dropped);
	isp_channel_close(ch);
	return 0;
}
