/* Error feedback loses no gradient mass: over 20 rounds of real traces, sum of decoded outputs + final error buffer == sum of inputs (within float rounding), and int8's fused feedback equals the generic definition bit for bit. */
#include "gw_test.h"

#include <math.h>

enum { ROUNDS = 20 };
#define BUDGET (1500 - 78)

/* Round r sends trace r % iters times one of these factors, so rounds
 * differ in sign and magnitude as well as in content. */
static const float factors[] = {1.0f, -0.5f, 2.0f, 0.25f, -3.0f};

/* Per element, the test keeps in double: the sum of inputs, the sum of
 * decoded outputs and a rounding tolerance.
 *
 * Tolerance: each round computes c = fl(g + e) and e' = fl(c - d), where d
 * is exactly the decoded value (both codecs subtract the very value the
 * decoder adds). Hence d + e' = g + e + r1 + r2 with |r1| <= 2^-24 |g + e|
 * and |r2| <= 2^-24 |e'| (round to nearest, relative to the result; a
 * subnormal result is exact). Summed over rounds the e terms telescope:
 * sum(d) + e_R = sum(g) + sum(r1 + r2), so
 *	|sum(d) + e_R - sum(g)| <= sum over rounds of 2^-24 (|g| + |e| + |e'|).
 * The test uses 2^-23 per term (twice that) plus 2^-40 * sum(|g| + |d|)
 * for its own double additions. Without feedback the same check fails by
 * far (the control below), so the tolerance has teeth. */
struct acc {
	double *sum_g, *sum_d, *tol;
	uint64_t dim;
};

static void acc_init(struct acc *a, uint64_t dim)
{
	a->dim = dim;
	a->sum_g = calloc(dim, sizeof(double));
	a->sum_d = calloc(dim, sizeof(double));
	a->tol = calloc(dim, sizeof(double));
	GW_CHECK(a->sum_g && a->sum_d && a->tol, "out of memory");
}

static void acc_free(struct acc *a)
{
	free(a->sum_g);
	free(a->sum_d);
	free(a->tol);
}

/* One round: encode g (entries at keys, or dense) with enc, decode, and
 * account. e_before is a copy of the error buffer before the round. */
static void round_trip(gw_encoder *enc, gw_ef *ef, const gw_tensor *t,
		       struct acc *a, float *e_before, float *d, const char *what,
		       int r)
{
	uint64_t n = t->keys ? t->nnz : t->dim;
	const float *e = ef ? gw_ef_data(ef) : NULL;
	if (e)
		memcpy(e_before, e, a->dim * sizeof(float));
	gw_test_frames fr;
	GW_EXPECT_RC(gw_test_encode_all(enc, t, BUDGET, &fr), 0,
		     "%s round %d: encode failed", what, r);
	gw_test_fill(d, a->dim, 0.0f);
	gw_test_decode_all(&fr, d, a->dim);
	gw_test_frames_free(&fr);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t k = t->keys ? gw_tensor_key(t, i) : i;
		double g = t->values[i];
		a->sum_g[k] += g;
		a->tol[k] += 0x1p-23 * (fabs(g) + (e ? fabs((double)e_before[k]) +
							    fabs((double)e[k])
							  : 0.0)) +
			     0x1p-40 * (fabs(g) + fabs((double)d[k]));
	}
	for (uint64_t k = 0; k < a->dim; k++) {
		GW_CHECK(isfinite(d[k]), "%s round %d: decoded %a at %llu", what, r,
			 (double)d[k], (unsigned long long)k);
		a->sum_d[k] += d[k];
	}
}

/* Returns the largest |sum(d) + e - sum(g)| / tol; fails if above 1 and
 * must_hold. */
static double conservation(const struct acc *a, const float *e, int must_hold,
			   const char *what)
{
	double worst = 0;
	for (uint64_t k = 0; k < a->dim; k++) {
		double got = a->sum_d[k] + (e ? (double)e[k] : 0.0);
		double dev = fabs(got - a->sum_g[k]);
		double tol = a->tol[k] > 0 ? a->tol[k] : 0x1p-149;
		if (dev / tol > worst)
			worst = dev / tol;
		if (must_hold)
			GW_CHECK(dev <= a->tol[k],
				 "%s: element %llu: sum of decoded %.9g + error buffer "
				 "%.9g = %.9g, sum of inputs %.9g, off by %.3g > "
				 "tolerance %.3g: feedback lost gradient mass", what,
				 (unsigned long long)k, a->sum_d[k],
				 e ? (double)e[k] : 0.0, got, a->sum_g[k], dev,
				 a->tol[k]);
	}
	return worst;
}

