/*
 * spsc.h - single-producer single-consumer ring of variable-size messages
 * (packets and control markers) from the reader to one worker.
 *
 * Lock-free: the producer owns `tail`, the consumer owns `head`, each
 * published with a release store and read with an acquire load. Messages
 * are 8-byte aligned; one that does not fit before the end of the buffer
 * leaves a wrap marker and starts again at 0. Bytes are copied in once and
 * read in place.
 */
#ifndef ISP_SPSC_H
#define ISP_SPSC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

enum spsc_kind { SPSC_PACKET = 1, SPSC_TICK, SPSC_END, SPSC_WRAP, SPSC_BATCH, SPSC_VALUES };

struct spsc_msg {
	uint32_t size;          /* bytes of this message, header included, aligned */
	uint8_t kind;           /* enum spsc_kind */
	uint8_t report_index;   /* which individual report of the packet */
	uint8_t by_ref;         /* data holds a pointer to bytes that stay */
	uint8_t pad;
	uint32_t caplen, wirelen;
	uint64_t ts_ns;
	uint64_t index;         /* packet position in the input */
	uint64_t aux;           /* packet: which rules it is for; marker: its batch */
	uint8_t data[];
};

/*
 * Each side keeps its fields on its own cache line, with its last view of
 * the other side's position: it reads the other's line only when that view
 * says the ring is full (producer) or empty (consumer), not per message.
 */
struct spsc {
	_Alignas(64) _Atomic size_t tail;       /* producer: what the consumer may read */
	size_t tail_local;      /* producer: end of what it wrote */
	unsigned unpublished;   /* producer: messages written since tail was stored */
	size_t head_seen;       /* producer: head when last read */
	size_t skip;            /* producer: bytes skipped before the reserved message */
	_Alignas(64) _Atomic size_t head;       /* consumer */
	size_t tail_seen;       /* consumer: tail when last read */
	_Alignas(64) size_t cap;                /* read-only after init */
	uint8_t *buf;
};

int spsc_init(struct spsc *r, size_t cap);
void spsc_free(struct spsc *r);

/*
 * Producer: reserve room for a message with n data bytes; NULL when the
 * ring is full (try again, or drop and count). Fill it, then publish.
 * spsc_publish makes messages visible in batches (SPSC_BATCH at a time:
 * one store and one cache-line transfer per batch, not per message);
 * spsc_flush makes everything written visible now, as does
 * spsc_publish_now (control markers) and a reserve that finds the ring
 * full. A producer that goes idle must flush.
 */
#define SPSC_BATCH 16
struct spsc_msg *spsc_reserve(struct spsc *r, size_t n);
void spsc_publish(struct spsc *r, struct spsc_msg *m);
void spsc_publish_now(struct spsc *r, struct spsc_msg *m);
void spsc_flush(struct spsc *r);

/* Consumer: the oldest message, or NULL when empty; release it after use. */
struct spsc_msg *spsc_peek(struct spsc *r);
void spsc_release(struct spsc *r, struct spsc_msg *m);

/* Start a pipeline thread with every signal blocked, so that signals
 * reach the main thread, whose handlers set its flags. */
int spsc_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

/* Waiting on a ring: spin, then yield, then sleep, so an idle side does
 * not burn the core the other side needs. */
static inline void spsc_pause(unsigned *spins)
{
	if (++*spins < 64)
		return;
	if (*spins < 256) {
		sched_yield();
		return;
	}
	struct timespec ts = { 0, 50000 };
	nanosleep(&ts, NULL);
}

#endif
