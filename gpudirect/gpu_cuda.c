/* The executor (gpu_internal.h): one device, recorded when it opens and
 * made current around every call (the caller's own current device put
 * back after), so a progress thread whose current device is 0 still
 * launches on cuda:N; one non-blocking stream per executor (every launch,
 * copy and memset of it goes there, so a synchronize of that stream is
 * the end of a call); packet memory registered mapped (cudaHostRegister)
 * so the kernels write frames into the packets themselves.
 *
 * Built twice: with nvcc and cudart it is "cuda"; with -DGW_HOSTCUDA
 * against hostcuda/ it is "emu", the same code over the same kernels run
 * on the CPU, which is how every machine tests it. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "gw_util.h"
#include "gw_cuda.h"
#include "gpu_internal.h"

#ifdef GW_HOSTCUDA
#define EXEC_NAME "emu"
#define exec_ops gw_gpu_emu_ops
#else
#define EXEC_NAME "cuda"
#define exec_ops gw_gpu_cuda_ops
#endif

struct cuda_priv {
	int dev;
	cudaStream_t s;
};

static struct cuda_priv *priv(gw_gpu *g)
{
	return g->priv;
}

static int cuda_fail(cudaError_t e, const char *what)
{
	return GW_ERRF(GW_EIO, "gpu: " EXEC_NAME ": %s: %s", what, cudaGetErrorString(e));
}

/* The executor's device made current for a call; the caller's back after.
 * Cheap when they are the same, the usual case. */
static int enter(gw_gpu *g)
{
	int cur = -1;
	cudaGetDevice(&cur);
	if (cur != priv(g)->dev)
		cudaSetDevice(priv(g)->dev);
	return cur;
}

static void leave(gw_gpu *g, int cur)
{
	if (cur != priv(g)->dev && cur >= 0)
		cudaSetDevice(cur);
}

static int cuda_open(gw_gpu *g, int dev)
{
	int n = 0, cur = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess || n == 0)
		return GW_ERRF(GW_EUNSUPPORTED, "gpu: " EXEC_NAME ": no CUDA device (%s)",
			       e != cudaSuccess ? cudaGetErrorString(e) : "none found");
	if (dev >= n)
		return GW_ERRF(GW_EINVAL, "gpu: " EXEC_NAME ": device %d: there are %d", dev, n);
	cudaGetDevice(&cur);
	struct cuda_priv *p = calloc(1, sizeof(*p));
	if (!p)
		return GW_ERRF(GW_ENOMEM, "gpu: " EXEC_NAME ": no memory");
	p->dev = dev < 0 ? cur : dev;
	g->priv = p;
	cur = enter(g);
	e = cudaStreamCreateWithFlags(&p->s, cudaStreamNonBlocking);
	leave(g, cur);
	if (e != cudaSuccess) {
		free(p);
		g->priv = NULL;
		return cuda_fail(e, "stream");
	}
	return GW_OK;
}

static void cuda_close(gw_gpu *g)
{
	struct cuda_priv *p = g->priv;
	if (p) {
		int cur = enter(g);
		cudaStreamSynchronize(p->s);
		cudaStreamDestroy(p->s);
		leave(g, cur);
		free(p);
	}
	g->priv = NULL;
}

static void *cuda_alloc(gw_gpu *g, size_t len)
{
	void *p = NULL;
	int cur = enter(g);
	cudaError_t e = cudaMalloc(&p, len);
	leave(g, cur);
	return e == cudaSuccess ? p : NULL;
}

static void cuda_free(gw_gpu *g, void *p)
{
	int cur = enter(g);
	cudaFree(p);
	leave(g, cur);
}

static int cuda_sync(gw_gpu *g)
{
	int cur = enter(g);
	cudaError_t e = cudaStreamSynchronize(priv(g)->s);
	leave(g, cur);
	return e == cudaSuccess ? GW_OK : cuda_fail(e, "kernel");
}

static int cuda_copy(gw_gpu *g, void *dst, const void *src, size_t len)
{
	int cur = enter(g);
	cudaError_t e = cudaMemcpyAsync(dst, src, len, cudaMemcpyDefault, priv(g)->s);
	leave(g, cur);
	return e == cudaSuccess ? cuda_sync(g) : cuda_fail(e, "copy");
}

