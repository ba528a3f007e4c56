/* Frames that are not delivered lose no gradient mass: gw_ef_restore() gives
 * a dropped frame back to the error buffer, and gw_encode_abandon() does the
 * same for the unsent rest of a tensor — for every lossy dense codec, so
 * delivered + error buffer == input after one round, within float rounding. */
#include "gw_test.h"

#include <math.h>

#define BUDGET (1500 - GW_PKT_RESERVE)

/* Each element's value passes through at most four float roundings
 * (g + e, c - d, e + d on restore, and the decoder's own multiply-add),
 * each at most 2^-24 of the magnitude involved. A decoded value d is at most
 * 2 max|g| (scales are s max|g + e| with s < 2 and e = 0 before the round),
 * so the terms summed below bound every intermediate. */
static void check_conserved(const char *codec, const char *how, const float *g,
			    const float *out, const float *lost, const float *e,
			    size_t n)
{
	double gmax = 0;
	for (size_t i = 0; i < n; i++)
		gmax = fmax(gmax, fabs(g[i]));
	for (size_t i = 0; i < n; i++) {
		double got = (double)out[i] + e[i];
		double tol = 0x1p-21 * (fabs(g[i]) + fabs(out[i]) + fabs(lost[i]) +
					fabs(e[i]) + 2 * gmax) + 1e-30;
		GW_CHECK(fabs(got - g[i]) <= tol,
			 "%s, %s: element %zu: delivered %g + error buffer %g = %g, "
			 "input %g (tolerance %g)", codec, how, i, out[i], e[i], got,
			 g[i], tol);
	}
}

static void run_codec(int id, const float *g, size_t n, int abandon)
{
	const char *name = gw_codec_name(id);
	gw_encoder *enc = gw_test_encoder(id);
	gw_ef *ef = gw_ef_create(n);
	float *out = calloc(n, sizeof(float)), *lost = calloc(n, sizeof(float));
	GW_CHECK(ef && out && lost, "out of memory");
	GW_OK_CALL(gw_encoder_set_ef(enc, ef));
	/* Small frames, so that well-compressing codecs still emit many. */
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_MAX_FRAME_ELEMS, 1000));
	if (gw_param_bounds(id, GW_PARAM_FRACTION, NULL) == 0)
		GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_FRACTION, 0.5));
	gw_tensor t = gw_test_dense_tensor(3, g, n);
	GW_OK_CALL(gw_encode_begin(enc, &t));

	gw_test_rng rng = {.s = 42 + (uint64_t)id};
	uint8_t *buf = malloc(BUDGET);
	int frames = 0, dropped = 0, rc;
	while ((rc = gw_encode_next(enc, buf, BUDGET)) > 0) {
		frames++;
		if (abandon && frames == 3)
			break;   /* rc > 0: the frame in buf was never sent */
		if (!abandon && gw_test_below(&rng, 10) < 3) {
			GW_CHECK(gw_decode(buf, (size_t)rc, lost, n) >= 0, "%s: decode", name);
			GW_CHECK(gw_ef_restore(ef, buf, (size_t)rc) >= 0,
				 "%s: gw_ef_restore refused its own frame", name);
			dropped++;
			continue;
		}
		GW_CHECK(gw_decode(buf, (size_t)rc, out, n) >= 0, "%s: decode", name);
	}
	GW_CHECK(rc >= 0, "%s: encode failed: %s", name, gw_strerror(rc));
	if (abandon) {
		/* The third frame was encoded but never sent: give it back too. */
		GW_CHECK(gw_ef_restore(ef, buf, (size_t)rc) >= 0, "%s: restore", name);
		GW_OK_CALL(gw_encode_abandon(enc));
		GW_EXPECT_RC(gw_encode_next(enc, buf, BUDGET), GW_ESTATE,
			     "%s: encoder still active after abandon", name);
	} else {
		GW_CHECK(dropped > 0 && dropped < frames, "%s: %d of %d frames dropped: "
			 "the test needs some of each", name, dropped, frames);
	}
	check_conserved(name, abandon ? "abandoned" : "dropped", g, out, lost,
			gw_ef_data(ef), n);
	/* The encoder is usable again. */
	GW_OK_CALL(gw_encode_begin(enc, &t));
	GW_OK_CALL(gw_encode_abandon(enc));
	free(buf);
	free(out);
	free(lost);
	gw_ef_free(ef);
	gw_encoder_free(enc);
}

static void each_codec(int abandon)
{
	GW_TEST_NEED_TRACES();
	size_t n;
	float *g = gw_test_load_cnn_iter(1, &n);
	int ids[GW_TEST_MAX_CODECS], nc = gw_test_codecs(ids), tried = 0;
	for (int i = 0; i < nc; i++) {
		if (!(gw_codec_caps(ids[i]) & GW_CODEC_LOSSY) ||
		    !gw_test_codec_accepts(ids[i], 0))
			continue;
		run_codec(ids[i], g, n, abandon);
		tried++;
	}
	GW_CHECK(tried >= 2, "only %d lossy dense codecs registered", tried);
	free(g);
}

static void test_dropped_frames_restored(void **state)
{
	(void)state;
	each_codec(0);
}

static void test_abandon_keeps_rest(void **state)
{
	(void)state;
	each_codec(1);
}

static void test_restore_rejects_bad_frames(void **state)
{
	(void)state;
	gw_ef *ef = gw_ef_create(8);
	uint8_t junk[40] = {0};
	GW_EXPECT_RC(gw_ef_restore(NULL, junk, sizeof junk), GW_EINVAL, "NULL ef");
	GW_EXPECT_RC(gw_ef_restore(ef, junk, sizeof junk), GW_EMAGIC, "zero bytes");
	for (int i = 0; i < 8; i++)
		GW_CHECK(gw_ef_data(ef)[i] == 0.0f, "buffer written on a bad frame");
	GW_EXPECT_RC(gw_encode_abandon(NULL), GW_EINVAL, "NULL encoder");
	gw_ef_free(ef);
}

GW_TEST_MAIN("ef_restore", 0,
	     cmocka_unit_test(test_dropped_frames_restored),
	     cmocka_unit_test(test_abandon_keeps_rest),
	     cmocka_unit_test(test_restore_rejects_bad_frames))
