/*
 * malformed.c - a malformed-input corpus made from the test packets, with
 * what each must be counted as (not only "did not crash"; the sanitizers
 * of the build catch that). Arguments: capture files and directories of
 * raw Ethernet frames (test/fuzz/corpus/dissect).
 *
 *  1. Every truncation point. Each well-formed packet is cut after each of
 *     its bytes, as a capture's snap length cuts it (the wire length stays
 *     whole). The first layer whose header (offset + header length, as the
 *     whole packet decodes) reaches past the cut is the cut layer:
 *     - the layers before it decode as in the whole packet;
 *     - a cut inside its header counts it `truncated` (that protocol, that
 *       reason), and nothing else;
 *     - a cut at its first byte counts nothing, or it `truncated`;
 *     - a cut past every header counts nothing (right after the last
 *       one, with nothing of what follows kept, the protocol the packet
 *       goes to may count `truncated`: no byte says what it is).
 *  2. Encapsulation loops: IPv4 in GRE in IPv4 ... k times (k = 1 to 40):
 *     up to ISP_MAX_LAYERS layers decode with nothing counted; deeper, the
 *     packet counts `too_deep` and keeps ISP_MAX_LAYERS layers.
 *  3. Wire lengths that lie: below the captured length, or above any
 *     link's, count `bad_wire_len` and decode nothing.
 *  4. DTA fields: in every well-formed DTA report of the captures, the
 *     opcode set to each of its 256 values, the redundancy of Key-Write
 *     and Key-Increment to 0, 1 and 255, and Sketch-Merge's column count
 *     to 0, 1, one less, one more and 65535: each verdict is the one the
 *     wire format's table (src/plugins/dta/README.md) gives, written
 *     again here (dta_model), counted once under dta, the layers before
 *     it as in the whole packet.
 *  5, 6. INT header and telemetry-report fields: int_fields.c.
 *  7. The carriers' length fields (IPv4, IPv6, UDP, TCP, Geneve):
 *     base_fields.c.
 *
 * Options first: -o PROTO.KEY=VALUE, as intspect's (a capture that needs
 * one, such as DTA's 2-byte header).
 *
 * Prints "ok ..." / "FAIL ..." (the first differences), then
 * "malformed: N passed, M failed".
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../src/core/source.h"
#include "malformed.h"

struct isp_registry *reg;
unsigned pass, fail;

const char *pname(uint16_t id)
{
	return id < reg->nprotos ? reg->proto[id].desc->name : "-";
}

unsigned long counted_malformed(const struct isp_stats *st)
{
	unsigned long n = 0;

	for (unsigned pr = 0; pr < reg->nprotos; pr++)
		for (unsigned r = ISP_ERR_TRUNCATED; r < ISP_VERDICT__COUNT; r++)
			n += st->malformed[pr][r];
	return n;
}

struct tally {
	unsigned long packets, cuts, counted, bad;
};

/* One packet, every cut; differences said (the first few) and counted. */
static void cuts(const char *what, const uint8_t *d, uint32_t n, uint16_t first, struct tally *t)
{
	struct isp_packet whole = { .data = d, .caplen = n, .wirelen = n };
	struct isp_stats st = { 0 };

	isp_dissect(reg, &whole, first, &st);
	if (whole.malformed || whole.nlayers == 0)
		return;         /* only well-formed packets have a meaning to cut */
	t->packets++;
	for (uint32_t c = 1; c < n; c++) {
		uint8_t *cut = malloc(c);       /* exactly c bytes: ASan sees past them */
		if (!cut)
			abort();
		memcpy(cut, d, c);
		struct isp_packet p = { .data = cut, .caplen = c, .wirelen = n };
		isp_dissect(reg, &p, first, &st);
		int x = -1;
		for (int i = 0; i < whole.nlayers; i++) {
			if (whole.layer[i].off + whole.layer[i].len > c) {
				x = i;
				break;
			}
		}
		const char *why = NULL;
		bool trunc_at_x = x >= 0 && p.malformed == ISP_ERR_TRUNCATED &&
				  p.malformed_proto == whole.layer[x].proto;
		const struct isp_layer *last = &whole.layer[whole.nlayers - 1];
		if (x < 0) {
			/* cut right after the last header, nothing of what
			 * follows kept: a protocol it goes to may say truncated */
			bool nothing_kept = c == last->off + last->len &&
					    p.malformed == ISP_ERR_TRUNCATED &&
					    p.nlayers == whole.nlayers;
			if (p.malformed && !nothing_kept)
				why = "counted although every header is whole";
		} else {
			for (int i = 0; i < x && !why; i++)
				if (i >= p.nlayers || p.layer[i].proto != whole.layer[i].proto ||
				    p.layer[i].off != whole.layer[i].off)
					why = "a layer before the cut decodes differently";
			if (!why && whole.layer[x].off < c && !trunc_at_x)
				why = "the cut layer is not counted truncated";
			if (!why && whole.layer[x].off >= c && p.malformed && !trunc_at_x)
				why = "something else counted at a layer boundary";
		}
		t->cuts++;
		t->counted += p.malformed != 0;
		if (why && t->bad++ < 5)
			printf("  %s, cut at %u of %u: %s (cut layer %s at %u, header %u; counted %s %s, "
			       "%u layers)\n", what, c, n, why, x >= 0 ? pname(whole.layer[x].proto) : "-",
			       x >= 0 ? whole.layer[x].off : 0, x >= 0 ? whole.layer[x].len : 0,
			       p.malformed ? pname(p.malformed_proto) : "-",
			       isp_verdict_name((enum isp_verdict)p.malformed), p.nlayers);
		free(cut);
	}
}

