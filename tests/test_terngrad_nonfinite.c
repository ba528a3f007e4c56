/* terngrad's NaN/Inf policy: a NaN or +-Inf input poisons only its own frame (scale sent as NaN, every value of the frame decodes to NaN); the scale of the other frames is the largest finite magnitude, so they decode as if the bad value were absent. */
#include "gw_test.h"

#include <math.h>

#define N 40

static void check_poison(float bad, size_t at)
{
	float v[N];
	for (int i = 0; i < N; i++)
		v[i] = (float)((i % 7) - 3) * 0.125f;   /* max |v| = 0.375 */
	v[at] = bad;
	gw_encoder *enc = gw_test_encoder(GW_CODEC_TERNGRAD);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_MAX_FRAME_ELEMS, 10));
	gw_tensor t = gw_test_dense_tensor(4, v, N);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, 65535, &fr));
	GW_CHECK(fr.n == 4, "%zu frames of 10", fr.n);
	float out[N];
	gw_test_fill(out, N, -0.0f);
	gw_test_decode_all(&fr, out, N);
	size_t lo = at / 10 * 10;
	for (size_t i = 0; i < N; i++) {
		if (i >= lo && i < lo + 10) {
			GW_CHECK(isnan(out[i]), "%a at %zu: element %zu of its frame "
				 "decoded to %a, not NaN", (double)bad, at, i,
				 (double)out[i]);
			continue;
		}
		GW_CHECK(out[i] == 0.0f || fabsf(out[i]) == 0.375f,
			 "%a at %zu: element %zu (%a) of a clean frame decoded to %a",
			 (double)bad, at, i, (double)v[i], (double)out[i]);
		if (fabsf(v[i]) == 0.375f)
			GW_CHECK(out[i] == v[i], "max element %zu decoded to %a", i,
				 (double)out[i]);
	}
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
}

static void test_nan(void **state)
{
	(void)state;
	check_poison(NAN, 0);
	check_poison(NAN, 17);
	check_poison(-NAN, 39);
}

static void test_inf(void **state)
{
	(void)state;
	check_poison(INFINITY, 25);
	check_poison(-INFINITY, 9);
}

static void test_all_nonfinite(void **state)
{
	(void)state;
	float v[7] = {NAN, INFINITY, -INFINITY, NAN, NAN, INFINITY, NAN};
	gw_encoder *enc = gw_test_encoder(GW_CODEC_TERNGRAD);
	gw_tensor t = gw_test_dense_tensor(4, v, 7);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, 64, &fr));
	float out[7] = {0};
	gw_test_decode_all(&fr, out, 7);
	for (int i = 0; i < 7; i++)
		GW_CHECK(isnan(out[i]), "element %d decoded to %a", i, (double)out[i]);
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nan),
		cmocka_unit_test(test_inf),
		cmocka_unit_test(test_all_nonfinite),
	};
	return cmocka_run_group_tests_name("terngrad_nonfinite", tests, NULL, NULL);
}
