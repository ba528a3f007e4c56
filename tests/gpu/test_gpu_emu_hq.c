/* hq's kernels (gw_cuda.cu's, run on the CPU by hostcuda/) against
 * codec/hq.c: the frames of real traces and edge tensors at every width
 * 2-8 that the cases reach, rotated or not, rounded to nearest or
 * stochastically, on each frame's own scale or on shared scales and seeds
 * (as the allreduce sets them, 0 and clipping ones included), with and
 * without an error buffer, in one batch or two (the second starting
 * mid-tensor, as the collective's launches do) — byte for byte the
 * library's frames and bit for bit its error buffer; and the decode
 * kernel on the library's worker frames, on shards' sum frames (W = 2..8,
 * a poisoned contributor) and on mutations of both: the library's verdict
 * and output. Runs on every machine: no GPU, no CUDA needed. */
#include <float.h>
#include <math.h>

#include "emu_check.h"

struct hq_case {
	unsigned bits, rotate, stochastic;
	int shared, with_e;
	size_t budget;
	uint32_t mfe;
};

static const char *case_name(const struct hq_case *k, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "hq %s bits %u%s%s%s%s budget %zu max %u", name, k->bits,
		 k->rotate ? " rotated" : "", k->stochastic ? " stochastic" : "",
		 k->shared ? " shared" : "", k->with_e ? " feedback" : "", k->budget, k->mfe);
	return buf;
}

/* Shared scales and seeds per frame, as rounds give them: 0 (a chunk's
 * first round), about the frame's maximum, well below it (clipping) and
 * above it. */
static void shared_of(const float *v, uint64_t dim, uint32_t per, uint32_t frames,
		      gw_test_rng *r, float *scales, uint32_t *seeds)
{
	for (uint32_t f = 0; f < frames; f++) {
		float m = 0.0f;
		for (uint64_t i = (uint64_t)f * per; i < dim && i < (uint64_t)(f + 1) * per; i++)
			m = isfinite(v[i]) && fabsf(v[i]) > m ? fabsf(v[i]) : m;
		static const float by[] = {0.0f, 1.0f, 0.1f, 3.0f};
		float s = m * by[f % 4];
		scales[f] = isfinite(s) ? s : FLT_MAX;
		seeds[f] = (uint32_t)gw_test_rand(r);
	}
}

/* The library's frames of v: one encoder, each frame's shared scale and
 * seed set before it when given. */
static void lib_hq(const struct hq_case *k, const float *v, float *e, uint64_t dim,
		   uint32_t per, const float *scales, const uint32_t *seeds, uint32_t seed,
		   gw_test_frames *fr)
{
	char params[160];
	snprintf(params, sizeof(params), "bits=%u,rotate=%u,rounding=%s,seed=%u,"
		 "max_frame_elems=%u", k->bits, k->rotate, k->stochastic ? "stochastic" : "nearest",
		 seed, per);
	if (!scales) {
		lib_encode_with(GW_CODEC_HQ, params, v, e, dim, k->budget, fr);
		return;
	}
	gw_encoder *enc = gw_test_encoder_with(GW_CODEC_HQ, params);
	gw_ef *ef = gw_test_ef_set(enc, e, dim);
	gw_tensor t = gw_test_dense_tensor(42, v, dim);
	GW_CHECK(gw_encode_begin(enc, &t) == 0, "begin");
	size_t room = GW_MIN(k->budget, (size_t)GW_FRAME_MAX);
	uint32_t frames = (uint32_t)((dim + per - 1) / per);
	fr->f = calloc(frames, sizeof(*fr->f));
	GW_CHECK(fr->f, "out of memory");
	for (uint32_t f = 0; f < frames; f++) {
		GW_CHECK(gw_encoder_set_shared(enc, scales[f], seeds[f]) == 0, "set_shared");
		GW_CHECK(fr->f[f].data = malloc(room), "out of memory");
		int n = gw_encode_next(enc, fr->f[f].data, k->budget);
		GW_CHECK(n > 0, "library frame %u: %d", f, n);
		fr->f[f].len = (size_t)n;
		fr->n++;
	}
	uint8_t none[GW_BUDGET_MIN];
	GW_CHECK(gw_encode_next(enc, none, sizeof(none)) == 0, "library: a frame too many");
	if (e)
		memcpy(e, gw_ef_data(ef), dim * sizeof(float));
	gw_encoder_free(enc);
	gw_ef_free(ef);
}

/* The kernel's frames [f0, f0 + n) of v into g's slots. */
static void emu_hq(const struct hq_case *k, const float *v, float *e, uint64_t dim, uint32_t per,
		   uint32_t f0, uint32_t n, const float *scales, const uint32_t *seeds,
		   uint32_t seed, float *y, int8_t *q, struct gpu_frames *g)
{
	uint64_t base = (uint64_t)f0 * per;
	struct gw_kh_enc j = {.g = v + base, .e = e ? e + base : NULL,
		.dim = GW_MIN((uint64_t)n * per, dim - base), .tensor = 42, .per_frame = per,
		.frames = n, .slots = g->slots + f0, .lens = g->lens + f0, .base = base,
		.bits = k->bits, .rotate = k->rotate, .stochastic = k->stochastic, .seed = seed,
		.scales = scales ? scales + f0 : NULL, .seeds = scales ? seeds + f0 : NULL,
		.count0 = f0, .y = y, .q = q};
	GW_CHECK(gw_emu_encode_hq(&j) == 0, "emulated hq encode refused");
}