/* 20 rounds of dense cnn gradients (all 25,290 parameters as one tensor). */
static void dense_rounds(int id, int with_ef, double *worst)
{
	float *it[GW_TEST_CNN_ITERS];
	size_t n = 0;
	for (int i = 0; i < GW_TEST_CNN_ITERS; i++)
		it[i] = gw_test_load_cnn_iter(i, &n);
	float *g = malloc(n * sizeof(float)), *eb = malloc(n * sizeof(float));
	float *d = malloc(n * sizeof(float));
	GW_CHECK(g && eb && d, "out of memory");
	gw_encoder *enc = gw_test_encoder(id);
	gw_ef *ef = with_ef ? gw_ef_create(n) : NULL;
	GW_CHECK(!with_ef || ef, "gw_ef_create failed");
	GW_OK_CALL(gw_encoder_set_ef(enc, ef));
	struct acc a;
	acc_init(&a, n);
	char what[64];
	snprintf(what, sizeof(what), "%s dense%s", gw_codec_name(id),
		 with_ef ? " with feedback" : " without feedback");
	for (int r = 0; r < ROUNDS; r++) {
		const float *src = it[r % GW_TEST_CNN_ITERS];
		float f = factors[r / GW_TEST_CNN_ITERS % 5];
		for (size_t i = 0; i < n; i++)
			g[i] = src[i] * f;
		gw_tensor t = gw_test_dense_tensor(100, g, n);
		round_trip(enc, ef, &t, &a, eb, d, what, r);
	}
	const float *e = ef ? gw_ef_data(ef) : NULL;
	*worst = conservation(&a, e, with_ef, what);
	if (ef && id != GW_CODEC_RAW) {
		/* A lossy codec leaves a nonzero residual somewhere: otherwise
		 * this test would not be testing feedback at all. */
		size_t nonzero = 0;
		for (size_t i = 0; i < n; i++)
			nonzero += e[i] != 0.0f;
		GW_CHECK(nonzero > n / 10, "%s: only %zu of %zu residuals nonzero",
			 what, nonzero, n);
	}
	if (ef && id == GW_CODEC_RAW)
		for (size_t i = 0; i < n; i++)
			GW_CHECK(gw_test_bits(e[i]) == 0, "raw with feedback: residual "
				 "%a at %zu, want exactly +0", (double)e[i], i);
	acc_free(&a);
	gw_ef_free(ef);
	gw_encoder_free(enc);
	free(g);
	free(eb);
	free(d);
	for (int i = 0; i < GW_TEST_CNN_ITERS; i++)
		free(it[i]);
}

/* 20 rounds of sparse logreg gradients: key sets differ between rounds,
 * so residuals of keys absent in a round must wait in the buffer. */
static void sparse_rounds(int id, int with_ef, double *worst)
{
	gw_test_sparse s[GW_TEST_N_SPARSE];
	for (int i = 0; i < GW_TEST_N_SPARSE; i++)
		gw_test_load_sparse(i, &s[i]);
	uint64_t dim = GW_TEST_SPARSE_DIM;
	size_t maxnnz = 0;
	for (int i = 0; i < GW_TEST_N_SPARSE; i++)
		maxnnz = s[i].nnz > maxnnz ? s[i].nnz : maxnnz;
	float *g = malloc(maxnnz * sizeof(float));
	float *eb = malloc(dim * sizeof(float)), *d = malloc(dim * sizeof(float));
	GW_CHECK(g && eb && d, "out of memory");
	gw_encoder *enc = gw_test_encoder(id);
	gw_ef *ef = with_ef ? gw_ef_create(dim) : NULL;
	GW_CHECK(!with_ef || ef, "gw_ef_create failed");
	GW_OK_CALL(gw_encoder_set_ef(enc, ef));
	struct acc a;
	acc_init(&a, dim);
	char what[64];
	snprintf(what, sizeof(what), "%s sparse%s", gw_codec_name(id),
		 with_ef ? " with feedback" : " without feedback");
	for (int r = 0; r < ROUNDS; r++) {
		const gw_test_sparse *src = &s[r % GW_TEST_N_SPARSE];
		float f = factors[r / GW_TEST_N_SPARSE % 5];
		for (size_t i = 0; i < src->nnz; i++)
			g[i] = src->vals[i] * f;
		gw_tensor t = gw_test_sparse_tensor(200, dim, src->keys, 32, g, src->nnz);
		round_trip(enc, ef, &t, &a, eb, d, what, r);
	}
	*worst = conservation(&a, ef ? gw_ef_data(ef) : NULL, with_ef, what);
	acc_free(&a);
	gw_ef_free(ef);
	gw_encoder_free(enc);
	free(g);
	free(eb);
	free(d);
	for (int i = 0; i < GW_TEST_N_SPARSE; i++)
		gw_test_sparse_free(&s[i]);
}

