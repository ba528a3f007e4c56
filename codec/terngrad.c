/* terngrad: stochastic 3-value quantization (TernGrad, Wen et al. 2017), one
 * of 3LC's baselines. Every value becomes q in {-1, 0, +1} with
 *
 *	q_i = sign(x_i) * Bernoulli(|x_i| / m),  m = max |x| over the tensor,
 *
 * so E[m * q_i] = x_i (unclipped, below): unbiased, needing no error feedback;
 * an error buffer attached anyway is fused (folded in the statistics' pass,
 * residuals left per chunk of digits) with the generic driver's bits. Trits are packed five to a byte exactly as 3LC's base-3^5 stage,
 * first element most significant, pad trits 1, without 3LC's zero-run
 * stage; as in 3LC, dense frames start on element offsets that are
 * multiples of 5 (so max_frame_elems below 5 is refused with GW_EBOUNDS for
 * a dense tensor longer than it) and decoding leaves the elements whose
 * trit is 0 untouched, bit for bit.
 *
 * Clipping (clip, in standard deviations; default 2.5 as in the paper and
 * in GRACE; 0 turns it off) lowers m to clip * sigma of the tensor: the
 * rare large values then go as +-m with probability 1, biased by design,
 * and every other value's variance m|x| - x^2 shrinks with m. On the CNN's
 * real layers (max 15-19 sigma) that cuts the one-round error 2.8-2.9x
 * (test_terngrad_clip); docs/codecs.md says why it is the default.
 *
 * The scale is the tensor's, as in TernGrad (one scale per layer), not the
 * frame's: with it every element's outcome depends only on (seed, tensor id,
 * element index or key, the tensor), never on where frames happen to split,
 * so any budget decodes to the same values. Each frame still carries m, so
 * frames stay self-contained.
 *
 * Randomness is counter-based: element i (key i of a sparse tensor) draws
 * r, the top 24 bits of splitmix64's finalizer applied to
 * (stream key + (i + 1) * golden gamma), the stream key hashing
 * GW_PARAM_SEED with the tensor id, and sends q != 0 iff r * 2^-24 < |x|/m
 * (docs/wire-format.md, terngrad, defines it to the bit). Decoding needs no
 * RNG. Callers vary the seed per round (the step number, say): the same
 * seed on the same tensor id repeats the same draws.
 *
 * Non-finite input poisons its frame, as int8 does: the frame's scale is sent
 * as NaN (every trit 0) so all its values decode to NaN; m is the largest
 * finite magnitude, so other frames are unaffected. With an error buffer
 * attached, the generic driver subtracts the decoded frame from it, so a
 * poisoned range's buffer becomes NaN: reset it (gw_ef_reset) after an
 * overflow step. */
#include <math.h>
#include <stdlib.h>

#include "codec_internal.h"
#include "gw_cpu.h"
#include "gw_rand.h"
#include "terngrad_moments.h"

#define GOLDEN GW_SPLITMIX_GAMMA
#define TRIT_ZERO_BYTE 121u      /* five trits q = 0: 1+3+9+27+81 */
#define TRIT_MAX_BYTE 242u       /* 3^5 - 1 */

struct tg_state {
	float m;                 /* tensor scale: max finite |x| */
	double inv24;            /* 2^24 / m, or 0 if m == 0 */
	uint64_t key;            /* random stream key of (seed, tensor) */
	bool all_finite;         /* no frame of this tensor is poisoned */
};

/* Trit digit (q + 1) of value x whose stream counter is z: the draw is the
 * top 24 bits r of gw_mix64(z), and q != 0 iff r < |x| * 2^24 / m, i.e.
 * r * 2^-24 < |x| / m (scaling by 2^24 is exact in double). */
static inline unsigned trit(double inv24, float x, uint64_t z)
{
	double p24 = (double)fabsf(x) * inv24;
	unsigned nz = (double)(int64_t)(gw_mix64(z) >> 40) < p24;
	unsigned pos = x > 0.0f;
	return 1u + nz * 2u * pos - nz;   /* nz ? (pos ? 2 : 0) : 1 */
}

/* Stream counter of element (or key) idx. */
static inline uint64_t counter(const struct tg_state *s, uint64_t idx)
{
	return s->key + (idx + 1) * GOLDEN;
}

