/* hq's own properties (wire-format §4.11): the rotation, the shared scale,
 * the integer sum of frames and its sum frame, held to a model written
 * here from the spec, bit for bit. */
#include "gw_test.h"

#include <float.h>
#include <math.h>

#include "gw_cpu.h"
#include "hq_model.h"

static float *gradient(uint32_t n, uint64_t seed, float spread)
{
	float *g = malloc(n * sizeof(float));
	GW_CHECK(g, "out of memory");
	gw_test_rng r = {seed};
	for (uint32_t i = 0; i < n; i++)
		g[i] = gw_test_uniform(&r, -1.0f, 1.0f) * (i % 97 == 3 ? spread : 1.0f);
	return g;
}

/* One frame of g[0..n) by a fresh hq encoder (params), shared scale and
 * seed when scale >= 0; feedback into e (NULL: none). Its length. */
static int encode(const char *params, const float *g, uint32_t n, float scale, uint32_t seed,
		  float *e, uint8_t *buf, size_t room)
{
	gw_encoder *enc = gw_test_encoder_with(GW_CODEC_HQ, params);
	gw_ef *ef = gw_test_ef_set(enc, e, n);
	gw_tensor t = gw_test_dense_tensor(3, g, n);
	GW_OK_CALL(gw_encode_begin(enc, &t));
	if (scale >= 0.0f)
		GW_OK_CALL(gw_encoder_set_shared(enc, scale, seed));
	int len = gw_encode_next(enc, buf, room);
	GW_CHECK(len > 0, "hq: encode: %s", gw_error_name(len));
	uint8_t none[64];
	GW_EXPECT_RC(gw_encode_next(enc, none, sizeof(none)), 0, "hq: one frame");
	if (e)
		memcpy(e, gw_ef_data(ef), n * sizeof(float));
	gw_ef_free(ef);
	gw_encoder_free(enc);
	return len;
}

/* ---- the rotation ---- */

/* The rotation keeps norms to float precision, its inverse undoes it, and
 * the library's (every ISA) equals the model bit for bit: a frame encoded
 * with scale S and 8 bits decodes to the model's inverse rotation of its
 * codes. Workers with the same seed derive the same rotation; another
 * seed gives another. */
static void test_rotation(void **state)
{
	(void)state;
	static const uint32_t sizes[] = {1, 2, 5, 8, 63, 1000, 4096, 5003};
	for (size_t s = 0; s < GW_ARRAY_SIZE(sizes); s++) {
		uint32_t n = sizes[s];
		float *x = gradient(n, 11 + s, 40.0f), *y = malloc(n * sizeof(float));
		GW_CHECK(y, "out of memory");
		memcpy(y, x, n * sizeof(float));
		hq_model_rotate(y, n, 0xabcdu);
		double nx = 0, ny = 0, d = 0;
		for (uint32_t i = 0; i < n; i++) {
			nx += (double)x[i] * x[i];
			ny += (double)y[i] * y[i];
		}
		GW_CHECK(fabs(sqrt(ny) - sqrt(nx)) <= 1e-6 * sqrt(nx), "n %u: norm %g rotated to %g",
			 n, sqrt(nx), sqrt(ny));
		hq_model_unrotate(y, n, 0xabcdu);
		for (uint32_t i = 0; i < n; i++)
			d = fmax(d, fabs((double)y[i] - x[i]));
		GW_CHECK(d <= 1e-5 * sqrt(nx / n) * 40, "n %u: inverse off by %g", n, d);
		free(x);
		free(y);
	}
	/* The library's rotation, through frames, on every ISA. */
	uint32_t n = 5003;
	float *g = gradient(n, 5, 30.0f);
	uint8_t *ref = malloc(GW_FRAME_MAX), *buf = malloc(GW_FRAME_MAX);
	float *out = calloc(n, sizeof(float)), *want = malloc(n * sizeof(float));
	int32_t *codes = calloc(n, sizeof(int32_t));
	GW_CHECK(ref && buf && out && want && codes, "out of memory");
	int rlen = 0;
	for (int isa = 0; isa <= gw_cpu_best_isa(); isa++) {
		GW_OK_CALL(gw_cpu_force_isa(isa));
		int len = encode("bits=8", g, n, 2.5f, 77, NULL, buf, GW_FRAME_MAX);
		if (!isa) {
			memcpy(ref, buf, (size_t)len);
			rlen = len;
		}
		GW_CHECK(len == rlen && !memcmp(ref, buf, (size_t)len),
			 "%s: the frame differs from the scalar code's", gw_cpu_isa_name(isa));
		memset(out, 0, n * sizeof(float));
		GW_EXPECT_RC(gw_decode(buf, (size_t)len, out, n), (int)n, "decode");
		memset(codes, 0, n * sizeof(int32_t));
		GW_EXPECT_RC(gw_sum_add(buf, (size_t)len, codes, 0, n, NULL), (int)n, "sum");
		float step = 2.5f / 127.0f;
		for (uint32_t i = 0; i < n; i++)
			want[i] = (float)codes[i] * step;
		hq_model_unrotate(want, n, 77);
		for (uint32_t i = 0; i < n; i++)
			GW_CHECK(gw_test_bits(out[i]) == gw_test_bits(0.0f + want[i]),
				 "%s: element %u decoded %a, model %a", gw_cpu_isa_name(isa), i,
				 (double)out[i], (double)want[i]);
	}
	gw_cpu_force_isa(-1);
	/* Same seed, same frame; another seed, other codes. */
	int a = encode("", g, n, 2.0f, 9, NULL, buf, GW_FRAME_MAX);
	int b = encode("", g, n, 2.0f, 9, NULL, ref, GW_FRAME_MAX);
	GW_CHECK(a == b && !memcmp(buf, ref, (size_t)a), "seed 9 twice: frames differ");
	b = encode("", g, n, 2.0f, 10, NULL, ref, GW_FRAME_MAX);
	GW_CHECK(memcmp(buf + GW_FRAME_HDR_LEN + 20, ref + GW_FRAME_HDR_LEN + 20,
			(size_t)a - GW_FRAME_HDR_LEN - 20),
		 "seeds 9 and 10: the same codes");
	GW_FREE_ALL(g, ref, buf, out, want, codes);
}

