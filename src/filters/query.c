/*
 * query.c - query reports: tumbling windows of ms-period on packet time,
 * aligned to multiples of the period since the epoch (so every worker and
 * every run cuts the same windows), groups by the binary value of the
 * group-by attributes, report functions per group.
 *
 * Per-hop arguments aggregate element by element: hop i of a group
 * aggregates the packets that have a hop i, so packets with different hop
 * counts in one group are all counted. Groups come out in the order of
 * their first packet in the window.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "agg.h"
#include "../core/value.h"
#include "engine_int.h"
#include "query_int.h"


/*
 * How query_packet updates each item, chosen once by query_init: most
 * rules select functions of plain attributes, which need neither cx_eval
 * per function nor a copy of the state, and often the same attribute
 * several times (avg, var, min and max of int.latency): each is fetched
 * and converted once a packet.
 */
enum qsrc {
	QS_PACKET,      /* count(), rate(): no value, a packet */
	QS_INPUT,       /* an attribute, or one hop of it: an input of the plan */
	QS_HOPS,        /* a per-hop attribute aggregated hop by hop, the
	                   general way (percentiles, diff(): QS_HOPS_* below) */
	QS_EXPR,        /* anything else: cx_eval */
	/* QS_INPUT into a function with an in-place path and no diff(): one
	 * case each, its update compiled for it (no dispatch by function) */
	QS_IN_COUNT, QS_IN_SUM, QS_IN_AVG, QS_IN_VAR, QS_IN_MIN, QS_IN_MAX, QS_IN_FIRST,
	QS_IN_LAST, QS_IN_ENDS,
	/* QS_HOPS into a function with an in-place path and no diff(): the
	 * same, its loop over the hops compiled for it */
	QS_HOPS_COUNT, QS_HOPS_SUM, QS_HOPS_AVG, QS_HOPS_VAR, QS_HOPS_MIN, QS_HOPS_MAX,
	QS_HOPS_FIRST, QS_HOPS_LAST, QS_HOPS_ENDS,
};

_Static_assert(QS_IN_ENDS - QS_IN_COUNT == AGF_ENDS - AGF_COUNT &&
	       QS_HOPS_ENDS - QS_HOPS_COUNT == AGF_ENDS - AGF_COUNT,
	       "QS_IN_* and QS_HOPS_* follow enum agg_fast");

struct qstep {
	uint8_t src;            /* enum qsrc */
	uint8_t op;             /* enum agg_fast: the in-place update of integers */
	uint8_t diff;           /* diff() in front of a fast op */
	uint8_t gdiff;          /* the general way takes a difference (agg_diff) */
	uint16_t size;          /* kept bytes of the state (per hop) */
	uint32_t off;           /* the cell in the group */
	const struct qitem *it; /* the item (the general ways) */
	union {
		const struct qinput *in;        /* QS_INPUT, QS_IN_*: in plan->in */
		struct slot *sl;                /* QS_HOPS: the attribute's slot */
	} u;
};

struct qinput {
	struct slot *sl;        /* its slot */
	int16_t slot, index;    /* as in the CX_ATTR */
	/* this packet: the value, of kind XK_NONE when absent (one byte
	 * to store and to test: XK_INT takes the in-place paths) */
	struct xval v;
};

struct qplan {
	unsigned nin;
	bool key_fixed;         /* every group-by value is a fixed-size scalar */
	bool key16[MAX_GROUP_BY];       /* key_fixed: the value takes 16 bytes (IPv6, MAC) */
	struct slot *key_slot[MAX_GROUP_BY];    /* key_fixed: the values' slots */
	struct qinput *in;      /* in the same block, after the steps */
	struct qstep step[];    /* one per item */
};

/* Packet order for first/last and for the order of groups: the position
 * in the input, then the report within a coalesced packet. The same for
 * any number of workers. A rule written as partial windows orders by
 * packet time within the window instead (then the report), which other
 * instances' inputs share: their windows merge in the same order. */
