/* hq's loops: the randomised Hadamard rotation and the packing of codes
 * (wire-format §4.11.3-4). Each loop is built for the baseline, AVX2 and
 * AVX-512 (GW_ISA_LOOP) from one body: the same float operations in the
 * same order, so every copy rounds alike and frames are bit-identical
 * whichever ran. */
#include <math.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "gw_cpu.h"
#include "gw_rand.h"
#include "hq_internal.h"

uint32_t hq_block(uint32_t left)
{
	uint32_t b = 1;
	while (b * 2 <= left && b * 2 <= HQ_BLOCK_MAX)
		b *= 2;
	return b;
}

unsigned hq_width_of(uint64_t m)
{
	unsigned w = 2;
	while (w < 64 && m > (1ull << (w - 1)) - 1)
		w++;
	return w;
}

/* 2^(-k/2) for a block of 2^k, as two factors: 2^(-floor(k/2)), applied
 * before the butterflies (a power of two: exact, and it keeps their partial
 * sums within sqrt(2) ||x||, so only a block whose norm is near FLT_MAX
 * overflows), and for odd k the float nearest 1/sqrt(2), after them. */
static float block_pre(uint32_t b)
{
	return ldexpf(1.0f, -(int)(__builtin_ctz(b) / 2));
}

static float block_post(uint32_t b)
{
	return __builtin_ctz(b) % 2 ? 0x1.6a09e6p-1f : 1.0f;
}

/* One block of b = 2^k values in place: the pre factor, the butterflies,
 * the post factor. Each butterfly adds the same two values whatever does
 * it (float addition commutes exactly, and a - b is a + (-b)), so the
 * vector kernels below give the scalar code's bits. */
static inline __attribute__((always_inline)) void wide_body(float *x, uint32_t b, uint32_t from,
							   float post);

static inline __attribute__((always_inline)) void fwht_body(float *x, uint32_t b, float pre,
							   float post)
{
	for (uint32_t i = 0; i < b; i++)
		x[i] *= pre;
	wide_body(x, b, 1, post);
}

/* The passes h >= from (to b) and the post factor: contiguous quarters,
 * two passes per sweep (h and 2h over values 0, h, 2h, 3h: the same sums
 * as pass by pass, half the loads and stores), straight vector adds for
 * the compiler. */
static inline __attribute__((always_inline)) void wide_body(float *x, uint32_t b, uint32_t from,
							   float post)
{
	uint32_t h = from;
	for (; 4 * h <= b; h *= 4)
		for (uint32_t i = 0; i < b; i += 4 * h) {
			float *p0 = x + i, *p1 = p0 + h, *p2 = p1 + h, *p3 = p2 + h;
			for (uint32_t j = 0; j < h; j++) {
				float a = p0[j], c = p1[j], d = p2[j], e = p3[j];
				float s0 = a + c, s1 = a - c, s2 = d + e, s3 = d - e;
				p0[j] = s0 + s2;
				p1[j] = s1 + s3;
				p2[j] = s0 - s2;
				p3[j] = s1 - s3;
			}
		}
	for (; h < b; h *= 2)
		for (uint32_t i = 0; i < b; i += 2 * h) {
			float *lo = x + i, *hi = x + i + h;
			for (uint32_t j = 0; j < h; j++) {
				float u = lo[j], v = hi[j];
				lo[j] = u + v;
				hi[j] = u - v;
			}
		}
	if (post != 1.0f)
		for (uint32_t i = 0; i < b; i++)
			x[i] *= post;
}
GW_ISA_LOOP(wide, (float *x, uint32_t b, uint32_t from, float post), (x, b, from, post))

#if defined(__x86_64__)
/* Passes h = 1, 2, 4 and 8 inside registers, 16 values at a time: a lane
 * adds its partner (a permute) to itself or to its negation (an XOR of
 * the sign), the lane order of the scalar butterflies. */
