/*
 * checkconf.c - intspect -T: see checkconf.h.
 */
#include "checkconf.h"

#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../filters/bloom.h"
#include "../filters/engine.h"
#include "../../dsl/compile.h"

/* What -T says of a flow monitor: its sampling and the false-positive
 * rate its filter of removed flows reaches. */
static void print_monitor(const struct mrule *m)
{
	printf("flow-monitor %s: sampling %g, interval %llu ms in %u sub-intervals, at most %u "
	       "flows per worker; filter of removed flows: %llu cells, %u hashes, %lu KiB: "
	       "false positives %.2g%% at 1,000 removed flows, 1%% at %llu\n", m->name,
	       m->sampling, (unsigned long long)(m->interval_ns / 1000000), m->nbuf, m->max_entries,
	       (unsigned long long)m->bloom_cells, m->bloom_hashes,
	       (unsigned long)(m->bloom_cells / 2 / 1024),
	       100 * cbloom_fp_rate(m->bloom_cells, m->bloom_hashes, 1000),
	       (unsigned long long)cbloom_capacity(m->bloom_cells, m->bloom_hashes, 0.01));
}

/* The chance that a Key-Write key of age w (keys written after it) is
 * answered, in the DTA paper's model: each of its n copies survives with
 * q = e^(-wn/m); answer any needs one (1 - (1 - q)^n), answer majority
 * more than half of them. */
static double kw_answered(double w, unsigned n, double m, bool any)
{
	double q = exp(-w * n / m);

	if (any)
		return 1 - pow(1 - q, n);
	double p = 0, choose = 1;       /* C(n, k), from k = n down */
	for (unsigned k = n; k > n / 2; k--) {
		p += choose * pow(q, k) * pow(1 - q, n - k);
		choose = choose * k / (n - k + 1);
	}
	return p;
}

/* -T: a DTA store's shape, its file's size and, for Key-Write, how many
 * keys it answers for at 99% (the oldest of them answered with 0.99). */
static void print_dta_store(const struct dta_def *d)
{
	static const char *const kinds[] = { "", "key-write", "append", "key-increment", "",
					     "sketch-merge" };
	const struct dta_store_cfg *c = &d->cfg;
	double mib = (double)dta_store_bytes(c) / (1 << 20);

	printf("  dta-store %s: %s, %s, %.1f MiB, %s", d->name, kinds[c->kind], d->path, mib,
	       d->reports ? "takes DTA reports" : "fed by rules");
	switch (c->kind) {
	case ISP_DTA_KEY_WRITE: {
		/* the most keys W with P >= 0.99, by bisection on the model */
		double lo = 0, hi = (double)c->slots * 4, m = (double)c->slots;
		for (int k = 0; k < 60; k++) {
			double w = (lo + hi) / 2;
			if (kw_answered(w, c->redundancy, m, c->answer_any) >= 0.99)
				lo = w;
			else
				hi = w;
		}
		printf("; %llu slots x %u copies, %u-byte values (answer %s): 99%% of "
		       "queries answered up to %.0f keys\n", (unsigned long long)c->slots,
		       c->redundancy, c->value_bytes, c->answer_any ? "any" : "majority", lo);
		break;
	}
	case ISP_DTA_APPEND:
		printf("; %u lists x %u entries of %u bytes\n", c->lists, c->entries, c->value_bytes);
		break;
	case ISP_DTA_KEY_INCREMENT:
		printf("; count-min %u x %u: error <= %.3g%% of the total with probability %.4f\n",
		       c->rows, c->columns, 100 * exp(1) / c->columns, 1 - exp(-(double)c->rows));
		break;
	default:
		printf("; sketch-id %u, %s %u x %u, %u reporters, %u epochs\n", c->sketch_id,
		       c->sketch_kind == ISP_DTA_HLL ? "hll" : c->sketch_kind == ISP_DTA_COUNT_SKETCH ?
		       "count-sketch" : "count-min", c->rows, c->columns, c->reporters, c->epochs);
	}
}

int cli_check_program(const struct isp_program *prog, const struct isp_registry *reg,
		      const char *who)
{
	char err[512];

	if (isp_rules_check(prog, reg, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", who, err);
		return -1;
	}
	for (unsigned i = 0; i < prog->ndta; i++) {
		const struct dta_def *d = &prog->dta_stores[i];
		char buf[4096];
		if (snprintf(buf, sizeof(buf), "%s", d->path) >= (int)sizeof(buf))
			continue;       /* (the run says it) */
		const char *dir = dirname(buf);
		if (access(dir, W_OK | X_OK) != 0) {
			fprintf(stderr, "%s: dta-store %s: %s: %s\n", who, d->name, dir, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* -T FILE: the compiler checks what a run checks (output sections too)
 * and opens nothing; report, exit status. */
int cli_check_config(const struct isp_registry *reg, const char *path)
{
	struct dsl_diags diags;

	dsl_diags_init(&diags);
	struct isp_program *prog = isp_compile_file(&diags, reg, path);
	dsl_print_diags(&diags, stderr);
	if (prog && cli_check_program(prog, reg, path) < 0) {
		isp_program_free(prog);
		prog = NULL;
	}
	if (prog) {
		printf("%s: %u event reports, %u query reports, %u flow monitors, %u attributes, "
		       "%u channels: ok\n", path, prog->nevents, prog->nqueries, prog->nmonitors,
		       prog->nslots, prog->nchannels);
		for (unsigned i = 0; i < prog->nmonitors; i++)
			print_monitor(&prog->monitors[i]);
		for (unsigned i = 0; i < prog->ndta; i++)
			print_dta_store(&prog->dta_stores[i]);
	}
	isp_program_free(prog);
	dsl_diags_free(&diags);
	return prog ? 0 : 2;
}