static void report(const char *what, const struct tally *t)
{
	if (t->bad || !t->packets) {
		printf("FAIL truncation %s: %lu of %lu cuts (%lu packets) not as expected\n", what,
		       t->bad, t->cuts, t->packets);
		fail++;
	} else {
		printf("ok truncation %s: %lu packets cut at each of %lu points, %lu counted, each "
		       "at its cut layer\n", what, t->packets, t->cuts, t->counted);
		pass++;
	}
}

/* ---- 4. DTA fields ---- */

static bool dta_seq = true;     /* -o dta.sequence=no: the 2-byte header */
static struct tally dta_t;

/* The verdict of a complete DTA payload of n bytes, by the README's table:
 * opcode 1 Key-Write {redundancy u8, key u32, 4k bytes, k >= 1}, 2 Append
 * {list u32, 4k bytes}, 3 Key-Increment {redundancy u8, key u32, u64}, 4
 * Postcarder {key u32, hop u8, u32}, 5 Sketch-Merge {6 u16, columns the
 * 5th; 4 x columns x rows bytes, rows >= 1}; redundancy 0 and columns 0
 * ask for nothing: bad_length; another opcode: bad_version. */
static enum isp_verdict dta_model(const uint8_t *b, size_t n)
{
	size_t h = dta_seq ? 3 : 2;
	static const size_t fixed[6] = { 0, 5, 4, 13, 9, 12 };

	if (n < h)
		return ISP_ERR_BAD_LENGTH;
	if (b[0] < 1 || b[0] > 5)
		return ISP_ERR_BAD_VERSION;
	const uint8_t *q = b + h;
	size_t m = n - h;
	if (m < fixed[b[0]])
		return ISP_ERR_BAD_LENGTH;
	size_t rest = m - fixed[b[0]];
	unsigned cols = b[0] == 5 ? (unsigned)(q[8] << 8 | q[9]) : 0;
	switch (b[0]) {
	case 1: return q[0] && rest && rest % 4 == 0 ? ISP_OK : ISP_ERR_BAD_LENGTH;
	case 2: return rest && rest % 4 == 0 ? ISP_OK : ISP_ERR_BAD_LENGTH;
	case 3: return q[0] && !rest ? ISP_OK : ISP_ERR_BAD_LENGTH;
	case 4: return !rest ? ISP_OK : ISP_ERR_BAD_LENGTH;
	default: return cols && rest && rest % (4u * cols) == 0 ? ISP_OK : ISP_ERR_BAD_LENGTH;
	}
}

