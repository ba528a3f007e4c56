/* Per-codec payload forgeries (hostile_payloads.h), the table of them and
 * those of raw, bf16, int8, 3lc, terngrad and onebit (top-k and deepreduce:
 * hostile_sparse.c): each takes a valid frame of its codec, breaks one
 * field of the codec's own layout
 * (docs/wire-format.md section 4), reseals it unless the checksum is the
 * point, and expects the exact GW_E* code, nothing read past the frame and
 * nothing written (gw_test_decode_forged); the poison markers (a NaN scale)
 * decode to NaN. */
#include "gw_test.h"

#include <float.h>
#include <math.h>

#include "hostile_payloads.h"

int hostile_forged(uint8_t *f, size_t len, uint64_t out_len, int seal, int want,
		   const char *what)
{
	if (seal)
		gw_frame_seal(f, len);
	return gw_test_decode_forged(f, len, out_len, want, what);
}

/* One frame of t at budget 65535 (fails unless it is one), copied into a
 * buffer with spare room, and a second copy kept as *orig. */
static uint8_t *encode_one(int id, const gw_tensor *t, size_t *len, uint8_t **orig)
{
	gw_encoder *enc = gw_test_encoder(id);
	if (gw_param_bounds(id, GW_PARAM_SEED, NULL) == 0)
		GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_SEED, 3));
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, t, 65535, &fr));
	GW_CHECK(fr.n == 1, "%s: %zu frames", gw_codec_name(id), fr.n);
	uint8_t *f = calloc(1, fr.f[0].len + 256);
	*orig = calloc(1, fr.f[0].len + 256);
	GW_CHECK(f && *orig, "out of memory");
	memcpy(f, fr.f[0].data, fr.f[0].len);
	memcpy(*orig, fr.f[0].data, fr.f[0].len);
	*len = fr.f[0].len;
	gw_test_frames_free(&fr);
	gw_encoder_free(enc);
	return f;
}

/* A frame f[0..len) whose scale or levels say "poisoned" (NaN), sealed,
 * decodes its count values to NaN and nothing else. */
static void expect_nan(uint8_t *f, size_t len, uint32_t count, uint64_t out_len,
		       const char *what)
{
	gw_frame_seal(f, len);
	float *out = calloc(out_len, sizeof(float));
	GW_CHECK(out, "out of memory");
	GW_EXPECT_RC(gw_decode(f, len, out, out_len), (int)count, "%s", what);
	for (uint64_t i = 0; i < out_len; i++)
		GW_CHECK(i < count ? isnan(out[i]) : out[i] == 0.0f,
			 "%s: element %llu decoded to %a", what, (unsigned long long)i,
			 (double)out[i]);
	free(out);
}

/* Twelve values: 3 bytes of trits (the last with 3 pad trits), 2 of bits. */
static const float vals[12] = {0.5f, -1.0f, 0.25f, 0.0f, -0.75f, 1.0f,
			       0.1f, -0.2f, 0.3f, -0.4f, 0.9f, -0.6f};

/* The twelve values as one dense frame (and its pristine copy). */
static uint8_t *encode12(int id, size_t *len, uint8_t **orig)
{
	gw_tensor t = gw_test_dense_tensor(1, vals, 12);
	return encode_one(id, &t, len, orig);
}

/* The same, checked to be want_len bytes and to decode as it is. */
static uint8_t *valid12(int id, size_t want_len, uint64_t out_len, size_t *len,
			uint8_t **orig)
{
	uint8_t *f = encode12(id, len, orig);
	GW_CHECK(*len == want_len, "%s: frame of %zu bytes, want %zu",
		 gw_codec_name(id), *len, want_len);
	hostile_forged(f, *len, out_len, 1, 12, "valid frame");
	return f;
}

#define OUT_LEN 64
#define P (GW_FRAME_HDR_LEN)       /* the params */

/* ---- raw, bf16, int8: keys are a plain array ------------------------------ */

enum { KN = 300, KDIM = 1000 };

static uint64_t get_key(const uint8_t *keys, unsigned kb, uint32_t i)
{
	return kb == 8 ? gw_test_ld64(keys + 8 * (size_t)i)
		       : gw_test_ld32(keys + 4 * (size_t)i);
}

