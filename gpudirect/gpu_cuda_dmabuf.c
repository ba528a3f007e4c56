/* Whether the "cuda" executor's device exports its memory as dma-buf (so
 * a NIC can read tensors without a bounce), asked of the driver through
 * the runtime: a machine without a GPU has no libcuda to link. Only for
 * the real executor (gpu_cuda.c built with nvcc); the caller made dev
 * current. */
#include <cuda.h>               /* the driver's types, for its entry points */
#include <cuda_runtime_api.h>
#include <unistd.h>

#include "gw_util.h"

int gw_gpu_cuda_dmabuf(int dev);

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

int gw_gpu_cuda_dmabuf(int dev)
{
	attr_fn attr = (attr_fn)driver_call("cuDeviceGetAttribute");
	handle_fn handle = (handle_fn)driver_call("cuMemGetHandleForAddressRange");
	int yes = 0;
	if (!attr || !handle) {
		gw__detail(GW_OK, "dma-buf: this CUDA driver has no cuMemGetHandleForAddressRange");
		return 0;
	}
	if (attr(&yes, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, dev) != CUDA_SUCCESS || !yes) {
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
