/* The host emulation of gpudirect's kernels: the same phase functions
 * (kern/) run block by block and, within a block, phase by phase for
 * every thread in turn, as __syncthreads() orders them on the device. It
 * needs no GPU and no CUDA: tests/gpu runs it on every machine and holds
 * its frames to codec/'s byte for byte, so the code the GPU runs is
 * checked wherever the suite runs. */
#ifndef GW_GPUDIRECT_EMU_H
#define GW_GPUDIRECT_EMU_H

#include "kern/dense.h"
#include "kern/tlc.h"
#include "kern/topk.h"

/* Encodes j->frames frames (raw, bf16 or int8) as the encode kernel does. */
void gw_emu_encode_dense(const struct gw_kd_enc *j);

/* Decode-accumulates d->n frames as the decode kernel does. */
void gw_emu_decode_dense(const struct gw_kf_dec *d);

/* Runs a scan's three launches (kern/scan.h). */
void gw_emu_scan(const struct gw_ks_scan *s);

/* The 3lc max launch alone: *j->mx <- the maximum |g + e| bits of j. */
void gw_emu_max_3lc(const struct gw_kt_enc *j);

/* Encodes a 3lc tensor as the 3lc launches do (the max launch first
 * unless j->mx_given); *frames gets the frame
 * count. GW_EBUDGET if j->max_frames slots are too few (nothing sealed). */
int gw_emu_encode_3lc(const struct gw_kt_enc *j, uint32_t *frames);

/* Encodes a top-k tensor as the top-k launches do; *frames gets the frame
 * count. GW_EBUDGET if j->max_frames slots are too few (nothing written). */
int gw_emu_encode_topk(const struct gw_kk_enc *j, uint32_t *frames);

/* Decode-accumulates d->n top-k frames as the top-k decode kernel does. */
void gw_emu_decode_topk(const struct gw_kf_dec *d);

/* Decode-accumulates d->n 3lc frames as the 3lc decode kernel does. */
void gw_emu_decode_3lc(const struct gw_kf_dec *d);

#endif
