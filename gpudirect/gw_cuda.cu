/* The kernels on the device: the phases of kern/ with a __syncthreads()
 * between a block's phases and a launch between phases that need the
 * whole grid. The same file is compiled for the CPU (hostcuda/kernels.cc),
 * where a block's threads are fibers: hence launches and shared variables
 * spelled GW_LAUNCH and GW_SHARED (gw_cuda_lang.h).
 * Dense raw/bf16/int8: one frame per block (grid-stride over the frames),
 * GW_KD_THREADS threads. 3lc: the launches of kern/tlc.h, on one stream,
 * with no host round trip (the frame count stays on the device). hq: one
 * frame per block, its rotation blocks one after another through shared
 * memory, a barrier between butterfly passes. */
#include <cuda_runtime.h>

#include "gw_cuda.h"
#include "gw_cuda_lang.h"
#include "kern/dense.h"
#include "kern/hq.h"
#include "kern/tlc.h"
#include "kern/topk.h"

__global__ void __launch_bounds__(GW_KD_THREADS) gw_kd_encode_kernel(struct gw_kd_enc j)
{
	GW_SHARED(struct gw_kd_shared, s);
	uint32_t t = threadIdx.x;
	for (uint32_t f = blockIdx.x; f < j.frames; f += gridDim.x) {
		if (j.codec == GW_WIRE_CODEC_INT8) {
			gw_kd_enc_scan(&j, f, t, &s);
			__syncthreads();
			if (t == 0)
				gw_kd_enc_scale(&s);
			__syncthreads();
		}
		gw_kd_enc_values(&j, f, t, &s);
		__syncthreads();
		if (t == 0)
			gw_kd_enc_seal(&j, f, &s);
		__syncthreads();
	}
}

__global__ void __launch_bounds__(GW_KD_THREADS) gw_kd_decode_kernel(struct gw_kf_dec d)
{
	GW_SHARED(struct gw_kd_shared, s);
	uint32_t t = threadIdx.x;
	for (uint32_t f = blockIdx.x; f < d.n; f += gridDim.x) {
		if (t == 0)
			gw_kd_dec_check(&d, f, &s);
		__syncthreads();
		gw_kd_dec_scan(t, &s);
		__syncthreads();
		if (t == 0)
			gw_kd_dec_verdict(&s);
		__syncthreads();
		gw_kd_dec_add(&d, t, &s);
		__syncthreads();
		if (t == 0)
			gw_kd_dec_done(&d, f, &s);
		__syncthreads();
	}
}

/* cudaGetLastError() after the launches is their verdict only if nothing
 * before left an error there (a refused registration, a failed copy of
 * the caller's): each entry point clears it first. */
static void fresh(void)
{
	(void)cudaGetLastError();
}

static unsigned grid_for(uint32_t n)
{
	return n < 65535u ? (n ? n : 1u) : 65535u;
}

extern "C" cudaError_t gw_cuda_encode_dense(const struct gw_kd_enc *j, cudaStream_t stream)
{
	if (!j || !j->frames)
		return cudaErrorInvalidValue;
	fresh();
	GW_LAUNCH(gw_kd_encode_kernel, grid_for(j->frames), GW_KD_THREADS, stream)(*j);
	return cudaGetLastError();
}

extern "C" cudaError_t gw_cuda_decode_dense(const struct gw_kf_dec *d, cudaStream_t stream)
{
	if (!d || !d->n)
		return cudaErrorInvalidValue;
	fresh();
	GW_LAUNCH(gw_kd_decode_kernel, grid_for(d->n), GW_KD_THREADS, stream)(*d);
	return cudaGetLastError();
}

/* ---- scans (kern/scan.h) ---------------------------------------------------- */

__global__ void __launch_bounds__(GW_KS_THREADS) gw_ks_tile_kernel(struct gw_ks_scan s)
{
	GW_SHARED(struct gw_ks_shared, sh);
	gw_ks_tile_reduce(&s, blockIdx.x, threadIdx.x, &sh);
	__syncthreads();
	if (threadIdx.x == 0)
		gw_ks_tile_prefix(&s, blockIdx.x, &sh);
	__syncthreads();
	gw_ks_tile_write(&s, blockIdx.x, threadIdx.x, &sh);
}

