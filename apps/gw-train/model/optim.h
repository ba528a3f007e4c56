/* Optimisers applied by every replica to the same averaged gradient, so
 * the replicas stay identical without exchanging weights. */
#ifndef GW_TRAIN_OPTIM_H
#define GW_TRAIN_OPTIM_H

#include <stddef.h>
#include <stdint.h>

/* Adam (Kingma & Ba), with bias correction. */
struct gw_adam {
	float lr, beta1, beta2, eps;   /* init sets 0.9, 0.999, 1e-8 */
	uint64_t t;
	size_t n;
	float *m, *v;
};
int gw_adam_init(struct gw_adam *a, size_t n, float lr);
void gw_adam_step(struct gw_adam *a, float *w, const float *g);
void gw_adam_free(struct gw_adam *a);

/* SGD with (heavy-ball) momentum: v = mu v + g; w -= lr v. */
struct gw_momentum {
	float lr, mu;
	size_t n;
	float *v;
};
int gw_momentum_init(struct gw_momentum *s, size_t n, float lr, float mu);
void gw_momentum_step(struct gw_momentum *s, float *w, const float *g);
void gw_momentum_free(struct gw_momentum *s);

#endif
