/* 3LC encodes byte for byte as specified: trits t = q + 1 packed five per byte, first element most significant (a*81 + b*27 + c*9 + d*3 + e); five zeros are byte 121, a run of one stays 121, runs of 2..14 become 243..255, a run of 15 is 255 then 121; pad trits are 1; q rounds half to even (|c| = m/2 gives 0); m = s * max|x| is the float32 param; frames start on multiples of 5, fill their budget exactly and hold whole runs; max_frame_elems and the sparsity bounds are honoured; a poisoned tensor (NaN or +-Inf anywhere in g + e) is m = NaN (0x7fc00000) and nothing but zero runs, on every ISA, and FLT_MAX alone is finite (m clamps to FLT_MAX). */
#include "gw_test.h"

#include <float.h>
#include <math.h>

#include "gw_cpu.h"

/* Encodes x[0..n) (sparsity s, no error feedback) at budget; returns the
 * frames. */
static void encode(const float *x, size_t n, double s, size_t budget,
		   gw_test_frames *fr)
{
	gw_encoder *enc = gw_test_encoder(GW_CODEC_3LC);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_SPARSITY, s));
	gw_tensor t = gw_test_dense_tensor(9, x, n);
	GW_OK_CALL(gw_test_encode_all(enc, &t, budget, fr));
	gw_encoder_free(enc);
}

/* The single frame of x must carry m and exactly the payload want. */
static void expect_payload(const char *what, const float *x, size_t n, double s,
			   float m, const uint8_t *want, size_t want_len)
{
	gw_test_frames fr;
	encode(x, n, s, 65535, &fr);
	GW_CHECK(fr.n == 1, "%s: %zu frames", what, fr.n);
	gw_frame_info h;
	GW_OK_CALL(gw_frame_verify(fr.f[0].data, fr.f[0].len, &h));
	GW_CHECK(h.codec == GW_CODEC_3LC && h.flags == 0 && h.param_len == 4 &&
			 h.count == n && h.start == 0 && h.span == n,
		 "%s: header (count %u start %llu param_len %u)", what, h.count,
		 (unsigned long long)h.start, h.param_len);
	const uint8_t *p = fr.f[0].data + GW_FRAME_HDR_LEN;
	GW_CHECK(gw_test_bits(gw_test_float(gw_test_ld32(p))) == gw_test_bits(m),
		 "%s: m is %a, expected %a", what,
		 (double)gw_test_float(gw_test_ld32(p)), (double)m);
	GW_CHECK(h.payload_len == want_len, "%s: payload of %u bytes, expected %zu",
		 what, h.payload_len, want_len);
	for (size_t i = 0; i < want_len; i++)
		GW_CHECK(p[4 + i] == want[i], "%s: payload byte %zu is %u, expected %u",
			 what, i, p[4 + i], want[i]);
	gw_test_frames_free(&fr);
}

/* 1 then k*5 - 1 zeros: a literal byte 202 (2,1,1,1,1), then k - 1 bytes
 * 121 to run-encode. */
static void run_case(size_t zero_bytes, const uint8_t *want, size_t want_len)
{
	size_t n = 5 * (1 + zero_bytes);
	float *x = calloc(n, sizeof(float));
	GW_CHECK(x, "out of memory");
	x[0] = 1.0f;
	char what[64];
	snprintf(what, sizeof(what), "run of %zu zero bytes", zero_bytes);
	expect_payload(what, x, n, 1.0, 1.0f, want, want_len);
	free(x);
}

