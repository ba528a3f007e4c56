/* bf16 rounds float32 to nearest, ties to even: exact tie/overflow/subnormal/signed-zero cases, NaN quieted with its sign, and a bulk comparison against an independent reference. */
#include "gw_test.h"

#include <math.h>

/* bf16 codes the codec put on the wire for values v[0..n), read from the
 * payload of its dense frames (2 bytes each, little-endian), and checked
 * against the decoded floats too. */
static uint16_t *bf16_codes(const float *v, size_t n, int sparse)
{
	uint16_t *codes = malloc(n * sizeof(uint16_t) + 1);
	uint32_t *keys = malloc(n * sizeof(uint32_t) + 1);
	float *out = malloc(2 * n * sizeof(float) + 4);
	GW_CHECK(codes && keys && out, "out of memory");
	for (size_t i = 0; i < n; i++)
		keys[i] = (uint32_t)(2 * i + 1);
	uint64_t dim = sparse ? 2 * n + 1 : n;
	gw_tensor t = sparse ? gw_test_sparse_tensor(1, dim, keys, 32, v, n)
			     : gw_test_dense_tensor(1, v, n);
	gw_encoder *enc = gw_test_encoder(GW_CODEC_BF16);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, GW_FRAME_MAX, &fr));
	size_t pos = 0;
	for (size_t j = 0; j < fr.n; j++) {
		gw_frame_info h;
		GW_OK_CALL(gw_frame_verify(fr.f[j].data, fr.f[j].len, &h));
		GW_CHECK(h.param_len == 0 && pos + h.count <= n,
			 "bf16 frame %zu: param_len %u count %u", j, h.param_len,
			 h.count);
		const uint8_t *vals = fr.f[j].data + GW_FRAME_HDR_LEN +
				      (sparse ? 4 * (size_t)h.count : 0);
		for (uint32_t i = 0; i < h.count; i++)
			codes[pos + i] = (uint16_t)(vals[2 * i] | vals[2 * i + 1] << 8);
		pos += h.count;
	}
	GW_CHECK(pos == n, "bf16 frames hold %zu of %zu values", pos, n);
	/* -0.0 + x keeps every bit of x, so the decoded float is the code. */
	gw_test_fill(out, dim, -0.0f);
	gw_test_decode_all(&fr, out, dim);
	for (size_t i = 0; i < n; i++) {
		uint32_t got = gw_test_bits(out[sparse ? keys[i] : i]);
		uint32_t wire = (uint32_t)codes[i] << 16;
		GW_CHECK(got == wire || (isnan(out[sparse ? keys[i] : i]) &&
					 (got >> 31) == (wire >> 31)),
			 "bf16 code %04x decoded to %08x, want %08x", codes[i], got,
			 wire);
	}
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
	free(keys);
	free(out);
	return codes;
}

static const struct {
	uint32_t in;
	uint16_t want;
	const char *what;
} cases[] = {
	{0x3f800000u, 0x3f80, "1.0 exact"},
	{0x3f800001u, 0x3f80, "1.0 + 1 ulp rounds down"},
	{0x3f807fffu, 0x3f80, "just below half rounds down"},
	{0x3f808000u, 0x3f80, "tie, even below: down"},
	{0x3f808001u, 0x3f81, "just above half rounds up"},
	{0x3f818000u, 0x3f82, "tie, odd below: up to even"},
	{0xbf808000u, 0xbf80, "negative tie, even: toward zero"},
	{0xbf818000u, 0xbf82, "negative tie, odd: away from zero"},
	{0x3fff8000u, 0x4000, "tie carries into the exponent (2.0)"},
	{0x3fffffffu, 0x4000, "just below 2.0 rounds to 2.0"},
	{0x7f7f0000u, 0x7f7f, "largest finite bf16 exact"},
	{0x7f7f7fffu, 0x7f7f, "below half above max bf16 stays finite"},
	{0x7f7f8000u, 0x7f80, "tie above max bf16 (odd) overflows to +Inf"},
	{0x7f7fffffu, 0x7f80, "FLT_MAX overflows to +Inf"},
	{0xff7fffffu, 0xff80, "-FLT_MAX overflows to -Inf"},
	{0xff7f7fffu, 0xff7f, "-(below half) stays finite"},
	{0x7f800000u, 0x7f80, "+Inf"},
	{0xff800000u, 0xff80, "-Inf"},
	{0x00000000u, 0x0000, "+0.0"},
	{0x80000000u, 0x8000, "-0.0 keeps its sign"},
	{0x00000001u, 0x0000, "smallest subnormal rounds to +0"},
	{0x80000001u, 0x8000, "smallest negative subnormal rounds to -0"},
	{0x00008000u, 0x0000, "subnormal tie, even: to 0"},
	{0x00008001u, 0x0001, "subnormal above half: smallest bf16 subnormal"},
	{0x00018000u, 0x0002, "subnormal tie, odd: up"},
	{0x00400000u, 0x0040, "bf16 subnormal exact"},
	{0x007f8000u, 0x0080, "subnormal tie rounds up to FLT_MIN"},
	{0x007fffffu, 0x0080, "largest subnormal rounds up to FLT_MIN"},
	{0x00800000u, 0x0080, "FLT_MIN exact"},
	{0x807fffffu, 0x8080, "largest negative subnormal to -FLT_MIN"},
};
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

