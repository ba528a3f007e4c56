/* The frame header and its checksum (wire-format §2.1, §2.3) for one
 * thread: what codec/frame.c's gw_frame_write_header() and
 * gw_frame_seal() write, byte for byte. */
#ifndef GW_KERN_FRAME_H
#define GW_KERN_FRAME_H

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

/* Whether frame f of len bytes carries the checksum §2.3 gives it. */
GW_HD int gw_kf_checksum_ok(const uint8_t *f, uint32_t len)
{
	uint8_t scratch[GW_XXH_SECRET_LEN];
	uint64_t x = gw_xxh3_64(f, 32, 0, scratch);
	x = gw_xxh3_64(f + GW_KF_HDR, len - GW_KF_HDR, x, scratch);
	return (uint32_t)x == gw_hd_ld32(f + 32);
}

#endif
