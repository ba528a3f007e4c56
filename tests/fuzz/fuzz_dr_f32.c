/* Fuzzes the DeepReduce value section "f32" (codec/deepreduce/value_f32.c).
 * Input: see fuzz_dr_value.h. An accepted section must be exactly 4n bytes
 * and re-encode to the same bytes (the codec is the identity, NaN payloads
 * included); a rejected one must say GW_ELENGTH. */
#include "fuzz_dr_value.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dr_value_input x;
	if (!dr_value_input(&dr_value_f32, data, size, &x))
		return 0;
	if (x.rc == 0) {
		GW_FUZZ_CHECKF(x.len == 4 * (size_t)x.n, "accepted %zu bytes for n %u", x.len,
			       x.n);
		uint8_t *out = malloc(x.len);
		GW_FUZZ_CHECK(out);
		struct dr_value_cfg cfg = {0};
		int w = dr_value_f32.encode(x.v, x.n, &cfg, out, x.len);
		GW_FUZZ_CHECKF(w == (int)x.len, "re-encoded %d of %zu bytes", w, x.len);
		GW_FUZZ_CHECK(!memcmp(out, x.in, x.len));
		GW_FUZZ_CHECK(dr_value_f32.encode(x.v, x.n, &cfg, out, x.len - 1) == GW_EBUDGET);
		free(out);
	} else {
		GW_FUZZ_CHECKF(x.rc == GW_ELENGTH, "unexpected rc %d", x.rc);
	}
	dr_value_input_free(&x);
	return 0;
}
