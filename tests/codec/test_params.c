/* Codec parameters: names, bounds, defaults, set/get with GW_EBOUNDS / GW_EPARAM / GW_ECODEC / GW_ESTATE, and max_frame_elems honoured by every codec. */
#include "gw_test.h"

#include <float.h>
#include <math.h>

static void test_param_names(void **state)
{
	(void)state;
	for (int p = 0; p < GW_PARAM_COUNT_; p++) {
		const char *n = gw_param_name((gw_param)p);
		GW_CHECK(n && *n, "param %d has no name", p);
		GW_EXPECT_RC(gw_param_by_name(n), p, "gw_param_by_name(\"%s\") must "
			     "give back param %d", n, p);
		for (int q = 0; q < p; q++)
			GW_CHECK(strcmp(n, gw_param_name((gw_param)q)) != 0,
				 "params %d and %d share the name %s", q, p, n);
	}
	GW_CHECK(!strcmp(gw_param_name(GW_PARAM_MAX_FRAME_ELEMS), "max_frame_elems"),
		 "GW_PARAM_MAX_FRAME_ELEMS is called %s",
		 gw_param_name(GW_PARAM_MAX_FRAME_ELEMS));
	GW_CHECK(gw_param_name(GW_PARAM_COUNT_) == NULL &&
			 gw_param_name((gw_param)-1) == NULL &&
			 gw_param_name((gw_param)1000) == NULL,
		 "names of params outside the enum must be NULL");
	GW_EXPECT_RC(gw_param_by_name("no_such_param"), GW_EPARAM, "unknown name");
	GW_EXPECT_RC(gw_param_by_name(""), GW_EPARAM, "empty name");
	GW_EXPECT_RC(gw_param_by_name("MAX_FRAME_ELEMS"), GW_EPARAM,
		     "names are case-sensitive");
	GW_EXPECT_RC(gw_param_by_name(NULL), GW_EINVAL, "NULL name");
}

static void test_bounds_lookup(void **state)
{
	(void)state;
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	gw_bounds b;
	for (int c = 0; c < nc; c++) {
		const char *cn = gw_codec_name(ids[c]);
		/* Every codec takes max_frame_elems with the same bounds. */
		GW_EXPECT_RC(gw_param_bounds(ids[c], GW_PARAM_MAX_FRAME_ELEMS, &b), 0,
			     "%s must accept max_frame_elems", cn);
		GW_CHECK(b.lo == 0 && b.hi == (double)UINT32_MAX && b.def == 0 &&
				 b.integer == 1,
			 "%s: max_frame_elems bounds [%g, %g] default %g integer %d, "
			 "want [0, 2^32 - 1] default 0 integer", cn, b.lo, b.hi, b.def,
			 b.integer);
		GW_EXPECT_RC(gw_param_bounds(ids[c], GW_PARAM_MAX_FRAME_ELEMS, NULL),
			     0, "%s: bounds with a NULL output", cn);
		for (int p = 0; p < GW_PARAM_COUNT_; p++) {
			int rc = gw_param_bounds(ids[c], (gw_param)p, &b);
			GW_CHECK(rc == 0 || rc == GW_EPARAM, "%s param %s: %s", cn,
				 gw_param_name((gw_param)p), gw_error_name(rc));
			if (rc == 0)
				GW_CHECK(b.lo <= b.def && b.def <= b.hi &&
						 (!b.integer || b.def == floor(b.def)),
					 "%s param %s: default %g outside [%g, %g] or "
					 "not integer", cn, gw_param_name((gw_param)p),
					 b.def, b.lo, b.hi);
		}
		GW_EXPECT_RC(gw_param_bounds(ids[c], GW_PARAM_COUNT_, &b), GW_EPARAM,
			     "%s: param past the enum", cn);
		GW_EXPECT_RC(gw_param_bounds(ids[c], (gw_param)-1, &b), GW_EPARAM,
			     "%s: negative param", cn);
	}
	GW_EXPECT_RC(gw_param_bounds(0, GW_PARAM_MAX_FRAME_ELEMS, &b), GW_ECODEC,
		     "codec id 0 is invalid");
	GW_EXPECT_RC(gw_param_bounds(255, GW_PARAM_MAX_FRAME_ELEMS, &b), GW_ECODEC,
		     "codec id 255 is not registered");
	GW_EXPECT_RC(gw_param_bounds(-3, GW_PARAM_MAX_FRAME_ELEMS, &b), GW_ECODEC,
		     "negative codec id");
}

