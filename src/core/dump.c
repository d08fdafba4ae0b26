/*
 * dump.c - --dump and --list-attributes.
 *
 * Keys: meta.* first, then each layer's attributes in packet order. The
 * innermost instance of a protocol gets the bare name (ip.src), outer ones
 * proto.N.attr (ip.1.src), the same names rules use. Aliases (plugin.h)
 * are listed, never dumped.
 */
#include "dump.h"

#include <string.h>

#include "jsonw.h"
#include "value.h"

static void layer_attrs(struct jsonw *w, const struct isp_registry *reg,
			const struct isp_packet *p, const struct isp_layer *l,
			bool numbered, unsigned ts_digits)
{
	const struct isp_proto_desc *d = reg->proto[l->proto].desc;
	char prefix[48];
	struct isp_value v;

	if (numbered)
		snprintf(prefix, sizeof(prefix), "%s.%u.", d->name, isp_layer_instance(p, l));
	else
		snprintf(prefix, sizeof(prefix), "%s.", d->name);
	for (const struct isp_attr_desc *a = d->attrs; a && a->name; a++) {
		/* an alias would repeat its attribute's value under another key */
		if (isp_attr_is_alias(a) || !a->get(p, l, a->arg, &v))
			continue;
		jsonw_key3(w, prefix, a->name, NULL);
		isp_value_json(w, &v, ts_digits);
	}
}

void isp_dump_packet(const struct isp_registry *reg, const struct isp_packet *p,
		     unsigned ts_digits, FILE *out)
{
	static char buf[1 << 16];
	struct jsonw w;

	jsonw_init(&w, buf, sizeof(buf) - 1);
	jsonw_object_begin(&w);
	struct isp_layer meta = { .proto = reg->meta };
	layer_attrs(&w, reg, p, &meta, false, ts_digits);
	for (unsigned i = 0; i < p->nlayers; i++) {
		const struct isp_layer *l = &p->layer[i];
		bool inner = true;
		for (unsigned j = i + 1; j < p->nlayers; j++)
			inner &= p->layer[j].proto != l->proto;
		layer_attrs(&w, reg, p, l, !inner, ts_digits);
	}
	jsonw_object_end(&w);
	if (w.overflow) {
		fprintf(stderr, "intspect: packet %llu: dump larger than %zu bytes, skipped\n",
			(unsigned long long)p->index, sizeof(buf));
		return;
	}
	buf[w.len++] = '\n';
	fwrite(buf, 1, w.len, out);
}

void isp_list_attributes(const struct isp_registry *reg, FILE *out)
{
	for (uint16_t i = 0; i < reg->nprotos; i++) {
		const struct isp_proto_desc *d = reg->proto[i].desc;
		fprintf(out, "# %s: %s (%s)\n", d->name, d->help ? d->help : "",
			reg->proto[i].origin);
		for (const struct isp_attr_desc *a = d->attrs; a && a->name; a++) {
			char full[96], type[24];
			snprintf(full, sizeof(full), "%s.%s", d->name, a->name);
			snprintf(type, sizeof(type), "%s%s", isp_type_name((enum isp_type)a->type),
				 a->per_hop ? "[]" : "");
			fprintf(out, "%-32s %-12s %s\n", full, type, a->help ? a->help : "");
		}
	}
}
