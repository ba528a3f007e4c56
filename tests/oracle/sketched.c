/* The model of a Sketched-SGD job, gw_allreduce_sketched (oracle.h):
 * Algorithm 3 run in one process over every worker's gradient. */
#include <stdlib.h>
#include <string.h>

#include "gw_util.h"
#include "oracle.h"

struct oracle_sketched {
	uint64_t d;
	uint32_t W, k, m;
	float rho;
	gw_csk csk;
	float *u, *v;            /* W x d */
	float *table, *sum, *est, *vals;
	uint64_t *cand, *sel;
};

void oracle_sketched_free(struct oracle_sketched *s)
{
	if (!s)
		return;
	GW_FREE_ALL(s->u, s->v, s->table, s->sum, s->est, s->vals, s->cand, s->sel, s);
}

/* Value of name=... in "a=1,b=2", or def. */
static double param(const char *params, const char *name, double def)
{
	size_t n = strlen(name);
	for (const char *p = params; p && *p;) {
		if (!strncmp(p, name, n) && p[n] == '=')
			return atof(p + n + 1);
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	return def;
}

int oracle_sk_sizes(const gw_coll_job *job, struct oracle_sk_sizes *s)
{
	static const gw_sketched_job none;
	const gw_sketched_job *sp = job->engine_params ? job->engine_params : &none;
	gw_sketched_sizes def;
	gw_bounds seed;
	if (gw_sketched_sizes_default(job->dim, &def) < 0 ||
	    gw_param_bounds(GW_CODEC_COUNTSKETCH, GW_PARAM_SEED, &seed) < 0)
		return -1;
	s->k = sp->topk ? sp->topk : def.k;
	s->m = sp->candidates ? sp->candidates
			       : (uint32_t)(4ull * s->k < job->dim ? 4ull * s->k : job->dim);
	s->csk.rows = (uint32_t)param(job->up_params, "rows", def.rows);
	s->csk.seed = (uint64_t)param(job->up_params, "seed", seed.def);
	s->csk.cols = (uint32_t)param(job->up_params, "cols",
				      (double)((2ull * s->m + s->csk.rows - 1) / s->csk.rows));
	return gw_csk_check(&s->csk) < 0 ? -1 : 0;
}

struct oracle_sketched *oracle_sketched_create(const gw_coll_job *job)
{
	struct oracle_sketched *s = calloc(1, sizeof(*s));
	struct oracle_sk_sizes sz;
	if (!s || oracle_sk_sizes(job, &sz) < 0)
		goto fail;
	s->d = job->dim;
	s->W = job->workers;
	s->k = sz.k;
	s->m = sz.m;
	s->csk = sz.csk;
	s->rho = job->engine_params ? ((const gw_sketched_job *)job->engine_params)->momentum
				    : 0.0f;
	size_t cells = (size_t)s->csk.rows * s->csk.cols;
	s->u = calloc((size_t)s->W * s->d, sizeof(float));
	s->v = calloc((size_t)s->W * s->d, sizeof(float));
	s->table = malloc(cells * sizeof(float));
	s->sum = malloc((cells > s->m ? cells : s->m) * sizeof(float));
	s->est = malloc(s->d * sizeof(float));
	s->vals = malloc(s->m * sizeof(float));
	s->cand = malloc(s->m * sizeof(uint64_t));
	s->sel = malloc(s->m * sizeof(uint64_t));
	if (!s->u || !s->v || !s->table || !s->sum || !s->est || !s->vals || !s->cand ||
	    !s->sel)
		goto fail;
	return s;
fail:
	oracle_sketched_free(s);
	return NULL;
}

int oracle_sketched_round(struct oracle_sketched *s, const float *const *g, float *out)
{
	size_t cells = (size_t)s->csk.rows * s->csk.cols;
	memset(s->sum, 0, cells * sizeof(float));
	for (uint32_t w = 0; w < s->W; w++) {
		float *u = s->u + (size_t)w * s->d, *v = s->v + (size_t)w * s->d;
		for (uint64_t i = 0; i < s->d; i++) {
			u[i] = s->rho * u[i] + g[w][i];
			v[i] += u[i];
		}
		/* Each worker's table alone, then added: what the wire does. */
		memset(s->table, 0, cells * sizeof(float));
		if (gw_csk_add(&s->csk, v, s->d, s->table) < 0)
			return -1;
		for (size_t c = 0; c < cells; c++)
			s->sum[c] += s->table[c];
	}
	if (gw_csk_estimate(&s->csk, s->sum, s->d, s->est) < 0 ||
	    gw_top_abs(s->est, s->d, s->m, s->cand) != (int64_t)s->m)
		return -1;
	memset(s->vals, 0, s->m * sizeof(float));
	for (uint32_t w = 0; w < s->W; w++)
		for (uint32_t i = 0; i < s->m; i++)
			s->vals[i] += s->v[(size_t)w * s->d + s->cand[i]];
	if (gw_top_abs(s->vals, s->m, s->k, s->sel) != (int64_t)s->k)
		return -1;
	memset(out, 0, s->d * sizeof(float));
	for (uint32_t j = 0; j < s->k; j++) {
		uint64_t key = s->cand[s->sel[j]];
		out[key] = s->vals[s->sel[j]];
		for (uint32_t w = 0; w < s->W; w++)
			s->u[(size_t)w * s->d + key] = s->v[(size_t)w * s->d + key] = 0.0f;
	}
	return 0;
}
