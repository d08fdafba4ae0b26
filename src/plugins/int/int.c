/*
 * int.c - the "int" protocol: In-band Network Telemetry metadata carried in
 * a packet (INT-MD v0.5, v1.0, v2.x; INT-MX), over TCP/UDP, VXLAN-GPE,
 * Geneve and GRE. Registration, detection settings and attributes (with
 * every name of MMT-DPI's int plugin: README.md); the header parsing is in
 * int_decode.c, the hop layouts in int_layout.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "int_state.h"

struct int_config int_cfg = {
	.ndscp = 1,
	.dscp_value = { 0x20 },
	.dscp_mask = { 0x3f },
	.dscp_set = UINT64_C(1) << 0x20,
	.structural_in_reports = true,
};

/* The value/mask list as a set of the 64 DSCPs: detection runs under every
 * UDP and TCP layer (a report's outer one too), a test of one bit there
 * instead of a loop over the list. */
static void dscp_set_update(void)
{
	uint64_t set = 0;

	for (unsigned v = 0; v < 64; v++)
		for (unsigned i = 0; i < int_cfg.ndscp; i++)
			if ((v & int_cfg.dscp_mask[i]) == (int_cfg.dscp_value[i] & int_cfg.dscp_mask[i]))
				set |= UINT64_C(1) << v;
	int_cfg.dscp_set = set;
}

/* ---- detection under TCP/UDP ---- */

/* int_detect past the DSCP: a probe marker, or INT by structure inside a
 * report. Apart, so that a datagram neither can apply to (most that are
 * not INT) costs int_detect no saved register. */
static __attribute__((noinline)) bool
int_detect_more(const struct isp_dissect *d, const struct isp_layer *parent)
{
	const struct isp_packet *p = d->pkt;
	uint32_t payload = parent->off + parent->len;

	if (int_cfg.probe_marker_set && payload + 8 <= parent->end &&
	    isp_be64(p->data + payload) == int_cfg.probe_marker)
		return true;
	/* Inside a telemetry report the payload is INT by construction when
	 * its shim is well formed; DSCP there is whatever the sink saw. A
	 * capture cut inside the shim and header (12 bytes) still shows its
	 * type byte: INT, counted truncated, not passed over in silence. */
	if (d->in_report && int_cfg.structural_in_reports && payload < parent->end &&
	    (payload + 12 <= parent->end || isp_region_cut(d, parent))) {
		uint8_t b0 = p->data[payload];
		return b0 == 1 || b0 == 0x10 || b0 == 0x14 || b0 == 0x18 || b0 == 0x30;
	}
	return false;
}

static bool int_detect(const struct isp_dissect *d, const struct isp_layer *parent)
{
	if (int_cfg.dscp_set >> (d->ip_tos >> 2) & 1)
		return true;
	if (!int_cfg.probe_marker_set && !d->in_report)
		return false;
	return int_detect_more(d, parent);
}

/* ---- options ---- */

static int parse_u(const char *s, unsigned long max, unsigned long *out)
{
	char *end;

	errno = 0;
	unsigned long v = strtoul(s, &end, 0);
	if (errno || end == s || v > max)
		return -1;
	*out = v;
	return (int)(end - s);
}

