/* What hostcuda's two halves share: hc_runtime.c (the API: devices,
 * memory, streams, errors) queues kernels that hc_fiber.c runs. */
#ifndef GW_HOSTCUDA_INTERNAL_H
#define GW_HOSTCUDA_INTERNAL_H

#include "cuda_runtime_api.h"

struct hcu_kernel {
	const char *name;
	struct gw_hcu_dim grid, block;
	int dev;
	void (*run)(void *);
	void (*drop)(void *);
	void *c;
};

/* Runs every block of k on the calling OS thread; cudaSuccess or the
 * error the kernel raised (its message already on stderr). */
cudaError_t hcu_run_kernel(const struct hcu_kernel *k);

/* The next number of the calling thread's generator. */
uint64_t hcu_rand(void);

#endif
