/* Edge-case tensors: empty, one element, all zeros, sparse with 0/1 keys, 64-bit keys with gaps >= 2^32, and the NaN/Inf policy of raw, bf16 and int8 (with and without error feedback). */
#include "gw_test.h"

#include <float.h>
#include <math.h>
#include <sys/mman.h>

/* raw, bf16, int8: codecs whose exact framing and values this file checks;
 * others (added later) get the promises every codec makes. */
static int known(int id)
{
	return id == GW_CODEC_RAW || id == GW_CODEC_BF16 || id == GW_CODEC_INT8;
}

/* One frame buffer ending at a guard page; poisoned so writes show. */
static void encode_nothing(int id, const gw_tensor *t, gw_ef *ef)
{
	gw_encoder *enc = gw_test_encoder(id);
	GW_OK_CALL(gw_encoder_set_ef(enc, ef));
	GW_EXPECT_RC(gw_encode_begin(enc, t), 0, "%s refused an empty tensor",
		     gw_codec_name(id));
	gw_test_guard g;
	gw_test_guard_alloc(&g, 256);
	memset(g.p, 0xa5, g.len);
	GW_EXPECT_RC(gw_encode_next(enc, g.p, g.len), 0,
		     "%s: first gw_encode_next on an empty tensor must return 0 "
		     "(no frames)", gw_codec_name(id));
	for (size_t i = 0; i < g.len; i++)
		GW_CHECK(g.p[i] == 0xa5, "%s wrote byte %zu of the buffer while "
			 "returning no frame", gw_codec_name(id), i);
	gw_test_guard_free(&g);
	gw_encoder_free(enc);
}

static void test_empty_tensors(void **state)
{
	(void)state;
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	uint32_t k32[1] = {0};
	uint64_t k64[1] = {0};
	float v[1] = {0};
	gw_ef *ef0 = gw_ef_create(0), *ef10 = gw_ef_create(10);
	GW_CHECK(ef0 && ef10, "gw_ef_create failed");
	for (int c = 0; c < nc; c++) {
		if (gw_test_codec_accepts(ids[c], 0)) {
			gw_tensor t = gw_test_dense_tensor(7, NULL, 0);
			encode_nothing(ids[c], &t, NULL);
			encode_nothing(ids[c], &t, ef0);
		}
		if (gw_test_codec_accepts(ids[c], 1)) {
			gw_tensor t = gw_test_sparse_tensor(7, 10, k32, 32, v, 0);
			encode_nothing(ids[c], &t, NULL);
			encode_nothing(ids[c], &t, ef10);
			t = gw_test_sparse_tensor(7, 10, k64, 64, NULL, 0);
			encode_nothing(ids[c], &t, NULL);
		}
	}
	for (size_t i = 0; i < 10; i++)
		GW_CHECK(gw_ef_data(ef10)[i] == 0.0f, "empty sparse encode changed "
			 "the error buffer at %zu", i);
	gw_ef_free(ef0);
	gw_ef_free(ef10);
}

/* Encodes t with every codec that takes it (budget 9000), decodes into a
 * -0.0 buffer of out_len and checks each codec's promise per element. */
static void encode_decode_check(const gw_tensor *t, uint64_t out_len,
				const char *what)
{
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	float *out = malloc(out_len * sizeof(float));
	GW_CHECK(out, "out of memory");
	uint64_t n = t->keys ? t->nnz : t->dim;
	for (int c = 0; c < nc; c++) {
		int id = ids[c];
		if (!gw_test_codec_accepts(id, t->keys != NULL))
			continue;
		gw_encoder *enc = gw_test_encoder(id);
		gw_test_frames fr;
		GW_EXPECT_RC(gw_test_encode_all(enc, t, 9000, &fr), 0,
			     "%s: encoding %s failed", gw_codec_name(id), what);
		GW_CHECK(n == 0 || fr.n >= 1, "%s: %s produced no frame",
			 gw_codec_name(id), what);
		gw_test_fill(out, out_len, -0.0f);
		gw_test_decode_all(&fr, out, out_len);
		double m = 0;
		for (uint64_t i = 0; i < n; i++)
			m = fmax(m, fabs((double)t->values[i]));
		for (uint64_t i = 0; i < n; i++) {
			uint64_t k = t->keys ? gw_tensor_key(t, i) : i;
			float x = t->values[i], y = out[k];
			if (id == GW_CODEC_RAW)
				GW_CHECK(gw_test_bits(x) == gw_test_bits(y),
					 "raw: %s: element %llu %a decoded as %a", what,
					 (unsigned long long)k, (double)x, (double)y);
			else if (id == GW_CODEC_BF16)
				GW_CHECK(gw_test_bits(y) ==
						 (uint32_t)gw_test_bf16_rne(x) << 16,
					 "bf16: %s: element %llu %a decoded as %a", what,
					 (unsigned long long)k, (double)x, (double)y);
			else if (id == GW_CODEC_INT8)
				GW_CHECK(fabs((double)y - x) <=
						 m / 254.0 + m * 0x1p-21 + 0x1p-120,
					 "int8: %s: element %llu %a decoded as %a", what,
					 (unsigned long long)k, (double)x, (double)y);
			if (x == 0.0f)
				GW_CHECK(y == 0.0f, "%s: %s: zero at %llu decoded as %a",
					 gw_codec_name(id), what, (unsigned long long)k,
					 (double)y);
		}
		gw_test_frames_free(&fr);
		gw_encoder_free(enc);
	}
	free(out);
}

