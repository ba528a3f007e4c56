/* hq frames (wire-format §4.11), one frame per thread block, on the GPU
 * and, built for hostcuda/, on the CPU: byte for byte what codec/hq.c
 * writes for the same input and the same shared scale and seed, and the
 * same sums and verdicts when decoding (tests/gpu holds them to it).
 *
 * A frame's values go through shared memory one rotation block (at most
 * 4096 values, §4.11.1) at a time: signs and the pre factor as they are
 * loaded, one butterfly pass between barriers, the post factor as they
 * leave. The rotated values wait in y (global scratch, a float per
 * element of the batch) while thread 0 sets the frame's scale from their
 * maximum; the codes wait in q (a byte per element) until the payload's
 * words are packed from them. Every float operation is codec/'s, in its
 * order: the butterflies add the same two values whichever thread does
 * it, so the frames do not depend on the schedule. */
#ifndef GW_KERN_HQ_H
#define GW_KERN_HQ_H

#include "frame.h"

#if !defined(__CUDACC__)
#include <math.h>   /* floorf on the host side */
#endif

#define GW_KH_THREADS 256u
#define GW_KH_BLOCK 4096u        /* largest rotation block (§4.11.1) */
#define GW_KH_PARAM_LEN 20u
#define GW_KH_F_ROTATED 0x1u
#define GW_KH_F_SUM 0x2u
#define GW_KH_F_POISON 0x4u
#define GW_KH_F_KNOWN 0x7u
#define GW_KH_GAMMA 0x9e3779b97f4a7c15ull   /* SplitMix64's (common/gw_rand.h) */

/* One encode call: frames of per_frame elements of g (the last shorter),
 * as codec/'s hq encoder with max_frame_elems = per_frame writes them. */
struct gw_kh_enc {
	const float *g;           /* dim values */
	float *e;                 /* the error buffer, or NULL */
	uint64_t dim;
	uint32_t tensor;
	uint32_t per_frame;
	uint32_t frames;
	uint8_t *const *slots;    /* frame j is written at slots[j] ... */
	uint32_t *lens;           /* ... and its length into lens[j] */
	uint64_t base;            /* g[0]'s element in the encoder's tensor */
	uint32_t bits;            /* 2..8 */
	uint32_t rotate;          /* 0 or 1 */
	uint32_t stochastic;      /* rounding=stochastic */
	uint32_t seed;            /* the encoder's seed param */
	/* Per frame, both or neither: the shared scale and rotation seed
	 * (gw_encoder_set_shared before each frame); without, each frame's
	 * own maximum and a seed of its tensor and start (§4.11.3). */
	const float *scales;
	const uint32_t *seeds;
	uint64_t count0;          /* stochastic: frames the encoder wrote before */
	float *y;                 /* scratch: dim floats */
	int8_t *q;                /* scratch: dim codes */
};

/* What a block shares between its phases. */
struct gw_kh_shared {
	float x[GW_KH_BLOCK];            /* a rotation block */
	uint32_t pc[GW_KH_THREADS];      /* a thread's largest |c| bits */
	uint32_t py[GW_KH_THREADS];      /* ... |rotated value| bits, or a bad code */
	/* the frame's fields */
	int32_t rc;
	int bad;                         /* encode: poisoned */
	uint32_t bits, width, flags, contributors, seed, lim, count;
	float scale, next, step, inv;
	uint64_t start, skey;
	const uint8_t *codes;
};

GW_HD uint64_t gw_kh_mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

GW_HD uint32_t gw_kh_levels(uint32_t bits)
{
	return (1u << (bits - 1)) - 1u;
}

/* The largest power of two not above left nor GW_KH_BLOCK. */
GW_HD uint32_t gw_kh_block(uint32_t left)
{
	uint32_t b = 1;
	while (b * 2 <= left && b * 2 <= GW_KH_BLOCK)
		b *= 2;
	return b;
}

/* A block of 2^k: 2^(-floor(k/2)) before the butterflies, and for odd k
 * the float nearest 1/sqrt(2) after them (1: none). */
