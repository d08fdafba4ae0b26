/*
 * meta.c - meta.* attributes. Their getters get a NULL layer.
 */
#include "meta.h"

#include <stdio.h>
#include <string.h>

#include "dissect.h"
#include "registry.h"

static const struct isp_registry *names_reg;

void isp_meta_bind(const struct isp_registry *reg)
{
	names_reg = reg;
}

/* One getter per attribute: a switch on arg cost as much as the fetch,
 * and rules fetch meta.timestamp and meta.packet_len on every packet. */
#define META_GETTER(name, type, field)                                                  \
	static bool name(const struct isp_packet *p, const struct isp_layer *l,         \
			 uintptr_t arg, struct isp_value *o)                            \
	{                                                                               \
		(void)l;                                                                \
		(void)arg;                                                              \
		return isp_val_scalar(o, type, p->field);                               \
	}
META_GETTER(meta_ts, ISP_T_TIMESTAMP, ts_ns)
META_GETTER(meta_len, ISP_T_U32, wirelen)
META_GETTER(meta_caplen, ISP_T_U32, caplen)
META_GETTER(meta_index, ISP_T_U64, index)
META_GETTER(meta_report_index, ISP_T_U8, report_index)
#undef META_GETTER

static bool meta_hierarchy(const struct isp_packet *p, const struct isp_layer *l,
			   uintptr_t arg, struct isp_value *o)
{
	size_t n = 0;

	(void)l;
	(void)arg;
	isp_val_scalar(o, ISP_T_STRING, 0);
	o->v.str[0] = 0;
	for (unsigned i = 0; i < p->nlayers && names_reg; i++) {
		const char *name = names_reg->proto[p->layer[i].proto].desc->name;
		int w = snprintf(o->v.str + n, sizeof(o->v.str) - n, "%s%s",
				 i ? "." : "", name);
		if (w < 0 || (size_t)w >= sizeof(o->v.str) - n)
			break;
		n += (size_t)w;
	}
	return true;
}

static bool meta_malformed(const struct isp_packet *p, const struct isp_layer *l,
			   uintptr_t arg, struct isp_value *o)
{
	(void)l;
	(void)arg;
	if (!p->malformed || !names_reg)
		return false;
	isp_val_scalar(o, ISP_T_STRING, 0);
	snprintf(o->v.str, sizeof(o->v.str), "%s.%s",
		 names_reg->proto[p->malformed_proto].desc->name,
		 isp_verdict_name((enum isp_verdict)p->malformed));
	return true;
}

static const struct isp_attr_desc meta_attrs[] = {
	{ "timestamp", ISP_T_TIMESTAMP, 0, meta_ts, 0,
	  "capture time (JSON: seconds with microseconds)" },
	{ "utime", ISP_T_TIMESTAMP, 0, meta_ts, 0,
	  ISP_ALIAS_OF("meta.timestamp") ", MMT-DPI's name (microseconds in expressions too)" },
	{ "packet_len", ISP_T_U32, 0, meta_len, 0, "length on the wire" },
	{ "caplen", ISP_T_U32, 0, meta_caplen, 0, "bytes captured" },
	{ "packet_index", ISP_T_U64, 0, meta_index, 0,
	  "1-based position of the packet in the input" },
	{ "report_index", ISP_T_U8, 0, meta_report_index, 0,
	  "0-based individual report within a coalesced telemetry report" },
	{ "malformed", ISP_T_STRING, 0, meta_malformed, 0,
	  "protocol.reason of a header that failed to decode, e.g. int.truncated" },
	{ "proto_hierarchy", ISP_T_STRING, 0, meta_hierarchy, 0,
	  "decoded protocols, outermost first, e.g. eth.ip.udp.int" },
	{ 0 }
};

const struct isp_proto_desc isp_meta_desc = {
	.name = "meta",
	.help = "properties of the captured packet",
	.attrs = meta_attrs,
};
