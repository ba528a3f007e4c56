/* GRADWIRE_0.1's forms of the collective calls that 0.2 changed. A 0.1
 * gw_coll_job ended in Sketched-SGD's fields (topk, candidates, momentum)
 * and meant that engine when its uplink was countsketch; 0.2's names its
 * engine and points at the engine's own fields. gw_coll_job_check also
 * returned its message through a second argument. Kept so that a binary
 * linked against libgradwire 0.1 runs unchanged; built into libgradwire.so
 * only (a .symver needs the map's version nodes), never declared in a
 * header. */
#include "compat_0_1.h"

#define GW_COMPAT(name, ver) __asm__(".symver " #name "_v01, " #name "@" ver)

/* The 0.2 job of a 0.1 one; sk holds the engine's fields. */
static gw_coll_job job_of(const struct job_v01 *o, gw_sketched_job *sk)
{
	int sketched = o->up_codec == GW_CODEC_COUNTSKETCH;
	*sk = (gw_sketched_job){.topk = o->topk, .candidates = o->candidates,
				.momentum = o->momentum};
	return (gw_coll_job){
		.job = o->job, .dim = o->dim, .chunk_elems = o->chunk_elems,
		.workers = o->workers, .shards = o->shards, .window = o->window,
		.up_codec = o->up_codec, .down_codec = o->down_codec,
		.up_params = o->up_params, .down_params = o->down_params,
		.mode = o->mode, .deadline_us = o->deadline_us, .key = o->key,
		.engine = sketched ? GW_COLL_SKETCHED : GW_COLL_DENSE,
		.engine_params = sketched ? sk : NULL,
	};
}

GW_API int gw_coll_job_check_v01(const struct job_v01 *job, const char **why);
GW_COMPAT(gw_coll_job_check, "GRADWIRE_0.1");
int gw_coll_job_check_v01(const struct job_v01 *job, const char **why)
{
	gw_sketched_job sk;
	gw_coll_job j;
	if (job)
		j = job_of(job, &sk);
	int rc = gw_coll_job_check(job ? &j : NULL);
	if (why)
		*why = rc < 0 ? gw_error_detail() : NULL;
	return rc;
}

GW_API int gw_coll_chunk_elems_v01(const struct job_v01 *job, uint32_t payload_max);
GW_COMPAT(gw_coll_chunk_elems, "GRADWIRE_0.1");
int gw_coll_chunk_elems_v01(const struct job_v01 *job, uint32_t payload_max)
{
	gw_sketched_job sk;
	gw_coll_job j;
	if (job)
		j = job_of(job, &sk);
	return gw_coll_chunk_elems(job ? &j : NULL, payload_max);
}

GW_API gw_comm *gw_comm_create_v01(gw_dp *dp, const struct comm_config_v01 *cfg);
GW_COMPAT(gw_comm_create, "GRADWIRE_0.1");
gw_comm *gw_comm_create_v01(gw_dp *dp, const struct comm_config_v01 *cfg)
{
	if (!cfg)
		return gw_comm_create(dp, NULL);
	gw_sketched_job sk;
	gw_comm_config c = {.job = job_of(&cfg->job, &sk), .rank = cfg->rank,
			    .shards = cfg->shards, .rto_us = cfg->rto_us,
			    .timeout_ms = cfg->timeout_ms, .first_round = cfg->first_round};
	return gw_comm_create(dp, &c);
}

GW_API gw_agg *gw_agg_create_v01(gw_dp **dps, unsigned ndp, const struct agg_config_v01 *cfg);
GW_COMPAT(gw_agg_create, "GRADWIRE_0.1");
gw_agg *gw_agg_create_v01(gw_dp **dps, unsigned ndp, const struct agg_config_v01 *cfg)
{
	if (!cfg)
		return gw_agg_create(dps, ndp, NULL);
	gw_sketched_job sk;
	gw_agg_config c = {.job = job_of(&cfg->job, &sk), .shard = cfg->shard};
	return gw_agg_create(dps, ndp, &c);
}