GW_HD float gw_kh_pre(uint32_t b)
{
	uint32_t k = 0;
	while ((1u << k) < b)
		k++;
	return gw_hd_bits_f32((127u - k / 2) << 23);
}

GW_HD float gw_kh_post(uint32_t b)
{
	uint32_t k = 0;
	while ((1u << k) < b)
		k++;
	return k % 2 ? gw_hd_bits_f32(0x3f3504f3u) : 1.0f;   /* 0x1.6a09e6p-1 */
}

/* Value i of the frame negated (sign bit i % 64 of draw i / 64 + 1). */
GW_HD uint32_t gw_kh_sign(uint32_t seed, uint32_t i)
{
	uint64_t w = gw_kh_mix64((uint64_t)seed + (uint64_t)(i / 64 + 1) * GW_KH_GAMMA);
	return (uint32_t)((w >> (i % 64)) & 1u) << 31;
}

GW_HD uint64_t gw_kh_payload_len(uint64_t n, uint32_t width)
{
	return (n * width + 7) / 8;
}

/* Elements per frame at a budget (§4.11.3's sizing; max_frame_elems 0:
 * no limit); 0 when the budget is too small. */
GW_HD uint32_t gw_kh_per_frame(uint32_t bits, uint64_t budget, uint32_t max_frame_elems)
{
	if (budget > GW_WIRE_FRAME_MAX)
		budget = GW_WIRE_FRAME_MAX;
	uint64_t fixed = GW_WIRE_HDR_LEN + GW_KH_PARAM_LEN;
	if (bits < 2 || bits > 8 || budget < GW_WIRE_BUDGET_MIN || budget < fixed + 1)
		return 0;
	uint64_t n = (budget - fixed) * 8 / bits;
	if (max_frame_elems && n > max_frame_elems)
		n = max_frame_elems;
	return (uint32_t)n;
}

GW_HD uint32_t gw_kh_frame_elems(const struct gw_kh_enc *j, uint32_t f)
{
	uint64_t lo = (uint64_t)f * j->per_frame, left = j->dim - lo;
	return left < j->per_frame ? (uint32_t)left : j->per_frame;
}

GW_HD uint32_t gw_kh_mag(float v)
{
	return gw_hd_f32_bits(v) & 0x7fffffffu;
}

GW_HD float gw_kh_c(const struct gw_kh_enc *j, uint64_t at)
{
	return j->e ? j->g[at] + j->e[at] : j->g[at];
}

/* One butterfly pass h over the block of b values in s->x. */
GW_HD void gw_kh_pass(struct gw_kh_shared *s, uint32_t b, uint32_t h, uint32_t tid)
{
	for (uint32_t p = tid; p < b / 2; p += GW_KH_THREADS) {
		uint32_t i = p / h * 2 * h + p % h;
		float u = s->x[i], v = s->x[i + h];
		s->x[i] = u + v;
		s->x[i + h] = u - v;
	}
}

/* ---- encode phases ----------------------------------------------------------- */

/* Thread 0: the frame's seed and flags, before anything. */
GW_HD void gw_kh_enc_start(const struct gw_kh_enc *j, uint32_t f, struct gw_kh_shared *s)
{
	uint64_t start = j->base + (uint64_t)f * j->per_frame;
	s->seed = !j->rotate ? 0
		  : j->scales ? j->seeds[f]
		  : (uint32_t)gw_kh_mix64(gw_kh_mix64((uint64_t)j->seed ^
						      ((uint64_t)j->tensor << 32)) ^ start);
	s->flags = j->rotate ? GW_KH_F_ROTATED : 0;
}

/* Every thread, unrotated: y = c, and its maximum. */
GW_HD void gw_kh_enc_plain(const struct gw_kh_enc *j, uint32_t f, uint32_t tid,
			   struct gw_kh_shared *s)
{
	uint64_t lo = (uint64_t)f * j->per_frame;
	uint32_t n = gw_kh_frame_elems(j, f), m = 0;
	for (uint32_t i = tid; i < n; i += GW_KH_THREADS) {
		float c = gw_kh_c(j, lo + i);
		j->y[lo + i] = c;
		uint32_t b = gw_kh_mag(c);
		m = b > m ? b : m;
	}
	s->pc[tid] = m;
	s->py[tid] = m;
}

