/* DeepReduce value codec "poly": the paper's Fit-Poly (§5). The values,
 * sorted descending, form a smooth curve; it is cut into pieces, each
 * piece is fitted by a least-squares polynomial, and the section carries
 * the coefficients plus the reorder map (value_fit.h) that puts each
 * fitted value back at its position.
 *
 *	header: u8 degree D (0..DR_DEGREE_MAX), u8 0, u16 pieces P
 *	        (1..POLY_PIECES_MAX), u32 n, float32 bound           12 bytes
 *	pieces: per piece k, u32 length L_k (>= 1), then q_k + 1 float32
 *	        coefficients c_0..c_q, q_k = min(D, L_k - 1)
 *	map:    ceil(n · ceil(log2 n) / 8) bytes
 *
 * Rank j of a piece (0-based inside it) decodes to poly_eval(): x and a
 * Horner sum in double, one rounding to float32 at the end. The encoder
 * states as bound the largest |decoded - original| it measured with that
 * very function, rounded up to float32.
 *
 * Encoder (not normative): positives [0, l) and non-positives [l, n) of the
 * sorted values are separate groups, so no piece spans the sign change (top-k
 * values jump there from +t to -t). Pieces: cfg->pieces, or with 0 the
 * paper's p = ceil(2 sqrt(M)), M = |(y0 - y1) - (y[n-2] - y[n-1])|, M = 0 for
 * n < 2; at least one per non-empty group, at most POLY_PIECES_MAX. The
 * paper's segmentation: while fewer than p pieces, split the piece whose
 * farthest point from its end points' chord (squared vertical distance) is
 * the farthest of all, at that point (it ends the left part), never leaving
 * a part with fewer than D + 1 points; a piece that is exactly its chord is
 * split in its middle, longest first (for D = 0 a straight run still needs
 * cutting). Each piece is fitted on x in [-1, 1] (well-conditioned monomials)
 * by GSL's gsl_multifit_linear. */
#include <pthread.h>
#include <stdbool.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>

#include "value_fit.h"

#define POLY_HDR 12u
#define POLY_PIECES_MAX 256u

static pthread_once_t gsl_once = PTHREAD_ONCE_INIT;

static void gsl_quiet_once(void)
{
	gsl_set_error_handler_off();
}

void dr_fit_gsl_quiet(void)
{
	pthread_once(&gsl_once, gsl_quiet_once);
}

/* The decoder's arithmetic, which the encoder's bound is measured with:
 * rank j of a piece of len ranks sits at x = -1 + (2j) / (len - 1) (0 for
 * len 1), and its value is the Horner sum c_q x^q + ... + c_0 in double
 * (every operation rounded to double, no fused multiply-add), rounded once
 * to float32. */
static float poly_eval(const float *c, unsigned q, uint32_t len, uint32_t j)
{
	double x = len == 1 ? 0.0 : -1.0 + 2.0 * (double)j / (double)(len - 1);
	double acc = c[q];
	for (unsigned k = q; k-- > 0;)
		acc = acc * x + c[k];
	return (float)acc;
}

/* ---- encoder ------------------------------------------------------------ */

struct seg {
	uint32_t a, b;       /* ranks [a, b) */
	uint32_t k;          /* best split: left [a, k], right [k + 1, b) */
	double d;            /* its squared distance from the chord */
	bool can;            /* both parts keep >= m points */
};

/* Finds seg's split point for parts of at least m points. */
static void seg_best(const float *y, struct seg *s, uint32_t m)
{
	uint32_t len = s->b - s->a;
	s->can = len >= 2 * m;
	s->d = 0;
	if (!s->can)
		return;
	uint32_t kmin = s->a + m - 1, kmax = s->b - m - 1;
	double ya = y[s->a], slope = ((double)y[s->b - 1] - ya) / (len - 1);
	s->k = s->a + len / 2 - 1;
	s->k = s->k < kmin ? kmin : s->k > kmax ? kmax : s->k;
	for (uint32_t k = kmin; k <= kmax; k++) {
		double e = ya + slope * (k - s->a) - y[k];
		if (e * e > s->d) {
			s->d = e * e;
			s->k = k;
		}
	}
}

/* Cuts the groups [0, l) and [l, n) into at most p pieces; returns how
 * many, lengths in len[]. */
static unsigned segment(const float *y, uint32_t n, uint32_t l, unsigned p,
			unsigned degree, uint32_t *len)
{
	struct seg s[POLY_PIECES_MAX];
	unsigned ns = 0;
	uint32_t m = degree + 1;
	if (l)
		s[ns++] = (struct seg){.a = 0, .b = l};
	if (l < n)
		s[ns++] = (struct seg){.a = l, .b = n};
	for (unsigned i = 0; i < ns; i++)
		seg_best(y, &s[i], m);
	while (ns < p) {
		unsigned best = ns;
		for (unsigned i = 0; i < ns; i++) {
			if (!s[i].can)
				continue;
			if (best == ns || s[i].d > s[best].d ||
			    (s[i].d == s[best].d &&
			     s[i].b - s[i].a > s[best].b - s[best].a))
				best = i;
		}
		if (best == ns)
			break;
		memmove(&s[best + 2], &s[best + 1], (ns - best - 1) * sizeof(*s));
		s[best + 1] = (struct seg){.a = s[best].k + 1, .b = s[best].b};
		s[best].b = s[best].k + 1;
		seg_best(y, &s[best], m);
		seg_best(y, &s[best + 1], m);
		ns++;
	}
	for (unsigned i = 0; i < ns; i++)
		len[i] = s[i].b - s[i].a;
	return ns;
}

