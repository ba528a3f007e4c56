/* Linear models over sparse rows: f(x) = w[0..dim) . x + w[dim] (the bias
 * is the last parameter). Classification labels are read as y > 0 -> +1,
 * else -1; linear regression uses the label as it is. Regularisation is not
 * here: every replica adds lambda * w itself, so only the data term travels. */
#ifndef GW_TRAIN_LINEAR_H
#define GW_TRAIN_LINEAR_H

#include <stdint.h>

#include "libsvm.h"

enum gw_lin_loss {
	GW_LIN_LOGREG,  /* log(1 + exp(-y f)) */
	GW_LIN_SVM,     /* max(0, 1 - y f)    (hinge; subgradient 0 at the kink) */
	GW_LIN_LINREG,  /* (f - y)^2 / 2 */
};

/* "logreg", "svm", "linreg" -> 0 and *out; GW_EINVAL otherwise. */
int gw_lin_loss_parse(const char *name, enum gw_lin_loss *out);
const char *gw_lin_loss_name(enum gw_lin_loss l);

/* Adds to g (dim + 1 floats, not cleared) the mean over rows idx[0..n) of
 * the loss gradient; only the rows' columns and g[dim] are touched. Columns
 * >= dim are ignored (a test file may name features the model lacks).
 * Returns the mean loss of those rows. n == 0 returns 0. */
double gw_lin_grad(enum gw_lin_loss l, const struct gw_svm *d,
		   const uint32_t *idx, uint32_t n, const float *w,
		   uint32_t dim, float *g);

/* Mean loss and accuracy (sign(f) == sign(y), y > 0 positive) over all rows;
 * for linreg too, as a classifier by the sign of its output. */
void gw_lin_eval(enum gw_lin_loss l, const struct gw_svm *d, const float *w,
		 uint32_t dim, double *loss, double *acc);

#endif
