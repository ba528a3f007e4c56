/* Linear models over CSR rows: logistic regression, linear SVM (hinge),
 * least squares. Dot products, losses and the bias gradient accumulate
 * in double: a row of thousands of features summed in float loses the
 * digits that small gradients live in. */
#include "linear.h"

#include <assert.h>
#include <math.h>
#include <string.h>

#include <gw/common.h>

#include "gw_util.h"

static const char *const loss_names[] = {
	[GW_LIN_LOGREG] = "logreg",
	[GW_LIN_SVM] = "svm",
	[GW_LIN_LINREG] = "linreg",
};

int gw_lin_loss_parse(const char *name, enum gw_lin_loss *out)
{
	if (!name || !out)
		return GW_ERR(GW_EINVAL);
	for (size_t i = 0; i < GW_ARRAY_SIZE(loss_names); i++)
		if (!strcmp(name, loss_names[i])) {
			*out = (enum gw_lin_loss)i;
			return 0;
		}
	return GW_ERR(GW_EINVAL);
}

const char *gw_lin_loss_name(enum gw_lin_loss l)
{
	return (unsigned)l < GW_ARRAY_SIZE(loss_names) ? loss_names[l] : "unknown";
}

/* f(x) of row r; columns the model lacks (>= dim) count as zero. */
static double predict(const struct gw_svm *d, uint32_t r, const float *w,
		      uint32_t dim)
{
	double f = w[dim];
	for (uint64_t k = d->start[r]; k < d->start[r + 1]; k++) {
		uint32_t c = d->col[k];
		if (c >= dim)
			break;             /* ascending: the rest are >= dim too */
		f += (double)w[c] * d->val[k];
	}
	return f;
}

/* Loss of one row at output f, and dloss/df in *dl. */
static double row_loss(enum gw_lin_loss l, double f, float label, double *dl)
{
	double y = label > 0 ? 1.0 : -1.0, m;
	switch (l) {
	case GW_LIN_LOGREG:
		/* log(1 + e^-m) = log1p(e^-|m|) + max(0, -m): never exp of a
		 * large positive number, never log of 1 + tiny rounded to 1. */
		m = y * f;
		/* d/df = -y sigmoid(-m), each branch exp of a non-positive */
		*dl = m >= 0 ? -y * exp(-m) / (1 + exp(-m)) : -y / (1 + exp(m));
		return log1p(exp(-fabs(m))) + (m < 0 ? -m : 0);
	case GW_LIN_SVM:
		m = y * f;
		*dl = m < 1 ? -y : 0;      /* 0 at the kink, as linear.h says */
		return m < 1 ? 1 - m : 0;
	case GW_LIN_LINREG:
	default:
		*dl = f - label;
		return 0.5 * (f - label) * (f - label);
	}
}

double gw_lin_grad(enum gw_lin_loss l, const struct gw_svm *d,
		   const uint32_t *idx, uint32_t n, const float *w,
		   uint32_t dim, float *g)
{
	if (n == 0)
		return 0;
	double inv = 1.0 / n, loss = 0, gb = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t r = idx[i];
		assert(r < d->rows);
		double dl;
		loss += row_loss(l, predict(d, r, w, dim), d->label[r], &dl);
		double s = dl * inv;
		gb += s;
		if (s == 0)
			continue;          /* hinge rows past the margin */
		for (uint64_t k = d->start[r]; k < d->start[r + 1]; k++) {
			uint32_t c = d->col[k];
			if (c >= dim)
				break;
			g[c] += (float)(s * d->val[k]);
		}
	}
	g[dim] += (float)gb;
	return loss * inv;
}

void gw_lin_eval(enum gw_lin_loss l, const struct gw_svm *d, const float *w,
		 uint32_t dim, double *loss, double *acc)
{
	double sum = 0;
	uint64_t right = 0;
	for (uint32_t r = 0; r < d->rows; r++) {
		double f = predict(d, r, w, dim), dl;
		sum += row_loss(l, f, d->label[r], &dl);
		right += (f > 0) == (d->label[r] > 0);
	}
	if (loss)
		*loss = d->rows ? sum / d->rows : 0;
	if (acc)
		*acc = d->rows ? (double)right / d->rows : 0;
}
