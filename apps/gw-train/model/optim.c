/* Adam and SGD with momentum. Every replica runs these on the same
 * averaged gradient and must land on the same bits, so nothing here may
 * depend on the machine: only IEEE +, *, / and sqrt (all correctly
 * rounded), and beta^t by repeated multiplication instead of libm's pow,
 * whose last bit may differ between builds of libm. */
#include "optim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gw/common.h>

#include "gw_util.h"

/* b^t in double by squaring: O(log t) exact-per-step multiplies. */
static double ipow(double b, uint64_t t)
{
	double r = 1;
	while (t) {
		if (t & 1)
			r *= b;
		b *= b;
		t >>= 1;
	}
	return r;
}

int gw_adam_init(struct gw_adam *a, size_t n, float lr)
{
	if (!a)
		return GW_ERR(GW_EINVAL);
	memset(a, 0, sizeof(*a));
	if (n == 0 || !(lr > 0) || !isfinite(lr))
		return GW_ERR(GW_EINVAL);
	a->m = calloc(n, sizeof(float));
	a->v = calloc(n, sizeof(float));
	if (!a->m || !a->v) {
		gw_adam_free(a);
		return GW_ERR(GW_ENOMEM);
	}
	a->lr = lr;
	a->beta1 = 0.9f;
	a->beta2 = 0.999f;
	a->eps = 1e-8f;
	a->n = n;
	return 0;
}

void gw_adam_step(struct gw_adam *a, float *w, const float *g)
{
	a->t++;
	/* bias corrections 1 - beta^t, the betas as the float fields hold them */
	float c1 = (float)(1.0 - ipow(a->beta1, a->t));
	float c2 = (float)(1.0 - ipow(a->beta2, a->t));
	float b1 = a->beta1, b2 = a->beta2;
	for (size_t i = 0; i < a->n; i++) {
		float m = b1 * a->m[i] + (1 - b1) * g[i];
		float v = b2 * a->v[i] + (1 - b2) * g[i] * g[i];
		a->m[i] = m;
		a->v[i] = v;
		w[i] -= a->lr * (m / c1) / (sqrtf(v / c2) + a->eps);
	}
}

void gw_adam_free(struct gw_adam *a)
{
	if (!a)
		return;
	free(a->m);
	free(a->v);
	memset(a, 0, sizeof(*a));
}

int gw_momentum_init(struct gw_momentum *s, size_t n, float lr, float mu)
{
	if (!s)
		return GW_ERR(GW_EINVAL);
	memset(s, 0, sizeof(*s));
	if (n == 0 || !(lr > 0) || !isfinite(lr) || !(mu >= 0 && mu < 1))
		return GW_ERR(GW_EINVAL);
	s->v = calloc(n, sizeof(float));
	if (!s->v)
		return GW_ERR(GW_ENOMEM);
	s->lr = lr;
	s->mu = mu;
	s->n = n;
	return 0;
}

void gw_momentum_step(struct gw_momentum *s, float *w, const float *g)
{
	for (size_t i = 0; i < s->n; i++) {
		s->v[i] = s->mu * s->v[i] + g[i];
		w[i] -= s->lr * s->v[i];
	}
}

void gw_momentum_free(struct gw_momentum *s)
{
	if (!s)
		return;
	free(s->v);
	memset(s, 0, sizeof(*s));
}