static int int_set_option(const char *key, const char *value, char *err, size_t errlen)
{
	if (strcmp(key, "dscp") == 0) {
		int_cfg.ndscp = 0;
		int_cfg.dscp_set = 0;
		if (strcmp(value, "none") == 0)
			return 0;
		for (const char *s = value; *s;) {
			unsigned long v, m = 0x3f;
			int used = parse_u(s, 0x3f, &v);
			if (used <= 0 || int_cfg.ndscp >= INT_MAX_DSCP)
				goto bad_dscp;
			s += used;
			if (*s == '/') {
				used = parse_u(s + 1, 0xff, &m);
				if (used <= 0)
					goto bad_dscp;
				s += used + 1;
			}
			int_cfg.dscp_value[int_cfg.ndscp] = (uint8_t)v;
			int_cfg.dscp_mask[int_cfg.ndscp++] = (uint8_t)(m & 0x3f);
			if (*s == ',')
				s++;
			else if (*s)
				goto bad_dscp;
		}
		dscp_set_update();
		return 0;
bad_dscp:
		dscp_set_update();      /* the values before the error stay, as before */
		snprintf(err, errlen, "expected DSCP[/MASK][,...] with 6-bit values, or none");
		return -1;
	}
	if (strcmp(key, "probe-marker") == 0) {
		if (strcmp(value, "none") == 0) {
			int_cfg.probe_marker_set = false;
			return 0;
		}
		char *end;
		errno = 0;
		unsigned long long v = strtoull(value, &end, 0);
		if (errno || end == value || *end) {
			snprintf(err, errlen, "expected a 64-bit number such as 0xaaaaaaaabbbbbbbb");
			return -1;
		}
		int_cfg.probe_marker = v;
		int_cfg.probe_marker_set = true;
		return 0;
	}
	if (strcmp(key, "dialect") == 0) {
		if (strcmp(value, "auto") == 0 || strcmp(value, "spec") == 0)
			int_cfg.dialect = INT_DIALECT_AUTO;
		else if (strcmp(value, "l4s") == 0)
			int_cfg.dialect = INT_DIALECT_L4S;
		else {
			snprintf(err, errlen, "expected auto or l4s");
			return -1;
		}
		return 0;
	}
	if (strcmp(key, "in-reports") == 0) {
		if (strcmp(value, "structural") == 0)
			int_cfg.structural_in_reports = true;
		else if (strcmp(value, "detect") == 0)
			int_cfg.structural_in_reports = false;
		else {
			snprintf(err, errlen, "expected structural or detect");
			return -1;
		}
		return 0;
	}
	snprintf(err, errlen, "unknown option (known: dscp, probe-marker, dialect, "
		 "in-reports, udp-ports, tcp-ports)");
	return -1;
}

/* ---- attributes ---- */

/* Per-hop attribute arg: bit | part << 8 | type << 16 (| V05_ONLY) */
#define HOP(bit, part, type) ((uintptr_t)(bit) | (uintptr_t)(part) << 8 | (uintptr_t)(type) << 16)
#define V05_ONLY ((uintptr_t)1 << 24)
#define L4S_ONLY ((uintptr_t)1 << 25)

/* Where the field of a per-hop attribute sits in this header's hop blocks
 * (offset and size), or false when the header does not have it. */
static inline __attribute__((always_inline)) bool
hop_field(const struct int_state *s, uintptr_t arg,
	  unsigned *off, unsigned *size)
{
	unsigned bit = arg & 0xff;

	/* v0.5 bit 6 is queue congestion, v1.0+ level-2 ports: one name each */
	if (bit == 6 && ((arg & V05_ONLY) != 0) != (s->family == 0))
		return false;
	if (bit == 8 && s->family != 2)
		return false;
	if (bit == 15 && s->family == 0)        /* reserved in v0.5 */
		return false;
	/* a second meaning of a word that only the p4-int-l4s layout has */
	if ((arg & L4S_ONLY) && s->layout != INT_LAYOUT_L4S)
		return false;
	if (!int_field_find(s->fo, (enum int_layout_kind)s->layout, s->bitmap, bit, off, size))
		return false;
	return *off + *size <= s->stride;
}

/* A per-hop attribute. Every one has a getter of its own (below) that
 * calls this with its arg as a constant: the checks of the bit, the part's
 * shift and mask and the element type fold into its code, where a getter
 * shared by all of them spent more on decoding its arg than on the hops. */
static inline __attribute__((always_inline)) bool
hop_get(const struct isp_packet *p, const struct isp_layer *l, uintptr_t arg,
	struct isp_value *o)
{
	struct int_state s;
	unsigned off, size;

	int_state_load_hops(l, &s);
	if (!hop_field(&s, arg, &off, &size))
		return false;
	int_hops_read(p->data + l->off + s.stack_off + off, s.nhops, s.stride, size,
		      (enum int_part)((arg >> 8) & 0xff), (uint8_t)((arg >> 16) & 0xff), o);
	return true;
}