__attribute__((target("avx2"))) static void narrow_avx2(float *x, uint32_t b, float pre)
{
	const __m256 s1 = _mm256_castsi256_ps(_mm256_setr_epi32(0, INT32_MIN, 0, INT32_MIN, 0,
							       INT32_MIN, 0, INT32_MIN));
	const __m256 s2 = _mm256_castsi256_ps(_mm256_setr_epi32(0, 0, INT32_MIN, INT32_MIN, 0, 0,
							       INT32_MIN, INT32_MIN));
	const __m256 s4 = _mm256_castsi256_ps(_mm256_setr_epi32(0, 0, 0, 0, INT32_MIN, INT32_MIN,
							       INT32_MIN, INT32_MIN));
	const __m256 vp = _mm256_set1_ps(pre);
	for (uint32_t i = 0; i < b; i += 16) {
		__m256 v[2];
		for (int k = 0; k < 2; k++) {
			__m256 a = _mm256_mul_ps(_mm256_loadu_ps(x + i + 8 * k), vp);
			a = _mm256_add_ps(_mm256_permute_ps(a, 0xB1), _mm256_xor_ps(a, s1));
			a = _mm256_add_ps(_mm256_permute_ps(a, 0x4E), _mm256_xor_ps(a, s2));
			v[k] = _mm256_add_ps(_mm256_permute2f128_ps(a, a, 0x01), _mm256_xor_ps(a, s4));
		}
		_mm256_storeu_ps(x + i, _mm256_add_ps(v[0], v[1]));
		_mm256_storeu_ps(x + i + 8, _mm256_sub_ps(v[0], v[1]));
	}
}
#endif

static void fwht(float *x, uint32_t b, float pre, float post)
{
#if defined(__x86_64__)
	if (b >= 16 && gw_cpu_isa() >= GW_ISA_AVX2) {
		narrow_avx2(x, b, pre);
		wide(x, b, 16, post);
		return;
	}
#endif
	fwht_body(x, b, pre, post);
}

/* x[i] negated where sign bit i of the frame is set: bit i % 64 of draw
 * i / 64 of SplitMix64 from the seed. off: x[0]'s index in the frame.
 * A whole word's 64 values flip by XORs with shifted copies of its halves
 * (a vector shift per lane), the rest bit by bit. */
typedef uint32_t __attribute__((may_alias)) hq_u32a;

#if defined(__x86_64__)
/* 64 values' signs from one word: lane j of a vector gets bit j of the
 * word moved to bit 31 by a per-lane shift. */
__attribute__((target("avx2"))) static void flip64_avx2(hq_u32a *u, uint64_t w)
{
	const __m256i sh = _mm256_setr_epi32(31, 30, 29, 28, 27, 26, 25, 24);
	const __m256i top = _mm256_set1_epi32(INT32_MIN);
	for (int q = 0; q < 8; q++) {
		__m256i b = _mm256_set1_epi32((int)(uint32_t)(w >> (8 * q)));
		__m256i m = _mm256_and_si256(_mm256_sllv_epi32(b, sh), top);
		__m256i v = _mm256_loadu_si256((const __m256i *)(u + 8 * q));
		_mm256_storeu_si256((__m256i *)(u + 8 * q), _mm256_xor_si256(v, m));
	}
}
#endif

static inline void flip64(hq_u32a *u, uint64_t w)
{
#if defined(__x86_64__)
	if (gw_cpu_isa() >= GW_ISA_AVX2) {
		flip64_avx2(u, w);
		return;
	}
#endif
	for (uint32_t j = 0; j < 64; j++)
		u[j] ^= (uint32_t)((w >> j) & 1) << 31;
}

static inline __attribute__((always_inline)) void signs_body(float *x, uint32_t n,
							   uint32_t seed, uint32_t off)
{
	hq_u32a *u = (hq_u32a *)x;
	uint32_t i = 0;
	while (i < n) {
		uint32_t f = off + i, word = f / 64, bit = f % 64;
		uint64_t w = gw_mix64((uint64_t)seed + (uint64_t)(word + 1) * GW_SPLITMIX_GAMMA);
		if (!bit && n - i >= 64) {
			flip64(u + i, w);
			i += 64;
			continue;
		}
		uint32_t m = GW_MIN(64 - bit, n - i);
		for (uint32_t j = 0; j < m; j++)
			u[i + j] ^= (uint32_t)((w >> (bit + j)) & 1) << 31;
		i += m;
	}
}
GW_ISA_LOOP(signs, (float *x, uint32_t n, uint32_t seed, uint32_t off), (x, n, seed, off))

void hq_rotate(float *x, uint32_t n, uint32_t seed)
{
	signs(x, n, seed, 0);
	for (uint32_t off = 0; off < n;) {
		uint32_t b = hq_block(n - off);
		fwht(x + off, b, block_pre(b), block_post(b));
		off += b;
	}
}

void hq_unrotate_part(float *x, uint32_t b, uint32_t seed, uint32_t off)
{
	fwht(x, b, block_pre(b), block_post(b));
	signs(x, b, seed, off);
}