static const struct gw_param_spec tg_params[] = {
	{GW_PARAM_SEED, {0, 9007199254740991.0, 0, 1}},   /* 0 .. 2^53 - 1 */
	/* The paper's 2.5 (its Section 4, and GRACE's): docs/codecs.md. */
	{GW_PARAM_CLIP, {0, 100, 2.5, 0}},
};

static size_t tg_min_body(const gw_encoder *enc, size_t kb)
{
	(void)enc;
	return 4 + 1 + kb;
}

static void tg_state_free(void *p)
{
	free(p);
}

/* Everything that can refuse a tensor, before error feedback is folded. */
static int tg_check(gw_encoder *enc)
{
	uint64_t lim = (uint64_t)enc->param[GW_PARAM_MAX_FRAME_ELEMS];
	if (!enc->sparse && lim && lim < 5 && lim < enc->total)
		return GW_ERR(GW_EBOUNDS);   /* dense frames hold groups of 5 */
	if (enc->t.base % 5)
		return GW_ERR(GW_EINVAL);    /* decoders check start % 5 */
	if (!enc->codec_state) {
		enc->codec_state = calloc(1, sizeof(struct tg_state));
		if (!enc->codec_state)
			return GW_ERR(GW_ENOMEM);
	}
	return GW_OK;
}

static int tg_begin(gw_encoder *enc)
{
	struct tg_state *s = enc->codec_state;
	/* Feedback is fused: fold e into the values here (for a dense tensor
	 * in the statistics' own pass; src then points at the corrected
	 * values, as in the generic driver), subtract each frame's decoded
	 * values as it is written. */
	float *e = gw_ef_data(enc->ef);
	struct tg_moments mo;
	if (e && enc->sparse) {
		int rc = gw_enc_fold(enc);
		if (rc < 0)
			return rc;
		e = NULL;
	}
	tg_moments_of(enc->src, e, enc->total, &mo);
	if (e)
		enc->src = e;
	/* Clipping lowers the scale to clip * sigma (sigma the population
	 * standard deviation of the finite values): values beyond it are
	 * sent as +-m with probability 1 (TernGrad's clipping), the rest
	 * stay unbiased with a smaller variance. */
	double clip = enc->param[GW_PARAM_CLIP];
	float c = 0.0f;
	if (clip > 0) {
		double k = (double)mo.count;
		double mean = mo.count ? mo.s1 / k : 0, var = mo.count ? mo.s2 / k - mean * mean : 0;
		c = var > 0 ? (float)(clip * sqrt(var)) : 0.0f;
	}
	memcpy(&s->m, &mo.maxbits, 4);
	s->all_finite = mo.count == enc->total;
	if (c > 0.0f && c < s->m)
		s->m = c;
	s->inv24 = s->m > 0.0f ? 0x1p24 / (double)s->m : 0.0;
	uint64_t seed = (uint64_t)enc->param[GW_PARAM_SEED];
	s->key = gw_mix64(seed ^ gw_mix64(0x7465726e67726164ull ^ enc->t.id));
	return GW_OK;
}

/* Trit digits of x[0..n), element i drawing from stream counter
 * z0 + i * GOLDEN: one value per element, no dependency between them, so
 * the compiler vectorizes the draws (AVX-512DQ has the 64-bit multiplies
 * and conversions); packing them five to a byte is a second, cheap pass. */
static inline __attribute__((always_inline)) void trits_body(const float *x, uint64_t z0,
							     double inv24, uint32_t n,
							     uint8_t *t)
{
	for (uint32_t i = 0; i < n; i++)
		t[i] = (uint8_t)trit(inv24, x[i], z0 + (uint64_t)i * GOLDEN);
}
GW_ISA_LOOP(trits, (const float *x, uint64_t z0, double inv24, uint32_t n, uint8_t *t),
	    (x, z0, inv24, n, t))

/* Fused feedback for values x[0..n) with digits t: x <- x + decoded * -1,
 * or 0 where that is not finite, which is what the generic driver's
 * decode with alpha = -1 and its restart of non-finite entries (encoder.c)
 * leave, bit for bit: digit 0 adds m, 2 adds -m, 1 adds -0.0 (identity). */
static inline float residual(float x, unsigned d, float m)
{
	float r = x + (d == 0 ? m : d == 2 ? -m : -0.0f);
	uint32_t u;
	memcpy(&u, &r, 4);
	return (u & 0x7f800000u) == 0x7f800000u ? 0.0f : r;
}

