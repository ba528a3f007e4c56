/* 3LC kernels for AVX2. Same results as the scalar reference in
 * threelc.c, bit for bit; see threelc_internal.h for what each kernel
 * computes. Compiled for the target with function attributes, so the rest
 * of the library keeps the baseline ISA; only called when gw_cpu says the
 * CPU has AVX2. */
#include "codec_internal.h"
#include "threelc_internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define TGT __attribute__((target("avx2")))

/* ---- max pass ---------------------------------------------------------------- */

TGT static inline __m256i absbits(__m256 c)
{
	return _mm256_and_si256(_mm256_castps_si256(c), _mm256_set1_epi32(0x7fffffff));
}

TGT static uint32_t maxabs_avx2(const float *g, const float *e, size_t n)
{
	__m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
	size_t i = 0;
	if (e) {
		for (; i + 32 <= n; i += 32) {
			a0 = _mm256_max_epu32(a0, absbits(_mm256_add_ps(_mm256_loadu_ps(g + i), _mm256_loadu_ps(e + i))));
			a1 = _mm256_max_epu32(a1, absbits(_mm256_add_ps(_mm256_loadu_ps(g + i + 8), _mm256_loadu_ps(e + i + 8))));
			a2 = _mm256_max_epu32(a2, absbits(_mm256_add_ps(_mm256_loadu_ps(g + i + 16), _mm256_loadu_ps(e + i + 16))));
			a3 = _mm256_max_epu32(a3, absbits(_mm256_add_ps(_mm256_loadu_ps(g + i + 24), _mm256_loadu_ps(e + i + 24))));
		}
	} else {
		for (; i + 32 <= n; i += 32) {
			a0 = _mm256_max_epu32(a0, absbits(_mm256_loadu_ps(g + i)));
			a1 = _mm256_max_epu32(a1, absbits(_mm256_loadu_ps(g + i + 8)));
			a2 = _mm256_max_epu32(a2, absbits(_mm256_loadu_ps(g + i + 16)));
			a3 = _mm256_max_epu32(a3, absbits(_mm256_loadu_ps(g + i + 24)));
		}
	}
	a0 = _mm256_max_epu32(_mm256_max_epu32(a0, a1), _mm256_max_epu32(a2, a3));
	__m128i m = _mm_max_epu32(_mm256_castsi256_si128(a0), _mm256_extracti128_si256(a0, 1));
	m = _mm_max_epu32(m, _mm_shuffle_epi32(m, 0x4e));
	m = _mm_max_epu32(m, _mm_shuffle_epi32(m, 0xb1));
	return tlc_maxabs_tail(g, (float *)e, i, n, (uint32_t)_mm_cvtsi128_si32(m), 0);
}

/* ---- fused quantize + pack + error feedback --------------------------------- */

/* Weight 3^(4 - i%5) of element i, for 8 elements from any i % 40. */
#define W5 81, 27, 9, 3, 1
static const int32_t wpat32[40] __attribute__((aligned(32))) = {
	W5, W5, W5, W5, W5, W5, W5, W5};

/* Weighted trits t*W of 8 elements c = g + e (g without feedback; e
 * itself when folded); the new error e = c - m*(t-1). */
#define AI __attribute__((always_inline))
TGT static inline AI __m256i quant8(const float *g, float *e, __m256 vm,
				    __m256 vnm, __m256i W, int folded)
{
	__m256 x = _mm256_loadu_ps(folded ? e : g);
	if (e && !folded)
		x = _mm256_add_ps(x, _mm256_loadu_ps(e));
	__m256 x2 = _mm256_add_ps(x, x);
	__m256 p = _mm256_cmp_ps(x2, vm, _CMP_GT_OQ);
	__m256 q = _mm256_cmp_ps(x2, vnm, _CMP_LT_OQ);
	if (e) {
		/* m*(t-1): m, -m or +0; c - (+0) leaves every c as it is. */
		__m256 mq = _mm256_or_ps(_mm256_and_ps(p, vm), _mm256_and_ps(q, vnm));
		_mm256_storeu_ps(e, _mm256_sub_ps(x, mq));
	}
	__m256i w = _mm256_add_epi32(W, _mm256_and_si256(_mm256_castps_si256(p), W));
	return _mm256_sub_epi32(w, _mm256_and_si256(_mm256_castps_si256(q), W));
}

