/* onebit: 1-bit quantization with minimum squared quantization error and
 * error feedback (Seide et al. 2014, as 3LC's baseline describes it). Each
 * frame splits its values by sign and sends one bit per value plus the two
 * magnitudes that minimize the squared error of that split: the mean a of
 * the non-negative values (bit 1) and the mean b of the negative values
 * (bit 0). Error feedback is fused into the encode pass.
 *
 * Means are computed as (float)(sum in double / count), the sum taken in a
 * fixed order (see frame_sums), so they are reproducible; a side with no
 * values sends 0. Non-finite input poisons its frame, as int8 does: a and b
 * are both sent as NaN (and every bit as 0) so every value of the frame
 * decodes to NaN, and the error buffer of that range restarts at zero. */
#include <math.h>

#include "codec_internal.h"
#include "gw_cpu.h"

static size_t ob_min_body(const gw_encoder *enc, size_t kb)
{
	(void)enc;
	return 8 + 1 + kb;
}

/* Per-frame sums, in a fixed order so that the levels are reproducible
 * (and vectorizable): value i of the frame goes to lane i mod 8, each lane
 * sums in double in index order, and the lanes combine as
 * ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)). */
#define LANES 8

struct sums {
	double pos[LANES], neg[LANES];
	uint32_t npos[LANES];
	uint32_t bad;            /* any value NaN or +-Inf */
};

static inline double lanes_total(const double *v)
{
	return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
}

static inline uint32_t nonfinite(float c)
{
	uint32_t u;
	memcpy(&u, &c, 4);
	return (u & 0x7fffffffu) >= 0x7f800000u;
}

/* Whole groups of LANES dense values of c = g (+ e), branch-free so that
 * it vectorizes; `fb` is a compile-time constant in both callers. */
static inline __attribute__((always_inline)) void sums_dense(const float *g, const float *e, uint32_t n,
			      struct sums *s, int fb)
{
	double pa[LANES] = {0}, na[LANES] = {0};
	uint32_t cnt[LANES] = {0}, bad[LANES] = {0};
	for (uint32_t i = 0; i + LANES <= n; i += LANES) {
		for (unsigned l = 0; l < LANES; l++) {
			float c = fb ? g[i + l] + e[i + l] : g[i + l];
			/* c >= 0 (-0.0 included) as integer masks: adding
			 * +0.0 to the other side's sum changes nothing */
			uint32_t u, up, un;
			memcpy(&u, &c, 4);
			uint32_t p = (u >> 31 == 0) | (u == 0x80000000u);
			uint32_t mask = 0u - p;
			up = u & mask;
			un = u & ~mask;
			float cp, cn;
			memcpy(&cp, &up, 4);
			memcpy(&cn, &un, 4);
			pa[l] += (double)cp;
			na[l] += (double)cn;
			cnt[l] += p;
			bad[l] |= (u & 0x7fffffffu) >= 0x7f800000u;
		}
	}
	for (unsigned l = 0; l < LANES; l++) {
		s->pos[l] = pa[l];
		s->neg[l] = na[l];
		s->npos[l] = cnt[l];
		s->bad |= bad[l];
	}
}

/* The two dense cases, each compiled per ISA (same bits: test_isa_loops). */
static inline __attribute__((always_inline)) void sums_dense_g_body(const float *g, uint32_t n,
								   struct sums *s)
{
	sums_dense(g, NULL, n, s, 0);
}
GW_ISA_LOOP(sums_dense_g, (const float *g, uint32_t n, struct sums *s), (g, n, s))

static inline __attribute__((always_inline)) void sums_dense_ge_body(const float *g,
								    const float *e, uint32_t n,
								    struct sums *s)
{
	sums_dense(g, e, n, s, 1);
}
GW_ISA_LOOP(sums_dense_ge, (const float *g, const float *e, uint32_t n, struct sums *s),
	    (g, e, n, s))

