/* Every bad job, configuration and call of the collective is refused with
 * its code and a detail that names the field (gw_error_detail), before
 * anything is sent: the common checks, each engine's, the sizing against
 * the dataplane's packets, communicator and shard arguments, keys, and the
 * call an engine does not have. */
#include <stdio.h>
#include <unistd.h>

#include <gw/collective.h>
#include <gw/dataplane.h>

#include "gw_test.h"

static const gw_sketched_job sk10 = {.topk = 10};

static gw_coll_job dense_job(void)
{
	return (gw_coll_job){.job = 1, .dim = 1000, .workers = 2, .shards = 1,
			     .chunk_elems = 200};
}

static gw_coll_job sketched_job(void)
{
	gw_coll_job j = dense_job();
	j.engine = GW_COLL_SKETCHED;
	j.engine_params = &sk10;
	return j;
}

/* gw_coll_job_check(j) must return want with a detail starting with field. */
static void refused(const gw_coll_job *j, int want, const char *field, const char *what)
{
	GW_EXPECT_RC(gw_coll_job_check(j), want, "%s", what);
	GW_CHECK(!strncmp(gw_error_detail(), field, strlen(field)),
		 "%s: detail '%s' does not name %s", what, gw_error_detail(), field);
}

/* Front ends that name only a codec get the engine from the library. */
static void test_engine_for(void **state)
{
	(void)state;
	GW_CHECK(gw_coll_engine_for(GW_CODEC_COUNTSKETCH) == GW_COLL_SKETCHED, "countsketch");
	int ids[64];
	int n = gw_codec_list(ids, 64);
	GW_CHECK(n > 2 && n <= 64, "codecs: %d", n);
	for (int i = 0; i < n; i++)
		if (ids[i] != GW_CODEC_COUNTSKETCH)
			GW_CHECK(gw_coll_engine_for(ids[i]) == GW_COLL_DENSE, "%s",
				 gw_codec_name(ids[i]));
	GW_CHECK(gw_coll_engine_for(0) == GW_COLL_DENSE, "the default uplink");
	GW_CHECK(gw_coll_engine_for(-5) == GW_COLL_DENSE, "an unknown codec");
}

static void test_common_fields(void **state)
{
	(void)state;
	GW_EXPECT_RC(gw_coll_job_check(NULL), GW_EINVAL, "no job");
	GW_CHECK(strstr(gw_error_detail(), "job"), "detail '%s'", gw_error_detail());
	gw_coll_job j = dense_job();
	GW_OK_CALL(gw_coll_job_check(&j));
	j.engine = (gw_coll_engine)7;
	refused(&j, GW_EINVAL, "engine:", "engine 7");
	j = dense_job(), j.dim = 0;
	refused(&j, GW_EINVAL, "dim:", "dim 0");
	j = dense_job(), j.workers = 0;
	refused(&j, GW_EINVAL, "workers:", "0 workers");
	j = dense_job(), j.shards = GW_COLL_SHARDS_MAX + 1;
	refused(&j, GW_EINVAL, "shards:", "too many shards");
	j = dense_job(), j.window = GW_COLL_WINDOW_MAX + 1;
	refused(&j, GW_EINVAL, "window:", "window above the maximum");
	j = dense_job(), j.mode = (gw_coll_mode)9;
	refused(&j, GW_EINVAL, "mode:", "mode 9");
	j = dense_job(), j.chunk_elems = 41;
	refused(&j, GW_EINVAL, "chunk_elems:", "41-element chunks");
	j = dense_job(), j.chunk_elems = 0;
	refused(&j, GW_EINVAL, "chunk_elems:", "chunk_elems 0 at check");
	j = dense_job(), j.dim = 40ull << 32, j.chunk_elems = 40;
	refused(&j, GW_EINVAL, "chunk_elems:", "2^32 chunks");
	j = dense_job(), j.up_codec = 99;
	refused(&j, GW_EINVAL, "up_codec:", "codec 99 up");
	j = dense_job(), j.down_codec = 99;
	refused(&j, GW_EINVAL, "down_codec:", "codec 99 down");
	j = dense_job(), j.up_params = "max_frame_elems=40";
	refused(&j, GW_EINVAL, "codec params: max_frame_elems", "the layer's parameter");
	j = dense_job(), j.down_params = "nosuch=1";
	refused(&j, GW_EINVAL, "codec params: parameter 'nosuch'", "unknown parameter");
}

