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

static size_t bf16_min_body(const gw_encoder *enc, size_t kb)
{
	(void)enc;
	return 2 + kb;
}

static int bf16_encode(gw_encoder *enc, uint8_t *body, size_t cap,
		       struct gw_frame_info *h)
{
	size_t kb = gw_enc_key_bytes(enc);
	uint32_t n = gw_frame_take(enc, cap, 0, 2 + kb);
	if (!n)
		return GW_ERR(GW_EBUDGET);
	gw_frame_range(enc, n, h);
	h->param_len = 0;
	if (kb)
		gw_keys_put(body, enc->t.keys, enc->pos, n, (unsigned)kb);
	uint8_t *dst = body + kb * n;
	const float *v = enc->src + enc->pos;
	for (uint32_t i = 0; i < n; i++)
		gw_st16(dst + 2 * (size_t)i, to_bf16(v[i]));
	enc->pos += n;
	return (int)((2 + kb) * n);
}

static int bf16_decode(const struct gw_frame_info *h, const uint8_t *params,
		       const uint8_t *payload, float *out, uint64_t out_len,
		       float alpha)
{
	(void)params;
	unsigned kb = gw_hdr_key_bytes(h);
	if (h->param_len != 0 || h->payload_len != (uint64_t)h->count * (2 + kb))
		return GW_ERR(GW_ELENGTH);
	const uint8_t *vals = payload + (size_t)kb * h->count;
	if (!kb) {
		float *o = out + h->start;
		for (uint32_t i = 0; i < h->count; i++)
			o[i] += alpha * gw_bf16_f32(gw_ld16(vals + 2 * (size_t)i));
		return (int)h->count;
	}
	int rc = gw_keys_check(payload, h->count, kb, h->start, h->span, out_len);
	if (rc < 0)
		return rc;
	for (uint32_t i = 0; i < h->count; i++)
		out[gw_keys_get(payload, i, kb)] +=
			alpha * gw_bf16_f32(gw_ld16(vals + 2 * (size_t)i));
	return (int)h->count;
}

const struct gw_codec_ops gw_codec_bf16 = {
	.name = "bf16",
	.id = GW_CODEC_BF16,
	.caps = GW_CODEC_DENSE | GW_CODEC_SPARSE | GW_CODEC_LOSSY,
	.min_body = bf16_min_body,
	.encode = bf16_encode,
	.decode = bf16_decode,
};
