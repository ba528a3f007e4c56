/* Fuzzes the topk codec's decoder (codec/topk.c): frames of codec "topk",
 * as they arrive and re-sealed (fuzz_common.c). No params; the payload is
 * count float32 values then count - 1 LEB128 key gaps, so it is not keys +
 * fixed-size values (value_bytes 0). Frames are always sparse. */
#include "fuzz_common.h"

GW_FUZZ_DECODER_HARNESS(.name = "topk", .id = GW_CODEC_TOPK,
			.param_len = 0, .value_bytes = 0)
