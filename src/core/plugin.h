/*
 * plugin.h - the only interface between the core and protocol plugins.
 *
 * A plugin is one protocol in one file. It exports a registration function
 * that fills an isp_proto_desc with designated initializers and hands it to
 * isp_register_proto(). The same file links into the binary as a built-in
 * and builds as a loadable .so (ISP_PLUGIN_ENTRY adds the .so entry point).
 *
 * Decoding is split in two so a packet pays only for what is used:
 *  - decode(): finds the header, checks every length against the captured
 *    bytes, records the few offsets its getters need in layer->st, and names
 *    the next protocol. It never copies packet bytes and never allocates.
 *  - attribute getters: read one attribute from the bytes on demand.
 */
#ifndef ISP_PLUGIN_H
#define ISP_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cursor.h"
#include "jsonw.h"

/* Raised when a plugin built against an older header could not work:
 * 2 = isp_packet.report_inner, isp_short_verdict(d, l);
 * 3 = isp_dissect.tables and .heur (isp_next_by, isp_next_l4 inline);
 * 4 = a payload placed elsewhere is returned as ISP_OK_AT (isp_next_at);
 * 5 = isp_dissect.in_fragment (isp_region_cut);
 * 6 = isp_next_by leaves ISP_TABLE_NONE in isp_dissect.next for "none";
 *     isp_dissect.l4_sport gone;
 * 7 = ISP_TBL_CARRIER (a module that dispatches through it would read
 *     past the tables of a core without it);
 * 8 = isp_proto_desc.puts (a module's shorter descriptor would be
 *     read past its end). */
#define ISP_PLUGIN_ABI     8
#define ISP_MAX_LAYERS     16   /* protocol layers kept per packet */
#define ISP_MAX_PROTOS     64   /* registered protocols */
#define ISP_MAX_HOPS       32   /* per-hop array capacity */
#define ISP_PROTO_NONE     0xffff
#define ISP_STR_MAX        256
#define ISP_MAX_WIRE_LEN   262144 /* larger originals are corrupt records */

/* ---- values -------------------------------------------------------------- */

enum isp_type {
	ISP_T_U8, ISP_T_U16, ISP_T_U32, ISP_T_U64,
	ISP_T_IPV4,         /* v.u holds the address in host order */
	ISP_T_IPV6,         /* v.ip6, network order */
	ISP_T_MAC,          /* v.mac */
	ISP_T_STRING,       /* v.str, NUL-terminated */
	ISP_T_TIMESTAMP,    /* v.u: nanoseconds since the epoch */
	ISP_T__COUNT
};

/*
 * One attribute value. Per-hop attributes fill v.arr[0..count) in path order
 * (index 0 = first hop on the path, the switch nearest the INT source).
 * `missing` marks elements whose wire value was all-ones ("unavailable");
 * for a scalar, bit 0 marks the value itself unavailable.
 */
struct isp_value {
	uint8_t type;           /* enum isp_type of one element */
	uint8_t is_array;
	uint8_t count;          /* elements in v.arr when is_array */
	uint32_t missing;
	union {
		uint64_t u;
		uint8_t ip6[16];
		uint8_t mac[6];
		char str[ISP_STR_MAX];
		uint64_t arr[ISP_MAX_HOPS];
	} v;
};

/* ---- packets and layers ------------------------------------------------- */

/* Private parse state a decoder leaves for its getters: offsets and small
 * decoded fields, never pointers (a layer may be copied). */
union isp_layer_state {
	uint8_t b[48];
	uint16_t h[24];
	uint32_t w[12];
	uint64_t q[6];
};

struct isp_layer {
	uint16_t proto;         /* registry id */
	uint8_t spare;
	uint8_t version;        /* protocol-defined (INT: header version) */
	uint32_t off;           /* first byte of the header in the packet */
	uint32_t len;           /* header length, set by decode() */
	uint32_t end;           /* bytes at [off, end) belong to this layer and
	                           what it encapsulates; end <= caplen */
	union isp_layer_state st;
};

