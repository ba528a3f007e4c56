/* Optimisers: Adam's first two steps against the formula of Kingma & Ba
 * (bias correction included) worked in double; heavy-ball momentum's
 * first three steps; defaults, bad arguments, free of NULL. */
#include "../gw_test.h"

#include <math.h>

#include "optim.h"

enum { N = 6 };

static void close_to(double got, double want, double tol, const char *what,
		     int i)
{
	GW_CHECK(fabs(got - want) <= tol * (1 + fabs(want)),
		 "%s[%d] = %.9g, expected %.9g", what, i, got, want);
}

static void test_adam_two_steps(void **state)
{
	(void)state;
	static const float w0[N] = {1, -2, 0.5f, 0, 3, -0.25f};
	static const float g1[N] = {0.1f, -4, 1e-3f, 0, 2, -0.5f};
	static const float g2[N] = {-0.3f, -1, 2e-3f, 0, 2, 0.5f};
	const float lr = 0.01f;
	struct gw_adam a;
	GW_OK_CALL(gw_adam_init(&a, N, lr));
	GW_CHECK(a.beta1 == 0.9f && a.beta2 == 0.999f && a.eps == 1e-8f &&
			 a.t == 0 && a.lr == lr && a.n == N,
		 "defaults: beta1 %g beta2 %g eps %g t %llu", a.beta1, a.beta2,
		 a.eps, (unsigned long long)a.t);
	float w[N];
	memcpy(w, w0, sizeof(w));

	double m[N] = {0}, v[N] = {0}, ref[N];
	const double b1 = 0.9, b2 = 0.999, eps = 1e-8;
	for (int i = 0; i < N; i++)
		ref[i] = w0[i];
	const float *gs[2] = {g1, g2};
	for (int t = 1; t <= 2; t++) {
		gw_adam_step(&a, w, gs[t - 1]);
		GW_CHECK(a.t == (uint64_t)t, "t = %llu after step %d",
			 (unsigned long long)a.t, t);
		for (int i = 0; i < N; i++) {
			double g = gs[t - 1][i];
			m[i] = b1 * m[i] + (1 - b1) * g;
			v[i] = b2 * v[i] + (1 - b2) * g * g;
			double mh = m[i] / (1 - pow(b1, t));
			double vh = v[i] / (1 - pow(b2, t));
			ref[i] -= lr * mh / (sqrt(vh) + eps);
			close_to(w[i], ref[i], 1e-6, t == 1 ? "w after step 1"
							  : "w after step 2", i);
			close_to(a.m[i], m[i], 1e-6, "m", i);
			close_to(a.v[i], v[i], 1e-6, "v", i);
		}
		if (t == 1)
			/* bias correction makes step 1 exactly lr * sign(g) */
			for (int i = 0; i < N; i++)
				close_to(w0[i] - w[i],
					 g1[i] > 0 ? lr : g1[i] < 0 ? -lr : 0,
					 1e-5, "step 1 size", i);
	}
	GW_CHECK(w[3] == 0, "a zero gradient must not move w (got %g)", w[3]);
	gw_adam_free(&a);
	GW_CHECK(!a.m && !a.v, "free must clear the state");
	gw_adam_free(&a);
	gw_adam_free(NULL);
}

/* Late steps: the bias correction tends to 1, and t in the millions is
 * no trouble (beta^t underflows to 0, never NaN). */
static void test_adam_late(void **state)
{
	(void)state;
	struct gw_adam a;
	GW_OK_CALL(gw_adam_init(&a, 1, 0.5f));
	float w = 0, g = 1;
	a.t = 10000000;
	a.m[0] = 1;
	a.v[0] = 1;
	gw_adam_step(&a, &w, &g);
	GW_CHECK(fabs(w + 0.5) < 1e-6, "w = %g, expected -0.5", w);
	gw_adam_free(&a);
}

static void test_momentum(void **state)
{
	(void)state;
	static const float w0[N] = {1, -2, 0.5f, 0, 3, -0.25f};
	static const float g[3][N] = {{0.1f, -4, 1e-3f, 0, 2, -0.5f},
				      {-0.3f, -1, 2e-3f, 0, 2, 0.5f},
				      {1, 1, 1, 0, -2, 0}};
	const float lr = 0.1f, mu = 0.9f;
	struct gw_momentum s;
	GW_OK_CALL(gw_momentum_init(&s, N, lr, mu));
	float w[N];
	memcpy(w, w0, sizeof(w));
	double v[N] = {0}, ref[N];
	for (int i = 0; i < N; i++)
		ref[i] = w0[i];
	for (int t = 0; t < 3; t++) {
		gw_momentum_step(&s, w, g[t]);
		for (int i = 0; i < N; i++) {
			v[i] = 0.9 * v[i] + g[t][i];   /* v = mu v + g */
			ref[i] -= 0.1 * v[i];          /* w -= lr v */
			close_to(w[i], ref[i], 1e-6, "w", i);
			close_to(s.v[i], v[i], 1e-6, "v", i);
		}
	}
	/* step 2 by hand for element 0: v = 0.9 * 0.1 - 0.3 = -0.21 */
	GW_CHECK(fabs(w0[0] - 0.1 * 0.1 + 0.1 * 0.21 - 0.1 * (0.9 * -0.21 + 1) -
		      w[0]) < 1e-6, "w[0] after three steps: %g", w[0]);
	gw_momentum_free(&s);
	gw_momentum_free(NULL);
}

static void test_bad_args(void **state)
{
	(void)state;
	struct gw_adam a;
	struct gw_momentum s;
	GW_EXPECT_RC(gw_adam_init(&a, 0, 0.1f), GW_EINVAL, "n = 0");
	GW_EXPECT_RC(gw_adam_init(&a, 4, NAN), GW_EINVAL, "lr NaN");
	GW_EXPECT_RC(gw_adam_init(&a, 4, -1), GW_EINVAL, "lr < 0");
	GW_EXPECT_RC(gw_adam_init(NULL, 4, 0.1f), GW_EINVAL, "NULL");
	GW_EXPECT_RC(gw_momentum_init(&s, 0, 0.1f, 0.9f), GW_EINVAL, "n = 0");
	GW_EXPECT_RC(gw_momentum_init(&s, 4, 0.1f, 1), GW_EINVAL, "mu = 1");
	GW_EXPECT_RC(gw_momentum_init(&s, 4, 0.1f, -0.1f), GW_EINVAL, "mu < 0");
	GW_OK_CALL(gw_momentum_init(&s, 4, 0.1f, 0));
	gw_momentum_free(&s);
}

GW_TEST_MAIN("optim", 0,
	     cmocka_unit_test(test_adam_two_steps),
	     cmocka_unit_test(test_adam_late),
	     cmocka_unit_test(test_momentum),
	     cmocka_unit_test(test_bad_args))
