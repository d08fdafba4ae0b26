/*
 * ethernet.c - Ethernet II frames ("eth").
 */
#include "../../core/plugin.h"

#define ETH_HLEN 14

static enum isp_verdict eth_decode(struct isp_dissect *d, struct isp_layer *l)
{
	struct isp_cursor c = isp_layer_cursor(d->pkt, l);

	if (!isp_cur_has(&c, ETH_HLEN))
		return ISP_ERR_TRUNCATED;
	l->len = ETH_HLEN;
	isp_next_by(d, ISP_TBL_ETHERTYPE, isp_be16(c.p + 12));
	return ISP_OK;
}

static const struct isp_attr_desc eth_attrs[] = {
	{ "dst", ISP_T_MAC, 0, isp_get_field, ISP_FIELD(0, 6, 0, 0, ISP_T_MAC), "destination MAC address" },
	{ "src", ISP_T_MAC, 0, isp_get_field, ISP_FIELD(6, 6, 0, 0, ISP_T_MAC), "source MAC address" },
	{ "ethertype", ISP_T_U16, 0, isp_get_field, ISP_FIELD(12, 2, 0, 0, ISP_T_U16), "EtherType of the payload" },
	{ 0 }
};

static const struct isp_link eth_links[] = {
	{ ISP_TBL_LINKTYPE, 1 },        /* LINKTYPE_ETHERNET */
	{ ISP_TBL_ETHERTYPE, 0x6558 },  /* transparent Ethernet bridging (GRE, Geneve) */
	{ ISP_TBL_GPE_NEXT, 3 },
	ISP_LINKS_END
};

static const struct isp_proto_desc eth_desc = {
	.name = "eth",
	.help = "Ethernet II",
	.decode = eth_decode,
	.links = eth_links,
	.attrs = eth_attrs,
};

int isp_ethernet_register(struct isp_registry *reg);
int isp_ethernet_register(struct isp_registry *reg)
{
	return isp_register_proto(reg, &eth_desc);
}
ISP_PLUGIN_ENTRY(isp_ethernet_register)
