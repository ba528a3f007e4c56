/* DeepReduce value sections broken by hand are refused with the right code and read and write nothing out of bounds (every section sits in a buffer of exactly its size, the output is exactly n floats, both ending at a PROT_NONE page): f32 of the wrong length; deflate truncated, with trailing bytes, inflating to fewer or more than 4n bytes, a zlib bomb, raw deflate without the zlib wrapper, a bad Adler-32, a preset dictionary; qsgd truncated, trailing, s 0 or too big, bucket 0, NaN/Inf/negative/-0 norms, a level above s, a sign on level 0, a level in a zero bucket, pad bits; poly and dexp truncated, trailing, bad header fields, piece lengths 0 or not summing to n, NaN/Inf coefficients, parameters and bounds, values overflowing float32 at decode, maps with a duplicate, an entry >= n, pad bits. bound() agrees with decode() on the layout errors. */
#include "gw_test.h"

#include <math.h>
#include <zlib.h>

#include "../../codec/deepreduce/dr.h"

/* Decodes sec[0..len) as n values from exact-size guarded buffers and
 * expects rc; bound(), where the codec has one, must give rc too or accept
 * (it does not read the codes or the map). */
static void expect(const char *what, const struct dr_value_ops *ops,
		   const uint8_t *sec, size_t len, uint32_t n, int rc)
{
	gw_test_guard in, out;
	gw_test_guard_copy(&in, sec, len);
	gw_test_guard_alloc(&out, (size_t)n * sizeof(float));
	GW_EXPECT_RC(ops->decode(in.p, len, n, (float *)(void *)out.p), rc,
		     "%s/%s (%zu bytes, n %u)", ops->name, what, len, n);
	if (ops->bound) {
		float b;
		int brc = ops->bound(in.p, len, n, &b);
		GW_CHECK(brc == rc || brc == 0, "%s/%s: bound() says %s, decode %s",
			 ops->name, what, gw_error_name(brc), gw_error_name(rc));
		if (rc == 0)
			GW_CHECK(brc == 0 && isfinite(b) && b >= 0, "%s/%s: bound %g",
				 ops->name, what, (double)b);
	}
	gw_test_guard_free(&out);
	gw_test_guard_free(&in);
}

#define N 37u   /* not a power of two: map entries of 6 bits reach 63 */
static float vals[N];
static uint8_t sec[8192], bad[8192];

static size_t encode(const struct dr_value_ops *ops, const struct dr_value_cfg *cfg)
{
	gw_test_rng r = {77};
	for (uint32_t i = 0; i < N; i++)
		vals[i] = gw_test_uniform(&r, -1.0f, 1.0f);
	vals[3] = 0.0f;
	int len = ops->encode(vals, N, cfg, sec, sizeof(sec));
	GW_CHECK(len > 0, "%s: %s", ops->name, gw_error_name(len));
	return (size_t)len;
}

/* The common length mutations: truncated at every length, one byte more. */
static void lengths(const struct dr_value_ops *ops, size_t len, int code_short,
		    int code_long)
{
	expect("valid", ops, sec, len, N, 0);
	for (size_t l = 0; l < len; l++)
		expect("truncated", ops, sec, l, N, code_short);
	memcpy(bad, sec, len);
	bad[len] = 0;
	expect("trailing byte", ops, bad, len + 1, N, code_long);
	/* qsgd: 3 bits a value, so n - 1 may still fill the same bytes. */
	uint32_t fewer = ops == &dr_value_qsgd ? N - 3 : N - 1;
	expect("fewer values", ops, sec, len, fewer,
	       ops == &dr_value_deflate ? GW_ECORRUPT : code_long);
}

static void test_f32(void **state)
{
	(void)state;
	struct dr_value_cfg cfg = {0};
	size_t len = encode(&dr_value_f32, &cfg);
	expect("valid", &dr_value_f32, sec, len, N, 0);
	for (size_t l = 0; l < len; l++)
		expect("short", &dr_value_f32, sec, l, N, GW_ELENGTH);
	expect("long", &dr_value_f32, sec, len, N - 1, GW_ELENGTH);
}

/* vals deflated into bad: raw (no zlib wrapper), or with a preset
 * dictionary. Returns the length. */