/* Least-squares polynomial of degree q through y[0..len) at poly_eval's x;
 * c[0..q] as float32. GW_EINVAL if GSL fails or a coefficient is not a
 * finite float32, GW_ENOMEM. */
static int fit_piece(const float *y, uint32_t len, unsigned q, float *c)
{
	size_t p = q + 1;
	gsl_matrix *X = gsl_matrix_alloc(len, p);
	gsl_matrix *cov = gsl_matrix_alloc(p, p);
	gsl_vector *yv = gsl_vector_alloc(len);
	gsl_vector *cv = gsl_vector_alloc(p);
	gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc(len, p);
	int rc = GW_ERR(GW_ENOMEM);
	if (!X || !cov || !yv || !cv || !w)
		goto out;
	for (uint32_t j = 0; j < len; j++) {
		double x = len == 1 ? 0.0 : -1.0 + 2.0 * (double)j / (double)(len - 1);
		double t = 1.0;
		for (size_t k = 0; k < p; k++, t *= x)
			gsl_matrix_set(X, j, k, t);
		gsl_vector_set(yv, j, y[j]);
	}
	double chisq;
	rc = GW_ERR(GW_EINVAL);
	if (gsl_multifit_linear(X, yv, cv, cov, &chisq, w) != GSL_SUCCESS)
		goto out;
	for (size_t k = 0; k < p; k++) {
		double ck = gsl_vector_get(cv, k);
		if (!(fabs(ck) <= FLT_MAX))
			goto out;
		c[k] = (float)ck;
	}
	rc = GW_OK;
out:
	gsl_multifit_linear_free(w);
	gsl_vector_free(cv);
	gsl_vector_free(yv);
	gsl_matrix_free(cov);
	gsl_matrix_free(X);
	return rc;
}

static unsigned poly_pieces(const float *y, uint32_t n, unsigned want,
			    unsigned groups)
{
	double p = want;
	if (!want) {
		double M = 0;
		if (n >= 2)
			M = fabs(((double)y[0] - y[1]) -
				 ((double)y[n - 2] - y[n - 1]));
		p = ceil(2 * sqrt(M));
	}
	if (!(p <= POLY_PIECES_MAX))
		p = POLY_PIECES_MAX;
	return p < groups ? groups : (unsigned)p;
}

struct poly_fit {
	unsigned np;
	uint32_t len[POLY_PIECES_MAX];
	float c[POLY_PIECES_MAX][DR_DEGREE_MAX + 1];
	float bound;
};

/* Segments and fits the sorted y; measures the bound. */
static int poly_fit(const float *y, uint32_t n, const struct dr_value_cfg *cfg,
		    struct poly_fit *f)
{
	uint32_t l = 0;
	while (l < n && y[l] > 0)
		l++;
	unsigned groups = (l > 0) + (l < n);
	unsigned p = poly_pieces(y, n, cfg->pieces, groups);
	f->np = segment(y, n, l, p, cfg->degree, f->len);
	double maxerr = 0;
	uint32_t a = 0;
	for (unsigned k = 0; k < f->np; a += f->len[k], k++) {
		uint32_t L = f->len[k];
		unsigned q = cfg->degree < L - 1 ? cfg->degree : L - 1;
		int rc = fit_piece(y + a, L, q, f->c[k]);
		if (rc < 0)
			return rc;
		for (uint32_t j = 0; j < L; j++) {
			float e = poly_eval(f->c[k], q, L, j);
			double d = fabs((double)e - (double)y[a + j]);
			if (!(d <= maxerr)) {
				if (!isfinite(e))
					return GW_ERR(GW_EINVAL);
				maxerr = d;
			}
		}
	}
	f->bound = drfit_bound_up(maxerr);
	return isfinite(f->bound) ? GW_OK : GW_ERR(GW_EINVAL);
}

