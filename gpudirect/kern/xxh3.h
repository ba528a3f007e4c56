/* XXH3-64 with a seed, as the frame checksum needs it (wire-format §2.3),
 * written from xxHash's specification (doc/xxhash_spec.md, "XXH3
 * algorithm description") for one GPU thread or the host: byte loads, no
 * SIMD, no streaming state. Inputs are at most a frame (65535 bytes).
 * tests/gpu checks it against libxxhash for every length up to 2048 and
 * for long ones, with and without seeds. */
#ifndef GW_KERN_XXH3_H
#define GW_KERN_XXH3_H

#include "gw_hd.h"

#define GW_XXH_P32_1 0x9E3779B1ull
#define GW_XXH_P32_2 0x85EBCA77ull
#define GW_XXH_P32_3 0xC2B2AE3Dull
#define GW_XXH_P64_1 0x9E3779B185EBCA87ull
#define GW_XXH_P64_2 0xC2B2AE3D27D4EB4Full
#define GW_XXH_P64_3 0x165667B19E3779F9ull
#define GW_XXH_P64_4 0x85EBCA77C2B2AE63ull
#define GW_XXH_P64_5 0x27D4EB2F165667C5ull
#define GW_XXH_MX1 0x165667919E3779F9ull
#define GW_XXH_MX2 0x9FB21C651E98DF25ull
#define GW_XXH_SECRET_LEN 192u

/* The default secret (the spec's defaultSecret), once for each side:
 * device code reads it from constant memory. */
#define GW_XXH_SECRET_BYTES \
	0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, \
	0xf7, 0x21, 0xad, 0x1c, 0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, \
	0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f, 0xcb, 0x79, 0xe6, 0x4e, \
	0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21, \
	0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, \
	0x81, 0x3a, 0x26, 0x4c, 0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, \
	0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3, 0x71, 0x64, 0x48, 0x97, \
	0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8, \
	0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, \
	0xc7, 0x0b, 0x4f, 0x1d, 0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, \
	0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64, 0xea, 0xc5, 0xac, 0x83, \
	0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb, \
	0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, \
	0x29, 0xd4, 0x68, 0x9e, 0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, \
	0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce, 0x45, 0xcb, 0x3a, 0x8f, \
	0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e
#if defined(__CUDACC__)
__device__ __constant__ static const uint8_t gw_xxh_secret_dev[GW_XXH_SECRET_LEN] = {
	GW_XXH_SECRET_BYTES};
#endif
static const uint8_t gw_xxh_secret_host[GW_XXH_SECRET_LEN] = {GW_XXH_SECRET_BYTES};

GW_HD const uint8_t *gw_xxh3_default_secret(void)
{
#if defined(__CUDA_ARCH__)
	return gw_xxh_secret_dev;
#else
	return gw_xxh_secret_host;
#endif
}

GW_HD uint64_t gw_xxh_rotl64(uint64_t x, unsigned r)
{
	return (x << r) | (x >> (64 - r));
}

GW_HD uint64_t gw_xxh_bswap64(uint64_t x)
{
	uint64_t r = 0;
	for (int i = 0; i < 8; i++)
		r = r << 8 | ((x >> (8 * i)) & 0xff);
	return r;
}

GW_HD uint32_t gw_xxh_bswap32(uint32_t x)
{
	return (x >> 24) | ((x >> 8) & 0xff00u) | ((x << 8) & 0xff0000u) | (x << 24);
}

/* The low and high halves of a 128-bit product, folded by xor. */
GW_HD uint64_t gw_xxh_mulfold(uint64_t a, uint64_t b)
{
	return (a * b) ^ gw_hd_mulhi64(a, b);
}

GW_HD uint64_t gw_xxh_avalanche(uint64_t x)
{
	x ^= x >> 37;
	x *= GW_XXH_MX1;
	return x ^ (x >> 32);
}

GW_HD uint64_t gw_xxh_avalanche64(uint64_t x)
{
	x ^= x >> 33;
	x *= GW_XXH_P64_2;
	x ^= x >> 29;
	x *= GW_XXH_P64_3;
	return x ^ (x >> 32);
}

/* mixStep: 16 bytes of data, 16 of secret at sec, and the seed. */
GW_HD uint64_t gw_xxh_mix16(const uint8_t *d, const uint8_t *sec, uint64_t seed)
{
	return gw_xxh_mulfold(gw_hd_ld64(d) ^ (gw_hd_ld64(sec) + seed),
			      gw_hd_ld64(d + 8) ^ (gw_hd_ld64(sec + 8) - seed));
}

/* 0 to 16 bytes. */
GW_HD uint64_t gw_xxh3_small(const uint8_t *in, uint32_t len, const uint8_t *sec, uint64_t seed)
{
	if (len > 8) {
		uint64_t lo = (gw_hd_ld64(sec + 24) ^ gw_hd_ld64(sec + 32)) + seed;
		uint64_t hi = (gw_hd_ld64(sec + 40) ^ gw_hd_ld64(sec + 48)) - seed;
		lo ^= gw_hd_ld64(in);
		hi ^= gw_hd_ld64(in + len - 8);
		uint64_t v = len + gw_xxh_bswap64(lo) + hi + gw_xxh_mulfold(lo, hi);
		return gw_xxh_avalanche(v);
	}
	if (len >= 4) {
		uint64_t mseed = seed ^ ((uint64_t)gw_xxh_bswap32((uint32_t)seed) << 32);
		uint64_t comb = (uint64_t)gw_hd_ld32(in + len - 4) | (uint64_t)gw_hd_ld32(in) << 32;
		uint64_t v = ((gw_hd_ld64(sec + 8) ^ gw_hd_ld64(sec + 16)) - mseed) ^ comb;
		v ^= gw_xxh_rotl64(v, 49) ^ gw_xxh_rotl64(v, 24);
		v *= GW_XXH_MX2;
		v ^= (v >> 35) + len;
		v *= GW_XXH_MX2;
		return v ^ (v >> 28);
	}
	if (len > 0) {
		uint32_t comb = (uint32_t)in[len - 1] | len << 8 | (uint32_t)in[0] << 16 |
				(uint32_t)in[len >> 1] << 24;
		uint64_t v = ((uint64_t)(gw_hd_ld32(sec) ^ gw_hd_ld32(sec + 4)) + seed) ^ comb;
		return gw_xxh_avalanche64(v);
	}
	return gw_xxh_avalanche64(seed ^ gw_hd_ld64(sec + 56) ^ gw_hd_ld64(sec + 64));
}

