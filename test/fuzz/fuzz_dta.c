/*
 * fuzz_dta.c - libFuzzer target for the DTA collector (src/filters/dta.c:
 * sequence tracking, NACKs, shedding, which store a report goes to, stores
 * fed by rules), the stores' writers (src/plugins/dta/store.c) and their
 * queries (dta_query.c, dta_store.h).
 *
 * An input is a run of reports, each a record [len u8][how u8][len bytes]:
 * the bytes are a DTA report's UDP payload, sent from reporter (how & 3)
 * (127.0.0.2 to 127.0.0.5, ports 50000 + r) to port 40040; how & 4 reads
 * it with the 2-byte header (-o dta.sequence=no); how >> 3 is the time
 * since the previous report, in milliseconds. Each report goes through the
 * dissector and the rules as intspect hands it over, with a tick after it
 * on the reports' clock (a Sketch-Merge reporter gone quiet is NACKed on
 * ticks). NACKs are on, to loopback's discard port.
 *
 * The stores: every kind (a key-write store with 3 copies and majority
 * answers, append, key-increment, count-min and HyperLogLog sketch-merge)
 * and two that rules feed from the reports' own attributes. Each input
 * starts from new stores and reporters, so a finding reproduces alone.
 * After the run every store is queried (info, get, poll, estimate,
 * cardinality, with keys taken from the input): each answer must parse as
 * a JSON object, and a refusal must say why. FUZZ_DTA_VERBOSE=1 prints
 * the answers.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../dsl/compile.h"
#include "../../src/core/dissect.h"
#include "../../src/core/registry.h"
#include "../../src/filters/engine.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_REPORTS 512

static struct isp_registry *reg;
static struct isp_program *prog;
static uint16_t eth;
static char dir[64];

static void die(const char *what)
{
	fprintf(stderr, "fuzz_dta: %s\n", what);
	abort();
}

static void cleanup(void)
{
	static const char *const names[] = { "kv", "ev", "cnt", "cm", "hll", "paths", "sums" };
	char path[128];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s.dta", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct dsl_diags d;
	char err[256], conf[2048];

	(void)argc;
	(void)argv;
	if (reg)
		return 0;
	/* every run creates, maps and renames seven store files: in memory
	 * (tmpfs) where there is one, a disk's journal was half of a run */
	snprintf(dir, sizeof(dir), "/dev/shm/fuzz_dta.XXXXXX");
	if (!mkdtemp(dir)) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz_dta.XXXXXX");
		if (!mkdtemp(dir))
			die("mkdtemp");
	}
	atexit(cleanup);
	snprintf(conf, sizeof(conf),
		 "dta { nack = on; nack-port = 9; max-reporters = 8 }\n"
		 "dta-store kv { type = key-write; file = \"%s/kv.dta\"; slots = 256; redundancy = 3;"
		 " value-bytes = 16; answer = majority }\n"
		 "dta-store ev { type = append; file = \"%s/ev.dta\"; lists = 4; entries = 16;"
		 " value-bytes = 16 }\n"
		 "dta-store cnt { type = key-increment; file = \"%s/cnt.dta\"; rows = 3; columns = 64 }\n"
		 "dta-store cm { type = sketch-merge; file = \"%s/cm.dta\"; sketch-id = 1; rows = 2;"
		 " columns = 16; reporters = 4; epochs = 2 }\n"
		 "dta-store hll { type = sketch-merge; file = \"%s/hll.dta\"; sketch = hll;"
		 " sketch-id = 2; rows = 1; columns = 16; reporters = 4 }\n"
		 "dta-store paths { type = key-write; file = \"%s/paths.dta\"; slots = 64;"
		 " key = {\"dta.key\", \"ip.src\"}; value = {\"dta.data\"}; value-bytes = 8 }\n"
		 "dta-store sums { type = key-increment; file = \"%s/sums.dta\"; rows = 2; columns = 16;"
		 " key = {\"dta.list\"}; increment = \"dta.data\" }\n",
		 dir, dir, dir, dir, dir, dir, dir);
	reg = isp_registry_new();
	if (!reg || isp_register_builtins(reg) != 0 || isp_registry_finalize(reg, err, sizeof err))
		die("registry");
	eth = isp_proto_id(reg, "eth");
	dsl_diags_init(&d);
	prog = isp_compile_mem(&d, reg, "dta.conf", conf, strlen(conf));
	if (!prog) {
		dsl_print_diags(&d, stderr);
		die("config");
	}
	dsl_diags_free(&d);
	return 0;
}

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Ethernet / IPv4 / UDP to port 40040 around the payload; the frame's length. */
static size_t frame(uint8_t *f, unsigned reporter, const uint8_t *payload, size_t len)
{
	static const uint8_t eth_ip[] = {
		0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00,
		0x45, 0, 0, 0, 0, 1, 0, 0, 64, 17, 0, 0, 127, 0, 0, 2, 127, 0, 0, 1,
	};

	memcpy(f, eth_ip, sizeof(eth_ip));
	put16(f + 16, (unsigned)(20 + 8 + len));
	f[29] = (uint8_t)(2 + reporter);
	uint8_t *u = f + sizeof(eth_ip);
	put16(u, 50000 + reporter);
	put16(u + 2, 40040);
	put16(u + 4, (unsigned)(8 + len));
	put16(u + 6, 0);
	memcpy(u + 8, payload, len);
	return sizeof(eth_ip) + 8 + len;
}

