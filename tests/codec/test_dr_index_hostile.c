/* Hostile DeepReduce index sections, made by hand from the format
 * (docs/wire-format.md §4.10), are refused with the right code and read or
 * write nothing out of bounds — each section sits in a buffer of exactly
 * its size and the positions in one of exactly count, both ending at a
 * PROT_NONE page: raw (truncated, trailing, descending, repeated, at or
 * past span), delta (truncated, trailing, reserved flag bits, past span),
 * rle (overshooting and short runs, overlong gamma, too many or too few
 * ones, padding bits, trailing bytes) and bloom (short header, bad policy,
 * k, m, reserved bytes, padding bits, m not matching the length, counts
 * that P cannot give, P2 beyond its pair limit); and span or count out of
 * range for every codec. The encoders refuse input that breaks their
 * contract. */
#include "gw_test.h"

#include <math.h>

#include "../../codec/deepreduce/dr.h"

static const struct dr_index_ops *const all[] = {
	&dr_index_raw, &dr_index_bloom, &dr_index_rle, &dr_index_delta,
};

/* Decodes sec[0..len) from an exact-size buffer into an exact-size output;
 * checks the code and, when want == 0 and expect != NULL, the positions. */
static void dec(const struct dr_index_ops *io, const uint8_t *sec, size_t len,
		uint32_t span, uint32_t count, int want, const uint32_t *expect,
		const char *what)
{
	gw_test_guard in, out;
	gw_test_guard_copy(&in, sec, len);
	gw_test_guard_alloc(&out, (size_t)count * sizeof(uint32_t));
	int rc = io->decode(in.p, len, span, count, (uint32_t *)out.p);
	GW_CHECK(rc == want, "%s %s: returned %d (%s), expected %s", io->name, what, rc,
		 gw_error_name(rc), gw_error_name(want));
	if (rc == 0 && expect)
		for (uint32_t i = 0; i < count; i++)
			GW_CHECK(((uint32_t *)out.p)[i] == expect[i], "%s %s: position %u is %u",
				 io->name, what, i, ((uint32_t *)out.p)[i]);
	gw_test_guard_free(&in);
	gw_test_guard_free(&out);
}

static void test_frame_shape(void **state)
{
	(void)state;
	uint8_t any[64] = {0};
	for (unsigned c = 0; c < GW_ARRAY_SIZE(all); c++) {
		dec(all[c], any, 12, DR_SPAN_MAX + 1, 1, GW_ECORRUPT, NULL, "span > DR_SPAN_MAX");
		dec(all[c], any, 12, 2, 3, GW_ECORRUPT, NULL, "count > span");
		dec(all[c], any, 0, 10, 1, GW_ELENGTH, NULL, "empty section");
	}
}

static void put_offsets(uint8_t *b, const uint32_t *o, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		gw_test_st32(b + 4 * i, o[i]);
}

static void test_raw(void **state)
{
	(void)state;
	const struct dr_index_ops *io = &dr_index_raw;
	uint8_t b[16];
	static const uint32_t good[3] = {1, 5, 9};
	put_offsets(b, good, 3);
	dec(io, b, 12, 10, 3, 0, good, "valid");
	dec(io, b, 11, 10, 3, GW_ELENGTH, NULL, "truncated");
	b[12] = 0;
	dec(io, b, 13, 10, 3, GW_ELENGTH, NULL, "trailing byte");
	dec(io, b, 12, 10, 2, GW_ELENGTH, NULL, "count 2 for 3 offsets");
	dec(io, b, 12, 10, 4, GW_ELENGTH, NULL, "count 4 for 3 offsets");
	dec(io, b, 12, 9, 3, GW_ECORRUPT, NULL, "offset == span");
	put_offsets(b, (const uint32_t[]){5, 1, 9}, 3);
	dec(io, b, 12, 10, 3, GW_ECORRUPT, NULL, "descending");
	put_offsets(b, (const uint32_t[]){1, 1, 9}, 3);
	dec(io, b, 12, 10, 3, GW_ECORRUPT, NULL, "repeated");
	put_offsets(b, (const uint32_t[]){1, 5, 0xffffffffu}, 3);
	dec(io, b, 12, DR_SPAN_MAX, 3, GW_ECORRUPT, NULL, "offset 2^32 - 1");
}

