/* Key-set frames (gw_keyset_encode / gw_keyset_decode, docs/wire-format.md
 * §4.9) round-trip keys and float32 values bit for bit, with and without
 * values, with 32- and 64-bit keys; gw_keyset_bound() bounds every frame
 * and gw_keyset_fit() is the largest count whose bound fits a budget; a
 * too-small cap is GW_ELENGTH; and gw_decode() of a key set adds its
 * values at its keys (a key set without values adds nothing). */
#include "gw_test.h"

#include <math.h>

#include <gw/sketch.h>

#define KEYS_MAX 16384u   /* gw_keyset_encode's largest n (countsketch.c) */

static void roundtrip(const uint64_t *keys, const float *vals, uint32_t n,
		      const char *what)
{
	size_t bound = gw_keyset_bound(n, vals != NULL);
	uint8_t *buf = malloc(GW_FRAME_MAX);
	uint64_t *back = malloc((n + 1) * sizeof(uint64_t));
	float *bv = malloc((n + 1) * sizeof(float));
	GW_CHECK(buf && back && bv, "out of memory");
	int len = gw_keyset_encode(42, keys, vals, n, buf, GW_FRAME_MAX);
	GW_CHECK(len > 0, "%s: encode of %u keys: %s", what, n, gw_error_name(len));
	GW_CHECK((size_t)len <= bound, "%s: %d bytes above the bound %zu", what, len,
		 bound);
	gw_frame_info h;
	GW_OK_CALL(gw_frame_verify(buf, (size_t)len, &h));
	int key64 = keys[n - 1] > UINT32_MAX;
	GW_CHECK(h.codec == GW_CODEC_COUNTSKETCH && h.tensor == 42 &&
		 h.flags == (GW_FF_SPARSE | (key64 ? GW_FF_KEY64 : 0)) &&
		 h.count == n && h.start == keys[0] &&
		 h.span == keys[n - 1] - keys[0] + 1 && h.param_len == 8,
		 "%s: header codec %u tensor %u flags %x count %u start %llu span %u",
		 what, h.codec, h.tensor, h.flags, h.count,
		 (unsigned long long)h.start, h.span);
	/* exactly the bytes it needs: the tightest budget works, one less not */
	uint8_t *tight = malloc((size_t)len);
	GW_CHECK(tight, "out of memory");
	GW_EXPECT_RC(gw_keyset_encode(42, keys, vals, n, tight, (size_t)len), len,
		     "%s: budget = length", what);
	GW_CHECK(!memcmp(tight, buf, (size_t)len), "%s: frames differ", what);
	GW_EXPECT_RC(gw_keyset_encode(42, keys, vals, n, tight, (size_t)len - 1),
		     GW_EBUDGET, "%s: budget = length - 1", what);
	free(tight);

	int hv = -1;
	bv[n] = 12345.0f;
	back[n] = 777;
	GW_EXPECT_RC(gw_keyset_decode(buf, (size_t)len, keys[n - 1] + 1, back, bv, n,
				      &hv), (int)n, "%s: decode", what);
	GW_CHECK(hv == (vals != NULL), "%s: has_values %d", what, hv);
	GW_CHECK(back[n] == 777 && bv[n] == 12345.0f, "%s: wrote past n", what);
	for (uint32_t i = 0; i < n; i++) {
		GW_CHECK(back[i] == keys[i], "%s: key %u is %llu, was %llu", what, i,
			 (unsigned long long)back[i], (unsigned long long)keys[i]);
		if (vals)
			GW_CHECK(gw_test_bits(bv[i]) == gw_test_bits(vals[i]),
				 "%s: value %u is %a, was %a", what, i, (double)bv[i],
				 (double)vals[i]);
	}
	/* the limit is exclusive: the last key must be below it */
	GW_EXPECT_RC(gw_keyset_decode(buf, (size_t)len, keys[n - 1], back, bv, n, &hv),
		     GW_ERANGE, "%s: limit = last key", what);
	/* values NULL: keys only, even from a frame with values */
	GW_EXPECT_RC(gw_keyset_decode(buf, (size_t)len, UINT64_MAX, back, NULL, n, NULL),
		     (int)n, "%s: decode without a values array", what);
	if (n > 1)
		GW_EXPECT_RC(gw_keyset_decode(buf, (size_t)len, UINT64_MAX, back, bv,
					      n - 1, &hv), GW_ELENGTH,
			     "%s: cap n - 1", what);
	free(buf);
	free(back);
	free(bv);
}

