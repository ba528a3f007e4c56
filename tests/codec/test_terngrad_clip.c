/* terngrad's clipping (clip, in standard deviations; 0 = off, default the paper's 2.5): the frames' scale is the largest magnitude without it and clip * sigma of the tensor with it; every value at or beyond the scale decodes to +-scale; on real gradients (the CNN's layers) the one-round L2 error over 40 seeds is well below the unclipped one (TernGrad's reason to clip); an all-equal tensor (sigma 0) is not clipped to nothing; and clip is bounded to [0, 100]. */
#include "gw_test.h"

#include <math.h>

#define SEEDS 40

/* The frame's scale and the one-round ||x - x'|| / ||x|| of one encode. */
static double one_round(const float *x, size_t n, double clip, double seed, float *scale)
{
	char params[64];
	snprintf(params, sizeof(params), "clip=%g,seed=%.0f", clip, seed);
	gw_tensor t = gw_test_dense_tensor(3, x, n);
	gw_test_frames fr;
	gw_test_encode_with(GW_CODEC_TERNGRAD, params, &t, 1424, &fr, "clip");
	GW_CHECK(fr.n > 0, "clip %g: no frame", clip);
	uint32_t u = gw_test_ld32(fr.f[0].data + GW_FRAME_HDR_LEN);
	memcpy(scale, &u, 4);
	float *out = malloc(n * sizeof(float));
	GW_CHECK(out, "out of memory");
	gw_test_fill(out, n, 0.0f);
	gw_test_decode_all(&fr, out, n);
	gw_test_frames_free(&fr);
	double e = 0, xx = 0;
	for (size_t i = 0; i < n; i++) {
		if (fabsf(x[i]) >= *scale)
			GW_CHECK(out[i] == (x[i] > 0 ? *scale : -*scale),
				 "clip %g: element %zu (%a) at or beyond the scale %a decoded "
				 "to %a", clip, i, (double)x[i], (double)*scale, (double)out[i]);
		e += ((double)x[i] - out[i]) * ((double)x[i] - out[i]);
		xx += (double)x[i] * x[i];
	}
	free(out);
	return sqrt(e / xx);
}

static void test_real_layers(void **state)
{
	(void)state;
	const char *layers[] = {"cnn/it100_fc.weight.f32", "cnn/it100_conv2.weight.f32",
				"cnn/it001_conv1.weight.f32"};
	for (size_t l = 0; l < sizeof(layers) / sizeof(layers[0]); l++) {
		int idx = -1;
		for (int i = 0; i < GW_TEST_N_DENSE; i++)
			if (!strcmp(gw_test_dense_traces[i], layers[l]))
				idx = i;
		GW_CHECK(idx >= 0, "no trace %s", layers[l]);
		gw_test_dense d;
		gw_test_load_dense(idx, &d);
		double mx = 0, s1 = 0, s2 = 0;
		for (size_t i = 0; i < d.n; i++) {
			mx = fmax(mx, fabs((double)d.v[i]));
			s1 += d.v[i];
			s2 += (double)d.v[i] * d.v[i];
		}
		double sigma = sqrt(s2 / d.n - (s1 / d.n) * (s1 / d.n));
		double e0 = 0, e25 = 0;
		for (int s = 0; s < SEEDS; s++) {
			float m0, m25;
			e0 += one_round(d.v, d.n, 0, 11 + s, &m0);
			e25 += one_round(d.v, d.n, 2.5, 11 + s, &m25);
			GW_CHECK(m0 == (float)mx, "%s clip 0: scale %a, largest magnitude %a",
				 layers[l], (double)m0, mx);
			GW_CHECK(fabs(m25 - 2.5 * sigma) <= 1e-6 * 2.5 * sigma && m25 < m0,
				 "%s clip 2.5: scale %a, 2.5 sigma %a, largest %a", layers[l],
				 (double)m25, 2.5 * sigma, mx);
		}
		e0 /= SEEDS;
		e25 /= SEEDS;
		print_message("%s: %zu values, max %.3g = %.1f sigma; one-round error "
			      "%.3f unclipped, %.3f at 2.5 sigma (%.2fx)\n", layers[l], d.n, mx,
			      mx / sigma, e0, e25, e0 / e25);
		GW_CHECK(e25 < 0.8 * e0, "%s: clipping at 2.5 sigma left the error at %.3f "
			 "of %.3f", layers[l], e25, e0);
		gw_test_dense_free(&d);
	}
}

/* sigma 0: clip * sigma would zero every value; the scale stays. */
static void test_constant_tensor(void **state)
{
	(void)state;
	float x[40];
	gw_test_fill(x, 40, 0.25f);
	float m;
	double e = one_round(x, 40, 2.5, 5, &m);
	GW_CHECK(m == 0.25f && e == 0.0, "constant tensor: scale %a, error %g", (double)m, e);
}

static void test_bounds(void **state)
{
	(void)state;
	gw_bounds b;
	GW_OK_CALL(gw_param_bounds(GW_CODEC_TERNGRAD, GW_PARAM_CLIP, &b));
	GW_CHECK(b.lo == 0 && b.hi == 100 && b.def == 2.5 && !b.integer,
		 "clip bounds [%g, %g] default %g", b.lo, b.hi, b.def);
	gw_encoder *enc = gw_test_encoder(GW_CODEC_TERNGRAD);
	GW_EXPECT_RC(gw_encoder_set_param(enc, GW_PARAM_CLIP, -1), GW_EBOUNDS, "clip -1");
	GW_EXPECT_RC(gw_encoder_set_param(enc, GW_PARAM_CLIP, 101), GW_EBOUNDS, "clip 101");
	GW_EXPECT_RC(gw_encoder_set_param(enc, GW_PARAM_CLIP, NAN), GW_EBOUNDS, "clip NaN");
	gw_encoder_free(enc);
	/* Other codecs do not take it. */
	enc = gw_test_encoder(GW_CODEC_INT8);
	GW_CHECK(gw_encoder_set_param(enc, GW_PARAM_CLIP, 1) < 0, "int8 took clip");
	gw_encoder_free(enc);
}

GW_TEST_MAIN("terngrad_clip", 1, cmocka_unit_test(test_real_layers),
	     cmocka_unit_test(test_constant_tensor), cmocka_unit_test(test_bounds))
