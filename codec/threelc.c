/* 3LC (Lim, Andersen, Kaminsky, MLSys'19): 3-value quantization with a
 * sparsity multiplier, base-3^5 packing and zero-run encoding, with error
 * feedback fused into the quantization pass. Wire format:
 * docs/wire-format.md, "3LC" (written from docs/wire-format-3lc.part.md).
 *
 * Encoding. gw_encode_begin() runs two passes over the whole tensor:
 *   1. m = s * max |c| with c = g + e (g without error feedback), computed
 *      in double and rounded once to float (FLT_MAX if that overflows);
 *   2. the fused pass: trit t = q + 1 with q = round(c / m) rounded half to
 *      even, i.e. q = sign(c) if 2|c| > m and 0 otherwise (2|c| > m is
 *      evaluated exactly as c + c > m: doubling is exact, and an overflow
 *      to infinity gives the right answer); e <- c - m*q, which is exact
 *      (Sterbenz), so the only rounding error feedback ever sees is the one
 *      of g + e; trits packed five per byte, first element most significant:
 *      t0*81 + t1*27 + t2*9 + t3*3 + t4, pad trits (past the tensor's end)
 *      being 1. The packed stream lives in the codec state.
 * Each gw_encode_next() then zero-run encodes that stream from the current
 * position greedily until the frame's budget is full: a run of k bytes 121
 * (five zeros), 2 <= k <= 14, becomes one byte 243 + (k - 2). Runs never
 * cross frames; every frame starts at an element offset that is a multiple
 * of 5, carries m as its 4-byte param block, and decodes alone. m is one
 * value per tensor (it is needed before any byte is packed, while frame
 * boundaries depend on the packed bytes), repeated in every frame.
 *
 * Non-finite input follows int8: if any c is NaN or +-Inf, m is sent as
 * NaN for the whole tensor, every trit is 1 (so frames are mostly runs) and
 * every value decodes to NaN, which is what the overflow checks of mixed
 * precision training look for; the error buffer restarts at 0 rather than
 * carrying NaN into later rounds.
 *
 * Decoding validates everything first: param_len 4; m NaN or finite and
 * >= +0 (sign bit clear); start a multiple of 5; the payload expands to
 * exactly ceil(count / 5) bytes; pad trits of a last partial byte are 1.
 * Only then does it add alpha*m for each trit 2 and -(alpha*m) for each
 * trit 0 to out; elements whose trit is 1 are not touched at all (their
 * float bits stay as they were). A NaN m adds that NaN to every element.
 *
 * Kernels: scalar reference here, AVX2 and AVX-512 in threelc_avx2.c and
 * threelc_avx512.c, chosen at run time (common/gw_cpu.h; GW_FORCE_ISA
 * overrides); every path gives the same bytes and float bits. With error
 * feedback, AVX-512 reorganizes the two passes (same results): pass 1 adds
 * e into g in place while it finds the maximum and flags the groups of 16
 * elements holding a c with 2|c| above s times the largest |c| of the
 * blocks before (a lower bound of m), pass 2 looks at the flagged groups
 * only, so the error buffer is written once and, on sparse gradients,
 * read once. */
#include <float.h>
#include <math.h>
#include <stdlib.h>

#include "codec_internal.h"
#include "gw_cpu.h"
#include "threelc_internal.h"

/* ---- trit table ---------------------------------------------------------- */

#define TLC_D5(a, b, c, d) {a, b, c, d, 0}, {a, b, c, d, 1}, {a, b, c, d, 2}
#define TLC_D4(a, b, c) TLC_D5(a, b, c, 0), TLC_D5(a, b, c, 1), TLC_D5(a, b, c, 2)
#define TLC_D3(a, b) TLC_D4(a, b, 0), TLC_D4(a, b, 1), TLC_D4(a, b, 2)
#define TLC_D2(a) TLC_D3(a, 0), TLC_D3(a, 1), TLC_D3(a, 2)
const uint8_t tlc_trits[243][5] = {TLC_D2(0), TLC_D2(1), TLC_D2(2)};

#define T64(a, b, c, d, e) ((uint64_t)(a) | (uint64_t)(b) << 8 | (uint64_t)(c) << 16 | \
			    (uint64_t)(d) << 24 | (uint64_t)(e) << 32)
const uint64_t tlc_byte_trits[256] = {TLC_ALL_BYTES(T64), TLC_RUN_BYTES(T64(1, 1, 1, 1, 1))};

/* ---- scalar kernels (the reference) ---------------------------------------- */

