/* Fuzzes the DeepReduce value section "qsgd" (value_qsgd.c). Input: see
 * fuzz_dr_value.h. An accepted section must decode to finite values no
 * larger than their bucket's norm, on the grid norm · l / s, and bound()
 * must accept it too. The decoded values are then encoded again with the
 * section's s and bucket: that section must decode within the bound it
 * states. Rejections are GW_ECORRUPT or GW_ELENGTH. */
#include "fuzz_dr_value.h"

/* Each decoded value is ±(float)(norm · l / s) for an integer l in [0, s]:
 * the nearest integer to |v| s / norm gives it back. */
static void check_grid(const uint8_t *in, uint32_t n, const float *v)
{
	unsigned s = (unsigned)in[0] | (unsigned)in[1] << 8;
	uint32_t bucket = gw_fuzz_ld32(in + 2);
	for (uint32_t i = 0; i < n; i++) {
		double norm = gw_bits_f32(gw_fuzz_ld32(in + 6 + 4 * (size_t)(i / bucket)));
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
	struct dr_value_input x;
	if (!dr_value_input(&dr_value_qsgd, data, size, &x))
		return 0;
	uint32_t n = x.n;
	size_t len = x.len;
	float bound;
	dr_value_check_bound(&dr_value_qsgd, &x, &bound);
	if (x.rc == 0) {
		check_grid(x.in, n, x.v);
		struct dr_value_cfg cfg = {
			.levels = (unsigned)x.in[0] | (unsigned)x.in[1] << 8,
			.bucket = gw_fuzz_ld32(x.in + 2),
			.seed = n,
		};
		uint8_t *out = malloc(len);
		float *back = malloc(n * sizeof(float));
		GW_FUZZ_CHECK(out && back);
		/* Same n, s and bucket: the same length. */
		int w = dr_value_qsgd.encode(x.v, n, &cfg, out, len);
		GW_FUZZ_CHECKF(w == (int)len, "re-encoded %d of %zu bytes", w, len);
		GW_FUZZ_CHECK(dr_value_qsgd.decode(out, len, n, back) == 0);
		GW_FUZZ_CHECK(dr_value_qsgd.bound(out, len, n, &bound) == 0);
		for (uint32_t i = 0; i < n; i++)
			GW_FUZZ_CHECKF(fabs((double)back[i] - x.v[i]) <= bound,
				       "value %u: %g -> %g, bound %g", i, x.v[i], back[i], bound);
		free(out);
		free(back);
	}
	dr_value_input_free(&x);
	return 0;
}
