/* Fuzzes the DeepReduce value section "deflate" (value_deflate.c).
 * Input: see fuzz_dr_value.h; the output is exactly n floats, so ASan
 * catches inflate writing past 4n. An accepted section must re-encode (at
 * levels 1 and 9) to a section that decodes to the same bits; a rejected
 * one must say GW_ECORRUPT (or GW_ENOMEM). */
#include "fuzz_dr_value.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dr_value_input x;
	if (!dr_value_input(&dr_value_deflate, data, size, &x))
		return 0;
	uint32_t n = x.n;
	if (x.rc == 0) {
		float *back = malloc(n * sizeof(float));
		size_t cap = 4 * (size_t)n + 64 + n / 8;   /* > compressBound */
		uint8_t *out = malloc(cap);
		GW_FUZZ_CHECK(back && out);
		for (int level = 1; level <= 9; level += 8) {
			struct dr_value_cfg cfg = {.zlevel = level};
			int w = dr_value_deflate.encode(x.v, n, &cfg, out, cap);
			GW_FUZZ_CHECKF(w > 0, "re-encode at level %d: %d", level, w);
			uint8_t *exact = malloc((size_t)w);
			GW_FUZZ_CHECK(exact);
			memcpy(exact, out, (size_t)w);
			GW_FUZZ_CHECK(dr_value_deflate.decode(exact, (size_t)w, n, back) == 0);
			GW_FUZZ_CHECK(!memcmp(x.v, back, n * sizeof(float)));
			free(exact);
		}
		free(out);
		free(back);
	} else {
		GW_FUZZ_CHECKF(x.rc == GW_ECORRUPT || x.rc == GW_ENOMEM, "unexpected rc %d", x.rc);
	}
	dr_value_input_free(&x);
	return 0;
}
