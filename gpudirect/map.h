/* Host memory a device may write, and where the device sees it: packet
 * memory (gw_dp_regions()) registered once with the GPU, so that a kernel
 * can encode frames straight into the packets. Registering is CUDA's
 * (gw_cuda_register, gw_cuda.cu); the map and the translation of a
 * packet's host address into the device's are plain C, tested on every
 * machine (tests/gpu/test_gpu_map.c). */
#ifndef GW_GPUDIRECT_MAP_H
#define GW_GPUDIRECT_MAP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GW_GPU_MAP_MAX 64

struct gw_gpu_map {
	unsigned n;
	struct {
		uint8_t *host, *dev;
		size_t len;
	} r[GW_GPU_MAP_MAX];
};

/* Adds [host, host + len) seen by the device at dev. GW_EINVAL for a NULL
 * or empty region or one that overlaps another; GW_ENOMEM when full. */
int gw_gpu_map_add(struct gw_gpu_map *m, void *host, void *dev, size_t len);

/* The device's address of the n bytes at host p, or NULL if they are not
 * inside one registered region. */
void *gw_gpu_map_dev(const struct gw_gpu_map *m, const void *p, size_t n);

#ifdef __cplusplus
}
#endif
#endif
