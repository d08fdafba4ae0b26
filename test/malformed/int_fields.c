/*
 * int_fields.c - the INT and telemetry-report fields of every well-formed
 * packet, mutated one field at a time; each mutant is decoded and compared
 * with a model of the header written here from the specifications' tables
 * (INT v0.5, v1.0, v2.1; Telemetry Report v0.5, v1.0, v2.0) and the
 * dialect rules of src/plugins/int/README.md, not from the decoder.
 *
 *  5. INT headers (over UDP/TCP, VXLAN-GPE, GRE; the Geneve option):
 *     - the shim's first byte (Type) set to each of its 256 values;
 *     - the shim's Length set to 0 to 3, one word less and one more, a
 *       hop less and a hop more, 254 and 255;
 *     - the shim's reserved bits set;
 *     - every bit of the instruction header's first word flipped (version,
 *       flags, reserved bits, HopML or InsCnt, the hop counts), HopML or
 *       InsCnt set to 0, 1, one less, one more and 31, the hop count of
 *       v0.5 (TotalHopCnt) to 0, one less, one more, 33 and 255;
 *     - every bit of the instruction bitmap flipped, the bitmap 0 and
 *       0xFFFF.
 *     A v2.x header has one reading: verdict, hop count and
 *     int.hop_ml_mismatch are exact (HopML shorter than the bitmap's
 *     fields is bad_length, as a report's MD Length). A v0.5/v1.0 header also has the
 *     documented dialect readings (GEANT's 8-byte timestamps and low-byte
 *     bitmap, p4-int-l4s's stride from the bitmap): where the spec reading
 *     agrees with the lengths it is exact; otherwise the decoder may take
 *     a dialect reading whose lengths agree (its hop count must be one of
 *     theirs) or count the header, never a reading whose lengths do not.
 *  6. Reports: the first byte (version, and NProto or Length) set to each
 *     of its 256 values; v1.0's second byte likewise; in each coalesced
 *     v2.0 report, the first byte (RepType, InType), Report Length (0, 1,
 *     2, one less, one more, 254, 255), MD Length (0, 1, one less, one
 *     more, 255) and each bit of RepMdBits; the UDP payload one to four
 *     and eight bytes longer than its reports. Every individual report
 *     handed out gets its verdict; after a Report Length that runs past
 *     the payload, nothing more is (nothing there can be found).
 *
 * Checked for every mutant: the layers before the header as in the whole
 * packet; a header the model refuses counted once, under the model's
 * reason, and nothing decoded after it; a header it accepts decoded with
 * the model's length and hop count.
 */
#include <stdio.h>
#include <string.h>

#include "malformed.h"

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* ---- the model: per-hop sizes by the specifications' tables ---- */

enum lay { L_V05, L_V10, L_V2, L_V05_TS64, L_V10_TS64, L_L4S };

/* Bytes of bit b's field (b 0 = the bitmap's MSB); reserved bits 9-14
 * are 4 bytes each when set; p4-int-l4s writes bits 0-7 only. */
static unsigned field_bytes(enum lay k, unsigned b)
{
	switch (k) {
	case L_V05: return 4;
	case L_V10: return b == 6 ? 8 : 4;
	case L_V2: return b >= 4 && b <= 6 ? 8 : 4;
	case L_V05_TS64: return b == 4 || b == 5 ? 8 : 4;
	case L_V10_TS64: return b >= 4 && b <= 6 ? 8 : 4;
	default: return b > 7 ? 0 : b == 4 || b == 5 ? 8 : 4;
	}
}

static unsigned hop_bytes(enum lay k, unsigned bm)
{
	unsigned n = 0;

	for (unsigned b = 0; b < 16; b++)
		if (bm & (0x8000u >> b))
			n += field_bytes(k, b);
	if (k == L_L4S && (bm & 0x00f0))
		n += 4;         /* the mark/drop word */
	return n;
}

#define ERR(v) (1u << (v))

