/* What the kernels' bodies are compiled as: __host__ __device__ under
 * nvcc; static inline functions under a host C or C++ compiler, for
 * hostcuda/'s build of the same kernels (gw_cuda.cu on the CPU) and for
 * the host code that sizes jobs with them (gpu.c, tests/gpu). Nothing
 * here may depend on which side runs it: integer arithmetic, float32
 * operations that round to nearest (the build passes --fmad=false and
 * -ffp-contract=off, so no multiply-add is fused on either side), no
 * intrinsics without a host twin below. */
#ifndef GW_HD_H
#define GW_HD_H

#include <stdint.h>
#include <string.h>

#include "gw_wire.h"   /* common/: the frame's constants, header, byte order */

#define GW_HD GW_WIRE_FN

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

/* Little-endian loads and stores at any byte address: gw_wire.h's. */
#define gw_hd_ld32 gw_wire_ld32
#define gw_hd_ld64 gw_wire_ld64
#define gw_hd_st16 gw_wire_st16
#define gw_hd_st32 gw_wire_st32
#define gw_hd_st64 gw_wire_st64

/* The same at an address the caller knows nothing of, one word wide where
 * it is aligned: a warp's 32 aligned word stores to consecutive addresses
 * are one memory transaction, four byte stores each are four (and over
 * PCIe, to mapped packet memory, four times the writes). Both sides are
 * little-endian, so the word is the bytes gw_wire_st32 writes. */
GW_HD void gw_hd_put32(uint8_t *p, uint32_t v)
{
	if (((uintptr_t)p & 3u) == 0)
#if defined(__CUDA_ARCH__)
		*(uint32_t *)p = v;
#else
		memcpy(p, &v, 4);
#endif
	else
		gw_wire_st32(p, v);
}

GW_HD uint32_t gw_hd_get32(const uint8_t *p)
{
	uint32_t v;
	if (((uintptr_t)p & 3u) == 0)
#if defined(__CUDA_ARCH__)
		v = *(const uint32_t *)p;
#else
		memcpy(&v, p, 4);
#endif
	else
		v = gw_wire_ld32(p);
	return v;
}

GW_HD void gw_hd_put16(uint8_t *p, uint32_t v)
{
	uint16_t h = (uint16_t)v;
	if (((uintptr_t)p & 1u) == 0)
#if defined(__CUDA_ARCH__)
		*(uint16_t *)p = h;
#else
		memcpy(p, &h, 2);
#endif
	else
		gw_wire_st16(p, v);
}

#if !defined(__CUDACC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "gpudirect's kernels store words as the wire's little-endian bytes"
#endif

#endif