static void frame_sums(const gw_encoder *enc, const float *e, uint64_t p,
		       uint32_t n, struct sums *s)
{
	memset(s, 0, sizeof(*s));
	uint32_t i = 0;
	if (!enc->sparse) {
		i = n - n % LANES;
		if (e)
			sums_dense_ge(enc->src + p, e + p, i, s);
		else
			sums_dense_g(enc->src + p, i, s);
	}
	for (; i < n; i++) {
		float c = gw_enc_corrected(enc, e, p + i);
		unsigned l = i % LANES;
		s->bad |= nonfinite(c);
		if (c >= 0.0f) {
			s->pos[l] += c;
			s->npos[l]++;
		} else {
			s->neg[l] += c;
		}
	}
}

/* Mask of all ones if c >= 0 (-0.0 included), else 0. */
static inline uint32_t pos_mask(float c)
{
	uint32_t u = gw_f32_bits(c);
	return 0u - ((u >> 31 == 0) | (u == 0x80000000u));
}

/* Bits (LSB first) of dense values, and with feedback e <- c - level (or 0
 * in a poisoned frame, where a and b are NaN). Branch-free, so that the
 * groups of 8 vectorize; `fb` is a compile-time constant in both callers. */
static inline __attribute__((always_inline)) void pack_dense(const float *g, float *e, uint32_t n, float a,
			      float b, int bad, uint8_t *bits, int fb)
{
	uint32_t ua = gw_f32_bits(a), ub = gw_f32_bits(b);
	uint32_t keep = bad ? 0u : ~0u;
	for (uint32_t j = 0; j < n / 8; j++) {
		uint32_t byte = 0;
		for (unsigned l = 0; l < 8; l++) {
			uint32_t i = 8 * j + l;
			float c = fb ? g[i] + e[i] : g[i];
			uint32_t m = pos_mask(c);
			byte |= (m & 1u) << l;
			if (fb) {
				float lv = gw_bits_f32((ua & m) | (ub & ~m));
				e[i] = gw_bits_f32(gw_f32_bits(c - lv) & keep);
			}
		}
		bits[j] = (uint8_t)byte;
	}
	if (n % 8) {
		uint32_t byte = 0;
		for (uint32_t i = n - n % 8; i < n; i++) {
			float c = fb ? g[i] + e[i] : g[i];
			uint32_t m = pos_mask(c);
			byte |= (m & 1u) << (i % 8);
			if (fb) {
				float lv = gw_bits_f32((ua & m) | (ub & ~m));
				e[i] = gw_bits_f32(gw_f32_bits(c - lv) & keep);
			}
		}
		bits[n / 8] = (uint8_t)byte;
	}
}

static inline __attribute__((always_inline)) void pack_dense_g_body(const float *g, uint32_t n,
								   float a, float b, uint8_t *bits)
{
	pack_dense(g, NULL, n, a, b, 0, bits, 0);
}
GW_ISA_LOOP(pack_dense_g, (const float *g, uint32_t n, float a, float b, uint8_t *bits),
	    (g, n, a, b, bits))

static inline __attribute__((always_inline)) void pack_dense_ge_body(const float *g, float *e,
								    uint32_t n, float a, float b,
								    int bad, uint8_t *bits)
{
	pack_dense(g, e, n, a, b, bad, bits, 1);
}
GW_ISA_LOOP(pack_dense_ge, (const float *g, float *e, uint32_t n, float a, float b, int bad,
			    uint8_t *bits), (g, e, n, a, b, bad, bits))

static int ob_encode(gw_encoder *enc, uint8_t *body, size_t cap,
		     struct gw_frame_info *h)
{
	unsigned kb = gw_enc_key_bytes(enc);
	if (cap < 9)
		return GW_ERR(GW_EBUDGET);
	size_t bytes = cap - 8;
	uint32_t n = gw_frame_take_packed(enc, bytes, kb, 8);   /* 8 bits a byte */
	if (!n)
		return GW_ERR(GW_EBUDGET);
	gw_frame_range(enc, n, h);
	h->param_len = 8;
	float *e = gw_ef_data(enc->ef);
	uint64_t p = enc->pos;

