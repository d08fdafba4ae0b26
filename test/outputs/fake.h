/*
 * fake.h - a channel type for the channel-layer tests, registered as
 * "fake". It records what it is given (or, in verify mode, only checks
 * per-producer order, for big runs), and can be told to block inside
 * write_batch, to fail a number of calls, to deliver only part of a batch,
 * or to stop delivering after a total. All of it under one mutex, so the
 * tests read it race-free.
 */
#ifndef ISP_TEST_FAKE_H
#define ISP_TEST_FAKE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../outputs/channel.h"

#define FAKE_PRODUCERS 8

struct fake {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* controls (set by the test) */
	bool block;             /* write_batch waits while set */
	int fail_calls;         /* next N calls deliver nothing; -1: forever */
	size_t per_call;        /* deliver at most this many per call (0: all) */
	size_t total_limit;     /* stop delivering after this many (0: never) */
	bool verify;            /* check "pP SEQ" order instead of storing */
	/* observations */
	bool in_write;
	unsigned calls, flushes, opens, closes;
	size_t open_nkv;
	struct isp_channel_params open_params;
	char **text;            /* stored records (not in verify mode) */
	char **report, **key;
	size_t n, cap;
	size_t batch[4096];     /* sizes of the first calls */
	double call_ms[64];     /* when the first calls came (CLOCK_MONOTONIC) */
	size_t nbatch;
	uint64_t delivered;
	uint64_t next_seq[FAKE_PRODUCERS];
	bool order_ok;          /* verify: per-producer sequence increased */
	bool gapless;           /* verify: and without gaps */
};

extern struct fake F;
extern const struct isp_channel_ops fake_ops;

/* Reset F (free what it stored). */
void fake_reset(void);
/* Set a control under the lock and wake a blocked write_batch. */
void fake_set_block(bool b);
void fake_set_fail(int calls);
/* Wait (up to 5 s) until write_batch is blocked; false on timeout. */
bool fake_wait_in_write(void);
/* Snapshot of F.delivered / F.flushes under the lock. */
uint64_t fake_delivered(void);
unsigned fake_flushes(void);

#endif
