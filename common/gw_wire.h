/* The frame's wire constants and its 36-byte header (wire-format §2.1,
 * §2.2, §3), defined once for every side that writes or reads frames:
 * codec/ (C11) and gpudirect/'s kernels (nvcc device code, and the same
 * bodies on the host in the emulation). Both compile this header, so a
 * codec id, a flag bit or a header byte cannot differ between them.
 *
 * The public <gw/codec.h> keeps its own names (GW_CODEC_RAW,
 * GW_FRAME_HDR_LEN, GW_FF_SPARSE, ...): it is installed and may not
 * include a private header. codec/codec_internal.h asserts at compile
 * time that each of them equals its value here.
 *
 * Depends on <stdint.h> only: no error codes (the readers
 * return a gw_wire_verdict, which each side turns into its GW_E* code),
 * no hash (each side seals with its own XXH3: libxxhash on the host,
 * gpudirect/kern/xxh3.h in a kernel).
 *
 * The frame's, not the packet's: the packet header around a frame is
 * the dataplane's <gw/wire.h> (wire-format §5). */
#ifndef GW_COMMON_WIRE_H
#define GW_COMMON_WIRE_H

#include <stdint.h>

#if defined(__CUDACC__)
#define GW_WIRE_FN __host__ __device__ __forceinline__
#else
#define GW_WIRE_FN static inline
#endif

/* ---- constants ------------------------------------------------------------ */

#define GW_WIRE_MAGIC 0x5747u      /* the bytes 'G' 'W' */
#define GW_WIRE_VERSION 1u
#define GW_WIRE_HDR_LEN 36u        /* fixed header, before params and payload */
#define GW_WIRE_FRAME_MAX 65535u   /* largest frame, and largest payload_len */
#define GW_WIRE_BUDGET_MIN 64u     /* smallest budget every codec accepts (§1) */

/* Flags (§2.2); the other bits are reserved. */
#define GW_WIRE_F_SPARSE 0x0001u
#define GW_WIRE_F_KEY64 0x0002u
#define GW_WIRE_F_KNOWN (GW_WIRE_F_SPARSE | GW_WIRE_F_KEY64)

/* Codec ids (§3): stable, never reused; 0 is invalid. A new codec claims
 * its id here and in gw_codec_id (<gw/codec.h>), and moves
 * GW_WIRE_CODEC_LAST. */
#define GW_WIRE_CODEC_RAW 1
#define GW_WIRE_CODEC_BF16 2
#define GW_WIRE_CODEC_INT8 3
#define GW_WIRE_CODEC_3LC 4
#define GW_WIRE_CODEC_TERNGRAD 5
#define GW_WIRE_CODEC_ONEBIT 6
#define GW_WIRE_CODEC_TOPK 7
#define GW_WIRE_CODEC_SKETCHML 8
#define GW_WIRE_CODEC_COUNTSKETCH 9
#define GW_WIRE_CODEC_DEEPREDUCE 10
#define GW_WIRE_CODEC_HQ 11
#define GW_WIRE_CODEC_LAST 11      /* the highest id this repository defines */

/* Byte offsets of the header's fields (§2.1). */
#define GW_WIRE_OFF_MAGIC 0
#define GW_WIRE_OFF_VERSION 2
#define GW_WIRE_OFF_CODEC 3
#define GW_WIRE_OFF_FLAGS 4
#define GW_WIRE_OFF_PARAM_LEN 6
#define GW_WIRE_OFF_RESERVED 7
#define GW_WIRE_OFF_TENSOR 8
#define GW_WIRE_OFF_COUNT 12
#define GW_WIRE_OFF_START 16
#define GW_WIRE_OFF_SPAN 24
#define GW_WIRE_OFF_PAYLOAD_LEN 28
#define GW_WIRE_OFF_CHECKSUM 32

/* ---- little-endian bytes at any address ------------------------------------ */

GW_WIRE_FN uint32_t gw_wire_ld16(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8;
}

GW_WIRE_FN uint32_t gw_wire_ld32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

GW_WIRE_FN uint64_t gw_wire_ld64(const uint8_t *p)
{
	return (uint64_t)gw_wire_ld32(p) | (uint64_t)gw_wire_ld32(p + 4) << 32;
}

GW_WIRE_FN void gw_wire_st16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

GW_WIRE_FN void gw_wire_st32(uint8_t *p, uint32_t v)
{
	gw_wire_st16(p, v);
	gw_wire_st16(p + 2, v >> 16);
}

GW_WIRE_FN void gw_wire_st64(uint8_t *p, uint64_t v)
{
	gw_wire_st32(p, (uint32_t)v);
	gw_wire_st32(p + 4, (uint32_t)(v >> 32));
}

/* ---- the header ------------------------------------------------------------ */

/* The header's fields a writer chooses; magic, version, reserved and the
 * checksum are not among them. */
struct gw_wire_hdr {
	uint8_t codec;          /* GW_WIRE_CODEC_* */
	uint16_t flags;         /* GW_WIRE_F_* */
	uint8_t param_len;
	uint32_t tensor;
	uint32_t count;
	uint64_t start;
	uint32_t span;
	uint32_t payload_len;
};