/* Set/get of every param of every codec against its advertised bounds. */
static void test_set_get(void **state)
{
	(void)state;
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	for (int c = 0; c < nc; c++) {
		const char *cn = gw_codec_name(ids[c]);
		gw_encoder *enc = gw_test_encoder(ids[c]);
		for (int p = 0; p < GW_PARAM_COUNT_; p++) {
			const char *pn = gw_param_name((gw_param)p);
			gw_bounds b;
			double v = -12345;
			if (gw_param_bounds(ids[c], (gw_param)p, &b) != 0) {
				GW_EXPECT_RC(gw_encoder_set_param(enc, (gw_param)p, 1),
					     GW_EPARAM, "%s does not take %s", cn, pn);
				GW_EXPECT_RC(gw_encoder_get_param(enc, (gw_param)p, &v),
					     GW_EPARAM, "%s does not take %s", cn, pn);
				continue;
			}
			GW_OK_CALL(gw_encoder_get_param(enc, (gw_param)p, &v));
			GW_CHECK(v == b.def, "%s %s: new encoder has %g, default %g", cn,
				 pn, v, b.def);
			/* Both ends are inside. */
			GW_EXPECT_RC(gw_encoder_set_param(enc, (gw_param)p, b.hi), 0,
				     "%s %s: upper bound %g", cn, pn, b.hi);
			GW_OK_CALL(gw_encoder_get_param(enc, (gw_param)p, &v));
			GW_CHECK(v == b.hi, "%s %s: set %g, got %g", cn, pn, b.hi, v);
			GW_EXPECT_RC(gw_encoder_set_param(enc, (gw_param)p, b.lo), 0,
				     "%s %s: lower bound %g", cn, pn, b.lo);
			GW_OK_CALL(gw_encoder_get_param(enc, (gw_param)p, &v));
			GW_CHECK(v == b.lo, "%s %s: set %g, got %g", cn, pn, b.lo, v);
			/* Just outside, NaN, infinities, non-integers: refused,
			 * and the value stays. */
			double bad[6];
			int nbad = 0;
			if (b.lo > -DBL_MAX)
				bad[nbad++] = nextafter(b.lo, -INFINITY);
			if (b.hi < DBL_MAX)
				bad[nbad++] = nextafter(b.hi, INFINITY);
			bad[nbad++] = NAN;
			bad[nbad++] = -NAN;
			if (b.hi < INFINITY)
				bad[nbad++] = INFINITY;
			if (b.integer && b.lo + 0.5 <= b.hi)
				bad[nbad++] = b.lo + 0.5;
			for (int i = 0; i < nbad; i++) {
				GW_EXPECT_RC(gw_encoder_set_param(enc, (gw_param)p, bad[i]),
					     GW_EBOUNDS, "%s %s = %g (bounds [%g, %g]%s)", cn,
					     pn, bad[i], b.lo, b.hi,
					     b.integer ? ", integer" : "");
				GW_OK_CALL(gw_encoder_get_param(enc, (gw_param)p, &v));
				GW_CHECK(v == b.lo, "%s %s: refused %g still changed the "
					 "value to %g", cn, pn, bad[i], v);
			}
			GW_OK_CALL(gw_encoder_set_param(enc, (gw_param)p, b.def));
		}
		/* Params outside the enum, NULL arguments. */
		double v;
		GW_EXPECT_RC(gw_encoder_set_param(enc, GW_PARAM_COUNT_, 1), GW_EPARAM,
			     "%s: set of a param past the enum", cn);
		GW_EXPECT_RC(gw_encoder_get_param(enc, GW_PARAM_COUNT_, &v), GW_EPARAM,
			     "%s: get of a param past the enum", cn);
		GW_EXPECT_RC(gw_encoder_set_param(enc, (gw_param)-1, 1), GW_EPARAM,
			     "%s: set of a negative param", cn);
		GW_EXPECT_RC(gw_encoder_get_param(enc, GW_PARAM_MAX_FRAME_ELEMS, NULL),
			     GW_EINVAL, "%s: get into NULL", cn);
		gw_encoder_free(enc);
	}
	double v;
	GW_EXPECT_RC(gw_encoder_set_param(NULL, GW_PARAM_MAX_FRAME_ELEMS, 1),
		     GW_EINVAL, "set on a NULL encoder");
	GW_EXPECT_RC(gw_encoder_get_param(NULL, GW_PARAM_MAX_FRAME_ELEMS, &v),
		     GW_EINVAL, "get on a NULL encoder");
	GW_CHECK(gw_encoder_create(0) == NULL && gw_encoder_create(255) == NULL &&
			 gw_encoder_create(-1) == NULL,
		 "gw_encoder_create of an unknown codec must return NULL");
	GW_EXPECT_RC(gw_codec_by_name("no_such_codec"), GW_ECODEC, "unknown codec");
}

