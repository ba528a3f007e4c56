/* Fuzzes the KLL quantile sketch (codec/quantile.c) with arbitrary values.
 * Input: byte 0 = k - 8 (k in 8..263), byte 1 = log2 q (1..8), byte 2 =
 * where to split the values between two sketches that are then merged
 * (in 1/256ths), bytes 3-10 = seed, then float32 values (non-finite ones
 * are skipped: the sketch's contract excludes NaN, and the codec never
 * feeds it non-finite magnitudes). Checks: compaction keeps the total
 * weight, so the rank of +inf is exactly the count added; ranks are
 * monotone; splits ascend and lie within the added values' range. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "quantile.h"

#define HDR 11u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HDR)
		return 0;
	uint32_t k = 8u + data[0];
	uint32_t q = 1u << (1 + data[1] % 8);
	size_t nv = (size - HDR) / 4, cut = nv * data[2] / 256;
	uint64_t seed;
	memcpy(&seed, data + 3, 8);
	gw_kll a, b;
	GW_FUZZ_CHECK(gw_kll_init(&a, k, seed) == 0 && gw_kll_init(&b, k, ~seed) == 0);
	uint64_t added = 0;
	float lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < nv; i++) {
		float v;
		memcpy(&v, data + HDR + 4 * i, 4);
		if (!isfinite(v))
			continue;
		GW_FUZZ_CHECK(gw_kll_add(i < cut ? &a : &b, v) == 0);
		added++;
		lo = fminf(lo, v);
		hi = fmaxf(hi, v);
	}
	GW_FUZZ_CHECK(gw_kll_merge(&a, &b) == 0);
	GW_FUZZ_CHECKF(a.n == added, "n %llu of %llu", (unsigned long long)a.n,
		       (unsigned long long)added);
	GW_FUZZ_CHECKF(gw_kll_rank(&a, INFINITY) == added, "weight not kept");
	if (added) {
		float *split = malloc((q - 1) * sizeof(float));
		GW_FUZZ_CHECK(split && gw_kll_splits(&a, q, split) == 0);
		for (uint32_t i = 0; i + 1 < q; i++) {
			GW_FUZZ_CHECKF(split[i] >= lo && split[i] <= hi, "split %u outside", i);
			GW_FUZZ_CHECKF(!i || split[i] >= split[i - 1], "split %u descends", i);
			GW_FUZZ_CHECK(!i || gw_kll_rank(&a, split[i]) >= gw_kll_rank(&a, split[i - 1]));
		}
		free(split);
	} else {
		float s;
		GW_FUZZ_CHECK(gw_kll_splits(&a, 2, &s) == GW_EINVAL);
	}
	gw_kll_free(&a);
	gw_kll_free(&b);
	return 0;
}
