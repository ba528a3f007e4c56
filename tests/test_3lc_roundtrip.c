/* 3LC round-trips every real trace (and the six cnn tensors of each iteration concatenated) at several budgets and sparsities: the decoded tensor is exactly sign(x) * m where 2|x| > m and untouched elsewhere; frames tile the tensor; each frame decodes alone, in any order, touching only its own range, and gives there what all frames give; decoding adds (twice decoded is twice the values). */
#include "gw_test.h"

#include <math.h>

static const size_t budgets[] = {64, 100, 1500 - 76, 9000, 65535};
static const double sparsities[] = {1.0, 1.5, 1.75, 1.9};

/* Decodes every frame alone into a -0.0-filled buffer and checks it wrote
 * only its range, with the bits the full decode has there; then decodes all
 * frames in reverse order and compares. */
static void check_independent(const gw_test_frames *fr, const float *full,
			      uint64_t dim, const char *what)
{
	float *one = malloc(dim * sizeof(float));
	float *rev = malloc(dim * sizeof(float));
	GW_CHECK(one && rev, "out of memory");
	gw_test_fill(one, dim, -0.0f);
	gw_test_fill(rev, dim, -0.0f);
	size_t every = fr->n / 8 + 1;
	for (size_t j = fr->n; j-- > 0;) {
		gw_frame_info h;
		GW_OK_CALL(gw_frame_verify(fr->f[j].data, fr->f[j].len, &h));
		GW_EXPECT_RC(gw_decode(fr->f[j].data, fr->f[j].len, one, dim),
			     (int)h.count, "%s: frame %zu alone", what, j);
		for (uint64_t k = h.start; k < h.start + h.count; k++) {
			GW_CHECK(gw_test_bits(one[k]) == gw_test_bits(full[k]),
				 "%s: frame %zu alone gives %a at %llu, all frames %a",
				 what, j, (double)one[k], (unsigned long long)k,
				 (double)full[k]);
			one[k] = -0.0f;
		}
		if (j % every == 0)
			for (uint64_t k = 0; k < dim; k++)
				GW_CHECK(gw_test_bits(one[k]) == 0x80000000u,
					 "%s: element %llu written outside frame %zu's "
					 "range [%llu,+%u)", what, (unsigned long long)k, j,
					 (unsigned long long)h.start, h.count);
		GW_OK_CALL(gw_decode(fr->f[j].data, fr->f[j].len, rev, dim));
	}
	for (uint64_t k = 0; k < dim; k++)
		GW_CHECK(gw_test_bits(rev[k]) == gw_test_bits(full[k]),
			 "%s: reverse order differs at %llu", what, (unsigned long long)k);
	free(one);
	free(rev);
}

static void roundtrip(const char *name, const float *x, size_t n)
{
	double mx = 0;
	for (size_t i = 0; i < n; i++)
		mx = fmax(mx, fabs((double)x[i]));
	float *out = malloc(n * sizeof(float));
	GW_CHECK(out, "out of memory");
	for (size_t k = 0; k < GW_ARRAY_SIZE(sparsities); k++) {
		double s = sparsities[k];
		float m = (float)(s * mx);
		gw_encoder *enc = gw_test_encoder(GW_CODEC_3LC);
		GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_SPARSITY, s));
		gw_tensor t = gw_test_dense_tensor(5, x, n);
		for (size_t b = 0; b < GW_ARRAY_SIZE(budgets); b++) {
			char what[160];
			snprintf(what, sizeof(what), "%s s=%g budget %zu", name, s, budgets[b]);
			gw_test_frames fr;
			GW_OK_CALL(gw_test_encode_all(enc, &t, budgets[b], &fr));
			uint64_t next = 0;
			for (size_t j = 0; j < fr.n; j++) {
				gw_frame_info h;
				GW_OK_CALL(gw_frame_verify(fr.f[j].data, fr.f[j].len, &h));
				GW_CHECK(h.codec == GW_CODEC_3LC && h.start == next &&
						 h.start % 5 == 0,
					 "%s: frame %zu header", what, j);
				next += h.count;
			}
			GW_CHECK(next == n, "%s: frames cover %llu of %zu", what,
				 (unsigned long long)next, n);
			gw_test_fill(out, n, -0.0f);
			gw_test_decode_all(&fr, out, n);
			for (size_t i = 0; i < n; i++) {
				float c2 = x[i] + x[i];
				float want = c2 > m ? m : c2 < -m ? -m : -0.0f;
				GW_CHECK(gw_test_bits(out[i]) == gw_test_bits(want),
					 "%s: element %zu (%a) decoded to %a, expected %a",
					 what, i, (double)x[i], (double)out[i], (double)want);
			}
			check_independent(&fr, out, n, what);
			/* Decode-accumulate: a second pass adds the same again. */
			if (b == 2) {
				gw_test_decode_all(&fr, out, n);
				for (size_t i = 0; i < n; i++) {
					float c2 = x[i] + x[i];
					float want = c2 > m ? m + m : c2 < -m ? -m - m : -0.0f;
					GW_CHECK(gw_test_bits(out[i]) == gw_test_bits(want),
						 "%s: element %zu decoded twice to %a", what,
						 i, (double)out[i]);
				}
			}
			gw_test_frames_free(&fr);
		}
		gw_encoder_free(enc);
	}
	free(out);
}

static void test_dense_traces(void **state)
{
	(void)state;
	for (int i = 0; i < GW_TEST_N_DENSE; i++) {
		gw_test_dense d;
		gw_test_load_dense(i, &d);
		roundtrip(d.name, d.v, d.n);
		gw_test_dense_free(&d);
	}
}

static void test_cnn_iterations(void **state)
{
	(void)state;
	for (int it = 0; it < GW_TEST_CNN_ITERS; it++) {
		size_t n;
		float *x = gw_test_load_cnn_iter(it, &n);
		roundtrip("cnn iteration (6 tensors)", x, n);
		free(x);
	}
}

int main(int argc, char **argv)
{
	(void)argc;
	gw_test_require_traces(argv[0]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dense_traces),
		cmocka_unit_test(test_cnn_iterations),
	};
	return cmocka_run_group_tests_name("3lc_roundtrip", tests, NULL, NULL);
}
