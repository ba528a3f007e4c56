/* Hostile 3LC frames (valid frames corrupted, then re-sealed so the checksum passes) are rejected with the right GW_E* code before anything is written, without reading past the frame or writing past the output (both end at PROT_NONE pages): bad m (negative, -0, infinite), param_len != 4, start not a multiple of 5, payloads that expand to fewer or more than ceil(count/5) bytes, non-zero pad trits, empty payloads; a NaN m is the poison value and decodes to NaN. Every SIMD path agrees. */
#include "gw_test.h"

#include <float.h>
#include <math.h>

#include "gw_cpu.h"

#define OUT_LEN 400

/* One frame of x at budget 65535, in a buffer with spare room. */
static uint8_t *encode_one(const float *x, size_t n, size_t *len)
{
	gw_encoder *enc = gw_test_encoder(GW_CODEC_3LC);
	gw_tensor t = gw_test_dense_tensor(1, x, n);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, 65535, &fr));
	GW_CHECK(fr.n == 1, "%zu frames", fr.n);
	uint8_t *f = calloc(1, fr.f[0].len + 256);
	GW_CHECK(f, "out of memory");
	memcpy(f, fr.f[0].data, fr.f[0].len);
	*len = fr.f[0].len;
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
	return f;
}

/* Sets the payload of frame f to p[0..plen) (and payload_len), seals it
 * unless told not to, decodes it from an exact guarded copy into a guarded
 * output of out_len floats, and checks the code and, on failure, that no
 * output bit changed. Returns the new frame length. */
static size_t forge(uint8_t *f, const uint8_t *p, size_t plen)
{
	memcpy(f + GW_FRAME_HDR_LEN + 4, p, plen);
	gw_test_st32(f + GW_TEST_OFF_PAYLOAD_LEN, (uint32_t)plen);
	return GW_FRAME_HDR_LEN + 4 + plen;
}

static int decode_forged(uint8_t *f, size_t len, uint64_t out_len, int seal,
			 int want, const char *what)
{
	if (seal)
		gw_frame_seal(f, len);
	int first = -1;
	/* Every ISA this CPU has must give the same verdict. */
	for (int isa = 0; isa <= gw_cpu_best_isa(); isa++) {
		GW_OK_CALL(gw_cpu_force_isa(isa));
		gw_test_guard fg, og;
		gw_test_guard_copy(&fg, f, len);
		gw_test_guard_alloc(&og, out_len * sizeof(float));
		float *out = (float *)og.p;
		for (uint64_t i = 0; i < out_len; i++)
			out[i] = (float)i + 0.25f;
		int rc = gw_decode(fg.p, len, out, out_len);
		GW_CHECK(rc == want, "%s (%s): decode returned %d (%s), expected %s",
			 what, gw_cpu_isa_name(isa), rc, gw_error_name(rc),
			 gw_error_name(want));
		if (rc < 0)
			for (uint64_t i = 0; i < out_len; i++)
				GW_CHECK(out[i] == (float)i + 0.25f,
					 "%s (%s): rejected (%s) but element %llu changed",
					 what, gw_cpu_isa_name(isa), gw_error_name(rc),
					 (unsigned long long)i);
		gw_test_guard_free(&fg);
		gw_test_guard_free(&og);
		first = rc;
	}
	gw_cpu_force_isa(-1);
	return first;
}

/* 12 elements: 3 payload bytes, the last with 3 pad trits. */
static const float vals[12] = {0.5f, -1.0f, 0.25f, 0.0f, -0.75f, 1.0f,
			       0.1f, -0.2f, 0.3f, -0.4f, 0.9f, -0.6f};

#define P (GW_FRAME_HDR_LEN)       /* params: m */
#define T (GW_FRAME_HDR_LEN + 4)   /* payload */

static void test_params(void **state)
{
	(void)state;
	size_t len;
	uint8_t *f = encode_one(vals, 12, &len);
	GW_CHECK(len == T + 3, "frame of %zu bytes", len);
	uint8_t orig[T + 3];
	memcpy(orig, f, len);
	decode_forged(f, len, OUT_LEN, 1, 12, "valid frame");
	static const float bad_m[] = {-1.0f, -0.0f, INFINITY, -INFINITY, -0x1p-149f,
				      -FLT_MAX};
	for (size_t i = 0; i < GW_ARRAY_SIZE(bad_m); i++) {
		memcpy(f, orig, len);
		gw_stf32(f + P, bad_m[i]);
		decode_forged(f, len, OUT_LEN, 1, GW_ECORRUPT, "bad m");
	}
	static const float ok_m[] = {0.0f, 0x1p-149f, FLT_MAX, 3.0f};
	for (size_t i = 0; i < GW_ARRAY_SIZE(ok_m); i++) {
		memcpy(f, orig, len);
		gw_stf32(f + P, ok_m[i]);
		decode_forged(f, len, OUT_LEN, 1, 12, "good m");
	}
	/* Start not on a multiple of 5. */
	for (unsigned st = 1; st < 5; st++) {
		memcpy(f, orig, len);
		gw_test_st64(f + GW_TEST_OFF_START, st);
		decode_forged(f, len, OUT_LEN, 1, GW_ECORRUPT, "start % 5");
	}
	memcpy(f, orig, len);
	gw_test_st64(f + GW_TEST_OFF_START, 385);
	decode_forged(f, len, OUT_LEN, 1, 12, "start 385");
	/* param_len other than 4 (payload shifted accordingly). */
	static const uint8_t plens[] = {0, 3, 5, 8};
	for (size_t i = 0; i < sizeof(plens); i++) {
		uint8_t g[T + 16] = {0};
		memcpy(g, orig, GW_FRAME_HDR_LEN);
		g[GW_TEST_OFF_PARAM_LEN] = plens[i];
		memcpy(g + GW_FRAME_HDR_LEN + plens[i], orig + T, 3);
		size_t glen = GW_FRAME_HDR_LEN + plens[i] + 3;
		decode_forged(g, glen, OUT_LEN, 1, GW_ELENGTH, "param_len");
	}
	/* Not resealed. */
	memcpy(f, orig, len);
	f[len - 1] ^= 1;
	decode_forged(f, len, OUT_LEN, 0, GW_ECHECKSUM, "checksum");
	free(f);
}

