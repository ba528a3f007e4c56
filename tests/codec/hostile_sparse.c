/* Payload forgeries of the sparse-frame codecs (hostile_payloads.h): top-k
 * frames built by hand from the format (varint gaps) and an encoded one
 * flipped bit by bit; deepreduce's framing (its sections have their own
 * hostile tests, test_dr_index_hostile and test_dr_value_hostile). */
#include "gw_test.h"

#include <math.h>

#include "hostile_payloads.h"

/* ---- topk -------------------------------------------------------------------- */

#define OUT_TOPK 100

struct frame {
	uint8_t b[2048];
	size_t len;
};

/* topk: header + values + raw gap bytes, sealed. */
static void topk_build(struct frame *f, uint16_t flags, uint32_t count,
		       uint64_t start, uint32_t span, const float *v, uint32_t nvals,
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
		gw_stf32(f->b + GW_FRAME_HDR_LEN + 4 * i, v[i]);
	if (ngaps)
		memcpy(f->b + GW_FRAME_HDR_LEN + 4 * nvals, gaps, ngaps);
	f->len = GW_FRAME_HDR_LEN + h.payload_len;
	gw_frame_seal(f->b, f->len);
}

static const float tvals[4] = {1.0f, -2.0f, 3.0f, -4.0f};

/* keys 5, 6, 40, 99: gaps 1, 34, 59 stored as 0, 33, 58 */
static const uint8_t good_gaps[3] = {0, 33, 58};

/* Valid frames decode to their values: one entry, a two-byte varint,
 * non-finite values (the encoder sends them). */
static void topk_valid(void)
{
	struct frame f;
	topk_build(&f, GW_FF_SPARSE, 4, 5, 95, tvals, 4, good_gaps, 3);
	gw_test_guard og;
	gw_test_guard_alloc(&og, OUT_TOPK * sizeof(float));
	float *out = (float *)(void *)og.p;
	gw_test_fill(out, OUT_TOPK, 0.0f);
	GW_EXPECT_RC(gw_decode(f.b, f.len, out, OUT_TOPK), 4, "topk valid frame");
	for (int i = 0; i < OUT_TOPK; i++) {
		float want = i == 5 ? 1.0f : i == 6 ? -2.0f : i == 40 ? 3.0f
			     : i == 99 ? -4.0f : 0.0f;
		GW_CHECK(out[i] == want, "topk element %d: %a", i, (double)out[i]);
	}
	gw_test_guard_free(&og);
	topk_build(&f, GW_FF_SPARSE, 1, 42, 1, tvals, 1, NULL, 0);
	hostile_forged(f.b, f.len, OUT_TOPK, 0, 1, "topk single entry");
	static const uint8_t g2[2] = {0xc7, 0x01};   /* gap 200 = 199 + 1 */
	topk_build(&f, GW_FF_SPARSE, 2, 0, 201, tvals, 2, g2, 2);
	hostile_forged(f.b, f.len, 201, 0, 2, "topk two-byte varint");
	float nf[2] = {NAN, INFINITY};
	topk_build(&f, GW_FF_SPARSE, 2, 0, 2, nf, 2, (const uint8_t[]){0}, 1);
	hostile_forged(f.b, f.len, OUT_TOPK, 0, 2, "topk non-finite values");
}

/* Dense flags (the header check refuses them, wire-format §2.1 rule 7),
 * count 0 with a payload, params, short payloads, keys at or
 * past out_len, keys above 2^32 without KEY64. */