/* The same attribute as text (isp_put_fn): NULL where hop_get returns
 * false or no hop, and at an unavailable value. */
static inline __attribute__((always_inline)) char *
hop_put(const struct isp_packet *p, const struct isp_layer *l, uintptr_t arg,
	char *o, unsigned flags, struct jsonw_top *top)
{
	struct int_state s;
	unsigned off, size;

	int_state_load_hops(l, &s);
	if (s.nhops == 0 || !hop_field(&s, arg, &off, &size))
		return NULL;
	return int_hops_put(p->data + l->off + s.stack_off + off, s.nhops, s.stride, size,
			    (enum int_part)((arg >> 8) & 0xff), flags & ISP_PUT_WIRE_ORDER, o, top);
}

/* name, element type, bit, part, flags, help */
#define INT_PER_HOP(X) \
	X(hop_switch_ids, ISP_T_U32, 0, INT_PART_WHOLE, 0, "switch (node) ID per hop") \
	X(hop_ingress_port_ids, ISP_T_U16, 1, INT_PART_HI, 0, "level-1 ingress port per hop") \
	X(hop_egress_port_ids, ISP_T_U16, 1, INT_PART_LO, 0, "level-1 egress port per hop") \
	X(hop_latencies, ISP_T_U32, 2, INT_PART_WHOLE, 0, "hop latency per hop") \
	X(hop_queue_ids, ISP_T_U8, 3, INT_PART_TOP8, 0, "queue ID per hop") \
	X(hop_queue_occups, ISP_T_U32, 3, INT_PART_LOW24, 0, "queue occupancy per hop (24 bits)") \
	X(hop_ingress_times, ISP_T_U64, 4, INT_PART_WHOLE, 0, "ingress timestamp per hop (4 or 8 bytes)") \
	X(hop_egress_times, ISP_T_U64, 5, INT_PART_WHOLE, 0, "egress timestamp per hop (4 or 8 bytes)") \
	X(hop_lv2_ingress_port_ids, ISP_T_U32, 6, INT_PART_HI, 0, "level-2 ingress port per hop (v1.0+)") \
	X(hop_lv2_egress_port_ids, ISP_T_U32, 6, INT_PART_LO, 0, "level-2 egress port per hop (v1.0+)") \
	X(hop_congestion_queue_ids, ISP_T_U8, 6, INT_PART_TOP8, V05_ONLY, \
	  "queue ID of the congestion word per hop (v0.5)") \
	X(hop_congestions, ISP_T_U32, 6, INT_PART_LOW24, V05_ONLY, \
	  "queue congestion status per hop (v0.5, 24 bits)") \
	X(hop_tx_utilizes, ISP_T_U32, 7, INT_PART_WHOLE, 0, "egress port TX utilization per hop") \
	X(hop_buffer_ids, ISP_T_U8, 8, INT_PART_TOP8, 0, "buffer ID per hop (v2.x)") \
	X(hop_buffer_occups, ISP_T_U32, 8, INT_PART_LOW24, 0, "buffer occupancy per hop (v2.x, 24 bits)") \
	X(hop_checksum_complements, ISP_T_U32, 15, INT_PART_WHOLE, 0, \
	  "checksum complement per hop (v1.0+)") \
	X(hop_l4s_mark, ISP_T_U16, INT_BIT_L4S, INT_PART_HI, 0, \
	  "L4S: packets ECN-marked since the previous INT packet") \
	X(hop_l4s_drop, ISP_T_U16, INT_BIT_L4S, INT_PART_LO, 0, \
	  "L4S: packets dropped since the previous INT packet") \
	X(hop_l4s_mark_probability, ISP_T_U32, 7, INT_PART_WHOLE, L4S_ONLY, \
	  "L4S: mark probability per hop, the TX-utilization word of the p4-int-l4s layout")