static uint64_t order_of(const struct query_state *qs, const struct isp_packet *p)
{
	if (qs->ts_order) {
		/* (a window of 2^55 ns or more, a rule without a period:
		 * nanoseconds alone, the reports of a packet equal) */
		uint64_t d = p->ts_ns - qs->win_start;
		return d < UINT64_C(1) << 55 ? d << 8 | p->report_index : d;
	}
	return p->index << 8 | p->report_index;
}

/* The plan's block: the steps, then the inputs. */
static size_t plan_steps_size(const struct qrule *r)
{
	return (sizeof(struct qplan) + r->nitems * sizeof(struct qstep) + 7) & ~(size_t)7;
}

static size_t plan_size(const struct qrule *r)
{
	return plan_steps_size(r) + (r->nitems ? r->nitems : 1) * sizeof(struct qinput);
}

/* Fill a zeroed plan block of plan_size(r) for rule r of engine e: the
 * steps and inputs point at e's slots and at r's items. */
static void plan_fill(const struct isp_engine *e, const struct qrule *r,
		      const struct query_state *qs, struct qplan *pl)
{
	pl->in = (struct qinput *)((uint8_t *)pl + plan_steps_size(r));
	for (unsigned k = 0; k < r->nitems; k++) {
		const struct qitem *it = &r->items[k];
		const struct cx *a = it->arg;
		struct qstep *st = &pl->step[k];
		st->it = it;
		st->off = qs->cell_off[k];
		st->size = qs->cell_size[k];
		st->op = agg_fast_op(it);
		/* diff() as the outer function keeps more than numbers */
		st->diff = it->diff && it->agg != AGG_DIFF && !it->diff_ends;
		st->gdiff = (it->diff || it->agg == AGG_DIFF) && !it->diff_ends;
		if (!a) {
			st->src = QS_PACKET;
		} else if (a->op == CX_ATTR && !it->per_hop && a->index != CX_HOP_CURRENT) {
			unsigned j = 0;
			while (j < pl->nin &&
			       (pl->in[j].slot != a->slot || pl->in[j].index != a->index))
				j++;
			if (j == pl->nin) {
				pl->in[j].sl = &e->sc.s[a->slot];
				pl->in[j].slot = a->slot;
				pl->in[j].index = a->index;
				pl->nin++;
			}
			st->src = QS_INPUT;
			st->u.in = &pl->in[j];
			/* (QS_IN_* and QS_HOPS_* list the functions in the
			 * order of enum agg_fast, from AGF_COUNT) */
			if (!st->diff && !st->gdiff && st->op != AGF_NONE)
				st->src = (uint8_t)(QS_IN_COUNT + st->op - AGF_COUNT);
		} else if (a->op == CX_ATTR && it->per_hop && a->index == CX_HOP_CURRENT &&
			   it->hop_slot_valid && it->hop_slot == a->slot) {
			st->src = QS_HOPS;
			st->u.sl = &e->sc.s[a->slot];
			/* the conditions of update_hops's in-place loop */
			if (!st->diff && st->op != AGF_NONE)
				st->src = (uint8_t)(QS_HOPS_COUNT + st->op - AGF_COUNT);
		} else {
			st->src = QS_EXPR;
		}
	}
	pl->key_fixed = true;
	for (unsigned k = 0; k < r->ngroup; k++) {
		const struct isp_attr_desc *a =
			isp_attr_desc_of(e->sc.reg, &e->prog->slots[r->group_slots[k]]);
		if (a->per_hop || a->type == ISP_T_STRING || k >= MAX_GROUP_BY)
			pl->key_fixed = false;
		else {
			pl->key16[k] = a->type == ISP_T_IPV6 || a->type == ISP_T_MAC;
			pl->key_slot[k] = &e->sc.s[r->group_slots[k]];
		}
	}
}

