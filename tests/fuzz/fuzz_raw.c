/* Fuzzes the raw codec's decoder (codec/raw.c): frames of codec "raw",
 * as they arrive and re-sealed (fuzz_common.c). No params; the payload is
 * keys (sparse) then float32 values, which must be added bit-exactly. */
#include "codec_internal.h"   /* gw_bits_f32 */
#include "fuzz_common.h"

static float raw_value(const gw_frame_info *h, const uint8_t *params,
		       const uint8_t *vals, uint32_t i)
{
	(void)h;
	(void)params;
	return gw_bits_f32(gw_fuzz_ld32(vals + 4 * (size_t)i));
}

GW_FUZZ_DECODER_HARNESS(.name = "raw", .id = GW_CODEC_RAW,
			.param_len = 0, .value_bytes = 4,
			.value = raw_value)