TGT static inline AI void quantize_any(const float *g, float *e, size_t n,
				       float m, uint8_t *out, int folded)
{
	const __m256 vm = _mm256_set1_ps(m), vnm = _mm256_set1_ps(-m);
	const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
	/* Per 128-bit lane: bytes 0-4 and 5-9 (two groups) to qwords 0, 1. */
	const __m256i grp = _mm256_setr_epi8(0, 1, 2, 3, 4, -1, -1, -1, 5, 6, 7, 8, 9, -1, -1, -1,
					     0, 1, 2, 3, 4, -1, -1, -1, 5, 6, 7, 8, 9, -1, -1, -1);
	/* 4x4 byte transpose inside each lane. */
	const __m256i tr = _mm256_setr_epi8(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15,
					    0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
	const __m256i perm = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
	const __m256i zero = _mm256_setzero_si256();
	uint8_t wb[160 + 16] __attribute__((aligned(32)));
	size_t i = 0;
	for (; i + 160 <= n; i += 160) {
		/* w bytes of 160 elements, in order. */
		for (int ch = 0; ch < 5; ch++) {
			__m256i w[4];
			for (int r = 0; r < 4; r++) {
				size_t at = 32 * (size_t)ch + 8 * (size_t)r;
				__m256i W = _mm256_load_si256((const __m256i *)(wpat32 + at % 40));
				w[r] = quant8(g + i + at, e ? e + i + at : NULL, vm, vnm, W,
					      folded);
			}
			__m256i b = _mm256_packus_epi16(_mm256_packus_epi32(w[0], w[1]),
							_mm256_packus_epi32(w[2], w[3]));
			_mm256_store_si256((__m256i *)(wb + 32 * ch),
					   _mm256_permutevar8x32_epi32(b, order));
		}
		/* Sums of 32 groups of five: 4 per vector, as qwords. */
		__m256i z = zero;
		for (int v = 0; v < 8; v++) {
			__m256i y = _mm256_inserti128_si256(
				_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(wb + 20 * v))),
				_mm_loadu_si128((const __m128i *)(wb + 20 * v + 10)), 1);
			__m256i s = _mm256_sad_epu8(_mm256_shuffle_epi8(y, grp), zero);
			/* qword l of s: group 4v + l; goes to byte v of qword l. */
			z = _mm256_or_si256(z, _mm256_sllv_epi64(s, _mm256_set1_epi64x(8 * v)));
		}
		z = _mm256_shuffle_epi8(_mm256_permutevar8x32_epi32(z, perm), tr);
		_mm256_storeu_si256((__m256i *)(out + i / 5), z);
	}
	if (i < n && folded)
		tlc_quantize_folded_scalar(e + i, n - i, m, out + i / 5);
	else if (i < n)
		tlc_quantize_scalar(g + i, e ? e + i : NULL, n - i, m, out + i / 5);
}

TGT static void quantize_avx2(const float *g, float *e, size_t n, float m,
			      uint8_t *out)
{
	quantize_any(g, e, n, m, out, 0);
}

/* ---- the folded path (see threelc_avx512.c) ------------------------------------ */

/* 8 elements: c = g + e into e; lane maxima a; flags (2|c| > t) returned. */
TGT static inline AI unsigned fold8(const float *g, float *e, __m256i *a, __m256 t)
{
	__m256 c = _mm256_add_ps(_mm256_loadu_ps(g), _mm256_loadu_ps(e));
	_mm256_storeu_ps(e, c);
	__m256i b = absbits(c);
	*a = _mm256_max_epu32(*a, b);
	__m256 h = _mm256_castsi256_ps(b);
	return (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(_mm256_add_ps(h, h), t, _CMP_GT_OQ));
}

