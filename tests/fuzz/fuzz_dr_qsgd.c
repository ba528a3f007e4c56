/* Fuzzes the DeepReduce value section "qsgd" (value_qsgd.c). Input: u16 n
 * (LE, 1..DR_FUZZ_NMAX, else ignored), then the section, copied to a buffer
 * of exactly its size; the output is exactly n floats. An accepted section
 * must decode to finite values no larger than their bucket's norm, on the
 * grid norm · l / s, and bound() must accept it too. The decoded values are
 * then encoded again with the section's s and bucket: that section must
 * decode within the bound it states. Rejections are GW_ECORRUPT or
 * GW_ELENGTH. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "deepreduce/dr.h"
#include "fuzz_common.h"

#define DR_FUZZ_NMAX 4096u

static float ldf(const uint8_t *p)
{
	uint32_t u = gw_fuzz_ld32(p);
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* Each decoded value is ±(float)(norm · l / s) for an integer l in [0, s]:
 * the nearest integer to |v| s / norm gives it back. */
static void check_grid(const uint8_t *in, uint32_t n, const float *v)
{
	unsigned s = (unsigned)in[0] | (unsigned)in[1] << 8;
	uint32_t bucket = gw_fuzz_ld32(in + 2);
	for (uint32_t i = 0; i < n; i++) {
		double norm = ldf(in + 6 + 4 * (size_t)(i / bucket));
		GW_FUZZ_CHECKF(isfinite(v[i]) && fabsf(v[i]) <= norm,
			       "value %u: %g, norm %g", i, v[i], norm);
		if (norm == 0) {
			GW_FUZZ_CHECK(v[i] == 0);
			continue;
		}
		if (norm < 0x1p-100)
			continue;   /* subnormal steps need not round back */
		double l = nearbyint(fabs((double)v[i]) / norm * s);
		GW_FUZZ_CHECKF((float)(norm * l / s) == fabsf(v[i]),
			       "value %u: %a is not on the grid", i, (double)v[i]);
	}
}

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
	int rc = dr_value_qsgd.decode(in, len, n, v);
	gw_fuzz_last_rc = rc;   /* regress_main: .ok / .GW_E* names */
	float bound;
	int brc = dr_value_qsgd.bound(in, len, n, &bound);
	if (rc == 0) {
		GW_FUZZ_CHECKF(brc == 0 && bound >= 0 && isfinite(bound), "bound rc %d", brc);
		check_grid(in, n, v);
		struct dr_value_cfg cfg = {
			.levels = (unsigned)in[0] | (unsigned)in[1] << 8,
			.bucket = gw_fuzz_ld32(in + 2),
			.seed = n,
		};
		uint8_t *out = malloc(len);
		GW_FUZZ_CHECK(out);
		/* Same n, s and bucket: the same length. */
		int w = dr_value_qsgd.encode(v, n, &cfg, out, len);
		GW_FUZZ_CHECKF(w == (int)len, "re-encoded %d of %zu bytes", w, len);
		GW_FUZZ_CHECK(dr_value_qsgd.decode(out, len, n, back) == 0);
		GW_FUZZ_CHECK(dr_value_qsgd.bound(out, len, n, &bound) == 0);
		for (uint32_t i = 0; i < n; i++)
			GW_FUZZ_CHECKF(fabs((double)back[i] - v[i]) <= bound,
				       "value %u: %g -> %g, bound %g", i, v[i], back[i], bound);
		free(out);
	} else {
		GW_FUZZ_CHECKF(rc == GW_ECORRUPT || rc == GW_ELENGTH || rc == GW_ENOMEM,
			       "unexpected rc %d", rc);
		/* bound() checks a subset of what decode() does. */
		GW_FUZZ_CHECK(brc == 0 || brc == rc);
	}
	free(in);
	free(v);
	free(back);
	return 0;
}
