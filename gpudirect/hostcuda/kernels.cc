/* gw_cuda.cu itself, compiled by the host C++ compiler against hostcuda's
 * cuda_runtime.h: the kernels the GPU runs, run by fibers on the CPU. */
#include "../gw_cuda.cu"