static void test_one_element(void **state)
{
	(void)state;
	float v[1] = {0.3f};
	gw_tensor t = gw_test_dense_tensor(1, v, 1);
	encode_decode_check(&t, 1, "dense tensor of one element");
	v[0] = -1e-30f;
	encode_decode_check(&t, 1, "dense tensor of one tiny element");

	uint32_t k_last[1] = {999};
	uint32_t k_first[1] = {0};
	v[0] = -2.5f;
	t = gw_test_sparse_tensor(1, 1000, k_last, 32, v, 1);
	encode_decode_check(&t, 1000, "sparse tensor with its only key last");
	t = gw_test_sparse_tensor(1, 1000, k_first, 32, v, 1);
	encode_decode_check(&t, 1000, "sparse tensor with its only key first");
	uint64_t k64[1] = {999};
	t = gw_test_sparse_tensor(1, 1000, k64, 64, v, 1);
	encode_decode_check(&t, 1000, "64-bit sparse tensor with one key");
}

static void test_all_zeros(void **state)
{
	(void)state;
	enum { N = 3000 };
	float *z = calloc(N, sizeof(float));
	uint32_t *k = malloc(N * sizeof(uint32_t));
	GW_CHECK(z && k, "out of memory");
	for (uint32_t i = 0; i < N; i++)
		k[i] = 3 * i + 1;
	gw_tensor t = gw_test_dense_tensor(2, z, N);
	encode_decode_check(&t, N, "all-zero dense tensor");
	t = gw_test_sparse_tensor(2, 3 * N + 1, k, 32, z, N);
	encode_decode_check(&t, 3 * N + 1, "all-zero sparse tensor");

	/* Error feedback of zeros stays exactly zero. */
	static const int lossy[] = {GW_CODEC_BF16, GW_CODEC_INT8};
	for (size_t c = 0; c < 2; c++) {
		gw_encoder *enc = gw_test_encoder(lossy[c]);
		gw_ef *ef = gw_ef_create(N);
		GW_CHECK(ef, "gw_ef_create failed");
		GW_OK_CALL(gw_encoder_set_ef(enc, ef));
		t = gw_test_dense_tensor(2, z, N);
		for (int r = 0; r < 3; r++) {
			gw_test_frames fr;
			GW_OK_CALL(gw_test_encode_all(enc, &t, 1000, &fr));
			gw_test_frames_free(&fr);
		}
		for (size_t i = 0; i < N; i++)
			GW_CHECK(gw_test_bits(gw_ef_data(ef)[i]) == 0,
				 "%s: error buffer of an all-zero tensor is %a at %zu",
				 gw_codec_name(lossy[c]), (double)gw_ef_data(ef)[i], i);
		gw_ef_free(ef);
		gw_encoder_free(enc);
	}
	free(z);
	free(k);
}

/* A float array of n elements reserved but not committed: only the pages
 * the decoder touches become memory. NULL if the system refuses. */