struct isp_packet {
	const uint8_t *data;
	uint32_t caplen;        /* bytes present in data */
	uint32_t wirelen;       /* length on the wire */
	uint64_t ts_ns;
	uint64_t index;         /* 1-based position in the input */
	uint8_t nlayers;
	uint8_t report_index;   /* individual report within a coalesced packet */
	uint8_t report_count;
	uint8_t malformed;      /* enum isp_verdict of the failing layer, or 0 */
	uint16_t malformed_proto;
	uint8_t report_layer;   /* layer index of a coalescing report, or 0xff */
	uint8_t backlog;        /* the input's backlog when this packet was read,
				   in 256ths of its buffer (0: none, or unknown):
				   what overload shedding looks at */
	uint32_t report_next_off; /* where the next individual report starts */
	uint32_t report_inner;  /* where the current report's inner packet
				   starts, which its sender may have cut (0:
				   none; isp_region_cut) */
	struct isp_layer layer[ISP_MAX_LAYERS];
	/* Kept by the dissector for attribute lookups (one load instead of a
	 * scan of the layers): bit `proto` set when layer[0..nlayers) has
	 * that protocol, and then last[proto] is its innermost layer. */
	uint64_t protos;
	uint8_t last[ISP_MAX_PROTOS];
};

/* ---- decoding ------------------------------------------------------------ */

/* Outcome of decode(). Errors are counted per protocol and reason, and
 * the packet keeps the layers decoded before the failing one. */
enum isp_verdict {
	ISP_OK = 0,
	ISP_NOT_MINE,           /* heuristic candidate rejected: try others
				   (the layer's off and end left as given) */
	ISP_ERR_TRUNCATED,      /* header runs past the captured bytes of a
				   region that was cut (isp_region_cut) */
	ISP_ERR_BAD_LENGTH,     /* a length field contradicts the data */
	ISP_ERR_BAD_VERSION,    /* unknown version or type */
	ISP_ERR_HOP_OVERFLOW,   /* more hops than ISP_MAX_HOPS, or than declared */
	ISP_ERR_UNSUPPORTED,    /* valid but not decoded (e.g. a new option) */
	ISP_ERR_DEPTH,          /* too many encapsulation layers */
	ISP_ERR_BAD_WIRE_LEN,   /* the core's, never a decoder's: the capture
	                           record's original length is below its captured
	                           length or above ISP_MAX_WIRE_LEN (counted under
	                           "meta"; the record is not dissected) */
	ISP_VERDICT__COUNT,
	/* Not a verdict on the layer but a well-formed one whose payload is
	 * not right after its header: it starts at d->next_off and ends at
	 * d->next_end (isp_next_at). Apart from ISP_OK so that the loop
	 * asks where the payload is only on the decoders' rare path. */
	ISP_OK_AT = 0x80
};

/* Dispatch tables a decoder can name its payload by. */
enum isp_table {
	ISP_TBL_ETHERTYPE,      /* also GRE protocol type, Geneve protocol type */
	ISP_TBL_IPPROTO,
	ISP_TBL_UDP_PORT,
	ISP_TBL_TCP_PORT,
	ISP_TBL_GPE_NEXT,       /* VXLAN-GPE next protocol */
	ISP_TBL_LINKTYPE,       /* pcap LINKTYPE_*: what a capture or a report
	                           starts with (1 Ethernet, 228 IPv4, 229 IPv6) */
	ISP_TBL_CARRIER,        /* enum isp_carrier: what a carrier that marks its
	                           payload its own way hands it to (the INT option
	                           of Geneve, GRE's INT protocol type) */
	ISP_TBL__COUNT
};

