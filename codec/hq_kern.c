/* hq's loops: the randomised Hadamard rotation and the packing of codes
 * (wire-format §4.11.3-4). Each loop is built for the baseline, AVX2 and
 * AVX-512 (GW_ISA_LOOP) from one body: the same float operations in the
 * same order, so every copy rounds alike and frames are bit-identical
 * whichever ran. */
#include <math.h>

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
 * the post factor. Passes h = 1, 2, 4 run in registers over groups of 8
 * (the same sums as pass by pass, so the same bits); the wider passes are
 * straight vector adds over contiguous halves. */
static inline __attribute__((always_inline)) void fwht_body(float *x, uint32_t b, float pre,
							   float post)
{
	uint32_t h = 1;
	for (uint32_t i = 0; i < b; i++)
		x[i] *= pre;
	if (b >= 8) {
		for (uint32_t i = 0; i < b; i += 8) {
			float *p = x + i;
			float b0 = p[0] + p[1], b1 = p[0] - p[1], b2 = p[2] + p[3], b3 = p[2] - p[3];
			float b4 = p[4] + p[5], b5 = p[4] - p[5], b6 = p[6] + p[7], b7 = p[6] - p[7];
			float c0 = b0 + b2, c2 = b0 - b2, c1 = b1 + b3, c3 = b1 - b3;
			float c4 = b4 + b6, c6 = b4 - b6, c5 = b5 + b7, c7 = b5 - b7;
			p[0] = c0 + c4; p[4] = c0 - c4; p[1] = c1 + c5; p[5] = c1 - c5;
			p[2] = c2 + c6; p[6] = c2 - c6; p[3] = c3 + c7; p[7] = c3 - c7;
		}
		h = 8;
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
GW_ISA_LOOP(fwht, (float *x, uint32_t b, float pre, float post), (x, b, pre, post))

/* x[i] negated where sign bit i of the frame is set: bit i % 64 of draw
 * i / 64 of SplitMix64 from the seed. off: x[0]'s index in the frame. */
static inline __attribute__((always_inline)) void signs_body(float *x, uint32_t n,
							   uint32_t seed, uint32_t off)
{
	uint32_t i = 0;
	while (i < n) {
		uint32_t f = off + i, word = f / 64, bit = f % 64;
		uint64_t w = gw_mix64((uint64_t)seed + (uint64_t)(word + 1) * GW_SPLITMIX_GAMMA);
		uint32_t m = GW_MIN(64 - bit, n - i);
		for (uint32_t j = 0; j < m; j++) {
			uint32_t u;
			memcpy(&u, &x[i + j], 4);
			u ^= (uint32_t)((w >> (bit + j)) & 1) << 31;
			memcpy(&x[i + j], &u, 4);
		}
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

/* Codes of up to 8 bits, 8 to a 64-bit group. */
static inline __attribute__((always_inline)) void pack8_body(uint8_t *dst, const int8_t *q,
							   uint32_t n, unsigned w)
{
	uint64_t mask = (1ull << w) - 1;
	uint32_t g = 0;
	for (; g + 8 <= n; g += 8) {
		uint64_t x = 0;
		for (unsigned k = 0; k < 8; k++)
			x |= ((uint64_t)(uint8_t)q[g + k] & mask) << (k * w);
		put_le(dst + (size_t)g / 8 * w, x, w);
	}
	if (g < n) {
		uint64_t x = 0;
		for (unsigned k = 0; g + k < n; k++)
			x |= ((uint64_t)(uint8_t)q[g + k] & mask) << (k * w);
		put_le(dst + (size_t)g / 8 * w, x, (unsigned)hq_payload_len(n - g, w));
	}
}
GW_ISA_LOOP(pack8, (uint8_t *dst, const int8_t *q, uint32_t n, unsigned w), (dst, q, n, w))

void hq_pack8(uint8_t *dst, const int8_t *q, uint32_t n, unsigned width)
{
	if (width == 8) {
		memcpy(dst, q, n);
		return;
	}
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

int hq_unpack32(const uint8_t *src, uint32_t n, unsigned width, uint32_t lim, int32_t *q)
{
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

/* acc += codes of constant width w (2..8); returns whether one was
 * outside [-lim, lim] (acc then holds them all added, to be undone). */
static inline __attribute__((always_inline)) int add_body(const uint8_t *src, uint32_t n,
							 unsigned w, int32_t lim, int32_t *acc,
							 int32_t sign)
{
	int bad = 0;
	uint32_t g = 0;
	for (; g + 8 <= n; g += 8) {
		uint64_t x = get_le(src + (size_t)g / 8 * w, w);
		for (unsigned k = 0; k < 8; k++) {
			int32_t v = (int32_t)((int64_t)(x << (64 - (k + 1) * w)) >> (64 - w));
			bad |= (v < -lim) | (v > lim);
			acc[g + k] += sign * v;
		}
	}
	if (g < n) {
		unsigned nbytes = (unsigned)hq_payload_len(n - g, w);
		uint64_t x = get_le(src + (size_t)g / 8 * w, nbytes);
		for (unsigned k = 0; g + k < n; k++) {
			int32_t v = (int32_t)((int64_t)(x << (64 - (k + 1) * w)) >> (64 - w));
			bad |= (v < -lim) | (v > lim);
			acc[g + k] += sign * v;
		}
		bad |= (x >> ((n - g) * w)) != 0;
	}
	return bad;
}

#define ADD_W(W)                                                                      \
	static inline __attribute__((always_inline)) void add##W##_body(                  \
		const uint8_t *src, uint32_t n, int32_t lim, int32_t *acc, int32_t sign, int *bad) \
	{                                                                             \
		*bad = add_body(src, n, W, lim, acc, sign);                           \
	}                                                                             \
	GW_ISA_LOOP(add##W, (const uint8_t *src, uint32_t n, int32_t lim, int32_t *acc,  \
			     int32_t sign, int *bad), (src, n, lim, acc, sign, bad))
ADD_W(2) ADD_W(3) ADD_W(4) ADD_W(5) ADD_W(6) ADD_W(7) ADD_W(8)

static int add_any(const uint8_t *src, uint32_t n, unsigned w, int32_t lim, int32_t *acc,
		   int32_t sign)
{
	int bad = 0;
	switch (w) {
	case 2: add2(src, n, lim, acc, sign, &bad); break;
	case 3: add3(src, n, lim, acc, sign, &bad); break;
	case 4: add4(src, n, lim, acc, sign, &bad); break;
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
