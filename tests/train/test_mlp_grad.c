/* MLP: gw_mlp_grad against central differences of a double-precision
 * reference of the same net (in 5, hid 4, out 3, n 3), the loss it
 * returns against that reference; He-normal init that depends on the
 * seed only (same bits each time, zero biases, variance 2/fan_in); bad
 * labels and batch sizes give NAN and leave g alone; gw_mlp_eval across
 * batches. */
#include "../gw_test.h"

#include <math.h>

#include "mlp.h"

enum { IN = 5, HID = 4, OUT = 3, NB = 3, BMAX = 4 };
enum { NP = HID * IN + HID + OUT * HID + OUT };

/* Mean softmax cross-entropy, all in double, from the layout in mlp.h. */
static double ref_loss(const double *p, const float *X, const uint8_t *y,
		       uint32_t n, uint32_t *pred)
{
	const double *W1 = p, *b1 = W1 + HID * IN, *W2 = b1 + HID,
		     *b2 = W2 + OUT * HID;
	double sum = 0;
	for (uint32_t i = 0; i < n; i++) {
		double h[HID], z[OUT], mx = -INFINITY, se = 0;
		for (int j = 0; j < HID; j++) {
			double a = b1[j];
			for (int k = 0; k < IN; k++)
				a += W1[j * IN + k] * X[i * IN + k];
			h[j] = a > 0 ? a : 0;
		}
		for (int o = 0; o < OUT; o++) {
			z[o] = b2[o];
			for (int j = 0; j < HID; j++)
				z[o] += W2[o * HID + j] * h[j];
			mx = fmax(mx, z[o]);
		}
		uint32_t best = 0;
		for (int o = 0; o < OUT; o++) {
			se += exp(z[o] - mx);
			if (z[o] > z[best])
				best = (uint32_t)o;
		}
		if (pred)
			pred[i] = best;
		sum += mx + log(se) - z[y[i]];
	}
	return sum / n;
}

static void random_inputs(gw_test_rng *r, float *X, uint8_t *y, uint32_t n)
{
	for (uint32_t i = 0; i < n * IN; i++)
		X[i] = gw_test_uniform(r, -2, 2);
	for (uint32_t i = 0; i < n; i++)
		y[i] = (uint8_t)gw_test_below(r, OUT);
}

static void test_fd(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 10; seed++) {
		gw_test_rng r = {seed * 7919};
		struct gw_mlp m;
		float p[NP], g[NP], X[NB * IN];
		uint8_t y[NB];
		GW_OK_CALL(gw_mlp_init(&m, IN, HID, OUT, BMAX, seed, p));
		GW_CHECK(m.nparams == NP && gw_mlp_nparams(IN, HID, OUT) == NP,
			 "nparams %zu, expected %d", m.nparams, NP);
		/* nonzero biases too, so their gradient is exercised fully */
		for (int k = 0; k < NP; k++)
			p[k] += gw_test_uniform(&r, -0.3f, 0.3f);
		random_inputs(&r, X, y, NB);

		double loss = gw_mlp_grad(&m, p, X, y, NB, g);
		double pd[NP];
		for (int k = 0; k < NP; k++)
			pd[k] = p[k];
		double want = ref_loss(pd, X, y, NB, NULL);
		GW_CHECK(fabs(loss - want) < 1e-5 * (1 + want),
			 "seed %llu: loss %.9g, reference %.9g",
			 (unsigned long long)seed, loss, want);

		const double h = 1e-6;
		int nonzero = 0;
		for (int k = 0; k < NP; k++) {
			double keep = pd[k];
			pd[k] = keep + h;
			double lp = ref_loss(pd, X, y, NB, NULL);
			pd[k] = keep - h;
			double lm = ref_loss(pd, X, y, NB, NULL);
			pd[k] = keep;
			double fd = (lp - lm) / (2 * h);
			GW_CHECK(fabs(g[k] - fd) <= 1e-4 * (1 + fabs(fd)),
				 "seed %llu: dloss/dparam[%d] = %.8g, central "
				 "difference %.8g", (unsigned long long)seed, k,
				 g[k], fd);
			nonzero += fabs(fd) > 1e-4;
		}
		GW_CHECK(nonzero > NP / 3, "seed %llu: only %d of %d gradients "
			 "are nonzero", (unsigned long long)seed, nonzero, NP);
		gw_mlp_free(&m);
	}
}

/* FNV-1a of the parameter bits: a pin on the init, so that a change to
 * it (which would split replicas built from different versions) shows. */
static uint64_t fnv(const float *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++) {
		uint32_t b = gw_test_bits(p[i]);
		for (int k = 0; k < 4; k++) {
			h ^= (b >> (8 * k)) & 0xff;
			h *= 0x100000001b3ull;
		}
	}
	return h;
}