void hq_unrotate(float *x, uint32_t n, uint32_t seed)
{
	for (uint32_t off = 0; off < n;) {
		uint32_t b = hq_block(n - off);
		hq_unrotate_part(x + off, b, seed, off);
		off += b;
	}
}

/* ---- packing ---- *
 * Code i's width bits sit at bit i * width of the payload, least
 * significant first; groups of 8 codes fill exactly width bytes. */

static inline void put_le(uint8_t *dst, uint64_t x, unsigned nbytes)
{
	for (unsigned k = 0; k < nbytes; k++)
		dst[k] = (uint8_t)(x >> (8 * k));
}

static inline uint64_t get_le(const uint8_t *src, unsigned nbytes)
{
	uint64_t x = 0;
	for (unsigned k = 0; k < nbytes; k++)
		x |= (uint64_t)src[k] << (8 * k);
	return x;
}

/* Codes of up to 8 bits, 8 to a 64-bit group. A group's 8-byte store
 * spills into the next group's bytes, which that group then writes: only
 * the groups within 8 bytes of the end store byte by byte. */
static inline __attribute__((always_inline)) void pack8_body(uint8_t *dst, const int8_t *q,
							   uint32_t n, unsigned w)
{
	uint64_t mask = (1ull << w) - 1;
	uint64_t total = hq_payload_len(n, w);
	uint32_t g = 0;
	for (; g + 8 <= n; g += 8) {
		uint64_t x = 0;
		for (unsigned k = 0; k < 8; k++)
			x |= ((uint64_t)(uint8_t)q[g + k] & mask) << (k * w);
		size_t at = (size_t)g / 8 * w;
		if (at + 8 <= total)
			memcpy(dst + at, &x, 8);   /* little-endian hosts (x86-64) */
		else
			put_le(dst + at, x, w);
	}
	if (g < n) {
		uint64_t x = 0;
		for (unsigned k = 0; g + k < n; k++)
			x |= ((uint64_t)(uint8_t)q[g + k] & mask) << (k * w);
		put_le(dst + (size_t)g / 8 * w, x, (unsigned)hq_payload_len(n - g, w));
	}
}
GW_ISA_LOOP(pack8, (uint8_t *dst, const int8_t *q, uint32_t n, unsigned w), (dst, q, n, w))

/* 4 bits: two codes a byte, the first in the low nibble. */
static inline __attribute__((always_inline)) void pack4_body(uint8_t *dst, const int8_t *q,
							   uint32_t n)
{
	uint32_t h = n / 2;
	for (uint32_t i = 0; i < h; i++)
		dst[i] = (uint8_t)(((uint8_t)q[2 * i] & 15u) | ((uint8_t)q[2 * i + 1] << 4));
	if (n & 1)
		dst[h] = (uint8_t)((uint8_t)q[n - 1] & 15u);
}
GW_ISA_LOOP(pack4, (uint8_t *dst, const int8_t *q, uint32_t n), (dst, q, n))

void hq_pack8(uint8_t *dst, const int8_t *q, uint32_t n, unsigned width)
{
	if (width == 8)
		memcpy(dst, q, n);
	else if (width == 4)
		pack4(dst, q, n);
	else
		pack8(dst, q, n, width);
}

void hq_pack32(uint8_t *dst, const int32_t *q, uint32_t n, unsigned width)
{
	uint64_t mask = width == 64 ? ~0ull : (1ull << width) - 1, acc = 0;
	unsigned nb = 0;
	for (uint32_t i = 0; i < n; i++) {
		acc |= ((uint64_t)(uint32_t)q[i] & mask) << nb;
		nb += width;
		while (nb >= 8) {
			*dst++ = (uint8_t)acc;
			acc >>= 8;
			nb -= 8;
		}
	}
	if (nb)
		*dst = (uint8_t)acc;
}

static int add_any(const uint8_t *src, uint32_t n, unsigned w, int32_t lim, int32_t *acc,
		   int32_t sign);

