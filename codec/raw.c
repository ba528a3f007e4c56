/* raw: float32 values as they are, little-endian. Bit-exact, the baseline
 * every other codec is measured against. */
#include "codec_internal.h"

static size_t raw_min_body(const gw_encoder *enc, size_t kb)
{
	(void)enc;
	return 4 + kb;
}

static void put_f32(uint8_t *dst, const float *v, uint32_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(dst, v, (size_t)n * 4);
#else
	for (uint32_t i = 0; i < n; i++)
		gw_stf32(dst + 4 * (size_t)i, v[i]);
#endif
}

static int raw_encode(gw_encoder *enc, uint8_t *body, size_t cap,
		      struct gw_frame_info *h)
{
	size_t kb = gw_enc_key_bytes(enc);
	uint32_t n = gw_frame_take(enc, cap, 0, 4 + kb);
	if (!n)
		return GW_ERR(GW_EBUDGET);
	gw_frame_range(enc, n, h);
	h->param_len = 0;
	if (kb)
		gw_keys_put(body, enc->t.keys, enc->pos, n, (unsigned)kb);
	put_f32(body + kb * n, enc->src + enc->pos, n);
	enc->pos += n;
	return (int)((4 + kb) * n);
}

static int raw_decode(const struct gw_frame_info *h, const uint8_t *params,
		      const uint8_t *payload, float *out, uint64_t out_len,
		      float alpha)
{
	(void)params;
	unsigned kb = gw_hdr_key_bytes(h);
	if (h->param_len != 0 || h->payload_len != (uint64_t)h->count * (4 + kb))
		return GW_ERR(GW_ELENGTH);
	const uint8_t *vals = payload + (size_t)kb * h->count;
	if (!kb) {
		float *o = out + h->start;
		for (uint32_t i = 0; i < h->count; i++)
			o[i] += alpha * gw_ldf32(vals + 4 * (size_t)i);
		return (int)h->count;
	}
	int rc = gw_keys_check(payload, h->count, kb, h->start, h->span, out_len);
	if (rc < 0)
		return rc;
	for (uint32_t i = 0; i < h->count; i++)
		out[gw_keys_get(payload, i, kb)] += alpha * gw_ldf32(vals + 4 * (size_t)i);
	return (int)h->count;
}

const struct gw_codec_ops gw_codec_raw = {
	.name = "raw",
	.id = GW_CODEC_RAW,
	.caps = GW_CODEC_DENSE | GW_CODEC_SPARSE,
	.min_body = raw_min_body,
	.encode = raw_encode,
	.decode = raw_decode,
};
