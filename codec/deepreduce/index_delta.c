/* DeepReduce index "delta": SketchML's delta-binary key block
 * (codec/delta_binary.h), narrow, after base 0, keys below span — the
 * same coder sketchml uses, so the two can never disagree on a format. A
 * run of adjacent offsets costs one byte each plus 2 flag bits; an offset
 * after a gap below 2^8 also one byte. */
#include <stdlib.h>

#include "../codec_internal.h"
#include "../delta_binary.h"
#include "dr.h"
#include "index_util.h"

static int delta_encode(const uint32_t *off, uint32_t n, uint32_t span,
			const struct dr_index_cfg *cfg, uint8_t *out, size_t cap,
			uint32_t *nvals)
{
	(void)cfg;
	/* A byte and a flag each, at least. */
	int rc = dr_index_check_fit(off, n, span, (uint64_t)n + (n + 3) / 4, cap);
	if (rc < 0)
		return rc;
	/* The block coder takes 64-bit keys (sketchml's may be wide). */
	uint64_t *k = malloc((size_t)n * sizeof(*k));
	if (!k)
		return GW_ERR(GW_ENOMEM);
	for (uint32_t i = 0; i < n; i++)
		k[i] = off[i];
	size_t need = gw_db_size(k, n, 0, 0);
	if (need > cap) {
		free(k);
		return GW_ERR(GW_EBUDGET);
	}
	size_t len = gw_db_encode(k, n, 0, 0, out);
	free(k);
	*nvals = n;
	return (int)len;
}

static int delta_decode(const uint8_t *in, size_t len, uint32_t span,
			uint32_t count, uint32_t *pos)
{
	if (span > DR_SPAN_MAX || count > span)
		return GW_ERR(GW_ECORRUPT);
	/* Validate first (no key array: the block coder checks without one),
	 * then walk: nothing is written unless the whole block is good. */
	size_t used = 0;
	int rc = gw_db_decode(in, len, count, 0, 0, span, NULL, &used);
	if (rc < 0)
		return rc;
	if (used != len)
		return GW_ERR(GW_ELENGTH);   /* bytes after the block */
	struct gw_db_iter it;
	gw_db_iter_init(&it, in, count, 0, 0);
	for (uint32_t i = 0; i < count; i++)
		pos[i] = (uint32_t)gw_db_iter_next(&it);
	return GW_OK;
}

const struct dr_index_ops dr_index_delta = {
	.name = "delta",
	.encode = delta_encode,
	.decode = delta_decode,
};
