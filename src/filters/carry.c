/*
 * carry.c - an item that goes to another worker as the values its rules
 * read (engine_int.h: isp_engine_pack, isp_engine_item_packed), instead
 * of its dissection and its packet's bytes: a few dozen bytes where the
 * dissection was 370-600 and the packet's lines were read again on the
 * other core.
 *
 * The values are fetched where the item was dissected, by the getters the
 * owner would have called, and put in the owner's slot cache before its
 * rules run: the rules read the same values, through the same slots. A
 * rule goes as values only when the compiler listed every slot it reads
 * (struct rule_reads); the others (flow monitors, DTA, rules run with
 * the rest) still need the packet, which then travels whole.
 *
 * An entry: its slot and its value's length (2 bytes each, in the host's
 * order: they never leave the process; ABSENT for no value), then the
 * value's first 8 bytes (type, is_array, count, missing, as struct
 * isp_value lays them out) and its `length` bytes (an array's elements,
 * an address, a string with its NUL, or 8), copied in one piece each
 * way. No alignment: read and written with memcpy.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "engine_int.h"

#define ENTRY_HEAD 4
#define VALUE_HEAD 8            /* struct isp_value up to its union */
#define ABSENT 0xffff

_Static_assert(offsetof(struct isp_value, v) == VALUE_HEAD, "a value's head is 8 bytes");

static uint64_t route_bits(uint64_t bit)
{
	return bit & ~(ROUTE_REST | ROUTE_DTA | ROUTE_LOCAL);
}

int carry_init(struct isp_engine *e)
{
	const struct isp_program *prog = e->prog;
	uint64_t known = 0, unknown = 0;

	for (unsigned i = 0; i < prog->nevents; i++) {
		if (prog->events[i].reads.known)
			known |= route_bits(e->ebit[i]);
		else
			unknown |= route_bits(e->ebit[i]);
	}
	for (unsigned i = 0; i < prog->nqueries; i++) {
		if (prog->queries[i].reads.known)
			known |= route_bits(e->qbit[i]);
		else
			unknown |= route_bits(e->qbit[i]);
	}
	/* a flow monitor reads the packet's flow itself */
	for (unsigned i = 0; i < prog->nmonitors; i++)
		unknown |= route_bits(e->mbit[i]);
	e->carry_bits = known & ~unknown;
	e->carry_what = 0;
	e->ncarry = 0;
	if (!e->carry_bits)
		return 0;
	e->carry_list = malloc((prog->nslots ? prog->nslots : 1) * sizeof(*e->carry_list));
	e->carry_mark = calloc(prog->nslots ? prog->nslots : 1, sizeof(*e->carry_mark));
	return e->carry_list && e->carry_mark ? 0 : -1;
}

void carry_free(struct isp_engine *e)
{
	free(e->carry_list);
	free(e->carry_mark);
	e->carry_list = NULL;
	e->carry_mark = NULL;
}

static void list_add(struct isp_engine *e, const struct rule_reads *r)
{
	for (unsigned k = 0; k < r->n; k++) {
		unsigned s = (unsigned)r->slot[k];
		if (e->carry_mark[s] != e->carry_stamp) {
			e->carry_mark[s] = e->carry_stamp;
			e->carry_list[e->ncarry++] = (int)s;
		}
	}
}

/* A rule's route bit, enabled or not: a rule disabled here (its bit 0,
 * kept in saved_bit) may run on the owner, which takes the command at
 * another moment, and the list below is kept across an enable. */
static inline uint64_t fixed_bit(const struct isp_engine *e, uint64_t bit, unsigned at)
{
	return bit ? bit : e->saved_bit[at];
}

/* The slots the rules `what` read, listed once (the last list is kept:
 * items mostly go with the same rules). */
