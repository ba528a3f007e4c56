/* The host-to-device address map of registered packet memory (map.h). A
 * handful of regions (one per mempool chunk): a linear search is what a
 * batch of a few hundred packets needs. */
#include <gw/common.h>

#include "map.h"

int gw_gpu_map_add(struct gw_gpu_map *m, void *host, void *dev, size_t len)
{
	if (!m || !host || !dev || !len)
		return GW_EINVAL;
	uint8_t *h = host;
	for (unsigned i = 0; i < m->n; i++)
		if (h < m->r[i].host + m->r[i].len && m->r[i].host < h + len)
			return GW_EINVAL;   /* overlaps a registered region */
	if (m->n == GW_GPU_MAP_MAX)
		return GW_ENOMEM;
	m->r[m->n].host = h;
	m->r[m->n].dev = dev;
	m->r[m->n].len = len;
	m->n++;
	return GW_OK;
}

void *gw_gpu_map_dev(const struct gw_gpu_map *m, const void *p, size_t n)
{
	const uint8_t *q = p;
	for (unsigned i = 0; m && q && i < m->n; i++) {
		size_t off = (size_t)(q - m->r[i].host);
		if (q >= m->r[i].host && off <= m->r[i].len && n <= m->r[i].len - off)
			return m->r[i].dev + off;
	}
	return NULL;
}
