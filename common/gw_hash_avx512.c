/* XXH3 compiled with -mavx512f (common/meson.build): xxhash.h's AVX-512
 * accumulate loop. As gw_hash_avx2.c, the baseline path under this name
 * when built without the flag. Called only where gw_cpu says the CPU has
 * AVX-512. */
#include "gw_hash.h"

uint64_t gw_xxh3_avx512(const void *p, size_t len, uint64_t seed)
{
	return XXH3_64bits_withSeed(p, len, seed);
}
