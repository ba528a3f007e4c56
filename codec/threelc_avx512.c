/* 3LC kernels for AVX-512 F/BW/VL/VBMI. Same results as the scalar
 * reference in threelc.c, bit for bit; see threelc_internal.h for what each
 * kernel computes. Compiled for the target with function attributes, so the
 * rest of the library keeps the baseline ISA; only called when gw_cpu says
 * the CPU has these extensions. */
#include "codec_internal.h"
#include "threelc_internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

#define TGT __attribute__((target("avx2,avx512f,avx512bw,avx512vl,avx512vbmi")))

/* ---- max pass ---------------------------------------------------------------- */

TGT static inline __m512i absbits(__m512 c)
{
	return _mm512_and_si512(_mm512_castps_si512(c), _mm512_set1_epi32(0x7fffffff));
}

TGT static uint32_t maxabs_avx512(const float *g, const float *e, size_t n)
{
	__m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
	size_t i = 0;
	if (e) {
		for (; i + 64 <= n; i += 64) {
			a0 = _mm512_max_epu32(a0, absbits(_mm512_add_ps(_mm512_loadu_ps(g + i), _mm512_loadu_ps(e + i))));
			a1 = _mm512_max_epu32(a1, absbits(_mm512_add_ps(_mm512_loadu_ps(g + i + 16), _mm512_loadu_ps(e + i + 16))));
			a2 = _mm512_max_epu32(a2, absbits(_mm512_add_ps(_mm512_loadu_ps(g + i + 32), _mm512_loadu_ps(e + i + 32))));
			a3 = _mm512_max_epu32(a3, absbits(_mm512_add_ps(_mm512_loadu_ps(g + i + 48), _mm512_loadu_ps(e + i + 48))));
		}
		for (; i < n; i += 16) {
			__mmask16 k = n - i >= 16 ? (__mmask16)0xffff
						  : (__mmask16)((1u << (n - i)) - 1);
			__m512 c = _mm512_add_ps(_mm512_maskz_loadu_ps(k, g + i),
						 _mm512_maskz_loadu_ps(k, e + i));
			a0 = _mm512_max_epu32(a0, absbits(c));
		}
	} else {
		for (; i + 64 <= n; i += 64) {
			a0 = _mm512_max_epu32(a0, absbits(_mm512_loadu_ps(g + i)));
			a1 = _mm512_max_epu32(a1, absbits(_mm512_loadu_ps(g + i + 16)));
			a2 = _mm512_max_epu32(a2, absbits(_mm512_loadu_ps(g + i + 32)));
			a3 = _mm512_max_epu32(a3, absbits(_mm512_loadu_ps(g + i + 48)));
		}
		for (; i < n; i += 16) {
			__mmask16 k = n - i >= 16 ? (__mmask16)0xffff
						  : (__mmask16)((1u << (n - i)) - 1);
			a0 = _mm512_max_epu32(a0, absbits(_mm512_maskz_loadu_ps(k, g + i)));
		}
	}
	a0 = _mm512_max_epu32(_mm512_max_epu32(a0, a1), _mm512_max_epu32(a2, a3));
	return _mm512_reduce_max_epu32(a0);
}

/* ---- fused quantize + pack + error feedback --------------------------------- */

/* Pass 2 keeps the trits as two bit masks in element order, P (q = +1)
 * and N (q = -1), and turns them into bytes five bits at a time:
 * byte = 121 + f(P bits 5j..5j+4) - f(N bits 5j..5j+4), f(x) = 81*x0 +
 * 27*x1 + 9*x2 + 3*x3 + x4. Bit 5j is at byte 5j/8 = 5(j/8) + ..., so a
 * vpermb gives qword lane L the mask bytes 5L..5L+7 (bits 40L on) and
 * vpmultishiftqb then picks bits 5b..5b+7 of lane L into byte b. */
