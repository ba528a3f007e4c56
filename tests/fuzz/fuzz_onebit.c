/* Fuzzes the onebit codec's decoder (codec/onebit.c): frames of codec
 * "onebit", as they arrive and re-sealed (fuzz_common.c). Params: two
 * float32 levels; the payload is keys (sparse) then ceil(count / 8) bytes
 * of bits, so it is not keys + fixed-size values (value_bytes 0). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct gw_fuzz_codec onebit = {
		.name = "onebit", .id = GW_CODEC_ONEBIT,
		.param_len = 8, .value_bytes = 0,
	};
	gw_fuzz_decoder(&onebit, data, size);
	return 0;
}
