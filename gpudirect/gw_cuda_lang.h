/* The two spellings gw_cuda.cu writes so that one body of kernel code
 * compiles for the GPU (nvcc) and for the CPU (hostcuda/, a host C++
 * compiler, where <<<>>> and __shared__ are not C++): a launch is
 * GW_LAUNCH(kernel, grid, block, stream)(args...), a block's shared
 * variable GW_SHARED(type, name). hostcuda's cuda_runtime.h defines them
 * for the CPU; here they are what nvcc reads. */
#ifndef GW_CUDA_LANG_H
#define GW_CUDA_LANG_H

#ifndef GW_HOSTCUDA
template <class T> using gw_cuda_ty = T;
#define GW_LAUNCH(k, grid, block, stream) k<<<(grid), (block), 0, (stream)>>>
#define GW_SHARED(T, name) __shared__ gw_cuda_ty<T> name
#endif

#endif
