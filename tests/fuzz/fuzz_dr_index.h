/* The body of the DeepReduce index harnesses (fuzz_dr_raw.c, fuzz_dr_bloom.c,
 * fuzz_dr_rle.c, fuzz_dr_delta.c). Input: bytes 0-1 = span - 1 (u16 LE,
 * so span is 1..65536: the Bloom decoder queries the whole span, and a
 * small one keeps an input fast), bytes 2-3 = count (u16 LE), then the
 * section, copied to a buffer of exactly its size; positions go to one of
 * exactly count entries, so ASan sees any access past either.
 *
 * An accepted section must give count ascending positions below span, the
 * same ones when decoded again (Bloom P0: and count + 1 must be refused). A lossless codec's encoder, given those
 * positions, must write a section no longer than the input (delta: the
 * encoder picks the fewest bytes; raw and rle are canonical, so exactly
 * the input) that decodes to them again. */
#ifndef GW_FUZZ_DR_INDEX_H
#define GW_FUZZ_DR_INDEX_H

#include <stdlib.h>
#include <string.h>

#include "codec_internal.h"
#include "deepreduce/dr.h"
#include "fuzz_common.h"

#define DR_FUZZ_HDR 4u

enum { DR_FUZZ_LOSSY = 0, DR_FUZZ_LOSSLESS = 1, DR_FUZZ_CANONICAL = 2 };

static void fuzz_dr_index(const struct dr_index_ops *io, int kind,
			  const uint8_t *data, size_t size)
{
	if (size < DR_FUZZ_HDR)
		return;
	uint32_t span = 1u + ((uint32_t)data[0] | (uint32_t)data[1] << 8);
	uint32_t count = (uint32_t)data[2] | (uint32_t)data[3] << 8;
	size_t len = size - DR_FUZZ_HDR;
	uint8_t *in = malloc(len ? len : 1);
	uint32_t *pos = malloc(count ? (size_t)count * 4 : 1);
	uint32_t *again = malloc(((size_t)count + 1) * 4);
	GW_FUZZ_CHECK(in && pos && again);
	memcpy(in, data + DR_FUZZ_HDR, len);
	int rc = io->decode(in, len, span, count, pos);
	gw_fuzz_last_rc = rc;
	if (rc < 0) {
		GW_FUZZ_CHECKF(rc == GW_ECORRUPT || rc == GW_ELENGTH || rc == GW_ENOMEM,
			       "%s: unexpected rc %d", io->name, rc);
		goto out;
	}
	GW_FUZZ_CHECKF(rc == 0, "%s: rc %d", io->name, rc);
	for (uint32_t i = 0; i < count; i++) {
		GW_FUZZ_CHECKF(pos[i] < span, "%s: position %u = %u, span %u", io->name,
			       i, pos[i], span);
		GW_FUZZ_CHECKF(!i || pos[i] > pos[i - 1], "%s: not ascending at %u",
			       io->name, i);
	}
	GW_FUZZ_CHECK(io->decode(in, len, span, count, again) == 0);
	GW_FUZZ_CHECKF(!count || !memcmp(pos, again, (size_t)count * 4),
		       "%s: decoding again differs", io->name);
	/* Bloom P0 gives every positive: exactly count, not one more. */
	if (io == &dr_index_bloom && in[0] == DR_P0 && count < span)
		GW_FUZZ_CHECKF(io->decode(in, len, span, count + 1, again) == GW_ECORRUPT,
			       "bloom P0: count %u and %u both accepted", count, count + 1);
	if (kind == DR_FUZZ_LOSSY || count == 0)
		goto out;
	size_t cap = len + 64;
	uint8_t *re = malloc(cap);
	GW_FUZZ_CHECK(re);
	struct dr_index_cfg cfg = {0};
	uint32_t nv = 0;
	int rlen = io->encode(pos, count, span, &cfg, re, cap, &nv);
	GW_FUZZ_CHECKF(rlen >= 0, "%s: re-encoding failed: %d", io->name, rlen);
	GW_FUZZ_CHECKF(nv == count, "%s: nvals %u, count %u", io->name, nv, count);
	GW_FUZZ_CHECKF((size_t)rlen <= len, "%s: re-encoded %d > %zu bytes", io->name,
		       rlen, len);
	if (kind == DR_FUZZ_CANONICAL)
		GW_FUZZ_CHECKF((size_t)rlen == len && !memcmp(re, in, len),
			       "%s: accepted a non-canonical section", io->name);
	GW_FUZZ_CHECK(io->decode(re, (size_t)rlen, span, count, again) == 0);
	GW_FUZZ_CHECKF(!memcmp(pos, again, (size_t)count * 4),
		       "%s: re-encoded section decodes differently", io->name);
	free(re);
out:
	free(in);
	free(pos);
	free(again);
}

#endif /* GW_FUZZ_DR_INDEX_H */