static void test_engine_fields(void **state)
{
	(void)state;
	gw_coll_job j = dense_job();
	j.up_codec = GW_CODEC_COUNTSKETCH;
	refused(&j, GW_EINVAL, "up_codec: countsketch", "dense engine, countsketch up");
	/* The dense engine's own fields (gw_dense_job). */
	static const uint64_t short_sizes[] = {400, 500}, long_sizes[] = {400, 700},
			      empty[] = {1000, 0}, sizes[] = {400, 600};
	static const gw_dense_job sums_short = {.ntensors = 2, .tensor_elems = short_sizes},
		sums_long = {.ntensors = 2, .tensor_elems = long_sizes},
		has_empty = {.ntensors = 2, .tensor_elems = empty},
		no_sizes = {.ntensors = 2},
		too_many = {.ntensors = GW_COLL_TENSORS_MAX + 1, .tensor_elems = sizes},
		min_big = {.min_elems = 240},
		mu_one = {.down_momentum = 1.0f}, mu_neg = {.down_momentum = -0.5f},
		good = {.ntensors = 2, .tensor_elems = sizes, .min_elems = 100,
			.down_momentum = 0.9f};
	const struct { const gw_dense_job *dj; const char *field; } bad[] = {
		{&sums_short, "tensor_elems: the sizes add up to 900, not dim (1000)"},
		{&sums_long, "tensor_elems: the sizes add up past dim (1000) at tensor 1"},
		{&has_empty, "tensor_elems: tensor 1 is empty"},
		{&no_sizes, "tensor_elems: missing"},
		{&too_many, "ntensors: at most"},
		{&min_big, "min_elems: at most chunk_elems"},
		{&mu_one, "down_momentum: must be in [0, 1)"},
		{&mu_neg, "down_momentum:"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		j = dense_job(), j.engine_params = bad[i].dj;
		refused(&j, GW_EINVAL, bad[i].field, bad[i].field);
	}
	j = dense_job(), j.engine_params = &good;
	GW_OK_CALL(gw_coll_job_check(&j));
	/* hq: summed as integers, so it comes down as hq with the uplink's
	 * params, and the shard holds no floats for momentum. */
	static const gw_dense_job mu = {.down_momentum = 0.9f};
	j = dense_job(), j.up_codec = j.down_codec = GW_CODEC_HQ;
	GW_OK_CALL(gw_coll_job_check(&j));
	j.up_params = "bits=3", j.down_params = "bits=3";
	GW_OK_CALL(gw_coll_job_check(&j));
	j.down_params = "bits=5";
	refused(&j, GW_EINVAL, "down_params: hq", "hq down with other bits");
	j = dense_job(), j.up_codec = GW_CODEC_HQ, j.down_codec = GW_CODEC_INT8;
	refused(&j, GW_EINVAL, "down_codec: an hq uplink", "hq up, int8 down");
	j = dense_job(), j.down_codec = GW_CODEC_HQ;
	refused(&j, GW_EINVAL, "down_codec: hq comes down only", "raw up, hq down");
	j = dense_job(), j.up_codec = j.down_codec = GW_CODEC_HQ, j.engine_params = &mu;
	refused(&j, GW_EINVAL, "down_momentum: an hq shard", "hq with down_momentum");

	j = sketched_job();
	GW_OK_CALL(gw_coll_job_check(&j));
	j.up_codec = GW_CODEC_RAW;
	refused(&j, GW_EINVAL, "up_codec: Sketched-SGD", "sketched engine, raw up");
	j = sketched_job(), j.down_codec = GW_CODEC_INT8;
	refused(&j, GW_EINVAL, "down_codec:", "sketched engine, int8 down");
	j = sketched_job(), j.shards = 2;
	refused(&j, GW_EINVAL, "shards:", "sketched engine, 2 shards");
	j = sketched_job(), j.dim = 1ull << 33, j.chunk_elems = 40000;
	refused(&j, GW_EINVAL, "dim:", "sketched engine, 2^33 coordinates");
	gw_sketched_job p = {.topk = 2000};
	j = sketched_job(), j.engine_params = &p;
	refused(&j, GW_EINVAL, "topk, candidates:", "topk above dim");
	p = (gw_sketched_job){.topk = 10, .candidates = 5};
	refused(&j, GW_EINVAL, "topk, candidates:", "fewer candidates than topk");
	p = (gw_sketched_job){.momentum = 1.5f};
	refused(&j, GW_EINVAL, "momentum:", "momentum 1.5");
	p = (gw_sketched_job){.momentum = -0.0f / 0.0f};
	refused(&j, GW_EINVAL, "momentum:", "momentum NaN");
	j = sketched_job(), j.up_params = "rows=16,cols=4194305";
	refused(&j, GW_EINVAL, "up_params:", "a sketch above 2^26 cells");
}

static void test_chunk_sizing(void **state)
{
	(void)state;
	GW_EXPECT_RC(gw_coll_chunk_elems(NULL, 1472), GW_EINVAL, "no job");
	gw_coll_job j = dense_job();
	j.chunk_elems = 0;
	int ce = gw_coll_chunk_elems(&j, 1472);
	GW_CHECK(ce > 0 && ce % 40 == 0, "raw at 1472 bytes: %d", ce);
	GW_EXPECT_RC(gw_coll_chunk_elems(&j, 100), GW_EBUDGET, "a 100-byte payload");
	GW_CHECK(strstr(gw_error_detail(), "chunk_elems"), "detail '%s'", gw_error_detail());
	j.engine = (gw_coll_engine)7;
	GW_EXPECT_RC(gw_coll_chunk_elems(&j, 1472), GW_EINVAL, "engine 7");
	GW_CHECK(strstr(gw_error_detail(), "engine"), "detail '%s'", gw_error_detail());
	j = sketched_job();
	GW_CHECK(gw_coll_chunk_elems(&j, 1472) > 0, "sketched at 1472 bytes");
	GW_EXPECT_RC(gw_coll_chunk_elems(&j, 100), GW_EBUDGET, "sketched, 100 bytes");
	GW_CHECK(strstr(gw_error_detail(), "sketch slice"), "detail '%s'", gw_error_detail());
}

static gw_dp *open_udp(const char *opts)
{
	gw_dp_config dc = {.backend = "udp", .opts = opts};
	GW_OK_CALL(gw_endpoint_parse("127.0.0.1:0", &dc.local));
	gw_dp *dp = NULL;
	GW_OK_CALL(gw_dp_open(&dc, &dp));
	return dp;
}

/* A create call must fail with a detail containing what. */
#define NOT_MADE(expr, what)                                                     \
	do {                                                                     \
		GW_CHECK(!(expr), "%s was accepted", #expr);                     \
		GW_CHECK(strstr(gw_error_detail(), what), "%s: detail '%s' lacks '%s'", \
			 #expr, gw_error_detail(), what);                        \
	} while (0)

static void test_communicator_and_shard(void **state)
{
	(void)state;
	gw_dp *dp = open_udp(NULL), *small = open_udp("payload=128");
	gw_endpoint shard;
	GW_OK_CALL(gw_endpoint_parse("127.0.0.1:9", &shard));
	gw_comm_config cc = {.job = dense_job(), .rank = 0, .shards = &shard};
	gw_agg_config ac = {.job = dense_job(), .shard = 0};
	NOT_MADE(gw_comm_create(NULL, &cc), "dp");
	NOT_MADE(gw_comm_create(dp, NULL), "cfg");
	cc.shards = NULL;
	NOT_MADE(gw_comm_create(dp, &cc), "shards");
	cc.shards = &shard;
	cc.rank = 2;
	NOT_MADE(gw_comm_create(dp, &cc), "rank: 2");
	cc.rank = 0;
	NOT_MADE(gw_comm_create(small, &cc), "payload 128 bytes");
	cc.job.workers = 0;
	NOT_MADE(gw_comm_create(dp, &cc), "workers:");
	NOT_MADE(gw_agg_create(NULL, 1, &ac), "dps");
	NOT_MADE(gw_agg_create(&dp, 1, NULL), "cfg");
	ac.shard = 1;
	NOT_MADE(gw_agg_create(&dp, 1, &ac), "shard: 1");
	ac.shard = 0;
	NOT_MADE(gw_agg_create(&small, 1, &ac), "payload 128 bytes");
	ac.job.dim = 0;
	NOT_MADE(gw_agg_create(&dp, 1, &ac), "dim:");
	GW_EXPECT_RC(gw_agg_serve(NULL, NULL, 0), GW_EINVAL, "serve without a shard");

	/* Each engine's communicator refuses the other engine's call. */
	cc.job = dense_job();
	gw_comm *c = gw_comm_create(dp, &cc);
	GW_CHECK(c, "dense communicator: %s", gw_error_detail());
	float g[1000] = {0}, out[1000];
	gw_sparse_update up;
	GW_EXPECT_RC(gw_allreduce_sketched(c, g, &up, NULL), GW_EUNSUPPORTED, "dense comm");
	GW_CHECK(strstr(gw_error_detail(), "dense"), "detail '%s'", gw_error_detail());
	GW_CHECK(gw_comm_result_kind(c) == GW_RESULT_DENSE, "a dense job's result kind");
	GW_EXPECT_RC(gw_allreduce_result(c, g, NULL, NULL, NULL), GW_EINVAL, "dense, no out");
	GW_CHECK(!strncmp(gw_error_detail(), "out:", 4), "detail '%s'", gw_error_detail());
	gw_result res;
	GW_EXPECT_RC(gw_allreduce_result(c, g, NULL, &res, NULL), GW_EINVAL, "dense, r no out");
	GW_CHECK(strstr(gw_error_detail(), "dense"), "detail '%s'", gw_error_detail());
	GW_EXPECT_RC(gw_allreduce_result(c, NULL, out, NULL, NULL), GW_EINVAL, "no grad");
	GW_CHECK(!strncmp(gw_error_detail(), "grad:", 5), "detail '%s'", gw_error_detail());
	GW_EXPECT_RC(gw_allreduce_result(NULL, g, out, NULL, NULL), GW_EINVAL, "no comm");
	GW_EXPECT_RC(gw_allreduce(c, NULL, out, NULL), GW_EINVAL, "no gradient");
	GW_EXPECT_RC(gw_allreduce(NULL, g, out, NULL), GW_EINVAL, "no communicator");
	gw_comm_free(c);
	cc.job = sketched_job();
	c = gw_comm_create(dp, &cc);
	GW_CHECK(c, "sketched communicator: %s", gw_error_detail());
	GW_EXPECT_RC(gw_allreduce(c, g, out, NULL), GW_EUNSUPPORTED, "sketched comm");
	GW_CHECK(strstr(gw_error_detail(), "gw_allreduce_result"), "detail '%s'",
		 gw_error_detail());
	GW_EXPECT_RC(gw_allreduce_sketched(c, g, NULL, NULL), GW_EINVAL, "no update");
	GW_CHECK(gw_comm_result_kind(c) == GW_RESULT_SPARSE, "a sketched job's result kind");
	/* A sparse result goes somewhere: out, or r. */
	GW_EXPECT_RC(gw_allreduce_result(c, g, NULL, NULL, NULL), GW_EINVAL, "sparse, nowhere");
	GW_CHECK(!strncmp(gw_error_detail(), "out:", 4), "detail '%s'", gw_error_detail());
	gw_comm_stats st;
	gw_comm_stats_get(c, &st);
	GW_CHECK(st.rounds == 0 && st.chunks_sent == 0, "a refused call sent something");
	gw_comm_free(c);
	gw_dp_close(dp);
	gw_dp_close(small);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	GW_CHECK(f && fputs(text, f) >= 0, "cannot write %s", path);
	fclose(f);
}

static void test_keys(void **state)
{
	(void)state;
	uint8_t key[GW_KEY_LEN];
	char path[] = "/tmp/gw-key-XXXXXX";
	int fd = mkstemp(path);
	GW_CHECK(fd >= 0, "mkstemp");
	close(fd);
	GW_EXPECT_RC(gw_coll_key_load(NULL, key), GW_EINVAL, "no path");
	GW_CHECK(strstr(gw_error_detail(), "path"), "detail '%s'", gw_error_detail());
	GW_EXPECT_RC(gw_coll_key_load("/nonexistent/key", key), GW_EIO, "no file");
	GW_CHECK(strstr(gw_error_detail(), "cannot read"), "detail '%s'", gw_error_detail());
	write_file(path, "0123abcd\n");
	GW_EXPECT_RC(gw_coll_key_load(path, key), GW_EINVAL, "8 digits");
	GW_CHECK(strstr(gw_error_detail(), "64 hex digits"), "detail '%s'", gw_error_detail());
	write_file(path, "  000102030405060708090a0b0c0d0e0f"
			 "101112131415161718191a1b1c1d1e1f  x\n");
	GW_EXPECT_RC(gw_coll_key_load(path, key), GW_EINVAL, "a word after the key");
	write_file(path, "\n000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n\n");
	GW_OK_CALL(gw_coll_key_load(path, key));
	GW_CHECK(key[0] == 0 && key[17] == 0x11 && key[31] == 0x1f, "key bytes");
	unlink(path);
}

GW_TEST_MAIN("collective refusals", 0, cmocka_unit_test(test_engine_for),
	     cmocka_unit_test(test_common_fields),
	     cmocka_unit_test(test_engine_fields), cmocka_unit_test(test_chunk_sizing),
	     cmocka_unit_test(test_communicator_and_shard), cmocka_unit_test(test_keys))
