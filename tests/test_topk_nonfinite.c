/* topk's NaN/Inf policy: non-finite corrected values rank above every finite one (ties by index), are sent as they are (NaN stays NaN, +-Inf stays +-Inf), and their error-buffer slot restarts at 0 whether or not they fit into the k, so no NaN or Inf lingers in the buffer; the finite rest of the selection is unaffected. */
#include "gw_test.h"

#include <math.h>

#define N 100

static void test_nonfinite_first(void **state)
{
	(void)state;
	float v[N];
	for (int i = 0; i < N; i++)
		v[i] = (float)(i + 1);            /* largest finite: 100 at 99 */
	v[10] = NAN;
	v[20] = -INFINITY;
	v[30] = INFINITY;
	gw_encoder *enc = gw_test_encoder(GW_CODEC_TOPK);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_FRACTION, 0.05));   /* k 5 */
	gw_ef *ef = gw_ef_create(N);
	GW_CHECK(ef, "gw_ef_create");
	GW_OK_CALL(gw_encoder_set_ef(enc, ef));
	gw_tensor t = gw_test_dense_tensor(1, v, N);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, 65535, &fr));
	float out[N];
	gw_test_fill(out, N, 0.0f);
	gw_test_decode_all(&fr, out, N);
	const float *e = gw_ef_data(ef);
	GW_CHECK(isnan(out[10]) && out[20] == -INFINITY && out[30] == INFINITY,
		 "non-finite values sent as %a %a %a", (double)out[10],
		 (double)out[20], (double)out[30]);
	GW_CHECK(out[99] == 100.0f && out[98] == 99.0f, "then the largest finite");
	for (int i = 0; i < N; i++) {
		bool s = i == 10 || i == 20 || i == 30 || i >= 98;
		if (!s)
			GW_CHECK(out[i] == 0.0f && e[i] == v[i],
				 "unsent %d: decoded %a, e %a", i, (double)out[i],
				 (double)e[i]);
		else
			GW_CHECK(gw_test_bits(e[i]) == 0, "sent %d: e %a", i,
				 (double)e[i]);
	}
	gw_test_frames_free(&fr);
	gw_ef_free(ef);
	gw_encoder_free(enc);
}

/* More non-finite values than k: the first k (by index) are sent, and the
 * buffer of every non-finite one is 0 afterwards. */
static void test_more_nonfinite_than_k(void **state)
{
	(void)state;
	float v[N];
	for (int i = 0; i < N; i++)
		v[i] = i % 10 == 3 ? NAN : (i % 10 == 7 ? INFINITY : 1.0f);
	gw_encoder *enc = gw_test_encoder(GW_CODEC_TOPK);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_FRACTION, 0.04));   /* k 4 */
	gw_ef *ef = gw_ef_create(N);
	GW_CHECK(ef, "gw_ef_create");
	GW_OK_CALL(gw_encoder_set_ef(enc, ef));
	gw_tensor t = gw_test_dense_tensor(1, v, N);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, 65535, &fr));
	float out[N];
	gw_test_fill(out, N, 0.0f);
	gw_test_decode_all(&fr, out, N);
	const float *e = gw_ef_data(ef);
	for (int i = 0; i < N; i++) {
		bool bad = !isfinite(v[i]);
		bool s = i == 3 || i == 7 || i == 13 || i == 17;
		GW_CHECK(s ? (isnan(v[i]) ? isnan(out[i]) : out[i] == v[i])
			   : out[i] == 0.0f,
			 "element %d decoded %a", i, (double)out[i]);
		GW_CHECK(bad ? gw_test_bits(e[i]) == 0 : e[i] == 1.0f,
			 "element %d: e %a", i, (double)e[i]);
	}
	gw_test_frames_free(&fr);
	gw_ef_free(ef);
	gw_encoder_free(enc);
}

/* A finite input whose correction overflows to Inf behaves the same. */
static void test_overflowing_correction(void **state)
{
	(void)state;
	float v[4] = {0x1p127f, 1, -1, 2};
	gw_encoder *enc = gw_test_encoder(GW_CODEC_TOPK);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_FRACTION, 0.25));
	gw_ef *ef = gw_ef_create(4);
	GW_CHECK(ef, "gw_ef_create");
	GW_OK_CALL(gw_encoder_set_ef(enc, ef));
	gw_ef_data(ef)[0] = 0x1p127f;
	gw_tensor t = gw_test_dense_tensor(4, v, 4);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, 64, &fr));
	float out[4] = {0};
	gw_test_decode_all(&fr, out, 4);
	GW_CHECK(out[0] == INFINITY && out[1] == 0 && out[2] == 0 && out[3] == 0,
		 "decoded %a %a %a %a", (double)out[0], (double)out[1],
		 (double)out[2], (double)out[3]);
	GW_CHECK(gw_ef_data(ef)[0] == 0.0f && gw_ef_data(ef)[3] == 2.0f, "e");
	gw_test_frames_free(&fr);
	gw_ef_free(ef);
	gw_encoder_free(enc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nonfinite_first),
		cmocka_unit_test(test_more_nonfinite_than_k),
		cmocka_unit_test(test_overflowing_correction),
	};
	return cmocka_run_group_tests_name("topk_nonfinite", tests, NULL, NULL);
}