/* 17 to 240 bytes. */
GW_HD uint64_t gw_xxh3_medium(const uint8_t *in, uint32_t len, const uint8_t *sec, uint64_t seed)
{
	uint64_t acc = len * GW_XXH_P64_1;
	if (len <= 128) {
		int rounds = (int)((len - 1) >> 5) + 1;
		for (int i = rounds - 1; i >= 0; i--) {
			acc += gw_xxh_mix16(in + 16 * i, sec + 32 * i, seed);
			acc += gw_xxh_mix16(in + len - 16 * i - 16, sec + 32 * i + 16, seed);
		}
		return gw_xxh_avalanche(acc);
	}
	uint32_t chunks = len >> 4;
	for (uint32_t i = 0; i < 8; i++)
		acc += gw_xxh_mix16(in + 16 * i, sec + 16 * i, seed);
	acc = gw_xxh_avalanche(acc);
	for (uint32_t i = 8; i < chunks; i++)
		acc += gw_xxh_mix16(in + 16 * i, sec + 16 * (i - 8) + 3, seed);
	acc += gw_xxh_mix16(in + len - 16, sec + 119, seed);
	return gw_xxh_avalanche(acc);
}

/* One stripe of 64 bytes into the 8 accumulators. */
GW_HD void gw_xxh_accumulate(uint64_t acc[8], const uint8_t *stripe, const uint8_t *sec)
{
	for (int i = 0; i < 8; i++) {
		uint64_t d = gw_hd_ld64(stripe + 8 * i);
		uint64_t v = d ^ gw_hd_ld64(sec + 8 * i);
		acc[i ^ 1] += d;
		acc[i] += (v & 0xffffffffull) * (v >> 32);
	}
}

/* Above 240 bytes, with a secret of GW_XXH_SECRET_LEN bytes. */
GW_HD uint64_t gw_xxh3_long(const uint8_t *in, uint32_t len, const uint8_t *sec)
{
	uint64_t acc[8] = {GW_XXH_P32_3, GW_XXH_P64_1, GW_XXH_P64_2, GW_XXH_P64_3,
			   GW_XXH_P64_4, GW_XXH_P32_2, GW_XXH_P64_5, GW_XXH_P32_1};
	const uint32_t per_block = (GW_XXH_SECRET_LEN - 64) / 8, block = 64 * per_block;
	uint32_t done = 0;
	while (len - done > block) {   /* every full block but the last */
		for (uint32_t n = 0; n < per_block; n++)
			gw_xxh_accumulate(acc, in + done + 64 * n, sec + 8 * n);
		for (int i = 0; i < 8; i++) {
			acc[i] ^= acc[i] >> 47;
			acc[i] ^= gw_hd_ld64(sec + GW_XXH_SECRET_LEN - 64 + 8 * i);
			acc[i] *= GW_XXH_P32_1;
		}
		done += block;
	}
	uint32_t full = (len - done - 1) / 64;
	for (uint32_t n = 0; n < full; n++)
		gw_xxh_accumulate(acc, in + done + 64 * n, sec + 8 * n);
	gw_xxh_accumulate(acc, in + len - 64, sec + GW_XXH_SECRET_LEN - 71);
	uint64_t r = len * GW_XXH_P64_1;
	for (int i = 0; i < 4; i++)
		r += gw_xxh_mulfold(acc[2 * i] ^ gw_hd_ld64(sec + 11 + 16 * i),
				    acc[2 * i + 1] ^ gw_hd_ld64(sec + 11 + 16 * i + 8));
	return gw_xxh_avalanche(r);
}

/* XXH3_64bits_withSeed(in, len, seed); seed 0 is XXH3_64bits(). Above
 * 240 bytes a non-zero seed derives a secret (scratch: 192 bytes). */
GW_HD uint64_t gw_xxh3_64(const uint8_t *in, uint32_t len, uint64_t seed, uint8_t *scratch)
{
	const uint8_t *sec = gw_xxh3_default_secret();
	if (len <= 16)
		return gw_xxh3_small(in, len, sec, seed);
	if (len <= 240)
		return gw_xxh3_medium(in, len, sec, seed);
	if (seed) {
		for (uint32_t i = 0; i < GW_XXH_SECRET_LEN / 16; i++) {
			gw_hd_st64(scratch + 16 * i, gw_hd_ld64(sec + 16 * i) + seed);
			gw_hd_st64(scratch + 16 * i + 8, gw_hd_ld64(sec + 16 * i + 8) - seed);
		}
		sec = scratch;
	}
	return gw_xxh3_long(in, len, sec);
}

#endif