static void test_zero_runs(void **state)
{
	(void)state;
	run_case(1, (const uint8_t[]){202, 121}, 2);
	run_case(2, (const uint8_t[]){202, 243}, 2);
	run_case(3, (const uint8_t[]){202, 244}, 2);
	run_case(13, (const uint8_t[]){202, 254}, 2);
	run_case(14, (const uint8_t[]){202, 255}, 2);
	run_case(15, (const uint8_t[]){202, 255, 121}, 3);
	run_case(16, (const uint8_t[]){202, 255, 243}, 3);
	run_case(28, (const uint8_t[]){202, 255, 255}, 3);
	run_case(29, (const uint8_t[]){202, 255, 255, 121}, 4);
	run_case(14 * 9 + 5, (const uint8_t[]){202, 255, 255, 255, 255, 255, 255,
					      255, 255, 255, 246}, 11);
	/* All zeros: m = 0, and the whole tensor is runs. */
	float z[75] = {0};
	expect_payload("75 zeros", z, 75, 1.0, 0.0f, (const uint8_t[]){255, 121}, 2);
	expect_payload("5 zeros", z, 5, 1.0, 0.0f, (const uint8_t[]){121}, 1);
	/* Runs between literals, a run of one between two literals. */
	float x[40] = {0};
	x[0] = 1.0f;              /* byte 0: 202 */
	x[10] = -1.0f;            /* byte 2: 40, after one zero byte */
	x[39] = 1.0f;             /* byte 7: 122, after four zero bytes */
	expect_payload("mixed", x, 40, 1.0, 1.0f,
		       (const uint8_t[]){202, 121, 40, 245, 122}, 5);
}

static void test_base3_digits(void **state)
{
	(void)state;
	/* First element most significant; t = q + 1. */
	float a[5] = {0, 0, 0, 0, 1};
	expect_payload("last digit", a, 5, 1.0, 1.0f, (const uint8_t[]){122}, 1);
	float b[5] = {1, 0, 0, 0, 0};
	expect_payload("first digit", b, 5, 1.0, 1.0f, (const uint8_t[]){202}, 1);
	float c[5] = {-1, 0, 0, 0, 0};
	expect_payload("first digit -1", c, 5, 1.0, 1.0f, (const uint8_t[]){40}, 1);
	float d[5] = {1, 1, 1, 1, 1};
	expect_payload("all +1", d, 5, 1.0, 1.0f, (const uint8_t[]){242}, 1);
	float e[5] = {-1, -1, -1, -1, -1};
	expect_payload("all -1", e, 5, 1.0, 1.0f, (const uint8_t[]){0}, 1);
	float f[5] = {1, -1, 0, 1, -1};   /* 2,0,1,2,0 */
	expect_payload("mixed digits", f, 5, 1.0, 1.0f,
		       (const uint8_t[]){2 * 81 + 0 + 9 + 2 * 3 + 0}, 1);
	/* Pad trits are 1 (q = 0). */
	float g[3] = {1, -1, 1};          /* 2,0,2 + pad 1,1 */
	expect_payload("3 elements", g, 3, 1.0, 1.0f,
		       (const uint8_t[]){2 * 81 + 0 + 2 * 9 + 3 + 1}, 1);
	float h1[1] = {-2.0f};            /* 0 + pad 1,1,1,1 */
	expect_payload("1 element", h1, 1, 1.0, 2.0f, (const uint8_t[]){40}, 1);
	float h7[7] = {0, 0, 0, 0, 0, 0, 0.5f};   /* 121, (1,2 + pad) */
	expect_payload("7 elements", h7, 7, 1.0, 0.5f,
		       (const uint8_t[]){121, 81 + 2 * 27 + 9 + 3 + 1}, 2);
}

