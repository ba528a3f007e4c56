/* Chunk slices (an aggregator's view of a tensor): a slice encoded with
 * gw_tensor.base names the elements it really covers, and decodes the same
 * into the whole tensor (gw_decode) as into a window of it
 * (gw_decode_window); frames outside the window are refused without
 * writing; bases the frame format cannot express are refused. */
#include "gw_test.h"

#define DIM 1000u
#define BASE 400u
#define LEN 200u

static void fill(float *x, unsigned n, uint32_t seed)
{
	for (unsigned i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		x[i] = (float)((int)(seed >> 8) % 2001 - 1000) * 1e-3f;
	}
}

/* Encodes x[0..LEN) as elements [BASE, BASE + LEN) with codec id. */
static int encode_slice(int id, const float *x, uint8_t *buf, size_t cap)
{
	gw_encoder *enc = gw_test_encoder(id);
	gw_tensor t = {.id = 3, .dim = LEN, .values = x, .base = BASE};
	GW_OK_CALL(gw_encode_begin(enc, &t));
	int n = gw_encode_next(enc, buf, cap);
	GW_CHECK(n > 0, "%s: no frame for a %u-element slice", gw_codec_name(id), LEN);
	uint8_t none[GW_BUDGET_MIN];
	GW_CHECK(gw_encode_next(enc, none, sizeof(none)) == 0,
		 "%s: a slice of %u elements should fit one 64 KB frame",
		 gw_codec_name(id), LEN);
	gw_encoder_free(enc);
	return n;
}

static void test_slice_names_its_range(void **state)
{
	(void)state;
	static const int ids[] = {GW_CODEC_RAW, GW_CODEC_BF16, GW_CODEC_INT8,
				  GW_CODEC_3LC, GW_CODEC_TERNGRAD, GW_CODEC_ONEBIT};
	static uint8_t buf[GW_FRAME_MAX];
	float x[LEN];
	fill(x, LEN, 7);
	for (size_t c = 0; c < GW_ARRAY_SIZE(ids); c++) {
		int n = encode_slice(ids[c], x, buf, sizeof(buf));
		gw_frame_info fi;
		GW_OK_CALL(gw_frame_verify(buf, (size_t)n, &fi));
		GW_CHECK(fi.start == BASE && fi.count == LEN, "%s: frame says [%llu, +%u), "
			 "slice is [%u, +%u)", gw_codec_name(ids[c]),
			 (unsigned long long)fi.start, fi.count, BASE, LEN);
		float whole[DIM] = {0}, win[LEN] = {0};
		GW_OK_CALL(gw_decode(buf, (size_t)n, whole, DIM));
		GW_OK_CALL(gw_decode_window(buf, (size_t)n, win, BASE, LEN));
		GW_CHECK(!memcmp(whole + BASE, win, sizeof(win)), "%s: window decode "
			 "differs from whole-tensor decode", gw_codec_name(ids[c]));
		for (unsigned i = 0; i < DIM; i++)
			if (i < BASE || i >= BASE + LEN)
				GW_CHECK(whole[i] == 0.0f, "%s: element %u outside the "
					 "slice was written", gw_codec_name(ids[c]), i);
		if (ids[c] == GW_CODEC_RAW)
			GW_CHECK(!memcmp(win, x, sizeof(x)), "raw slice not bit-exact");
	}
}

static void test_window_refuses_outside(void **state)
{
	(void)state;
	static uint8_t buf[GW_FRAME_MAX];
	float x[LEN];
	fill(x, LEN, 9);
	int n = encode_slice(GW_CODEC_RAW, x, buf, sizeof(buf));
	/* Windows that miss part of [BASE, BASE + LEN). */
	static const struct { uint64_t base, len; } bad[] = {
		{BASE + 1, LEN}, {BASE, LEN - 1}, {0, BASE}, {BASE + LEN, 100},
		{0, BASE + LEN - 1}, {UINT64_MAX - 10, 10},
	};
	for (size_t i = 0; i < GW_ARRAY_SIZE(bad); i++) {
		float win[DIM + 1];
		for (unsigned j = 0; j <= DIM; j++)
			win[j] = 42.0f;
		uint64_t len = bad[i].len < DIM ? bad[i].len : DIM;
		int rc = gw_decode_window(buf, (size_t)n, win, bad[i].base, len);
		GW_CHECK(rc == GW_ERANGE, "window [%llu, +%llu): expected GW_ERANGE, got %s",
			 (unsigned long long)bad[i].base, (unsigned long long)len,
			 gw_error_name(rc));
		for (unsigned j = 0; j <= DIM; j++)
			GW_CHECK(win[j] == 42.0f, "refused window was written at %u", j);
	}
	/* The exact window and a larger one are fine. */
	float win[DIM] = {0};
	GW_CHECK(gw_decode_window(buf, (size_t)n, win, BASE - 100, LEN + 300) == (int)LEN,
		 "a window around the frame must take it");
	GW_CHECK(!memcmp(win + 100, x, sizeof(x)), "wrong place in a larger window");
}

static void test_bad_bases_refused(void **state)
{
	(void)state;
	float x[LEN];
	fill(x, LEN, 11);
	/* Group codecs: frames start on multiples of 5. */
	int groups[] = {GW_CODEC_3LC, GW_CODEC_TERNGRAD};
	for (size_t c = 0; c < GW_ARRAY_SIZE(groups); c++) {
		gw_encoder *enc = gw_test_encoder(groups[c]);
		gw_tensor t = {.dim = LEN, .values = x, .base = 402};
		int rc = gw_encode_begin(enc, &t);
		GW_CHECK(rc == GW_EINVAL, "%s: base 402 must be refused, got %s",
			 gw_codec_name(groups[c]), gw_error_name(rc));
		gw_encoder_free(enc);
	}
	/* A range that would wrap, and a sparse tensor with a base. */
	gw_encoder *enc = gw_test_encoder(GW_CODEC_RAW);
	gw_tensor t = {.dim = LEN, .values = x, .base = UINT64_MAX - 5};
	GW_CHECK(gw_encode_begin(enc, &t) == GW_EINVAL, "wrapping base accepted");
	uint32_t keys[2] = {1, 5};
	gw_tensor s = {.dim = 10, .values = x, .keys = keys, .nnz = 2, .key_bits = 32,
		       .base = 5};
	GW_CHECK(gw_encode_begin(enc, &s) == GW_EINVAL, "sparse tensor with a base accepted");
	gw_encoder_free(enc);
	/* A sparse frame decodes only into a window at 0. */
	static uint8_t buf[GW_FRAME_MAX];
	enc = gw_test_encoder(GW_CODEC_RAW);
	s.base = 0;
	GW_OK_CALL(gw_encode_begin(enc, &s));
	int n = gw_encode_next(enc, buf, sizeof(buf));
	GW_CHECK(n > 0, "no sparse frame");
	float out[10] = {0};
	GW_CHECK(gw_decode_window(buf, (size_t)n, out, 1, 9) == GW_EUNSUPPORTED,
		 "sparse frame into a shifted window must be refused");
	GW_CHECK(gw_decode_window(buf, (size_t)n, out, 0, 10) == 2, "sparse window at 0");
	gw_encoder_free(enc);
}

GW_TEST_MAIN("decode_window", 0,
	     cmocka_unit_test(test_slice_names_its_range),
	     cmocka_unit_test(test_window_refuses_outside),
	     cmocka_unit_test(test_bad_bases_refused))
