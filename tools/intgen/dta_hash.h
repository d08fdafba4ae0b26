/*
 * dta_hash.h - the two hashes DTA reports depend on, written from their
 * public definitions (no code shared with intspect): MurmurHash64A
 * indexes the sketches, CRC-32 picks a collector shard.
 */
#ifndef INTGEN_DTA_HASH_H
#define INTGEN_DTA_HASH_H

#include <stddef.h>
#include <stdint.h>

/* Austin Appleby's MurmurHash64A (MurmurHash2, 64-bit, public domain).
 * The reference reads 8-byte blocks in the host's order; this reads them
 * little-endian, which is what the reference gives on x86 and ARM and what
 * every published test value assumes. */
uint64_t murmur64a(const void *key, size_t len, uint64_t seed);

/* IEEE 802.3 CRC-32 as zlib's crc32(0, buf, len): reflected polynomial
 * 0xEDB88320, initial value and final xor 0xFFFFFFFF. */
uint32_t crc32_ieee(const void *buf, size_t len);

#endif
