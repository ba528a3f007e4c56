/* The CUDA runtime API as gpudirect uses it, answered on the CPU by
 * hostcuda (hc_runtime.c): what gpu_cuda.c and gw_cuda.cu compile against
 * when they are built for the "emu" executor (-DGW_HOSTCUDA, this folder
 * first on the include path). Each name is a macro for a gw_hcu_ function,
 * so the real cudart linked into the same library never collides. Plain
 * C; the kernel language (dim3, threadIdx, __syncthreads, launches) is in
 * cuda_runtime.h, for C++. */
#ifndef GW_HOSTCUDA_RUNTIME_API_H
#define GW_HOSTCUDA_RUNTIME_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Values as CUDA's, so a message or a log reads the same. */
typedef enum {
	cudaSuccess = 0,
	cudaErrorInvalidValue = 1,
	cudaErrorMemoryAllocation = 2,
	cudaErrorInvalidConfiguration = 9,
	cudaErrorInvalidDevicePointer = 17,
	cudaErrorInvalidDevice = 101,
	cudaErrorNoDevice = 100,
	cudaErrorInvalidResourceHandle = 400,
	cudaErrorIllegalAddress = 700,
	cudaErrorLaunchOutOfResources = 701,
	cudaErrorHostMemoryAlreadyRegistered = 712,
	cudaErrorHostMemoryNotRegistered = 713,
	cudaErrorLaunchFailure = 719,
} cudaError_t;

typedef struct gw_hcu_stream *cudaStream_t;

enum cudaMemcpyKind {
	cudaMemcpyHostToHost = 0,
	cudaMemcpyHostToDevice = 1,
	cudaMemcpyDeviceToHost = 2,
	cudaMemcpyDeviceToDevice = 3,
	cudaMemcpyDefault = 4,
};

#define cudaStreamDefault 0x00u
#define cudaStreamNonBlocking 0x01u
#define cudaHostRegisterDefault 0x00u
#define cudaHostRegisterPortable 0x01u
#define cudaHostRegisterMapped 0x02u
#define cudaHostAllocDefault 0x00u
#define cudaHostAllocPortable 0x01u
#define cudaHostAllocMapped 0x02u

#define cudaGetDeviceCount gw_hcu_get_device_count
#define cudaGetDevice gw_hcu_get_device
#define cudaSetDevice gw_hcu_set_device
#define cudaStreamCreateWithFlags gw_hcu_stream_create
#define cudaStreamDestroy gw_hcu_stream_destroy
#define cudaStreamSynchronize gw_hcu_stream_sync
#define cudaDeviceSynchronize gw_hcu_device_sync
#define cudaMalloc(p, n) gw_hcu_malloc((void **)(p), (n))
#define cudaFree gw_hcu_free
#define cudaHostAlloc(p, n, f) gw_hcu_host_alloc((void **)(p), (n), (f))
#define cudaFreeHost gw_hcu_free_host
#define cudaHostRegister gw_hcu_host_register
#define cudaHostUnregister gw_hcu_host_unregister
#define cudaHostGetDevicePointer(d, h, f) gw_hcu_host_dev_ptr((void **)(d), (h), (f))
#define cudaMemcpy gw_hcu_memcpy
#define cudaMemcpyAsync gw_hcu_memcpy_async
#define cudaMemset gw_hcu_memset
#define cudaMemsetAsync gw_hcu_memset_async
#define cudaGetLastError gw_hcu_get_last_error
#define cudaPeekAtLastError gw_hcu_peek_last_error
#define cudaGetErrorString gw_hcu_error_string

cudaError_t gw_hcu_get_device_count(int *n);
cudaError_t gw_hcu_get_device(int *dev);
cudaError_t gw_hcu_set_device(int dev);
cudaError_t gw_hcu_stream_create(cudaStream_t *s, unsigned flags);
cudaError_t gw_hcu_stream_destroy(cudaStream_t s);
cudaError_t gw_hcu_stream_sync(cudaStream_t s);
cudaError_t gw_hcu_device_sync(void);
cudaError_t gw_hcu_malloc(void **p, size_t n);
cudaError_t gw_hcu_free(void *p);
cudaError_t gw_hcu_host_alloc(void **p, size_t n, unsigned flags);
cudaError_t gw_hcu_free_host(void *p);
cudaError_t gw_hcu_host_register(void *p, size_t n, unsigned flags);
cudaError_t gw_hcu_host_unregister(void *p);
cudaError_t gw_hcu_host_dev_ptr(void **dev, void *host, unsigned flags);
cudaError_t gw_hcu_memcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind k);
cudaError_t gw_hcu_memcpy_async(void *dst, const void *src, size_t n, enum cudaMemcpyKind k,
				cudaStream_t s);
cudaError_t gw_hcu_memset(void *p, int v, size_t n);
cudaError_t gw_hcu_memset_async(void *p, int v, size_t n, cudaStream_t s);
cudaError_t gw_hcu_get_last_error(void);
cudaError_t gw_hcu_peek_last_error(void);
const char *gw_hcu_error_string(cudaError_t e);

#ifdef __cplusplus
}
#endif

#include "hostcuda.h"   /* the runtime's own knobs: schedules, faults, devices */

#endif