static uint32_t maxabs_scalar(const float *g, const float *e, size_t n)
{
	return tlc_maxabs_tail(g, (float *)e, 0, n, 0, 0);
}

static inline __attribute__((always_inline)) void
quantize_scalar(const float *g, float *e, size_t n, float m, uint8_t *out,
		int folded)
{
	for (size_t i = 0; i < n; i += 5) {
		unsigned v = 0;
		for (size_t k = i; k < i + 5; k++) {
			if (k >= n) {
				v = v * 3u + 1u;   /* pad trit */
				continue;
			}
			float c = folded ? e[k] : e ? g[k] + e[k] : g[k];
			float c2 = c + c;
			unsigned t = c2 > m ? 2u : c2 < -m ? 0u : 1u;
			/* e = c - m*(t-1): exact (Sterbenz: m/2 < |c| <= m),
			 * and c - (+0) is c, bit for bit, for t = 1. */
			if (e)
				e[k] = c - (t == 2u ? m : t == 0u ? -m : 0.0f);
			v = v * 3u + t;
		}
		*out++ = (uint8_t)v;
	}
}

void tlc_quantize_scalar(const float *g, float *e, size_t n, float m,
			 uint8_t *out)
{
	quantize_scalar(g, e, n, m, out, 0);
}

void tlc_quantize_folded_scalar(float *e, size_t n, float m, uint8_t *out)
{
	quantize_scalar(e, e, n, m, out, 1);
}

static uint64_t expanded_scalar(const uint8_t *p, size_t n)
{
	uint64_t sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += tlc_expand_len(p[i]);
	return sum;
}

/* Five elements of literal byte b at out[0..lim), lim <= 5. */
static inline void decode_byte(unsigned b, float s, float *out, uint64_t lim)
{
	const uint8_t *t = tlc_trits[b];
	for (unsigned k = 0; k < lim; k++)
		if (t[k] != 1u)
			out[k] += t[k] ? s : -s;
}

void tlc_decode_plain_scalar(const uint8_t *p, size_t nb, uint64_t count,
			     float s, float *out)
{
	for (size_t j = 0; j < nb; j++) {
		uint64_t i = 5 * (uint64_t)j;
		decode_byte(p[j], s, out + i, GW_MIN(count - i, 5u));
	}
}

static void decode_scalar(const uint8_t *p, size_t n, uint32_t count, float s,
			  float *out)
{
	uint64_t i = 0;
	for (size_t j = 0; j < n; j++) {
		unsigned b = p[j];
		if (b >= TLC_RUN_BASE) {
			i += 5u * tlc_expand_len(b);
			continue;
		}
		decode_byte(b, s, out + i, GW_MIN(count - i, 5u));
		i += 5;
	}
}

const struct tlc_kernels tlc_kernels_scalar = {
	.name = "scalar",
	.maxabs = maxabs_scalar,
	.quantize = tlc_quantize_scalar,
	.expanded = expanded_scalar,
	.decode = decode_scalar,
	.zre = tlc_zre,
};

const struct tlc_kernels *tlc_kernels_for(int isa)
{
#if defined(__x86_64__) || defined(__i386__)
	if (isa >= GW_ISA_AVX512)
		return &tlc_kernels_avx512;
	if (isa >= GW_ISA_AVX2)
		return &tlc_kernels_avx2;
#else
	(void)isa;
#endif
	return &tlc_kernels_scalar;
}

const struct tlc_kernels *tlc_kernels(void)
{
	return tlc_kernels_for(gw_cpu_isa());
}

/* ---- zero-run encoding ------------------------------------------------------ */

#define F14(k) k, k, k, k, k, k, k, k, k, k, k, k, k, k
#define L14 243, 244, 245, 246, 247, 248, 249, 250, 251, 252, 253, 254, 255, 121
const struct tlc_zre_table tlc_zre_runs = {
	/* len = 14q + r, 1 <= r <= 14: q full pieces, then the code of r. */
	.full = {0, F14(0), F14(1), F14(2), F14(3), F14(4), F14(5), F14(6), F14(7),
		 F14(8), F14(9), 10, 10, 10},
	.last = {0, 121, L14, L14, L14, L14, L14, L14, L14, L14, L14, L14,
		 243, 244},
};

#define ONES8 0x0101010101010101ull
#define ZERO8 (TLC_ZERO_BYTE * ONES8)

