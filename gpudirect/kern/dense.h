/* Dense raw, bf16 and int8 frames (wire-format §4.1–§4.3), one frame per
 * thread block: the block's threads take the frame's elements in strides,
 * thread 0 does what is once per frame (the int8 scale from the block's
 * maxima, the header, the checksum). Each phase is a function of (block,
 * thread); the kernels of gw_cuda.cu run them with __syncthreads()
 * between phases, on the GPU and, built for hostcuda/, on the CPU, where
 * a block's threads are fibers in a seeded order. Byte for byte what
 * codec/ writes for the same input: tests/gpu holds them to it.
 *
 * Frames are cut as §4.1 says, so frame j covers elements [j n, j n + n)
 * with n = per_frame, the last one shorter: no frame depends on another,
 * and each block knows its range without a scan. */
#ifndef GW_KERN_DENSE_H
#define GW_KERN_DENSE_H

#include "frame.h"

#define GW_KD_THREADS 256u   /* threads per block, on the GPU and on hostcuda */

/* One encode call. */
struct gw_kd_enc {
	int codec;                /* GW_WIRE_CODEC_RAW, _BF16 or _INT8 */
	const float *g;           /* dim gradient values */
	float *e;                 /* the error buffer, or NULL */
	uint64_t dim;
	uint32_t tensor;
	uint32_t per_frame;       /* elements of every frame but the last */
	uint32_t frames;
	uint8_t *const *slots;    /* frame j is written at slots[j] ... */
	uint32_t *lens;           /* ... and its length into lens[j] */
	uint64_t base;            /* g[0]'s element in the whole tensor: frame
				   * starts count from it (a batch of chunks) */
};

/* What a block shares between its phases. */
struct gw_kd_shared {
	uint32_t part[GW_KD_THREADS];   /* a thread's result of a scan */
	float scale, inv;               /* int8 */
	int bad;                        /* int8: a non-finite value */
	int32_t rc;                     /* decode: 0 or the frame's error */
	int codec;                      /* decode: the frame's fields */
	uint32_t count;
	uint64_t start;
	const uint8_t *vals;
};

GW_HD uint32_t gw_kd_value_bytes(int codec)
{
	return codec == GW_WIRE_CODEC_RAW ? 4 : codec == GW_WIRE_CODEC_BF16 ? 2 : 1;
}

GW_HD uint32_t gw_kd_param_len(int codec)
{
	return codec == GW_WIRE_CODEC_INT8 ? 4 : 0;
}

/* Elements per frame at a budget (§4.1's sizing; max_frame_elems 0: no
 * limit); 0 when the budget is too small. */
GW_HD uint32_t gw_kd_per_frame(int codec, uint64_t budget, uint32_t max_frame_elems)
{
	if (budget > GW_WIRE_FRAME_MAX)
		budget = GW_WIRE_FRAME_MAX;
	uint64_t fixed = GW_WIRE_HDR_LEN + gw_kd_param_len(codec);
	if (budget < GW_WIRE_BUDGET_MIN || budget < fixed + gw_kd_value_bytes(codec))
		return 0;
	uint64_t n = (budget - fixed) / gw_kd_value_bytes(codec);
	if (max_frame_elems && n > max_frame_elems)
		n = max_frame_elems;
	return (uint32_t)n;
}

GW_HD uint32_t gw_kd_frame_count(const struct gw_kd_enc *j)
{
	return (uint32_t)((j->dim + j->per_frame - 1) / j->per_frame);
}

GW_HD uint32_t gw_kd_frame_elems(const struct gw_kd_enc *j, uint32_t f)
{
	uint64_t lo = (uint64_t)f * j->per_frame, left = j->dim - lo;
	return left < j->per_frame ? (uint32_t)left : j->per_frame;
}

/* ---- per element ------------------------------------------------------------ */

GW_HD int gw_kd_nonfinite(uint32_t u)
{
	return (u & 0x7f800000u) == 0x7f800000u;
}

/* bf16 of f32 bits u: round to nearest even; NaN quieted (§4.2). */
GW_HD uint32_t gw_kd_bf16(uint32_t u)
{
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (u >> 16) | 0x0040u;
	return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}

