/*
 * dta.c - the DTA collector on each worker (src/plugins/dta/README.md):
 * a report's reporter is tracked by sequence (retransmittable reports), a
 * gap NACKed, low priorities shed under overload, and what is left
 * applied to the store of its kind; and the stores rules feed.
 *
 * A reporter (source address and port) is routed to one worker, so its
 * sequence state is that worker's alone; the stores are shared by every
 * worker (store.c's atomics).
 */
#include "dta.h"
#include "engine_int.h"

#include "../plugins/dta/dta_wire.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define APPEND_BATCH 16
/* New reports (beyond the newest seen) that arrived after a NACK went,
 * before the gap it named is NACKed again: its retransmission was lost
 * too. Counting neither the retransmitted reports a NACK brings nor those
 * that arrived before it went (a collector that reads late) keeps one
 * NACK from causing the next. */
#define RENACK_AFTER 32
/* How far the newest sequence may run ahead of the last in-order one: a
 * gap older than this is given up (counted lost), so a report lost for
 * good (a capture, a reporter that gave up) never blocks its reporter,
 * and a retransmission is still told from a new report: a reporter
 * resends at most 127 reports (half the 8-bit space), the base is at
 * most MAX_LAG behind the newest, and what is left (127 - MAX_LAG) is
 * the run of consecutive losses a new report may follow. */
#define MAX_LAG 96
/* A reporter restarted: silent this long, or this many reports in a row
 * at or behind the base (more than go-back-N resends: a window is 127) */
#define RESYNC_IDLE_NS 1000000000ull
/* A new reporter's first sequence number below this: what came before
 * it since 0 is missing (see track) */
#define START_WINDOW 64
#define RESYNC_AFTER 1024

struct reporter {
	uint8_t addr[16];       /* IPv4: the first 4 bytes */
	uint16_t port;
	uint8_t used, v6;
	uint8_t base;           /* last in-order sequence */
	uint8_t top;            /* the newest sequence received (base when none ahead) */
	uint8_t nack_top;       /* top when the last NACK went, while has_nack */
	uint8_t has_nack;       /* a NACK is out for the gaps below nack_top */
	uint16_t since_nack;    /* new reports that arrived since that NACK went */
	uint16_t behind;        /* reports in a row at or behind the base */
	uint64_t seen[4];       /* bit s: sequence s received ahead of the base */
	uint64_t gave_up[4];    /* bit s: sequence s given up, not received since */
	uint64_t last_ns;       /* its last report's time */
	uint64_t nack_ns;       /* when the last NACK went, on the reports' clock */
};

/* Columns stop coming this long before the first missing one is NACKed;
 * the same column at most this many times. */
#define SKETCH_QUIET_NS DTA_TICK_NS
#define SKETCH_NACKS 8

struct sk_watch {
	struct reporter *from;  /* whose columns (NULL: none yet) */
	uint16_t epoch;
	uint16_t col;           /* the column last NACKed, and how often */
	uint8_t tries;
	uint64_t last_ns;       /* its last report, or the last NACK */
};

struct dta_engine {
	const struct isp_registry *reg;
	struct dta_store *const *stores;        /* by program store index */
	const struct dta_def *defs;
	unsigned ndefs;
	int kw, ap, ki;                         /* the stores taking reports, or -1 */
	uint16_t proto;
	struct isp_attr_ref ip_src, ip6_src, udp_sport;
	bool has_ip6;
	unsigned fed;                           /* stores that rules feed */
	bool nack;
	uint16_t nack_port;
	bool shed;
	int fd4, fd6;
	/* reporters: open addressing, never deleted */
	struct reporter *rep;
	unsigned rep_mask, rep_count, rep_max;
	/* appends waiting, one list at a time */
	int batch_store;
	uint32_t batch_list;
	unsigned batch_n;
	uint32_t batch[APPEND_BATCH * ISP_DTA_MAX_WORDS];
	/* Sketch-Merge stores taking reports: per reporter id, where its
	 * columns come from, so that a reporter gone quiet before its last
	 * column is NACKed (no later report shows that gap) */
	struct sk_watch **watch;                /* by store index (NULL: not one) */
	struct dta_counts st, pub;
};

