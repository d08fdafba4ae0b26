/*
 * dta_hash.c - MurmurHash64A and CRC-32 (see dta_hash.h).
 */
#include "dta_hash.h"

#define MURMUR_M 0xc6a4a7935bd1e995ull
#define MURMUR_R 47

static uint64_t load64le(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

uint64_t murmur64a(const void *key, size_t len, uint64_t seed)
{
	const uint8_t *p = key;
	uint64_t h = seed ^ ((uint64_t)len * MURMUR_M);
	size_t blocks = len / 8;

	for (size_t i = 0; i < blocks; i++, p += 8) {
		uint64_t k = load64le(p);

		k *= MURMUR_M;
		k ^= k >> MURMUR_R;
		k *= MURMUR_M;
		h ^= k;
		h *= MURMUR_M;
	}
	/* The reference's fall-through switch over the 1..7 tail bytes. */
	size_t tail = len & 7;
	if (tail) {
		for (size_t i = tail; i-- > 0;)
			h ^= (uint64_t)p[i] << (8 * i);
		h *= MURMUR_M;
	}
	h ^= h >> MURMUR_R;
	h *= MURMUR_M;
	h ^= h >> MURMUR_R;
	return h;
}

uint32_t crc32_ieee(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t c = 0xFFFFFFFFu;

	/* Bitwise: a shard is picked once per report, a table is not worth it. */
	while (len--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
	}
	return c ^ 0xFFFFFFFFu;
}
