/* Fuzzes the sketchml codec's decoder (codec/sketchml.c): frames of codec
 * "sketchml", as they arrive and re-sealed (fuzz_common.c). Params are 10
 * bytes (bucket and group exponents, rows, sign/poison flags, column ratio,
 * hash seed); the payload is per sign a bf16 table, then per group a
 * varint count, a delta-binary key block and packed MinMaxSketch cells, so
 * it is not keys + fixed-size values (value_bytes 0). Always sparse. */
#include "fuzz_common.h"

GW_FUZZ_DECODER_HARNESS(.name = "sketchml", .id = GW_CODEC_SKETCHML,
			.param_len = 10, .value_bytes = 0)
