/* Fuzzes the DeepReduce index decoder "bloom" (Bloom filter, policies P0,
 * P1, P2): see fuzz_dr_index.h for the input layout and what is checked. */
#include "fuzz_dr_index.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_dr_index(&dr_index_bloom, DR_FUZZ_LOSSY, data, size);
	return 0;
}
