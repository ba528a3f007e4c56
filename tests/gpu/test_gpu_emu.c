/* gpudirect's kernels, gw_cuda.cu itself run on the CPU by hostcuda/ (each
 * thread a fiber, a seeded schedule; emu.h launches and waits), against
 * codec/: the frame checksum's XXH3 against libxxhash; raw, bf16, int8,
 * 3lc and top-k encoding of the real traces and of edge tensors (NaN,
 * Inf, the largest floats, scales that underflow, ties, long runs), at
 * budgets from 64 bytes to 65535, with and without an error buffer and a
 * frame-size limit, byte for byte the library's frames and bit for bit
 * its error buffer; decoding the library's frames, and mutations of them,
 * into the same output with the same verdict. Runs on every machine: no
 * GPU, no CUDA needed. */
#include <math.h>
#include <float.h>

#include <xxhash.h>

#include "emu_check.h"

static const int codecs[] = {GW_WIRE_CODEC_RAW, GW_WIRE_CODEC_BF16, GW_WIRE_CODEC_INT8};

static const size_t budgets[] = {64, 100, 1424, 8924, 65535, 100000};

static void test_xxh3(void **state)
{
	(void)state;
	enum { N = 70000 };
	uint8_t *buf = malloc(N), scratch[GW_XXH_SECRET_LEN];
	GW_CHECK(buf, "out of memory");
	gw_test_rng r = {11};
	for (size_t i = 0; i < N; i++)
		buf[i] = (uint8_t)gw_test_rand(&r);
	uint64_t seeds[] = {0, 1, 0x9e3779b97f4a7c15ull, 0};
	size_t checked = 0;
	for (uint32_t len = 0; len + 7 <= N; len += len < 2100 ? 1 : 1237) {
		seeds[3] = gw_test_rand(&r);
		for (size_t s = 0; s < GW_ARRAY_SIZE(seeds); s++) {
			const uint8_t *in = buf + len % 7;   /* any alignment */
			uint64_t want = XXH3_64bits_withSeed(in, len, seeds[s]);
			uint64_t got = gw_xxh3_64(in, len, seeds[s], scratch);
			GW_CHECK(got == want, "XXH3 of %u bytes, seed %#llx: %#llx, libxxhash %#llx",
				 len, (unsigned long long)seeds[s], (unsigned long long)got,
				 (unsigned long long)want);
			checked++;
		}
	}
	free(buf);
	printf("XXH3: %zu lengths and seeds agree with libxxhash\n", checked);
}

/* Encodes v with the emulated kernel; e (may be NULL) is updated. */
static void emu_encode(int codec, const float *v, float *e, uint64_t dim, size_t budget,
		       uint32_t mfe, struct gpu_frames *out)
{
	uint32_t per = gw_kd_per_frame(codec, budget, mfe);
	GW_CHECK(per > 0, "budget %zu refused", budget);
	struct gw_kd_enc j = {.codec = codec, .g = v, .e = e, .dim = dim, .tensor = 42,
			      .per_frame = per};
	j.frames = gw_kd_frame_count(&j);
	out->n = j.frames;
	out->slots = calloc(j.frames, sizeof(*out->slots));
	out->lens = calloc(j.frames, sizeof(*out->lens));
	GW_CHECK(out->slots && out->lens, "out of memory");
	size_t room = budget < GW_WIRE_FRAME_MAX ? budget : GW_WIRE_FRAME_MAX;
	/* Slots at every alignment mod 4: the kernels store words where they
	 * are aligned and bytes where not, the same bytes either way. */
	for (uint32_t f = 0; f < j.frames; f++) {
		uint8_t *m = malloc(room + 3);
		GW_CHECK(m, "out of memory");
		out->slots[f] = m + f % 4;
	}
	j.slots = out->slots;
	j.lens = out->lens;
	gw_emu_encode_dense(&j);
	for (uint32_t f = 0; f < j.frames; f++)
		GW_CHECK(out->lens[f] <= room, "frame %u: %u bytes in a %zu-byte slot", f,
			 out->lens[f], room);
}

static void lib_encode(int codec, const float *v, float *e, uint64_t dim, size_t budget,
		       uint32_t mfe, gw_test_frames *fr)
{
	char params[64] = "";
	if (mfe)
		snprintf(params, sizeof(params), "max_frame_elems=%u", mfe);
	lib_encode_with(codec, params, v, e, dim, budget, fr);
}