static void test_rounding_and_m(void **state)
{
	(void)state;
	/* s = 1, max 1: m = 1; |c| = m/2 exactly rounds to 0 (half to even),
	 * the next float above rounds away from 0. */
	float x[5] = {1.0f, 0.5f, -0.5f, nextafterf(0.5f, 1.0f), -nextafterf(0.5f, 1.0f)};
	expect_payload("halves", x, 5, 1.0, 1.0f,
		       (const uint8_t[]){2 * 81 + 27 + 9 + 2 * 3 + 0}, 1);
	/* s = 1.5: m = 1.5, 0.75 is the tie, 0.76 is not. */
	float y[5] = {-1.0f, 0.75f, -0.75f, 0.76f, 0.74f};
	expect_payload("s = 1.5", y, 5, 1.5, 1.5f,
		       (const uint8_t[]){0 + 27 + 9 + 2 * 3 + 1}, 1);
	/* s = 1.9: even the maximum... stays nonzero (2|c| = 2 > 1.9). */
	float w[5] = {1.0f, 0.95f, -0.96f, 0.0f, -1.0f};
	float m19 = (float)(1.9 * 1.0);
	expect_payload("s = 1.9", w, 5, 1.9, m19,
		       (const uint8_t[]){2 * 81 + 27 + 0 + 3 + 0}, 1);
	/* m is (float)(s * max|x|) computed in double. */
	float v[5] = {0.1f, -0.3f, 0.2f, 0.0f, 0.05f};
	float mv = (float)(1.75 * (double)0.3f);
	expect_payload("m = s * max", v, 5, 1.75, mv,
		       (const uint8_t[]){81 + 0 + 27 * 0 + 9 + 3 + 1}, 1);
	/* A subnormal maximum: 2|c| > m still decided exactly. */
	float sub[5] = {0x1p-149f, 0x3p-149f, -0x3p-149f, 0x1p-148f, 0.0f};
	/* m = 3*2^-149 (s = 1): 2*1 > 3? no; 2*3 > 3 yes; 2*2 > 3 yes. */
	expect_payload("subnormal m", sub, 5, 1.0, 0x3p-149f,
		       (const uint8_t[]){81 + 2 * 27 + 0 + 2 * 3 + 1}, 1);
	/* s * max overflowing float: m is FLT_MAX. */
	float big[5] = {FLT_MAX, -FLT_MAX, FLT_MAX / 2, 0, 1};
	expect_payload("m clamped to FLT_MAX", big, 5, 1.9, FLT_MAX,
		       (const uint8_t[]){2 * 81 + 0 + 9 + 3 + 1}, 1);
}

/* Random gradient-like data with long zero stretches. */
static float *sparse_data(gw_test_rng *r, size_t n, int density)
{
	float *x = malloc(n * sizeof(float));
	GW_CHECK(x, "out of memory");
	for (size_t i = 0; i < n; i++)
		x[i] = gw_test_below(r, 100) < (uint64_t)density
			       ? gw_test_uniform(r, -1.0f, 1.0f)
			       : gw_test_uniform(r, -0.01f, 0.01f);
	return x;
}

static void test_framing(void **state)
{
	(void)state;
	gw_test_rng r = {7};
	static const size_t budgets[] = {64, 65, 77, 100, 1424, 9000, 65535};
	static const int density[] = {0, 1, 5, 30, 100};
	for (size_t d = 0; d < GW_ARRAY_SIZE(density); d++) {
		size_t n = 50000 + (size_t)d;   /* not a multiple of 5 for d > 0 */
		float *x = sparse_data(&r, n, density[d]);
		for (size_t b = 0; b < GW_ARRAY_SIZE(budgets); b++) {
			gw_test_frames fr;
			encode(x, n, 1.0, budgets[b], &fr);
			uint64_t next = 0;
			for (size_t j = 0; j < fr.n; j++) {
				gw_frame_info h;
				GW_OK_CALL(gw_frame_verify(fr.f[j].data, fr.f[j].len, &h));
				GW_CHECK(h.start == next && h.start % 5 == 0,
					 "density %d budget %zu frame %zu starts at %llu",
					 density[d], budgets[b], j,
					 (unsigned long long)h.start);
				int last = j + 1 == fr.n;
				GW_CHECK(last ? h.start + h.count == n : h.count % 5 == 0,
					 "density %d budget %zu frame %zu: %u elements",
					 density[d], budgets[b], j, h.count);
				/* Greedy: every frame but the last fills its budget. */
				if (!last)
					GW_CHECK(fr.f[j].len == GW_MIN(budgets[b], (size_t)GW_FRAME_MAX),
						 "density %d budget %zu frame %zu: %zu bytes",
						 density[d], budgets[b], j, fr.f[j].len);
				/* Whole runs: the payload expands to exactly
				 * ceil(count / 5) bytes (else decode refuses). */
				uint64_t exp = 0;
				const uint8_t *p = fr.f[j].data + GW_FRAME_HDR_LEN + 4;
				for (uint32_t k = 0; k < h.payload_len; k++)
					exp += p[k] < 243 ? 1 : p[k] - 241u;
				GW_CHECK(exp == (h.count + 4u) / 5,
					 "frame %zu expands to %llu bytes for %u elements", j,
					 (unsigned long long)exp, h.count);
				next = h.start + h.count;
			}
			GW_CHECK(next == n, "frames cover %llu of %zu", (unsigned long long)next, n);
			gw_test_frames_free(&fr);
		}
		free(x);
	}
}