/* Every thread: the block [off, off + b) of the frame into s->x, signed
 * and scaled by the pre factor; its |c| maximum kept. */
GW_HD void gw_kh_enc_load(const struct gw_kh_enc *j, uint32_t f, uint32_t off, uint32_t b,
			  uint32_t tid, struct gw_kh_shared *s)
{
	uint64_t lo = (uint64_t)f * j->per_frame + off;
	float pre = gw_kh_pre(b);
	uint32_t m = off ? s->pc[tid] : 0;
	for (uint32_t i = tid; i < b; i += GW_KH_THREADS) {
		float c = gw_kh_c(j, lo + i);
		uint32_t bc = gw_kh_mag(c);
		m = bc > m ? bc : m;
		s->x[i] = gw_hd_bits_f32(gw_hd_f32_bits(c) ^ gw_kh_sign(s->seed, off + i)) * pre;
	}
	s->pc[tid] = m;
}

/* Every thread: the rotated block, post factor applied, out to y; its
 * maximum kept. */
GW_HD void gw_kh_enc_store(const struct gw_kh_enc *j, uint32_t f, uint32_t off, uint32_t b,
			   uint32_t tid, struct gw_kh_shared *s)
{
	uint64_t lo = (uint64_t)f * j->per_frame + off;
	float post = gw_kh_post(b);
	uint32_t m = off ? s->py[tid] : 0;
	for (uint32_t i = tid; i < b; i += GW_KH_THREADS) {
		float v = post != 1.0f ? s->x[i] * post : s->x[i];
		j->y[lo + i] = v;
		uint32_t bv = gw_kh_mag(v);
		m = bv > m ? bv : m;
	}
	s->py[tid] = m;
}

/* Thread 0: next, the scale, the step, and whether the frame is poisoned
 * (a NaN or Inf in c, or a rotation that overflowed). */
GW_HD void gw_kh_enc_scale(const struct gw_kh_enc *j, uint32_t f, struct gw_kh_shared *s)
{
	uint32_t mc = 0, my = 0;
	for (uint32_t t = 0; t < GW_KH_THREADS; t++) {
		mc = s->pc[t] > mc ? s->pc[t] : mc;
		my = s->py[t] > my ? s->py[t] : my;
	}
	float shared = j->scales ? j->scales[f] : 0.0f;
	s->bad = mc >= 0x7f800000u || my >= 0x7f800000u;
	if (s->bad) {
		s->flags |= GW_KH_F_POISON;
		s->scale = s->next = shared;
		s->step = s->inv = 0.0f;
		return;
	}
	s->next = gw_hd_bits_f32(my);
	s->scale = j->scales ? shared : s->next;
	float lim = (float)gw_kh_levels(j->bits);
	s->step = s->scale / lim;
	s->inv = s->scale > 0.0f ? lim / s->scale : 0.0f;
	if ((gw_hd_f32_bits(s->inv) & 0x7f800000u) == 0x7f800000u || s->step == 0.0f)
		s->inv = 0.0f;
	uint64_t p = j->base + (uint64_t)f * j->per_frame;
	s->skey = gw_kh_mix64((((uint64_t)s->seed << 32) ^ (uint64_t)j->seed) +
			      (j->count0 + f) * GW_KH_GAMMA) ^ (p + 1);
}

/* The code of y = v at frame index i: nearest (ties even) or stochastic,
 * clipped to [-Q, Q]; what it stands for in *d. */
GW_HD int32_t gw_kh_quant(const struct gw_kh_enc *j, const struct gw_kh_shared *s, float v,
			  uint32_t i, float *d)
{
	float lim = (float)gw_kh_levels(j->bits);
	float x = v * s->inv;
	x = x > lim ? lim : x < -lim ? -lim : x;
	float r;
	if (!j->stochastic) {
		r = (x + 12582912.0f) - 12582912.0f;   /* 1.5 * 2^23: nearest, ties even */
	} else {
		uint64_t w = gw_kh_mix64(s->skey + (uint64_t)(i + 1) * GW_KH_GAMMA);
		float u = (float)(uint32_t)(w >> 40) * gw_hd_bits_f32(0x33800000u);   /* 2^-24 */
		r = floorf(x + u);
		r = r > lim ? lim : r;
	}
	*d = r * s->step;
	return (int32_t)r;
}

