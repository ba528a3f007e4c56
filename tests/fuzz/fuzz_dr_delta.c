/* Fuzzes the DeepReduce index decoder "delta" (delta-binary key
 * block): see fuzz_dr_index.h for the input layout and what is checked. */
#include "fuzz_dr_index.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_dr_index(&dr_index_delta, DR_FUZZ_LOSSLESS, data, size);
	return 0;
}