struct expect {
	enum isp_verdict v;     /* exact: the verdict */
	bool exact;
	unsigned len;           /* exact OK: bytes of the layer */
	unsigned hops;          /* exact OK */
	int mismatch;           /* exact OK: int.hop_ml_mismatch, -1 unchecked */
	/* not exact: acceptable readings and errors */
	unsigned nalt, alt[24];
	uint32_t errors;
};

static struct expect exact(enum isp_verdict v)
{
	return (struct expect){ .v = v, .exact = true, .mismatch = -1 };
}

static void alt_add(struct expect *e, unsigned hops)
{
	if (hops > ISP_MAX_HOPS)
		e->errors |= ERR(ISP_ERR_HOP_OVERFLOW);
	else if (e->nalt < sizeof(e->alt) / sizeof(e->alt[0]))
		e->alt[e->nalt++] = hops;
}

/* v2.x instruction header (12 bytes) and `stack` bytes after it. */
static struct expect md_v2(const uint8_t *md, unsigned stack, bool mx)
{
	uint32_t w0 = be32(md);
	unsigned bm = be16(md + 4);

	if (w0 >> 28 != 2)
		return exact(ISP_ERR_BAD_VERSION);
	if (mx) {
		struct expect e = exact(stack ? ISP_ERR_BAD_LENGTH : ISP_OK);
		e.mismatch = 0;
		return e;
	}
	unsigned stride = 4 * (w0 >> 8 & 0x1f);
	/* a hop shorter than the bitmap's fields; a stack that is not a
	 * whole number of hops */
	if (stride < hop_bytes(L_V2, bm) || (stack && (!stride || stack % stride)))
		return exact(ISP_ERR_BAD_LENGTH);
	unsigned hops = stack ? stack / stride : 0;
	if (hops > ISP_MAX_HOPS)
		return exact(ISP_ERR_HOP_OVERFLOW);
	struct expect e = exact(ISP_OK);
	e.hops = hops;
	e.mismatch = hop_bytes(L_V2, bm) != stride;
	return e;
}

/* v0.5 / v1.0 instruction header (8 bytes), `stack` bytes after it (the
 * v0.5 tail, over TCP/UDP, included). */
static struct expect md_legacy(const uint8_t *md, unsigned stack, unsigned tail)
{
	uint32_t w0 = be32(md);
	unsigned ver = w0 >> 28, bm = be16(md + 4), hopml = w0 >> 8 & 0x1f;
	unsigned ins = w0 >> 16 & 0x1f, total = w0 & 0xff;

	/* the spec reading, where the lengths agree with it */
	if (ver == 1 && hopml && 4 * hopml == hop_bytes(L_V10, bm) && stack % (4 * hopml) == 0 &&
	    stack / (4 * hopml) <= ISP_MAX_HOPS) {
		struct expect e = exact(ISP_OK);
		e.hops = stack / (4 * hopml);
		e.mismatch = 0;
		return e;
	}
	if (ver == 0 && stack < tail)
		return exact(ISP_ERR_BAD_LENGTH);       /* no room for the tail */
	if (ver == 0 && total > ISP_MAX_HOPS)
		return exact(ISP_ERR_HOP_OVERFLOW);
	if (ver == 0 && ins && 4 * ins == hop_bytes(L_V05, bm) && stack >= tail &&
	    stack - tail == total * 4 * ins) {
		struct expect e = exact(ISP_OK);
		e.hops = total;
		return e;
	}
	/* otherwise: any documented reading whose lengths agree */
	struct expect e = { .exact = false, .mismatch = -1, .errors = ERR(ISP_ERR_BAD_LENGTH) };
	if (ver != 0 && ver != 1 && ver != 3)
		e.errors |= ERR(ISP_ERR_BAD_VERSION);
	unsigned bms[2] = { bm, (bm & 0xff) << 8 }, nbm = !(bm & 0xff00) && (bm & 0xff) ? 2 : 1;
	unsigned strides[8], ns = 0;
	strides[ns++] = 4 * hopml;
	unsigned l4s = hop_bytes(L_L4S, bm);
	strides[ns++] = (bm & 0x0040) && 4 * hopml == l4s + 28 ? l4s + 28 : l4s;
	for (unsigned i = 0; i < nbm; i++) {
		strides[ns++] = hop_bytes(L_V10, bms[i]);
		strides[ns++] = hop_bytes(L_V10_TS64, bms[i]);
	}
	for (unsigned i = 0; i < ns; i++)
		if (!stack || (strides[i] && stack % strides[i] == 0))
			alt_add(&e, strides[i] ? stack / strides[i] : 0);
	if (stack >= tail) {
		unsigned s = stack - tail;
		if (total > ISP_MAX_HOPS)
			e.errors |= ERR(ISP_ERR_HOP_OVERFLOW);
		else if (!total && !s)
			alt_add(&e, 0);
		else if (total && s % total == 0)
			for (unsigned i = 0; i < nbm; i++)
				if (s / total == 4 * ins || s / total == hop_bytes(L_V05, bms[i]) ||
				    s / total == hop_bytes(L_V05_TS64, bms[i]))
					alt_add(&e, total);
	}
	return e;
}