/* Every thread, a frame with nothing to unrotate (not rotated, no error
 * buffer, or poisoned): its codes, and e = c - what each stands for. */
GW_HD void gw_kh_enc_codes(const struct gw_kh_enc *j, uint32_t f, uint32_t tid,
			   const struct gw_kh_shared *s)
{
	uint64_t lo = (uint64_t)f * j->per_frame;
	uint32_t n = gw_kh_frame_elems(j, f);
	for (uint32_t i = tid; i < n; i += GW_KH_THREADS) {
		if (s->bad) {
			j->q[lo + i] = 0;
			if (j->e)
				j->e[lo + i] = 0.0f;
			continue;
		}
		float d;
		j->q[lo + i] = (int8_t)gw_kh_quant(j, s, j->y[lo + i], i, &d);
		if (j->e) {
			float r = gw_kh_c(j, lo + i) - d;
			j->e[lo + i] = (gw_hd_f32_bits(r) & 0x7f800000u) == 0x7f800000u ? 0.0f : r;
		}
	}
}

/* Every thread, rotated with an error buffer: the block's codes, and what
 * they stand for into s->x times the pre factor (the inverse rotation's
 * first step). */
GW_HD void gw_kh_enc_quant(const struct gw_kh_enc *j, uint32_t f, uint32_t off, uint32_t b,
			   uint32_t tid, struct gw_kh_shared *s)
{
	uint64_t lo = (uint64_t)f * j->per_frame + off;
	float pre = gw_kh_pre(b);
	for (uint32_t i = tid; i < b; i += GW_KH_THREADS) {
		float d;
		j->q[lo + i] = (int8_t)gw_kh_quant(j, s, j->y[lo + i], off + i, &d);
		s->x[i] = d * pre;
	}
}

/* Every thread: the unrotated block (post factor, signs) is what the
 * frame decodes to; e = c - that, a non-finite one restarted at 0. */
GW_HD void gw_kh_enc_residual(const struct gw_kh_enc *j, uint32_t f, uint32_t off, uint32_t b,
			      uint32_t tid, const struct gw_kh_shared *s)
{
	uint64_t lo = (uint64_t)f * j->per_frame + off;
	float post = gw_kh_post(b);
	for (uint32_t i = tid; i < b; i += GW_KH_THREADS) {
		float d = post != 1.0f ? s->x[i] * post : s->x[i];
		d = gw_hd_bits_f32(gw_hd_f32_bits(d) ^ gw_kh_sign(s->seed, off + i));
		float r = gw_kh_c(j, lo + i) - d;
		j->e[lo + i] = (gw_hd_f32_bits(r) & 0x7f800000u) == 0x7f800000u ? 0.0f : r;
	}
}

/* Every thread: payload words (4 bytes, the last one shorter) from the
 * codes, code i at bits [i b, i b + b), least significant first. */
GW_HD void gw_kh_enc_pack(const struct gw_kh_enc *j, uint32_t f, uint32_t tid)
{
	uint64_t lo = (uint64_t)f * j->per_frame;
	uint32_t n = gw_kh_frame_elems(j, f), w = j->bits;
	uint32_t len = (uint32_t)gw_kh_payload_len(n, w);
	uint8_t *p = j->slots[f] + GW_WIRE_HDR_LEN + GW_KH_PARAM_LEN;
	uint64_t mask = (1ull << w) - 1;
	for (uint32_t k = tid; 4 * k < len; k += GW_KH_THREADS) {
		uint64_t bit = 32ull * k;
		uint32_t i0 = (uint32_t)(bit / w), i1 = (uint32_t)((bit + 31) / w);
		if (i1 >= n)
			i1 = n - 1;
		uint64_t acc = 0;
		for (uint32_t i = i0; i <= i1; i++)
			acc |= ((uint64_t)(uint8_t)j->q[lo + i] & mask) << (i * w - i0 * w);
		uint32_t v = (uint32_t)(acc >> (bit - (uint64_t)i0 * w));
		if (len - 4 * k >= 4)
			gw_hd_put32(p + 4 * (size_t)k, v);
		else
			for (uint32_t b = 0; 4 * k + b < len; b++)
				p[4 * k + b] = (uint8_t)(v >> (8 * b));
	}
}