static void query(struct isp_rules *rules, const char *op, const char *store,
		  const char *const *args, unsigned n)
{
	char err[512], *text = NULL;

	if (isp_rules_dta(rules, op, store, args, n, &text, err, sizeof(err)) != 0) {
		if (!err[0])
			die("a refused query without a reason");
		return;
	}
	/* the control socket wraps the answer in an object: so must it parse */
	size_t len = strlen(text);
	char *wrapped = malloc(len + 3);
	if (!wrapped)
		die("out of memory");
	wrapped[0] = '[';
	memcpy(wrapped + 1, text, len);
	wrapped[len + 1] = ']';
	wrapped[len + 2] = 0;
	json_t *j = json_loads(wrapped, 0, NULL);
	if (!j || !json_is_object(json_array_get(j, 0))) {
		fprintf(stderr, "fuzz_dta: %s %s answered: %s\n", op, store, text);
		die("an answer that is not a JSON object");
	}
	if (getenv("FUZZ_DTA_VERBOSE"))
		printf("%s %s: %s\n", op, store, text);
	json_decref(j);
	free(wrapped);
	free(text);
}

static void queries(struct isp_rules *rules, const uint8_t *data, size_t size)
{
	char key[16], cursor[16], epoch[8], path_key[40];
	uint32_t k = 0;

	for (size_t i = 0; i < 4 && i < size; i++)
		k = k << 8 | data[i];
	snprintf(key, sizeof(key), "%u", (unsigned)k);
	snprintf(cursor, sizeof(cursor), "%u", size ? data[0] : 0u);
	snprintf(epoch, sizeof(epoch), "%u", size > 1 ? data[1] : 0u);
	snprintf(path_key, sizeof(path_key), "%u", (unsigned)k);
	const char *kv_args[] = { key }, *poll_args[] = { "1", cursor, "7" };
	const char *est_args[] = { key, epoch }, *path_args[] = { path_key, "127.0.0.3" };
	static const char *const stores[] = { "kv", "ev", "cnt", "cm", "hll", "paths", "sums" };

	for (size_t i = 0; i < sizeof(stores) / sizeof(stores[0]); i++)
		query(rules, "info", stores[i], NULL, 0);
	query(rules, "get", "kv", kv_args, 1);
	query(rules, "get", "paths", path_args, 2);
	query(rules, "poll", "ev", poll_args, 3);
	query(rules, "poll", "ev", poll_args, 1);
	query(rules, "estimate", "cnt", kv_args, 1);
	query(rules, "estimate", "cm", est_args, 2);
	query(rules, "cardinality", "hll", est_args + 1, 1);
	query(rules, "get", "cnt", kv_args, 1);         /* the wrong kind: refused */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct isp_packet p;
	static struct isp_stats st;
	static struct isp_channel *channels[1];
	static uint8_t f[64 + 256];
	char err[256];

	LLVMFuzzerInitialize(NULL, NULL);
	struct isp_rules *rules = isp_rules_new(prog, reg, channels, err, sizeof(err));
	if (!rules)
		die(err);
	void *w = isp_rules_ops.worker_new(rules, 0, 1, err, sizeof(err));
	if (!w)
		die(err);
	uint64_t ts = 1700000000ull * 1000000000u;
	unsigned n = 0, sequence_off = 0;       /* as the last run left it */
	for (size_t at = 0; at + 2 <= size && n < MAX_REPORTS; n++) {
		size_t len = data[at];
		unsigned how = data[at + 1];
		at += 2;
		if (len > size - at)
			len = size - at;
		if ((how & 4) != sequence_off) {        /* set only when it changes */
			sequence_off = how & 4;
			if (isp_registry_option(reg, sequence_off ? "dta.sequence=no" : "dta.sequence=yes",
						err, sizeof(err)) != 0)
				die(err);
		}
		memset(&p, 0, sizeof(p));
		p.data = f;
		p.caplen = p.wirelen = (uint32_t)frame(f, how & 3, data + at, len);
		ts += (uint64_t)(how >> 3) * 1000000u;
		p.ts_ns = ts;
		p.index = n + 1;
		at += len;
		isp_dissect(reg, &p, eth, &st);
		if (isp_dissect_refused(&p))
			continue;
		do
			isp_rules_ops.item(w, &p, ISP_ROUTE_ALL);
		while (isp_dissect_next_report(reg, &p, &st));
		isp_rules_ops.tick(w, ts);
	}
	isp_rules_ops.tick(w, ts + 1000000000u);
	isp_rules_ops.flush(w);
	queries(rules, data, size);
	if (isp_registry_option(reg, "dta.sequence=yes", err, sizeof(err)) != 0)
		die(err);
	isp_rules_ops.worker_free(w);
	isp_rules_free(rules);
	return 0;
}