static void test_delta(void **state)
{
	(void)state;
	const struct dr_index_ops *io = &dr_index_delta;
	/* {1, 5, 9}: increments 1, 3, 3, one byte each (flags 0) */
	uint8_t b[8] = {0x00, 1, 3, 3, 0};
	static const uint32_t good[3] = {1, 5, 9};
	dec(io, b, 4, 10, 3, 0, good, "valid");
	dec(io, b, 3, 10, 3, GW_ELENGTH, NULL, "truncated");
	dec(io, b, 5, 10, 3, GW_ELENGTH, NULL, "trailing byte");
	dec(io, b, 4, 10, 2, GW_ELENGTH, NULL, "count 2 for 3 keys");
	dec(io, b, 4, 10, 4, GW_ELENGTH, NULL, "count 4 for 3 keys");
	dec(io, b, 4, 9, 3, GW_ECORRUPT, NULL, "key == span");
	b[0] = 0xc0;   /* flag of a 4th key, which there is not */
	dec(io, b, 4, 10, 3, GW_ECORRUPT, NULL, "reserved flag bits");
	/* 0xffffff + 1 increments: past any span */
	uint8_t w[8] = {0x03, 0xff, 0xff, 0xff, 0xff};
	dec(io, w, 5, DR_SPAN_MAX, 1, GW_ECORRUPT, NULL, "4-byte increment past span");
}

/* ---- rle: a bit writer of the spec's own --------------------------------- */

struct bits {
	uint8_t b[64];
	unsigned n;
};

static void bit(struct bits *w, unsigned v)
{
	if (v)
		w->b[w->n / 8] |= (uint8_t)(1u << (w->n % 8));
	w->n++;
}

/* Gamma of v >= 1: floor(log2 v) zeros, a 1, the lower bits LSB first. */
static void gamma_(struct bits *w, uint64_t v)
{
	unsigned b = 0;
	while (v >> (b + 1))
		b++;
	for (unsigned i = 0; i < b; i++)
		bit(w, 0);
	bit(w, 1);
	for (unsigned i = 0; i < b; i++)
		bit(w, (unsigned)(v >> i) & 1);
}

static size_t runs(struct bits *w, const uint64_t *r, unsigned n)
{
	memset(w, 0, sizeof(*w));
	gamma_(w, r[0] + 1);   /* first 0-run, may be empty */
	for (unsigned i = 1; i < n; i++)
		gamma_(w, r[i]);
	return (w->n + 7) / 8;
}

static void test_rle(void **state)
{
	(void)state;
	const struct dr_index_ops *io = &dr_index_rle;
	struct bits w;
	static const uint32_t good[3] = {1, 2, 5};
	/* span 10, {1, 2, 5}: runs 0:1 1:2 0:2 1:1 0:4 */
	size_t len = runs(&w, (const uint64_t[]){1, 2, 2, 1, 4}, 5);
	dec(io, w.b, len, 10, 3, 0, good, "valid");
	/* the spec's example (docs/wire-format.md): the encoder's bytes */
	uint8_t e[8];
	uint32_t nv;
	GW_CHECK(len == 2 && w.b[0] == 0x92 && w.b[1] == 0x12, "example stream");
	GW_CHECK(io->encode(good, 3, 10, NULL, e, sizeof(e), &nv) == 2 && nv == 3 &&
		 e[0] == 0x92 && e[1] == 0x12, "encoder: %02x %02x", e[0], e[1]);
	GW_CHECK(w.n % 8, "the test wants padding bits (%u bits)", w.n);
	dec(io, w.b, len, 11, 3, GW_ELENGTH, NULL, "runs short of the span");
	dec(io, w.b, len, 9, 3, GW_ECORRUPT, NULL, "runs past the span");
	dec(io, w.b, len, 10, 2, GW_ECORRUPT, NULL, "more ones than count");
	dec(io, w.b, len, 10, 4, GW_ECORRUPT, NULL, "fewer ones than count");
	dec(io, w.b, len + 1, 10, 3, GW_ELENGTH, NULL, "trailing byte");
	dec(io, w.b, len - 1, 10, 3, GW_ELENGTH, NULL, "truncated");
	w.b[len - 1] |= 0x80;
	dec(io, w.b, len, 10, 3, GW_ECORRUPT, NULL, "padding bit set");
	/* a bitmap starting with a one: first 0-run empty, coded 1 */
	len = runs(&w, (const uint64_t[]){0, 3}, 2);
	dec(io, w.b, len, 3, 3, 0, (const uint32_t[]){0, 1, 2}, "all ones");
	/* all zeros, count 0 */
	len = runs(&w, (const uint64_t[]){7}, 1);
	dec(io, w.b, len, 7, 0, 0, NULL, "all zeros");
	dec(io, w.b, len, 6, 0, GW_ECORRUPT, NULL, "first run past the span");
	/* 40 zero bits, then ones: a prefix longer than 32 */
	memset(&w, 0, sizeof(w));
	w.n = 40;
	for (int i = 0; i < 40; i++)
		bit(&w, 1);
	dec(io, w.b, 10, 1000, 1, GW_ECORRUPT, NULL, "overlong gamma");
	/* 32 zeros are still a code (2^32 + ...): past any span */
	memset(&w, 0, sizeof(w));
	w.n = 32;
	for (int i = 0; i < 40; i++)
		bit(&w, 1);
	dec(io, w.b, 9, 1000, 1, GW_ECORRUPT, NULL, "gamma of 2^32 + x");
	/* a zero run where the span is used up but a one is missing */
	len = runs(&w, (const uint64_t[]){2, 1, 1, 1}, 4);
	dec(io, w.b, len, 4, 2, GW_ECORRUPT, NULL, "ends before the last one");
}

