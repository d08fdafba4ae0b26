/*
 * mesh.c - see mesh.h.
 */
#include "mesh.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define HDR sizeof(struct spsc_msg)

/*
 * An item travels dissected: its bytes (or a pointer to them), then the
 * packet's fields and the layers it uses (states are offsets, never
 * pointers, so they hold for the copy).
 */
#define PKT_HEAD offsetof(struct isp_packet, layer)
#define PKT_TAIL_OFF (offsetof(struct isp_packet, layer) + sizeof(((struct isp_packet *)0)->layer))
#define PKT_TAIL (sizeof(struct isp_packet) - PKT_TAIL_OFF)

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static size_t bytes_room(uint32_t caplen, bool by_ref)
{
	return by_ref ? sizeof(const uint8_t *) : align8(caplen);
}

size_t isp_item_msg_size(const struct isp_packet *p, bool by_ref)
{
	return bytes_room(p->caplen, by_ref) + PKT_HEAD + p->nlayers * sizeof(struct isp_layer) +
	       PKT_TAIL;
}

void isp_item_to_msg(struct spsc_msg *m, const struct isp_packet *p, bool by_ref, uint64_t aux)
{
	uint8_t *q = m->data + bytes_room(p->caplen, by_ref);

	m->kind = SPSC_PACKET;
	m->report_index = p->report_index;
	m->by_ref = by_ref;
	m->caplen = p->caplen;
	m->wirelen = p->wirelen;
	m->ts_ns = p->ts_ns;
	m->index = p->index;
	m->aux = aux;
	if (by_ref)
		memcpy(m->data, &p->data, sizeof(p->data));
	else
		memcpy(m->data, p->data, p->caplen);
	memcpy(q, p, PKT_HEAD);
	q += PKT_HEAD;
	memcpy(q, p->layer, p->nlayers * sizeof(struct isp_layer));
	q += p->nlayers * sizeof(struct isp_layer);
	memcpy(q, (const uint8_t *)p + PKT_TAIL_OFF, PKT_TAIL);
}

void isp_item_from_msg(struct isp_packet *p, const struct spsc_msg *m)
{
	const uint8_t *q = m->data + bytes_room(m->caplen, m->by_ref);

	memcpy(p, q, PKT_HEAD);
	q += PKT_HEAD;
	memcpy(p->layer, q, p->nlayers * sizeof(struct isp_layer));
	q += p->nlayers * sizeof(struct isp_layer);
	memcpy((uint8_t *)p + PKT_TAIL_OFF, q, PKT_TAIL);
	if (m->by_ref)
		memcpy(&p->data, m->data, sizeof(p->data));
	else
		p->data = m->data;
}

void isp_values_to_msg(struct spsc_msg *m, const struct isp_packet *p, const uint8_t *vals,
		       size_t n, uint64_t aux)
{
	m->kind = SPSC_VALUES;
	m->report_index = p->report_index;
	m->by_ref = 0;
	m->caplen = (uint32_t)n;
	m->wirelen = p->wirelen;
	m->ts_ns = p->ts_ns;
	m->index = p->index;
	m->aux = aux;
	memcpy(m->data, vals, n);
}

void isp_values_head(struct isp_packet *p, const struct spsc_msg *m)
{
	p->data = NULL;
	p->caplen = 0;
	p->wirelen = m->wirelen;
	p->ts_ns = m->ts_ns;
	p->index = m->index;
	p->report_index = m->report_index;
	p->nlayers = 0;
	p->report_count = 0;
	p->malformed = 0;
	p->malformed_proto = 0;
	p->report_layer = 0xff;
	p->backlog = 0;
	p->protos = 0;
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

/* ---- FIFOs ---- */

struct spsc_msg *isp_fifo_push(struct isp_fifo *f, size_t n)
{
	size_t need = align8(HDR + n);

	if (f->len + need > f->cap && f->head) {       /* slide what is left to the front */
		memmove(f->buf, f->buf + f->head, f->len - f->head);
		f->len -= f->head;
		f->head = 0;
	}
	if (f->len + need > f->cap) {
		size_t cap = f->cap ? f->cap : 64 * 1024;
		while (cap < f->len + need)
			cap *= 2;
		uint8_t *b = realloc(f->buf, cap);
		if (!b)
			return NULL;
		f->buf = b;
		f->cap = cap;
	}
	struct spsc_msg *m = (struct spsc_msg *)(f->buf + f->len);
	m->size = (uint32_t)need;
	f->len += need;
	return m;
}

void isp_fifo_pop(struct isp_fifo *f)
{
	f->head += ((struct spsc_msg *)(f->buf + f->head))->size;
	if (f->head == f->len)
		f->head = f->len = 0;
}

void isp_fifo_free(struct isp_fifo *f)
{
	free(f->buf);
	memset(f, 0, sizeof(*f));
}

/* ---- the mesh ---- */

struct isp_mesh {
	unsigned n;
	struct spsc *ring;      /* ring[from * n + to] */
	struct isp_fifo *spill; /* spill[from * n + to]: the receiver's */
	_Atomic uint64_t spilled;
};

static struct spsc *ring_of(struct isp_mesh *m, unsigned from, unsigned to)
{
	return &m->ring[from * m->n + to];
}

struct isp_mesh *isp_mesh_new(unsigned n, size_t ring_bytes)
{
	struct isp_mesh *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->n = n;
	m->ring = calloc((size_t)n * n, sizeof(*m->ring));
	m->spill = calloc((size_t)n * n, sizeof(*m->spill));
	if (!m->ring || !m->spill) {
		isp_mesh_free(m);
		return NULL;
	}
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = 0; j < n; j++)
			if (i != j && spsc_init(ring_of(m, i, j), ring_bytes) != 0) {
				isp_mesh_free(m);
				return NULL;
			}
	return m;
}

