/* Fuzzes the DeepReduce index decoder "raw" (u32 offsets): see fuzz_dr_index.h
 * for the input layout and what is checked. */
#include "fuzz_dr_index.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_dr_index(&dr_index_raw, DR_FUZZ_CANONICAL, data, size);
	return 0;
}
