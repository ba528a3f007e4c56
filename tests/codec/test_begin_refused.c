/* A refused gw_encode_begin() changes nothing: the error buffer keeps its
 * exact bits and the encoder stays idle (regression: terngrad once folded
 * the gradient into the buffer before refusing max_frame_elems = 2). */
#include "gw_test.h"

static void test_refused_begin_leaves_state(void **state)
{
	(void)state;
	enum { N = 100 };
	float g[N], before[N];
	int ids[GW_TEST_MAX_CODECS], nc = gw_test_codecs(ids), refused = 0;
	for (int i = 0; i < N; i++)
		g[i] = 0.25f * (float)(i % 7) - 0.7f;
	for (int c = 0; c < nc; c++) {
		if (!gw_test_codec_accepts(ids[c], 0))
			continue;
		gw_encoder *enc = gw_test_encoder(ids[c]);
		gw_ef *ef = gw_ef_create(N);
		for (int i = 0; i < N; i++)
			gw_ef_data(ef)[i] = before[i] = 0.001f * (float)i;
		GW_OK_CALL(gw_encoder_set_ef(enc, ef));
		GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_MAX_FRAME_ELEMS, 2));
		gw_tensor t = gw_test_dense_tensor(1, g, N);
		int rc = gw_encode_begin(enc, &t);
		if (rc < 0) {
			refused++;
			GW_CHECK(memcmp(before, gw_ef_data(ef), sizeof before) == 0,
				 "%s: refused begin (%s) changed the error buffer",
				 gw_codec_name(ids[c]), gw_error_name(rc));
			uint8_t buf[256];
			GW_EXPECT_RC(gw_encode_next(enc, buf, sizeof buf), GW_ESTATE,
				     "%s: encoder active after a refused begin",
				     gw_codec_name(ids[c]));
		} else {
			GW_OK_CALL(gw_encode_abandon(enc));
		}
		gw_ef_free(ef);
		gw_encoder_free(enc);
	}
	print_message("  %d codecs refuse max_frame_elems = 2 on dense input\n", refused);
}

GW_TEST_MAIN("begin_refused", 0,
	     cmocka_unit_test(test_refused_begin_leaves_state))
