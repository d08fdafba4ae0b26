/*
 * value.c - formatting of attribute values.
 */
#include "value.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

size_t isp_value_text(const struct isp_value *v, uint64_t elem, char *out, size_t cap)
{
	int n;

	switch (v->type) {
	case ISP_T_IPV4: {
		/* by hand: glibc's inet_ntop goes through sprintf */
		if (cap < 16)
			return 0;
		size_t k = 0;
		for (int shift = 24; shift >= 0; shift -= 8) {
			unsigned b = (unsigned)(elem >> shift) & 0xff;
			if (b >= 100)
				out[k++] = (char)('0' + b / 100);
			if (b >= 10)
				out[k++] = (char)('0' + b / 10 % 10);
			out[k++] = (char)('0' + b % 10);
			if (shift)
				out[k++] = '.';
		}
		out[k] = 0;
		return k;
	}
	case ISP_T_IPV6:
		n = inet_ntop(AF_INET6, v->v.ip6, out, (socklen_t)cap) ? (int)strlen(out) : 0;
		break;
	case ISP_T_MAC:
		n = snprintf(out, cap, "%02x:%02x:%02x:%02x:%02x:%02x", v->v.mac[0],
			     v->v.mac[1], v->v.mac[2], v->v.mac[3], v->v.mac[4], v->v.mac[5]);
		break;
	case ISP_T_STRING:
		n = snprintf(out, cap, "%s", v->v.str);
		break;
	default:
		n = snprintf(out, cap, "%llu", (unsigned long long)elem);
		break;
	}
	return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

static void element(struct jsonw *w, const struct isp_value *v, uint64_t e,
		    unsigned ts_digits)
{
	char buf[64];

	switch (v->type) {
	case ISP_T_IPV4:
	case ISP_T_IPV6:
	case ISP_T_MAC:
		isp_value_text(v, e, buf, sizeof(buf));
		jsonw_string(w, buf);
		break;
	case ISP_T_STRING:
		jsonw_string(w, v->v.str);
		break;
	case ISP_T_TIMESTAMP:
		jsonw_time(w, e, ts_digits);
		break;
	default:
		jsonw_u64(w, e);
		break;
	}
}

void isp_value_json(struct jsonw *w, const struct isp_value *v, unsigned ts_digits)
{
	if (!v->is_array) {
		if (v->missing & 1)
			jsonw_null(w);
		else
			element(w, v, v->v.u, ts_digits);
		return;
	}
	jsonw_array_begin(w);
	for (unsigned i = 0; i < v->count; i++) {
		if (v->missing & (UINT32_C(1) << i))
			jsonw_null(w);
		else
			element(w, v, v->v.arr[i], ts_digits);
	}
	jsonw_array_end(w);
}
