/* What the tests of gpudirect's kernels on hostcuda (test_gpu_emu,
 * test_gpu_emu_hq) share: the library's frames for an input, the
 * emulation's frames and sums held to them, and decoding compared frame
 * by frame and under mutations. */
#ifndef GW_TEST_EMU_CHECK_H
#define GW_TEST_EMU_CHECK_H

#include "../gw_test.h"
#include "emu.h"

/* Where frames hold a few elements each (tiny budgets, a limit of 5 or 7
 * elements) a kernel runs a block of fibers per handful of elements: those
 * cases take the tensor's first TINY elements, which reach every branch
 * the whole tensor would, at a small fraction of the schedule. */
#define TINY 3001u
uint64_t tiny_dim(uint64_t dim, int tiny);

/* The suite runs these tests under two schedules (GW_HCU_SEED 1 and 2):
 * each takes every other real trace, the seed's parity saying which, so
 * the two runs cover every trace between them. */
int trace_parity(void);

/* GW_GPU_EMU_BRIEF=1 (the sanitizer build, where a fiber costs several
 * times more): every eighth trace, and the long synthetic tensors a
 * fifth as long. The release build's two runs are the full check. */
int brief(void);

/* check on this run's share of the real dense traces, each cut to its
 * first max_n elements: trace i for i = first * !trace_parity(), then
 * every step-th (brief(): every brief_step-th). */
/* n values uniform in [-2, 2) but NaN at 17 and -Inf at inf_at: poisoned
 * frames among sound ones. Caller frees. */
float *nonfinite_values(gw_test_rng *r, int n, int inf_at);

typedef void (*trace_check)(const float *v, uint64_t dim, const char *name, gw_test_rng *r,
			    size_t *frames);
void each_trace(trace_check check, int first, int step, int brief_step, uint64_t max_n,
		gw_test_rng *r, size_t *frames);

/* Frames of one encoding, with their slots (slot i allocated i % 4 bytes
 * into its block, so kernels see every alignment). */
struct gpu_frames {
	uint8_t **slots;
	uint32_t *lens, n;
};
void gpu_frames_free(struct gpu_frames *g);

/* The library's frames for the same input, with params; e (may be NULL)
 * goes in as the error buffer and comes back as the library leaves it. */
void lib_encode_with(int codec, const char *params, const float *v, float *e, uint64_t dim,
		     size_t budget, gw_test_frames *fr);

/* n frames of the emulation against the library's, and the buffers. */
void same_as_library(uint8_t *const *slots, const uint32_t *lens, uint32_t n,
		     const gw_test_frames *fr, const float *e_emu, const float *e_lib,
		     uint64_t dim, const char *what);
/* Bit for bit, any NaN for a NaN. */
void same_out(const float *a, const float *b, uint64_t dim, const char *what);

/* Decodes n frames with the emulated kernel for codec. */
void emu_decode(int codec, const uint8_t *const *frames, const uint32_t *lens, uint32_t n,
		float *out, uint64_t out_len, int32_t *rcs);
/* The emulated decode of the library's frames, and of mutations of them,
 * against gw_decode. */
void compare_decode(int codec, const gw_test_frames *fr, uint64_t dim, gw_test_rng *r,
		    const char *what);

#endif
