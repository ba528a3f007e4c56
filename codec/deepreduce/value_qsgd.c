/* DeepReduce value codec "qsgd": QSGD (Alistarh et al., NeurIPS 2017) as
 * DeepReduce pairs it with its index codecs — s levels, buckets of `bucket`
 * values with their own L2 norm, stochastic rounding, fixed-width codes
 * (the paper's Elias coding of the levels is left out: DeepReduce's own
 * table uses QSGD at 7 bits with buckets of 512).
 *
 *	header: u16 s (1..DR_LEVELS_MAX), u32 bucket (>= 1)      6 bytes
 *	norms:  float32 per bucket, B = ceil(n / bucket)        4B bytes
 *	codes:  per value, level l (w = ceil(log2(s + 1)) bits) then its
 *	        sign bit (1 = negative), LSB-first as bits.h packs them,
 *	        the last byte's pad bits zero
 *
 * Value i of bucket k decodes to ±(float)((double)norm_k · l / s): with
 * r = |v| / norm · s and l = floor(r) + Bernoulli(r - floor(r)), E[l] = r,
 * so E[decoded] = v. The draws: u = dr_rng_unit(&state), state starting at
 * cfg->seed, exactly one draw per value in position order (zero values and
 * zero buckets included), so value i's draw is the (i + 1)-th of the stream
 * whatever the data. Spelled out in docs/wire-format-dr-value.part.md. */
#include <float.h>
#include <math.h>

#include "../codec_internal.h"
#include "bits.h"
#include "dr.h"

#define QSGD_HDR 6u

struct qsgd_shape {
	unsigned s, w;       /* levels; bits of a level */
	uint32_t bucket;
	uint64_t nb;         /* buckets */
	uint64_t code_bytes;
	uint64_t len;        /* whole section */
};

static void qsgd_shape(unsigned s, uint32_t bucket, uint32_t n,
		       struct qsgd_shape *q)
{
	q->s = s;
	q->w = dr_bits_for((uint64_t)s + 1);
	q->bucket = bucket;
	q->nb = ((uint64_t)n + bucket - 1) / bucket;
	q->code_bytes = ((uint64_t)n * (q->w + 1) + 7) / 8;
	q->len = QSGD_HDR + 4 * q->nb + q->code_bytes;
}

/* The bucket's norm as sent: the float32 nearest the L2 norm, at least the
 * largest |v| (so |v| / norm <= 1 and no level exceeds s) and at most
 * FLT_MAX. Any scale >= max |v| keeps the rounding unbiased. */
static float bucket_norm(const float *v, uint32_t m)
{
	double ss = 0;
	float mx = 0;
	for (uint32_t i = 0; i < m; i++) {
		float a = fabsf(v[i]);
		ss += (double)a * a;
		mx = a > mx ? a : mx;
	}
	double nd = sqrt(ss);
	float nf = nd > FLT_MAX ? FLT_MAX : (float)nd;
	return nf < mx ? mx : nf;
}

static int qsgd_encode(const float *v, uint32_t n,
		       const struct dr_value_cfg *cfg, uint8_t *out, size_t cap)
{
	if (!cfg->levels || cfg->levels > DR_LEVELS_MAX || !cfg->bucket)
		return GW_ERR(GW_EINVAL);
	for (uint32_t i = 0; i < n; i++)
		if (!isfinite(v[i]))
			return GW_ERR(GW_EINVAL);
	struct qsgd_shape q;
	qsgd_shape(cfg->levels, cfg->bucket, n, &q);
	if (q.len > cap)
		return GW_ERR(GW_EBUDGET);
	if (q.len > INT32_MAX)
		return GW_ERR(GW_EINVAL);
	gw_st16(out, (uint16_t)q.s);
	gw_st32(out + 2, q.bucket);
	uint8_t *norms = out + QSGD_HDR;
	struct dr_bw bw;
	dr_bw_init(&bw, norms + 4 * q.nb, (size_t)q.code_bytes);
	uint64_t state = cfg->seed;
	double s = q.s;
	for (uint64_t k = 0; k < q.nb; k++) {
		uint32_t i0 = (uint32_t)(k * q.bucket);
		uint32_t m = n - i0 < q.bucket ? n - i0 : q.bucket;
		float norm = bucket_norm(v + i0, m);
		gw_stf32(norms + 4 * k, norm);
		for (uint32_t i = i0; i < i0 + m; i++) {
			double u = dr_rng_unit(&state);
			unsigned l = 0;
			if (norm > 0) {
				double r = (double)fabsf(v[i]) / (double)norm * s;
				double lo = floor(r);
				l = (unsigned)lo + (u < r - lo);
			}
			dr_bw_put(&bw, l, q.w);
			dr_bw_put(&bw, l && signbit(v[i]), 1);
		}
	}
	return (int)q.len;
}