__global__ void __launch_bounds__(GW_KS_THREADS) gw_ks_tiles_kernel(struct gw_ks_scan s)
{
	GW_SHARED(struct gw_ks_shared, sh);
	gw_ks_tiles_reduce(&s, threadIdx.x, &sh);
	__syncthreads();
	if (threadIdx.x == 0)
		gw_ks_tiles_prefix(&s, &sh);
	__syncthreads();
	gw_ks_tiles_write(&s, threadIdx.x, &sh);
}

__global__ void gw_ks_apply_kernel(struct gw_ks_scan s)
{
	for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < s.n;
	     i += (uint64_t)gridDim.x * blockDim.x)
		gw_ks_apply(&s, i);
}

static void scan(const struct gw_ks_scan *s, cudaStream_t stream)
{
	GW_LAUNCH(gw_ks_tile_kernel, gw_ks_tiles(s->n), GW_KS_THREADS, stream)(*s);
	GW_LAUNCH(gw_ks_tiles_kernel, 1, GW_KS_THREADS, stream)(*s);
	GW_LAUNCH(gw_ks_apply_kernel, grid_for((uint32_t)((s->n + 255) / 256)), 256, stream)(*s);
}

/* ---- 3lc (kern/tlc.h) ----------------------------------------------------------- */

/* The max launch's grid: enough blocks to fill an H100's 132 SMs several
 * times over for a large tensor, one for a small one (the maximum does
 * not depend on how the work is split). */
static unsigned tlc_max_grid(uint64_t dim)
{
	uint64_t b = (dim + 4 * GW_KT_THREADS - 1) / (4 * GW_KT_THREADS);
	return b < 1 ? 1u : b > 1024 ? 1024u : (unsigned)b;
}

__global__ void __launch_bounds__(GW_KT_THREADS) gw_kt_max_kernel(struct gw_kt_enc j)
{
	GW_SHARED(uint32_t[GW_KT_THREADS], part);
	gw_kt_max_part(&j, (uint64_t)blockIdx.x * GW_KT_THREADS + threadIdx.x,
		       (uint64_t)gridDim.x * GW_KT_THREADS, &part[threadIdx.x]);
	__syncthreads();
	if (threadIdx.x == 0)
		gw_kt_max_block(&j, part, GW_KT_THREADS);
}

/* One phase applied to every packed byte, grid-stride. */
#define GW_KT_BYTES_KERNEL(name, fn)                                             \
	__global__ void name(struct gw_kt_enc j)                                  \
	{                                                                         \
		for (uint64_t b = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;  \
		     b < j.nb; b += (uint64_t)gridDim.x * blockDim.x)             \
			fn(&j, b);                                                \
	}
GW_KT_BYTES_KERNEL(gw_kt_pack_kernel, gw_kt_pack)
GW_KT_BYTES_KERNEL(gw_kt_run_start_kernel, gw_kt_run_start)
GW_KT_BYTES_KERNEL(gw_kt_token_flag_kernel, gw_kt_token_flag)
GW_KT_BYTES_KERNEL(gw_kt_write_kernel, gw_kt_write)
GW_KT_BYTES_KERNEL(gw_kt_residual_kernel, gw_kt_residual)

__global__ void gw_kt_count_kernel(struct gw_kt_enc j)
{
	gw_kt_count(&j);
}

__global__ void gw_kt_seal_kernel(struct gw_kt_enc j)
{
	uint32_t frames = gw_kt_frames(&j);
	if (frames > j.max_frames || *j.err)
		return;   /* the caller reads ntok and err and refuses */
	for (uint32_t f = blockIdx.x * blockDim.x + threadIdx.x; f < frames;
	     f += gridDim.x * blockDim.x)
		gw_kt_seal(&j, f);
}

