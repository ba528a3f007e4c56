/* terngrad is reproducible: the same seed and tensor id give the same frame bytes from two encoders, every budget and max_frame_elems (>= 5; dense frames start on multiples of 5, smaller limits are refused) decodes to bitwise the same values (draws depend only on seed, tensor id and element index, the scale is the tensor's), and a different seed or tensor id changes the draws; caps say lossy, the seed is a whole number in [0, 2^53 - 1], and an all-zero tensor (scale 0) decodes to zeros. */
#include "gw_test.h"

#include <math.h>

static void decode_with(int seed, uint32_t id, const float *v, size_t n,
			size_t budget, double max_elems, float *out,
			gw_test_frames *keep)
{
	gw_encoder *enc = gw_test_encoder(GW_CODEC_TERNGRAD);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_SEED, seed));
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_MAX_FRAME_ELEMS, max_elems));
	gw_tensor t = gw_test_dense_tensor(id, v, n);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, budget, &fr));
	gw_test_fill(out, n, -0.0f);
	gw_test_decode_all(&fr, out, n);
	if (keep)
		*keep = fr;
	else
		gw_test_frames_free(&fr);
	gw_encoder_free(enc);
}

static size_t differing(const float *a, const float *b, size_t n)
{
	size_t d = 0;
	for (size_t i = 0; i < n; i++)
		d += gw_test_bits(a[i]) != gw_test_bits(b[i]);
	return d;
}

/* cnn iteration it's n values and two outputs of as many floats. */
struct run {
	size_t n;
	float *v, *ref, *o;
};

static void run_open(struct run *r, int it)
{
	r->v = gw_test_load_cnn_iter(it, &r->n);
	r->ref = malloc(r->n * sizeof(float));
	r->o = malloc(r->n * sizeof(float));
	GW_CHECK(r->ref && r->o, "out of memory");
}

static void run_free(struct run *r)
{
	free(r->ref);
	free(r->o);
	free(r->v);
}

static void test_same_seed_same_bytes(void **state)
{
	(void)state;
	struct run r;
	run_open(&r, 2);
	gw_test_frames a, b;
	decode_with(42, 5, r.v, r.n, 1500 - 78, 0, r.ref, &a);
	decode_with(42, 5, r.v, r.n, 1500 - 78, 0, r.o, &b);
	GW_CHECK(a.n == b.n, "%zu vs %zu frames", a.n, b.n);
	for (size_t j = 0; j < a.n; j++)
		GW_CHECK(a.f[j].len == b.f[j].len &&
				 !memcmp(a.f[j].data, b.f[j].data, a.f[j].len),
			 "frame %zu differs between two encoders with seed 42", j);
	gw_test_frames_free(&a);
	gw_test_frames_free(&b);
	run_free(&r);
}

static void test_budget_independent(void **state)
{
	(void)state;
	static const size_t budgets[] = {64, 65, 100, 333, 1500 - 78, 9000, 65535};
	static const double max_elems[] = {5, 7, 1000, 1024};
	struct run r;
	run_open(&r, 1);
	size_t n = r.n;
	float *v = r.v, *ref = r.ref, *o = r.o;
	decode_with(9, 2, v, n, 65535, 0, ref, NULL);
	for (size_t b = 0; b < GW_ARRAY_SIZE(budgets); b++) {
		decode_with(9, 2, v, n, budgets[b], 0, o, NULL);
		size_t d = differing(ref, o, n);
		GW_CHECK(d == 0, "budget %zu: %zu of %zu values differ from budget "
			 "65535", budgets[b], d, n);
	}
	for (size_t m = 0; m < GW_ARRAY_SIZE(max_elems); m++) {
		gw_test_frames fr;
		decode_with(9, 2, v, n, 1500 - 78, max_elems[m], o, &fr);
		size_t d = differing(ref, o, n);
		GW_CHECK(d == 0, "max_frame_elems %g: %zu of %zu values differ",
			 max_elems[m], d, n);
		for (size_t j = 0; j < fr.n; j++) {
			gw_frame_info h;
			GW_OK_CALL(gw_frame_verify(fr.f[j].data, fr.f[j].len, &h));
			GW_CHECK(h.count <= max_elems[m], "frame of %u > max %g",
				 h.count, max_elems[m]);
			GW_CHECK(h.start % 5 == 0, "max_frame_elems %g: frame "
				 "starts at %llu", max_elems[m],
				 (unsigned long long)h.start);
		}
		gw_test_frames_free(&fr);
	}
	/* Dense frames hold whole groups of 5: a smaller limit is refused
	 * unless the tensor fits in one frame; sparse frames take any. */
	for (double lim = 1; lim < 5; lim++) {
		gw_encoder *enc = gw_test_encoder(GW_CODEC_TERNGRAD);
		GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_MAX_FRAME_ELEMS, lim));
		gw_tensor t = gw_test_dense_tensor(2, v, n);
		GW_EXPECT_RC(gw_encode_begin(enc, &t), GW_EBOUNDS,
			     "max_frame_elems %g on %zu elements", lim, n);
		t = gw_test_dense_tensor(2, v, (uint64_t)lim);
		GW_OK_CALL(gw_encode_begin(enc, &t));
		GW_OK_CALL(gw_encode_abandon(enc));
		static const uint32_t keys[6] = {1, 4, 9, 16, 25, 36};
		t = gw_test_sparse_tensor(2, 40, keys, 32, v, 6);
		gw_test_frames fr;
		GW_OK_CALL(gw_test_encode_all(enc, &t, 64, &fr));
		GW_CHECK(fr.n == (size_t)ceil(6 / lim), "sparse, limit %g: %zu "
			 "frames", lim, fr.n);
		gw_test_frames_free(&fr);
		gw_encoder_free(enc);
	}
	run_free(&r);
}

