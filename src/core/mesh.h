/*
 * mesh.h - how workers hand items to each other: an N x N mesh of
 * single-producer single-consumer rings, item messages, and the FIFOs a
 * worker keeps in its own memory.
 *
 * An item (a packet, or one report of a coalesced report) travels
 * dissected: the receiver does not dissect again. Its bytes are copied
 * into the message, or, when they stay valid for the whole run (a
 * memory-mapped capture), only pointed to.
 *
 * No wait can deadlock: a worker that waits for anything (room in a ring,
 * a barrier, its turn) first moves what others sent it out of its inbound
 * rings into its own FIFOs (isp_mesh_spill), so every sender can go on.
 * The receiver reads a FIFO before its ring, so order is kept.
 */
#ifndef ISP_MESH_H
#define ISP_MESH_H

#include "dissect.h"
#include "spsc.h"

/* The symmetric hash of an item's innermost address pair (both directions
 * of a flow give the same), 0 for an item without addresses; ip4 and ip6
 * are the address layers' protocol ids. */
uint64_t isp_item_hash(const struct isp_packet *p, uint16_t ip4, uint16_t ip6);

/* An item into a message (isp_item_msg_size(p, by_ref) data bytes) and
 * back; the packet read back points into the message (or, by reference,
 * to the original bytes), which must stay until it is handled. */
size_t isp_item_msg_size(const struct isp_packet *p, bool by_ref);
void isp_item_to_msg(struct spsc_msg *m, const struct isp_packet *p, bool by_ref, uint64_t aux);
void isp_item_from_msg(struct isp_packet *p, const struct spsc_msg *m);

/* An item as the values its rules read (ops.pack, n bytes) and back: the
 * packet read back has the item's time, position and lengths, no layer
 * and no byte; its values are m->data, m->caplen bytes. */
void isp_values_to_msg(struct spsc_msg *m, const struct isp_packet *p, const uint8_t *vals,
		       size_t n, uint64_t aux);
void isp_values_head(struct isp_packet *p, const struct spsc_msg *m);

/* A FIFO of messages in a worker's own memory (grows; kept between uses). */
struct isp_fifo {
	uint8_t *buf;
	size_t head, len, cap;
};

/* Room for a message of n data bytes at the end; NULL when out of memory. */
struct spsc_msg *isp_fifo_push(struct isp_fifo *f, size_t n);
/* The oldest message or NULL; isp_fifo_pop drops it. */
static inline struct spsc_msg *isp_fifo_peek(struct isp_fifo *f)
{
	return f->head < f->len ? (struct spsc_msg *)(f->buf + f->head) : NULL;
}
void isp_fifo_pop(struct isp_fifo *f);
void isp_fifo_free(struct isp_fifo *f);

struct isp_mesh;

/* n workers, rings of ring_bytes from each to each other; NULL when out of
 * memory. */
struct isp_mesh *isp_mesh_new(unsigned n, size_t ring_bytes);
void isp_mesh_free(struct isp_mesh *m);

/*
 * Sender side (worker `from` only). A message of n data bytes to `to`:
 * NULL when the ring is full and !wait (a live input drops and counts);
 * with wait, `from` spills its own inbound rings while it waits. Fill it,
 * then isp_mesh_publish (visible in batches) or isp_mesh_publish_now.
 */
struct spsc_msg *isp_mesh_reserve(struct isp_mesh *m, unsigned from, unsigned to, size_t n,
				  bool wait);
void isp_mesh_publish(struct isp_mesh *m, unsigned from, unsigned to, struct spsc_msg *msg);
void isp_mesh_publish_now(struct isp_mesh *m, unsigned from, unsigned to, struct spsc_msg *msg);
/* A marker (kind, ts, aux) to every other worker, visible now. */
void isp_mesh_broadcast(struct isp_mesh *m, unsigned from, uint8_t kind, uint64_t ts, uint64_t aux);
/* Make everything `from` sent visible. */
void isp_mesh_flush(struct isp_mesh *m, unsigned from);

/* Receiver side (worker `to` only): the oldest message from `from`, or
 * NULL; release it once handled (before any wait). */
struct spsc_msg *isp_mesh_peek(struct isp_mesh *m, unsigned from, unsigned to);
void isp_mesh_release(struct isp_mesh *m, unsigned from, unsigned to, struct spsc_msg *msg);

/* Move everything waiting in `to`'s inbound rings into its FIFOs. */
void isp_mesh_spill(struct isp_mesh *m, unsigned to);

/* One step of a wait of worker `me` (spsc_pause; past a short while it
 * spills, so that whoever it waits for can go on). */
void isp_mesh_wait(struct isp_mesh *m, unsigned me, unsigned *spins);

/* Messages spilled so far (a counter: rings too small for the input). */
uint64_t isp_mesh_spilled(const struct isp_mesh *m);

#endif
