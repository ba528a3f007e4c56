/* gradwire on device memory: where a gradient lives and where gpudirect's
 * kernels run. An executor (gw_gpu) is one of
 *
 *   "cuda"  a CUDA device: device pointers, kernels on a stream of their
 *           own, packet memory registered with cudaHostRegister (mapped)
 *           so the kernels write frames straight into packets;
 *   "emu"   the same executor and the same kernels (gw_cuda.cu) built for
 *           the CPU over gpudirect/hostcuda/, a CUDA runtime whose threads
 *           are fibers; its memory is host memory. Every machine has it,
 *           so the device path of the collective is tested wherever the
 *           suite runs.
 *
 * Either name may end in ":N" for device N ("cuda:1"); without it, the
 * device current on the thread that opens the executor. The executor
 * makes its device current around each of its calls and puts the
 * caller's back, so a thread whose current device is another (a progress
 * thread starts on device 0) still launches on the executor's.
 *
 * A communicator given an executor (gw_comm_set_gpu, <gw/collective.h>)
 * takes that executor's pointers in gw_allreduce_gpu. (GRADWIRE_0.3) */
#ifndef GW_GPUDIRECT_H
#define GW_GPUDIRECT_H

#include <stddef.h>
#include <stdint.h>

#include <gw/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gw_gpu gw_gpu;

/* name: "cuda" or "emu", either with ":N" for device N (above). NULL
 * with a detail (gw_error_detail) naming why: an unknown or malformed
 * name, a build without the CUDA kernels, no CUDA device or driver, no
 * device N. */
GW_API gw_gpu *gw_gpu_open(const char *name);
GW_API void gw_gpu_close(gw_gpu *g);                 /* accepts NULL */
GW_API const char *gw_gpu_name(const gw_gpu *g);     /* "cuda" or "emu", no ":N" */
/* Memory of the executor (device memory for "cuda"); NULL if none. */
GW_API void *gw_gpu_alloc(gw_gpu *g, size_t len);
GW_API void gw_gpu_free(gw_gpu *g, void *p);         /* accepts NULL */
/* len bytes between host and executor memory, either way (CUDA tells by
 * the addresses); returns when done. */
GW_API int gw_gpu_copy(gw_gpu *g, void *dst, const void *src, size_t len);

/* Whether g's memory can be exported as a dma-buf for a NIC to read
 * (cuMemGetHandleForAddressRange: the device's DMA_BUF_SUPPORTED
 * attribute, and an export that succeeds). 1: yes; 0: no, with a detail
 * saying why (emu: host memory; no driver entry point; the device says
 * no). */
GW_API int gw_gpu_dmabuf(gw_gpu *g);

/* ---- what the collective calls (not exported) ---------------------------- */

/* Host memory the kernels write frames into and read frames from: the
 * dataplane's packet memory (gw_dp_regions). Registered once; a region
 * already registered is accepted again. */
int gw_gpu_register(gw_gpu *g, void *host, size_t len);
/* 1 if [p, p + len) lies in registered memory. */
int gw_gpu_registered(const gw_gpu *g, const void *p, size_t len);
/* 0 if name opens an executor's kind ("emu", "cuda", either with ":N"
 * for device N), else GW_EINVAL with a detail naming what is wrong. */
int gw_gpu_name_valid(const char *name);
/* Whether the kernels encode and decode this codec (raw, bf16, int8,
 * 3lc, topk, hq). */
int gw_gpu_takes(int codec);

/* Frames of chunks [first, first + n) of a tensor, one frame per chunk,
 * each into bufs[i] (registered memory, room bytes): as codec/ encodes
 * them with max_frame_elems = chunk_elems, the frames naming tensor id
 * (a job's layout encodes each of its tensors apart, so each has its own
 * context: 3lc's m, top-k's k). Dense codecs: frame starts
 * count from the tensor's first element; sparse (top-k): each chunk is a
 * tensor of its own, keys counting from its first element, and its error
 * buffer the chunk's part of e. lens[i] gets each length. GW_EBUDGET if a
 * chunk does not fit one frame of room bytes (nothing is kept of the
 * batch: the error buffer is as before), GW_EIO if the device failed. */
struct gw_gpu_chunks {
	int codec;
	uint32_t tensor;          /* the frames' tensor id */
	double fraction;          /* top-k */
	double sparsity;          /* 3lc: the batch that starts the tensor
				   * (first 0) takes its maximum first */
	const float *g;           /* the tensor, executor memory */
	float *e;                 /* its error buffer, or NULL */
	uint64_t dim;
	uint32_t chunk_elems, first, n;
	uint8_t *const *bufs;
	uint32_t room;
	uint32_t *lens;
	/* hq: its params (bits 2-8, rotate, rounding=stochastic, seed); per
	 * chunk of the batch the shared scale and rotation seed that
	 * gw_encoder_set_shared would give (host memory, n each; NULL: each
	 * frame its own, §4.11.3); count0: frames the encoder wrote before
	 * (stochastic rounding's counter). */
	unsigned bits, rotate, stochastic;
	uint32_t seed;
	const float *scales;
	const uint32_t *seeds;
	uint64_t count0;
};
int gw_gpu_encode_chunks(gw_gpu *g, const struct gw_gpu_chunks *j);

/* Decode-accumulates n frames of codec (registered memory) into
 * out[0..out_len) as gw_decode does, frame by frame; a frame of another
 * codec gets GW_EUNSUPPORTED; rcs[i] gets each frame's verdict
 * (values added, or GW_E*: nothing added). Returns 0 or GW_EIO. */
int gw_gpu_decode(gw_gpu *g, int codec, const uint8_t *const *frames, const uint32_t *lens,
		  uint32_t n, float *out, uint64_t out_len, int32_t *rcs);
/* p[0..n) entries that are not finite <- 0: an error buffer after a
 * frame was decoded back into it (gw_ef_restore's rule). */
int gw_gpu_finite(gw_gpu *g, float *p, uint64_t n);

/* out[0..n) <- 0, and the executor memory dst <- src. */
int gw_gpu_zero(gw_gpu *g, float *out, uint64_t n);
int gw_gpu_dcopy(gw_gpu *g, float *dst, const float *src, uint64_t n);

#ifdef __cplusplus
}
#endif
#endif