static void batch_flush(struct dta_engine *d)
{
	if (d->batch_n && !dta_append(d->stores[d->batch_store], d->batch_list, d->batch,
				      d->batch_n))
		d->st.rejected += d->batch_n;
	d->batch_n = 0;
}

int dta_engine_new(struct isp_engine *e, const struct isp_registry *reg,
		   struct dta_store *const *stores, bool nack)
{
	const struct isp_program *prog = e->prog;
	struct dta_engine *d;
	char err[128];

	if (!prog->ndta)
		return 0;
	if (!(d = calloc(1, sizeof(*d))))
		return -1;
	d->reg = reg;
	d->stores = stores;
	d->defs = prog->dta_stores;
	d->ndefs = prog->ndta;
	d->kw = d->ap = d->ki = -1;
	d->fd4 = d->fd6 = -1;
	d->proto = isp_proto_id(reg, "dta");
	d->nack = nack;
	d->nack_port = prog->dta.nack_port;
	d->shed = prog->dta.shed;
	d->rep_max = prog->dta.max_reporters;
	unsigned cap = 16;
	while (cap < 2 * d->rep_max)
		cap <<= 1;
	d->rep_mask = cap - 1;
	if (!(d->rep = calloc(cap, sizeof(*d->rep)))) {
		free(d);
		return -1;
	}
	/* missing attributes (no ipv6 plugin, say) just never match */
	isp_attr_lookup(reg, "ip.src", &d->ip_src, err, sizeof(err));
	d->has_ip6 = isp_attr_lookup(reg, "ipv6.src", &d->ip6_src, err, sizeof(err)) == 0;
	isp_attr_lookup(reg, "udp.src_port", &d->udp_sport, err, sizeof(err));
	for (unsigned i = 0; i < prog->ndta; i++) {
		const struct dta_def *s = &prog->dta_stores[i];
		d->fed += s->nkey || s->nvalue || s->inc_slot >= 0;
		if (!s->reports)
			continue;
		if (s->cfg.kind == ISP_DTA_KEY_WRITE)
			d->kw = (int)i;
		else if (s->cfg.kind == ISP_DTA_APPEND)
			d->ap = (int)i;
		else if (s->cfg.kind == ISP_DTA_KEY_INCREMENT)
			d->ki = (int)i;
		else if (s->cfg.kind == ISP_DTA_SKETCH_MERGE &&
			 (!(d->watch || (d->watch = calloc(prog->ndta, sizeof(*d->watch)))) ||
			  !(d->watch[i] = calloc(s->cfg.reporters, sizeof(*d->watch[i]))))) {
			e->dta = d;
			dta_engine_free(e);
			return -1;
		}
	}
	e->dta = d;
	return 0;
}

void dta_engine_free(struct isp_engine *e)
{
	struct dta_engine *d = e->dta;

	if (!d)
		return;
	batch_flush(d);
	if (d->fd4 >= 0)
		close(d->fd4);
	if (d->fd6 >= 0)
		close(d->fd6);
	for (unsigned i = 0; d->watch && i < d->ndefs; i++)
		free(d->watch[i]);
	free(d->watch);
	free(d->rep);
	free(d);
	e->dta = NULL;
}

void dta_flush(struct isp_engine *e)
{
	if (e->dta)
		batch_flush(e->dta);
}

bool dta_takes(const struct isp_engine *e, const struct isp_packet *p)
{
	return e->dta && e->dta->proto != ISP_PROTO_NONE && (p->protos >> e->dta->proto & 1);
}

/* ---- reporters ---- */