static void put_key(uint8_t *keys, unsigned kb, uint32_t i, uint64_t k)
{
	if (kb == 8)
		gw_test_st64(keys + 8 * (size_t)i, k);
	else
		gw_test_st32(keys + 4 * (size_t)i, (uint32_t)k);
}

static const char *const kind_name[3] = {"dense", "sparse32", "sparse64"};

/* The first frame, at budget 256, of 300 values (every seventh 0) dense
 * (kind 0) or at keys 3 i + 2 of 1000 with 32-bit (kind 1) or 64-bit keys
 * (kind 2): the frame, its header, and a copy b to forge. */
struct first {
	int id, kind;
	uint64_t out_len;
	gw_test_frame f;
	gw_frame_info h;
	uint8_t *b;
};

static void first_frame(struct first *k, int id, int kind)
{
	static float v[KN];
	static uint32_t k32[KN];
	static uint64_t k64[KN];
	gw_test_rng r = {7};
	for (int i = 0; i < KN; i++) {
		v[i] = i % 7 == 0 ? 0.0f : gw_test_uniform(&r, -2.0f, 2.0f);
		k32[i] = (uint32_t)(3 * i + 2);
		k64[i] = (uint64_t)(3 * i + 2);
	}
	gw_encoder *enc = gw_test_encoder(id);
	gw_tensor t = kind == 0 ? gw_test_dense_tensor(9, v, KN)
		    : kind == 1 ? gw_test_sparse_tensor(9, KDIM, k32, 32, v, KN)
				: gw_test_sparse_tensor(9, KDIM, k64, 64, v, KN);
	gw_test_frames fr;
	GW_OK_CALL(gw_test_encode_all(enc, &t, 256, &fr));
	GW_CHECK(fr.n >= 1, "%s: no frames", gw_codec_name(id));
	*k = (struct first){.id = id, .kind = kind, .out_len = t.dim, .f = fr.f[0]};
	for (size_t j = 1; j < fr.n; j++)
		free(fr.f[j].data);
	free(fr.f);
	gw_encoder_free(enc);
	GW_OK_CALL(gw_frame_verify(k->f.data, k->f.len, &k->h));
	k->b = malloc(k->f.len);
	GW_CHECK(k->b, "out of memory");
}

static void first_free(struct first *k)
{
	free(k->b);
	free(k->f.data);
}

/* k's frame with the statements of the variadic part applied to b (the
 * copy), resealed, must decode as want. */
#define FORGE(k, want, desc, ...)                                              \
	do {                                                                   \
		memcpy(b, (k)->f.data, (k)->f.len);                            \
		__VA_ARGS__;                                                   \
		char what_[128];                                               \
		snprintf(what_, sizeof(what_), "%s %s frame: %s",              \
			 gw_codec_name((k)->id), kind_name[(k)->kind], desc);  \
		hostile_forged(b, (k)->f.len, (k)->out_len, 1, want, what_);           \
	} while (0)

static void keys_attack(int id)
{
	for (int kind = 1; kind < 3; kind++) {
		struct first k;
		first_frame(&k, id, kind);
		const gw_frame_info h = k.h;
		uint8_t *b = k.b;
		GW_CHECK(h.count >= 3, "%s: first frame has %u keys, want >= 3",
			 gw_codec_name(id), h.count);
		unsigned kb = kind == 2 ? 8 : 4;
		size_t koff = GW_FRAME_HDR_LEN + h.param_len;
		uint8_t *keys = b + koff;
		const uint8_t *orig = k.f.data + koff;
		uint32_t n = h.count;
		uint64_t k0 = get_key(orig, kb, 0), k1 = get_key(orig, kb, 1);
		uint64_t kl = get_key(orig, kb, n - 1);
		GW_CHECK(k0 == h.start && kl == h.start + h.span - 1,
			 "%s: keys %llu..%llu do not span the header range [%llu,+%u)",
			 gw_codec_name(id), (unsigned long long)k0,
			 (unsigned long long)kl, (unsigned long long)h.start, h.span);
		FORGE(&k, GW_ECORRUPT, "keys 0 and 1 swapped",
		      put_key(keys, kb, 0, k1); put_key(keys, kb, 1, k0));
		FORGE(&k, GW_ECORRUPT, "key 1 duplicates key 0", put_key(keys, kb, 1, k0));
		FORGE(&k, GW_ECORRUPT, "last key = start + span (outside span)",
		      put_key(keys, kb, n - 1, h.start + h.span));
		FORGE(&k, GW_ECORRUPT, "first key below start",
		      put_key(keys, kb, 0, h.start - 1));
		FORGE(&k, GW_ECORRUPT, "last key far above the span",
		      put_key(keys, kb, n - 1, kl + (1ull << 31)));
		if (kb == 8)
			FORGE(&k, GW_ECORRUPT, "64-bit key above 2^32 outside span",
			      put_key(keys, kb, n - 1, kl + (1ull << 32)));
		FORGE(&k, GW_ECORRUPT, "middle key below its predecessor",
		      put_key(keys, kb, n / 2, h.start));
		/* Keys in the span but at or past the end of the output:
		 * shift the whole frame to end exactly at out_len. */
		uint64_t shift = k.out_len - h.start - h.span + 1;
		FORGE(&k, GW_ERANGE, "frame moved to end at out_len",
		      gw_test_st64(b + GW_TEST_OFF_START, h.start + shift);
		      for (uint32_t i = 0; i < n; i++)
			      put_key(keys, kb, i, get_key(orig, kb, i) + shift));
		/* The unmodified frame into an output one short of its last key. */
		k.out_len = kl;
		FORGE(&k, GW_ERANGE, "into an output one short of its last key", (void)0);
		first_free(&k);
	}
}