static void test_init(void **state)
{
	(void)state;
	struct gw_mlp a, b;
	float pa[NP], pb[NP];
	gw_test_fill(pb, NP, NAN);
	GW_OK_CALL(gw_mlp_init(&a, IN, HID, OUT, BMAX, 42, pa));
	GW_OK_CALL(gw_mlp_init(&b, IN, HID, OUT, 1, 42, pb));
	GW_CHECK(!memcmp(pa, pb, sizeof(pa)),
		 "same seed must give the same bits (batch_max aside)");
	gw_mlp_free(&b);
	GW_OK_CALL(gw_mlp_init(&b, IN, HID, OUT, 1, 43, pb));
	GW_CHECK(memcmp(pa, pb, sizeof(pa)) != 0, "seeds 42 and 43 agree");
	gw_mlp_free(&b);
	gw_mlp_free(&a);
	gw_mlp_free(NULL);

	/* He-normal: zero biases, mean 0 and variance 2 / fan_in */
	enum { BI = 200, BH = 300, BO = 10 };
	size_t np = gw_mlp_nparams(BI, BH, BO);
	float *p = malloc(np * sizeof(float));
	assert_non_null(p);
	GW_OK_CALL(gw_mlp_init(&a, BI, BH, BO, 8, 7, p));
	const float *W1 = p, *b1 = W1 + BH * BI, *W2 = b1 + BH, *b2 = W2 + BO * BH;
	for (int j = 0; j < BH; j++)
		GW_CHECK(b1[j] == 0 && !signbit(b1[j]), "b1[%d] = %g", j, b1[j]);
	for (int j = 0; j < BO; j++)
		GW_CHECK(b2[j] == 0, "b2[%d] = %g", j, b2[j]);
	struct { const float *w; size_t n; double fan; } layer[2] = {
		{W1, (size_t)BH * BI, BI}, {W2, (size_t)BO * BH, BH}};
	for (int L = 0; L < 2; L++) {
		double s = 0, s2 = 0, s4 = 0;
		for (size_t i = 0; i < layer[L].n; i++) {
			double w = layer[L].w[i];
			s += w;
			s2 += w * w;
			s4 += w * w * w * w;
		}
		double n = (double)layer[L].n, var = s2 / n, want = 2 / layer[L].fan;
		GW_CHECK(fabs(s / n) < 4 * sqrt(want / n),
			 "layer %d: mean %g", L + 1, s / n);
		GW_CHECK(fabs(var / want - 1) < 0.06,
			 "layer %d: variance %g, expected 2/%g = %g", L + 1, var,
			 layer[L].fan, want);
		double kurt = s4 / n / (var * var);   /* 3 for a normal */
		GW_CHECK(kurt > 2.6 && kurt < 3.4, "layer %d: kurtosis %g",
			 L + 1, kurt);
	}
	gw_mlp_free(&a);
	free(p);

	GW_OK_CALL(gw_mlp_init(&a, IN, HID, OUT, BMAX, 1, pa));
	GW_CHECK(fnv(pa, NP) == 0x49a4abbe69f072c9ull, "init of seed 1 changed: %016llx",
		 (unsigned long long)fnv(pa, NP));
	gw_mlp_free(&a);

	GW_EXPECT_RC(gw_mlp_init(&a, 0, HID, OUT, BMAX, 1, pa), GW_EINVAL, "in 0");
	GW_EXPECT_RC(gw_mlp_init(&a, IN, HID, 0, BMAX, 1, pa), GW_EINVAL, "out 0");
	GW_EXPECT_RC(gw_mlp_init(&a, IN, HID, OUT, 0, 1, pa), GW_EINVAL,
		     "batch_max 0");
	GW_EXPECT_RC(gw_mlp_init(&a, IN, HID, OUT, BMAX, 1, NULL), GW_EINVAL,
		     "NULL params");
	gw_mlp_free(&a);
}

static void test_bad_calls(void **state)
{
	(void)state;
	struct gw_mlp m;
	float p[NP], g[NP], X[(BMAX + 1) * IN];
	uint8_t y[BMAX + 1];
	gw_test_rng r = {5};
	GW_OK_CALL(gw_mlp_init(&m, IN, HID, OUT, BMAX, 3, p));
	random_inputs(&r, X, y, BMAX + 1);
	gw_test_fill(g, NP, 9.5f);
	y[1] = OUT;
	GW_CHECK(isnan(gw_mlp_grad(&m, p, X, y, NB, g)), "label %d", OUT);
	y[1] = 255;
	GW_CHECK(isnan(gw_mlp_grad(&m, p, X, y, NB, g)), "label 255");
	y[1] = 0;
	GW_CHECK(isnan(gw_mlp_grad(&m, p, X, y, 0, g)), "n = 0");
	GW_CHECK(isnan(gw_mlp_grad(&m, p, X, y, BMAX + 1, g)), "n > batch_max");
	for (int k = 0; k < NP; k++)
		GW_CHECK(g[k] == 9.5f, "a refused call wrote g[%d]", k);
	GW_CHECK(!isnan(gw_mlp_grad(&m, p, X, y, BMAX, g)), "n = batch_max");
	gw_mlp_free(&m);
}

static void test_eval(void **state)
{
	(void)state;
	enum { N = 11 };
	struct gw_mlp m;
	float p[NP], X[N * IN];
	uint8_t y[N];
	gw_test_rng r = {99};
	GW_OK_CALL(gw_mlp_init(&m, IN, HID, OUT, BMAX, 8, p));
	for (int k = 0; k < NP; k++)
		p[k] += gw_test_uniform(&r, -0.5f, 0.5f);
	random_inputs(&r, X, y, N);
	double pd[NP];
	for (int k = 0; k < NP; k++)
		pd[k] = p[k];
	uint32_t pred[N];
	double want = ref_loss(pd, X, y, N, pred);
	int right = 0;
	for (int i = 0; i < N; i++)
		right += pred[i] == y[i];
	double loss, acc;
	gw_mlp_eval(&m, p, X, y, N, &loss, &acc);
	GW_CHECK(fabs(loss - want) < 1e-5 * (1 + want) &&
			 fabs(acc - (double)right / N) < 1e-12,
		 "eval over 11 rows in batches of 4: loss %.9g acc %g, want "
		 "%.9g %g", loss, acc, want, (double)right / N);
	GW_CHECK(right > 0 && right < N, "want a mixed accuracy, got %d/%d",
		 right, N);
	gw_mlp_free(&m);
}

GW_TEST_MAIN("mlp_grad", 0,
	     cmocka_unit_test(test_fd),
	     cmocka_unit_test(test_init),
	     cmocka_unit_test(test_bad_calls),
	     cmocka_unit_test(test_eval))
