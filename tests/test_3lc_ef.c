/* 3LC's fused error feedback loses no gradient mass: over 20 rounds of real traces, sum of decoded outputs + final error buffer == sum of inputs within the derived bound 2^-24 * sum_r |c_r| per element (c_r = g_r + e_{r-1}, the only rounding: e_r = c_r - decoded_r is exact); every round's buffer is bit for bit fl(g + e) - decoded; a first round with a zero buffer sends what no feedback sends; without feedback the same sums are far off (the bound has teeth). */
#include "gw_test.h"

#include <math.h>

#include "gw_cpu.h"

#define ROUNDS 20

/* Runs ROUNDS rounds over the gradients grads[r % ng] (each n floats). */
static void conservation(const char *what, float *const *grads, int ng, size_t n,
			 double s, size_t budget)
{
	gw_encoder *enc = gw_test_encoder(GW_CODEC_3LC);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_SPARSITY, s));
	gw_ef *ef = gw_ef_create(n);
	GW_CHECK(ef, "out of memory");
	GW_OK_CALL(gw_encoder_set_ef(enc, ef));
	float *e = gw_ef_data(ef);
	float *prev = malloc(n * sizeof(float));
	float *dec = malloc(n * sizeof(float));
	double *sum_d = calloc(n, sizeof(double)), *sum_g = calloc(n, sizeof(double));
	double *sum_c = calloc(n, sizeof(double)), *sum_abs = calloc(n, sizeof(double));
	GW_CHECK(prev && dec && sum_d && sum_g && sum_c && sum_abs, "out of memory");
	for (int r = 0; r < ROUNDS; r++) {
		const float *g = grads[r % ng];
		memcpy(prev, e, n * sizeof(float));
		gw_tensor t = gw_test_dense_tensor(4, g, n);
		gw_test_frames fr;
		GW_OK_CALL(gw_test_encode_all(enc, &t, budget, &fr));
		memset(dec, 0, n * sizeof(float));
		gw_test_decode_all(&fr, dec, n);
		for (size_t i = 0; i < n; i++) {
			float c = g[i] + prev[i];
			float want = c - dec[i];
			GW_CHECK(gw_test_bits(e[i]) == gw_test_bits(want),
				 "%s s=%g round %d element %zu: e = %a, fl(g + e) - decoded = %a",
				 what, s, r, i, (double)e[i], (double)want);
			sum_d[i] += dec[i];
			sum_g[i] += g[i];
			sum_c[i] += fabs((double)c);
			sum_abs[i] += fabs((double)dec[i]) + fabs((double)g[i]);
		}
		gw_test_frames_free(&fr);
	}
	double worst = 0, worst_noef = 0;
	for (size_t i = 0; i < n; i++) {
		double dev = fabs(sum_d[i] + e[i] - sum_g[i]);
		/* Rounding of each g + e, plus the double sums themselves. */
		double tol = 0x1p-24 * sum_c[i] + 0x1p-48 * sum_abs[i] + 0x1p-1074;
		GW_CHECK(dev <= tol, "%s s=%g element %zu: |sum decoded + e - sum g| = %g "
			 "> tolerance %g: feedback lost gradient mass", what, s, i, dev, tol);
		worst = fmax(worst, dev / tol);
		/* Control: what is still in e is what the sums miss. */
		worst_noef = fmax(worst_noef, fabs(sum_d[i] - sum_g[i]) / tol);
	}
	print_message("  %s s=%g: worst deviation %.3g of tolerance (%.3g without e)\n",
		      what, s, worst, worst_noef);
	GW_CHECK(worst_noef > 100, "%s: leaving e out is only %g tolerances off: the "
		 "tolerance has no teeth", what, worst_noef);
	free(prev);
	free(dec);
	free(sum_d);
	free(sum_g);
	free(sum_c);
	free(sum_abs);
	gw_ef_free(ef);
	gw_encoder_free(enc);
}

