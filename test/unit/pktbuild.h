/*
 * pktbuild.h - build test packets byte by byte.
 *
 * The builders write every field themselves (big-endian, as on the wire) so
 * a test's expected values come from what it asked for, never from the
 * decoder under test. Length fields that depend on what follows (IPv4 total
 * length and checksum, IPv6 payload length, UDP length) are recorded and
 * filled in by pkt_finish(), once the whole packet is known; bytes appended
 * after pkt_finish() (e.g. Ethernet padding) are not counted by them.
 */
#ifndef ISP_TEST_PKTBUILD_H
#define ISP_TEST_PKTBUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PKT_MAX 2048
#define PKT_MAX_FIXUPS 16

enum pkt_fixup_kind { PKT_FIX_IPV4, PKT_FIX_IPV6, PKT_FIX_UDP };

struct pkt {
	uint8_t buf[PKT_MAX];
	size_t len;
	unsigned nfix;
	struct { uint8_t kind; size_t off; } fix[PKT_MAX_FIXUPS];
};

void pkt_init(struct pkt *b);

/* Raw appends; each returns the offset where the bytes start. */
size_t pkt_bytes(struct pkt *b, const void *data, size_t n);
size_t pkt_fill(struct pkt *b, uint8_t byte, size_t n);
size_t pkt_u8(struct pkt *b, uint8_t v);
size_t pkt_u16(struct pkt *b, uint16_t v);
size_t pkt_u32(struct pkt *b, uint32_t v);
void pkt_put16(struct pkt *b, size_t off, uint16_t v);

size_t pkt_eth(struct pkt *b, const uint8_t dst[6], const uint8_t src[6],
	       uint16_t ethertype);

/* One 802.1Q / 802.1ad tag: the TPID is the ethertype written before it. */
size_t pkt_vlan(struct pkt *b, unsigned pcp, unsigned dei, unsigned vid,
		uint16_t ethertype);

struct pkt_ipv4 {
	uint8_t tos;
	uint16_t id;
	uint8_t flags;          /* 3 bits: reserved, DF, MF */
	uint16_t frag_off;      /* 13 bits, 8-byte units */
	uint8_t ttl;
	uint8_t proto;
	uint32_t src, dst;      /* host order */
	const uint8_t *opts;    /* padded with End-of-Options to 4 bytes */
	size_t optlen;
};
size_t pkt_ipv4(struct pkt *b, const struct pkt_ipv4 *ip);

struct pkt_ipv6 {
	uint8_t tclass;
	uint32_t flow;          /* 20 bits */
	uint8_t next;
	uint8_t hop_limit;
	uint8_t src[16], dst[16];
};
size_t pkt_ipv6(struct pkt *b, const struct pkt_ipv6 *ip);

/* Hop-by-hop (or destination) options header; opts padded with PadN to a
 * multiple of 8 bytes including the 2-byte header. */
size_t pkt_ipv6_opts(struct pkt *b, uint8_t next, const uint8_t *opts, size_t optlen);
size_t pkt_ipv6_frag(struct pkt *b, uint8_t next, uint16_t frag_off, bool more,
		     uint32_t ident);

size_t pkt_udp(struct pkt *b, uint16_t sport, uint16_t dport, uint16_t csum);

struct pkt_tcp {
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint16_t flags;         /* 9 bits: NS CWR ECE URG ACK PSH RST SYN FIN */
	uint16_t window, csum, urgent;
	uint16_t mss;           /* 0: no MSS option */
	int wscale;             /* < 0: no window-scale option */
	bool sack_ok;
	bool ts;
	uint32_t tsval, tsecr;
};
size_t pkt_tcp(struct pkt *b, const struct pkt_tcp *t);

size_t pkt_vxlan(struct pkt *b, uint8_t flags, uint32_t vni);
size_t pkt_vxlan_gpe(struct pkt *b, uint8_t flags, uint8_t next, uint32_t vni);

/* Geneve base header with no options; pkt_geneve_opt() appends one option
 * and grows the Opt Len of the header at `geneve_off`. */
size_t pkt_geneve(struct pkt *b, bool oam, bool critical, uint16_t proto,
		  uint32_t vni);
size_t pkt_geneve_opt(struct pkt *b, size_t geneve_off, uint16_t cls,
		      uint8_t type, const uint8_t *data, size_t len);

struct pkt_gre {
	bool csum, key, seq;
	uint16_t proto;
	uint16_t csum_val;
	uint32_t key_val, seq_val;
};
size_t pkt_gre(struct pkt *b, const struct pkt_gre *g);

/* Fill the recorded length fields (and IPv4 checksums) to the current end. */
void pkt_finish(struct pkt *b);

/* RFC 1071 one's-complement sum, folded (not inverted). */
uint16_t pkt_csum_fold(const uint8_t *p, size_t n);

#endif