static int cuda_zero(gw_gpu *g, void *p, size_t len)
{
	int cur = enter(g);
	cudaError_t e = cudaMemsetAsync(p, 0, len, priv(g)->s);
	leave(g, cur);
	return e == cudaSuccess ? GW_OK : cuda_fail(e, "memset");
}

static void *cuda_alloc_mapped(gw_gpu *g, size_t len, void **dev)
{
	void *h = NULL;
	int cur = enter(g);
	if (cudaHostAlloc(&h, len, cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess)
		h = NULL;
	else if (cudaHostGetDevicePointer(dev, h, 0) != cudaSuccess) {
		cudaFreeHost(h);
		h = NULL;
	}
	leave(g, cur);
	return h;
}

static void cuda_free_mapped(gw_gpu *g, void *host)
{
	int cur = enter(g);
	cudaFreeHost(host);
	leave(g, cur);
}

/* ---- packet memory ----------------------------------------------------------
 * cudaHostRegister pins whole pages, once per page in the process: a pool
 * that shares a page with another (mempools without hugepages, heap UDP
 * pools, two executors of one process) cannot be registered as it stands.
 * The process keeps its pinned page runs ("pins") with a count of the
 * regions over them; a region pins only the pages no pin covers, and a
 * pin is unpinned when its last region goes. */

#define PINS_MAX 256

static pthread_mutex_t pin_mu = PTHREAD_MUTEX_INITIALIZER;
static struct pin {
	uintptr_t lo, hi;
	unsigned refs;
} pins[PINS_MAX];
static unsigned npins;
static struct region {
	uintptr_t host, lo, hi;
} regions[PINS_MAX];
static unsigned nregions;

static uintptr_t page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);
	return p > 0 ? (uintptr_t)p : 4096;
}

/* The pin over page address a, or NULL. */
static struct pin *pin_at(uintptr_t a)
{
	for (unsigned i = 0; i < npins; i++)
		if (pins[i].lo <= a && a < pins[i].hi)
			return &pins[i];
	return NULL;
}

/* The first pin starting in [a, hi), or hi. */
static uintptr_t next_pin(uintptr_t a, uintptr_t hi)
{
	uintptr_t n = hi;
	for (unsigned i = 0; i < npins; i++)
		if (pins[i].lo >= a && pins[i].lo < n)
			n = pins[i].lo;
	return n;
}

static void unpin_range(uintptr_t lo, uintptr_t hi)
{
	for (unsigned i = 0; i < npins;) {
		if (pins[i].lo < hi && lo < pins[i].hi && --pins[i].refs == 0) {
			cudaHostUnregister((void *)pins[i].lo);
			pins[i] = pins[--npins];
			continue;
		}
		i++;
	}
}

/* Pins [lo, hi): the pages no pin covers get one of their own, every pin
 * over the range one more reference. */
static cudaError_t pin_range(uintptr_t lo, uintptr_t hi)
{
	for (uintptr_t a = lo; a < hi;) {
		struct pin *p = pin_at(a);
		if (p) {
			a = p->hi;
			continue;
		}
		uintptr_t end = next_pin(a, hi);
		cudaError_t e = npins == PINS_MAX ? cudaErrorMemoryAllocation
				: cudaHostRegister((void *)a, end - a, cudaHostRegisterMapped |
						   cudaHostRegisterPortable);
		if (e != cudaSuccess) {
			if (a > lo)
				unpin_range(lo, a);   /* the references taken so far */
			return e;
		}
		pins[npins++] = (struct pin){a, end, 0};
		a = end;
	}
	for (unsigned i = 0; i < npins; i++)
		if (pins[i].lo < hi && lo < pins[i].hi)
			pins[i].refs++;
	return cudaSuccess;
}

