/* gpudirect's kernels run on the CPU, one call at a time: gw_cuda.cu's own
 * kernels, built for hostcuda/ (fibers for a block's threads, a seeded
 * schedule), launched on the calling thread's default stream and waited
 * for. For tests, fuzzing and benches that hold the kernels to codec/ on
 * machines without a GPU; the "emu" executor (gw/gpudirect.h) runs the
 * same kernels through gpu_cuda.c. Job structs' pointers are host memory.
 * Each returns GW_OK, or GW_EIO when a kernel failed (hostcuda says why on
 * stderr), and GW_EINVAL for a job the launcher refuses. */
#ifndef GW_GPUDIRECT_EMU_H
#define GW_GPUDIRECT_EMU_H

#include "kern/dense.h"
#include "kern/hq.h"
#include "kern/tlc.h"
#include "kern/topk.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Encodes j->frames frames (raw, bf16 or int8). */
int gw_emu_encode_dense(const struct gw_kd_enc *j);

/* Decode-accumulates d->n frames of raw, bf16 or int8. */
int gw_emu_decode_dense(const struct gw_kf_dec *d);

/* The 3lc max launch alone: *j->mx <- the maximum |g + e| bits of j. */
int gw_emu_max_3lc(const struct gw_kt_enc *j);

/* Encodes a 3lc tensor (the max launch first unless j->mx_given); *frames
 * gets the frame count. GW_EBUDGET if j->max_frames slots are too few
 * (nothing sealed, e unchanged). */
int gw_emu_encode_3lc(const struct gw_kt_enc *j, uint32_t *frames);

/* Encodes a top-k tensor; *frames gets the frame count. GW_EBUDGET if
 * j->max_frames slots are too few (nothing written, e unchanged). */
int gw_emu_encode_topk(const struct gw_kk_enc *j, uint32_t *frames);

/* Decode-accumulates d->n top-k frames. */
int gw_emu_decode_topk(const struct gw_kf_dec *d);

/* Decode-accumulates d->n 3lc frames. */
int gw_emu_decode_3lc(const struct gw_kf_dec *d);

/* Encodes j->frames hq frames. */
int gw_emu_encode_hq(const struct gw_kh_enc *j);

/* Decode-accumulates d->n hq frames (a worker's or a shard's sum). */
int gw_emu_decode_hq(const struct gw_kf_dec *d);

#ifdef __cplusplus
}
#endif
#endif
