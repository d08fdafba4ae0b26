/*
 * expr.h - compiled rule expressions and their evaluation on a packet.
 *
 * The rule compiler turns `where`, `select` arguments and the like into
 * small trees of `struct cx` whose attribute leaves name a *slot*: one slot
 * per distinct attribute of the whole rule set. A packet's slots are
 * fetched lazily, at most once per packet (a generation counter marks them
 * stale), so a packet pays only for the attributes its rules reach.
 *
 * Values inside expressions (struct xval): integers (int64), floats,
 * IPv4/IPv6/MAC addresses, strings. A timestamp attribute's value is in
 * microseconds since the epoch (as MMT-Probe counts). A per-hop attribute
 * used without an index stands for "the current hop" inside any()/all()
 * and inside aggregations, which run once per hop.
 */
#ifndef ISP_FILTERS_EXPR_H
#define ISP_FILTERS_EXPR_H

#include <stdbool.h>
#include <stdint.h>

#include "../core/registry.h"

enum xkind { XK_NONE, XK_INT, XK_FLOAT, XK_ADDR4, XK_ADDR6, XK_MAC, XK_STR };

struct xval {
	uint8_t k;              /* enum xkind */
	union {
		int64_t i;
		double f;
		uint32_t a4;
		uint8_t a6[16];
		const char *s;
	} u;
};

enum cx_op {
	CX_CONST, CX_ATTR, CX_PRESENT,
	CX_EQ, CX_NE, CX_LT, CX_LE, CX_GT, CX_GE,
	CX_ADD, CX_SUB, CX_MUL, CX_DIV, CX_MOD,
	CX_AND, CX_OR, CX_NOT, CX_NEG, CX_IN, CX_ANY, CX_ALL,
};

#define CX_HOP_CURRENT (-1)     /* per-hop attribute: the hop being visited */
#define CX_SCALAR (-2)          /* scalar attribute */

struct cx {
	uint8_t op;             /* enum cx_op */
	uint8_t prefix;         /* CX_CONST address: prefix length, 255 = none */
	int16_t slot;           /* CX_ATTR, CX_PRESENT */
	int16_t index;          /* CX_ATTR, CX_PRESENT: hop index, CX_HOP_CURRENT or CX_SCALAR */
	int16_t hop_slot;       /* CX_ANY/CX_ALL: a per-hop slot that sets the hop count */
	struct xval k;          /* CX_CONST */
	struct cx *a, *b;
	struct cx **args;       /* CX_IN */
	uint16_t nargs;
};

/* Where a slot's value comes from. */
enum slot_from {
	SLOT_LAYER,             /* the getter, on the attribute's layer */
	SLOT_META,              /* the getter, without a layer: meta.* */
	SLOT_SUM,               /* ISP_SUM_OF: the elements of slot sum_of added up */
};

/* Per-worker cache of attribute values for the current packet. */
struct slot {
	uint32_t gen;
	bool present;
	/* where the value comes from, resolved once (isp_attr_get's chain of
	 * loads, registry to descriptor, done per fetch before) */
	uint8_t from;           /* enum slot_from */
	uint8_t instance;       /* 0 = innermost */
	uint8_t type;           /* SLOT_SUM: the sum's type */
	uint16_t proto;
	isp_get_fn get;
	uintptr_t arg;
	struct slot *sum_of;    /* SLOT_SUM: the per-hop attribute's slot */
	isp_put_fn put;         /* the attribute's put (SLOT_LAYER, innermost
				   instance, numbers per hop), or NULL */
	struct isp_value v;
};

struct slot_cache {
	const struct isp_registry *reg;
	const struct isp_attr_ref *refs;
	unsigned n;
	struct slot *s;
	uint32_t gen;
};

struct cx_ctx {
	struct slot_cache *sc;
	const struct isp_packet *pkt;
	int hop;                /* hop being visited, or -1 */
};

int slot_cache_init(struct slot_cache *sc, const struct isp_registry *reg,
		    const struct isp_attr_ref *refs, unsigned n);
