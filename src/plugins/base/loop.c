/*
 * loop.c - OpenBSD loopback encapsulation ("loop", LINKTYPE_LOOP 108): as
 * LINKTYPE_NULL, a 4-byte address family, but always in network byte
 * order. AF_INET is 2; AF_INET6 is 24 on OpenBSD, and 10, 28, 30 from
 * other systems are taken too.
 */
#include "link_next.h"

static enum isp_verdict loop_decode(struct isp_dissect *d, struct isp_layer *l)
{
	struct isp_cursor c = isp_layer_cursor(d->pkt, l);

	if (!isp_cur_has(&c, 4))
		return ISP_ERR_TRUNCATED;
	l->len = 4;
	isp_next_by_family(d, isp_be32(c.p));
	return ISP_OK;
}

static const struct isp_attr_desc loop_attrs[] = {
	{ "family", ISP_T_U32, 0, isp_get_field, ISP_FIELD(0, 4, 0, 0, ISP_T_U32),
	  "address family, network byte order (2 IPv4; 24 IPv6)" },
	{ 0 }
};

static const struct isp_link loop_links[] = {
	{ ISP_TBL_LINKTYPE, 108 },      /* LINKTYPE_LOOP */
	ISP_LINKS_END
};

static const struct isp_proto_desc loop_desc = {
	.name = "loop",
	.help = "OpenBSD loopback, network byte order (LINKTYPE_LOOP)",
	.decode = loop_decode,
	.links = loop_links,
	.attrs = loop_attrs,
};

int isp_loop_register(struct isp_registry *reg);
int isp_loop_register(struct isp_registry *reg)
{
	return isp_register_proto(reg, &loop_desc);
}
ISP_PLUGIN_ENTRY(isp_loop_register)