/* An INT header at r with avail bytes to the end of what carries it. */
static struct expect int_model(const uint8_t *r, unsigned avail, bool l4, bool geneve,
			       bool structural)
{
	if (geneve) {           /* the option body: instruction header, stack */
		if (avail < 12)
			return exact(ISP_ERR_BAD_LENGTH);
		struct expect e = md_v2(r, avail - 12, false);
		e.len = avail;
		return e;
	}
	/* inside a report, without INT's DSCP, INT is known by its shim:
	 * MD v0.5/v1.0, MD v2.x with NPT 0, 1 or 2, MX v2.x (README) */
	if (structural && r[0] != 1 && r[0] != 0x10 && r[0] != 0x14 && r[0] != 0x18 && r[0] != 0x30)
		return exact(ISP_NOT_MINE);
	bool legacy = r[0] == 1 || r[0] == 2;
	unsigned type = legacy ? r[0] : r[0] >> 4u;
	if (!legacy && (type < 1 || type > 3))
		return exact(l4 ? ISP_NOT_MINE : ISP_ERR_BAD_VERSION);
	/* Length: v0.5/v1.0 count the shim, v2.x do not */
	unsigned region = legacy ? 4u * r[2] : 4 + 4u * r[1], mdlen = legacy ? 8 : 12;
	if (region < 4 + mdlen || region > avail)
		return exact(ISP_ERR_BAD_LENGTH);
	if (type == 2)
		return exact(ISP_ERR_UNSUPPORTED);      /* destination header */
	unsigned stack = region - 4 - mdlen;
	struct expect e = legacy ? md_legacy(r + 4, stack, l4 ? 4 : 0) : md_v2(r + 4, stack, type == 3);
	e.len = region;
	return e;
}

/* ---- the model: telemetry reports ---- */

/* One v2.0 individual report of `size` bytes. */
static enum isp_verdict ir_model(const uint8_t *ir, unsigned size)
{
	unsigned rt = ir[0] >> 4, it = ir[0] & 0xf, hdr = 4;

	if (rt == 1) {
		if (size < 12)
			return ISP_ERR_BAD_LENGTH;
		/* bit 0 (node ID) is reserved: the group header has it */
		if (hop_bytes(L_V2, be16(ir + 4) & 0x7fff) > 4u * ir[2])
			return ISP_ERR_BAD_LENGTH;
		hdr = 12 + 4u * ir[2];
	} else if (rt != 0) {
		return ISP_ERR_UNSUPPORTED;
	}
	if (hdr > size)
		return ISP_ERR_BAD_LENGTH;
	if (it == 1) {          /* TLVs tile the rest */
		unsigned o = hdr;
		while (o < size) {
			if (size - o < 4)
				return ISP_ERR_BAD_LENGTH;
			o += 4 + 4u * ir[o + 1];
		}
		if (o != size)
			return ISP_ERR_BAD_LENGTH;
	}
	return ISP_OK;
}

