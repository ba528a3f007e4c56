/* Delta-binary key blocks (codec/delta_binary.h) round-trip every key
 * pattern losslessly and reject malformed blocks without reading past
 * them: dense runs, gaps needing 1, 2, 3 and 4 bytes (narrow), 8 (wide,
 * 64-bit keys), one key, no keys. */
#include "gw_test.h"

#include "../../codec/delta_binary.h"

static void roundtrip(const uint64_t *k, uint32_t n, uint64_t base, int wide,
		      size_t want_len, const char *what)
{
	uint8_t buf[4096];
	uint64_t back[512];
	size_t len = gw_db_size(k, n, base, wide), used = 0;
	GW_CHECK(len <= sizeof(buf) && n <= 512, "%s: test too large", what);
	GW_CHECK(gw_db_encode(k, n, base, wide, buf) == len, "%s: size disagrees", what);
	if (want_len)
		GW_CHECK(len == want_len, "%s: %zu bytes, expected %zu", what, len, want_len);
	GW_OK_CALL(gw_db_decode(buf, len, n, base, wide, UINT64_MAX, back, &used));
	GW_CHECK(used == len, "%s: used %zu of %zu", what, used, len);
	for (uint32_t i = 0; i < n; i++)
		GW_CHECK(back[i] == k[i], "%s: key %u is %llu, was %llu", what, i,
			 (unsigned long long)back[i], (unsigned long long)k[i]);
	struct gw_db_iter it;
	gw_db_iter_init(&it, buf, n, base, wide);
	for (uint32_t i = 0; i < n; i++)
		GW_CHECK(gw_db_iter_next(&it) == k[i], "%s: iterator key %u", what, i);
	/* Every truncation is refused. */
	for (size_t cut = 0; cut < len; cut++)
		GW_CHECK(gw_db_decode(buf, cut, n, base, wide, UINT64_MAX, NULL, &used) < 0,
			 "%s: %zu of %zu bytes accepted", what, cut, len);
}

static void test_patterns(void **state)
{
	(void)state;
	uint64_t k[512] = {0};
	roundtrip(k, 0, 0, 0, 0, "no keys");
	k[0] = 7;
	roundtrip(k, 1, 0, 0, 2, "one key");
	for (uint32_t i = 0; i < 400; i++)
		k[i] = 1000 + i;   /* dense run: each increment 0, one byte */
	roundtrip(k, 400, 1000, 0, 100 + 400, "dense run");
	static const uint64_t gaps[] = {200, 60000, 16000000, 4000000000ull};
	for (unsigned g = 0; g < 4; g++) {
		uint64_t x = 0;
		for (uint32_t i = 0; i < 100; i++)
			k[i] = x += gaps[g] + 1;
		char what[64];
		snprintf(what, sizeof(what), "gaps of %llu (%u bytes)",
			 (unsigned long long)gaps[g], g + 1);
		/* first increment is k0 - 0 = gap + 1, the rest gap: same width */
		roundtrip(k, 100, 0, 0, 25 + 100 * (g + 1), what);
	}
	for (uint32_t i = 0; i < 50; i++)
		k[i] = (uint64_t)i << 40;   /* 64-bit keys, 8-byte increments */
	roundtrip(k, 50, 0, 1, 0, "64-bit keys");
	k[0] = UINT64_MAX - 2;   /* limit UINT64_MAX is exclusive */
	k[1] = UINT64_MAX - 1;
	roundtrip(k, 2, 0, 1, 0, "top of the 64-bit range");
}

static void test_rejects(void **state)
{
	(void)state;
	uint64_t k[3] = {5, 9, 10};
	uint8_t buf[64];
	size_t len = gw_db_encode(k, 3, 0, 0, buf), used;
	GW_EXPECT_RC(gw_db_decode(buf, len, 3, 0, 0, 10, NULL, &used), GW_ECORRUPT,
		     "a key at the limit");
	GW_OK_CALL(gw_db_decode(buf, len, 3, 0, 0, 11, NULL, &used));
	buf[0] |= 0xc0;   /* flag bits of a fourth key that does not exist */
	GW_EXPECT_RC(gw_db_decode(buf, len, 3, 0, 0, 11, NULL, &used), GW_ECORRUPT,
		     "reserved flag bits");
	uint8_t wrap[1 + 8] = {0x03, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	GW_EXPECT_RC(gw_db_decode(wrap, sizeof(wrap), 1, 1, 1, UINT64_MAX, NULL, &used),
		     GW_ECORRUPT, "an increment that wraps");
}

GW_TEST_MAIN("delta_binary", 0,
	     cmocka_unit_test(test_patterns), cmocka_unit_test(test_rejects))
