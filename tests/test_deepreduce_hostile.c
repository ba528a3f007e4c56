/* Hostile deepreduce frames at the framing level (the sections have their
 * own hostile tests, test_dr_index_hostile and test_dr_value_hostile): a
 * valid frame is encoded, one field is forged, the frame resealed, and the
 * decoder must answer the right GW_E* code and leave the output untouched —
 * dense flag, param_len, unknown index or value codec, reserved bits,
 * index_len past the payload, count 0, count > span, span past 2^24, a
 * count the value section cannot hold, keys past the output, keys above
 * 2^32 without GW_FF_KEY64, and frames cut short at every length. */
#include "gw_test.h"

#define OUT_LEN 4096

struct frame {
	uint8_t b[2048];
	size_t len;
};

static void encode_one(const char *spec, struct frame *f)
{
	float v[OUT_LEN];
	for (int i = 0; i < OUT_LEN; i++)
		v[i] = (i % 37 == 0) ? 0.01f * (float)((i % 11) - 5) + 0.003f : 0.0f;
	gw_encoder *enc = gw_encoder_create(GW_CODEC_DEEPREDUCE);
	char err[256];
	GW_CHECK(gw_encoder_set_params(enc, spec, err, sizeof(err)) == 0, "%s", err);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_SPARSIFIER, 0));
	gw_tensor t = gw_test_dense_tensor(1, v, OUT_LEN);
	GW_OK_CALL(gw_encode_begin(enc, &t));
	int n = gw_encode_next(enc, f->b, sizeof(f->b));
	GW_CHECK(n > 0, "%s: encode %d", spec, n);
	f->len = (size_t)n;
	GW_OK_CALL(gw_encode_abandon(enc));
	gw_encoder_free(enc);
}

static void expect(const struct frame *f, int want, const char *what)
{
	gw_test_guard fg, og;
	gw_test_guard_copy(&fg, f->b, f->len);
	gw_test_guard_alloc(&og, OUT_LEN * sizeof(float));
	float *out = (float *)og.p;
	for (int i = 0; i < OUT_LEN; i++)
		out[i] = (float)i + 0.25f;
	int rc = gw_decode(fg.p, f->len, out, OUT_LEN);
	GW_CHECK(rc == want, "%s: decode %d (%s), expected %s", what, rc, gw_error_name(rc),
		 gw_error_name(want));
	if (rc < 0)
		for (int i = 0; i < OUT_LEN; i++)
			GW_CHECK(out[i] == (float)i + 0.25f, "%s: element %d changed", what, i);
	gw_test_guard_free(&fg);
	gw_test_guard_free(&og);
}

static void expect_error(const struct frame *f, const char *what)
{
	float out[OUT_LEN];
	for (int i = 0; i < OUT_LEN; i++)
		out[i] = (float)i + 0.25f;
	gw_test_guard fg;
	gw_test_guard_copy(&fg, f->b, f->len ? f->len : 1);
	int rc = gw_decode(fg.p, f->len, out, OUT_LEN);
	gw_test_guard_free(&fg);
	GW_CHECK(rc < 0, "%s (%zu bytes): accepted (%d)", what, f->len, rc);
	for (int i = 0; i < OUT_LEN; i++)
		GW_CHECK(out[i] == (float)i + 0.25f, "%s: element %d changed", what, i);
}

/* Either outcome; a refusal leaves out untouched. */
static void decode_any(const struct frame *f)
{
	gw_test_guard fg, og;
	gw_test_guard_copy(&fg, f->b, f->len);
	gw_test_guard_alloc(&og, OUT_LEN * sizeof(float));
	float *out = (float *)og.p;
	memset(out, 0, OUT_LEN * sizeof(float));
	int rc = gw_decode(fg.p, f->len, out, OUT_LEN);
	if (rc < 0)
		for (int i = 0; i < OUT_LEN; i++)
			GW_CHECK(out[i] == 0.0f, "refused (%s) but element %d changed",
				 gw_error_name(rc), i);
	gw_test_guard_free(&fg);
	gw_test_guard_free(&og);
}

