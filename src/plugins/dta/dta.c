/*
 * dta.c - Direct Telemetry Access reports ("dta"): UDP 40040, the base
 * header (opcode, sequence, flags; or opcode, flags) and the bodies of
 * Key-Write, Append, Key-Increment, Postcarder and Sketch-Merge
 * (README.md, "Wire format"). The whole report is one layer; what the
 * getters need is in its state.
 */
#include <stdio.h>
#include <string.h>

#include "../../core/plugin.h"
#include "dta_wire.h"

enum {
	OP_KEY_WRITE = DTA_OP_KEY_WRITE, OP_APPEND, OP_KEY_INCREMENT, OP_POSTCARDER,
	OP_SKETCH_MERGE,
};

/* Body bytes before the data or counters, by opcode; fixed-size bodies
 * have exactly this many. */
static const uint8_t body_fixed[6] = { 0, 5, 4, 13, 9, 12 };

/* Set before any packet (-o dta.sequence=no), read by every worker. */
static bool with_sequence = true;

static enum isp_verdict dta_decode(struct isp_dissect *d, struct isp_layer *l)
{
	struct isp_cursor c = isp_layer_cursor(d->pkt, l);
	struct dta_state s = { .hdr = with_sequence ? 3 : 2 };

	if (!isp_cur_has(&c, s.hdr))
		return isp_short_verdict(d, l);
	s.opcode = c.p[0];
	if (s.opcode < OP_KEY_WRITE || s.opcode > OP_SKETCH_MERGE)
		return ISP_ERR_BAD_VERSION;
	size_t fixed = body_fixed[s.opcode];
	if (!isp_cur_has(&c, s.hdr + fixed))
		return isp_short_verdict(d, l);
	size_t rest = c.left - s.hdr - fixed;
	const uint8_t *b = c.p + s.hdr;

	/* the snap length cut this datagram: its data is not all here */
	if (isp_region_cut(d, l))
		return ISP_ERR_TRUNCATED;

	switch (s.opcode) {
	case OP_KEY_WRITE:
	case OP_KEY_INCREMENT:
		if (b[0] == 0)
			return ISP_ERR_BAD_LENGTH;      /* no copy asked for */
		break;
	case OP_SKETCH_MERGE: {
		unsigned cols = isp_be16(b + 8);
		if (cols == 0)
			return ISP_ERR_BAD_LENGTH;
		if (rest == 0 || rest % (4u * cols))
			return ISP_ERR_BAD_LENGTH;
		break;
	}
	}
	if (s.opcode == OP_KEY_WRITE || s.opcode == OP_APPEND) {
		if (rest == 0 || rest % 4)
			return ISP_ERR_BAD_LENGTH;
	} else if (s.opcode != OP_SKETCH_MERGE && rest) {
		return ISP_ERR_BAD_LENGTH;              /* a fixed-size body */
	}
	s.data_off = (uint16_t)(s.hdr + fixed);
	s.data_len = (uint32_t)rest;
	if (s.opcode == OP_POSTCARDER) {
		s.data_off = (uint16_t)(s.hdr + 5);     /* its one word */
		s.data_len = 4;
	}
	_Static_assert(sizeof(s) <= sizeof(l->st), "state fits");
	memcpy(l->st.b, &s, sizeof(s));
	l->len = (uint32_t)c.left;
	l->version = s.opcode;
	d->next = ISP_PROTO_NONE;
	return ISP_OK;
}

static struct dta_state state_of(const struct isp_layer *l)
{
	struct dta_state s;

	memcpy(&s, l->st.b, sizeof(s));
	return s;
}

/* Field getters: arg = which field. Each names the opcodes that have it. */
enum dta_field {
	F_OPCODE, F_SEQUENCE, F_FLAGS, F_IMMEDIATE, F_RETRANSMIT, F_PRIORITY,
	F_REDUNDANCY, F_KEY, F_LIST, F_COUNTER, F_HOP, F_DATA_LEN,
	F_SKETCH, F_REPORTER, F_EPOCH, F_COLUMN, F_COLUMNS, F_ROWS,
};

static bool dta_get(const struct isp_packet *p, const struct isp_layer *l, uintptr_t arg,
		    struct isp_value *o)
{
	struct dta_state s = state_of(l);
	struct dta_report r;
	unsigned op = s.opcode;

	dta_report_of(p->data + l->off, &s, &r);
	switch ((enum dta_field)arg) {
	case F_OPCODE: return isp_val_scalar(o, ISP_T_U8, op);
	case F_SEQUENCE: return r.has_seq && isp_val_scalar(o, ISP_T_U8, r.seq);
	case F_FLAGS: return isp_val_scalar(o, ISP_T_U8, r.flags);
	case F_IMMEDIATE: return isp_val_scalar(o, ISP_T_U8, r.flags >> 7);
	case F_RETRANSMIT: return isp_val_scalar(o, ISP_T_U8, r.flags >> 6 & 1);
	case F_PRIORITY: return isp_val_scalar(o, ISP_T_U8, r.flags & 3);
	case F_REDUNDANCY:
		return (op == OP_KEY_WRITE || op == OP_KEY_INCREMENT) &&
		       isp_val_scalar(o, ISP_T_U8, r.redundancy);
	case F_KEY: return r.key && isp_val_scalar(o, ISP_T_U32, isp_be32(r.key));
	case F_LIST: return op == OP_APPEND && isp_val_scalar(o, ISP_T_U32, r.list);
	case F_COUNTER: return op == OP_KEY_INCREMENT && isp_val_scalar(o, ISP_T_U64, r.counter);
	case F_HOP: return op == OP_POSTCARDER && isp_val_scalar(o, ISP_T_U8, r.hop);
	case F_DATA_LEN:
		return op != OP_KEY_INCREMENT && isp_val_scalar(o, ISP_T_U32, r.data_len);
	case F_SKETCH: return op == OP_SKETCH_MERGE && isp_val_scalar(o, ISP_T_U16, r.sketch);
	case F_REPORTER: return op == OP_SKETCH_MERGE && isp_val_scalar(o, ISP_T_U16, r.reporter);
	case F_EPOCH: return op == OP_SKETCH_MERGE && isp_val_scalar(o, ISP_T_U16, r.epoch);
	case F_COLUMN: return op == OP_SKETCH_MERGE && isp_val_scalar(o, ISP_T_U16, r.column);
	case F_COLUMNS: return op == OP_SKETCH_MERGE && isp_val_scalar(o, ISP_T_U16, r.columns);
	case F_ROWS:
		return op == OP_SKETCH_MERGE &&
		       isp_val_scalar(o, ISP_T_U32, r.data_len / 4 / r.columns);
	}
	return false;
}