static int poly_encode(const float *v, uint32_t n,
		       const struct dr_value_cfg *cfg, uint8_t *out, size_t cap)
{
	if (cfg->degree > DR_DEGREE_MAX || !n)
		return GW_ERR(GW_EINVAL);
	if (!drfit_all_finite(v, n))
		return GW_ERR(GW_EINVAL);
	dr_fit_gsl_quiet();
	uint32_t *order = malloc((size_t)n * sizeof(*order));
	float *y = malloc((size_t)n * sizeof(*y));
	struct poly_fit *f = malloc(sizeof(*f));
	int rc = GW_ERR(GW_ENOMEM);
	if (!order || !y || !f)
		goto out;
	rc = drfit_sort(v, n, order, y);
	if (rc < 0)
		goto out;
	rc = poly_fit(y, n, cfg, f);
	if (rc < 0)
		goto out;
	uint64_t size = POLY_HDR + drfit_map_bytes(n);
	for (unsigned k = 0; k < f->np; k++) {
		unsigned q = cfg->degree < f->len[k] - 1 ? cfg->degree : f->len[k] - 1;
		size += 4 + 4 * (uint64_t)(q + 1);
	}
	rc = GW_ERR(GW_EBUDGET);
	if (size > cap)
		goto out;
	rc = GW_ERR(GW_EINVAL);
	if (size > INT32_MAX)
		goto out;
	out[0] = (uint8_t)cfg->degree;
	out[1] = 0;
	gw_st16(out + 2, (uint16_t)f->np);
	gw_st32(out + 4, n);
	gw_stf32(out + 8, f->bound);
	size_t o = POLY_HDR;
	for (unsigned k = 0; k < f->np; k++) {
		unsigned q = cfg->degree < f->len[k] - 1 ? cfg->degree : f->len[k] - 1;
		gw_st32(out + o, f->len[k]);
		o += 4;
		for (unsigned j = 0; j <= q; j++, o += 4)
			gw_stf32(out + o, f->c[k][j]);
	}
	/* y is done with: its memory is the map's scratch. */
	drfit_put_map(out + o, order, n, (uint32_t *)(void *)y);
	rc = (int)size;
out:
	free(f);
	free(y);
	free(order);
	return rc;
}

/* ---- decoder ------------------------------------------------------------ */

struct poly_sec {
	unsigned degree, np;
	float bound;
	const uint8_t *pieces;   /* the piece table */
	const uint8_t *map;
};

/* Everything but the map and the values it decodes to. */
static int poly_parse(const uint8_t *in, size_t len, uint32_t n,
		      struct poly_sec *s)
{
	if (len < POLY_HDR)
		return GW_ERR(GW_ELENGTH);
	s->degree = in[0];
	s->np = gw_ld16(in + 2);
	if (s->degree > DR_DEGREE_MAX || in[1] || !s->np ||
	    s->np > POLY_PIECES_MAX)
		return GW_ERR(GW_ECORRUPT);
	if (gw_ld32(in + 4) != n)
		return GW_ERR(GW_ELENGTH);
	uint32_t b = gw_ld32(in + 8);
	if (b >= 0x7f800000u)   /* negative, -0, Inf or NaN */
		return GW_ERR(GW_ECORRUPT);
	s->bound = gw_ldf32(in + 8);
	s->pieces = in + POLY_HDR;
	size_t o = POLY_HDR;
	uint64_t sum = 0;
	for (unsigned k = 0; k < s->np; k++) {
		if (len - o < 4)
			return GW_ERR(GW_ELENGTH);
		uint32_t L = gw_ld32(in + o);
		o += 4;
		if (!L)
			return GW_ERR(GW_ECORRUPT);
		sum += L;
		if (sum > n)
			return GW_ERR(GW_ELENGTH);
		unsigned q = s->degree < L - 1 ? s->degree : L - 1;
		if (len - o < 4 * (size_t)(q + 1))
			return GW_ERR(GW_ELENGTH);
		for (unsigned j = 0; j <= q; j++, o += 4)
			if ((gw_ld32(in + o) & 0x7fffffffu) >= 0x7f800000u)
				return GW_ERR(GW_ECORRUPT);
	}
	if (sum != n || len - o != drfit_map_bytes(n))
		return GW_ERR(GW_ELENGTH);
	s->map = in + o;
	return GW_OK;
}

/* The pieces one after the other; parsing made their lengths add up to n.
 * Finite coefficients can still overflow float32 at some x. */
static void poly_curve(const void *sec, uint32_t n, float *yhat)
{
	const struct poly_sec *s = sec;
	const uint8_t *p = s->pieces;
	uint32_t a = 0;
	(void)n;
	for (unsigned k = 0; k < s->np; k++) {
		uint32_t L = gw_ld32(p);
		unsigned q = s->degree < L - 1 ? s->degree : L - 1;
		float c[DR_DEGREE_MAX + 1];
		for (unsigned j = 0; j <= q; j++)
			c[j] = gw_ldf32(p + 4 + 4 * j);
		p += 4 + 4 * (q + 1);
		for (uint32_t j = 0; j < L; j++)
			yhat[a + j] = poly_eval(c, q, L, j);
		a += L;
	}
}

static int poly_decode(const uint8_t *in, size_t len, uint32_t n, float *v)
{
	struct poly_sec s;
	int rc = poly_parse(in, len, n, &s);
	if (rc < 0)
		return rc;
	return drfit_decode(s.map, n, v, poly_curve, &s);
}

static int poly_bound(const uint8_t *in, size_t len, uint32_t n, float *bound)
{
	struct poly_sec s;
	int rc = poly_parse(in, len, n, &s);
	if (rc < 0)
		return rc;
	*bound = s.bound;
	return GW_OK;
}

const struct dr_value_ops dr_value_poly = {
	.name = "poly",
	.encode = poly_encode,
	.decode = poly_decode,
	.bound = poly_bound,
};
