/*
 * field.c - the generic fixed-offset header field getter.
 *
 * Most header attributes are "N bytes at offset K, maybe a bit range": one
 * getter parameterised by ISP_FIELD() serves them all, so plugins declare
 * such attributes as data instead of writing a function each.
 */
#include "plugin.h"

#include <string.h>

bool isp_get_field(const struct isp_packet *p, const struct isp_layer *l,
		   uintptr_t arg, struct isp_value *out)
{
	unsigned off = arg & 0xffff;
	unsigned size = (arg >> 16) & 0x1f;
	unsigned first = (arg >> 21) & 0x7f;
	unsigned width = (arg >> 28) & 0x7f;
	unsigned type = (arg >> 35) & 0x3f;

	if (off + size > l->len || l->off + off + size > p->caplen)
		return false;
	const uint8_t *b = p->data + l->off + off;

	switch (type) {
	case ISP_T_MAC:
		isp_val_scalar(out, ISP_T_MAC, 0);
		memcpy(out->v.mac, b, 6);
		return true;
	case ISP_T_IPV6:
		isp_val_scalar(out, ISP_T_IPV6, 0);
		memcpy(out->v.ip6, b, 16);
		return true;
	default:
		break;
	}
	uint64_t v = isp_be_n(b, size);
	unsigned bits = size * 8;
	if (width) {
		v = (v >> (bits - first - width)) & (width >= 64 ? UINT64_MAX : ((UINT64_C(1) << width) - 1));
		bits = width;
	}
	isp_val_scalar(out, (uint8_t)type, v);
	if ((arg & ISP_FIELD_UNAVAIL) && isp_all_ones(v, bits))
		out->missing = 1;
	return true;
}