static void topk_shapes(void)
{
	struct frame f;
	topk_build(&f, 0, 4, 5, 4, tvals, 4, good_gaps, 3);
	hostile_forged(f.b, f.len, OUT_TOPK, 0, GW_EUNSUPPORTED, "topk dense frame");
	topk_build(&f, GW_FF_SPARSE, 0, 5, 95, tvals, 0, NULL, 0);
	hostile_forged(f.b, f.len, OUT_TOPK, 0, 0, "topk count 0, empty payload");
	topk_build(&f, GW_FF_SPARSE, 0, 5, 95, tvals, 0, good_gaps, 1);
	hostile_forged(f.b, f.len, OUT_TOPK, 0, GW_ELENGTH, "topk count 0 with a gap byte");
	topk_build(&f, GW_FF_SPARSE, 0, 5, 95, tvals, 1, NULL, 0);
	hostile_forged(f.b, f.len, OUT_TOPK, 0, GW_ELENGTH, "topk count 0 with a value");
	topk_build(&f, GW_FF_SPARSE, 4, 5, 95, tvals, 3, good_gaps, 3);
	hostile_forged(f.b, f.len, OUT_TOPK, 0, GW_ELENGTH, "topk values run into the gaps");
	topk_build(&f, GW_FF_SPARSE, 4, 5, 95, tvals, 3, NULL, 0);
	hostile_forged(f.b, f.len, OUT_TOPK, 0, GW_ELENGTH, "topk payload shorter than the values");
	topk_build(&f, GW_FF_SPARSE, 4, 5, 95, tvals, 4, good_gaps, 3);
	f.b[GW_TEST_OFF_PARAM_LEN] = 4;
	gw_test_st32(f.b + GW_TEST_OFF_PAYLOAD_LEN, 4 * 4 + 3 - 4);
	hostile_forged(f.b, f.len, OUT_TOPK, 1, GW_ELENGTH, "topk param_len 4");
	topk_build(&f, GW_FF_SPARSE, 4, 5, 95, tvals, 4, good_gaps, 3);
	hostile_forged(f.b, f.len, 99, 0, GW_ERANGE, "topk last key 99, out_len 99");
	topk_build(&f, GW_FF_SPARSE, 1, 0x100000000ull, 1, tvals, 1, NULL, 0);
	hostile_forged(f.b, f.len, OUT_TOPK, 0, GW_ECORRUPT, "topk key 2^32 without KEY64");
	topk_build(&f, GW_FF_SPARSE | GW_FF_KEY64, 1, 0x100000000ull, 1, tvals, 1, NULL, 0);
	hostile_forged(f.b, f.len, OUT_TOPK, 0, GW_ERANGE, "topk key 2^32 with KEY64, small out");
	topk_build(&f, GW_FF_SPARSE, 2, 0xfffffff0ull, 16, tvals, 2, (const uint8_t[]){14}, 1);
	hostile_forged(f.b, f.len, OUT_TOPK, 0, GW_ERANGE, "topk keys just below 2^32, small out");
}

/* Overlong, unterminated, 6-byte varints, gaps past the span, a last key
 * short of start + span - 1, trailing bytes. */
static void topk_varints(void)
{
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
		topk_build(&f, GW_FF_SPARSE, 4, 5, 95, tvals, 4, bad[i].g, bad[i].n);
		hostile_forged(f.b, f.len, OUT_TOPK, 0, GW_ECORRUPT, bad[i].what);
	}
	/* The largest gap a span allows (keys 0 and 2^32 - 2, span 2^32 - 1):
	 * the output check comes first, so this only shows no wrap-around in
	 * the range arithmetic. */
	static const uint8_t big[5] = {0xfd, 0xff, 0xff, 0xff, 0x0f};
	topk_build(&f, GW_FF_SPARSE, 2, 0, UINT32_MAX, tvals, 2, big, 5);
	hostile_forged(f.b, f.len, 10, 0, GW_ERANGE, "topk largest gap, small output");
}

/* An encoded frame, corrupted bit by bit in its gap section: every
 * single-bit change of a gap shifts some key off the span's end, or breaks
 * the varint, so none is accepted. */
static void topk_corrupted(int id)
{
	float v[OUT_TOPK];
	for (int i = 0; i < OUT_TOPK; i++)
		v[i] = (float)((i * 53) % 97) - 48.0f;
	gw_encoder *enc = gw_test_encoder(id);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_FRACTION, 0.3));
	gw_tensor t = gw_test_dense_tensor(1, v, OUT_TOPK);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, 65535, &fr));
	GW_CHECK(fr.n == 1, "topk: %zu frames", fr.n);
	struct frame f;
	f.len = fr.f[0].len;
	memcpy(f.b, fr.f[0].data, f.len);
	gw_frame_info h;
	GW_OK_CALL(gw_frame_verify(f.b, f.len, &h));
	size_t gaps = GW_FRAME_HDR_LEN + 4 * (size_t)h.count;
	char what[64];
	for (size_t at = gaps; at < f.len; at++) {
		for (int x = 1; x < 256; x <<= 1) {
			f.b[at] ^= (uint8_t)x;
			snprintf(what, sizeof(what), "topk gap byte %zu ^ %#x", at, x);
			hostile_forged(f.b, f.len, OUT_TOPK, 1, GW_TEST_ANY_ERROR, what);
			f.b[at] ^= (uint8_t)x;
		}
	}
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
}

void hostile_topk(int id)
{
	topk_valid();
	topk_shapes();
	topk_varints();
	topk_corrupted(id);
}

