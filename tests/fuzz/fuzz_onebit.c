/* Fuzzes the onebit codec's decoder (codec/onebit.c): frames of codec
 * "onebit", as they arrive and re-sealed (fuzz_common.c). Params: two
 * float32 levels; the payload is keys (sparse) then ceil(count / 8) bytes
 * of bits, so it is not keys + fixed-size values (value_bytes 0). */
#include "fuzz_common.h"

GW_FUZZ_DECODER_HARNESS(.name = "onebit", .id = GW_CODEC_ONEBIT,
			.param_len = 8, .value_bytes = 0)