/* Thread 0: params, header, checksum. */
GW_HD void gw_kh_enc_seal(const struct gw_kh_enc *j, uint32_t f, const struct gw_kh_shared *s)
{
	uint8_t *b = j->slots[f];
	uint8_t *pp = b + GW_WIRE_HDR_LEN;
	uint32_t n = gw_kh_frame_elems(j, f);
	pp[0] = (uint8_t)j->bits;
	pp[1] = (uint8_t)j->bits;
	pp[2] = (uint8_t)s->flags;
	pp[3] = 0;
	gw_hd_st32(pp + 4, 1);
	gw_hd_st32(pp + 8, s->seed);
	gw_hd_st32(pp + 12, gw_hd_f32_bits(s->scale));
	gw_hd_st32(pp + 16, gw_hd_f32_bits(s->next));
	j->lens[f] = gw_kf_seal_with(b, GW_WIRE_CODEC_HQ, 0, GW_KH_PARAM_LEN, j->tensor, n,
				     j->base + (uint64_t)f * j->per_frame, n,
				     (uint32_t)gw_kh_payload_len(n, j->bits));
}

/* ---- decode phases ------------------------------------------------------------- */

/* Code i of width w bits at p (two's complement). */
GW_HD int32_t gw_kh_code(const uint8_t *p, uint64_t i, uint32_t w)
{
	uint64_t bit = i * w, at = bit / 8;
	uint32_t sh = (uint32_t)(bit % 8), nb = (sh + w + 7) / 8;
	uint64_t x = 0;
	for (uint32_t k = 0; k < nb; k++)
		x |= (uint64_t)p[at + k] << (8 * k);
	uint32_t v = (uint32_t)((x >> sh) & ((1ull << w) - 1));
	if (w < 32 && (v >> (w - 1)))
		v |= ~0u << w;
	return (int32_t)v;
}

/* Finite, sign bit clear. */
GW_HD int gw_kh_magnitude_ok(uint32_t u)
{
	return !(u >> 31) && (u & 0x7f800000u) != 0x7f800000u;
}

/* Thread 0: §2's checks, then §4.11.2's rules 1-6 in their order. */
GW_HD void gw_kh_dec_check(const struct gw_kf_dec *d, uint32_t f, struct gw_kh_shared *s)
{
	const uint8_t *b = d->frames[f];
	struct gw_wire_hdr h = {0, 0, 0, 0, 0, 0, 0, 0};
	int32_t rc = gw_kf_check(b, d->lens[f], d->out_len, 1u << GW_WIRE_CODEC_HQ, 0, &h);
	const uint8_t *p = b + GW_WIRE_HDR_LEN;
	s->count = h.count;
	s->start = h.start;
	s->codes = 0;
	if (!rc && h.param_len != GW_KH_PARAM_LEN)
		rc = GW_ELENGTH;
	if (!rc) {
		s->bits = p[0];
		s->width = p[1];
		s->flags = p[2];
		s->contributors = gw_hd_ld32(p + 4);
		s->seed = gw_hd_ld32(p + 8);
		s->scale = gw_hd_bits_f32(gw_hd_ld32(p + 12));
		s->next = gw_hd_bits_f32(gw_hd_ld32(p + 16));
		if ((s->flags & ~GW_KH_F_KNOWN) || p[3])
			rc = GW_ERESERVED;
		else if (s->bits < 2 || s->bits > 8)
			rc = GW_ECORRUPT;
		else if ((s->flags & GW_KH_F_SUM) ? s->width < 2 || s->width > 32 || !s->contributors
						 : s->width != s->bits || s->contributors != 1)
			rc = GW_ECORRUPT;
		else if (!(s->flags & GW_KH_F_ROTATED) && s->seed)
			rc = GW_ECORRUPT;
		else if (!gw_kh_magnitude_ok(gw_hd_ld32(p + 12)) ||
			 !gw_kh_magnitude_ok(gw_hd_ld32(p + 16)))
			rc = GW_ECORRUPT;
		else if (h.payload_len != gw_kh_payload_len(h.count, s->width))
			rc = GW_ELENGTH;
	}
	if (!rc) {
		uint64_t lim = (uint64_t)s->contributors * gw_kh_levels(s->bits);
		uint64_t wmax = (1ull << (s->width - 1)) - 1;
		lim = lim < wmax ? lim : wmax;
		s->lim = (uint32_t)(lim < 0x7fffffffu ? lim : 0x7fffffffu);
		s->step = s->scale / (float)gw_kh_levels(s->bits);
		s->codes = p + GW_KH_PARAM_LEN;
	}
	s->rc = rc;
}