/* ---- deepreduce: the framing (its sections: test_dr_*_hostile) ---------------- */

#define OUT_DR 4096

static void dr_encode_one(const char *spec, struct frame *f)
{
	float v[OUT_DR];
	for (int i = 0; i < OUT_DR; i++)
		v[i] = (i % 37 == 0) ? 0.01f * (float)((i % 11) - 5) + 0.003f : 0.0f;
	gw_encoder *enc = gw_test_encoder_with(GW_CODEC_DEEPREDUCE, spec);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_SPARSIFIER, 0));
	gw_tensor t = gw_test_dense_tensor(1, v, OUT_DR);
	GW_OK_CALL(gw_encode_begin(enc, &t));
	int n = gw_encode_next(enc, f->b, sizeof(f->b));
	GW_CHECK(n > 0, "%s: encode %d", spec, n);
	f->len = (size_t)n;
	GW_OK_CALL(gw_encode_abandon(enc));
	gw_encoder_free(enc);
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
static void e_past_out(struct gw_frame_info *h, uint8_t *p) { (void)p; h->start = OUT_DR; }
static void e_key32(struct gw_frame_info *h, uint8_t *p) { (void)p; h->start = 1ull << 32; }

/* Every index/value pair: a header or params field forged and resealed,
 * cut short at every length, random bit flips in params and payload. */
void hostile_deepreduce(int id)
{
	(void)id;
	static const char *specs[] = {"index=raw,value=f32", "index=bloom,policy=p0,value=deflate",
				      "index=bloom,policy=p2,value=poly", "index=rle,value=qsgd",
				      "index=delta,value=dexp"};
	static const struct {
		void (*edit)(struct gw_frame_info *, uint8_t *);
		int want;
		const char *what;
	} cases[] = {
		{e_dense, GW_TEST_ANY_ERROR, "dense flag (the header rules or ours)"},
		{e_index, GW_ECORRUPT, "index codec 4"},
		{e_value, GW_ECORRUPT, "value codec 5"},
		{e_reserved, GW_ECORRUPT, "reserved params bits"},
		{e_ilen, GW_ELENGTH, "index_len past the payload"},
		{e_count0, GW_ELENGTH, "count 0"},
		{e_count_span, GW_TEST_ANY_ERROR, "count > span"},
		{e_count_more, GW_TEST_ANY_ERROR, "count one more than the sections hold"},
		{e_span_big, GW_ELENGTH, "span 2^24 + 1"},
		{e_past_out, GW_ERANGE, "keys past the output"},
		{e_key32, GW_ECORRUPT, "keys above 2^32 without KEY64"},
	};
	char what[160];
	for (size_t s = 0; s < GW_ARRAY_SIZE(specs); s++) {
		struct frame ok, f;
		dr_encode_one(specs[s], &ok);
		gw_frame_info h;
		GW_OK_CALL(gw_frame_peek(ok.b, ok.len, &h));
		hostile_forged(ok.b, ok.len, OUT_DR, 0, (int)h.count, specs[s]);
		for (size_t c = 0; c < GW_ARRAY_SIZE(cases); c++) {
			f = ok;
			struct gw_frame_info fh;
			GW_OK_CALL(gw_frame_peek(f.b, f.len, &fh));
			cases[c].edit(&fh, f.b + GW_FRAME_HDR_LEN);
			gw_frame_write_header(f.b, &fh);
			snprintf(what, sizeof(what), "%s: %s", specs[s], cases[c].what);
			hostile_forged(f.b, f.len, OUT_DR, 1, cases[c].want, what);
		}
		for (size_t l = 0; l < ok.len; l++) {
			snprintf(what, sizeof(what), "%s: cut to %zu", specs[s], l);
			hostile_forged(ok.b, l, OUT_DR, 0, GW_TEST_ANY_ERROR, what);
		}
		/* Random byte changes in params and payload, resealed: decodes or
		 * is refused, never reads or writes out of bounds. */
		gw_test_rng rng = {0x5eed + (uint64_t)s};
		for (int k = 0; k < 400; k++) {
			f = ok;
			size_t at = GW_FRAME_HDR_LEN + gw_test_below(&rng, ok.len - GW_FRAME_HDR_LEN);
			f.b[at] ^= (uint8_t)(1u << gw_test_below(&rng, 8));
			snprintf(what, sizeof(what), "%s: byte %zu flipped", specs[s], at);
			hostile_forged(f.b, f.len, OUT_DR, 1, GW_TEST_ANY_RESULT, what);
		}
	}
}
