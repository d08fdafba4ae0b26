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
			k += jsonw_utoa4(out + k, (uint32_t)(elem >> shift) & 0xff);
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
		/* numbers are most keys' text (ports, IDs): no printf */
		if (cap > JSONW_U64_MAX) {
			size_t k = jsonw_utoa(elem, out);
			out[k] = 0;
			return k;
		}
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
	case ISP_T_IPV4: {
		/* dotted digits never need escaping: straight into the record */
		size_t n = isp_value_text(v, e, buf + 1, sizeof(buf) - 2);
		buf[0] = '"';
		buf[n + 1] = '"';
		jsonw_value_text(w, buf, n + 2);
		break;
	}
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
	char *o;
	if (v->type <= ISP_T_U64 &&
	    (o = jsonw_room(w, (size_t)v->count * (JSONW_U64_MAX + 1) + 1)) != NULL) {
		/* per-hop numbers, the bulk of a per-packet record: the whole
		 * array fits, so no check per element; "null" is shorter than
		 * the room kept for a number */
		size_t n = 0;
		for (unsigned i = 0; i < v->count; i++) {
			if (i)
				o[n++] = ',';
			if (v->missing & (UINT32_C(1) << i)) {
				memcpy(o + n, "null", 4);
				n += 4;
			} else {
				n += jsonw_utoa(v->v.arr[i], o + n);
			}
		}
		w->len += n;
		jsonw_array_end(w);
		return;
	}
	for (unsigned i = 0; i < v->count; i++) {
		if (v->missing & (UINT32_C(1) << i))
			jsonw_null(w);
		else
			element(w, v, v->v.arr[i], ts_digits);
	}
	jsonw_array_end(w);
}