static int plan_init(const struct isp_engine *e, const struct qrule *r, struct query_state *qs)
{
	if (!(qs->plan = calloc(1, plan_size(r))))
		return -1;
	plan_fill(e, r, qs, qs->plan);
	return 0;
}

void query_bind(struct isp_engine *e, unsigned i)
{
	const struct qrule *r = &e->prog->queries[i];

	memset(e->q[i].plan, 0, plan_size(r));
	plan_fill(e, r, &e->q[i], e->q[i].plan);
}

int query_init(struct isp_engine *e, unsigned i)
{
	const struct qrule *r = &e->prog->queries[i];
	struct query_state *qs = &e->q[i];

	qs->cell_off = calloc(r->nitems ? r->nitems : 1, sizeof(*qs->cell_off));
	qs->cell_size = calloc(r->nitems ? r->nitems : 1, sizeof(*qs->cell_size));
	if (!qs->cell_off || !qs->cell_size)
		return -1;
	size_t off = sizeof(struct qgroup);
	for (unsigned k = 0; k < r->nitems; k++) {
		qs->cell_off[k] = (uint32_t)off;
		qs->cell_size[k] = (uint16_t)agg_state_size(&r->items[k]);
		off += r->items[k].per_hop ? sizeof(struct qhops) : qs->cell_size[k];
	}
	qs->entry_state = off;
	qs->ts_order = r->format == FMT_PARTIAL;
	qs->whole = r->period_ns == ISP_PERIOD_WHOLE;
	query_span_reset(qs);
	if (plan_init(e, r, qs) != 0)
		return -1;
	size_t kmax = engine_key_max(e, r->group_slots, r->ngroup);
	int rc = table_init(&qs->groups, r->max_groups, qs->entry_state, kmax, false);
	if (rc != 0 || (rc = table_init(&qs->done, r->max_groups, qs->entry_state, kmax, false)) != 0)
		return rc;
	qs->group_keys = calloc(r->ngroup ? r->ngroup : 1, sizeof(*qs->group_keys));
	qs->item_keys = calloc(r->nitems ? r->nitems : 1, sizeof(*qs->item_keys));
	if (!qs->group_keys || !qs->item_keys)
		return -1;
	for (unsigned k = 0; k < r->ngroup; k++)
		if (rec_jkey_make(&qs->group_keys[k], r->group_names[k]) != 0)
			return -1;
	for (unsigned k = 0; k < r->nitems; k++)
		if (rec_jkey_make(&qs->item_keys[k], r->items[k].text) != 0)
			return -1;
	return 0;
}

/* hop_state's allocation: the cell's array grows to hop + 1 states. */
static __attribute__((noinline)) uint8_t *hop_grow(struct query_state *qs, struct qhops *c,
						   unsigned hop, size_t size)
{
	/* exactly the path's length: paths rarely grow within a group */
	unsigned cap = hop + 1;
	uint8_t *n = arena_alloc(&qs->hops, cap * size);
	if (!n)
		return NULL;
	if (c->nh)
		memcpy(n, c->hops, c->nh * size);
	c->hops = n;
	c->cap = (uint8_t)cap;
	return n;
}

/* The states of the first n hops (size bytes each) in a per-hop cell, made
 * on first use; false when there is no room. */
static inline bool hops_reserve(struct query_state *qs, struct qhops *c, unsigned n, size_t size)
{
	/* a path no longer than the group's longest so far, the usual case:
	 * one test (c->nh <= c->cap <= ISP_MAX_HOPS) */
	if (n <= c->nh)
		return true;
	if (n > ISP_MAX_HOPS)
		return false;
	if (n > c->cap && !hop_grow(qs, c, n - 1, size))
		return false;
	c->nh = (uint8_t)n;
	return true;
}

/* The state of hop `hop` (size bytes) in a per-hop cell, made on first use. */
static inline uint8_t *hop_state(struct query_state *qs, struct qhops *c, unsigned hop,
				 size_t size)
{
	return hops_reserve(qs, c, hop + 1, size) ? c->hops + hop * size : NULL;
}