static void test_roundtrip(void **state)
{
	(void)state;
	enum { N = 3000 };
	uint64_t *k = malloc(N * sizeof(uint64_t));
	float *v = malloc(N * sizeof(float));
	GW_CHECK(k && v, "out of memory");
	gw_test_rng rng = {5};
	for (uint32_t i = 0; i < N; i++)
		v[i] = gw_test_uniform(&rng, -3, 3);
	v[7] = NAN;
	v[8] = -INFINITY;
	v[9] = -0.0f;
	v[10] = gw_test_float(0x7fa00001u);   /* a signalling NaN payload */
	static const struct {
		uint64_t first, max_gap;
		const char *what;
	} shapes[] = {
		{0, 1, "a run from 0"},
		{17, 200, "gaps of 1 byte"},
		{3, 60000, "gaps of 2 bytes"},
		{1, 1000000, "gaps of 3 bytes"},   /* span stays below 2^32 */
		{(1ull << 32) - 10, 100, "across 2^32"},
		{(1ull << 40) + 1, 300, "64-bit keys"},
		{UINT64_MAX - 40000, 10, "top of the 64-bit range"},
	};
	static const uint32_t counts[] = {1, 2, 3, 4, 5, 1000, N};
	for (size_t s = 0; s < GW_ARRAY_SIZE(shapes); s++)
		for (size_t c = 0; c < GW_ARRAY_SIZE(counts); c++) {
			uint32_t n = counts[c];
			uint64_t x = shapes[s].first;
			for (uint32_t i = 0; i < n; i++) {
				if (i)
					x += 1 + gw_test_below(&rng, shapes[s].max_gap);
				k[i] = x;
			}
			if (k[n - 1] - k[0] >= UINT32_MAX || k[n - 1] == UINT64_MAX)
				continue;
			char what[96];
			snprintf(what, sizeof(what), "%s, %u keys, no values",
				 shapes[s].what, n);
			roundtrip(k, NULL, n, what);
			snprintf(what, sizeof(what), "%s, %u keys, values",
				 shapes[s].what, n);
			roundtrip(k, v, n, what);
		}
	/* four-byte increments: keys 2^24 + 1 apart */
	for (uint32_t i = 0; i < 255; i++)
		k[i] = 9 + (uint64_t)i * ((1u << 24) + 1);
	roundtrip(k, v, 255, "4-byte increments");
	free(k);
	free(v);
}