/* Another seed, or another tensor id with the same seed, draws anew: a
 * good share of the elements with 0 < p < 1 decode differently. */
static void test_seed_and_tensor_change_draws(void **state)
{
	(void)state;
	struct run r;
	run_open(&r, 2);
	decode_with(42, 5, r.v, r.n, 9000, 0, r.ref, NULL);
	decode_with(43, 5, r.v, r.n, 9000, 0, r.o, NULL);
	size_t d1 = differing(r.ref, r.o, r.n);
	decode_with(42, 6, r.v, r.n, 9000, 0, r.o, NULL);
	size_t d2 = differing(r.ref, r.o, r.n);
	/* Roughly 2 p (1 - p) of each element: hundreds at least. */
	GW_CHECK(d1 > 100 && d2 > 100, "seed change: %zu differ, tensor id "
		 "change: %zu differ (of %zu)", d1, d2, r.n);
	run_free(&r);
}

/* An all-zero tensor has scale 0 and decodes to zeros; caps say lossy and
 * the seed is a whole number in [0, 2^53 - 1]. */
static void test_zero_tensor_and_caps(void **state)
{
	(void)state;
	int caps = gw_codec_caps(GW_CODEC_TERNGRAD);
	GW_CHECK(caps == (GW_CODEC_DENSE | GW_CODEC_SPARSE | GW_CODEC_LOSSY),
		 "terngrad caps %#x", caps);
	GW_CHECK(gw_codec_by_name("terngrad") == GW_CODEC_TERNGRAD, "by name");
	gw_bounds b;
	GW_OK_CALL(gw_param_bounds(GW_CODEC_TERNGRAD, GW_PARAM_SEED, &b));
	GW_CHECK(b.lo == 0 && b.hi == 9007199254740991.0 && b.integer, "seed bounds");
	GW_EXPECT_RC(gw_param_bounds(GW_CODEC_TERNGRAD, GW_PARAM_FRACTION, NULL),
		     GW_EPARAM, "terngrad has no fraction");
	gw_encoder *enc = gw_test_encoder(GW_CODEC_TERNGRAD);
	GW_EXPECT_RC(gw_encoder_set_param(enc, GW_PARAM_SEED, 1.5), GW_EBOUNDS,
		     "fractional seed");
	GW_EXPECT_RC(gw_encoder_set_param(enc, GW_PARAM_SEED, -1), GW_EBOUNDS,
		     "negative seed");
	float z[23] = {0};
	gw_tensor t = gw_test_dense_tensor(1, z, 23);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, 64, &fr));
	float out[23];
	gw_test_fill(out, 23, -0.0f);
	gw_test_decode_all(&fr, out, 23);
	for (int i = 0; i < 23; i++)
		GW_CHECK(out[i] == 0.0f, "zero input decoded to %a", (double)out[i]);
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
}

GW_TEST_MAIN("terngrad_reproducible", 1,
	     cmocka_unit_test(test_same_seed_same_bytes),
	     cmocka_unit_test(test_budget_independent),
	     cmocka_unit_test(test_seed_and_tensor_change_draws),
	     cmocka_unit_test(test_zero_tensor_and_caps))
