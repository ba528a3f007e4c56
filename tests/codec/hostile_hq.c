/* hq's forged frames (wire-format §4.11.2): each field broken, resealed, so
 * only hq's own checks can refuse it, in gw_decode() and gw_sum_add()
 * alike, which then leave their output as it was. */
#include "gw_test.h"

#include <math.h>

#include "hostile_payloads.h"

#define P GW_FRAME_HDR_LEN
#define OUT 64

static const float vals[12] = {0.5f, -1.0f, 0.25f, 0.0f, -0.75f, 1.0f,
			       0.1f, -0.2f, 0.3f, -0.4f, 0.9f, -0.6f};

/* The twelve values as one frame with params, and its length. */
static uint8_t *frame12(const char *params, size_t *len)
{
	gw_encoder *enc = gw_test_encoder_with(GW_CODEC_HQ, params);
	gw_tensor t = gw_test_dense_tensor(1, vals, 12);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, 65535, &fr));
	GW_CHECK(fr.n == 1, "hq: %zu frames", fr.n);
	uint8_t *f = calloc(1, fr.f[0].len + 64);
	GW_CHECK(f, "out of memory");
	memcpy(f, fr.f[0].data, fr.f[0].len);
	*len = fr.f[0].len;
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
	return f;
}

/* Refused with want by gw_decode and by gw_sum_add, acc untouched. */
static void refused(uint8_t *f, size_t len, int want, const char *what)
{
	hostile_forged(f, len, OUT, 1, want, what);
	int32_t acc[OUT];
	for (int i = 0; i < OUT; i++)
		acc[i] = i - 7;
	GW_EXPECT_RC(gw_sum_add(f, len, acc, 0, OUT, NULL), want, "gw_sum_add: %s", what);
	for (int i = 0; i < OUT; i++)
		GW_CHECK(acc[i] == i - 7, "gw_sum_add: %s: acc[%d] changed", what, i);
}

typedef void (*forge_fn)(uint8_t *f);

static void f_reserved(uint8_t *f) { f[P + 3] = 1; }
static void f_flag(uint8_t *f) { f[P + 2] |= 0x8; }
static void f_bits1(uint8_t *f) { f[P] = 1; }
static void f_bits9(uint8_t *f) { f[P] = 9; }
static void f_width(uint8_t *f) { f[P + 1] = 5; }
static void f_contrib(uint8_t *f) { gw_test_st32(f + P + 4, 2); }
static void f_seed(uint8_t *f) { f[P + 2] &= (uint8_t)~0x1; }   /* unrotated, seed kept */
static void f_scale_nan(uint8_t *f) { gw_test_st32(f + P + 12, 0x7fc00000u); }
static void f_scale_neg(uint8_t *f) { gw_test_st32(f + P + 12, 0xbf800000u); }
static void f_scale_m0(uint8_t *f) { gw_test_st32(f + P + 12, 0x80000000u); }
static void f_scale_inf(uint8_t *f) { gw_test_st32(f + P + 12, 0x7f800000u); }
static void f_next_nan(uint8_t *f) { gw_test_st32(f + P + 16, 0xffc00000u); }
static void f_code_min(uint8_t *f) { f[P + 20] = (uint8_t)((f[P + 20] & 0xf0) | 0x8); }