/* int8: the keys, then codes of -128 and scales that are negative or
 * infinite; a NaN scale is the poison marker, accepted. */
static void int8_attack(int id)
{
	keys_attack(id);
	for (int kind = 0; kind < 3; kind++) {
		struct first k;
		first_frame(&k, id, kind);
		uint8_t *b = k.b;
		GW_CHECK(k.h.param_len == 4, "int8 param_len %u, want 4", k.h.param_len);
		size_t soff = GW_FRAME_HDR_LEN;
		size_t qoff = GW_FRAME_HDR_LEN + 4 + (size_t)k.h.count *
			      (kind == 0 ? 0 : kind == 1 ? 4 : 8);
		FORGE(&k, GW_ECORRUPT, "first byte -128", b[qoff] = 0x80);
		FORGE(&k, GW_ECORRUPT, "last byte -128", b[k.f.len - 1] = 0x80);
		FORGE(&k, GW_ECORRUPT, "scale -1", gw_test_st32(b + soff, gw_test_bits(-1.0f)));
		FORGE(&k, GW_ECORRUPT, "scale -FLT_MIN", gw_test_st32(b + soff, 0x80800000u));
		FORGE(&k, GW_ECORRUPT, "scale +Inf", gw_test_st32(b + soff, 0x7f800000u));
		FORGE(&k, GW_ECORRUPT, "scale -Inf", gw_test_st32(b + soff, 0xff800000u));
		/* NaN scale is the poison marker: accepted, all NaN. */
		FORGE(&k, (int)k.h.count, "NaN scale (a poisoned frame)",
		      gw_test_st32(b + soff, 0x7fc00000u));
		first_free(&k);
	}
}

/* ---- 3lc ------------------------------------------------------------------- */

#define T3 (GW_FRAME_HDR_LEN + 4)   /* 3lc and terngrad: the trit bytes */
#define OUT_3LC 400

/* The frame orig[0..len) with one payload byte more (filler) and one
 * less, payload_len saying so: both refused. */
static void payload_lengths(uint8_t *f, const uint8_t *orig, size_t len,
			    uint8_t filler, const char *codec)
{
	uint32_t pl = gw_test_ld32(orig + GW_TEST_OFF_PAYLOAD_LEN);
	char what[64];
	memcpy(f, orig, len);
	f[len] = filler;
	gw_test_st32(f + GW_TEST_OFF_PAYLOAD_LEN, pl + 1);
	snprintf(what, sizeof(what), "%s extra payload byte", codec);
	hostile_forged(f, len + 1, OUT_LEN, 1, GW_ELENGTH, what);
	memcpy(f, orig, len);
	gw_test_st32(f + GW_TEST_OFF_PAYLOAD_LEN, pl - 1);
	snprintf(what, sizeof(what), "%s short payload", codec);
	hostile_forged(f, len - 1, OUT_LEN, 1, GW_ELENGTH, what);
}

