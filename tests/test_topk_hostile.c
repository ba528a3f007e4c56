/* Hostile topk frames (built by hand from the format and sealed, or encoded and corrupted) are rejected with the right GW_E* code and leave the output untouched: dense flags, count 0 with a payload (without one it is a valid empty frame), params, payload shorter than the values, overlong/unterminated/6-byte varints, gaps past the span, a last key short of start + span - 1, trailing bytes, keys at or past out_len, keys above 2^32 without GW_FF_KEY64. */
#include "gw_test.h"

#include <math.h>

#define OUT_LEN 100

struct frame {
	uint8_t b[512];
	size_t len;
};

/* Header + values + raw gap bytes, sealed. */
static void build(struct frame *f, uint16_t flags, uint32_t count, uint64_t start,
		  uint32_t span, const float *vals, uint32_t nvals,
		  const uint8_t *gaps, size_t ngaps)
{
	struct gw_frame_info h = {0};
	h.codec = GW_CODEC_TOPK;
	h.flags = flags;
	h.tensor = 1;
	h.count = count;
	h.start = start;
	h.span = span;
	h.param_len = 0;
	h.payload_len = (uint32_t)(4 * nvals + ngaps);
	GW_CHECK(GW_FRAME_HDR_LEN + h.payload_len <= sizeof(f->b), "frame too big");
	gw_frame_write_header(f->b, &h);
	for (uint32_t i = 0; i < nvals; i++)
		gw_stf32(f->b + GW_FRAME_HDR_LEN + 4 * i, vals[i]);
	if (ngaps)
		memcpy(f->b + GW_FRAME_HDR_LEN + 4 * nvals, gaps, ngaps);
	f->len = GW_FRAME_HDR_LEN + h.payload_len;
	gw_frame_seal(f->b, f->len);
}

static int decode_forged(const struct frame *f, uint64_t out_len, int want,
			 const char *what)
{
	gw_test_guard fg, og;
	gw_test_guard_copy(&fg, f->b, f->len);
	gw_test_guard_alloc(&og, out_len * sizeof(float));
	float *out = (float *)og.p;
	for (uint64_t i = 0; i < out_len; i++)
		out[i] = (float)i + 0.25f;
	int rc = gw_decode(fg.p, f->len, out, out_len);
	GW_CHECK(rc == want, "%s: decode returned %d (%s), expected %s", what, rc,
		 gw_error_name(rc), gw_error_name(want));
	if (rc < 0)
		for (uint64_t i = 0; i < out_len; i++)
			GW_CHECK(out[i] == (float)i + 0.25f,
				 "%s: rejected (%s) but element %llu changed", what,
				 gw_error_name(rc), (unsigned long long)i);
	gw_test_guard_free(&fg);
	gw_test_guard_free(&og);
	return rc;
}

static const float vals[4] = {1.0f, -2.0f, 3.0f, -4.0f};

/* keys 5, 6, 40, 99: gaps 1, 34, 59 stored as 0, 33, 58 */
static const uint8_t good_gaps[3] = {0, 33, 58};

static void test_valid_and_values(void **state)
{
	(void)state;
	struct frame f;
	build(&f, GW_FF_SPARSE, 4, 5, 95, vals, 4, good_gaps, 3);
	gw_test_guard og;
	gw_test_guard_alloc(&og, OUT_LEN * sizeof(float));
	float *out = (float *)og.p;
	gw_test_fill(out, OUT_LEN, 0.0f);
	GW_EXPECT_RC(gw_decode(f.b, f.len, out, OUT_LEN), 4, "valid frame");
	for (int i = 0; i < OUT_LEN; i++) {
		float want = i == 5 ? 1.0f : i == 6 ? -2.0f : i == 40 ? 3.0f
			     : i == 99 ? -4.0f : 0.0f;
		GW_CHECK(out[i] == want, "element %d: %a", i, (double)out[i]);
	}
	gw_test_guard_free(&og);
	/* one entry: no gaps, span 1 */
	build(&f, GW_FF_SPARSE, 1, 42, 1, vals, 1, NULL, 0);
	decode_forged(&f, OUT_LEN, 1, "single entry");
	/* a two-byte varint: gap 200 stored as 199 = 0xc7 0x01 */
	static const uint8_t g2[2] = {0xc7, 0x01};
	build(&f, GW_FF_SPARSE, 2, 0, 201, vals, 2, g2, 2);
	decode_forged(&f, 201, 2, "two-byte varint");
	/* NaN and Inf values are valid payload (the encoder sends them) */
	float nf[2] = {NAN, INFINITY};
	build(&f, GW_FF_SPARSE, 2, 0, 2, nf, 2, (const uint8_t[]){0}, 1);
	decode_forged(&f, OUT_LEN, 2, "non-finite values");
}

