/*
 * vxlan.c - VXLAN (RFC 7348, "vxlan"): UDP 4789, an Ethernet frame inside.
 */
#include "../../core/plugin.h"

static enum isp_verdict vxlan_decode(struct isp_dissect *d, struct isp_layer *l)
{
	struct isp_cursor c = isp_layer_cursor(d->pkt, l);

	if (!isp_cur_has(&c, 8))
		return ISP_ERR_TRUNCATED;
	l->len = 8;
	isp_next_by(d, ISP_TBL_LINKTYPE, 1);
	return ISP_OK;
}

static const struct isp_attr_desc vxlan_attrs[] = {
	{ "flags", ISP_T_U8, 0, isp_get_field, ISP_FIELD(0, 1, 0, 0, ISP_T_U8), "flags (0x08 = VNI valid)" },
	{ "vni", ISP_T_U32, 0, isp_get_field, ISP_FIELD(4, 4, 0, 24, ISP_T_U32), "VXLAN network identifier" },
	{ 0 }
};

static const struct isp_link vxlan_links[] = {
	{ ISP_TBL_UDP_PORT, 4789 },
	ISP_LINKS_END
};

static const struct isp_proto_desc vxlan_desc = {
	.name = "vxlan",
	.help = "VXLAN",
	.decode = vxlan_decode,
	.links = vxlan_links,
	.attrs = vxlan_attrs,
};

int isp_vxlan_register(struct isp_registry *reg);
int isp_vxlan_register(struct isp_registry *reg)
{
	return isp_register_proto(reg, &vxlan_desc);
}
ISP_PLUGIN_ENTRY(isp_vxlan_register)
