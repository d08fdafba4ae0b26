/*
 * base_fields.c - the length fields of the carriers (IPv4 IHL and Total
 * Length, IPv6 Payload Length, UDP Length, TCP Data Offset, Geneve Opt Len
 * and option lengths) of every well-formed packet set to 0, small values,
 * one less and one more than their own, and their maximum; each mutant
 * against a model written from the RFCs' header layouts (791, 8200, 768,
 * 9293, 8926) and intspect's rules for lengths (src/plugins/README.md):
 *
 *  - a length below its header's fixed size is bad_length;
 *  - a length past the bytes of a region nothing cut (these packets are
 *    whole) is bad_length; 0 in IPv4's Total Length, IPv6's Payload Length
 *    and UDP's Length means "as captured" (segmentation offload, jumbo);
 *  - inside the first fragment of an IP packet (IPv4 MF at offset 0, an
 *    IPv6 Fragment header with M at offset 0; RFC 791, 8200) the region is
 *    cut by the fragmentation: a total length past it is no error, a
 *    header longer than it is truncated;
 *  - otherwise the layer decodes, with the header length the field says.
 *
 * Only layers outside a telemetry report's inner packet are mutated (the
 * reporter may cut that one: its verdicts are the cuts' of malformed.c).
 * Checked for every mutant: the layers before as in the whole packet; a
 * refused header counted once under the model's reason, nothing decoded
 * after it; an accepted one decoded with the model's header length.
 */
#include <stdio.h>
#include <string.h>

#include "malformed.h"

enum carrier { C_IP4, C_IP6, C_UDP, C_TCP, C_GENEVE, C__N };
static const char *const cname[C__N] = { "ip", "ipv6", "udp", "tcp", "geneve" };

static unsigned be16(const uint8_t *p)
{
	return (unsigned)(p[0] << 8 | p[1]);
}

/* Whether a layer before idx is an IP packet's first fragment. */
static bool in_first_fragment(const struct isp_packet *w, unsigned idx, const uint8_t *d)
{
	for (unsigned i = 0; i < idx; i++) {
		const struct isp_layer *l = &w->layer[i];
		const uint8_t *h = d + l->off;
		if (strcmp(pname(l->proto), "ip") == 0 && (be16(h + 6) & 0x3fff) == 0x2000)
			return true;    /* MF, offset 0 */
		if (strcmp(pname(l->proto), "ipv6") != 0)
			continue;
		unsigned nh = h[6], o = 40;
		while (o + 8 <= l->len && (nh == 0 || nh == 43 || nh == 44 || nh == 51 || nh == 60)) {
			const uint8_t *e = h + o;
			if (nh == 44 && (be16(e + 2) & 0xfff9) == 0x0001)
				return true;    /* offset 0, M */
			o += nh == 44 ? 8u : nh == 51 ? (e[1] + 2u) * 4u : (e[1] + 1u) * 8u;
			nh = e[0];
		}
	}
	return false;
}

/* The verdict of the header at h (avail bytes of region, cut or not) and
 * its length. */
static enum isp_verdict model(enum carrier k, const uint8_t *h, unsigned avail, bool cut,
			      unsigned *hlen)
{
	enum isp_verdict past = cut ? ISP_ERR_TRUNCATED : ISP_ERR_BAD_LENGTH;
	unsigned n;

	switch (k) {
	case C_IP4:
		n = (h[0] & 0xf) * 4u;
		if (n < 20)
			return ISP_ERR_BAD_LENGTH;
		if (n > avail)
			return past;
		*hlen = n;
		n = be16(h + 2);
		return n && (n < *hlen || (n > avail && !cut)) ? ISP_ERR_BAD_LENGTH : ISP_OK;
	case C_IP6:
		*hlen = 40;
		n = be16(h + 4);
		return n && 40 + n > avail && !cut ? ISP_ERR_BAD_LENGTH : ISP_OK;
	case C_UDP:
		*hlen = 8;
		n = be16(h + 4);
		return n && (n < 8 || (n > avail && !cut)) ? ISP_ERR_BAD_LENGTH : ISP_OK;
	case C_TCP:
		n = (h[12] >> 4) * 4u;
		*hlen = n;
		return n < 20 ? ISP_ERR_BAD_LENGTH : n > avail ? past : ISP_OK;
	default: {              /* Geneve: Opt Len words of options that tile */
		unsigned opts = (h[0] & 0x3f) * 4u;
		*hlen = 8 + opts;
		if (8 + opts > avail)
			return past;
		for (unsigned o = 8; o + 4 <= 8 + opts; o += 4 + (h[o + 3] & 0x1f) * 4u)
			if (o + 4 + (h[o + 3] & 0x1fu) * 4u > 8 + opts)
				return ISP_ERR_BAD_LENGTH;
		return ISP_OK;
	}
	}
}

struct fmut {
	unsigned at, bytes, v, mask;    /* offset in the header; 1 or 2 bytes */
};

static unsigned long headers, mutants, counted, bad;

static void add(struct fmut *mu, unsigned *k, unsigned at, unsigned bytes, unsigned v,
		unsigned mask)
{
	mu[(*k)++] = (struct fmut){ at, bytes, v & mask, mask };
}

