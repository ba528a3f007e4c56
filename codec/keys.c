/* Absolute little-endian key sections of sparse frames. */
#include "codec_internal.h"

void gw_keys_put(uint8_t *dst, const void *keys, uint64_t first, uint32_t n,
		 unsigned key_bytes)
{
	if (key_bytes == 8) {
		const uint64_t *k = (const uint64_t *)keys + first;
		for (uint32_t i = 0; i < n; i++)
			gw_st64(dst + 8 * (size_t)i, k[i]);
	} else {
		const uint32_t *k = (const uint32_t *)keys + first;
		for (uint32_t i = 0; i < n; i++)
			gw_st32(dst + 4 * (size_t)i, k[i]);
	}
}

int gw_keys_check(const uint8_t *src, uint32_t n, unsigned key_bytes,
		  uint64_t start, uint32_t span, uint64_t out_len)
{
	uint64_t end = start + span;   /* peek rejected wrap-around */
	uint64_t prev = 0;
	/* Key by key (wire-format §2.4): the first is start, each one above
	 * the last and inside the span (GW_ECORRUPT), then below out_len
	 * (GW_ERANGE); after them all, the last is start + span - 1. */
	for (uint32_t i = 0; i < n; i++) {
		uint64_t k = gw_keys_get(src, i, key_bytes);
		if ((i ? k <= prev : k != start) || k >= end)
			return GW_ERR(GW_ECORRUPT);
		if (k >= out_len)
			return GW_ERR(GW_ERANGE);
		prev = k;
	}
	if (n && prev != end - 1)
		return GW_ERR(GW_ECORRUPT);
	return GW_OK;
}