/* Header, length and norms: everything but the codes. *maxnorm gets the
 * largest norm. */
static int qsgd_parse(const uint8_t *in, size_t len, uint32_t n,
		      struct qsgd_shape *q, float *maxnorm)
{
	if (len < QSGD_HDR)
		return GW_ERR(GW_ELENGTH);
	unsigned s = gw_ld16(in);
	uint32_t bucket = gw_ld32(in + 2);
	if (!s || s > DR_LEVELS_MAX || !bucket)
		return GW_ERR(GW_ECORRUPT);
	qsgd_shape(s, bucket, n, q);
	if (len != q->len)
		return GW_ERR(GW_ELENGTH);
	float mx = 0;
	for (uint64_t k = 0; k < q->nb; k++) {
		uint32_t u = gw_ld32(in + QSGD_HDR + 4 * k);
		if (u >= 0x7f800000u)   /* sign bit (-0 too), Inf or NaN */
			return GW_ERR(GW_ECORRUPT);
		float f = gw_ldf32(in + QSGD_HDR + 4 * k);
		mx = f > mx ? f : mx;
	}
	*maxnorm = mx;
	return GW_OK;
}

static int qsgd_decode(const uint8_t *in, size_t len, uint32_t n, float *v)
{
	struct qsgd_shape q;
	float mx;
	int rc = qsgd_parse(in, len, n, &q, &mx);
	if (rc < 0)
		return rc;
	const uint8_t *norms = in + QSGD_HDR;
	const uint8_t *codes = norms + 4 * q.nb;
	/* Validate every code before writing anything. */
	struct dr_br br;
	dr_br_init(&br, codes, (size_t)q.code_bytes);
	for (uint64_t k = 0; k < q.nb; k++) {
		int zero = gw_ld32(norms + 4 * k) == 0;
		uint32_t i0 = (uint32_t)(k * q.bucket);
		uint32_t m = n - i0 < q.bucket ? n - i0 : q.bucket;
		for (uint32_t i = 0; i < m; i++) {
			uint64_t l = dr_br_get(&br, q.w);
			uint64_t neg = dr_br_get(&br, 1);
			/* Level above s; a sign on level 0 (it would decode
			 * to -0); a level in a zero bucket (an encoder never
			 * writes one). */
			if (l > q.s || (neg && !l) || (zero && l))
				return GW_ERR(GW_ECORRUPT);
		}
	}
	uint64_t used = (uint64_t)n * (q.w + 1);
	if (br.err || (used % 8 && codes[used / 8] >> (used % 8)))
		return GW_ERR(GW_ECORRUPT);   /* pad bits */
	dr_br_init(&br, codes, (size_t)q.code_bytes);
	double s = q.s;
	for (uint64_t k = 0; k < q.nb; k++) {
		double norm = gw_ldf32(norms + 4 * k);
		uint32_t i0 = (uint32_t)(k * q.bucket);
		uint32_t m = n - i0 < q.bucket ? n - i0 : q.bucket;
		for (uint32_t i = i0; i < i0 + m; i++) {
			double l = (double)dr_br_get(&br, q.w);
			float a = (float)(norm * l / s);
			v[i] = dr_br_get(&br, 1) ? -a : a;
		}
	}
	return GW_OK;
}

/* The quantization step norm / s of the coarsest bucket plus one ulp of
 * the largest norm, rounded up: |norm · l / s - v| < step, and rounding the
 * decoded value (at most norm) to float32 adds at most half an ulp. */
static int qsgd_bound(const uint8_t *in, size_t len, uint32_t n, float *bound)
{
	struct qsgd_shape q;
	float mx;
	int rc = qsgd_parse(in, len, n, &q, &mx);
	if (rc < 0)
		return rc;
	double ulp = mx < FLT_MAX ? (double)nextafterf(mx, INFINITY) - mx : 0x1p104;
	double step = (double)mx / q.s + ulp;
	/* A decoded value and its input share a sign and are at most FLT_MAX
	 * in magnitude, so FLT_MAX bounds the error even where the step and
	 * its rounding allowance overflow float32 (norms near FLT_MAX). */
	if (step >= FLT_MAX) {
		*bound = FLT_MAX;
		return GW_OK;
	}
	float b = (float)step;
	if ((double)b < step)
		b = nextafterf(b, INFINITY);
	*bound = b;
	return GW_OK;
}

const struct dr_value_ops dr_value_qsgd = {
	.name = "qsgd",
	.encode = qsgd_encode,
	.decode = qsgd_decode,
	.bound = qsgd_bound,
};