/* One tensor through every codec, budget, feedback and frame limit. */
static void check_tensor(const float *v, uint64_t dim, const char *name, gw_test_rng *r,
			 size_t *frames)
{
	float *e1 = malloc(dim * sizeof(float)), *e2 = malloc(dim * sizeof(float));
	GW_CHECK(e1 && e2, "out of memory");
	for (size_t c = 0; c < GW_ARRAY_SIZE(codecs); c++)
		for (size_t k = 0; k < GW_ARRAY_SIZE(budgets); k++)
			for (int with_e = 0; with_e < 2; with_e++)
				for (int lim = 0; lim < 2; lim++) {
					uint32_t mfe = lim ? 7 : 0;
					for (uint64_t i = 0; i < dim; i++)
						e1[i] = e2[i] = gw_test_uniform(r, -1e-3f, 1e-3f);
					struct gpu_frames g = {0};
					gw_test_frames fr = {0};
					uint64_t n = tiny_dim(dim, lim || budgets[k] <= 100);
					emu_encode(codecs[c], v, with_e ? e1 : NULL, n, budgets[k],
						   mfe, &g);
					lib_encode(codecs[c], v, with_e ? e2 : NULL, n, budgets[k],
						   mfe, &fr);
					char what[200];
					snprintf(what, sizeof(what), "%s %s budget %zu%s%s",
						 gw_codec_name(codecs[c]), name, budgets[k],
						 with_e ? " feedback" : "", lim ? " max 7" : "");
					same_as_library(g.slots, g.lens, g.n, &fr,
							with_e ? e1 : NULL, e2, n, what);
					if (!with_e && !lim && k < 4)
						compare_decode(codecs[c], &fr, n, r, what);
					*frames += g.n;
					gpu_frames_free(&g);
					gw_test_frames_free(&fr);
				}
	GW_FREE_ALL(e1, e2);
}

static void test_real_traces(void **state)
{
	(void)state;
	gw_test_rng r = {5};
	size_t frames = 0;
	each_trace(check_tensor, 1, 2, 8, UINT64_MAX, &r, &frames);
	printf("%zu frames byte-identical to codec/'s\n", frames);
}

static void test_edge_tensors(void **state)
{
	(void)state;
	gw_test_rng r = {6};
	size_t frames = 0;
	enum { N = 3001 };
	/* Non-finite values in some frames. */
	float *v = nonfinite_values(&r, N, 1500);
	v[2999] = gw_test_float(0xffc01234);
	check_tensor(v, N, "non-finite", &r, &frames);
	/* Magnitudes where int8's scale underflows, and the largest floats. */
	for (int i = 0; i < N; i++)
		v[i] = (i % 3 ? 1 : -1) * ldexpf((float)(i % 127 + 1), -140 + i % 20);
	check_tensor(v, N, "tiny", &r, &frames);
	for (int i = 0; i < N; i++)
		v[i] = (i % 2 ? FLT_MAX : -FLT_MAX) * (i % 7 ? 1.0f : 0.5f);
	check_tensor(v, N, "huge", &r, &frames);
	/* bf16 rounding ties and NaN payloads. */
	for (int i = 0; i < N; i++)
		v[i] = gw_test_float((uint32_t)gw_test_rand(&r) | (i % 4 ? 0 : 0x7f800000u));
	check_tensor(v, N, "random bits", &r, &frames);
	free(v);
	printf("%zu edge-case frames byte-identical to codec/'s\n", frames);
}

/* ---- 3lc ---------------------------------------------------------------- */

/* One tensor, budget, sparsity and feedback: the emulated launches
 * against the library, frames and error buffer. */
