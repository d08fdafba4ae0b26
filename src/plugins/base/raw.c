/*
 * raw.c - raw IP ("raw", LINKTYPE_RAW 101; libpcap's DLT_RAW is 12, or 14
 * on OpenBSD, and the source maps both): no link header, the packet is
 * IPv4 or IPv6 and only its version nibble tells which. The layer is
 * empty; it keeps the hierarchy honest about where the packet came from.
 */
#include "../../core/plugin.h"

static enum isp_verdict raw_decode(struct isp_dissect *d, struct isp_layer *l)
{
	struct isp_cursor c = isp_layer_cursor(d->pkt, l);

	if (!isp_cur_has(&c, 1))
		return ISP_ERR_TRUNCATED;
	l->len = 0;
	l->version = c.p[0] >> 4;
	switch (l->version) {
	case 4: isp_next_by(d, ISP_TBL_LINKTYPE, 228); break;  /* LINKTYPE_IPV4 */
	case 6: isp_next_by(d, ISP_TBL_LINKTYPE, 229); break;  /* LINKTYPE_IPV6 */
	default: return ISP_ERR_BAD_VERSION;
	}
	return ISP_OK;
}

static bool raw_version(const struct isp_packet *p, const struct isp_layer *l,
			uintptr_t arg, struct isp_value *o)
{
	(void)p;
	(void)arg;
	return isp_val_scalar(o, ISP_T_U8, l->version);
}

static const struct isp_attr_desc raw_attrs[] = {
	{ "version", ISP_T_U8, 0, raw_version, 0, "IP version of the packet (4 or 6)" },
	{ 0 }
};

static const struct isp_link raw_links[] = {
	{ ISP_TBL_LINKTYPE, 101 },      /* LINKTYPE_RAW */
	ISP_LINKS_END
};

static const struct isp_proto_desc raw_desc = {
	.name = "raw",
	.help = "raw IPv4 or IPv6, no link header (LINKTYPE_RAW)",
	.decode = raw_decode,
	.links = raw_links,
	.attrs = raw_attrs,
};

int isp_raw_register(struct isp_registry *reg);
int isp_raw_register(struct isp_registry *reg)
{
	return isp_register_proto(reg, &raw_desc);
}
ISP_PLUGIN_ENTRY(isp_raw_register)
