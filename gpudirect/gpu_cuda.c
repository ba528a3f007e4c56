/* The "cuda" executor: the current CUDA device, one non-blocking stream
 * per executor (every launch, copy and memset of it goes there, so a
 * synchronize of that stream is the end of a call), packet memory
 * registered mapped (cudaHostRegister) so the kernels write frames into
 * the packets themselves. Built only with nvcc and cudart; it announces
 * itself when the library loads, so gpu.c names no CUDA call. */
#include <cuda.h>               /* the driver's types, for its entry points */
#include <cuda_runtime_api.h>
#include <stdlib.h>
#include <unistd.h>

#include "gw_util.h"
#include "gw_cuda.h"
#include "gpu_internal.h"

struct cuda_priv {
	cudaStream_t s;
};

static cudaStream_t stream_of(gw_gpu *g)
{
	return ((struct cuda_priv *)g->priv)->s;
}

static int cuda_fail(cudaError_t e, const char *what)
{
	return GW_ERRF(GW_EIO, "gpu: cuda: %s: %s", what, cudaGetErrorString(e));
}

static int cuda_open(gw_gpu *g)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess || n == 0)
		return GW_ERRF(GW_EUNSUPPORTED, "gpu: cuda: no CUDA device (%s)",
			       e != cudaSuccess ? cudaGetErrorString(e) : "none found");
	struct cuda_priv *p = calloc(1, sizeof(*p));
	if (!p)
		return GW_ERRF(GW_ENOMEM, "gpu: cuda: no memory");
	if ((e = cudaStreamCreateWithFlags(&p->s, cudaStreamNonBlocking)) != cudaSuccess) {
		free(p);
		return cuda_fail(e, "stream");
	}
	g->priv = p;
	return GW_OK;
}

static void cuda_close(gw_gpu *g)
{
	struct cuda_priv *p = g->priv;
	if (p) {
		cudaStreamSynchronize(p->s);
		cudaStreamDestroy(p->s);
		free(p);
	}
	g->priv = NULL;
}

static void *cuda_alloc(gw_gpu *g, size_t len)
{
	(void)g;
	void *p = NULL;
	return cudaMalloc(&p, len) == cudaSuccess ? p : NULL;
}

static void cuda_free(gw_gpu *g, void *p)
{
	(void)g;
	cudaFree(p);
}

static int cuda_sync(gw_gpu *g)
{
	cudaError_t e = cudaStreamSynchronize(stream_of(g));
	return e == cudaSuccess ? GW_OK : cuda_fail(e, "kernel");
}

static int cuda_copy(gw_gpu *g, void *dst, const void *src, size_t len)
{
	cudaError_t e = cudaMemcpyAsync(dst, src, len, cudaMemcpyDefault, stream_of(g));
	return e == cudaSuccess ? cuda_sync(g) : cuda_fail(e, "copy");
}

static int cuda_zero(gw_gpu *g, void *p, size_t len)
{
	cudaError_t e = cudaMemsetAsync(p, 0, len, stream_of(g));
	return e == cudaSuccess ? GW_OK : cuda_fail(e, "memset");
}