/* The reporter of a report: its source address and port. */
static bool reporter_of(struct dta_engine *d, const struct isp_packet *p, struct reporter *r)
{
	struct isp_value v;

	memset(r, 0, sizeof(*r));
	if (d->has_ip6 && (p->protos >> d->ip6_src.proto & 1) &&
	    isp_attr_get(d->reg, p, &d->ip6_src, &v) &&
	    (!(p->protos >> d->ip_src.proto & 1) ||
	     p->last[d->ip6_src.proto] > p->last[d->ip_src.proto])) {
		memcpy(r->addr, v.v.ip6, 16);
		r->v6 = 1;
	} else if (isp_attr_get(d->reg, p, &d->ip_src, &v)) {
		uint32_t a = htonl((uint32_t)v.v.u);
		memcpy(r->addr, &a, 4);
	} else {
		return false;
	}
	if (isp_attr_get(d->reg, p, &d->udp_sport, &v))
		r->port = (uint16_t)v.v.u;
	return true;
}

static uint64_t reporter_hash(const struct reporter *r)
{
	uint8_t k[19];

	memcpy(k, r->addr, 16);
	memcpy(k + 16, &r->port, 2);
	k[18] = r->v6;
	return isp_dta_murmur64a(k, sizeof(k), 0);
}

uint64_t dta_route_hash(struct isp_engine *e, const struct isp_packet *p)
{
	struct reporter r;

	return reporter_of(e->dta, p, &r) ? reporter_hash(&r) : 0;
}

static struct reporter *reporter_find(struct dta_engine *d, const struct reporter *k)
{
	for (unsigned i = (unsigned)reporter_hash(k) & d->rep_mask;; i = (i + 1) & d->rep_mask) {
		struct reporter *r = &d->rep[i];
		if (!r->used) {
			if (d->rep_count >= d->rep_max)
				return NULL;
			*r = *k;
			r->used = 2;    /* 2: new, its first report sets the base */
			d->rep_count++;
			return r;
		}
		if (r->port == k->port && r->v6 == k->v6 && !memcmp(r->addr, k->addr, 16))
			return r;
	}
}

static void send_to(struct dta_engine *d, const struct reporter *r, const uint8_t *msg, size_t n)
{
	int *fd = r->v6 ? &d->fd6 : &d->fd4;

	if (*fd < 0)
		*fd = socket(r->v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct sockaddr_in a4 = { .sin_family = AF_INET, .sin_port = htons(d->nack_port) };
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(d->nack_port) };
	memcpy(&a4.sin_addr, r->addr, 4);
	memcpy(&a6.sin6_addr, r->addr, 16);
	if (*fd >= 0 && (r->v6 ? sendto(*fd, msg, n, 0, (struct sockaddr *)&a6, sizeof(a6)) :
			 sendto(*fd, msg, n, 0, (struct sockaddr *)&a4, sizeof(a4))) == (ssize_t)n)
		d->st.nacks++;
	else
		d->st.nack_errors++;
}

static inline bool bit(const uint64_t *set, uint8_t s)
{
	return set[s >> 6] >> (s & 63) & 1;
}

static inline bool seen(const struct reporter *r, uint8_t s)
{
	return bit(r->seen, s);
}

static void restart(struct reporter *r, uint8_t seq)
{
	r->base = r->top = seq;
	r->behind = 0;
	r->has_nack = 0;
	memset(r->seen, 0, sizeof(r->seen));
	memset(r->gave_up, 0, sizeof(r->gave_up));
}

static void nack(struct dta_engine *d, struct reporter *r, uint64_t ts)
{
	r->has_nack = 1;
	r->nack_top = r->top;
	r->since_nack = 0;
	r->nack_ns = ts;
	if (d->nack) {
		/* live, the reports' clock is the real-time one (kernel stamps):
		 * the time the NACK goes, unless the stamps are of another clock */
		struct timespec now;
		if (clock_gettime(CLOCK_REALTIME, &now) == 0) {
			uint64_t t = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
			if (t >= ts && t - ts < RESYNC_IDLE_NS)
				r->nack_ns = t;
		}
		uint8_t msg[2] = { r->base, 0x80 };
		send_to(d, r, msg, sizeof(msg));
	}
}

