/* DeepReduce value codec "dexp": the paper's nonlinear fit (§5) of the
 * descending-sorted values by one double exponential
 *
 *	y(x) = a e^{b x} + c e^{d x},  x = i / (n - 1) in [0, 1] (0 for n = 1)
 *
 * plus the reorder map of value_fit.h.
 *
 *	params: float32 a, b, c, d, then float32 bound               20 bytes
 *	map:    ceil(n · ceil(log2 n) / 8) bytes
 *
 * Rank i decodes to dexp_eval(): x, both terms and their sum in double
 * (exp() of the C library), rounded once to float32. The encoder states as
 * bound the largest |decoded - original| measured with that function,
 * rounded up to float32; a decoder on another libm may differ from it by
 * an ulp where exp() rounds differently.
 *
 * Encoder (not normative): the fit is GSL's trust-region Levenberg-
 * Marquardt (gsl_multifit_nlinear) with the analytic Jacobian, at most
 * DEXP_ITERS iterations a start, on the values scaled to max |y| = 1 and,
 * above DEXP_SAMPLE values, on DEXP_SAMPLE weighted points (dexp_points):
 * the encoder stays O(n) with a small constant — the fit is a few
 * milliseconds whatever n — and the bound is still measured on every
 * value. Two starts, a decay from the top and a rise to the bottom at rates
 * 5 and 30, with c = y_end e^{-k}, a = y0 - c (the start meets both ends);
 * neither wins on every trace, so the second runs unless the first
 * converged. Every result whose float32 parameters evaluate to finite
 * values competes with the constant fit (a = mean, b = c = d = 0, a model
 * the format already has) on the weighted squared error; a failed fit
 * therefore just means a larger stated bound. */
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>

#include "value_fit.h"

#define DEXP_HDR 20u
#define DEXP_SAMPLE 256u     /* fitting points at most */
#define DEXP_ENDS 32u        /* ranks kept one by one at each end */
#define DEXP_ITERS 50u

/* The decoder's arithmetic, which the encoder's bound is measured with. */
static float dexp_eval(const float *p, uint32_t n, uint32_t i)
{
	double x = n == 1 ? 0.0 : (double)i / (double)(n - 1);
	return (float)((double)p[0] * exp((double)p[1] * x) +
		       (double)p[2] * exp((double)p[3] * x));
}

/* ---- encoder ------------------------------------------------------------ */

struct dexp_data {
	const double *x, *t;   /* fitting points */
	const double *w;       /* their weights: ranks each stands for */
	const uint32_t *rank;
	size_t m;
};

static int dexp_f(const gsl_vector *P, void *arg, gsl_vector *f)
{
	const struct dexp_data *D = arg;
	double a = gsl_vector_get(P, 0), b = gsl_vector_get(P, 1);
	double c = gsl_vector_get(P, 2), d = gsl_vector_get(P, 3);
	for (size_t k = 0; k < D->m; k++)
		gsl_vector_set(f, k, a * exp(b * D->x[k]) + c * exp(d * D->x[k]) -
				     D->t[k]);
	return GSL_SUCCESS;
}

static int dexp_df(const gsl_vector *P, void *arg, gsl_matrix *J)
{
	const struct dexp_data *D = arg;
	double a = gsl_vector_get(P, 0), b = gsl_vector_get(P, 1);
	double c = gsl_vector_get(P, 2), d = gsl_vector_get(P, 3);
	for (size_t k = 0; k < D->m; k++) {
		double x = D->x[k], eb = exp(b * x), ed = exp(d * x);
		gsl_matrix_set(J, k, 0, eb);
		gsl_matrix_set(J, k, 1, a * x * eb);
		gsl_matrix_set(J, k, 2, ed);
		gsl_matrix_set(J, k, 3, c * x * ed);
	}
	return GSL_SUCCESS;
}

/* One LM run from p0; p gets the result (possibly not converged: it still
 * competes). Returns 1 if it converged, 0 if not, -1 if GSL failed. */
