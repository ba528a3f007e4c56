/* bf16: the upper 16 bits of float32 after round-to-nearest-even, as
 * mixed-precision training does. NaN stays NaN (quieted, sign kept), ±Inf
 * stays ±Inf, finite values above bf16's range round to ±Inf as IEEE
 * rounding requires.
 *
 * Error feedback is fused into the encode pass: c = g + e, the bf16 of c
 * is written and e becomes c - bf16(c), restarted at 0 where that is not
 * finite. Those are the generic driver's operations in the same order
 * (fold, decode with alpha -1, sanitize), so the buffer is bit-identical to
 * the generic path's; one pass over g and e instead of three made the
 * encode memory-bound rather than pass-bound. The loops are branch-free so
 * the compiler vectorizes them. */
#include "codec_internal.h"
#include "gw_cpu.h"

static inline uint16_t to_bf16(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	uint32_t nan = (u & 0x7fffffffu) > 0x7f800000u;
	uint32_t q = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
	return (uint16_t)(nan ? (u >> 16) | 0x0040u : q);   /* quiet the NaN */
}

/* c - bf16(c), or 0 where that is not finite (c non-finite, or rounded to
 * Inf): what the generic feedback leaves in the buffer. */
static inline float residual(float c, uint16_t q)
{
	float r = c - gw_bf16_f32(q);
	uint32_t u;
	memcpy(&u, &r, 4);
	return (u & 0x7f800000u) == 0x7f800000u ? 0.0f : r;
}

static inline void st_bf16(uint8_t *dst, size_t i, uint16_t q)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(dst + 2 * i, &q, 2);
#else
	gw_st16(dst + 2 * i, q);
#endif
}

static inline __attribute__((always_inline)) void put_bf16_body(uint8_t *dst, const float *v,
								uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		st_bf16(dst, i, to_bf16(v[i]));
}
GW_ISA_LOOP(put_bf16, (uint8_t *dst, const float *v, uint32_t n), (dst, v, n))

static inline __attribute__((always_inline)) void put_bf16_ef_body(uint8_t *dst, const float *g,
								   float *e, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		float c = g[i] + e[i];
		uint16_t q = to_bf16(c);
		st_bf16(dst, i, q);
		e[i] = residual(c, q);
	}
}
GW_ISA_LOOP(put_bf16_ef, (uint8_t *dst, const float *g, float *e, uint32_t n), (dst, g, e, n))

static inline float get_bf16(const uint8_t *vals, uint32_t i, const void *ctx)
{
	(void)ctx;
	return gw_bf16_f32(gw_ld16(vals + 2 * (size_t)i));
}

static size_t bf16_min_body(const gw_encoder *enc, size_t kb)
{
	(void)enc;
	return 2 + kb;
}

static int bf16_encode(gw_encoder *enc, uint8_t *body, size_t cap, struct gw_frame_info *h)
{
	unsigned kb = gw_enc_key_bytes(enc);
	uint32_t n = gw_frame_take(enc, cap, 0, 2 + kb);
	if (!n)
		return GW_ERR(GW_EBUDGET);
	gw_frame_range(enc, n, h);
	h->param_len = 0;
	float *e = gw_ef_data(enc->ef);
	uint64_t p = enc->pos;
	if (kb)
		gw_keys_put(body, enc->t.keys, p, n, kb);
	uint8_t *out = body + (size_t)kb * n;
	if (!e) {
		put_bf16(out, enc->src + p, n);
	} else if (!enc->sparse) {
		put_bf16_ef(out, enc->src + p, e + p, n);
	} else {
		for (uint32_t i = 0; i < n; i++) {
			float c = gw_enc_corrected(enc, e, p + i);
			uint16_t q = to_bf16(c);
			st_bf16(out, i, q);
			e[gw_enc_elem(enc, p + i)] = residual(c, q);
		}
	}
	enc->pos += n;
	return (int)((2 + (size_t)kb) * n);
}

static int bf16_decode(const struct gw_frame_info *h, const uint8_t *params,
		       const uint8_t *payload, float *out, uint64_t out_len, float alpha)
{
	(void)params;
	if (!gw_fixed_lengths_ok(h, 0, 2))
		return GW_ERR(GW_ELENGTH);
	return gw_fixed_add(h, payload, out, out_len, alpha, get_bf16, NULL);
}

const struct gw_codec_ops gw_codec_bf16 = {
	.name = "bf16",
	.id = GW_CODEC_BF16,
	.caps = GW_CODEC_DENSE | GW_CODEC_SPARSE | GW_CODEC_LOSSY,
	.frames = GW_FRAME_KINDS,
	.min_body = bf16_min_body,
	.encode = bf16_encode,
	.decode = bf16_decode,
	.flags = GW_OPS_FUSED_EF,
};
