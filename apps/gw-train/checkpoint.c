/* gw-train's state sync for restarted workers: after every step each rank
 * writes its replica (parameters and optimiser state) to PREFIX.RANK,
 * renamed into place so a reader never sees half a file; a worker that
 * rejoins a loss-tolerant job loads the newest replica another rank
 * wrote. This is what DDP's broadcast from rank 0 does for a restarted
 * rank, with the optimiser's state too, so the rejoined replica steps as
 * the others do. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"

#define MAGIC 0x53545747u   /* "GWTS" */

struct head {
	uint32_t magic, kind;
	uint64_t nparams, step, adam_t;
};

/* The optimiser's arrays of nparams floats, in file order. */
static unsigned state_arrays(struct workload *w, float *a[2])
{
	if (w->kind == MODEL_MLP) {
		a[0] = w->mom.v;
		return 1;
	}
	a[0] = w->adam.m;
	a[1] = w->adam.v;
	return 2;
}

int checkpoint_save(struct workload *w, const float *params, uint64_t step, const char *prefix,
		    unsigned rank)
{
	char path[4096], tmp[4200];
	snprintf(path, sizeof(path), "%s.%u", prefix, rank);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "wb");
	if (!f)
		return -1;
	struct head h = {.magic = MAGIC, .kind = (uint32_t)w->kind, .nparams = w->nparams,
			 .step = step, .adam_t = w->kind == MODEL_MLP ? 0 : w->adam.t};
	float *a[2];
	unsigned k = state_arrays(w, a);
	bool ok = fwrite(&h, sizeof(h), 1, f) == 1 &&
		  fwrite(params, sizeof(float), w->nparams, f) == w->nparams;
	for (unsigned i = 0; ok && i < k; i++)
		ok = fwrite(a[i], sizeof(float), w->nparams, f) == w->nparams;
	ok = (fclose(f) == 0) && ok;
	if (!ok || rename(tmp, path) < 0) {
		remove(tmp);
		return -1;
	}
	return 0;
}

/* The header of PREFIX.r, if it is a replica of this model. */
static FILE *open_one(const struct workload *w, const char *prefix, unsigned r, struct head *h)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s.%u", prefix, r);
	FILE *f = fopen(path, "rb");
	if (f && (fread(h, sizeof(*h), 1, f) != 1 || h->magic != MAGIC ||
		  h->kind != (uint32_t)w->kind || h->nparams != w->nparams)) {
		fclose(f);
		f = NULL;
	}
	return f;
}

int checkpoint_load(struct workload *w, float *params, const char *prefix, unsigned self,
		    unsigned workers, uint64_t *step, char *err, size_t errlen)
{
	struct head best = {0}, h;
	int from = -1;
	for (unsigned r = 0; r < workers; r++) {
		FILE *f = r == self ? NULL : open_one(w, prefix, r, &h);
		if (f && (from < 0 || h.step > best.step)) {
			best = h;
			from = (int)r;
		}
		if (f)
			fclose(f);
	}
	if (from < 0) {
		snprintf(err, errlen, "--param-file %s: no other rank's replica of this model "
			 "(%s.R for R below %u)", prefix, prefix, workers);
		return -1;
	}
	FILE *f = open_one(w, prefix, (unsigned)from, &h);
	float *a[2];
	unsigned k = state_arrays(w, a);
	bool ok = f && fread(params, sizeof(float), w->nparams, f) == w->nparams;
	for (unsigned i = 0; ok && i < k; i++)
		ok = fread(a[i], sizeof(float), w->nparams, f) == w->nparams;
	if (f)
		fclose(f);
	if (!ok) {
		snprintf(err, errlen, "--param-file %s.%d: short or replaced while read", prefix,
			 from);
		return -1;
	}
	if (w->kind != MODEL_MLP)
		w->adam.t = h.adam_t;
	*step = h.step;
	return from;
}
