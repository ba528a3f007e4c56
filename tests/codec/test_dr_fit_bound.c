/* DeepReduce's curve-fit value codecs keep their stated bound: for poly (degrees 0 to 5; the paper's piece heuristic and 1 to 128 explicit pieces) and dexp, on the real traces (CNN fc.weight top 1% and whole tensors, spam windows of 4096) and on synthetic curves, every decoded value lies within the bound the section reports, and the bound is the measured largest error rounded up to float32 — no looser. More pieces never fit worse (the greedy segmentation only refines), and exactly linear, quadratic and double-exponential data decode near exactly. Prints max and RMS errors and bytes per value. */
#include "gw_test.h"

#include <math.h>

#include "../../codec/deepreduce/dr.h"

struct fit_stat {
	double maxerr, rms, bytes_per_value;
	float bound;
};

/* Encodes with ops/cfg, decodes, checks every value against the stated
 * bound and the bound against the measured error. */
static struct fit_stat fit(const char *what, const struct dr_value_ops *ops,
			   const struct dr_value_cfg *cfg, const float *v,
			   uint32_t n)
{
	size_t cap = 8 * (size_t)n + 65536;
	uint8_t *sec = malloc(cap);
	float *d = malloc(n * sizeof(float));
	GW_CHECK(sec && d, "out of memory");
	int len = ops->encode(v, n, cfg, sec, cap);
	GW_CHECK(len > 0, "%s/%s degree %u pieces %u: encode: %s", what, ops->name,
		 cfg->degree, cfg->pieces, gw_error_name(len));
	struct fit_stat st = {0};
	GW_OK_CALL(ops->bound(sec, (size_t)len, n, &st.bound));
	GW_OK_CALL(ops->decode(sec, (size_t)len, n, d));
	double ss = 0;
	for (uint32_t i = 0; i < n; i++) {
		double e = fabs((double)d[i] - (double)v[i]);
		GW_CHECK(e <= st.bound, "%s/%s degree %u pieces %u: value %u: %a "
			 "decoded as %a, error %.4g > stated bound %.4g", what,
			 ops->name, cfg->degree, cfg->pieces, i, (double)v[i],
			 (double)d[i], e, (double)st.bound);
		st.maxerr = fmax(st.maxerr, e);
		ss += e * e;
	}
	/* The bound is the largest error rounded up to float32, not more. */
	float tight = (float)st.maxerr;
	if ((double)tight < st.maxerr)
		tight = nextafterf(tight, INFINITY);
	GW_CHECK(st.bound == tight, "%s/%s degree %u pieces %u: stated bound %a, "
		 "largest error %a", what, ops->name, cfg->degree, cfg->pieces,
		 (double)st.bound, st.maxerr);
	st.rms = sqrt(ss / n);
	st.bytes_per_value = (double)len / n;
	free(d);
	free(sec);
	return st;
}

static double rms_of(const float *v, uint32_t n)
{
	double ss = 0;
	for (uint32_t i = 0; i < n; i++)
		ss += (double)v[i] * v[i];
	return sqrt(ss / n);
}

static const unsigned explicit_pieces[] = {1, 2, 4, 8, 32, 128};

/* The whole sweep on one input; prints one line per degree. */
static void sweep(const char *what, const float *v, uint32_t n)
{
	double scale = rms_of(v, n);
	print_message("  %s: n %u, rms %.3g (errors below relative to it)\n", what,
		      n, scale);
	if (scale == 0)
		scale = 1;
	for (unsigned deg = 0; deg <= 5; deg++) {
		struct dr_value_cfg cfg = {.degree = deg};
		struct fit_stat h = fit(what, &dr_value_poly, &cfg, v, n);
		print_message("    poly d%u  heur: max %.3f rms %.3f %.2f B/v |", deg,
			      h.maxerr / scale, h.rms / scale, h.bytes_per_value);
		double prev = INFINITY;
		for (size_t k = 0; k < GW_ARRAY_SIZE(explicit_pieces); k++) {
			cfg.pieces = explicit_pieces[k];
			struct fit_stat s = fit(what, &dr_value_poly, &cfg, v, n);
			print_message(" p%u %.3f/%.3f", cfg.pieces, s.maxerr / scale,
				      s.rms / scale);
			/* Splits are made one at a time by the same rule, so
			 * more pieces refine fewer: the least-squares error can
			 * only drop (up to float32 coefficients). */
			GW_CHECK(s.rms <= prev * 1.01 + 1e-6 * scale,
				 "%s: degree %u, %u pieces: rms %.4g above %.4g "
				 "with fewer pieces", what, deg, cfg.pieces, s.rms, prev);
			prev = s.rms;
		}
		print_message("\n");
	}
	struct dr_value_cfg cfg = {0};
	struct fit_stat s = fit(what, &dr_value_dexp, &cfg, v, n);
	print_message("    dexp     max %.3f rms %.3f %.2f B/v\n", s.maxerr / scale,
		      s.rms / scale, s.bytes_per_value);
}

/* ---- exact models ---------------------------------------------------------- */

