/* Fuzzes the DeepReduce value section "poly" (value_poly.c). Input: u16 n
 * (LE, 1..DR_FUZZ_NMAX, else ignored), then the section, copied to a buffer
 * of exactly its size; the output is exactly n floats. An accepted section
 * must decode to finite values, and bound() must accept it with a finite
 * bound >= 0. The decoded values are then fitted again with the section's
 * degree and piece count: unless the encoder refuses them (GW_EINVAL: a fit
 * that overflows float32), that section must decode within the bound it
 * states — the encoder's bound is measured with the decoder's arithmetic.
 * Rejections are GW_ECORRUPT or GW_ELENGTH, and bound() never accepts what
 * decode() rejects for its layout. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "deepreduce/dr.h"
#include "fuzz_common.h"

#define DR_FUZZ_NMAX 4096u

static const struct dr_value_ops *ops = &dr_value_poly;

static void refit(const float *v, uint32_t n, const uint8_t *in)
{
	struct dr_value_cfg cfg = {
		.degree = in[0],
		.pieces = (unsigned)in[2] | (unsigned)in[3] << 8,
	};
	size_t cap = 12 + 256 * (4 + 4 * (DR_DEGREE_MAX + 1)) + 4 * (size_t)n;
	uint8_t *out = malloc(cap);
	float *back = malloc(n * sizeof(float));
	GW_FUZZ_CHECK(out && back);
	int w = ops->encode(v, n, &cfg, out, cap);
	GW_FUZZ_CHECKF(w > 0 || w == GW_EINVAL, "re-encode: %d", w);
	if (w > 0) {
		float bound;
		GW_FUZZ_CHECK(ops->bound(out, (size_t)w, n, &bound) == 0);
		GW_FUZZ_CHECK(ops->decode(out, (size_t)w, n, back) == 0);
		for (uint32_t i = 0; i < n; i++)
			GW_FUZZ_CHECKF(fabs((double)back[i] - v[i]) <= bound,
				       "value %u: %a -> %a, bound %a", i, (double)v[i],
				       (double)back[i], (double)bound);
	}
	free(out);
	free(back);
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
	GW_FUZZ_CHECK(in && v);
	memcpy(in, data + 2, len);
	int rc = ops->decode(in, len, n, v);
	gw_fuzz_last_rc = rc;   /* regress_main: .ok / .GW_E* names */
	float bound;
	int brc = ops->bound(in, len, n, &bound);
	if (rc == 0) {
		GW_FUZZ_CHECKF(brc == 0 && bound >= 0 && isfinite(bound), "bound rc %d", brc);
		for (uint32_t i = 0; i < n; i++)
			GW_FUZZ_CHECKF(isfinite(v[i]), "value %u not finite", i);
		refit(v, n, in);
	} else {
		GW_FUZZ_CHECKF(rc == GW_ECORRUPT || rc == GW_ELENGTH || rc == GW_ENOMEM,
			       "unexpected rc %d", rc);
		GW_FUZZ_CHECK(brc == 0 || brc == rc);
	}
	free(in);
	free(v);
	return 0;
}