static size_t deflate_vals(int dict)
{
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	if (dict) {
		GW_CHECK(deflateInit(&zs, 6) == Z_OK, "deflateInit");
		GW_CHECK(deflateSetDictionary(&zs, (const Bytef *)"gradwire", 8) == Z_OK,
			 "dictionary");
	} else {
		GW_CHECK(deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK,
			 "deflateInit2");
	}
	zs.next_in = (Bytef *)vals;
	zs.avail_in = sizeof(vals);
	zs.next_out = bad;
	zs.avail_out = sizeof(bad);
	GW_CHECK(deflate(&zs, Z_FINISH) == Z_STREAM_END, "deflate");
	size_t len = zs.total_out;
	deflateEnd(&zs);
	return len;
}

static void test_deflate(void **state)
{
	(void)state;
	struct dr_value_cfg cfg = {.zlevel = 9};
	size_t len = encode(&dr_value_deflate, &cfg);
	lengths(&dr_value_deflate, len, GW_ECORRUPT, GW_ECORRUPT);
	memcpy(bad, sec, len);
	bad[len - 1] ^= 1;   /* Adler-32 */
	expect("adler32", &dr_value_deflate, bad, len, N, GW_ECORRUPT);
	expect("n + 1: output too short", &dr_value_deflate, sec, len, N + 1,
	       GW_ECORRUPT);

	/* Raw deflate without the zlib header and trailer; a preset
	 * dictionary (FDICT), which is not part of the format. */
	expect("raw deflate", &dr_value_deflate, bad, deflate_vals(0), N, GW_ECORRUPT);
	expect("preset dictionary", &dr_value_deflate, bad, deflate_vals(1), N,
	       GW_ECORRUPT);

	/* A bomb: 1 MiB of zeros in about a kilobyte, for 16 values. */
	uint8_t *zeros = calloc(1, 1 << 20);
	GW_CHECK(zeros, "out of memory");
	uLongf bl = sizeof(bad);
	GW_CHECK(compress2(bad, &bl, zeros, 1 << 20, 9) == Z_OK, "compress2");
	expect("bomb", &dr_value_deflate, bad, bl, 16, GW_ECORRUPT);
	/* The same stream is fine where it belongs. */
	gw_test_guard in, out;
	gw_test_guard_copy(&in, bad, bl);
	gw_test_guard_alloc(&out, 1 << 20);
	GW_OK_CALL(dr_value_deflate.decode(in.p, bl, 1 << 18, (float *)(void *)out.p));
	gw_test_guard_free(&out);
	gw_test_guard_free(&in);
	free(zeros);

	/* Two streams back to back: the section ends after the first. */
	memcpy(bad, sec, len);
	memcpy(bad + len, sec, len);
	expect("two streams", &dr_value_deflate, bad, 2 * len, N, GW_ECORRUPT);
	expect("empty", &dr_value_deflate, bad, 0, N, GW_ECORRUPT);
}

/* The section sec[0..len) with stmt applied to a copy (bad) decodes, by
 * the function's ops, as code. */
#define MUT(what, code, stmt)                                                  \
	do {                                                                   \
		memcpy(bad, sec, len);                                         \
		stmt;                                                          \
		expect(what, ops, bad, len, N, code);                          \
	} while (0)

static void put_f32(uint8_t *p, uint32_t bits)
{
	gw_st32(p, bits);
}

