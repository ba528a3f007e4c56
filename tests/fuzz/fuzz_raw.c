/* Fuzzes the raw codec's decoder (codec/raw.c): frames of codec "raw",
 * as they arrive and re-sealed (fuzz_common.c). No params; the payload is
 * keys (sparse) then float32 values, which must be added bit-exactly. */
#include <string.h>

#include "fuzz_common.h"

static float raw_value(const gw_frame_info *h, const uint8_t *params,
		       const uint8_t *vals, uint32_t i)
{
	(void)h;
	(void)params;
	uint32_t u = gw_fuzz_ld32(vals + 4 * (size_t)i);
	float f;
	memcpy(&f, &u, 4);
	return f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct gw_fuzz_codec raw = {
		.name = "raw", .id = GW_CODEC_RAW,
		.param_len = 0, .value_bytes = 4,
		.value = raw_value,
	};
	gw_fuzz_decoder(&raw, data, size);
	return 0;
}
