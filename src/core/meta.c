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

enum { M_TS, M_LEN, M_CAPLEN, M_INDEX, M_REPORT_INDEX };

static bool meta_get(const struct isp_packet *p, const struct isp_layer *l,
		     uintptr_t arg, struct isp_value *o)
{
	(void)l;
	switch (arg) {
	case M_TS: return isp_val_scalar(o, ISP_T_TIMESTAMP, p->ts_ns);
	case M_LEN: return isp_val_scalar(o, ISP_T_U32, p->wirelen);
	case M_CAPLEN: return isp_val_scalar(o, ISP_T_U32, p->caplen);
	case M_INDEX: return isp_val_scalar(o, ISP_T_U64, p->index);
	case M_REPORT_INDEX: return isp_val_scalar(o, ISP_T_U8, p->report_index);
	}
	return false;
}

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
	{ "timestamp", ISP_T_TIMESTAMP, 0, meta_get, M_TS,
	  "capture time (JSON: seconds with microseconds)" },
	{ "utime", ISP_T_TIMESTAMP, 0, meta_get, M_TS,
	  ISP_ALIAS_OF("meta.timestamp") ", MMT-DPI's name (microseconds in expressions too)" },
	{ "packet_len", ISP_T_U32, 0, meta_get, M_LEN, "length on the wire" },
	{ "caplen", ISP_T_U32, 0, meta_get, M_CAPLEN, "bytes captured" },
	{ "packet_index", ISP_T_U64, 0, meta_get, M_INDEX,
	  "1-based position of the packet in the input" },
	{ "report_index", ISP_T_U8, 0, meta_get, M_REPORT_INDEX,
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
