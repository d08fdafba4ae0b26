/*
 * int_report.c - the "int_report" protocol: telemetry reports v0.5, v1.0
 * and v2.0 (the Telemetry Report Format specifications), as an INT sink or
 * a switch sends them to a collector. The report's inner packet continues
 * through the same plugin chain, so inner ip.*, udp.*, tcp.* and int.*
 * attributes are available; several v2.0 individual reports in one packet
 * are handed out one by one (meta.report_index).
 */
#include <string.h>

#include "int_layout.h"

enum rep_kind { REP_V05, REP_V10, REP_V20 };

/* Where the optional/local metadata of a report sits and how to read it. */
struct rep_state {
	uint8_t kind;
	uint8_t nproto;         /* v0.5 NProto, v1.0 NProt, v2.0 InType */
	uint8_t flags;          /* D Q F I, MSB first as 0x8 0x4 0x2 0x1 */
	uint16_t ir_off;        /* v2.0 individual report header: its type,
				   Report Length and MD Length are read there */
	uint16_t md_off;        /* optional metadata (v1.0/v2.0) or local header (v0.5) */
	uint16_t md_bits;       /* RepMdBits in INT bitmap positions */
	uint16_t md_len;        /* bytes of metadata */
	uint8_t v05_local;      /* v0.5: 1 drop header, 2 switch-local header */
	uint8_t count;          /* individual reports in the packet */
	uint16_t inner_off;     /* v2.0 InType TLV: the TLVs (0 for other */
	uint16_t inner_end;     /*   types, which no getter asks them of) */
	uint8_t tlv_count;      /* v2.0 InType TLV */
	/* registry ids of IPv4, UDP and TCP (0xff: none), for the inner
	 * packet's int_report.ip_* and port_* (see note_inner_ids) */
	uint8_t ip_id, udp_id, tcp_id;
};

_Static_assert(sizeof(struct rep_state) <= sizeof(union isp_layer_state), "fits");

static void load(const struct isp_layer *l, struct rep_state *s)
{
	memcpy(s, l->st.b, sizeof(*s));
}

/* v1.0 RepMdBits (6 bits) to INT bitmap positions: ports 1, latency 2,
 * queue 3, egress time 5, queue+drop reason 15, TX utilization 7. */
static const uint8_t v10_bit_of[6] = { 1, 2, 3, 5, 15, 7 };

static uint16_t v10_md_bits(unsigned rep)
{
	uint16_t bm = 0;

	for (unsigned i = 0; i < 6; i++)
		if (rep & (0x20u >> i))
			bm |= isp_bit16(v10_bit_of[i]);
	return bm;
}

/* Offset of `bit`'s word in a v1.0 report's metadata: the words follow
 * RepMdBits order, in which the drop word (INT bit 15) comes before TX
 * utilization (bit 7), not the INT bitmap's. */
static unsigned v10_md_offset(uint16_t md_bits, unsigned bit)
{
	unsigned off = 0;

	for (unsigned i = 0; i < 6 && v10_bit_of[i] != bit; i++)
		if (md_bits & isp_bit16(v10_bit_of[i]))
			off += 4;
	return off;
}

static enum isp_verdict decode_v05(struct isp_dissect *d, struct isp_layer *l,
				   struct rep_state *s, const uint8_t *b, unsigned avail)
{
	uint32_t w0 = isp_be32(b);
	unsigned hdr = 12;

	s->kind = REP_V05;
	s->nproto = (uint8_t)isp_bits32(w0, 4, 4);
	s->flags = (uint8_t)(isp_bits32(w0, 8, 3) << 1);
	switch (s->nproto) {
	case 0: isp_next_by(d, ISP_TBL_LINKTYPE, 1); break;
	case 1: s->v05_local = 1; hdr += 12; isp_next_by(d, ISP_TBL_LINKTYPE, 1); break;
	case 2: s->v05_local = 2; hdr += 16; isp_next_by(d, ISP_TBL_LINKTYPE, 1); break;
	case 4: isp_next_by(d, ISP_TBL_LINKTYPE, 228); break; /* Host-INT: IPv4 */
	default: return ISP_ERR_UNSUPPORTED;
	}
	if (hdr > avail)
		return isp_short_verdict(d, l);
	s->md_off = 12;
	s->md_len = (uint16_t)(hdr - 12);
	l->len = hdr;
	return ISP_OK;
}