static const uint32_t nans[] = {
	0x7fc00000u, /* default quiet NaN */
	0xffc00000u, /* negative quiet NaN */
	0x7f800001u, /* signalling NaN whose truncation would be +Inf */
	0xff800001u, /* same, negative: truncation would be -Inf */
	0x7fbfffffu, /* signalling, full payload: adding a rounding bias carries */
	0x7f80ffffu, /* payload only in the low half */
	0xffffffffu, /* all ones */
	0x7fc12345u, /* quiet with payload */
};
#define N_NANS (sizeof(nans) / sizeof(nans[0]))

static void exact_cases(int sparse)
{
	float v[N_CASES];
	for (size_t i = 0; i < N_CASES; i++)
		v[i] = gw_test_float(cases[i].in);
	uint16_t *codes = bf16_codes(v, N_CASES, sparse);
	for (size_t i = 0; i < N_CASES; i++) {
		GW_CHECK(codes[i] == cases[i].want, "%s: %08x (%a) became bf16 %04x, "
			 "want %04x (%s)", cases[i].what, cases[i].in, (double)v[i],
			 codes[i], cases[i].want, sparse ? "sparse" : "dense");
		/* The independent reference agrees with the table. */
		GW_CHECK(gw_test_bf16_rne(v[i]) == cases[i].want,
			 "test reference disagrees on %s", cases[i].what);
	}
	free(codes);
}

static void test_exact_cases_dense(void **state)
{
	(void)state;
	exact_cases(0);
}

static void test_exact_cases_sparse(void **state)
{
	(void)state;
	exact_cases(1);
}

/* NaN stays NaN: exponent all ones, mantissa nonzero with the quiet bit
 * set, sign kept — never an infinity. */
static void test_nan_quieted(void **state)
{
	(void)state;
	float v[N_NANS];
	for (size_t i = 0; i < N_NANS; i++)
		v[i] = gw_test_float(nans[i]);
	uint16_t *codes = bf16_codes(v, N_NANS, 0);
	for (size_t i = 0; i < N_NANS; i++) {
		uint16_t c = codes[i];
		GW_CHECK((c & 0x7f80) == 0x7f80 && (c & 0x007f) != 0 && (c & 0x0040),
			 "NaN %08x became bf16 %04x: not a quiet NaN", nans[i], c);
		GW_CHECK((c >> 15) == (nans[i] >> 31), "NaN %08x became bf16 %04x: "
			 "sign lost", nans[i], c);
	}
	free(codes);
}

/* Every upper half with the interesting lower halves (exact, just below /
 * at / just above the tie, all ones), plus random bit patterns, against
 * the reference computed by distances in double. */
static void test_bulk_against_reference(void **state)
{
	(void)state;
	static const uint16_t lows[] = {0x0000, 0x0001, 0x7fff, 0x8000, 0x8001, 0xffff};
	enum { NL = sizeof(lows) / sizeof(lows[0]), NR = 1 << 20 };
	size_t n = (size_t)65536 * NL + NR;
	float *v = malloc(n * sizeof(float));
	GW_CHECK(v, "out of memory");
	size_t k = 0;
	for (uint32_t hi = 0; hi < 65536; hi++)
		for (int l = 0; l < NL; l++)
			v[k++] = gw_test_float(hi << 16 | lows[l]);
	gw_test_rng r = {2024};
	for (int i = 0; i < NR; i++)
		v[k++] = gw_test_float((uint32_t)gw_test_rand(&r));
	uint16_t *codes = bf16_codes(v, n, 0);
	size_t nan_count = 0;
	for (size_t i = 0; i < n; i++) {
		if (isnan(v[i])) {
			uint16_t c = codes[i];
			GW_CHECK((c & 0x7f80) == 0x7f80 && (c & 0x0040) &&
					 (c >> 15) == (gw_test_bits(v[i]) >> 31),
				 "NaN %08x became %04x", gw_test_bits(v[i]), c);
			nan_count++;
			continue;
		}
		uint16_t want = gw_test_bf16_rne(v[i]);
		GW_CHECK(codes[i] == want, "%08x (%a) became bf16 %04x, round to "
			 "nearest even gives %04x", gw_test_bits(v[i]), (double)v[i],
			 codes[i], want);
	}
	GW_CHECK(nan_count > 1000, "bulk set has only %zu NaNs", nan_count);
	free(codes);
	free(v);
}

GW_TEST_MAIN("bf16_rounding", 0,
	     cmocka_unit_test(test_exact_cases_dense),
	     cmocka_unit_test(test_exact_cases_sparse),
	     cmocka_unit_test(test_nan_quieted),
	     cmocka_unit_test(test_bulk_against_reference))
