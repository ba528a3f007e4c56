/* An executor's ops table (one per executor, as one per codec and per
 * backend): where its memory is, how the kernels launch, how the host
 * waits for them. gpu.c builds the kernels' job structs on top of it, the
 * same for every executor; gpu_emu.c runs the host emulation,
 * gpu_cuda.c the CUDA kernels (built with nvcc only, registering itself
 * when the library loads, as the dataplane's backends do). */
#ifndef GW_GPUDIRECT_GPU_INTERNAL_H
#define GW_GPUDIRECT_GPU_INTERNAL_H

#include <gw/gpudirect.h>

#include "kern/dense.h"
#include "kern/tlc.h"
#include "kern/topk.h"
#include "map.h"

struct gw_gpu_ops {
	const char *name;
	int (*open)(gw_gpu *g);                    /* GW_E* with a detail */
	void (*close)(gw_gpu *g);
	void *(*alloc)(gw_gpu *g, size_t len);
	void (*free)(gw_gpu *g, void *p);
	int (*copy)(gw_gpu *g, void *dst, const void *src, size_t len);
	int (*zero)(gw_gpu *g, void *p, size_t len);
	/* Host memory the kernels read and write at *dev (job parameters:
	 * frame pointers, lengths, verdicts). */
	void *(*alloc_mapped)(gw_gpu *g, size_t len, void **dev);
	void (*free_mapped)(gw_gpu *g, void *host);
	/* Packet memory: registered, seen by the kernels at *dev. */
	int (*reg)(gw_gpu *g, void *host, size_t len, void **dev);
	void (*unreg)(gw_gpu *g, void *host);
	/* Launches; the host waits in sync(). */
	int (*enc_dense)(gw_gpu *g, const struct gw_kd_enc *j);
	int (*enc_topk)(gw_gpu *g, const struct gw_kk_enc *j);
	int (*max_3lc)(gw_gpu *g, const struct gw_kt_enc *j);
	int (*enc_3lc)(gw_gpu *g, const struct gw_kt_enc *j);
	int (*dec_dense)(gw_gpu *g, const struct gw_kf_dec *d);
	int (*dec_3lc)(gw_gpu *g, const struct gw_kf_dec *d);
	int (*dec_topk)(gw_gpu *g, const struct gw_kf_dec *d);
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
};

/* 3lc's scratch for batches of up to nb packed bytes, and the tensor's
 * maximum, kept from the batch that starts it to the last. */
struct gpu_tlc {
	uint64_t nb;
	uint8_t *bytes;
	uint32_t *runs, *tok, *tok_byte, *tiles, *words;   /* words: mx, ntok, err */
};

struct gw_gpu {
	const struct gw_gpu_ops *ops;
	void *priv;
	struct gw_gpu_map map;
	struct gpu_params par;
	struct gpu_topk tk;
	struct gpu_tlc tl;
};

/* An executor announces itself when the library loads (gpu_cuda.c). */
void gw_gpu_ops_add(const struct gw_gpu_ops *ops);

extern const struct gw_gpu_ops gw_gpu_emu_ops;   /* gpu_emu.c */

#endif
