/* DeepReduce's qsgd value codec is unbiased and reproducible: over 2000 seeds the mean decoded value of every value of a real-trace window (spam gradient, 4096 values) converges to the input inside a Bernstein bound at per-value failure probability 1e-9, and the window's sum within 6 sigma, for s = 1, 3, 15, 127 and buckets of 1 to 4096; the same seed gives the same bytes; the decoded values match an independent implementation of the specified rounding (SplitMix64 stream from the seed, one draw per value in order) bit for bit. */
#include "gw_test.h"

#include <math.h>

#include "../../codec/deepreduce/bits.h"
#include "../../codec/deepreduce/dr.h"

#define SEEDS 2000
#define DELTA 1e-9
#define WINDOW 4096u

/* Bernstein: the deviation t of the mean of N draws of a variable in
 * [0, 1] with variance v exceeded with probability at most delta. */
static double bernstein(double v, double n, double delta)
{
	double l = log(2.0 / delta);
	double b = 2.0 * l / 3.0;
	return (b + sqrt(b * b + 8.0 * n * l * v)) / (2.0 * n);
}

static float *window(size_t *n)
{
	gw_test_sparse s;
	gw_test_load_sparse(1, &s);
	GW_CHECK(s.nnz >= WINDOW, "spam trace too short");
	float *v = malloc(WINDOW * sizeof(float));
	GW_CHECK(v, "out of memory");
	memcpy(v, s.vals + 8192, WINDOW * sizeof(float));
	gw_test_sparse_free(&s);
	*n = WINDOW;
	return v;
}

/* Seeds of the runs, hashed: seeds k golden-ratio steps apart would give
 * streams that are shifted copies of each other (SplitMix64's state just
 * advances by that step), so value i of run k would reuse the draw of
 * value i + 1 of run k - 1 and the runs would not be independent. Callers
 * mix their seeds the same way (dr.h). */
static uint64_t seed_of(int k)
{
	uint64_t s = 0x1234 + (uint64_t)k;
	return dr_rng_next(&s);
}

static void unbiased(unsigned levels, unsigned bucket)
{
	size_t n;
	float *v = window(&n);
	struct dr_value_cfg cfg = {.levels = levels, .bucket = bucket};
	size_t cap = 6 + 4 * n + 2 * n + 16;
	uint8_t *sec = malloc(cap);
	float *d = malloc(n * sizeof(float));
	double *sum = calloc(n, sizeof(double));
	GW_CHECK(sec && d && sum, "out of memory");
	int len = 0;
	for (int k = 0; k < SEEDS; k++) {
		cfg.seed = seed_of(k);
		len = dr_value_qsgd.encode(v, (uint32_t)n, &cfg, sec, cap);
		GW_CHECK(len > 0, "encode: %s", gw_error_name(len));
		GW_OK_CALL(dr_value_qsgd.decode(sec, (size_t)len, (uint32_t)n, d));
		for (size_t i = 0; i < n; i++)
			sum[i] += d[i];
	}
	/* Norms do not depend on the seed: read them from the last section. */
	double worst = 0, total_x = 0, total_mean = 0, total_var = 0;
	size_t worst_i = 0;
	for (size_t i = 0; i < n; i++) {
		double norm = gw_ldf32(sec + 6 + 4 * (i / bucket));
		double step = norm / levels;
		double mean = sum[i] / SEEDS;
		total_x += v[i];
		total_mean += mean;
		if (norm == 0) {
			GW_CHECK(mean == 0, "value %zu in a zero bucket: mean %g", i, mean);
			continue;
		}
		double r = fabs((double)v[i]) / norm * levels;
		double p = r - floor(r);
		double err = fabs(mean - (double)v[i]) / step;
		/* Draws resolve 2^-24; each decoded float rounds by 2^-24. */
		double tol = bernstein(p * (1 - p), SEEDS, DELTA) + 0x1p-23 +
			     0x1p-24 * (r + 1);
		GW_CHECK(err <= tol, "s %u bucket %u value %zu: x %a, mean over %d "
			 "seeds %a: error %.3g steps > bound %.3g (p %.4f)", levels,
			 bucket, i, (double)v[i], SEEDS, mean, err, tol, p);
		if (err / tol > worst) {
			worst = err / tol;
			worst_i = i;
		}
		total_var += p * (1 - p) * step * step / SEEDS;
	}
	double sigma = sqrt(total_var);
	GW_CHECK(fabs(total_mean - total_x) <= 6 * sigma + 1e-6 * fabs(total_x) + 1e-12,
		 "s %u bucket %u: mean sum %.9g, true %.9g, |diff| %.3g > 6 sigma %.3g",
		 levels, bucket, total_mean, total_x, fabs(total_mean - total_x), sigma);
	print_message("  s %5u bucket %4u: %.3f B/v, worst value %zu at %.2f of its "
		      "bound, sum off by %.2f sigma\n", levels, bucket,
		      (double)len / n, worst_i, worst,
		      sigma > 0 ? fabs(total_mean - total_x) / sigma : 0.0);
	free(sum);
	free(d);
	free(sec);
	free(v);
}