/* One mutant of a DTA frame whose DTA layer starts at off: as the model
 * says, counted once, the layers before it unchanged. */
static bool dta_mutant(const struct isp_packet *whole, const uint8_t *m, uint32_t n, uint32_t off,
		       uint16_t first)
{
	struct isp_packet p = { .data = m, .caplen = n, .wirelen = n };
	struct isp_stats st = { 0 };
	uint16_t dta = isp_proto_id(reg, "dta");
	/* the datagram ends where UDP says, not at the frame's end (an
	 * Ethernet trailer may follow) */
	uint32_t end = whole->layer[whole->nlayers - 1].end;
	enum isp_verdict want = dta_model(m + off, end - off);

	isp_dissect(reg, &p, first, &st);
	unsigned before = whole->nlayers - 1;
	unsigned long counted = counted_malformed(&st);
	bool same = p.nlayers >= before;
	for (unsigned i = 0; same && i < before; i++)
		same = p.layer[i].proto == whole->layer[i].proto && p.layer[i].off == whole->layer[i].off;
	if (want == ISP_OK)
		return same && !p.malformed && counted == 0 && p.nlayers == whole->nlayers &&
		       p.layer[before].proto == dta;
	return same && p.malformed == want && counted == 1 && st.malformed[dta][want] == 1 &&
	       p.nlayers == before;
}

static void dta_fields(const char *what, const uint8_t *d, uint32_t n, uint16_t first)
{
	struct isp_packet whole = { .data = d, .caplen = n, .wirelen = n };
	struct isp_stats st = { 0 };
	uint16_t dta = isp_proto_id(reg, "dta");
	static uint8_t m[65536];

	isp_dissect(reg, &whole, first, &st);
	if (whole.malformed || !whole.nlayers || whole.layer[whole.nlayers - 1].proto != dta ||
	    n > sizeof(m))
		return;
	uint32_t off = whole.layer[whole.nlayers - 1].off, h = dta_seq ? 3 : 2;
	struct mut { uint32_t at; unsigned bytes, v; } muts[256 + 8];
	unsigned k = 0;
	for (unsigned v = 0; v < 256; v++)
		muts[k++] = (struct mut){ off, 1, v };
	if (d[off] == 1 || d[off] == 3) {
		muts[k++] = (struct mut){ off + h, 1, 0 };
		muts[k++] = (struct mut){ off + h, 1, 1 };
		muts[k++] = (struct mut){ off + h, 1, 255 };
	}
	if (d[off] == 5 && off + h + 10 <= n) {
		unsigned c = (unsigned)(d[off + h + 8] << 8 | d[off + h + 9]);
		unsigned cs[] = { 0, 1, c - 1, c + 1, 65535 };
		for (unsigned i = 0; i < 5; i++)
			muts[k++] = (struct mut){ off + h + 8, 2, cs[i] & 0xffff };
	}
	dta_t.packets++;
	for (unsigned i = 0; i < k; i++) {
		memcpy(m, d, n);
		if (muts[i].bytes == 1) {
			m[muts[i].at] = (uint8_t)muts[i].v;
		} else {
			m[muts[i].at] = (uint8_t)(muts[i].v >> 8);
			m[muts[i].at + 1] = (uint8_t)muts[i].v;
		}
		dta_t.cuts++;
		if (dta_mutant(&whole, m, n, off, first)) {
			dta_t.counted += dta_model(m + off, whole.layer[whole.nlayers - 1].end - off) !=
					 ISP_OK;
		} else if (dta_t.bad++ < 3) {
			printf("# %s: byte %u set to %u: not what the wire format says\n", what,
			       muts[i].at - off, muts[i].v);
		}
	}
}