static void test_max_frame_elems(void **state)
{
	(void)state;
	float x[23];
	for (int i = 0; i < 23; i++)
		x[i] = (float)(i % 3) - 1.0f;
	static const unsigned lims[] = {5, 7, 10, 12, 22, 23, 100};
	for (size_t l = 0; l < GW_ARRAY_SIZE(lims); l++) {
		gw_encoder *enc = gw_test_encoder(GW_CODEC_3LC);
		GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_MAX_FRAME_ELEMS, lims[l]));
		gw_tensor t = gw_test_dense_tensor(1, x, 23);
		gw_test_frames fr;
		GW_OK_CALL(gw_test_encode_all(enc, &t, 65535, &fr));
		uint64_t next = 0;
		for (size_t j = 0; j < fr.n; j++) {
			gw_frame_info h;
			GW_OK_CALL(gw_frame_verify(fr.f[j].data, fr.f[j].len, &h));
			GW_CHECK(h.count <= lims[l] && h.start == next,
				 "limit %u: frame %zu has %u elements", lims[l], j, h.count);
			if (j + 1 < fr.n)
				GW_CHECK(h.count == lims[l] / 5 * 5,
					 "limit %u: frame %zu has %u elements, not %u",
					 lims[l], j, h.count, lims[l] / 5 * 5);
			next += h.count;
		}
		GW_CHECK(next == 23, "limit %u: %llu elements", lims[l], (unsigned long long)next);
		gw_test_frames_free(&fr);
		gw_encoder_free(enc);
	}
	/* Below 5 a frame cannot hold a whole byte: refused at begin, unless
	 * the tensor fits anyway. */
	gw_encoder *enc = gw_test_encoder(GW_CODEC_3LC);
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_MAX_FRAME_ELEMS, 4));
	gw_tensor t = gw_test_dense_tensor(1, x, 23);
	GW_EXPECT_RC(gw_encode_begin(enc, &t), GW_EBOUNDS, "max_frame_elems 4");
	t.dim = 4;
	GW_OK_CALL(gw_encode_begin(enc, &t));
	uint8_t buf[128];
	GW_CHECK(gw_encode_next(enc, buf, sizeof(buf)) > 0, "4 elements, limit 4");
	GW_EXPECT_RC(gw_encode_next(enc, buf, sizeof(buf)), 0, "done");
	gw_encoder_free(enc);
}