TGT static uint32_t fold_avx2(const float *g, float *e, size_t n, uint16_t *cand,
			      float s_lo)
{
	__m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
	__m256 t = _mm256_setzero_ps();   /* s_lo * (max |c| of earlier blocks) */
	size_t i = 0;
	while (i + 320 <= n) {
		for (size_t end = i + 320; i < end; i += 32) {
			unsigned f0 = fold8(g + i, e + i, &a0, t);
			unsigned f1 = fold8(g + i + 8, e + i + 8, &a1, t);
			unsigned f2 = fold8(g + i + 16, e + i + 16, &a2, t);
			unsigned f3 = fold8(g + i + 24, e + i + 24, &a3, t);
			cand[i / 16] = (uint16_t)(f0 | f1 << 8);
			cand[i / 16 + 1] = (uint16_t)(f2 | f3 << 8);
		}
		a0 = _mm256_max_epu32(_mm256_max_epu32(a0, a1), _mm256_max_epu32(a2, a3));
		__m128i mx = _mm_max_epu32(_mm256_castsi256_si128(a0), _mm256_extracti128_si256(a0, 1));
		mx = _mm_max_epu32(mx, _mm_shuffle_epi32(mx, 0x4e));
		mx = _mm_max_epu32(mx, _mm_shuffle_epi32(mx, 0xb1));
		a0 = a1 = a2 = a3 = _mm256_broadcastd_epi32(mx);
		t = _mm256_mul_ps(_mm256_castsi256_ps(a0), _mm256_set1_ps(s_lo));
	}
	a0 = _mm256_max_epu32(_mm256_max_epu32(a0, a1), _mm256_max_epu32(a2, a3));
	__m128i mx = _mm_max_epu32(_mm256_castsi256_si128(a0), _mm256_extracti128_si256(a0, 1));
	mx = _mm_max_epu32(mx, _mm_shuffle_epi32(mx, 0x4e));
	mx = _mm_max_epu32(mx, _mm_shuffle_epi32(mx, 0xb1));
	return tlc_maxabs_tail(g, e, i, n, (uint32_t)_mm_cvtsi128_si32(mx), 1);
}

/* The flagged groups one by one: new errors, and the nonzero digits added
 * into bytes preset to 121 (five zeros): byte = 121 + sum of q * 3^(4-k). */
TGT static inline AI void folded_sparse(float *e, const uint32_t *list, size_t cnt,
					float m, int exact, uint8_t *out)
{
	static const uint8_t w5[5] = {81, 27, 9, 3, 1};
	const __m256 vm = _mm256_set1_ps(m), vnm = _mm256_set1_ps(-m);
	const __m256 vh = _mm256_set1_ps(m * 0.5f), vnh = _mm256_set1_ps(-(m * 0.5f));
	for (size_t c = 0; c < cnt; c++) {
		size_t gi = list[c];
		float *x = e + 16 * gi;
		unsigned P = 0, N = 0;
		for (int h = 0; h < 2; h++) {
			__m256 v = _mm256_loadu_ps(x + 8 * h), p, q;
			if (exact) {
				p = _mm256_cmp_ps(v, vh, _CMP_GT_OQ);
				q = _mm256_cmp_ps(v, vnh, _CMP_LT_OQ);
			} else {
				__m256 v2 = _mm256_add_ps(v, v);
				p = _mm256_cmp_ps(v2, vm, _CMP_GT_OQ);
				q = _mm256_cmp_ps(v2, vnm, _CMP_LT_OQ);
			}
			__m256 mq = _mm256_or_ps(_mm256_and_ps(p, vm), _mm256_and_ps(q, vnm));
			_mm256_storeu_ps(x + 8 * h, _mm256_sub_ps(v, mq));
			P |= (unsigned)_mm256_movemask_ps(p) << (8 * h);
			N |= (unsigned)_mm256_movemask_ps(q) << (8 * h);
		}
		for (unsigned bits = P | N; bits; bits &= bits - 1) {
			unsigned b = (unsigned)__builtin_ctz(bits);
			size_t i = 16 * gi + b, j = i / 5;
			uint8_t w = w5[i - 5 * j];
			out[j] = (uint8_t)((P >> b & 1u) ? out[j] + w : out[j] - w);
		}
	}
}

