/* The worker's side of every engine: a communicator's common part (its
 * dataplane, layout, shards, timers, counters) and the public calls, each
 * handed to the job's engine. */
#include <stdlib.h>
#include <string.h>

#include "coll_internal.h"

void gw_comm_free(gw_comm *c)
{
	if (!c)
		return;
	comm_live_fini(c);
	if (c->call_mu_ready)
		pthread_mutex_destroy(&c->call_mu);
	if (c->L.eng)
		c->L.eng->comm_fini(c);
	coll_pipe_free(c);
	coll_layout_fini(&c->L);
	free(c->shards);
	free(c->dps);
	free(c);
}

gw_comm *gw_comm_create(gw_dp *dp, const gw_comm_config *cfg)
{
	return gw_comm_create_ports(&dp, 1, cfg);
}

gw_comm *gw_comm_create_ports(gw_dp *const *dps, unsigned ndp, const gw_comm_config *cfg)
{
	gw__detail_clear();
	if (!dps || !ndp || !cfg || !cfg->shards) {
		gw__detail(GW_EINVAL, "%s: missing", !dps ? "dps" : !ndp ? "ndp" : !cfg ? "cfg"
			   : "shards");
		return NULL;
	}
	uint32_t pmax = UINT32_MAX;
	for (unsigned i = 0; i < ndp; i++) {
		if (!dps[i]) {
			gw__detail(GW_EINVAL, "dps[%u]: missing", i);
			return NULL;
		}
		pmax = GW_MIN(pmax, gw_dp_payload_max(dps[i]));
	}
	if (ndp != 1 && ndp != cfg->job.shards) {
		gw__detail(GW_EINVAL, "ndp: %u dataplanes for %u shards (give one, or one "
			   "per shard)", ndp, cfg->job.shards);
		return NULL;
	}
	gw_comm *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->dps = malloc(ndp * sizeof(*c->dps));
	if (!c->dps) {
		free(c);
		gw__detail(GW_ENOMEM, "out of memory");
		return NULL;
	}
	memcpy(c->dps, dps, ndp * sizeof(*dps));
	c->ndp = ndp;
	c->dp = dps[0];
	const struct coll_layout *L = &c->L;
	if (coll_layout_open(&c->L, &cfg->job, pmax) < 0) {
		free(c->dps);
		free(c);
		return NULL;
	}
	if (cfg->rank >= L->job.workers) {
		gw__detail(GW_EINVAL, "rank: %u, but the job has %u workers", cfg->rank,
			   L->job.workers);
		goto fail;
	}
	c->rank = cfg->rank;
	c->round = cfg->first_round;
	c->rto_min_ns = 1000ull * (cfg->rto_us ? cfg->rto_us : COLL_RTO_DEF_US);
	c->timeout_ns = 1000000ull * (cfg->timeout_ms ? cfg->timeout_ms : COLL_TIMEOUT_DEF_MS);
	c->shards = malloc(L->job.shards * sizeof(*c->shards));
	if (c->shards)
		memcpy(c->shards, cfg->shards, L->job.shards * sizeof(*c->shards));
	if (!c->shards || L->eng->comm_init(c, cfg) < 0) {
		gw__detail(GW_ENOMEM, "out of memory");
		goto fail;
	}
	if (pthread_mutex_init(&c->call_mu, NULL)) {
		gw__detail(GW_ENOMEM, "out of memory");
		goto fail;
	}
	c->call_mu_ready = 1;
	if (comm_live_init(c) < 0)
		goto fail;
	return c;
fail:
	gw_comm_free(c);
	return NULL;
}

/* A call's bytes count from zero; a call that succeeded is booked. The
 * call holds the dataplane: the heartbeat thread waits. */
static void call_begin(gw_comm *c)
{
	pthread_mutex_lock(&c->call_mu);
	c->bytes_up = c->bytes_down = c->bytes_up_once = c->bytes_down_once = 0;
	c->calls++;
	comm_live_begin(c, gw_now_ns());
}

void coll_comm_offline(gw_comm *c)
{
	pthread_mutex_unlock(&c->call_mu);
}

void coll_comm_online(gw_comm *c)
{
	pthread_mutex_lock(&c->call_mu);
	comm_live_rebase(c, gw_now_ns());
}

static int call_end(gw_comm *c, int rc)
{
	pthread_mutex_unlock(&c->call_mu);
	if (rc == GW_OK) {
		c->st.rounds++;
		c->st.bytes_up += c->bytes_up;
		c->st.bytes_down += c->bytes_down;
	}
	return rc;
}

int gw_allreduce(gw_comm *c, const float *grad, float *out, gw_allreduce_info *info)
{
	if (!c || !grad || !out)
		return GW_ERR(GW_EINVAL);
	if (!c->L.eng->allreduce)
		return GW_ERRF(GW_EUNSUPPORTED, "allreduce: the %s engine's result is sparse "
			       "(gw_allreduce_result)", c->L.eng->name);
	call_begin(c);
	return call_end(c, c->L.eng->allreduce(c, grad, out, info));
}

gw_result_kind gw_comm_result_kind(const gw_comm *c)
{
	return c ? c->L.eng->result : GW_RESULT_DENSE;
}

/* A sparse result as a dense gradient: zero but at its keys. */
static void land_sparse(const gw_sparse_update *up, float *out, uint64_t dim)
{
	memset(out, 0, dim * sizeof(*out));
	for (uint32_t i = 0; i < up->nnz; i++)
		out[up->keys[i]] = up->values[i];
}

