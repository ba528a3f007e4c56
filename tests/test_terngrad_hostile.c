/* Hostile terngrad frames (valid frames corrupted, then re-sealed so the checksum passes) are rejected with the right GW_E* code and leave the output untouched: trit bytes above 242, non-zero padding trits, negative, -0, infinite scales, wrong param or payload lengths, dense starts off a multiple of 5, bad keys; a NaN scale is the poison value and decodes to NaN. */
#include "gw_test.h"

#include <math.h>

#define OUT_LEN 64

/* One frame of t at budget 65535, copied into a buffer with spare room. */
static uint8_t *encode_one(const gw_tensor *t, size_t *len)
{
	gw_encoder *enc = gw_test_encoder(GW_CODEC_TERNGRAD);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_SEED, 3));
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

/* Seals f[0..len) (unless told not to), decodes it from an exact guarded
 * copy into a guarded output of out_len floats, and checks the code and,
 * on failure, that no output bit changed. */
static int decode_forged(uint8_t *f, size_t len, uint64_t out_len, int seal,
			 int want, const char *what)
{
	if (seal)
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

#define P (GW_FRAME_HDR_LEN)       /* params: the scale */
#define T (GW_FRAME_HDR_LEN + 4)   /* trit bytes */

static void test_dense_payload(void **state)
{
	(void)state;
	gw_tensor t = gw_test_dense_tensor(1, vals, 12);
	size_t len;
	uint8_t *f = encode_one(&t, &len);
	GW_CHECK(len == GW_FRAME_HDR_LEN + 4 + 3, "frame of %zu bytes", len);
	decode_forged(f, len, OUT_LEN, 1, 12, "valid frame");

	uint8_t save[16];
	memcpy(save, f + P, 7);
	static const uint8_t bad_bytes[] = {243, 250, 255};
	for (size_t i = 0; i < sizeof(bad_bytes); i++) {
		for (int j = 0; j < 3; j++) {
			memcpy(f + P, save, 7);
			f[T + j] = bad_bytes[i];
			decode_forged(f, len, OUT_LEN, 1, GW_ECORRUPT, "trit byte > 242");
		}
	}
	/* 12 trits: the last byte holds 2 and 3 padding digits, which must be
	 * 1 (q = 0): byte % 27 == 13. */
	for (unsigned pad = 0; pad < 27; pad++) {
		memcpy(f + P, save, 7);
		f[T + 2] = (uint8_t)(f[T + 2] - f[T + 2] % 27 + pad);
		decode_forged(f, len, OUT_LEN, 1, pad == 13 ? 12 : GW_ECORRUPT,
			      "padding trits");
	}
	static const float bad_scale[] = {-1.0f, -0.0f, INFINITY, -INFINITY,
					  -0x1p-149f};
	for (size_t i = 0; i < GW_ARRAY_SIZE(bad_scale); i++) {
		memcpy(f + P, save, 7);
		gw_stf32(f + P, bad_scale[i]);
		decode_forged(f, len, OUT_LEN, 1, GW_ECORRUPT, "bad scale");
	}
	memcpy(f + P, save, 7);
	f[len - 1] ^= 1;   /* not resealed */
	decode_forged(f, len, OUT_LEN, 0, GW_ECHECKSUM, "checksum");
	memcpy(f + P, save, 7);
	free(f);
}

static void test_nan_scale_poisons(void **state)
{
	(void)state;
	gw_tensor t = gw_test_dense_tensor(1, vals, 12);
	size_t len;
	uint8_t *f = encode_one(&t, &len);
	gw_stf32(f + P, NAN);
	gw_frame_seal(f, len);
	float out[OUT_LEN] = {0};
	GW_EXPECT_RC(gw_decode(f, len, out, OUT_LEN), 12, "NaN scale");
	for (int i = 0; i < OUT_LEN; i++)
		GW_CHECK(i < 12 ? isnan(out[i]) : out[i] == 0.0f,
			 "element %d decoded to %a", i, (double)out[i]);
	free(f);
}

static void test_lengths(void **state)
{
	(void)state;
	gw_tensor t = gw_test_dense_tensor(1, vals, 12);
	size_t len;
	uint8_t *f = encode_one(&t, &len);
	uint8_t orig[GW_FRAME_HDR_LEN + 8];
	memcpy(orig, f, len);

	/* param_len 0, the scale counted as payload */
	f[GW_TEST_OFF_PARAM_LEN] = 0;
	gw_test_st32(f + GW_TEST_OFF_PAYLOAD_LEN, 7);
	decode_forged(f, len, OUT_LEN, 1, GW_ELENGTH, "param_len 0");
	/* param_len 5 */
	memcpy(f, orig, len);
	f[GW_TEST_OFF_PARAM_LEN] = 5;
	gw_test_st32(f + GW_TEST_OFF_PAYLOAD_LEN, 2);
	decode_forged(f, len, OUT_LEN, 1, GW_ELENGTH, "param_len 5");
	/* one payload byte too many (a 121 byte: valid trits) */
	memcpy(f, orig, len);
	f[len] = 121;
	gw_test_st32(f + GW_TEST_OFF_PAYLOAD_LEN, 4);
	decode_forged(f, len + 1, OUT_LEN, 1, GW_ELENGTH, "extra byte");
	/* one too few */
	memcpy(f, orig, len);
	gw_test_st32(f + GW_TEST_OFF_PAYLOAD_LEN, 2);
	decode_forged(f, len - 1, OUT_LEN, 1, GW_ELENGTH, "short payload");
	/* count 16 needs 4 bytes */
	memcpy(f, orig, len);
	gw_test_st32(f + GW_TEST_OFF_COUNT, 16);
	gw_test_st32(f + GW_TEST_OFF_SPAN, 16);
	decode_forged(f, len, OUT_LEN, 1, GW_ELENGTH, "count 16");
	/* count 10 needs 2 */
	memcpy(f, orig, len);
	gw_test_st32(f + GW_TEST_OFF_COUNT, 10);
	gw_test_st32(f + GW_TEST_OFF_SPAN, 10);
	decode_forged(f, len, OUT_LEN, 1, GW_ELENGTH, "count 10");
	/* range past the output */
	memcpy(f, orig, len);
	decode_forged(f, len, 11, 1, GW_ERANGE, "out_len 11");
	gw_test_st64(f + GW_TEST_OFF_START, OUT_LEN - 11);
	decode_forged(f, len, OUT_LEN, 1, GW_ERANGE, "start past end");
	/* dense frames start on a multiple of 5 */
	for (uint64_t st = 1; st < 10; st++) {
		memcpy(f, orig, len);
		gw_test_st64(f + GW_TEST_OFF_START, st);
		decode_forged(f, len, OUT_LEN, 1, st % 5 ? GW_ECORRUPT : 12,
			      "start not a multiple of 5");
	}
	/* truncated buffer */
	memcpy(f, orig, len);
	decode_forged(f, len - 1, OUT_LEN, 1, GW_ETRUNC, "truncated");
	free(f);
}

static void test_sparse_keys(void **state)
{
	(void)state;
	static const uint32_t keys[7] = {3, 5, 6, 20, 21, 40, 63};
	gw_tensor t = gw_test_sparse_tensor(2, OUT_LEN, keys, 32, vals, 7);
	size_t len;
	uint8_t *f = encode_one(&t, &len);
	GW_CHECK(len == GW_FRAME_HDR_LEN + 4 + 7 * 4 + 2, "frame of %zu bytes", len);
	uint8_t orig[GW_FRAME_HDR_LEN + 40];
	memcpy(orig, f, len);
	decode_forged(f, len, OUT_LEN, 1, 7, "valid sparse frame");
	decode_forged(f, len, 63, 1, GW_ERANGE, "key 63 past out_len 63");
	uint8_t *k = f + P + 4;
	gw_test_st32(k + 4, 3);   /* duplicate */
	decode_forged(f, len, OUT_LEN, 1, GW_ECORRUPT, "duplicate key");
	memcpy(f, orig, len);
	gw_test_st32(k + 8, 4);   /* descending */
	decode_forged(f, len, OUT_LEN, 1, GW_ECORRUPT, "descending keys");
	memcpy(f, orig, len);
	gw_test_st32(k, 2);       /* below start */
	decode_forged(f, len, OUT_LEN, 1, GW_ECORRUPT, "key below start");
	memcpy(f, orig, len);
	gw_test_st32(f + GW_TEST_OFF_SPAN, 60);   /* last key 63 >= 3 + 60 */
	decode_forged(f, len, OUT_LEN, 1, GW_ECORRUPT, "key past span");
	memcpy(f, orig, len);
	f[GW_TEST_OFF_FLAGS] |= GW_FF_KEY64;    /* lengths no longer fit */
	decode_forged(f, len, OUT_LEN, 1, GW_ELENGTH, "KEY64 flag on 32-bit keys");
	/* count 0: "nothing in this range", valid only without a payload */
	memcpy(f, orig, len);
	gw_test_st32(f + GW_TEST_OFF_COUNT, 0);
	gw_test_st32(f + GW_TEST_OFF_PAYLOAD_LEN, 0);
	decode_forged(f, GW_FRAME_HDR_LEN + 4, OUT_LEN, 1, 0, "count 0");
	memcpy(f, orig, len);
	gw_test_st32(f + GW_TEST_OFF_COUNT, 0);
	gw_test_st32(f + GW_TEST_OFF_PAYLOAD_LEN, 1);
	decode_forged(f, GW_FRAME_HDR_LEN + 5, OUT_LEN, 1, GW_ELENGTH,
		      "count 0 with a payload byte");
	memcpy(f, orig, len);
	f[len - 1] = 200;   /* 2 entries + 3 padding digits: byte % 27 == 13 */
	decode_forged(f, len, OUT_LEN, 1, GW_ECORRUPT, "sparse padding");
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dense_payload),
		cmocka_unit_test(test_nan_scale_poisons),
		cmocka_unit_test(test_lengths),
		cmocka_unit_test(test_sparse_keys),
	};
	return cmocka_run_group_tests_name("terngrad_hostile", tests, NULL, NULL);
}