/* ---- a worker's frame ---- */

/* The encoder's codes and error buffer are the model's: c = g + e, the
 * rotation, rne(clip(y Q / S)), e = c - decoded; on a scale shared, the
 * frame's next is max |y| and its scale S. */
static void test_encode_model(void **state)
{
	(void)state;
	static const char *const params[] = {"bits=2", "bits=4", "bits=5,rotate=0", "bits=8"};
	uint32_t n = 3000;
	for (size_t p = 0; p < GW_ARRAY_SIZE(params); p++) {
		unsigned bits = p == 0 ? 2 : p == 1 ? 4 : p == 2 ? 5 : 8;
		int rot = p != 2;
		float Q = (float)((1u << (bits - 1)) - 1);
		float *g = gradient(n, 3 + p, 8.0f), *e = gradient(n, 50 + p, 0.5f);
		float *e0 = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float));
		float *c = malloc(n * sizeof(float));
		uint8_t *buf = malloc(GW_FRAME_MAX);
		int32_t *codes = calloc(n, sizeof(int32_t));
		GW_CHECK(e0 && y && c && buf && codes, "out of memory");
		memcpy(e0, e, n * sizeof(float));
		float S = 0.9f;   /* below the max: some values clip */
		int len = encode(params[p], g, n, S, 1234, e, buf, GW_FRAME_MAX);
		gw_sum_info si;
		GW_OK_CALL(gw_sum_info_of(buf, (size_t)len, &si));
		GW_EXPECT_RC(gw_sum_add(buf, (size_t)len, codes, 0, n, NULL), (int)n, "codes");
		for (uint32_t i = 0; i < n; i++)
			c[i] = g[i] + e0[i];
		memcpy(y, c, n * sizeof(float));
		if (rot)
			hq_model_rotate(y, n, 1234);
		float mx = 0;
		for (uint32_t i = 0; i < n; i++)
			mx = fmaxf(mx, fabsf(y[i]));
		GW_CHECK(gw_test_bits(si.next) == gw_test_bits(mx) && si.scale == S &&
			 si.bits == bits && si.rotated == rot && si.seed == (rot ? 1234u : 0u),
			 "%s: params %g %g %u %u %u, model next %g", params[p], (double)si.next,
			 (double)si.scale, si.bits, si.rotated, si.seed, (double)mx);
		float inv = Q / S, step = S / Q;
		int clipped = 0;
		for (uint32_t i = 0; i < n; i++) {
			float x = y[i] * inv;
			clipped += fabsf(x) > Q;
			x = x > Q ? Q : x < -Q ? -Q : x;
			float r = (x + 0x1.8p23f) - 0x1.8p23f;
			GW_CHECK((float)codes[i] == r, "%s: code %u is %d, model %g", params[p], i,
				 codes[i], (double)r);
			y[i] = r * step;
		}
		GW_CHECK(clipped > 0, "%s: nothing clipped at scale %g", params[p], (double)S);
		if (rot)
			hq_model_unrotate(y, n, 1234);
		for (uint32_t i = 0; i < n; i++)
			GW_CHECK(gw_test_bits(e[i]) == gw_test_bits(c[i] - y[i]),
				 "%s: e[%u] = %a, model %a", params[p], i, (double)e[i],
				 (double)(c[i] - y[i]));
		GW_FREE_ALL(g, e, e0, y, c, buf, codes);
	}
}