/* Twelve values in trits (3lc, terngrad) are 3 bytes; the last holds 2
 * and 3 pad digits, which must be 1 (q = 0): byte % 27 == 13. Every other
 * pad is refused. */
static void pad_trits(uint8_t *f, const uint8_t *orig, size_t len, uint64_t out_len,
		      const char *what)
{
	for (unsigned pad = 0; pad < 27; pad++) {
		memcpy(f, orig, len);
		f[T3 + 2] = (uint8_t)(f[T3 + 2] - f[T3 + 2] % 27 + pad);
		hostile_forged(f, len, out_len, 1, pad == 13 ? 12 : GW_ECORRUPT, what);
	}
}

/* Sets the payload of frame f to p[0..plen) (and payload_len); returns the
 * new frame length. */
static size_t set_payload_3lc(uint8_t *f, const uint8_t *p, size_t plen)
{
	memcpy(f + T3, p, plen);
	gw_test_st32(f + GW_TEST_OFF_PAYLOAD_LEN, (uint32_t)plen);
	return T3 + plen;
}

/* Bad m (negative, -0, infinite), start not a multiple of 5, param_len
 * other than 4, not resealed. */
static void threelc_params(int id)
{
	size_t len;
	uint8_t *orig, *f = valid12(id, T3 + 3, OUT_3LC, &len, &orig);
	static const float bad_m[] = {-1.0f, -0.0f, INFINITY, -INFINITY, -0x1p-149f,
				      -FLT_MAX};
	for (size_t i = 0; i < GW_ARRAY_SIZE(bad_m); i++) {
		memcpy(f, orig, len);
		gw_stf32(f + P, bad_m[i]);
		hostile_forged(f, len, OUT_3LC, 1, GW_ECORRUPT, "3lc bad m");
	}
	static const float ok_m[] = {0.0f, 0x1p-149f, FLT_MAX, 3.0f};
	for (size_t i = 0; i < GW_ARRAY_SIZE(ok_m); i++) {
		memcpy(f, orig, len);
		gw_stf32(f + P, ok_m[i]);
		hostile_forged(f, len, OUT_3LC, 1, 12, "3lc good m");
	}
	for (unsigned st = 1; st < 5; st++) {
		memcpy(f, orig, len);
		gw_test_st64(f + GW_TEST_OFF_START, st);
		hostile_forged(f, len, OUT_3LC, 1, GW_ECORRUPT, "3lc start % 5");
	}
	memcpy(f, orig, len);
	gw_test_st64(f + GW_TEST_OFF_START, 385);
	hostile_forged(f, len, OUT_3LC, 1, 12, "3lc start 385");
	/* param_len other than 4 (payload shifted accordingly). */
	static const uint8_t plens[] = {0, 3, 5, 8};
	for (size_t i = 0; i < sizeof(plens); i++) {
		uint8_t g[T3 + 16] = {0};
		memcpy(g, orig, GW_FRAME_HDR_LEN);
		g[GW_TEST_OFF_PARAM_LEN] = plens[i];
		memcpy(g + GW_FRAME_HDR_LEN + plens[i], orig + T3, 3);
		hostile_forged(g, GW_FRAME_HDR_LEN + plens[i] + 3, OUT_3LC, 1, GW_ELENGTH,
		       "3lc param_len");
	}
	memcpy(f, orig, len);
	f[len - 1] ^= 1;
	hostile_forged(f, len, OUT_3LC, 0, GW_ECHECKSUM, "3lc checksum");
	/* A NaN m is the poison value: every element NaN, nothing else. */
	static const uint32_t nans[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fffffffu};
	for (size_t k = 0; k < GW_ARRAY_SIZE(nans); k++) {
		char what[32];
		snprintf(what, sizeof(what), "3lc NaN m %08x", nans[k]);
		memcpy(f, orig, len);
		gw_test_st32(f + P, nans[k]);
		expect_nan(f, len, 12, OUT_3LC, what);
	}
	free(f);
	free(orig);
}

/* Pad trits other than 1, runs as last byte, payloads expanding to the
 * wrong number of bytes, long literal stretches the SIMD paths take 16
 * bytes at a time, an output too short. */
