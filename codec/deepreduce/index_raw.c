/* DeepReduce index "raw" (the paper's bypass): the offsets as they are,
 * u32 little-endian, 4 bytes each — the baseline every other index codec
 * is measured against, and the cheapest to decode. */
#include "../codec_internal.h"
#include "dr.h"
#include "index_util.h"

static int raw_encode(const uint32_t *off, uint32_t n, uint32_t span,
		      const struct dr_index_cfg *cfg, uint8_t *out, size_t cap,
		      uint32_t *nvals)
{
	(void)cfg;
	int rc = dr_index_check_fit(off, n, span, (uint64_t)n * 4, cap);
	if (rc < 0)
		return rc;
	for (uint32_t i = 0; i < n; i++)
		gw_st32(out + 4 * (size_t)i, off[i]);
	*nvals = n;
	return (int)(4 * n);
}

static int raw_decode(const uint8_t *in, size_t len, uint32_t span,
		      uint32_t count, uint32_t *pos)
{
	if (span > DR_SPAN_MAX || count > span)
		return GW_ERR(GW_ECORRUPT);
	if (len != (size_t)count * 4)
		return GW_ERR(GW_ELENGTH);
	uint32_t next = 0;   /* smallest offset the next one may take */
	for (uint32_t i = 0; i < count; i++) {
		uint32_t x = gw_ld32(in + 4 * (size_t)i);
		if (x < next || x >= span)
			return GW_ERR(GW_ECORRUPT);
		pos[i] = x;
		next = x + 1;
	}
	return GW_OK;
}

const struct dr_index_ops dr_index_raw = {
	.name = "raw",
	.encode = raw_encode,
	.decode = raw_decode,
};