static void capture(const char *path)
{
	char err[256];
	struct isp_source_opts o = { .file = path };
	struct isp_source *s = isp_source_open(&o, err, sizeof(err));
	struct tally t = { 0 };

	if (!s) {
		printf("FAIL %s: %s\n", path, err);
		fail++;
		return;
	}
	uint16_t first = isp_source_first_proto(s, reg, err, sizeof(err));
	const uint8_t *d;
	uint32_t cap, wire;
	uint64_t ts;
	unsigned k = 0;
	while (first != ISP_PROTO_NONE && k < 8 &&
	       isp_source_next(s, &d, &cap, &wire, &ts, err, sizeof(err)) == 1) {
		char what[512];
		snprintf(what, sizeof(what), "%s packet %u", path, ++k);
		if (cap == wire) {
			cuts(what, d, cap, first, &t);
			dta_fields(what, d, cap, first);
			int_fields(what, d, cap, first);
			base_fields(what, d, cap, first);
		}
	}
	isp_source_close(s);
	const char *base = strrchr(path, '/');
	report(base ? base + 1 : path, &t);
}

static void frames(const char *dir)
{
	DIR *dd = opendir(dir);
	struct dirent *e;
	struct tally t = { 0 };
	uint16_t eth = isp_proto_id(reg, "eth");

	if (!dd) {
		printf("FAIL %s: cannot read\n", dir);
		fail++;
		return;
	}
	while ((e = readdir(dd))) {
		char path[1024];
		static uint8_t buf[65536];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		FILE *f = e->d_name[0] == '.' ? NULL : fopen(path, "rb");
		if (!f)
			continue;
		size_t n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		cuts(path, buf, (uint32_t)n, eth, &t);
		dta_fields(path, buf, (uint32_t)n, eth);
		int_fields(path, buf, (uint32_t)n, eth);
		base_fields(path, buf, (uint32_t)n, eth);
	}
	closedir(dd);
	report("of the fuzz seed frames", &t);
}

/* eth, then k times IPv4 + GRE, then IPv4 + UDP + 4 bytes */
static size_t gre_loop(uint8_t *b, unsigned k)
{
	size_t n = 0;
	static const uint8_t eth[14] = { 2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00 };
	memcpy(b, eth, 14);
	n = 14;
	for (unsigned i = 0; i <= k; i++) {
		size_t ipl = 20 + (k - i) * 24 + 8 + 4;     /* this IPv4 and all it carries */
		uint8_t ip[20] = { 0x45, 0, (uint8_t)(ipl >> 8), (uint8_t)ipl, 0, 0, 0, 0, 64,
				   i < k ? 47 : 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2 };
		memcpy(b + n, ip, 20);
		n += 20;
		if (i < k) {
			static const uint8_t gre[4] = { 0, 0, 0x08, 0x00 };
			memcpy(b + n, gre, 4);
			n += 4;
		}
	}
	static const uint8_t udp[12] = { 0x30, 0x39, 0x30, 0x3a, 0, 12, 0, 0, 1, 2, 3, 4 };
	memcpy(b + n, udp, 12);
	return n + 12;
}

