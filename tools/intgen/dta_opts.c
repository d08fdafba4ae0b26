/*
 * dta_opts.c - parsing and checking the --format dta options (see
 * dta_opts.h and README.md, "DTA reports").
 */
#define _POSIX_C_SOURCE 200809L

#include "dta_opts.h"

#include <stdlib.h>
#include <string.h>

#define DTA_DEFAULT_PORT 40040
#define DTA_DEFAULT_NACK_PORT 40044
#define DTA_SEND_DEFAULT_PPS 20000.0

void dta_defaults(struct ig_dta *d)
{
	memset(d, 0, sizeof(*d));
	d->port = DTA_DEFAULT_PORT;
	d->shards = 1;
	d->op = DOP_MIX;
	d->reporters = 4;
	d->keys = 256;
	d->words = 1;
	d->lists = 4;
	d->redundancy = 2;
	d->retransmit = true;
	d->priority = -1;
	d->hops = 4;
	d->sketch = DSK_COUNT_MIN;
	d->sketch_id = 1;
	d->rows = 4;
	d->width = 1024;
	d->epochs = 1;
	d->items = 10000;
	d->chunk = 16;
	d->nack_port = DTA_DEFAULT_NACK_PORT;
	d->linger_ms = 500;
}

static int fraction(const char *s, double *out, const char *what)
{
	double v;

	if (parse_double(s, &v, 0.0, what))
		return -1;
	if (v > 1.0) {
		fprintf(stderr, "intgen: %s: a fraction from 0 to 1\n", what);
		return -1;
	}
	*out = v;
	return 0;
}

/* Sketch-shape options: remembered so that dta_finish can refuse them
 * without --dta-op sketch. */
static int sketch_option(struct ig_dta *d, int c, const char *arg)
{
	static const char *const kinds[] = { "count-min", "count-sketch", "hll", NULL };
	uint64_t u;
	int i;

	d->sketch_given = true;
	switch (c) {
	case OPT_DTA_SKETCH:
		if ((i = pick(arg, kinds, "--dta-sketch")) < 0)
			return -1;
		d->sketch = (enum ig_dta_sketch)i;
		return 0;
	case OPT_DTA_SKETCHID:
		if (parse_u64(arg, &u, 0, 0xFFFF, "--dta-sketch-id"))
			return -1;
		d->sketch_id = (uint16_t)u;
		return 0;
	case OPT_DTA_ROWS:
		if (parse_u64(arg, &u, 1, DTA_MAX_ROWS, "--dta-rows"))
			return -1;
		d->rows = (unsigned)u;
		d->rows_given = true;
		return 0;
	case OPT_DTA_WIDTH:
		if (parse_u64(arg, &u, 1, DTA_MAX_WIDTH, "--dta-width"))
			return -1;
		if (u & (u - 1))
			return fail("--dta-width must be a power of 2");
		d->width = (uint32_t)u;
		return 0;
	case OPT_DTA_SEED:
		return parse_u64(arg, &d->hash_seed, 0, UINT64_MAX, "--dta-seed");
	case OPT_DTA_EPOCHS:
		/* 16-bit epoch numbers: more would repeat one. */
		if (parse_u64(arg, &u, 1, 65536, "--dta-epochs"))
			return -1;
		d->epochs = (uint32_t)u;
		return 0;
	case OPT_DTA_ITEMS:
		return parse_u64(arg, &d->items, 0, 1000000000ull, "--dta-items");
	case OPT_DTA_CHUNK:
		if (parse_u64(arg, &u, 1, 65535, "--dta-chunk"))
			return -1;
		d->chunk = (unsigned)u;
		return 0;
	}
	return fail("internal: unknown sketch option");
}

