/* Fuzzes the DeepReduce index decoder "rle" (Elias-gamma runs of the
 * bitmap): see fuzz_dr_index.h for the input layout and what is checked. */
#include "fuzz_dr_index.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_dr_index(&dr_index_rle, DR_FUZZ_CANONICAL, data, size);
	return 0;
}