void hostile_hq(int id)
{
	(void)id;
	static const struct {
		forge_fn forge;
		int want;
		const char *what;
	} cases[] = {
		{f_reserved, GW_ERESERVED, "reserved byte set"},
		{f_flag, GW_ERESERVED, "unknown flag"},
		{f_bits1, GW_ECORRUPT, "bits 1"},
		{f_bits9, GW_ECORRUPT, "bits 9"},
		{f_width, GW_ECORRUPT, "a worker's width other than its bits"},
		{f_contrib, GW_ECORRUPT, "a worker's frame of 2 contributors"},
		{f_seed, GW_ECORRUPT, "a seed without a rotation"},
		{f_scale_nan, GW_ECORRUPT, "scale NaN"},
		{f_scale_neg, GW_ECORRUPT, "scale -1"},
		{f_scale_m0, GW_ECORRUPT, "scale -0"},
		{f_scale_inf, GW_ECORRUPT, "scale Inf"},
		{f_next_nan, GW_ECORRUPT, "next NaN"},
		{f_code_min, GW_ECORRUPT, "code -8 of 4 bits"},
	};
	for (size_t c = 0; c < GW_ARRAY_SIZE(cases); c++) {
		size_t len;
		uint8_t *f = frame12("", &len);
		GW_CHECK(len == P + 20 + 6, "hq: frame of %zu bytes", len);
		hostile_forged(f, len, OUT, 1, 12, "valid frame");
		cases[c].forge(f);
		refused(f, len, cases[c].want, cases[c].what);
		free(f);
	}
	/* 3 bits: 36 bits of codes, 4 of padding, which must be zero. */
	size_t len;
	uint8_t *f = frame12("bits=3", &len);
	GW_CHECK(len == P + 20 + 5, "hq bits=3: frame of %zu bytes", len);
	f[len - 1] |= 0x80;
	refused(f, len, GW_ECORRUPT, "padding bit set");
	free(f);
	/* A sum frame whose codes exceed contributors times Q. */
	int32_t codes[12];
	for (int i = 0; i < 12; i++)
		codes[i] = (i % 2 ? -1 : 1) * (i + 3);   /* up to 14: two 4-bit workers */
	gw_sum_info si = {.scale = 1.0f, .next = 1.0f, .contributors = 2, .bits = 4};
	uint8_t buf[256];
	int n = gw_sum_encode(buf, sizeof(buf), 1, 0, codes, 12, &si);
	GW_CHECK(n == P + 20 + 8, "gw_sum_encode: %d (%s)", n, gw_error_name(n));
	hostile_forged(buf, (size_t)n, OUT, 1, 12, "valid sum frame");
	gw_test_st32(buf + P + 4, 1);
	refused(buf, (size_t)n, GW_ECORRUPT, "a sum of 1 contributor with codes above 7");
	gw_test_st32(buf + P + 4, 0);
	refused(buf, (size_t)n, GW_ECORRUPT, "a sum of 0 contributors");
	/* codes beyond what 2 workers sum are refused by the encoder too */
	codes[3] = 15;
	GW_EXPECT_RC(gw_sum_encode(buf, sizeof(buf), 1, 0, codes, 12, &si), GW_EINVAL,
		     "gw_sum_encode of a code above 2 Q");
	codes[3] = -14;
	GW_EXPECT_RC(gw_sum_encode(buf, 36 + 20 + 7, 1, 0, codes, 12, &si), GW_EBUDGET,
		     "gw_sum_encode a byte short");
	/* nor frames no decoder takes: no codes (a dense frame's count is at
	 * least 1), a code of -2^31 (33 bits) */
	GW_EXPECT_RC(gw_sum_encode(buf, sizeof(buf), 1, 0, codes, 0, &si), GW_EINVAL,
		     "gw_sum_encode of 0 codes");
	gw_sum_info wide = si;
	wide.contributors = 0x80000000u;
	codes[3] = INT32_MIN;
	GW_EXPECT_RC(gw_sum_encode(buf, sizeof(buf), 1, 0, codes, 12, &wide), GW_EINVAL,
		     "gw_sum_encode of a code -2^31");
	codes[3] = -INT32_MAX;
	n = gw_sum_encode(buf, sizeof(buf), 1, 0, codes, 12, &wide);
	GW_CHECK(n == P + 20 + 48, "gw_sum_encode of 32-bit codes: %d (%s)", n,
		 gw_error_name(n));
	hostile_forged(buf, (size_t)n, OUT, 1, 12, "valid sum frame of 32-bit codes");

	/* Poisoned: every value NaN, nothing else written. */
	f = frame12("", &len);
	f[P + 2] |= 0x4;
	gw_frame_seal(f, len);
	float out[OUT] = {0};
	GW_EXPECT_RC(gw_decode(f, len, out, OUT), 12, "poisoned frame");
	for (int i = 0; i < OUT; i++)
		GW_CHECK(i < 12 ? isnan(out[i]) : out[i] == 0.0f, "poisoned: out[%d] = %a", i,
			 (double)out[i]);
	free(f);
}