/* --send HOST[:PORT]: only the syntax here; dta_send resolves HOST. */
static int send_option(struct ig_dta *d, const char *arg)
{
	const char *colon = strrchr(arg, ':');
	uint64_t u;

	if (!*arg || colon == arg)
		return fail("--send: expected HOST[:PORT]");
	if (colon && parse_u64(colon + 1, &u, 1, 65535, "--send port"))
		return -1;
	d->send = arg;
	return 0;
}

int dta_option(struct ig_config *cfg, int c, const char *arg)
{
	static const char *const ops[] = { "mix", "keywrite", "append",
					   "increment", "postcard", "sketch", NULL };
	struct ig_dta *d = &cfg->dta;
	uint64_t u;
	int i;

	d->given = true;
	switch (c) {
	case OPT_DTA_PORT:
		if (parse_u64(arg, &u, 1, 65535, "--dta-port"))
			return -1;
		d->port = (uint16_t)u;
		return 0;
	case OPT_DTA_SHARDS:
		/* destination 10.0.100.(1 + shard) stays below .255 */
		if (parse_u64(arg, &u, 1, 254, "--dta-shards"))
			return -1;
		d->shards = (unsigned)u;
		return 0;
	case OPT_DTA_OP:
		if ((i = pick(arg, ops, "--dta-op")) < 0)
			return -1;
		d->op = (enum ig_dta_op)i;
		return 0;
	case OPT_DTA_REPORTERS:
		if (parse_u64(arg, &u, 1, DTA_MAX_REPORTERS, "--dta-reporters"))
			return -1;
		d->reporters = (unsigned)u;
		return 0;
	case OPT_DTA_KEYS:
		if (parse_u64(arg, &u, 1, DTA_MAX_KEYS, "--dta-keys"))
			return -1;
		d->keys = (uint32_t)u;
		return 0;
	case OPT_DTA_WORDS:
		if (parse_u64(arg, &u, 1, DTA_MAX_WORDS, "--dta-words"))
			return -1;
		d->words = (unsigned)u;
		return 0;
	case OPT_DTA_LISTS:
		if (parse_u64(arg, &u, 1, UINT32_MAX, "--dta-lists"))
			return -1;
		d->lists = (uint32_t)u;
		return 0;
	case OPT_DTA_REDUNDANCY:
		if (parse_u64(arg, &u, 1, 8, "--dta-redundancy"))
			return -1;
		d->redundancy = (unsigned)u;
		return 0;
	case OPT_DTA_NOSEQ: d->no_seq = true; return 0;
	case OPT_DTA_RETRANSMIT: d->retransmit = true; return 0;
	case OPT_DTA_NORETRANSMIT: d->retransmit = false; return 0;
	case OPT_DTA_PRIORITY:
		if (!strcmp(arg, "mix")) {
			d->priority = -1;
			return 0;
		}
		if (parse_u64(arg, &u, 0, 3, "--dta-priority"))
			return -1;
		d->priority = (int)u;
		return 0;
	case OPT_DTA_IMMEDIATE:
		return fraction(arg, &d->immediate, "--dta-immediate");
	case OPT_DTA_HOPS:
		if (parse_u64(arg, &u, 1, 256, "--dta-hops"))
			return -1;
		d->hops = (unsigned)u;
		return 0;
	case OPT_DTA_LOSS:
		return fraction(arg, &d->loss, "--dta-loss");
	case OPT_DTA_REORDER:
		return fraction(arg, &d->reorder, "--dta-reorder");
	case OPT_DTA_SKETCH: case OPT_DTA_SKETCHID: case OPT_DTA_ROWS:
	case OPT_DTA_WIDTH: case OPT_DTA_SEED: case OPT_DTA_EPOCHS:
	case OPT_DTA_ITEMS: case OPT_DTA_CHUNK:
		return sketch_option(d, c, arg);
	case OPT_DTA_SEND:
		return send_option(d, arg);
	case OPT_DTA_NACKPORT:
		if (parse_u64(arg, &u, 1, 65535, "--nack-port"))
			return -1;
		d->nack_port = (uint16_t)u;
		return 0;
	case OPT_DTA_LINGER:
		if (parse_u64(arg, &u, 0, 3600000, "--linger"))
			return -1;
		d->linger_ms = (unsigned)u;
		return 0;
	}
	return fail("internal: unknown DTA option");
}