static size_t check_3lc(const float *v, uint64_t dim, size_t budget, double sparsity,
			int with_e, uint32_t lim, gw_test_rng *r, const char *name)
{
	uint64_t nb = (dim + 4) / 5;
	size_t room = budget < GW_WIRE_FRAME_MAX ? budget : GW_WIRE_FRAME_MAX;
	uint32_t P = (uint32_t)room - 40;
	uint32_t maxf = (uint32_t)((nb + P - 1) / P);
	float *e1 = malloc(dim * sizeof(float)), *e2 = malloc(dim * sizeof(float));
	uint8_t *bytes = malloc(nb);
	uint32_t *runs = malloc(nb * 4), *tok = malloc(nb * 4), *tb = malloc(nb * 4);
	uint32_t *tiles = malloc(gw_ks_tiles(nb) * 4 + 4), mx = 0, ntok = 0, err = 0;
	uint8_t **slots = calloc(maxf, sizeof(*slots));
	uint32_t *lens = calloc(maxf, sizeof(*lens));
	GW_CHECK(e1 && e2 && bytes && runs && tok && tb && tiles && slots && lens, "out of memory");
	for (uint32_t f = 0; f < maxf; f++)
		GW_CHECK(slots[f] = malloc(room), "out of memory");
	for (uint64_t i = 0; i < dim; i++)
		e1[i] = e2[i] = gw_test_uniform(r, -1e-3f, 1e-3f);
	struct gw_kt_enc j = {.g = v, .e = with_e ? e1 : NULL, .dim = dim, .tensor = 42,
			      .sparsity = sparsity, .room = P, .nb = nb, .bytes = bytes,
			      .runs = runs, .tok = tok, .tok_byte = tb, .tiles = tiles, .mx = &mx,
			      .ntok = &ntok, .err = &err, .slots = slots, .lens = lens,
			      .max_frames = maxf};
	gw_kt_limit(&j, lim);
	if (j.seg && gw_kt_segments(&j) > maxf) {
		maxf = gw_kt_segments(&j);
		slots = realloc(slots, maxf * sizeof(*slots));
		lens = realloc(lens, maxf * sizeof(*lens));
		GW_CHECK(slots && lens, "out of memory");
		for (uint32_t f = j.max_frames; f < maxf; f++)
			GW_CHECK(slots[f] = malloc(room), "out of memory");
		j.slots = slots;
		j.lens = lens;
		j.max_frames = maxf;
	}
	uint32_t frames = 0;
	int erc = gw_emu_encode_3lc(&j, &frames);
	char params[96];
	snprintf(params, sizeof(params), "sparsity=%.17g,max_frame_elems=%u", sparsity, lim);
	gw_test_frames fr = {0};
	lib_encode_with(GW_CODEC_3LC, params, v, with_e ? e2 : NULL, dim, budget, &fr);
	char what[200];
	snprintf(what, sizeof(what), "3lc %s budget %zu s %g max %u%s", name, budget, sparsity,
		 lim, with_e ? " feedback" : "");
	if (erc == GW_EBUDGET) {
		/* Refused: a segment does not fit a frame, so codec/'s frames are
		 * not the segments (it went on greedily). */
		GW_CHECK(j.seg && err == (uint32_t)GW_EBUDGET, "%s: refused without cause", what);
		int differ = fr.n != gw_kt_segments(&j);
		for (size_t f = 0; !differ && f < fr.n; f++) {
			gw_frame_info h;
			GW_CHECK(gw_frame_peek(fr.f[f].data, fr.f[f].len, &h) == 0, "peek");
			differ = h.start != 5 * gw_kt_seg_start(&j, (uint32_t)f);
		}
		GW_CHECK(differ, "%s: refused, but codec/'s frames are the segments", what);
		frames = 0;
		goto done;
	}
	GW_CHECK(erc == 0, "%s: emulation %d", what, erc);
	same_as_library(slots, lens, frames, &fr, with_e ? e1 : NULL, e2, dim, what);
	if (!with_e && sparsity == 1.0 && budget <= 8924 && !lim)
		compare_decode(GW_CODEC_3LC, &fr, dim, r, what);
done:
	gw_test_frames_free(&fr);
	for (uint32_t f = 0; f < maxf; f++)
		free(slots[f]);
	GW_FREE_ALL(e1, e2, bytes, runs, tok, tb, tiles, slots, lens);
	return frames;
}

static const size_t tlc_budgets[] = {64, 100, 256, 1424, 8924, 65535};