extern "C" cudaError_t gw_cuda_max_3lc(const struct gw_kt_enc *j, cudaStream_t stream)
{
	if (!j || !j->mx)
		return cudaErrorInvalidValue;
	fresh();
	cudaError_t e = cudaMemsetAsync(j->mx, 0, sizeof(uint32_t), stream);
	if (e != cudaSuccess)
		return e;
	GW_LAUNCH(gw_kt_max_kernel, tlc_max_grid(j->dim), GW_KT_THREADS, stream)(*j);
	return cudaGetLastError();
}

extern "C" cudaError_t gw_cuda_encode_3lc(const struct gw_kt_enc *j, cudaStream_t stream)
{
	if (!j || !j->nb || !j->room || !j->max_frames)
		return cudaErrorInvalidValue;
	fresh();
	unsigned grid = grid_for((uint32_t)((j->nb + 255) / 256));
	cudaError_t e;
	if (!j->mx_given && (e = gw_cuda_max_3lc(j, stream)) != cudaSuccess)
		return e;
	GW_LAUNCH(gw_kt_pack_kernel, grid, 256, stream)(*j);
	GW_LAUNCH(gw_kt_run_start_kernel, grid, 256, stream)(*j);
	struct gw_ks_scan runs = {GW_KS_MAX, 1, j->runs, j->runs, j->tiles, j->nb};
	scan(&runs, stream);
	GW_LAUNCH(gw_kt_token_flag_kernel, grid, 256, stream)(*j);
	struct gw_ks_scan toks = {GW_KS_SUM, 0, j->tok, j->tok, j->tiles, j->nb};
	scan(&toks, stream);
	GW_LAUNCH(gw_kt_count_kernel, 1, 1, stream)(*j);
	GW_LAUNCH(gw_kt_write_kernel, grid, 256, stream)(*j);
	GW_LAUNCH(gw_kt_seal_kernel, grid_for((j->max_frames + 63) / 64), 64, stream)(*j);
	if (j->e)
		GW_LAUNCH(gw_kt_residual_kernel, grid, 256, stream)(*j);
	return cudaGetLastError();
}

__global__ void __launch_bounds__(GW_KT_THREADS) gw_kt_decode_kernel(struct gw_kf_dec d)
{
	GW_SHARED(struct gw_kt_dshared, s);
	uint32_t t = threadIdx.x;
	for (uint32_t f = blockIdx.x; f < d.n; f += gridDim.x) {
		if (t == 0)
			gw_kt_dec_check(&d, f, &s);
		__syncthreads();
		gw_kt_dec_expand(t, &s);
		__syncthreads();
		if (t == 0)
			gw_kt_dec_verdict(&s);
		__syncthreads();
		gw_kt_dec_add(&d, t, &s);
		__syncthreads();
		if (t == 0)
			gw_kt_dec_done(&d, f, &s);
		__syncthreads();
	}
}

extern "C" cudaError_t gw_cuda_decode_3lc(const struct gw_kf_dec *d, cudaStream_t stream)
{
	if (!d || !d->n)
		return cudaErrorInvalidValue;
	fresh();
	GW_LAUNCH(gw_kt_decode_kernel, grid_for(d->n), GW_KT_THREADS, stream)(*d);
	return cudaGetLastError();
}

/* ---- top-k (kern/topk.h) ------------------------------------------------------- */

/* One phase applied to every element (or entry), grid-stride. */
#define GW_KK_EACH_KERNEL(name, fn, count)                                       \
	__global__ void name(struct gw_kk_enc j)                                  \
	{                                                                         \
		for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;  \
		     i < (count); i += (uint64_t)gridDim.x * blockDim.x)          \
			fn(&j, i);                                                \
	}
GW_KK_EACH_KERNEL(gw_kk_rank_kernel, gw_kk_rank, j.dim)
GW_KK_EACH_KERNEL(gw_kk_tie_flag_kernel, gw_kk_tie_flag, j.dim)
GW_KK_EACH_KERNEL(gw_kk_sel_flag_kernel, gw_kk_sel_flag, j.dim)
GW_KK_EACH_KERNEL(gw_kk_compact_kernel, gw_kk_compact, j.dim)
GW_KK_EACH_KERNEL(gw_kk_residual_kernel, gw_kk_residual, j.dim)

