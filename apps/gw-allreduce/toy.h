/* gw-allreduce's toy training loop (toy.c). */
#ifndef GW_ALLREDUCE_TOY_H
#define GW_ALLREDUCE_TOY_H

#include <stdint.h>

struct toy {
	uint64_t n;
	double lr;
	float *p, *t, *noise;
};

/* noise: this rank's fixed gradient noise (scaled here); resume: a file of
 * rank 0's parameters to start from, or NULL. 0 or -1 (said why). */
int toy_init(struct toy *t, uint64_t n, double lr, const float *noise, const char *resume);
void toy_free(struct toy *t);
void toy_grad(const struct toy *t, float *g);            /* this round's gradient */
void toy_step(struct toy *t, const float *sum, uint32_t workers);
double toy_loss(const struct toy *t);
uint64_t toy_hash(const struct toy *t);
int toy_save(const struct toy *t, const char *path);     /* 0 or -1 */

#endif