/* A retransmittable report's sequence: true to apply it, false when it
 * came before (a retransmission of what was applied). Sends the NACK a
 * gap asks for: one per gap, since the reporter goes back to the base
 * and resends everything after it (go-back-N), which fills every gap
 * below what it had sent; another only when new reports keep coming and
 * the gap does not fill (the retransmission was lost too). */
static bool track(struct dta_engine *d, struct reporter *r, uint8_t seq, uint64_t ts)
{
	bool idle = r->used == 1 && ts > r->last_ns + RESYNC_IDLE_NS;

	r->last_ns = ts > r->last_ns ? ts : r->last_ns;
	if (r->used == 2) {
		/* A new reporter starts its sequence at 0: a first report
		 * numbered below START_WINDOW follows lost or delayed ones,
		 * which a NACK asks for (the first one a collector receives
		 * is often not the first sent). A larger number is a reporter
		 * that was running before this collector: in order so far. */
		r->used = 1;
		restart(r, seq < START_WINDOW ? 0xff : (uint8_t)(seq - 1));
	} else if (idle) {                      /* back after a silence: in order */
		d->st.resyncs++;
		restart(r, (uint8_t)(seq - 1));
	}
	uint8_t ahead = (uint8_t)(seq - r->base);
	if (ahead == 0 || ahead >= 128) {
		if (++r->behind < RESYNC_AFTER) {
			/* behind the base: applied before, or given up (then
			 * not a duplicate: it came once, too late) */
			if (bit(r->gave_up, seq)) {
				r->gave_up[seq >> 6] &= ~(UINT64_C(1) << (seq & 63));
				d->st.late++;
			} else {
				d->st.duplicates++;
			}
			return false;
		}
		/* so many old ones in a row: the reporter started again */
		restart(r, seq);
		d->st.resyncs++;
		return true;
	}
	r->behind = 0;
	if (seen(r, seq)) {
		d->st.duplicates++;
		return false;
	}
	r->seen[seq >> 6] |= UINT64_C(1) << (seq & 63);
	r->gave_up[seq >> 6] &= ~(UINT64_C(1) << (seq & 63));  /* a new lap's */
	bool newest = ahead > (uint8_t)(r->top - r->base);
	if (newest)
		r->top = seq;
	while ((uint8_t)(r->top - r->base) > MAX_LAG) {        /* give the oldest gap up */
		r->base++;
		if (!seen(r, r->base)) {
			d->st.abandoned++;
			r->gave_up[r->base >> 6] |= UINT64_C(1) << (r->base & 63);
		}
		r->seen[r->base >> 6] &= ~(UINT64_C(1) << (r->base & 63));
	}
	while (seen(r, (uint8_t)(r->base + 1))) {
		r->base++;
		r->seen[r->base >> 6] &= ~(UINT64_C(1) << (r->base & 63));
	}
	if (r->base == r->top) {                /* in order: nothing missing */
		r->has_nack = 0;
		return true;
	}
	/* a gap; the one NACKed is filled when the base reached nack_top */
	if (!r->has_nack || (uint8_t)(r->nack_top - r->base) >= 128 || r->nack_top == r->base) {
		d->st.gaps++;
		nack(d, r, ts);
	} else if (newest && ts > r->nack_ns && ++r->since_nack >= RENACK_AFTER) {
		nack(d, r, ts);
	}
	return true;
}

/* ---- applying reports ---- */

static unsigned words_of(const struct dta_report *r, uint32_t *w, unsigned max)
{
	unsigned n = r->data_len / 4;

	for (unsigned i = 0; i < n && i < max; i++)
		w[i] = isp_be32(r->data + 4 * i);
	return n;
}

static void apply_append(struct dta_engine *d, const struct dta_report *r)
{
	const struct isp_dta_header *h = dta_store_header(d->stores[d->ap]);
	unsigned nw = h->value_bytes / 4;

	if (r->data_len > h->value_bytes || r->list >= h->lists) {
		d->st.rejected++;
		dta_store_reject(d->stores[d->ap]);
		return;
	}
	if (d->batch_n && (d->batch_list != r->list || d->batch_n == APPEND_BATCH))
		batch_flush(d);
	d->batch_store = d->ap;
	d->batch_list = r->list;
	uint32_t *v = d->batch + (size_t)d->batch_n * nw;
	memset(v, 0, h->value_bytes);
	words_of(r, v, nw);
	d->batch_n++;
	if (r->flags & DTA_F_IMMEDIATE)
		batch_flush(d);
	d->st.applied++;
}

