/* Replicas on disk, for workers that rejoin a loss-tolerant job
 * (checkpoint.c). */
#ifndef GW_TRAIN_CHECKPOINT_H
#define GW_TRAIN_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "workload.h"

/* Writes rank's parameters and optimiser state after step to PREFIX.rank
 * (via PREFIX.rank.tmp and a rename). 0 or -1. */
int checkpoint_save(struct workload *w, const float *params, uint64_t step, const char *prefix,
		    unsigned rank);
/* Loads the newest replica another rank below workers wrote: params, the
 * optimiser's state and *step (the steps it had taken). Returns the rank
 * it came from, or -1 with err set. */
int checkpoint_load(struct workload *w, float *params, const char *prefix, unsigned self,
		    unsigned workers, uint64_t *step, char *err, size_t errlen);

#endif