static void test_cnn_iterations(void **state)
{
	(void)state;
	float *g[GW_TEST_CNN_ITERS];
	size_t n = 0;
	for (int it = 0; it < GW_TEST_CNN_ITERS; it++)
		g[it] = gw_test_load_cnn_iter(it, &n);
	static const double sp[] = {1.0, 1.5, 1.75, 1.9};
	for (int isa = 0; isa <= gw_cpu_best_isa(); isa++) {
		GW_OK_CALL(gw_cpu_force_isa(isa));
		for (size_t k = 0; k < GW_ARRAY_SIZE(sp); k++)
			conservation(gw_cpu_isa_name(isa), g, GW_TEST_CNN_ITERS, n, sp[k],
				     k % 2 ? 64 : 1424);
	}
	gw_cpu_force_isa(-1);
	for (int it = 0; it < GW_TEST_CNN_ITERS; it++)
		free(g[it]);
}

static void test_single_traces(void **state)
{
	(void)state;
	for (int i = 0; i < GW_TEST_N_DENSE; i++) {
		gw_test_dense d;
		gw_test_load_dense(i, &d);
		float *g[1] = {d.v};
		conservation(d.name, g, 1, d.n, 1.5, 1424);
		gw_test_dense_free(&d);
	}
}

/* Round one with a zero buffer sends exactly what no feedback sends. */
static void test_first_round(void **state)
{
	(void)state;
	size_t n;
	float *x = gw_test_load_cnn_iter(2, &n);
	x[3] = -0.0f;   /* -0 + 0 is +0: still the same frames */
	gw_encoder *a = gw_test_encoder(GW_CODEC_3LC), *b = gw_test_encoder(GW_CODEC_3LC);
	gw_ef *ef = gw_ef_create(n);
	GW_OK_CALL(gw_encoder_set_ef(b, ef));
	gw_tensor t = gw_test_dense_tensor(1, x, n);
	gw_test_frames fa, fb;
	GW_OK_CALL(gw_test_encode_all(a, &t, 1424, &fa));
	GW_OK_CALL(gw_test_encode_all(b, &t, 1424, &fb));
	GW_CHECK(fa.n == fb.n, "%zu vs %zu frames", fa.n, fb.n);
	for (size_t j = 0; j < fa.n; j++)
		GW_CHECK(fa.f[j].len == fb.f[j].len &&
				 !memcmp(fa.f[j].data, fb.f[j].data, fa.f[j].len),
			 "frame %zu differs with a zero error buffer", j);
	/* Detached again: no feedback, the buffer stays as it was. */
	float keep = gw_ef_data(ef)[0];
	GW_OK_CALL(gw_encoder_set_ef(b, NULL));
	gw_test_frames fc;
	GW_OK_CALL(gw_test_encode_all(b, &t, 1424, &fc));
	GW_CHECK(gw_test_bits(gw_ef_data(ef)[0]) == gw_test_bits(keep), "detached buffer written");
	GW_CHECK(fc.n == fa.n && !memcmp(fc.f[0].data, fa.f[0].data, fa.f[0].len),
		 "detached encoder differs");
	/* A buffer of another size is refused. */
	gw_ef *small = gw_ef_create(n - 1);
	GW_OK_CALL(gw_encoder_set_ef(b, small));
	GW_EXPECT_RC(gw_encode_begin(b, &t), GW_EINVAL, "ef of dim n - 1");
	gw_test_frames_free(&fa);
	gw_test_frames_free(&fb);
	gw_test_frames_free(&fc);
	gw_ef_free(ef);
	gw_ef_free(small);
	gw_encoder_free(a);
	gw_encoder_free(b);
	free(x);
}

int main(int argc, char **argv)
{
	(void)argc;
	gw_test_require_traces(argv[0]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cnn_iterations),
		cmocka_unit_test(test_single_traces),
		cmocka_unit_test(test_first_round),
	};
	return cmocka_run_group_tests_name("3lc_ef", tests, NULL, NULL);
}