static int sketch_store(const struct dta_engine *d, unsigned id)
{
	for (unsigned i = 0; i < d->ndefs; i++)
		if (d->defs[i].reports && d->defs[i].cfg.kind == ISP_DTA_SKETCH_MERGE &&
		    d->defs[i].cfg.sketch_id == id)
			return (int)i;
	return -1;
}

/* Ask a reporter for a Sketch-Merge column again (and what follows). */
static void nack_column(struct dta_engine *d, struct reporter *from, unsigned sketch,
			unsigned reporter, unsigned epoch, unsigned column)
{
	d->st.column_gaps++;
	if (d->nack && from) {
		uint8_t msg[10] = { from->base, 0xc0, (uint8_t)(sketch >> 8), (uint8_t)sketch,
				    (uint8_t)(reporter >> 8), (uint8_t)reporter,
				    (uint8_t)(epoch >> 8), (uint8_t)epoch, (uint8_t)(column >> 8),
				    (uint8_t)column };
		send_to(d, from, msg, sizeof(msg));
	}
}

static void apply_sketch(struct dta_engine *d, const struct dta_report *r, struct reporter *from,
			 uint64_t ts)
{
	int i = sketch_store(d, r->sketch);
	unsigned missing = 0;

	if (i < 0) {
		d->st.unstored++;
		return;
	}
	enum dta_sm_result res = dta_sm_merge(d->stores[i], r->reporter, r->epoch, r->column,
					      r->columns, r->data_len / 4 / r->columns, r->data,
					      &missing);
	if (res == DTA_SM_SHAPE) {
		d->st.rejected++;
		return;
	}
	d->st.applied += res == DTA_SM_MERGED || res == DTA_SM_GAP;
	if (res == DTA_SM_GAP)
		nack_column(d, from, r->sketch, r->reporter, r->epoch, missing);
	if (res != DTA_SM_STALE && from) {
		struct sk_watch *w = &d->watch[i][r->reporter];
		if (w->from != from || w->epoch != r->epoch)
			w->tries = 0;
		w->from = from;
		w->epoch = r->epoch;
		w->last_ns = ts;
	}
}

/* Reporters whose columns stopped before the last: their first missing
 * column is NACKed once they were quiet SKETCH_QUIET_NS (a lost last
 * column has no later one to show the gap), at most SKETCH_NACKS times. */
static void sketch_quiet(struct dta_engine *d, uint64_t now)
{
	for (unsigned i = 0; i < d->ndefs; i++) {
		for (unsigned r = 0; d->watch[i] && r < d->defs[i].cfg.reporters; r++) {
			struct sk_watch *w = &d->watch[i][r];
			if (!w->from || now < w->last_ns + SKETCH_QUIET_NS)
				continue;
			int col = dta_sm_next(d->stores[i], r, w->epoch);
			if (col < 0 || (col == w->col && w->tries >= SKETCH_NACKS)) {
				w->from = NULL;         /* complete, or given up */
				continue;
			}
			if (col != w->col)
				w->tries = 0;
			w->col = (uint16_t)col;
			w->tries++;
			w->last_ns = now;
			nack_column(d, w->from, d->defs[i].cfg.sketch_id, r, w->epoch, (unsigned)col);
		}
	}
}

void dta_tick(struct isp_engine *e, uint64_t now_ns)
{
	struct dta_engine *d = e->dta;

	if (d && d->watch && d->nack && now_ns != UINT64_MAX)
		sketch_quiet(d, now_ns);
}

/* Shed under overload: the input's backlog at which each priority goes
 * (half the buffer for 0, 3/4 for 1, 9/10 for 2; 3 is never shed). */
