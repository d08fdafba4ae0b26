/*
 * udp.c - UDP ("udp"). The payload is recognised by heuristics registered
 * below udp (INT by DSCP), then by destination port.
 */
#include "../../core/plugin.h"

static inline enum isp_verdict udp_rest(struct isp_dissect *d, struct isp_layer *l,
				       const uint8_t *h)
{
	l->len = 8;
	d->l4_dport = isp_be16(h + 2);
	d->l4_is_tcp = 0;
	d->carrier = ISP_CARRIER_L4;
	isp_next_l4(d, l, ISP_TBL_UDP_PORT);
	return ISP_OK;
}

/* A Length past the region: a lie, unless the region was cut. Apart (and
 * reached by a tail call) so that the common path saves no register. */
static __attribute__((noinline, cold)) enum isp_verdict
udp_past(struct isp_dissect *d, struct isp_layer *l)
{
	if (!isp_region_cut(d, l))
		return ISP_ERR_BAD_LENGTH;
	return udp_rest(d, l, d->pkt->data + l->off);
}

static enum isp_verdict udp_decode(struct isp_dissect *d, struct isp_layer *l)
{
	struct isp_cursor c = isp_layer_cursor(d->pkt, l);

	if (!isp_cur_has(&c, 8))
		return ISP_ERR_TRUNCATED;
	unsigned len = isp_be16(c.p + 4);
	if (len != 0) {         /* 0: jumbogram or offload, trust the capture */
		if (len < 8)
			return ISP_ERR_BAD_LENGTH;
		if (len > c.left)
			return udp_past(d, l);
		l->end = l->off + len;
	}
	return udp_rest(d, l, c.p);
}

static const struct isp_attr_desc udp_attrs[] = {
	/* inside the 8 bytes udp_decode checked */
	{ "src_port", ISP_T_U16, 0, isp_get_be16_at, ISP_AT(0, ISP_T_U16), "source port" },
	{ "dst_port", ISP_T_U16, 0, isp_get_be16_at, ISP_AT(2, ISP_T_U16), "destination port" },
	{ "len", ISP_T_U16, 0, isp_get_field, ISP_FIELD(4, 2, 0, 0, ISP_T_U16), "UDP length" },
	{ "checksum", ISP_T_U16, 0, isp_get_field, ISP_FIELD(6, 2, 0, 0, ISP_T_U16), "checksum" },
	{ 0 }
};

static const struct isp_link udp_links[] = {
	{ ISP_TBL_IPPROTO, 17 },
	ISP_LINKS_END
};

static const struct isp_proto_desc udp_desc = {
	.name = "udp",
	.help = "UDP",
	.decode = udp_decode,
	.links = udp_links,
	.attrs = udp_attrs,
};

int isp_udp_register(struct isp_registry *reg);
int isp_udp_register(struct isp_registry *reg)
{
	return isp_register_proto(reg, &udp_desc);
}
ISP_PLUGIN_ENTRY(isp_udp_register)