static void test_params_and_budget(void **state)
{
	(void)state;
	gw_bounds b;
	GW_OK_CALL(gw_param_bounds(GW_CODEC_3LC, GW_PARAM_SPARSITY, &b));
	GW_CHECK(b.lo == 1.0 && b.hi < 2.0 && b.hi > 1.9999 && b.def == 1.0 && !b.integer,
		 "sparsity bounds [%g, %.17g] default %g", b.lo, b.hi, b.def);
	GW_CHECK(gw_codec_by_name("3lc") == GW_CODEC_3LC, "name");
	GW_CHECK(gw_codec_caps(GW_CODEC_3LC) == (GW_CODEC_DENSE | GW_CODEC_LOSSY), "caps");
	gw_encoder *enc = gw_test_encoder(GW_CODEC_3LC);
	GW_EXPECT_RC(gw_encoder_set_param(enc, GW_PARAM_SPARSITY, 2.0), GW_EBOUNDS, "s = 2");
	GW_EXPECT_RC(gw_encoder_set_param(enc, GW_PARAM_SPARSITY, 0.99), GW_EBOUNDS, "s < 1");
	GW_EXPECT_RC(gw_encoder_set_param(enc, GW_PARAM_SPARSITY, NAN), GW_EBOUNDS, "s NaN");
	GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_SPARSITY, 1.9999));
	GW_EXPECT_RC(gw_encoder_set_param(enc, GW_PARAM_SEED, 1), GW_EPARAM, "seed");
	/* Sparse tensors are refused. */
	uint32_t k[2] = {1, 5};
	float v[2] = {1, 2};
	gw_tensor st = gw_test_sparse_tensor(1, 10, k, 32, v, 2);
	GW_EXPECT_RC(gw_encode_begin(enc, &st), GW_EUNSUPPORTED, "sparse");
	/* Smallest budget: header + m + one byte; below it GW_EBUDGET and the
	 * encoder stays put. */
	float x[10] = {1, 0, 0, 0, 0, 0, 0, 0, 0, -1};
	gw_tensor t = gw_test_dense_tensor(1, x, 10);
	int min = gw_encode_min_budget(enc, &t);
	GW_CHECK(min == GW_BUDGET_MIN, "min budget %d", min);
	GW_OK_CALL(gw_encode_begin(enc, &t));
	uint8_t buf[64];
	GW_EXPECT_RC(gw_encode_next(enc, buf, 63), GW_EBUDGET, "budget 63");
	int len = gw_encode_next(enc, buf, 64);
	GW_CHECK(len == GW_FRAME_HDR_LEN + 4 + 2, "frame of %d bytes", len);
	GW_EXPECT_RC(gw_encode_next(enc, buf, 64), 0, "done");
	/* Empty tensor: no frames. */
	t.dim = 0;
	GW_OK_CALL(gw_encode_begin(enc, &t));
	GW_EXPECT_RC(gw_encode_next(enc, buf, 64), 0, "empty tensor");
	gw_encoder_free(enc);
}

/* ---- the poisoned tensor (docs/wire-format.md 2.5) ------------------------- */

#define NP 5003

/* Every frame of a poisoned tensor: m bits 0x7fc00000, every payload byte
 * a zero run; at budget 100 its 60 payload bytes of runs cover 60 * 70
 * elements, so 5003 take two frames. */
static void expect_poison_frames(const char *what, gw_encoder *enc, const float *x)
{
	gw_tensor t = gw_test_dense_tensor(8, x, NP);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, 100, &fr));
	GW_CHECK(fr.n == 2, "%s: %zu frames for a poisoned tensor", what, fr.n);
	for (size_t j = 0; j < fr.n; j++) {
		gw_frame_info h;
		GW_OK_CALL(gw_frame_verify(fr.f[j].data, fr.f[j].len, &h));
		const uint8_t *p = fr.f[j].data + GW_FRAME_HDR_LEN;
		GW_CHECK(gw_test_ld32(p) == 0x7fc00000u, "%s: frame %zu m bits %08x",
			 what, j, gw_test_ld32(p));
		for (uint32_t k = 0; k < h.payload_len; k++)
			GW_CHECK(p[4 + k] >= 243 || p[4 + k] == 121,
				 "%s: frame %zu payload byte %u is %u, not a zero run",
				 what, j, k, p[4 + k]);
	}
	gw_test_frames_free(&fr);
}

