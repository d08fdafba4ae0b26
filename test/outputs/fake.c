/*
 * fake.c - the "fake" channel type of the channel tests (fake.h).
 */
#include "fake.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../outputs/kv.h"

struct fake F = {
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.cv = PTHREAD_COND_INITIALIZER,
};

static int fake_open(void **state, const struct isp_channel_cfg *cfg,
		     int *bad_kv, char *err, size_t errlen)
{
	static const char *const known[] = { "tag", NULL };
	int i;

	if (isp_kv_check_known(cfg, known, bad_kv, err, errlen) != 0)
		return -1;
	i = isp_kv_find(cfg, "tag");
	if (i >= 0 && strcmp(cfg->kv[i].value, "bad") == 0) {
		*bad_kv = i;
		snprintf(err, errlen, "tag must not be 'bad'");
		return -1;
	}
	pthread_mutex_lock(&F.mu);
	F.opens++;
	F.open_nkv = cfg->nkv;
	if (cfg->params)
		F.open_params = *cfg->params;
	pthread_mutex_unlock(&F.mu);
	*state = &F;
	return 0;
}

static char *dup_n(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (!d)
		abort();
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

static void keep(const struct isp_record *r)
{
	if (F.verify) {
		unsigned p;
		unsigned long long seq;

		if (sscanf(r->text, "p%u %llu", &p, &seq) != 2 || p >= FAKE_PRODUCERS) {
			F.order_ok = false;
			return;
		}
		if (seq < F.next_seq[p])
			F.order_ok = false;
		if (seq != F.next_seq[p])
			F.gapless = false;
		F.next_seq[p] = seq + 1;
		return;
	}
	if (F.n == F.cap) {
		F.cap = F.cap ? F.cap * 2 : 256;
		F.text = realloc(F.text, F.cap * sizeof(*F.text));
		F.report = realloc(F.report, F.cap * sizeof(*F.report));
		F.key = realloc(F.key, F.cap * sizeof(*F.key));
		if (!F.text || !F.report || !F.key)
			abort();
	}
	F.text[F.n] = dup_n(r->text, r->len);
	F.report[F.n] = dup_n(r->report, strlen(r->report));
	F.key[F.n] = dup_n(r->key, r->key_len);
	F.n++;
}

static size_t fake_write(void *state, const struct isp_record *recs, size_t n)
{
	size_t k = n;

	(void)state;
	pthread_mutex_lock(&F.mu);
	if (F.calls < sizeof(F.call_ms) / sizeof(F.call_ms[0])) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		F.call_ms[F.calls] = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
	}
	F.calls++;
	if (F.nbatch < sizeof(F.batch) / sizeof(F.batch[0]))
		F.batch[F.nbatch++] = n;
	F.in_write = true;
	pthread_cond_broadcast(&F.cv);
	while (F.block)
		pthread_cond_wait(&F.cv, &F.mu);
	F.in_write = false;
	if (F.fail_calls != 0) {
		if (F.fail_calls > 0)
			F.fail_calls--;
		k = 0;
	}
	if (F.per_call && k > F.per_call)
		k = F.per_call;
	if (F.total_limit && F.delivered + k > F.total_limit)
		k = (size_t)(F.total_limit - F.delivered);
	for (size_t i = 0; i < k; i++)
		keep(&recs[i]);
	F.delivered += k;
	pthread_mutex_unlock(&F.mu);
	return k;
}

static int fake_flush(void *state)
{
	(void)state;
	pthread_mutex_lock(&F.mu);
	F.flushes++;
	pthread_mutex_unlock(&F.mu);
	return 0;
}

static void fake_close(void *state)
{
	(void)state;
	pthread_mutex_lock(&F.mu);
	F.closes++;
	pthread_mutex_unlock(&F.mu);
}

const struct isp_channel_ops fake_ops = {
	.type = "fake",
	.open = fake_open,
	.write_batch = fake_write,
	.flush = fake_flush,
	.close = fake_close,
};

void fake_reset(void)
{
	pthread_mutex_lock(&F.mu);
	for (size_t i = 0; i < F.n; i++) {
		free(F.text[i]);
		free(F.report[i]);
		free(F.key[i]);
	}
	free(F.text);
	free(F.report);
	free(F.key);
	F.text = F.report = F.key = NULL;
	F.n = F.cap = 0;
	F.block = F.verify = F.in_write = false;
	F.fail_calls = 0;
	F.per_call = F.total_limit = 0;
	F.calls = F.flushes = F.opens = F.closes = 0;
	F.open_nkv = 0;
	memset(&F.open_params, 0, sizeof(F.open_params));
	F.nbatch = 0;
	F.delivered = 0;
	memset(F.next_seq, 0, sizeof(F.next_seq));
	F.order_ok = F.gapless = true;
	pthread_mutex_unlock(&F.mu);
}

void fake_set_block(bool b)
{
	pthread_mutex_lock(&F.mu);
	F.block = b;
	pthread_cond_broadcast(&F.cv);
	pthread_mutex_unlock(&F.mu);
}

void fake_set_fail(int calls)
{
	pthread_mutex_lock(&F.mu);
	F.fail_calls = calls;
	pthread_mutex_unlock(&F.mu);
}

bool fake_wait_in_write(void)
{
	struct timespec ts;
	bool ok = true;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 5;
	pthread_mutex_lock(&F.mu);
	while (!F.in_write && ok)
		ok = pthread_cond_timedwait(&F.cv, &F.mu, &ts) == 0;
	ok = F.in_write;
	pthread_mutex_unlock(&F.mu);
	return ok;
}

uint64_t fake_delivered(void)
{
	uint64_t d;

	pthread_mutex_lock(&F.mu);
	d = F.delivered;
	pthread_mutex_unlock(&F.mu);
	return d;
}

unsigned fake_flushes(void)
{
	unsigned n;

	pthread_mutex_lock(&F.mu);
	n = F.flushes;
	pthread_mutex_unlock(&F.mu);
	return n;
}
