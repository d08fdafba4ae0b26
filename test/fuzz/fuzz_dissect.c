/*
 * fuzz_dissect.c - libFuzzer target for the whole plugin chain.
 *
 * Each input is dissected as an Ethernet frame, as a raw IPv4 packet and as
 * a raw IPv6 packet; every coalesced report is visited, and after each
 * dissection EVERY attribute of every registered protocol is fetched
 * (innermost and instances 1..3), so the lazy getters are fuzzed as hard as
 * the decoders: a getter trusts offsets its decoder left, which is exactly
 * what a fuzzer should attack.
 *
 * Plugin options (INT dialect, DSCP, probe marker, Geneve/GRE INT codes) are
 * process-global, so a second pass sets a complete option set chosen from
 * the input's last byte, and the defaults are restored after it: every run
 * sets every option it depends on, so a crash reproduces from the input
 * alone. Port options live in the registry, so the few port layouts are
 * separate registries built once.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/core/dissect.h"
#include "../../src/core/registry.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Port layouts: default, and one with INT and reports on other ports. */
static struct isp_registry *regs[2];
static const char *const port_options[] = {
	"int.udp-ports=0x4568,5000,7777",
	"int.tcp-ports=5001",
	"int_report.udp-ports=32766,2055,9555",
	"vxlan.udp-ports=4789,8472",
	"geneve.udp-ports=6081,6082",
	"dta.udp-ports=40040,5002",
	NULL,
};

/* Global plugin options; a pass always applies one whole row of choices. */
static const char *const dialects[] = { "int.dialect=auto", "int.dialect=l4s" };
static const char *const in_reports[] = { "int.in-reports=structural", "int.in-reports=detect" };
/* with the same bit: DTA's 3-byte and 2-byte base headers */
static const char *const dta_sequences[] = { "dta.sequence=yes", "dta.sequence=no" };
static const char *const markers[] = { "int.probe-marker=none",
				       "int.probe-marker=0xaaaaaaaabbbbbbbb" };
static const char *const dscps[] = { "int.dscp=0x20/0x3f", "int.dscp=none",
				     "int.dscp=0x17,0x01/0x01", "int.dscp=0/0" };
static const char *const geneve_classes[] = { "geneve.int-class=0x0103",
					      "geneve.int-class=0xffff" };
static const char *const gre_protos[] = { "gre.int-proto=0x88b5", "gre.int-proto=0x0800" };

static void die(const char *what, const char *err)
{
	fprintf(stderr, "fuzz_dissect: %s: %s\n", what, err);
	abort();
}

static void set_option(struct isp_registry *reg, const char *opt)
{
	char err[256];

	if (isp_registry_option(reg, opt, err, sizeof err) != 0)
		die(opt, err);
}

static struct isp_registry *make_registry(bool alt_ports)
{
	struct isp_registry *reg = isp_registry_new();
	char err[256];

	if (!reg || isp_register_builtins(reg) != 0)
		die("registry", "cannot register the built-in plugins");
	if (isp_registry_finalize(reg, err, sizeof err) != 0)
		die("finalize", err);
	for (unsigned i = 0; alt_ports && port_options[i]; i++)
		set_option(reg, port_options[i]);
	return reg;
}

/* Bits of `sel`: dialect, in-reports and dta.sequence, marker, 2 x dscp,
 * geneve, gre. */
static void apply_globals(struct isp_registry *reg, unsigned sel)
{
	set_option(reg, dialects[sel & 1]);
	set_option(reg, in_reports[(sel >> 1) & 1]);
	set_option(reg, dta_sequences[(sel >> 1) & 1]);
	set_option(reg, markers[(sel >> 2) & 1]);
	set_option(reg, dscps[(sel >> 3) & 3]);
	set_option(reg, geneve_classes[(sel >> 5) & 1]);
	set_option(reg, gre_protos[(sel >> 6) & 1]);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (regs[0])
		return 0;
	regs[0] = make_registry(false);
	regs[1] = make_registry(true);
	apply_globals(regs[0], 0);
	return 0;
}

/* Values must be self-consistent whatever the bytes: abort otherwise, so
 * the fuzzer reports more than memory errors. */
static void check_value(const struct isp_registry *reg, uint16_t proto,
			const struct isp_attr_desc *a, const struct isp_value *v)
{
	const char *why = NULL;

	if (v->type != a->type)
		why = "value type differs from the declared type";
	else if (v->is_array != a->per_hop)
		why = "array-ness differs from the declaration";
	else if (v->is_array && v->count > ISP_MAX_HOPS)
		why = "more elements than ISP_MAX_HOPS";
	else if (v->type == ISP_T_STRING && memchr(v->v.str, 0, sizeof v->v.str) == NULL)
		why = "string not NUL-terminated";
	if (why) {
		fprintf(stderr, "fuzz_dissect: %s.%s: %s (type %u, declared %u)\n",
			reg->proto[proto].desc->name, a->name, why, v->type, a->type);
		abort();
	}
}