static void *cuda_alloc_mapped(gw_gpu *g, size_t len, void **dev)
{
	(void)g;
	void *h = NULL;
	if (cudaHostAlloc(&h, len, cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess)
		return NULL;
	if (cudaHostGetDevicePointer(dev, h, 0) != cudaSuccess) {
		cudaFreeHost(h);
		return NULL;
	}
	return h;
}

static void cuda_free_mapped(gw_gpu *g, void *host)
{
	(void)g;
	cudaFreeHost(host);
}

static int cuda_reg(gw_gpu *g, void *host, size_t len, void **dev)
{
	(void)g;
	cudaError_t e = cudaHostRegister(host, len, cudaHostRegisterMapped |
						    cudaHostRegisterPortable);
	if (e != cudaSuccess)
		return cuda_fail(e, "registering packet memory");
	if ((e = cudaHostGetDevicePointer(dev, host, 0)) != cudaSuccess) {
		cudaHostUnregister(host);
		return cuda_fail(e, "mapping packet memory");
	}
	return GW_OK;
}

static void cuda_unreg(gw_gpu *g, void *host)
{
	(void)g;
	cudaHostUnregister(host);
}

static int launched(int rc, const char *what)
{
	if (rc == GW_OK)
		return GW_OK;
	return GW_ERRF(rc, "gpu: cuda: %s launch: %s", what, rc == GW_EINVAL ? "job refused"
		       : cudaGetErrorString(cudaGetLastError()));
}

static int cuda_enc_dense(gw_gpu *g, const struct gw_kd_enc *j)
{
	return launched(gw_cuda_encode_dense(j, stream_of(g)), "dense encode");
}

static int cuda_enc_topk(gw_gpu *g, const struct gw_kk_enc *j)
{
	return launched(gw_cuda_encode_topk(j, stream_of(g)), "top-k encode");
}

static int cuda_max_3lc(gw_gpu *g, const struct gw_kt_enc *j)
{
	return launched(gw_cuda_max_3lc(j, stream_of(g)), "3lc max");
}

static int cuda_enc_3lc(gw_gpu *g, const struct gw_kt_enc *j)
{
	return launched(gw_cuda_encode_3lc(j, stream_of(g)), "3lc encode");
}

static int cuda_dec_dense(gw_gpu *g, const struct gw_kf_dec *d)
{
	return launched(gw_cuda_decode_dense(d, stream_of(g)), "dense decode");
}

static int cuda_dec_3lc(gw_gpu *g, const struct gw_kf_dec *d)
{
	return launched(gw_cuda_decode_3lc(d, stream_of(g)), "3lc decode");
}

static int cuda_dec_topk(gw_gpu *g, const struct gw_kf_dec *d)
{
	return launched(gw_cuda_decode_topk(d, stream_of(g)), "top-k decode");
}

static int cuda_finite(gw_gpu *g, float *p, uint64_t n)
{
	return launched(gw_cuda_finite(p, n, stream_of(g)), "finite");
}

/* The driver's calls through the runtime (no link against libcuda, which
 * a machine without a GPU lacks): the device's dma-buf attribute, then a
 * real export of a small allocation, closed at once. */
typedef CUresult (*attr_fn)(int *, CUdevice_attribute, CUdevice);
typedef CUresult (*handle_fn)(void *, CUdeviceptr, size_t, CUmemRangeHandleType,
			      unsigned long long);

static void *driver_call(const char *name)
{
	void *fn = NULL;
	enum cudaDriverEntryPointQueryResult q;
	if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) !=
	    cudaSuccess || q != cudaDriverEntryPointSuccess)
		return NULL;
	return fn;
}

static int cuda_dmabuf(gw_gpu *g)
{
	(void)g;
	attr_fn attr = (attr_fn)driver_call("cuDeviceGetAttribute");
	handle_fn handle = (handle_fn)driver_call("cuMemGetHandleForAddressRange");
	int dev = 0, yes = 0;
	if (!attr || !handle) {
		gw__detail(GW_OK, "dma-buf: this CUDA driver has no cuMemGetHandleForAddressRange");
		return 0;
	}
	if (cudaGetDevice(&dev) != cudaSuccess ||
	    attr(&yes, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, dev) != CUDA_SUCCESS || !yes) {
		gw__detail(GW_OK, "dma-buf: CUDA device %d does not export dma-buf memory", dev);
		return 0;
	}
	size_t len = 2u << 20;   /* page-aligned, as the export needs */
	void *p = NULL;
	int fd = -1;
	if (cudaMalloc(&p, len) != cudaSuccess) {
		gw__detail(GW_OK, "dma-buf: no device memory to try an export");
		return 0;
	}
	CUresult r = handle(&fd, (CUdeviceptr)(uintptr_t)p, len,
			    CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	cudaFree(p);
	if (r != CUDA_SUCCESS || fd < 0) {
		gw__detail(GW_OK, "dma-buf: the export failed (CUresult %d): the kernel "
			   "driver may lack dma-buf support", (int)r);
		return 0;
	}
	close(fd);
	return 1;
}

const struct gw_gpu_ops gw_gpu_cuda_ops = {
	.name = "cuda",
	.open = cuda_open,
	.close = cuda_close,
	.alloc = cuda_alloc,
	.free = cuda_free,
	.copy = cuda_copy,
	.zero = cuda_zero,
	.alloc_mapped = cuda_alloc_mapped,
	.free_mapped = cuda_free_mapped,
	.reg = cuda_reg,
	.unreg = cuda_unreg,
	.enc_dense = cuda_enc_dense,
	.enc_topk = cuda_enc_topk,
	.max_3lc = cuda_max_3lc,
	.enc_3lc = cuda_enc_3lc,
	.dec_dense = cuda_dec_dense,
	.dec_3lc = cuda_dec_3lc,
	.dec_topk = cuda_dec_topk,
	.finite = cuda_finite,
	.sync = cuda_sync,
	.dmabuf = cuda_dmabuf,
};

__attribute__((constructor)) static void cuda_announce(void)
{
	gw_gpu_ops_add(&gw_gpu_cuda_ops);
}