static float *huge_out(uint64_t n, size_t *bytes)
{
	*bytes = (size_t)(n * sizeof(float));
	void *p = mmap(NULL, *bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* Keys whose gaps reach 2^32 must start a new frame: the span field is 32
 * bits, so one frame covers at most keys k0 .. k0 + 2^32 - 2. */
static void test_key64_gaps(void **state)
{
	(void)state;
	const uint64_t G = 1ull << 32;
	static uint64_t keys[7];
	keys[0] = 5;
	keys[1] = 6;
	keys[2] = 5 + (G - 2);        /* last - k0 = 2^32 - 2: same frame */
	keys[3] = 5 + (G - 1);        /* last - k0 = 2^32 - 1: new frame */
	keys[4] = 2 * G + 7;          /* gap 2^32 + 2 */
	keys[5] = 2 * G + 8;
	keys[6] = 3 * G + 100;        /* gap 2^32 + 92 */
	static const uint64_t want_start[4] = {5, 5 + (1ull << 32) - 1,
					       (2ull << 32) + 7, (3ull << 32) + 100};
	static const uint32_t want_count[4] = {3, 1, 2, 1};
	float vals[7] = {1, -2, 3, -4, 0.5f, -0.25f, 8};
	uint64_t dim = 3 * G + 101;
	gw_tensor t = gw_test_sparse_tensor(3, dim, keys, 64, vals, 7);

	size_t bytes;
	float *out = huge_out(dim, &bytes);
	if (!out)
		print_message("note: cannot reserve %llu floats; decoding of "
			      "keys above 2^32 is not checked\n",
			      (unsigned long long)dim);
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	for (int c = 0; c < nc; c++) {
		int id = ids[c];
		if (!gw_test_codec_accepts(id, 1))
			continue;
		gw_encoder *enc = gw_test_encoder(id);
		gw_test_frames fr;
		GW_EXPECT_RC(gw_test_encode_all(enc, &t, 9000, &fr), 0,
			     "%s: encoding 64-bit keys failed", gw_codec_name(id));
		int kn = known(id);
		uint64_t kidx = 0, prev_end = 0;
		for (size_t j = 0; j < fr.n; j++) {
			gw_frame_info h;
			GW_OK_CALL(gw_frame_verify(fr.f[j].data, fr.f[j].len, &h));
			GW_CHECK(kn ? h.flags == (GW_FF_SPARSE | GW_FF_KEY64)
				    : (h.flags & GW_FF_SPARSE) != 0,
				 "%s: frame %zu flags %#x, want SPARSE|KEY64",
				 gw_codec_name(id), j, h.flags);
			/* Every codec: ranges ascend, do not overlap, stay
			 * inside the tensor and hold at least count keys. */
			uint64_t in_range = 0;
			for (int i = 0; i < 7; i++)
				in_range += keys[i] >= h.start && keys[i] - h.start < h.span;
			GW_CHECK((j == 0 || h.start >= prev_end) &&
					 h.start + h.span <= dim && h.count <= in_range,
				 "%s: frame %zu range [%llu,+%u) with %u keys overlaps "
				 "its predecessor, leaves the tensor or holds only "
				 "%llu keys", gw_codec_name(id), j,
				 (unsigned long long)h.start, h.span, h.count,
				 (unsigned long long)in_range);
			prev_end = h.start + h.span;
			kidx += h.count;
			if (!kn)
				continue;
			GW_CHECK(j < 4 && h.start == want_start[j] &&
					 h.count == want_count[j] &&
					 h.span == keys[kidx - 1] - h.start + 1,
				 "%s: frame %zu is [%llu,+%u) with %u keys, want start "
				 "%llu with %u keys and span last - first + 1: frames "
				 "must end only before a key 2^32 or more above their "
				 "first", gw_codec_name(id), j,
				 (unsigned long long)h.start, h.span, h.count,
				 (unsigned long long)want_start[j < 4 ? j : 0],
				 want_count[j < 4 ? j : 0]);
		}
		if (kn)
			GW_CHECK(fr.n == 4 && kidx == 7, "%s: %zu frames holding %llu "
				 "keys, want 4 frames holding 7", gw_codec_name(id),
				 fr.n, (unsigned long long)kidx);
		else
			GW_CHECK(kidx <= 7, "%s: frames hold %llu keys of 7",
				 gw_codec_name(id), (unsigned long long)kidx);
		if (out) {
			for (int i = 0; i < 7; i++)
				out[keys[i]] = -0.0f;
			gw_test_decode_all(&fr, out, dim);
			for (int i = 0; i < 7; i++) {
				float y = out[keys[i]];
				GW_CHECK(isfinite(y), "%s: key %llu decoded to %a",
					 gw_codec_name(id), (unsigned long long)keys[i],
					 (double)y);
				if (id == GW_CODEC_RAW || id == GW_CODEC_BF16)
					/* All values are exact in bf16. */
					GW_CHECK(y == vals[i], "%s: key %llu decoded %a, "
						 "want %a", gw_codec_name(id),
						 (unsigned long long)keys[i], (double)y,
						 (double)vals[i]);
				else if (id == GW_CODEC_INT8)
					GW_CHECK(fabs(y - vals[i]) <= 8.0 / 254 * 1.0001,
						 "int8: key %llu decoded %a, want %a",
						 (unsigned long long)keys[i], (double)y,
						 (double)vals[i]);
				out[keys[i]] = 0.0f;
			}
			/* Nothing else was written near the keys. */
			for (int i = 0; i < 7; i++) {
				for (int d = -3; d <= 3; d++) {
					uint64_t k = keys[i] + (uint64_t)(int64_t)d;
					GW_CHECK(k >= dim || out[k] == 0.0f,
						 "%s: coordinate %llu near key %llu was "
						 "written", gw_codec_name(id),
						 (unsigned long long)k,
						 (unsigned long long)keys[i]);
				}
			}
		}
		gw_test_frames_free(&fr);
		gw_encoder_free(enc);
	}
	if (out)
		munmap(out, bytes);
}

/* Keys near 2^64: frames carry them and a small output refuses them. */
static void test_key64_top(void **state)
{
	(void)state;
	static const uint64_t keys[3] = {1, 1ull << 63, UINT64_MAX - 1};
	float vals[3] = {1, 2, 3};
	gw_tensor t = gw_test_sparse_tensor(4, UINT64_MAX, keys, 64, vals, 3);
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	for (int c = 0; c < nc; c++) {
		int id = ids[c];
		if (!gw_test_codec_accepts(id, 1))
			continue;
		gw_encoder *enc = gw_test_encoder(id);
		gw_test_frames fr;
		GW_EXPECT_RC(gw_test_encode_all(enc, &t, 9000, &fr), 0,
			     "%s: encoding keys near 2^64 failed", gw_codec_name(id));
		if (known(id))
			GW_CHECK(fr.n == 3, "%s: %zu frames for keys 2^63 apart, want 3",
				 gw_codec_name(id), fr.n);
		float out[16], before[16];
		gw_test_fill(out, 16, 0.0f);
		for (size_t j = 0; j < fr.n; j++) {
			gw_frame_info h;
			GW_OK_CALL(gw_frame_verify(fr.f[j].data, fr.f[j].len, &h));
			if (known(id))
				GW_CHECK(h.start == keys[j] && h.count == 1 && h.span == 1,
					 "%s: frame %zu [%llu,+%u) count %u, want [%llu,+1)",
					 gw_codec_name(id), j, (unsigned long long)h.start,
					 h.span, h.count, (unsigned long long)keys[j]);
			memcpy(before, out, sizeof(out));
			int rc = gw_decode(fr.f[j].data, fr.f[j].len, out, 16);
			if (h.start + h.span <= 16) {
				GW_CHECK(rc == (int)h.count, "%s: frame [%llu,+%u) into 16 "
					 "outputs: %s", gw_codec_name(id),
					 (unsigned long long)h.start, h.span,
					 gw_error_name(rc));
			} else if (h.start >= 16) {
				GW_CHECK(rc == GW_ERANGE, "%s: frame at key %llu into 16 "
					 "outputs returned %s, want GW_ERANGE",
					 gw_codec_name(id), (unsigned long long)h.start,
					 gw_error_name(rc));
				GW_CHECK(!memcmp(before, out, sizeof(out)),
					 "%s: rejected frame changed the output",
					 gw_codec_name(id));
			}
		}
		gw_test_frames_free(&fr);
		gw_encoder_free(enc);
	}
}

/* 32-bit keys 0 and 2^32 - 1 are 2^32 - 1 apart: span 2^32 does not fit. */
static void test_key32_full_range(void **state)
{
	(void)state;
	static const uint32_t split[2] = {0, UINT32_MAX};
	static const uint32_t fits[2] = {0, UINT32_MAX - 1};
	float vals[2] = {0.75f, -1.5f};
	uint64_t dim = 1ull << 32;
	size_t bytes;
	float *out = huge_out(dim, &bytes);
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	for (int c = 0; c < nc; c++) {
		int id = ids[c];
		if (!gw_test_codec_accepts(id, 1))
			continue;
		for (int v = 0; v < 2; v++) {
			const uint32_t *k = v ? fits : split;
			gw_tensor t = gw_test_sparse_tensor(5, dim, k, 32, vals, 2);
			gw_encoder *enc = gw_test_encoder(id);
			gw_test_frames fr;
			GW_OK_CALL(gw_test_encode_all(enc, &t, 9000, &fr));
			size_t want = v ? 1 : 2;
			uint64_t held = 0;
			for (size_t j = 0; j < fr.n; j++) {
				gw_frame_info h;
				GW_OK_CALL(gw_frame_peek(fr.f[j].data, fr.f[j].len, &h));
				/* No frame can hold both keys unless span 2^32 - 1
				 * covers them (fits) — span is 32 bits. */
				GW_CHECK(h.count <= 1 || (v && h.start == 0 && h.span == UINT32_MAX),
					 "%s: keys 0 and %u in one frame of span %u",
					 gw_codec_name(id), k[1], h.span);
				held += h.count;
			}
			GW_CHECK(held <= 2, "%s: frames hold %llu keys of 2",
				 gw_codec_name(id), (unsigned long long)held);
			if (known(id)) {
				GW_CHECK(fr.n == want && held == 2,
					 "%s: keys 0 and %u: %zu frames, want %zu",
					 gw_codec_name(id), k[1], fr.n, want);
				gw_frame_info h;
				GW_OK_CALL(gw_frame_peek(fr.f[0].data, fr.f[0].len, &h));
				GW_CHECK(h.start == 0 && h.span == (v ? UINT32_MAX : 1u),
					 "%s: first frame span %u", gw_codec_name(id), h.span);
			}
			if (out) {
				out[0] = out[k[1]] = 0.0f;
				gw_test_decode_all(&fr, out, dim);
				GW_CHECK(isfinite(out[0]) && isfinite(out[k[1]]),
					 "%s: keys 0 / %u decoded %a / %a",
					 gw_codec_name(id), k[1], (double)out[0],
					 (double)out[k[1]]);
				if (known(id))
					GW_CHECK(fabsf(out[0] - vals[0]) <= 0.01f &&
							 fabsf(out[k[1]] - vals[1]) <= 0.01f,
						 "%s: keys 0 / %u decoded %a / %a",
						 gw_codec_name(id), k[1], (double)out[0],
						 (double)out[k[1]]);
			}
			gw_test_frames_free(&fr);
			gw_encoder_free(enc);
		}
	}
	if (out)
		munmap(out, bytes);
}

/* ---- NaN / Inf policy ---------------------------------------------------- */

static const uint32_t special_bits[] = {
	0x7fc12345u,  /* quiet NaN with payload */
	0xffc00001u,  /* negative quiet NaN */
	0x7fffffffu,  /* all-ones quiet NaN */
	0x7f800000u,  /* +Inf */
	0xff800000u,  /* -Inf */
	0x80000000u,  /* -0.0 */
	0x00000000u,  /* +0.0 */
	0x7f7fffffu,  /* FLT_MAX */
	0xff7fffffu,  /* -FLT_MAX */
	0x00800000u,  /* FLT_MIN */
	0x00000001u,  /* smallest subnormal */
	0x807fffffu,  /* largest negative subnormal */
	0x3f800000u,  /* 1.0 */
	0x7f800001u,  /* signalling NaN */
	0xff812345u,  /* negative signalling NaN */
};
#define N_SPECIAL (sizeof(special_bits) / sizeof(special_bits[0]))

static int is_snan(uint32_t u)
{
	return (u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu) &&
	       !(u & 0x00400000u);
}

static void check_raw_special(float x, float y, const char *what)
{
	uint32_t u = gw_test_bits(x), w = gw_test_bits(y);
	if (is_snan(u))
		/* Decode-accumulate is a float add, which quiets a signalling
		 * NaN (sets bit 22); sign and payload survive. */
		GW_CHECK((w | 0x00400000u) == (u | 0x00400000u),
			 "raw %s: signalling NaN %08x decoded as %08x", what, u, w);
	else
		GW_CHECK(u == w, "raw %s: %08x decoded as %08x (must be bit-exact)",
			 what, u, w);
}

static void check_bf16_special(float x, float y, const char *what)
{
	uint32_t u = gw_test_bits(x), w = gw_test_bits(y);
	if (isnan(x))
		GW_CHECK(isnan(y) && (w >> 31) == (u >> 31),
			 "bf16 %s: NaN %08x decoded as %08x, want NaN of same sign",
			 what, u, w);
	else if (isinf(x))
		GW_CHECK(w == u, "bf16 %s: %08x (inf) decoded as %08x", what, u, w);
	else
		GW_CHECK(w == (uint32_t)gw_test_bf16_rne(x) << 16,
			 "bf16 %s: %08x decoded as %08x", what, u, w);
}

static void test_special_values_raw_bf16(void **state)
{
	(void)state;
	float v[N_SPECIAL];
	uint32_t k[N_SPECIAL];
	for (size_t i = 0; i < N_SPECIAL; i++) {
		v[i] = gw_test_float(special_bits[i]);
		k[i] = (uint32_t)(10 * i + 3);
	}
	float out[10 * N_SPECIAL + 3];
	static const int codecs[] = {GW_CODEC_RAW, GW_CODEC_BF16};
	for (int c = 0; c < 2; c++) {
		for (int sparse = 0; sparse < 2; sparse++) {
			gw_encoder *enc = gw_test_encoder(codecs[c]);
			gw_tensor t = sparse ? gw_test_sparse_tensor(6, 10 * N_SPECIAL + 3,
								     k, 32, v, N_SPECIAL)
					     : gw_test_dense_tensor(6, v, N_SPECIAL);
			uint64_t out_len = sparse ? 10 * N_SPECIAL + 3 : N_SPECIAL;
			gw_test_frames fr;
			GW_OK_CALL(gw_test_encode_all(enc, &t, 9000, &fr));
			gw_test_fill(out, out_len, -0.0f);
			gw_test_decode_all(&fr, out, out_len);
			for (size_t i = 0; i < N_SPECIAL; i++) {
				float y = out[sparse ? k[i] : i];
				const char *what = sparse ? "sparse" : "dense";
				if (codecs[c] == GW_CODEC_RAW)
					check_raw_special(v[i], y, what);
				else
					check_bf16_special(v[i], y, what);
			}
			gw_test_frames_free(&fr);
			gw_encoder_free(enc);
		}
	}
}

/* int8 tensor of 1000 elements in frames of 100: NaN in frame 2, +Inf in
 * frame 5, -Inf in frame 9, FLT_MAX and -FLT_MAX in frame 7. */
enum { NI = 1000, FI = 100 };

static void int8_special_tensor(float *v)
{
	gw_test_rng r = {42};
	for (int i = 0; i < NI; i++)
		v[i] = gw_test_uniform(&r, -1.0f, 1.0f);
	v[250] = NAN;
	v[520] = INFINITY;
	v[999] = -INFINITY;
	v[700] = FLT_MAX;
	v[705] = -FLT_MAX;
}

static int poisoned_frame(int f)
{
	return f == 2 || f == 5 || f == 9;
}

static void check_int8_special(const float *v, const float *out, const char *what)
{
	for (int f = 0; f < NI / FI; f++) {
		double m = 0;
		for (int i = f * FI; i < (f + 1) * FI; i++)
			m = fmax(m, fabs((double)v[i]));
		for (int i = f * FI; i < (f + 1) * FI; i++) {
			if (poisoned_frame(f)) {
				GW_CHECK(isnan(out[i]), "int8 %s: element %d of a frame "
					 "holding NaN/Inf decoded as %a, want NaN", what, i,
					 (double)out[i]);
			} else {
				GW_CHECK(isfinite(out[i]) &&
						 fabs((double)out[i] - v[i]) <=
							 m / 254 + m * 0x1p-21,
					 "int8 %s: element %d (frame %d, no NaN/Inf) %a "
					 "decoded as %a", what, i, f, (double)v[i],
					 (double)out[i]);
			}
		}
	}
}

static void test_special_values_int8(void **state)
{
	(void)state;
	float *v = malloc(NI * sizeof(float)), *out = malloc(NI * sizeof(float));
	uint32_t *k = malloc(NI * sizeof(uint32_t));
	GW_CHECK(v && out && k, "out of memory");
	int8_special_tensor(v);
	for (uint32_t i = 0; i < NI; i++)
		k[i] = 2 * i;
	for (int sparse = 0; sparse < 2; sparse++) {
		for (int with_ef = 0; with_ef < 2; with_ef++) {
			gw_encoder *enc = gw_test_encoder(GW_CODEC_INT8);
			GW_OK_CALL(gw_encoder_set_param(enc, GW_PARAM_MAX_FRAME_ELEMS, FI));
			uint64_t dim = sparse ? 2 * NI : NI;
			gw_ef *ef = NULL;
			if (with_ef) {
				ef = gw_ef_create(dim);
				GW_CHECK(ef, "gw_ef_create failed");
				GW_OK_CALL(gw_encoder_set_ef(enc, ef));
			}
			gw_tensor t = sparse ? gw_test_sparse_tensor(8, dim, k, 32, v, NI)
					     : gw_test_dense_tensor(8, v, NI);
			const char *what = sparse ? (with_ef ? "sparse+ef" : "sparse")
						  : (with_ef ? "dense+ef" : "dense");
			gw_test_frames fr;
			GW_OK_CALL(gw_test_encode_all(enc, &t, 9000, &fr));
			GW_CHECK(fr.n == NI / FI, "int8 %s: %zu frames, want %d", what,
				 fr.n, NI / FI);
			float *full = malloc(dim * sizeof(float));
			GW_CHECK(full, "out of memory");
			gw_test_fill(full, dim, 0.0f);
			gw_test_decode_all(&fr, full, dim);
			for (int i = 0; i < NI; i++)
				out[i] = full[sparse ? k[i] : (uint32_t)i];
			check_int8_special(v, out, what);

			if (ef) {
				const float *e = gw_ef_data(ef);
				for (int i = 0; i < NI; i++) {
					uint64_t s = sparse ? k[i] : (uint64_t)i;
					GW_CHECK(isfinite(e[s]), "int8 %s: error buffer at %d "
						 "is %a, must stay finite", what, i,
						 (double)e[s]);
					if (poisoned_frame(i / FI))
						GW_CHECK(e[s] == 0.0f, "int8 %s: error buffer "
							 "at %d of a NaN/Inf frame is %a, want 0",
							 what, i, (double)e[s]);
					else
						GW_CHECK(e[s] == v[i] - out[i],
							 "int8 %s: error buffer at %d is %a, "
							 "want input - decoded = %a", what, i,
							 (double)e[s], (double)(v[i] - out[i]));
				}
				/* Next round: finite input, so every frame decodes
				 * finite: no NaN carried over through the buffer. */
				float *g = malloc(NI * sizeof(float));
				GW_CHECK(g, "out of memory");
				for (int i = 0; i < NI; i++)
					g[i] = isfinite(v[i]) && fabsf(v[i]) < 2.0f ? v[i] : 1.0f;
				gw_tensor t2 = sparse ? gw_test_sparse_tensor(8, dim, k, 32,
									      g, NI)
						      : gw_test_dense_tensor(8, g, NI);
				gw_test_frames fr2;
				GW_OK_CALL(gw_test_encode_all(enc, &t2, 9000, &fr2));
				gw_test_fill(full, dim, 0.0f);
				gw_test_decode_all(&fr2, full, dim);
				for (uint64_t i = 0; i < dim; i++)
					GW_CHECK(isfinite(full[i]), "int8 %s: round after "
						 "NaN/Inf decodes %a at %llu", what,
						 (double)full[i], (unsigned long long)i);
				gw_test_frames_free(&fr2);
				free(g);
			}
			free(full);
			gw_test_frames_free(&fr);
			gw_ef_free(ef);
			gw_encoder_free(enc);
		}
	}
	free(v);
	free(out);
	free(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_tensors),
		cmocka_unit_test(test_one_element),
		cmocka_unit_test(test_all_zeros),
		cmocka_unit_test(test_key64_gaps),
		cmocka_unit_test(test_key64_top),
		cmocka_unit_test(test_key32_full_range),
		cmocka_unit_test(test_special_values_raw_bf16),
		cmocka_unit_test(test_special_values_int8),
	};
	return cmocka_run_group_tests_name("edge_tensors", tests, NULL, NULL);
}