static int dexp_lm(struct dexp_data *D, const double p0[4], double p[4])
{
	gsl_multifit_nlinear_fdf fdf = {
		.f = dexp_f, .df = dexp_df, .fvv = NULL,
		.n = D->m, .p = 4, .params = D,
	};
	gsl_multifit_nlinear_parameters par =
		gsl_multifit_nlinear_default_parameters();
	/* 4 parameters: the normal equations (a 4x4 Cholesky) cost a fraction
	 * of the default QR of the m x 4 Jacobian, and are accurate enough
	 * for parameters that end up as float32. */
	par.solver = gsl_multifit_nlinear_solver_cholesky;
	gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(
		gsl_multifit_nlinear_trust, &par, D->m, 4);
	if (!w)
		return -1;
	gsl_vector_const_view x0 = gsl_vector_const_view_array(p0, 4);
	gsl_vector_const_view wt = gsl_vector_const_view_array(D->w, D->m);
	int rc = gsl_multifit_nlinear_winit(&x0.vector, &wt.vector, &fdf, w);
	/* The driver's loop, plus a stall test: on heavy tails the rates run
	 * off towards +-Inf for many iterations while the error hardly moves;
	 * stop when 5 iterations gained less than 0.1%. The parameters become
	 * float32, so 1e-7 relative is all the steps need to resolve. */
	double last = INFINITY;
	for (unsigned it = 1; rc == GSL_SUCCESS && it <= DEXP_ITERS; it++) {
		rc = gsl_multifit_nlinear_iterate(w);
		if (rc != GSL_SUCCESS)
			break;
		int info = 0;
		gsl_multifit_nlinear_test(1e-7, 1e-7, 0, &info, w);
		if (info) {
			rc = 1;
			break;
		}
		if (it % 5 == 0) {
			double r = gsl_blas_dnrm2(gsl_multifit_nlinear_residual(w));
			if (r > last * (1 - 1e-3))
				break;
			last = r;
		}
	}
	gsl_vector *r = gsl_multifit_nlinear_position(w);
	for (int k = 0; k < 4; k++)
		p[k] = gsl_vector_get(r, k);
	gsl_multifit_nlinear_free(w);
	/* 1: converged; 0: stopped (stalled, out of iterations, or GSL_ENOPROG:
	 * no better step), a usable point; -1: GSL failed. */
	if (rc == 1)
		return 1;
	return rc == GSL_SUCCESS || rc == GSL_ENOPROG ? 0 : -1;
}

/* Weighted squared error of float32 parameters q on the fitting points (y
 * scaled by S), evaluated like the decoder; +Inf if a value is not finite. */
static double dexp_sse(const float q[4], const struct dexp_data *D,
		       uint32_t n, double S)
{
	double e = 0;
	for (size_t k = 0; k < D->m; k++) {
		float v = dexp_eval(q, n, D->rank[k]);
		if (!isfinite(v))
			return INFINITY;
		double d = v / S - D->t[k];
		e += D->w[k] * d * d;
	}
	return e;
}

/* Fitting points: every rank if n <= DEXP_SAMPLE, else the DEXP_ENDS first
 * and last ranks one by one (the tails hold the large values and change
 * fastest) and the middle evenly, each point weighted by the ranks it
 * stands for, so the fit approximates the least squares on all n. */
static size_t dexp_points(uint32_t n, uint32_t *rank, double *w)
{
	if (n <= DEXP_SAMPLE) {
		for (uint32_t i = 0; i < n; i++) {
			rank[i] = i;
			w[i] = 1;
		}
		return n;
	}
	uint32_t E = DEXP_ENDS, M = DEXP_SAMPLE - 2 * DEXP_ENDS, mid = n - 2 * E;
	size_t m = 0;
	for (uint32_t i = 0; i < E; i++, m++) {
		rank[m] = i;
		w[m] = 1;
	}
	for (uint32_t k = 0; k < M; k++, m++) {
		rank[m] = E + (uint32_t)(((uint64_t)2 * k + 1) * mid / (2 * M));
		w[m] = (double)mid / M;
	}
	for (uint32_t i = n - E; i < n; i++, m++) {
		rank[m] = i;
		w[m] = 1;
	}
	return m;
}

/* Picks the parameters for the sorted y; q gets them as float32. */
static int dexp_fit(const float *y, uint32_t n, float q[4])
{
	double S = 0, mean = 0;
	for (uint32_t i = 0; i < n; i++) {
		S = fabs(y[i]) > S ? fabs(y[i]) : S;
		mean += y[i];
	}
	mean /= n;
	q[0] = (float)mean;
	q[1] = q[2] = q[3] = 0;
	if (S == 0 || n < 4)
		return GW_OK;   /* nothing to fit: 4 parameters, 4 points */
	double x[DEXP_SAMPLE], t[DEXP_SAMPLE], w[DEXP_SAMPLE];
	uint32_t rank[DEXP_SAMPLE];
	size_t m = dexp_points(n, rank, w);
	for (size_t k = 0; k < m; k++) {
		x[k] = (double)rank[k] / (double)(n - 1);
		t[k] = y[rank[k]] / S;
	}
	struct dexp_data D = {.x = x, .t = t, .w = w, .rank = rank, .m = m};
	double best = dexp_sse(q, &D, n, S);
	static const double rates[2] = {5, 30};
	for (int s = 0; s < 2; s++) {
		double k = rates[s], c0 = t[m - 1] * exp(-k);
		double p0[4] = {t[0] - c0, -k, c0, k}, p[4];
		int rc = dexp_lm(&D, p0, p);
		if (rc < 0)
			continue;
		float cand[4] = {(float)(p[0] * S), (float)p[1],
				 (float)(p[2] * S), (float)p[3]};
		if (!drfit_all_finite(cand, 4))
			continue;
		double e = dexp_sse(cand, &D, n, S);
		if (e < best) {
			best = e;
			memcpy(q, cand, sizeof(cand));
		}
		if (rc == 1)
			break;   /* converged: the second start rarely does better */
	}
	return GW_OK;
}

