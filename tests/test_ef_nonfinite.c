/* A NaN or Inf input reaches the receiver but never stays in an error
 * buffer: with generic feedback (raw, bf16, any unfused codec) the entries
 * of that frame restart at 0, so the next round decodes finite values. */
#include "gw_test.h"

#include <math.h>

static void run(int id, int sparse)
{
	enum { N = 64 };
	float g[N];
	uint32_t keys[N];
	for (int i = 0; i < N; i++) {
		g[i] = 0.01f * (float)(i - N / 2);
		keys[i] = 3u * (uint32_t)i;
	}
	uint64_t dim = sparse ? 3u * N : N;
	gw_encoder *enc = gw_test_encoder(id);
	gw_ef *ef = gw_ef_create(dim);
	GW_OK_CALL(gw_encoder_set_ef(enc, ef));
	gw_tensor t = sparse ? gw_test_sparse_tensor(1, dim, keys, 32, g, N)
			     : gw_test_dense_tensor(1, g, N);
	const char *name = gw_codec_name(id);
	for (int round = 0; round < 2; round++) {
		g[5] = round == 0 ? INFINITY : 0.5f;
		g[9] = round == 0 ? NAN : -0.5f;
		float *out = calloc(dim, sizeof(float));
		gw_test_frames fr;
		GW_OK_CALL(gw_test_encode_all(enc, &t, 256, &fr));
		gw_test_decode_all(&fr, out, dim);
		uint64_t k5 = sparse ? keys[5] : 5, k9 = sparse ? keys[9] : 9;
		if (round == 0) {
			GW_CHECK(isinf(out[k5]) || isnan(out[k5]), "%s: Inf did not reach "
				 "the receiver (got %g)", name, out[k5]);
			GW_CHECK(isnan(out[k9]), "%s: NaN did not reach the receiver", name);
		} else {
			for (uint64_t i = 0; i < dim; i++)
				GW_CHECK(isfinite(out[i]), "%s%s: round 2 element %llu "
					 "decodes to %g: the error buffer kept the poison",
					 name, sparse ? " sparse" : "", (unsigned long long)i, out[i]);
		}
		for (uint64_t i = 0; i < dim; i++)
			GW_CHECK(isfinite(gw_ef_data(ef)[i]), "%s: error buffer entry %llu "
				 "is %g after round %d", name, (unsigned long long)i,
				 gw_ef_data(ef)[i], round + 1);
		gw_test_frames_free(&fr);
		free(out);
	}
	gw_ef_free(ef);
	gw_encoder_free(enc);
}

static void test_generic_feedback_drops_poison(void **state)
{
	(void)state;
	run(GW_CODEC_RAW, 0);
	run(GW_CODEC_RAW, 1);
	run(GW_CODEC_BF16, 0);
	run(GW_CODEC_BF16, 1);
}

/* gw_ef_restore() of a poisoned frame (scale NaN) must not put NaN into the
 * buffer either: every lossy dense codec, one NaN in the tensor. */
static void test_restore_of_poisoned_frame(void **state)
{
	(void)state;
	enum { N = 200 };
	float g[N];
	for (int i = 0; i < N; i++)
		g[i] = 0.001f * (float)((i * 37) % 101 - 50);
	g[17] = NAN;
	int ids[GW_TEST_MAX_CODECS], nc = gw_test_codecs(ids);
	for (int c = 0; c < nc; c++) {
		if (!(gw_codec_caps(ids[c]) & GW_CODEC_LOSSY) || !gw_test_codec_accepts(ids[c], 0))
			continue;
		gw_encoder *enc = gw_test_encoder(ids[c]);
		gw_ef *ef = gw_ef_create(N);
		GW_OK_CALL(gw_encoder_set_ef(enc, ef));
		gw_tensor t = gw_test_dense_tensor(1, g, N);
		gw_test_frames fr;
		GW_OK_CALL(gw_test_encode_all(enc, &t, 128, &fr));
		for (size_t f = 0; f < fr.n; f++)   /* none delivered */
			GW_CHECK(gw_ef_restore(ef, fr.f[f].data, fr.f[f].len) >= 0,
				 "%s: restore refused frame %zu", gw_codec_name(ids[c]), f);
		for (int i = 0; i < N; i++)
			GW_CHECK(isfinite(gw_ef_data(ef)[i]), "%s: error buffer entry %d "
				 "is %g after restoring a poisoned tensor",
				 gw_codec_name(ids[c]), i, gw_ef_data(ef)[i]);
		gw_test_frames_free(&fr);
		gw_ef_free(ef);
		gw_encoder_free(enc);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_generic_feedback_drops_poison),
		cmocka_unit_test(test_restore_of_poisoned_frame),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