/* The verdict of each item a report payload holds (avail bytes). */
static unsigned report_model(const uint8_t *r, unsigned avail, enum isp_verdict *item)
{
	unsigned ver = r[0] >> 4;

	if (ver > 2) {
		item[0] = ISP_NOT_MINE;
		return 1;
	}
	if (avail < 12) {
		item[0] = ISP_ERR_BAD_LENGTH;
		return 1;
	}
	if (ver == 0) {         /* NProto: 0 Ethernet, 1 drop, 2 local, 4 IPv4 */
		static const int hdr[16] = { 12, 24, 28, -1, 12, -1, -1, -1,
					     -1, -1, -1, -1, -1, -1, -1, -1 };
		int h = hdr[r[0] & 0xf];
		item[0] = h < 0 ? ISP_ERR_UNSUPPORTED : (unsigned)h > avail ? ISP_ERR_BAD_LENGTH : ISP_OK;
		return 1;
	}
	if (ver == 1) {         /* Ver 4 · Length 4 · NProt 3 · RepMdBits 6 */
		uint32_t w0 = be32(r);
		unsigned len = 4 * (w0 >> 24 & 0xf), bits = w0 >> 15 & 0x3f;
		unsigned need = 16 + 4 * (unsigned)__builtin_popcount(bits);
		item[0] = len < need || len > avail ? ISP_ERR_BAD_LENGTH
			  : (w0 >> 21 & 7) > 2 ? ISP_ERR_UNSUPPORTED : ISP_OK;
		return 1;
	}
	unsigned o = 8, n = 0;
	while (o < avail && n < 255) {
		if (avail - o < 4) {
			item[n++] = ISP_ERR_BAD_LENGTH;
			break;
		}
		unsigned size = r[o + 1] == 0xff ? avail - o : 4 + 4u * r[o + 1];
		if (size > avail - o) {
			item[n++] = ISP_ERR_BAD_LENGTH;
			break;
		}
		item[n++] = ir_model(r + o, size);
		o += size;
	}
	return n;
}

/* ---- the checks ---- */

struct tally5 {
	unsigned long headers, mutants, exact, counted, bad;
};

static struct tally5 int_t, rep_t;
static uint16_t int_id, rep_id;
static struct isp_attr_ref num_hop, mismatch;
static char detail[256];

static bool before_same(const struct isp_packet *p, const struct isp_packet *whole, unsigned idx)
{
	if (p->nlayers < idx)
		return false;
	for (unsigned i = 0; i < idx; i++)
		if (p->layer[i].proto != whole->layer[i].proto || p->layer[i].off != whole->layer[i].off)
			return false;
	return true;
}

static uint64_t attr_u64(const struct isp_packet *p, const struct isp_attr_ref *r, bool *has)
{
	struct isp_value v;

	*has = isp_attr_get(reg, p, r, &v);
	return *has ? v.v.u : 0;
}