__global__ void gw_kk_cost_kernel(struct gw_kk_enc j)
{
	for (uint64_t q = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; q <= j.k;
	     q += (uint64_t)gridDim.x * blockDim.x)
		gw_kk_cost(&j, (uint32_t)q);
}

/* Each block counts into its own histogram in shared memory, then adds it
 * to the global one: 256 global atomics a block, not one an element on
 * 256 words (the first pass counts every element). */
__global__ void __launch_bounds__(256) gw_kk_hist_kernel(struct gw_kk_enc j, uint32_t p)
{
	GW_SHARED(uint32_t[256], h);
	h[threadIdx.x] = 0;
	__syncthreads();
	for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < j.dim;
	     i += (uint64_t)gridDim.x * blockDim.x)
		gw_kk_hist(&j, p, i, h);
	__syncthreads();
	if (h[threadIdx.x])
		gw_hd_add_u32(&j.hist[threadIdx.x], h[threadIdx.x]);
}

__global__ void gw_kk_init_kernel(struct gw_kk_enc j)
{
	gw_kk_select_init(&j);
}

__global__ void gw_kk_pick_kernel(struct gw_kk_enc j, uint32_t p)
{
	gw_kk_pick(&j, p);
}

__global__ void gw_kk_cut_kernel(struct gw_kk_enc j)
{
	gw_kk_cut(&j);
}

__global__ void __launch_bounds__(GW_KK_THREADS) gw_kk_write_kernel(struct gw_kk_enc j)
{
	uint32_t frames = *j.nframes;
	if (frames > j.max_frames)
		return;   /* the caller reads nframes and refuses */
	for (uint32_t f = blockIdx.x; f < frames; f += gridDim.x) {
		gw_kk_write_entries(&j, f, threadIdx.x);
		__syncthreads();
		if (threadIdx.x == 0)
			gw_kk_seal(&j, f);
		__syncthreads();
	}
}

extern "C" cudaError_t gw_cuda_encode_topk(const struct gw_kk_enc *j, cudaStream_t stream)
{
	if (!j || !j->dim || j->dim >= (1ull << 32) || !j->k || j->k > j->dim ||
	    (uint64_t)j->k * 9 >= (1ull << 32) || j->cap < 4 || !j->max_frames)
		return cudaErrorInvalidValue;
	fresh();
	unsigned grid = grid_for((uint32_t)((j->dim + 255) / 256));
	GW_LAUNCH(gw_kk_rank_kernel, grid, 256, stream)(*j);
	GW_LAUNCH(gw_kk_init_kernel, 1, 1, stream)(*j);
	for (uint32_t p = 0; p < 4; p++) {
		GW_LAUNCH(gw_kk_hist_kernel, grid < 1024u ? grid : 1024u, 256, stream)(*j, p);
		GW_LAUNCH(gw_kk_pick_kernel, 1, 1, stream)(*j, p);
	}
	GW_LAUNCH(gw_kk_tie_flag_kernel, grid, 256, stream)(*j);
	struct gw_ks_scan ties = {GW_KS_SUM, 0, j->ties, j->ties, j->tiles, j->dim};
	scan(&ties, stream);
	GW_LAUNCH(gw_kk_sel_flag_kernel, grid, 256, stream)(*j);
	struct gw_ks_scan pos = {GW_KS_SUM, 0, j->pos, j->pos, j->tiles, j->dim};
	scan(&pos, stream);
	GW_LAUNCH(gw_kk_compact_kernel, grid, 256, stream)(*j);
	GW_LAUNCH(gw_kk_cost_kernel, grid_for((j->k + 256) / 256), 256, stream)(*j);
	struct gw_ks_scan cost = {GW_KS_SUM, 0, j->cost, j->cost, j->tiles, (uint64_t)j->k + 1};
	scan(&cost, stream);
	GW_LAUNCH(gw_kk_cut_kernel, 1, 1, stream)(*j);
	GW_LAUNCH(gw_kk_write_kernel, grid_for(j->max_frames), GW_KK_THREADS, stream)(*j);
	if (j->e)
		GW_LAUNCH(gw_kk_residual_kernel, grid, 256, stream)(*j);
	return cudaGetLastError();
}