static const uint16_t shed_at[4] = { 128, 192, 230, 256 };

void dta_packet(struct isp_engine *e, const struct isp_packet *p)
{
	struct dta_engine *d = e->dta;
	const struct isp_layer *l = &p->layer[p->last[d->proto]];
	struct dta_state s;
	struct dta_report r;
	struct reporter who, *from = NULL;

	memcpy(&s, l->st.b, sizeof(s));
	dta_report_of(p->data + l->off, &s, &r);
	d->st.reports[r.opcode]++;
	d->st.immediate += !!(r.flags & DTA_F_IMMEDIATE);
	if (reporter_of(d, p, &who)) {
		if (!(from = reporter_find(d, &who)))
			d->st.untracked++;
		else if (r.has_seq && (r.flags & DTA_F_RETRANSMIT) && !track(d, from, r.seq, p->ts_ns))
			return;
	}
	unsigned prio = r.flags & 3;
	if (d->shed && p->backlog >= shed_at[prio]) {
		d->st.shed[prio]++;
		return;
	}
	uint32_t w[ISP_DTA_MAX_WORDS];
	int at = r.opcode == DTA_OP_APPEND ? d->ap : r.opcode == DTA_OP_KEY_INCREMENT ? d->ki :
		 r.opcode == DTA_OP_SKETCH_MERGE ? 0 : d->kw;
	if (at < 0) {
		d->st.unstored++;
		return;
	}
	switch (r.opcode) {
	case DTA_OP_KEY_WRITE: {
		const struct isp_dta_header *h = dta_store_header(d->stores[at]);
		if (r.data_len > h->value_bytes) {
			d->st.rejected++;
			dta_store_reject(d->stores[at]);
			return;
		}
		dta_kw_write(d->stores[at], r.key, 4, r.redundancy, w,
			     words_of(&r, w, ISP_DTA_MAX_WORDS));
		break;
	}
	case DTA_OP_APPEND:
		apply_append(d, &r);
		return;
	case DTA_OP_KEY_INCREMENT:
		dta_ki_add(d->stores[at], r.key, 4, r.counter);
		break;
	case DTA_OP_POSTCARDER:
		if (!dta_kw_postcard(d->stores[at], r.key, 4, r.hop, isp_be32(r.data))) {
			d->st.rejected++;
			return;
		}
		break;
	case DTA_OP_SKETCH_MERGE:
		apply_sketch(d, &r, from, p->ts_ns);
		return;
	}
	d->st.applied++;
}

/* ---- stores fed by rules ---- */

/* Value words of an attribute (store.h): 32-bit numbers and IPv4 one
 * word, 64-bit two (high first), IPv6 four, MAC two; arrays element by
 * element. Returns the words written, at most max. */
static unsigned value_words(const struct isp_value *v, uint32_t *w, unsigned max)
{
	unsigned n = 0;
	unsigned count = v->is_array ? v->count : 1;

	for (unsigned i = 0; i < count; i++) {
		uint64_t u = v->is_array ? v->v.arr[i] : v->v.u;
		switch (v->type) {
		case ISP_T_U64: case ISP_T_TIMESTAMP:
			if (n + 2 > max)
				return n;
			w[n++] = (uint32_t)(u >> 32);
			w[n++] = (uint32_t)u;
			break;
		case ISP_T_IPV6:
			for (unsigned k = 0; k < 4 && n < max; k++)
				w[n++] = isp_be32(v->v.ip6 + 4 * k);
			return n;
		case ISP_T_MAC:
			if (n + 2 > max)
				return n;
			w[n++] = isp_be16(v->v.mac);
			w[n++] = isp_be32(v->v.mac + 2);
			return n;
		default:
			if (n + 1 > max)
				return n;
			w[n++] = (uint32_t)u;
		}
	}
	return n;
}