/* Round half to even for |x| < 2^22, as codec/int8.c does it. */
GW_HD float gw_kd_round_even(float x)
{
	return (x + 12582912.0f) - 12582912.0f;   /* 1.5 * 2^23 */
}

GW_HD float gw_kd_clamp127(float r)
{
	return r > 127.0f ? 127.0f : r < -127.0f ? -127.0f : r;
}

/* ---- encode phases ------------------------------------------------------------ */

/* int8, every thread: the largest magnitude bits of its elements of
 * frame f (NaN and Inf sort above every finite value). */
GW_HD void gw_kd_enc_scan(const struct gw_kd_enc *j, uint32_t f, uint32_t tid,
			  struct gw_kd_shared *s)
{
	uint64_t lo = (uint64_t)f * j->per_frame;
	uint32_t n = gw_kd_frame_elems(j, f), mb = 0;
	for (uint32_t i = tid; i < n; i += GW_KD_THREADS) {
		float c = j->e ? j->g[lo + i] + j->e[lo + i] : j->g[lo + i];
		uint32_t b = gw_hd_f32_bits(c) & 0x7fffffffu;
		mb = b > mb ? b : mb;
	}
	s->part[tid] = mb;
}

/* int8, thread 0: the frame's scale (§4.3's encoding). */
GW_HD void gw_kd_enc_scale(struct gw_kd_shared *s)
{
	uint32_t mb = 0;
	for (uint32_t t = 0; t < GW_KD_THREADS; t++)
		mb = s->part[t] > mb ? s->part[t] : mb;
	s->bad = mb >= 0x7f800000u;
	float m = gw_hd_bits_f32(mb);
	float scale = m / 127.0f, inv = m > 0.0f ? 127.0f / m : 0.0f;
	if (s->bad) {
		scale = gw_hd_bits_f32(0x7fc00000u);
		inv = 0.0f;
	} else if (gw_kd_nonfinite(gw_hd_f32_bits(inv)) || scale == 0.0f) {
		scale = inv = 0.0f;
	} else if (gw_kd_nonfinite(gw_hd_f32_bits(scale * 127.0f))) {
		scale = gw_hd_bits_f32(gw_hd_f32_bits(scale) - 1);   /* toward 0 */
	}
	s->scale = scale;
	s->inv = inv;
}

/* Every thread: its elements' bytes, and their error-buffer entries. */
GW_HD void gw_kd_enc_values(const struct gw_kd_enc *j, uint32_t f, uint32_t tid,
			    const struct gw_kd_shared *s)
{
	uint64_t lo = (uint64_t)f * j->per_frame;
	uint32_t n = gw_kd_frame_elems(j, f);
	uint8_t *v = j->slots[f] + GW_WIRE_HDR_LEN + gw_kd_param_len(j->codec);
	for (uint32_t i = tid; i < n; i += GW_KD_THREADS) {
		float c = j->e ? j->g[lo + i] + j->e[lo + i] : j->g[lo + i];
		uint32_t u = gw_hd_f32_bits(c);
		if (j->codec == GW_WIRE_CODEC_RAW) {
			gw_hd_put32(v + 4 * (size_t)i, u);
			if (j->e)   /* c - c: +0, or NaN (non-finite c) put back to 0 */
				j->e[lo + i] = 0.0f;
		} else if (j->codec == GW_WIRE_CODEC_BF16) {
			uint32_t q = gw_kd_bf16(u);
			gw_hd_put16(v + 2 * (size_t)i, q);
			if (j->e) {
				float r = c - gw_hd_bits_f32(q << 16);
				j->e[lo + i] = gw_kd_nonfinite(gw_hd_f32_bits(r)) ? 0.0f : r;
			}
		} else {
			float r = s->bad ? 0.0f : gw_kd_clamp127(gw_kd_round_even(c * s->inv));
			v[i] = (uint8_t)(int8_t)r;
			if (j->e) {
				float qs = r * s->scale;
				j->e[lo + i] = s->bad ? 0.0f : c - qs;
			}
		}
	}
}