static enum isp_verdict decode_v10(struct isp_dissect *d, struct isp_layer *l,
				   struct rep_state *s, const uint8_t *b, unsigned avail)
{
	uint32_t w0 = isp_be32(b);
	unsigned hdr = isp_bits32(w0, 4, 4) * 4u;

	s->kind = REP_V10;
	s->nproto = (uint8_t)isp_bits32(w0, 8, 3);
	s->md_bits = v10_md_bits(isp_bits32(w0, 11, 6));
	s->flags = (uint8_t)(isp_bits32(w0, 23, 3) << 1);
	if (hdr < 16 || hdr < 16 + 4u * isp_popcount16(s->md_bits))
		return ISP_ERR_BAD_LENGTH;
	if (hdr > avail)
		return isp_short_verdict(d, l);
	s->md_off = 16;
	s->md_len = (uint16_t)(hdr - 16);
	l->len = hdr;
	if (s->nproto > 2)
		return ISP_ERR_UNSUPPORTED;
	static const uint32_t link[3] = { 1, 228, 229 };
	isp_next_by(d, ISP_TBL_LINKTYPE, link[s->nproto]);
	return ISP_OK;
}

/* Bytes the individual report at b says it has (avail bytes left), or 0
 * without its first word. Report Length 0xff means "to the end of the
 * payload". */
static unsigned ir_declared(const uint8_t *b, unsigned avail)
{
	if (avail < 4)
		return 0;
	unsigned words = b[1];
	return words == 0xff ? avail : 4 + words * 4u;
}


static enum isp_verdict decode_v20(struct isp_dissect *d, struct isp_layer *l,
				   struct rep_state *s, const uint8_t *b, unsigned avail)
{
	struct isp_packet *p = d->pkt;

	s->kind = REP_V20;
	if (avail < 12)
		return isp_short_verdict(d, l);
	/* Only the outermost v2.0 report of a packet hands out its coalesced
	 * reports one by one; a report nested in an inner packet is decoded
	 * as a single report. */
	bool owner = p->report_layer == 0xff || p->report_layer == p->nlayers;
	unsigned off = 8, n = 1, size;
	if (owner && p->report_index > 0) {
		if (p->report_next_off < l->off + 8 || p->report_next_off - l->off >= avail)
			return ISP_ERR_BAD_LENGTH;
		off = p->report_next_off - l->off;
		size = ir_declared(b + off, avail - off);
	} else {
		/* count the coalesced reports once, on the first pass. A
		 * capture cut inside one ends the count with it; so does one
		 * whose Report Length runs past the payload, or bytes too few
		 * for a report's first word: that one is counted too, so that
		 * it is handed out and counted bad_length, not lost unsaid.
		 * Nothing after a length that lies can be found. The first
		 * (avail >= 12: there is one) is the one decoded here. */
		size = ir_declared(b + 8, avail - 8);
		if (size && size <= avail - 8) {
			unsigned o = 8 + size;
			while (o < avail && n < 255) {
				unsigned sz = ir_declared(b + o, avail - o);
				n++;
				if (!sz || sz > avail - o)
					break;
				o += sz;
			}
		}
		if (owner) {
			p->report_count = (uint8_t)n;
			p->report_layer = p->nlayers;
		}
	}
	/* A report the capture cut (snap length) is decoded as far as it
	 * goes: its inner packet's own layers say what is missing. */
	bool clamped = size > avail - off &&
		       isp_region_cut(d, l);    /* the snap length, not the sender */
	if (clamped)
		size = avail - off;
	if (!size || size > avail - off)
		return isp_short_verdict(d, l);
	if (owner)
		p->report_next_off = l->off + off + size;
	s->count = owner ? p->report_count : (uint8_t)n;