/* One value into a kept state the general way: a copy of the whole state
 * (agg_load), agg_diff and agg_update on it, the kept part back. */
static void update_state(struct query_state *qs, const struct qitem *it, uint8_t *kept,
			 size_t size, struct xval *v, uint64_t order, bool diff)
{
	struct agg_state s;

	agg_load(&s, kept, size);
	if (!diff || agg_diff(&s, v))
		agg_update(&s, it, v, order, &qs->hops);
	agg_store(kept, &s, size);
}

/* The general way, out of line (floats, percentiles, addresses, a state
 * gone to floats): diff() first when `diff`, on a copy of v. */
static __attribute__((noinline)) void update_slow(struct query_state *qs, const struct qstep *st,
						  uint8_t *kept, const struct xval *v, uint64_t order,
						  bool diff)
{
	struct xval c = *v;

	update_state(qs, st->it, kept, st->size, &c, order, diff);
}

/* One value into a kept state: an integer in place when the function has
 * a fast path (diff() included), anything else the general way. Always
 * inline: a call per function and hop would cost as much as the update. */
/* An integer (a difference if diff()) into a kept state in place, the
 * general way when the state holds a float (a sum gone to floats, a float
 * min or max). */
static inline __attribute__((always_inline)) void
update_int(struct query_state *qs, const struct qstep *st, uint8_t *kept,
	   int64_t x, uint64_t order, unsigned op)
{
	if (!agg_update_int(kept, op, x, order)) {
		struct xval c = { .k = XK_INT, .u.i = x };
		update_slow(qs, st, kept, &c, order, false);
	}
}

static inline __attribute__((always_inline)) void
update_value(struct query_state *qs, const struct qstep *st, uint8_t *kept,
	     const struct xval *v, uint64_t order)
{
	if (v->k != XK_INT || st->op == AGF_NONE) {
		update_slow(qs, st, kept, v, order, st->gdiff);
		return;
	}
	int64_t x = v->u.i;
	if (st->diff) {
		int d = agg_diff_int(kept, &x);
		if (d == 0)
			return;         /* a group's first value */
		if (d < 0) {            /* the previous value was a float */
			update_slow(qs, st, kept, v, order, true);
			return;
		}
	}
	update_int(qs, st, kept, x, order, st->op);
}

/* An attribute type whose values are integers in expressions (the
 * XK_INT cases of xval_from_value). */
static inline bool int_type(uint8_t type)
{
	return type != ISP_T_IPV4 && type != ISP_T_IPV6 && type != ISP_T_MAC &&
	       type != ISP_T_STRING;
}

/* Element raw of an integer attribute as xval_from_value converts it. */
static inline int64_t int_of(uint8_t type, uint64_t raw)
{
	return (int64_t)(type == ISP_T_TIMESTAMP ? raw / 1000u : raw);  /* µs */
}

/* update_hops' loop for one fast function (op a constant at each use),
 * and for timestamps or not (the conversion out of the loop). */
static inline __attribute__((always_inline)) void
hops_loop(struct query_state *qs, const struct qstep *st, uint8_t *hops,
	  unsigned n, unsigned size, uint32_t missing, uint8_t type, const uint64_t *arr,
	  uint64_t order, unsigned op)
{
	/* every hop with a value, the usual case: a counted loop, cheaper a
	 * hop than walking the bits below */
	if (!missing) {
		/* the values and the states walked by pointer: no index to
		 * scale, no base to reload a hop (it was spilled: query_packet
		 * keeps many values live) */
		for (const uint64_t *a = arr, *end = arr + n; a != end; a++, hops += size)
			update_int(qs, st, hops, int_of(type, *a), order, op);
		return;
	}
	/* the hops with a value, as set bits: no test and branch per hop */
	uint32_t have = ~missing & (uint32_t)((UINT64_C(1) << n) - 1);

	for (; have; have &= have - 1) {
		unsigned h = (unsigned)__builtin_ctz(have);
		update_int(qs, st, hops + h * size, int_of(type, arr[h]), order, op);
	}
}