void isp_mesh_free(struct isp_mesh *m)
{
	if (!m)
		return;
	for (unsigned i = 0; m->ring && i < m->n * m->n; i++)
		spsc_free(&m->ring[i]);
	for (unsigned i = 0; m->spill && i < m->n * m->n; i++)
		isp_fifo_free(&m->spill[i]);
	free(m->ring);
	free(m->spill);
	free(m);
}

struct spsc_msg *isp_mesh_reserve(struct isp_mesh *m, unsigned from, unsigned to, size_t n,
				  bool wait)
{
	struct spsc *r = ring_of(m, from, to);
	unsigned spins = 0;
	struct spsc_msg *msg;

	while (!(msg = spsc_reserve(r, n))) {
		if (!wait)
			return NULL;
		isp_mesh_wait(m, from, &spins);
	}
	msg->by_ref = 0;
	return msg;
}

void isp_mesh_publish(struct isp_mesh *m, unsigned from, unsigned to, struct spsc_msg *msg)
{
	spsc_publish(ring_of(m, from, to), msg);
}

void isp_mesh_publish_now(struct isp_mesh *m, unsigned from, unsigned to, struct spsc_msg *msg)
{
	spsc_publish_now(ring_of(m, from, to), msg);
}

void isp_mesh_broadcast(struct isp_mesh *m, unsigned from, uint8_t kind, uint64_t ts, uint64_t aux)
{
	for (unsigned to = 0; to < m->n; to++) {
		if (to == from)
			continue;
		struct spsc_msg *msg = isp_mesh_reserve(m, from, to, 0, true);
		msg->kind = kind;
		msg->ts_ns = ts;
		msg->aux = aux;
		spsc_publish_now(ring_of(m, from, to), msg);
	}
}

void isp_mesh_flush(struct isp_mesh *m, unsigned from)
{
	for (unsigned to = 0; to < m->n; to++)
		if (to != from)
			spsc_flush(ring_of(m, from, to));
}

struct spsc_msg *isp_mesh_peek(struct isp_mesh *m, unsigned from, unsigned to)
{
	struct spsc_msg *msg = isp_fifo_peek(&m->spill[from * m->n + to]);

	return msg ? msg : spsc_peek(ring_of(m, from, to));
}

void isp_mesh_release(struct isp_mesh *m, unsigned from, unsigned to, struct spsc_msg *msg)
{
	struct isp_fifo *f = &m->spill[from * m->n + to];

	if (f->head < f->len && msg == (struct spsc_msg *)(f->buf + f->head))
		isp_fifo_pop(f);
	else
		spsc_release(ring_of(m, from, to), msg);
}

void isp_mesh_spill(struct isp_mesh *m, unsigned to)
{
	for (unsigned from = 0; from < m->n; from++) {
		if (from == to)
			continue;
		struct spsc *r = ring_of(m, from, to);
		struct isp_fifo *f = &m->spill[from * m->n + to];
		struct spsc_msg *msg;
		uint64_t moved = 0;
		while ((msg = spsc_peek(r))) {
			struct spsc_msg *c = isp_fifo_push(f, msg->size - HDR);
			if (!c)
				break;  /* out of memory: the sender waits instead */
			memcpy(c, msg, msg->size);
			spsc_release(r, msg);
			moved++;
		}
		if (moved)
			atomic_fetch_add_explicit(&m->spilled, moved, memory_order_relaxed);
	}
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

void isp_mesh_wait(struct isp_mesh *m, unsigned me, unsigned *spins)
{
	/* Waits between workers are short (another worker finishing a batch:
	 * tens of microseconds): spin, then yield; only a long wait sleeps,
	 * and it may be a cycle of full rings, so it spills first. */
	unsigned s = ++*spins;

	if (s < 2048) {
		cpu_relax();
	} else if (s < 2304) {
		sched_yield();
	} else {
		isp_mesh_spill(m, me);
		struct timespec ts = { 0, 50000 };
		nanosleep(&ts, NULL);
	}
}

uint64_t isp_mesh_spilled(const struct isp_mesh *m)
{
	return atomic_load_explicit(&m->spilled, memory_order_relaxed);
}