static void carry_list_of(struct isp_engine *e, uint64_t what)
{
	const struct isp_program *prog = e->prog;

	if (what == e->carry_what)
		return;
	if (++e->carry_stamp == 0) {
		memset(e->carry_mark, 0, prog->nslots * sizeof(*e->carry_mark));
		e->carry_stamp = 1;
	}
	e->ncarry = 0;
	for (unsigned i = 0; i < prog->nevents; i++)
		if (what & route_bits(fixed_bit(e, e->ebit[i], i)))
			list_add(e, &prog->events[i].reads);
	for (unsigned i = 0; i < prog->nqueries; i++)
		if (what & route_bits(fixed_bit(e, e->qbit[i], prog->nevents + i)))
			list_add(e, &prog->queries[i].reads);
	e->carry_what = what;
}

/* Bytes of v's value after its head. */
static inline size_t payload_len(const struct isp_value *v)
{
	if (v->is_array)
		return (size_t)(v->count < ISP_MAX_HOPS ? v->count : ISP_MAX_HOPS) * 8u;
	switch (v->type) {
	case ISP_T_IPV6:
		return 16;
	case ISP_T_MAC:
		return 6;
	case ISP_T_STRING:
		return 1 + strnlen(v->v.str, ISP_STR_MAX - 1);
	default:
		return 8;
	}
}

/* n bytes, most often 16 (a number and its head): that one without a call */
static inline void copy_payload(void *to, const void *from, size_t n)
{
	if (n == VALUE_HEAD + 8)
		memcpy(to, from, VALUE_HEAD + 8);
	else
		memcpy(to, from, n);
}

size_t isp_engine_pack(struct isp_engine *e, const struct isp_packet *p, uint64_t what,
		       uint8_t *out, size_t room)
{
	if (!what || (what & ~e->carry_bits))
		return 0;       /* a rule that needs the packet */
	carry_list_of(e, what);
	uint8_t *o = out, *end = out + room;
	for (unsigned k = 0; k < e->ncarry; k++) {
		uint16_t head[2] = { (uint16_t)e->carry_list[k], ABSENT };
		const struct isp_value *v = slot_get(&e->sc, p, head[0]);
		size_t n = v ? payload_len(v) : 0;
		if ((size_t)(end - o) < ENTRY_HEAD + VALUE_HEAD + n)
			return 0;       /* larger than the room: the packet goes */
		if (v)
			head[1] = (uint16_t)n;
		memcpy(o, head, ENTRY_HEAD);
		o += ENTRY_HEAD;
		if (!v)
			continue;
		/* the value's head and payload as they are: one copy */
		copy_payload(o, v, VALUE_HEAD + n);
		o += VALUE_HEAD + n;
	}
	return (size_t)(o - out);
}

/* The values of a packed item into the slot cache; false on a message
 * that does not parse (none is made so: a bug, and the item is dropped). */
static bool unpack(struct isp_engine *e, const uint8_t *in, size_t len)
{
	struct slot_cache *sc = &e->sc;
	const uint8_t *end = in + len;

	while (in < end) {
		uint16_t head[2];
		if ((size_t)(end - in) < ENTRY_HEAD)
			return false;
		memcpy(head, in, ENTRY_HEAD);
		in += ENTRY_HEAD;
		if (head[0] >= sc->n)
			return false;
		struct slot *s = &sc->s[head[0]];
		s->gen = sc->gen;
		s->present = head[1] != ABSENT;
		if (!s->present)
			continue;
		size_t n = head[1];
		if ((size_t)(end - in) < VALUE_HEAD + n || n > sizeof(s->v.v))
			return false;
		copy_payload(&s->v, in, VALUE_HEAD + n);
		if (s->v.is_array && (size_t)s->v.count * 8u != n)
			return false;
		if (s->v.type == ISP_T_STRING && !s->v.is_array && n)
			s->v.v.str[n - 1] = 0;
		in += VALUE_HEAD + n;
	}
	return true;
}

void isp_engine_item_packed(struct isp_engine *e, const struct isp_packet *p,
			    const uint8_t *vals, size_t len, uint64_t what)
{
	slot_cache_next(&e->sc);
	if (!unpack(e, vals, len)) {
		e->carry_bad++;
		return;
	}
	isp_engine_item_routed(e, p, what);     /* the values are this item's */
}
