/* Fuzzes the deepreduce codec's decoder (codec/deepreduce.c, wire-format
 * §4.10): frames of codec "deepreduce", as they arrive and re-sealed
 * (fuzz_common.c). Params are 8 bytes (index id, value id, reserved,
 * index_len); the payload is an index section then a value section, not
 * keys + fixed-size values (value_bytes 0). The sections have harnesses of
 * their own (fuzz_dr_*.c); this one drives the framing around them. */
#include "fuzz_common.h"

GW_FUZZ_DECODER_HARNESS(.name = "deepreduce", .id = GW_CODEC_DEEPREDUCE,
			.param_len = 8, .value_bytes = 0)
