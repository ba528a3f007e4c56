/* Fuzzes delta-binary key blocks (codec/delta_binary.c), the key format of
 * sketchml and of the DeepReduce index codecs. Input: byte 0 bit 0 = wide,
 * bytes 1-2 = n (u16 LE), 3-6 = base (u32 LE), 7-10 = limit (u32 LE; 0
 * means 2^64 - 1), then the block, copied to a buffer of exactly its size
 * so that ASan sees any read past it. An accepted block must hold n
 * ascending keys in [base, limit), the iterator must walk the same keys,
 * and the encoder's block of those keys must be no longer (it picks the
 * fewest bytes; a hostile block may use more) and decode back to them. */
#include <stdlib.h>
#include <string.h>

#include "codec_internal.h"
#include "delta_binary.h"
#include "fuzz_common.h"

#define HDR 11u

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HDR)
		return 0;
	int wide = data[0] & 1;
	uint32_t n = (uint32_t)data[1] | (uint32_t)data[2] << 8;
	uint64_t base = (uint64_t)gw_ld32(data + 3);
	uint64_t limit = gw_ld32(data + 7);
	if (!limit)
		limit = UINT64_MAX;
	size_t len = size - HDR;
	uint8_t *in = malloc(len ? len : 1);
	uint64_t *keys = malloc(((size_t)n + 1) * sizeof(uint64_t));
	uint64_t *back = malloc(((size_t)n + 1) * sizeof(uint64_t));
	GW_FUZZ_CHECK(in && keys && back);
	memcpy(in, data + HDR, len);
	size_t used = 0;
	int rc = gw_db_decode(in, len, n, base, wide, limit, keys, &used);
	if (rc == 0) {
		GW_FUZZ_CHECKF(used <= len, "used %zu of %zu", used, len);
		struct gw_db_iter it;
		gw_db_iter_init(&it, in, n, base, wide);
		for (uint32_t i = 0; i < n; i++) {
			GW_FUZZ_CHECKF(keys[i] >= base && keys[i] < limit, "key %u out of range", i);
			GW_FUZZ_CHECKF(!i || keys[i] > keys[i - 1], "key %u not ascending", i);
			GW_FUZZ_CHECKF(gw_db_iter_next(&it) == keys[i], "iterator differs at %u", i);
		}
		/* Narrow encodings need increments below 2^32, which a narrow
		 * block's at most 4-byte increments are. */
		size_t need = gw_db_size(keys, n, base, wide);
		GW_FUZZ_CHECKF(need <= used, "re-encoded %zu > %zu bytes", need, used);
		uint8_t *out = malloc(need ? need : 1);
		GW_FUZZ_CHECK(out);
		GW_FUZZ_CHECK(gw_db_encode(keys, n, base, wide, out) == need);
		size_t used2 = 0;
		GW_FUZZ_CHECK(gw_db_decode(out, need, n, base, wide, limit, back, &used2) == 0);
		GW_FUZZ_CHECK(used2 == need && (!n || !memcmp(keys, back, n * sizeof(uint64_t))));
		free(out);
	} else {
		GW_FUZZ_CHECKF(rc == GW_ECORRUPT || rc == GW_ELENGTH, "unexpected rc %d", rc);
	}
	free(in);
	free(keys);
	free(back);
	return 0;
}
