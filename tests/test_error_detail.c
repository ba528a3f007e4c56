/* Error details, one convention for the whole API: a call that checks what
 * its caller configures clears gw_error_detail() when it starts and, when
 * it fails, says there which argument, field or parameter it refused and
 * why; calls that give no details leave it alone; each thread has its own. */
#include <pthread.h>

#include <gw/collective.h>
#include <gw/dataplane.h>

#include "gw_test.h"

static void test_layers_say_where(void **state)
{
	(void)state;
	GW_CHECK(!strcmp(gw_error_detail(), ""), "a fresh thread has no detail: '%s'",
		 gw_error_detail());
	gw_encoder *e = gw_encoder_create(GW_CODEC_3LC);
	GW_EXPECT_RC(gw_encoder_set_params(e, "sparsity=7"), GW_EBOUNDS, "3lc sparsity=7");
	GW_CHECK(strstr(gw_error_detail(), "parameter sparsity"), "codec: '%s'", gw_error_detail());
	/* Ranges as they are: 3LC's sparsity stops short of 2, top-k's
	 * fraction starts above 0. */
	GW_EXPECT_RC(gw_encoder_set_params(e, "sparsity=2"), GW_EBOUNDS, "3lc sparsity=2");
	GW_CHECK(strstr(gw_error_detail(), "2 is outside [1, 2)"), "3lc: '%s'", gw_error_detail());
	GW_OK_CALL(gw_encoder_set_params(e, "sparsity=1.5"));
	GW_CHECK(!strcmp(gw_error_detail(), ""), "a call that succeeds leaves no detail: '%s'",
		 gw_error_detail());
	gw_encoder_free(e);
	e = gw_encoder_create(GW_CODEC_TOPK);
	GW_EXPECT_RC(gw_encoder_set_params(e, "fraction=0"), GW_EBOUNDS, "top-k fraction=0");
	GW_CHECK(strstr(gw_error_detail(), "0 is outside (0, 1]"), "top-k: '%s'",
		 gw_error_detail());
	gw_encoder_free(e);
	e = gw_encoder_create(GW_CODEC_HQ);
	GW_EXPECT_RC(gw_encoder_set_params(e, "bits=9"), GW_EBOUNDS, "hq bits=9");
	GW_CHECK(strstr(gw_error_detail(), "9 is outside [2, 8] or not a whole number"),
		 "hq: '%s'", gw_error_detail());
	gw_encoder_free(e);
	GW_CHECK(!gw_encoder_from_string("raw:nosuch=1"), "unknown parameter accepted");
	GW_CHECK(strstr(gw_error_detail(), "nosuch"), "codec string: '%s'", gw_error_detail());
	/* One parser of codec strings for the CLIs and the member API: no
	 * empty list after ':', no parameter twice. */
	GW_CHECK(!gw_encoder_from_string("3lc:"), "'3lc:' accepted");
	GW_CHECK(strstr(gw_error_detail(), "no parameters after ':'"), "'3lc:': '%s'",
		 gw_error_detail());
	GW_CHECK(!gw_encoder_from_string("3lc:sparsity=1.5,sparsity=1.2"), "a repeat accepted");
	GW_CHECK(strstr(gw_error_detail(), "parameter sparsity: given twice"), "repeat: '%s'",
		 gw_error_detail());

	gw_dp_config dc = {.backend = "nosuch"};
	gw_dp *dp;
	GW_EXPECT_RC(gw_dp_open(&dc, &dp), GW_EUNSUPPORTED, "backend nosuch");
	GW_CHECK(strstr(gw_error_detail(), "'nosuch'") && strstr(gw_error_detail(), "udp"),
		 "dataplane: '%s'", gw_error_detail());
	dc.backend = "udp";
	dc.opts = "impair_loss=2";
	GW_EXPECT_RC(gw_dp_open(&dc, &dp), GW_EINVAL, "impair_loss=2");
	GW_CHECK(strstr(gw_error_detail(), "impair_loss=2"), "impairment: '%s'",
		 gw_error_detail());

	gw_coll_job j = {.dim = 100, .workers = 2, .shards = 300, .chunk_elems = 40};
	GW_EXPECT_RC(gw_coll_job_check(&j), GW_EINVAL, "300 shards");
	GW_CHECK(!strncmp(gw_error_detail(), "shards:", 7), "job: '%s'", gw_error_detail());
	/* A call that gives no details does not touch it. */
	float out[4];
	GW_CHECK(gw_decode("xx", 2, out, 4) < 0, "a 2-byte frame decoded");
	GW_CHECK(!strncmp(gw_error_detail(), "shards:", 7), "gw_decode changed the detail: '%s'",
		 gw_error_detail());
}

static void *other_thread(void *arg)
{
	(void)arg;
	/* Its own, empty, whatever the main thread's holds. */
	return (void *)(uintptr_t)(gw_error_detail()[0] == '\0');
}

static void test_per_thread(void **state)
{
	(void)state;
	gw_coll_job j = {.dim = 0};
	GW_CHECK(gw_coll_job_check(&j) < 0 && *gw_error_detail(), "dim 0 gives a detail");
	pthread_t t;
	void *empty = NULL;
	GW_CHECK(pthread_create(&t, NULL, other_thread, NULL) == 0, "pthread_create");
	pthread_join(t, &empty);
	GW_CHECK(empty, "another thread saw this thread's detail");
	GW_CHECK(!strncmp(gw_error_detail(), "dim:", 4), "detail lost: '%s'", gw_error_detail());
}

GW_TEST_MAIN("error details", 0, cmocka_unit_test(test_layers_say_where),
	     cmocka_unit_test(test_per_thread))
