/* One-hidden-layer perceptron: Z1 = X W1^T + b1, H = relu(Z1),
 * Z2 = H W2^T + b2, softmax cross-entropy. The four matrix products of a
 * step run in cblas_sgemm; everything else is a loop over n x hid or
 * n x out, cheap next to them. Scratch comes from init, so a training
 * step allocates nothing. */
#include "mlp.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include <gw/common.h>

#include "gw_rand.h"
#include "gw_util.h"

/* The parameter blocks in their fixed order (mlp.h). */
struct layout {
	float *W1, *b1, *W2, *b2;
};

static struct layout layout_of(const struct gw_mlp *m, const float *p)
{
	struct layout l;
	l.W1 = (float *)p;
	l.b1 = l.W1 + (size_t)m->hid * m->in;
	l.W2 = l.b1 + m->hid;
	l.b2 = l.W2 + (size_t)m->out * m->hid;
	return l;
}

/* Scratch for batch_max rows: H (hid), P (out), dH (hid) per row. */
static float *scr_H(const struct gw_mlp *m) { return m->scratch; }
static float *scr_P(const struct gw_mlp *m)
{
	return m->scratch + (size_t)m->batch_max * m->hid;
}
static float *scr_dH(const struct gw_mlp *m)
{
	return scr_P(m) + (size_t)m->batch_max * m->out;
}

size_t gw_mlp_nparams(uint32_t in, uint32_t hid, uint32_t out)
{
	/* hid (in + 1) + out (hid + 1); 0 if it does not fit a size_t */
	size_t a = (size_t)in + 1, b = (size_t)hid + 1;
	if (hid && a > SIZE_MAX / hid)
		return 0;
	if (out && b > SIZE_MAX / out)
		return 0;
	if (a * hid > SIZE_MAX - b * out)
		return 0;
	return a * hid + b * out;
}

/* Deterministic normals. splitmix64 gives the bits; a normal is the sum of
 * twelve 32-bit uniforms (Irwin-Hall: mean 6, variance 1), computed in
 * integers and scaled by one multiply. Box-Muller would need log and cos,
 * which libm may round differently on another machine (glibc picks FMA
 * variants at run time); this needs only exact integer sums and one
 * correctly rounded multiply, so every replica gets the same bits. The
 * tails stop at 6 sigma, which weight init does not miss. */
static double normal(uint64_t *s)
{
	int64_t sum = 0;
	for (int i = 0; i < 6; i++) {
		uint64_t r = gw_splitmix64(s);
		sum += (int64_t)(r >> 32) + (int64_t)(r & 0xffffffffu);
	}
	/* exact: |sum - 6 * 2^32| < 2^35 fits a double's mantissa */
	return (double)(sum - ((int64_t)6 << 32)) * 0x1p-32;
}

static void he_normal(float *w, size_t n, uint32_t fan_in, uint64_t *s)
{
	double sd = sqrt(2.0 / fan_in);    /* sqrt is correctly rounded */
	for (size_t i = 0; i < n; i++)
		w[i] = (float)(normal(s) * sd);
}

int gw_mlp_init(struct gw_mlp *m, uint32_t in, uint32_t hid, uint32_t out,
		uint32_t batch_max, uint64_t seed, float *params)
{
	if (!m)
		return GW_ERR(GW_EINVAL);
	memset(m, 0, sizeof(*m));
	size_t np = gw_mlp_nparams(in, hid, out);
	if (!params || !in || !hid || !out || !batch_max || !np)
		return GW_ERR(GW_EINVAL);
	/* BLAS takes int sizes */
	if (in > INT_MAX || hid > INT_MAX || out > INT_MAX || batch_max > INT_MAX)
		return GW_ERR(GW_EINVAL);
	size_t row = 2 * (size_t)hid + out;   /* fits: np did */
	if (row > SIZE_MAX / sizeof(float) / batch_max)
		return GW_ERR(GW_ENOMEM);
	m->scratch = malloc(row * batch_max * sizeof(float));
	if (!m->scratch)
		return GW_ERR(GW_ENOMEM);
	m->in = in;
	m->hid = hid;
	m->out = out;
	m->batch_max = batch_max;
	m->nparams = np;

	struct layout l = layout_of(m, params);
	uint64_t s = seed;
	he_normal(l.W1, (size_t)hid * in, in, &s);
	memset(l.b1, 0, hid * sizeof(float));
	he_normal(l.W2, (size_t)out * hid, hid, &s);
	memset(l.b2, 0, out * sizeof(float));
	return 0;
}

