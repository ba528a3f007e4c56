/* Fuzzes the terngrad codec's decoder (codec/terngrad.c): frames of codec
 * "terngrad", as they arrive and re-sealed (fuzz_common.c). Params: a
 * float32 scale; the payload is keys (sparse) then ceil(count / 5) base-3^5
 * bytes, so it is not keys + fixed-size values (value_bytes 0). */
#include "fuzz_common.h"

GW_FUZZ_DECODER_HARNESS(.name = "terngrad", .id = GW_CODEC_TERNGRAD,
			.param_len = 4, .value_bytes = 0)
