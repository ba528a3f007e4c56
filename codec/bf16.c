/* bf16: the upper 16 bits of float32 after round-to-nearest-even, as
 * mixed-precision training does. NaN stays NaN (quieted, sign kept), ±Inf
 * stays ±Inf, finite values above bf16's range round to ±Inf as IEEE
 * rounding requires. */
#include "codec_internal.h"

static inline uint16_t to_bf16(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x0040u);  /* quiet the NaN */
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

static void put_bf16(uint8_t *dst, const float *v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		gw_st16(dst + 2 * (size_t)i, to_bf16(v[i]));
}

static inline float get_bf16(const uint8_t *vals, uint32_t i, const void *ctx)
{
	(void)ctx;
	return gw_bf16_f32(gw_ld16(vals + 2 * (size_t)i));
}

/* keys (sparse), then the values as bf16 */
GW_FIXED_CODEC_OPS(bf16, 2, put_bf16, get_bf16)

const struct gw_codec_ops gw_codec_bf16 = {
	.name = "bf16",
	.id = GW_CODEC_BF16,
	.caps = GW_CODEC_DENSE | GW_CODEC_SPARSE | GW_CODEC_LOSSY,
	.min_body = bf16_min_body,
	.encode = bf16_encode,
	.decode = bf16_decode,
};