/* Rewrites the header with h and reseals. */
static void forge(const struct frame *src, struct frame *f, void (*edit)(struct gw_frame_info *h,
								       uint8_t *params))
{
	*f = *src;
	struct gw_frame_info h;
	GW_OK_CALL(gw_frame_peek(f->b, f->len, &h));
	edit(&h, f->b + GW_FRAME_HDR_LEN);
	gw_frame_write_header(f->b, &h);
	gw_frame_seal(f->b, f->len);
}

static void e_dense(struct gw_frame_info *h, uint8_t *p) { (void)p; h->flags = 0; }
static void e_index(struct gw_frame_info *h, uint8_t *p) { (void)h; p[0] = 4; }
static void e_value(struct gw_frame_info *h, uint8_t *p) { (void)h; p[1] = 5; }
static void e_reserved(struct gw_frame_info *h, uint8_t *p) { (void)h; p[3] = 1; }
static void e_ilen(struct gw_frame_info *h, uint8_t *p) { gw_st32(p + 4, h->payload_len + 1); }
static void e_count0(struct gw_frame_info *h, uint8_t *p) { (void)p; h->count = 0; }
static void e_count_span(struct gw_frame_info *h, uint8_t *p) { (void)p; h->count = h->span + 1; }
static void e_count_more(struct gw_frame_info *h, uint8_t *p) { (void)p; h->count += 1; }
static void e_span_big(struct gw_frame_info *h, uint8_t *p)
{
	(void)p;
	h->start = 0;
	h->span = (1u << 24) + 1;
}
static void e_past_out(struct gw_frame_info *h, uint8_t *p) { (void)p; h->start = OUT_LEN; }
static void e_key32(struct gw_frame_info *h, uint8_t *p) { (void)p; h->start = 1ull << 32; }

static void test_forged_fields(void **state)
{
	(void)state;
	static const char *specs[] = {"index=raw,value=f32", "index=bloom,policy=p0,value=deflate",
				      "index=bloom,policy=p2,value=poly", "index=rle,value=qsgd",
				      "index=delta,value=dexp"};
	static const struct {
		void (*edit)(struct gw_frame_info *, uint8_t *);
		int want;   /* 1: any error */
		const char *what;
	} cases[] = {
		{e_dense, 1, "dense flag (the header rules or ours)"},
		{e_index, GW_ECORRUPT, "index codec 4"},
		{e_value, GW_ECORRUPT, "value codec 5"},
		{e_reserved, GW_ECORRUPT, "reserved params bits"},
		{e_ilen, GW_ELENGTH, "index_len past the payload"},
		{e_count0, GW_ELENGTH, "count 0"},
		{e_count_span, 1, "count > span"},
		{e_count_more, 1, "count one more than the sections hold"},
		{e_span_big, GW_ELENGTH, "span 2^24 + 1"},
		{e_past_out, GW_ERANGE, "keys past the output"},
		{e_key32, GW_ECORRUPT, "keys above 2^32 without KEY64"},
	};
	for (int s = 0; s < 5; s++) {
		struct frame ok, f;
		encode_one(specs[s], &ok);
		gw_frame_info h;
		GW_OK_CALL(gw_frame_peek(ok.b, ok.len, &h));
		expect(&ok, (int)h.count, specs[s]);
		for (size_t c = 0; c < GW_ARRAY_SIZE(cases); c++) {
			char what[160];
			snprintf(what, sizeof(what), "%s: %s", specs[s], cases[c].what);
			forge(&ok, &f, cases[c].edit);
			if (cases[c].want == 1)
				expect_error(&f, what);
			else
				expect(&f, cases[c].want, what);
		}
		/* cut short at every length: never accepted */
		for (size_t l = 0; l < ok.len; l++) {
			f = ok;
			f.len = l;
			expect_error(&f, "truncated");
		}
		/* Random byte changes in params and payload, resealed: decodes or
		 * is refused, never reads or writes out of bounds (guards). */
		gw_test_rng rng = {0x5eed + (uint64_t)s};
		for (int k = 0; k < 400; k++) {
			f = ok;
			size_t at = GW_FRAME_HDR_LEN + gw_test_below(&rng, ok.len - GW_FRAME_HDR_LEN);
			f.b[at] ^= (uint8_t)(1u << gw_test_below(&rng, 8));
			gw_frame_seal(f.b, f.len);
			decode_any(&f);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forged_fields),
	};
	return cmocka_run_group_tests_name("deepreduce_hostile", tests, NULL, NULL);
}
