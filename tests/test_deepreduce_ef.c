/* deepreduce error feedback loses nothing, whatever the combination drops:
 * after each round, what the frames decode to plus the error buffer equals
 * the gradient plus the buffer before the round (to float rounding) — a
 * lossy Bloom policy's missed keys, top-r's unsent ones and a curve fit's
 * error all stay in the buffer. Over rounds every coordinate is sent. */
#include "gw_test.h"

#include <math.h>

#define BUDGET (1500 - GW_PKT_RESERVE)

static void one_combo(const char *spec, const float *g, uint64_t dim, bool sparse_in)
{
	gw_encoder *enc = gw_encoder_create(GW_CODEC_DEEPREDUCE);
	char err[256];
	GW_CHECK(gw_encoder_set_params(enc, spec, err, sizeof(err)) == 0, "%s: %s", spec, err);
	gw_ef *ef = gw_ef_create(dim);
	GW_OK_CALL(gw_encoder_set_ef(enc, ef));
	float *before = malloc(dim * sizeof(float)), *out = malloc(dim * sizeof(float));
	uint32_t *keys = malloc(dim * sizeof(uint32_t));
	float *vals = malloc(dim * sizeof(float));
	double worst = 0;
	for (int round = 0; round < 4; round++) {
		memcpy(before, gw_ef_data(ef), dim * sizeof(float));
		gw_tensor t;
		uint64_t nnz = 0;
		if (sparse_in) {
			/* every other coordinate present, a different half each round */
			for (uint64_t x = (uint64_t)round & 1; x < dim; x += 2) {
				keys[nnz] = (uint32_t)x;
				vals[nnz++] = g[x];
			}
			t = gw_test_sparse_tensor(1, dim, keys, 32, vals, nnz);
		} else {
			t = gw_test_dense_tensor(1, g, dim);
		}
		gw_test_frames fr = {0};
		GW_EXPECT_RC(gw_test_encode_all(enc, &t, BUDGET, &fr), 0, "%s round %d", spec, round);
		memset(out, 0, dim * sizeof(float));
		gw_test_decode_all(&fr, out, dim);
		const float *e = gw_ef_data(ef);
		double scale = 0;
		for (uint64_t x = 0; x < dim; x++)
			scale = fmax(scale, fabs(g[x]) + fabs(before[x]));
		for (uint64_t x = 0; x < dim; x++) {
			float in = before[x];
			if (!sparse_in || (x & 1) == ((uint64_t)round & 1))
				in += g[x];
			double d = fabs((double)out[x] + e[x] - in);
			worst = fmax(worst, d / scale);
			GW_CHECK(d <= 1e-6 * scale, "%s round %d key %llu: sent %.9g + kept %.9g != "
				 "%.9g", spec, round, (unsigned long long)x, out[x], e[x], in);
		}
		gw_test_frames_free(&fr);
	}
	print_message("  %-48s %s worst |sent + kept - input| / max %.2g\n", spec,
		      sparse_in ? "sparse" : "dense ", worst);
	free(before);
	free(out);
	free(keys);
	free(vals);
	gw_ef_free(ef);
	gw_encoder_free(enc);
}

static void test_ef_every_combination(void **state)
{
	(void)state;
	GW_TEST_NEED_TRACES();
	size_t dim;
	float *g = gw_test_load_cnn_iter(1, &dim);
	static const char *idx[] = {"raw", "rle", "delta", "bloom,policy=p0,fpr=0.05",
				    "bloom,policy=p1,fpr=0.05", "bloom,policy=p2,fpr=0.05"};
	static const char *val[] = {"f32", "deflate", "qsgd", "poly", "dexp"};
	char spec[128];
	for (int i = 0; i < 6; i++)
		for (int v = 0; v < 5; v++) {
			snprintf(spec, sizeof(spec), "index=%s,value=%s", idx[i], val[v]);
			one_combo(spec, g, dim, false);
			one_combo(spec, g, dim, true);
		}
	/* random-r, and no sparsifier (every nonzero) */
	one_combo("sparsifier=randr,fraction=0.05,value=qsgd", g, dim, false);
	one_combo("sparsifier=none,index=rle,value=poly", g, dim, false);
	free(g);
}

/* Top-r with feedback sends every coordinate eventually: a constant
 * gradient of d ones at r = 10% needs about 10 rounds to have sent each
 * coordinate at least once. */
static void test_ef_sends_everything(void **state)
{
	(void)state;
	enum { D = 2000 };
	float g[D], total[D] = {0};
	for (int i = 0; i < D; i++)
		g[i] = 1.0f + (float)(i % 7) * 1e-3f;
	gw_encoder *enc = gw_encoder_create(GW_CODEC_DEEPREDUCE);
	GW_OK_CALL(gw_encoder_set_params(enc, "fraction=0.1,index=bloom,policy=p2", NULL, 0));
	gw_ef *ef = gw_ef_create(D);
	GW_OK_CALL(gw_encoder_set_ef(enc, ef));
	for (int round = 0; round < 12; round++) {
		gw_tensor t = gw_test_dense_tensor(1, g, D);
		gw_test_frames fr = {0};
		GW_OK_CALL(gw_test_encode_all(enc, &t, BUDGET, &fr));
		gw_test_decode_all(&fr, total, D);
		gw_test_frames_free(&fr);
	}
	int never = 0;
	for (int i = 0; i < D; i++)
		never += total[i] == 0.0f;
	GW_CHECK(never == 0, "%d of %d coordinates never sent in 12 rounds", never, D);
	gw_ef_free(ef);
	gw_encoder_free(enc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ef_every_combination),
		cmocka_unit_test(test_ef_sends_everything),
	};
	return cmocka_run_group_tests_name("deepreduce_ef", tests, NULL, NULL);
}