static inline __attribute__((always_inline)) void resid_body(float *x, const uint8_t *t,
							     float m, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		x[i] = residual(x[i], t[i], m);
}
GW_ISA_LOOP(resid, (float *x, const uint8_t *t, float m, uint32_t n), (x, t, m, n))

#define TRIT_CHUNK 1280u   /* digits per pass: a multiple of 5, on the stack */

/* Dense values x[0..n) of elements idx0..: whole groups of five, then a
 * last partial group padded with digit 1 (q = 0). With feedback x is the
 * error buffer's corrected values, e: each chunk's residuals are left
 * while it is in cache. */
static void pack_dense(const struct tg_state *s, const float *x, float *e, uint64_t idx0,
		       uint32_t n, uint8_t *out)
{
	uint8_t t[TRIT_CHUNK];
	for (uint32_t a = 0; a < n; a += TRIT_CHUNK) {
		uint32_t k = GW_MIN(TRIT_CHUNK, n - a);
		trits(x + a, counter(s, idx0 + a), s->inv24, k, t);
		if (e)
			resid(e + a, t, s->m, k);
		uint8_t *o = out + a / 5;
		uint32_t j = 0;
		for (; 5 * j + 5 <= k; j++) {
			const uint8_t *d = t + 5 * j;
			o[j] = (uint8_t)(d[0] * 81u + d[1] * 27u + d[2] * 9u + d[3] * 3u + d[4]);
		}
		if (5 * j < k) {   /* the tensor's last, partial group */
			unsigned b = 0;
			for (uint32_t i = 5 * j; i < 5 * j + 5; i++)
				b = b * 3 + (i < k ? t[i] : 1u);
			o[j] = (uint8_t)b;
		}
	}
}

/* Sparse entries p.. : the stream is indexed by key; with feedback (e)
 * each key's residual is left as its digit is drawn. */
static void pack_sparse(const struct tg_state *s, const gw_tensor *t,
			const float *x, float *e, uint64_t p, uint32_t n, uint8_t *out)
{
	for (uint32_t j = 0; 5 * j < n; j++) {
		unsigned b = 0;
		for (uint32_t k = 0; k < 5; k++) {
			uint32_t i = 5 * j + k;
			unsigned d = 1;
			if (i < n) {
				uint64_t key = gw_tensor_key(t, p + i);
				d = trit(s->inv24, x[i], counter(s, key));
				if (e)
					e[key] = residual(e[key], d, s->m);
			}
			b = b * 3 + d;
		}
		out[j] = (uint8_t)b;
	}
}

static int tg_encode(gw_encoder *enc, uint8_t *body, size_t cap,
		     struct gw_frame_info *h)
{
	const struct tg_state *s = enc->codec_state;
	unsigned kb = gw_enc_key_bytes(enc);
	if (cap < 5)
		return GW_ERR(GW_EBUDGET);
	size_t bytes = cap - 4;
	uint32_t n = gw_frame_take_packed(enc, bytes, kb, 5);   /* 5 trits a byte */
	uint64_t p = enc->pos;
	if (!enc->sparse && n < enc->total - p)
		n -= n % 5;   /* not the last frame: whole groups of 5 */
	if (!n)
		return GW_ERR(GW_EBUDGET);
	gw_frame_range(enc, n, h);
	h->param_len = 4;

	const float *x = enc->src + p;
	uint32_t bad = 0;
	/* The statistics' pass counted the finite values: only a tensor with
	 * some that are not needs each frame checked. */
	for (uint32_t i = 0; !s->all_finite && i < n; i++) {
		uint32_t u;
		memcpy(&u, &x[i], 4);
		bad |= (u & 0x7fffffffu) >= 0x7f800000u;   /* NaN or +-Inf */
	}

	if (kb)
		gw_keys_put(body + 4, enc->t.keys, p, n, kb);
	uint8_t *out = body + 4 + (size_t)kb * n;
	uint32_t nb = (n + 4) / 5;
	float *e = gw_ef_data(enc->ef);
	if (bad) {
		/* Decoded as NaN everywhere: the residuals restart at 0. */
		memset(out, TRIT_ZERO_BYTE, nb);
		for (uint32_t i = 0; e && i < n; i++)
			e[gw_enc_elem(enc, p + i)] = 0.0f;
	} else if (!enc->sparse) {
		pack_dense(s, x, e ? e + p : NULL, p, n, out);
	} else {
		pack_sparse(s, &enc->t, x, e, p, n, out);
	}
	gw_stf32(body, bad ? NAN : s->m);
	enc->pos += n;
	return (int)(4 + (size_t)kb * n + nb);
}

