/* The "emu" executor: host memory, and the host emulation of the kernels
 * (emu.c), run at once, so sync() has nothing to wait for. Packet memory
 * "registers" as itself: the map still translates every frame's address,
 * so a frame outside the dataplane's regions is refused here as on a GPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "emu.h"
#include "gpu_internal.h"

static int emu_open(gw_gpu *g)
{
	(void)g;
	return GW_OK;
}

static void emu_close(gw_gpu *g)
{
	(void)g;
}

static void *emu_alloc(gw_gpu *g, size_t len)
{
	(void)g;
	return malloc(len);
}

static void emu_free(gw_gpu *g, void *p)
{
	(void)g;
	free(p);
}

static int emu_copy(gw_gpu *g, void *dst, const void *src, size_t len)
{
	(void)g;
	memmove(dst, src, len);
	return GW_OK;
}

static int emu_zero(gw_gpu *g, void *p, size_t len)
{
	(void)g;
	memset(p, 0, len);
	return GW_OK;
}

static void *emu_alloc_mapped(gw_gpu *g, size_t len, void **dev)
{
	(void)g;
	return *dev = malloc(len);
}

static int emu_reg(gw_gpu *g, void *host, size_t len, void **dev)
{
	(void)g;
	(void)len;
	*dev = host;
	return GW_OK;
}

static void emu_unreg(gw_gpu *g, void *host)
{
	(void)g;
	(void)host;
}

static int emu_enc_dense(gw_gpu *g, const struct gw_kd_enc *j)
{
	(void)g;
	gw_emu_encode_dense(j);
	return GW_OK;
}

static int emu_enc_topk(gw_gpu *g, const struct gw_kk_enc *j)
{
	(void)g;
	uint32_t frames;
	/* Too many frames is the caller's to see in *j->nframes, as after
	 * the device's launches. */
	int rc = gw_emu_encode_topk(j, &frames);
	return rc == GW_EBUDGET ? GW_OK : rc;
}

static int emu_max_3lc(gw_gpu *g, const struct gw_kt_enc *j)
{
	(void)g;
	gw_emu_max_3lc(j);
	return GW_OK;
}

static int emu_enc_3lc(gw_gpu *g, const struct gw_kt_enc *j)
{
	(void)g;
	uint32_t frames;
	/* Too many frames, or a segment too long: the caller reads ntok and
	 * err, as after the device's launches. */
	int rc = gw_emu_encode_3lc(j, &frames);
	return rc == GW_EBUDGET ? GW_OK : rc;
}

static int emu_dec_dense(gw_gpu *g, const struct gw_kf_dec *d)
{
	(void)g;
	gw_emu_decode_dense(d);
	return GW_OK;
}

static int emu_dec_3lc(gw_gpu *g, const struct gw_kf_dec *d)
{
	(void)g;
	gw_emu_decode_3lc(d);
	return GW_OK;
}

static int emu_dec_topk(gw_gpu *g, const struct gw_kf_dec *d)
{
	(void)g;
	gw_emu_decode_topk(d);
	return GW_OK;
}

static int emu_finite(gw_gpu *g, float *p, uint64_t n)
{
	(void)g;
	for (uint64_t i = 0; i < n; i++)
		if (!isfinite(p[i]))
			p[i] = 0.0f;
	return GW_OK;
}

static int emu_sync(gw_gpu *g)
{
	(void)g;
	return GW_OK;
}

const struct gw_gpu_ops gw_gpu_emu_ops = {
	.name = "emu",
	.open = emu_open,
	.close = emu_close,
	.alloc = emu_alloc,
	.free = emu_free,
	.copy = emu_copy,
	.zero = emu_zero,
	.alloc_mapped = emu_alloc_mapped,
	.free_mapped = emu_free,
	.reg = emu_reg,
	.unreg = emu_unreg,
	.enc_dense = emu_enc_dense,
	.enc_topk = emu_enc_topk,
	.max_3lc = emu_max_3lc,
	.enc_3lc = emu_enc_3lc,
	.dec_dense = emu_dec_dense,
	.dec_3lc = emu_dec_3lc,
	.dec_topk = emu_dec_topk,
	.finite = emu_finite,
	.sync = emu_sync,
};
