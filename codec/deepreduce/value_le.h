/* Private to the DeepReduce value codecs that carry float32 values bit for
 * bit (f32, and deflate before and after zlib): the little-endian layout
 * of value_f32.c, 4n bytes. Bytes, not float loads and stores: an x87
 * register would quiet a signaling NaN. */
#ifndef GW_DR_VALUE_LE_H
#define GW_DR_VALUE_LE_H

#include <stdint.h>
#include <string.h>

#include "../codec_internal.h"

/* v[0..n) into out[0..4n). */
static inline void dr_f32_put_le(uint8_t *out, const float *v, uint32_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	memcpy(out, v, 4 * (size_t)n);
#else
	for (uint32_t i = 0; i < n; i++)
		gw_st32(out + 4 * (size_t)i, gw_f32_bits(v[i]));
#endif
}

/* in[0..4n) into v[0..n); in may be v itself (converted in place, which
 * is nothing to do on a little-endian host). */
static inline void dr_f32_get_le(float *v, const uint8_t *in, uint32_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if ((const void *)v != (const void *)in)
		memcpy(v, in, 4 * (size_t)n);
#else
	for (uint32_t i = 0; i < n; i++) {
		uint32_t u = gw_ld32(in + 4 * (size_t)i);
		memcpy(&v[i], &u, 4);
	}
#endif
}

#endif /* GW_DR_VALUE_LE_H */
