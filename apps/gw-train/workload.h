/* What gw-train trains: a linear model on sparse rows (Adam) or an MLP on
 * dense rows (SGD with momentum), behind one interface, so the worker's
 * loop does not care which. */
#ifndef GW_TRAIN_WORKLOAD_H
#define GW_TRAIN_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "train.h"
#include "model/libsvm.h"
#include "model/linear.h"
#include "model/mlp.h"
#include "model/optim.h"

struct workload {
	enum model_kind kind;
	size_t nparams;
	uint32_t in;                 /* features (linear) or MLP inputs */
	double l2;
	struct gw_svm train, test;
	/* MLP: dense copies of the rows, and the batch being gathered */
	struct gw_mlp mlp;
	float *xtr, *xte, *xb;
	uint8_t *ytr, *yte, *yb;
	struct gw_adam adam;
	struct gw_momentum mom;
};

/* Loads the data (test set only if want_test) and fills params with the
 * seeded initial model: every replica starts from the same bits. 0, or -1
 * with err set. */
int workload_open(struct workload *w, const struct train_opts *o, bool want_test,
		  float *params, char *err, size_t errlen);
uint32_t workload_train_rows(const struct workload *w);
/* g (nparams) <- mean gradient of the data term over rows[0..n); returns
 * their mean loss. */
double workload_grad(struct workload *w, const float *params,
		     const uint32_t *rows, uint32_t n, float *g);
/* One optimiser step with the averaged gradient avg (the regulariser is
 * added here, to avg). */
/* The optimizer's learning rate from now on (a schedule's). */
void workload_set_lr(struct workload *w, double lr);
void workload_step(struct workload *w, float *params, float *avg);
/* Loss (with the regulariser) and accuracy on the training or test set. */
void workload_eval(struct workload *w, const float *params, bool train,
		   double *loss, double *acc);
void workload_close(struct workload *w);

#endif