/* One INT mutant: the header at layer idx of whole, its bytes now m. */
static const char *int_check(const struct isp_packet *whole, unsigned idx, const uint8_t *m,
			     uint32_t n, uint16_t first, bool l4, bool geneve, bool structural)
{
	const struct isp_layer *wl = &whole->layer[idx];
	struct expect e = int_model(m + wl->off, wl->end - wl->off, l4, geneve, structural);
	struct isp_packet p = { .data = m, .caplen = n, .wirelen = n };
	struct isp_stats st = { 0 };

	isp_dissect(reg, &p, first, &st);
	int_t.mutants++;
	int_t.exact += e.exact;
	{
		bool h;
		snprintf(detail, sizeof(detail), "model %s%s len %u hops %u mismatch %d (%u readings); "
			 "decoded %s %s, %u layers, %u hops", e.exact ? "" : "any of ",
			 e.exact ? isp_verdict_name(e.v) : "", e.len, e.hops, e.mismatch, e.nalt,
			 p.malformed ? pname(p.malformed_proto) : "-",
			 isp_verdict_name((enum isp_verdict)p.malformed), p.nlayers,
			 (unsigned)attr_u64(&p, &num_hop, &h));
	}
	if (!before_same(&p, whole, idx))
		return "a layer before the header decodes differently";
	bool here = p.nlayers > idx && p.layer[idx].proto == int_id;
	bool err_here = p.malformed && p.malformed_proto == int_id && p.nlayers == idx;
	int_t.counted += err_here;
	if (err_here && (counted_malformed(&st) != 1 || st.malformed[int_id][p.malformed] != 1))
		return "counted more than once";
	if (e.exact && e.v == ISP_NOT_MINE)
		return here || err_here ? "taken for INT although its first byte is no shim" : NULL;
	if (e.exact && e.v != ISP_OK)
		return err_here && p.malformed == e.v ? NULL : "not counted under the model's reason";
	if (err_here) {
		if (e.exact)
			return "counted, although the lengths agree with the specification";
		return e.errors & ERR(p.malformed) ? NULL : "counted under a reason no reading gives";
	}
	if (!here)
		return "no INT layer where the model reads one";
	bool has;
	unsigned hops = (unsigned)attr_u64(&p, &num_hop, &has);
	if (!e.exact) {
		for (unsigned i = 0; i < e.nalt; i++)
			if (e.alt[i] == hops)
				return NULL;
		return "decoded by a reading whose lengths do not agree";
	}
	if (p.layer[idx].len != e.len)
		return "the header's length is not the model's";
	if (hops != e.hops)
		return "not the model's hop count";
	if (e.mismatch >= 0 && attr_u64(&p, &mismatch, &has) != (uint64_t)e.mismatch)
		return "int.hop_ml_mismatch is not the model's";
	return NULL;
}

struct mut {
	uint32_t at;            /* offset in the header */
	uint8_t v;
	uint8_t mask;           /* bits of the byte replaced by v */
	uint8_t next_too;       /* the next byte set alike (a 16-bit field) */
};