	struct sums s;
	frame_sums(enc, e, p, n, &s);
	uint32_t np = 0;
	for (unsigned l = 0; l < LANES; l++)
		np += s.npos[l];
	float a = np ? (float)(lanes_total(s.pos) / np) : 0.0f;
	float b = np < n ? (float)(lanes_total(s.neg) / (n - np)) : 0.0f;
	int bad = s.bad != 0;
	if (bad)
		a = b = NAN;

	if (kb)
		gw_keys_put(body + 8, enc->t.keys, p, n, kb);
	uint8_t *bits = body + 8 + (size_t)kb * n;
	uint32_t nb = (n + 7) / 8;
	if (!enc->sparse) {
		if (e)
			pack_dense_ge(enc->src + p, e + p, n, a, b, bad, bits);
		else
			pack_dense_g(enc->src + p, n, a, b, bits);
	} else {
		memset(bits, 0, nb);
		for (uint32_t i = 0; i < n; i++) {
			float c = gw_enc_corrected(enc, e, p + i);
			int pos = c >= 0.0f;
			bits[i >> 3] |= (uint8_t)(pos << (i & 7));
			if (e)
				e[gw_tensor_key(&enc->t, p + i)] =
					bad ? 0.0f : c - (pos ? a : b);
		}
	}
	if (bad)
		memset(bits, 0, nb);   /* a NaN's "sign" is no bit to send */
	gw_stf32(body, a);
	gw_stf32(body + 4, b);
	enc->pos += n;
	return (int)(8 + (size_t)kb * n + nb);
}

static int ob_decode(const struct gw_frame_info *h, const uint8_t *params,
		     const uint8_t *payload, float *out, uint64_t out_len,
		     float alpha)
{
	unsigned kb = gw_hdr_key_bytes(h);
	uint64_t nb = ((uint64_t)h->count + 7) / 8;
	if (!gw_packed_lengths_ok(h, 8, nb))
		return GW_ERR(GW_ELENGTH);
	float a = gw_ldf32(params), b = gw_ldf32(params + 4);
	if (isnan(a) || isnan(b)) {
		if (!(isnan(a) && isnan(b)))
			return GW_ERR(GW_ECORRUPT);
	} else if (isinf(a) || isinf(b) || signbit(a) || b > 0.0f) {
		return GW_ERR(GW_ECORRUPT);
	}
	const uint8_t *bits = payload + (size_t)kb * h->count;
	uint32_t rem = h->count % 8;
	if (rem && (bits[nb - 1] >> rem) != 0)
		return GW_ERR(GW_ECORRUPT);   /* padding bits must be 0 */
	if (kb) {
		int rc = gw_keys_check(payload, h->count, kb, h->start, h->span,
				       out_len);
		if (rc < 0)
			return rc;
	}
	float v[2] = {alpha * b, alpha * a};
	if (!kb) {
		/* bit -> level by integer masks, so groups of 8 vectorize */
		float *o = out + h->start;
		uint32_t ua = gw_f32_bits(v[1]), ub = gw_f32_bits(v[0]);
		for (uint32_t j = 0; j < h->count / 8; j++) {
			uint32_t byte = bits[j];
			for (unsigned l = 0; l < 8; l++) {
				uint32_t m = 0u - ((byte >> l) & 1u);
				o[8 * j + l] += gw_bits_f32((ua & m) | (ub & ~m));
			}
		}
		for (uint32_t i = h->count - rem; i < h->count; i++)
			o[i] += v[(bits[i >> 3] >> (i & 7)) & 1];
		return (int)h->count;
	}
	for (uint32_t i = 0; i < h->count; i++)
		out[gw_keys_get(payload, i, kb)] += v[(bits[i >> 3] >> (i & 7)) & 1];
	return (int)h->count;
}

const struct gw_codec_ops gw_codec_onebit = {
	.name = "onebit",
	.id = GW_CODEC_ONEBIT,
	.caps = GW_CODEC_DENSE | GW_CODEC_SPARSE | GW_CODEC_LOSSY,
	.frames = GW_FRAME_KINDS,
	.min_body = ob_min_body,
	.encode = ob_encode,
	.decode = ob_decode,
	.flags = GW_OPS_FUSED_EF,
};
