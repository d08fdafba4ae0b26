/*
 * workers.c - see workers.h.
 */
#include "workers.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "spsc.h"

struct worker {
	struct isp_workers *owner;
	unsigned id;
	void *ctx;
	struct spsc ring;
	pthread_t thread;
	bool started;
	struct isp_packet pkt;
	_Alignas(64) _Atomic uint64_t ticks_done;
};

struct isp_workers {
	unsigned n;
	const struct isp_registry *reg;
	uint16_t first;
	uint16_t ip4, ip6;      /* protocol ids of the address layers */
	struct isp_worker_ops ops;
	uint64_t ticks;         /* ticks sent */
	_Atomic uint64_t dropped;
	struct worker w[];
};

/*
 * An item travels dissected: its bytes, then the packet's fields and the
 * layers it uses (states are offsets, never pointers, so they hold for
 * the copy). The receiver does not dissect again: that was the larger
 * part of what a second thread cost.
 */
#define PKT_HEAD offsetof(struct isp_packet, layer)
#define PKT_TAIL_OFF (offsetof(struct isp_packet, layer) + sizeof(((struct isp_packet *)0)->layer))
#define PKT_TAIL (sizeof(struct isp_packet) - PKT_TAIL_OFF)

static size_t bytes_room(uint32_t caplen)
{
	return ((size_t)caplen + 7) & ~(size_t)7;
}

size_t isp_item_msg_size(const struct isp_packet *p)
{
	return bytes_room(p->caplen) + PKT_HEAD + p->nlayers * sizeof(struct isp_layer) + PKT_TAIL;
}

void isp_item_from_msg(struct isp_packet *p, const struct spsc_msg *m)
{
	const uint8_t *q = m->data + bytes_room(m->caplen);

	memcpy(p, q, PKT_HEAD);
	q += PKT_HEAD;
	memcpy(p->layer, q, p->nlayers * sizeof(struct isp_layer));
	q += p->nlayers * sizeof(struct isp_layer);
	memcpy((uint8_t *)p + PKT_TAIL_OFF, q, PKT_TAIL);
	p->data = m->data;
}

void isp_item_to_msg(struct spsc_msg *m, const struct isp_packet *p)
{
	uint8_t *q = m->data + bytes_room(p->caplen);

	m->kind = SPSC_PACKET;
	m->report_index = p->report_index;
	m->caplen = p->caplen;
	m->wirelen = p->wirelen;
	m->ts_ns = p->ts_ns;
	m->index = p->index;
	memcpy(m->data, p->data, p->caplen);
	memcpy(q, p, PKT_HEAD);
	q += PKT_HEAD;
	memcpy(q, p->layer, p->nlayers * sizeof(struct isp_layer));
	q += p->nlayers * sizeof(struct isp_layer);
	memcpy(q, (const uint8_t *)p + PKT_TAIL_OFF, PKT_TAIL);
}

static void handle_packet(struct worker *wk, const struct spsc_msg *m)
{
	isp_item_from_msg(&wk->pkt, m);
	wk->owner->ops.packet(wk->ctx, &wk->pkt);
}

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	unsigned spins = 0;

	for (;;) {
		struct spsc_msg *m = spsc_peek(&wk->ring);
		if (!m) {
			spsc_pause(&spins);
			continue;
		}
		spins = 0;
		switch (m->kind) {
		case SPSC_PACKET:
			handle_packet(wk, m);
			break;
		case SPSC_TICK:
			wk->owner->ops.tick(wk->ctx, m->ts_ns);
			atomic_fetch_add_explicit(&wk->ticks_done, 1, memory_order_release);
			break;
		case SPSC_END:
			spsc_release(&wk->ring, m);
			return NULL;
		}
		spsc_release(&wk->ring, m);
	}
}