int gw_allreduce_result(gw_comm *c, const float *grad, float *out, gw_result *r,
			gw_allreduce_info *info)
{
	gw__detail_clear();
	if (!c || !grad)
		return GW_ERRF(GW_EINVAL, "%s: missing", !c ? "comm" : "grad");
	const struct coll_engine *e = c->L.eng;
	if (!out && (e->result == GW_RESULT_DENSE || !r))
		return GW_ERRF(GW_EINVAL, "out: missing, and %s", r ? "this job's result is dense"
			       : "no result description (r) takes the round's");
	gw_result mine;
	if (!r)
		r = &mine;
	*r = (gw_result){.kind = e->result};
	call_begin(c);
	int rc = call_end(c, e->result == GW_RESULT_DENSE ? e->allreduce(c, grad, out, info)
			  : e->allreduce_sparse(c, grad, &r->sparse, info));
	if (rc == GW_OK && out && r->kind == GW_RESULT_SPARSE)
		land_sparse(&r->sparse, out, c->L.job.dim);
	return rc;
}

int gw_allreduce_pipelined(gw_comm *c, uint32_t tag, gw_allreduce_info *info)
{
	struct coll_pipe *p = NULL;
	int rc = coll_pipe_of(c, tag, &p);
	if (rc < 0)
		return rc;
	rc = coll_pipe_cancelled(p, tag);
	if (rc < 0)   /* cancelled before it began: nothing was sent */
		return rc;
	if (!c->L.eng->allreduce_pipelined)   /* no pipe is made: not reached */
		return GW_ERR(GW_EUNSUPPORTED);
	call_begin(c);
	rc = call_end(c, c->L.eng->allreduce_pipelined(c, tag, info));
	if (rc < 0)
		coll_pipe_failed(c->pipe, tag, rc);
	return rc;
}

/* GRADWIRE_0.1's call: the sparse result alone. */
int gw_allreduce_sketched(gw_comm *c, const float *grad, gw_sparse_update *up,
			  gw_allreduce_info *info)
{
	if (!c || !grad || !up)
		return GW_ERR(GW_EINVAL);
	if (c->L.eng->result != GW_RESULT_SPARSE)
		return GW_ERRF(GW_EUNSUPPORTED, "allreduce: the %s engine's result is dense "
			       "(gw_allreduce)", c->L.eng->name);
	gw_result r;
	int rc = gw_allreduce_result(c, grad, NULL, &r, info);
	*up = r.sparse;
	return rc;
}

int gw_comm_set_gpu(gw_comm *c, gw_gpu *g)
{
	if (!c || !g)
		return GW_ERRF(GW_EINVAL, "%s: missing", !c ? "comm" : "gpu");
	/* Not c->round: a job may start at any round (first_round). */
	if (c->calls)
		return GW_ERRF(GW_ESTATE, "gpu: set before the first allreduce");
	if (!c->L.eng->set_gpu)
		return GW_ERRF(GW_EUNSUPPORTED, "gpu: the %s engine has no device path (dense "
			       "only)", c->L.eng->name);
	return c->L.eng->set_gpu(c, g);
}

int gw_comm_set_liveness(gw_comm *c, uint32_t ms)
{
	int rc = coll_live_arg(c, "comm", "liveness_ms", ms);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&c->call_mu);
	rc = comm_live_set(c, ms);
	pthread_mutex_unlock(&c->call_mu);
	return rc;
}

int gw_comm_set_startup(gw_comm *c, uint32_t ms)
{
	int rc = coll_live_arg(c, "comm", "startup_ms", ms);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&c->call_mu);
	c->live.startup_ns = 1000000ull * ms;
	pthread_mutex_unlock(&c->call_mu);
	return GW_OK;
}

void gw_comm_liveness_get(const gw_comm *c, gw_liveness_stats *s)
{
	if (c && s)
		comm_live_stats(c, s);
}

int gw_comm_join(gw_comm *c, uint32_t timeout_ms, uint32_t *round)
{
	gw__detail_clear();
	if (!c)
		return GW_ERRF(GW_EINVAL, "comm: missing");
	if (c->calls)
		return GW_ERRF(GW_ESTATE, "join: before the first allreduce only");
	if (c->L.job.mode != GW_COLL_LOSS_TOLERANT)
		return GW_ERRF(GW_EUNSUPPORTED, "join: a reliable job cannot take a worker "
			       "back (it failed when the worker died)");
	if (!c->live.liveness_ns)
		return GW_ERRF(GW_ESTATE, "join: liveness is off");
	uint32_t r = 0;
	pthread_mutex_lock(&c->call_mu);
	int rc = comm_live_join(c, timeout_ms, &r);
	if (rc == GW_OK && r > c->round)
		c->round = r;
	pthread_mutex_unlock(&c->call_mu);
	if (rc == GW_OK && round)
		*round = c->round;
	return rc;
}

int gw_comm_set_report(gw_comm *c, uint32_t ms, gw_report_fn fn, void *arg)
{
	gw__detail_clear();
	if (!c || (ms && !fn))
		return GW_ERRF(GW_EINVAL, "%s: missing", !c ? "comm" : "fn");
	pthread_mutex_lock(&c->call_mu);
	c->live.report_ns = 1000000ull * ms;
	c->live.report = ms ? fn : NULL;
	c->live.report_arg = arg;
	c->live.next_report_ns = 0;
	pthread_mutex_unlock(&c->call_mu);
	return GW_OK;
}

const char *gw_comm_gpu_handoff(const gw_comm *c)
{
	return c && c->gpu_handoff[0] ? c->gpu_handoff : NULL;
}

const float *gw_comm_residual(const gw_comm *c)
{
	return c ? c->L.eng->residual(c) : NULL;
}

void gw_comm_stats_get(const gw_comm *c, gw_comm_stats *st)
{
	if (c && st)
		*st = c->st;
}