static const uint8_t group_idx[64] __attribute__((aligned(64))) = {
	0, 1, 2, 3, 4, 5, 6, 7, 5, 6, 7, 8, 9, 10, 11, 12,
	10, 11, 12, 13, 14, 15, 16, 17, 15, 16, 17, 18, 19, 20, 21, 22,
	20, 21, 22, 23, 24, 25, 26, 27, 25, 26, 27, 28, 29, 30, 31, 32,
	30, 31, 32, 33, 34, 35, 36, 37, 35, 36, 37, 38, 39, 40, 41, 42,
};
#define SH8 0, 5, 10, 15, 20, 25, 30, 35
static const uint8_t shift_idx[64] __attribute__((aligned(64))) = {
	SH8, SH8, SH8, SH8, SH8, SH8, SH8, SH8};
/* f of the low five bits (vpermb ignores bits 6-7; bit 5 is ignored here). */
#define F1(x) (81 * ((x) & 1) + 27 * ((x) >> 1 & 1) + 9 * ((x) >> 2 & 1) + \
	       3 * ((x) >> 3 & 1) + ((x) >> 4 & 1))
#define F4(x) F1(x), F1(x + 1), F1(x + 2), F1(x + 3)
#define F16(x) F4(x), F4(x + 4), F4(x + 8), F4(x + 12)
static const uint8_t fives[64] __attribute__((aligned(64))) = {
	F16(0), F16(16), F16(0), F16(16)};

#define AI __attribute__((always_inline))

/* The trit masks of 16 values c: *p where t = 2 (2c > m), *q where t = 0
 * (2c < -m). exact: vh = m/2 is exact, so c > m/2 can be tested on c
 * itself; else on 2c against m. */
TGT static inline AI void trit_masks(__m512 x, __m512 vm, __m512 vh, int exact,
				     __mmask16 *p, __mmask16 *q)
{
	if (exact) {
		*p = _mm512_cmp_ps_mask(x, vh, _CMP_GT_OQ);
		*q = _mm512_cmp_ps_mask(x, _mm512_sub_ps(_mm512_setzero_ps(), vh), _CMP_LT_OQ);
	} else {
		__m512 x2 = _mm512_add_ps(x, x);
		*p = _mm512_cmp_ps_mask(x2, vm, _CMP_GT_OQ);
		*q = _mm512_cmp_ps_mask(x2, _mm512_sub_ps(_mm512_setzero_ps(), vm), _CMP_LT_OQ);
	}
}

/* 16 elements c = g + e (g without feedback): the trit masks stored at pm,
 * nm; with feedback the new error e = c - m*(t-1). */
TGT static inline AI void quant16(const float *g, float *e, __m512 vm, __m512 vh,
				  int exact, uint16_t *pm, uint16_t *nm)
{
	__m512 x = _mm512_loadu_ps(g);
	if (e)
		x = _mm512_add_ps(x, _mm512_loadu_ps(e));
	__mmask16 p, q;
	trit_masks(x, vm, vh, exact, &p, &q);
	if (e) {
		__m512 en = _mm512_mask_sub_ps(x, p, x, vm);      /* c - m */
		en = _mm512_mask_add_ps(en, q, en, vm);            /* c - (-m) */
		_mm512_storeu_ps(e, en);
	}
	_store_mask16(pm, p);
	_store_mask16(nm, q);
}

/* The bytes of one 320-element block from its masks (40 bytes each). */
TGT static inline AI void pack320(const uint16_t *pm, const uint16_t *nm, uint8_t *out)
{
	const __m512i gidx = _mm512_load_si512(group_idx);
	const __m512i shf = _mm512_load_si512(shift_idx);
	const __m512i lut = _mm512_load_si512(fives);
	/* pm/nm are 40-byte steps into the scratch on the folded path: not
	 * 64-byte aligned, so unaligned loads */
	__m512i P = _mm512_permutexvar_epi8(gidx, _mm512_loadu_si512(pm));
	__m512i N = _mm512_permutexvar_epi8(gidx, _mm512_loadu_si512(nm));
	P = _mm512_permutexvar_epi8(_mm512_multishift_epi64_epi8(shf, P), lut);
	N = _mm512_permutexvar_epi8(_mm512_multishift_epi64_epi8(shf, N), lut);
	__m512i base = _mm512_set1_epi8((char)TLC_ZERO_BYTE);
	_mm512_storeu_si512(out, _mm512_sub_epi8(_mm512_add_epi8(base, P), N));
}