static void test_s127_b512(void **state) { (void)state; unbiased(127, 512); }
static void test_s1_b4096(void **state) { (void)state; unbiased(1, 4096); }
static void test_s15_b64(void **state) { (void)state; unbiased(15, 64); }
static void test_s3_b1(void **state) { (void)state; unbiased(3, 1); }

/* The spec, written out again: SplitMix64 from the seed, u the top 24 bits
 * times 2^-24, r = |v| / norm · s in double, l = floor(r) + (u < r -
 * floor(r)); decoded ±(float)(norm · l / s). */
static uint64_t sm64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void test_spec_and_determinism(void **state)
{
	(void)state;
	size_t n;
	float *v = window(&n);
	v[5] = 0.0f;
	v[6] = -0.0f;
	static const unsigned cfgs[][2] = {{127, 512}, {1, 100}, {7, 3}};
	size_t cap = 6 + 4 * n + 2 * n + 16;
	uint8_t *a = malloc(cap), *b = malloc(cap);
	float *d = malloc(n * sizeof(float));
	GW_CHECK(a && b && d, "out of memory");
	for (size_t c = 0; c < GW_ARRAY_SIZE(cfgs); c++) {
		unsigned s = cfgs[c][0], bucket = cfgs[c][1];
		struct dr_value_cfg cfg = {.levels = s, .bucket = bucket, .seed = 42 + c};
		int la = dr_value_qsgd.encode(v, (uint32_t)n, &cfg, a, cap);
		int lb = dr_value_qsgd.encode(v, (uint32_t)n, &cfg, b, cap);
		GW_CHECK(la > 0 && la == lb && !memcmp(a, b, (size_t)la),
			 "s %u: same seed, different sections", s);
		GW_CHECK((size_t)la == 6 + 4 * ((n + bucket - 1) / bucket) +
				       (n * (dr_bits_for(s + 1) + 1) + 7) / 8,
			 "s %u bucket %u: %d bytes", s, bucket, la);
		cfg.seed++;
		lb = dr_value_qsgd.encode(v, (uint32_t)n, &cfg, b, cap);
		GW_CHECK(memcmp(a, b, (size_t)la), "s %u: seed ignored", s);
		GW_OK_CALL(dr_value_qsgd.decode(a, (size_t)la, (uint32_t)n, d));
		uint64_t st = 42 + c;
		for (size_t i = 0; i < n; i++) {
			float norm = gw_ldf32(a + 6 + 4 * (i / bucket));
			double u = (double)(sm64(&st) >> 40) * 0x1p-24;
			unsigned l = 0;
			if (norm > 0) {
				double r = fabs((double)v[i]) / norm * s;
				l = (unsigned)floor(r) + (u < r - floor(r));
			}
			float m = (float)((double)norm * l / s);
			float want = l && v[i] < 0 ? -m : m;
			GW_CHECK(gw_test_bits(d[i]) == gw_test_bits(want),
				 "s %u value %zu: %a decoded as %a, spec says %a", s,
				 i, (double)v[i], (double)d[i], (double)want);
		}
		/* Norms: the L2 norm of the bucket as float32 (these buckets
		 * are far from the clamps). */
		for (size_t k = 0; k * bucket < n; k++) {
			double ss = 0;
			for (size_t i = k * bucket; i < n && i < (k + 1) * bucket; i++)
				ss += (double)v[i] * v[i];
			float want = (float)sqrt(ss), got = gw_ldf32(a + 6 + 4 * k);
			if (bucket > 1)
				GW_CHECK(got == want, "bucket %zu: norm %a, want %a", k,
					 (double)got, (double)want);
		}
	}
	free(d);
	free(b);
	free(a);
	free(v);
}

GW_TEST_MAIN("dr_qsgd_unbiased", 1,
	     cmocka_unit_test(test_spec_and_determinism),
	     cmocka_unit_test(test_s127_b512), cmocka_unit_test(test_s1_b4096),
	     cmocka_unit_test(test_s15_b64), cmocka_unit_test(test_s3_b1))