__global__ void gw_kk_decode_kernel(struct gw_kf_dec d)
{
	for (uint32_t f = blockIdx.x * blockDim.x + threadIdx.x; f < d.n;
	     f += gridDim.x * blockDim.x)
		gw_kk_dec_frame(&d, f);
}

extern "C" cudaError_t gw_cuda_decode_topk(const struct gw_kf_dec *d, cudaStream_t stream)
{
	if (!d || !d->n)
		return cudaErrorInvalidValue;
	fresh();
	GW_LAUNCH(gw_kk_decode_kernel, grid_for((d->n + 63) / 64), 64, stream)(*d);
	return cudaGetLastError();
}

/* ---- hq (kern/hq.h) ----------------------------------------------------------- */

__global__ void __launch_bounds__(GW_KH_THREADS) gw_kh_encode_kernel(struct gw_kh_enc j)
{
	GW_SHARED(struct gw_kh_shared, s);
	uint32_t t = threadIdx.x;
	for (uint32_t f = blockIdx.x; f < j.frames; f += gridDim.x) {
		uint32_t n = gw_kh_frame_elems(&j, f);
		if (t == 0)
			gw_kh_enc_start(&j, f, &s);
		__syncthreads();
		if (!j.rotate)
			gw_kh_enc_plain(&j, f, t, &s);
		for (uint32_t off = 0, b; j.rotate && off < n; off += b) {
			b = gw_kh_block(n - off);
			gw_kh_enc_load(&j, f, off, b, t, &s);
			__syncthreads();
			for (uint32_t h = 1; h < b; h *= 2) {
				gw_kh_pass(&s, b, h, t);
				__syncthreads();
			}
			gw_kh_enc_store(&j, f, off, b, t, &s);
			__syncthreads();
		}
		__syncthreads();
		if (t == 0)
			gw_kh_enc_scale(&j, f, &s);
		__syncthreads();
		if (!j.rotate || !j.e || s.bad)
			gw_kh_enc_codes(&j, f, t, &s);
		for (uint32_t off = 0, b; j.rotate && j.e && !s.bad && off < n; off += b) {
			b = gw_kh_block(n - off);
			gw_kh_enc_quant(&j, f, off, b, t, &s);
			__syncthreads();
			for (uint32_t h = 1; h < b; h *= 2) {
				gw_kh_pass(&s, b, h, t);
				__syncthreads();
			}
			gw_kh_enc_residual(&j, f, off, b, t, &s);
			__syncthreads();
		}
		__syncthreads();
		gw_kh_enc_pack(&j, f, t);
		__syncthreads();
		if (t == 0)
			gw_kh_enc_seal(&j, f, &s);
		__syncthreads();
	}
}

__global__ void __launch_bounds__(GW_KH_THREADS) gw_kh_decode_kernel(struct gw_kf_dec d)
{
	GW_SHARED(struct gw_kh_shared, s);
	uint32_t t = threadIdx.x;
	for (uint32_t f = blockIdx.x; f < d.n; f += gridDim.x) {
		if (t == 0)
			gw_kh_dec_check(&d, f, &s);
		__syncthreads();
		gw_kh_dec_scan(t, &s);
		__syncthreads();
		if (t == 0)
			gw_kh_dec_verdict(&s);
		__syncthreads();
		int rotated = !s.rc && (s.flags & GW_KH_F_ROTATED) && !(s.flags & GW_KH_F_POISON);
		if (!rotated)
			gw_kh_dec_plain(&d, t, &s);
		for (uint32_t off = 0, b; rotated && off < s.count; off += b) {
			b = gw_kh_block(s.count - off);
			gw_kh_dec_load(off, b, t, &s);
			__syncthreads();
			for (uint32_t h = 1; h < b; h *= 2) {
				gw_kh_pass(&s, b, h, t);
				__syncthreads();
			}
			gw_kh_dec_add(&d, off, b, t, &s);
			__syncthreads();
		}
		__syncthreads();
		if (t == 0)
			gw_kh_dec_done(&d, f, &s);
		__syncthreads();
	}
}