#define Q4(r)                                                                 \
	quant16(g + 16 * (r), e ? e + 16 * (r) : NULL, vm, vh, exact, pm + (r), nm + (r)); \
	quant16(g + 16 * (r) + 16, e ? e + 16 * (r) + 16 : NULL, vm, vh, exact, pm + (r) + 1, nm + (r) + 1); \
	quant16(g + 16 * (r) + 32, e ? e + 16 * (r) + 32 : NULL, vm, vh, exact, pm + (r) + 2, nm + (r) + 2); \
	quant16(g + 16 * (r) + 48, e ? e + 16 * (r) + 48 : NULL, vm, vh, exact, pm + (r) + 3, nm + (r) + 3)

TGT static inline AI void quantize_blocks(const float *g, float *e, size_t nblk,
					  float m, int exact, uint8_t *out)
{
	const __m512 vm = _mm512_set1_ps(m), vh = _mm512_set1_ps(m * 0.5f);
	/* Masks of two blocks: block j is packed while block j + 1 is being
	 * quantized, so the vector loads of the masks never wait for the
	 * narrow stores that wrote them (no store forwarding across sizes).
	 * 40 bytes of each are used; the rest is read and ignored, zeroed
	 * once so it is never uninitialized. */
	uint16_t pbuf[2][32] __attribute__((aligned(64))) = {{0}};
	uint16_t nbuf[2][32] __attribute__((aligned(64))) = {{0}};
	for (size_t j = 0; j < nblk; j++, g += 320, e = e ? e + 320 : NULL) {
		uint16_t *pm = pbuf[j & 1], *nm = nbuf[j & 1];
		Q4(0);
		Q4(4);
		Q4(8);
		Q4(12);
		Q4(16);
		if (j)
			pack320(pbuf[(j - 1) & 1], nbuf[(j - 1) & 1], out + 64 * (j - 1));
	}
	if (nblk)
		pack320(pbuf[(nblk - 1) & 1], nbuf[(nblk - 1) & 1], out + 64 * (nblk - 1));
}

TGT static void quantize_avx512(const float *g, float *e, size_t n, float m,
				uint8_t *out)
{
	size_t nblk = n / 320, i = nblk * 320;
	/* m/2 is exact unless m is below 2^-125 with its last bit set. */
	int exact = (m * 0.5f) * 2.0f == m;
	if (e && exact)
		quantize_blocks(g, e, nblk, m, 1, out);
	else if (e)
		quantize_blocks(g, e, nblk, m, 0, out);
	else if (exact)
		quantize_blocks(g, NULL, nblk, m, 1, out);
	else
		quantize_blocks(g, NULL, nblk, m, 0, out);
	if (i < n)
		tlc_quantize_scalar(g + i, e ? e + i : NULL, n - i, m, out + i / 5);
}

/* ---- the folded path: one full pass, one over flagged groups --------------- */

/* 16 elements: c = g + e into e; the lane maxima a; the flags: 2|c| > t. */
#define FOLD16(off, a)                                                              \
	do {                                                                        \
		__m512 c_ = _mm512_add_ps(_mm512_loadu_ps(g + i + (off)),           \
					  _mm512_loadu_ps(e + i + (off)));          \
		_mm512_storeu_ps(e + i + (off), c_);                                \
		__m512i b_ = absbits(c_);                                           \
		a = _mm512_max_epu32(a, b_);                                        \
		__m512 h_ = _mm512_castsi512_ps(b_);                                \
		_store_mask16(cand + (i + (off)) / 16,                               \
			      _mm512_cmp_ps_mask(_mm512_add_ps(h_, h_), t, _CMP_GT_OQ)); \
	} while (0)

