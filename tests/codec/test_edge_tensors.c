/* Edge-case tensors, every codec: empty, one element, all zeros (and with error feedback the buffer stays +0), one-sided (all non-negative, all negative), sparse with 0/1 keys, 64-bit keys with gaps >= 2^32, keys near 2^64, 32-bit keys spanning 2^32 - 1; decoded values keep each codec's promise (tests/gw_test_codecs.c). NaN and Inf: test_nonfinite_input. */
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
 * -0.0 buffer of out_len and checks each codec's promise; with zeros_stay,
 * a zero decodes to zero. keys32: t's keys as 32-bit integers (sparse). */
static void check_codecs(const gw_tensor *t, const uint32_t *keys32,
			 uint64_t out_len, int zeros_stay, const char *what)
{
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	float *out = malloc(out_len * sizeof(float));
	GW_CHECK(out, "out of memory");
	uint64_t n = t->keys ? t->nnz : t->dim;
	gw_test_input in = {.name = what, .t = *t, .keys = keys32, .vals = t->values,
			    .n = n, .dim = out_len};
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
		gw_frame_info *info = calloc(fr.n ? fr.n : 1, sizeof(*info));
		GW_CHECK(info, "out of memory");
		for (size_t j = 0; j < fr.n; j++)
			GW_OK_CALL(gw_frame_verify(fr.f[j].data, fr.f[j].len, &info[j]));
		gw_test_fill(out, out_len, -0.0f);
		gw_test_decode_all(&fr, out, out_len);
		char where[160];
		snprintf(where, sizeof(where), "%s: %s", gw_codec_name(id), what);
		gw_test_check_promise(enc, &in, t->values, &fr, info, out, where);
		for (uint64_t i = 0; i < n; i++) {
			uint64_t k = t->keys ? gw_tensor_key(t, i) : i;
			if (zeros_stay && t->values[i] == 0.0f)
				GW_CHECK(out[k] == 0.0f, "%s: %s: zero at %llu decoded as %a",
					 gw_codec_name(id), what, (unsigned long long)k,
					 (double)out[k]);
		}
		free(info);
		gw_test_frames_free(&fr);
		gw_encoder_free(enc);
	}
	free(out);
}

static void encode_decode_check(const gw_tensor *t, const uint32_t *keys32,
				uint64_t out_len, const char *what)
{
	check_codecs(t, keys32, out_len, 1, what);
}

static void test_one_element(void **state)
{
	(void)state;
	float v[1] = {0.3f};
	gw_tensor t = gw_test_dense_tensor(1, v, 1);
	encode_decode_check(&t, NULL, 1, "dense tensor of one element");
	v[0] = -1e-30f;
	encode_decode_check(&t, NULL, 1, "dense tensor of one tiny element");

	uint32_t k_last[1] = {999};
	uint32_t k_first[1] = {0};
	v[0] = -2.5f;
	t = gw_test_sparse_tensor(1, 1000, k_last, 32, v, 1);
	encode_decode_check(&t, k_last, 1000, "sparse tensor with its only key last");
	t = gw_test_sparse_tensor(1, 1000, k_first, 32, v, 1);
	encode_decode_check(&t, k_first, 1000, "sparse tensor with its only key first");
	uint64_t k64[1] = {999};
	t = gw_test_sparse_tensor(1, 1000, k64, 64, v, 1);
	encode_decode_check(&t, k_last, 1000, "64-bit sparse tensor with one key");
}

/* All non-negative, all negative: onebit sends 0 for the absent side's
 * level (its promise), in one frame at 64 bytes. */
static void test_one_sided(void **state)
{
	(void)state;
	float pos[9] = {0, 1, 2, 3, 0, 5, 6, 7, 8};
	float neg[9] = {-1, -2, -3, -4, -5, -6, -7, -8, -9};
	uint32_t keys[9];
	for (uint32_t i = 0; i < 9; i++)
		keys[i] = 5 * i + 2;
	float *ins[2] = {pos, neg};
	for (int c = 0; c < 2; c++) {
		gw_tensor t = gw_test_dense_tensor(1, ins[c], 9);
		check_codecs(&t, NULL, 9, 0, c ? "all negative" : "all non-negative");
		t = gw_test_sparse_tensor(1, 50, keys, 32, ins[c], 9);
		check_codecs(&t, keys, 50, 0, c ? "all negative, sparse"
						: "all non-negative, sparse");
		gw_encoder *enc = gw_test_encoder(GW_CODEC_ONEBIT);
		t = gw_test_dense_tensor(1, ins[c], 9);
		gw_test_frames fr;
		GW_OK_CALL(gw_test_encode_all(enc, &t, 64, &fr));
		GW_CHECK(fr.n == 1, "onebit: %zu frames for 9 values at 64 bytes", fr.n);
		const uint8_t *p = fr.f[0].data + GW_FRAME_HDR_LEN;
		float a = gw_test_float(gw_test_ld32(p));
		float b = gw_test_float(gw_test_ld32(p + 4));
		GW_CHECK(c == 0 ? (a == (float)(32.0 / 9) && gw_test_bits(b) == 0)
				: (gw_test_bits(a) == 0 && b == -5.0f),
			 "onebit levels %a %a", (double)a, (double)b);
		gw_test_frames_free(&fr);
		gw_encoder_free(enc);
	}
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
	encode_decode_check(&t, NULL, N, "all-zero dense tensor");
	t = gw_test_sparse_tensor(2, 3 * N + 1, k, 32, z, N);
	encode_decode_check(&t, k, 3 * N + 1, "all-zero sparse tensor");

	/* Error feedback of zeros stays exactly zero, for every codec. */
	int ids[GW_TEST_MAX_CODECS];
	int nc = gw_test_codecs(ids);
	for (int c = 0; c < nc; c++) {
		if (!gw_test_codec_accepts(ids[c], 0))
			continue;
		gw_encoder *enc = gw_test_encoder(ids[c]);
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
				 gw_codec_name(ids[c]), (double)gw_ef_data(ef)[i], i);
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
	int nc = gw_test_codecs_taking(1, ids);
	for (int c = 0; c < nc; c++) {
		int id = ids[c];
		gw_test_frames fr;
		gw_test_encode_with(id, NULL, &t, 9000, &fr, "64-bit keys with gaps");
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
	int nc = gw_test_codecs_taking(1, ids);
	for (int c = 0; c < nc; c++) {
		int id = ids[c];
		gw_test_frames fr;
		gw_test_encode_with(id, NULL, &t, 9000, &fr, "keys near 2^64");
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
	int nc = gw_test_codecs_taking(1, ids);
	for (int c = 0; c < nc; c++) {
		int id = ids[c];
		for (int v = 0; v < 2; v++) {
			const uint32_t *k = v ? fits : split;
			gw_tensor t = gw_test_sparse_tensor(5, dim, k, 32, vals, 2);
			gw_test_frames fr;
			gw_test_encode_with(id, NULL, &t, 9000, &fr, "keys 0 and 2^32 - 1");
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
		}
	}
	if (out)
		munmap(out, bytes);
}

GW_TEST_MAIN("edge_tensors", 0,
	     cmocka_unit_test(test_empty_tensors), cmocka_unit_test(test_one_element),
	     cmocka_unit_test(test_one_sided), cmocka_unit_test(test_all_zeros),
	     cmocka_unit_test(test_key64_gaps), cmocka_unit_test(test_key64_top),
	     cmocka_unit_test(test_key32_full_range))
