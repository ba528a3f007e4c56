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

void gw_emu_decode_dense(const struct gw_kf_dec *d)
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

void gw_emu_scan(const struct gw_ks_scan *s)
{
	static struct gw_ks_shared sh;
	uint32_t nt = gw_ks_tiles(s->n);
	for (uint32_t b = 0; b < nt; b++) {
		for (uint32_t t = 0; t < GW_KS_THREADS; t++)
			gw_ks_tile_reduce(s, b, t, &sh);
		gw_ks_tile_prefix(s, b, &sh);
		for (uint32_t t = 0; t < GW_KS_THREADS; t++)
			gw_ks_tile_write(s, b, t, &sh);
	}
	gw_ks_tiles_scan(s);
	for (uint64_t i = 0; i < s->n; i++)
		gw_ks_apply(s, i);
}

/* The max launch's grid: what the device launcher uses too, so that each
 * thread's share is the same (the maximum would be anyway). */
#define EMU_MAX_BLOCKS 64u

void gw_emu_max_3lc(const struct gw_kt_enc *j)
{
	static uint32_t part[GW_KT_THREADS];
	*j->mx = 0;
	uint64_t stride = (uint64_t)EMU_MAX_BLOCKS * GW_KT_THREADS;
	for (uint32_t b = 0; b < EMU_MAX_BLOCKS; b++) {
		for (uint32_t t = 0; t < GW_KT_THREADS; t++)
			gw_kt_max_part(j, (uint64_t)b * GW_KT_THREADS + t, stride, &part[t]);
		gw_kt_max_block(j, part, GW_KT_THREADS);
	}
}

int gw_emu_encode_3lc(const struct gw_kt_enc *j, uint32_t *frames)
{
	if (!j->mx_given)
		gw_emu_max_3lc(j);
	for (uint64_t b = 0; b < j->nb; b++)
		gw_kt_pack(j, b);
	for (uint64_t b = 0; b < j->nb; b++)
		gw_kt_run_start(j, b);
	struct gw_ks_scan runs = {.op = GW_KS_MAX, .inclusive = 1, .in = j->runs,
				  .out = j->runs, .tiles = j->tiles, .n = j->nb};
	gw_emu_scan(&runs);
	for (uint64_t b = 0; b < j->nb; b++)
		gw_kt_token_flag(j, b);
	struct gw_ks_scan toks = {.op = GW_KS_SUM, .inclusive = 0, .in = j->tok,
				  .out = j->tok, .tiles = j->tiles, .n = j->nb};
	gw_emu_scan(&toks);
	gw_kt_count(j);
	*frames = gw_kt_frames(j);
	if (*frames > j->max_frames || *j->err)
		return GW_EBUDGET;
	for (uint64_t b = 0; b < j->nb; b++)
		gw_kt_write(j, b);
	for (uint32_t f = 0; f < *frames; f++)
		gw_kt_seal(j, f);
	return GW_OK;
}

void gw_emu_decode_3lc(const struct gw_kf_dec *d)
{
	static struct gw_kt_dshared s;
	for (uint32_t f = 0; f < d->n; f++) {
		gw_kt_dec_check(d, f, &s);
		for (uint32_t t = 0; t < GW_KT_THREADS; t++)
			gw_kt_dec_expand(t, &s);
		gw_kt_dec_verdict(&s);
		for (uint32_t t = 0; t < GW_KT_THREADS; t++)
			gw_kt_dec_add(d, t, &s);
		gw_kt_dec_done(d, f, &s);
	}
}

int gw_emu_encode_topk(const struct gw_kk_enc *j, uint32_t *frames)
{
	for (uint64_t i = 0; i < j->dim; i++)
		gw_kk_rank(j, i);
	gw_kk_select_init(j);
	for (uint32_t p = 0; p < 4; p++) {
		for (uint64_t i = 0; i < j->dim; i++)
			gw_kk_hist(j, p, i);
		gw_kk_pick(j, p);
	}
	for (uint64_t i = 0; i < j->dim; i++)
		gw_kk_tie_flag(j, i);
	struct gw_ks_scan ties = {.op = GW_KS_SUM, .inclusive = 0, .in = j->ties,
				  .out = j->ties, .tiles = j->tiles, .n = j->dim};
	gw_emu_scan(&ties);
	for (uint64_t i = 0; i < j->dim; i++)
		gw_kk_sel_flag(j, i);
	struct gw_ks_scan pos = {.op = GW_KS_SUM, .inclusive = 0, .in = j->pos,
				 .out = j->pos, .tiles = j->tiles, .n = j->dim};
	gw_emu_scan(&pos);
	for (uint64_t i = 0; i < j->dim; i++)
		gw_kk_compact(j, i);
	for (uint32_t q = 0; q <= j->k; q++)
		gw_kk_cost(j, q);
	struct gw_ks_scan cost = {.op = GW_KS_SUM, .inclusive = 0, .in = j->cost,
				  .out = j->cost, .tiles = j->tiles, .n = (uint64_t)j->k + 1};
	gw_emu_scan(&cost);
	gw_kk_cut(j);
	*frames = *j->nframes;
	if (*frames > j->max_frames)
		return GW_EBUDGET;
	for (uint32_t f = 0; f < *frames; f++) {
		for (uint32_t t = 0; t < GW_KK_THREADS; t++)
			gw_kk_write_entries(j, f, t);
		gw_kk_seal(j, f);
	}
	return GW_OK;
}

void gw_emu_decode_topk(const struct gw_kf_dec *d)
{
	for (uint32_t f = 0; f < d->n; f++)
		gw_kk_dec_frame(d, f);
}