/* Scale 0 (a chunk's first round): every code 0, and everything stays in
 * the error buffer exactly, while next names the range. */
static void test_scale_zero_keeps_all(void **state)
{
	(void)state;
	uint32_t n = 2000;
	float *g = gradient(n, 8, 3.0f), *e = calloc(n, sizeof(float));
	uint8_t *buf = malloc(GW_FRAME_MAX);
	int32_t *codes = calloc(n, sizeof(int32_t));
	GW_CHECK(e && buf && codes, "out of memory");
	int len = encode("", g, n, 0.0f, 5, e, buf, GW_FRAME_MAX);
	GW_EXPECT_RC(gw_sum_add(buf, (size_t)len, codes, 0, n, NULL), (int)n, "codes");
	gw_sum_info si;
	GW_OK_CALL(gw_sum_info_of(buf, (size_t)len, &si));
	GW_CHECK(si.scale == 0.0f && si.next > 0.0f, "scale %g next %g", (double)si.scale,
		 (double)si.next);
	for (uint32_t i = 0; i < n; i++) {
		GW_CHECK(codes[i] == 0, "code %u: %d", i, codes[i]);
		GW_CHECK(gw_test_bits(e[i]) == gw_test_bits(g[i]), "e[%u] %a, g %a", i,
			 (double)e[i], (double)g[i]);
	}
	GW_FREE_ALL(g, e, buf, codes);
}

/* A scale near FLT_MAX (§4.11.5): Q's code times the step rounds to Inf,
 * and the error buffer entry that would hold c - Inf restarts at 0, on
 * the unrotated path (fused) as on the rotated one. */
static void test_huge_scale_restarts_e(void **state)
{
	(void)state;
	uint32_t n = 600;
	float *g = malloc(n * sizeof(float)), *e = calloc(n, sizeof(float));
	uint8_t *buf = malloc(GW_FRAME_MAX);
	GW_CHECK(g && e && buf, "out of memory");
	static const char *const params[] = {
		"bits=8,rotate=0", "bits=8,rotate=0,rounding=stochastic", "bits=8"};
	for (size_t p = 0; p < GW_ARRAY_SIZE(params); p++) {
		for (uint32_t i = 0; i < n; i++) {
			g[i] = i % 2 ? FLT_MAX : -FLT_MAX;
			e[i] = 0.0f;
		}
		encode(params[p], g, n, FLT_MAX, 7, e, buf, GW_FRAME_MAX);
		uint32_t zeros = 0;
		for (uint32_t i = 0; i < n; i++) {
			GW_CHECK(isfinite(e[i]), "%s: e[%u] = %a", params[p], i, (double)e[i]);
			zeros += e[i] == 0.0f;
		}
		GW_CHECK(p == 2 || zeros == n, "%s: %u of %u entries restarted", params[p], zeros, n);
	}
	GW_FREE_ALL(g, e, buf);
}

/* ---- sums ---- */

/* W = 2..8 workers, every width: gw_sum_add of their frames is the sum of
 * their codes exactly, the sum frame holds it in the fewest bits, and it
 * decodes to the model's inverse rotation of sum * S / Q bit for bit. */
