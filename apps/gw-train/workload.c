/* The two workloads of gw-train behind workload.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gw/common.h>

#include "workload.h"

static bool is_linear(enum model_kind k)
{
	return k != MODEL_MLP;
}

static enum gw_lin_loss lin_loss(enum model_kind k)
{
	return k == MODEL_SVM ? GW_LIN_SVM : k == MODEL_LINREG ? GW_LIN_LINREG : GW_LIN_LOGREG;
}

/* Dense rows and integer labels 0..classes-1 for the MLP. */
static int densify(const struct gw_svm *d, uint32_t in, uint32_t classes,
		   const char *path, float **x, uint8_t **y, char *err, size_t errlen)
{
	*x = malloc((size_t)d->rows * in * sizeof(float));
	*y = malloc(d->rows ? d->rows : 1);
	if (!*x || !*y) {
		snprintf(err, errlen, "%s: out of memory for %u dense rows", path, d->rows);
		return -1;
	}
	if (gw_svm_dense(d, in, *x) < 0) {
		snprintf(err, errlen, "%s: a feature index is above --features %u", path, in);
		return -1;
	}
	for (uint32_t r = 0; r < d->rows; r++) {
		float l = d->label[r];
		if (!(l >= 0 && l < (float)classes) || l != floorf(l)) {
			snprintf(err, errlen, "%s: row %u: label %g is not a class in 0..%u",
				 path, r + 1, l, classes - 1);
			return -1;
		}
		(*y)[r] = (uint8_t)l;
	}
	return 0;
}

int workload_open(struct workload *w, const struct train_opts *o, bool want_test,
		  float *params, char *err, size_t errlen)
{
	memset(w, 0, sizeof(*w));
	w->kind = o->model;
	w->in = (uint32_t)o->features;
	w->l2 = o->l2;
	w->nparams = train_nparams(o);
	/* Linear models ignore features beyond the model (a hashed file may be
	 * read with fewer bits); the MLP needs every pixel in range. */
	uint32_t dim_max = is_linear(o->model) ? 0 : w->in;
	if (gw_svm_load(o->train_path, dim_max, &w->train, err, errlen) < 0)
		return -1;
	if (want_test && gw_svm_load(o->test_path, dim_max, &w->test, err, errlen) < 0)
		return -1;
	if (w->train.rows == 0 || (want_test && w->test.rows == 0)) {
		snprintf(err, errlen, "%s: no rows", w->train.rows ? o->test_path : o->train_path);
		return -1;
	}
	if (is_linear(o->model)) {
		memset(params, 0, w->nparams * sizeof(float));
		if (gw_adam_init(&w->adam, w->nparams, (float)o->lr) < 0) {
			snprintf(err, errlen, "out of memory for Adam's %zu moments", w->nparams);
			return -1;
		}
		return 0;
	}
	uint32_t classes = (uint32_t)o->classes;
	if (densify(&w->train, w->in, classes, o->train_path, &w->xtr, &w->ytr, err, errlen) < 0 ||
	    (want_test &&
	     densify(&w->test, w->in, classes, o->test_path, &w->xte, &w->yte, err, errlen) < 0))
		return -1;
	w->xb = malloc((size_t)o->batch * w->in * sizeof(float));
	w->yb = malloc(o->batch);
	if (!w->xb || !w->yb ||
	    gw_mlp_init(&w->mlp, w->in, (uint32_t)o->hidden, classes, (uint32_t)o->batch,
			o->seed, params) < 0 ||
	    gw_momentum_init(&w->mom, w->nparams, (float)o->lr, (float)o->momentum) < 0) {
		snprintf(err, errlen, "out of memory for the MLP");
		return -1;
	}
	return 0;
}

uint32_t workload_train_rows(const struct workload *w)
{
	return w->train.rows;
}

double workload_grad(struct workload *w, const float *params,
		     const uint32_t *rows, uint32_t n, float *g)
{
	if (is_linear(w->kind)) {
		memset(g, 0, w->nparams * sizeof(float));
		return gw_lin_grad(lin_loss(w->kind), &w->train, rows, n, params, w->in, g);
	}
	for (uint32_t i = 0; i < n; i++) {
		memcpy(w->xb + (size_t)i * w->in, w->xtr + (size_t)rows[i] * w->in,
		       w->in * sizeof(float));
		w->yb[i] = w->ytr[rows[i]];
	}
	return gw_mlp_grad(&w->mlp, params, w->xb, w->yb, n, g);
}

void workload_set_lr(struct workload *w, double lr)
{
	w->mom.lr = (float)lr;
	w->adam.lr = (float)lr;
}

void workload_step(struct workload *w, float *params, float *avg)
{
	if (!is_linear(w->kind)) {
		gw_momentum_step(&w->mom, params, avg);
		return;
	}
	/* l2/2 |w|^2 over the weights, not the bias (the last parameter). */
	if (w->l2 > 0)
		for (uint32_t i = 0; i < w->in; i++)
			avg[i] += (float)w->l2 * params[i];
	gw_adam_step(&w->adam, params, avg);
}

void workload_eval(struct workload *w, const float *params, bool train,
		   double *loss, double *acc)
{
	if (!is_linear(w->kind)) {
		gw_mlp_eval(&w->mlp, params, train ? w->xtr : w->xte, train ? w->ytr : w->yte,
			    train ? w->train.rows : w->test.rows, loss, acc);
		return;
	}
	gw_lin_eval(lin_loss(w->kind), train ? &w->train : &w->test, params, w->in, loss, acc);
	double sq = 0;
	for (uint32_t i = 0; i < w->in; i++)
		sq += (double)params[i] * params[i];
	*loss += 0.5 * w->l2 * sq;
}

void workload_close(struct workload *w)
{
	gw_svm_free(&w->train);
	gw_svm_free(&w->test);
	gw_mlp_free(&w->mlp);
	free(w->xtr);
	free(w->xte);
	free(w->xb);
	free(w->ytr);
	free(w->yte);
	free(w->yb);
	gw_adam_free(&w->adam);
	gw_momentum_free(&w->mom);
}