/* H = relu(X W1^T + b1), P = H W2^T + b2 (the logits) for n rows. */
static void forward(const struct gw_mlp *m, const struct layout *l,
		    const float *X, uint32_t n)
{
	float *H = scr_H(m), *P = scr_P(m);
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)m->hid,
		    (int)m->in, 1.0f, X, (int)m->in, l->W1, (int)m->in, 0.0f, H,
		    (int)m->hid);
	for (uint32_t i = 0; i < n; i++) {
		float *h = H + (size_t)i * m->hid;
		for (uint32_t j = 0; j < m->hid; j++) {
			float z = h[j] + l->b1[j];
			h[j] = z > 0 ? z : 0;
		}
	}
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n, (int)m->out,
		    (int)m->hid, 1.0f, H, (int)m->hid, l->W2, (int)m->hid, 0.0f, P,
		    (int)m->out);
	for (uint32_t i = 0; i < n; i++) {
		float *z = P + (size_t)i * m->out;
		for (uint32_t k = 0; k < m->out; k++)
			z[k] += l->b2[k];
	}
}

/* Cross-entropy of logits z against label y, as log-sum-exp - z[y] with
 * the max subtracted (no overflow). If dz, it gets (softmax - onehot) *
 * scale: the gradient of scale * loss with respect to z. */
static double xent(const float *z, uint32_t out, uint8_t y, float *dz,
		   double scale)
{
	float mx = z[0];
	for (uint32_t k = 1; k < out; k++)
		mx = z[k] > mx ? z[k] : mx;
	double sum = 0;
	for (uint32_t k = 0; k < out; k++)
		sum += exp((double)z[k] - mx);
	double lse = mx + log(sum);
	double loss = lse - z[y];
	if (dz)
		for (uint32_t k = 0; k < out; k++)
			dz[k] = (float)(scale * (exp((double)z[k] - lse) - (k == y)));
	return loss;
}

static uint32_t argmax(const float *z, uint32_t out)
{
	uint32_t best = 0;
	for (uint32_t k = 1; k < out; k++)
		if (z[k] > z[best])
			best = k;
	return best;
}

static void col_sums(const float *A, uint32_t n, uint32_t cols, float *out)
{
	for (uint32_t j = 0; j < cols; j++) {
		double s = 0;
		for (uint32_t i = 0; i < n; i++)
			s += A[(size_t)i * cols + j];
		out[j] = (float)s;
	}
}

double gw_mlp_grad(struct gw_mlp *m, const float *params, const float *X,
		   const uint8_t *y, uint32_t n, float *g)
{
	if (!m || !m->scratch || n == 0 || n > m->batch_max)
		return NAN;
	for (uint32_t i = 0; i < n; i++)
		if (y[i] >= m->out)
			return NAN;
	struct layout l = layout_of(m, params), gl = layout_of(m, g);
	float *H = scr_H(m), *P = scr_P(m), *dH = scr_dH(m);

	forward(m, &l, X, n);
	double loss = 0, inv = 1.0 / n;
	for (uint32_t i = 0; i < n; i++)
		loss += xent(P + (size_t)i * m->out, m->out, y[i],
			     P + (size_t)i * m->out, inv);
	/* P now holds dZ2 = d(mean loss)/dZ2, n x out */

	/* gW2 = dZ2^T H (out x hid); gb2 = column sums of dZ2 */
	cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)m->out,
		    (int)m->hid, (int)n, 1.0f, P, (int)m->out, H, (int)m->hid,
		    0.0f, gl.W2, (int)m->hid);
	col_sums(P, n, m->out, gl.b2);
	/* dH = dZ2 W2 (n x hid), through the ReLU: zero where H was clipped */
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n,
		    (int)m->hid, (int)m->out, 1.0f, P, (int)m->out, l.W2,
		    (int)m->hid, 0.0f, dH, (int)m->hid);
	for (size_t k = 0; k < (size_t)n * m->hid; k++)
		if (!(H[k] > 0))
			dH[k] = 0;
	/* gW1 = dH^T X (hid x in); gb1 = column sums of dH */
	cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)m->hid,
		    (int)m->in, (int)n, 1.0f, dH, (int)m->hid, X, (int)m->in,
		    0.0f, gl.W1, (int)m->in);
	col_sums(dH, n, m->hid, gl.b1);
	return loss * inv;
}

void gw_mlp_eval(struct gw_mlp *m, const float *params, const float *X,
		 const uint8_t *y, uint32_t n, double *loss, double *acc)
{
	double sum = 0;
	uint64_t right = 0;
	int bad = 0;
	struct layout l = layout_of(m, params);
	for (uint32_t i0 = 0; i0 < n; i0 += m->batch_max) {
		uint32_t b = n - i0 < m->batch_max ? n - i0 : m->batch_max;
		forward(m, &l, X + (size_t)i0 * m->in, b);
		for (uint32_t i = 0; i < b; i++) {
			const float *z = scr_P(m) + (size_t)i * m->out;
			uint8_t yi = y[i0 + i];
			if (yi >= m->out) {
				bad = 1;           /* no loss for it: NAN below */
				continue;
			}
			sum += xent(z, m->out, yi, NULL, 0);
			right += argmax(z, m->out) == yi;
		}
	}
	if (loss)
		*loss = bad ? NAN : n ? sum / n : 0;
	if (acc)
		*acc = n ? (double)right / n : 0;
}

void gw_mlp_free(struct gw_mlp *m)
{
	if (!m)
		return;
	free(m->scratch);
	memset(m, 0, sizeof(*m));
}
