/* XXH3_64bits_withSeed of one 32-bit word's 4 little-endian bytes, with
 * the seed's part computed once: the keys of SketchML's MinMaxSketch and
 * of DeepReduce's Bloom filter are hashed this way (docs/wire-format.md
 * §4.8, §4.10), once per key and, in a Bloom query, once per position of
 * a span. gw_xxh3_short() per word redoes the seed's part each time, and
 * its byte-pointer form keeps the compiler from vectorizing a loop of
 * hashes; this is XXH3's 4-to-8-byte path (xxhash.h, XXH3_len_4to8_64b
 * and XXH3_rrmxmx) written out for len = 4, where both input words are x:
 * straight-line 64-bit arithmetic that vectorizes. Bit for bit
 * XXH3's value (tests/codec/test_dr_index_roundtrip.c compares). Private to the
 * codecs that hash u32 keys. */
#ifndef GW_XXH3_U32_H
#define GW_XXH3_U32_H

#include <stdint.h>

#include "gw_hash.h"

/* The seed's part: the bitflip XXH3 xors the input with. */
static inline uint64_t gw_xxh3_u32_flip(uint64_t seed)
{
	seed ^= (uint64_t)__builtin_bswap32((uint32_t)seed) << 32;
	return (XXH_readLE64(XXH3_kSecret + 8) ^ XXH_readLE64(XXH3_kSecret + 16)) - seed;
}

static inline uint64_t gw_rotl64(uint64_t x, unsigned r)
{
	return (x << r) | (x >> (64 - r));
}

/* gw_xxh3_short(x as 4 LE bytes, 4, seed) with flip = gw_xxh3_u32_flip(seed). */
static inline uint64_t gw_xxh3_u32(uint32_t x, uint64_t flip)
{
	uint64_t h = ((uint64_t)x | ((uint64_t)x << 32)) ^ flip;
	h ^= gw_rotl64(h, 49) ^ gw_rotl64(h, 24);
	h *= 0x9FB21C651E98DF25ull;
	h ^= (h >> 35) + 4;
	h *= 0x9FB21C651E98DF25ull;
	return h ^ (h >> 28);
}

#endif /* GW_XXH3_U32_H */