	const uint8_t *ir = b + off;
	uint32_t w0 = isp_be32(ir);
	unsigned rep_type = isp_bits32(w0, 0, 4), md_words = isp_bits32(w0, 16, 8);
	s->ir_off = (uint16_t)off;
	s->nproto = (uint8_t)isp_bits32(w0, 4, 4);
	s->flags = (uint8_t)isp_bits32(w0, 24, 4);

	unsigned hdr = 4;
	if (rep_type == 1) {
		if (size < 12)
			return clamped ? ISP_ERR_TRUNCATED : ISP_ERR_BAD_LENGTH;
		/* bit 0 (node ID) is reserved: the group header has it */
		s->md_bits = isp_be16(ir + 4) & 0x7fff;
		hdr = 12 + md_words * 4u;
		s->md_off = (uint16_t)(off + 12);
		s->md_len = (uint16_t)(md_words * 4u);
		if (int_hop_size(INT_LAYOUT_V2, s->md_bits) > s->md_len)
			return ISP_ERR_BAD_LENGTH;
	} else if (rep_type != 0) {
		return ISP_ERR_UNSUPPORTED;     /* IOAM and future types */
	}
	if (hdr > size)
		return clamped ? ISP_ERR_TRUNCATED : ISP_ERR_BAD_LENGTH;
	if (s->nproto == 1) {
		/* InType TLV: TLVType 4 · reserved 4 · TLVLength 8 (words of value
		 * after this header) · template 16; they must tile the report */
		if (clamped)
			return ISP_ERR_TRUNCATED;       /* its own fields cut */
		unsigned o = off + hdr, ntlv = 0;
		while (o < off + size) {
			if (off + size - o < 4)
				return ISP_ERR_BAD_LENGTH;
			o += 4 + b[o + 1] * 4u;
			ntlv++;
		}
		if (o != off + size)
			return ISP_ERR_BAD_LENGTH;
		s->tlv_count = (uint8_t)(ntlv > 255 ? 255 : ntlv);
		s->inner_off = (uint16_t)(off + hdr);
		s->inner_end = (uint16_t)(off + size);
	}
	/* TLVs are the report's own fields, not an inner packet */
	l->len = off + (s->nproto == 1 ? size : hdr);
	d->next_off = l->off + off + hdr;
	d->next_end = l->off + off + size;
	static const uint32_t link[6] = { 0, 0, 0, 1, 228, 229 };
	if (s->nproto >= 3 && s->nproto <= 5)
		isp_next_by(d, ISP_TBL_LINKTYPE, link[s->nproto]);
	return ISP_OK;
}

/* Getters are not given the registry, and the inner packet's layers are
 * decoded after this one: note which protocols the dispatch tables send
 * IPv4, UDP and TCP to, so that a getter can find them among the layers
 * that follow. An entry of a table is a protocol id (below ISP_MAX_PROTOS)
 * or ISP_TABLE_NONE (0xff), the "none" of the ids noted here: three loads,
 * d->next untouched. */
static void note_inner_ids(const struct isp_dissect *d, struct rep_state *s)
{
	_Static_assert(ISP_TABLE_NONE == 0xff && ISP_MAX_PROTOS <= 0xff,
		       "a table entry is an id or the ids' none");
	s->ip_id = d->tables[ISP_TBL_ETHERTYPE][0x0800];
	s->udp_id = d->tables[ISP_TBL_IPPROTO][17];
	s->tcp_id = d->tables[ISP_TBL_IPPROTO][6];
}

static enum isp_verdict rep_decode(struct isp_dissect *d, struct isp_layer *l)
{
	struct isp_cursor c = isp_layer_cursor(d->pkt, l);
	struct rep_state s;
	enum isp_verdict v;

