/* onebit's NaN/Inf policy: a NaN or +-Inf corrected value poisons only its own frame (both levels sent as NaN, every value of the frame decodes to NaN) and the error buffer of that frame's range restarts at 0, so the next round is clean; other frames and their feedback are untouched by it. */
#include "gw_test.h"

#include <math.h>

#define N 48

static void check_poison(float bad, size_t at)
{
	float v[N], clean[N];
	for (int i = 0; i < N; i++)
		clean[i] = v[i] = (float)((i * 5) % 11 - 5) * 0.5f;
	v[at] = bad;
	gw_encoder *enc = gw_test_encoder(GW_CODEC_ONEBIT);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_MAX_FRAME_ELEMS, 16));
	gw_ef *ef = gw_ef_create(N);
	GW_CHECK(ef, "gw_ef_create");
	GW_OK_CALL(gw_encoder_set_ef(enc, ef));
	float *e = gw_ef_data(ef);
	for (int i = 0; i < N; i++)
		e[i] = 0.125f;

	gw_tensor t = gw_test_dense_tensor(4, v, N);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, 65535, &fr));
	GW_CHECK(fr.n == 3, "%zu frames of 16", fr.n);
	float out[N];
	gw_test_fill(out, N, 0.0f);
	gw_test_decode_all(&fr, out, N);
	size_t lo = at / 16 * 16;
	for (size_t i = 0; i < N; i++) {
		bool in = i >= lo && i < lo + 16;
		if (in) {
			GW_CHECK(isnan(out[i]), "%a at %zu: element %zu decoded to %a",
				 (double)bad, at, i, (double)out[i]);
			GW_CHECK(gw_test_bits(e[i]) == 0, "%a at %zu: e[%zu] = %a, not 0",
				 (double)bad, at, i, (double)e[i]);
		} else {
			GW_CHECK(isfinite(out[i]) && isfinite(e[i]) &&
					 e[i] == v[i] + 0.125f - out[i],
				 "%a at %zu: clean element %zu: decoded %a, e %a",
				 (double)bad, at, i, (double)out[i], (double)e[i]);
		}
	}
	gw_test_frames_free(&fr);

	/* next round, clean input: everything finite again */
	t = gw_test_dense_tensor(4, clean, N);
	GW_OK_CALL(gw_test_encode_all(enc, &t, 65535, &fr));
	gw_test_fill(out, N, 0.0f);
	gw_test_decode_all(&fr, out, N);
	for (size_t i = 0; i < N; i++)
		GW_CHECK(isfinite(out[i]) && isfinite(e[i]),
			 "round after %a: element %zu: %a, e %a", (double)bad, i,
			 (double)out[i], (double)e[i]);
	gw_test_frames_free(&fr);
	gw_ef_free(ef);
	gw_encoder_free(enc);
}

static void test_nan(void **state)
{
	(void)state;
	check_poison(NAN, 0);
	check_poison(NAN, 20);
	check_poison(-NAN, 47);
}

static void test_inf(void **state)
{
	(void)state;
	check_poison(INFINITY, 33);
	check_poison(-INFINITY, 15);
}

/* Finite inputs whose sum with the buffer overflows to Inf poison too. */
static void test_overflowing_correction(void **state)
{
	(void)state;
	float v[4] = {0x1p127f, 1, -1, 2};
	gw_encoder *enc = gw_test_encoder(GW_CODEC_ONEBIT);
	gw_ef *ef = gw_ef_create(4);
	GW_CHECK(ef, "gw_ef_create");
	GW_OK_CALL(gw_encoder_set_ef(enc, ef));
	gw_ef_data(ef)[0] = 0x1p127f;
	gw_tensor t = gw_test_dense_tensor(4, v, 4);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, 64, &fr));
	float out[4] = {0};
	gw_test_decode_all(&fr, out, 4);
	for (int i = 0; i < 4; i++)
		GW_CHECK(isnan(out[i]) && gw_ef_data(ef)[i] == 0.0f,
			 "element %d: %a, e %a", i, (double)out[i],
			 (double)gw_ef_data(ef)[i]);
	gw_test_frames_free(&fr);
	gw_ef_free(ef);
	gw_encoder_free(enc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nan),
		cmocka_unit_test(test_inf),
		cmocka_unit_test(test_overflowing_correction),
	};
	return cmocka_run_group_tests_name("onebit_nonfinite", tests, NULL, NULL);
}