#define HOP_GETTER(name, type, bit, part, flags, help)                          \
	static bool get_##name(const struct isp_packet *p, const struct isp_layer *l, \
			       uintptr_t arg, struct isp_value *o)              \
	{                                                                       \
		(void)arg;                                                      \
		return hop_get(p, l, HOP(bit, part, type) | (flags), o);        \
	}
INT_PER_HOP(HOP_GETTER)

#define HOP_PUTTER(name, type, bit, part, flags, help)                          \
	static char *put_##name(const struct isp_packet *p, const struct isp_layer *l, \
				uintptr_t arg, char *o, unsigned fl, struct jsonw_top *top) \
	{                                                                       \
		(void)arg;                                                      \
		return hop_put(p, l, HOP(bit, part, type) | (flags), o, fl, top); \
	}
INT_PER_HOP(HOP_PUTTER)

/* int.latency: summed in place, without building the per-hop array. */
static bool int_latency_sum(const struct isp_packet *p, const struct isp_layer *l,
			    uintptr_t arg, struct isp_value *o)
{
	struct int_state s;
	unsigned off, size;

	(void)arg;
	int_state_load_hops(l, &s);
	if (!hop_field(&s, HOP(2, INT_PART_WHOLE, ISP_T_U32), &off, &size))
		return false;
	return isp_val_scalar(o, ISP_T_U64, int_hops_sum(p->data + l->off + s.stack_off + off,
							  s.nhops, s.stride, size));
}

/*
 * int.is_*: MMT-DPI's flags of the instruction bits, 1 when the bit of the
 * canonical bitmap (int.instruction_bits) is set and absent, not 0, when
 * it is clear, so that a rule's `where = {"int.is_cloud_gaming"}` selects
 * the packets with the bit. arg = the bit, MSB = bit 0.
 */
static bool int_is_flag(const struct isp_packet *p, const struct isp_layer *l,
			uintptr_t arg, struct isp_value *o)
{
	struct int_state s;

	(void)p;
	int_state_load_hops(l, &s);
	if (!(s.bitmap & isp_bit16((unsigned)arg)))
		return false;
	return isp_val_scalar(o, ISP_T_U8, 1);
}

/*
 * int.cg_*: the cloud-gaming block of the L4S layout (INT_BIT_CG), laid
 * out as MMT-DPI's cloud_gaming_data_t (naturally aligned, network order):
 * first IP 0, second IP 4, packets up 8 and down 10 (16 bits each), sums
 * of sizes up 12 and down 16, sums of inter-arrival times up 20 and down
 * 24 (in 64 us units). MMT-DPI reads the block of its hop 0, the first on
 * the wire (the last hop on the path, nearest the sink), and so does this.
 */
enum {
	CG_IP_SRC, CG_IP_DST,
	CG_NB_DOWN, CG_MEAN_SIZE_DOWN, CG_MEAN_IAT_DOWN, CG_SUM_SIZE_DOWN,
	CG_NB_UP, CG_MEAN_SIZE_UP, CG_MEAN_IAT_UP, CG_SUM_SIZE_UP,
};