static void test_qsgd(void **state)
{
	(void)state;
	/* s = 2: levels of 2 bits, values 3 is above s. bucket 10: 4 norms. */
	struct dr_value_cfg cfg = {.levels = 2, .bucket = 10, .seed = 3};
	size_t len = encode(&dr_value_qsgd, &cfg);
	GW_CHECK(len == 6 + 16 + (N * 3 + 7) / 8, "qsgd length %zu", len);
	lengths(&dr_value_qsgd, len, GW_ELENGTH, GW_ELENGTH);
	const struct dr_value_ops *ops = &dr_value_qsgd;
	MUT("s 0", GW_ECORRUPT, gw_st16(bad, 0));
	MUT("s too big", GW_ECORRUPT, gw_st16(bad, DR_LEVELS_MAX + 1));
	MUT("bucket 0", GW_ECORRUPT, gw_st32(bad + 2, 0));
	MUT("bucket 11: 4 norms still, other length", GW_ECORRUPT,
	    (gw_st32(bad + 2, 11), bad[len - 1] |= 0x80));
	MUT("bucket 9: 5 norms", GW_ELENGTH, gw_st32(bad + 2, 9));
	MUT("s 3: same width", 0, gw_st16(bad, 3));
	MUT("s 4: wider codes", GW_ELENGTH, gw_st16(bad, 4));
	MUT("NaN norm", GW_ECORRUPT, put_f32(bad + 6 + 4, 0x7fc00000u));
	MUT("Inf norm", GW_ECORRUPT, put_f32(bad + 6 + 8, 0x7f800000u));
	MUT("negative norm", GW_ECORRUPT, put_f32(bad + 6, 0xbf800000u));
	MUT("-0 norm", GW_ECORRUPT, put_f32(bad + 6 + 12, 0x80000000u));
	/* Codes: value i at bits 3i (level, 2 bits) and 3i + 2 (sign). */
	const uint8_t *codes = sec + 6 + 16;
	size_t co = 6 + 16;
	MUT("level 3 > s", GW_ECORRUPT, bad[co] |= 0x03);
	uint32_t z = 0;   /* a value whose level is 0 */
	while (z < N && ((codes[3 * z / 8] >> (3 * z % 8)) & 3))
		z++;
	GW_CHECK(z < N, "no zero level");
	MUT("sign on level 0", GW_ECORRUPT,
	    bad[co + (3 * z + 2) / 8] |= (uint8_t)(1u << ((3 * z + 2) % 8)));
	MUT("pad bit", GW_ECORRUPT, bad[len - 1] |= 0x80);   /* 111 bits used */
	/* A zero bucket with a level in it. */
	for (uint32_t i = 0; i < 10; i++)
		vals[i] = 0.0f;
	int l2 = dr_value_qsgd.encode(vals, N, &cfg, sec, sizeof(sec));
	GW_CHECK(l2 == (int)len, "zero bucket: %d", l2);
	expect("zero bucket", ops, sec, len, N, 0);
	MUT("level in a zero bucket", GW_ECORRUPT, bad[co] |= 0x01);
}

/* Offsets of a poly section with degree 1 and pieces of lengths > 1:
 * header 12, pieces of 4 + 8 bytes. */
static void test_poly(void **state)
{
	(void)state;
	struct dr_value_cfg cfg = {.degree = 1, .pieces = 3};
	size_t len = encode(&dr_value_poly, &cfg);
	const struct dr_value_ops *ops = &dr_value_poly;
	unsigned np = gw_ld16(sec + 2);
	GW_CHECK(np == 3 && len == 12 + 3 * 12 + (N * 6 + 7) / 8,
		 "poly: %u pieces, %zu bytes", np, len);
	lengths(ops, len, GW_ELENGTH, GW_ELENGTH);
	uint32_t L0 = gw_ld32(sec + 12), L1 = gw_ld32(sec + 24);
	size_t map = 12 + 36;
	MUT("degree 9", GW_ECORRUPT, bad[0] = DR_DEGREE_MAX + 1);
	MUT("degree 2: longer pieces", GW_ELENGTH, bad[0] = 2);
	MUT("reserved byte", GW_ECORRUPT, bad[1] = 1);
	MUT("0 pieces", GW_ECORRUPT, gw_st16(bad + 2, 0));
	MUT("257 pieces", GW_ECORRUPT, gw_st16(bad + 2, 257));
	MUT("2 pieces", GW_ELENGTH, gw_st16(bad + 2, 2));
	MUT("n field", GW_ELENGTH, gw_st32(bad + 4, N + 1));
	MUT("NaN bound", GW_ECORRUPT, put_f32(bad + 8, 0x7fc00000u));
	MUT("Inf bound", GW_ECORRUPT, put_f32(bad + 8, 0x7f800000u));
	MUT("negative bound", GW_ECORRUPT, put_f32(bad + 8, 0xbf800000u));
	MUT("piece length 0", GW_ECORRUPT, gw_st32(bad + 12, 0));
	MUT("lengths sum to n + 1", GW_ELENGTH, gw_st32(bad + 12, L0 + 1));
	MUT("lengths sum to n - 1", GW_ELENGTH, gw_st32(bad + 12, L0 - 1));
	MUT("lengths moved, sum n", 0, (gw_st32(bad + 12, L0 + 1),
					gw_st32(bad + 24, L1 - 1)));
	MUT("first piece huge", GW_ELENGTH, gw_st32(bad + 12, 0xffffffffu));
	MUT("NaN coefficient", GW_ECORRUPT, put_f32(bad + 16, 0x7fc00001u));
	MUT("Inf coefficient", GW_ECORRUPT, put_f32(bad + 32, 0xff800000u));
	/* Finite coefficients whose sum overflows float32 at x = 1. */
	MUT("overflow", GW_ECORRUPT, (put_f32(bad + 16, 0x7f7fffffu),
				      put_f32(bad + 20, 0x7f7fffffu)));
	/* Map: 6 bits per entry, entry i at bit 6i. */
	MUT("map duplicate", GW_ECORRUPT,
	    (bad[map] = (uint8_t)((bad[map] & 0xc0) | (((bad[map] >> 6) | (bad[map + 1] << 2)) & 0x3f))));
	MUT("map entry 63 >= n", GW_ECORRUPT, bad[map] |= 0x3f);
	MUT("map pad bits", GW_ECORRUPT, bad[len - 1] |= 0x80);   /* 222 bits */
	/* One piece per value, degree 8 given but 0 used. */
	struct dr_value_cfg c8 = {.degree = 8, .pieces = 256};
	len = encode(ops, &c8);
	expect("degree 8, short pieces", ops, sec, len, N, 0);
	/* n = 1: no map bits at all. */
	float one = 0.5f;
	int l1 = ops->encode(&one, 1, &cfg, sec, sizeof(sec));
	GW_CHECK(l1 == 12 + 8, "n = 1: %d bytes", l1);
	expect("n = 1", ops, sec, (size_t)l1, 1, 0);
	expect("n = 1 as n = 2", ops, sec, (size_t)l1, 2, GW_ELENGTH);
	memcpy(bad, sec, (size_t)l1);
	bad[l1] = 0;
	expect("n = 1 trailing", ops, bad, (size_t)l1 + 1, 1, GW_ELENGTH);
}