static volatile uint64_t sink;

/* The loop over the attribute tables is the target's, not the code under
 * test: tracing its comparisons took a third of every run. */
#if defined(__clang__) && __clang_major__ >= 13
#define NOT_TRACED __attribute__((no_sanitize("coverage")))
#else
#define NOT_TRACED
#endif

NOT_TRACED static void fetch_all(const struct isp_registry *reg, const struct isp_packet *p)
{
	struct isp_value v;

	for (uint16_t i = 0; i < reg->nprotos; i++) {
		/* an absent protocol's getters are never called (isp_attr_get
		 * tests the packet's protocol bit first): asking them costs
		 * most of a run and covers nothing */
		if (i != reg->meta && !(p->protos >> i & 1))
			continue;
		unsigned seen = 0;
		for (unsigned l = 0; l < p->nlayers; l++)
			seen += p->layer[l].proto == i;
		const struct isp_attr_desc *attrs = reg->proto[i].desc->attrs;
		for (uint16_t k = 0; attrs && attrs[k].name; k++) {
			/* instance 0 is the innermost (the only one of a
			 * protocol seen once), then 1..seen (at most 3) */
			for (uint8_t inst = 0; inst <= 3 && (inst == 0 || (seen > 1 && inst <= seen));
			     inst++) {
				struct isp_attr_ref r = { .proto = i, .instance = inst, .attr = k };
				if (!isp_attr_get(reg, p, &r, &v))
					continue;
				check_value(reg, i, &attrs[k], &v);
				sink += v.v.u + v.count;
			}
		}
	}
}

/* Layers must stay inside the captured bytes and inside each other's
 * regions as the decoders promise (plugin.h). */
static void check_layers(const struct isp_packet *p)
{
	if (p->nlayers > ISP_MAX_LAYERS)
		abort();
	for (unsigned i = 0; i < p->nlayers; i++) {
		const struct isp_layer *l = &p->layer[i];
		if (l->off > l->end || l->end > p->caplen || l->len > l->end - l->off) {
			fprintf(stderr, "fuzz_dissect: layer %u: off %u len %u end %u caplen %u\n",
				i, l->off, l->len, l->end, p->caplen);
			abort();
		}
	}
}

static void dissect_as(const struct isp_registry *reg, const uint8_t *data,
		       size_t size, const char *first)
{
	static struct isp_packet p;
	static struct isp_stats st;
	uint16_t proto = isp_proto_id(reg, first);

	memset(&p, 0, sizeof p);
	p.data = data;
	p.caplen = (uint32_t)size;
	/* a short capture (snap length) and a complete packet take different
	 * verdicts: let the input's length pick one */
	p.wirelen = (uint32_t)size + (size & 1 ? 64 : 0);
	p.index = 1;
	isp_dissect(reg, &p, proto, &st);
	check_layers(&p);
	fetch_all(reg, &p);
	/* report_count is a uint8_t: more visits than that is a loop */
	for (unsigned n = 0; isp_dissect_next_report(reg, &p, &st); n++) {
		if (n > 256) {
			fprintf(stderr, "fuzz_dissect: endless coalesced reports\n");
			abort();
		}
		check_layers(&p);
		fetch_all(reg, &p);
	}
}

/*
 * A target per decoder: besides the three link types, the input is handed
 * straight to every decoder as its first layer, so each one sees raw bytes
 * and not only what the layers above let through. FUZZ_DECODER=NAME (e.g.
 * int, int_report, geneve) makes a run fuzz that one decoder alone.
 */
static void dissect_all(const struct isp_registry *reg, const uint8_t *data, size_t size)
{
	static const char *only;
	static int checked;

	if (!checked) {
		only = getenv("FUZZ_DECODER");
		checked = 1;
		if (only && isp_proto_id(reg, only) == ISP_PROTO_NONE)
			die("FUZZ_DECODER", "no such protocol");
	}
	if (only) {
		dissect_as(reg, data, size, only);
		return;
	}
	dissect_as(reg, data, size, "eth");
	dissect_as(reg, data, size, "ip");
	dissect_as(reg, data, size, "ipv6");
	for (uint16_t i = 0; i < reg->nprotos; i++) {
		const char *name = reg->proto[i].desc->name;
		if (i != reg->meta && strcmp(name, "eth") && strcmp(name, "ip") && strcmp(name, "ipv6"))
			dissect_as(reg, data, size, name);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 262144)
		return 0;       /* the largest pcap snap length */
	LLVMFuzzerInitialize(NULL, NULL);

	dissect_all(regs[0], data, size);
	if (size == 0)
		return 0;
	unsigned sel = data[size - 1];
	if (sel == 0)
		return 0;       /* the defaults again */
	struct isp_registry *reg = regs[sel >> 7];
	apply_globals(reg, sel);
	dissect_all(reg, data, size);
	apply_globals(reg, 0);
	return 0;
}