/* Largest |decoded - y| over all ranks, or +Inf if a decoded value is not
 * finite (ranks between the fitting points may still overflow). */
static double dexp_maxerr(const float q[4], const float *y, uint32_t n)
{
	double mx = 0;
	for (uint32_t i = 0; i < n; i++) {
		float e = dexp_eval(q, n, i);
		if (!isfinite(e))
			return INFINITY;
		double d = fabs((double)e - (double)y[i]);
		mx = d > mx ? d : mx;
	}
	return mx;
}

static int dexp_encode(const float *v, uint32_t n,
		       const struct dr_value_cfg *cfg, uint8_t *out, size_t cap)
{
	(void)cfg;
	if (!n || !drfit_all_finite(v, n))
		return GW_ERR(GW_EINVAL);
	uint64_t size = DEXP_HDR + drfit_map_bytes(n);
	if (size > cap)
		return GW_ERR(GW_EBUDGET);
	if (size > INT32_MAX)
		return GW_ERR(GW_EINVAL);
	dr_fit_gsl_quiet();
	uint32_t *order = malloc((size_t)n * sizeof(*order));
	float *y = malloc((size_t)n * sizeof(*y));
	int rc = GW_ERR(GW_ENOMEM);
	if (!order || !y)
		goto out;
	rc = drfit_sort(v, n, order, y);
	if (rc < 0)
		goto out;
	float q[4];
	rc = dexp_fit(y, n, q);
	if (rc < 0)
		goto out;
	double err = dexp_maxerr(q, y, n);
	if (!isfinite(err)) {
		/* The mean of finite floats is finite and so is its error. */
		double mean = 0;
		for (uint32_t i = 0; i < n; i++)
			mean += y[i];
		q[0] = (float)(mean / n);
		q[1] = q[2] = q[3] = 0;
		err = dexp_maxerr(q, y, n);
	}
	float bound = drfit_bound_up(err);
	rc = GW_ERR(GW_EINVAL);
	if (!isfinite(bound))
		goto out;
	for (int k = 0; k < 4; k++)
		gw_stf32(out + 4 * k, q[k]);
	gw_stf32(out + 16, bound);
	drfit_put_map(out + DEXP_HDR, order, n, (uint32_t *)(void *)y);
	rc = (int)size;
out:
	free(y);
	free(order);
	return rc;
}

/* ---- decoder ------------------------------------------------------------ */

/* Everything but the map and the values it decodes to. */
static int dexp_parse(const uint8_t *in, size_t len, uint32_t n, float p[4],
		      float *bound)
{
	if (len < DEXP_HDR || len - DEXP_HDR != drfit_map_bytes(n))
		return GW_ERR(GW_ELENGTH);
	for (int k = 0; k < 4; k++) {
		if ((gw_ld32(in + 4 * k) & 0x7fffffffu) >= 0x7f800000u)
			return GW_ERR(GW_ECORRUPT);
		p[k] = gw_ldf32(in + 4 * k);
	}
	if (gw_ld32(in + 16) >= 0x7f800000u)   /* negative, -0, Inf, NaN */
		return GW_ERR(GW_ECORRUPT);
	*bound = gw_ldf32(in + 16);
	return GW_OK;
}

static void dexp_curve(const void *sec, uint32_t n, float *yhat)
{
	const float *p = sec;
	for (uint32_t i = 0; i < n; i++)
		yhat[i] = dexp_eval(p, n, i);
}

static int dexp_decode(const uint8_t *in, size_t len, uint32_t n, float *v)
{
	float p[4], bound;
	int rc = dexp_parse(in, len, n, p, &bound);
	if (rc < 0)
		return rc;
	if (!n)
		return GW_ERR(GW_ELENGTH);
	return drfit_decode(in + DEXP_HDR, n, v, dexp_curve, p);
}

static int dexp_bound(const uint8_t *in, size_t len, uint32_t n, float *bound)
{
	float p[4];
	return dexp_parse(in, len, n, p, bound);
}

const struct dr_value_ops dr_value_dexp = {
	.name = "dexp",
	.encode = dexp_encode,
	.decode = dexp_decode,
	.bound = dexp_bound,
};