/* Every thread: whether one of its codes lies outside [-lim, lim]. */
GW_HD void gw_kh_dec_scan(uint32_t tid, struct gw_kh_shared *s)
{
	uint32_t bad = 0;
	if (!s->rc)
		for (uint32_t i = tid; i < s->count && !bad; i += GW_KH_THREADS) {
			int64_t c = gw_kh_code(s->codes, i, s->width);
			bad = c > (int64_t)s->lim || c < -(int64_t)s->lim;
		}
	s->py[tid] = bad;
}

/* Thread 0: the scan's verdict, and the padding bits after the last code
 * (rule 7). */
GW_HD void gw_kh_dec_verdict(struct gw_kh_shared *s)
{
	uint32_t bad = 0;
	for (uint32_t t = 0; t < GW_KH_THREADS; t++)
		bad |= s->py[t];
	if (!s->rc && !bad) {
		uint64_t bits = (uint64_t)s->count * s->width;
		if (bits % 8)
			bad = s->codes[bits / 8] >> (bits % 8) != 0;
	}
	if (!s->rc && bad)
		s->rc = GW_ECORRUPT;
}

/* Every thread, a frame that passed and is not rotated (or is poisoned):
 * out += code * step (NaN where poisoned). */
GW_HD void gw_kh_dec_plain(const struct gw_kf_dec *d, uint32_t tid, const struct gw_kh_shared *s)
{
	if (s->rc)
		return;
	float *o = d->out + s->start;
	int poison = (s->flags & GW_KH_F_POISON) != 0;
	for (uint32_t i = tid; i < s->count; i += GW_KH_THREADS) {
		float v = poison ? gw_hd_bits_f32(0x7fc00000u)
				 : (float)gw_kh_code(s->codes, i, s->width) * s->step;
		o[i] = o[i] + v;
	}
}

/* Every thread, rotated: the block's values (code * step) times the pre
 * factor into s->x. */
GW_HD void gw_kh_dec_load(uint32_t off, uint32_t b, uint32_t tid, struct gw_kh_shared *s)
{
	float pre = gw_kh_pre(b);
	for (uint32_t i = tid; i < b; i += GW_KH_THREADS) {
		float v = (float)gw_kh_code(s->codes, off + i, s->width) * s->step;
		s->x[i] = v * pre;
	}
}

/* Every thread: the post factor, the signs, and out += the block. */
GW_HD void gw_kh_dec_add(const struct gw_kf_dec *d, uint32_t off, uint32_t b, uint32_t tid,
			 const struct gw_kh_shared *s)
{
	float *o = d->out + s->start + off;
	float post = gw_kh_post(b);
	for (uint32_t i = tid; i < b; i += GW_KH_THREADS) {
		float v = post != 1.0f ? s->x[i] * post : s->x[i];
		v = gw_hd_bits_f32(gw_hd_f32_bits(v) ^ gw_kh_sign(s->seed, off + i));
		o[i] = o[i] + v;
	}
}

GW_HD void gw_kh_dec_done(const struct gw_kf_dec *d, uint32_t f, const struct gw_kh_shared *s)
{
	d->rcs[f] = s->rc ? s->rc : (int32_t)s->count;
}

#endif
