/* Fuzzes the DeepReduce value section "dexp" (value_dexp.c) with the
 * curve-fit harness (fuzz_dr_fit.h); the re-fit has no settings. */
#include "fuzz_dr_fit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct dr_fit_fuzz f = {&dr_value_dexp, NULL, 20};
	return dr_fit_fuzz_one(&f, data, size);
}
