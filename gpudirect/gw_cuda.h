/* gpudirect's device entry points (C linkage). The job structs and their
 * pointers are the device's: a tensor and error buffer in device memory,
 * frame slots in device memory or in pinned host memory mapped for the
 * device (the packet buffers themselves, so no copy follows). Launches are
 * asynchronous on stream; GW_EIO if the launch failed. */
#ifndef GW_GPUDIRECT_CUDA_H
#define GW_GPUDIRECT_CUDA_H

#include <cuda_runtime_api.h>   /* C: cudaStream_t */

#include "kern/dense.h"
#include "kern/tlc.h"
#include "kern/topk.h"
#include "map.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Packet memory for the kernels (map.h): registers [host, host + len)
 * mapped for the device and adds it to m (GW_EIO if CUDA refuses);
 * unregister undoes every region of m. */
int gw_cuda_register(struct gw_gpu_map *m, void *host, size_t len);
void gw_cuda_unregister(struct gw_gpu_map *m);

int gw_cuda_encode_dense(const struct gw_kd_enc *j, cudaStream_t stream);
int gw_cuda_decode_dense(const struct gw_kf_dec *d, cudaStream_t stream);
/* 3lc: j's scratch and its mx, ntok and err words in device memory,
 * seg and seg_last set by gw_kt_limit(); once the stream is done, frames
 * gw_kt_frames() of *ntok (none sealed if more than max_frames, or *err). */
int gw_cuda_encode_3lc(const struct gw_kt_enc *j, cudaStream_t stream);
/* The max launch alone, over j's g, e and dim: *j->mx (device memory). */
int gw_cuda_max_3lc(const struct gw_kt_enc *j, cudaStream_t stream);
int gw_cuda_decode_3lc(const struct gw_kf_dec *d, cudaStream_t stream);
/* top-k: j's scratch, hist, st and nframes in device memory; frames
 * *nframes once the stream is done (more than max_frames: none written).
 * dim < 2^32, 9 k < 2^32. */
int gw_cuda_encode_topk(const struct gw_kk_enc *j, cudaStream_t stream);
/* One thread per top-k frame (its varints come in sequence). */
int gw_cuda_decode_topk(const struct gw_kf_dec *d, cudaStream_t stream);
/* p[0..n) (device memory): entries that are not finite <- 0. */
int gw_cuda_finite(float *p, uint64_t n, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