static inline __attribute__((always_inline)) void
hops_fast(struct query_state *qs, const struct qstep *st, uint8_t *hops,
	  unsigned n, unsigned size, uint32_t missing, uint8_t type, const uint64_t *arr,
	  uint64_t order, unsigned op)
{
	if (type == ISP_T_TIMESTAMP)
		hops_loop(qs, st, hops, n, size, missing, ISP_T_TIMESTAMP, arr, order, op);
	else
		hops_loop(qs, st, hops, n, size, missing, ISP_T_U64, arr, order, op);
}

/* update_hops's hops of a type that is not an integer in expressions
 * (addresses): the general way, out of line (rare). */
static __attribute__((noinline)) void hops_slow(struct query_state *qs, const struct qstep *st,
						uint8_t *hops, const struct isp_value *hv,
						uint64_t order)
{
	for (unsigned h = 0; h < hv->count; h++) {
		struct xval v;
		if (xval_from_value(hv, (int)h, &v))
			update_slow(qs, st, hops + h * st->size, &v, order, st->gdiff);
	}
}

/* A per-hop attribute hop by hop: the value is the slot's own element,
 * converted as xval_from_value does, without cx_eval. op: the function's
 * in-place update (QS_HOPS_*: a constant at each use, so that the loop is
 * compiled for it, with no dispatch per hop or per packet), or AGF_NONE
 * for the general way per hop (QS_HOPS: percentiles, diff()). */
static inline __attribute__((always_inline)) void
update_hops(struct isp_engine *e, struct query_state *qs, const struct qstep *st, uint8_t *cell,
	    const struct isp_packet *p, uint64_t order, unsigned op)
{
	struct qhops *c = (struct qhops *)cell;
	const struct isp_value *hv = slot_value(&e->sc, p, st->u.sl);

	/* the result is as long as the longest path seen, even when its last
	 * hops had no value (they come out as null) */
	if (!hv || !hv->is_array || !hv->count || !hops_reserve(qs, c, hv->count, st->size))
		return;
	/* in locals: the stores into the states could alias them */
	unsigned n = hv->count, size = st->size;
	uint32_t missing = hv->missing;
	uint8_t type = hv->type, *hops = c->hops;
	if (!int_type(type)) {
		hops_slow(qs, st, hops, hv, order);
		return;
	}
	if (op != AGF_NONE) {   /* the usual case */
		hops_fast(qs, st, hops, n, size, missing, type, hv->v.arr, order, op);
		return;
	}
	for (unsigned h = 0; h < n; h++) {
		if (missing >> h & 1)
			continue;
		struct xval v = { .k = XK_INT, .u.i = int_of(type, hv->v.arr[h]) };
		update_value(qs, st, hops + h * size, &v, order);
	}
}

/* A scalar input's value for this packet (xval_from_value, with the
 * common integer case inline). */
static inline bool input_value(const struct isp_value *v, int index, struct xval *out)
{
	if (!v->is_array && int_type(v->type)) {
		if (v->missing & 1)
			return false;
		out->k = XK_INT;
		out->u.i = int_of(v->type, v->v.u);
		return true;
	}
	return xval_from_value(v, index, out);
}