int hq_unpack32(const uint8_t *src, uint32_t n, unsigned width, uint32_t lim, int32_t *q)
{
	if (width <= 8) {   /* the vector adders, onto zeros */
		memset(q, 0, (size_t)n * sizeof(int32_t));
		return add_any(src, n, width, (int32_t)GW_MIN(lim, (uint32_t)INT32_MAX), q, 1)
			       ? GW_ERR(GW_ECORRUPT) : GW_OK;
	}
	uint64_t mask = (1ull << width) - 1, acc = 0;
	unsigned nb = 0;
	for (uint32_t i = 0; i < n; i++) {
		while (nb < width) {
			acc |= (uint64_t)*src++ << nb;
			nb += 8;
		}
		uint64_t u = acc & mask;
		acc >>= width;
		nb -= width;
		int64_t v = (int64_t)(u << (64 - width)) >> (64 - width);
		if (v < -(int64_t)lim || v > (int64_t)lim)
			return GW_ERR(GW_ECORRUPT);
		q[i] = (int32_t)v;
	}
	return acc ? GW_ERR(GW_ECORRUPT) : GW_OK;   /* padding bits are zero */
}

/* a + b modulo 2^32: a caller's sums that overflow int32 wrap instead of
 * being undefined (a shard's never come near: W x 127). */
static inline int32_t wrap_add(int32_t a, int32_t b)
{
	return (int32_t)((uint32_t)a + (uint32_t)b);
}

/* acc += codes of constant width w (2..8); returns whether one was
 * outside [-lim, lim] (acc then holds them all added, to be undone). */
static inline __attribute__((always_inline)) int add_body(const uint8_t *src, uint32_t n,
							 unsigned w, int32_t lim, int32_t *acc,
							 int32_t sign)
{
	int bad = 0;
	uint32_t g = 0;
	uint64_t total = hq_payload_len(n, w);
	for (; g + 8 <= n; g += 8) {
		size_t at = (size_t)g / 8 * w;
		uint64_t x;
		if (at + 8 <= total)
			memcpy(&x, src + at, 8);   /* the next group's bits are shifted out */
		else
			x = get_le(src + at, w);
		for (unsigned k = 0; k < 8; k++) {
			int32_t v = (int32_t)((int64_t)(x << (64 - (k + 1) * w)) >> (64 - w));
			bad |= (v < -lim) | (v > lim);
			acc[g + k] = wrap_add(acc[g + k], sign * v);
		}
	}
	if (g < n) {
		unsigned nbytes = (unsigned)hq_payload_len(n - g, w);
		uint64_t x = get_le(src + (size_t)g / 8 * w, nbytes);
		for (unsigned k = 0; g + k < n; k++) {
			int32_t v = (int32_t)((int64_t)(x << (64 - (k + 1) * w)) >> (64 - w));
			bad |= (v < -lim) | (v > lim);
			acc[g + k] = wrap_add(acc[g + k], sign * v);
		}
		bad |= (x >> ((n - g) * w)) != 0;
	}
	return bad;
}

/* 8 bits: the codes are the bytes. */
static inline __attribute__((always_inline)) void add8_body(const uint8_t *src, uint32_t n,
							   int32_t lim, int32_t *acc, int32_t sign,
							   int *bad)
{
	int b = 0;
	for (uint32_t i = 0; i < n; i++) {
		int32_t v = (int8_t)src[i];
		b |= (v < -lim) | (v > lim);
		acc[i] = wrap_add(acc[i], sign * v);
	}
	*bad = b;
}
GW_ISA_LOOP(add8, (const uint8_t *src, uint32_t n, int32_t lim, int32_t *acc, int32_t sign,
		   int *bad), (src, n, lim, acc, sign, bad))

/* 4 bits: a byte's low nibble, then its high one, sign-extended by
 * shifts of a signed byte. */
static inline __attribute__((always_inline)) void add4_body(const uint8_t *src, uint32_t n,
							   int32_t lim, int32_t *acc, int32_t sign,
							   int *bad)
{
	int b = 0;
	uint32_t h = n / 2;
	for (uint32_t i = 0; i < h; i++) {
		int32_t lo = (int8_t)(uint8_t)(src[i] << 4) >> 4, hi = (int8_t)src[i] >> 4;
		b |= (lo < -lim) | (lo > lim) | (hi < -lim) | (hi > lim);
		acc[2 * i] = wrap_add(acc[2 * i], sign * lo);
		acc[2 * i + 1] = wrap_add(acc[2 * i + 1], sign * hi);
	}
	if (n & 1) {
		int32_t lo = (int8_t)(uint8_t)(src[h] << 4) >> 4;
		b |= (lo < -lim) | (lo > lim) | (src[h] >> 4 != 0);   /* padding */
		acc[n - 1] = wrap_add(acc[n - 1], sign * lo);
	}
	*bad = b;
}
GW_ISA_LOOP(add4, (const uint8_t *src, uint32_t n, int32_t lim, int32_t *acc, int32_t sign,
		   int *bad), (src, n, lim, acc, sign, bad))