static void test_conservation_dense(void **state)
{
	(void)state;
	static const int ids[] = {GW_CODEC_INT8, GW_CODEC_BF16, GW_CODEC_RAW};
	for (int c = 0; c < 3; c++) {
		double worst;
		dense_rounds(ids[c], 1, &worst);
		print_message("  %s dense: worst deviation %.3g of tolerance\n",
			      gw_codec_name(ids[c]), worst);
	}
}

static void test_conservation_sparse(void **state)
{
	(void)state;
	static const int ids[] = {GW_CODEC_INT8, GW_CODEC_BF16, GW_CODEC_RAW};
	for (int c = 0; c < 3; c++) {
		double worst;
		sparse_rounds(ids[c], 1, &worst);
		print_message("  %s sparse: worst deviation %.3g of tolerance\n",
			      gw_codec_name(ids[c]), worst);
	}
}

/* Control: without feedback, lossy codecs do lose mass beyond the
 * tolerance, so the conservation check above can fail. */
static void test_control_without_feedback(void **state)
{
	(void)state;
	static const int ids[] = {GW_CODEC_INT8, GW_CODEC_BF16};
	for (int c = 0; c < 2; c++) {
		double wd, ws;
		dense_rounds(ids[c], 0, &wd);
		sparse_rounds(ids[c], 0, &ws);
		GW_CHECK(wd > 100 && ws > 100, "%s without feedback deviates only %g "
			 "(dense) / %g (sparse) times the tolerance: the tolerance is "
			 "too loose to catch lost mass", gw_codec_name(ids[c]), wd, ws);
	}
}

/* int8 fuses feedback into its encode pass; it must equal the generic
 * definition e <- c - decode(encode(c)), c = g + e, computed here with a
 * plain int8 encoder: same frames, same error buffer, bit for bit. */
static void fused_vs_generic(int sparse)
{
	uint64_t dim;
	float *it[GW_TEST_CNN_ITERS] = {0};
	gw_test_sparse s[GW_TEST_N_SPARSE];
	if (sparse) {
		for (int i = 0; i < GW_TEST_N_SPARSE; i++)
			gw_test_load_sparse(i, &s[i]);
		dim = GW_TEST_SPARSE_DIM;
	} else {
		size_t n = 0;
		for (int i = 0; i < GW_TEST_CNN_ITERS; i++)
			it[i] = gw_test_load_cnn_iter(i, &n);
		dim = n;
	}
	gw_encoder *fused = gw_test_encoder(GW_CODEC_INT8);
	gw_encoder *plain = gw_test_encoder(GW_CODEC_INT8);
	gw_ef *ef = gw_ef_create(dim);
	float *e_ref = calloc(dim, sizeof(float));
	float *g = malloc(dim * sizeof(float)), *c = malloc(dim * sizeof(float));
	float *d = malloc(dim * sizeof(float));
	GW_CHECK(ef && e_ref && g && c && d, "out of memory");
	GW_OK_CALL(gw_encoder_set_ef(fused, ef));
	const char *what = sparse ? "int8 sparse" : "int8 dense";
	for (int r = 0; r < ROUNDS; r++) {
		const uint32_t *keys = NULL;
		uint64_t n = dim;
		const float *src;
		float f;
		if (sparse) {
			const gw_test_sparse *sp = &s[r % GW_TEST_N_SPARSE];
			keys = sp->keys;
			n = sp->nnz;
			src = sp->vals;
			f = factors[r / GW_TEST_N_SPARSE % 5];
		} else {
			src = it[r % GW_TEST_CNN_ITERS];
			f = factors[r / GW_TEST_CNN_ITERS % 5];
		}
		for (uint64_t i = 0; i < n; i++) {
			g[i] = src[i] * f;
			c[i] = g[i] + e_ref[keys ? keys[i] : i];
		}
		gw_tensor tg = sparse ? gw_test_sparse_tensor(5, dim, keys, 32, g, n)
				      : gw_test_dense_tensor(5, g, n);
		gw_tensor tc = sparse ? gw_test_sparse_tensor(5, dim, keys, 32, c, n)
				      : gw_test_dense_tensor(5, c, n);
		gw_test_frames ff, fp;
		GW_OK_CALL(gw_test_encode_all(fused, &tg, BUDGET, &ff));
		GW_OK_CALL(gw_test_encode_all(plain, &tc, BUDGET, &fp));
		GW_CHECK(ff.n == fp.n, "%s round %d: fused feedback made %zu frames, "
			 "generic %zu", what, r, ff.n, fp.n);
		for (size_t j = 0; j < ff.n; j++)
			GW_CHECK(ff.f[j].len == fp.f[j].len &&
					 !memcmp(ff.f[j].data, fp.f[j].data, ff.f[j].len),
				 "%s round %d: frame %zu differs between fused feedback "
				 "and encoding g + e directly", what, r, j);
		gw_test_fill(d, dim, 0.0f);
		gw_test_decode_all(&fp, d, dim);
		for (uint64_t i = 0; i < n; i++) {
			uint64_t k = keys ? keys[i] : i;
			e_ref[k] = c[i] - d[k];
		}
		const float *e = gw_ef_data(ef);
		for (uint64_t k = 0; k < dim; k++)
			GW_CHECK(gw_test_bits(e[k]) == gw_test_bits(e_ref[k]),
				 "%s round %d: fused error buffer %a at %llu, generic "
				 "definition gives %a", what, r, (double)e[k],
				 (unsigned long long)k, (double)e_ref[k]);
		gw_test_frames_free(&ff);
		gw_test_frames_free(&fp);
	}
	gw_encoder_free(fused);
	gw_encoder_free(plain);
	gw_ef_free(ef);
	free(e_ref);
	free(g);
	free(c);
	free(d);
	for (int i = 0; i < GW_TEST_CNN_ITERS; i++)
		free(it[i]);
	if (sparse)
		for (int i = 0; i < GW_TEST_N_SPARSE; i++)
			gw_test_sparse_free(&s[i]);
}