TGT static void quantize_folded_avx2(float *e, size_t n, float m, uint8_t *out,
				     uint8_t *scratch)
{
	size_t nblk = n / 320, ng = nblk * 20, gpad = TLC_SCRATCH_GROUPS(n);
	const uint16_t *cand = (const uint16_t *)scratch;
	uint32_t *list = (uint32_t *)(scratch + 3 * gpad * sizeof(uint16_t));
	size_t cnt = 0;
	for (size_t gi = 0; gi < ng; gi++) {
		list[cnt] = (uint32_t)gi;
		cnt += cand[gi] != 0;
	}
	if (2 * cnt > ng) {
		/* Mostly flagged: the plain pass over e = c is cheaper. */
		quantize_any(e, e, n, m, out, 1);
		return;
	}
	memset(out, TLC_ZERO_BYTE, nblk * 64);
	if ((m * 0.5f) * 2.0f == m)
		folded_sparse(e, list, cnt, m, 1, out);
	else
		folded_sparse(e, list, cnt, m, 0, out);
	size_t i = nblk * 320;
	if (i < n)
		tlc_quantize_folded_scalar(e + i, n - i, m, out + i / 5);
}

/* ---- zero-run encoding scans ------------------------------------------------ */

TGT static inline uint64_t zmask_avx2(const uint8_t *p)
{
	const __m256i z = _mm256_set1_epi8((char)TLC_ZERO_BYTE);
	uint32_t lo = (uint32_t)_mm256_movemask_epi8(
		_mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)p), z));
	uint32_t hi = (uint32_t)_mm256_movemask_epi8(
		_mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(p + 32)), z));
	return (uint64_t)hi << 32 | lo;
}

TGT static size_t zre_avx2(const uint8_t *src, size_t n, uint8_t *dst,
			   size_t cap, size_t *used)
{
	return tlc_zre_with(src, n, dst, cap, used, zmask_avx2);
}

/* ---- decode ------------------------------------------------------------------ */

TGT static uint64_t expanded_avx2(const uint8_t *p, size_t n)
{
	const __m256i base = _mm256_set1_epi8((char)(TLC_RUN_BASE - 2)), one = _mm256_set1_epi8(1);
	const __m256i zero = _mm256_setzero_si256();
	__m256i acc = zero;
	size_t i = 0;
	for (; i + 32 <= n; i += 32) {
		__m256i v = _mm256_loadu_si256((const __m256i *)(p + i));
		__m256i x = _mm256_max_epu8(_mm256_subs_epu8(v, base), one);
		acc = _mm256_add_epi64(acc, _mm256_sad_epu8(x, zero));
	}
	__m128i a = _mm_add_epi64(_mm256_castsi256_si128(acc), _mm256_extracti128_si256(acc, 1));
	uint64_t sum = (uint64_t)_mm_cvtsi128_si64(a) + (uint64_t)_mm_extract_epi64(a, 1);
	for (; i < n; i++)
		sum += tlc_expand_len(p[i]);
	return sum;
}

/* Element i of a 16-byte block lies in byte i / 5: pshufb index in the low
 * byte of its dword, the other three bytes zeroed (0x80). */
static const uint32_t spread[80] __attribute__((aligned(32))) = {
#define S5(b) 0x80808000u | b, 0x80808000u | b, 0x80808000u | b, \
	0x80808000u | b, 0x80808000u | b
	S5(0), S5(1), S5(2), S5(3), S5(4), S5(5), S5(6), S5(7),
	S5(8), S5(9), S5(10), S5(11), S5(12), S5(13), S5(14), S5(15),
#undef S5
};

/* See threelc_avx512.c: trit k of b is ((b * F[k]) mod 2^16) * 3 >> 16. */
#define F5 270, 810, 2428, 7282, 21846
static const uint32_t fmul[20] = {F5, F5, F5, F5};

/* 80 elements from 16 literal bytes at x, all of them inside the frame:
 * elements with trit 1 are stored back unchanged (blend). */
