/* bfloat16 and IEEE half conversions, round to nearest even, for tensors
 * a framework keeps in those types (gw_dtype): widened to float32 for the
 * codecs, and narrowed back when results are written. Software, exact
 * for every input (NaN stays NaN, overflow goes to infinity, halves'
 * subnormals are kept), so no compiler's _Float16 or CPU's F16C is
 * needed; a chunk at a time is not where the time goes. */
#ifndef GW_DTYPE_H
#define GW_DTYPE_H

#include <stdint.h>
#include <string.h>

static inline uint32_t gw_f32_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	return u;
}

static inline float gw_bits_f32(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

static inline float gw_bf16_to_f32(uint16_t h)
{
	return gw_bits_f32((uint32_t)h << 16);
}

static inline uint16_t gw_f32_to_bf16(float f)
{
	uint32_t u = gw_f32_bits(f);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40u);   /* NaN: quiet, never inf */
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

static inline float gw_f16_to_f32(uint16_t h)
{
	uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
	if (e == 0x1f)
		return gw_bits_f32(s | 0x7f800000u | (m << 13));
	if (e)
		return gw_bits_f32(s | ((e + 112u) << 23) | (m << 13));
	float v = (float)m * 0x1p-24f;   /* zero or subnormal: exact */
	return s ? -v : v;
}

static inline uint16_t gw_f32_to_f16(float f)
{
	uint32_t u = gw_f32_bits(f), a = u & 0x7fffffffu;
	uint16_t s = (uint16_t)((u >> 16) & 0x8000u);
	if (a > 0x7f800000u)
		return (uint16_t)(s | 0x7e00u | ((a >> 13) & 0x3ffu));   /* NaN */
	if (a >= 0x477ff000u)   /* 65520 and above (inf too) round to inf */
		return (uint16_t)(s | 0x7c00u);
	if (a < 0x38800000u) {  /* below 2^-14: a subnormal half, or zero */
		uint32_t e = a >> 23;
		if (e < 102u)   /* below 2^-25: zero (2^-25 itself ties to 0) */
			return s;
		uint32_t m = (a & 0x7fffffu) | 0x800000u, shift = 126u - e;
		uint32_t r = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
		if (rem > half || (rem == half && (r & 1u)))
			r++;
		return (uint16_t)(s | r);
	}
	uint32_t r = a - 0x38000000u, out = r >> 13, rem = r & 0x1fffu;
	if (rem > 0x1000u || (rem == 0x1000u && (out & 1u)))
		out++;   /* a carry into the exponent is right, up to 65504 */
	return (uint16_t)(s | out);
}

#endif /* GW_DTYPE_H */