extern "C" cudaError_t gw_cuda_encode_hq(const struct gw_kh_enc *j, cudaStream_t stream)
{
	if (!j || !j->frames || !j->g || !j->y || !j->q || j->bits < 2 || j->bits > 8 ||
	    !j->per_frame || (uint64_t)(j->frames - 1) * j->per_frame >= j->dim ||
	    (uint64_t)j->frames * j->per_frame < j->dim || !j->slots || !j->lens ||
	    !j->scales != !j->seeds)
		return cudaErrorInvalidValue;
	fresh();
	GW_LAUNCH(gw_kh_encode_kernel, grid_for(j->frames), GW_KH_THREADS, stream)(*j);
	return cudaGetLastError();
}

extern "C" cudaError_t gw_cuda_decode_hq(const struct gw_kf_dec *d, cudaStream_t stream)
{
	if (!d || !d->n)
		return cudaErrorInvalidValue;
	fresh();
	GW_LAUNCH(gw_kh_decode_kernel, grid_for(d->n), GW_KH_THREADS, stream)(*d);
	return cudaGetLastError();
}

/* ---- error buffers ------------------------------------------------------------ */

__global__ void gw_finite_kernel(float *p, uint64_t n)
{
	for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
	     i += (uint64_t)gridDim.x * blockDim.x)
		if (!isfinite(p[i]))
			p[i] = 0.0f;
}

extern "C" cudaError_t gw_cuda_finite(float *p, uint64_t n, cudaStream_t stream)
{
	if (!p || !n)
		return cudaErrorInvalidValue;
	fresh();
	uint64_t blocks = (n + 255) / 256;
	GW_LAUNCH(gw_finite_kernel, grid_for(blocks < 65535u ? (uint32_t)blocks : 65535u), 256, stream)(p, n);
	return cudaGetLastError();
}

/* ---- the kernels by codec --------------------------------------------------- */

static cudaError_t enc_dense(const void *j, cudaStream_t s)
{
	return gw_cuda_encode_dense(static_cast<const struct gw_kd_enc *>(j), s);
}

static cudaError_t enc_3lc(const void *j, cudaStream_t s)
{
	return gw_cuda_encode_3lc(static_cast<const struct gw_kt_enc *>(j), s);
}

static cudaError_t enc_topk(const void *j, cudaStream_t s)
{
	return gw_cuda_encode_topk(static_cast<const struct gw_kk_enc *>(j), s);
}

static cudaError_t enc_hq(const void *j, cudaStream_t s)
{
	return gw_cuda_encode_hq(static_cast<const struct gw_kh_enc *>(j), s);
}

static const struct gw_cuda_kern kerns[] = {
	{GW_WIRE_CODEC_RAW, "raw", enc_dense, gw_cuda_decode_dense},
	{GW_WIRE_CODEC_BF16, "bf16", enc_dense, gw_cuda_decode_dense},
	{GW_WIRE_CODEC_INT8, "int8", enc_dense, gw_cuda_decode_dense},
	{GW_WIRE_CODEC_3LC, "3lc", enc_3lc, gw_cuda_decode_3lc},
	{GW_WIRE_CODEC_TOPK, "top-k", enc_topk, gw_cuda_decode_topk},
	{GW_WIRE_CODEC_HQ, "hq", enc_hq, gw_cuda_decode_hq},
};

extern "C" const struct gw_cuda_kern *gw_cuda_kernels(int codec)
{
	for (const struct gw_cuda_kern &k : kerns)
		if (k.codec == codec)
			return &k;
	return NULL;
}
