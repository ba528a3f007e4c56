/* emu.h: a launch of the CPU-built kernels and a wait for it. */
#include "emu.h"
#include "gw_cuda.h"

/* Waits for the default stream; a launch refused (GW_EINVAL) stays so. */
static int waited(int rc)
{
	cudaError_t e = cudaStreamSynchronize(NULL);
	if (rc < 0)
		return rc;
	return e == cudaSuccess ? GW_OK : GW_EIO;
}

int gw_emu_encode_dense(const struct gw_kd_enc *j)
{
	return waited(gw_cuda_encode_dense(j, NULL));
}

int gw_emu_decode_dense(const struct gw_kf_dec *d)
{
	return waited(gw_cuda_decode_dense(d, NULL));
}

int gw_emu_max_3lc(const struct gw_kt_enc *j)
{
	return waited(gw_cuda_max_3lc(j, NULL));
}

int gw_emu_encode_3lc(const struct gw_kt_enc *j, uint32_t *frames)
{
	int rc = waited(gw_cuda_encode_3lc(j, NULL));
	if (rc < 0)
		return rc;
	*frames = gw_kt_frames(j);
	return *frames > j->max_frames || *j->err ? GW_EBUDGET : GW_OK;
}

int gw_emu_encode_topk(const struct gw_kk_enc *j, uint32_t *frames)
{
	int rc = waited(gw_cuda_encode_topk(j, NULL));
	if (rc < 0)
		return rc;
	*frames = *j->nframes;
	return *frames > j->max_frames ? GW_EBUDGET : GW_OK;
}

int gw_emu_decode_topk(const struct gw_kf_dec *d)
{
	return waited(gw_cuda_decode_topk(d, NULL));
}

int gw_emu_decode_3lc(const struct gw_kf_dec *d)
{
	return waited(gw_cuda_decode_3lc(d, NULL));
}

int gw_emu_encode_hq(const struct gw_kh_enc *j)
{
	return waited(gw_cuda_encode_hq(j, NULL));
}

int gw_emu_decode_hq(const struct gw_kf_dec *d)
{
	return waited(gw_cuda_decode_hq(d, NULL));
}
