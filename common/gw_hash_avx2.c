/* XXH3 compiled with -mavx2 (common/meson.build), so xxhash.h picks its
 * AVX2 accumulate loop. Built without it (a compiler or build that does
 * not pass the flag: the fuzz build's second compile) it is the baseline
 * path under this name, still the same value. Called only where gw_cpu
 * says the CPU has AVX2. */
#include "gw_hash.h"

uint64_t gw_xxh3_avx2(const void *p, size_t len, uint64_t seed)
{
	return XXH3_64bits_withSeed(p, len, seed);
}