static void test_dexp(void **state)
{
	(void)state;
	struct dr_value_cfg cfg = {0};
	size_t len = encode(&dr_value_dexp, &cfg);
	const struct dr_value_ops *ops = &dr_value_dexp;
	GW_CHECK(len == 20 + (N * 6 + 7) / 8, "dexp: %zu bytes", len);
	lengths(ops, len, GW_ELENGTH, GW_ELENGTH);
	for (int k = 0; k < 4; k++) {
		MUT("NaN parameter", GW_ECORRUPT, put_f32(bad + 4 * k, 0x7fc00000u));
		MUT("Inf parameter", GW_ECORRUPT, put_f32(bad + 4 * k, 0xff800000u));
	}
	MUT("NaN bound", GW_ECORRUPT, put_f32(bad + 16, 0xffc00000u));
	MUT("Inf bound", GW_ECORRUPT, put_f32(bad + 16, 0x7f800000u));
	MUT("-0 bound", GW_ECORRUPT, put_f32(bad + 16, 0x80000000u));
	MUT("e^1000 overflows", GW_ECORRUPT, (put_f32(bad, 0x3f800000u),
					      put_f32(bad + 4, 0x447a0000u)));
	MUT("Inf - Inf", GW_ECORRUPT, (put_f32(bad, 0x3f800000u),
				       put_f32(bad + 4, 0x447a0000u),
				       put_f32(bad + 8, 0xbf800000u),
				       put_f32(bad + 12, 0x447a0000u)));
	MUT("huge but finite", GW_ECORRUPT, (put_f32(bad, 0x7f7fffffu),
					     put_f32(bad + 8, 0x7f7fffffu),
					     put_f32(bad + 4, 0),
					     put_f32(bad + 12, 0)));
	MUT("map duplicate", GW_ECORRUPT,
	    (bad[20] = (uint8_t)((bad[20] & 0xc0) | (((bad[20] >> 6) | (bad[21] << 2)) & 0x3f))));
	MUT("map entry 63 >= n", GW_ECORRUPT, bad[20] |= 0x3f);
	MUT("map pad bits", GW_ECORRUPT, bad[len - 1] |= 0x80);
	expect("n = 0", ops, sec, 20, 0, GW_ELENGTH);
}

GW_TEST_MAIN("dr_value_hostile", 0,
	     cmocka_unit_test(test_f32), cmocka_unit_test(test_deflate),
	     cmocka_unit_test(test_qsgd), cmocka_unit_test(test_poly),
	     cmocka_unit_test(test_dexp))
