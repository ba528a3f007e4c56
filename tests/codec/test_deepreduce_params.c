/* Codec strings: "deepreduce:index=bloom,policy=p2,fpr=0.001,value=poly"
 * selects any index/value combination by name; unknown names, values out
 * of bounds and parameters that do not apply to the chosen combination are
 * refused with a message naming the parameter, and gw_encode_begin()
 * refuses an invalid combination set parameter by parameter. */
#include "gw_test.h"

static gw_encoder *from(const char *spec, char *err)
{
	gw_encoder *enc = gw_encoder_from_string(spec);
	snprintf(err, 256, "%s", gw_error_detail());   /* the library's detail */
	return enc;
}

static void expect_param(gw_encoder *enc, gw_param p, double want, const char *spec)
{
	double v = -1;
	GW_EXPECT_RC(gw_encoder_get_param(enc, p, &v), 0, "%s: get %s", spec, gw_param_name(p));
	GW_CHECK(v == want, "%s: %s = %g, want %g", spec, gw_param_name(p), v, want);
}

static void test_every_combination_by_name(void **state)
{
	(void)state;
	static const char *idx[] = {"raw", "bloom", "rle", "delta"};
	static const char *val[] = {"f32", "deflate", "qsgd", "poly", "dexp"};
	char spec[200], err[256];
	for (int i = 0; i < 4; i++)
		for (int v = 0; v < 5; v++) {
			snprintf(spec, sizeof(spec), "deepreduce:index=%s,value=%s", idx[i], val[v]);
			gw_encoder *enc = from(spec, err);
			GW_CHECK(enc, "%s refused: %s", spec, err);
			expect_param(enc, GW_PARAM_INDEX, i, spec);
			expect_param(enc, GW_PARAM_VALUE, v, spec);
			gw_encoder_free(enc);
		}
	gw_encoder *enc = from("deepreduce:index=bloom,policy=p2,fpr=0.001,value=poly", err);
	GW_CHECK(enc, "the issue's example refused: %s", err);
	expect_param(enc, GW_PARAM_POLICY, 2, "example");
	expect_param(enc, GW_PARAM_FPR, 0.001, "example");
	gw_encoder_free(enc);
	enc = from("deepreduce:index=bloom,policy=p0,fpr=0.6,value=qsgd,levels=127,bucket=512", err);
	GW_CHECK(enc, "QSGD + Bloom-P0 refused: %s", err);
	gw_encoder_free(enc);
	enc = from("deepreduce", err);
	GW_CHECK(enc, "plain name refused: %s", err);
	expect_param(enc, GW_PARAM_INDEX, 1, "defaults");
	expect_param(enc, GW_PARAM_VALUE, 0, "defaults");
	gw_encoder_free(enc);
	GW_CHECK(!strcmp(gw_param_value_name(GW_PARAM_POLICY, 2), "p2") &&
			 gw_param_value_name(GW_PARAM_POLICY, 3) == NULL &&
			 gw_param_value_name(GW_PARAM_FPR, 0) == NULL,
		 "value names");
}

/* Refused, and the message mentions every word of `needles`. */
static void refused(const char *spec, const char *n1, const char *n2)
{
	char err[256];
	gw_encoder *enc = from(spec, err);
	GW_CHECK(!enc, "'%s' accepted", spec);
	GW_CHECK(strstr(err, n1) && (!n2 || strstr(err, n2)),
		 "'%s': message '%s' does not name '%s'%s%s", spec, err, n1,
		 n2 ? " and " : "", n2 ? n2 : "");
}

static void test_bad_strings(void **state)
{
	(void)state;
	refused("deepreduc:index=bloom", "deepreduc", NULL);
	refused("deepreduce:index=blom", "index", "blom");
	refused("deepreduce:index=bloom,policy=p3", "policy", "p3");
	refused("deepreduce:fpr=2", "fpr", NULL);
	refused("deepreduce:fpr=0", "fpr", NULL);
	refused("deepreduce:fpr=abc", "fpr", "abc");
	refused("deepreduce:value=poly,degree=9", "degree", NULL);
	refused("deepreduce:value=poly,degree=2.5", "degree", NULL);
	refused("deepreduce:nosuch=1", "nosuch", "deepreduce");
	refused("deepreduce:index", "index", NULL);
	refused("deepreduce:index=bloom,", "end", NULL);
	refused("deepreduce:,index=bloom", "empty", NULL);
	refused("deepreduce:index=", "index", NULL);
	/* combinations */
	refused("deepreduce:index=rle,fpr=0.01", "fpr", "index=bloom");
	refused("deepreduce:index=delta,policy=p2", "policy", "index=delta");
	refused("deepreduce:value=qsgd,degree=3", "degree", "value=poly");
	refused("deepreduce:value=poly,levels=15", "levels", "value=qsgd");
	refused("deepreduce:value=f32,zlevel=9", "zlevel", "value=deflate");
	refused("deepreduce:sparsifier=none,fraction=0.1", "fraction", "sparsifier=none");
	/* other codecs keep their numbers-only parameters */
	refused("topk:fraction=bloom", "fraction", "bloom");
	refused("topk:index=bloom", "index", "topk");
}

/* Set one by one, the combination is checked when encoding starts. */
static void test_begin_checks_combination(void **state)
{
	(void)state;
	gw_encoder *enc = gw_encoder_create(GW_CODEC_DEEPREDUCE);
	GW_CHECK(enc, "create");
	GW_EXPECT_RC(gw_encoder_set_param(enc, GW_PARAM_INDEX, 2), 0, "index=rle");
	GW_EXPECT_RC(gw_encoder_set_param(enc, GW_PARAM_FPR, 0.01), 0, "fpr alone is in bounds");
	float v[16] = {1, 2, 3};
	gw_tensor t = gw_test_dense_tensor(1, v, 16);
	GW_EXPECT_RC(gw_encode_begin(enc, &t), GW_EPARAM, "rle + fpr must be refused at begin");
	char err[256];
	GW_EXPECT_RC(gw_encoder_check_params(enc), GW_EPARAM, "check");
	snprintf(err, sizeof(err), "%s", gw_error_detail());
	GW_CHECK(strstr(err, "fpr"), "message '%s'", err);
	GW_EXPECT_RC(gw_encoder_set_param(enc, GW_PARAM_INDEX, 1), 0, "index=bloom");
	GW_EXPECT_RC(gw_encode_begin(enc, &t), 0, "bloom + fpr is fine");
	gw_encoder_free(enc);
	/* Every other codec: no combination rules, check passes. */
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	for (int c = 0; c < nc; c++) {
		gw_encoder *e = gw_encoder_create(ids[c]);
		GW_EXPECT_RC(gw_encoder_check_params(e), 0, "%s", gw_codec_name(ids[c]));
		gw_encoder_free(e);
	}
}

GW_TEST_MAIN("deepreduce_params", 0,
	     cmocka_unit_test(test_every_combination_by_name),
	     cmocka_unit_test(test_bad_strings),
	     cmocka_unit_test(test_begin_checks_combination))