/* ---- bloom ------------------------------------------------------------------ */

/* Header + filter of m bits, every bit `fill`. */
static size_t bloom(uint8_t *b, unsigned policy, unsigned k, uint32_t m, int fill)
{
	b[0] = (uint8_t)policy;
	b[1] = (uint8_t)k;
	b[2] = b[3] = 0;
	gw_test_st32(b + 4, 0x1234);
	gw_test_st32(b + 8, m);
	size_t nb = (m + 7) / 8;
	memset(b + 12, fill ? 0xff : 0, nb);
	if (fill && m % 8)
		b[12 + nb - 1] = (uint8_t)((1u << (m % 8)) - 1);
	return 12 + nb;
}

static void test_bloom_header(void **state)
{
	(void)state;
	const struct dr_index_ops *io = &dr_index_bloom;
	uint8_t b[64];
	uint32_t span = 20;
	size_t len = bloom(b, DR_P0, 3, 16, 1);
	dec(io, b, len, span, span, 0, NULL, "all ones, P0, count = span");
	dec(io, b, 11, span, 1, GW_ELENGTH, NULL, "header cut");
	dec(io, b, len - 1, span, span, GW_ELENGTH, NULL, "filter cut");
	dec(io, b, len + 1, span, span, GW_ELENGTH, NULL, "trailing byte");
	b[0] = 3;
	dec(io, b, len, span, span, GW_ECORRUPT, NULL, "policy 3");
	b[0] = 255;
	dec(io, b, len, span, span, GW_ECORRUPT, NULL, "policy 255");
	len = bloom(b, DR_P0, 0, 16, 1);
	dec(io, b, len, span, span, GW_ECORRUPT, NULL, "k 0");
	len = bloom(b, DR_P0, DR_HASHES_MAX + 1, 16, 1);
	dec(io, b, len, span, span, GW_ECORRUPT, NULL, "k 33");
	len = bloom(b, DR_P0, DR_HASHES_MAX, 16, 1);
	dec(io, b, len, span, span, 0, NULL, "k 32");
	for (int r = 2; r < 4; r++) {
		len = bloom(b, DR_P0, 3, 16, 1);
		b[r] = 1;
		dec(io, b, len, span, span, GW_ECORRUPT, NULL, "reserved byte");
	}
	len = bloom(b, DR_P0, 3, 7, 1);
	dec(io, b, len, span, span, GW_ECORRUPT, NULL, "m 7");
	len = bloom(b, DR_P0, 3, 0, 1);
	dec(io, b, 12, span, span, GW_ECORRUPT, NULL, "m 0");
	len = bloom(b, DR_P0, 3, 16, 1);
	gw_test_st32(b + 8, 24);
	dec(io, b, len, span, span, GW_ELENGTH, NULL, "m 24, 2 filter bytes");
	gw_test_st32(b + 8, 8);
	dec(io, b, len, span, span, GW_ELENGTH, NULL, "m 8, 2 filter bytes");
	gw_test_st32(b + 8, 0xffffffffu);
	dec(io, b, len, span, span, GW_ELENGTH, NULL, "m 2^32 - 1");
	len = bloom(b, DR_P0, 3, 12, 1);
	dec(io, b, len, span, span, 0, NULL, "m 12, padding clear");
	b[13] |= 0x10;
	dec(io, b, len, span, span, GW_ECORRUPT, NULL, "m 12, bit 12 set");
}

