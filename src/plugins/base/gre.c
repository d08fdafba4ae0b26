/*
 * gre.c - GRE (RFC 2784/2890, "gre") with checksum, key and sequence
 * fields. The protocol type is an EtherType; INT over GRE (v2.x) uses a
 * protocol type no registry assigns, so it is an option (gre.int-proto).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/plugin.h"

static uint16_t int_proto = 0x88b5; /* IEEE "local experimental" EtherType */

/* st.b[0..3]: optional fields present (C, K, S); st.h[2]: key offset */
static enum isp_verdict gre_decode(struct isp_dissect *d, struct isp_layer *l)
{
	struct isp_cursor c = isp_layer_cursor(d->pkt, l);

	if (!isp_cur_has(&c, 4))
		return ISP_ERR_TRUNCATED;
	uint16_t flags = isp_be16(c.p);
	if ((flags & 0x7) != 0)
		return ISP_ERR_UNSUPPORTED;     /* version 1 is PPTP's enhanced GRE */
	if (flags & 0x4000)
		return ISP_ERR_UNSUPPORTED;     /* RFC 1701 routing: a list after the key */
	unsigned len = 4;
	l->st.h[2] = 0;
	l->st.h[3] = 0;
	if (flags & 0x8000)
		len += 4;
	if (flags & 0x2000) {
		l->st.h[2] = (uint16_t)len;
		len += 4;
	}
	if (flags & 0x1000) {
		l->st.h[3] = (uint16_t)len;
		len += 4;
	}
	if (!isp_cur_has(&c, len))
		return ISP_ERR_TRUNCATED;
	l->len = len;
	uint16_t ptype = isp_be16(c.p + 2);
	if (ptype == int_proto) {
		d->carrier = ISP_CARRIER_GRE;
		isp_next_by(d, ISP_TBL_CARRIER, ISP_CARRIER_GRE);
		return ISP_OK;
	}
	isp_next_by(d, ISP_TBL_ETHERTYPE, ptype);
	return ISP_OK;
}

static bool gre_optional(const struct isp_packet *p, const struct isp_layer *l,
			 uintptr_t which, struct isp_value *o)
{
	uint16_t off = l->st.h[2 + which];

	return off ? isp_val_scalar(o, ISP_T_U32, isp_be32(p->data + l->off + off)) : false;
}

static int gre_option(const char *key, const char *value, char *err, size_t errlen)
{
	if (strcmp(key, "int-proto") == 0) {
		char *end;
		errno = 0;
		unsigned long v = strtoul(value, &end, 0);
		if (!errno && end != value && !*end && v <= 0xffff) {
			int_proto = (uint16_t)v;
			return 0;
		}
		snprintf(err, errlen, "expected a 16-bit protocol type");
		return -1;
	}
	snprintf(err, errlen, "unknown option (known: int-proto)");
	return -1;
}

static const struct isp_attr_desc gre_attrs[] = {
	{ "flags", ISP_T_U16, 0, isp_get_field, ISP_FIELD(0, 2, 0, 0, ISP_T_U16), "flags and version" },
	{ "protocol", ISP_T_U16, 0, isp_get_field, ISP_FIELD(2, 2, 0, 0, ISP_T_U16), "protocol type (EtherType)" },
	{ "key", ISP_T_U32, 0, gre_optional, 0, "key (when K is set)" },
	{ "seq_num", ISP_T_U32, 0, gre_optional, 1, "sequence number (when S is set)" },
	{ 0 }
};

static const struct isp_link gre_links[] = {
	{ ISP_TBL_IPPROTO, 47 },
	ISP_LINKS_END
};

static const struct isp_proto_desc gre_desc = {
	.name = "gre",
	.help = "GRE",
	.decode = gre_decode,
	.links = gre_links,
	.attrs = gre_attrs,
	.set_option = gre_option,
	.options_help = "int-proto=T   GRE protocol type that announces INT (default 0x88b5)\n",
};

int isp_gre_register(struct isp_registry *reg);
int isp_gre_register(struct isp_registry *reg)
{
	return isp_register_proto(reg, &gre_desc);
}
ISP_PLUGIN_ENTRY(isp_gre_register)