static void threelc_payload(int id)
{
	size_t len;
	uint8_t *orig, *f = encode12(id, &len, &orig);
	pad_trits(f, orig, len, OUT_3LC, "3lc pad trits");
	/* A run byte as last byte is five zeros: pad fine. */
	uint8_t run_last[] = {orig[T3], 243};
	len = set_payload_3lc(f, run_last, 2);
	hostile_forged(f, len, OUT_3LC, 1, 12, "3lc run as last byte");
	static const struct {
		uint8_t p[8];
		size_t n;
		const char *what;
	} bad[] = {
		{{0}, 0, "empty payload"},
		{{121}, 1, "1 byte for 3"},
		{{121, 121}, 2, "2 bytes for 3"},
		{{121, 121, 121, 121}, 4, "4 bytes for 3"},
		{{244}, 1, "run of 3 + nothing... exact"},
		{{245}, 1, "run of 4 for 3"},
		{{243}, 1, "run of 2 for 3"},
		{{255}, 1, "run of 14 for 3"},
		{{121, 243}, 2, "1 + 2 = 3 exact"},
		{{243, 121, 121}, 3, "2 + 1 + 1 for 3"},
		{{255, 255, 255, 255}, 4, "56 for 3"},
	};
	for (size_t i = 0; i < GW_ARRAY_SIZE(bad); i++) {
		memcpy(f, orig, T3);
		len = set_payload_3lc(f, bad[i].p, bad[i].n);
		uint64_t exp = 0;
		for (size_t k = 0; k < bad[i].n; k++)
			exp += bad[i].p[k] < 243 ? 1 : bad[i].p[k] - 241u;
		hostile_forged(f, len, OUT_3LC, 1, exp == 3 ? 12 : GW_ELENGTH, bad[i].what);
	}
	/* A big frame: count 5000 (1000 bytes), payloads one byte short or
	 * long, in many shapes. */
	uint8_t *g = calloc(1, T3 + 4096);
	GW_CHECK(g, "out of memory");
	memcpy(g, orig, T3);
	gw_test_st32(g + GW_TEST_OFF_COUNT, 5000);
	gw_test_st32(g + GW_TEST_OFF_SPAN, 5000);
	gw_test_rng r = {5};
	for (int round = 0; round < 200; round++) {
		uint8_t p[2048];
		size_t n = 0;
		uint64_t exp = 0;
		uint64_t target = 1000 + (round % 3) - 1;   /* 999, 1000, 1001 */
		while (exp < target) {
			unsigned b;
			switch (gw_test_below(&r, 3)) {
			case 0: b = 243 + (unsigned)gw_test_below(&r, 13); break;
			case 1: b = 121; break;
			default: b = (unsigned)gw_test_below(&r, 243);
			}
			unsigned e = b < 243 ? 1 : b - 241;
			if (exp + e > target)
				b = 121, e = 1;
			p[n++] = (uint8_t)b;
			exp += e;
		}
		size_t glen = set_payload_3lc(g, p, n);
		hostile_forged(g, glen, 6000, 1, target == 1000 ? 5000 : GW_ELENGTH,
		       "3lc big frame");
	}
	/* Output too short for the range: GW_ERANGE, nothing written. */
	memcpy(f, orig, len = T3 + 3);
	hostile_forged(f, len, 11, 1, GW_ERANGE, "3lc output of 11 for 12");
	free(g);
	free(f);
	free(orig);
}

static void threelc_attack(int id)
{
	threelc_params(id);
	threelc_payload(id);
}

/* ---- terngrad ---------------------------------------------------------------- */

/* Trit bytes above 242, pad trits, bad scales, not resealed; NaN scale. */
static void terngrad_dense(int id)
{
	size_t len;
	uint8_t *orig, *f = valid12(id, T3 + 3, OUT_LEN, &len, &orig);
	static const uint8_t bad_bytes[] = {243, 250, 255};
	for (size_t i = 0; i < sizeof(bad_bytes); i++) {
		for (int j = 0; j < 3; j++) {
			memcpy(f, orig, len);
			f[T3 + j] = bad_bytes[i];
			hostile_forged(f, len, OUT_LEN, 1, GW_ECORRUPT, "terngrad trit byte > 242");
		}
	}
	memcpy(f, orig, len);
	pad_trits(f, orig, len, OUT_LEN, "terngrad padding trits");
	static const float bad_scale[] = {-1.0f, -0.0f, INFINITY, -INFINITY,
					  -0x1p-149f};
	for (size_t i = 0; i < GW_ARRAY_SIZE(bad_scale); i++) {
		memcpy(f, orig, len);
		gw_stf32(f + P, bad_scale[i]);
		hostile_forged(f, len, OUT_LEN, 1, GW_ECORRUPT, "terngrad bad scale");
	}
	memcpy(f, orig, len);
	f[len - 1] ^= 1;
	hostile_forged(f, len, OUT_LEN, 0, GW_ECHECKSUM, "terngrad checksum");
	/* NaN scale: the poison value. */
	memcpy(f, orig, len);
	gw_stf32(f + P, NAN);
	expect_nan(f, len, 12, OUT_LEN, "terngrad NaN scale");
	free(f);
	free(orig);
}