static void test_header_shapes(void **state)
{
	(void)state;
	struct frame f;
	/* dense frame of topk: count == span passes peek, the codec refuses */
	build(&f, 0, 4, 5, 4, vals, 4, good_gaps, 3);
	decode_forged(&f, OUT_LEN, GW_ECORRUPT, "dense topk frame");
	/* count 0 is "nothing in this range": valid only with no payload */
	build(&f, GW_FF_SPARSE, 0, 5, 95, vals, 0, NULL, 0);
	decode_forged(&f, OUT_LEN, 0, "count 0, empty payload");
	build(&f, GW_FF_SPARSE, 0, 5, 95, vals, 0, good_gaps, 1);
	decode_forged(&f, OUT_LEN, GW_ELENGTH, "count 0 with a gap byte");
	build(&f, GW_FF_SPARSE, 0, 5, 95, vals, 1, NULL, 0);
	decode_forged(&f, OUT_LEN, GW_ELENGTH, "count 0 with a value");
	build(&f, GW_FF_SPARSE, 4, 5, 95, vals, 3, good_gaps, 3);
	decode_forged(&f, OUT_LEN, GW_ELENGTH, "values run into the gaps");
	build(&f, GW_FF_SPARSE, 4, 5, 95, vals, 3, NULL, 0);
	decode_forged(&f, OUT_LEN, GW_ELENGTH, "payload shorter than the values");
	/* a param block */
	build(&f, GW_FF_SPARSE, 4, 5, 95, vals, 4, good_gaps, 3);
	f.b[GW_TEST_OFF_PARAM_LEN] = 4;
	gw_test_st32(f.b + GW_TEST_OFF_PAYLOAD_LEN, 4 * 4 + 3 - 4);
	gw_frame_seal(f.b, f.len);
	decode_forged(&f, OUT_LEN, GW_ELENGTH, "param_len 4");
	/* keys reach out_len */
	build(&f, GW_FF_SPARSE, 4, 5, 95, vals, 4, good_gaps, 3);
	decode_forged(&f, 99, GW_ERANGE, "last key 99, out_len 99");
	/* key above 2^32 - 1 without KEY64; with it, fine but past out_len */
	build(&f, GW_FF_SPARSE, 1, 0x100000000ull, 1, vals, 1, NULL, 0);
	decode_forged(&f, OUT_LEN, GW_ECORRUPT, "key 2^32 without KEY64");
	build(&f, GW_FF_SPARSE | GW_FF_KEY64, 1, 0x100000000ull, 1, vals, 1, NULL, 0);
	decode_forged(&f, OUT_LEN, GW_ERANGE, "key 2^32 with KEY64, small out");
	build(&f, GW_FF_SPARSE, 2, 0xfffffff0ull, 16, vals, 2,
	      (const uint8_t[]){14}, 1);
	decode_forged(&f, OUT_LEN, GW_ERANGE, "keys just below 2^32, small out");
}

