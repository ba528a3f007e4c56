/* Fuzzes the bf16 codec's decoder (codec/bf16.c): frames of codec "bf16",
 * as they arrive and re-sealed (fuzz_common.c). No params; the payload is
 * keys (sparse) then 16-bit bfloat16 values: float32 bits = bf16 << 16. */
#include "codec_internal.h"   /* gw_bits_f32 */
#include "fuzz_common.h"

static float bf16_value(const gw_frame_info *h, const uint8_t *params,
			const uint8_t *vals, uint32_t i)
{
	(void)h;
	(void)params;
	uint32_t b = (uint32_t)(vals[2 * (size_t)i] | vals[2 * (size_t)i + 1] << 8);
	return gw_bits_f32(b << 16);
}

GW_FUZZ_DECODER_HARNESS(.name = "bf16", .id = GW_CODEC_BF16,
			.param_len = 0, .value_bytes = 2,
			.value = bf16_value)