static bool int_cg(const struct isp_packet *p, const struct isp_layer *l,
		   uintptr_t arg, struct isp_value *o)
{
	struct int_state s;
	unsigned off, size;

	int_state_load_hops(l, &s);
	/* present only when the decoded stride holds the block (l4s_stride) */
	if (s.nhops == 0 ||
	    !int_field_find(s.fo, (enum int_layout_kind)s.layout, s.bitmap, INT_BIT_CG, &off, &size) ||
	    off + size > s.stride)
		return false;
	const uint8_t *b = p->data + l->off + s.stack_off + off;
	bool up = arg >= CG_NB_UP;
	uint32_t nb = isp_be16(b + (up ? 8 : 10));
	uint32_t sum_size = isp_be32(b + (up ? 12 : 16));
	uint64_t sum_iat = isp_be32(b + (up ? 20 : 24));

	switch (arg) {
	case CG_IP_SRC: return isp_val_scalar(o, ISP_T_IPV4, isp_be32(b));
	case CG_IP_DST: return isp_val_scalar(o, ISP_T_IPV4, isp_be32(b + 4));
	case CG_NB_DOWN:
	case CG_NB_UP:
		return isp_val_scalar(o, ISP_T_U32, nb);
	case CG_SUM_SIZE_DOWN:
	case CG_SUM_SIZE_UP:
		return isp_val_scalar(o, ISP_T_U32, sum_size);
	case CG_MEAN_SIZE_DOWN:
	case CG_MEAN_SIZE_UP:
		return isp_val_scalar(o, ISP_T_U32, nb ? sum_size / nb : 0);
	case CG_MEAN_IAT_DOWN:
	case CG_MEAN_IAT_UP:
		/* in us; the values for 0 and 1 packet are the detector's
		 * defaults (P4_NFV_CG_Detector's controller), as MMT-DPI has
		 * them. 64-bit: MMT-DPI's 32-bit product wraps past 2^26 units */
		return isp_val_scalar(o, ISP_T_U64, nb == 0 ? 32960 : nb == 1 ? 16448 : sum_iat * 64 / nb);
	}
	return false;
}

enum {
	S_VERSION, S_MODE, S_BITMAP, S_WIRE_BITMAP, S_HOP_ML,
	S_REMAINING, S_MAX_HOP, S_E, S_M, S_D, S_C, S_SHIM_LEN, S_NPT,
	S_ORIG_DSCP, S_ORIG_PORT, S_ORIG_PROTO, S_DOMAIN, S_DS_INSTR, S_DS_FLAGS,
	S_TAIL_PROTO, S_TAIL_PORT, S_TAIL_DSCP, S_HOPML_MISMATCH, S_CARRIER,
};

/* int.num_hop, which most rules read: from the per-hop getters' part of
 * the state, not the whole of it as int_scalar loads it. */
static bool int_num_hop(const struct isp_packet *p, const struct isp_layer *l,
			uintptr_t arg, struct isp_value *o)
{
	struct int_state s;

	(void)p;
	(void)arg;
	int_state_load_hops(l, &s);
	return isp_val_scalar(o, ISP_T_U8, s.nhops);
}

