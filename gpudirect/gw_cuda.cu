/* The dense kernels on the device: the phases of kern/dense.h with a
 * __syncthreads() between them, one frame per block (grid-stride over the
 * frames), GW_KD_THREADS threads. emu.c runs the same phases on the host. */
#include <cuda_runtime.h>

#include "gw_cuda.h"
#include "kern/dense.h"

__global__ void __launch_bounds__(GW_KD_THREADS) gw_kd_encode_kernel(struct gw_kd_enc j)
{
	__shared__ struct gw_kd_shared s;
	uint32_t t = threadIdx.x;
	for (uint32_t f = blockIdx.x; f < j.frames; f += gridDim.x) {
		if (j.codec == GW_KD_INT8) {
			gw_kd_enc_scan(&j, f, t, &s);
			__syncthreads();
			if (t == 0)
				gw_kd_enc_scale(&s);
			__syncthreads();
		}
		gw_kd_enc_values(&j, f, t, &s);
		__syncthreads();
		if (t == 0)
			gw_kd_enc_seal(&j, f, &s);
		__syncthreads();
	}
}

__global__ void __launch_bounds__(GW_KD_THREADS) gw_kd_decode_kernel(struct gw_kd_dec d)
{
	__shared__ struct gw_kd_shared s;
	uint32_t t = threadIdx.x;
	for (uint32_t f = blockIdx.x; f < d.n; f += gridDim.x) {
		if (t == 0)
			gw_kd_dec_check(&d, f, &s);
		__syncthreads();
		gw_kd_dec_scan(t, &s);
		__syncthreads();
		if (t == 0)
			gw_kd_dec_verdict(&s);
		__syncthreads();
		gw_kd_dec_add(&d, t, &s);
		__syncthreads();
		if (t == 0)
			gw_kd_dec_done(&d, f, &s);
		__syncthreads();
	}
}

static unsigned grid_for(uint32_t n)
{
	return n < 65535u ? (n ? n : 1u) : 65535u;
}

extern "C" int gw_cuda_encode_dense(const struct gw_kd_enc *j, cudaStream_t stream)
{
	if (!j || !j->frames)
		return GW_EINVAL;
	gw_kd_encode_kernel<<<grid_for(j->frames), GW_KD_THREADS, 0, stream>>>(*j);
	return cudaGetLastError() == cudaSuccess ? GW_OK : GW_EIO;
}

extern "C" int gw_cuda_decode_dense(const struct gw_kd_dec *d, cudaStream_t stream)
{
	if (!d || !d->n)
		return GW_EINVAL;
	gw_kd_decode_kernel<<<grid_for(d->n), GW_KD_THREADS, 0, stream>>>(*d);
	return cudaGetLastError() == cudaSuccess ? GW_OK : GW_EIO;
}
