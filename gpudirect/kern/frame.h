/* The frame header and its checksum (wire-format §2.1, §2.3) for one
 * thread: what codec/frame.c's gw_frame_write_header() and
 * gw_frame_seal() write, byte for byte. */
#ifndef GW_KERN_FRAME_H
#define GW_KERN_FRAME_H

#include <gw/common.h>

#include "xxh3.h"

#define GW_KF_HDR 36u
#define GW_KF_MAX 65535u

struct gw_kf_hdr {
	uint8_t codec;
	uint16_t flags;
	uint8_t param_len;
	uint32_t tensor, count, span, payload_len;
	uint64_t start;
};

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

/* Writes the header at f and seals the frame of 36 + param_len +
 * payload_len bytes whose params and payload are already in place. */
GW_HD uint32_t gw_kf_seal(uint8_t *f, const struct gw_kf_hdr *h)
{
	uint32_t len = GW_KF_HDR + h->param_len + h->payload_len;
	f[0] = 'G';
	f[1] = 'W';
	f[2] = 1;
	f[3] = h->codec;
	gw_hd_st16(f + 4, h->flags);
	f[6] = h->param_len;
	f[7] = 0;
	gw_hd_st32(f + 8, h->tensor);
	gw_hd_st32(f + 12, h->count);
	gw_hd_st64(f + 16, h->start);
	gw_hd_st32(f + 24, h->span);
	gw_hd_st32(f + 28, h->payload_len);
	uint8_t scratch[GW_XXH_SECRET_LEN];
	uint64_t x = gw_xxh3_64(f, 32, 0, scratch);
	x = gw_xxh3_64(f + GW_KF_HDR, len - GW_KF_HDR, x, scratch);
	gw_hd_st32(f + 32, (uint32_t)x);
	return len;
}

/* gw_kf_seal from the header's fields. */
GW_HD uint32_t gw_kf_seal_with(uint8_t *f, uint8_t codec, uint16_t flags, uint8_t param_len,
			       uint32_t tensor, uint32_t count, uint64_t start, uint32_t span,
			       uint32_t payload_len)
{
	struct gw_kf_hdr h;
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
	uint64_t x = gw_xxh3_64(f, 32, 0, scratch);
	x = gw_xxh3_64(f + GW_KF_HDR, len - GW_KF_HDR, x, scratch);
	return (uint32_t)x == gw_hd_ld32(f + 32);
}

/* §2's checks in their order — header rules 1–9, the checksum, and for a
 * dense frame the range against out_len — for a kernel that decodes the
 * codecs in the bit mask codecs (bit id) and frames of one kind (sparse or
 * not): a sound frame of another codec or kind gets GW_EUNSUPPORTED at
 * rule 7's place (it is not this kernel's, valid or not). Fills *h; 0 or
 * the GW_E* code. */
GW_HD int32_t gw_kf_check(const uint8_t *b, uint32_t len, uint64_t out_len, uint32_t codecs,
			  int sparse, struct gw_kf_hdr *h)
{
	if (len < GW_KF_HDR)
		return GW_ETRUNC;
	uint32_t flags = (uint32_t)b[4] | (uint32_t)b[5] << 8;
	h->codec = b[3];
	h->flags = (uint16_t)flags;
	h->param_len = b[6];
	h->tensor = gw_hd_ld32(b + 8);
	h->count = gw_hd_ld32(b + 12);
	h->start = gw_hd_ld64(b + 16);
	h->span = gw_hd_ld32(b + 24);
	h->payload_len = gw_hd_ld32(b + 28);
	uint64_t flen = (uint64_t)GW_KF_HDR + h->param_len + h->payload_len;
	if (b[0] != 'G' || b[1] != 'W')
		return GW_EMAGIC;
	if (b[2] != 1)
		return GW_EVERSION;
	if ((flags & ~3u) || b[7] || ((flags & 2u) && !(flags & 1u)))
		return GW_ERESERVED;
	if (h->codec < 1 || h->codec > 10)
		return GW_ECODEC;
	if (h->payload_len > GW_KF_MAX || flen > GW_KF_MAX)
		return GW_ELENGTH;
	if (flen > len)
		return GW_ETRUNC;
	if (flen < len)
		return GW_ELENGTH;
	if ((int)(flags & 1u) != sparse || !((codecs >> h->codec) & 1u))
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
