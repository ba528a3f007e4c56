/* XXH3-64, the hash the frame and packet formats are defined with
 * (docs/wire-format.md): inlined for short inputs, where a call into
 * libxxhash cost more than the hash (sketch and Bloom keys are 4 or 8
 * bytes, hashed once per key and row), and for long ones (frames)
 * dispatched at run time to the widest vector path of this CPU (AVX-512,
 * AVX2, else SSE2; GW_FORCE_ISA as for 3LC). Every path returns XXH3's
 * value, the library's bit for bit (tests/codec/test_hash.c). Private to
 * gradwire. */
#ifndef GW_HASH_H
#define GW_HASH_H

#include <stddef.h>
#include <stdint.h>

/* xxhash.h's own way to compile the functions into this unit, under names
 * of their own (XXH_INLINE_*), so the linked library never clashes. */
#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

/* Inputs of at most this many bytes never reach XXH3's vector loop. */
#define GW_XXH3_SHORT 240u

/* XXH3_64bits_withSeed(p, len, seed) inline: for short inputs. (Seed 0
 * is XXH3_64bits.) */
static inline uint64_t gw_xxh3_short(const void *p, size_t len, uint64_t seed)
{
	return XXH3_64bits_withSeed(p, len, seed);
}

/* The same value for any length, on the widest path this CPU has. */
uint64_t gw_xxh3(const void *p, size_t len, uint64_t seed);

/* The vector paths, each in a unit compiled for its ISA (gw_hash_*.c);
 * exposed for the tests that compare them. */
uint64_t gw_xxh3_sse2(const void *p, size_t len, uint64_t seed);
uint64_t gw_xxh3_avx2(const void *p, size_t len, uint64_t seed);
uint64_t gw_xxh3_avx512(const void *p, size_t len, uint64_t seed);

#endif /* GW_HASH_H */
