/* gpudirect's device entry points (C linkage). The job structs and their
 * pointers are the device's: a tensor and error buffer in device memory,
 * frame slots in device memory or in pinned host memory mapped for the
 * device (the packet buffers themselves, so no copy follows). Launches are
 * asynchronous on stream; each call returns what cudaGetLastError() gave
 * after its launches (cudaErrorInvalidValue for a job it refuses). */
#ifndef GW_GPUDIRECT_CUDA_H
#define GW_GPUDIRECT_CUDA_H

#include <cuda_runtime_api.h>   /* C: cudaStream_t */

/* Built for the CPU (hostcuda/, the "emu" executor), the same entry points
 * take other names, so that a library with both executors links. */
#ifdef GW_HOSTCUDA
#define gw_cuda_encode_dense gw_hcu_k_encode_dense
#define gw_cuda_decode_dense gw_hcu_k_decode_dense
#define gw_cuda_encode_3lc gw_hcu_k_encode_3lc
#define gw_cuda_max_3lc gw_hcu_k_max_3lc
#define gw_cuda_decode_3lc gw_hcu_k_decode_3lc
#define gw_cuda_encode_topk gw_hcu_k_encode_topk
#define gw_cuda_decode_topk gw_hcu_k_decode_topk
#define gw_cuda_encode_hq gw_hcu_k_encode_hq
#define gw_cuda_decode_hq gw_hcu_k_decode_hq
#define gw_cuda_finite gw_hcu_k_finite
#define gw_cuda_kernels gw_hcu_k_kernels
#endif

#include "kern/dense.h"
#include "kern/hq.h"
#include "kern/tlc.h"
#include "kern/topk.h"

#ifdef __cplusplus
extern "C" {
#endif

cudaError_t gw_cuda_encode_dense(const struct gw_kd_enc *j, cudaStream_t stream);
cudaError_t gw_cuda_decode_dense(const struct gw_kf_dec *d, cudaStream_t stream);
/* 3lc: j's scratch and its mx, ntok and err words in device memory,
 * seg and seg_last set by gw_kt_limit(); once the stream is done, frames
 * gw_kt_frames() of *ntok (none sealed if more than max_frames, or *err). */
cudaError_t gw_cuda_encode_3lc(const struct gw_kt_enc *j, cudaStream_t stream);
/* The max launch alone, over j's g, e and dim: *j->mx (device memory). */
cudaError_t gw_cuda_max_3lc(const struct gw_kt_enc *j, cudaStream_t stream);
cudaError_t gw_cuda_decode_3lc(const struct gw_kf_dec *d, cudaStream_t stream);
/* top-k: j's scratch, hist, st and nframes in device memory; frames
 * *nframes once the stream is done (more than max_frames: none written).
 * dim < 2^32, 9 k < 2^32. */
cudaError_t gw_cuda_encode_topk(const struct gw_kk_enc *j, cudaStream_t stream);
/* One thread per top-k frame (its varints come in sequence). */
cudaError_t gw_cuda_decode_topk(const struct gw_kf_dec *d, cudaStream_t stream);
/* hq: j's y and q scratch in device memory (dim entries each); frames
 * as codec/hq.c writes them with max_frame_elems = per_frame. */
cudaError_t gw_cuda_encode_hq(const struct gw_kh_enc *j, cudaStream_t stream);
/* hq frames, sum frames too: one frame per block. */
cudaError_t gw_cuda_decode_hq(const struct gw_kf_dec *d, cudaStream_t stream);
/* The kernels of one codec (wire-format §3 id): encode takes the job
 * struct of its kind (gw_kd_enc for raw, bf16 and int8, gw_kt_enc for
 * 3lc, gw_kk_enc for top-k, gw_kh_enc for hq). */
struct gw_cuda_kern {
	int codec;
	const char *name;
	cudaError_t (*encode)(const void *job, cudaStream_t stream);
	cudaError_t (*decode)(const struct gw_kf_dec *d, cudaStream_t stream);
};

/* codec's kernels, or NULL where there are none. */
const struct gw_cuda_kern *gw_cuda_kernels(int codec);

/* p[0..n) (device memory): entries that are not finite <- 0. */
cudaError_t gw_cuda_finite(float *p, uint64_t n, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
