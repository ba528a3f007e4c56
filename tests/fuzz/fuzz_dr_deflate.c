/* Fuzzes the DeepReduce value section "deflate" (value_deflate.c).
 * Input: u16 n (LE, 1..DR_FUZZ_NMAX, else ignored), then the section,
 * copied to a buffer of exactly its size; the output is exactly n floats,
 * so ASan catches inflate writing past 4n. An accepted section must
 * re-encode (at levels 1 and 9) to a section that decodes to the same bits;
 * a rejected one must say GW_ECORRUPT (or GW_ENOMEM). */
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
	float *back = malloc(n * sizeof(float));
	GW_FUZZ_CHECK(in && v && back);
	memcpy(in, data + 2, len);
	int rc = dr_value_deflate.decode(in, len, n, v);
	gw_fuzz_last_rc = rc;   /* regress_main: .ok / .GW_E* names */
	if (rc == 0) {
		size_t cap = 4 * (size_t)n + 64 + n / 8;   /* > compressBound */
		uint8_t *out = malloc(cap);
		GW_FUZZ_CHECK(out);
		for (int level = 1; level <= 9; level += 8) {
			struct dr_value_cfg cfg = {.zlevel = level};
			int w = dr_value_deflate.encode(v, n, &cfg, out, cap);
			GW_FUZZ_CHECKF(w > 0, "re-encode at level %d: %d", level, w);
			uint8_t *exact = malloc((size_t)w);
			GW_FUZZ_CHECK(exact);
			memcpy(exact, out, (size_t)w);
			GW_FUZZ_CHECK(dr_value_deflate.decode(exact, (size_t)w, n, back) == 0);
			GW_FUZZ_CHECK(!memcmp(v, back, n * sizeof(float)));
			free(exact);
		}
		free(out);
	} else {
		GW_FUZZ_CHECKF(rc == GW_ECORRUPT || rc == GW_ENOMEM, "unexpected rc %d", rc);
	}
	free(in);
	free(v);
	free(back);
	return 0;
}