/* Thread 0: params, header, checksum. */
GW_HD void gw_kd_enc_seal(const struct gw_kd_enc *j, uint32_t f, const struct gw_kd_shared *s)
{
	uint8_t *b = j->slots[f];
	uint32_t n = gw_kd_frame_elems(j, f);
	if (j->codec == GW_WIRE_CODEC_INT8)
		gw_hd_st32(b + GW_WIRE_HDR_LEN, gw_hd_f32_bits(s->scale));
	j->lens[f] = gw_kf_seal_with(b, (uint8_t)j->codec, 0, (uint8_t)gw_kd_param_len(j->codec),
				     j->tensor, n, j->base + (uint64_t)f * j->per_frame, n,
				     n * gw_kd_value_bytes(j->codec));
}

/* ---- decode phases ------------------------------------------------------------- */

/* Thread 0: every check of §2 and §4.1–§4.3 but int8's q = -128, in the
 * spec's order (gw_kf_check, then the codec's). */
GW_HD void gw_kd_dec_check(const struct gw_kf_dec *d, uint32_t f, struct gw_kd_shared *s)
{
	const uint8_t *b = d->frames[f];
	struct gw_wire_hdr h = {0, 0, 0, 0, 0, 0, 0, 0};
	uint32_t codecs = 1u << GW_WIRE_CODEC_RAW | 1u << GW_WIRE_CODEC_BF16 |
			  1u << GW_WIRE_CODEC_INT8;
	int32_t rc = gw_kf_check(b, d->lens[f], d->out_len, codecs, 0, &h);
	if (!rc && (h.param_len != gw_kd_param_len(h.codec) ||
		    h.payload_len != (uint64_t)h.count * gw_kd_value_bytes(h.codec)))
		rc = GW_ELENGTH;
	if (!rc && h.codec == GW_WIRE_CODEC_INT8) {
		uint32_t u = gw_hd_ld32(b + GW_WIRE_HDR_LEN);
		int nan = gw_kd_nonfinite(u) && (u & 0x007fffffu);
		if (!nan && ((u >> 31) || gw_kd_nonfinite(u)))
			rc = GW_ECORRUPT;
		s->scale = gw_hd_bits_f32(u);
	}
	s->rc = rc;
	s->codec = h.codec;
	s->count = h.count;
	s->start = h.start;
	s->vals = rc ? 0 : b + GW_WIRE_HDR_LEN + h.param_len;
}

/* int8, every thread: whether one of its q is -128. */
GW_HD void gw_kd_dec_scan(uint32_t tid, struct gw_kd_shared *s)
{
	uint32_t bad = 0;
	if (!s->rc && s->codec == GW_WIRE_CODEC_INT8)
		for (uint32_t i = tid; i < s->count; i += GW_KD_THREADS)
			bad |= s->vals[i] == 0x80;
	s->part[tid] = bad;
}

/* Thread 0, int8: the scan's verdict. */
GW_HD void gw_kd_dec_verdict(struct gw_kd_shared *s)
{
	uint32_t bad = 0;
	for (uint32_t t = 0; t < GW_KD_THREADS; t++)
		bad |= s->part[t];
	if (!s->rc && bad)
		s->rc = GW_ECORRUPT;
}

/* Every thread: adds its elements of a frame that passed. */
GW_HD void gw_kd_dec_add(const struct gw_kf_dec *d, uint32_t tid, const struct gw_kd_shared *s)
{
	if (s->rc)
		return;
	float *o = d->out + s->start;
	for (uint32_t i = tid; i < s->count; i += GW_KD_THREADS) {
		float v;
		if (s->codec == GW_WIRE_CODEC_RAW)
			v = gw_hd_bits_f32(gw_hd_get32(s->vals + 4 * (size_t)i));
		else if (s->codec == GW_WIRE_CODEC_BF16)
			v = gw_hd_bits_f32((uint32_t)s->vals[2 * (size_t)i] << 16 |
					   (uint32_t)s->vals[2 * (size_t)i + 1] << 24);
		else
			v = (float)(int8_t)s->vals[i] * s->scale;
		o[i] = o[i] + v;
	}
}

GW_HD void gw_kd_dec_done(const struct gw_kf_dec *d, uint32_t f, const struct gw_kd_shared *s)
{
	d->rcs[f] = s->rc ? s->rc : (int32_t)s->count;
}

#endif