/* Where an INT header sits: decides the shim layout. */
enum isp_carrier {
	ISP_CARRIER_L4 = 0,     /* TCP/UDP payload */
	ISP_CARRIER_GPE,        /* VXLAN-GPE next protocol = INT */
	ISP_CARRIER_GENEVE,     /* Geneve option (class 0x0103) */
	ISP_CARRIER_GRE,        /* GRE protocol type = INT */
};

struct isp_registry;

#define ISP_TABLE_NONE 0xff     /* a dispatch table's empty entry */
#define ISP_MAX_HEURISTICS 4

struct isp_dissect;
struct isp_layer;
/* Heuristic recognition below a parent (e.g. INT by DSCP under UDP).
 * Called before the port tables; must only look, never fail. */
typedef bool (*isp_detect_fn)(const struct isp_dissect *d,
			      const struct isp_layer *parent);

/* A protocol's heuristic children, tried in order before its ports. */
struct isp_heuristics {
	unsigned n;
	uint16_t id[ISP_MAX_HEURISTICS];
	isp_detect_fn detect[ISP_MAX_HEURISTICS];
};

/* Per-packet dissection context handed to decoders. */
struct isp_dissect {
	struct isp_packet *pkt;
	const struct isp_registry *reg;
	/* the registry's dispatch tables: protocol id by key, ISP_TABLE_NONE */
	const uint8_t (*tables)[65536];
	const struct isp_heuristics *heur;      /* by parent protocol id */
	uint16_t next;          /* protocol to decode next (ISP_PROTO_NONE, or
				   any value from ISP_MAX_PROTOS up: stop) */
	uint32_t next_off;      /* where it starts and its region's end, read */
	uint32_t next_end;      /*   only on ISP_OK_AT (isp_next_at); after
	                           ISP_OK: off + len and this layer's end */
	uint8_t ip_tos;         /* TOS/traffic class of the innermost IP so far */
	uint8_t in_report;      /* inside a telemetry report's inner packet */
	uint8_t in_fragment;    /* inside the first fragment of an IP packet:
	                           what it carries may run past it */
	uint8_t carrier;        /* enum isp_carrier for an INT layer */
	uint8_t carrier_next_tbl;  /* what follows an encapsulated INT header: */
	uint32_t carrier_next_key; /*   table and key, */
	uint32_t carrier_next_off; /*   where it starts (0: right after INT) */
	uint16_t l4_dport;
	uint8_t l4_is_tcp;
};

typedef enum isp_verdict (*isp_decode_fn)(struct isp_dissect *d,
					  struct isp_layer *l);

typedef bool (*isp_get_fn)(const struct isp_packet *p,
			   const struct isp_layer *l, uintptr_t arg,
			   struct isp_value *out);

/* Plugin options (e.g. "int.dscp=0x20/0x3c"): 0 on success, -1 with a
 * message in err. Called before any packet, from one thread. */
typedef int (*isp_option_fn)(const char *key, const char *value,
			     char *err, size_t errlen);

/*
 * A per-hop attribute of numbers written as text straight from the packet,
 * for the record writers, which otherwise have get() fill an array and
 * then read it back: each hop's value in decimal (jsonw_utoa_top, through
 * top) followed by a comma, in path order, or the last hop first with
 * ISP_PUT_WIRE_ORDER. Returns the end (after the last comma), or NULL
 * when it writes nothing the writer can use: no hop, a hop's value
 * unavailable (all-ones), the attribute absent. The writer then calls
 * get() and writes what it returns, so a put() must write exactly the
 * numbers get() would return. out has room for ISP_MAX_HOPS numbers of
 * JSONW_U64_MAX digits and their commas.
 */
#define ISP_PUT_WIRE_ORDER 1u
typedef char *(*isp_put_fn)(const struct isp_packet *p, const struct isp_layer *l,
			    uintptr_t arg, char *out, unsigned flags, struct jsonw_top *top);

/* An attribute's put, by the attribute's name (isp_proto_desc.puts): a
 * list apart from the attribute tables, which every plugin writes
 * positionally. */