static void int_header(const char *what, const struct isp_packet *whole, unsigned idx,
		       const uint8_t *d, uint32_t n, uint16_t first)
{
	static uint8_t m[65536];
	struct isp_value cv;
	struct isp_attr_ref carrier;
	char err[128];
	const struct isp_layer *wl = &whole->layer[idx];
	const uint8_t *r = d + wl->off;

	if (isp_attr_lookup(reg, "int.carrier", &carrier, err, sizeof(err)) != 0 ||
	    !isp_attr_get(reg, whole, &carrier, &cv))
		return;
	bool geneve = strcmp(cv.v.str, "geneve") == 0, l4 = strcmp(cv.v.str, "l4") == 0;
	if (l4 && (r[0] != 1 && r[0] != 2 && (r[0] >> 4 < 1 || r[0] >> 4 > 3)))
		return;         /* a probe marker first: not this test's */
	/* INT's DSCP (0x20, the default) on the IP header that carries it,
	 * or structural detection inside a report */
	bool in_report = false;
	unsigned dscp = 0;
	for (unsigned i = 0; i < idx; i++) {
		const struct isp_layer *x = &whole->layer[i];
		in_report |= x->proto == rep_id;
		if (strcmp(pname(x->proto), "ip") == 0)
			dscp = d[x->off + 1] >> 2;
		else if (strcmp(pname(x->proto), "ipv6") == 0)
			dscp = (be16(d + x->off) >> 4 & 0xff) >> 2;
	}
	bool structural = l4 && in_report && dscp != 0x20;
	static struct mut mu[1024];
	unsigned k = 0, md = geneve ? 0 : 4;
	bool legacy = !geneve && r[0] < 0x10;
	if (!geneve) {
		for (unsigned v = 0; v < 256; v++)
			mu[k++] = (struct mut){ 0, (uint8_t)v, 0xff, 0 };
		unsigned lb = legacy ? 2 : 1, len = r[lb];
		unsigned hop = legacy || (be32(r + 4) >> 8 & 0x1f) == 0 ? 1 : be32(r + 4) >> 8 & 0x1f;
		unsigned lens[] = { 0, 1, 2, 3, len - 1, len + 1, len - hop, len + hop, 254, 255 };
		for (unsigned i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
			mu[k++] = (struct mut){ lb, (uint8_t)lens[i], 0xff, 0 };
		if (legacy) {   /* reserved: byte 1, the low 2 bits of byte 3 */
			mu[k++] = (struct mut){ 1, 0xff, 0xff, 0 };
			mu[k++] = (struct mut){ 3, 0x03, 0x03, 0 };
		} else {        /* reserved: the low 2 bits of byte 0 */
			mu[k++] = (struct mut){ 0, 0x03, 0x03, 0 };
		}
	}
	for (unsigned bit = 0; bit < 32; bit++)
		mu[k++] = (struct mut){ md + bit / 8, 0x80u >> (bit % 8) ^ r[md + bit / 8],
					(uint8_t)(0x80u >> (bit % 8)), 0 };
	uint32_t w0 = be32(r + md);
	bool v05 = legacy && w0 >> 28 == 0;
	/* HopML (v1.0, v2.x: bits 19-23) or InsCnt (v0.5: bits 11-15) */
	unsigned ml = v05 ? w0 >> 16 & 0x1f : w0 >> 8 & 0x1f, mlb = v05 ? 1 : 2;
	unsigned mls[] = { 0, 1, ml - 1, ml + 1, 31 };
	for (unsigned i = 0; i < 5; i++)
		mu[k++] = (struct mut){ md + mlb, (uint8_t)(mls[i] & 0x1f), 0x1f, 0 };
	if (v05) {
		unsigned t = w0 & 0xff, ts[] = { 0, t - 1, t + 1, 33, 255 };
		for (unsigned i = 0; i < 5; i++)
			mu[k++] = (struct mut){ md + 3, (uint8_t)ts[i], 0xff, 0 };
	}
	for (unsigned bit = 0; bit < 16; bit++)
		mu[k++] = (struct mut){ md + 4 + bit / 8, 0x80u >> (bit % 8) ^ r[md + 4 + bit / 8],
					(uint8_t)(0x80u >> (bit % 8)), 0 };
	mu[k++] = (struct mut){ md + 4, 0, 0xff, 1 };      /* bitmap 0 */
	mu[k++] = (struct mut){ md + 4, 0xff, 0xff, 1 };   /* and 0xFFFF */

	int_t.headers++;
	for (unsigned i = 0; i < k; i++) {
		memcpy(m, d, n);
		uint32_t at = wl->off + mu[i].at;
		m[at] = (uint8_t)((m[at] & ~mu[i].mask) | (mu[i].v & mu[i].mask));
		if (mu[i].next_too)
			m[at + 1] = m[at];
		const char *why = int_check(whole, idx, m, n, first, l4, geneve, structural);
		if (why && int_t.bad++ < 5)
			printf("  %s, INT at %u, byte %u set to 0x%02x: %s\n    %s\n", what, wl->off,
			       mu[i].at, m[at], why, detail);
	}
}

/* ---- reports ---- */

/* Every item of a report mutant against the model; payload avail bytes. */
static const char *rep_check(const struct isp_packet *whole, unsigned idx, const uint8_t *m,
			     uint32_t n, unsigned avail, uint16_t first)
{
	enum isp_verdict item[256];
	unsigned nitems = report_model(m + whole->layer[idx].off, avail, item), got = 0;
	struct isp_packet p = { .data = m, .caplen = n, .wirelen = n };
	struct isp_stats st = { 0 };
	const char *why = NULL;

	unsigned long prev = 0;

	rep_t.mutants++;
	isp_dissect(reg, &p, first, &st);
	do {
		unsigned long now = counted_malformed(&st), delta = now - prev;
		prev = now;
		if (got >= nitems) {
			why = "more reports handed out than the payload holds";
			break;
		}
		enum isp_verdict v = item[got++];
		bool here = p.nlayers > idx && p.layer[idx].proto == rep_id;
		bool err_here = p.malformed && p.malformed_proto == rep_id && p.nlayers == idx;
		if (!before_same(&p, whole, idx))
			why = "a layer before the report decodes differently";
		else if (v == ISP_NOT_MINE && (here || err_here))
			why = "taken for a report although its version is none";
		else if (v == ISP_OK && !here)
			why = "a report the model reads is not decoded";
		else if (v != ISP_OK && v != ISP_NOT_MINE && !(err_here && p.malformed == v))
			why = "a report not counted under the model's reason";
		else if (err_here && delta != 1)
			why = "a refused report counted more than once";
		rep_t.counted += err_here;
	} while (!why && isp_dissect_next_report(reg, &p, &st));
	if (!why && got != nitems)
		why = "fewer reports handed out than the payload holds";
	return why;
}

/* Append k bytes to the UDP payload (the IPv4 or IPv6 and UDP lengths
 * made to agree): a payload longer than the reports in it. False when
 * the report is not the payload of UDP over IP, ending the frame. */
static bool lengthen(const struct isp_packet *whole, unsigned idx, uint8_t *m, uint32_t *n,
		     unsigned k)
{
	if (idx < 2 || strcmp(pname(whole->layer[idx - 1].proto), "udp") != 0)
		return false;
	const struct isp_layer *u = &whole->layer[idx - 1], *ip = &whole->layer[idx - 2];
	bool v6 = strcmp(pname(ip->proto), "ipv6") == 0;
	if ((!v6 && strcmp(pname(ip->proto), "ip") != 0) || u->end != *n || ip->end != *n)
		return false;
	unsigned lo = v6 ? 4 : 2;
	unsigned il = be16(m + ip->off + lo) + k, ul = be16(m + u->off + 4) + k;
	m[ip->off + lo] = (uint8_t)(il >> 8);
	m[ip->off + lo + 1] = (uint8_t)il;
	m[u->off + 4] = (uint8_t)(ul >> 8);
	m[u->off + 5] = (uint8_t)ul;
	memset(m + *n, 0, k);
	*n += k;
	return true;
}

static void report_header(const char *what, const struct isp_packet *whole, unsigned idx,
			  const uint8_t *d, uint32_t n, uint16_t first)
{
	static uint8_t m[65536 + 16];
	const struct isp_layer *wl = &whole->layer[idx];
	const uint8_t *r = d + wl->off;
	unsigned avail = wl->end - wl->off, ver = r[0] >> 4;
	static struct mut mu[8192];
	unsigned k = 0;

	for (unsigned v = 0; v < 256; v++)
		mu[k++] = (struct mut){ 0, (uint8_t)v, 0xff, 0 };
	if (ver == 1)
		for (unsigned v = 0; v < 256; v++)
			mu[k++] = (struct mut){ 1, (uint8_t)v, 0xff, 0 };
	for (unsigned o = 8; ver == 2 && o + 4 <= avail && k + 300 < 8192;) {
		unsigned len = r[o + 1], md = r[o + 2];
		for (unsigned v = 0; v < 256; v++)
			mu[k++] = (struct mut){ o, (uint8_t)v, 0xff, 0 };
		unsigned lens[] = { 0, 1, 2, len - 1, len + 1, 254, 255 };
		for (unsigned i = 0; i < 7; i++)
			mu[k++] = (struct mut){ o + 1, (uint8_t)lens[i], 0xff, 0 };
		if (r[o] >> 4 == 1 && o + 12 <= avail) {
			unsigned mds[] = { 0, 1, md - 1, md + 1, 255 };
			for (unsigned i = 0; i < 5; i++)
				mu[k++] = (struct mut){ o + 2, (uint8_t)mds[i], 0xff, 0 };
			for (unsigned bit = 0; bit < 16; bit++)
				mu[k++] = (struct mut){ o + 4 + bit / 8, 0x80u >> (bit % 8) ^ r[o + 4 + bit / 8],
							(uint8_t)(0x80u >> (bit % 8)), 0 };
		}
		if (len == 0xff)
			break;
		o += 4 + 4 * len;
	}

	rep_t.headers++;
	for (unsigned i = 0; i < k; i++) {
		memcpy(m, d, n);
		uint32_t at = wl->off + mu[i].at;
		m[at] = (uint8_t)((m[at] & ~mu[i].mask) | (mu[i].v & mu[i].mask));
		const char *why = rep_check(whole, idx, m, n, avail, first);
		if (why && rep_t.bad++ < 5)
			printf("  %s, report at %u, byte %u set to 0x%02x: %s\n", what, wl->off,
			       mu[i].at, m[at], why);
	}
	static const unsigned longer[] = { 1, 2, 3, 4, 8 };
	for (unsigned i = 0; ver == 2 && i < 5; i++) {
		uint32_t mn = n;
		memcpy(m, d, n);
		if (!lengthen(whole, idx, m, &mn, longer[i]))
			break;
		const char *why = rep_check(whole, idx, m, mn, avail + longer[i], first);
		if (why && rep_t.bad++ < 5)
			printf("  %s, report at %u, payload %u bytes longer: %s\n", what, wl->off,
			       longer[i], why);
	}
}

void int_fields(const char *what, const uint8_t *d, uint32_t n, uint16_t first)
{
	struct isp_packet whole = { .data = d, .caplen = n, .wirelen = n };
	struct isp_stats st = { 0 };
	char err[128];

	if (!int_id) {
		int_id = isp_proto_id(reg, "int");
		rep_id = isp_proto_id(reg, "int_report");
		if (isp_attr_lookup(reg, "int.num_hop", &num_hop, err, sizeof(err)) != 0 ||
		    isp_attr_lookup(reg, "int.hop_ml_mismatch", &mismatch, err, sizeof(err)) != 0)
			return;
	}
	isp_dissect(reg, &whole, first, &st);
	if (whole.malformed || !whole.nlayers)
		return;
	/* the first report (the one that hands out its coalesced reports)
	 * and the first INT header, each in a packet of its own */
	for (unsigned i = 0; i < whole.nlayers; i++) {
		if (whole.layer[i].proto == rep_id) {
			report_header(what, &whole, i, d, n, first);
			break;
		}
	}
	for (unsigned i = 0; i < whole.nlayers; i++) {
		if (whole.layer[i].proto == int_id) {
			int_header(what, &whole, i, d, n, first);
			break;
		}
	}
}

static void summary(const char *name, const struct tally5 *t, bool with_exact)
{
	if (!t->headers)
		return;         /* none in these captures (a run of its own, -o) */
	if (t->bad) {
		printf("FAIL %s fields: %lu of %lu mutants (%lu headers) not as the model says\n",
		       name, t->bad, t->mutants, t->headers);
		fail++;
		return;
	}
	printf("ok %s fields: %lu headers, %lu mutants as the model says", name, t->headers,
	       t->mutants);
	if (with_exact)
		printf(" (%lu with one reading, the others by the dialect rules)", t->exact);
	printf(", %lu %s counted\n", t->counted, with_exact ? "of them" : "reports");
	pass++;
}

void int_fields_summary(void)
{
	summary("INT header", &int_t, true);
	summary("telemetry report", &rep_t, false);
}
