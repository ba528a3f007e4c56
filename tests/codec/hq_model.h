/* hq's rotation and decode as wire-format §4.11.1-2 write them, scalar and
 * pass by pass: the model test_hq and test_hq_agg hold the library to,
 * bit for bit. Written from the spec, never from codec/. */
#ifndef GW_TEST_HQ_MODEL_H
#define GW_TEST_HQ_MODEL_H

#include <math.h>
#include <stdint.h>

/* The size of the block starting where left values remain. */
static inline uint32_t hq_model_block(uint32_t left)
{
	uint32_t b = 1;
	while (2 * b <= left && 2 * b <= 4096)
		b *= 2;
	return b;
}

/* Sign bit i of a frame: bit i % 64 of splitmix64 draw i / 64 + 1. */
static inline int hq_model_sign(uint32_t seed, uint32_t i)
{
	uint64_t z = (uint64_t)seed + (uint64_t)(i / 64 + 1) * 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (int)((z >> (i % 64)) & 1);
}

/* H of one block of b = 2^k values: 2^-floor(k/2), the passes h = 1, 2,
 * 4, ..., and for odd k the float nearest 1/sqrt(2). */
static inline void hq_model_h(float *x, uint32_t b)
{
	int k = 0;
	while ((1u << k) < b)
		k++;
	for (uint32_t i = 0; i < b; i++)
		x[i] *= ldexpf(1.0f, -(k / 2));
	for (uint32_t h = 1; h < b; h *= 2)
		for (uint32_t i = 0; i < b; i++)
			if (i % (2 * h) < h) {
				float u = x[i], v = x[i + h];
				x[i] = u + v;
				x[i + h] = u - v;
			}
	if (k % 2)
		for (uint32_t i = 0; i < b; i++)
			x[i] *= 0x1.6a09e6p-1f;
}

/* The rotation of a frame's n values: D, then H per block. */
static inline void hq_model_rotate(float *x, uint32_t n, uint32_t seed)
{
	for (uint32_t i = 0; i < n; i++)
		if (hq_model_sign(seed, i))
			x[i] = -x[i];
	for (uint32_t off = 0; off < n; off += hq_model_block(n - off))
		hq_model_h(x + off, hq_model_block(n - off));
}

/* Its inverse: H per block, then D. */
static inline void hq_model_unrotate(float *x, uint32_t n, uint32_t seed)
{
	for (uint32_t off = 0; off < n; off += hq_model_block(n - off))
		hq_model_h(x + off, hq_model_block(n - off));
	for (uint32_t i = 0; i < n; i++)
		if (hq_model_sign(seed, i))
			x[i] = -x[i];
}

/* What a decoder adds into zeros for n codes on scale S of bits-bit
 * workers: 0 + the inverse rotation of float(code) * (S / Q). */
static inline void hq_model_decode(const int32_t *codes, uint32_t n, float S, unsigned bits,
				   int rotated, uint32_t seed, float *out)
{
	float step = S / (float)((1u << (bits - 1)) - 1u);
	for (uint32_t i = 0; i < n; i++)
		out[i] = (float)codes[i] * step;
	if (rotated)
		hq_model_unrotate(out, n, seed);
	for (uint32_t i = 0; i < n; i++)
		out[i] = 0.0f + out[i];
}

#endif
