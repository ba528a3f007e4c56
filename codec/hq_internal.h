/* hq's pieces shared by its frame code (hq.c), its kernels (hq_kern.c)
 * and the tests that hold them to a model: the params' layout, the
 * randomised Hadamard rotation and the code packing (wire-format §4.11). */
#ifndef GW_HQ_INTERNAL_H
#define GW_HQ_INTERNAL_H

#include <stdint.h>

#include "codec_internal.h"

#define HQ_PARAM_LEN 20u
#define HQ_F_ROTATED 0x1u   /* values were rotated before quantising */
#define HQ_F_SUM 0x2u       /* a shard's sum of contributors' codes */
#define HQ_F_POISON 0x4u    /* a contributor held NaN or Inf: decodes to NaN */
#define HQ_F_KNOWN 0x7u
#define HQ_BLOCK_MAX 4096u  /* largest rotation block */
#define HQ_WIDTH_MAX 32u

struct hq_params {
	uint8_t bits;          /* b: codes of a worker lie in [-Q, Q], Q = 2^(b-1) - 1 */
	uint8_t width;         /* bits per code in the payload */
	uint8_t flags;         /* HQ_F_* */
	uint32_t contributors; /* codes summed into each of the payload's */
	uint32_t seed;         /* the rotation's (0 without one) */
	float scale;           /* the shared scale S: code q stands for q S / Q */
	float next;            /* a worker's max |rotated value|; a sum's largest */
};

static inline uint32_t hq_levels(unsigned bits)
{
	return (1u << (bits - 1)) - 1u;
}

/* Reads and checks the params of frame h (§4.11.2's rules in their order);
 * 0 or GW_E*. */
int hq_params_read(const struct gw_frame_info *h, const uint8_t *p, struct hq_params *q);
void hq_params_write(uint8_t *p, const struct hq_params *q);
/* Payload bytes of n codes of width bits. */
static inline uint64_t hq_payload_len(uint64_t n, unsigned width)
{
	return (n * width + 7) / 8;
}
/* Bits a code of magnitude at most m needs in two's complement (>= 2). */
unsigned hq_width_of(uint64_t m);

/* ---- rotation (hq_kern.c) ---- *
 * A frame's n values are cut into blocks, each the largest power of two
 * not above what is left nor HQ_BLOCK_MAX; each block x is rotated to
 * H (D x) 2^(-k/2), D the frame's signs, H the 2^k Walsh-Hadamard matrix
 * in its butterfly order. */
uint32_t hq_block(uint32_t left);
void hq_rotate(float *x, uint32_t n, uint32_t seed);
void hq_unrotate(float *x, uint32_t n, uint32_t seed);
/* The inverse over one block of b values at index off of the frame. */
void hq_unrotate_part(float *x, uint32_t b, uint32_t seed, uint32_t off);

/* ---- codes (hq_kern.c) ---- */
/* Writes the n codes q (each fitting width bits) packed, padding zero. */
void hq_pack8(uint8_t *dst, const int8_t *q, uint32_t n, unsigned width);
void hq_pack32(uint8_t *dst, const int32_t *q, uint32_t n, unsigned width);
/* Reads n codes of width bits into q; 0, or GW_ECORRUPT if one lies
 * outside [-lim, lim] or the padding bits are not zero (q then partial). */
int hq_unpack32(const uint8_t *src, uint32_t n, unsigned width, uint32_t lim, int32_t *q);
/* acc[i] += code i for n codes of width (2..8) bits; GW_ECORRUPT (and acc
 * as it was) if a code is outside [-lim, lim] or the padding is not zero. */
int hq_add_codes(const uint8_t *src, uint32_t n, unsigned width, uint32_t lim, int32_t *acc);

#endif /* GW_HQ_INTERNAL_H */
