/*
 * ipv6.c - IPv6 and its extension headers ("ipv6").
 *
 * Hop-by-hop, routing, fragment, destination-options and AH headers are
 * walked inside this layer (they are part of the IPv6 header chain); the
 * layer's length covers them and `next_header` is the final upper protocol.
 */
#include "../../core/plugin.h"

#define IP6_HLEN 40
#define IP6_MAX_EXT 8

/* st.b[0]: final next header; st.b[1]: non-first fragment */
static enum isp_verdict ipv6_decode(struct isp_dissect *d, struct isp_layer *l)
{
	struct isp_cursor c = isp_layer_cursor(d->pkt, l);

	if (!isp_cur_has(&c, IP6_HLEN))
		return ISP_ERR_TRUNCATED;
	if ((c.p[0] >> 4) != 6)
		return ISP_ERR_BAD_VERSION;
	unsigned payload = isp_be16(c.p + 4);
	if (payload != 0 && IP6_HLEN + payload > c.left && !isp_region_cut(d, l))
		return ISP_ERR_BAD_LENGTH;      /* longer than the whole datagram */
	if (payload != 0 && IP6_HLEN + payload < c.left)
		l->end = l->off + IP6_HLEN + payload;
	d->ip_tos = (uint8_t)(isp_be16(c.p) >> 4);

	uint8_t nh = c.p[6];
	unsigned hlen = IP6_HLEN;
	unsigned avail = l->end - l->off;
	bool later_fragment = false;
	for (unsigned i = 0; i < IP6_MAX_EXT; i++) {
		unsigned ext;
		if (nh != 0 && nh != 43 && nh != 44 && nh != 60 && nh != 51)
			break;
		if (hlen + 8 > avail)
			return ISP_ERR_TRUNCATED;
		const uint8_t *e = d->pkt->data + l->off + hlen;
		if (nh == 44) {
			ext = 8;
			later_fragment = (isp_be16(e + 2) & 0xfff8) != 0;
			d->in_fragment |= !later_fragment && (e[3] & 1);  /* M */
		} else if (nh == 51) {
			ext = (e[1] + 2u) * 4u;
		} else {
			ext = (e[1] + 1u) * 8u;
		}
		if (hlen + ext > avail)
			return isp_short_verdict(d, l);    /* its length past the bytes */
		nh = e[0];
		hlen += ext;
		if (later_fragment)
			break;  /* what follows is data: its headers are in the first */
	}
	l->len = hlen;
	l->version = 6;
	l->st.b[0] = nh;
	l->st.b[1] = later_fragment;
	if (!later_fragment)
		isp_next_by(d, ISP_TBL_IPPROTO, nh);
	return ISP_OK;
}

static bool ipv6_next_header(const struct isp_packet *p, const struct isp_layer *l,
			     uintptr_t arg, struct isp_value *o)
{
	(void)p;
	(void)arg;
	return isp_val_scalar(o, ISP_T_U8, l->st.b[0]);
}

static bool ipv6_ext_len(const struct isp_packet *p, const struct isp_layer *l,
			 uintptr_t arg, struct isp_value *o)
{
	(void)p;
	(void)arg;
	return isp_val_scalar(o, ISP_T_U16, l->len - IP6_HLEN);
}

static const struct isp_attr_desc ipv6_attrs[] = {
	{ "version", ISP_T_U8, 0, isp_get_field, ISP_FIELD(0, 1, 0, 4, ISP_T_U8), "IP version (6)" },
	{ "traffic_class", ISP_T_U8, 0, isp_get_field, ISP_FIELD(0, 2, 4, 8, ISP_T_U8), "traffic class" },
	{ "dscp", ISP_T_U8, 0, isp_get_field, ISP_FIELD(0, 2, 4, 6, ISP_T_U8), "DSCP" },
	{ "ecn", ISP_T_U8, 0, isp_get_field, ISP_FIELD(0, 2, 10, 2, ISP_T_U8), "ECN codepoint (3 = CE)" },
	{ "flow_label", ISP_T_U32, 0, isp_get_field, ISP_FIELD(0, 4, 12, 20, ISP_T_U32), "flow label" },
	{ "payload_len", ISP_T_U16, 0, isp_get_field, ISP_FIELD(4, 2, 0, 0, ISP_T_U16), "payload length" },
	{ "next_header", ISP_T_U8, 0, ipv6_next_header, 0, "upper-layer protocol after extension headers" },
	{ "hop_limit", ISP_T_U8, 0, isp_get_field, ISP_FIELD(7, 1, 0, 0, ISP_T_U8), "hop limit" },
	{ "src", ISP_T_IPV6, 0, isp_get_field, ISP_FIELD(8, 16, 0, 0, ISP_T_IPV6), "source address" },
	{ "dst", ISP_T_IPV6, 0, isp_get_field, ISP_FIELD(24, 16, 0, 0, ISP_T_IPV6), "destination address" },
	{ "ext_len", ISP_T_U16, 0, ipv6_ext_len, 0, "bytes of extension headers" },
	{ 0 }
};

static const struct isp_link ipv6_links[] = {
	{ ISP_TBL_ETHERTYPE, 0x86dd },
	{ ISP_TBL_LINKTYPE, 229 },      /* LINKTYPE_IPV6 */
	{ ISP_TBL_IPPROTO, 41 },        /* IPv6 in IP */
	{ ISP_TBL_GPE_NEXT, 2 },
	ISP_LINKS_END
};

static const struct isp_proto_desc ipv6_desc = {
	.name = "ipv6",
	.help = "IPv6 with extension headers",
	.decode = ipv6_decode,
	.links = ipv6_links,
	.attrs = ipv6_attrs,
};

int isp_ipv6_register(struct isp_registry *reg);
int isp_ipv6_register(struct isp_registry *reg)
{
	return isp_register_proto(reg, &ipv6_desc);
}
ISP_PLUGIN_ENTRY(isp_ipv6_register)
