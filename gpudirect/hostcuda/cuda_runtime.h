/* The CUDA kernel language for a host C++ compiler, over hostcuda's fibers
 * (hostcuda.h): what gw_cuda.cu needs to compile unchanged and run its
 * kernels on the CPU. A launch is written GW_LAUNCH(kernel, grid, block,
 * stream)(args...) and shared memory GW_SHARED(type, name) in gw_cuda.cu,
 * which nvcc reads as <<<...>>> and __shared__ (gw_cuda_lang.h). No C++
 * runtime library is needed: no exceptions, no operator new. */
#ifndef GW_HOSTCUDA_CUDA_RUNTIME_H
#define GW_HOSTCUDA_CUDA_RUNTIME_H

#ifndef __cplusplus
#error "hostcuda's cuda_runtime.h is the kernel language: C++ only (C: cuda_runtime_api.h)"
#endif

#include <math.h>
#include <stdlib.h>
#include <new>
#include <tuple>
#include <utility>

#include "cuda_runtime_api.h"

#define __global__ static   /* one TU: no clash with the nvcc build's kernels */
#define __device__
#define __host__
#define __constant__
#define __forceinline__ inline
#define __launch_bounds__(...)

struct dim3 {
	unsigned x, y, z;
	dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
	operator gw_hcu_dim() const { return {x, y, z}; }
};

#define threadIdx (gw_hcu_cur->thread)
#define blockIdx (gw_hcu_cur->block)
#define blockDim (gw_hcu_cur->block_dim)
#define gridDim (gw_hcu_cur->grid_dim)
#define __syncthreads() gw_hcu_syncthreads()

/* One OS thread runs a block's fibers, switching only at barriers: a
 * read-modify-write is atomic as it stands. */
static inline unsigned atomicAdd(unsigned *p, unsigned v)
{
	unsigned o = *p;
	*p = o + v;
	return o;
}

static inline unsigned atomicMax(unsigned *p, unsigned v)
{
	unsigned o = *p;
	*p = o > v ? o : v;
	return o;
}

static inline float atomicAdd(float *p, float v)
{
	float o = *p;
	*p = o + v;
	return o;
}

namespace gw_hcu {

template <class T> using ty = T;

/* A launch's kernel and its arguments, copied as a GPU copies them at the
 * launch (the call may return before the kernel runs). */
template <class... P> struct closure {
	void (*k)(P...);
	std::tuple<P...> args;
	static void run(void *c)
	{
		closure *x = static_cast<closure *>(c);
		std::apply(x->k, x->args);
	}
	static void drop(void *c)
	{
		closure *x = static_cast<closure *>(c);
		x->~closure();
		free(x);
	}
};

template <class... P> struct launcher {
	const char *name;
	void (*k)(P...);
	dim3 g, b;
	cudaStream_t s;
	template <class... A> void operator()(A &&...a) const
	{
		void *mem = malloc(sizeof(closure<P...>));
		if (!mem) {
			gw_hcu_launch(name, g, b, s, nullptr, nullptr, nullptr);   /* refused */
			return;
		}
		closure<P...> *c = new (mem) closure<P...>{k, std::tuple<P...>(std::forward<A>(a)...)};
		gw_hcu_launch(name, g, b, s, &closure<P...>::run, &closure<P...>::drop, c);
	}
};

template <class... P>
launcher<P...> make(const char *name, void (*k)(P...), dim3 g, dim3 b, cudaStream_t s)
{
	return launcher<P...>{name, k, g, b, s};
}

}   // namespace gw_hcu

#define GW_LAUNCH(k, grid, block, stream) gw_hcu::make(#k, k, (grid), (block), (stream))
#define GW_SHARED(T, name)                                                            \
	gw_hcu::ty<T> &name = *static_cast<gw_hcu::ty<T> *>(                          \
		gw_hcu_shared(sizeof(gw_hcu::ty<T>), alignof(gw_hcu::ty<T>)))

#endif
