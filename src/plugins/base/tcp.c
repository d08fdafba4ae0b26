/*
 * tcp.c - TCP with options ("tcp"). Options are parsed only when one of
 * the option attributes is asked for.
 */
#include "../../core/plugin.h"

static enum isp_verdict tcp_decode(struct isp_dissect *d, struct isp_layer *l)
{
	struct isp_cursor c = isp_layer_cursor(d->pkt, l);

	if (!isp_cur_has(&c, 20))
		return ISP_ERR_TRUNCATED;
	unsigned hlen = (c.p[12] >> 4) * 4u;
	if (hlen < 20)
		return ISP_ERR_BAD_LENGTH;
	if (!isp_cur_has(&c, hlen))
		return isp_short_verdict(d, l);    /* Data Offset past the bytes */
	l->len = hlen;
	d->l4_dport = isp_be16(c.p + 2);
	d->l4_is_tcp = 1;
	d->carrier = ISP_CARRIER_L4;
	if (l->off + hlen < l->end)     /* only a segment with data has a payload */
		isp_next_l4(d, l, ISP_TBL_TCP_PORT);
	return ISP_OK;
}

enum { OPT_MSS, OPT_WSCALE, OPT_SACK_OK, OPT_TSVAL, OPT_TSECR };

/* Walk the options; a malformed option list simply ends the walk. */
static bool tcp_option(const struct isp_packet *p, const struct isp_layer *l,
		       uintptr_t which, struct isp_value *o)
{
	const uint8_t *b = p->data + l->off + 20;
	unsigned n = l->len - 20, i = 0;

	while (i < n) {
		uint8_t kind = b[i];
		if (kind == 0)
			break;
		if (kind == 1) {
			i++;
			continue;
		}
		if (i + 1 >= n || b[i + 1] < 2 || i + b[i + 1] > n)
			break;
		uint8_t len = b[i + 1];
		const uint8_t *v = b + i + 2;
		switch (which) {
		case OPT_MSS:
			if (kind == 2 && len == 4)
				return isp_val_scalar(o, ISP_T_U16, isp_be16(v));
			break;
		case OPT_WSCALE:
			if (kind == 3 && len == 3)
				return isp_val_scalar(o, ISP_T_U8, v[0]);
			break;
		case OPT_SACK_OK:
			if (kind == 4 && len == 2)
				return isp_val_scalar(o, ISP_T_U8, 1);
			break;
		case OPT_TSVAL:
		case OPT_TSECR:
			if (kind == 8 && len == 10)
				return isp_val_scalar(o, ISP_T_U32,
						      isp_be32(v + (which == OPT_TSECR ? 4 : 0)));
			break;
		}
		i += len;
	}
	return false;
}

static const struct isp_attr_desc tcp_attrs[] = {
	/* inside the 20 bytes tcp_decode checked */
	{ "src_port", ISP_T_U16, 0, isp_get_be16_at, ISP_AT(0, ISP_T_U16), "source port" },
	{ "dst_port", ISP_T_U16, 0, isp_get_be16_at, ISP_AT(2, ISP_T_U16), "destination port" },
	{ "seq_nb", ISP_T_U32, 0, isp_get_field, ISP_FIELD(4, 4, 0, 0, ISP_T_U32), "sequence number" },
	{ "ack_nb", ISP_T_U32, 0, isp_get_field, ISP_FIELD(8, 4, 0, 0, ISP_T_U32), "acknowledgement number" },
	{ "data_offset", ISP_T_U8, 0, isp_get_field, ISP_FIELD(12, 1, 0, 4, ISP_T_U8), "header length in 4-byte words" },
	{ "flags", ISP_T_U16, 0, isp_get_field, ISP_FIELD(12, 2, 7, 9, ISP_T_U16), "flags (NS CWR ECE URG ACK PSH RST SYN FIN)" },
	{ "syn", ISP_T_U8, 0, isp_get_field, ISP_FIELD(13, 1, 6, 1, ISP_T_U8), "SYN flag" },
	{ "ack", ISP_T_U8, 0, isp_get_field, ISP_FIELD(13, 1, 3, 1, ISP_T_U8), "ACK flag" },
	{ "fin", ISP_T_U8, 0, isp_get_field, ISP_FIELD(13, 1, 7, 1, ISP_T_U8), "FIN flag" },
	{ "rst", ISP_T_U8, 0, isp_get_field, ISP_FIELD(13, 1, 5, 1, ISP_T_U8), "RST flag" },
	{ "window", ISP_T_U16, 0, isp_get_field, ISP_FIELD(14, 2, 0, 0, ISP_T_U16), "receive window" },
	{ "checksum", ISP_T_U16, 0, isp_get_field, ISP_FIELD(16, 2, 0, 0, ISP_T_U16), "checksum" },
	{ "urgent_ptr", ISP_T_U16, 0, isp_get_field, ISP_FIELD(18, 2, 0, 0, ISP_T_U16), "urgent pointer" },
	{ "mss", ISP_T_U16, 0, tcp_option, OPT_MSS, "MSS option" },
	{ "wscale", ISP_T_U8, 0, tcp_option, OPT_WSCALE, "window scale option" },
	{ "sack_permitted", ISP_T_U8, 0, tcp_option, OPT_SACK_OK, "SACK-permitted option present" },
	{ "ts_val", ISP_T_U32, 0, tcp_option, OPT_TSVAL, "timestamp option TSval" },
	{ "ts_ecr", ISP_T_U32, 0, tcp_option, OPT_TSECR, "timestamp option TSecr" },
	{ 0 }
};

static const struct isp_link tcp_links[] = {
	{ ISP_TBL_IPPROTO, 6 },
	ISP_LINKS_END
};

static const struct isp_proto_desc tcp_desc = {
	.name = "tcp",
	.help = "TCP",
	.decode = tcp_decode,
	.links = tcp_links,
	.attrs = tcp_attrs,
};

int isp_tcp_register(struct isp_registry *reg);
int isp_tcp_register(struct isp_registry *reg)
{
	return isp_register_proto(reg, &tcp_desc);
}
ISP_PLUGIN_ENTRY(isp_tcp_register)
