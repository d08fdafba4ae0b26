/*
 * geneve.c - Geneve (RFC 8926, "geneve"): UDP 6081. An INT option (class
 * 0x0103 by default, option geneve.int-class) is handed to the int plugin
 * as its own layer before the inner packet.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/plugin.h"

static uint16_t int_class = 0x0103;

/* st.h[0]: offset of the INT option body, 0 = none */
static enum isp_verdict geneve_decode(struct isp_dissect *d, struct isp_layer *l)
{
	struct isp_cursor c = isp_layer_cursor(d->pkt, l);

	if (!isp_cur_has(&c, 8))
		return ISP_ERR_TRUNCATED;
	if (c.p[0] >> 6 != 0)
		return ISP_ERR_BAD_VERSION;
	unsigned optlen = (c.p[0] & 0x3f) * 4u;
	if (!isp_cur_has(&c, 8 + optlen))
		return isp_short_verdict(d, l);    /* Opt Len past the bytes */
	uint16_t ptype = isp_be16(c.p + 2);
	l->len = 8 + optlen;
	l->st.h[0] = 0;

	for (unsigned o = 8; o + 4 <= 8 + optlen;) {
		unsigned body = (c.p[o + 3] & 0x1f) * 4u;
		if (o + 4 + body > 8 + optlen)
			return ISP_ERR_BAD_LENGTH;
		if (isp_be16(c.p + o) == int_class && !l->st.h[0]) {
			l->st.h[0] = (uint16_t)(o + 4);
			l->st.h[1] = (uint16_t)body;
		}
		o += 4 + body;
	}
	if (l->st.h[0]) {
		d->carrier = ISP_CARRIER_GENEVE;
		d->carrier_next_tbl = ISP_TBL_ETHERTYPE;
		d->carrier_next_key = ptype;
		d->carrier_next_off = l->off + l->len;
		/* a table's entry, not the protocol looked up by name: that
		 * was a third of such a packet's instructions */
		isp_next_by(d, ISP_TBL_CARRIER, ISP_CARRIER_GENEVE);
		if (d->next != ISP_TABLE_NONE)
			return isp_next_at(d, l->off + l->st.h[0], l->off + l->st.h[0] + l->st.h[1]);
	}
	isp_next_by(d, ISP_TBL_ETHERTYPE, ptype);
	return ISP_OK;
}

static bool geneve_has_int(const struct isp_packet *p, const struct isp_layer *l,
			   uintptr_t arg, struct isp_value *o)
{
	(void)p;
	(void)arg;
	return isp_val_scalar(o, ISP_T_U8, l->st.h[0] != 0);
}

static int geneve_option(const char *key, const char *value, char *err, size_t errlen)
{
	if (strcmp(key, "int-class") == 0) {
		char *end;
		errno = 0;
		unsigned long v = strtoul(value, &end, 0);
		if (!errno && end != value && !*end && v <= 0xffff) {
			int_class = (uint16_t)v;
			return 0;
		}
		snprintf(err, errlen, "expected a 16-bit option class");
		return -1;
	}
	snprintf(err, errlen, "unknown option (known: int-class, udp-ports)");
	return -1;
}

static const struct isp_attr_desc geneve_attrs[] = {
	{ "version", ISP_T_U8, 0, isp_get_field, ISP_FIELD(0, 1, 0, 2, ISP_T_U8), "Geneve version" },
	{ "opt_len", ISP_T_U8, 0, isp_get_field, ISP_FIELD(0, 1, 2, 6, ISP_T_U8), "option length in words" },
	{ "oam", ISP_T_U8, 0, isp_get_field, ISP_FIELD(1, 1, 0, 1, ISP_T_U8), "O flag: control packet" },
	{ "critical", ISP_T_U8, 0, isp_get_field, ISP_FIELD(1, 1, 1, 1, ISP_T_U8), "C flag: critical options present" },
	{ "protocol", ISP_T_U16, 0, isp_get_field, ISP_FIELD(2, 2, 0, 0, ISP_T_U16), "protocol type of the payload" },
	{ "vni", ISP_T_U32, 0, isp_get_field, ISP_FIELD(4, 4, 0, 24, ISP_T_U32), "virtual network identifier" },
	{ "has_int", ISP_T_U8, 0, geneve_has_int, 0, "1 when an INT option is present" },
	{ 0 }
};

static const struct isp_link geneve_links[] = {
	{ ISP_TBL_UDP_PORT, 6081 },
	ISP_LINKS_END
};

static const struct isp_proto_desc geneve_desc = {
	.name = "geneve",
	.help = "Geneve with options (INT option class 0x0103)",
	.decode = geneve_decode,
	.links = geneve_links,
	.attrs = geneve_attrs,
	.set_option = geneve_option,
	.options_help = "int-class=C   option class of the INT option (default 0x0103)\n",
};

int isp_geneve_register(struct isp_registry *reg);
int isp_geneve_register(struct isp_registry *reg)
{
	return isp_register_proto(reg, &geneve_desc);
}
ISP_PLUGIN_ENTRY(isp_geneve_register)