size_t dta_key_put(uint8_t *buf, size_t len, size_t cap, const struct isp_value *v)
{
	unsigned count = v->is_array ? v->count : 1;

	if (v->type == ISP_T_STRING) {
		size_t n = strlen(v->v.str) + 1;
		if (len + n > cap)
			return 0;
		memcpy(buf + len, v->v.str, n);
		return len + n;
	}
	if (v->type == ISP_T_IPV6 || v->type == ISP_T_MAC) {
		size_t n = v->type == ISP_T_IPV6 ? 16 : 6;
		if (len + n > cap)
			return 0;
		memcpy(buf + len, v->type == ISP_T_IPV6 ? v->v.ip6 : v->v.mac, n);
		return len + n;
	}
	if (len + v->is_array + 8u * count > cap)
		return 0;
	if (v->is_array)
		buf[len++] = (uint8_t)count;
	for (unsigned i = 0; i < count; i++) {
		uint64_t u = v->is_array ? v->v.arr[i] : v->v.u;
		for (unsigned k = 0; k < 8; k++)
			buf[len++] = (uint8_t)(u >> (56 - 8 * k));
	}
	return len;
}

void dta_rules(struct isp_engine *e, const struct isp_packet *p)
{
	struct dta_engine *d = e->dta;
	uint8_t key[1024];
	uint32_t w[ISP_DTA_MAX_WORDS];

	if (!d->fed)
		return;
	for (unsigned i = 0; i < d->ndefs; i++) {
		const struct dta_def *s = &d->defs[i];
		size_t klen = 0;
		unsigned nw = 0;
		bool ok = true;
		if (!s->nkey && !s->nvalue && s->inc_slot < 0)
			continue;
		if (s->where) {
			struct cx_ctx ctx = { &e->sc, p, -1 };
			if (!cx_true(s->where, &ctx))
				continue;
		}
		for (unsigned k = 0; k < s->nkey && ok; k++) {
			const struct isp_value *v = slot_get(&e->sc, p, (unsigned)s->key_slots[k]);
			ok = v && (klen = dta_key_put(key, klen, sizeof(key), v)) > 0;
		}
		for (unsigned k = 0; k < s->nvalue && ok; k++) {
			const struct isp_value *v = slot_get(&e->sc, p, (unsigned)s->value_slots[k]);
			ok = v != NULL;
			if (ok)
				nw += value_words(v, w + nw, ISP_DTA_MAX_WORDS - nw);
		}
		if (!ok)
			continue;
		struct dta_store *st = d->stores[i];
		if (s->cfg.kind == ISP_DTA_KEY_WRITE) {
			dta_kw_write(st, key, klen, s->cfg.redundancy, w, nw);
		} else if (s->cfg.kind == ISP_DTA_APPEND) {
			uint32_t v[ISP_DTA_MAX_WORDS] = { 0 };
			memcpy(v, w, (nw < s->cfg.value_bytes / 4 ? nw : s->cfg.value_bytes / 4) * 4);
			dta_append(st, s->list, v, 1);
		} else if (s->cfg.kind == ISP_DTA_KEY_INCREMENT) {
			uint64_t inc = 1;
			if (s->inc_slot >= 0) {
				const struct isp_value *v = slot_get(&e->sc, p, (unsigned)s->inc_slot);
				if (!v)
					continue;
				inc = v->is_array ? 0 : v->v.u;
				for (unsigned k = 0; v->is_array && k < v->count; k++)
					inc += v->v.arr[k];
			}
			dta_ki_add(st, key, klen, inc);
		}
		d->st.rule_writes++;
	}
}

/* ---- counters ---- */

void dta_publish(struct isp_engine *e)
{
	if (e->dta)
		e->dta->pub = e->dta->st;
}

void dta_counts_add(const struct isp_engine *e, bool published, struct dta_counts *sum)
{
	if (!e->dta)
		return;
	const uint64_t *a = (const uint64_t *)(published ? &e->dta->pub : &e->dta->st);
	uint64_t *s = (uint64_t *)sum;
	for (size_t i = 0; i < sizeof(*sum) / sizeof(uint64_t); i++)
		s[i] += a[i];
	sum->reporters += e->dta->rep_count;
}