/* Any other argument: cx_eval, per hop when it holds per-hop attributes. */
static void update_expr(struct isp_engine *e, struct query_state *qs, const struct qstep *st,
			uint8_t *cell, const struct isp_packet *p, uint64_t order)
{
	const struct qitem *it = st->it;
	/* (built here: most rules have no such argument) */
	struct cx_ctx ctx = { &e->sc, p, -1 };
	struct xval v;

	if (!it->per_hop) {
		if (cx_eval(it->arg, &ctx, &v))
			update_value(qs, st, cell, &v, order);
		return;
	}
	struct qhops *c = (struct qhops *)cell;
	const struct isp_value *hv = slot_get(&e->sc, p, (unsigned)it->hop_slot);
	if (!hv || !hv->is_array)
		return;
	if (!hops_reserve(qs, c, hv->count, st->size))
		return;
	for (unsigned h = 0; h < hv->count; h++) {
		ctx.hop = (int)h;
		if (!cx_eval(it->arg, &ctx, &v))
			continue;
		uint8_t *s = hop_state(qs, c, h, st->size);
		if (s)
			update_value(qs, st, s, &v, order);
	}
}

/*
 * Group keys of a rule whose group-by values are all scalars (addresses,
 * ports: key_fixed): engine_key's bytes, built without its general
 * dispatch (the slot's value taken directly, the width known from the
 * attribute's type).
 */
static inline __attribute__((always_inline)) size_t
group_key(struct isp_engine *e, const struct isp_packet *p, const struct qrule *r,
			const struct qplan *pl, uint8_t *buf)
{
	size_t len = 0;

	for (unsigned i = 0; i < r->ngroup; i++)
		len += engine_key_scalar(buf + len, slot_value(&e->sc, p, pl->key_slot[i]),
					 pl->key16[i]);
	return len;
}

/* The hash of the group table (table_get_hashed): a multiply-xorshift
 * round per 8 bytes and a final avalanche (the table takes the low bits),
 * a third of XXH3's instructions on these 10- to 50-byte keys. Where the
 * groups land shows in no record: they come out in their order of arrival. */
static inline __attribute__((always_inline)) uint64_t group_hash(const uint8_t *k, size_t len)
{
	const uint64_t m = 0xbf58476d1ce4e5b9u;
	uint64_t h = 0x9e3779b97f4a7c15u ^ len, w;

	if (len >= 8) {
		size_t i = 0;
		for (; i + 8 <= len; i += 8) {
			memcpy(&w, k + i, 8);
			h = (h ^ w) * m;
			h ^= h >> 29;
		}
		if (i < len) {  /* the last 8 bytes, overlapping the ones before */
			memcpy(&w, k + len - 8, 8);
			h = (h ^ w) * m;
		}
	} else {
		w = 0;
		for (size_t i = 0; i < len; i++)
			w = w << 8 | k[i];
		h = (h ^ w) * m;
	}
	h ^= h >> 31;
	h *= 0x94d049bb133111ebu;
	return h ^ h >> 32;
}

size_t query_group_key(struct isp_engine *e, unsigned i, const struct isp_packet *p, uint8_t *buf,
		       size_t cap, uint64_t *hash)
{
	const struct qrule *r = &e->prog->queries[i];
	const struct qplan *pl = e->q[i].plan;
	size_t len;

	if (e->q[i].groups.key_max > cap)
		return 0;
	len = pl->key_fixed ? group_key(e, p, r, pl, buf) :
	      engine_key(e, p, r->group_slots, r->ngroup, buf, e->q[i].groups.key_max);
	*hash = group_hash(buf, len);
	return len;
}

void query_prefetch_group(struct isp_engine *e, unsigned i, const uint8_t *key, size_t len,
			  uint64_t hash)
{
	const struct qrule *r = &e->prog->queries[i];
	struct query_state *qs = &e->q[i];
	struct tentry *te = table_find_hashed(&qs->groups, key, len, hash);

	if (!te)
		return;
	struct qgroup *g = tentry_state(te);
	for (unsigned k = 0; k < r->nitems; k++)
		if (r->items[k].per_hop) {
			const struct qhops *c = (const struct qhops *)(void *)cell_of(qs, g, k);
			if (c->hops)
				__builtin_prefetch(c->hops, 1);
		}
}

