/* Error-feedback buffers: plain dense float arrays, cache-line aligned so
 * SIMD encode passes can stream them. */
#include <stdlib.h>

#include "codec_internal.h"

struct gw_ef {
	uint64_t dim;
	float *e;
};

gw_ef *gw_ef_create(uint64_t dim)
{
	gw_ef *ef = calloc(1, sizeof(*ef));
	if (!ef)
		return NULL;
	size_t bytes = (size_t)((dim * sizeof(float) + 63) & ~(uint64_t)63);
	if (dim > SIZE_MAX / sizeof(float) / 2)
		goto fail;
	ef->e = aligned_alloc(64, bytes ? bytes : 64);
	if (!ef->e)
		goto fail;
	ef->dim = dim;
	gw_ef_reset(ef);
	return ef;
fail:
	free(ef);
	return NULL;
}

void gw_ef_free(gw_ef *ef)
{
	if (!ef)
		return;
	free(ef->e);
	free(ef);
}

void gw_ef_reset(gw_ef *ef)
{
	if (ef)
		memset(ef->e, 0, (size_t)ef->dim * sizeof(float));
}

float *gw_ef_data(gw_ef *ef)
{
	return ef ? ef->e : NULL;
}

uint64_t gw_ef_dim(const gw_ef *ef)
{
	return ef ? ef->dim : 0;
}

int gw_ef_restore(gw_ef *ef, const void *frame, size_t len)
{
	if (!ef)
		return GW_ERR(GW_EINVAL);
	return gw_decode(frame, len, ef->e, ef->dim);
}