	memset(&s, 0, sizeof(s));
	/* what the first byte shows is no report version: not a report,
	 * however much of it the capture kept */
	if (isp_cur_has(&c, 1) && c.p[0] >> 4 > 2)
		return ISP_NOT_MINE;
	if (!isp_cur_has(&c, 12))
		return ISP_ERR_TRUNCATED;
	unsigned ver = c.p[0] >> 4;     /* read once: the stores below may be
					   the packet's bytes, for all the
					   compiler knows */
	switch (ver) {
	case 0: v = decode_v05(d, l, &s, c.p, (unsigned)c.left); break;
	case 1: v = decode_v10(d, l, &s, c.p, (unsigned)c.left); break;
	case 2: v = decode_v20(d, l, &s, c.p, (unsigned)c.left); break;
	default: return ISP_NOT_MINE;  /* on a report port, but not a report */
	}
	if (v != ISP_OK)
		return v;
	l->version = (uint8_t)ver;
	/* The reporter may have cut the inner packet (the specifications
	 * carry a truncated copy): a length in it that runs past the report
	 * is a cut, not a lie, unless the inner IP length fits. v2.0's
	 * individual report has set where it is. */
	if (ver != 2) {
		d->next_off = l->off + l->len;
		d->next_end = l->end;
	}
	d->pkt->report_inner = d->next_off;
	note_inner_ids(d, &s);
	memcpy(l->st.b, &s, sizeof(s));
	d->in_report = 1;
	return ISP_OK_AT;
}

/* ---- attributes ---- */

enum {
	R_VERSION, R_HW_ID, R_SEQ, R_NODE_ID, R_INGRESS_TIME, R_NPROTO, R_REP_TYPE,
	R_D, R_Q, R_F, R_I, R_MD_BITS, R_DOMAIN, R_DS_MD_BITS, R_DS_MD_STATUS,
	R_REPORT_LEN, R_MD_LEN, R_COUNT, R_TLV_COUNT, R_TLV_TYPES,
	R_IP_SRC, R_IP_DST, R_PORT_SRC, R_PORT_DST,
};

/*
 * The monitored packet's IPv4 header and its UDP or TCP header right
 * after it, among the layers that follow report layer l (the first IPv4
 * layer before another report; *l4 NULL when none follows it). NULL when
 * the inner packet has no IPv4 layer.
 */
static const struct isp_layer *inner_ip(const struct isp_packet *p, const struct isp_layer *l,
					const struct rep_state *s, const struct isp_layer **l4)
{
	unsigned i = 0;

	*l4 = NULL;
	while (i < p->nlayers && &p->layer[i] != l)
		i++;
	for (i++; i < p->nlayers; i++) {
		const struct isp_layer *x = &p->layer[i];
		if (x->proto == l->proto)
			return NULL;    /* a nested report: its inner packet is not ours */
		if (x->proto != s->ip_id)
			continue;
		const struct isp_layer *n = i + 1 < p->nlayers ? &p->layer[i + 1] : NULL;
		if (n && (n->proto == s->udp_id || n->proto == s->tcp_id) &&
		    n->off == x->off + x->len)
			*l4 = n;
		return x;
	}
	return NULL;
}


/* metadata fields: flag | element type << 16 | INT bit << 8 | part */
#define R_MD ((uintptr_t)1 << 30)
#define MD(bit, part) (R_MD | (uintptr_t)(bit) << 8 | (uintptr_t)(part))

/* v0.5 local headers: fixed offsets of the same meanings. */
static bool v05_local(const uint8_t *h, unsigned kind, unsigned bit, unsigned part,
		      struct isp_value *o, uint8_t type)
{
	/* drop header: switch 4, in 2, eg 2, queue 1, reason 1, pad 2
	 * local header: switch 4, in 2, eg 2, queue 1 + occ 3, egress ts 4 */
	bool na = false;
	uint64_t v;

	if (bit == 1)
		v = int_read_part(h + 4, 4, (enum int_part)part, &na);
	else if (bit == 3 && (part == INT_PART_TOP8 || kind == 2))
		v = int_read_part(h + 8, 4, (enum int_part)part, &na);
	else if (bit == 15 && kind == 1)
		v = int_read_part(h + 8, 4, (enum int_part)part, &na);
	else if (bit == 5 && kind == 2)
		v = int_read_part(h + 12, 4, INT_PART_WHOLE, &na);
	else
		return false;
	isp_val_scalar(o, type, v);
	o->missing = na;
	return true;
}

