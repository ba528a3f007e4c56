/* 3LC's NaN/Inf policy (int8's): a NaN or +-Inf anywhere in g + e (in g, in the error buffer, or from g + e overflowing) sends m = NaN for the whole tensor, every element decodes to NaN, the frames are nothing but zero runs, and the error buffer restarts at 0, from which the next finite round proceeds normally; same on every SIMD path. */
#include "gw_test.h"

#include <float.h>
#include <math.h>

#include "gw_cpu.h"

#define N 5003

static void expect_poison(const char *what, gw_encoder *enc, const float *x,
			  gw_ef *ef)
{
	gw_tensor t = gw_test_dense_tensor(8, x, N);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, 100, &fr));
	/* Budget 100: 60 payload bytes of runs cover 60 * 70 elements. */
	GW_CHECK(fr.n == 2, "%s: %zu frames for a poisoned tensor", what, fr.n);
	for (size_t j = 0; j < fr.n; j++) {
		gw_frame_info h;
		GW_OK_CALL(gw_frame_verify(fr.f[j].data, fr.f[j].len, &h));
		const uint8_t *p = fr.f[j].data + GW_FRAME_HDR_LEN;
		GW_CHECK(gw_test_ld32(p) == 0x7fc00000u, "%s: frame %zu m bits %08x",
			 what, j, gw_test_ld32(p));
		for (uint32_t k = 0; k < h.payload_len; k++)
			GW_CHECK(p[4 + k] >= 243 || p[4 + k] == 121,
				 "%s: frame %zu payload byte %u is %u, not a zero run",
				 what, j, k, p[4 + k]);
	}
	float *out = calloc(N, sizeof(float));
	GW_CHECK(out, "out of memory");
	gw_test_decode_all(&fr, out, N);
	for (size_t i = 0; i < N; i++)
		GW_CHECK(isnan(out[i]), "%s: element %zu decoded to %a", what, i,
			 (double)out[i]);
	if (ef)
		for (size_t i = 0; i < N; i++)
			GW_CHECK(gw_test_bits(gw_ef_data(ef)[i]) == 0,
				 "%s: error buffer %zu is %a, not +0", what, i,
				 (double)gw_ef_data(ef)[i]);
	free(out);
	gw_test_frames_free(&fr);
}

/* A finite round after the poison: as if the buffer had been reset. */
static void expect_fresh(const char *what, gw_encoder *enc, const float *x)
{
	gw_encoder *ref = gw_test_encoder(GW_CODEC_3LC);
	gw_tensor t = gw_test_dense_tensor(8, x, N);
	gw_test_frames a, b;
	GW_OK_CALL(gw_test_encode_all(enc, &t, 1424, &a));
	GW_OK_CALL(gw_test_encode_all(ref, &t, 1424, &b));
	GW_CHECK(a.n == b.n, "%s: %zu vs %zu frames after the poison", what, a.n, b.n);
	for (size_t j = 0; j < a.n; j++)
		GW_CHECK(a.f[j].len == b.f[j].len && !memcmp(a.f[j].data, b.f[j].data, a.f[j].len),
			 "%s: frame %zu after the poison differs from a fresh encode", what, j);
	gw_test_frames_free(&a);
	gw_test_frames_free(&b);
	gw_encoder_free(ref);
}

static void test_policy(void **state)
{
	(void)state;
	float *x = malloc(N * sizeof(float));
	GW_CHECK(x, "out of memory");
	gw_test_rng r = {3};
	static const uint32_t bad[] = {0x7fc00000u, 0xffc00001u, 0x7f800001u,
				       0x7f800000u, 0xff800000u};
	static const size_t where[] = {0, 1, 319, 320, N / 2, N - 1};
	for (int isa = 0; isa <= gw_cpu_best_isa(); isa++) {
		GW_OK_CALL(gw_cpu_force_isa(isa));
		for (size_t b = 0; b < GW_ARRAY_SIZE(bad); b++) {
			for (size_t w = 0; w < GW_ARRAY_SIZE(where); w++) {
				char what[96];
				snprintf(what, sizeof(what), "%s: %08x at %zu",
					 gw_cpu_isa_name(isa), bad[b], where[w]);
				for (size_t i = 0; i < N; i++)
					x[i] = gw_test_uniform(&r, -1.0f, 1.0f);
				/* In g, without feedback. */
				gw_encoder *enc = gw_test_encoder(GW_CODEC_3LC);
				x[where[w]] = gw_test_float(bad[b]);
				expect_poison(what, enc, x, NULL);
				/* In g, with feedback. */
				gw_ef *ef = gw_ef_create(N);
				GW_OK_CALL(gw_encoder_set_ef(enc, ef));
				for (size_t i = 0; i < N; i++)
					gw_ef_data(ef)[i] = 0.5f;
				expect_poison(what, enc, x, ef);
				x[where[w]] = 0.25f;
				expect_fresh(what, enc, x);
				/* In the error buffer. */
				gw_ef_data(ef)[where[w]] = gw_test_float(bad[b]);
				expect_poison(what, enc, x, ef);
				expect_fresh(what, enc, x);
				gw_ef_free(ef);
				gw_encoder_free(enc);
			}
		}
		/* g + e overflowing to infinity. */
		gw_encoder *enc = gw_test_encoder(GW_CODEC_3LC);
		gw_ef *ef = gw_ef_create(N);
		GW_OK_CALL(gw_encoder_set_ef(enc, ef));
		for (size_t i = 0; i < N; i++)
			x[i] = gw_test_uniform(&r, -1.0f, 1.0f);
		x[777] = FLT_MAX;
		gw_ef_data(ef)[777] = FLT_MAX;
		expect_poison("g + e overflows", enc, x, ef);
		/* FLT_MAX alone is finite: m = FLT_MAX (s * max clamped). */
		GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_SPARSITY, 1.9));
		gw_tensor t = gw_test_dense_tensor(8, x, N);
		gw_test_frames fr;
		GW_OK_CALL(gw_test_encode_all(enc, &t, 65535, &fr));
		GW_CHECK(gw_test_float(gw_test_ld32(fr.f[0].data + GW_FRAME_HDR_LEN)) == FLT_MAX,
			 "m of a tensor holding FLT_MAX at s = 1.9");
		float *out = calloc(N, sizeof(float));
		gw_test_decode_all(&fr, out, N);
		GW_CHECK(out[777] == FLT_MAX, "FLT_MAX decoded to %a", (double)out[777]);
		GW_CHECK(gw_ef_data(ef)[777] == 0.0f, "error of FLT_MAX: %a",
			 (double)gw_ef_data(ef)[777]);
		free(out);
		gw_test_frames_free(&fr);
		gw_ef_free(ef);
		gw_encoder_free(enc);
	}
	gw_cpu_force_isa(-1);
	free(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy),
	};
	return cmocka_run_group_tests_name("3lc_nonfinite", tests, NULL, NULL);
}
