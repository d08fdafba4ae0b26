/*
 * pktbuild.c - byte-by-byte packet builders for the unit tests.
 */
#include "pktbuild.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A builder that overruns is a broken test, not a decoder bug: stop loudly. */
static uint8_t *room(struct pkt *b, size_t n)
{
	if (b->len + n > PKT_MAX) {
		fprintf(stderr, "pktbuild: packet larger than %d bytes\n", PKT_MAX);
		abort();
	}
	uint8_t *p = b->buf + b->len;
	b->len += n;
	return p;
}

static void add_fixup(struct pkt *b, enum pkt_fixup_kind kind, size_t off)
{
	if (b->nfix >= PKT_MAX_FIXUPS) {
		fprintf(stderr, "pktbuild: too many length fields\n");
		abort();
	}
	b->fix[b->nfix].kind = (uint8_t)kind;
	b->fix[b->nfix].off = off;
	b->nfix++;
}

void pkt_init(struct pkt *b)
{
	memset(b, 0, sizeof(*b));
}

size_t pkt_bytes(struct pkt *b, const void *data, size_t n)
{
	size_t off = b->len;

	if (n)
		memcpy(room(b, n), data, n);
	return off;
}

size_t pkt_fill(struct pkt *b, uint8_t byte, size_t n)
{
	size_t off = b->len;

	memset(room(b, n), byte, n);
	return off;
}

size_t pkt_u8(struct pkt *b, uint8_t v)
{
	size_t off = b->len;

	*room(b, 1) = v;
	return off;
}

size_t pkt_u16(struct pkt *b, uint16_t v)
{
	size_t off = b->len;
	uint8_t *p = room(b, 2);

	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return off;
}

size_t pkt_u32(struct pkt *b, uint32_t v)
{
	size_t off = b->len;
	uint8_t *p = room(b, 4);

	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return off;
}

void pkt_put16(struct pkt *b, size_t off, uint16_t v)
{
	b->buf[off] = (uint8_t)(v >> 8);
	b->buf[off + 1] = (uint8_t)v;
}

size_t pkt_eth(struct pkt *b, const uint8_t dst[6], const uint8_t src[6],
	       uint16_t ethertype)
{
	size_t off = pkt_bytes(b, dst, 6);

	pkt_bytes(b, src, 6);
	pkt_u16(b, ethertype);
	return off;
}

size_t pkt_vlan(struct pkt *b, unsigned pcp, unsigned dei, unsigned vid,
		uint16_t ethertype)
{
	size_t off = pkt_u16(b, (uint16_t)((pcp & 7) << 13 | (dei & 1) << 12 | (vid & 0xfff)));

	pkt_u16(b, ethertype);
	return off;
}

size_t pkt_ipv4(struct pkt *b, const struct pkt_ipv4 *ip)
{
	size_t optpad = (ip->optlen + 3) & ~(size_t)3;
	size_t hlen = 20 + optpad;
	size_t off = pkt_u8(b, (uint8_t)(0x40 | hlen / 4));

	pkt_u8(b, ip->tos);
	pkt_u16(b, 0);                          /* total length: pkt_finish */
	pkt_u16(b, ip->id);
	pkt_u16(b, (uint16_t)((ip->flags & 7) << 13 | (ip->frag_off & 0x1fff)));
	pkt_u8(b, ip->ttl);
	pkt_u8(b, ip->proto);
	pkt_u16(b, 0);                          /* checksum: pkt_finish */
	pkt_u32(b, ip->src);
	pkt_u32(b, ip->dst);
	pkt_bytes(b, ip->opts, ip->optlen);
	pkt_fill(b, 0, optpad - ip->optlen);    /* End of Option List */
	add_fixup(b, PKT_FIX_IPV4, off);
	return off;
}

size_t pkt_ipv6(struct pkt *b, const struct pkt_ipv6 *ip)
{
	size_t off = pkt_u32(b, 6u << 28 | (uint32_t)ip->tclass << 20 | (ip->flow & 0xfffff));

	pkt_u16(b, 0);                          /* payload length: pkt_finish */
	pkt_u8(b, ip->next);
	pkt_u8(b, ip->hop_limit);
	pkt_bytes(b, ip->src, 16);
	pkt_bytes(b, ip->dst, 16);
	add_fixup(b, PKT_FIX_IPV6, off);
	return off;
}

size_t pkt_ipv6_opts(struct pkt *b, uint8_t next, const uint8_t *opts, size_t optlen)
{
	size_t total = (2 + optlen + 7) & ~(size_t)7;
	size_t pad = total - 2 - optlen;
	size_t off = pkt_u8(b, next);

	pkt_u8(b, (uint8_t)(total / 8 - 1));
	pkt_bytes(b, opts, optlen);
	if (pad == 1) {
		pkt_u8(b, 0);                   /* Pad1 */
	} else if (pad > 1) {
		pkt_u8(b, 1);                   /* PadN */
		pkt_u8(b, (uint8_t)(pad - 2));
		pkt_fill(b, 0, pad - 2);
	}
	return off;
}

size_t pkt_ipv6_frag(struct pkt *b, uint8_t next, uint16_t frag_off, bool more,
		     uint32_t ident)
{
	size_t off = pkt_u8(b, next);

	pkt_u8(b, 0);
	pkt_u16(b, (uint16_t)((frag_off & 0x1fff) << 3 | (more ? 1 : 0)));
	pkt_u32(b, ident);
	return off;
}

