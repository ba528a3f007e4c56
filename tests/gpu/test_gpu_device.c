/* gpudirect's kernels on a real GPU: the frames the device writes for real
 * traces (raw, bf16, int8, 3lc, hq; with and without an error buffer;
 * several budgets; and top-k) are byte for byte those of the same kernels run on
 * the CPU by hostcuda (emu.h), hence codec/'s (test_gpu_emu holds that run
 * to codec/), the error buffers bit for bit; the decode kernels give the
 * CPU run's verdicts and sums. Exits 77 where no CUDA device answers
 * (scripts/gpu-check.sh runs it on the lent GPU machine). */
#include <math.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "../gw_test.h"
#include "emu.h"
#include "gw_cuda.h"

#define CU(x)                                                                        \
	do {                                                                         \
		cudaError_t e_ = (x);                                                \
		GW_CHECK(e_ == cudaSuccess, "%s: %s", #x, cudaGetErrorString(e_));   \
	} while (0)

static const size_t budgets[] = {100, 1424, 8924, 65535};

/* Device copies of n bytes of host memory. */
static void *dev_copy(const void *h, size_t n)
{
	void *d = NULL;
	CU(cudaMalloc(&d, n ? n : 1));
	if (n)
		CU(cudaMemcpy(d, h, n, cudaMemcpyHostToDevice));
	return d;
}

/* Frame slots on the device: an array of slot pointers, itself on the
 * device, over one allocation of n * room bytes. */
struct dslots {
	uint8_t *mem, **ptrs;
	uint32_t *lens;
};

static void dslots_make(struct dslots *s, uint32_t n, size_t room)
{
	CU(cudaMalloc((void **)&s->mem, (size_t)n * room));
	uint8_t **h = malloc(n * sizeof(*h));
	GW_CHECK(h, "out of memory");
	for (uint32_t i = 0; i < n; i++)
		h[i] = s->mem + (size_t)i * room;
	s->ptrs = dev_copy(h, n * sizeof(*h));
	free(h);
	CU(cudaMalloc((void **)&s->lens, n * sizeof(uint32_t)));
}

static void dslots_free(struct dslots *s)
{
	cudaFree(s->mem);
	cudaFree(s->ptrs);
	cudaFree(s->lens);
}

/* Host slots for the emulation. */
static uint8_t **hslots(uint32_t n, size_t room)
{
	uint8_t **h = malloc(n * sizeof(*h));
	GW_CHECK(h, "out of memory");
	for (uint32_t i = 0; i < n; i++)
		GW_CHECK(h[i] = calloc(1, room), "out of memory");
	return h;
}

static void hslots_free(uint8_t **h, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		free(h[i]);
	free(h);
}

/* The device's frames f[0..n) of room-byte slots against the host's. */
static void same_frames(const struct dslots *d, uint8_t **h, const uint32_t *hlens,
			uint32_t n, size_t room, const char *what)
{
	uint8_t *buf = malloc((size_t)n * room);
	uint32_t *lens = malloc(n * sizeof(*lens));
	GW_CHECK(buf && lens, "out of memory");
	CU(cudaMemcpy(buf, d->mem, (size_t)n * room, cudaMemcpyDeviceToHost));
	CU(cudaMemcpy(lens, d->lens, n * sizeof(*lens), cudaMemcpyDeviceToHost));
	for (uint32_t f = 0; f < n; f++)
		GW_CHECK(lens[f] == hlens[f] && !memcmp(buf + (size_t)f * room, h[f], lens[f]),
			 "%s: device frame %u differs (%u bytes, host %u)", what, f, lens[f],
			 hlens[f]);
	free(buf);
	free(lens);
}

/* The device's decode of its own frames (d) against the emulation's of
 * the host's (h): which kernel by codec (raw/bf16/int8, 3lc, topk). */
static void same_decode(int codec, const struct dslots *d, uint8_t **h, const uint32_t *hlens,
			uint32_t n, uint64_t dim, const char *what)
{
	float *init = malloc(dim * sizeof(float)), *want = malloc(dim * sizeof(float));
	float *got = malloc(dim * sizeof(float));
	int32_t *hrc = malloc(n * sizeof(int32_t)), *grc = malloc(n * sizeof(int32_t));
	GW_CHECK(init && want && got && hrc && grc, "out of memory");
	gw_test_rng r = {dim * 3};
	for (uint64_t i = 0; i < dim; i++)
		init[i] = want[i] = gw_test_uniform(&r, -1, 1);
	float *dout = dev_copy(init, dim * sizeof(float));
	int32_t *drc;
	CU(cudaMalloc((void **)&drc, n * sizeof(int32_t)));
	const uint8_t *const *hf = (const uint8_t *const *)h;
	const uint8_t *const *df = (const uint8_t *const *)d->ptrs;
	int rc;
	if (codec == GW_WIRE_CODEC_3LC) {
		struct gw_kf_dec he = {hf, hlens, n, want, dim, hrc};
		struct gw_kf_dec de = {df, d->lens, n, dout, dim, drc};
		gw_emu_decode_3lc(&he);
		rc = gw_cuda_decode_3lc(&de, 0);
	} else if (codec == GW_WIRE_CODEC_TOPK) {
		struct gw_kf_dec he = {hf, hlens, n, want, dim, hrc};
		struct gw_kf_dec de = {df, d->lens, n, dout, dim, drc};
		gw_emu_decode_topk(&he);
		rc = gw_cuda_decode_topk(&de, 0);
	} else if (codec == GW_WIRE_CODEC_HQ) {
		struct gw_kf_dec he = {hf, hlens, n, want, dim, hrc};
		struct gw_kf_dec de = {df, d->lens, n, dout, dim, drc};
		gw_emu_decode_hq(&he);
		rc = gw_cuda_decode_hq(&de, 0);
	} else {
		struct gw_kf_dec he = {hf, hlens, n, want, dim, hrc};
		struct gw_kf_dec de = {df, d->lens, n, dout, dim, drc};
		gw_emu_decode_dense(&he);
		rc = gw_cuda_decode_dense(&de, 0);
	}
	GW_CHECK(rc == 0, "%s: decode launch", what);
	CU(cudaDeviceSynchronize());
	CU(cudaMemcpy(got, dout, dim * sizeof(float), cudaMemcpyDeviceToHost));
	CU(cudaMemcpy(grc, drc, n * sizeof(int32_t), cudaMemcpyDeviceToHost));
	for (uint32_t f = 0; f < n; f++)
		GW_CHECK(grc[f] == hrc[f] && hrc[f] > 0, "%s: frame %u decoded %d on the device, "
			 "%d on the host", what, f, grc[f], hrc[f]);
	for (uint64_t i = 0; i < dim; i++)
		GW_CHECK(gw_test_bits(got[i]) == gw_test_bits(want[i]) ||
				 (got[i] != got[i] && want[i] != want[i]),
			 "%s: element %llu decoded %08x on the device, %08x on the host", what,
			 (unsigned long long)i, gw_test_bits(got[i]), gw_test_bits(want[i]));
	cudaFree(dout);
	cudaFree(drc);
	GW_FREE_ALL(init, want, got, hrc, grc);
}

static void dense_case(int codec, const float *v, uint64_t dim, size_t budget, int with_e,
		       size_t *frames)
{
	size_t room = budget < GW_WIRE_FRAME_MAX ? budget : GW_WIRE_FRAME_MAX;
	uint32_t per = gw_kd_per_frame(codec, budget, 0);
	struct gw_kd_enc j = {.codec = codec, .dim = dim, .tensor = 7, .per_frame = per};
	j.frames = gw_kd_frame_count(&j);
	float *e = malloc(dim * sizeof(float)), *de_back = malloc(dim * sizeof(float));
	GW_CHECK(e && de_back, "out of memory");
	gw_test_rng r = {dim};
	for (uint64_t i = 0; i < dim; i++)
		e[i] = gw_test_uniform(&r, -1e-3f, 1e-3f);
	float *dg = dev_copy(v, dim * sizeof(float));
	float *de = dev_copy(e, dim * sizeof(float));
	struct dslots ds;
	dslots_make(&ds, j.frames, room);
	struct gw_kd_enc dj = j;
	dj.g = dg;
	dj.e = with_e ? de : NULL;
	dj.slots = ds.ptrs;
	dj.lens = ds.lens;
	GW_CHECK(gw_cuda_encode_dense(&dj, 0) == 0, "launch");
	CU(cudaDeviceSynchronize());
	uint8_t **hs = hslots(j.frames, room);
	uint32_t *hl = calloc(j.frames, sizeof(*hl));
	GW_CHECK(hl, "out of memory");
	j.g = v;
	j.e = with_e ? e : NULL;
	j.slots = hs;
	j.lens = hl;
	gw_emu_encode_dense(&j);
	char what[96];
	snprintf(what, sizeof(what), "%s budget %zu%s", gw_codec_name(codec), budget,
		 with_e ? " feedback" : "");
	same_frames(&ds, hs, hl, j.frames, room, what);
	same_decode(codec, &ds, hs, hl, j.frames, dim, what);
	CU(cudaMemcpy(de_back, de, dim * sizeof(float), cudaMemcpyDeviceToHost));
	if (with_e)
		GW_CHECK(!memcmp(de_back, e, dim * sizeof(float)), "%s: error buffers differ", what);
	*frames += j.frames;
	hslots_free(hs, j.frames);
	free(hl);
	dslots_free(&ds);
	cudaFree(dg);
	cudaFree(de);
	free(e);
	free(de_back);
}

static void tlc_case(const float *v, uint64_t dim, size_t budget, int with_e, size_t *frames)
{
	size_t room = budget < GW_WIRE_FRAME_MAX ? budget : GW_WIRE_FRAME_MAX;
	uint64_t nb = (dim + 4) / 5;
	uint32_t P = (uint32_t)room - 40, maxf = (uint32_t)((nb + P - 1) / P);
	float *e = malloc(dim * sizeof(float)), *back = malloc(dim * sizeof(float));
	uint8_t *bytes = malloc(nb);
	uint32_t *w[3], *tiles = malloc(gw_ks_tiles(nb) * 4 + 4), mx = 0, ntok = 0, err = 0;
	for (int k = 0; k < 3; k++)
		GW_CHECK(w[k] = malloc(nb * 4), "out of memory");
	GW_CHECK(e && back && bytes && tiles, "out of memory");
	gw_test_rng r = {dim + 1};
	for (uint64_t i = 0; i < dim; i++)
		e[i] = gw_test_uniform(&r, -1e-3f, 1e-3f);
	/* Device side. */
	struct dslots ds;
	dslots_make(&ds, maxf, room);
	float *dg = dev_copy(v, dim * sizeof(float)), *de = dev_copy(e, dim * sizeof(float));
	struct gw_kt_enc dj = {.g = dg, .e = with_e ? de : NULL, .dim = dim, .tensor = 7,
			       .sparsity = 1.0, .room = P, .nb = nb, .slots = ds.ptrs,
			       .lens = ds.lens, .max_frames = maxf};
	CU(cudaMalloc((void **)&dj.bytes, nb));
	CU(cudaMalloc((void **)&dj.runs, nb * 4));
	CU(cudaMalloc((void **)&dj.tok, nb * 4));
	CU(cudaMalloc((void **)&dj.tok_byte, nb * 4));
	CU(cudaMalloc((void **)&dj.tiles, gw_ks_tiles(nb) * 4 + 4));
	CU(cudaMalloc((void **)&dj.mx, 4));
	CU(cudaMalloc((void **)&dj.ntok, 4));
	CU(cudaMalloc((void **)&dj.err, 4));
	GW_CHECK(gw_cuda_encode_3lc(&dj, 0) == 0, "launch");
	CU(cudaDeviceSynchronize());
	uint32_t dntok = 0;
	CU(cudaMemcpy(&dntok, dj.ntok, 4, cudaMemcpyDeviceToHost));
	/* Host side. */
	uint8_t **hs = hslots(maxf, room);
	uint32_t *hl = calloc(maxf, sizeof(*hl)), frames_h = 0;
	GW_CHECK(hl, "out of memory");
	struct gw_kt_enc hj = {.g = v, .e = with_e ? e : NULL, .dim = dim, .tensor = 7,
			       .sparsity = 1.0, .room = P, .nb = nb, .bytes = bytes, .runs = w[0],
			       .tok = w[1], .tok_byte = w[2], .tiles = tiles, .mx = &mx,
			       .ntok = &ntok, .err = &err, .slots = hs, .lens = hl, .max_frames = maxf};
	GW_CHECK(gw_emu_encode_3lc(&hj, &frames_h) == 0, "emulation");
	GW_CHECK(dntok == ntok, "3lc budget %zu: %u tokens on the device, %u on the host",
		 budget, dntok, ntok);
	char what[96];
	snprintf(what, sizeof(what), "3lc budget %zu%s", budget, with_e ? " feedback" : "");
	same_frames(&ds, hs, hl, frames_h, room, what);
	same_decode(4, &ds, hs, hl, frames_h, dim, what);
	CU(cudaMemcpy(back, de, dim * sizeof(float), cudaMemcpyDeviceToHost));
	if (with_e)
		GW_CHECK(!memcmp(back, e, dim * sizeof(float)), "%s: error buffers differ", what);
	*frames += frames_h;
	cudaFree(dj.bytes);
	cudaFree(dj.runs);
	cudaFree(dj.tok);
	cudaFree(dj.tok_byte);
	cudaFree(dj.tiles);
	cudaFree(dj.mx);
	cudaFree(dj.ntok);
	cudaFree(dj.err);
	cudaFree(dg);
	cudaFree(de);
	dslots_free(&ds);
	hslots_free(hs, maxf);
	for (int k = 0; k < 3; k++)
		free(w[k]);
	GW_FREE_ALL(hl, e, back, bytes, tiles);
}

static void topk_case(const float *v, uint64_t dim, size_t budget, int with_e, size_t *frames)
{
	size_t room = budget < GW_WIRE_FRAME_MAX ? budget : GW_WIRE_FRAME_MAX;
	uint32_t k = (uint32_t)ceil(0.01 * (double)dim);
	k = k < 1 ? 1 : k;
	uint32_t per = ((uint32_t)room - 40) / 9 + 1, maxf = (k + per - 1) / per;
	float *e = malloc(dim * sizeof(float)), *back = malloc(dim * sizeof(float));
	GW_CHECK(e && back, "out of memory");
	gw_test_rng r = {dim + 2};
	for (uint64_t i = 0; i < dim; i++)
		e[i] = gw_test_uniform(&r, -1e-3f, 1e-3f);
	/* Host side first: the emulation's frames. */
	uint32_t *w[3], *sel = malloc(k * 4), *cost = malloc((k + 1) * 4), hist[256],
		st[GW_KK_ST], *first = malloc(maxf * 4), *count = malloc(maxf * 4), nf = 0;
	float *val = malloc(k * sizeof(float)), *eh = malloc(dim * sizeof(float));
	uint32_t *tiles = malloc(gw_ks_tiles(dim + 1) * 4 + 4);
	for (int q = 0; q < 3; q++)
		GW_CHECK(w[q] = malloc(dim * 4), "out of memory");
	GW_CHECK(sel && cost && first && count && val && eh && tiles, "out of memory");
	memcpy(eh, e, dim * sizeof(float));
	uint8_t **hs = hslots(maxf, room);
	uint32_t *hl = calloc(maxf, sizeof(*hl)), frames_h = 0;
	GW_CHECK(hl, "out of memory");
	struct gw_kk_enc hj = {.g = v, .e = with_e ? eh : NULL, .dim = dim, .tensor = 7, .k = k,
			       .cap = (uint32_t)room - 36, .rank = w[0], .ties = w[1], .pos = w[2],
			       .sel = sel, .val = val, .cost = cost, .tiles = tiles, .hist = hist,
			       .st = st, .first = first, .count = count, .nframes = &nf,
			       .slots = hs, .lens = hl, .max_frames = maxf};
	GW_CHECK(gw_emu_encode_topk(&hj, &frames_h) == 0, "emulation");
	/* Device side. */
	struct dslots ds;
	dslots_make(&ds, maxf, room);
	float *dg = dev_copy(v, dim * sizeof(float)), *de = dev_copy(e, dim * sizeof(float));
	struct gw_kk_enc dj = {.g = dg, .e = with_e ? de : NULL, .dim = dim, .tensor = 7, .k = k,
			       .cap = (uint32_t)room - 36, .slots = ds.ptrs, .lens = ds.lens,
			       .max_frames = maxf};
	CU(cudaMalloc((void **)&dj.rank, dim * 4));
	CU(cudaMalloc((void **)&dj.ties, dim * 4));
	CU(cudaMalloc((void **)&dj.pos, dim * 4));
	CU(cudaMalloc((void **)&dj.sel, k * 4));
	CU(cudaMalloc((void **)&dj.val, k * 4));
	CU(cudaMalloc((void **)&dj.cost, (k + 1) * 4));
	CU(cudaMalloc((void **)&dj.tiles, gw_ks_tiles(dim + 1) * 4 + 4));
	CU(cudaMalloc((void **)&dj.hist, 256 * 4));
	CU(cudaMalloc((void **)&dj.st, GW_KK_ST * 4));
	CU(cudaMalloc((void **)&dj.first, maxf * 4));
	CU(cudaMalloc((void **)&dj.count, maxf * 4));
	CU(cudaMalloc((void **)&dj.nframes, 4));
	GW_CHECK(gw_cuda_encode_topk(&dj, 0) == 0, "launch");
	CU(cudaDeviceSynchronize());
	uint32_t dnf = 0;
	CU(cudaMemcpy(&dnf, dj.nframes, 4, cudaMemcpyDeviceToHost));
	GW_CHECK(dnf == frames_h, "topk budget %zu: %u frames on the device, %u on the host",
		 budget, dnf, frames_h);
	char what[96];
	snprintf(what, sizeof(what), "topk budget %zu%s", budget, with_e ? " feedback" : "");
	same_frames(&ds, hs, hl, frames_h, room, what);
	same_decode(7, &ds, hs, hl, frames_h, dim, what);
	CU(cudaMemcpy(back, de, dim * sizeof(float), cudaMemcpyDeviceToHost));
	if (with_e)
		GW_CHECK(!memcmp(back, eh, dim * sizeof(float)), "%s: error buffers differ", what);
	*frames += frames_h;
	void *dptrs[] = {dj.rank, dj.ties, dj.pos, dj.sel, dj.val, dj.cost, dj.tiles, dj.hist,
			 dj.st, dj.first, dj.count, dj.nframes, dg, de};
	for (size_t q = 0; q < sizeof(dptrs) / sizeof(dptrs[0]); q++)
		cudaFree(dptrs[q]);
	dslots_free(&ds);
	hslots_free(hs, maxf);
	for (int q = 0; q < 3; q++)
		free(w[q]);
	GW_FREE_ALL(e, back, sel, cost, first, count, val, eh, tiles, hl);
}

/* hq at 4 bits, rotated (on shared scales, as the allreduce encodes) or
 * not (each frame its own scale), rounded stochastically without
 * feedback: in two launches, the second starting mid-tensor. */
static void hq_case(const float *v, uint64_t dim, size_t budget, int with_e, int rotate,
		    size_t *frames)
{
	size_t room = budget < GW_WIRE_FRAME_MAX ? budget : GW_WIRE_FRAME_MAX;
	uint32_t per = gw_kh_per_frame(4, budget, 0), nf = (uint32_t)((dim + per - 1) / per);
	float *e = malloc(dim * sizeof(float)), *back = malloc(dim * sizeof(float));
	float *y = malloc(dim * sizeof(float)), *scales = malloc(nf * sizeof(float));
	int8_t *q = malloc(dim);
	uint32_t *seeds = malloc(nf * sizeof(uint32_t));
	GW_CHECK(e && back && y && scales && q && seeds, "out of memory");
	gw_test_rng r = {dim + 3};
	for (uint64_t i = 0; i < dim; i++)
		e[i] = gw_test_uniform(&r, -1e-3f, 1e-3f);
	for (uint32_t f = 0; f < nf; f++) {
		scales[f] = f % 3 ? gw_test_uniform(&r, 0.0f, 0.05f) : 0.0f;
		seeds[f] = (uint32_t)gw_test_rand(&r);
	}
	struct gw_kh_enc j = {.dim = dim, .tensor = 7, .per_frame = per, .bits = 4,
			      .rotate = (uint32_t)rotate, .stochastic = !with_e, .seed = 99};
	struct dslots ds;
	dslots_make(&ds, nf, room);
	float *dg = dev_copy(v, dim * sizeof(float)), *de = dev_copy(e, dim * sizeof(float));
	float *dsc = dev_copy(scales, nf * sizeof(float));
	uint32_t *dse = dev_copy(seeds, nf * sizeof(uint32_t));
	float *dy;
	int8_t *dq;
	CU(cudaMalloc((void **)&dy, dim * sizeof(float)));
	CU(cudaMalloc((void **)&dq, dim));
	uint8_t **hs = hslots(nf, room);
	uint32_t *hl = calloc(nf, sizeof(*hl));
	GW_CHECK(hl, "out of memory");
	uint32_t cut[] = {0, nf / 2, nf};
	for (int p = 0; p < 2; p++) {
		uint32_t f0 = cut[p], n = cut[p + 1] - cut[p];
		if (!n)
			continue;
		uint64_t base = (uint64_t)f0 * per;
		struct gw_kh_enc dj = j, hj = j;
		dj.dim = hj.dim = GW_MIN((uint64_t)n * per, dim - base);
		dj.frames = hj.frames = n;
		dj.base = hj.base = base;
		dj.count0 = hj.count0 = f0;
		dj.g = dg + base;
		dj.e = with_e ? de + base : NULL;
		dj.slots = ds.ptrs + f0;
		dj.lens = ds.lens + f0;
		dj.scales = rotate ? dsc + f0 : NULL;
		dj.seeds = rotate ? dse + f0 : NULL;
		dj.y = dy;
		dj.q = dq;
		GW_CHECK(gw_cuda_encode_hq(&dj, 0) == 0, "hq launch");
		hj.g = v + base;
		hj.e = with_e ? e + base : NULL;
		hj.slots = hs + f0;
		hj.lens = hl + f0;
		hj.scales = rotate ? scales + f0 : NULL;
		hj.seeds = rotate ? seeds + f0 : NULL;
		hj.y = y;
		hj.q = q;
		GW_CHECK(gw_emu_encode_hq(&hj) == 0, "emulation");
		CU(cudaDeviceSynchronize());
	}
	char what[96];
	snprintf(what, sizeof(what), "hq budget %zu%s%s", budget, rotate ? " rotated" : "",
		 with_e ? " feedback" : " stochastic");
	same_frames(&ds, hs, hl, nf, room, what);
	same_decode(GW_WIRE_CODEC_HQ, &ds, hs, hl, nf, dim, what);
	CU(cudaMemcpy(back, de, dim * sizeof(float), cudaMemcpyDeviceToHost));
	if (with_e)
		GW_CHECK(!memcmp(back, e, dim * sizeof(float)), "%s: error buffers differ", what);
	*frames += nf;
	void *dptrs[] = {dg, de, dsc, dse, dy, dq};
	for (size_t k = 0; k < sizeof(dptrs) / sizeof(dptrs[0]); k++)
		cudaFree(dptrs[k]);
	dslots_free(&ds);
	hslots_free(hs, nf);
	GW_FREE_ALL(e, back, y, scales, q, seeds, hl);
}

/* GW_GPU_DEVICE_QUICK=1: one trace (cnn it010 fc.weight, 20,480
 * floats) at budgets 100 and 8924, every codec, with and without feedback;
 * =2: that trace at budget 1424 with feedback only. What
 * scripts/gpu-check.sh runs under compute-sanitizer, whose tools slow every
 * launch down many times (racecheck most). */
static void test_encode_on_device(void **state)
{
	(void)state;
	size_t frames = 0;
	static const int dense[] = {GW_WIRE_CODEC_RAW, GW_WIRE_CODEC_BF16, GW_WIRE_CODEC_INT8};
	const char *q = getenv("GW_GPU_DEVICE_QUICK");
	int quick = q && (!strcmp(q, "1") || !strcmp(q, "2")) ? q[0] - '0' : 0;
	for (int i = quick ? 10 : 0; i < (quick ? 11 : GW_TEST_N_DENSE); i += 5) {
		gw_test_dense d;
		gw_test_load_dense(i, &d);
		for (size_t k = 0; k < GW_ARRAY_SIZE(budgets); k++)
			for (int with_e = 0; with_e < 2; with_e++) {
				if ((quick == 1 && budgets[k] != 100 && budgets[k] != 8924) ||
				    (quick == 2 && (budgets[k] != 1424 || !with_e)))
					continue;
				for (size_t c = 0; c < GW_ARRAY_SIZE(dense); c++)
					dense_case(dense[c], d.v, d.n, budgets[k], with_e, &frames);
				tlc_case(d.v, d.n, budgets[k], with_e, &frames);
				topk_case(d.v, d.n, budgets[k], with_e, &frames);
				hq_case(d.v, d.n, budgets[k], with_e, (int)(k % 2) ^ with_e,
					&frames);
			}
		gw_test_dense_free(&d);
	}
	printf("%zu device frames byte-identical to the emulation's%s\n", frames,
	       quick == 1 ? " (GW_GPU_DEVICE_QUICK=1: one trace, two budgets)"
	       : quick == 2 ? " (GW_GPU_DEVICE_QUICK=2: one trace, one budget)" : "");
}

int main(int argc, char **argv)
{
	(void)argc;
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	/* A GPU whose driver is too old for this runtime is a failure, not a
	 * machine without a GPU. */
	if (e != cudaSuccess && access("/dev/nvidia0", F_OK) == 0) {
		printf("FAIL: /dev/nvidia0 exists but CUDA says: %s\n", cudaGetErrorString(e));
		return 1;
	}
	if (e != cudaSuccess || n < 1) {
		printf("SKIP: no CUDA device (%s); scripts/gpu-check.sh runs this on a GPU\n",
		       e != cudaSuccess ? cudaGetErrorString(e) : "none");
		return 77;
	}
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_encode_on_device)};
	gw_test_init(argv[0], 1);
	return cmocka_run_group_tests_name("gpu-device", tests, NULL, NULL);
}
