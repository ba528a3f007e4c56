/* Hostile onebit frames (valid frames corrupted, then re-sealed) are rejected with the right GW_E* code and leave the output untouched: a negative or -0 non-negative level, a positive negative level, infinite levels, a single NaN level, padding bits set, wrong param or payload lengths, bad keys; two NaN levels are the poison value and decode to NaN. */
#include "gw_test.h"

#include <math.h>

#define OUT_LEN 64
#define P (GW_FRAME_HDR_LEN)        /* a, b */
#define B (GW_FRAME_HDR_LEN + 8)    /* bits (dense) */

static uint8_t *encode_one(const gw_tensor *t, size_t *len)
{
	gw_encoder *enc = gw_test_encoder(GW_CODEC_ONEBIT);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, t, 65535, &fr));
	GW_CHECK(fr.n == 1, "%zu frames", fr.n);
	uint8_t *f = calloc(1, fr.f[0].len + 64);
	GW_CHECK(f, "out of memory");
	memcpy(f, fr.f[0].data, fr.f[0].len);
	*len = fr.f[0].len;
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
	return f;
}

static int decode_forged(uint8_t *f, size_t len, uint64_t out_len, int want,
			 const char *what)
{
	gw_frame_seal(f, len);
	gw_test_guard fg, og;
	gw_test_guard_copy(&fg, f, len);
	gw_test_guard_alloc(&og, out_len * sizeof(float));
	float *out = (float *)og.p;
	for (uint64_t i = 0; i < out_len; i++)
		out[i] = (float)i + 0.25f;
	int rc = gw_decode(fg.p, len, out, out_len);
	GW_CHECK(rc == want, "%s: decode returned %d (%s), expected %s", what, rc,
		 gw_error_name(rc), gw_error_name(want));
	if (rc < 0)
		for (uint64_t i = 0; i < out_len; i++)
			GW_CHECK(out[i] == (float)i + 0.25f,
				 "%s: rejected (%s) but element %llu changed", what,
				 gw_error_name(rc), (unsigned long long)i);
	gw_test_guard_free(&fg);
	gw_test_guard_free(&og);
	return rc;
}

static const float vals[12] = {0.5f, -1.0f, 0.25f, 0.0f, -0.75f, 1.0f,
			       0.1f, -0.2f, 0.3f, -0.4f, 0.9f, -0.6f};

static void test_levels(void **state)
{
	(void)state;
	gw_tensor t = gw_test_dense_tensor(1, vals, 12);
	size_t len;
	uint8_t *f = encode_one(&t, &len);
	GW_CHECK(len == GW_FRAME_HDR_LEN + 8 + 2, "frame of %zu bytes", len);
	decode_forged(f, len, OUT_LEN, 12, "valid frame");
	uint8_t save[10];
	memcpy(save, f + P, 10);
	static const struct {
		float a, b;
		int want;
	} cases[] = {
		{-1.0f, -1.0f, GW_ECORRUPT}, {-0.0f, -1.0f, GW_ECORRUPT},
		{1.0f, 1.0f, GW_ECORRUPT}, {1.0f, 0x1p-149f, GW_ECORRUPT},
		{INFINITY, -1.0f, GW_ECORRUPT}, {1.0f, -INFINITY, GW_ECORRUPT},
		{NAN, -1.0f, GW_ECORRUPT}, {1.0f, NAN, GW_ECORRUPT},
		{0.0f, 0.0f, 12}, {0.0f, -0.0f, 12}, {1.0f, -1.0f, 12},
		{NAN, NAN, 12},
	};
	for (size_t i = 0; i < GW_ARRAY_SIZE(cases); i++) {
		memcpy(f + P, save, 10);
		gw_stf32(f + P, cases[i].a);
		gw_stf32(f + P + 4, cases[i].b);
		char what[64];
		snprintf(what, sizeof(what), "levels %a %a", (double)cases[i].a,
			 (double)cases[i].b);
		decode_forged(f, len, OUT_LEN, cases[i].want, what);
	}
	/* two NaN levels: every value NaN */
	memcpy(f + P, save, 10);
	gw_stf32(f + P, NAN);
	gw_stf32(f + P + 4, NAN);
	gw_frame_seal(f, len);
	float out[12] = {0};
	GW_EXPECT_RC(gw_decode(f, len, out, 12), 12, "NaN levels");
	for (int i = 0; i < 12; i++)
		GW_CHECK(isnan(out[i]), "element %d: %a", i, (double)out[i]);
	free(f);
}