/* Values of a descending curve, scattered over the positions. */
static float *scatter(uint32_t n, double (*f)(double), uint64_t seed)
{
	float *v = malloc(n * sizeof(float));
	size_t *idx = malloc(n * sizeof(size_t));
	GW_CHECK(v && idx, "out of memory");
	for (uint32_t i = 0; i < n; i++)
		idx[i] = i;
	gw_test_rng r = {seed};
	gw_test_shuffle(&r, idx, n);
	for (uint32_t i = 0; i < n; i++)
		v[idx[i]] = (float)f(n == 1 ? 0.0 : (double)i / (n - 1));
	free(idx);
	return v;
}

static double line_pos(double x) { return 3.0 - 2.0 * x; }
static double line_both(double x) { return 1.0 - 2.0 * x; }
static double quad(double x) { return 2.0 - x - 0.5 * x * x; }
static double dexp_model(double x) { return 2.0 * exp(-3.0 * x) - 0.5 * exp(2.0 * x); }

static void test_exact_models(void **state)
{
	(void)state;
	static const uint32_t ns[] = {2, 3, 10, 1000, 100000};
	for (size_t k = 0; k < GW_ARRAY_SIZE(ns); k++) {
		uint32_t n = ns[k];
		struct dr_value_cfg c1 = {.degree = 1, .pieces = 1};
		float *v = scatter(n, line_pos, 1 + k);
		struct fit_stat s = fit("line", &dr_value_poly, &c1, v, n);
		GW_CHECK(s.maxerr <= 4e-6, "line of %u values: degree 1 error %.3g", n,
			 s.maxerr);
		free(v);
		/* Crossing zero: one piece per sign, each a line. */
		v = scatter(n, line_both, 11 + k);
		s = fit("line +-", &dr_value_poly, &c1, v, n);
		GW_CHECK(s.maxerr <= 4e-6, "signed line of %u values: error %.3g", n,
			 s.maxerr);
		free(v);
		struct dr_value_cfg c2 = {.degree = 2, .pieces = 1};
		v = scatter(n, quad, 21 + k);
		s = fit("quadratic", &dr_value_poly, &c2, v, n);
		GW_CHECK(s.maxerr <= 4e-6, "quadratic of %u values: degree 2 error %.3g",
			 n, s.maxerr);
		free(v);
		if (n >= 10) {
			struct dr_value_cfg c = {0};
			v = scatter(n, dexp_model, 31 + k);
			s = fit("dexp model", &dr_value_dexp, &c, v, n);
			GW_CHECK(s.maxerr <= 1e-4, "double exponential of %u values: "
				 "error %.3g", n, s.maxerr);
			free(v);
		}
	}
}

static double gauss_q(double x)   /* a sorted bell: steep tails */
{
	double t = 0.999 * (1 - 2 * x);
	return 0.01 * t / sqrt(1 - t * t);
}
static double steps(double x) { return floor(8 * (1 - x)) * 0.125; }

static void test_synthetic_curves(void **state)
{
	(void)state;
	static const uint32_t ns[] = {1, 2, 5, 17, 4096};
	for (size_t k = 0; k < GW_ARRAY_SIZE(ns); k++) {
		char what[64];
		float *v = scatter(ns[k], gauss_q, 41 + k);
		snprintf(what, sizeof(what), "sorted bell n %u", ns[k]);
		sweep(what, v, ns[k]);
		free(v);
		v = scatter(ns[k], steps, 51 + k);
		snprintf(what, sizeof(what), "staircase n %u", ns[k]);
		sweep(what, v, ns[k]);
		free(v);
	}
}

/* ---- real traces ----------------------------------------------------------- */


static void test_cnn(void **state)
{
	(void)state;
	GW_TEST_NEED_TRACES();
	gw_test_dense d;
	int idx = -1;
	for (int i = 0; i < GW_TEST_N_DENSE; i++)
		if (!strcmp(gw_test_dense_traces[i], "cnn/it100_fc.weight.f32"))
			idx = i;
	gw_test_load_dense(idx, &d);
	uint32_t k = (uint32_t)(d.n / 100);
	float *t = gw_test_top_k_values(d.v, d.n, k);
	sweep("cnn it100 fc.weight top 1%", t, k);
	free(t);
	t = gw_test_top_k_values(d.v, d.n, (uint32_t)(d.n / 10));
	sweep("cnn it100 fc.weight top 10%", t, (uint32_t)(d.n / 10));
	free(t);
	sweep("cnn it100 fc.weight", d.v, (uint32_t)d.n);
	gw_test_dense_free(&d);
	size_t n;
	float *all = gw_test_load_cnn_iter(1, &n);
	sweep("cnn iteration 10, all tensors", all, (uint32_t)n);
	free(all);
}

static void test_spam(void **state)
{
	(void)state;
	GW_TEST_NEED_TRACES();
	for (int i = 0; i < GW_TEST_N_SPARSE; i += 2) {
		gw_test_sparse s;
		gw_test_load_sparse(i, &s);
		for (size_t w = 0; w + 4096 <= s.nnz; w += 4096 * 16) {
			char what[64];
			snprintf(what, sizeof(what), "%s [%zu, +4096)", s.name, w);
			sweep(what, s.vals + w, 4096);
		}
		gw_test_sparse_free(&s);
	}
}

GW_TEST_MAIN("dr_fit_bound", 0,
	     cmocka_unit_test(test_exact_models),
	     cmocka_unit_test(test_synthetic_curves),
	     cmocka_unit_test(test_cnn), cmocka_unit_test(test_spam))