struct isp_attr_put {
	const char *name;
	isp_put_fn put;
};

struct isp_attr_desc {
	const char *name;       /* without the protocol prefix */
	uint8_t type;           /* enum isp_type */
	uint8_t per_hop;        /* value is an array */
	isp_get_fn get;
	uintptr_t arg;          /* passed to get: lets one getter serve many */
	const char *help;
};

/*
 * An alias, a second name of an attribute (MMT-DPI's, say), is an entry
 * with the same type, getter and arg as the attribute it names, and the
 * help ISP_ALIAS_OF("proto.attr") followed by any remark. Rules accept
 * both names; --list-attributes shows "alias of proto.attr"; --dump leaves
 * the alias out, its value being the other's. A mark in the help text
 * rather than a new member, so that no plugin's table and no module's ABI
 * changes.
 */
#define ISP_ALIAS_PREFIX "alias of "
#define ISP_ALIAS_OF(full_name) ISP_ALIAS_PREFIX full_name

/* The help text after `mark` when it starts with it, else NULL. */
static inline const char *isp_attr_help_after(const struct isp_attr_desc *a, const char *mark)
{
	const char *h = a->help;

	if (!h)
		return NULL;
	while (*mark && *h == *mark)
		h++, mark++;
	return *mark == 0 ? h : NULL;
}

static inline bool isp_attr_is_alias(const struct isp_attr_desc *a)
{
	return isp_attr_help_after(a, ISP_ALIAS_PREFIX) != NULL;
}

/*
 * A scalar that is the sum of the available (not unavailable) elements of
 * a per-hop attribute of the same protocol layer (int.latency of
 * int.hop_latencies) has the help ISP_SUM_OF("proto.attr") followed by any
 * remark. Its getter still computes it alone; a rule set that reads both
 * fetches the per-hop attribute once and adds its elements up (expr.c)
 * rather than reading the hops from the packet twice. A mark in the help
 * text for the reason an alias is.
 */
#define ISP_SUM_PREFIX "sum of the available "
#define ISP_SUM_OF(full_name) ISP_SUM_PREFIX full_name

/* ISP_SUM_OF's "proto.attr", ending at a space or the end, or NULL. */
static inline const char *isp_attr_sum_of(const struct isp_attr_desc *a)
{
	return isp_attr_help_after(a, ISP_SUM_PREFIX);
}

/* A static link below a parent: "udp port 4789 is vxlan". */
struct isp_link {
	uint8_t table;          /* enum isp_table */
	uint32_t key;
};

#define ISP_MAX_LINKS 16

struct isp_proto_desc {
	const char *name;       /* MMT-style protocol name: "ip", "int", ... */
	const char *help;
	isp_decode_fn decode;
	const struct isp_link *links;     /* terminated by .table = 0xff */
	const char *const *detect_parents; /* NULL-terminated parent names */
	isp_detect_fn detect;
	const struct isp_attr_desc *attrs; /* terminated by .name = NULL */
	const struct isp_attr_put *puts;   /* optional; terminated by .name = NULL */
	isp_option_fn set_option;
	const char *options_help;
};

#define ISP_LINKS_END { 0xff, 0 }

/* ---- core services for plugins ------------------------------------------ */

/* Register a protocol; returns its id or -1 (duplicate name, full). */
int isp_register_proto(struct isp_registry *reg, const struct isp_proto_desc *d);

/* Id of a registered protocol, or ISP_PROTO_NONE. */
uint16_t isp_proto_id(const struct isp_registry *reg, const char *name);

/* A decoder's return when its payload is not right after its header
 * (a report's inner packet, an INT option inside Geneve): [off, end). */
static inline enum isp_verdict isp_next_at(struct isp_dissect *d, uint32_t off, uint32_t end)
{
	d->next_off = off;
	d->next_end = end;
	return ISP_OK_AT;
}