TGT static inline void decode_block(__m128i x, float *o, __m256 vals)
{
	const __m256i one = _mm256_set1_epi32(1), three = _mm256_set1_epi32(3);
	__m256i bv = _mm256_broadcastsi128_si256(x);
	for (int r = 0; r < 10; r++) {
		__m256i sp = _mm256_load_si256((const __m256i *)(spread + 8 * r));
		__m256i fm = _mm256_loadu_si256((const __m256i *)(fmul + (8 * r) % 5));
		__m256i d = _mm256_shuffle_epi8(bv, sp);
		__m256i t = _mm256_mulhi_epu16(_mm256_mullo_epi16(d, fm), three);
		__m256i eq = _mm256_cmpeq_epi32(t, one);
		__m256 v = _mm256_permutevar8x32_ps(vals, t);
		__m256 ov = _mm256_loadu_ps(o + 8 * r);
		/* keep is ov, but the compiler cannot tell: otherwise it may
		 * rewrite blend(ov + v, ov) as ov + blend(v, -0.0), which
		 * quiets a signalling NaN the element was to keep (clang does). */
		__m256 keep = ov;
		__asm__("" : "+x"(keep));
		__m256 sum = _mm256_add_ps(ov, v);
		_mm256_storeu_ps(o + 8 * r, _mm256_blendv_ps(sum, keep, _mm256_castsi256_ps(eq)));
	}
}

/* One ZRE byte at element o: adds its nonzero trits (masked loads and
 * stores: nothing else is read or written); returns the elements it
 * covers. */
TGT static inline unsigned decode_one(unsigned b, float *o, __m256 vals)
{
	const __m256i one = _mm256_set1_epi32(1);
	const __m256i five = _mm256_setr_epi32(-1, -1, -1, -1, -1, 0, 0, 0);
	__m256i t = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)&tlc_byte_trits[b]));
	__m256i k = _mm256_andnot_si256(_mm256_cmpeq_epi32(t, one), five);
	__m256 v = _mm256_permutevar8x32_ps(vals, t);
	__m256 ov = _mm256_maskload_ps(o, k);
	_mm256_maskstore_ps(o, k, _mm256_add_ps(ov, v));
	return 5u * tlc_expand_len(b);
}

TGT static void decode_avx2(const uint8_t *p, size_t n, uint32_t count,
			    float s, float *out)
{
	const uint8_t *end = p + n;
	const __m128i zb = _mm_set1_epi8((char)TLC_ZERO_BYTE);
	const __m128i rb = _mm_set1_epi8((char)TLC_RUN_BASE);
	const __m128i lb = _mm_set1_epi8((char)(TLC_RUN_BASE - 2)), one = _mm_set1_epi8(1);
	const __m256 vals = _mm256_setr_ps(-s, -0.0f, s, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f);
	uint64_t i = 0;
	while (end - p >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)p);
		/* Bytes >= 243 are those equal to max(b, 243). */
		unsigned run = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_max_epu8(v, rb), v));
		unsigned zero = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, zb));
		if ((run | zero) == 0xffffu) {
			/* Only zeros: skip the elements the 16 bytes cover. */
			__m128i x = _mm_max_epu8(_mm_subs_epu8(v, lb), one);
			x = _mm_sad_epu8(x, _mm_setzero_si128());
			i += 5u * (uint64_t)(_mm_cvtsi128_si32(x) + _mm_extract_epi16(x, 4));
		} else if (!run && i + 80 <= count) {
			decode_block(v, out + i, vals);
			i += 80;
		} else {
			/* Mixed: element offsets by a prefix sum of the byte
			 * lengths; only literals with a nonzero trit are visited. */
			__m128i a = _mm_max_epu8(_mm_subs_epu8(v, lb), one);
			__m128i c = _mm_add_epi8(a, _mm_slli_si128(a, 1));
			c = _mm_add_epi8(c, _mm_slli_si128(c, 2));
			c = _mm_add_epi8(c, _mm_slli_si128(c, 4));
			c = _mm_add_epi8(c, _mm_slli_si128(c, 8));
			uint8_t at[16];
			_mm_storeu_si128((__m128i *)at, _mm_sub_epi8(c, a));
			for (unsigned lit = ~(run | zero) & 0xffffu; lit; lit &= lit - 1) {
				unsigned j = (unsigned)__builtin_ctz(lit);
				decode_one(p[j], out + i + 5u * at[j], vals);
			}
			i += 5u * (unsigned)(uint8_t)_mm_extract_epi8(c, 15);
		}
		p += 16;
	}
	while (p < end)
		i += decode_one(*p++, out + i, vals);
}

TLC_KERNELS_DEFINE(avx2);

#endif /* x86 */