static int cuda_reg(gw_gpu *g, void *host, size_t len, void **dev)
{
	uintptr_t pg = page_size(), h = (uintptr_t)host;
	uintptr_t lo = h / pg * pg, hi = (h + len + pg - 1) / pg * pg;
	int cur = enter(g), rc = GW_OK;
	pthread_mutex_lock(&pin_mu);
	cudaError_t e = nregions == PINS_MAX ? cudaErrorMemoryAllocation : pin_range(lo, hi);
	if (e != cudaSuccess) {
		rc = cuda_fail(e, "registering packet memory");
	} else if ((e = cudaHostGetDevicePointer(dev, host, 0)) != cudaSuccess) {
		unpin_range(lo, hi);
		rc = cuda_fail(e, "mapping packet memory");
	} else {
		/* The kernels take a region as one range: its pins must be seen
		 * contiguously (they are, with unified addressing). */
		for (unsigned i = 0; i < npins && rc == GW_OK; i++) {
			void *d = NULL;
			uintptr_t a = pins[i].lo > h ? pins[i].lo : h;
			if (pins[i].lo < hi && lo < pins[i].hi && a < h + len &&
			    (cudaHostGetDevicePointer(&d, (void *)a, 0) != cudaSuccess ||
			     (uintptr_t)d != (uintptr_t)*dev + (a - h)))
				rc = GW_ERRF(GW_EUNSUPPORTED, "gpu: " EXEC_NAME ": packet memory at "
					     "%p is not one range for the device", host);
		}
		if (rc < 0)
			unpin_range(lo, hi);
		else
			regions[nregions++] = (struct region){h, lo, hi};
	}
	pthread_mutex_unlock(&pin_mu);
	leave(g, cur);
	return rc;
}

static void cuda_unreg(gw_gpu *g, void *host)
{
	int cur = enter(g);
	pthread_mutex_lock(&pin_mu);
	for (unsigned i = 0; i < nregions; i++)
		if (regions[i].host == (uintptr_t)host) {
			unpin_range(regions[i].lo, regions[i].hi);
			regions[i] = regions[--nregions];
			break;
		}
	pthread_mutex_unlock(&pin_mu);
	leave(g, cur);
}

/* ---- launches --------------------------------------------------------------- */

static int launched(cudaError_t e, const char *codec, const char *what)
{
	if (e == cudaSuccess)
		return GW_OK;
	return GW_ERRF(e == cudaErrorInvalidValue ? GW_EINVAL : GW_EIO,
		       "gpu: " EXEC_NAME ": %s %s launch: %s", codec, what, cudaGetErrorString(e));
}

static int cuda_takes(int codec)
{
	return gw_cuda_kernels(codec) != NULL;
}

static int cuda_encode(gw_gpu *g, int codec, const void *job)
{
	const struct gw_cuda_kern *k = gw_cuda_kernels(codec);
	if (!k)
		return GW_ERRF(GW_EUNSUPPORTED, "gpu: no encode kernel for codec %d", codec);
	int cur = enter(g);
	cudaError_t e = k->encode(job, priv(g)->s);
	leave(g, cur);
	return launched(e, k->name, "encode");
}

static int cuda_decode(gw_gpu *g, int codec, const struct gw_kf_dec *d)
{
	const struct gw_cuda_kern *k = gw_cuda_kernels(codec);
	if (!k)
		return GW_ERRF(GW_EUNSUPPORTED, "gpu: no decode kernel for codec %d", codec);
	int cur = enter(g);
	cudaError_t e = k->decode(d, priv(g)->s);
	leave(g, cur);
	return launched(e, k->name, "decode");
}

static int cuda_max_3lc(gw_gpu *g, const struct gw_kt_enc *j)
{
	int cur = enter(g);
	cudaError_t e = gw_cuda_max_3lc(j, priv(g)->s);
	leave(g, cur);
	return launched(e, "3lc", "max");
}

static int cuda_finite(gw_gpu *g, float *p, uint64_t n)
{
	int cur = enter(g);
	cudaError_t e = gw_cuda_finite(p, n, priv(g)->s);
	leave(g, cur);
	return launched(e, "error buffer", "finite");
}

#ifndef GW_HOSTCUDA
int gw_gpu_cuda_dmabuf(int dev);   /* gpu_cuda_dmabuf.c */

static int cuda_dmabuf(gw_gpu *g)
{
	int cur = enter(g), r = gw_gpu_cuda_dmabuf(priv(g)->dev);
	leave(g, cur);
	return r;
}
#endif

const struct gw_gpu_ops exec_ops = {
	.name = EXEC_NAME,
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
	.takes = cuda_takes,
	.encode = cuda_encode,
	.decode = cuda_decode,
	.max_3lc = cuda_max_3lc,
	.finite = cuda_finite,
	.sync = cuda_sync,
#ifndef GW_HOSTCUDA
	.dmabuf = cuda_dmabuf,
#endif
};

#ifndef GW_HOSTCUDA
__attribute__((constructor)) static void cuda_announce(void)
{
	gw_gpu_ops_add(&gw_gpu_cuda_ops);
}
#endif