static void loops(void)
{
	uint8_t b[2048];
	unsigned bad = 0, deep = 0;

	for (unsigned k = 1; k <= 40; k++) {
		size_t n = gre_loop(b, k);
		struct isp_packet p = { .data = b, .caplen = (uint32_t)n, .wirelen = (uint32_t)n };
		struct isp_stats st = { 0 };
		isp_dissect(reg, &p, isp_proto_id(reg, "eth"), &st);
		unsigned layers = 1 + 2 * k + 2;        /* eth, (ip gre) x k, ip, udp */
		bool ok = layers <= ISP_MAX_LAYERS
			  ? p.malformed == 0 && p.nlayers == layers
			  : p.malformed == ISP_ERR_DEPTH && p.nlayers == ISP_MAX_LAYERS &&
			    st.malformed[p.malformed_proto][ISP_ERR_DEPTH] == 1;
		deep += layers > ISP_MAX_LAYERS;
		if (!ok && bad++ < 3)
			printf("  GRE loop of %u: %u layers, counted %s %s\n", k, p.nlayers,
			       pname(p.malformed_proto), isp_verdict_name((enum isp_verdict)p.malformed));
	}
	if (bad) {
		printf("FAIL encapsulation loops: %u of 40 not as expected\n", bad);
		fail++;
	} else {
		printf("ok encapsulation loops: IPv4 in GRE 1 to 40 deep; the %u past %d layers "
		       "count too_deep and keep %d\n", deep, ISP_MAX_LAYERS, ISP_MAX_LAYERS);
		pass++;
	}
}

static void wire_lengths(void)
{
	uint8_t b[256];
	size_t n = gre_loop(b, 1);
	uint32_t lies[] = { (uint32_t)n - 1, 1, ISP_MAX_WIRE_LEN + 1, UINT32_MAX };
	unsigned bad = 0;

	for (size_t i = 0; i < sizeof(lies) / sizeof(lies[0]); i++) {
		struct isp_packet p = { .data = b, .caplen = (uint32_t)n, .wirelen = lies[i] };
		struct isp_stats st = { 0 };
		isp_dissect(reg, &p, isp_proto_id(reg, "eth"), &st);
		if (p.malformed != ISP_ERR_BAD_WIRE_LEN || p.nlayers != 0 ||
		    st.malformed[reg->meta][ISP_ERR_BAD_WIRE_LEN] != 1 || st.items != 0)
			bad++;
	}
	if (bad) {
		printf("FAIL wire lengths that lie: %u of 4 not counted bad_wire_len\n", bad);
		fail++;
	} else {
		printf("ok wire lengths that lie (below the captured length, past any link's): "
		       "bad_wire_len, nothing decoded\n");
		pass++;
	}
}

int main(int argc, char **argv)
{
	char err[256];

	reg = isp_registry_new();
	if (!reg || isp_register_builtins(reg) != 0 ||
	    isp_registry_finalize(reg, err, sizeof(err)) != 0) {
		fprintf(stderr, "malformed: cannot make the registry\n");
		return 99;
	}
	int i = 1;
	for (; i + 1 < argc && strcmp(argv[i], "-o") == 0; i += 2) {   /* plugin options */
		if (strcmp(argv[i + 1], "dta.sequence=no") == 0)
			dta_seq = false;
		if (isp_registry_option(reg, argv[i + 1], err, sizeof(err)) != 0) {
			fprintf(stderr, "malformed: -o %s: %s\n", argv[i + 1], err);
			return 99;
		}
	}
	for (; i < argc; i++) {
		struct stat sb;
		if (stat(argv[i], &sb) == 0 && S_ISDIR(sb.st_mode))
			frames(argv[i]);
		else
			capture(argv[i]);
	}
	loops();
	wire_lengths();
	if (dta_t.packets && !dta_t.bad) {
		printf("ok DTA fields: %lu reports, %lu mutants (every opcode, redundancy, columns) "
		       "as the wire format says, %lu of them counted\n", dta_t.packets, dta_t.cuts,
		       dta_t.counted);
		pass++;
	} else if (dta_t.bad) {
		printf("FAIL DTA fields: %lu of %lu mutants not as the wire format says\n", dta_t.bad,
		       dta_t.cuts);
		fail++;
	}
	int_fields_summary();
	base_fields_summary();
	isp_registry_free(reg);
	printf("malformed: %u passed, %u failed\n", pass, fail);
	return fail ? 1 : 0;
}