static void test_encode_refusals(void **state)
{
	(void)state;
	uint8_t buf[256];
	uint64_t k[4] = {5, 9, 9, 12};
	float v[4] = {1, 2, 3, 4};
	GW_EXPECT_RC(gw_keyset_encode(1, k, v, 4, buf, sizeof(buf)), GW_EINVAL,
		     "duplicate key");
	k[2] = 8;
	GW_EXPECT_RC(gw_keyset_encode(1, k, v, 4, buf, sizeof(buf)), GW_EINVAL,
		     "descending keys");
	GW_EXPECT_RC(gw_keyset_encode(1, k, v, 0, buf, sizeof(buf)), GW_EINVAL, "n 0");
	GW_EXPECT_RC(gw_keyset_encode(1, NULL, v, 1, buf, sizeof(buf)), GW_EINVAL,
		     "keys NULL");
	GW_EXPECT_RC(gw_keyset_encode(1, k, v, 1, NULL, sizeof(buf)), GW_EINVAL,
		     "buf NULL");
	uint64_t wide[2] = {10, 10 + (uint64_t)UINT32_MAX};
	GW_EXPECT_RC(gw_keyset_encode(1, wide, NULL, 2, buf, sizeof(buf)), GW_EINVAL,
		     "span 2^32");
	wide[1] = 9 + (uint64_t)UINT32_MAX;   /* span 2^32 - 1: the largest */
	GW_CHECK(gw_keyset_encode(1, wide, NULL, 2, buf, sizeof(buf)) > 0, "span 2^32 - 1");
	/* Regression: a last key of 2^64 - 1 made start + span wrap, a frame
	 * that every decoder rejects (GW_ERANGE); it is now refused. */
	uint64_t top[2] = {UINT64_MAX - 1, UINT64_MAX};
	GW_EXPECT_RC(gw_keyset_encode(1, top, NULL, 2, buf, sizeof(buf)), GW_EINVAL,
		     "key 2^64 - 1");
	GW_EXPECT_RC(gw_keyset_encode(1, top + 1, NULL, 1, buf, sizeof(buf)), GW_EINVAL,
		     "key 2^64 - 1 alone");
	int len = gw_keyset_encode(1, top, NULL, 1, buf, sizeof(buf));
	GW_CHECK(len > 0, "key 2^64 - 2: %s", gw_error_name(len));
	uint64_t back;
	GW_EXPECT_RC(gw_keyset_decode(buf, (size_t)len, UINT64_MAX, &back, NULL, 1, NULL),
		     1, "key 2^64 - 2 decodes (limit 2^64 - 1 exclusive)");
	GW_CHECK(back == UINT64_MAX - 1, "key %llu", (unsigned long long)back);
	/* more than one frame's worth */
	uint64_t *many = malloc((KEYS_MAX + 1) * sizeof(uint64_t));
	uint8_t *big = malloc(GW_FRAME_MAX);
	GW_CHECK(many && big, "out of memory");
	for (uint32_t i = 0; i <= KEYS_MAX; i++)
		many[i] = i;
	GW_CHECK(gw_keyset_encode(1, many, NULL, KEYS_MAX, big, GW_FRAME_MAX) > 0,
		 "%u keys", KEYS_MAX);
	GW_EXPECT_RC(gw_keyset_encode(1, many, NULL, KEYS_MAX + 1, big, GW_FRAME_MAX),
		     GW_EINVAL, "%u keys", KEYS_MAX + 1);
	free(many);
	free(big);
}

/* The worst case of n keys: a first increment of 0 (the first key is
 * start) and then increments of 2^24 or more, 4 bytes each, which a 32-bit
 * span allows for n <= 256. */
static size_t worst_frame(uint32_t n, int with_values, uint8_t *buf, size_t budget)
{
	uint64_t k[256];
	float v[256];
	for (uint32_t i = 0; i < n; i++) {
		k[i] = 1000 + (uint64_t)i * ((1u << 24) + 1);
		v[i] = (float)i;
	}
	int len = gw_keyset_encode(7, k, with_values ? v : NULL, n, buf, budget);
	return len < 0 ? 0 : (size_t)len;
}

static void test_fit_and_bound(void **state)
{
	(void)state;
	uint8_t buf[GW_FRAME_MAX];
	for (int wv = 0; wv < 2; wv++) {
		GW_CHECK(gw_keyset_fit(GW_FRAME_HDR_LEN + 8, wv) == 0,
			 "no key fits a bare header and params");
		GW_CHECK(gw_keyset_fit(gw_keyset_bound(1, wv) - 1, wv) == 0,
			 "one byte short of one key");
		GW_CHECK(gw_keyset_fit(gw_keyset_bound(1, wv), wv) == 1, "one key");
		/* the bound: header, params, ceil(n / 4) flag bytes, 4 bytes a
		 * key (and 4 a value) */
		for (uint32_t n = 1; n < 1000; n++)
			GW_CHECK(gw_keyset_bound(n, wv) ==
					 GW_FRAME_HDR_LEN + 8 + (n + 3) / 4 + 4 * n + (wv ? 4 * n : 0),
				 "bound(%u, %d) = %zu", n, wv, gw_keyset_bound(n, wv));
		size_t budgets[] = {GW_BUDGET_MIN, 100, 256, 1000, 1424, 2000, 8924,
				    GW_FRAME_MAX, 100000};
		for (size_t b = 0; b < GW_ARRAY_SIZE(budgets); b++) {
			size_t budget = budgets[b];
			uint32_t n = gw_keyset_fit(budget, wv);
			size_t eff = GW_MIN(budget, (size_t)GW_FRAME_MAX);
			GW_CHECK(n >= 1 && gw_keyset_bound(n, wv) <= eff,
				 "fit(%zu, %d) = %u: bound %zu", budget, wv, n,
				 gw_keyset_bound(n, wv));
			GW_CHECK(n == KEYS_MAX || gw_keyset_bound(n + 1, wv) > eff,
				 "fit(%zu, %d) = %u, but %u keys are bounded by %zu", budget,
				 wv, n, n + 1, gw_keyset_bound(n + 1, wv));
			if (n > 256)
				continue;
			/* the real worst case of n keys fits the budget; it is
			 * 3 bytes under the bound (its first increment is 0,
			 * one byte), so n + 1 may or may not */
			size_t len = worst_frame(n, wv, buf, budget);
			GW_CHECK(len && len <= eff && len == gw_keyset_bound(n, wv) - 3,
				 "worst case of %u keys at budget %zu: %zu bytes", n,
				 budget, len);
			if (n < 256) {
				len = worst_frame(n + 1, wv, buf, sizeof(buf));
				GW_CHECK(len + 3 > eff, "worst case of %u keys, %zu bytes, "
					 "fits budget %zu with room for the bound", n + 1,
					 len, budget);
			}
		}
		/* fit is monotone and never refuses a frame it promised */
		uint32_t prev = 0;
		for (size_t budget = 40; budget <= 3000; budget++) {
			uint32_t n = gw_keyset_fit(budget, wv);
			GW_CHECK(n >= prev, "fit(%zu) = %u < fit(%zu) = %u", budget, n,
				 budget - 1, prev);
			prev = n;
		}
	}
	/* a full frame's worst case holds fewer than the encoder's cap of
	 * 16384 keys (runs of keys, 1.25 bytes each, reach it) */
	uint32_t full = gw_keyset_fit(GW_FRAME_MAX, 0);
	GW_CHECK(full < KEYS_MAX && gw_keyset_bound(full, 0) <= GW_FRAME_MAX &&
		 gw_keyset_bound(full + 1, 0) > GW_FRAME_MAX,
		 "fit(GW_FRAME_MAX) = %u", full);
}

