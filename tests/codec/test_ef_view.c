/* gw_ef_view: an error buffer over a slice of another, sharing its memory.
 * The collective encodes each chunk of a sparse-frame codec (top-k) as a
 * tensor of its own with chunk-relative keys, feeding back into a view of
 * the whole tensor's buffer; this checks that over rounds nothing is lost
 * (delivered + whole buffer == every gradient fed in) and that a dropped
 * chunk-relative frame restored through its view lands on its chunk. */
#include "gw_test.h"

#include <math.h>

#define DIM 10000u
#define CHUNK 1280u
#define ROUNDS 3

static void test_view_bounds(void **state)
{
	(void)state;
	gw_ef *ef = gw_ef_create(100);
	GW_CHECK(ef, "out of memory");
	GW_CHECK(!gw_ef_view(NULL, 0, 1), "view of NULL");
	GW_CHECK(!gw_ef_view(ef, 101, 0), "view starting past the end");
	GW_CHECK(!gw_ef_view(ef, 50, 51), "view running past the end");
	GW_CHECK(!gw_ef_view(ef, 1, UINT64_MAX), "view length wrapping");
	gw_ef *v = gw_ef_view(ef, 40, 60);
	GW_CHECK(v && gw_ef_dim(v) == 60, "view [40, 100)");
	GW_CHECK(gw_ef_data(v) == gw_ef_data(ef) + 40, "view does not share memory");
	gw_ef *empty = gw_ef_view(ef, 100, 0);
	GW_CHECK(empty && gw_ef_dim(empty) == 0, "empty view at the end");
	gw_ef_reset(v);   /* resets only its slice */
	gw_ef_free(empty);
	gw_ef_free(v);    /* frees nothing of ef's: ASan would see a double free */
	gw_ef_free(ef);
}

/* Encodes g chunk by chunk through views of ef, drops every third chunk's
 * frame (restored through its view), decodes the rest into out. */
static void chunked_round(gw_encoder *enc, gw_ef *const *views, const float *g,
			  float *out, unsigned round)
{
	uint8_t buf[GW_FRAME_MAX];
	for (uint32_t c = 0; c * CHUNK < DIM; c++) {
		uint64_t base = (uint64_t)c * CHUNK;
		uint32_t len = (uint32_t)GW_MIN((uint64_t)CHUNK, DIM - base);
		GW_OK_CALL(gw_encoder_set_ef(enc, views[c]));
		gw_tensor t = gw_test_dense_tensor(0, g + base, len);
		GW_OK_CALL(gw_encode_begin(enc, &t));
		int n = gw_encode_next(enc, buf, sizeof(buf));
		GW_CHECK(n > 0, "chunk %u: no frame (%d)", c, n);
		gw_frame_info fi;
		GW_OK_CALL(gw_frame_peek(buf, (size_t)n, &fi));
		GW_CHECK(fi.start + fi.span <= len, "chunk %u: keys not chunk-relative", c);
		GW_CHECK(gw_encode_next(enc, buf + n, sizeof(buf) - (size_t)n) == 0,
			 "chunk %u: more than one frame", c);
		if ((c + round) % 3 == 0)
			GW_CHECK(gw_ef_restore(views[c], buf, (size_t)n) > 0,
				 "chunk %u: restore through the view", c);
		else
			GW_CHECK(gw_decode(buf, (size_t)n, out + base, len) > 0,
				 "chunk %u: decode", c);
	}
}

static void test_chunked_topk_conserves(void **state)
{
	(void)state;
	gw_encoder *enc = gw_test_encoder(GW_CODEC_TOPK);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_FRACTION, 0.05));
	gw_ef *ef = gw_ef_create(DIM);
	gw_ef *views[(DIM + CHUNK - 1) / CHUNK];
	for (uint32_t c = 0; c * CHUNK < DIM; c++)
		views[c] = gw_ef_view(ef, (uint64_t)c * CHUNK,
				      GW_MIN((uint64_t)CHUNK, DIM - (uint64_t)c * CHUNK));
	float *g = malloc(DIM * sizeof(float)), *out = calloc(DIM, sizeof(float));
	double *fed = calloc(DIM, sizeof(double));
	GW_CHECK(ef && g && out && fed, "out of memory");
	gw_test_rng rng = {.s = 7};
	for (unsigned r = 0; r < ROUNDS; r++) {
		for (uint32_t i = 0; i < DIM; i++) {
			g[i] = gw_test_uniform(&rng, -1.0f, 1.0f);
			fed[i] += g[i];
		}
		chunked_round(enc, views, g, out, r);
	}
	/* top-k sends the corrected value itself and zeroes its slot, so each
	 * element is off only by the float roundings of g + e and restores. */
	const float *e = gw_ef_data(ef);
	for (uint32_t i = 0; i < DIM; i++) {
		double got = (double)out[i] + e[i];
		GW_CHECK(fabs(got - fed[i]) <= 1e-5 * (1.0 + fabs(fed[i])),
			 "element %u: delivered %g + buffer %g != fed %g", i, out[i], e[i],
			 fed[i]);
	}
	for (uint32_t c = 0; c * CHUNK < DIM; c++)
		gw_ef_free(views[c]);
	gw_ef_free(ef);
	gw_encoder_free(enc);
	free(g);
	free(out);
	free(fed);
}

GW_TEST_MAIN("ef_view", 0,
	     cmocka_unit_test(test_view_bounds),
	     cmocka_unit_test(test_chunked_topk_conserves))