/* Set the next protocol from a dispatch table: the table's entry, whose
 * ISP_TABLE_NONE (unknown) stops the chain as ISP_PROTO_NONE does. Inline:
 * a few loads, in every link of a packet's chain. */
static inline void isp_next_by(struct isp_dissect *d, enum isp_table t, uint32_t key)
{
	d->next = key < 65536 ? d->tables[t][key] : ISP_TABLE_NONE;
}

/* isp_next_l4's candidates after the first. */
static __attribute__((noinline, unused)) bool
isp_next_heuristic_more(struct isp_dissect *d, const struct isp_layer *parent,
			const struct isp_heuristics *h)
{
	for (unsigned i = 1; i < h->n; i++) {
		if (h->detect[i](d, parent)) {
			d->next = h->id[i];
			return true;
		}
	}
	return false;
}

/* Resolve a TCP/UDP payload: heuristics registered under `parent`, then
 * the destination port only, in `ports` (the caller knows its table: no
 * test of d->l4_is_tcp): collectors, tunnels and INT sinks send to a
 * well-known port from any source port, and a reply or an unrelated
 * datagram whose source port happens to be 6000 is not a report. Inline
 * in the UDP and TCP decoders: one call fewer a packet. */
static inline void isp_next_l4(struct isp_dissect *d, const struct isp_layer *parent,
			       enum isp_table ports)
{
	const struct isp_heuristics *h = &d->heur[parent->proto];

	/* the first candidate inline, the others apart: with one (INT
	 * under UDP and TCP) the decoder saves no register for a loop */
	if (h->n) {
		if (h->detect[0](d, parent)) {
			d->next = h->id[0];
			return;
		}
		if (h->n > 1 && isp_next_heuristic_more(d, parent, h))
			return;
	}
	isp_next_by(d, ports, d->l4_dport);
}

/* Innermost layer of protocol `proto` before layer index `before`. */
const struct isp_layer *isp_layer_before(const struct isp_packet *p,
					 uint16_t proto, unsigned before);

/*
 * Generic getter for a fixed header field: `size` bytes at `off` from the
 * layer start, then `width` bits starting at MSB-first bit `first` of those
 * bytes (width 0 = the whole load). Build the arg with ISP_FIELD().
 * all_ones_missing marks the INT "unavailable" value.
 */
#define ISP_FIELD(off, size, first, width, type) \
	((uintptr_t)(off) | (uintptr_t)(size) << 16 | (uintptr_t)(first) << 21 | \
	 (uintptr_t)(width) << 28 | (uintptr_t)(type) << 35)
#define ISP_FIELD_UNAVAIL ((uintptr_t)1 << 41)
bool isp_get_field(const struct isp_packet *p, const struct isp_layer *l,
		   uintptr_t arg, struct isp_value *out);

/* Value helpers for getters. */
static inline bool isp_val_scalar(struct isp_value *o, uint8_t type, uint64_t u)
{
	o->type = type;
	o->is_array = 0;
	o->count = 0;
	o->missing = 0;
	o->v.u = u;
	return true;
}

/*
 * Getters of a 2- or 4-byte big-endian field at ISP_AT(off, type) from the
 * layer start, for fields inside the part of a header its decoder checked
 * is captured (IPv4 addresses, ports): the attributes rules read on every
 * packet, where isp_get_field spends more on its arg and on bounds checks
 * the decoder made than on the read. Inline, so every plugin that names
 * one has its own copy, built in or as a .so.
 */
#define ISP_AT(off, type) ((uintptr_t)(off) | (uintptr_t)(type) << 16)

static inline bool isp_get_be16_at(const struct isp_packet *p, const struct isp_layer *l,
				   uintptr_t arg, struct isp_value *out)
{
	return isp_val_scalar(out, (uint8_t)(arg >> 16), isp_be16(p->data + l->off + (arg & 0xffff)));
}