static void test_poisoned_tensor(void **state)
{
	(void)state;
	float *x = malloc(NP * sizeof(float)), *out = malloc(NP * sizeof(float));
	GW_CHECK(x && out, "out of memory");
	gw_test_rng r = {3};
	static const uint32_t bad[] = {0x7fc00000u, 0xffc00001u, 0x7f800001u,
				       0x7f800000u, 0xff800000u};
	static const size_t where[] = {0, 1, 319, 320, NP / 2, NP - 1};
	for (int isa = 0; isa <= gw_cpu_best_isa(); isa++) {
		GW_OK_CALL(gw_cpu_force_isa(isa));
		for (size_t b = 0; b < GW_ARRAY_SIZE(bad); b++) {
			for (size_t w = 0; w < GW_ARRAY_SIZE(where); w++) {
				char what[96];
				snprintf(what, sizeof(what), "%s: %08x at %zu",
					 gw_cpu_isa_name(isa), bad[b], where[w]);
				for (size_t i = 0; i < NP; i++)
					x[i] = gw_test_uniform(&r, -1.0f, 1.0f);
				/* In g, without feedback and with. */
				gw_encoder *enc = gw_test_encoder(GW_CODEC_3LC);
				x[where[w]] = gw_test_float(bad[b]);
				expect_poison_frames(what, enc, x);
				gw_ef *ef = gw_ef_create(NP);
				GW_OK_CALL(gw_encoder_set_ef(enc, ef));
				for (size_t i = 0; i < NP; i++)
					gw_ef_data(ef)[i] = 0.5f;
				expect_poison_frames(what, enc, x);
				/* In the error buffer. */
				x[where[w]] = 0.25f;
				gw_ef_data(ef)[where[w]] = gw_test_float(bad[b]);
				expect_poison_frames(what, enc, x);
				gw_ef_free(ef);
				gw_encoder_free(enc);
			}
		}
		/* g + e overflowing to infinity. */
		gw_encoder *enc = gw_test_encoder(GW_CODEC_3LC);
		gw_ef *ef = gw_ef_create(NP);
		GW_OK_CALL(gw_encoder_set_ef(enc, ef));
		for (size_t i = 0; i < NP; i++)
			x[i] = gw_test_uniform(&r, -1.0f, 1.0f);
		x[777] = FLT_MAX;
		gw_ef_data(ef)[777] = FLT_MAX;
		expect_poison_frames("g + e overflows", enc, x);
		/* FLT_MAX alone is finite: m = FLT_MAX (s * max clamped). */
		GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_SPARSITY, 1.9));
		gw_tensor t = gw_test_dense_tensor(8, x, NP);
		gw_test_frames fr;
		GW_OK_CALL(gw_test_encode_all(enc, &t, 65535, &fr));
		GW_CHECK(gw_test_float(gw_test_ld32(fr.f[0].data + GW_FRAME_HDR_LEN)) == FLT_MAX,
			 "m of a tensor holding FLT_MAX at s = 1.9");
		gw_test_fill(out, NP, 0.0f);
		gw_test_decode_all(&fr, out, NP);
		GW_CHECK(out[777] == FLT_MAX, "FLT_MAX decoded to %a", (double)out[777]);
		GW_CHECK(gw_ef_data(ef)[777] == 0.0f, "error of FLT_MAX: %a",
			 (double)gw_ef_data(ef)[777]);
		gw_test_frames_free(&fr);
		gw_ef_free(ef);
		gw_encoder_free(enc);
	}
	gw_cpu_force_isa(-1);
	free(x);
	free(out);
}

GW_TEST_MAIN("3lc_encoding", 0,
	     cmocka_unit_test(test_zero_runs), cmocka_unit_test(test_base3_digits),
	     cmocka_unit_test(test_rounding_and_m), cmocka_unit_test(test_framing),
	     cmocka_unit_test(test_max_frame_elems),
	     cmocka_unit_test(test_params_and_budget),
	     cmocka_unit_test(test_poisoned_tensor))
