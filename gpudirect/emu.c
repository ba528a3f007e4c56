/* Host emulation of the dense kernels (emu.h): each loop over t is one
 * phase of a block, each boundary between loops a __syncthreads(). */
#include "emu.h"

void gw_emu_encode_dense(const struct gw_kd_enc *j)
{
	static struct gw_kd_shared s;   /* one block at a time, as in shared memory */
	for (uint32_t f = 0; f < j->frames; f++) {
		if (j->codec == GW_KD_INT8) {
			for (uint32_t t = 0; t < GW_KD_THREADS; t++)
				gw_kd_enc_scan(j, f, t, &s);
			gw_kd_enc_scale(&s);
		}
		for (uint32_t t = 0; t < GW_KD_THREADS; t++)
			gw_kd_enc_values(j, f, t, &s);
		gw_kd_enc_seal(j, f, &s);
	}
}

void gw_emu_decode_dense(const struct gw_kd_dec *d)
{
	static struct gw_kd_shared s;
	for (uint32_t f = 0; f < d->n; f++) {
		gw_kd_dec_check(d, f, &s);
		for (uint32_t t = 0; t < GW_KD_THREADS; t++)
			gw_kd_dec_scan(t, &s);
		gw_kd_dec_verdict(&s);
		for (uint32_t t = 0; t < GW_KD_THREADS; t++)
			gw_kd_dec_add(d, t, &s);
		gw_kd_dec_done(d, f, &s);
	}
}
