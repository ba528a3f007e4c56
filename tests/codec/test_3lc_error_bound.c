/* 3LC's error bound holds frame by frame: every value a frame decodes to is -m, 0 or +m (m its param, = (float)(s * max|x|) of the tensor), with the input's sign, and |x - decoded| <= m/2 for every element, on every real trace at s = 1, 1.5, 1.75, 1.9 and on random data; decoding is exactly the rounding rule (2|x| > m gives sign(x) * m). */
#include "gw_test.h"

#include <math.h>

static const double sparsities[] = {1.0, 1.5, 1.75, 1.9};

static void check_tensor(const char *what, const float *x, size_t n, double s,
			 size_t budget)
{
	double mx = 0;
	for (size_t i = 0; i < n; i++)
		mx = fmax(mx, fabs((double)x[i]));
	float m = (float)(s * mx);
	gw_encoder *enc = gw_test_encoder(GW_CODEC_3LC);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_SPARSITY, s));
	gw_tensor t = gw_test_dense_tensor(3, x, n);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, budget, &fr));
	float *out = malloc(n * sizeof(float));
	GW_CHECK(out, "out of memory");
	double worst = 0;
	for (size_t j = 0; j < fr.n; j++) {
		gw_frame_info h;
		GW_OK_CALL(gw_frame_verify(fr.f[j].data, fr.f[j].len, &h));
		float fm = gw_test_float(gw_test_ld32(fr.f[j].data + GW_FRAME_HDR_LEN));
		GW_CHECK(gw_test_bits(fm) == gw_test_bits(m),
			 "%s s=%g frame %zu: m %a, expected %a", what, s, j,
			 (double)fm, (double)m);
		/* This frame alone, into zeros. */
		memset(out + h.start, 0, h.count * sizeof(float));
		GW_EXPECT_RC(gw_decode(fr.f[j].data, fr.f[j].len, out, n), (int)h.count,
			     "%s s=%g frame %zu", what, s, j);
		for (uint64_t i = h.start; i < h.start + h.count; i++) {
			float y = out[i];
			GW_CHECK(y == 0.0f || y == fm || y == -fm,
				 "%s s=%g: element %llu decoded to %a (m %a)", what, s,
				 (unsigned long long)i, (double)y, (double)fm);
			double err = fabs((double)x[i] - (double)y);
			GW_CHECK(err <= (double)fm / 2,
				 "%s s=%g frame %zu: |x - y| = %g > m/2 = %g at %llu "
				 "(x %a, y %a)", what, s, j, err, (double)fm / 2,
				 (unsigned long long)i, (double)x[i], (double)y);
			worst = fmax(worst, fm > 0 ? err / fm : 0);
			/* The rounding rule itself, in double. */
			double c2 = 2.0 * (double)x[i];
			float want = c2 > fm ? fm : c2 < -(double)fm ? -fm : 0.0f;
			GW_CHECK(gw_test_bits(y) == gw_test_bits(want),
				 "%s s=%g: element %llu (%a) decoded to %a, rule says %a",
				 what, s, (unsigned long long)i, (double)x[i], (double)y,
				 (double)want);
		}
	}
	GW_CHECK(worst <= 0.5, "%s: worst error %g m", what, worst);
	free(out);
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
}

/* One dense trace at every sparsity, budget 1424. */
static void check_trace(const gw_test_dense *d, void *arg)
{
	(void)arg;
	for (size_t k = 0; k < GW_ARRAY_SIZE(sparsities); k++)
		check_tensor(d->name, d->v, d->n, sparsities[k], 1424);
}

static void test_traces(void **state)
{
	(void)state;
	gw_test_each_trace(check_trace, NULL, NULL);
	for (int it = 0; it < GW_TEST_CNN_ITERS; it++) {
		size_t n;
		float *x = gw_test_load_cnn_iter(it, &n);
		for (size_t k = 0; k < GW_ARRAY_SIZE(sparsities); k++) {
			check_tensor("cnn iteration", x, n, sparsities[k], 64);
			check_tensor("cnn iteration", x, n, sparsities[k], 65535);
		}
		free(x);
	}
}

static void test_random(void **state)
{
	(void)state;
	gw_test_rng r = {11};
	for (int round = 0; round < 40; round++) {
		size_t n = 1 + (size_t)gw_test_below(&r, 20000);
		float *x = malloc(n * sizeof(float));
		GW_CHECK(x, "out of memory");
		float scale = ldexpf(1.0f, (int)gw_test_below(&r, 200) - 100);
		for (size_t i = 0; i < n; i++) {
			switch (round % 4) {
			case 0:   /* uniform */
				x[i] = gw_test_uniform(&r, -scale, scale);
				break;
			case 1:   /* heavy tail */
				x[i] = gw_test_uniform(&r, -scale, scale) *
				       ldexpf(1.0f, -(int)gw_test_below(&r, 20));
				break;
			case 2:   /* a few values only */
				x[i] = scale * (float)((int)gw_test_below(&r, 5) - 2) / 2;
				break;
			default:  /* mostly zeros */
				x[i] = gw_test_below(&r, 50) ? 0.0f
							      : gw_test_uniform(&r, -scale, scale);
			}
		}
		double s = 1.0 + gw_test_uniform(&r, 0.0f, 0.999f);
		check_tensor("random", x, n, s, 64 + (size_t)gw_test_below(&r, 3000));
		free(x);
	}
}

GW_TEST_MAIN("3lc_error_bound", 1,
	     cmocka_unit_test(test_traces), cmocka_unit_test(test_random))