static void test_bloom_counts(void **state)
{
	(void)state;
	const struct dr_index_ops *io = &dr_index_bloom;
	uint8_t b[64];
	uint32_t span = 100, all_pos[100];
	for (uint32_t i = 0; i < span; i++)
		all_pos[i] = i;
	/* all ones: every offset is positive, |P| = span */
	for (unsigned p = DR_P0; p <= DR_P2; p++) {
		size_t len = bloom(b, p, 4, 40, 1);
		dec(io, b, len, span, span, 0, all_pos, "all ones, count = span");
		dec(io, b, len, span, span + 1, GW_ECORRUPT, NULL, "count > span");
	}
	size_t len = bloom(b, DR_P0, 4, 40, 1);
	dec(io, b, len, span, span - 1, GW_ECORRUPT, NULL, "P0: more positives than count");
	dec(io, b, len, span, 1, GW_ECORRUPT, NULL, "P0: count 1 of 100");
	len = bloom(b, DR_P1, 4, 40, 1);
	dec(io, b, len, span, 37, 0, NULL, "P1: 37 of 100");
	len = bloom(b, DR_P2, 4, 40, 1);
	dec(io, b, len, span, 37, 0, NULL, "P2: 37 of 100");
	/* all zeros: no positive */
	for (unsigned p = DR_P0; p <= DR_P2; p++) {
		len = bloom(b, p, 4, 40, 0);
		dec(io, b, len, span, 1, GW_ECORRUPT, NULL, "empty filter, count 1");
		dec(io, b, len, span, 0, 0, NULL, "empty filter, count 0");
	}
	/* P2 beyond its limit: |P| k = (2^20 + 1) 32 > 2^25 pairs */
	uint32_t big = (1u << 20) + 1;
	len = bloom(b, DR_P2, DR_HASHES_MAX, 64, 1);
	dec(io, b, len, big, 1, GW_ECORRUPT, NULL, "P2: |P| k past the limit");
	len = bloom(b, DR_P1, DR_HASHES_MAX, 64, 1);
	dec(io, b, len, big, 1, 0, NULL, "P1: the same filter is fine");
	/* m = 8 with k = 32: every progression repeats; still decodes */
	len = bloom(b, DR_P2, DR_HASHES_MAX, 8, 1);
	dec(io, b, len, 5000, 4000, 0, NULL, "P2: m 8, k 32, 8 sets");
}

/* The encoders refuse what breaks their contract (dr.h) with GW_EINVAL
 * when the section would fit: unsorted, repeated or out-of-span offsets,
 * no offsets, span past DR_SPAN_MAX, Bloom parameters out of range. */
static void test_encoder_contract(void **state)
{
	(void)state;
	uint8_t out[256];
	uint32_t nv;
	struct dr_index_cfg cfg = {.fpr = 0.1, .policy = DR_P0};
	static const uint32_t desc[3] = {1, 9, 5}, rep[3] = {1, 5, 5}, past[3] = {1, 5, 10};
	for (unsigned c = 0; c < GW_ARRAY_SIZE(all); c++) {
		const struct dr_index_ops *io = all[c];
		GW_EXPECT_RC(io->encode(desc, 3, 10, &cfg, out, sizeof(out), &nv), GW_EINVAL,
			     "%s: descending", io->name);
		GW_EXPECT_RC(io->encode(rep, 3, 10, &cfg, out, sizeof(out), &nv), GW_EINVAL,
			     "%s: repeated", io->name);
		GW_EXPECT_RC(io->encode(past, 3, 10, &cfg, out, sizeof(out), &nv), GW_EINVAL,
			     "%s: offset == span", io->name);
		GW_EXPECT_RC(io->encode(desc, 0, 10, &cfg, out, sizeof(out), &nv), GW_EINVAL,
			     "%s: n 0", io->name);
		GW_EXPECT_RC(io->encode(desc, 3, DR_SPAN_MAX + 1, &cfg, out, sizeof(out), &nv),
			     GW_EINVAL, "%s: span past DR_SPAN_MAX", io->name);
	}
	static const uint32_t good[3] = {1, 5, 9};
	const double bad_fpr[] = {0.0, 1.0, -0.5, NAN};
	for (unsigned i = 0; i < GW_ARRAY_SIZE(bad_fpr); i++) {
		cfg.fpr = bad_fpr[i];
		GW_EXPECT_RC(dr_index_bloom.encode(good, 3, 10, &cfg, out, sizeof(out), &nv),
			     GW_EINVAL, "bloom: fpr %g", bad_fpr[i]);
	}
	cfg = (struct dr_index_cfg){.fpr = 0.1, .hashes = DR_HASHES_MAX + 1};
	GW_EXPECT_RC(dr_index_bloom.encode(good, 3, 10, &cfg, out, sizeof(out), &nv),
		     GW_EINVAL, "bloom: k 33");
	cfg = (struct dr_index_cfg){.fpr = 0.1, .policy = DR_POLICY_COUNT_};
	GW_EXPECT_RC(dr_index_bloom.encode(good, 3, 10, &cfg, out, sizeof(out), &nv),
		     GW_EINVAL, "bloom: policy 3");
	GW_EXPECT_RC(dr_index_bloom.encode(good, 3, 10, NULL, out, sizeof(out), &nv),
		     GW_EINVAL, "bloom: no cfg");
}

GW_TEST_MAIN("dr_index_hostile", 0,
	     cmocka_unit_test(test_frame_shape), cmocka_unit_test(test_raw),
	     cmocka_unit_test(test_delta), cmocka_unit_test(test_rle),
	     cmocka_unit_test(test_bloom_header),
	     cmocka_unit_test(test_bloom_counts),
	     cmocka_unit_test(test_encoder_contract))
