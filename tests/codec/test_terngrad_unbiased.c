/* terngrad without clipping (clip=0) is unbiased: over many seeds the mean decoded value of every element of a real trace converges to the input, inside a Bernstein bound at per-element failure probability 1e-9 (plus the 2^-24 resolution of the draws), and the mean of the tensor's sum lies within 6 sigma of the true sum. */
#include "gw_test.h"

#include <math.h>

#define SEEDS 3000
#define DELTA 1e-9            /* per-element failure probability */

/* Bernstein: for the mean of N draws of a variable in [0, 1] with variance
 * v, P(|mean - E| >= t) <= 2 exp(-N t^2 / (2 (v + t / 3))). The t that
 * makes the right side delta. */
static double bernstein(double v, double n, double delta)
{
	double l = log(2.0 / delta);
	double b = 2.0 * l / 3.0;
	return (b + sqrt(b * b + 8.0 * n * l * v)) / (2.0 * n);
}

static void unbiased(const char *trace, size_t budget)
{
	int idx = -1;
	for (int i = 0; i < GW_TEST_N_DENSE; i++)
		if (!strcmp(gw_test_dense_traces[i], trace))
			idx = i;
	GW_CHECK(idx >= 0, "no trace %s", trace);
	gw_test_dense d;
	gw_test_load_dense(idx, &d);
	double m = 0;
	for (size_t i = 0; i < d.n; i++)
		m = fmax(m, fabs((double)d.v[i]));
	GW_CHECK(m > 0, "%s is all zeros", trace);

	double *sum = calloc(d.n, sizeof(double));
	float *out = malloc(d.n * sizeof(float));
	GW_CHECK(sum && out, "out of memory");
	gw_encoder *enc = gw_test_encoder(GW_CODEC_TERNGRAD);
	/* Unclipped: clipping (the default) is biased by design beyond
	 * clip * sigma (test_terngrad_clip). */
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_CLIP, 0));
	gw_tensor t = gw_test_dense_tensor(11, d.v, d.n);
	uint8_t *buf = malloc(GW_FRAME_MAX);
	GW_CHECK(buf, "out of memory");
	for (int s = 0; s < SEEDS; s++) {
		GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_SEED, 77 + 1000003.0 * s));
		GW_OK_CALL(gw_encode_begin(enc, &t));
		gw_test_fill(out, d.n, 0.0f);
		int n;
		while ((n = gw_encode_next(enc, buf, budget)) > 0)
			GW_OK_CALL(gw_decode(buf, (size_t)n, out, d.n));
		GW_OK_CALL(n);
		for (size_t i = 0; i < d.n; i++)
			sum[i] += out[i];
	}

	double total_x = 0, total_mean = 0, total_var = 0, worst = 0;
	size_t worst_i = 0;
	for (size_t i = 0; i < d.n; i++) {
		double p = fabs((double)d.v[i]) / m;
		double v = p * (1.0 - p);
		double mean = sum[i] / SEEDS;
		double err = fabs(mean - (double)d.v[i]) / m;
		double tol = bernstein(v, SEEDS, DELTA) + 0x1p-24;
		GW_CHECK(err <= tol, "%s element %zu: x %a, mean over %d seeds %a: "
			 "error %.3g m > bound %.3g m (p %.4f)", trace, i,
			 (double)d.v[i], SEEDS, mean, err, tol, p);
		if (err / tol > worst) {
			worst = err / tol;
			worst_i = i;
		}
		total_x += d.v[i];
		total_mean += mean;
		total_var += v * m * m / SEEDS;
	}
	double sigma = sqrt(total_var);
	double tot_tol = 6.0 * sigma + (double)d.n * m * 0x1p-24;
	GW_CHECK(fabs(total_mean - total_x) <= tot_tol,
		 "%s: mean sum %.9g, true sum %.9g, |diff| %.3g > 6 sigma %.3g",
		 trace, total_mean, total_x, fabs(total_mean - total_x), tot_tol);
	print_message("%s budget %zu: %d seeds, worst element %zu at %.2f of its "
		      "bound; sum %.6g vs %.6g (%.2f sigma)\n", trace, budget, SEEDS,
		      worst_i, worst, total_mean, total_x,
		      sigma > 0 ? fabs(total_mean - total_x) / sigma : 0.0);
	free(buf);
	gw_encoder_free(enc);
	free(out);
	free(sum);
	gw_test_dense_free(&d);
}

static void test_fc_weight(void **state)
{
	(void)state;
	unbiased("cnn/it100_fc.weight.f32", 1500 - 78);
}

static void test_conv2_weight_small_frames(void **state)
{
	(void)state;
	unbiased("cnn/it001_conv2.weight.f32", 100);
}

GW_TEST_MAIN("terngrad_unbiased", 1,
	     cmocka_unit_test(test_fc_weight),
	     cmocka_unit_test(test_conv2_weight_small_frames))
