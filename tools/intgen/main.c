/*
 * main.c - intgen: writes INT test captures and the values a correct
 * decoder must extract from them.
 *
 * intgen is an encoder written independently of intspect's decoders (it
 * includes none of their code) so the two can check each other: a bug has
 * to be made twice, the same way, to go unnoticed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dta_run.h"
#include "expect.h"
#include "frame.h"
#include "model.h"
#include "options.h"
#include "pcap_writer.h"
#include "report.h"
#include "rng.h"
#include "wire.h"

/* Largest frame: 32 coalesced reports of ~1 KB inner packets each. */
#define PKT_BUF_SIZE (256u << 10)

enum malform { MAL_NONE, MAL_TRUNCATED, MAL_BAD_LENGTH };

static const char *const malform_name[] = { "", "truncated", "bad_length" };

struct run {
	struct ig_config cfg;
	struct ig_model model;
	struct rng aux; /* malformed choices, so they do not shift values */
	struct ig_item items[IG_MAX_COALESCE];
	uint8_t pkt[PKT_BUF_SIZE];
	struct pcap_writer pcap;
	struct expect_writer exp;
	bool have_exp;
};

/* Make the INT length field lie: point past the end of the packet when
 * that fits in the field, else below the size of the fixed headers. Both
 * are impossible for a well-formed packet. */
static void corrupt_int_length(struct run *r, const struct frame_info *fi)
{
	const struct ig_config *cfg = &r->cfg;
	uint8_t *lenp = r->pkt + fi->len_off;

	if (cfg->transport == TR_GENEVE) {
		uint8_t cur = *lenp & 0x1F;
		if (cur < 31 && rng_one_in(&r->aux, 2))
			*lenp = (uint8_t)((*lenp & 0xE0) | (cur + 1)); /* overruns the options */
		else
			*lenp = (uint8_t)((*lenp & 0xE0) | 1);         /* shorter than the MD header */
		return;
	}
	size_t rest_words = (fi->len - fi->int_off + 3) / 4;
	size_t big = rest_words + 1 + rng_below(&r->aux, 4);
	if (big <= 255 && rng_below(&r->aux, 4) != 0)
		*lenp = (uint8_t)big;
	else
		*lenp = (uint8_t)(1 + rng_below(&r->aux, 2));
}

static int emit_inline(struct run *r, uint64_t idx, uint64_t ts, enum malform mal)
{
	const struct ig_config *cfg = &r->cfg;
	struct ig_item *it = &r->items[0];
	struct frame_info fi;

	model_item(&r->model, it, ts, true);
	size_t base = frame_len(cfg, it, true);
	it->payload_len = cfg->size > base ? (unsigned)(cfg->size - base) : 0;
	if (mal == MAL_BAD_LENGTH)
		it->payload_len = 0; /* so "past the end" is reachable */
	size_t len = frame_build(r->pkt, cfg, it, true, &fi);
	size_t caplen = len;

	if (mal == MAL_TRUNCATED)
		caplen = fi.int_off + 1 + rng_below(&r->aux, fi.int_len - 1);
	else if (mal == MAL_BAD_LENGTH)
		corrupt_int_length(r, &fi);
	if (r->have_exp) {
		if (mal != MAL_NONE)
			expect_malformed(&r->exp, idx, malform_name[mal]);
		else
			expect_item(&r->exp, cfg, idx, it, 0);
	}
	return pcap_write(&r->pcap, ts, r->pkt, (uint32_t)caplen, (uint32_t)len);
}

static int emit_report(struct run *r, uint64_t idx, uint64_t ts, enum malform mal)
{
	const struct ig_config *cfg = &r->cfg;
	unsigned k = cfg->coalesce;
	struct report_info ri;

	for (unsigned j = 0; j < k; j++) {
		model_item(&r->model, &r->items[j], ts, cfg->report_inner_int);
		model_report(&r->model, &r->items[j], j ? &r->items[0] : NULL);
	}
	report_size_items(cfg, r->items, k);
	bool last_ff = cfg->report_ver == 2 && rng_one_in(&r->aux, 8);
	size_t len = report_build(r->pkt, cfg, r->items, k, last_ff, &ri);
	size_t caplen = len;

	if (mal == MAL_BAD_LENGTH && cfg->report_ver != 2)
		mal = MAL_TRUNCATED; /* v0.5/v1.0 have no length to corrupt */
	if (mal == MAL_TRUNCATED) {
		caplen = ri.rep_off + 1 + rng_below(&r->aux, ri.hdr_len - 1);
	} else if (mal == MAL_BAD_LENGTH) {
		size_t big = ri.rest + 1 + rng_below(&r->aux, 4);
		put8(r->pkt + ri.len_off, big <= 254 ? (uint32_t)big : 1u);
	}
	if (r->have_exp) {
		if (mal != MAL_NONE)
			expect_malformed(&r->exp, idx, malform_name[mal]);
		else
			for (unsigned j = 0; j < k; j++)
				expect_item(&r->exp, cfg, idx, &r->items[j], 1);
	}
	return pcap_write(&r->pcap, ts, r->pkt, (uint32_t)caplen, (uint32_t)len);
}

int main(int argc, char **argv)
{
	static struct run r; /* large: keep it off the stack */
	int rc = options_parse(&r.cfg, argc, argv);

	if (rc)
		return rc > 0 ? 0 : 2;
	if (r.cfg.format == FMT_DTA)
		return dta_run(&r.cfg);
	if (model_init(&r.model, &r.cfg) != 0) {
		fprintf(stderr, "intgen: out of memory\n");
		return 1;
	}
	rng_seed(&r.aux, r.cfg.seed ^ 0xA5A5A5A5DEADBEEFull);

	if (pcap_open(&r.pcap, r.cfg.out_path, r.cfg.nanosec)) {
		fprintf(stderr, "intgen: %s: %s\n", r.cfg.out_path, strerror(errno));
		return 1;
	}
	if (r.cfg.expect_path) {
		if (expect_open(&r.exp, r.cfg.expect_path)) {
			fprintf(stderr, "intgen: %s: %s\n", r.cfg.expect_path,
				strerror(errno));
			pcap_close(&r.pcap);
			return 1;
		}
		r.have_exp = true;
	}

	double step_ns = 1e9 / r.cfg.pps;
	int werr = 0;
	for (uint64_t i = 0; i < r.cfg.count && !werr; i++) {
		uint64_t ts = r.cfg.ts_start_ns + (uint64_t)((double)i * step_ns + 0.5);
		enum malform mal = MAL_NONE;

		if (r.cfg.malformed > 0 && rng_unit(&r.aux) < r.cfg.malformed)
			mal = rng_one_in(&r.aux, 2) ? MAL_TRUNCATED : MAL_BAD_LENGTH;
		if (r.cfg.format == FMT_REPORT)
			werr = emit_report(&r, i + 1, ts, mal);
		else
			werr = emit_inline(&r, i + 1, ts, mal);
	}

	rc = 0;
	if (pcap_close(&r.pcap) || werr) {
		fprintf(stderr, "intgen: %s: write error\n", r.cfg.out_path);
		rc = 1;
	}
	if (r.have_exp && expect_close(&r.exp)) {
		fprintf(stderr, "intgen: %s: write error\n", r.cfg.expect_path);
		rc = 1;
	}
	model_free(&r.model);
	return rc;
}