/* Parameters cannot change while a tensor is being encoded. */
static void test_set_while_encoding(void **state)
{
	(void)state;
	float v[300] = {0};
	for (int i = 0; i < 300; i++)
		v[i] = (float)i;
	gw_tensor t = gw_test_dense_tensor(1, v, 300);
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	uint8_t buf[GW_FRAME_MAX];
	for (int c = 0; c < nc; c++) {
		if (!gw_test_codec_accepts(ids[c], 0))
			continue;
		gw_encoder *enc = gw_test_encoder(ids[c]);
		GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_MAX_FRAME_ELEMS, 10));
		GW_OK_CALL(gw_encode_begin(enc, &t));
		GW_EXPECT_RC(gw_encoder_set_param(enc, GW_PARAM_MAX_FRAME_ELEMS, 20),
			     GW_ESTATE, "%s: set between begin and first frame",
			     gw_codec_name(ids[c]));
		GW_CHECK(gw_encode_next(enc, buf, sizeof(buf)) > 0, "%s: first frame",
			 gw_codec_name(ids[c]));
		GW_EXPECT_RC(gw_encoder_set_param(enc, GW_PARAM_MAX_FRAME_ELEMS, 20),
			     GW_ESTATE, "%s: set between frames", gw_codec_name(ids[c]));
		double got;
		GW_OK_CALL(gw_encoder_get_param(enc, GW_PARAM_MAX_FRAME_ELEMS, &got));
		GW_CHECK(got == 10, "%s: refused set changed max_frame_elems to %g",
			 gw_codec_name(ids[c]), got);
		int rc, guard = 0;
		while ((rc = gw_encode_next(enc, buf, sizeof(buf))) > 0)
			GW_CHECK(++guard <= 300, "%s: endless frames", gw_codec_name(ids[c]));
		GW_CHECK(rc == 0, "%s: encode failed: %s", gw_codec_name(ids[c]),
			 gw_error_name(rc));
		GW_EXPECT_RC(gw_encoder_set_param(enc, GW_PARAM_MAX_FRAME_ELEMS, 20), 0,
			     "%s: set after the last frame", gw_codec_name(ids[c]));
		gw_encoder_free(enc);
	}
}

static int known(int id)
{
	return id == GW_CODEC_RAW || id == GW_CODEC_BF16 || id == GW_CODEC_INT8;
}

/* Frames never hold more than max_frame_elems entries; raw, bf16 and int8
 * fill each frame but the last when the budget allows. */
