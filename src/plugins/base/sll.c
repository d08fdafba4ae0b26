/*
 * sll.c - Linux cooked capture v1 ("sll", LINKTYPE_LINUX_SLL 113): what
 * libpcap writes for `-i any` and for devices without a link header of
 * their own. 16 bytes: packet type, ARPHRD type, address length, 8 bytes
 * of address, protocol.
 */
#include "link_next.h"

#define SLL_HLEN 16
#define SLL_ADDR_MAX 8          /* room in the header; a longer address is cut */

static enum isp_verdict sll_decode(struct isp_dissect *d, struct isp_layer *l)
{
	struct isp_cursor c = isp_layer_cursor(d->pkt, l);

	if (!isp_cur_has(&c, SLL_HLEN))
		return ISP_ERR_TRUNCATED;
	l->len = SLL_HLEN;
	isp_next_cooked(d, isp_be16(c.p + 14), isp_be16(c.p + 2));
	return ISP_OK;
}

/* The address, of its declared length: a MAC for Ethernet devices. */
static bool sll_addr(const struct isp_packet *p, const struct isp_layer *l,
		     uintptr_t arg, struct isp_value *o)
{
	const uint8_t *h = p->data + l->off;
	unsigned n = isp_be16(h + 4);

	(void)arg;
	return isp_val_hex(o, h + 6, n < SLL_ADDR_MAX ? n : SLL_ADDR_MAX);
}

static const struct isp_attr_desc sll_attrs[] = {
	{ "pkttype", ISP_T_U16, 0, isp_get_field, ISP_FIELD(0, 2, 0, 0, ISP_T_U16),
	  "packet type: 0 to us, 1 broadcast, 2 multicast, 3 to another host, 4 sent by us" },
	{ "hatype", ISP_T_U16, 0, isp_get_field, ISP_FIELD(2, 2, 0, 0, ISP_T_U16),
	  "ARPHRD_ type of the device (1 Ethernet, 772 loopback)" },
	{ "halen", ISP_T_U16, 0, isp_get_field, ISP_FIELD(4, 2, 0, 0, ISP_T_U16),
	  "link-layer address length" },
	{ "addr", ISP_T_STRING, 0, sll_addr, 0,
	  "link-layer source address (sent: the device's), hex bytes of halen (at most 8)" },
	{ "protocol", ISP_T_U16, 0, isp_get_field, ISP_FIELD(14, 2, 0, 0, ISP_T_U16),
	  "protocol type: the EtherType of the payload" },
	{ 0 }
};

static const struct isp_link sll_links[] = {
	{ ISP_TBL_LINKTYPE, 113 },      /* LINKTYPE_LINUX_SLL */
	ISP_LINKS_END
};

static const struct isp_proto_desc sll_desc = {
	.name = "sll",
	.help = "Linux cooked capture v1 (LINKTYPE_LINUX_SLL)",
	.decode = sll_decode,
	.links = sll_links,
	.attrs = sll_attrs,
};

int isp_sll_register(struct isp_registry *reg);
int isp_sll_register(struct isp_registry *reg)
{
	return isp_register_proto(reg, &sll_desc);
}
ISP_PLUGIN_ENTRY(isp_sll_register)