/* Writes the 36-byte header at b: magic, version, h's fields, reserved 0,
 * and checksum 0 (sealing the frame writes it, once params and payload
 * are in place). */
GW_WIRE_FN void gw_wire_hdr_write(uint8_t *b, const struct gw_wire_hdr *h)
{
	gw_wire_st16(b + GW_WIRE_OFF_MAGIC, GW_WIRE_MAGIC);
	b[GW_WIRE_OFF_VERSION] = (uint8_t)GW_WIRE_VERSION;
	b[GW_WIRE_OFF_CODEC] = h->codec;
	gw_wire_st16(b + GW_WIRE_OFF_FLAGS, h->flags);
	b[GW_WIRE_OFF_PARAM_LEN] = h->param_len;
	b[GW_WIRE_OFF_RESERVED] = 0;
	gw_wire_st32(b + GW_WIRE_OFF_TENSOR, h->tensor);
	gw_wire_st32(b + GW_WIRE_OFF_COUNT, h->count);
	gw_wire_st64(b + GW_WIRE_OFF_START, h->start);
	gw_wire_st32(b + GW_WIRE_OFF_SPAN, h->span);
	gw_wire_st32(b + GW_WIRE_OFF_PAYLOAD_LEN, h->payload_len);
	gw_wire_st32(b + GW_WIRE_OFF_CHECKSUM, 0);
}

/* Which of §2.1's rules a header breaks; each side maps it to its GW_E*
 * code (GW_ETRUNC, GW_EMAGIC, GW_EVERSION, GW_ERESERVED, GW_ELENGTH). */
enum gw_wire_verdict {
	GW_WIRE_OK = 0,
	GW_WIRE_ETRUNC,     /* rules 1, 6: fewer bytes than the header says */
	GW_WIRE_EMAGIC,     /* rule 2 */
	GW_WIRE_EVERSION,   /* rule 3 */
	GW_WIRE_ERESERVED,  /* rule 4 */
	GW_WIRE_ELENGTH,    /* rule 6: too long, or bytes after the frame */
};

/* §2.1 rules 1–4 for the len bytes at b: the header's length, magic,
 * version, reserved byte and flag bits, in that order. Fills *h when
 * len covers the header, whatever the verdict. Rule 5 (the codec) is the
 * caller's, then gw_wire_hdr_lengths for rule 6. */
GW_WIRE_FN int gw_wire_hdr_read(const uint8_t *b, uint64_t len, struct gw_wire_hdr *h)
{
	if (len < GW_WIRE_HDR_LEN)
		return GW_WIRE_ETRUNC;
	uint32_t flags = gw_wire_ld16(b + GW_WIRE_OFF_FLAGS);
	h->codec = b[GW_WIRE_OFF_CODEC];
	h->flags = (uint16_t)flags;
	h->param_len = b[GW_WIRE_OFF_PARAM_LEN];
	h->tensor = gw_wire_ld32(b + GW_WIRE_OFF_TENSOR);
	h->count = gw_wire_ld32(b + GW_WIRE_OFF_COUNT);
	h->start = gw_wire_ld64(b + GW_WIRE_OFF_START);
	h->span = gw_wire_ld32(b + GW_WIRE_OFF_SPAN);
	h->payload_len = gw_wire_ld32(b + GW_WIRE_OFF_PAYLOAD_LEN);
	if (gw_wire_ld16(b + GW_WIRE_OFF_MAGIC) != GW_WIRE_MAGIC)
		return GW_WIRE_EMAGIC;
	if (b[GW_WIRE_OFF_VERSION] != GW_WIRE_VERSION)
		return GW_WIRE_EVERSION;
	if (b[GW_WIRE_OFF_RESERVED] != 0 || (flags & ~GW_WIRE_F_KNOWN) ||
	    ((flags & GW_WIRE_F_KEY64) && !(flags & GW_WIRE_F_SPARSE)))
		return GW_WIRE_ERESERVED;
	return GW_WIRE_OK;
}

/* §2.1 rule 6 and the frame length rule of §2 for a header read from len
 * bytes: payload_len and the frame's length within GW_WIRE_FRAME_MAX, then
 * the frame exactly len bytes. Sets *frame_len when they hold. */
GW_WIRE_FN int gw_wire_hdr_lengths(const struct gw_wire_hdr *h, uint64_t len,
				   uint32_t *frame_len)
{
	/* 64-bit sum: the fields may be hostile and must not wrap. */
	uint64_t flen = (uint64_t)GW_WIRE_HDR_LEN + h->param_len + h->payload_len;
	if (h->payload_len > GW_WIRE_FRAME_MAX || flen > GW_WIRE_FRAME_MAX)
		return GW_WIRE_ELENGTH;
	if (flen > len)
		return GW_WIRE_ETRUNC;
	if (flen < len)
		return GW_WIRE_ELENGTH;
	*frame_len = (uint32_t)flen;
	return GW_WIRE_OK;
}

#endif