static void test_sum_exact(void **state)
{
	(void)state;
	uint32_t n = 1500;
	uint8_t *buf = malloc(GW_FRAME_MAX), *res = malloc(GW_FRAME_MAX);
	int32_t *acc = malloc(n * sizeof(int32_t)), *one = malloc(n * sizeof(int32_t));
	int32_t *want = malloc(n * sizeof(int32_t));
	float *out = malloc(n * sizeof(float)), *model = malloc(n * sizeof(float));
	GW_CHECK(buf && res && acc && one && want && out && model, "out of memory");
	for (unsigned bits = 2; bits <= 8; bits++)
		for (unsigned W = 2; W <= 8; W++) {
			char params[32];
			snprintf(params, sizeof(params), "bits=%u", bits);
			float S = 1.5f, next = 0.0f;
			memset(acc, 0, n * sizeof(int32_t));
			memset(want, 0, n * sizeof(int32_t));
			for (unsigned w = 0; w < W; w++) {
				float *g = gradient(n, 100 * bits + w, 2.0f);
				int len = encode(params, g, n, S, 4242, NULL, buf, GW_FRAME_MAX);
				gw_sum_info si;
				GW_EXPECT_RC(gw_sum_add(buf, (size_t)len, acc, 0, n, &si), (int)n,
					     "bits %u W %u: worker %u", bits, W, w);
				next = fmaxf(next, si.next);
				memset(one, 0, n * sizeof(int32_t));
				GW_EXPECT_RC(gw_sum_add(buf, (size_t)len, one, 0, n, NULL), (int)n, "one");
				for (uint32_t i = 0; i < n; i++)
					want[i] += one[i];
				free(g);
			}
			uint32_t m = 0;
			for (uint32_t i = 0; i < n; i++) {
				GW_CHECK(acc[i] == want[i], "bits %u W %u: sum %u is %d, codes add to "
					 "%d", bits, W, i, acc[i], want[i]);
				m = GW_MAX(m, (uint32_t)abs(acc[i]));
			}
			gw_sum_info si = {.scale = S, .next = next, .seed = 4242, .contributors = W,
					  .bits = (uint8_t)bits, .rotated = 1};
			int len = gw_sum_encode(res, GW_FRAME_MAX, 3, 0, acc, n, &si);
			GW_CHECK(len > 0, "gw_sum_encode: %s", gw_error_name(len));
			GW_CHECK(len <= gw_sum_frame_max(bits, W, n), "sum frame %d > max %d", len,
				 gw_sum_frame_max(bits, W, n));
			gw_sum_info got;
			GW_OK_CALL(gw_sum_info_of(res, (size_t)len, &got));
			unsigned w = 2;
			while (m > (1u << (w - 1)) - 1)
				w++;
			GW_CHECK(got.width == w && got.contributors == W && got.next == next,
				 "bits %u W %u: width %u (want %u), contributors %u", bits, W,
				 got.width, w, got.contributors);
			memset(out, 0, n * sizeof(float));
			GW_EXPECT_RC(gw_decode(res, (size_t)len, out, n), (int)n, "decode the sum");
			float step = S / (float)((1u << (bits - 1)) - 1);
			for (uint32_t i = 0; i < n; i++)
				model[i] = (float)acc[i] * step;
			hq_model_unrotate(model, n, 4242);
			for (uint32_t i = 0; i < n; i++)
				GW_CHECK(gw_test_bits(out[i]) == gw_test_bits(0.0f + model[i]),
					 "bits %u W %u: element %u decoded %a, model %a", bits, W, i,
					 (double)out[i], (double)model[i]);
		}
	GW_FREE_ALL(buf, res, acc, one, want, out, model);
}