int dta_finish(struct ig_config *cfg)
{
	struct ig_dta *d = &cfg->dta;

	if (cfg->format != FMT_DTA)
		return fail("--dta-*, --send, --nack-port and --linger need --format dta");
	if (!cfg->out_path && !d->send)
		return fail("--format dta needs -o OUT.pcap, --send HOST[:PORT] or both");
	if (cfg->malformed > 0)
		return fail("--malformed is not implemented for --format dta");
	if (d->send && !cfg->pps_set)
		cfg->pps = DTA_SEND_DEFAULT_PPS;
	if (d->op != DOP_SKETCH) {
		if (d->sketch_given)
			return fail("--dta-sketch, --dta-sketch-id, --dta-rows, --dta-width, "
				    "--dta-seed, --dta-epochs, --dta-items and --dta-chunk "
				    "need --dta-op sketch");
		return 0;
	}
	if (d->sketch == DSK_HLL) {
		if (d->rows_given && d->rows != 1)
			return fail("--dta-sketch hll has one row (--dta-rows 1)");
		d->rows = 1;
	}
	if (d->chunk > d->width)
		d->chunk = (unsigned)d->width; /* one report holds the sketch */
	if ((uint64_t)d->chunk * d->rows > DTA_MAX_CHUNK_WORDS)
		return fail("--dta-chunk x --dta-rows: at most 16000 counters per "
			    "report (one UDP datagram)");
	return 0;
}

void dta_usage(FILE *fp)
{
	fputs(
"DTA reports (--format dta; see README.md, \"DTA reports\"):\n"
"  --dta-op keywrite|append|increment|postcard|sketch|mix\n"
"                                 opcode (default mix: 1-4 uniformly)\n"
"  --dta-reporters N              reporting switches (default 4)\n"
"  --dta-port P                   UDP destination port (default 40040)\n"
"  --dta-shards N                 destination 10.0.100.(1 + CRC32(key) mod N)\n"
"  --dta-keys N                   distinct keys (default 256)\n"
"  --dta-words K                  data words, Key-Write and Append (1..32, default 1)\n"
"  --dta-lists N                  Append list ids 0..N-1 (default 4)\n"
"  --dta-redundancy N             Key-Write/Key-Increment copies (1..8, default 2)\n"
"  --dta-hops H                   Postcarder hops 0..H-1 (default 4)\n"
"  --dta-no-seq                   2-byte base header (no sequence number)\n"
"  --dta-no-retransmit            clear flag 0x40 (set by default; --dta-retransmit)\n"
"  --dta-priority 0..3|mix        flags bits 1-0 (default mix)\n"
"  --dta-immediate FRACTION       reports with flag 0x80 (default 0)\n"
"  --dta-loss F --dta-reorder F   drop / delay first transmissions (default 0)\n"
"  Sketch-Merge (--dta-op sketch; -n is ignored):\n"
"  --dta-sketch count-min|count-sketch|hll   default count-min\n"
"  --dta-sketch-id N --dta-rows R --dta-width W   defaults 1, 4 (hll: 1), 1024\n"
"  --dta-seed S                   MurmurHash64A seed (default 0)\n"
"  --dta-epochs E --dta-items N   epochs (default 1), items per reporter and\n"
"                                 epoch (default 10000)\n"
"  --dta-chunk C                  columns per report (default 16)\n"
"  Live reporter:\n"
"  --send HOST[:PORT]             send the reports over UDP (default port 40040)\n"
"  --nack-port P                  NACKs arrive here (default 40044)\n"
"  --linger MS                    serve NACKs until MS ms without one (default 500)\n",
	      fp);
}