static bool int_scalar(const struct isp_packet *p, const struct isp_layer *l,
		       uintptr_t arg, struct isp_value *o)
{
	struct int_state s;
	const uint8_t *tail;

	int_state_load(l, &s);
	/* the shim, which a Geneve option has not: its fields read as zero */
	static const uint8_t no_shim[SHIM_LEN];
	const uint8_t *sh = s.carrier == ISP_CARRIER_GENEVE ? no_shim : p->data + l->off + s.shim_off;
	unsigned npt = (sh[0] >> 2) & 3;     /* v2.x */
	switch (arg) {
	case S_VERSION: return isp_val_scalar(o, ISP_T_U8, s.version);
	case S_MODE: {
		static const char *const modes[] = { "?", "md", "destination", "mx" };
		isp_val_scalar(o, ISP_T_STRING, 0);
		snprintf(o->v.str, sizeof(o->v.str), "%s", modes[s.mode & 3]);
		return true;
	}
	case S_BITMAP: return isp_val_scalar(o, ISP_T_U16, s.bitmap);
	case S_WIRE_BITMAP: return isp_val_scalar(o, ISP_T_U16, s.wire_bitmap);
	case S_HOP_ML: return s.family ? isp_val_scalar(o, ISP_T_U8, s.hop_ml) : false;
	case S_REMAINING:
		return s.family && s.mode != INT_MODE_MX ? isp_val_scalar(o, ISP_T_U8, s.hop_cnt) : false;
	case S_MAX_HOP: return s.family == 0 ? isp_val_scalar(o, ISP_T_U8, s.max_hop_cnt) : false;
	case S_E: return isp_val_scalar(o, ISP_T_U8, !!(s.flags & INT_F_E));
	case S_M: return s.family ? isp_val_scalar(o, ISP_T_U8, !!(s.flags & INT_F_M)) : false;
	case S_D: return s.family == 2 ? isp_val_scalar(o, ISP_T_U8, !!(s.flags & INT_F_D)) : false;
	case S_C: return s.family < 2 ? isp_val_scalar(o, ISP_T_U8, !!(s.flags & INT_F_C)) : false;
	case S_SHIM_LEN:
		/* Length: byte 2 of a v0.5/v1.0 shim, byte 1 of a v2.x one */
		return s.carrier == ISP_CARRIER_GENEVE ? false
						       : isp_val_scalar(o, ISP_T_U8, sh[sh[0] < 0x10 ? 2 : 1]);
	case S_NPT: return s.family == 2 ? isp_val_scalar(o, ISP_T_U8, npt) : false;
	case S_ORIG_DSCP:
		if (s.carrier != ISP_CARRIER_L4 || (s.family == 2 && npt != 0) || s.family == 0)
			return false;
		return isp_val_scalar(o, ISP_T_U8, s.family == 2 ? (sh[3] >> 2) & 0x3f : sh[3] >> 2);
	case S_ORIG_PORT:
		return s.family == 2 && npt == 1 ? isp_val_scalar(o, ISP_T_U16, isp_be16(sh + 2)) : false;
	case S_ORIG_PROTO:
		return s.family == 2 && npt == 2 ? isp_val_scalar(o, ISP_T_U8, sh[3]) : false;
	/* the v2.x header's last three words, which its decoder checked */
	case S_DOMAIN:
	case S_DS_INSTR:
	case S_DS_FLAGS:
		return s.family == 2 ? isp_val_scalar(o, ISP_T_U16, isp_be16(p->data + l->off + s.md_off +
									6 + 2 * (arg - S_DOMAIN)))
				     : false;
	case S_TAIL_PROTO:
	case S_TAIL_PORT:
	case S_TAIL_DSCP:
		if (!s.tail_off)
			return false;
		tail = p->data + l->off + s.tail_off;
		if (arg == S_TAIL_PROTO)
			return isp_val_scalar(o, ISP_T_U8, tail[0]);
		if (arg == S_TAIL_PORT)
			return isp_val_scalar(o, ISP_T_U16, isp_be16(tail + 1));
		/* padding 2 · DSCP 6, as the ONOS and GEANT sources declare
		 * it (an 8-bit field holding the value reads the same) */
		return isp_val_scalar(o, ISP_T_U8, tail[3] & 0x3f);
	case S_HOPML_MISMATCH:
		return isp_val_scalar(o, ISP_T_U8, !!(s.flags & INT_F_HOPML_MISMATCH));
	case S_CARRIER: {
		static const char *const carriers[] = { "l4", "vxlan_gpe", "geneve", "gre" };
		isp_val_scalar(o, ISP_T_STRING, 0);
		snprintf(o->v.str, sizeof(o->v.str), "%s", carriers[s.carrier & 3]);
		return true;
	}
	}
	return false;
}

#define SCALAR(n, t, a, h) { n, t, 0, int_scalar, a, h }
#define IS_FLAG(n, bit, h) { n, ISP_T_U8, 0, int_is_flag, bit, \
	"1 when int.instruction_bits has " h ", else absent" }