size_t pkt_udp(struct pkt *b, uint16_t sport, uint16_t dport, uint16_t csum)
{
	size_t off = pkt_u16(b, sport);

	pkt_u16(b, dport);
	pkt_u16(b, 0);                          /* length: pkt_finish */
	pkt_u16(b, csum);
	add_fixup(b, PKT_FIX_UDP, off);
	return off;
}

size_t pkt_tcp(struct pkt *b, const struct pkt_tcp *t)
{
	uint8_t opt[40];
	size_t n = 0;

	/* the option order of a Linux SYN: MSS, SACK-permitted, TS, NOP, WS */
	if (t->mss) {
		opt[n++] = 2; opt[n++] = 4;
		opt[n++] = (uint8_t)(t->mss >> 8); opt[n++] = (uint8_t)t->mss;
	}
	if (t->sack_ok) {
		opt[n++] = 4; opt[n++] = 2;
	}
	if (t->ts) {
		opt[n++] = 8; opt[n++] = 10;
		for (int i = 3; i >= 0; i--)
			opt[n++] = (uint8_t)(t->tsval >> (8 * i));
		for (int i = 3; i >= 0; i--)
			opt[n++] = (uint8_t)(t->tsecr >> (8 * i));
	}
	if (t->wscale >= 0) {
		opt[n++] = 1;                   /* NOP aligns what follows */
		opt[n++] = 3; opt[n++] = 3; opt[n++] = (uint8_t)t->wscale;
	}
	while (n % 4)
		opt[n++] = 0;                   /* End of Option List */

	size_t off = pkt_u16(b, t->sport);
	pkt_u16(b, t->dport);
	pkt_u32(b, t->seq);
	pkt_u32(b, t->ack);
	pkt_u16(b, (uint16_t)(((20 + n) / 4) << 12 | (t->flags & 0x1ff)));
	pkt_u16(b, t->window);
	pkt_u16(b, t->csum);
	pkt_u16(b, t->urgent);
	pkt_bytes(b, opt, n);
	return off;
}

size_t pkt_vxlan(struct pkt *b, uint8_t flags, uint32_t vni)
{
	size_t off = pkt_u8(b, flags);

	pkt_fill(b, 0, 3);
	pkt_u32(b, (vni & 0xffffff) << 8);
	return off;
}

size_t pkt_vxlan_gpe(struct pkt *b, uint8_t flags, uint8_t next, uint32_t vni)
{
	size_t off = pkt_u8(b, flags);

	pkt_fill(b, 0, 2);
	pkt_u8(b, next);
	pkt_u32(b, (vni & 0xffffff) << 8);
	return off;
}

size_t pkt_geneve(struct pkt *b, bool oam, bool critical, uint16_t proto,
		  uint32_t vni)
{
	size_t off = pkt_u8(b, 0);              /* Ver 0, Opt Len 0 for now */

	pkt_u8(b, (uint8_t)((oam ? 0x80 : 0) | (critical ? 0x40 : 0)));
	pkt_u16(b, proto);
	pkt_u32(b, (vni & 0xffffff) << 8);
	return off;
}

size_t pkt_geneve_opt(struct pkt *b, size_t geneve_off, uint16_t cls,
		      uint8_t type, const uint8_t *data, size_t len)
{
	size_t words = (len + 3) / 4;
	size_t off = pkt_u16(b, cls);

	pkt_u8(b, type);
	pkt_u8(b, (uint8_t)(words & 0x1f));
	pkt_bytes(b, data, len);
	pkt_fill(b, 0, words * 4 - len);
	unsigned optlen = (b->buf[geneve_off] & 0x3fu) + 1u + (unsigned)words;
	b->buf[geneve_off] = (uint8_t)((b->buf[geneve_off] & 0xc0) | (optlen & 0x3f));
	return off;
}

size_t pkt_gre(struct pkt *b, const struct pkt_gre *g)
{
	uint16_t flags = (uint16_t)((g->csum ? 0x8000 : 0) | (g->key ? 0x2000 : 0) |
				    (g->seq ? 0x1000 : 0));
	size_t off = pkt_u16(b, flags);

	pkt_u16(b, g->proto);
	if (g->csum) {
		pkt_u16(b, g->csum_val);
		pkt_u16(b, 0);                  /* Reserved1 */
	}
	if (g->key)
		pkt_u32(b, g->key_val);
	if (g->seq)
		pkt_u32(b, g->seq_val);
	return off;
}

uint16_t pkt_csum_fold(const uint8_t *p, size_t n)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

void pkt_finish(struct pkt *b)
{
	/* innermost first, so an outer IPv4 checksum covers final inner bytes
	 * (it only covers its own header, but keep the order obvious) */
	for (unsigned i = b->nfix; i-- > 0;) {
		size_t off = b->fix[i].off;
		size_t len = b->len - off;

		switch (b->fix[i].kind) {
		case PKT_FIX_IPV4: {
			size_t hlen = (b->buf[off] & 0x0f) * 4u;
			pkt_put16(b, off + 2, (uint16_t)len);
			pkt_put16(b, off + 10, 0);
			pkt_put16(b, off + 10, (uint16_t)~pkt_csum_fold(b->buf + off, hlen));
			break;
		}
		case PKT_FIX_IPV6:
			pkt_put16(b, off + 4, (uint16_t)(len - 40));
			break;
		case PKT_FIX_UDP:
			pkt_put16(b, off + 4, (uint16_t)len);
			break;
		}
	}
	b->nfix = 0;
}