static void test_padding_and_lengths(void **state)
{
	(void)state;
	gw_tensor t = gw_test_dense_tensor(1, vals, 12);
	size_t len;
	uint8_t *f = encode_one(&t, &len);
	uint8_t orig[GW_FRAME_HDR_LEN + 16];
	memcpy(orig, f, len);
	/* 12 bits: bits 4..7 of byte 1 are padding */
	for (int bit = 0; bit < 8; bit++) {
		memcpy(f, orig, len);
		f[B + 1] ^= (uint8_t)(1u << bit);
		decode_forged(f, len, OUT_LEN, bit < 4 ? 12 : GW_ECORRUPT,
			      "padding bit");
	}
	memcpy(f, orig, len);
	f[GW_TEST_OFF_PARAM_LEN] = 4;
	gw_test_st32(f + GW_TEST_OFF_PAYLOAD_LEN, 6);
	decode_forged(f, len, OUT_LEN, GW_ELENGTH, "param_len 4");
	memcpy(f, orig, len);
	gw_test_st32(f + GW_TEST_OFF_PAYLOAD_LEN, 3);
	decode_forged(f, len + 1, OUT_LEN, GW_ELENGTH, "extra payload byte");
	memcpy(f, orig, len);
	gw_test_st32(f + GW_TEST_OFF_PAYLOAD_LEN, 1);
	decode_forged(f, len - 1, OUT_LEN, GW_ELENGTH, "short payload");
	memcpy(f, orig, len);
	gw_test_st32(f + GW_TEST_OFF_COUNT, 17);
	gw_test_st32(f + GW_TEST_OFF_SPAN, 17);
	decode_forged(f, len, OUT_LEN, GW_ELENGTH, "count 17 in 2 bytes");
	memcpy(f, orig, len);
	gw_test_st32(f + GW_TEST_OFF_COUNT, 16);
	gw_test_st32(f + GW_TEST_OFF_SPAN, 16);
	decode_forged(f, len, OUT_LEN, 16, "count 16 in 2 bytes (valid)");
	memcpy(f, orig, len);
	decode_forged(f, len, 11, GW_ERANGE, "out_len 11");
	free(f);
}

static void test_sparse_keys(void **state)
{
	(void)state;
	static const uint64_t keys[5] = {1, 2, 30, 31, 60};
	gw_tensor t = gw_test_sparse_tensor(2, OUT_LEN, keys, 64, vals, 5);
	size_t len;
	uint8_t *f = encode_one(&t, &len);
	GW_CHECK(len == GW_FRAME_HDR_LEN + 8 + 5 * 8 + 1, "frame of %zu bytes", len);
	uint8_t orig[GW_FRAME_HDR_LEN + 64];
	memcpy(orig, f, len);
	decode_forged(f, len, OUT_LEN, 5, "valid sparse frame");
	decode_forged(f, len, 60, GW_ERANGE, "key 60 past out_len 60");
	uint8_t *k = f + P + 8;
	gw_test_st64(k + 8, 1);
	decode_forged(f, len, OUT_LEN, GW_ECORRUPT, "duplicate key");
	memcpy(f, orig, len);
	gw_test_st64(k + 16, 0x100000000ull + 30);
	decode_forged(f, len, OUT_LEN, GW_ECORRUPT, "key beyond span");
	memcpy(f, orig, len);
	f[GW_TEST_OFF_FLAGS] &= (uint8_t)~GW_FF_KEY64;
	decode_forged(f, len, OUT_LEN, GW_ELENGTH, "64-bit keys read as 32");
	/* count 0: "nothing in this range", valid only without a payload */
	memcpy(f, orig, len);
	gw_test_st32(f + GW_TEST_OFF_COUNT, 0);
	gw_test_st32(f + GW_TEST_OFF_PAYLOAD_LEN, 0);
	decode_forged(f, GW_FRAME_HDR_LEN + 8, OUT_LEN, 0, "count 0");
	memcpy(f, orig, len);
	gw_test_st32(f + GW_TEST_OFF_COUNT, 0);
	gw_test_st32(f + GW_TEST_OFF_PAYLOAD_LEN, 1);
	decode_forged(f, GW_FRAME_HDR_LEN + 9, OUT_LEN, GW_ELENGTH,
		      "count 0 with a payload byte");
	memcpy(f, orig, len);
	f[len - 1] |= 0x80;
	decode_forged(f, len, OUT_LEN, GW_ECORRUPT, "sparse padding bit");
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_levels),
		cmocka_unit_test(test_padding_and_lengths),
		cmocka_unit_test(test_sparse_keys),
	};
	return cmocka_run_group_tests_name("onebit_hostile", tests, NULL, NULL);
}