/* One tensor and case: the kernel in two batches against the library. */
static size_t check_hq(const float *v, uint64_t dim, const struct hq_case *k, gw_test_rng *r,
		       const char *name)
{
	uint32_t per = gw_kh_per_frame(k->bits, k->budget, k->mfe);
	GW_CHECK(per > 0, "budget %zu refused", k->budget);
	uint32_t frames = (uint32_t)((dim + per - 1) / per);
	size_t room = GW_MIN(k->budget, (size_t)GW_FRAME_MAX);
	float *e1 = malloc(dim * sizeof(float)), *e2 = malloc(dim * sizeof(float));
	float *y = malloc(dim * sizeof(float)), *scales = malloc(frames * sizeof(float));
	int8_t *q = malloc(dim);
	uint32_t *seeds = malloc(frames * sizeof(uint32_t)), seed = (uint32_t)gw_test_rand(r);
	struct gpu_frames g = {calloc(frames, sizeof(uint8_t *)), calloc(frames, 4), frames};
	GW_CHECK(e1 && e2 && y && scales && q && seeds && g.slots && g.lens, "out of memory");
	for (uint32_t f = 0; f < frames; f++) {
		uint8_t *m = malloc(room + 3);
		GW_CHECK(m, "out of memory");
		g.slots[f] = m + f % 4;
	}
	for (uint64_t i = 0; i < dim; i++)
		e1[i] = e2[i] = gw_test_uniform(r, -1e-3f, 1e-3f);
	shared_of(v, dim, per, frames, r, scales, seeds);
	const float *sc = k->shared ? scales : NULL;
	uint32_t half = frames / 2;
	if (half)
		emu_hq(k, v, k->with_e ? e1 : NULL, dim, per, 0, half, sc, seeds, seed, y, q, &g);
	emu_hq(k, v, k->with_e ? e1 : NULL, dim, per, half, frames - half, sc, seeds, seed, y, q,
	       &g);
	gw_test_frames fr = {0};
	lib_hq(k, v, k->with_e ? e2 : NULL, dim, per, sc, seeds, seed, &fr);
	char what[200];
	case_name(k, name, what, sizeof(what));
	same_as_library(g.slots, g.lens, frames, &fr, k->with_e ? e1 : NULL, e2, dim, what);
	if (!k->with_e && k->budget <= 8924 && !k->mfe)
		compare_decode(GW_CODEC_HQ, &fr, dim, r, what);
	gw_test_frames_free(&fr);
	gpu_frames_free(&g);
	GW_FREE_ALL(e1, e2, y, scales, q, seeds);
	return frames;
}

static const size_t hq_budgets[] = {64, 100, 1424, 8924, 65535};

/* Every width the cases reach, rotation, rounding, scale and feedback:
 * 48 cases a tensor, the budget and the frame limit turning with them. */
static void check_hq_all(const float *v, uint64_t dim, const char *name, gw_test_rng *r,
			 size_t *frames)
{
	static const unsigned widths[] = {2, 4, 8};
	unsigned at = 0;
	for (size_t b = 0; b < GW_ARRAY_SIZE(widths); b++)
		for (unsigned m = 0; m < 16; m++, at++) {
			struct hq_case k = {.bits = widths[b], .rotate = m & 1,
					    .stochastic = (m >> 1) & 1, .shared = (m >> 2) & 1,
					    .with_e = (m >> 3) & 1,
					    .budget = hq_budgets[at % GW_ARRAY_SIZE(hq_budgets)],
					    .mfe = at % 7 == 3 ? 7 : at % 7 == 5 ? 1000 : 0};
			uint64_t n = tiny_dim(dim, k.mfe == 7 || k.budget <= 100);
			*frames += check_hq(v, n, &k, r, name);
		}
}

/* Traces longer than this take their first HQ_DIM_MAX elements: every
 * frame of a case is alike, and the fibers' schedule is what costs. */
#define HQ_DIM_MAX 40000u

static void test_hq_traces(void **state)
{
	(void)state;
	gw_test_rng r = {9};
	size_t frames = 0;
	each_trace(check_hq_all, 1, 4, 12, HQ_DIM_MAX, &r, &frames);
	printf("%zu hq frames byte-identical to codec/'s\n", frames);
}