TGT static uint32_t fold_avx512(const float *g, float *e, size_t n, uint16_t *cand,
				float s_lo)
{
	__m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
	/* t = s_lo * (the largest |c| before this block), at most m. */
	__m512 t = _mm512_setzero_ps();
	size_t i = 0;
	while (i + 320 <= n) {
		for (size_t end = i + 320; i < end; i += 64) {
			FOLD16(0, a0);
			FOLD16(16, a1);
			FOLD16(32, a2);
			FOLD16(48, a3);
		}
		a0 = _mm512_max_epu32(_mm512_max_epu32(a0, a1), _mm512_max_epu32(a2, a3));
		a0 = a1 = a2 = a3 = _mm512_set1_epi32((int)_mm512_reduce_max_epu32(a0));
		t = _mm512_mul_ps(_mm512_castsi512_ps(a0), _mm512_set1_ps(s_lo));
	}
	for (; i < n; i += 16) {
		__mmask16 k = n - i >= 16 ? (__mmask16)0xffff
					  : (__mmask16)((1u << (n - i)) - 1);
		__m512 c = _mm512_add_ps(_mm512_maskz_loadu_ps(k, g + i),
					 _mm512_maskz_loadu_ps(k, e + i));
		_mm512_mask_storeu_ps(e + i, k, c);
		a0 = _mm512_max_epu32(a0, absbits(c));
	}
	a0 = _mm512_max_epu32(_mm512_max_epu32(a0, a1), _mm512_max_epu32(a2, a3));
	return _mm512_reduce_max_epu32(a0);
}

TGT static inline AI void quantize_folded_groups(float *e, const uint32_t *list,
						 size_t cnt, float m, int exact,
						 uint16_t *pm, uint16_t *nm)
{
	const __m512 vm = _mm512_set1_ps(m), vh = _mm512_set1_ps(m * 0.5f);
	for (size_t c = 0; c < cnt; c++) {
		uint32_t gi = list[c];
		float *x = e + 16 * (size_t)gi;
		__m512 v = _mm512_loadu_ps(x);
		__mmask16 p, q;
		trit_masks(v, vm, vh, exact, &p, &q);
		__m512 en = _mm512_mask_sub_ps(v, p, v, vm);      /* c - m */
		en = _mm512_mask_add_ps(en, q, en, vm);            /* c - (-m) */
		_mm512_mask_storeu_ps(x, _kor_mask16(p, q), en);
		_store_mask16(pm + gi, p);
		_store_mask16(nm + gi, q);
	}
}

TGT static void quantize_folded_avx512(float *e, size_t n, float m, uint8_t *out,
				       uint8_t *scratch)
{
	size_t nblk = n / 320, ng = nblk * 20, gpad = TLC_SCRATCH_GROUPS(n);
	uint16_t *cand = (uint16_t *)scratch, *pm = cand + gpad, *nm = pm + gpad;
	uint32_t *list = (uint32_t *)(nm + gpad);
	memset(pm, 0, gpad * sizeof(uint16_t));
	memset(nm, 0, gpad * sizeof(uint16_t));
	/* The flagged groups, in order. */
	const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	size_t cnt = 0;
	for (size_t g0 = 0; g0 < ng; g0 += 16) {
		__mmask16 valid = ng - g0 >= 16 ? (__mmask16)0xffff
						: (__mmask16)((1u << (ng - g0)) - 1);
		__m256i v = _mm256_maskz_loadu_epi16(valid, cand + g0);
		__mmask16 nz = _mm256_test_epi16_mask(v, v);
		__m512i idx = _mm512_add_epi32(_mm512_set1_epi32((int)g0), iota);
		_mm512_storeu_si512(list + cnt, _mm512_maskz_compress_epi32(nz, idx));
		cnt += (size_t)__builtin_popcount(nz);
	}
	if ((m * 0.5f) * 2.0f == m)
		quantize_folded_groups(e, list, cnt, m, 1, pm, nm);
	else
		quantize_folded_groups(e, list, cnt, m, 0, pm, nm);
	for (size_t j = 0; j < nblk; j++)
		pack320(pm + 20 * j, nm + 20 * j, out + 64 * j);
	size_t i = nblk * 320;
	if (i < n)
		tlc_quantize_folded_scalar(e + i, n - i, m, out + i / 5);
}