static void max_elems(int id, const gw_tensor *t, const char *name,
		      uint32_t lim, size_t budget)
{
	int subset = (gw_test_codec_of(id)->flags & GW_TEST_SUBSET) != 0;
	gw_encoder *enc = gw_test_encoder(id);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_MAX_FRAME_ELEMS, lim));
	gw_test_frames fr;
	int rc = gw_test_encode_all(enc, t, budget, &fr);
	if (rc == GW_EBOUNDS && !known(id)) {
		/* A codec with a frame granularity (3LC: groups of 5) may
		 * refuse a smaller limit at begin rather than break it. */
		print_message("  note: %s refuses max_frame_elems %u at begin (%s)\n",
			      gw_codec_name(id), lim, gw_error_name(rc));
		gw_test_frames_free(&fr);
		gw_encoder_free(enc);
		return;
	}
	GW_CHECK(rc == 0, "%s on %s with max_frame_elems %u, budget %zu: %s",
		 gw_codec_name(id), name, lim, budget, gw_error_name(rc));
	uint64_t total = t->keys ? t->nnz : t->dim, sum = 0;
	for (size_t j = 0; j < fr.n; j++) {
		gw_frame_info h;
		GW_OK_CALL(gw_frame_verify(fr.f[j].data, fr.f[j].len, &h));
		GW_CHECK(h.count <= lim, "%s on %s: frame %zu holds %u entries, "
			 "max_frame_elems is %u (budget %zu)", gw_codec_name(id), name,
			 j, h.count, lim, budget);
		if (known(id) && budget == GW_FRAME_MAX && j + 1 < fr.n)
			GW_CHECK(h.count == lim, "%s on %s: frame %zu holds %u entries "
				 "though %u fit (budget %zu)", gw_codec_name(id), name,
				 j, h.count, lim, budget);
		sum += h.count;
	}
	if (!subset)
		GW_CHECK(sum == total, "%s on %s: frames hold %llu of %llu entries",
			 gw_codec_name(id), name, (unsigned long long)sum,
			 (unsigned long long)total);
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
}

static void test_max_frame_elems(void **state)
{
	(void)state;
	GW_TEST_NEED_TRACES();
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	gw_test_dense small, big;
	gw_test_load_dense(6, &small);   /* cnn/it010_conv1.weight: 144 */
	gw_test_load_dense(10, &big);    /* cnn/it010_fc.weight: 20480 */
	gw_test_sparse sp;
	gw_test_load_sparse(2, &sp);
	gw_tensor ts = gw_test_dense_tensor(1, small.v, small.n);
	gw_tensor tb = gw_test_dense_tensor(2, big.v, big.n);
	gw_tensor tsp = gw_test_sparse_tensor(3, sp.dim, sp.keys, 32, sp.vals, sp.nnz);
	static const uint32_t lims[] = {7, 100, 1000};
	static const size_t budgets[] = {9000, GW_FRAME_MAX};
	for (int c = 0; c < nc; c++) {
		if (gw_test_codec_accepts(ids[c], 0)) {
			max_elems(ids[c], &ts, small.name, 1, GW_FRAME_MAX);
			for (int l = 0; l < 3; l++)
				for (int b = 0; b < 2; b++)
					max_elems(ids[c], &tb, big.name, lims[l], budgets[b]);
		}
		if (gw_test_codec_accepts(ids[c], 1))
			for (int l = 0; l < 3; l++)
				for (int b = 0; b < 2; b++)
					max_elems(ids[c], &tsp, sp.name, lims[l], budgets[b]);
	}
	gw_test_dense_free(&small);
	gw_test_dense_free(&big);
	gw_test_sparse_free(&sp);
}

GW_TEST_MAIN("params", 0,
	     cmocka_unit_test(test_param_names),
	     cmocka_unit_test(test_bounds_lookup),
	     cmocka_unit_test(test_set_get),
	     cmocka_unit_test(test_set_while_encoding),
	     cmocka_unit_test(test_max_frame_elems))