struct isp_workers *isp_workers_start(unsigned n, const struct isp_registry *reg,
				      uint16_t first_proto, const struct isp_worker_ops *ops,
				      void *const *ctx, size_t ring_bytes)
{
	struct isp_workers *w = calloc(1, sizeof(*w) + n * sizeof(w->w[0]));

	if (!w)
		return NULL;
	w->n = n;
	w->reg = reg;
	w->first = first_proto;
	w->ip4 = isp_proto_id(reg, "ip");
	w->ip6 = isp_proto_id(reg, "ipv6");
	w->ops = *ops;
	for (unsigned i = 0; i < n; i++) {
		struct worker *wk = &w->w[i];
		wk->owner = w;
		wk->id = i;
		wk->ctx = ctx[i];
		if (spsc_init(&wk->ring, ring_bytes) != 0 ||
		    spsc_thread_start(&wk->thread, worker_main, wk) != 0) {
			isp_workers_stop(w);
			return NULL;
		}
		wk->started = true;
	}
	return w;
}

uint64_t isp_item_hash(const struct isp_packet *p, uint16_t ip4, uint16_t ip6)
{
	const uint8_t *a = NULL, *b = NULL;
	size_t len = 0;

	for (int i = p->nlayers - 1; i >= 0 && !a; i--) {
		const struct isp_layer *l = &p->layer[i];
		if (l->proto == ip4 && l->len >= 20) {
			a = p->data + l->off + 12;
			b = a + 4;
			len = 4;
		} else if (l->proto == ip6 && l->len >= 40) {
			a = p->data + l->off + 8;
			b = a + 16;
			len = 16;
		}
	}
	if (!a)
		return 0;
	/* symmetric: the same for both directions */
	uint64_t h1 = 0, h2 = 0;
	for (size_t i = 0; i < len; i++) {
		h1 = h1 * 131 + a[i];
		h2 = h2 * 131 + b[i];
	}
	uint64_t h = (h1 ^ h2) + (h1 < h2 ? h1 : h2) * 0x9e3779b97f4a7c15ull;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 32;
	return h;
}

unsigned isp_item_owner(const struct isp_packet *p, uint16_t ip4, uint16_t ip6, unsigned n)
{
	return (unsigned)(isp_item_hash(p, ip4, ip6) % n);
}

unsigned isp_workers_pick(const struct isp_workers *w, const struct isp_packet *p)
{
	return isp_item_owner(p, w->ip4, w->ip6, w->n);
}

static struct spsc_msg *reserve(struct isp_workers *w, unsigned i, size_t n, bool wait)
{
	unsigned spins = 0;
	struct spsc_msg *m;

	while (!(m = spsc_reserve(&w->w[i].ring, n))) {
		if (!wait)
			return NULL;
		spsc_pause(&spins);
	}
	return m;
}

bool isp_workers_dispatch(struct isp_workers *w, unsigned i, const struct isp_packet *p,
			  bool wait)
{
	struct spsc_msg *m = reserve(w, i, isp_item_msg_size(p), wait);

	if (!m) {
		atomic_fetch_add_explicit(&w->dropped, 1, memory_order_relaxed);
		return false;
	}
	isp_item_to_msg(m, p);
	spsc_publish(&w->w[i].ring, m);
	return true;
}

void isp_workers_tick(struct isp_workers *w, uint64_t now_ns)
{
	w->ticks++;
	for (unsigned i = 0; i < w->n; i++) {
		struct spsc_msg *m = reserve(w, i, 0, true);
		m->kind = SPSC_TICK;
		m->ts_ns = now_ns;
		spsc_publish_now(&w->w[i].ring, m);
	}
	for (unsigned i = 0; i < w->n; i++) {
		unsigned spins = 0;
		while (atomic_load_explicit(&w->w[i].ticks_done, memory_order_acquire) < w->ticks)
			spsc_pause(&spins);
	}
}

void isp_workers_flush(struct isp_workers *w)
{
	for (unsigned i = 0; i < w->n; i++)
		spsc_flush(&w->w[i].ring);
}

uint64_t isp_workers_dropped(const struct isp_workers *w)
{
	return atomic_load_explicit(&w->dropped, memory_order_relaxed);
}

void isp_workers_stop(struct isp_workers *w)
{
	if (!w)
		return;
	for (unsigned i = 0; i < w->n; i++) {
		struct worker *wk = &w->w[i];
		if (!wk->started)
			continue;
		struct spsc_msg *m = reserve(w, i, 0, true);
		m->kind = SPSC_END;
		spsc_publish_now(&wk->ring, m);
		pthread_join(wk->thread, NULL);
	}
	for (unsigned i = 0; i < w->n; i++)
		spsc_free(&w->w[i].ring);
	free(w);
}
