/* A one-hidden-layer perceptron, in -> hid (ReLU) -> out (softmax), with
 * its matrix products in BLAS (cblas_sgemm). Parameters live in one flat
 * vector the caller owns, because that vector is what the allreduce moves:
 *   W1[hid][in], b1[hid], W2[out][hid], b2[out]   (row-major, this order). */
#ifndef GW_TRAIN_MLP_H
#define GW_TRAIN_MLP_H

#include <stddef.h>
#include <stdint.h>

struct gw_mlp {
	uint32_t in, hid, out, batch_max;
	size_t nparams;
	float *scratch;   /* activations and deltas for batch_max rows */
};

size_t gw_mlp_nparams(uint32_t in, uint32_t hid, uint32_t out);

/* Allocates scratch for batches of up to batch_max rows and fills params
 * (nparams floats) with He-normal weights and zero biases from seed: the
 * same seed gives the same bits on every replica. 0, GW_EINVAL, GW_ENOMEM. */
int gw_mlp_init(struct gw_mlp *m, uint32_t in, uint32_t hid, uint32_t out,
		uint32_t batch_max, uint64_t seed, float *params);

/* Mean softmax cross-entropy of the n (1..batch_max) rows of X (n x in,
 * row-major) with labels y (0..out-1); writes its gradient to g (nparams
 * floats, overwritten). Returns the loss, or NAN if n or a label is out of
 * range (g then untouched). */
double gw_mlp_grad(struct gw_mlp *m, const float *params, const float *X,
		   const uint8_t *y, uint32_t n, float *g);

/* Mean loss and accuracy over n rows of any count, in batches. */
void gw_mlp_eval(struct gw_mlp *m, const float *params, const float *X,
		 const uint8_t *y, uint32_t n, double *loss, double *acc);

void gw_mlp_free(struct gw_mlp *m);

#endif