/* param_len, payload length, counts that need other lengths, ranges past
 * the output, starts off a multiple of 5, a truncated buffer. */
static void terngrad_lengths(int id)
{
	size_t len;
	uint8_t *orig, *f = encode12(id, &len, &orig);
	f[GW_TEST_OFF_PARAM_LEN] = 0;   /* the scale counted as payload */
	gw_test_st32(f + GW_TEST_OFF_PAYLOAD_LEN, 7);
	hostile_forged(f, len, OUT_LEN, 1, GW_ELENGTH, "terngrad param_len 0");
	memcpy(f, orig, len);
	f[GW_TEST_OFF_PARAM_LEN] = 5;
	gw_test_st32(f + GW_TEST_OFF_PAYLOAD_LEN, 2);
	hostile_forged(f, len, OUT_LEN, 1, GW_ELENGTH, "terngrad param_len 5");
	payload_lengths(f, orig, len, 121, "terngrad");   /* 121: valid trits */
	memcpy(f, orig, len);
	gw_test_st32(f + GW_TEST_OFF_COUNT, 16);   /* needs 4 bytes */
	gw_test_st32(f + GW_TEST_OFF_SPAN, 16);
	hostile_forged(f, len, OUT_LEN, 1, GW_ELENGTH, "terngrad count 16");
	memcpy(f, orig, len);
	gw_test_st32(f + GW_TEST_OFF_COUNT, 10);   /* needs 2 */
	gw_test_st32(f + GW_TEST_OFF_SPAN, 10);
	hostile_forged(f, len, OUT_LEN, 1, GW_ELENGTH, "terngrad count 10");
	memcpy(f, orig, len);
	hostile_forged(f, len, 11, 1, GW_ERANGE, "terngrad out_len 11");
	gw_test_st64(f + GW_TEST_OFF_START, OUT_LEN - 11);
	hostile_forged(f, len, OUT_LEN, 1, GW_ERANGE, "terngrad start past end");
	for (uint64_t st = 1; st < 10; st++) {
		memcpy(f, orig, len);
		gw_test_st64(f + GW_TEST_OFF_START, st);
		hostile_forged(f, len, OUT_LEN, 1, st % 5 ? GW_ECORRUPT : 12,
		       "terngrad start not a multiple of 5");
	}
	memcpy(f, orig, len);
	hostile_forged(f, len - 1, OUT_LEN, 1, GW_ETRUNC, "terngrad truncated");
	free(f);
	free(orig);
}

/* From the pristine copy, key i of a sparse frame (keys of kb bytes from
 * f + keys_at) set to key: expects want. */
static void forge_key(uint8_t *f, const uint8_t *orig, size_t len, size_t keys_at,
		      unsigned kb, uint32_t i, uint64_t key, int want, const char *what)
{
	memcpy(f, orig, len);
	if (kb == 8)
		gw_test_st64(f + keys_at + 8 * (size_t)i, key);
	else
		gw_test_st32(f + keys_at + 4 * (size_t)i, (uint32_t)key);
	hostile_forged(f, len, OUT_LEN, 1, want, what);
}

/* count 0: "nothing in this range", valid only without a payload (hdr: the
 * bytes before the payload). */
static void count_zero(uint8_t *f, const uint8_t *orig, size_t len, size_t hdr,
		       const char *codec)
{
	char what[80];
	for (uint32_t pay = 0; pay < 2; pay++) {
		memcpy(f, orig, len);
		gw_test_st32(f + GW_TEST_OFF_COUNT, 0);
		gw_test_st32(f + GW_TEST_OFF_PAYLOAD_LEN, pay);
		snprintf(what, sizeof(what), "%s count 0%s", codec,
			 pay ? " with a payload byte" : "");
		hostile_forged(f, hdr + pay, OUT_LEN, 1, pay ? GW_ELENGTH : 0, what);
	}
}