void slot_cache_free(struct slot_cache *sc);

/* Start a new packet: every slot becomes stale. */
static inline void slot_cache_next(struct slot_cache *sc)
{
	if (++sc->gen == 0) {   /* wrapped: make every slot stale for real */
		for (unsigned i = 0; i < sc->n; i++)
			sc->s[i].gen = 0;
		sc->gen = 1;
	}
}

/* A SLOT_SUM slot's value, from its per-hop slot (out of line: it
 * fetches that slot, and few slots are sums). */
bool slot_sum(struct slot_cache *sc, const struct isp_packet *p, struct slot *s);

/* slot_get's first call for a slot in a packet: fetch. Inline: a record
 * fetches a dozen attributes a packet, and the call cost a tenth of each. */
static inline __attribute__((always_inline)) void slot_fill(struct slot_cache *sc,
								 const struct isp_packet *p,
								 struct slot *s)
{
	const struct isp_layer *l = NULL;

	s->gen = sc->gen;
	/* isp_attr_get, with what it looks up per fetch resolved in the slot */
	if (s->from == SLOT_LAYER) {
		if (!(p->protos >> s->proto & 1)) {
			s->present = false;
			return;
		}
		l = s->instance == 0 ? &p->layer[p->last[s->proto]]
				     : isp_attr_layer(p, &sc->refs[s - sc->s]);
		if (!l) {
			s->present = false;
			return;
		}
	} else if (s->from == SLOT_SUM) {
		s->present = slot_sum(sc, p, s);
		return;
	}
	s->present = s->get(p, l, s->arg, &s->v);
}

/* The value of slot s (&sc->s[its number]) for the current packet, or
 * NULL when absent. Inline: rules ask for their slots several times a
 * packet and, but for the first time, the answer is two loads and a
 * compare. A caller that fetches the same slots on every packet keeps
 * their addresses (the cache's array stays where it is). */
static inline const struct isp_value *slot_value(struct slot_cache *sc, const struct isp_packet *p,
						 struct slot *s)
{
	if (s->gen != sc->gen)
		slot_fill(sc, p, s);
	return s->present ? &s->v : NULL;
}

/* The layer a record writer hands slot s's put (isp_put_fn), or NULL:
 * the slot has one, no rule read it in this packet (gen: the cache's
 * generation) and its protocol is in the packet (protos: p->protos).
 * gen and protos come from the caller's locals: a writer's stores to its
 * text could be to anything, and would have them read again a slot. */
static inline __attribute__((always_inline)) const struct isp_layer *
slot_put_layer(const struct slot *s, uint32_t gen, uint64_t protos, const struct isp_packet *p)
{
	if (!s->put || s->gen == gen || !(protos >> s->proto & 1))
		return NULL;
	return &p->layer[p->last[s->proto]];
}

/* The same by the slot's number. */
static inline const struct isp_value *slot_get(struct slot_cache *sc, const struct isp_packet *p,
					       unsigned slot)
{
	return slot_value(sc, p, &sc->s[slot]);
}

/* false when the slot's value is surely absent from the packet: its
 * protocol is not there (meta attributes: always maybe). */
static inline bool slot_may_be_present(const struct slot_cache *sc, const struct isp_packet *p,
				       unsigned slot)
{
	uint16_t proto = sc->refs[slot].proto;

	return proto == sc->reg->meta || (p->protos >> proto & 1);
}

/* Element `hop` (or the scalar when index is CX_SCALAR) as an xval. */
bool xval_from_value(const struct isp_value *v, int hop, struct xval *out);

/* Evaluate; false when the value is missing (an absent attribute). */
bool cx_eval(const struct cx *e, struct cx_ctx *c, struct xval *out);

/* Boolean evaluation: missing is false. */
bool cx_true(const struct cx *e, struct cx_ctx *c);

/* Numeric view of a value (addresses and strings are not numbers). */
bool xval_number(const struct xval *v, double *f);

void cx_free(struct cx *e);

#endif
