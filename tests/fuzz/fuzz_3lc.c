/* Fuzzes the 3lc codec's decoder (codec/threelc*.c): frames of codec "3lc",
 * as they arrive and re-sealed (fuzz_common.c). Params: m, a float32; the
 * payload is zero-run encoded base-3^5 bytes, so it is not keys +
 * fixed-size values (value_bytes 0).
 *
 * Then, on top of the shared harness: the input's bytes after the first
 * four (count, little-endian, low 17 bits) become the payload of a sealed
 * frame with m = 1.5, decoded by every ISA path this CPU has (scalar in
 * threelc.c, AVX2 in threelc_avx2.c, AVX-512 in threelc_avx512.c) into
 * identical outputs; verdicts and output bits must agree. */
#include <string.h>

#include "fuzz_common.h"
#include "gw_cpu.h"

#include "codec_internal.h"

#define OUT_MAX (1u << 17)

static void cross_isa(const uint8_t *data, size_t size)
{
	if (size < 4 || size - 4 > 65535 - GW_FRAME_HDR_LEN - 4)
		return;
	static uint8_t f[65536];
	static float out[GW_ISA_COUNT_][OUT_MAX + 8];
	uint32_t count = gw_fuzz_ld32(data) & (OUT_MAX - 1);
	if (!count)
		count = 1;
	size_t plen = size - 4;
	memset(f, 0, GW_FRAME_HDR_LEN);
	f[0] = 'G';
	f[1] = 'W';
	f[2] = GW_FRAME_VERSION;
	f[3] = GW_CODEC_3LC;
	f[GW_FUZZ_OFF_PARAM_LEN] = 4;
	gw_fuzz_st32(f + GW_FUZZ_OFF_COUNT, count);
	gw_fuzz_st32(f + GW_FUZZ_OFF_SPAN, count);
	gw_fuzz_st32(f + GW_FUZZ_OFF_PAYLOAD_LEN, (uint32_t)plen);
	float m = 1.5f;
	memcpy(f + GW_FRAME_HDR_LEN, &m, 4);
	memcpy(f + GW_FRAME_HDR_LEN + 4, data + 4, plen);
	size_t len = GW_FRAME_HDR_LEN + 4 + plen;
	gw_frame_seal(f, len);
	int rc0 = 0;
	for (int isa = 0; isa <= gw_cpu_best_isa(); isa++) {
		if (gw_cpu_force_isa(isa) < 0)
			continue;
		for (uint32_t i = 0; i < count + 8; i++)
			out[isa][i] = (float)(i % 7) - 3.0f;
		int rc = gw_decode(f, len, out[isa], count + 8);
		gw_fuzz_check_code(rc);
		if (isa == 0) {
			rc0 = rc;
			continue;
		}
		GW_FUZZ_CHECKF(rc == rc0, "3lc: %s says %d, scalar %d", gw_cpu_isa_name(isa),
			       rc, rc0);
		GW_FUZZ_CHECKF(!memcmp(out[isa], out[0], (count + 8) * sizeof(float)),
			       "3lc: %s decodes differently from scalar", gw_cpu_isa_name(isa));
	}
	gw_cpu_force_isa(-1);
	if (rc0 > 0)
		GW_FUZZ_CHECK((uint32_t)rc0 == count);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct gw_fuzz_codec c3lc = {
		.name = "3lc", .id = GW_CODEC_3LC,
		.param_len = 4, .value_bytes = 0,
	};
	gw_fuzz_decoder(&c3lc, data, size);
	cross_isa(data, size);
	return 0;
}