void query_packet(struct isp_engine *e, unsigned i, const struct isp_packet *p)
{
	const struct qrule *r = &e->prog->queries[i];
	struct query_state *qs = &e->q[i];
	struct qplan *pl = qs->plan;

	/* one of several workers closes windows only at ticks, which every
	 * worker reaches at the same point (and then the merger takes them) */
	if (!e->partial)
		query_advance(e, i, p->ts_ns);
	if (r->where && !cx_true(r->where, &(struct cx_ctx){ &e->sc, p, -1 }))
		return;
	if (qs->ts_order && qs->win_end && p->ts_ns < qs->win_start) {
		/* partial windows from an input that went back in time (a
		 * Kafka partition late): the open one is written as it is and
		 * the packet's window opens; the merge adds them up */
		query_drain(e, i, false);
		query_window_clear(qs);
	}
	if (qs->win_end == 0) {
		uint64_t t = p->ts_ns;
		/* one of several workers, its window closed at the last tick:
		 * a packet older than that tick goes to the window after it,
		 * as the open window of one worker takes it */
		if (e->partial && !qs->ts_order && e->tick_now != UINT64_MAX && t < e->tick_now)
			t = e->tick_now;
		qs->win_start = t - t % r->period_ns;
		qs->win_end = qs->win_start + r->period_ns;
		if (qs->ts_order && !qs->partial_started) {
			/* a merge waits for this instance from here (a restart) */
			qs->partial_started = true;
			partial_watermark(e, i, 0, qs->win_start);
		}
	}
	qs->st.matched++;
	size_t klen;
	uint64_t h;
	const uint8_t *key = engine_take_prepared(e, e->prog->nevents + i, &qs->st.ahead, &klen, &h);
	if (!key) {
		key = e->keybuf;
		klen = pl->key_fixed ? group_key(e, p, r, pl, e->keybuf) :
		       engine_key(e, p, r->group_slots, r->ngroup, e->keybuf, qs->groups.key_max);
		h = group_hash(e->keybuf, klen);
	}
	bool created = false;
	/* most packets find their group: the insertion path only for the rest */
	struct tentry *te = table_find_hashed(&qs->groups, key, klen, h);
	if (!te)
		te = table_get_hashed(&qs->groups, key, klen, h, p->ts_ns, false, &created);
	if (!te)
		return;         /* max-groups reached: counted in overflows */
	if (__builtin_expect(qs->whole, 0))
		query_span_add(qs, p->ts_ns, p->ts_ns);
	struct qgroup *g = tentry_state(te);
	uint64_t order = order_of(qs, p);
	/* (packet time from a Kafka input may step back within a window) */
	if (created || (qs->ts_order && order < g->first))
		g->first = order;
	/* each distinct input once: several functions often share one */
	struct qinput *in = pl->in;
	for (unsigned j = 0, n = pl->nin; j < n; j++) {
		const struct isp_value *v = slot_value(&e->sc, p, in[j].sl);
		if (!v || !input_value(v, in[j].index, &in[j].v))
			in[j].v.k = XK_NONE;
	}
	for (const struct qstep *sp = pl->step, *end = sp + r->nitems; sp < end; sp++) {
		/* a copy: the stores below could alias. Its item is read from
		 * sp by the general ways that need it (update_slow): loaded
		 * where a case starts, it cost a load (and a spill) a step for
		 * the in-place cases */
		const struct qstep st = *sp;
		uint8_t *cell = (uint8_t *)g + st.off;
		switch ((enum qsrc)st.src) {
		case QS_PACKET:         /* count(), rate(): agg_update without a value */
			agg_kept_count(cell);
			break;
		case QS_INPUT: {
			const struct qinput *x = st.u.in;
			if (x->v.k == XK_NONE)
				break;
			update_value(qs, sp, cell, &x->v, order);
			break;
		}
		case QS_HOPS:
			update_hops(e, qs, sp, cell, p, order, AGF_NONE);
			break;
		case QS_EXPR:
			update_expr(e, qs, sp, cell, p, order);
			break;
#define IN_FAST(SRC, OP) case SRC:                                                    \
			if (st.u.in->v.k == XK_INT)                                   \
				update_int(qs, sp, cell, st.u.in->v.u.i, order, OP);  \
			else if (st.u.in->v.k != XK_NONE)                             \
				update_slow(qs, sp, cell, &st.u.in->v, order, false); \
			break
		IN_FAST(QS_IN_COUNT, AGF_COUNT);
		IN_FAST(QS_IN_SUM, AGF_SUM);
		IN_FAST(QS_IN_AVG, AGF_AVG);
		IN_FAST(QS_IN_VAR, AGF_VAR);
		IN_FAST(QS_IN_MIN, AGF_MIN);
		IN_FAST(QS_IN_MAX, AGF_MAX);
		IN_FAST(QS_IN_FIRST, AGF_FIRST);
		IN_FAST(QS_IN_LAST, AGF_LAST);
		IN_FAST(QS_IN_ENDS, AGF_ENDS);
#undef IN_FAST
#define HOPS_FAST(SRC, OP) case SRC: update_hops(e, qs, sp, cell, p, order, OP); break
		HOPS_FAST(QS_HOPS_COUNT, AGF_COUNT);
		HOPS_FAST(QS_HOPS_SUM, AGF_SUM);
		HOPS_FAST(QS_HOPS_AVG, AGF_AVG);
		HOPS_FAST(QS_HOPS_VAR, AGF_VAR);
		HOPS_FAST(QS_HOPS_MIN, AGF_MIN);
		HOPS_FAST(QS_HOPS_MAX, AGF_MAX);
		HOPS_FAST(QS_HOPS_FIRST, AGF_FIRST);
		HOPS_FAST(QS_HOPS_LAST, AGF_LAST);
		HOPS_FAST(QS_HOPS_ENDS, AGF_ENDS);
#undef HOPS_FAST
		default:
			/* plan_init sets no other: no range check before the jump */
			__builtin_unreachable();
		}
	}
}