/* Bit j set when p[j] == 121, j < 8. */
static inline uint64_t zmask8(const uint8_t *p)
{
	uint64_t x = gw_ld64(p) ^ ZERO8;   /* byte j of p in byte j of x */
	/* High bit of each byte: set iff the byte is nonzero (no carries). */
	uint64_t nz = (((x & (0x7f * ONES8)) + 0x7f * ONES8) | x) & (0x80 * ONES8);
	uint64_t z = (nz ^ (0x80 * ONES8)) >> 7;   /* bit 8j: byte j is 121 */
	return (z * 0x0102040810204080ull) >> 56;
}

static inline uint64_t zmask64(const uint8_t *p)
{
	uint64_t m = 0;
	for (unsigned k = 0; k < 8; k++)
		m |= zmask8(p + 8 * k) << (8 * k);
	return m;
}

size_t tlc_zre(const uint8_t *src, size_t n, uint8_t *dst, size_t cap,
	       size_t *used)
{
	return tlc_zre_with(src, n, dst, cap, used, zmask64);
}

/* ---- the codec --------------------------------------------------------------- */

struct tlc_state {
	uint8_t *bytes;    /* packed stream of the tensor being encoded */
	size_t nbytes;     /* ceil(dim / 5) */
	size_t cap;
	uint8_t *scratch;  /* kernels' folded path */
	size_t scratch_cap;
	float m;
};

/* Slack after the packed stream, for the encoder's over-reads. */
#define TLC_SLACK TLC_ZRE_OVERREAD

static void tlc_state_free(void *p)
{
	struct tlc_state *st = p;
	if (st)
		GW_FREE_ALL(st->bytes, st->scratch);
	free(st);
}

static size_t tlc_min_body(const gw_encoder *enc, size_t kb)
{
	(void)enc;
	(void)kb;
	return 4 + 1;   /* m and one byte (five elements, or a run) */
}

/* Before anything is modified: the frame limit, and all the memory. */
static int tlc_check(gw_encoder *enc)
{
	uint64_t lim = (uint64_t)enc->param[GW_PARAM_MAX_FRAME_ELEMS];
	if (lim && lim < 5 && lim < enc->total)
		return GW_ERR(GW_EBOUNDS);   /* frames hold whole groups of 5 */
	if (enc->t.base % 5)
		return GW_ERR(GW_EINVAL);    /* decoders check start % 5 */
	struct tlc_state *st = enc->codec_state;
	if (!st) {
		st = calloc(1, sizeof(*st));
		if (!st)
			return GW_ERR(GW_ENOMEM);
		enc->codec_state = st;
	}
	uint64_t dim = enc->t.dim;
	if (dim / 5 >= SIZE_MAX / 8)
		return GW_ERR(GW_ENOMEM);
	size_t nb = (size_t)((dim + 4) / 5), n = (size_t)dim;
	if (nb + TLC_SLACK > st->cap) {
		uint8_t *b = malloc(nb + TLC_SLACK);
		if (!b)
			return GW_ERR(GW_ENOMEM);
		free(st->bytes);
		st->bytes = b;
		st->cap = nb + TLC_SLACK;
		memset(b, 0, st->cap);   /* the slack is read, never used */
	}
	st->nbytes = nb;
	if (enc->ef && tlc_kernels()->fold && n >= 320 &&
	    TLC_SCRATCH_LEN(n) > st->scratch_cap) {
		uint8_t *sc = malloc(TLC_SCRATCH_LEN(n));
		if (!sc)
			return GW_ERR(GW_ENOMEM);
		free(st->scratch);
		st->scratch = sc;
		st->scratch_cap = TLC_SCRATCH_LEN(n);
	}
	return GW_OK;
}

