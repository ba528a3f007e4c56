/* Fuzzes the DeepReduce value section "f32" (codec/deepreduce/value_f32.c).
 * Input: u16 n (LE, 1..DR_FUZZ_NMAX, else ignored), then the section, copied
 * to a buffer of exactly its size so that ASan sees any read past it; the
 * output is exactly n floats. An accepted section must be exactly 4n bytes
 * and re-encode to the same bytes (the codec is the identity, NaN payloads
 * included); a rejected one must say GW_ELENGTH. */
#include <stdlib.h>
#include <string.h>

#include "deepreduce/dr.h"
#include "fuzz_common.h"

#define DR_FUZZ_NMAX 4096u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	uint32_t n = (uint32_t)data[0] | (uint32_t)data[1] << 8;
	if (!n || n > DR_FUZZ_NMAX)
		return 0;
	size_t len = size - 2;
	uint8_t *in = malloc(len ? len : 1);
	float *v = malloc(n * sizeof(float));
	GW_FUZZ_CHECK(in && v);
	memcpy(in, data + 2, len);
	int rc = dr_value_f32.decode(in, len, n, v);
	gw_fuzz_last_rc = rc;   /* regress_main: .ok / .GW_E* names */
	if (rc == 0) {
		GW_FUZZ_CHECKF(len == 4 * (size_t)n, "accepted %zu bytes for n %u", len, n);
		uint8_t *out = malloc(len);
		GW_FUZZ_CHECK(out);
		struct dr_value_cfg cfg = {0};
		int w = dr_value_f32.encode(v, n, &cfg, out, len);
		GW_FUZZ_CHECKF(w == (int)len, "re-encoded %d of %zu bytes", w, len);
		GW_FUZZ_CHECK(!memcmp(out, in, len));
		GW_FUZZ_CHECK(dr_value_f32.encode(v, n, &cfg, out, len - 1) == GW_EBUDGET);
		free(out);
	} else {
		GW_FUZZ_CHECKF(rc == GW_ELENGTH, "unexpected rc %d", rc);
	}
	free(in);
	free(v);
	return 0;
}