#if defined(__x86_64__)
/* add4 in AVX2 by hand, 32 codes a step: nibbles split, sign-extended by
 * (v ^ 8) - 8 and interleaved in byte lanes, checked there (|v| <= lim),
 * then widened to int32 eight at a time. The compiler's add4_body moves
 * int32 lanes in pairs and is twice as slow. The rest, and the tail, go
 * through add4_body. */
__attribute__((target("avx2"))) static void add4_x(const uint8_t *src, uint32_t n,
						    int32_t lim, int32_t *acc, int32_t sign,
						    int *bad)
{
	const __m128i lo4 = _mm_set1_epi8(0x0f), e8 = _mm_set1_epi8(8);
	const __m128i l8 = _mm_set1_epi8((char)GW_MIN(lim, 127));
	const __m256i sg = _mm256_set1_epi32(sign);
	__m128i over = _mm_setzero_si128();
	uint32_t i = 0;
	for (; i + 32 <= n; i += 32) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(src + i / 2));
		__m128i lo = _mm_sub_epi8(_mm_xor_si128(_mm_and_si128(x, lo4), e8), e8);
		__m128i hi = _mm_sub_epi8(_mm_xor_si128(_mm_and_si128(_mm_srli_epi16(x, 4), lo4),
							e8), e8);
		__m128i c[2] = {_mm_unpacklo_epi8(lo, hi), _mm_unpackhi_epi8(lo, hi)};
		for (int k = 0; k < 2; k++) {
			over = _mm_or_si128(over, _mm_cmpgt_epi8(_mm_abs_epi8(c[k]), l8));
			__m256i a0 = _mm256_cvtepi8_epi32(c[k]);
			__m256i a1 = _mm256_cvtepi8_epi32(_mm_srli_si128(c[k], 8));
			int32_t *p = acc + i + 16 * k;
			_mm256_storeu_si256((__m256i *)(void *)p,
				_mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(void *)p),
						 _mm256_sign_epi32(a0, sg)));
			_mm256_storeu_si256((__m256i *)(void *)(p + 8),
				_mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(void *)(p + 8)),
						 _mm256_sign_epi32(a1, sg)));
		}
	}
	int b = !_mm_testz_si128(over, over);
	int rest = 0;
	if (i < n)
		add4_body(src + i / 2, n - i, lim, acc + i, sign, &rest);
	*bad = b | rest;
}
#endif

#define ADD_W(W)                                                                      \
	static inline __attribute__((always_inline)) void add##W##_body(                  \
		const uint8_t *src, uint32_t n, int32_t lim, int32_t *acc, int32_t sign, int *bad) \
	{                                                                             \
		*bad = add_body(src, n, W, lim, acc, sign);                           \
	}                                                                             \
	GW_ISA_LOOP(add##W, (const uint8_t *src, uint32_t n, int32_t lim, int32_t *acc,  \
			     int32_t sign, int *bad), (src, n, lim, acc, sign, bad))
ADD_W(2) ADD_W(3) ADD_W(5) ADD_W(6) ADD_W(7)

static int add_any(const uint8_t *src, uint32_t n, unsigned w, int32_t lim, int32_t *acc,
		   int32_t sign)
{
	int bad = 0;
	switch (w) {
	case 2: add2(src, n, lim, acc, sign, &bad); break;
	case 3: add3(src, n, lim, acc, sign, &bad); break;
	case 4:
#if defined(__x86_64__)
		if (gw_cpu_isa() >= GW_ISA_AVX2) {
			add4_x(src, n, lim, acc, sign, &bad);
			break;
		}
#endif
		add4(src, n, lim, acc, sign, &bad);
		break;
	case 5: add5(src, n, lim, acc, sign, &bad); break;
	case 6: add6(src, n, lim, acc, sign, &bad); break;
	case 7: add7(src, n, lim, acc, sign, &bad); break;
	default: add8(src, n, lim, acc, sign, &bad); break;
	}
	return bad;
}

int hq_add_codes(const uint8_t *src, uint32_t n, unsigned width, uint32_t lim, int32_t *acc)
{
	int32_t l = (int32_t)GW_MIN(lim, (uint32_t)INT32_MAX);
	if (!add_any(src, n, width, l, acc, 1))
		return GW_OK;
	add_any(src, n, width, l, acc, -1);   /* rare: a corrupt frame, undone */
	return GW_ERR(GW_ECORRUPT);
}