static void check_3lc_all(const float *v, uint64_t dim, const char *name, gw_test_rng *r,
			  size_t *frames)
{
	static const double sparsity[] = {1.0, 1.5, 1.999};
	for (size_t k = 0; k < GW_ARRAY_SIZE(tlc_budgets); k++) {
		size_t cap = tlc_budgets[k] < GW_WIRE_FRAME_MAX ? tlc_budgets[k] : GW_WIRE_FRAME_MAX;
		uint32_t P = (uint32_t)cap - 40;
		/* no limit; a chunk that always fits a frame (as the
		 * collective's); one that may not; a small one */
		uint32_t lims[] = {0, 5 * P, 5 * P + 7 * 5 * 14, 7};
		for (size_t s = 0; s < GW_ARRAY_SIZE(sparsity); s++)
			for (int with_e = 0; with_e < 2; with_e++)
				for (size_t l = 0; l < GW_ARRAY_SIZE(lims); l++) {
					uint64_t n = tiny_dim(dim, lims[l] == 7 ||
								      tlc_budgets[k] <= 100);
					*frames += check_3lc(v, n, tlc_budgets[k], sparsity[s],
							     with_e, lims[l], r, name);
				}
	}
}

static void test_3lc_traces(void **state)
{
	(void)state;
	gw_test_rng r = {7};
	size_t frames = 0;
	each_trace(check_3lc_all, 1, 2, 8, UINT64_MAX, &r, &frames);
	/* A long tensor of mostly zeros: runs across many frames and tiles. */
	const int N = brief() ? 40003 : 200003;
	float *v = calloc(N, sizeof(float));
	GW_CHECK(v, "out of memory");
	for (int i = 0; i < N; i += 1 + (int)gw_test_below(&r, 400))
		v[i] = gw_test_uniform(&r, -1, 1);
	check_3lc_all(v, N, "sparse", &r, &frames);
	/* Non-finite: the poisoned tensor. */
	v[N / 2] = NAN;
	check_3lc_all(v, N, "poisoned", &r, &frames);
	/* Every element the same magnitude: no zero runs at all. */
	for (int i = 0; i < N; i++)
		v[i] = i % 2 ? 1.0f : -1.0f;
	check_3lc_all(v, N, "no runs", &r, &frames);
	for (int i = 0; i < N; i++)
		v[i] = i % 3 ? 0.0f : (i % 2 ? FLT_MAX : -FLT_MAX);
	check_3lc_all(v, N, "huge", &r, &frames);
	free(v);
	printf("%zu 3lc frames byte-identical to codec/'s\n", frames);
}

/* ---- top-k ------------------------------------------------------------------ */

