/* An executor's ops table (one per executor, as one per codec and per
 * backend): where its memory is, how the kernels launch, how the host
 * waits for them. gpu.c builds the kernels' job structs on top of it, the
 * same for every executor. There is one executor source, gpu_cuda.c, over
 * gw_cuda.cu's kernels: built with nvcc and cudart it is "cuda" (it
 * announces itself when the library loads, as the dataplane's backends
 * do); built against hostcuda/ it is "emu", the same code and kernels run
 * by fibers on the CPU. */
#ifndef GW_GPUDIRECT_GPU_INTERNAL_H
#define GW_GPUDIRECT_GPU_INTERNAL_H

#include <gw/gpudirect.h>

#include "kern/dense.h"
#include "kern/hq.h"
#include "kern/tlc.h"
#include "kern/topk.h"
#include "map.h"

struct gw_gpu_ops {
	const char *name;
	/* Device dev, or the caller's current one (dev < 0); GW_E* with a
	 * detail. Every later call runs on that device, from any thread. */
	int (*open)(gw_gpu *g, int dev);
	void (*close)(gw_gpu *g);
	void *(*alloc)(gw_gpu *g, size_t len);
	void (*free)(gw_gpu *g, void *p);
	int (*copy)(gw_gpu *g, void *dst, const void *src, size_t len);
	int (*zero)(gw_gpu *g, void *p, size_t len);
	/* Host memory the kernels read and write at *dev (job parameters:
	 * frame pointers, lengths, verdicts). */
	void *(*alloc_mapped)(gw_gpu *g, size_t len, void **dev);
	void (*free_mapped)(gw_gpu *g, void *host);
	/* Packet memory: registered, seen by the kernels at *dev. Regions may
	 * share pages (pools without hugepages). */
	int (*reg)(gw_gpu *g, void *host, size_t len, void **dev);
	void (*unreg)(gw_gpu *g, void *host);
	/* Whether codec has kernels; its launches (job: the codec's struct,
	 * gw_cuda.h's gw_cuda_kern). The host waits in sync(). */
	int (*takes)(int codec);
	int (*encode)(gw_gpu *g, int codec, const void *job);
	int (*decode)(gw_gpu *g, int codec, const struct gw_kf_dec *d);
	int (*max_3lc)(gw_gpu *g, const struct gw_kt_enc *j);
	int (*finite)(gw_gpu *g, float *p, uint64_t n);   /* non-finite -> 0 */
	int (*sync)(gw_gpu *g);
	/* Optional: 1 if the device exports its memory as dma-buf, else 0
	 * with a detail. */
	int (*dmabuf)(gw_gpu *g);
};

/* Job parameters in mapped memory, grown on demand. */
struct gpu_params {
	uint32_t cap;
	void *host, *dev;
};

/* top-k's scratch for chunks of up to dim elements and k entries. */
struct gpu_topk {
	uint64_t dim;
	uint32_t k;
	uint32_t *rank, *ties, *pos, *sel, *cost, *tiles, *hist, *st;
	uint32_t *first, *count, *nframes;
	float *val;
	float *esave;       /* a batch's error buffer, put back on GW_EBUDGET */
	uint64_t esave_n;
};

/* 3lc's scratch for batches of up to nb packed bytes, and the tensor's
 * maximum, kept from the batch that starts it to the last. */
struct gpu_tlc {
	uint64_t nb;
	uint8_t *bytes;
	uint32_t *runs, *tok, *tok_byte, *tiles, *words;   /* words: mx, ntok, err */
};

/* hq's scratch for batches of up to n elements: rotated values, codes. */
struct gpu_hq {
	uint64_t n;
	float *y;
	int8_t *q;
};

struct gw_gpu {
	const struct gw_gpu_ops *ops;
	void *priv;
	struct gw_gpu_map map;
	struct gpu_params par;
	struct gpu_topk tk;
	struct gpu_tlc tl;
	struct gpu_hq hq;
};

/* An executor announces itself when the library loads (gpu_cuda.c). */
void gw_gpu_ops_add(const struct gw_gpu_ops *ops);

extern const struct gw_gpu_ops gw_gpu_emu_ops;   /* gpu_cuda.c over hostcuda/ */

#endif
