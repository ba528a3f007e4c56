/* raw: float32 values as they are, little-endian. Bit-exact, the baseline
 * every other codec is measured against. */
#include "codec_internal.h"

static void put_f32(uint8_t *dst, const float *v, uint32_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(dst, v, (size_t)n * 4);
#else
	for (uint32_t i = 0; i < n; i++)
		gw_stf32(dst + 4 * (size_t)i, v[i]);
#endif
}

static inline float get_f32(const uint8_t *vals, uint32_t i, const void *ctx)
{
	(void)ctx;
	return gw_ldf32(vals + 4 * (size_t)i);
}

/* keys (sparse), then the values */
GW_FIXED_CODEC_OPS(raw, 4, put_f32, get_f32)

const struct gw_codec_ops gw_codec_raw = {
	.name = "raw",
	.id = GW_CODEC_RAW,
	.caps = GW_CODEC_DENSE | GW_CODEC_SPARSE,
	.frames = GW_FRAME_KINDS,
	.min_body = raw_min_body,
	.encode = raw_encode,
	.decode = raw_decode,
};
