/* An in-process model of a Sketched-SGD job (gw_allreduce_sketched): every
 * worker's momentum and error accumulation, the summed sketch, HEAVYMIX
 * and the second round. Fed the same gradients it produces the update the
 * real job must deliver, as a dense vector, while no round is short. */
#ifndef GW_ALLREDUCE_SK_MODEL_H
#define GW_ALLREDUCE_SK_MODEL_H

#include <gw/collective.h>

struct sk_model;

struct sk_model *sk_model_create(const gw_coll_job *job);
void sk_model_free(struct sk_model *s);
/* g[w] for every worker w; out (dim floats): the update of this round. */
int sk_model_round(struct sk_model *s, const float *const *g, float *out);

#endif