static void test_hq_edges(void **state)
{
	(void)state;
	gw_test_rng r = {10};
	size_t frames = 0;
	enum { N = 9001 };
	/* NaN and Inf: poisoned frames among sound ones. */
	float *v = nonfinite_values(&r, N, 5000);
	check_hq_all(v, N, "non-finite", &r, &frames);
	/* Near FLT_MAX: rotations that overflow, steps that round up. */
	for (int i = 0; i < N; i++)
		v[i] = (i % 2 ? FLT_MAX : -FLT_MAX) * (i % 7 ? 1.0f : 0.25f);
	check_hq_all(v, N, "huge", &r, &frames);
	/* Scales whose inverse is not finite: every code 0, all kept in e. */
	for (int i = 0; i < N; i++)
		v[i] = (i % 3 ? 1 : -1) * ldexpf((float)(i % 127 + 1), -149 + i % 30);
	check_hq_all(v, N, "tiny", &r, &frames);
	/* All zero. */
	memset(v, 0, N * sizeof(float));
	check_hq_all(v, N, "zero", &r, &frames);
	free(v);
	printf("%zu edge-case hq frames byte-identical to codec/'s\n", frames);
}

/* Sum frames as a shard writes them: W workers' frames of one chunk on a
 * shared scale and seed, codes added (gw_sum_add), the sum encoded
 * (gw_sum_encode); the decode kernel against the library on them. */
static void check_sums(unsigned W, unsigned bits, unsigned rotate, int poison, gw_test_rng *r)
{
	enum { DIM = 6000, PER = 1500 };
	float *v = malloc(DIM * sizeof(float));
	int32_t *acc = calloc(PER, sizeof(int32_t));
	gw_test_frames sums = {calloc(DIM / PER, sizeof(gw_test_frame)), 0};
	GW_CHECK(v && acc && sums.f, "out of memory");
	char params[96];
	snprintf(params, sizeof(params), "bits=%u,rotate=%u,max_frame_elems=%u", bits, rotate, PER);
	float scale = 1.5f;
	uint32_t seeds[DIM / PER];
	for (unsigned f = 0; f < DIM / PER; f++)
		seeds[f] = (uint32_t)gw_test_rand(r);
	gw_test_frames fr[8] = {{0}};
	for (unsigned w = 0; w < W; w++) {
		for (int i = 0; i < DIM; i++)
			v[i] = gw_test_uniform(r, -2, 2);
		if (poison && w == 1)
			v[PER + 3] = NAN;   /* the second chunk's sum is poisoned */
		gw_encoder *enc = gw_test_encoder_with(GW_CODEC_HQ, params);
		gw_tensor t = gw_test_dense_tensor(42, v, DIM);
		GW_CHECK(gw_encode_begin(enc, &t) == 0, "begin");
		fr[w].f = calloc(DIM / PER, sizeof(gw_test_frame));
		GW_CHECK(fr[w].f, "out of memory");
		for (unsigned f = 0; f < DIM / PER; f++) {
			GW_CHECK(gw_encoder_set_shared(enc, scale, rotate ? seeds[f] : 0) == 0,
				 "set_shared");
			GW_CHECK(fr[w].f[f].data = malloc(GW_FRAME_MAX), "out of memory");
			int n = gw_encode_next(enc, fr[w].f[f].data, GW_FRAME_MAX);
			GW_CHECK(n > 0, "encode %d", n);
			fr[w].f[f].len = (size_t)n;
			fr[w].n++;
		}
		gw_encoder_free(enc);
	}
	for (unsigned f = 0; f < DIM / PER; f++) {
		memset(acc, 0, PER * sizeof(int32_t));
		gw_sum_info si, all = {0};
		for (unsigned w = 0; w < W; w++) {
			int n = gw_sum_add(fr[w].f[f].data, fr[w].f[f].len, acc, (uint64_t)f * PER,
					   PER, &si);
			GW_CHECK(n == PER, "sum_add %d", n);
			all.poisoned |= si.poisoned;
			all.next = si.next > all.next ? si.next : all.next;
		}
		si.contributors = W;
		si.poisoned = all.poisoned;
		si.next = all.next;
		uint8_t *b = malloc(GW_FRAME_MAX);
		GW_CHECK(b, "out of memory");
		int len = gw_sum_encode(b, GW_FRAME_MAX, 42, (uint64_t)f * PER, acc, PER, &si);
		GW_CHECK(len > 0, "sum_encode %d", len);
		sums.f[sums.n++] = (gw_test_frame){b, (size_t)len};
	}
	char what[120];
	snprintf(what, sizeof(what), "hq sums W %u bits %u%s%s", W, bits,
		 rotate ? " rotated" : "", poison ? " poisoned" : "");
	compare_decode(GW_CODEC_HQ, &sums, DIM, r, what);
	for (unsigned w = 0; w < W; w++)
		gw_test_frames_free(&fr[w]);
	gw_test_frames_free(&sums);
	GW_FREE_ALL(v, acc);
}

static void test_hq_sums(void **state)
{
	(void)state;
	gw_test_rng r = {12};
	unsigned cases = 0;
	for (unsigned W = 2; W <= 8; W += brief() ? 6 : 3)
		for (unsigned bits = 2; bits <= 8; bits += 3)
			for (unsigned rot = 0; rot < 2; rot++, cases++)
				check_sums(W, bits, rot, cases % 5 == 2, &r);
	printf("%u sets of sum frames decoded as codec/ decodes them\n", cases);
}

GW_TEST_MAIN("gpu-emu-hq", 1, cmocka_unit_test(test_hq_traces), cmocka_unit_test(test_hq_edges),
	     cmocka_unit_test(test_hq_sums))
