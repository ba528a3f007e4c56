/* gw_xxh3 and its paths (common/gw_hash.h) return libxxhash's XXH3 value
 * bit for bit: every length from 0 to 2100 bytes (all of XXH3's size
 * classes: 0, 1-3, 4-8, 9-16, 17-128, 129-240, then the striped loop,
 * its 1024-byte blocks and the last partial stripe) at every alignment
 * mod 64, seeds 0, 1 and a large one; the short inline path for inputs
 * up to 240 bytes; the AVX2 and AVX-512 paths where the CPU has them
 * (skipped otherwise, with GW_FORCE_ISA's levels); and a few published
 * XXH3 values, so the library itself is checked too. */
#include <stddef.h>
#include <stdint.h>

#include <xxhash.h>   /* the library's XXH3 */

/* The library's value: defined before gw_hash.h, whose XXH_INLINE_ALL
 * renames XXH3_* to its own inline copies from there on. */
static uint64_t lib(const void *p, size_t len, uint64_t seed)
{
	return XXH3_64bits_withSeed(p, len, seed);
}

#include "gw_cpu.h"
#include "gw_hash.h"
#include "gw_test.h"

#define MAXLEN 2100u

static uint8_t buf[MAXLEN + 64];
static const uint64_t seeds[] = {0, 1, 0x9e3779b97f4a7c15ull};

static void fill(void)
{
	uint64_t st = 42;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)gw_splitmix64(&st);
}

static void check_path(const char *name, uint64_t (*fn)(const void *, size_t, uint64_t),
		       size_t maxlen)
{
	for (size_t len = 0; len <= maxlen; len++)
		for (size_t al = 0; al < 64; al += (len < 300 ? 1 : 13))
			for (size_t s = 0; s < sizeof(seeds) / sizeof(seeds[0]); s++) {
				uint64_t want = lib(buf + al, len, seeds[s]);
				uint64_t got = fn(buf + al, len, seeds[s]);
				if (got != want)
					fail_msg("%s: %zu bytes at offset %zu, seed %llx: %016llx, "
						 "XXH3 says %016llx", name, len, al,
						 (unsigned long long)seeds[s],
						 (unsigned long long)got, (unsigned long long)want);
			}
}

static uint64_t short_path(const void *p, size_t len, uint64_t seed)
{
	return gw_xxh3_short(p, len, seed);
}

static void test_published_values(void **state)
{
	(void)state;
	/* XXH3_64bits("") and of "a", as xxHash's documentation and its
	 * sanity checks give them. */
	assert_true(lib("", 0, 0) == 0x2D06800538D394C2ull);
	assert_true(gw_xxh3("", 0, 0) == 0x2D06800538D394C2ull);
	assert_true(gw_xxh3_short("", 0, 0) == 0x2D06800538D394C2ull);
}

static void test_dispatch(void **state)
{
	(void)state;
	fill();
	check_path("gw_xxh3", gw_xxh3, MAXLEN);
	check_path("gw_xxh3_short", short_path, GW_XXH3_SHORT);
	check_path("sse2", gw_xxh3_sse2, MAXLEN);
}

/* The copy built for isa, where this CPU has it. */
static void isa_path(int isa, uint64_t (*fn)(const void *, size_t, uint64_t))
{
	if (gw_cpu_best_isa() < isa)
		skip();
	fill();
	check_path(gw_cpu_isa_name(isa), fn, MAXLEN);
}

static void test_avx2(void **state)
{
	(void)state;
	isa_path(GW_ISA_AVX2, gw_xxh3_avx2);
}

static void test_avx512(void **state)
{
	(void)state;
	isa_path(GW_ISA_AVX512, gw_xxh3_avx512);
}

/* Every level GW_FORCE_ISA can pick gives the same values. */
static void test_forced_levels(void **state)
{
	(void)state;
	fill();
	for (int isa = GW_ISA_SCALAR; isa <= gw_cpu_best_isa(); isa++) {
		assert_int_equal(gw_cpu_force_isa(isa), 0);
		check_path(gw_cpu_isa_name(isa), gw_xxh3, MAXLEN);
	}
	gw_cpu_force_isa(-1);
}

GW_TEST_MAIN("hash", 0, cmocka_unit_test(test_published_values), cmocka_unit_test(test_dispatch),
	     cmocka_unit_test(test_avx2), cmocka_unit_test(test_avx512),
	     cmocka_unit_test(test_forced_levels))