static int tlc_begin(gw_encoder *enc)
{
	/* Again (cheap once done): begin stands alone for drivers without
	 * the check op. */
	int rc = tlc_check(enc);
	if (rc < 0)
		return rc;
	struct tlc_state *st = enc->codec_state;
	size_t nb = st->nbytes, n = (size_t)enc->t.dim;
	const struct tlc_kernels *k = tlc_kernels();
	const float *g = enc->t.values;
	float *e = gw_ef_data(enc->ef);
	/* The scratch check reserved, unless the ISA changed since (tests). */
	int folded = e && k->fold && n >= 320 && st->scratch_cap >= TLC_SCRATCH_LEN(n);
	double s = enc->param[GW_PARAM_SPARSITY];
	/* Flag threshold s_lo * (lower bound of max|c|) <= m: s_lo a little
	 * below s covers the roundings of m and of the product. */
	float s_lo = (float)(s * (1.0 - 0x1p-20));
	uint32_t mx = folded ? k->fold(g, e, n, (uint16_t *)st->scratch, s_lo)
			     : k->maxabs(g, e, n);
	if (mx >= TLC_NONFINITE_BITS) {
		st->m = NAN;
		memset(st->bytes, TLC_ZERO_BYTE, nb);
		if (e)
			memset(e, 0, n * sizeof(float));
		return GW_OK;
	}
	float fmx;
	memcpy(&fmx, &mx, 4);
	float m = (float)(s * (double)fmx);
	int clamped = !(m <= FLT_MAX);
	if (clamped)
		m = FLT_MAX;
	st->m = m;
	if (folded) {
		/* The flags' bound holds for normal m that s * max did not push
		 * past FLT_MAX; otherwise every group is looked at. */
		if (clamped || fmx < 0x1p-100f)
			memset(st->scratch, 0xff, TLC_SCRATCH_GROUPS(n) * sizeof(uint16_t));
		k->quantize_folded(e, n, m, st->bytes, st->scratch);
	} else {
		k->quantize(g, e, n, m, st->bytes);
	}
	return GW_OK;
}

static int tlc_encode(gw_encoder *enc, uint8_t *body, size_t cap,
		      struct gw_frame_info *h)
{
	struct tlc_state *st = enc->codec_state;
	if (cap < 5)
		return GW_ERR(GW_EBUDGET);
	size_t j0 = (size_t)(enc->pos / 5);
	size_t nin = st->nbytes - j0;
	uint64_t left = enc->total - enc->pos;
	uint64_t lim = (uint64_t)enc->param[GW_PARAM_MAX_FRAME_ELEMS];
	if (lim && lim < left)
		nin = GW_MIN(nin, (size_t)(lim / 5));
	size_t used;
	size_t o = tlc_kernels()->zre(st->bytes + j0, nin, body + 4, cap - 4, &used);
	uint64_t n = GW_MIN(5 * (uint64_t)used, left);
	gw_stf32(body, st->m);
	h->count = (uint32_t)n;
	h->start = enc->pos;
	h->span = (uint32_t)n;
	h->param_len = 4;
	enc->pos += n;
	return (int)(4 + o);
}

static int tlc_decode(const struct gw_frame_info *h, const uint8_t *params,
		      const uint8_t *payload, float *out, uint64_t out_len,
		      float alpha)
{
	(void)out_len;   /* the dense range was checked by gw_decode */
	if (h->param_len != 4)
		return GW_ERR(GW_ELENGTH);
	float m = gw_ldf32(params);
	if (!isnan(m) && (signbit(m) || !isfinite(m)))
		return GW_ERR(GW_ECORRUPT);
	if (h->start % 5)
		return GW_ERR(GW_ECORRUPT);
	const struct tlc_kernels *k = tlc_kernels();
	uint64_t nb = ((uint64_t)h->count + 4) / 5;
	if (k->expanded(payload, h->payload_len) != nb)
		return GW_ERR(GW_ELENGTH);
	unsigned r = h->count % 5;
	if (r) {
		/* The last byte's 5 - r low digits are pad trits: all 1. */
		unsigned b = payload[h->payload_len - 1];
		static const unsigned pow3[5] = {1, 3, 9, 27, 81};
		unsigned mod = pow3[5 - r];   /* 3^(5-r) */
		if (b < TLC_RUN_BASE && b % mod != (mod - 1) / 2)
			return GW_ERR(GW_ECORRUPT);
	}
	float *o = out + h->start;
	float s = alpha * m;
	if (isnan(m)) {
		for (uint32_t i = 0; i < h->count; i++)
			o[i] += s;
		return (int)h->count;
	}
	k->decode(payload, h->payload_len, h->count, s, o);
	return (int)h->count;
}

static const struct gw_param_spec tlc_params[] = {
	/* 1 <= s < 2: the largest double below 2 is the upper bound. */
	{GW_PARAM_SPARSITY, {1.0, 0x1.fffffffffffffp0, 1.0, 0}},
};

const struct gw_codec_ops gw_codec_3lc = {
	.name = "3lc",
	.id = GW_CODEC_3LC,
	.caps = GW_CODEC_DENSE | GW_CODEC_LOSSY,
	.frames = GW_FRAME_KIND_DENSE,
	GW_OPS_PARAMS(tlc_params),
	.min_body = tlc_min_body,
	.check = tlc_check,
	.begin = tlc_begin,
	.encode = tlc_encode,
	.decode = tlc_decode,
	.flags = GW_OPS_FUSED_EF,
	.state_free = tlc_state_free,
};
