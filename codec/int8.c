/* int8: 3LC's 8-bit baseline. 255 levels in [-127, 127] with one float32
 * scale per frame (max |x| / 127), error feedback fused into the encode
 * pass. Non-finite input poisons its frame on purpose: the scale is sent as
 * NaN so every value of the frame decodes to NaN, which is what overflow
 * checks of mixed-precision training look for; the error buffer of that
 * range restarts at zero rather than carrying NaN into later rounds. */
#include <math.h>

#include "codec_internal.h"
#include "gw_cpu.h"

#define LEVELS 127.0f

/* Round half to even for |x| < 2^22 without libm: adding and removing
 * 1.5 * 2^23 leaves the integer nearest x in the float's mantissa. It keeps
 * the loop vectorizable on baseline x86-64. */
static inline float round_even(float x)
{
	return (x + 0x1.8p23f) - 0x1.8p23f;
}

static size_t int8_min_body(const gw_encoder *enc, size_t kb)
{
	(void)enc;
	return 4 + 1 + kb;
}

static inline float clamp(float r)
{
	return r > LEVELS ? LEVELS : r < -LEVELS ? -LEVELS : r;
}

/* |x| as an integer: for finite floats the order of the magnitude bits is
 * the order of the magnitudes, and NaN and +-Inf sort above every finite
 * value — so one integer max finds both the scale and any poison, and the
 * loop vectorizes without fast-math. */
static inline uint32_t mag_bits(float x)
{
	uint32_t u;
	memcpy(&u, &x, 4);
	return u & 0x7fffffffu;
}

/* Largest magnitude bits of g + e (g alone without e) over a dense run. */
static inline __attribute__((always_inline)) void scan_dense_body(const float *g,
								 const float *e, uint32_t n,
								 uint32_t *out)
{
	uint32_t mb = 0;
	if (!e) {
		for (uint32_t i = 0; i < n; i++) {
			uint32_t b = mag_bits(g[i]);
			mb = b > mb ? b : mb;
		}
	} else {
		for (uint32_t i = 0; i < n; i++) {
			uint32_t b = mag_bits(g[i] + e[i]);
			mb = b > mb ? b : mb;
		}
	}
	*out = mb;
}
GW_ISA_LOOP(scan_dense, (const float *g, const float *e, uint32_t n, uint32_t *out),
	    (g, e, n, out))

/* Max |g + e| over the frame; returns 1 if any value is NaN or Inf. */
static int scan(const gw_encoder *enc, const float *e, uint64_t p, uint32_t n,
		float *scale, float *inv)
{
	uint32_t mb = 0;
	if (!enc->sparse) {
		scan_dense(enc->src + p, e ? e + p : NULL, n, &mb);
	} else {
		for (uint32_t i = 0; i < n; i++) {
			uint32_t b = mag_bits(gw_enc_corrected(enc, e, p + i));
			mb = b > mb ? b : mb;
		}
	}
	int bad = mb >= 0x7f800000u;
	float m;
	memcpy(&m, &mb, 4);
	*scale = m / LEVELS;
	*inv = m > 0.0f ? LEVELS / m : 0.0f;
	if (bad)
		*scale = NAN;
	else if (!isfinite(*inv) || *scale == 0.0f)
		*scale = *inv = 0.0f;   /* m below 2^-122: everything rounds to 0 */
	else if (isinf(*scale * LEVELS))
		*scale = nextafterf(*scale, 0.0f);  /* m = FLT_MAX: keep 127 * scale finite */
	return bad;
}

/* Dense, finite frame: quantize and, with feedback, keep the residual. */
static inline __attribute__((always_inline)) void quantize_dense_body(const float *g, float *e,
								     uint32_t n, float scale,
								     float inv, int8_t *q)
{
	if (!e) {
		for (uint32_t i = 0; i < n; i++)
			q[i] = (int8_t)clamp(round_even(g[i] * inv));
		return;
	}
	for (uint32_t i = 0; i < n; i++) {
		float c = g[i] + e[i];
		float r = clamp(round_even(c * inv));
		q[i] = (int8_t)r;
		e[i] = c - r * scale;
	}
}
GW_ISA_LOOP(quantize_dense, (const float *g, float *e, uint32_t n, float scale, float inv,
			     int8_t *q), (g, e, n, scale, inv, q))

static int int8_encode(gw_encoder *enc, uint8_t *body, size_t cap,
		       struct gw_frame_info *h)
{
	unsigned kb = gw_enc_key_bytes(enc);
	uint32_t n = gw_frame_take(enc, cap, 4, 1 + kb);
	if (!n)
		return GW_ERR(GW_EBUDGET);
	gw_frame_range(enc, n, h);
	h->param_len = 4;
	float *e = gw_ef_data(enc->ef);
	uint64_t p = enc->pos;

	float scale, inv;
	int bad = scan(enc, e, p, n, &scale, &inv);
	if (kb)
		gw_keys_put(body + 4, enc->t.keys, p, n, kb);
	int8_t *q = (int8_t *)(body + 4 + (size_t)kb * n);
	if (!enc->sparse && !bad)
		quantize_dense(enc->src + p, e ? e + p : NULL, n, scale, inv, q);
	else
		for (uint32_t i = 0; i < n; i++) {
			float c = gw_enc_corrected(enc, e, p + i);
			float r = bad ? 0.0f : clamp(round_even(c * inv));
			q[i] = (int8_t)r;
			if (e)
				e[gw_enc_elem(enc, p + i)] = bad ? 0.0f : c - r * scale;
		}
	gw_stf32(body, scale);
	enc->pos += n;
	return (int)(4 + (size_t)(1 + kb) * n);
}

/* Level i times the frame's scale (ctx). */
static inline float dequant(const uint8_t *q, uint32_t i, const void *scale)
{
	return (float)(int8_t)q[i] * *(const float *)scale;
}

static int int8_decode(const struct gw_frame_info *h, const uint8_t *params,
		       const uint8_t *payload, float *out, uint64_t out_len,
		       float alpha)
{
	unsigned kb = gw_hdr_key_bytes(h);
	if (!gw_fixed_lengths_ok(h, 4, 1))
		return GW_ERR(GW_ELENGTH);
	float scale = gw_ldf32(params);
	/* Any NaN (the poisoned frame), else sign bit clear and finite:
	 * -0 is refused like every negative (wire-format §2.5). */
	if (!isnan(scale) && (signbit(scale) || !isfinite(scale)))
		return GW_ERR(GW_ECORRUPT);
	const int8_t *q = (const int8_t *)(payload + (size_t)kb * h->count);
	int bad = 0;
	for (uint32_t i = 0; i < h->count; i++)
		bad |= q[i] == -128;
	if (bad)
		return GW_ERR(GW_ECORRUPT);
	return gw_fixed_add(h, payload, out, out_len, alpha, dequant, &scale);
}

const struct gw_codec_ops gw_codec_int8 = {
	.name = "int8",
	.id = GW_CODEC_INT8,
	.caps = GW_CODEC_DENSE | GW_CODEC_SPARSE | GW_CODEC_LOSSY,
	.frames = GW_FRAME_KINDS,
	.min_body = int8_min_body,
	.encode = int8_encode,
	.decode = int8_decode,
	.flags = GW_OPS_FUSED_EF,
};