/* gw_decode() of a key set: values added at the keys (alpha 1, so
 * accumulating), nothing for a key set without values. */
static void test_decode_adds(void **state)
{
	(void)state;
	enum { D = 5000 };
	uint64_t k[300];
	float v[300];
	gw_test_rng rng = {11};
	uint64_t x = 3;
	for (int i = 0; i < 300; i++) {
		k[i] = x;
		x += 1 + gw_test_below(&rng, 30);
		v[i] = gw_test_uniform(&rng, -1, 1);
	}
	uint8_t buf[GW_FRAME_MAX];
	float *out = malloc(D * sizeof(float));
	float *want = malloc(D * sizeof(float));
	GW_CHECK(out && want, "out of memory");
	for (int i = 0; i < D; i++)
		out[i] = want[i] = (float)(i % 13) - 6.0f;
	int len = gw_keyset_encode(3, k, v, 300, buf, sizeof(buf));
	GW_CHECK(len > 0, "encode: %s", gw_error_name(len));
	for (int rep = 0; rep < 2; rep++) {
		GW_EXPECT_RC(gw_decode(buf, (size_t)len, out, D), 300, "decode %d", rep);
		for (int i = 0; i < 300; i++)
			want[k[i]] += v[i];
	}
	for (int i = 0; i < D; i++)
		GW_CHECK(gw_test_bits(out[i]) == gw_test_bits(want[i]),
			 "element %d: %a, want %a", i, (double)out[i], (double)want[i]);
	len = gw_keyset_encode(3, k, NULL, 300, buf, sizeof(buf));
	GW_CHECK(len > 0, "encode without values: %s", gw_error_name(len));
	GW_EXPECT_RC(gw_decode(buf, (size_t)len, out, D), 0,
		     "a key set without values adds 0 values");
	GW_CHECK(!memcmp(out, want, D * sizeof(float)), "a key set without values "
		 "changed the output");
	GW_EXPECT_RC(gw_decode(buf, (size_t)len, out, k[299]), GW_ERANGE,
		     "output ends at the last key");
	/* the window form refuses sparse frames off base 0 */
	GW_EXPECT_RC(gw_decode_window(buf, (size_t)len, out, 1, D - 1), GW_EUNSUPPORTED,
		     "window at base 1");
	free(out);
	free(want);
}

GW_TEST_MAIN("keyset", 0,
	     cmocka_unit_test(test_roundtrip),
	     cmocka_unit_test(test_encode_refusals),
	     cmocka_unit_test(test_fit_and_bound),
	     cmocka_unit_test(test_decode_adds))