static size_t check_topk(const float *v, uint64_t dim, size_t budget, double fraction,
			 uint32_t mfe, int with_e, gw_test_rng *r, const char *name)
{
	double kd = ceil(fraction * (double)dim);
	uint32_t k = kd < 1.0 ? 1 : kd >= (double)dim ? (uint32_t)dim : (uint32_t)kd;
	size_t room = budget < GW_WIRE_FRAME_MAX ? budget : GW_WIRE_FRAME_MAX;
	/* Frames at most: every entry costs at most 9 bytes. */
	uint32_t per = ((uint32_t)room - 36 - 4) / 9 + 1;
	if (mfe && mfe < per)
		per = mfe;
	uint32_t maxf = (k + per - 1) / per;
	float *e1 = malloc(dim * sizeof(float)), *e2 = malloc(dim * sizeof(float));
	uint32_t *w[3], *sel = malloc(k * 4), *cost = malloc((k + 1) * 4);
	float *val = malloc(k * sizeof(float));
	uint32_t *tiles = malloc(gw_ks_tiles(dim + 1) * 4 + 4), hist[256], st[GW_KK_ST];
	uint32_t *first = malloc(maxf * 4), *count = malloc(maxf * 4), nframes = 0;
	uint8_t **slots = calloc(maxf, sizeof(*slots));
	uint32_t *lens = calloc(maxf, sizeof(*lens));
	for (int q = 0; q < 3; q++)
		GW_CHECK(w[q] = malloc(dim * 4), "out of memory");
	GW_CHECK(e1 && e2 && sel && cost && val && tiles && first && count && slots && lens,
		 "out of memory");
	for (uint64_t i = 0; i < dim; i++)
		e1[i] = e2[i] = gw_test_uniform(r, -1e-3f, 1e-3f);
	struct gw_kk_enc j = {.g = v, .e = with_e ? e1 : NULL, .dim = dim, .tensor = 42, .k = k,
			      .cap = (uint32_t)room - 36, .lim = mfe, .rank = w[0], .ties = w[1],
			      .pos = w[2], .sel = sel, .val = val, .cost = cost, .tiles = tiles,
			      .hist = hist, .st = st, .first = first, .count = count,
			      .nframes = &nframes, .max_frames = maxf};
	/* Slots only once the frame count is known: a first run counts. */
	uint32_t frames = 0;
	j.slots = slots;
	j.lens = lens;
	for (uint32_t f = 0; f < maxf; f++)
		GW_CHECK(slots[f] = malloc(room), "out of memory");
	GW_CHECK(gw_emu_encode_topk(&j, &frames) == 0, "emulated top-k refused");
	char params[96];
	snprintf(params, sizeof(params), "fraction=%.17g%s%u", fraction,
		 mfe ? ",max_frame_elems=" : "", mfe);
	if (!mfe)
		snprintf(params, sizeof(params), "fraction=%.17g", fraction);
	gw_test_frames fr = {0};
	lib_encode_with(GW_CODEC_TOPK, params, v, with_e ? e2 : NULL, dim, budget, &fr);
	char what[200];
	snprintf(what, sizeof(what), "topk %s budget %zu fraction %g max %u%s", name, budget,
		 fraction, mfe, with_e ? " feedback" : "");
	same_as_library(slots, lens, frames, &fr, with_e ? e1 : NULL, e2, dim, what);
	if (!with_e && !mfe && budget <= 8924 && fraction < 1.0)
		compare_decode(GW_CODEC_TOPK, &fr, dim, r, what);
	gw_test_frames_free(&fr);
	for (uint32_t f = 0; f < maxf; f++)
		free(slots[f]);
	for (int q = 0; q < 3; q++)
		free(w[q]);
	GW_FREE_ALL(e1, e2, sel, cost, val, tiles, first, count, slots, lens);
	return frames;
}

static void check_topk_all(const float *v, uint64_t dim, const char *name, gw_test_rng *r,
			   size_t *frames)
{
	static const size_t b[] = {64, 100, 1424, 8924, 65535};
	static const double fr[] = {0.01, 0.2, 1.0};
	for (size_t x = 0; x < GW_ARRAY_SIZE(b); x++)
		for (size_t y = 0; y < GW_ARRAY_SIZE(fr); y++)
			for (int with_e = 0; with_e < 2; with_e++)
				for (int lim = 0; lim < 2; lim++)
					*frames += check_topk(v, tiny_dim(dim, lim || b[x] <= 100),
							      b[x], fr[y], lim ? 5 : 0, with_e, r,
							      name);
}

static void test_topk_traces(void **state)
{
	(void)state;
	gw_test_rng r = {8};
	size_t frames = 0;
	each_trace(check_topk_all, 2, 4, 16, UINT64_MAX, &r, &frames);
	enum { N = 70001 };
	float *v = malloc(N * sizeof(float));
	GW_CHECK(v, "out of memory");
	/* Ties everywhere: a few magnitudes, signs mixed; then non-finite. */
	for (int i = 0; i < N; i++)
		v[i] = (float)(1 + (int)gw_test_below(&r, 4)) * (i % 3 ? 1.0f : -1.0f);
	check_topk_all(v, N, "ties", &r, &frames);
	v[5] = NAN;
	v[6000] = INFINITY;
	v[69999] = -INFINITY;
	check_topk_all(v, N, "non-finite", &r, &frames);
	/* Far-apart selections: long gaps, multi-byte varints. */
	for (int i = 0; i < N; i++)
		v[i] = i % 9973 ? 1e-6f : 1.0f;
	check_topk_all(v, N, "long gaps", &r, &frames);
	free(v);
	printf("%zu top-k frames byte-identical to codec/'s\n", frames);
}

GW_TEST_MAIN("gpu-emu", 1, cmocka_unit_test(test_xxh3), cmocka_unit_test(test_real_traces),
	     cmocka_unit_test(test_edge_tensors), cmocka_unit_test(test_3lc_traces),
	     cmocka_unit_test(test_topk_traces))
