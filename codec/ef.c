/* Error-feedback buffers: plain dense float arrays, cache-line aligned so
 * SIMD encode passes can stream them. */
#include <math.h>
#include <stdlib.h>

#include "codec_internal.h"

struct gw_ef {
	uint64_t dim;
	float *e;
	int view;      /* e belongs to another buffer (gw_ef_view) */
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

gw_ef *gw_ef_view(gw_ef *parent, uint64_t off, uint64_t n)
{
	if (!parent || off > parent->dim || n > parent->dim - off)
		return NULL;
	gw_ef *ef = calloc(1, sizeof(*ef));
	if (!ef)
		return NULL;
	*ef = (gw_ef){.dim = n, .e = parent->e + off, .view = 1};
	return ef;
}

void gw_ef_free(gw_ef *ef)
{
	if (!ef)
		return;
	if (!ef->view)
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
	int rc = gw_decode(frame, len, ef->e, ef->dim);
	if (rc < 0)
		return rc;
	/* A poisoned frame (§2.5 of the wire format) decodes to NaN; the
	 * buffer never keeps a non-finite residual, so the entries it covers
	 * restart at 0. The frame's range bounds where it could write. */
	gw_frame_info h;
	gw_frame_peek(frame, len, &h);
	uint64_t end = GW_MIN(h.start + h.span, ef->dim);
	for (uint64_t i = h.start; i < end; i++)
		if (!isfinite(ef->e[i]))
			ef->e[i] = 0.0f;
	return rc;
}