static void terngrad_keys(int id)
{
	static const uint32_t keys[7] = {3, 5, 6, 20, 21, 40, 63};
	gw_tensor t = gw_test_sparse_tensor(2, OUT_LEN, keys, 32, vals, 7);
	size_t len;
	uint8_t *orig, *f = encode_one(id, &t, &len, &orig);
	GW_CHECK(len == GW_FRAME_HDR_LEN + 4 + 7 * 4 + 2, "frame of %zu bytes", len);
	hostile_forged(f, len, OUT_LEN, 1, 7, "terngrad valid sparse frame");
	hostile_forged(f, len, 63, 1, GW_ERANGE, "terngrad key 63 past out_len 63");
	forge_key(f, orig, len, P + 4, 4, 1, 3, GW_ECORRUPT, "terngrad duplicate key");
	forge_key(f, orig, len, P + 4, 4, 2, 4, GW_ECORRUPT, "terngrad descending keys");
	forge_key(f, orig, len, P + 4, 4, 0, 2, GW_ECORRUPT, "terngrad key below start");
	memcpy(f, orig, len);
	gw_test_st32(f + GW_TEST_OFF_SPAN, 60);   /* last key 63 >= 3 + 60 */
	hostile_forged(f, len, OUT_LEN, 1, GW_ECORRUPT, "terngrad key past span");
	memcpy(f, orig, len);
	f[GW_TEST_OFF_FLAGS] |= GW_FF_KEY64;    /* lengths no longer fit */
	hostile_forged(f, len, OUT_LEN, 1, GW_ELENGTH, "terngrad KEY64 flag on 32-bit keys");
	count_zero(f, orig, len, GW_FRAME_HDR_LEN + 4, "terngrad");
	memcpy(f, orig, len);
	f[len - 1] = 200;   /* 2 entries + 3 padding digits: byte % 27 == 13 */
	hostile_forged(f, len, OUT_LEN, 1, GW_ECORRUPT, "terngrad sparse padding");
	free(f);
	free(orig);
}

static void terngrad_attack(int id)
{
	terngrad_dense(id);
	terngrad_lengths(id);
	terngrad_keys(id);
}

/* ---- onebit ------------------------------------------------------------------ */

#define B1 (GW_FRAME_HDR_LEN + 8)   /* onebit: the bits (dense) */

/* Negative or -0 non-negative level, positive negative level, infinite
 * levels, one NaN level; two NaN levels are the poison value. */
static void onebit_levels(int id)
{
	size_t len;
	uint8_t *orig, *f = valid12(id, B1 + 2, OUT_LEN, &len, &orig);
	static const struct {
		float a, b;
		int want;
	} cases[] = {
		{-1.0f, -1.0f, GW_ECORRUPT}, {-0.0f, -1.0f, GW_ECORRUPT},
		{1.0f, 1.0f, GW_ECORRUPT}, {1.0f, 0x1p-149f, GW_ECORRUPT},
		{INFINITY, -1.0f, GW_ECORRUPT}, {1.0f, -INFINITY, GW_ECORRUPT},
		{NAN, -1.0f, GW_ECORRUPT}, {1.0f, NAN, GW_ECORRUPT},
		{0.0f, 0.0f, 12}, {0.0f, -0.0f, 12}, {1.0f, -1.0f, 12},
		{NAN, NAN, 12},
	};
	for (size_t i = 0; i < GW_ARRAY_SIZE(cases); i++) {
		memcpy(f, orig, len);
		gw_stf32(f + P, cases[i].a);
		gw_stf32(f + P + 4, cases[i].b);
		char what[64];
		snprintf(what, sizeof(what), "onebit levels %a %a", (double)cases[i].a,
			 (double)cases[i].b);
		hostile_forged(f, len, OUT_LEN, 1, cases[i].want, what);
	}
	memcpy(f, orig, len);
	gw_stf32(f + P, NAN);
	gw_stf32(f + P + 4, NAN);
	expect_nan(f, len, 12, 12, "onebit NaN levels");
	free(f);
	free(orig);
}