static bool rep_get(const struct isp_packet *p, const struct isp_layer *l,
		    uintptr_t arg, struct isp_value *o)
{
	struct rep_state s;
	const uint8_t *b = p->data + l->off;
	const uint8_t *ir;

	load(l, &s);
	ir = b + s.ir_off;
	if (arg & R_MD) {
		unsigned bit = (arg >> 8) & 0x1f, part = arg & 0xff;
		uint8_t type = (uint8_t)(arg >> 16);
		if (s.kind == REP_V05)
			return s.v05_local && v05_local(b + 12, s.v05_local, bit, part, o, type);
		if (!(s.md_bits & isp_bit16(bit)))
			return false;
		enum int_layout_kind k = s.kind == REP_V20 ? INT_LAYOUT_V2 : INT_LAYOUT_V10;
		unsigned size = s.kind == REP_V10 ? 4 : int_field_size(k, bit);
		unsigned fo = s.kind == REP_V10 ? v10_md_offset(s.md_bits, bit)
						: int_field_offset(k, s.md_bits, bit);
		if (fo + size > s.md_len)
			return false;
		bool na;
		isp_val_scalar(o, type, int_read_part(b + s.md_off + fo, size, (enum int_part)part, &na));
		o->missing = na;
		return true;
	}
	switch (arg) {
	case R_VERSION: return isp_val_scalar(o, ISP_T_U8, s.kind == REP_V05 ? 0 : s.kind);
	case R_HW_ID:
		if (s.kind == REP_V20)
			return isp_val_scalar(o, ISP_T_U8, isp_bits32(isp_be32(b), 4, 6));
		return isp_val_scalar(o, ISP_T_U8, b[3] & 0x3f);
	case R_SEQ:
		if (s.kind == REP_V20)
			return isp_val_scalar(o, ISP_T_U32, isp_bits32(isp_be32(b), 10, 22));
		return isp_val_scalar(o, ISP_T_U32, isp_be32(b + (s.kind == REP_V05 ? 4 : 8)));
	case R_NODE_ID:
		if (s.kind == REP_V20)
			return isp_val_scalar(o, ISP_T_U32, isp_be32(b + 4));
		if (s.kind == REP_V10)
			return isp_val_scalar(o, ISP_T_U32, isp_be32(b + 4));
		return s.v05_local ? isp_val_scalar(o, ISP_T_U32, isp_be32(b + 12)) : false;
	case R_INGRESS_TIME:
		if (s.kind == REP_V20) /* v2.0 carries it as metadata bit 4 */
			return rep_get(p, l, MD(4, INT_PART_WHOLE) | (uintptr_t)ISP_T_U64 << 16, o);
		return isp_val_scalar(o, ISP_T_U64, isp_be32(b + (s.kind == REP_V05 ? 8 : 12)));
	case R_NPROTO: return isp_val_scalar(o, ISP_T_U8, s.nproto);
	case R_REP_TYPE: return s.kind == REP_V20 ? isp_val_scalar(o, ISP_T_U8, ir[0] >> 4) : false;
	case R_D: return isp_val_scalar(o, ISP_T_U8, !!(s.flags & 8));
	case R_Q: return isp_val_scalar(o, ISP_T_U8, !!(s.flags & 4));
	case R_F: return isp_val_scalar(o, ISP_T_U8, !!(s.flags & 2));
	case R_I: return s.kind == REP_V20 ? isp_val_scalar(o, ISP_T_U8, s.flags & 1) : false;
	case R_MD_BITS: return s.kind != REP_V05 ? isp_val_scalar(o, ISP_T_U16, s.md_bits) : false;
	case R_DOMAIN:
	case R_DS_MD_BITS:
	case R_DS_MD_STATUS:
		if (s.kind != REP_V20 || ir[0] >> 4 != 1)
			return false;
		return isp_val_scalar(o, ISP_T_U16, isp_be16(ir + (arg == R_DOMAIN ? 6 : arg == R_DS_MD_BITS ? 8 : 10)));
	case R_REPORT_LEN: return s.kind == REP_V20 ? isp_val_scalar(o, ISP_T_U8, ir[1]) : false;
	case R_MD_LEN: return s.kind == REP_V20 ? isp_val_scalar(o, ISP_T_U8, ir[2]) : false;
	case R_COUNT: return isp_val_scalar(o, ISP_T_U8, s.kind == REP_V20 ? s.count : 1);
	case R_TLV_COUNT:
		return s.kind == REP_V20 && s.nproto == 1 ? isp_val_scalar(o, ISP_T_U8, s.tlv_count) : false;
	case R_IP_SRC:
	case R_IP_DST:
	case R_PORT_SRC:
	case R_PORT_DST: {
		const struct isp_layer *l4, *ip = inner_ip(p, l, &s, &l4);
		/* the IPv4 and UDP/TCP decoders checked 20 and 8 bytes */
		if (arg == R_IP_SRC || arg == R_IP_DST)
			return ip && isp_val_scalar(o, ISP_T_IPV4,
						    isp_be32(p->data + ip->off + (arg == R_IP_SRC ? 12 : 16)));
		return l4 && isp_val_scalar(o, ISP_T_U16,
					    isp_be16(p->data + l4->off + (arg == R_PORT_SRC ? 0 : 2)));
	}
	case R_TLV_TYPES: {
		if (s.kind != REP_V20 || s.nproto != 1)
			return false;
		isp_val_array(o, ISP_T_U8);
		for (unsigned t = s.inner_off; t + 4 <= s.inner_end && o->count < ISP_MAX_HOPS;
		     t += 4 + b[t + 1] * 4u)
			o->v.arr[o->count++] = b[t] >> 4;
		return true;
	}
	}
	return false;
}

