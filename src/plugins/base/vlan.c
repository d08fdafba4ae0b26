/*
 * vlan.c - IEEE 802.1Q tags and 802.1ad/QinQ stacks ("vlan"); each tag is
 * one layer, so vlan.1.vid is the outer (service) tag.
 */
#include "../../core/plugin.h"

static enum isp_verdict vlan_decode(struct isp_dissect *d, struct isp_layer *l)
{
	struct isp_cursor c = isp_layer_cursor(d->pkt, l);

	if (!isp_cur_has(&c, 4))
		return ISP_ERR_TRUNCATED;
	l->len = 4;
	isp_next_by(d, ISP_TBL_ETHERTYPE, isp_be16(c.p + 2));
	return ISP_OK;
}

static const struct isp_attr_desc vlan_attrs[] = {
	{ "pcp", ISP_T_U8, 0, isp_get_field, ISP_FIELD(0, 2, 0, 3, ISP_T_U8), "priority code point" },
	{ "dei", ISP_T_U8, 0, isp_get_field, ISP_FIELD(0, 2, 3, 1, ISP_T_U8), "drop eligible indicator" },
	{ "vid", ISP_T_U16, 0, isp_get_field, ISP_FIELD(0, 2, 4, 12, ISP_T_U16), "VLAN identifier" },
	{ "ethertype", ISP_T_U16, 0, isp_get_field, ISP_FIELD(2, 2, 0, 0, ISP_T_U16), "EtherType of the payload" },
	{ 0 }
};

static const struct isp_link vlan_links[] = {
	{ ISP_TBL_ETHERTYPE, 0x8100 },
	{ ISP_TBL_ETHERTYPE, 0x88a8 },
	{ ISP_TBL_ETHERTYPE, 0x9100 },
	ISP_LINKS_END
};

static const struct isp_proto_desc vlan_desc = {
	.name = "vlan",
	.help = "802.1Q VLAN tag (also 802.1ad / QinQ outer tags)",
	.decode = vlan_decode,
	.links = vlan_links,
	.attrs = vlan_attrs,
};

int isp_vlan_register(struct isp_registry *reg);
int isp_vlan_register(struct isp_registry *reg)
{
	return isp_register_proto(reg, &vlan_desc);
}
ISP_PLUGIN_ENTRY(isp_vlan_register)
