/*
 * headers.h - encoders for Ethernet, IPv4/IPv6, UDP/TCP and the tunnel
 * headers INT rides in (VXLAN-GPE, Geneve, GRE).
 *
 * Each hdr_* writes one header at p and returns its length. Length and
 * checksum fields that depend on what follows are left zero and filled by
 * the matching *_finish call once the packet is complete, which lets the
 * frame builder write strictly front to back.
 */
#ifndef INTGEN_HEADERS_H
#define INTGEN_HEADERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ETH_HLEN 14
#define IPV4_HLEN 20
#define IPV6_HLEN 40
#define UDP_HLEN 8
#define TCP_HLEN 20
#define VXLAN_GPE_HLEN 8
#define GENEVE_HLEN 8
#define GENEVE_OPT_HLEN 4
#define GRE_HLEN 4

#define ETHERTYPE_IPV4 0x0800
#define ETHERTYPE_IPV6 0x86DD
#define ETHERTYPE_TEB 0x6558 /* transparent Ethernet bridging (Geneve) */

#define UDP_PORT_VXLAN_GPE 4790
#define UDP_PORT_GENEVE 6081

/* Ethernet II; the MACs are locally administered and derived from seed. */
size_t hdr_eth(uint8_t *p, uint32_t dst_seed, uint32_t src_seed, uint16_t type);

size_t hdr_ipv4(uint8_t *p, uint8_t tos, uint8_t proto, const uint8_t src[4],
		const uint8_t dst[4], uint16_t id, uint8_t ttl);
/* Set Total Length (IP header included) and the header checksum. */
void ipv4_finish(uint8_t *ip, size_t total_len);

size_t hdr_ipv6(uint8_t *p, uint8_t tclass, uint8_t next, const uint8_t src[16],
		const uint8_t dst[16], uint32_t flow_label, uint8_t hlim);
/* Set Payload Length from the whole IPv6 packet length. */
void ipv6_finish(uint8_t *ip, size_t total_len);

size_t hdr_udp(uint8_t *p, uint16_t sport, uint16_t dport);
/* Set the UDP length (header included) and, if csum, the checksum over
 * the pseudo-header of ip (an IPv4 or IPv6 header, v6 says which). */
void udp_finish(uint8_t *udp, size_t len, const uint8_t *ip, bool v6, bool csum);

size_t hdr_tcp(uint8_t *p, uint16_t sport, uint16_t dport, uint32_t seq,
	       uint32_t ack, uint8_t flags);
void tcp_finish(uint8_t *tcp, size_t len, const uint8_t *ip, bool v6);

/* VXLAN-GPE with the I and P flags set. */
size_t hdr_vxlan_gpe(uint8_t *p, uint32_t vni, uint8_t next_proto);

/* Geneve base header; opt_words = total option length in 4-byte words. */
size_t hdr_geneve(uint8_t *p, unsigned opt_words, uint16_t proto, uint32_t vni);

/* RFC 2784 GRE without checksum, key or sequence number. */
size_t hdr_gre(uint8_t *p, uint16_t proto);

#endif