static void test_int8_fused_equals_generic_dense(void **state)
{
	(void)state;
	fused_vs_generic(0);
}

static void test_int8_fused_equals_generic_sparse(void **state)
{
	(void)state;
	fused_vs_generic(1);
}

/* gw_ef_reset zeroes the buffer; gw_ef_dim reports it; a mismatched
 * dimension is refused at begin. */
static void test_ef_api(void **state)
{
	(void)state;
	gw_ef *ef = gw_ef_create(100);
	GW_CHECK(ef && gw_ef_dim(ef) == 100 && gw_ef_data(ef),
		 "gw_ef_create(100) / gw_ef_dim");
	for (int i = 0; i < 100; i++)
		GW_CHECK(gw_ef_data(ef)[i] == 0.0f, "new error buffer not zero at %d", i);
	gw_ef_data(ef)[7] = 3.0f;
	gw_ef_reset(ef);
	GW_CHECK(gw_ef_data(ef)[7] == 0.0f, "gw_ef_reset left %a",
		 (double)gw_ef_data(ef)[7]);
	GW_CHECK(gw_ef_dim(NULL) == 0 && gw_ef_data(NULL) == NULL,
		 "NULL error buffer: dim 0 and no data");
	gw_ef_reset(NULL);
	gw_ef_free(NULL);
	float v[50] = {0};
	gw_encoder *enc = gw_test_encoder(GW_CODEC_INT8);
	GW_OK_CALL(gw_encoder_set_ef(enc, ef));
	gw_tensor t = gw_test_dense_tensor(1, v, 50);
	GW_EXPECT_RC(gw_encode_begin(enc, &t), GW_EINVAL,
		     "a 50-element tensor with a 100-element error buffer");
	GW_OK_CALL(gw_encoder_set_ef(enc, NULL));
	GW_OK_CALL(gw_encode_begin(enc, &t));
	gw_encoder_free(enc);
	gw_ef_free(ef);
}

int main(int argc, char **argv)
{
	(void)argc;
	gw_test_require_traces(argv[0]);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_conservation_dense),
		cmocka_unit_test(test_conservation_sparse),
		cmocka_unit_test(test_control_without_feedback),
		cmocka_unit_test(test_int8_fused_equals_generic_dense),
		cmocka_unit_test(test_int8_fused_equals_generic_sparse),
		cmocka_unit_test(test_ef_api),
	};
	return cmocka_run_group_tests_name("error_feedback", tests, NULL, NULL);
}