/* Refusals that name what is wrong. */
static void test_refusals(void **state)
{
	(void)state;
	gw_encoder *enc = gw_test_encoder(GW_CODEC_HQ);
	GW_EXPECT_RC(gw_encoder_set_shared(enc, NAN, 1), GW_EINVAL, "scale NaN");
	GW_CHECK(strstr(gw_error_detail(), "scale"), "detail: %s", gw_error_detail());
	GW_EXPECT_RC(gw_encoder_set_shared(enc, -1.0f, 1), GW_EINVAL, "scale -1");
	GW_EXPECT_RC(gw_encoder_set_shared(enc, INFINITY, 1), GW_EINVAL, "scale Inf");
	gw_encoder_free(enc);
	enc = gw_test_encoder(GW_CODEC_INT8);
	GW_EXPECT_RC(gw_encoder_set_shared(enc, 1.0f, 1), GW_EUNSUPPORTED, "int8");
	GW_CHECK(strstr(gw_error_detail(), "int8"), "detail: %s", gw_error_detail());
	gw_encoder_free(enc);
	GW_CHECK(gw_encoder_from_string("hq:bits=9") == NULL &&
		 strstr(gw_error_detail(), "bits"), "bits=9: %s", gw_error_detail());
	GW_CHECK(gw_encoder_from_string("hq:rounding=up") == NULL &&
		 strstr(gw_error_detail(), "nearest|stochastic"), "rounding=up: %s",
		 gw_error_detail());
	/* Another codec's frame is not summable. */
	float v[10] = {1, 2, 3};
	gw_test_frames fr;
	gw_tensor t = gw_test_dense_tensor(1, v, 10);
	gw_encoder *i8 = gw_test_encoder(GW_CODEC_INT8);
	GW_OK_CALL(gw_test_encode_all(i8, &t, 1000, &fr));
	int32_t acc[10] = {0};
	GW_EXPECT_RC(gw_sum_add(fr.f[0].data, fr.f[0].len, acc, 0, 10, NULL), GW_EUNSUPPORTED,
		     "int8 frame");
	gw_sum_info si;
	GW_EXPECT_RC(gw_sum_info_of(fr.f[0].data, fr.f[0].len, &si), GW_EUNSUPPORTED, "info");
	gw_test_frames_free(&fr);
	gw_encoder_free(i8);
	/* A frame outside the window adds nothing. */
	uint8_t buf[256];
	int len = encode("", v, 10, 1.0f, 1, NULL, buf, sizeof(buf));
	GW_EXPECT_RC(gw_sum_add(buf, (size_t)len, acc, 1, 10, NULL), GW_ERANGE, "window");
	GW_EXPECT_RC(gw_sum_add(buf, (size_t)len, acc, 0, 9, NULL), GW_ERANGE, "window");
	for (int i = 0; i < 10; i++)
		GW_CHECK(acc[i] == 0, "acc[%d] = %d", i, acc[i]);
}

/* Stochastic rounding is unbiased: over many frames (each its own draws)
 * of one value between two levels, the mean decoded value is the value. */
static void test_stochastic_unbiased(void **state)
{
	(void)state;
	enum { N = 64, FRAMES = 400 };
	float g[N], out[N] = {0};
	for (int i = 0; i < N; i++)
		g[i] = 0.3f + 0.001f * (float)i;   /* between levels 0 and 1 of bits=2 */
	gw_encoder *enc = gw_test_encoder_with(GW_CODEC_HQ, "bits=2,rotate=0,rounding=stochastic");
	uint8_t buf[256];
	for (int f = 0; f < FRAMES; f++) {
		gw_tensor t = gw_test_dense_tensor(1, g, N);
		GW_OK_CALL(gw_encode_begin(enc, &t));
		GW_OK_CALL(gw_encoder_set_shared(enc, 1.0f, 0));
		int len = gw_encode_next(enc, buf, sizeof(buf));
		GW_CHECK(len > 0, "encode");
		GW_EXPECT_RC(gw_decode(buf, (size_t)len, out, N), N, "decode");
		GW_EXPECT_RC(gw_encode_next(enc, buf, sizeof(buf)), 0, "one frame");
	}
	double mean = 0;
	for (int i = 0; i < N; i++)
		mean += out[i] / FRAMES - g[i];
	mean /= N;
	/* sd of one draw <= 0.5, of the mean of N * FRAMES: 0.5 / 160 */
	GW_CHECK(fabs(mean) < 0.02, "mean bias %g", mean);
	gw_encoder_free(enc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rotation),
		cmocka_unit_test(test_encode_model),
		cmocka_unit_test(test_scale_zero_keeps_all),
	     cmocka_unit_test(test_huge_scale_restarts_e),
		cmocka_unit_test(test_sum_exact),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_stochastic_unbiased),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