static inline bool isp_get_be32_at(const struct isp_packet *p, const struct isp_layer *l,
				   uintptr_t arg, struct isp_value *out)
{
	return isp_val_scalar(out, (uint8_t)(arg >> 16), isp_be32(p->data + l->off + (arg & 0xffff)));
}

/* A string value: n bytes as colon-separated lowercase hex, as a MAC
 * address prints (for addresses of other lengths); n is cut to what fits. */
static inline bool isp_val_hex(struct isp_value *o, const uint8_t *b, unsigned n)
{
	static const char digits[] = "0123456789abcdef";

	isp_val_scalar(o, ISP_T_STRING, 0);
	if (n > (ISP_STR_MAX - 1) / 3)
		n = (ISP_STR_MAX - 1) / 3;
	for (unsigned i = 0; i < n; i++) {
		o->v.str[3 * i] = digits[b[i] >> 4];
		o->v.str[3 * i + 1] = digits[b[i] & 15];
		o->v.str[3 * i + 2] = ':';
	}
	o->v.str[n ? 3 * n - 1 : 0] = 0;
	return true;
}

static inline void isp_val_array(struct isp_value *o, uint8_t type)
{
	o->type = type;
	o->is_array = 1;
	o->count = 0;
	o->missing = 0;
}

/* cold: its call stays off the decoders' common path (no registers saved
 * for it there) */
__attribute__((cold)) bool isp_region_cut_slow(const struct isp_dissect *d,
					       const struct isp_layer *l);

/* Whether the region of layer l may have been cut: by the snap length
 * (the capture is short) when no enclosing IP header's length puts the
 * region's end inside the captured bytes (bytes cut after the IP packet,
 * an Ethernet trailer, do not cut what it carries); inside a telemetry
 * report's inner packet, by the reporter, unless an IP header of the
 * inner packet puts it inside the report; inside the first fragment of an
 * IP packet, by the fragmentation, always. Only that is noted on the way:
 * the rare question walks the layers (dissect.c). */
static inline bool isp_region_cut(const struct isp_dissect *d, const struct isp_layer *l)
{
	if (d->pkt->caplen >= d->pkt->wirelen && !d->pkt->report_inner && !d->in_fragment)
		return false;
	return isp_region_cut_slow(d, l);
}

/* Not enough bytes in layer l's region for what a length field announces:
 * a region the capture cut is "truncated", a whole one that contradicts
 * itself is "bad length". */
static inline enum isp_verdict isp_short_verdict(const struct isp_dissect *d,
						 const struct isp_layer *l)
{
	return isp_region_cut(d, l) ? ISP_ERR_TRUNCATED : ISP_ERR_BAD_LENGTH;
}

/* Bytes of layer l, from its header start to its region end. */
static inline struct isp_cursor isp_layer_cursor(const struct isp_packet *p,
						 const struct isp_layer *l)
{
	return isp_cursor_make(p->data + l->off, l->end - l->off);
}

/*
 * Every plugin source ends with ISP_PLUGIN_ENTRY(fn): built into a .so it
 * exports the common entry point the loader looks for.
 */
#ifdef ISP_BUILD_SHARED_PLUGIN
/* Modules build with -fvisibility=hidden: only these two are exported, so
 * a module's internals never bind to the built-in copies in the binary. */
#define ISP_PLUGIN_EXPORT __attribute__((visibility("default")))
#define ISP_PLUGIN_ENTRY(fn)                                              \
	ISP_PLUGIN_EXPORT int isp_plugin_abi(void);                       \
	ISP_PLUGIN_EXPORT int isp_plugin_abi(void) { return ISP_PLUGIN_ABI; } \
	ISP_PLUGIN_EXPORT int isp_plugin_register(struct isp_registry *reg); \
	ISP_PLUGIN_EXPORT int isp_plugin_register(struct isp_registry *reg) { return fn(reg); }
#else
#define ISP_PLUGIN_ENTRY(fn)
#endif

#endif
