/* gw_xxh3's dispatch (gw_hash.h). This unit is compiled for the baseline
 * ISA: its XXH3 is the SSE2 path on x86-64. */
#include "gw_hash.h"

#include "gw_cpu.h"

uint64_t gw_xxh3_sse2(const void *p, size_t len, uint64_t seed)
{
	return XXH3_64bits_withSeed(p, len, seed);
}

uint64_t gw_xxh3(const void *p, size_t len, uint64_t seed)
{
	if (len <= GW_XXH3_SHORT)
		return XXH3_64bits_withSeed(p, len, seed);
	/* gw_cpu_isa() is read once and cached: a load and a compare. */
	int isa = gw_cpu_isa();
	if (isa >= GW_ISA_AVX512)
		return gw_xxh3_avx512(p, len, seed);
	if (isa >= GW_ISA_AVX2)
		return gw_xxh3_avx2(p, len, seed);
	return gw_xxh3_sse2(p, len, seed);
}