void query_drain(struct isp_engine *e, unsigned i, bool final)
{
	struct query_state *qs = &e->q[i];
	unsigned k = 0;

	if (qs->win_end == 0 || e->partial || (final && !qs->ts_order))
		return;
	for (struct tentry *te = NULL; (te = table_next(&qs->groups, te)) != NULL;)
		query_write_group(e, i, te);
	while (k < qs->ndrained && qs->drained[k].end != qs->win_end)
		k++;
	if (k == qs->ndrained) {
		if (k == sizeof(qs->drained) / sizeof(qs->drained[0]))
			k = 0;          /* the oldest guess goes: that window closes by lateness */
		else
			qs->ndrained++;
		qs->drained[k].end = qs->win_end;
		qs->drained[k].groups = 0;
	}
	qs->drained[k].groups += qs->groups.count;
	table_clear(&qs->groups);
	arena_reset(&qs->hops);
	if (final)
		query_window_clear(qs);
}

void query_flush(struct isp_engine *e, unsigned i)
{
	struct query_state *qs = &e->q[i];

	if (qs->win_end == 0)
		return;
	if (!e->partial) {
		query_write_window(e, i, NULL);
		return;
	}
	/* a worker: the window waits for the merger (which takes it before
	 * the next one closes); the next window starts on empty tables */
	query_window_swap(&qs->done, &qs->done_hops, &qs->groups, &qs->hops);
	qs->done_start = qs->win_start;
	qs->done_end = qs->win_end;
	qs->done_lo = qs->seen_lo;
	qs->done_hi = qs->seen_hi;
	qs->has_done = true;
	query_window_clear(qs);
}

/* ---- for query_merge.c (query_int.h) ---- */

uint8_t *query_hop_state(struct query_state *qs, struct qhops *c, unsigned hop, size_t size)
{
	return hop_state(qs, c, hop, size);
}

uint64_t query_group_hash(const uint8_t *k, size_t len)
{
	return group_hash(k, len);
}
