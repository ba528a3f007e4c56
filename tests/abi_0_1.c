/* A program as it was written and linked against libgradwire 0.1: it
 * calls the 0.1 forms of the calls that 0.2 changed (bound with .symver to
 * name@GRADWIRE_0.1, as the linker bound them then), with the 0.1 job
 * layout, and checks they still work. tests/test_install.sh builds it
 * against the installed library. Exit 0, or 1 with a message. */
#include <stdio.h>
#include <string.h>

#include <gw/collective.h>

#include "../collective/compat_0_1.h"   /* the 0.1 struct layouts */

#define OLD(name) __asm__(".symver " #name "_01, " #name "@GRADWIRE_0.1")

int gw_coll_job_check_01(const struct job_v01 *job, const char **why);
OLD(gw_coll_job_check);
int gw_coll_chunk_elems_01(const struct job_v01 *job, uint32_t payload_max);
OLD(gw_coll_chunk_elems);
gw_comm *gw_comm_create_01(gw_dp *dp, const struct comm_config_v01 *cfg);
OLD(gw_comm_create);
int gw_encoder_set_params_01(gw_encoder *enc, const char *list, char *err, size_t errlen);
OLD(gw_encoder_set_params);
gw_encoder *gw_encoder_from_string_01(const char *spec, char *err, size_t errlen);
OLD(gw_encoder_from_string);
int gw_encoder_check_params_01(const gw_encoder *enc, char *err, size_t errlen);
OLD(gw_encoder_check_params);
gw_agg *gw_agg_create_01(gw_dp **dps, unsigned ndp, const struct agg_config_v01 *cfg);
OLD(gw_agg_create);

#define FAIL(...) do { printf("abi 0.1: " __VA_ARGS__); printf("\n"); return 1; } while (0)

int main(void)
{
	const char *why = "unset";
	struct job_v01 j = {.job = 1, .dim = 1000, .chunk_elems = 40, .workers = 0, .shards = 1};
	if (gw_coll_job_check_01(&j, &why) != GW_EINVAL || !why || !strstr(why, "workers"))
		FAIL("job check of 0 workers: why = %s", why ? why : "NULL");
	j.workers = 2;
	if (gw_coll_job_check_01(&j, &why) != 0 || why)
		FAIL("valid job refused: %s", why ? why : "");
	/* A countsketch uplink meant Sketched-SGD, its k in the job itself. */
	struct job_v01 sk = j;
	sk.up_codec = GW_CODEC_COUNTSKETCH;
	sk.topk = 1001;   /* above dim: refused by the sketched engine */
	if (gw_coll_job_check_01(&sk, &why) != GW_EINVAL || !strstr(why, "topk"))
		FAIL("Sketched-SGD topk above dim: why = %s", why ? why : "NULL");
	sk.topk = 10;
	if (gw_coll_job_check_01(&sk, &why) != 0)
		FAIL("Sketched-SGD job refused: %s", why);
	int ce = gw_coll_chunk_elems_01(&sk, 1472);
	gw_sketched_job p = {.topk = 10};
	gw_coll_job now = {.job = 1, .dim = 1000, .workers = 2, .shards = 1,
			   .up_codec = GW_CODEC_COUNTSKETCH, .engine = GW_COLL_SKETCHED,
			   .engine_params = &p};
	if (ce <= 0 || ce != gw_coll_chunk_elems(&now, 1472))
		FAIL("chunk_elems of the 0.1 job %d, of the 0.2 job %d", ce,
		     gw_coll_chunk_elems(&now, 1472));

	gw_dp_config dc = {.backend = "udp"};
	gw_dp *dp;
	gw_endpoint_parse("127.0.0.1:0", &dc.local);
	if (gw_dp_open(&dc, &dp) < 0)
		FAIL("udp dataplane: %s", gw_error_detail());
	gw_endpoint shard;
	gw_endpoint_parse("127.0.0.1:9", &shard);
	j.chunk_elems = 0;
	j.chunk_elems = (uint32_t)gw_coll_chunk_elems_01(&j, gw_dp_payload_max(dp));
	struct comm_config_v01 cc = {.job = j, .rank = 1, .shards = &shard};
	gw_comm *c = gw_comm_create_01(dp, &cc);
	if (!c)
		FAIL("communicator of a 0.1 config: %s", gw_error_detail());
	gw_comm_free(c);
	cc.rank = 2;
	if (gw_comm_create_01(dp, &cc))
		FAIL("rank 2 of 2 workers accepted");
	struct agg_config_v01 ac = {.job = j, .shard = 0};
	gw_agg *a = gw_agg_create_01(&dp, 1, &ac);
	if (!a)
		FAIL("shard of a 0.1 config: %s", gw_error_detail());
	gw_agg_free(a);
	gw_dp_close(dp);

	char err[128] = "";
	gw_encoder *e = gw_encoder_create(GW_CODEC_3LC);
	if (gw_encoder_set_params_01(e, "sparsity=7", err, sizeof(err)) >= 0 ||
	    !strstr(err, "sparsity"))
		FAIL("3lc sparsity=7 accepted, or no message: '%s'", err);
	gw_encoder_free(e);
	e = gw_encoder_create(GW_CODEC_DEEPREDUCE);
	err[0] = '\0';
	if (gw_encoder_set_params_01(e, "index=rle,fpr=0.01", err, sizeof(err)) < 0 ||
	    gw_encoder_check_params_01(e, err, sizeof(err)) != GW_EPARAM || !strstr(err, "fpr"))
		FAIL("deepreduce rle + fpr: '%s'", err);
	gw_encoder_free(e);
	err[0] = '\0';
	if (gw_encoder_from_string_01("nosuch:x=1", err, sizeof(err)) || !strstr(err, "nosuch"))
		FAIL("unknown codec string: '%s'", err);
	printf("abi 0.1: the 0.1 forms of the 7 changed calls work\n");
	return 0;
}