/* dta.data (Key-Write, Append, Postcarder) and dta.counters
 * (Sketch-Merge): the 32-bit words, the first ISP_MAX_HOPS of them. */
static bool dta_get_words(const struct isp_packet *p, const struct isp_layer *l, uintptr_t arg,
			  struct isp_value *o)
{
	struct dta_state s = state_of(l);
	bool counters = arg != 0;

	if (s.opcode == OP_KEY_INCREMENT || (s.opcode == OP_SKETCH_MERGE) != counters)
		return false;
	isp_val_array(o, ISP_T_U32);
	const uint8_t *w = p->data + l->off + s.data_off;
	for (uint32_t i = 0; i < s.data_len / 4 && i < ISP_MAX_HOPS; i++)
		o->v.arr[o->count++] = isp_be32(w + 4 * i);
	return true;
}

#define DF(name, type, field, help) { name, type, 0, dta_get, field, help }

static const struct isp_attr_desc dta_attrs[] = {
	DF("opcode", ISP_T_U8, F_OPCODE, "1 Key-Write, 2 Append, 3 Key-Increment, 4 Postcarder, "
	   "5 Sketch-Merge"),
	DF("sequence", ISP_T_U8, F_SEQUENCE, "sequence number (absent with -o dta.sequence=no)"),
	DF("flags", ISP_T_U8, F_FLAGS, "flags byte"),
	DF("immediate", ISP_T_U8, F_IMMEDIATE, "flag 0x80: apply at once, unbatched"),
	DF("retransmit", ISP_T_U8, F_RETRANSMIT, "flag 0x40: tracked, a gap is NACKed"),
	DF("priority", ISP_T_U8, F_PRIORITY, "flags bits 1-0: 0 lowest (shed first) .. 3"),
	DF("redundancy", ISP_T_U8, F_REDUNDANCY, "copies asked for (Key-Write, Key-Increment)"),
	DF("key", ISP_T_U32, F_KEY, "key (Key-Write, Key-Increment, Postcarder)"),
	DF("list", ISP_T_U32, F_LIST, "list (Append)"),
	DF("counter", ISP_T_U64, F_COUNTER, "increment (Key-Increment)"),
	DF("hop", ISP_T_U8, F_HOP, "hop number (Postcarder)"),
	{ "data", ISP_T_U32, 1, dta_get_words, 0,
	  "data words (Key-Write, Append, Postcarder; the first 32)" },
	DF("data_len", ISP_T_U32, F_DATA_LEN, "bytes of data, or of counters (Sketch-Merge)"),
	DF("sketch", ISP_T_U16, F_SKETCH, "sketch id (Sketch-Merge)"),
	DF("reporter", ISP_T_U16, F_REPORTER, "reporting switch (Sketch-Merge)"),
	DF("epoch", ISP_T_U16, F_EPOCH, "the switch's epoch (Sketch-Merge)"),
	DF("column", ISP_T_U16, F_COLUMN, "first column (Sketch-Merge)"),
	DF("columns", ISP_T_U16, F_COLUMNS, "columns in this report (Sketch-Merge)"),
	DF("rows", ISP_T_U32, F_ROWS, "counters per column (Sketch-Merge)"),
	{ "counters", ISP_T_U32, 1, dta_get_words, 1,
	  "counter words (Sketch-Merge; the first 32)" },
	{ 0 }
};

static int dta_set_option(const char *key, const char *value, char *err, size_t errlen)
{
	if (strcmp(key, "sequence") == 0) {
		if (strcmp(value, "yes") == 0 || strcmp(value, "no") == 0) {
			with_sequence = value[0] == 'y';
			return 0;
		}
		snprintf(err, errlen, "expected yes (3-byte base header) or no (2 bytes)");
		return -1;
	}
	snprintf(err, errlen, "unknown option (known: sequence)");
	return -1;
}

static const struct isp_link dta_links[] = {
	{ ISP_TBL_UDP_PORT, 40040 },
	ISP_LINKS_END
};

static const struct isp_proto_desc dta_desc = {
	.name = "dta",
	.help = "Direct Telemetry Access reports",
	.decode = dta_decode,
	.links = dta_links,
	.attrs = dta_attrs,
	.set_option = dta_set_option,
	.options_help =
		"sequence=yes|no    base header with a sequence number (3 bytes, default) or without (2)\n",
};

int isp_dta_register(struct isp_registry *reg);
int isp_dta_register(struct isp_registry *reg)
{
	return isp_register_proto(reg, &dta_desc);
}
ISP_PLUGIN_ENTRY(isp_dta_register)