#define RA(n, t, a, h) { n, t, 0, rep_get, a, h }
#define RM(n, t, bit, part, h) { n, t, 0, rep_get, MD(bit, part) | (uintptr_t)(t) << 16, h }

static const struct isp_attr_desc rep_attrs[] = {
	RA("version", ISP_T_U8, R_VERSION, "report version (0 = v0.5, 1 = v1.0, 2 = v2.0)"),
	RA("hw_id", ISP_T_U8, R_HW_ID, "hardware ID of the reporting pipeline"),
	RA("seq_num", ISP_T_U32, R_SEQ, "sequence number (22 bits in v2.0)"),
	RA("node_id", ISP_T_U32, R_NODE_ID, "switch (node) ID of the reporter"),
	RA("switch_id", ISP_T_U32, R_NODE_ID, ISP_ALIAS_OF("int_report.node_id") ", MMT-DPI's name"),
	RA("ingress_time", ISP_T_U64, R_INGRESS_TIME,
	   "ingress timestamp, ns (v0.5, v1.0 header: 32 bits; v2.0 metadata bit 4: 64 bits)"),
	RA("sink_time", ISP_T_U64, R_INGRESS_TIME,
	   ISP_ALIAS_OF("int_report.ingress_time") ", MMT-DPI's name (ns)"),
	RA("ip_src", ISP_T_IPV4, R_IP_SRC, "source address of the inner packet's (first) IPv4 header"),
	RA("ip_dst", ISP_T_IPV4, R_IP_DST, "destination address of the inner packet's IPv4 header"),
	RA("port_src", ISP_T_U16, R_PORT_SRC, "source port of the UDP or TCP header after it"),
	RA("port_dst", ISP_T_U16, R_PORT_DST, "destination port of the UDP or TCP header after it"),
	RA("nproto", ISP_T_U8, R_NPROTO, "what follows: v0.5 NProto, v1.0 NProt, v2.0 InType"),
	RA("rep_type", ISP_T_U8, R_REP_TYPE, "v2.0 report type (0 inner only, 1 INT, 2 IOAM)"),
	RA("dropped", ISP_T_U8, R_D, "D flag: the packet was dropped"),
	RA("congested_queue", ISP_T_U8, R_Q, "Q flag: congested queue"),
	RA("tracked_flow", ISP_T_U8, R_F, "F flag: tracked flow"),
	RA("intermediate", ISP_T_U8, R_I, "I flag: intermediate report (v2.0)"),
	RA("md_bits", ISP_T_U16, R_MD_BITS, "metadata bits present, in INT bitmap positions"),
	RA("domain_id", ISP_T_U16, R_DOMAIN, "domain-specific ID (v2.0)"),
	RA("ds_md_bits", ISP_T_U16, R_DS_MD_BITS, "domain-specific metadata bits (v2.0)"),
	RA("ds_md_status", ISP_T_U16, R_DS_MD_STATUS, "domain-specific metadata status (v2.0)"),
	RA("report_length", ISP_T_U8, R_REPORT_LEN, "individual report length in words (v2.0)"),
	RA("md_length", ISP_T_U8, R_MD_LEN, "metadata length in words (v2.0)"),
	RA("report_count", ISP_T_U8, R_COUNT, "individual reports in this packet"),
	RA("tlv_count", ISP_T_U8, R_TLV_COUNT, "TLVs of a v2.0 report with InType TLV"),
	{ "tlv_types", ISP_T_U8, 1, rep_get, R_TLV_TYPES, "TLVType of each TLV (v2.0 InType TLV)" },
	RM("ingress_port", ISP_T_U16, 1, INT_PART_HI, "ingress port"),
	RM("egress_port", ISP_T_U16, 1, INT_PART_LO, "egress port"),
	RM("hop_latency", ISP_T_U32, 2, INT_PART_WHOLE, "hop latency"),
	RM("queue_id", ISP_T_U8, 3, INT_PART_TOP8, "queue ID"),
	RM("queue_occup", ISP_T_U32, 3, INT_PART_LOW24, "queue occupancy (24 bits)"),
	RM("egress_time", ISP_T_U64, 5, INT_PART_WHOLE, "egress timestamp"),
	RM("lv2_ingress_port", ISP_T_U32, 6, INT_PART_HI, "level-2 ingress port (v2.0)"),
	RM("lv2_egress_port", ISP_T_U32, 6, INT_PART_LO, "level-2 egress port (v2.0)"),
	RM("tx_utilize", ISP_T_U32, 7, INT_PART_WHOLE, "egress port TX utilization"),
	RM("buffer_id", ISP_T_U8, 8, INT_PART_TOP8, "buffer ID (v2.0)"),
	RM("buffer_occup", ISP_T_U32, 8, INT_PART_LOW24, "buffer occupancy (v2.0, 24 bits)"),
	RM("drop_queue_id", ISP_T_U8, 15, INT_PART_TOP8, "queue ID of a drop report"),
	RM("drop_reason", ISP_T_U8, 15, INT_PART_BYTE1, "drop reason"),
	{ 0 }
};

static const struct isp_link rep_links[] = {
	{ ISP_TBL_UDP_PORT, 32766 }, { ISP_TBL_UDP_PORT, 54321 },
	{ ISP_TBL_UDP_PORT, 6000 }, { ISP_TBL_UDP_PORT, 1234 },
	{ ISP_TBL_UDP_PORT, 8090 }, { ISP_TBL_UDP_PORT, 9555 },
	{ ISP_TBL_UDP_PORT, 5900 },
	ISP_LINKS_END
};

static const struct isp_proto_desc rep_desc = {
	.name = "int_report",
	.help = "INT telemetry report v0.5, v1.0, v2.0 (group and coalesced individual reports)",
	.decode = rep_decode,
	.links = rep_links,
	.attrs = rep_attrs,
};

int isp_int_report_register(struct isp_registry *reg);
int isp_int_report_register(struct isp_registry *reg)
{
	/* a module has its own copy of the layout tables (its symbols are
	 * hidden): fill it, as int's registration fills the binary's */
	int_layout_init();
	return isp_register_proto(reg, &rep_desc);
}
ISP_PLUGIN_ENTRY(isp_int_report_register)