/* The five digits of each byte 0..242, most significant first. */
#define TG_D5(a, b, c, d) {a, b, c, d, 0}, {a, b, c, d, 1}, {a, b, c, d, 2}
#define TG_D4(a, b, c) TG_D5(a, b, c, 0), TG_D5(a, b, c, 1), TG_D5(a, b, c, 2)
#define TG_D3(a, b) TG_D4(a, b, 0), TG_D4(a, b, 1), TG_D4(a, b, 2)
#define TG_D2(a) TG_D3(a, 0), TG_D3(a, 1), TG_D3(a, 2)
static const uint8_t tg_digits[243][5] = {TG_D2(0), TG_D2(1), TG_D2(2)};

static int tg_decode(const struct gw_frame_info *h, const uint8_t *params,
		     const uint8_t *payload, float *out, uint64_t out_len,
		     float alpha)
{
	unsigned kb = gw_hdr_key_bytes(h);
	uint64_t nb = ((uint64_t)h->count + 4) / 5;
	if (!gw_packed_lengths_ok(h, 4, nb))
		return GW_ERR(GW_ELENGTH);
	float scale = gw_ldf32(params);
	if (!isnan(scale) && (signbit(scale) || isinf(scale)))
		return GW_ERR(GW_ECORRUPT);
	if (!kb && h->start % 5)
		return GW_ERR(GW_ECORRUPT);   /* dense frames start on a group */
	const uint8_t *t = payload + (size_t)kb * h->count;
	int bad = 0;
	for (uint64_t j = 0; j < nb; j++)
		bad |= t[j] > TRIT_MAX_BYTE;
	uint32_t rem = h->count % 5;
	if (rem) {
		/* The 5 - rem low digits of the last byte are padding: q = 0. */
		static const unsigned pow3[5] = {1, 3, 9, 27, 81};
		unsigned w = pow3[5 - rem];
		bad |= t[nb - 1] % w != (w - 1) / 2;
	}
	if (bad)
		return GW_ERR(GW_ECORRUPT);
	if (kb) {
		int rc = gw_keys_check(payload, h->count, kb, h->start, h->span,
				       out_len);
		if (rc < 0)
			return rc;
	}
	/* q = -1, 0, +1 add -s, nothing, +s; a NaN scale (poisoned frame)
	 * adds that NaN, sign and all, to every element whatever its digit
	 * (wire-format §4.5, as 3lc does). -0.0 is the identity of +: adding
	 * it leaves every float's bits as they were. */
	float sv = alpha * scale;
	int nan = isnan(scale);
	float v[3] = {nan ? sv : -sv, nan ? sv : -0.0f, sv};
	if (!kb) {
		float *o = out + h->start;
		uint32_t full = h->count / 5;
		for (uint32_t j = 0; j < full; j++) {
			const uint8_t *dg = tg_digits[t[j]];
			for (uint32_t k = 0; k < 5; k++)
				o[5 * j + k] += v[dg[k]];
		}
		for (uint32_t i = 5 * full; i < h->count; i++)
			o[i] += v[tg_digits[t[full]][i - 5 * full]];
		return (int)h->count;
	}
	for (uint32_t i = 0; i < h->count; i++)
		out[gw_keys_get(payload, i, kb)] += v[tg_digits[t[i / 5]][i % 5]];
	return (int)h->count;
}

const struct gw_codec_ops gw_codec_terngrad = {
	.name = "terngrad",
	.id = GW_CODEC_TERNGRAD,
	.caps = GW_CODEC_DENSE | GW_CODEC_SPARSE | GW_CODEC_LOSSY,
	.frames = GW_FRAME_KINDS,
	GW_OPS_PARAMS(tg_params),
	.min_body = tg_min_body,
	.check = tg_check,
	.begin = tg_begin,
	.encode = tg_encode,
	.decode = tg_decode,
	.flags = GW_OPS_FUSED_EF,
	.state_free = tg_state_free,
};
