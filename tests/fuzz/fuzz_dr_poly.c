/* Fuzzes the DeepReduce value section "poly" (value_poly.c) with the
 * curve-fit harness (fuzz_dr_fit.h); the re-fit uses the section's degree
 * and piece count. */
#include "fuzz_dr_fit.h"

static void poly_cfg(const uint8_t *in, struct dr_value_cfg *cfg)
{
	cfg->degree = in[0];
	cfg->pieces = (unsigned)in[2] | (unsigned)in[3] << 8;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct dr_fit_fuzz f = {
		&dr_value_poly, poly_cfg, 12 + 256 * (4 + 4 * (DR_DEGREE_MAX + 1)),
	};
	return dr_fit_fuzz_one(&f, data, size);
}
