/* What the kernels' bodies are compiled as: __host__ __device__ under
 * nvcc, so that the same functions run in a CUDA kernel and in the host
 * emulation of its grid (gpudirect/emu.h); plain inline functions under a
 * host C++ compiler. Nothing here may depend on which side runs it:
 * integer arithmetic, float32 operations that round to nearest (the build
 * passes --fmad=false and -ffp-contract=off, so no multiply-add is fused
 * on either side), no intrinsics without a host twin below. */
#ifndef GW_HD_H
#define GW_HD_H

#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define GW_HD __host__ __device__ __forceinline__
#else
#define GW_HD static inline
#endif

/* High 64 bits of a 64 x 64-bit product. */
GW_HD uint64_t gw_hd_mulhi64(uint64_t a, uint64_t b)
{
#if defined(__CUDA_ARCH__)
	return __umul64hi(a, b);
#else
	return (uint64_t)(((unsigned __int128)a * b) >> 64);
#endif
}

GW_HD uint32_t gw_hd_f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

GW_HD float gw_hd_bits_f32(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* Little-endian loads and stores at any byte address. */
GW_HD uint32_t gw_hd_ld32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

GW_HD uint64_t gw_hd_ld64(const uint8_t *p)
{
	return (uint64_t)gw_hd_ld32(p) | (uint64_t)gw_hd_ld32(p + 4) << 32;
}

GW_HD void gw_hd_st16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

GW_HD void gw_hd_st32(uint8_t *p, uint32_t v)
{
	gw_hd_st16(p, v);
	gw_hd_st16(p + 2, v >> 16);
}

GW_HD void gw_hd_st64(uint8_t *p, uint64_t v)
{
	gw_hd_st32(p, (uint32_t)v);
	gw_hd_st32(p + 4, (uint32_t)(v >> 32));
}

#endif
