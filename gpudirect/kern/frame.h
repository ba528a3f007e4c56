/* The frame header and its checksum (wire-format §2.1, §2.3) for one
 * thread. The header's layout, constants and writer are common/gw_wire.h's,
 * the ones codec/frame.c's gw_frame_write_header() uses; the checksum is
 * §2.3's over this side's XXH3 (xxh3.h), what gw_frame_seal() computes. */
#ifndef GW_KERN_FRAME_H
#define GW_KERN_FRAME_H

#include <gw/common.h>

#include "xxh3.h"

/* One decode call, for every decode kernel: frames[j] of lens[j] bytes,
 * added into out[0..out_len); rcs[j] gets the values added or the frame's
 * GW_E* code. The frames of one call must cover disjoint ranges (one
 * allreduce's results do): kernels add without atomics, so the sums are
 * the same on every run. */
struct gw_kf_dec {
	const uint8_t *const *frames;
	const uint32_t *lens;
	uint32_t n;
	float *out;
	uint64_t out_len;
	int32_t *rcs;
};

/* Seals the frame of len bytes at f, its header written and its params
 * and payload in place: stores §2.3's checksum. Returns len. */
GW_HD uint32_t gw_kf_seal_at(uint8_t *f, uint32_t len)
{
	uint8_t scratch[GW_XXH_SECRET_LEN];
	uint64_t x = gw_xxh3_64(f, GW_WIRE_OFF_CHECKSUM, 0, scratch);
	x = gw_xxh3_64(f + GW_WIRE_HDR_LEN, len - GW_WIRE_HDR_LEN, x, scratch);
	gw_hd_st32(f + GW_WIRE_OFF_CHECKSUM, (uint32_t)x);
	return len;
}

/* Writes the header at f and seals the frame of 36 + param_len +
 * payload_len bytes whose params and payload are already in place. */
GW_HD uint32_t gw_kf_seal(uint8_t *f, const struct gw_wire_hdr *h)
{
	gw_wire_hdr_write(f, h);
	return gw_kf_seal_at(f, GW_WIRE_HDR_LEN + h->param_len + h->payload_len);
}

/* gw_kf_seal from the header's fields. */
GW_HD uint32_t gw_kf_seal_with(uint8_t *f, uint8_t codec, uint16_t flags, uint8_t param_len,
			       uint32_t tensor, uint32_t count, uint64_t start, uint32_t span,
			       uint32_t payload_len)
{
	struct gw_wire_hdr h;
	h.codec = codec;
	h.flags = flags;
	h.param_len = param_len;
	h.tensor = tensor;
	h.count = count;
	h.start = start;
	h.span = span;
	h.payload_len = payload_len;
	return gw_kf_seal(f, &h);
}

/* Whether frame f of len bytes carries the checksum §2.3 gives it. */
GW_HD int gw_kf_checksum_ok(const uint8_t *f, uint32_t len)
{
	uint8_t scratch[GW_XXH_SECRET_LEN];
	uint64_t x = gw_xxh3_64(f, GW_WIRE_OFF_CHECKSUM, 0, scratch);
	x = gw_xxh3_64(f + GW_WIRE_HDR_LEN, len - GW_WIRE_HDR_LEN, x, scratch);
	return (uint32_t)x == gw_hd_ld32(f + GW_WIRE_OFF_CHECKSUM);
}

/* GW_E* code of a gw_wire_verdict. */
GW_HD int32_t gw_kf_wire_err(int v)
{
	return v == GW_WIRE_OK ? 0
	       : v == GW_WIRE_ETRUNC ? GW_ETRUNC
	       : v == GW_WIRE_EMAGIC ? GW_EMAGIC
	       : v == GW_WIRE_EVERSION ? GW_EVERSION
	       : v == GW_WIRE_ERESERVED ? GW_ERESERVED
	       : GW_ELENGTH;
}

/* §2's checks in their order — header rules 1–9, the checksum, and for a
 * dense frame the range against out_len — for a kernel that decodes the
 * codecs in the bit mask codecs (bit id) and frames of one kind (sparse or
 * not): a sound frame of another codec or kind gets GW_EUNSUPPORTED at
 * rule 7's place (it is not this kernel's, valid or not). Rule 5 takes
 * every id up to GW_WIRE_CODEC_LAST as registered, as codec/ registers
 * them all. Fills *h; 0 or the GW_E* code. */
GW_HD int32_t gw_kf_check(const uint8_t *b, uint32_t len, uint64_t out_len, uint32_t codecs,
			  int sparse, struct gw_wire_hdr *h)
{
	uint32_t flen = 0;
	int v = gw_wire_hdr_read(b, len, h);
	if (v != GW_WIRE_OK)
		return gw_kf_wire_err(v);
	if (h->codec < 1 || h->codec > GW_WIRE_CODEC_LAST)
		return GW_ECODEC;
	v = gw_wire_hdr_lengths(h, len, &flen);
	if (v != GW_WIRE_OK)
		return gw_kf_wire_err(v);
	if ((int)(h->flags & GW_WIRE_F_SPARSE) != sparse || !((codecs >> h->codec) & 1u))
		return GW_EUNSUPPORTED;
	if (sparse ? h->count > h->span : (h->count == 0 || h->span != h->count))
		return GW_ELENGTH;
	if (h->start > UINT64_MAX - h->span)
		return GW_ERANGE;
	if (!gw_kf_checksum_ok(b, len))
		return GW_ECHECKSUM;
	if (!sparse && h->start + h->count > out_len)
		return GW_ERANGE;
	return 0;
}

#endif
