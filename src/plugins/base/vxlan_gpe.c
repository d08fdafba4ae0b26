/*
 * vxlan_gpe.c - VXLAN Generic Protocol Extension ("vxlan_gpe"): UDP 4790;
 * the Next Protocol field names IPv4, IPv6, Ethernet or INT (0x05 v0.5,
 * 0x08 v1.0, 0x80 v2.0, 0x82 v2.1).
 */
#include "../../core/plugin.h"

static enum isp_verdict gpe_decode(struct isp_dissect *d, struct isp_layer *l)
{
	struct isp_cursor c = isp_layer_cursor(d->pkt, l);

	if (!isp_cur_has(&c, 8))
		return ISP_ERR_TRUNCATED;
	l->len = 8;
	d->carrier = ISP_CARRIER_GPE;
	isp_next_by(d, ISP_TBL_GPE_NEXT, c.p[3]);
	return ISP_OK;
}

static const struct isp_attr_desc gpe_attrs[] = {
	{ "flags", ISP_T_U8, 0, isp_get_field, ISP_FIELD(0, 1, 0, 0, ISP_T_U8), "flags (version, I, P, B, O)" },
	{ "next_protocol", ISP_T_U8, 0, isp_get_field, ISP_FIELD(3, 1, 0, 0, ISP_T_U8), "next protocol" },
	{ "vni", ISP_T_U32, 0, isp_get_field, ISP_FIELD(4, 4, 0, 24, ISP_T_U32), "VXLAN network identifier" },
	{ 0 }
};

static const struct isp_link gpe_links[] = {
	{ ISP_TBL_UDP_PORT, 4790 },
	ISP_LINKS_END
};

static const struct isp_proto_desc gpe_desc = {
	.name = "vxlan_gpe",
	.help = "VXLAN-GPE",
	.decode = gpe_decode,
	.links = gpe_links,
	.attrs = gpe_attrs,
};

int isp_vxlan_gpe_register(struct isp_registry *reg);
int isp_vxlan_gpe_register(struct isp_registry *reg)
{
	return isp_register_proto(reg, &gpe_desc);
}
ISP_PLUGIN_ENTRY(isp_vxlan_gpe_register)