static void test_varints(void **state)
{
	(void)state;
	struct frame f;
	static const struct {
		uint8_t g[8];
		size_t n;
		const char *what;
	} bad[] = {
		{{0, 33}, 2, "one gap missing"},
		{{0, 33, 58, 0}, 4, "trailing byte"},
		{{0, 33, 57}, 3, "last key short of the span"},
		{{0, 33, 59}, 3, "last gap past the span"},
		{{0, 94, 0}, 3, "gap past the span mid-frame"},
		{{0x80, 0x00, 33, 58}, 4, "overlong zero"},
		{{0, 0xa1, 0x00, 58}, 4, "overlong 33"},
		{{0, 33, 0xba}, 3, "unterminated varint"},
		{{0, 33, 0xba, 0x80, 0x80, 0x80, 0x80, 0x00}, 8, "6-byte varint"},
		{{0, 33, 0xff, 0xff, 0xff, 0xff, 0x0f}, 7, "gap 2^32"},
	};
	for (size_t i = 0; i < GW_ARRAY_SIZE(bad); i++) {
		build(&f, GW_FF_SPARSE, 4, 5, 95, vals, 4, bad[i].g, bad[i].n);
		decode_forged(&f, OUT_LEN, GW_ECORRUPT, bad[i].what);
	}
	/* the largest gap a span allows (keys 0 and 2^32 - 2, span 2^32 - 1):
	 * the output check comes first, so this only shows no wrap-around
	 * in the range arithmetic */
	static const uint8_t big[5] = {0xfd, 0xff, 0xff, 0xff, 0x0f};
	build(&f, GW_FF_SPARSE, 2, 0, UINT32_MAX, vals, 2, big, 5);
	decode_forged(&f, 10, GW_ERANGE, "largest gap, small output");
}

/* An encoded frame, corrupted byte by byte in its gap section: whatever
 * the decoder says, a rejection never writes. */
static void test_corrupted_encoded(void **state)
{
	(void)state;
	float v[OUT_LEN];
	for (int i = 0; i < OUT_LEN; i++)
		v[i] = (float)((i * 53) % 97) - 48.0f;
	gw_encoder *enc = gw_test_encoder(GW_CODEC_TOPK);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_FRACTION, 0.3));
	gw_tensor t = gw_test_dense_tensor(1, v, OUT_LEN);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, 65535, &fr));
	GW_CHECK(fr.n == 1, "%zu frames", fr.n);
	struct frame f;
	f.len = fr.f[0].len;
	memcpy(f.b, fr.f[0].data, f.len);
	gw_frame_info h;
	GW_OK_CALL(gw_frame_verify(f.b, f.len, &h));
	size_t gaps = GW_FRAME_HDR_LEN + 4 * (size_t)h.count;
	int rejected = 0;
	for (size_t at = gaps; at < f.len; at++) {
		for (int x = 1; x < 256; x <<= 1) {
			f.b[at] ^= (uint8_t)x;
			gw_frame_seal(f.b, f.len);
			gw_test_guard og;
			gw_test_guard_alloc(&og, OUT_LEN * sizeof(float));
			float *out = (float *)og.p;
			gw_test_fill(out, OUT_LEN, 7.0f);
			int rc = gw_decode(f.b, f.len, out, OUT_LEN);
			if (rc < 0) {
				rejected++;
				for (int i = 0; i < OUT_LEN; i++)
					GW_CHECK(out[i] == 7.0f, "byte %zu ^ %#x: %s but "
						 "element %d changed", at, x,
						 gw_error_name(rc), i);
			}
			gw_test_guard_free(&og);
			f.b[at] ^= (uint8_t)x;
		}
	}
	/* Every single-bit change of a gap shifts some key off the span's
	 * end, or breaks the varint: none can be accepted. */
	GW_CHECK(rejected == (int)(f.len - gaps) * 8, "%d of %zu corruptions "
		 "rejected", rejected, (f.len - gaps) * 8);
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid_and_values),
		cmocka_unit_test(test_header_shapes),
		cmocka_unit_test(test_varints),
		cmocka_unit_test(test_corrupted_encoded),
	};
	return cmocka_run_group_tests_name("topk_hostile", tests, NULL, NULL);
}