/* ---- zero-run encoding scans ------------------------------------------------ */

TGT static inline AI uint64_t zmask_avx512(const uint8_t *p)
{
	return _mm512_cmpeq_epi8_mask(_mm512_loadu_si512(p),
				      _mm512_set1_epi8((char)TLC_ZERO_BYTE));
}

TGT static size_t zre_avx512(const uint8_t *src, size_t n, uint8_t *dst,
			     size_t cap, size_t *used)
{
	return tlc_zre_with(src, n, dst, cap, used, zmask_avx512);
}

/* ---- decode ------------------------------------------------------------------ */

TGT static uint64_t expanded_avx512(const uint8_t *p, size_t n)
{
	const __m512i base = _mm512_set1_epi8((char)(TLC_RUN_BASE - 2)), one = _mm512_set1_epi8(1);
	const __m512i zero = _mm512_setzero_si512();
	__m512i acc = zero;
	for (size_t i = 0; i < n; i += 64) {
		__mmask64 k = n - i >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (n - i)) - 1);
		__m512i v = _mm512_maskz_loadu_epi8(k, p + i);
		__m512i x = _mm512_maskz_max_epu8(k, _mm512_subs_epu8(v, base), one);
		acc = _mm512_add_epi64(acc, _mm512_sad_epu8(x, zero));
	}
	return (uint64_t)_mm512_reduce_add_epi64(acc);
}

/* Element i of a 16-byte block lies in byte i / 5 (as a dword index). */
static const uint32_t spread[80] __attribute__((aligned(64))) = {
#define S5(b) b, b, b, b, b
	S5(0), S5(1), S5(2), S5(3), S5(4), S5(5), S5(6), S5(7),
	S5(8), S5(9), S5(10), S5(11), S5(12), S5(13), S5(14), S5(15),
#undef S5
};

/* Trit k of byte b is ((b * F[k]) mod 2^16) * 3 >> 16 with F[k] =
 * ceil(2^16 / 3^(5-k)): the low 16 bits hold frac(b / 3^(5-k)), whose
 * thirds are the trit (exact for every b < 243, checked by the tests). */
#define F5 270, 810, 2428, 7282, 21846
static const uint32_t fmul[20 + 5] = {F5, F5, F5, F5, F5};

/* 80 elements from 16 literal bytes at x; only lanes with trit != 1 are
 * read or written (masked), so pad lanes past the frame are never touched. */
TGT static inline AI void decode_block(__m128i x, float *o, __m512 vals,
				       const __m512i *sp, const __m512i *fm)
{
	const __m512i one = _mm512_set1_epi32(1), three = _mm512_set1_epi32(3);
	__m512i bv = _mm512_broadcast_i32x4(x);
	for (int r = 0; r < 5; r++) {
		__m512i d = _mm512_maskz_permutexvar_epi8(0x1111111111111111ull, sp[r], bv);
		__m512i t = _mm512_mulhi_epu16(_mm512_mullo_epi16(d, fm[r]), three);
		__mmask16 k = _mm512_cmpneq_epi32_mask(t, one);
		__m512 v = _mm512_permutexvar_ps(t, vals);
		__m512 ov = _mm512_maskz_loadu_ps(k, o + 16 * r);
		_mm512_mask_storeu_ps(o + 16 * r, k, _mm512_add_ps(ov, v));
	}
}

