/*
 * wire.h - big-endian stores and the Internet checksum.
 *
 * Every encoder in intgen writes through these helpers so that the byte
 * order of the output never depends on the host, and so that no code casts
 * a byte pointer to a wider type (alignment and strict aliasing).
 */
#ifndef INTGEN_WIRE_H
#define INTGEN_WIRE_H

#include <stddef.h>
#include <stdint.h>

static inline void put8(uint8_t *p, uint32_t v) { p[0] = (uint8_t)v; }

static inline void put16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void put24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}

static inline void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

/* Little-endian stores, only for the pcap file header and record headers:
 * the file is written little-endian on every host so runs are byte-identical. */
static inline void put16le(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void put32le(uint8_t *p, uint32_t v)
{
	put16le(p, v);
	put16le(p + 2, v >> 16);
}

/* One's-complement sum of a byte range, to be folded by csum_fold(); the
 * partial form lets callers add a pseudo-header without copying it. */
static inline uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	while (len >= 2) {
		sum += (uint32_t)p[0] << 8 | p[1];
		p += 2;
		len -= 2;
	}
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

static inline uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return (uint16_t)~sum;
}

#endif