#define CG(n, t, a, h) { n, t, 0, int_cg, a, "cloud gaming (L4S layout, bit 0x0040, last hop): " h }
#define HOP_ATTR(name, type, bit, part, flags, help) \
	{ #name, type, 1, get_##name, HOP(bit, part, type) | (flags), help },

static const struct isp_attr_desc int_attrs[] = {
	SCALAR("version", ISP_T_U8, S_VERSION, "instruction header version field (0 = v0.5, 1 = v1.0, 2 = v2.x)"),
	SCALAR("mode", ISP_T_STRING, S_MODE, "md, mx or destination"),
	SCALAR("carrier", ISP_T_STRING, S_CARRIER, "what carries INT: l4, vxlan_gpe, geneve, gre"),
	{ "num_hop", ISP_T_U8, 0, int_num_hop, 0, "hops in the metadata stack" },
	SCALAR("instruction_bits", ISP_T_U16, S_BITMAP, "instruction bitmap, MSB = bit 0 (canonical)"),
	SCALAR("wire_instruction_bits", ISP_T_U16, S_WIRE_BITMAP, "instruction bitmap as written on the wire"),
	SCALAR("hop_ml", ISP_T_U8, S_HOP_ML, "per-hop metadata length in words, as written (v1.0+)"),
	SCALAR("remaining_hop_cnt", ISP_T_U8, S_REMAINING, "remaining hop count (v1.0+)"),
	SCALAR("max_hop_cnt", ISP_T_U8, S_MAX_HOP, "maximum hop count (v0.5)"),
	SCALAR("e_bit", ISP_T_U8, S_E, "hop count exceeded"),
	SCALAR("m_bit", ISP_T_U8, S_M, "MTU exceeded (v1.0+)"),
	SCALAR("d_bit", ISP_T_U8, S_D, "sink discards the packet (v2.x)"),
	SCALAR("c_bit", ISP_T_U8, S_C, "copy flag (v0.5, v1.0)"),
	SCALAR("shim_len", ISP_T_U8, S_SHIM_LEN, "shim Length field in words, as written"),
	SCALAR("npt", ISP_T_U8, S_NPT, "next-protocol type of the v2.x shim"),
	SCALAR("orig_dscp", ISP_T_U8, S_ORIG_DSCP, "original DSCP saved in the shim"),
	SCALAR("orig_port", ISP_T_U16, S_ORIG_PORT, "original UDP destination port (v2.x NPT 1)"),
	SCALAR("orig_proto", ISP_T_U8, S_ORIG_PROTO, "original IP protocol (v2.x NPT 2)"),
	SCALAR("domain_id", ISP_T_U16, S_DOMAIN, "domain-specific ID (v2.x)"),
	SCALAR("ds_instruction", ISP_T_U16, S_DS_INSTR, "domain-specific instruction bits (v2.x)"),
	SCALAR("ds_flags", ISP_T_U16, S_DS_FLAGS, "domain-specific flags (v2.x)"),
	SCALAR("tail_next_proto", ISP_T_U8, S_TAIL_PROTO, "v0.5 tail: next protocol"),
	SCALAR("tail_dest_port", ISP_T_U16, S_TAIL_PORT, "v0.5 tail: original destination port"),
	SCALAR("tail_dscp", ISP_T_U8, S_TAIL_DSCP, "v0.5 tail: original DSCP (the last byte's low 6 bits)"),
	SCALAR("hop_ml_mismatch", ISP_T_U8, S_HOPML_MISMATCH, "1 when HopML disagrees with the bitmap"),
	{ "latency", ISP_T_U64, 0, int_latency_sum, 0, ISP_SUM_OF("int.hop_latencies") },
	INT_PER_HOP(HOP_ATTR)
	IS_FLAG("is_switch_id", 0, "bit 0 (0x8000, switch ID)"),
	IS_FLAG("is_in_egress_port_id", 1, "bit 1 (0x4000, level-1 ports)"),
	IS_FLAG("is_hop_latency", 2, "bit 2 (0x2000, hop latency)"),
	IS_FLAG("is_queue_id_occup", 3, "bit 3 (0x1000, queue ID and occupancy)"),
	IS_FLAG("is_ingress_time", 4, "bit 4 (0x0800, ingress timestamp)"),
	IS_FLAG("is_egress_time", 5, "bit 5 (0x0400, egress timestamp)"),
	IS_FLAG("is_lv2_in_egress_port_id", 6,
		"bit 6 (0x0200, level-2 ports; v0.5: queue congestion)"),
	IS_FLAG("is_tx_utilize", 7, "bit 7 (0x0100, TX utilization)"),
	IS_FLAG("is_l4s_mark_drop", 8,
		"bit 8 (0x0080, MMT-DPI's L4S mark/drop; v2.x: buffer occupancy)"),
	IS_FLAG("is_cloud_gaming", 9,
		"bit 9 (0x0040, MMT-DPI's cloud-gaming block; spec: reserved)"),
	CG("cg_ip_src", ISP_T_IPV4, CG_IP_SRC, "first IPv4 address of the flow"),
	CG("cg_ip_dst", ISP_T_IPV4, CG_IP_DST, "second IPv4 address of the flow"),
	CG("cg_nb_pkt_down", ISP_T_U32, CG_NB_DOWN, "packets downstream in the window"),
	CG("cg_mean_pkt_size_down", ISP_T_U32, CG_MEAN_SIZE_DOWN,
	   "mean packet size downstream (integer division; 0 without packets)"),
	CG("cg_mean_iat_down", ISP_T_U64, CG_MEAN_IAT_DOWN,
	   "mean inter-arrival time downstream, us (32960 for 0 packets, 16448 for 1)"),
	CG("cg_sum_pkt_size_down", ISP_T_U32, CG_SUM_SIZE_DOWN, "bytes downstream in the window"),
	CG("cg_nb_pkt_up", ISP_T_U32, CG_NB_UP, "packets upstream in the window"),
	CG("cg_mean_pkt_size_up", ISP_T_U32, CG_MEAN_SIZE_UP,
	   "mean packet size upstream (integer division; 0 without packets)"),
	CG("cg_mean_iat_up", ISP_T_U64, CG_MEAN_IAT_UP,
	   "mean inter-arrival time upstream, us (32960 for 0 packets, 16448 for 1)"),
	CG("cg_sum_pkt_size_up", ISP_T_U32, CG_SUM_SIZE_UP, "bytes upstream in the window"),
	{ "cg_sum_ptk_size_up", ISP_T_U32, 0, int_cg, CG_SUM_SIZE_UP,
	  ISP_ALIAS_OF("int.cg_sum_pkt_size_up") ", MMT-DPI's spelling" },
	{ 0 }
};

#define HOP_PUT(name, type, bit, part, flags, help) { #name, put_##name },

static const struct isp_attr_put int_puts[] = {
	INT_PER_HOP(HOP_PUT)
	{ 0 }
};

static const char *const int_parents[] = { "udp", "tcp", NULL };

static const struct isp_link int_links[] = {
	{ ISP_TBL_GPE_NEXT, 0x05 },     /* INT v0.5 over VXLAN-GPE */
	{ ISP_TBL_GPE_NEXT, 0x08 },     /* v1.0 */
	{ ISP_TBL_GPE_NEXT, 0x80 },     /* v2.0 */
	{ ISP_TBL_GPE_NEXT, 0x82 },     /* v2.1 */
	{ ISP_TBL_CARRIER, ISP_CARRIER_GENEVE },
	{ ISP_TBL_CARRIER, ISP_CARRIER_GRE },
	ISP_LINKS_END
};

static const struct isp_proto_desc int_desc = {
	.name = "int",
	.help = "In-band Network Telemetry metadata (INT-MD v0.5/v1.0/v2.x, INT-MX)",
	.decode = int_decode,
	.links = int_links,
	.detect_parents = int_parents,
	.detect = int_detect,
	.attrs = int_attrs,
	.puts = int_puts,
	.set_option = int_set_option,
	.options_help =
		"dscp=V[/M][,...]   DSCP values (6-bit) that mark INT over TCP/UDP (default 0x20/0x3f; none)\n"
		"probe-marker=X     64-bit probe marker preceding the shim (v1.0; default none)\n"
		"dialect=auto|l4s   l4s: p4-int-l4s per-hop layout (mark/drop word, stride from the bitmap; default auto)\n"
		"in-reports=structural|detect  inside telemetry reports, recognise INT by its shim (default) or like live traffic\n",
};

int isp_int_register(struct isp_registry *reg);
int isp_int_register(struct isp_registry *reg)
{
	int_layout_init();
	return isp_register_proto(reg, &int_desc);
}
ISP_PLUGIN_ENTRY(isp_int_register)