/* Per byte value: which of its five trits are not 1 (bits 0-4; none for
 * run bytes). */
#define M8(a, b, c, d, e) (uint8_t)((a != 1) | (b != 1) << 1 | (c != 1) << 2 | \
				    (d != 1) << 3 | (e != 1) << 4)
static const uint8_t byte_mask[256] = {TLC_ALL_BYTES(M8), TLC_RUN_BYTES(0)};

/* One ZRE byte at element o: adds its nonzero trits (masked: nothing
 * else is read or written); returns how many elements it covers. */
TGT static inline AI unsigned decode_one(unsigned b, float *o, __m256 vals)
{
	__m256i t = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)&tlc_byte_trits[b]));
	__mmask8 k = byte_mask[b];
	__m256 v = _mm256_permutevar8x32_ps(vals, t);
	__m256 ov = _mm256_maskz_loadu_ps(k, o);
	_mm256_mask_storeu_ps(o, k, _mm256_add_ps(ov, v));
	return 5u * tlc_expand_len(b);
}

TGT static void decode_avx512(const uint8_t *p, size_t n, uint32_t count,
			      float s, float *out)
{
	(void)count;   /* masked accesses never touch pad lanes (trit 1) */
	const uint8_t *end = p + n;
	const __m128i zb = _mm_set1_epi8((char)TLC_ZERO_BYTE);
	const __m128i rb = _mm_set1_epi8((char)TLC_RUN_BASE);
	const __m128i lb = _mm_set1_epi8((char)(TLC_RUN_BASE - 2)), one = _mm_set1_epi8(1);
	const __m256 vals8 = _mm256_setr_ps(-s, -0.0f, s, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f);
	const __m512 vals = _mm512_castps256_ps512(vals8);
	__m512i sp[5], fm[5];
	for (int r = 0; r < 5; r++) {
		sp[r] = _mm512_load_si512(spread + 16 * r);
		fm[r] = _mm512_loadu_si512(fmul + r);   /* 16r mod 5 == r */
	}
	uint64_t i = 0;
	while (end - p >= 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)p);
		__mmask16 run = _mm_cmpge_epu8_mask(v, rb);
		__mmask16 zero = _mm_cmpeq_epi8_mask(v, zb);
		if ((__mmask16)(run | zero) == 0xffff) {
			/* Only zeros: skip the elements the 16 bytes cover. */
			__m128i x = _mm_max_epu8(_mm_subs_epu8(v, lb), one);
			x = _mm_sad_epu8(x, _mm_setzero_si128());
			i += 5u * (uint64_t)(_mm_cvtsi128_si32(x) + _mm_extract_epi16(x, 4));
		} else if (!run) {
			decode_block(v, out + i, vals, sp, fm);
			i += 80;
		} else {
			/* Mixed: element offsets of the 16 bytes by a prefix sum
			 * of their lengths, then only the literals with a
			 * nonzero trit are visited. */
			__m128i a = _mm_max_epu8(_mm_subs_epu8(v, lb), one);
			__m128i c = _mm_add_epi8(a, _mm_slli_si128(a, 1));
			c = _mm_add_epi8(c, _mm_slli_si128(c, 2));
			c = _mm_add_epi8(c, _mm_slli_si128(c, 4));
			c = _mm_add_epi8(c, _mm_slli_si128(c, 8));
			uint8_t at[16];
			_mm_storeu_si128((__m128i *)at, _mm_sub_epi8(c, a));
			for (unsigned lit = (unsigned)(__mmask16)~(run | zero); lit; lit &= lit - 1) {
				unsigned j = (unsigned)__builtin_ctz(lit);
				decode_one(p[j], out + i + 5u * at[j], vals8);
			}
			i += 5u * (unsigned)(uint8_t)_mm_extract_epi8(c, 15);
		}
		p += 16;
	}
	while (p < end)
		i += decode_one(*p++, out + i, vals8);
}

TLC_KERNELS_DEFINE(avx512);

#endif /* x86 */
