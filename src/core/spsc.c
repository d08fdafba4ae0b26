/*
 * spsc.c - see spsc.h. Positions are free-running byte counts; a message
 * sits at position % cap.
 */
#include "spsc.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define HDR sizeof(struct spsc_msg)

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

int spsc_init(struct spsc *r, size_t cap)
{
	memset(r, 0, sizeof(*r));
	r->cap = align8(cap);
	r->buf = aligned_alloc(64, r->cap);
	return r->buf ? 0 : -1;
}

void spsc_free(struct spsc *r)
{
	free(r->buf);
	r->buf = NULL;
}

struct spsc_msg *spsc_reserve(struct spsc *r, size_t n)
{
	size_t need = align8(HDR + n);
	size_t tail = r->tail_local;
	size_t off = tail % r->cap;
	size_t skip = off + need > r->cap ? r->cap - off : 0;

	if (need > r->cap / 2)
		return NULL;
	if ((tail - r->head_seen) + skip + need > r->cap) {
		r->head_seen = atomic_load_explicit(&r->head, memory_order_acquire);
		if ((tail - r->head_seen) + skip + need > r->cap) {
			spsc_flush(r);  /* the consumer must see all to make room */
			return NULL;
		}
	}
	if (skip >= HDR) {      /* a marker tells the consumer to go back to 0 */
		struct spsc_msg *w = (struct spsc_msg *)(r->buf + off);
		w->size = (uint32_t)skip;
		w->kind = SPSC_WRAP;
	}
	r->skip = skip;
	struct spsc_msg *m = (struct spsc_msg *)(r->buf + (skip ? 0 : off));
	m->size = (uint32_t)need;
	return m;
}

void spsc_flush(struct spsc *r)
{
	if (r->unpublished) {
		atomic_store_explicit(&r->tail, r->tail_local, memory_order_release);
		r->unpublished = 0;
	}
}

void spsc_publish(struct spsc *r, struct spsc_msg *m)
{
	r->tail_local += r->skip + m->size;
	r->skip = 0;
	if (++r->unpublished >= SPSC_BATCH)
		spsc_flush(r);
}

void spsc_publish_now(struct spsc *r, struct spsc_msg *m)
{
	spsc_publish(r, m);
	spsc_flush(r);
}

struct spsc_msg *spsc_peek(struct spsc *r)
{
	for (;;) {
		size_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
		if (head == r->tail_seen) {
			r->tail_seen = atomic_load_explicit(&r->tail, memory_order_acquire);
			if (head == r->tail_seen)
				return NULL;
		}
		size_t off = head % r->cap;
		if (r->cap - off < HDR) {       /* too little room for a marker: wrap */
			atomic_store_explicit(&r->head, head + (r->cap - off), memory_order_release);
			continue;
		}
		struct spsc_msg *m = (struct spsc_msg *)(r->buf + off);
		if (m->kind == SPSC_WRAP) {
			atomic_store_explicit(&r->head, head + m->size, memory_order_release);
			continue;
		}
		return m;
	}
}

void spsc_release(struct spsc *r, struct spsc_msg *m)
{
	size_t head = atomic_load_explicit(&r->head, memory_order_relaxed);

	atomic_store_explicit(&r->head, head + m->size, memory_order_release);
}

int spsc_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}
