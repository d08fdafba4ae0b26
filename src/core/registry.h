/*
 * registry.h - protocols, their attributes and the dispatch tables.
 *
 * Filled once at start-up (built-ins, then .so plugins, then options) and
 * read-only afterwards, so every worker can share it without locks.
 */
#ifndef ISP_REGISTRY_H
#define ISP_REGISTRY_H

#include "plugin.h"

struct isp_proto {
	const struct isp_proto_desc *desc;
	uint16_t nattrs;
	const char *origin;                   /* "built-in" or the .so path */
};

struct isp_registry {
	uint16_t nprotos;
	uint16_t meta;                        /* id of the "meta" pseudo-protocol */
	uint16_t ip4, ip6;                    /* ids of "ip", "ipv6" (isp_region_cut) */
	struct isp_proto proto[ISP_MAX_PROTOS];
	/* proto[i].desc->decode, one load away for the decode loop */
	isp_decode_fn decode[ISP_MAX_PROTOS];
	/* each protocol's heuristic children (isp_next_l4) */
	struct isp_heuristics heur[ISP_MAX_PROTOS];
	/* direct-indexed dispatch: protocol id or 0xff */
	uint8_t table[ISP_TBL__COUNT][65536];
};

/* A resolved attribute name: "ip.2.src" -> {ip, instance 2, src}. */
struct isp_attr_ref {
	uint16_t proto;
	uint8_t instance;                     /* 0 = innermost */
	uint16_t attr;                        /* index in desc->attrs */
};

struct isp_registry *isp_registry_new(void);
void isp_registry_free(struct isp_registry *reg);

/* Register every built-in protocol plugin. 0 or -1. */
int isp_register_builtins(struct isp_registry *reg);

/* Load every *.so in dir; on error a message in err and -1. Protocols that
 * are already registered (a built-in of the same name) are skipped and
 * counted in *skipped. */
int isp_load_plugin_dir(struct isp_registry *reg, const char *dir,
			unsigned *loaded, unsigned *skipped,
			char *err, size_t errlen);

/* Resolve heuristic parents; call once after all registrations. */
int isp_registry_finalize(struct isp_registry *reg, char *err, size_t errlen);

/* Install one more dispatch entry, replacing any earlier one. */
int isp_registry_link(struct isp_registry *reg, const char *proto,
		      enum isp_table t, uint32_t key);

/* Apply "proto.option=value". 0, or -1 with a message. */
int isp_registry_option(struct isp_registry *reg, const char *assignment,
			char *err, size_t errlen);

/* Parse "proto.attr" or "proto.N.attr". 0, or -1 with a message (with a
 * "did you mean" hint when a close name exists). */
int isp_attr_lookup(const struct isp_registry *reg, const char *name,
		    struct isp_attr_ref *ref, char *err, size_t errlen);

static inline const struct isp_attr_desc *
isp_attr_desc_of(const struct isp_registry *reg, const struct isp_attr_ref *r)
{
	return &reg->proto[r->proto].desc->attrs[r->attr];
}

/* The attribute's put (isp_proto_desc.puts), or NULL. */
isp_put_fn isp_attr_put_of(const struct isp_registry *reg, const struct isp_attr_ref *r);

/* Layer for a reference in a dissected packet, or NULL when absent. */
const struct isp_layer *isp_attr_layer(const struct isp_packet *p,
				       const struct isp_attr_ref *r);
/* Which occurrence of its protocol layer l is in p, the outermost 1. */
unsigned isp_layer_instance(const struct isp_packet *p, const struct isp_layer *l);

/*
 * Fetch an attribute's value; false when the packet does not have it.
 * Inline because it is the per-attribute call of every rule: the innermost
 * instance (nearly every reference) is one bit test and one load of the
 * dissector's per-protocol index, then the getter; numbered instances take
 * isp_attr_layer's scan; meta.* getters get a NULL layer.
 */
static inline bool isp_attr_get(const struct isp_registry *reg, const struct isp_packet *p,
				const struct isp_attr_ref *r, struct isp_value *out)
{
	const struct isp_attr_desc *a = isp_attr_desc_of(reg, r);
	const struct isp_layer *l = NULL;

	if (r->proto != reg->meta) {
		if (!(p->protos >> r->proto & 1))
			return false;
		l = r->instance == 0 ? &p->layer[p->last[r->proto]] : isp_attr_layer(p, r);
		if (!l)
			return false;
	}
	return a->get(p, l, a->arg, out);
}

const char *isp_type_name(enum isp_type t);

/* Levenshtein distance of two short words (99 past 62 characters, or
 * when their lengths differ by 4 or more): for "did you mean" hints, which
 * take distances below 4. */
unsigned isp_edit_distance(const char *a, const char *b);

#endif
