/*
 * sll2.c - Linux cooked capture v2 ("sll2", LINKTYPE_LINUX_SLL2 276): what
 * libpcap 1.10 writes for `-i any`. 20 bytes: protocol, reserved,
 * interface index, ARPHRD type, packet type, address length, 8 bytes of
 * address. The protocol comes first, unlike v1.
 */
#include "link_next.h"

#define SLL2_HLEN 20
#define SLL2_ADDR_MAX 8         /* room in the header; a longer address is cut */

static enum isp_verdict sll2_decode(struct isp_dissect *d, struct isp_layer *l)
{
	struct isp_cursor c = isp_layer_cursor(d->pkt, l);

	if (!isp_cur_has(&c, SLL2_HLEN))
		return ISP_ERR_TRUNCATED;
	l->len = SLL2_HLEN;
	isp_next_cooked(d, isp_be16(c.p), isp_be16(c.p + 8));
	return ISP_OK;
}

static bool sll2_addr(const struct isp_packet *p, const struct isp_layer *l,
		      uintptr_t arg, struct isp_value *o)
{
	const uint8_t *h = p->data + l->off;

	(void)arg;
	return isp_val_hex(o, h + 12, h[11] < SLL2_ADDR_MAX ? h[11] : SLL2_ADDR_MAX);
}

static const struct isp_attr_desc sll2_attrs[] = {
	{ "protocol", ISP_T_U16, 0, isp_get_field, ISP_FIELD(0, 2, 0, 0, ISP_T_U16),
	  "protocol type: the EtherType of the payload" },
	{ "ifindex", ISP_T_U32, 0, isp_get_field, ISP_FIELD(4, 4, 0, 0, ISP_T_U32),
	  "index of the interface the packet was captured on" },
	{ "hatype", ISP_T_U16, 0, isp_get_field, ISP_FIELD(8, 2, 0, 0, ISP_T_U16),
	  "ARPHRD_ type of the device (1 Ethernet, 772 loopback)" },
	{ "pkttype", ISP_T_U8, 0, isp_get_field, ISP_FIELD(10, 1, 0, 0, ISP_T_U8),
	  "packet type: 0 to us, 1 broadcast, 2 multicast, 3 to another host, 4 sent by us" },
	{ "halen", ISP_T_U8, 0, isp_get_field, ISP_FIELD(11, 1, 0, 0, ISP_T_U8),
	  "link-layer address length" },
	{ "addr", ISP_T_STRING, 0, sll2_addr, 0,
	  "link-layer source address (sent: the device's), hex bytes of halen (at most 8)" },
	{ 0 }
};

static const struct isp_link sll2_links[] = {
	{ ISP_TBL_LINKTYPE, 276 },      /* LINKTYPE_LINUX_SLL2 */
	ISP_LINKS_END
};

static const struct isp_proto_desc sll2_desc = {
	.name = "sll2",
	.help = "Linux cooked capture v2 (LINKTYPE_LINUX_SLL2)",
	.decode = sll2_decode,
	.links = sll2_links,
	.attrs = sll2_attrs,
};

int isp_sll2_register(struct isp_registry *reg);
int isp_sll2_register(struct isp_registry *reg)
{
	return isp_register_proto(reg, &sll2_desc);
}
ISP_PLUGIN_ENTRY(isp_sll2_register)
