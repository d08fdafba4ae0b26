/*
 * ipv4.c - IPv4 with options ("ip", the MMT name).
 *
 * The layer's region ends at the datagram's Total Length, so Ethernet
 * padding never reaches the payload decoders; a capture cut short by the
 * snap length (or a report's inner packet, cut by the reporter) is not an
 * error, a Total Length below the header, or past the bytes of a datagram
 * nothing cut, is.
 */
#include "../../core/plugin.h"

/* A fragment: a non-first one carries no header; the first one carries
 * what may run past it (isp_region_cut). */
static __attribute__((noinline)) enum isp_verdict
ipv4_fragment(struct isp_dissect *d, const uint8_t *h)
{
	if ((isp_be16(h + 6) & 0x1fff) != 0)
		return ISP_OK;
	d->in_fragment = 1;
	isp_next_by(d, ISP_TBL_IPPROTO, h[9]);
	return ISP_OK;
}

static inline enum isp_verdict ipv4_rest(struct isp_dissect *d, struct isp_layer *l,
					const uint8_t *h, unsigned hlen)
{
	l->len = hlen;
	l->version = 4;
	d->ip_tos = h[1];
	if ((isp_be16(h + 6) & 0x3fff) != 0)    /* MF, or an offset */
		return ipv4_fragment(d, h);
	isp_next_by(d, ISP_TBL_IPPROTO, h[9]);
	return ISP_OK;
}

/* A Total Length past the region: a lie, unless the region was cut. Apart
 * (and reached by a tail call) so that the common path saves no register. */
static __attribute__((noinline, cold)) enum isp_verdict
ipv4_past(struct isp_dissect *d, struct isp_layer *l)
{
	if (!isp_region_cut(d, l))
		return ISP_ERR_BAD_LENGTH;      /* longer than the whole datagram */
	const uint8_t *h = d->pkt->data + l->off;

	return ipv4_rest(d, l, h, (h[0] & 0x0f) * 4u);
}

static enum isp_verdict ipv4_decode(struct isp_dissect *d, struct isp_layer *l)
{
	struct isp_cursor c = isp_layer_cursor(d->pkt, l);

	if (!isp_cur_has(&c, 20))
		return ISP_ERR_TRUNCATED;
	/* version 4 and an IHL of 5 or more: the first byte from 0x45 to
	 * 0x4f, one test; which is wrong, apart */
	unsigned b0 = c.p[0];
	if (b0 - 0x45u > 0x0au)
		return b0 >> 4 != 4 ? ISP_ERR_BAD_VERSION : ISP_ERR_BAD_LENGTH;
	unsigned hlen = (b0 & 0x0f) * 4u;
	unsigned total = isp_be16(c.p + 2);
	if (!isp_cur_has(&c, hlen))
		return isp_short_verdict(d, l);    /* IHL past the bytes */
	if (total != 0) {       /* 0: segmentation offload, trust the capture */
		if (total < hlen)
			return ISP_ERR_BAD_LENGTH;
		if (total > c.left)
			return ipv4_past(d, l);
		l->end = l->off + total;
	}
	/* hlen as read before the store to l->end, which the compiler
	 * cannot tell from the packet's bytes */
	return ipv4_rest(d, l, c.p, hlen);
}

static bool ipv4_options_len(const struct isp_packet *p, const struct isp_layer *l,
			     uintptr_t arg, struct isp_value *o)
{
	(void)p;
	(void)arg;
	return isp_val_scalar(o, ISP_T_U8, l->len - 20);
}

static const struct isp_attr_desc ipv4_attrs[] = {
	{ "version", ISP_T_U8, 0, isp_get_field, ISP_FIELD(0, 1, 0, 4, ISP_T_U8), "IP version (4)" },
	{ "header_len", ISP_T_U8, 0, isp_get_field, ISP_FIELD(0, 1, 4, 4, ISP_T_U8), "IHL, in 4-byte words" },
	{ "tos", ISP_T_U8, 0, isp_get_field, ISP_FIELD(1, 1, 0, 0, ISP_T_U8), "type of service byte" },
	{ "dscp", ISP_T_U8, 0, isp_get_field, ISP_FIELD(1, 1, 0, 6, ISP_T_U8), "DSCP (top six bits of TOS)" },
	{ "ecn", ISP_T_U8, 0, isp_get_field, ISP_FIELD(1, 1, 6, 2, ISP_T_U8), "ECN codepoint (3 = CE)" },
	{ "tot_len", ISP_T_U16, 0, isp_get_field, ISP_FIELD(2, 2, 0, 0, ISP_T_U16), "total length" },
	{ "identification", ISP_T_U16, 0, isp_get_field, ISP_FIELD(4, 2, 0, 0, ISP_T_U16), "identification" },
	{ "df", ISP_T_U8, 0, isp_get_field, ISP_FIELD(6, 1, 1, 1, ISP_T_U8), "don't fragment flag" },
	{ "mf", ISP_T_U8, 0, isp_get_field, ISP_FIELD(6, 1, 2, 1, ISP_T_U8), "more fragments flag" },
	{ "frag_offset", ISP_T_U16, 0, isp_get_field, ISP_FIELD(6, 2, 3, 13, ISP_T_U16), "fragment offset (8-byte units)" },
	{ "ttl", ISP_T_U8, 0, isp_get_field, ISP_FIELD(8, 1, 0, 0, ISP_T_U8), "time to live" },
	{ "proto", ISP_T_U8, 0, isp_get_field, ISP_FIELD(9, 1, 0, 0, ISP_T_U8), "payload protocol number" },
	{ "checksum", ISP_T_U16, 0, isp_get_field, ISP_FIELD(10, 2, 0, 0, ISP_T_U16), "header checksum" },
	/* inside the 20 bytes ipv4_decode checked */
	{ "src", ISP_T_IPV4, 0, isp_get_be32_at, ISP_AT(12, ISP_T_IPV4), "source address" },
	{ "dst", ISP_T_IPV4, 0, isp_get_be32_at, ISP_AT(16, ISP_T_IPV4), "destination address" },
	{ "options_len", ISP_T_U8, 0, ipv4_options_len, 0, "bytes of IP options" },
	{ 0 }
};

static const struct isp_link ipv4_links[] = {
	{ ISP_TBL_ETHERTYPE, 0x0800 },
	{ ISP_TBL_LINKTYPE, 228 },      /* LINKTYPE_IPV4 */
	{ ISP_TBL_IPPROTO, 4 },         /* IP in IP */
	{ ISP_TBL_GPE_NEXT, 1 },
	ISP_LINKS_END
};

static const struct isp_proto_desc ipv4_desc = {
	.name = "ip",
	.help = "IPv4",
	.decode = ipv4_decode,
	.links = ipv4_links,
	.attrs = ipv4_attrs,
};

int isp_ipv4_register(struct isp_registry *reg);
int isp_ipv4_register(struct isp_registry *reg)
{
	return isp_register_proto(reg, &ipv4_desc);
}
ISP_PLUGIN_ENTRY(isp_ipv4_register)