/* Padding bits, param or payload lengths, counts, a short output. */
static void onebit_lengths(int id)
{
	size_t len;
	uint8_t *orig, *f = encode12(id, &len, &orig);
	/* 12 bits: bits 4..7 of byte 1 are padding */
	for (int bit = 0; bit < 8; bit++) {
		memcpy(f, orig, len);
		f[B1 + 1] ^= (uint8_t)(1u << bit);
		hostile_forged(f, len, OUT_LEN, 1, bit < 4 ? 12 : GW_ECORRUPT, "onebit padding bit");
	}
	memcpy(f, orig, len);
	f[GW_TEST_OFF_PARAM_LEN] = 4;
	gw_test_st32(f + GW_TEST_OFF_PAYLOAD_LEN, 6);
	hostile_forged(f, len, OUT_LEN, 1, GW_ELENGTH, "onebit param_len 4");
	payload_lengths(f, orig, len, 0, "onebit");
	memcpy(f, orig, len);
	gw_test_st32(f + GW_TEST_OFF_COUNT, 17);
	gw_test_st32(f + GW_TEST_OFF_SPAN, 17);
	hostile_forged(f, len, OUT_LEN, 1, GW_ELENGTH, "onebit count 17 in 2 bytes");
	memcpy(f, orig, len);
	gw_test_st32(f + GW_TEST_OFF_COUNT, 16);
	gw_test_st32(f + GW_TEST_OFF_SPAN, 16);
	hostile_forged(f, len, OUT_LEN, 1, 16, "onebit count 16 in 2 bytes (valid)");
	memcpy(f, orig, len);
	hostile_forged(f, len, 11, 1, GW_ERANGE, "onebit out_len 11");
	free(f);
	free(orig);
}

static void onebit_keys(int id)
{
	static const uint64_t keys[5] = {1, 2, 30, 31, 60};
	gw_tensor t = gw_test_sparse_tensor(2, OUT_LEN, keys, 64, vals, 5);
	size_t len;
	uint8_t *orig, *f = encode_one(id, &t, &len, &orig);
	GW_CHECK(len == B1 + 5 * 8 + 1, "frame of %zu bytes", len);
	hostile_forged(f, len, OUT_LEN, 1, 5, "onebit valid sparse frame");
	hostile_forged(f, len, 60, 1, GW_ERANGE, "onebit key 60 past out_len 60");
	forge_key(f, orig, len, P + 8, 8, 1, 1, GW_ECORRUPT, "onebit duplicate key");
	forge_key(f, orig, len, P + 8, 8, 2, 0x100000000ull + 30, GW_ECORRUPT,
		  "onebit key beyond span");
	memcpy(f, orig, len);
	f[GW_TEST_OFF_FLAGS] &= (uint8_t)~GW_FF_KEY64;
	hostile_forged(f, len, OUT_LEN, 1, GW_ELENGTH, "onebit 64-bit keys read as 32");
	count_zero(f, orig, len, B1, "onebit");
	memcpy(f, orig, len);
	f[len - 1] |= 0x80;
	hostile_forged(f, len, OUT_LEN, 1, GW_ECORRUPT, "onebit sparse padding bit");
	free(f);
	free(orig);
}

static void onebit_attack(int id)
{
	onebit_levels(id);
	onebit_lengths(id);
	onebit_keys(id);
}

/* ---- the table ------------------------------------------------------------------ */

const struct hostile_payload hostile_payloads[] = {
	{"raw", keys_attack, NULL},
	{"bf16", keys_attack, NULL},
	{"int8", int8_attack, NULL},
	{"3lc", threelc_attack, NULL},
	{"terngrad", terngrad_attack, NULL},
	{"onebit", onebit_attack, NULL},
	{"topk", hostile_topk, NULL},
	{"sketchml", NULL, "its key blocks have their own hostile cases "
			   "(test_delta_binary) and gw_frame_parts_of() refuses "
			   "damaged frames (test_frame_parts); bit flips and the "
			   "header attacks cover the rest"},
	{"countsketch", NULL, "sketch-table slices and key sets: "
			      "test_countsketch_hostile"},
	{"deepreduce", hostile_deepreduce, NULL},
	{"hq", hostile_hq, NULL},
};
const size_t hostile_npayloads = GW_ARRAY_SIZE(hostile_payloads);
