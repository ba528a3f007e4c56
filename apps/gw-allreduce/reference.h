/* An in-process model of a whole allreduce job: every worker's encoder
 * (with its error feedback), the shard's per-chunk sum in rank order and
 * its downlink encoder. Fed the same gradients it produces the bytes-exact
 * result the real job must deliver when no chunk is short. */
#ifndef GW_ALLREDUCE_REFERENCE_H
#define GW_ALLREDUCE_REFERENCE_H

#include <gw/collective.h>

struct reference;

struct reference *reference_create(const gw_coll_job *job);
void reference_free(struct reference *r);
/* grads[w] for every worker w; out: the job's result for this round. */
int reference_round(struct reference *r, const float *const *grads, float *out);

#endif
