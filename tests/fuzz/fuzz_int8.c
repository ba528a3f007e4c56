/* Fuzzes the int8 codec's decoder (codec/int8.c): frames of codec "int8",
 * as they arrive and re-sealed (fuzz_common.c). Params: a float32 scale;
 * the payload is keys (sparse) then int8 levels, decoded as q * scale.
 * A decoder must reject q = -128 and a negative or infinite scale (NaN is
 * the poisoned frame, valid): accepted frames are checked for both. */
#include <math.h>

#include "codec_internal.h"   /* gw_bits_f32 */
#include "fuzz_common.h"

static float scale_of(const uint8_t *params)
{
	return gw_bits_f32(gw_fuzz_ld32(params));
}

static float int8_value(const gw_frame_info *h, const uint8_t *params,
			const uint8_t *vals, uint32_t i)
{
	(void)h;
	return (float)(int8_t)vals[i] * scale_of(params);
}

static void int8_accepted(const gw_frame_info *h, const uint8_t *params,
			  const uint8_t *payload)
{
	float s = scale_of(params);
	GW_FUZZ_CHECKF(isnan(s) || (s >= 0.0f && isfinite(s)),
		       "int8 accepted scale %a", (double)s);
	unsigned kb = (h->flags & GW_FF_SPARSE) ? ((h->flags & GW_FF_KEY64) ? 8 : 4)
						: 0;
	const uint8_t *q = payload + (size_t)kb * h->count;
	for (uint32_t i = 0; i < h->count; i++)
		GW_FUZZ_CHECKF(q[i] != 0x80, "int8 accepted q = -128 at %u", i);
}

GW_FUZZ_DECODER_HARNESS(.name = "int8", .id = GW_CODEC_INT8,
			.param_len = 4, .value_bytes = 1,
			.value = int8_value, .accepted = int8_accepted)