/* The mutants of one carrier header h: its length fields' values. */
static unsigned mutations(enum carrier k, const uint8_t *h, unsigned len, struct fmut *mu)
{
	unsigned n = 0, v;

	switch (k) {
	case C_IP4:
		for (v = 0; v < 16; v++)
			add(mu, &n, 0, 1, v, 0x0f);
		v = be16(h + 2);
		for (unsigned x = 0, xs[] = { 0, 1, 19, 20, (h[0] & 0xfu) * 4 - 1, v - 1, v + 1, 65535 };
		     x < 8; x++)
			add(mu, &n, 2, 2, xs[x], 0xffff);
		break;
	case C_IP6:
		if (len != 40)
			break;  /* extension headers: their own lengths are another walk */
		v = be16(h + 4);
		for (unsigned x = 0, xs[] = { 0, 1, v - 1, v + 1, 65535 }; x < 5; x++)
			add(mu, &n, 4, 2, xs[x], 0xffff);
		break;
	case C_UDP:
		v = be16(h + 4);
		for (unsigned x = 0, xs[] = { 0, 1, 7, 8, v - 1, v + 1, 65535 }; x < 7; x++)
			add(mu, &n, 4, 2, xs[x], 0xffff);
		break;
	case C_TCP:
		for (v = 0; v < 16; v++)
			add(mu, &n, 12, 1, v << 4, 0xf0);
		break;
	default:
		for (v = 0; v < 64; v++)
			add(mu, &n, 0, 1, v, 0x3f);
		for (unsigned o = 8; o + 4 <= len; o += 4 + (h[o + 3] & 0x1fu) * 4) {
			unsigned ol = h[o + 3] & 0x1f;
			for (unsigned x = 0, xs[] = { 0, ol - 1, ol + 1, 31 }; x < 4; x++)
				add(mu, &n, o + 3, 1, xs[x], 0x1f);
		}
	}
	return n;
}

static const char *check(const struct isp_packet *whole, unsigned idx, unsigned avail,
			 enum carrier k, const uint8_t *m, uint32_t n, uint16_t first)
{
	const struct isp_layer *wl = &whole->layer[idx];
	unsigned hlen = 0;
	enum isp_verdict want = model(k, m + wl->off, avail, in_first_fragment(whole, idx, m),
				      &hlen);
	struct isp_packet p = { .data = m, .caplen = n, .wirelen = n };
	struct isp_stats st = { 0 };

	isp_dissect(reg, &p, first, &st);
	mutants++;
	if (p.nlayers < idx)
		return "a layer before the header is lost";
	for (unsigned i = 0; i < idx; i++)
		if (p.layer[i].proto != whole->layer[i].proto || p.layer[i].off != whole->layer[i].off)
			return "a layer before the header decodes differently";
	bool err_here = p.malformed && p.malformed_proto == wl->proto && p.nlayers == idx;
	counted += err_here;
	if (want != ISP_OK) {
		if (!err_here || p.malformed != want)
			return "not counted under the model's reason";
		return counted_malformed(&st) == 1 ? NULL : "counted more than once";
	}
	if (err_here)
		return "counted, although its lengths agree";
	if (p.nlayers <= idx || p.layer[idx].proto != wl->proto)
		return "not decoded where the model reads it";
	return p.layer[idx].len == hlen ? NULL : "not the model's header length";
}

void base_fields(const char *what, const uint8_t *d, uint32_t n, uint16_t first)
{
	struct isp_packet whole = { .data = d, .caplen = n, .wirelen = n };
	struct isp_stats st = { 0 };
	static uint8_t m[65536];
	static struct fmut mu[256];
	uint16_t rep = isp_proto_id(reg, "int_report");

	isp_dissect(reg, &whole, first, &st);
	if (whole.malformed || !whole.nlayers || n > sizeof(m))
		return;
	for (unsigned i = 0; i < whole.nlayers && whole.layer[i].proto != rep; i++) {
		const struct isp_layer *wl = &whole.layer[i];
		enum carrier k = C__N;
		for (unsigned c = 0; c < C__N; c++)
			if (strcmp(pname(wl->proto), cname[c]) == 0)
				k = (enum carrier)c;
		if (k == C__N)
			continue;
		/* the region the header was given: its parent's */
		unsigned avail = (i ? whole.layer[i - 1].end : n) - wl->off;
		if (k == C_GENEVE && i && whole.layer[i - 1].end != wl->end)
			continue;       /* not as its parent left it (never, today) */
		unsigned nm = mutations(k, d + wl->off, wl->len, mu);
		headers += nm > 0;
		for (unsigned j = 0; j < nm; j++) {
			memcpy(m, d, n);
			uint8_t *at = m + wl->off + mu[j].at;
			if (mu[j].bytes == 2) {
				at[0] = (uint8_t)(mu[j].v >> 8);
				at[1] = (uint8_t)mu[j].v;
			} else {
				*at = (uint8_t)((*at & ~mu[j].mask) | mu[j].v);
			}
			const char *why = check(&whole, i, avail, k, m, n, first);
			if (why && bad++ < 5)
				printf("  %s, %s at %u, byte %u set to 0x%x: %s\n", what, cname[k], wl->off,
				       mu[j].at, mu[j].v, why);
		}
	}
}

void base_fields_summary(void)
{
	if (!headers)
		return;
	if (bad) {
		printf("FAIL carrier length fields: %lu of %lu mutants (%lu headers) not as the "
		       "model says\n", bad, mutants, headers);
		fail++;
		return;
	}
	printf("ok carrier length fields (IPv4, IPv6, UDP, TCP, Geneve): %lu headers, %lu mutants as "
	       "the model says, %lu of them counted\n", headers, mutants, counted);
	pass++;
}
