/*
 * null.c - BSD loopback encapsulation ("null", LINKTYPE_NULL 0): a 4-byte
 * address family in the byte order of the host that captured, which the
 * file does not say. Families are small numbers, so a value with its high
 * bytes set was written little-endian. AF_INET is 2 everywhere; AF_INET6 is
 * 10 on Linux, 24 on OpenBSD and NetBSD, 28 on FreeBSD, 30 on macOS.
 */
#include "link_next.h"

static enum isp_verdict null_decode(struct isp_dissect *d, struct isp_layer *l)
{
	struct isp_cursor c = isp_layer_cursor(d->pkt, l);

	if (!isp_cur_has(&c, 4))
		return ISP_ERR_TRUNCATED;
	l->len = 4;
	uint32_t af = isp_be32(c.p);
	if (af > 0xffff)
		af = (uint32_t)c.p[3] << 24 | (uint32_t)c.p[2] << 16 | (uint32_t)c.p[1] << 8 | c.p[0];
	l->st.w[0] = af;
	isp_next_by_family(d, af);
	return ISP_OK;
}

static bool null_family(const struct isp_packet *p, const struct isp_layer *l,
			uintptr_t arg, struct isp_value *o)
{
	(void)p;
	(void)arg;
	return isp_val_scalar(o, ISP_T_U32, l->st.w[0]);
}

static const struct isp_attr_desc null_attrs[] = {
	{ "family", ISP_T_U32, 0, null_family, 0,
	  "address family, in either byte order (2 IPv4; 10, 24, 28, 30 IPv6)" },
	{ 0 }
};

static const struct isp_link null_links[] = {
	{ ISP_TBL_LINKTYPE, 0 },        /* LINKTYPE_NULL */
	ISP_LINKS_END
};

static const struct isp_proto_desc null_desc = {
	.name = "null",
	.help = "BSD loopback, host byte order (LINKTYPE_NULL)",
	.decode = null_decode,
	.links = null_links,
	.attrs = null_attrs,
};

int isp_null_register(struct isp_registry *reg);
int isp_null_register(struct isp_registry *reg)
{
	return isp_register_proto(reg, &null_desc);
}
ISP_PLUGIN_ENTRY(isp_null_register)
