/*
 * testlib.h - helpers shared by the Check unit tests: a registry with the
 * built-in plugins, dissection of byte vectors, attribute access by name,
 * and a tiny byte builder.
 */
#ifndef ISP_TESTLIB_H
#define ISP_TESTLIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <check.h>

#include "../../src/core/dissect.h"
#include "../../src/core/registry.h"

struct isp_registry *tl_registry(void);

/* Run a suite in this process (no fork: sanitizers see every test);
 * EXIT_SUCCESS or EXIT_FAILURE for main() to return. */
int tl_run_suite(Suite *s);

/* Dissect bytes starting with Ethernet (or `first` protocol by name). */
void tl_dissect(struct isp_packet *p, struct isp_stats *st, const uint8_t *b,
		size_t len, const char *first);

/* Attribute value by full name; false if absent (fails the test if the
 * name is unknown). */
bool tl_get(const struct isp_packet *p, const char *name, struct isp_value *v);
uint64_t tl_u64(const struct isp_packet *p, const char *name);
bool tl_has(const struct isp_packet *p, const char *name);

/* Fail the test unless attribute `name` is an array of n values equal to
 * want, its missing mask `missing` (missing elements are not compared). */
void tl_expect_array(const struct isp_packet *p, const char *name,
		     const uint64_t *want, unsigned n, uint32_t missing);

/* Byte builder. */
struct tl_buf {
	uint8_t b[4096];
	size_t n;
};
void tl_u8(struct tl_buf *t, unsigned v);
void tl_be16(struct tl_buf *t, unsigned v);
void tl_be24(struct tl_buf *t, uint32_t v);
void tl_be32(struct tl_buf *t, uint32_t v);
void tl_be64(struct tl_buf *t, uint64_t v);
void tl_bytes(struct tl_buf *t, const void *p, size_t n);
/* Ethernet + IPv4 (tos) + UDP header; lengths fixed later by tl_fix_lengths. */
void tl_eth_ipv4_udp(struct tl_buf *t, uint8_t tos, uint16_t sport, uint16_t dport);
/* Set IPv4 total length and UDP length for a frame whose IPv4 starts at ip_off. */
void tl_fix_lengths(struct tl_buf *t, size_t ip_off);
/* Ethernet + IPv4 (tos) + a 20-byte TCP header (ACK PSH, ports 40000 to
 * 5555), for INT v0.5 and its tail; tl_fix_lengths fixes the IPv4 one. */
void tl_eth_ipv4_tcp(struct tl_buf *t, uint8_t tos);

#endif