static void test_nan_m_poisons(void **state)
{
	(void)state;
	size_t len;
	uint8_t *f = encode_one(vals, 12, &len);
	static const uint32_t nans[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fffffffu};
	for (size_t k = 0; k < GW_ARRAY_SIZE(nans); k++) {
		gw_test_st32(f + P, nans[k]);
		gw_frame_seal(f, len);
		for (int isa = 0; isa <= gw_cpu_best_isa(); isa++) {
			GW_OK_CALL(gw_cpu_force_isa(isa));
			float out[OUT_LEN] = {0};
			GW_EXPECT_RC(gw_decode(f, len, out, OUT_LEN), 12, "NaN m");
			for (int i = 0; i < OUT_LEN; i++)
				GW_CHECK(i < 12 ? isnan(out[i]) : out[i] == 0.0f,
					 "%s: element %d decoded to %a", gw_cpu_isa_name(isa),
					 i, (double)out[i]);
		}
		gw_cpu_force_isa(-1);
	}
	free(f);
}

static void test_payload(void **state)
{
	(void)state;
	size_t len;
	uint8_t *f = encode_one(vals, 12, &len);
	uint8_t orig[T + 3];
	memcpy(orig, f, len);
	/* 12 elements = 3 bytes; the last holds 2 elements and 3 pad digits,
	 * which must be 1: byte % 27 == 13. */
	for (unsigned pad = 0; pad < 27; pad++) {
		memcpy(f, orig, len);
		f[T + 2] = (uint8_t)(f[T + 2] - f[T + 2] % 27 + pad);
		decode_forged(f, len, OUT_LEN, 1, pad == 13 ? 12 : GW_ECORRUPT,
			      "pad trits");
	}
	/* A run byte as last byte is five zeros: pad fine. */
	uint8_t run_last[] = {orig[T], 243};
	len = forge(f, run_last, 2);
	decode_forged(f, len, OUT_LEN, 1, 12, "run as last byte");
	/* Expanding to the wrong number of bytes. */
	static const struct {
		uint8_t p[8];
		size_t n;
		const char *what;
	} bad[] = {
		{{0}, 0, "empty payload"},
		{{121}, 1, "1 byte for 3"},
		{{121, 121}, 2, "2 bytes for 3"},
		{{121, 121, 121, 121}, 4, "4 bytes for 3"},
		{{244}, 1, "run of 3 + nothing... exact"},
		{{245}, 1, "run of 4 for 3"},
		{{243}, 1, "run of 2 for 3"},
		{{255}, 1, "run of 14 for 3"},
		{{121, 243}, 2, "1 + 2 = 3 exact"},
		{{243, 121, 121}, 3, "2 + 1 + 1 for 3"},
		{{255, 255, 255, 255}, 4, "56 for 3"},
	};
	for (size_t i = 0; i < GW_ARRAY_SIZE(bad); i++) {
		memcpy(f, orig, GW_FRAME_HDR_LEN + 4);
		len = forge(f, bad[i].p, bad[i].n);
		uint64_t exp = 0;
		for (size_t k = 0; k < bad[i].n; k++)
			exp += bad[i].p[k] < 243 ? 1 : bad[i].p[k] - 241u;
		decode_forged(f, len, OUT_LEN, 1, exp == 3 ? 12 : GW_ELENGTH, bad[i].what);
	}
	/* A big frame: count 5000 (1000 bytes), payloads one byte short or
	 * long, in many shapes, including long literal stretches the SIMD
	 * paths take 16 bytes at a time. */
	uint8_t *g = calloc(1, GW_FRAME_HDR_LEN + 4 + 4096);
	GW_CHECK(g, "out of memory");
	memcpy(g, orig, GW_FRAME_HDR_LEN + 4);
	gw_test_st32(g + GW_TEST_OFF_COUNT, 5000);
	gw_test_st32(g + GW_TEST_OFF_SPAN, 5000);
	gw_test_rng r = {5};
	for (int round = 0; round < 200; round++) {
		uint8_t p[2048];
		size_t n = 0;
		uint64_t exp = 0;
		uint64_t target = 1000 + (round % 3) - 1;   /* 999, 1000, 1001 */
		while (exp < target) {
			unsigned b;
			switch (gw_test_below(&r, 3)) {
			case 0: b = 243 + (unsigned)gw_test_below(&r, 13); break;
			case 1: b = 121; break;
			default: b = (unsigned)gw_test_below(&r, 243);
			}
			unsigned e = b < 243 ? 1 : b - 241;
			if (exp + e > target)
				b = 121, e = 1;
			p[n++] = (uint8_t)b;
			exp += e;
		}
		size_t glen = forge(g, p, n);
		decode_forged(g, glen, 6000, 1, target == 1000 ? 5000 : GW_ELENGTH,
			      "big frame");
	}
	/* Output too short for the range: GW_ERANGE, nothing written. */
	memcpy(f, orig, len = T + 3);
	decode_forged(f, len, 11, 1, GW_ERANGE, "output of 11 for 12");
	free(g);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_params),
		cmocka_unit_test(test_nan_m_poisons),
		cmocka_unit_test(test_payload),
	};
	return cmocka_run_group_tests_name("3lc_hostile", tests, NULL, NULL);
}
